"""Each certified row's fate: ``certified``, ``refused`` (the whole video), ``abstained``
(a selective rule declined to answer: the whole video, with the reason) or ``rejected``
with a reason; every writer of certified rows takes it from here.

The rule: **a region is certified only when it is not empty.** ``C_lam`` can be empty:

* interval families (NORM, SEC, SIGMA): ``[s - lam_s*l_s, e + lam_e*l_e]`` is empty when
  ``L + lam_s*l_s + lam_e*l_e < 0``, a negative threshold giving back more than the
  prediction's length ``L`` (a short or floored prediction under a legitimately
  negative threshold, or a threshold below the family's range: SEC's bound ``-T/2``
  depends on the video, so the calibrator file cannot be checked against it);
* SLS: ``{t : f(t) >= -lam}`` is empty when no clip's relevance reaches the level
  ``-lam`` (paper §Method; QD-DETR on QVHighlights at ``alpha = 0.1``: 23 of 1,550 rows).

The method's region is then the empty set, and it stays so in :class:`cover.regions.Regions`
(in-memory metrics count the row as a miss, as the marginal guarantee does). But a row
written as *certified* with region ``[]`` certifies nothing, so the writers mark it
``rejected`` with the reason (:func:`empty_reasons`), its region ``[]`` kept. It is not
an input problem: ``--on-error`` does not apply to it.

A selective rule (``rule="ltt"``, :mod:`cover.calibrate.ltt`) **abstains** on some rows:
their region is the whole video ``[0, T]`` (never empty), their status ``abstained`` and
their reason says why (the width budget, the grounder's score, no configuration
certified, or ``cover certify --max-p``). They are written, never dropped; ``cover
evaluate`` reads them as not answered (the abstention rate) and leaves them out of the
answered-miss rate. A refusal keeps its status ``refused``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from cover.regions import Regions

CERTIFIED = "certified"
REFUSED = "refused"
REJECTED = "rejected"
ABSTAINED = "abstained"


def empty_rows(regions: Regions) -> NDArray[np.bool_]:
    """Rows whose region is empty (a refusal is the whole video, never empty)."""
    return (regions.intervals.n_components == 0) & ~np.asarray(regions.refused, dtype=bool)


#: The statuses by code (:func:`status_codes`): 0 is ``rejected``.
STATUSES = (REJECTED, CERTIFIED, REFUSED, ABSTAINED)


def status_codes(regions: Regions) -> NDArray[np.int8]:
    """Each row's status as its index in :data:`STATUSES`: ``refused`` (whole video),
    ``abstained``, ``rejected`` (empty region, see the module docstring) or
    ``certified``, in that order of precedence from last to first."""
    refused = np.asarray(regions.refused, dtype=bool)
    codes = np.where(refused, np.int8(2), np.int8(1)).astype(np.int8)
    codes[regions.abstained & ~refused] = 3
    codes[empty_rows(regions)] = 0
    return codes


def row_status(regions: Regions) -> NDArray[np.object_]:
    """Each row's status: ``refused`` (whole video), ``rejected`` (empty region, see the
    module docstring) or ``certified`` (:func:`status_codes` as text)."""
    return np.asarray(STATUSES, dtype=object)[status_codes(regions)]


def _num(x: float) -> str:
    return "inf" if x == np.inf else f"{x:.6g}"


def empty_reason(regions: Regions, i: int) -> str:
    """Why row ``i``'s region is empty, in the user's terms."""
    lam = float(regions.threshold[i])
    if regions.family == "sls":
        return (f"empty certified region: no clip's relevance reaches the calibrated level "
                f"{_num(-lam)} (score sls, threshold {_num(lam)})")
    end = "" if regions.threshold_end is None else (
        f" (start), {_num(float(regions.threshold_end[i]))} (end)")
    return (f"empty certified region: the calibrated threshold {_num(lam)}{end} narrows the "
            f"predicted window past itself (score {regions.family})")


def empty_reasons(regions: Regions) -> dict[int, str]:
    """``{row: reason}`` for the rows whose region is empty."""
    return {i: empty_reason(regions, i) for i in np.flatnonzero(empty_rows(regions)).tolist()}


def status_reasons(regions: Regions) -> dict[int, str]:
    """``{row: reason}`` for every row whose status needs one: rejected for an empty region
    (:func:`empty_reasons`) or abstained (the selective rule's reason)."""
    out = empty_reasons(regions)
    if regions.abstain_reason is not None:
        for i in np.flatnonzero(regions.abstained).tolist():
            out.setdefault(i, str(regions.abstain_reason[i]))
    return dict(sorted(out.items()))


def empty_region_block(block: dict[str, Any]) -> bool:
    """A written ``cover`` block rejected for its empty region (region ``[]``, not null):
    ``cover evaluate`` evaluates it (a miss, as the guarantee counts it), where a row
    rejected on reading (region null) is only counted."""
    return block.get("status") == REJECTED and block.get("region") == []
