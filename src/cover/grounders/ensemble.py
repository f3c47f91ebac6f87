"""An ensemble of grounders as one grounder that reports its own boundary uncertainty.

Several prediction tables of the same queries (e.g. checkpoints of one model) become
one table whose top-1 interval is the mean of the members' top-1 windows and whose
``start_std`` / ``end_std`` are the members' standard deviations (``ddof = 1``):
an uncertainty-reporting grounder for the paper's comparison of reported
uncertainty with COVER (SPEC §6.9, §7; paper App. "SRAM").

Rule for incomplete rows (stated, and counted in :attr:`Ensemble.counts`): the
ensemble holds the union of the members' qids; a row's mean and sd use the members
that give it an interval (a member that lacks the qid or refuses it is left out);
a row with fewer than ``min_members`` such members is an ensemble refusal (no
interval, certified as the whole video). Relevance is the mean of the members'
saliency over their common clips, only on rows where every member has one.

>>> import numpy as np
>>> from cover.data.table import GroundingTable
>>> a = GroundingTable.from_arrays(qid=[1, 2], duration=60.0, pred_start=[10, 0],
...                                pred_end=[20, 5])
>>> b = GroundingTable.from_arrays(qid=[1, 2], duration=60.0, pred_start=[14, np.nan],
...                                pred_end=[20, np.nan])
>>> e = ensemble([a, b])
>>> e.table.pred_start.tolist(), e.table.start_std.round(3).tolist(), e.counts["refused"]
([12.0, nan], [2.828, nan], 1)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cover.calibrate.uncertainty import nominal_z
from cover.data.join import index_of
from cover.data.table import GroundingTable
from cover.errors import InputError
from cover.intervals import Intervals
from cover.io.jsonl import object_column
from cover.ragged import Ragged, offsets_from_lengths, row_ids


@dataclass(frozen=True)
class Ensemble:
    """The ensemble table, the members behind each row, and the counts of the rule."""

    table: GroundingTable
    n_members: NDArray[np.int64]
    names: tuple[str, ...]
    counts: dict[str, int]

    def records(self) -> list[dict[str, Any]]:
        """Moment-DETR-style prediction rows: one window ``[s, e, 1.0]`` (none when
        refused), ``start_std``/``end_std``, ``n_members`` and the mean saliency."""
        t = self.table
        out: list[dict[str, Any]] = []
        recs = t.records if t.records is not None else np.full(len(t), None, dtype=object)
        assert t.start_std is not None and t.end_std is not None
        for i in range(len(t)):
            src = recs[i] if isinstance(recs[i], dict) else {}
            row: dict[str, Any] = {"qid": src.get("qid", str(t.qid[i])), "vid": str(t.vid[i])}
            if src.get("query") is not None:
                row["query"] = src["query"]
            if np.isfinite(t.duration[i]):
                row["duration"] = float(t.duration[i])
            if np.isfinite(t.pred_start[i]):
                row["pred_relevant_windows"] = [[float(t.pred_start[i]), float(t.pred_end[i]),
                                                 1.0]]
                row["start_std"] = float(t.start_std[i])
                row["end_std"] = float(t.end_std[i])
            else:
                row["pred_relevant_windows"] = []
            if t.relevance.lengths[i]:
                row["pred_saliency_scores"] = t.relevance.row(i).tolist()
            row["n_members"] = int(self.n_members[i])
            out.append(row)
        return out


def _union_qids(tables: Sequence[GroundingTable]) -> NDArray[np.str_]:
    """Every qid of any member, in order of first appearance (members in order)."""
    allq = np.concatenate([t.qid for t in tables])
    _, first = np.unique(allq, return_index=True)
    return allq[np.sort(first)]


def _agreeing(values: NDArray[Any], present: NDArray[np.bool_], qids: NDArray[np.str_],
              names: Sequence[str], what: str) -> NDArray[Any]:
    """The one value per row all present members agree on (members x rows in)."""
    first = np.argmax(present, axis=0)
    ref = values[first, np.arange(values.shape[1])]
    if values.dtype.kind == "f":
        bad = present & np.isfinite(values) & (np.abs(values - ref) > 1e-6)
    else:
        bad = present & (values != ref)
    if bad.any():
        m, r = (int(x[0]) for x in np.nonzero(bad))
        raise InputError(f"qid {qids[r]}: {what} differs between members {names[first[r]]} "
                         f"({ref[r]}) and {names[m]} ({values[m, r]})")
    return ref


def ensemble(tables: Sequence[GroundingTable], *, names: Sequence[str] | None = None,
             min_members: int = 2) -> Ensemble:
    """Mean top-1 boundaries and their sd over members (module docstring states the rule).

    ``s = mean_m s_m``, ``start_std = sd_m s_m`` (``ddof = 1``), likewise for ``e``;
    relevance ``f(c) = mean_m f_m(c)`` over the clips every member has.
    """
    if len(tables) < 2:
        raise ValueError(f"an ensemble needs at least 2 prediction tables, got {len(tables)}")
    if min_members < 2 or min_members > len(tables):
        raise ValueError(f"min_members must be in [2, {len(tables)}], got {min_members}")
    if names is None:
        names = [t.source for t in tables]
        if len(set(names)) < len(names):
            names = [f"member {k + 1}" for k in range(len(tables))]
    names = tuple(names)
    if len(names) != len(tables) or len(set(names)) < len(names):
        raise ValueError(f"give {len(tables)} distinct names, got {list(names)}")
    qid = _union_qids(tables)
    n, m = qid.size, len(tables)
    idx = np.zeros((m, n), dtype=np.int64)
    present = np.zeros((m, n), dtype=bool)
    for k, t in enumerate(tables):
        idx[k], present[k] = index_of(t.qid, qid)

    def gather(col: str, fill: Any) -> NDArray[Any]:
        out = np.stack([np.asarray(getattr(t, col))[idx[k]] if len(t) else
                        np.full(n, fill) for k, t in enumerate(tables)])
        return np.where(present, out, fill)

    vid = _agreeing(gather("vid", ""), present, qid, names, "vid")
    dur_all = gather("duration", np.nan)
    has_dur = present & np.isfinite(dur_all)
    duration = np.where(has_dur.any(axis=0),
                        _agreeing(dur_all, has_dur, qid, names, "duration"), np.nan)
    s, e = gather("pred_start", np.nan), gather("pred_end", np.nan)
    gives = present & np.isfinite(s) & np.isfinite(e)
    n_members = gives.sum(axis=0).astype(np.int64)
    ok = n_members >= min_members
    with np.errstate(invalid="ignore", divide="ignore"):
        s_mean = np.where(ok, np.nansum(np.where(gives, s, 0.0), axis=0) / n_members, np.nan)
        e_mean = np.where(ok, np.nansum(np.where(gives, e, 0.0), axis=0) / n_members, np.nan)
        s_sd = np.sqrt(np.nansum(np.where(gives, (s - s_mean) ** 2, 0.0), axis=0)
                       / (n_members - 1))
        e_sd = np.sqrt(np.nansum(np.where(gives, (e - e_mean) ** 2, 0.0), axis=0)
                       / (n_members - 1))
    s_sd, e_sd = np.where(ok, s_sd, np.nan), np.where(ok, e_sd, np.nan)
    relevance, n_rel = _mean_relevance(tables, idx, present)
    clips = {t.clip for t in tables}
    if len(clips) > 1 and n_rel:
        raise InputError(f"members use different relevance clip lengths {sorted(clips)} s; "
                         "their saliency cannot be averaged clip by clip")
    first = np.argmax(present, axis=0)
    recs = gather("records", None) if all(t.records is not None for t in tables) else None
    query = gather("query", None) if all(t.query is not None for t in tables) else None
    table = GroundingTable(
        qid=qid, vid=vid.astype(str), duration=duration, pred_start=s_mean, pred_end=e_mean,
        relevance=relevance, clip=tables[0].clip, start_std=s_sd, end_std=e_sd,
        source="ensemble(" + ", ".join(names) + ")",
        query=None if query is None else object_column(list(query[first, np.arange(n)])),
        records=None if recs is None else object_column(list(recs[first, np.arange(n)])),
    )
    counts = {
        "members": m, "rows": n, "all_members": int((n_members == m).sum()),
        "refused": int((~ok).sum()), "with_relevance": n_rel,
    } | {f"missing_in[{nm}]": int((~present[k]).sum()) for k, nm in enumerate(names)} \
      | {f"refused_by[{nm}]": int((present[k] & ~gives[k]).sum()) for k, nm in enumerate(names)}
    return Ensemble(table, n_members, names, counts)


def _mean_relevance(tables: Sequence[GroundingTable], idx: NDArray[np.int64],
                    present: NDArray[np.bool_]) -> tuple[Ragged, int]:
    """Mean per-clip relevance over the first ``min_m len_m`` clips, on rows where
    every member has a signal; other rows get none."""
    m = idx.shape[0]
    lengths = np.stack([np.where(present[k], t.relevance.lengths[idx[k]] if len(t) else 0, 0)
                        for k, t in enumerate(tables)])
    common = lengths.min(axis=0)
    off = offsets_from_lengths(common)
    total = np.zeros(int(off[-1]))
    if total.size:
        r = row_ids(off)
        pos = np.arange(total.size) - off[r]
        for k, t in enumerate(tables):
            total += t.relevance.values[t.relevance.offsets[idx[k, r]] + pos]
    return Ragged(total / m, off), int((common > 0).sum())


def gaussian_z(alpha: float) -> float:
    """``z = Phi^-1(1 - alpha/2)`` (:func:`cover.calibrate.uncertainty.nominal_z`): the
    two-sided normal quantile of a nominal ``1 - alpha`` interval ``mean ± z·sd``."""
    return nominal_z(alpha)


def gaussian_region(table: GroundingTable, alpha: float) -> Intervals:
    """The naive region a grounder's own Gaussian boundary sd implies at nominal
    ``1 - alpha``: ``[s - z·start_std, e + z·end_std] ∩ [0, T]`` with
    ``z = Phi^-1(1 - alpha/2)`` (paper App., SRAM table). No calibration: the level
    is a label, not a guarantee. Rows without an interval or sd get ``[0, T]``."""
    if table.start_std is None or table.end_std is None:
        raise ValueError("this table has no start_std/end_std (not an uncertainty-reporting "
                         "grounder)")
    z = gaussian_z(alpha)
    t = table.duration
    ok = table.has_interval & np.isfinite(table.start_std) & np.isfinite(table.end_std)
    lo = np.where(ok, np.clip(table.pred_start - z * table.start_std, 0.0, t), 0.0)
    hi = np.where(ok, np.clip(table.pred_end + z * table.end_std, 0.0, t), t)
    return Intervals.single(lo, np.maximum(lo, hi))

