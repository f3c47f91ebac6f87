"""``cover parse-answers`` as one job: free-text answer files in, one prediction file per
answer file and the per-file rates out.

Every answer file is parsed before any prediction file is written, so a run that
fails on its third file (a file it cannot read, a field it cannot find) writes none:
the outputs are all or nothing, as a results folder is. What each file parsed into
(rates, samples, warnings) is printed as it is parsed; the files are then written,
each atomically (:func:`cover.io.write_jsonl`), and the summary last.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cover.errors import InputError, report_problems, say, summarize

__all__ = ["parse_answers", "prediction_targets"]


def prediction_targets(answers: Sequence[str], *, out: str | None, out_dir: str | None,
                       summary: str | None, videos: str | None) -> dict[str, str | Path]:
    """The prediction file each answer file is written to, checked before any work:
    ``out`` for the one answer file, or with ``out_dir`` ``<name>.preds.jsonl`` per
    answer file (two answer files of one name, ``a/answers.jsonl`` and
    ``b/answers.jsonl``, are refused rather than one silently overwriting the other); no
    target may be an input or the ``summary``. The folder is not created here: a run
    that fails before it writes leaves none."""
    from cover.io.folders import check_folder
    from cover.io.output import check_outputs

    if out:
        if len(answers) > 1:
            raise InputError("-o names one output file; with several answer files use "
                             "--out-dir")
        return {answers[0]: out}
    if not out_dir:
        return {}
    targets: dict[str, str | Path] = {}
    for path in answers:
        target = Path(out_dir) / f"{Path(path).stem}.preds.jsonl"
        first = next((src for src, t in targets.items() if t == target), None)
        if first is not None:
            raise InputError(f"{first} and {path} would both be written to {target} "
                             "(--out-dir names each output after its input file); rename "
                             "one, or run once per file with -o")
        targets[path] = target
    # A folder not there yet holds no input: its files are checked once it exists.
    new = not check_folder(out_dir).is_dir()
    check_outputs(([] if new else [("--out-dir", t) for t in targets.values()])
                  + ([("--summary", summary)] if summary else []),
                  [("answers", p) for p in answers] + ([("--videos", videos)] if videos else []))
    return targets


def parse_answers(answers: Sequence[str], *, text_fields: Sequence[str | None],
                  out: str | None = None, out_dir: str | None = None,
                  summary: str | None = None, videos: str | None = None,
                  samples: int = 3, duration_field: str = "duration",
                  **parse: Any) -> None:
    """Parse every answer file (``parse``: the keyword arguments of
    :func:`cover.grounders.parse.files.parse_answer_file`), printing each file's rates
    and warnings; then write every prediction file, then the ``summary`` JSON."""
    from cover.grounders.parse.files import parse_answer_file, summary_lines, warnings_of
    from cover.io import write_jsonl
    from cover.io.output import make_folder, write_json
    from cover.jobs.certify_stream import videos_index

    targets = prediction_targets(answers, out=out, out_dir=out_dir, summary=summary,
                                 videos=videos)
    durations, by_qid = None, False
    if videos:  # the flag's one reading: by vid, or a ground truth's queries by qid
        index = videos_index(videos, ", ".join(answers))
        keys, durs = index.texts()
        durations, by_qid = dict(zip(keys.tolist(), durs.tolist(), strict=True)), index.by == "qid"
    parsed, summaries = [], []
    for path, text_field in zip(answers, text_fields, strict=True):
        pf = parse_answer_file(path, text_field=text_field, durations=durations,
                               durations_by_qid=by_qid,
                               duration_field=duration_field, **parse)
        doc = pf.summary(k=samples)
        parsed.append(pf)
        summaries.append(doc)
        for line in summary_lines(doc, samples=samples > 0):
            print(line)
        report_problems(pf.problems, what=path)
        for line in warnings_of(doc, duration_field=duration_field):
            say(line)
        noted = [q for q in pf.problems if q.action == "noted"]
        if noted:
            say(f"cover: {len(noted)} duration(s) set aside in {path} (each row parsed "
                "without it):\n" + summarize(noted, limit=3))
    inputs = [*answers, videos]
    if out_dir and targets:
        make_folder(out_dir)
    for path, pf in zip(answers, parsed, strict=True):  # every file parsed: now the outputs
        target = targets.get(path)
        if target is not None:
            write_jsonl(target, pf.rows, inputs=inputs)
            n_ref = sum(1 for r in pf.rows if not r["pred_relevant_windows"])
            print(f"wrote {target}: {len(pf.rows)} rows ({n_ref} refusals, whole video)")
    if summary:
        write_json(summary, {"files": summaries}, inputs=inputs)
        print(f"wrote {summary}")
    if not targets:
        say("cover: no prediction file written (pass -o FILE or --out-dir DIR)")
