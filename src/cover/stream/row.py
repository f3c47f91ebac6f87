"""Certify one prediction at a time, in process (a service answering one query).

:meth:`Calibrator.certify` is vectorised over rows; for a single row most of its time
goes into building a one-row table. :class:`RowCertifier` reads the calibrated
thresholds once and, for NORM and SEC with one group, certifies a row by the same
float operations as :func:`cover.regions.build_regions` on plain Python floats
(``lo = max(s - lam*l, 0)``, ``hi = min(e + lam_e*l, T)``, ``l = max(e - s, min_scale)``
for NORM, 1 for SEC; paper Eq. 2): the same region, bit for bit. SLS with the split
rule and one group keeps the clips whose relevance is at least ``-lam`` (clip ``i``
spanning ``[i*c, min((i+1)*c, T)]``, only clips starting before ``T``), merged into
maximal runs, as :func:`cover.regions.superlevel` does. Every other case (SIGMA, a
grouping, another rule, relevance built from proposals) goes through a one-row table and
``Calibrator.certify``. Relevance values are checked as the readers check them, on every
score: numbers (not booleans or text), finite, one flat list.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

import numpy as np
from numpy.typing import NDArray

from cover.calibrate.calibrator import Calibrator
from cover.data.relevance import SALIENCY
from cover.data.rules import (
    DURATION_RULE,
    PRED_REVERSED,
    PRED_STRICT,
    SALIENCY_NONFINITE,
    outside_video,
    wholly_outside,
)
from cover.data.table import DEFAULT_CLIP_SECONDS, GroundingTable
from cover.errors import InputError
from cover.intervals import CONTAINMENT_ATOL
from cover.io.fields import not_a_number
from cover.ragged import Ragged

Region = list[list[float]]


class RowCertifier:
    """``RowCertifier(cal)(start, end, duration)`` -> the certified region of one row,
    ``[[lo, hi], ...]`` in seconds (``[[0, T]]`` for a refusal: no finite window)."""

    def __init__(self, cal: Calibrator, *, strict: bool = False) -> None:
        self.cal = cal
        self.strict = strict
        #: Rows whose window reached outside ``[0, T]`` and was clipped to it.
        self.clipped = 0
        #: Whether rows take the scalar path (NORM/SEC, one group).
        self.fast = cal.score in ("norm", "sec") and cal.groups == "all"
        #: Whether SLS rows are read off their relevance here (split rule, one group).
        self.fast_sls = (cal.score == "sls" and cal.groups == "all" and cal.rule == "split"
                         and cal.relevance == SALIENCY)
        # Read once: the scalar path's per-call work is then comparisons on locals.
        self._lam_s = self._lam_e = math.nan
        if self.fast or self.fast_sls:
            one = GroundingTable.from_arrays(qid=["0"], duration=1.0, pred_start=[0.0],
                                             pred_end=[1.0])
            lam_s, lam_e = cal.row_lams(one)
            self._lam_s = self._lam_e = float(lam_s[0])
            if lam_e is not None:
                self._lam_e = float(lam_e[0])
        self._norm = cal.score == "norm"
        self._min_scale = float(cal.min_scale)
        self._whole = self._lam_s == math.inf and self._lam_e == math.inf

    def __call__(self, start: float, end: float, duration: float, *,
                 saliency: Sequence[float] | None = None, clip: float = DEFAULT_CLIP_SECONDS,
                 start_std: float | None = None, end_std: float | None = None) -> Region:
        """The region of one row, by the readers' rules (:mod:`cover.data.rules`): an
        :class:`~cover.errors.InputError` for a duration that is not a finite number
        > 0, a string or boolean where a number belongs, an infinite start or end,
        start > end, or a window wholly outside ``[0, T]``; a window partly outside is
        clipped to it (counted in :attr:`clipped`; ``strict`` rejects it). A NaN start
        or end: a refusal, the whole video."""
        # The common case (three Python floats) costs three type tests; anything else
        # goes through _number (numpy scalars, ints; an error for text and booleans).
        t = duration if type(duration) is float else _number(duration, "duration")
        s = start if type(start) is float else _number(start, "start")
        e = end if type(end) is float else _number(end, "end")
        if not 0.0 < t < math.inf:  # False for NaN too
            raise InputError(f"{DURATION_RULE}, got {t:g}")
        if saliency is not None and self.fast:  # not read, but the readers refuse such rows
            _signal(saliency)
        if s != s or e != e:  # NaN on either side: a refusal (as in a table), SLS aside
            return [[0.0, t]] if self.fast else self._off_the_scalar_path(
                s, e, t, saliency, clip, start_std, end_std)
        if s == math.inf or s == -math.inf or e == math.inf or e == -math.inf:
            raise InputError(f"non-finite number (inf) in the window [{s:g}, {e:g}]")
        if s > e:
            raise InputError(f"{PRED_REVERSED} ([{s:g}, {e:g}])")
        if s < 0 or e > t:
            if wholly_outside(s, e, t):
                raise InputError(outside_video(s, e, t))
            if self.strict:
                raise InputError(f"{PRED_STRICT}: [{s:g}, {e:g}] in [0, {t:g}]")
            s, e = min(max(s, 0.0), t), min(max(e, 0.0), t)
            self.clipped += 1
        if not self.fast:
            return self._off_the_scalar_path(s, e, t, saliency, clip, start_std, end_std)
        if self._whole:
            return [[0.0, t]]
        if self._norm:
            scale = e - s
            if scale < self._min_scale:  # max(e - s, min_scale), as build_regions
                scale = self._min_scale
        else:
            scale = 1.0
        lo = s - self._lam_s * scale
        if lo < 0.0:
            lo = 0.0
        hi = e + self._lam_e * scale
        if hi > t:
            hi = t
        if lo <= hi:
            return [[lo, hi]]
        if lo - hi <= CONTAINMENT_ATOL:  # rounding pushed past a single point
            mid = min(max(0.5 * (lo + hi), 0.0), t)
            return [[mid, mid]]
        return []

    def _off_the_scalar_path(self, s: float, e: float, t: float,
                             saliency: Sequence[float] | None, clip: float,
                             start_std: float | None, end_std: float | None) -> Region:
        """SLS read off the relevance when it can be, else the one-row table."""
        sal = _signal(saliency)
        if self.fast_sls and clip == self.cal.clip_:
            return self._superlevel(sal, t, clip)
        return self._slow(s, e, t, sal, clip, start_std, end_std)

    def _superlevel(self, sal: NDArray[np.float64], t: float, clip: float) -> Region:
        """``{t : f(t) >= -lam}`` of one row (no relevance, or ``lam = inf``: the whole
        video), in the float operations of :func:`cover.regions.superlevel`."""
        if sal.size == 0 or self._whole:
            return [[0.0, t]]
        used = min(math.ceil(t / clip), sal.size)  # clips starting before T: i*c < T,
        while used and (used - 1) * clip >= t:    # exactly (the division may round)
            used -= 1
        while used < sal.size and used * clip < t:
            used += 1
        sel = np.zeros(used + 2, dtype=np.bool_)
        np.greater_equal(sal[:used], -self._lam_s, out=sel[1:-1])
        # Runs open and close by turns: each run's first clip, then one past its last.
        runs = (sel[1:] != sel[:-1]).nonzero()[0].reshape(-1, 2) * clip
        if runs.size and runs[-1, 1] > t:  # only the last clip may end past T
            runs[-1, 1] = t
        return runs.tolist()

    def _slow(self, s: float, e: float, t: float, sal: NDArray[np.float64],
              clip: float, start_std: float | None, end_std: float | None) -> Region:
        table = GroundingTable.from_arrays(
            qid=["0"], duration=t, pred_start=[s], pred_end=[e], clip=clip,
            relevance=Ragged(sal, np.array([0, sal.size], dtype=np.int64)))
        if start_std is not None or end_std is not None:
            table = replace(table, start_std=np.array([np.nan if start_std is None
                                                       else start_std], dtype=np.float64),
                            end_std=np.array([np.nan if end_std is None else end_std],
                                             dtype=np.float64))
        return self.cal.certify(table).row(0)


def certify_row(cal: Calibrator, start: float, end: float, duration: float, **kw: object
                ) -> Region:
    """The certified region of one prediction (:class:`RowCertifier`; build one
    certifier and reuse it when certifying many rows one at a time)."""
    return RowCertifier(cal)(start, end, duration, **kw)  # type: ignore[arg-type]


def _signal(saliency: Sequence[float] | NDArray[np.float64] | None) -> NDArray[np.float64]:
    """The relevance values as float64, refused as the readers refuse them: a boolean or
    a string where a number belongs (numpy would read ``True`` as 1.0, ``"2"`` as 2.0),
    a value that is not finite, a list that is not flat."""
    if saliency is None:
        return np.empty(0)
    if isinstance(saliency, np.ndarray) and saliency.dtype.kind in "fiu":
        sal = saliency.astype(np.float64, copy=False)
    else:
        if not set(map(type, saliency)) <= {float, int}:  # not only Python numbers
            for x in saliency:
                _number(x, "pred_saliency_scores")  # names the first value that is none
        try:
            sal = np.asarray(saliency, dtype=np.float64)
        except OverflowError:  # an integer beyond float range
            raise InputError(SALIENCY_NONFINITE) from None
    if sal.ndim != 1:
        raise InputError("pred_saliency_scores must be a flat list of numbers")
    if not np.isfinite(sal).all():
        raise InputError(SALIENCY_NONFINITE)
    return sal


def _number(x: object, name: str) -> float:
    """``x`` as a float when it is a number (not a boolean, never a string "12.5"; an
    integer beyond float range is not finite)."""
    if type(x) is float:  # the common case: one type test
        return x
    if isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, (bool,
                                                                                   np.bool_)):
        try:
            return float(x)
        except OverflowError:
            raise InputError(f"non-finite number in {name}") from None
    raise InputError(f"{name} {not_a_number(x)}")
