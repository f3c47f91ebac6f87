"""The score families and truth targets by name, and the input each family reads.

A family name that is not one of :data:`ALL_FAMILIES` is an error, as is a target not in
:data:`TARGETS`. A row without its family's input is a refusal (:func:`refused_for`:
certified as the whole video); a table without the family's columns at all
(:func:`require_inputs`), or a file in which no row carries the input
(:func:`require_family_input`), is an error naming the file, not a table of refusals.
The scores themselves are in :mod:`cover.scores`.
"""

from __future__ import annotations

from typing import Literal, get_args

import numpy as np
from numpy.typing import NDArray

from cover.data.table import GroundingTable
from cover.errors import InputError

Family = Literal["norm", "sec", "sls", "sigma"]
Target = Literal["envelope", "windows"]
#: The paper's families (what studies sweep); SIGMA needs std columns few grounders give.
FAMILIES: tuple[Family, ...] = ("norm", "sec", "sls")
ALL_FAMILIES: tuple[Family, ...] = get_args(Family)
TARGETS: tuple[Target, ...] = get_args(Target)
DEFAULT_MIN_SCALE = 1.0


INTERVAL_FAMILIES: tuple[Family, ...] = ("norm", "sec", "sigma")


def check_family(family: str) -> Family:
    if family not in ALL_FAMILIES:
        raise ValueError(
            f"unknown score family {family!r}; choose one of {', '.join(ALL_FAMILIES)}")
    return family


def require_inputs(table: GroundingTable, family: Family) -> None:
    """A family whose inputs the table lacks is an error (not a table of refusals)."""
    if family == "sigma" and (table.start_std is None or table.end_std is None):
        raise InputError(
            f"{table.source}: score 'sigma' needs the boundary uncertainty columns start_std "
            "and end_std, which these predictions do not have; use --score norm or sec"
        )


def check_target(target: str) -> Target:
    if target not in TARGETS:
        raise ValueError(f"unknown truth target {target!r}; choose one of {', '.join(TARGETS)}")
    return target


def refused_for(table: GroundingTable, family: Family) -> NDArray[np.bool_]:
    """Rows with no usable prediction for ``family``: no interval (NORM/SEC), no interval
    or no std (SIGMA), or no relevance signal (SLS)."""
    if family == "sls":
        return ~table.has_relevance
    if family == "sigma":
        require_inputs(table, family)
        assert table.start_std is not None and table.end_std is not None
        return ~table.has_interval | ~np.isfinite(table.start_std) | ~np.isfinite(table.end_std)
    return ~table.has_interval


# ---- which input each family needs (a file with none of it is an error) ----------------
# A row without its family's input is a refusal (certified as the whole video). A file in
# which *every* row lacks it (``--score sls`` on predictions without
# ``pred_saliency_scores``) would refuse everything and report coverage 1.000, which says
# nothing about the grounder: that is an error, not a result.
#: The input field each family reads, in the words of the prediction file.
FAMILY_INPUT: dict[str, str] = {
    "norm": "a predicted window (pred_relevant_windows)",
    "sec": "a predicted window (pred_relevant_windows)",
    "sls": "a relevance signal (pred_saliency_scores)",
    "sigma": "a predicted window with its uncertainty (start_std, end_std)",
}


def missing_family_input(table: GroundingTable, family: str) -> str | None:
    """A message when no row of a non-empty ``table`` carries ``family``'s input, else None."""
    fam = check_family(family)
    if len(table) == 0:
        return None
    try:
        if not refused_for(table, fam).all():
            return None
    except InputError as exc:  # the family's columns are absent altogether
        return str(exc)
    return (f"score family {fam} needs {FAMILY_INPUT[fam]}, and none of the {len(table)} "
            "rows has one")


def require_family_input(table: GroundingTable, family: str, source: str) -> None:
    """Raise :class:`InputError` naming ``source`` when :func:`missing_family_input` says so."""
    require_inputs(table, check_family(family))  # absent columns: the scores' own message
    why = missing_family_input(table, family)
    if why is not None:
        others = ", ".join(f for f in FAMILY_INPUT
                            if f != family and missing_family_input(table, f) is None)
        hint = f"; choose another family ({others})" if others else ""
        raise InputError(f"{source}: {why}{hint}")
