"""A labelled table in one call: predictions + ground truth, read, checked and joined."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from cover.data.join import attach_truth
from cover.data.table import DEFAULT_CLIP_SECONDS, GroundingTable
from cover.errors import InputError, RowProblem
from cover.io.jsonl import OnError, raise_on_rejections
from cover.io.qids import read_qid_lines, unknown_qids
from cover.io.qvhighlights import read_ground_truth, read_predictions


def load_labelled(
    preds: str | Path,
    gt: str | Path,
    *,
    qids: str | Path | None = None,
    clip: float = DEFAULT_CLIP_SECONDS,
    strict: bool = False,
    on_error: OnError = "raise",
) -> tuple[GroundingTable, list[RowProblem]]:
    """Read both files, keep the query ids in ``qids`` (a file, one per line) when
    given, and join on qid (:func:`cover.data.join.attach_truth`).

    Returns the joined table and every problem found on the way (a listed qid found
    in neither file is one). Under
    ``on_error='raise'`` a rejected row raises; a ground-truth row without a
    prediction gets its own message, because a silently dropped query biases
    calibration and the usual cause is calibrating on a subset without ``qids``.
    """
    p = read_predictions(preds, clip=clip, on_error=on_error)
    g = read_ground_truth(gt, on_error=on_error)
    ptab, gtab = p.table, g.table
    problems: list[RowProblem] = []
    if qids is not None:
        wanted, lines = read_qid_lines(qids)
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
    return table, p.problems + g.problems + problems
