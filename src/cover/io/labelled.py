"""A labelled table in one call: predictions + ground truth, read, checked and joined."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from cover.data.join import attach_truth
from cover.data.table import DEFAULT_CLIP_SECONDS, GroundingTable
from cover.errors import InputError, RowProblem
from cover.io import formats
from cover.io.charades_rf import NO_MOMENT, no_moment_qids
from cover.io.content_join import align_truth
from cover.io.jsonl import OnError, raise_on_rejections
from cover.io.qids import read_qid_lines, unknown_qids


def load_labelled(
    preds: str | Path,
    gt: str | Path,
    *,
    qids: str | Path | None = None,
    clip: float = DEFAULT_CLIP_SECONDS,
    strict: bool = False,
    on_error: OnError = "raise",
    pred_format: str | None = None,
    gt_format: str | None = None,
    gt_durations: str | Path | None = None,
    columns: str | dict[str, str] | None = None,
    gt_columns: str | dict[str, str] | None = None,
    log: Callable[[str], None] | None = None,
) -> tuple[GroundingTable, list[RowProblem]]:
    """Read both files (format detected, or ``pred_format`` / ``gt_format``, or a
    ``columns`` mapping; :mod:`cover.io.formats`), keep the query ids in ``qids`` (a
    file, one per line) when given, and join on qid
    (:func:`cover.data.join.attach_truth`).

    When either format numbers its queries by position and the qids do not agree,
    rows are joined on (vid, query text) instead (:mod:`cover.io.content_join`).
    Ground-truth queries with no moment (Charades-RF) and their predictions are set
    aside as ``noted``. ``log`` receives one line per file naming the format read.

    Returns the joined table and every problem found on the way (a listed qid found
    in neither file is one). Under ``on_error='raise'`` a rejected row raises; a
    ground-truth row without a prediction gets its own message, because a silently
    dropped query biases calibration and the usual cause is calibrating on a subset
    without ``qids``.
    """
    say = log or (lambda _msg: None)
    p = formats.read(preds, "predictions", format=pred_format,
                     options=formats.Options(clip=clip, on_error=on_error, columns=columns))
    g = formats.read(gt, "ground_truth", format=gt_format,
                     options=formats.Options(on_error=on_error, durations=gt_durations,
                                             columns=gt_columns))
    say(f"{preds}: {p.format} ({len(p.loaded.table)} rows)")
    say(f"{gt}: {g.format} ({len(g.loaded.table)} rows)")
    ptab, gtab = p.loaded.table, g.loaded.table
    problems: list[RowProblem] = []
    empty = no_moment_qids(g.loaded)
    if empty:
        drop = np.isin(ptab.qid, np.array(sorted(empty), dtype=str))
        problems += [RowProblem(ptab.source, int(ln), str(q), NO_MOMENT, "noted")
                     for q, ln in zip(ptab.qid[drop].tolist(), _lines(ptab)[drop].tolist(),
                                      strict=True)]
        ptab = ptab.take(~drop)
        say(f"{gt}: {len(empty)} queries have no relevant moment; set aside "
            f"({int(drop.sum())} predictions for them)")
    renamed: tuple[np.ndarray, np.ndarray] | None = None
    if not (p.native_qids and g.native_qids):
        rekeyed, agree, matched = align_truth(ptab, gtab)
        if rekeyed is not gtab:
            renamed = (gtab.qid, rekeyed.qid)
            gtab = rekeyed
            say(f"joined on (vid, query text): {matched} of {len(ptab)} predictions "
                f"matched ({agree} by qid)")
    if qids is not None:
        wanted, lines = read_qid_lines(qids)
        if renamed is not None:  # a list made from the ground truth's own qids
            wanted = _translate(wanted, *renamed, keep=ptab.qid)
        problems += unknown_qids(qids, wanted, lines, np.union1d(ptab.qid, gtab.qid),
                                 f"{preds} nor in {gt}")
        ptab, gtab = ptab.select_qids(wanted), gtab.select_qids(wanted)
    table, joined = attach_truth(ptab, gtab, strict=strict)
    problems += joined
    no_pred = [x for x in problems if x.path == gtab.source and x.action == "rejected"]
    if no_pred and on_error == "raise":
        raise InputError(
            f"{len(no_pred)} ground-truth row(s) have no prediction, e.g. {no_pred[0]}.\n"
            "A silently dropped query would bias calibration. If you calibrate on a subset "
            "on purpose, pass --qids FILE (e.g. from `cover split`); to set them aside, "
            "pass --on-error reject."
        )
    raise_on_rejections(problems, on_error, f"{preds} joined with {gt}")
    return table, p.loaded.problems + g.loaded.problems + problems


def _translate(wanted: np.ndarray, old: np.ndarray, new: np.ndarray, *,
               keep: np.ndarray) -> np.ndarray:
    """``wanted`` qids that are ground-truth qids renamed by the content join, in their
    new (prediction) names; prediction qids pass through unchanged."""
    order = np.argsort(old, kind="stable")
    pos = np.minimum(np.searchsorted(old[order], wanted), max(old.size - 1, 0))
    hit = (old.size > 0) & (old[order][pos] == wanted) & ~np.isin(wanted, keep)
    return np.where(hit, new[order][pos], wanted)


def _lines(t: GroundingTable) -> np.ndarray:
    return t.line if t.line is not None else np.zeros(len(t), dtype=np.int64)
