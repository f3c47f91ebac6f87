"""Many answers at once: columns of parse results, rates per class, prediction rows.

Every answer ends in exactly one class; ``ok`` / ``zero_length`` rows become
predictions and every other row a refusal (an empty ``pred_relevant_windows``,
certified as the whole video), so no answer is ever dropped. The raw answer and its
parse are written beside the prediction.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from cover.data.table import GroundingTable
from cover.grounders.parse.answer import ANSWERED, STATUSES, ParsedAnswer, parse_answer
from cover.grounders.parse.extract import BareRule
from cover.intervals import Intervals
from cover.io.jsonl import object_column

StartOnly = Literal["refuse", "to_end"]


@dataclass(frozen=True)
class ParsedColumns:
    """The parses of ``n`` answers as columns: ``status``, ``reason``, ``notation``
    (str arrays), ``intervals`` (every interval the text states, per row), ``start``
    (the lone start of ``start_only`` rows, NaN elsewhere) and the raw ``text``."""

    text: NDArray[np.object_]
    status: NDArray[np.str_]
    reason: NDArray[np.str_]
    notation: NDArray[np.str_]
    intervals: Intervals
    start: NDArray[np.float64]

    def __len__(self) -> int:
        return int(self.status.size)

    @property
    def answered(self) -> NDArray[np.bool_]:
        """Rows whose intervals are a prediction (``ok`` or ``zero_length``)."""
        return np.isin(self.status, ANSWERED)

    def counts(self) -> dict[str, int]:
        """Rows per class, every class listed (zeros included), in :data:`STATUSES` order."""
        return {s: int(np.count_nonzero(self.status == s)) for s in STATUSES}

    def rates(self) -> dict[str, float]:
        """Fraction of rows per class (they sum to 1)."""
        n = max(len(self), 1)
        return {s: c / n for s, c in self.counts().items()}

    def samples(self, k: int = 3, seed: int = 0) -> dict[str, list[int]]:
        """Up to ``k`` row indices per class, drawn reproducibly."""
        rng = np.random.default_rng(seed)
        out: dict[str, list[int]] = {}
        for s in STATUSES:
            rows = np.flatnonzero(self.status == s)
            if rows.size:
                out[s] = sorted(rng.choice(rows, size=min(k, rows.size), replace=False).tolist())
        return out

    def top1(self, durations: ArrayLike | None = None, *, start_only: StartOnly = "refuse"
             ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """``(pred_start, pred_end)``: the first stated interval of answered rows, NaN
        (a refusal) elsewhere; ``start_only='to_end'`` reads a lone start ``s`` as
        ``[s, T]`` when the duration is known."""
        n = len(self)
        ps, pe = np.full(n, np.nan), np.full(n, np.nan)
        off = self.intervals.offsets
        has = self.answered & (np.diff(off) > 0)
        ps[has] = self.intervals.starts[off[:-1][has]]
        pe[has] = self.intervals.ends[off[:-1][has]]
        if start_only == "to_end" and durations is not None:
            T = np.broadcast_to(np.asarray(durations, dtype=np.float64), (n,))
            lone = (self.status == "start_only") & np.isfinite(T) & (self.start < T)
            ps[lone], pe[lone] = self.start[lone], T[lone]
        return ps, pe


def _per_row(values: Any, n: int, name: str) -> list[Any]:
    """One value per answer (a single value is shared), NaN read as missing (None)."""
    if values is None:
        return [None] * n
    arr = np.asarray(values, dtype=object).reshape(-1)
    if arr.size == 1:
        arr = np.repeat(arr, n)
    if arr.size != n:
        raise ValueError(f"{name}: expected {n} values (one per answer), got {arr.size}")
    return [None if v is None or (isinstance(v, float) and v != v) else v for v in arr]


def parse_answers(
    texts: Sequence[Any],
    durations: ArrayLike | None = None,
    *,
    fps: ArrayLike | None = None,
    n_frames: ArrayLike | None = None,
    prompt_examples: Sequence[str] = (),
    bare: BareRule = "seconds",
) -> ParsedColumns:
    """:func:`parse_answer` over many answers (per-answer ``durations``, ``fps`` and
    ``n_frames``, or one value for all). Identical (answer, context) pairs are read
    once: video-LLM answers repeat templates heavily."""
    n = len(texts)
    T = _per_row(durations, n, "durations")
    F = _per_row(fps, n, "fps")
    N = _per_row(n_frames, n, "n_frames")
    memo: dict[tuple[Any, ...], ParsedAnswer] = {}
    parsed: list[ParsedAnswer] = []
    for text, t, f, k in zip(texts, T, F, N, strict=True):
        key = (text if isinstance(text, str) else repr(text), t, f, k)
        hit = memo.get(key)
        if hit is None:
            hit = memo[key] = parse_answer(text, duration=t, fps=f, n_frames=k,
                                           prompt_examples=prompt_examples, bare=bare)
        parsed.append(hit)
    return columns_of(parsed, texts)


def columns_of(parsed: Sequence[ParsedAnswer], texts: Sequence[Any]) -> ParsedColumns:
    """Stack single parses into :class:`ParsedColumns`."""
    lists = [[list(iv) for iv in p.intervals] for p in parsed]
    return ParsedColumns(
        text=object_column(list(texts)),
        status=np.array([p.status for p in parsed], dtype=str).reshape(-1),
        reason=np.array([p.reason for p in parsed], dtype=str).reshape(-1),
        notation=np.array([p.notation for p in parsed], dtype=str).reshape(-1),
        intervals=Intervals.from_lists(lists),
        start=np.array([np.nan if p.start is None else p.start for p in parsed],
                       dtype=np.float64).reshape(-1),
    )


def answers_to_predictions(
    qid: ArrayLike,
    texts: Sequence[Any],
    *,
    vid: ArrayLike | None = None,
    durations: ArrayLike | None = None,
    fps: ArrayLike | None = None,
    n_frames: ArrayLike | None = None,
    prompt_examples: Sequence[str] = (),
    bare: BareRule = "seconds",
    start_only: StartOnly = "refuse",
    parsed: ParsedColumns | None = None,
) -> tuple[list[dict[str, Any]], ParsedColumns]:
    """Moment-DETR-style prediction rows (``qid``, ``vid``, ``duration``,
    ``pred_relevant_windows``) that every COVER command reads, plus the parses.

    Answered rows list every stated interval, first = top-1 (scores ``1/(i+1)``);
    every other row has no window and is a refusal (whole video). Each row keeps the
    raw ``answer`` and an ``answer_parse`` block (status, reason, notation).
    """
    q = np.asarray(qid).astype(str).reshape(-1)
    if parsed is None:
        parsed = parse_answers(texts, durations, fps=fps, n_frames=n_frames,
                               prompt_examples=prompt_examples, bare=bare)
    n = len(parsed)
    if q.size != n:
        raise ValueError(f"qid: expected {n} values (one per answer), got {q.size}")
    v = q if vid is None else np.asarray(vid).astype(str).reshape(-1)
    T = _per_row(durations, n, "durations")
    ps, pe = parsed.top1(None if durations is None else
                         np.array([np.nan if t is None else float(t) for t in T]),
                         start_only=start_only)
    iv = parsed.intervals.to_lists()
    rows: list[dict[str, Any]] = []
    for i in range(n):
        if parsed.answered[i]:
            wins = [[s, e, 1.0 / (j + 1)] for j, (s, e) in enumerate(iv[i])]
        elif np.isfinite(ps[i]):
            wins = [[float(ps[i]), float(pe[i]), 1.0]]
        else:
            wins = []
        row: dict[str, Any] = {"qid": str(q[i]), "vid": str(v[i])}
        if T[i] is not None:
            row["duration"] = float(T[i])
        row["pred_relevant_windows"] = wins
        row["answer"] = parsed.text[i] if isinstance(parsed.text[i], str) else str(
            parsed.text[i])
        row["answer_parse"] = {"status": str(parsed.status[i]), "reason": str(parsed.reason[i]),
                               "notation": str(parsed.notation[i])}
        rows.append(row)
    return rows, parsed


def prediction_table(
    qid: ArrayLike, parsed: ParsedColumns, *, durations: ArrayLike,
    vid: ArrayLike | None = None, start_only: StartOnly = "refuse",
) -> GroundingTable:
    """A :class:`GroundingTable` of the parses (top-1 interval; NaN = refusal)."""
    ps, pe = parsed.top1(durations, start_only=start_only)
    return GroundingTable.from_arrays(qid=qid, vid=vid, duration=durations, pred_start=ps,
                                      pred_end=pe)
