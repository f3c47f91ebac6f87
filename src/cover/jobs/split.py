"""``cover split`` as one job: the ground truth's queries split by source video into a
calibration list and a test list (never the same video on both sides), each a qid a
line. With the predictions, the lists name each query as the predictions do, so the
same two files serve ``calibrate``, ``certify`` and ``evaluate`` when the grounder
numbers its queries otherwise than the ground truth (TGN's ``<vid>-<k>`` against
Charades-STA's line numbers): the join is ``calibrate``'s
(:func:`cover.io.labelled.truth_named_as_predictions`)."""

from __future__ import annotations

from pathlib import Path

from cover.errors import InputError, counted, report_problems, say
from cover.io.jsonl import OnError

NAMES = ("calibration_qids.txt", "test_qids.txt")


def split_queries(gt: str, *, out_dir: str, cal_frac: float, seed: int,
                  on_error: OnError = "raise", gt_format: str | None = None,
                  gt_columns: str | None = None, gt_durations: str | None = None,
                  preds: str | None = None, pred_format: str | None = None,
                  columns: str | None = None) -> list[str]:
    """Write ``out_dir``'s two qid lists (checked before any read: never onto an input);
    the summary lines. ``preds``: the lists in the predictions' qids."""
    from cover.data.splits import split_by_unit
    from cover.io import formats
    from cover.io.labelled import truth_named_as_predictions, vid_from_truth
    from cover.io.output import check_outputs, make_folder
    from cover.io.qids import write_qids

    out = Path(out_dir)
    targets = [out / name for name in NAMES]
    given = [(flag, p) for flag, p in (("--gt", gt), ("--gt-durations", gt_durations),
                                       ("--preds", preds)) if p]
    if out.is_dir():
        check_outputs([("--out-dir", t) for t in targets], given)
    g = formats.read(gt, "ground_truth", format=gt_format, options=formats.Options(
        on_error=on_error, durations=gt_durations, columns=gt_columns))
    say(f"{gt}: {g.format} ({len(g.loaded.table)} rows)")
    report_problems(g.loaded.problems, what=gt)
    t = g.loaded.table
    if preds is not None:
        p = formats.read(preds, "predictions", format=pred_format,
                         options=formats.Options(on_error="reject", columns=columns))
        say(f"{preds}: {p.format} ({len(p.loaded.table)} rows)")
        # its rejected rows are said, not raised: the split is of the ground truth's
        # queries, and one with no usable prediction keeps the ground truth's name
        report_problems(p.loaded.problems, what=preds)
        ptab = p.loaded.table
        if not p.vid_given:
            ptab = vid_from_truth(ptab, t, f"{preds}: the mapping names no vid", gt, say)
        t, _, _ = truth_named_as_predictions(p, g, ptab, say)
    sp = split_by_unit(t.units, cal_frac=cal_frac, seed=seed)
    if not (sp.n_units_calibration and sp.n_units_test):  # one video: all on one side
        videos = sp.n_units_calibration + sp.n_units_test
        raise InputError(f"{gt}: cannot split {counted(len(t), 'query', 'queries')} "
                         f"from {counted(videos, 'source video')} into calibration and "
                         "test: a split by source video needs at least 2 videos (never the "
                         "same video on both sides)")
    make_folder(out)
    inputs = [p for _, p in given]
    write_qids(targets[0], t.qid[sp.calibration], inputs=inputs)
    write_qids(targets[1], t.qid[sp.test], inputs=inputs)
    named = f", named as in {preds}" if preds is not None else ""
    return [f"split {counted(len(t), 'query', 'queries')} by source video (seed {seed}): "
            f"calibration {counted(int(sp.calibration.sum()), 'query', 'queries')} / "
            f"{counted(sp.n_units_calibration, 'video')}, test "
            f"{counted(int(sp.test.sum()), 'query', 'queries')} / "
            f"{counted(sp.n_units_test, 'video')}{named}",
            f"wrote {targets[0]} and {targets[1]}"]
