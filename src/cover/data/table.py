"""The columnar grounding table: one row per (video, query) pair.

Columns are numpy arrays; the relevance signal and ground-truth windows are
ragged (flat values + offsets). A table read from a prediction file has no truth
(``truth is None``); :func:`cover.data.join.attach_truth` adds it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from cover.data.ids import TextIds, given_ids, qid_text  # noqa: F401  (qid_text re-exported)
from cover.data.rules import check_clip
from cover.data.shape import ANSWERED as ANSWERED
from cover.data.shape import ids_as_given as ids_as_given
from cover.data.shape import raw_ids as raw_ids
from cover.data.shape import replace_keeping_ids as replace_keeping_ids
from cover.data.units import split_units
from cover.data.validate import per_row_numbers, validate_table
from cover.errors import InputError, RowProblem, check_on_error
from cover.intervals import Intervals
from cover.ragged import Ragged

if TYPE_CHECKING:
    from cover.data.rules import OnError

#: QVHighlights / Moment-DETR saliency clips are 2 s long.
DEFAULT_CLIP_SECONDS = 2.0


@dataclass(frozen=True)
class GroundingTable:
    """Predictions (and optionally truth) for ``n`` queries.

    Attributes
    ----------
    qid, vid : str arrays
        Query id (as text, the join key) and video id. Integer ids are kept as given
        and converted to text on first read (:class:`~cover.data.ids.TextIds`,
        :func:`raw_ids`).
    duration : float array
        Video length T in seconds; NaN where unknown.
    pred_start, pred_end : float arrays
        Top-1 interval (the highest-scoring window); NaN where the grounder gave none.
    relevance : Ragged
        Per-clip relevance signal (empty row when absent); clip ``i`` covers
        ``[i*clip, (i+1)*clip) ∩ [0, T]``.
    truth : Intervals or None
        Ground-truth windows, one or more per row.
    line : int array
        1-based line of the row in ``source`` (0 when built in memory).
    query : object array or None
        Query text per row (None where the file has none); checked when joining.
    records : object array of dict, or None
        The original parsed rows, kept so certified output can echo them untouched.
    pred_windows : Ragged or None
        Every predicted window per row in file order, values of shape ``(m, 3)``
        (start, end, score), unclipped; what ranking metrics such as mAP need
        (:mod:`cover.grounding_metrics`).
    truth_saliency : Ragged or None
        QVHighlights' highlight labels per row (``relevant_clip_ids`` with the three
        annotators' ``saliency_scores``), values of shape ``(k, 4)``: clip index, then
        the three scores in 0..4; what HL-mAP and HIT@1 need
        (:mod:`cover.highlight_metrics`). An empty row has no labels.
    checked : frozenset of str
        What the validator (:mod:`cover.data.validate`) checked this table for
        (``"rows"``, ``"unique"``, ``"durations"``, and :data:`ANSWERED` when no row
        is a refusal); empty for a table built any other
        way, which :meth:`Calibrator.fit` and ``certify`` then check first.
    problems : tuple of RowProblem
        What :meth:`from_arrays` found: rows rejected (``on_error="reject"``) and
        windows clipped to ``[0, T]``, each naming the row index, qid and field.
    """

    qid: NDArray[np.str_]  # both read through TextIds (set below the class)
    vid: NDArray[np.str_]
    duration: NDArray[np.float64]
    pred_start: NDArray[np.float64]
    pred_end: NDArray[np.float64]
    relevance: Ragged
    clip: float = DEFAULT_CLIP_SECONDS
    truth: Intervals | None = None
    start_std: NDArray[np.float64] | None = None
    end_std: NDArray[np.float64] | None = None
    line: NDArray[np.int64] | None = None
    source: str = "<memory>"
    query: NDArray[np.object_] | None = None
    records: NDArray[np.object_] | None = field(default=None, repr=False, compare=False)
    pred_windows: Ragged | None = field(default=None, repr=False, compare=False)
    truth_saliency: Ragged | None = field(default=None, repr=False, compare=False)
    # Set by the validator (cover.data.validate) on the table it returns; any other
    # table (built directly, or by dataclasses.replace) starts unchecked, so fit and
    # certify validate it first.
    checked: frozenset[str] = field(default=frozenset(), init=False, repr=False,
                                    compare=False)
    problems: tuple[RowProblem, ...] = field(default=(), init=False, repr=False,
                                             compare=False)

    # ---- construction -------------------------------------------------------------
    @classmethod
    def from_arrays(
        cls,
        *,
        qid: ArrayLike,
        duration: ArrayLike,
        pred_start: ArrayLike | None = None,
        pred_end: ArrayLike | None = None,
        vid: ArrayLike | None = None,
        relevance: Ragged | list[list[float]] | None = None,
        truth: Intervals | tuple[ArrayLike, ArrayLike] | None = None,
        clip: float = DEFAULT_CLIP_SECONDS,
        on_error: OnError = "raise",
        strict: bool = False,
    ) -> GroundingTable:
        """Build a table in memory (the Python API's entry point), checked by the same
        rules as the readers (:mod:`cover.data.validate`).

        ``truth`` is an :class:`Intervals` or a ``(starts, ends)`` pair of arrays.
        Missing predictions (NaN) are refusals;
        an unknown duration (NaN) is allowed in predictions without truth until they are
        certified. A bad row (a non-id qid, a repeated qid, a duration that is not a
        finite number > 0, a string where a number belongs, ``start > end``, a window
        wholly outside ``[0, T]``, ...) raises an :class:`~cover.errors.InputError`
        naming its index, qid, field and reason; with ``on_error="reject"`` such rows
        are left out and ``table.problems`` lists them. Windows partly outside
        ``[0, T]`` are clipped and counted (``table.problems``, one
        :class:`~cover.errors.CoverWarning`), or rejected with ``strict=True``.
        ``clip`` (seconds per relevance value) must be a finite number > 0.
        The arrays are kept as given, never copied when they are already 1-D numbers
        (integer or text qids, float64 columns), and never written: whatever COVER
        changes (clipped windows, rejected rows, scores, regions) goes to new arrays.
        """
        check_on_error(on_error)
        clip = check_clip(clip)
        q = given_ids(qid, "qid")  # kept as given, read as text when first shown (TextIds)
        n = q.size
        bad: dict[int, tuple[str, str]] = {}
        t = per_row_numbers(np.asarray(duration).reshape(-1), n, "duration", bad)
        ps = (np.full(n, np.nan) if pred_start is None
              else per_row_numbers(pred_start, n, "pred_start", bad))
        pe = (np.full(n, np.nan) if pred_end is None
              else per_row_numbers(pred_end, n, "pred_end", bad))
        v = q if vid is None else given_ids(vid, "vid")  # never written in place
        if v.size != n:
            raise InputError(f"vid has {v.size} values; expected {n} (one per qid)")
        if relevance is None:
            rel = Ragged.empty(n)
        elif isinstance(relevance, Ragged):
            rel = relevance
        else:
            rel = Ragged.from_lists(relevance)
        if len(rel) != n:
            raise InputError(f"relevance has {len(rel)} rows; expected {n} (one per qid)")
        tr: Intervals | None
        if truth is None or isinstance(truth, Intervals):
            tr = truth
        else:
            starts = per_row_numbers(truth[0], n, "truth starts", bad)
            ends = per_row_numbers(truth[1], n, "truth ends", bad)
            tr = Intervals.single(starts, ends)
        if tr is not None and len(tr) != n:
            raise InputError(f"truth has {len(tr)} rows; expected {n} (one per qid)")
        table = cls(qid=q, vid=v, duration=t, pred_start=ps, pred_end=pe, relevance=rel,
                    clip=clip, truth=tr)
        found: list[tuple[NDArray[np.int64], str, str | list[str]]] = [
            (np.array([i], dtype=np.int64), f, w) for i, (f, w) in sorted(bad.items())]
        return validate_table(table, on_error=on_error, strict=strict, bad=found,
                              what="the arrays given to GroundingTable.from_arrays")

    # ---- views --------------------------------------------------------------------
    def __len__(self) -> int:
        return int(raw_ids(self).size)

    @property
    def has_interval(self) -> NDArray[np.bool_]:
        """Rows with a usable top-1 interval."""
        return np.isfinite(self.pred_start) & np.isfinite(self.pred_end)

    @property
    def has_relevance(self) -> NDArray[np.bool_]:
        return self.relevance.lengths > 0

    @property
    def units(self) -> NDArray[np.str_]:
        """The exchangeability unit of each row (source video), see :mod:`cover.data.units`;
        worked out once per table (studies ask for it at every split) and carried by
        :meth:`take`."""
        units = self.__dict__.get("_units")
        if units is None:
            units = split_units(self.vid)
            units.flags.writeable = False  # shared with every take() of this table
            self.__dict__["_units"] = units
        return units

    def truth_envelope(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """``(earliest start, latest end)`` of the truth windows per row."""
        if self.truth is None:
            raise ValueError("this table has no ground truth; attach it with attach_truth()")
        return self.truth.envelope()

    def require_truth(self) -> Intervals:
        if self.truth is None:
            raise ValueError("this table has no ground truth; attach it with attach_truth()")
        return self.truth

    def where(self, what: int) -> str:
        """``file:line (qid=...)`` for messages about row ``what``."""
        line = int(self.line[what]) if self.line is not None else 0
        loc = f"{self.source}:{line}" if line > 0 else self.source
        return f"{loc} (qid={self.qid[what]})"

    # ---- row selection ------------------------------------------------------------
    def take(self, rows: ArrayLike) -> GroundingTable:
        """The sub-table of ``rows`` (indices or a boolean mask), in that order."""
        idx = np.asarray(rows)
        mask = idx.dtype == bool
        if mask:
            idx = np.flatnonzero(idx)
        idx = idx.astype(np.int64)

        def opt(a: NDArray[Any] | None) -> NDArray[Any] | None:
            return None if a is None else a[idx]

        out = replace(
            self,
            qid=(q := raw_ids(self)[idx]),
            vid=q if raw_ids(self, "vid") is raw_ids(self) else raw_ids(self, "vid")[idx],
            duration=self.duration[idx],
            pred_start=self.pred_start[idx],
            pred_end=self.pred_end[idx],
            relevance=self.relevance.take(idx),
            truth=None if self.truth is None else self.truth.take(idx),
            start_std=opt(self.start_std),
            end_std=opt(self.end_std),
            line=opt(self.line),
            query=opt(self.query),
            records=opt(self.records),
            pred_windows=None if self.pred_windows is None else self.pred_windows.take(idx),
            truth_saliency=(None if self.truth_saliency is None
                            else self.truth_saliency.take(idx)),
        )
        if "_units" in self.__dict__:  # the same vids, row by row
            out.__dict__["_units"] = self.__dict__["_units"][idx]
        if self.checked:  # row rules hold row by row; qids stay unique unless rows repeat
            unique = mask or bool((idx[1:] > idx[:-1]).all())
            object.__setattr__(out, "checked", self.checked if unique
                               else self.checked - {"unique"})
        return out

    def select_qids(self, qids: ArrayLike) -> GroundingTable:
        """Rows whose qid is in ``qids`` (file order kept)."""
        keep = np.isin(self.qid, np.asarray(qids).astype(str))
        return self.take(keep)


# Installed after the dataclass is made, so both stay required constructor fields; the
# generated __init__ (object.__setattr__) then stores through the descriptor.
for _name in ("qid", "vid"):
    _ids = TextIds()
    _ids.__set_name__(GroundingTable, _name)
    setattr(GroundingTable, _name, _ids)
