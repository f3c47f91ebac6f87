"""ProblemTally: the messages of a list of problems from counts and the first few, so a
streamed command holds a bounded tally, never every problem."""

from __future__ import annotations

import json
from collections import Counter
from itertools import pairwise

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import cover
from cli_files import sec_calibrator
from cover.cli import main
from cover.data.rules import in_line_order, raise_on_rejections
from cover.errors import (
    KEEP,
    MAX_KINDS,
    OTHER_FILES,
    OTHER_KINDS,
    InputError,
    ProblemTally,
    RowProblem,
    no_rows_left,
    report_lines,
)
from cover.stream import certify_jsonl, certify_parquet


def old_report_lines(problems: list[RowProblem], *, what: str, limit: int = 3) -> list[str]:
    """The rule on the full list: the oracle. The header names the rows' one file, else
    ``what`` with the count in each file (in the order first found)."""
    out: list[str] = []
    for action in ("clipped", "rejected"):
        these = [p for p in problems if p.action == action]
        if these:
            kinds = Counter(p.problem for p in these)
            files = Counter(p.path for p in these)
            where = (these[0].path if len(files) == 1 else
                     f"{what} (" + ", ".join(f"{n} in {f}" for f, n in files.items()) + ")")
            out.append(f"cover: {len(these)} row(s) {action} in {where}: " +
                       "; ".join(f"{k} ({v})" for k, v in kinds.most_common(4)))
            lines = [f"  {p}" for p in these[:limit]]
            if len(these) > limit:
                lines.append(f"  ... and {len(these) - limit} more")
            out.append("\n".join(lines))
    return out


def old_bad_rows(problems: list[RowProblem], what: str) -> str | None:
    """The --on-error raise message before the tally (None: nothing rejected)."""
    rejected = [p for p in problems if p.action == "rejected"]
    if not rejected:
        return None
    lines = [f"  {p}" for p in rejected[:5]]
    if len(rejected) > 5:
        lines.append(f"  ... and {len(rejected) - 5} more")
    return f"{len(rejected)} bad row(s) in {what}:\n" + "\n".join(lines)


def old_no_rows_left(problems: list[RowProblem]) -> str:
    rejected = [p for p in problems if p.action == "rejected"]
    kinds = Counter(p.problem for p in rejected).most_common(3)
    why = "; ".join(f"{k} ({v})" for k, v in kinds) if kinds else "the files share no query id"
    return (f"no calibration rows left after validation of p joined with g: "
            f"{len(rejected)} row(s) rejected ({why})")


# Few kinds and actions: ties in the counts of kinds and repeats are common.
problem = st.builds(RowProblem, path=st.sampled_from(["a.jsonl", "b.csv"]),
                    line=st.integers(0, 30), qid=st.one_of(st.none(), st.text(max_size=3)),
                    problem=st.sampled_from(["k0", "k1", "k2", "k3", "k4", "k5 (x)"]),
                    action=st.sampled_from(["rejected", "clipped", "floored", "noted"]))


@given(problems=st.lists(problem, max_size=60), cuts=st.lists(st.integers(0, 60), max_size=6),
       limit=st.integers(0, KEEP))
def test_lines_from_a_tally_are_those_of_the_full_list(problems, cuts, limit):
    """Whether the problems come whole, batch by batch, or as tallies added together,
    the report, the --on-error raise message and the no-rows message are the old
    full-list rule's, byte for byte; counts are exact and at most ``keep`` are kept."""
    bounds = [0, *sorted(min(c, len(problems)) for c in cuts), len(problems)]
    chunks = [problems[a:b] for a, b in pairwise(bounds)]
    by_batch = ProblemTally()
    for chunk in chunks:
        by_batch.add(chunk)
    summed = ProblemTally()
    for chunk in chunks:
        summed = summed + ProblemTally.of(chunk)
    want = old_report_lines(problems, what="f", limit=limit)
    for tally in (by_batch, summed, ProblemTally.of(problems, keep=limit)):
        assert report_lines(tally, what="f", limit=limit) == want
        assert {a: tally.count(a) for a in tally.counts} == dict(
            Counter(p.action for p in problems))
        for action in ("rejected", "clipped", "floored", "noted"):
            these = [p for p in problems if p.action == action]
            assert tally.examples(action) == these[:tally.keep]
            assert list(tally.kinds.get(action, {}).items()) == list(
                Counter(p.problem for p in these).items())  # kinds in first-found order
    assert report_lines(problems, what="f", limit=limit) == want
    assert ProblemTally.of(problems, keep=None).kept == problems
    assert no_rows_left("p", "g", by_batch) == no_rows_left("p", "g", problems) == \
        old_no_rows_left(problems)
    # A tally names its rows in the order they were added (a stream adds them in line
    # order); a list is put in line order within each file first, so a whole read names
    # the rows a stream of any batch size names.
    for given_as, bad in ((by_batch, old_bad_rows(problems, "f")),
                          (summed, old_bad_rows(problems, "f")),
                          (problems, old_bad_rows(in_line_order(problems), "f")),
                          (ProblemTally.of(in_line_order(problems)),
                           old_bad_rows(in_line_order(problems), "f"))):
        raise_on_rejections(given_as, "reject", "f")
        if bad is None:
            raise_on_rejections(given_as, "raise", "f")
        else:
            with pytest.raises(InputError) as got:
                raise_on_rejections(given_as, "raise", "f")
            assert str(got.value).startswith(bad + "\nFix these rows")


@given(problems=st.lists(problem, max_size=40))
def test_in_line_order_sorts_by_line_within_each_file_in_first_seen_file_order(problems):
    got = in_line_order(problems)
    assert sorted(map(repr, got)) == sorted(map(repr, problems))  # the same problems
    files = list(dict.fromkeys(p.path for p in problems))
    assert [p.path for p in got] == sorted((p.path for p in problems), key=files.index)
    for a, b in pairwise(got):
        if a.path == b.path:
            assert a.line <= b.line


def _tallied(problems: list[RowProblem], how: str) -> ProblemTally:
    """``problems`` tallied whole, added by batches of 700, or as the sum of the
    batches' own tallies."""
    if how == "whole":
        return ProblemTally.of(problems)
    tally = ProblemTally()
    for a in range(0, len(problems), 700):
        if how == "by batch":
            tally.add(problems[a:a + 700])
        else:
            tally = tally + ProblemTally.of(problems[a:a + 700])
    return tally


@pytest.mark.parametrize("how", ["whole", "by batch", "summed"])
def test_a_tally_counts_at_most_max_kinds_texts_apart(how):
    """One text a row (a repeated qid names its first line): the tally's memory stays
    bounded; the count is exact, the first MAX_KINDS texts keep their own counts and
    the others are counted together, whichever way the problems come."""
    common = [RowProblem("a.jsonl", i, str(i), "duration missing", "rejected")
              for i in range(3)]
    each = [RowProblem("a.jsonl", 10 + i, f"q{i}", f"repeated qid q{i} (line {i})",
                       "rejected") for i in range(3 * MAX_KINDS)]
    problems = common + each
    tally = _tallied(problems, how)
    kinds = tally.kinds["rejected"]
    assert tally.count("rejected") == sum(kinds.values()) == len(problems)
    assert len(kinds) == MAX_KINDS + 1
    assert kinds["duration missing"] == 3
    assert kinds[OTHER_KINDS] == len(problems) - MAX_KINDS - 2
    assert report_lines(tally, what="f")[0].startswith(
        f"cover: {len(problems)} row(s) rejected in a.jsonl: {OTHER_KINDS} "
        f"({kinds[OTHER_KINDS]}); duration missing (3)")


@pytest.mark.parametrize("how", ["whole", "by batch", "summed"])
def test_a_tally_counts_at_most_max_kinds_files_apart(how):
    """Rows of more files than MAX_KINDS: the count in each of the first MAX_KINDS files
    is kept, the others are counted together, and the header names them so."""
    problems = [RowProblem(f"f{i}.jsonl", 1, "q", "bad", "rejected")
                for i in range(2 * MAX_KINDS)] + [RowProblem("f0.jsonl", 2, "r", "bad",
                                                             "rejected")]
    tally = _tallied(problems, how)
    files = tally.files["rejected"]
    assert sum(files.values()) == len(problems) and len(files) == MAX_KINDS + 1
    assert files["f0.jsonl"] == 2 and files[OTHER_FILES] == MAX_KINDS
    assert report_lines(tally, what="run")[0].startswith(
        f"cover: {len(problems)} row(s) rejected in run (2 in f0.jsonl, 1 in f1.jsonl, ")


def test_a_tally_refuses_to_show_examples_it_did_not_keep():
    p = RowProblem("f", 1, "q", "k", "clipped")
    tally = ProblemTally.of([p] * 9, keep=2)
    assert tally.count("clipped") == 9 and tally.kept == [p, p]
    with pytest.raises(ValueError, match="keeps 2"):
        report_lines(tally, what="f", limit=3)
    with pytest.raises(ValueError, match="cannot be added"):
        ProblemTally(keep=None) + tally




def _overshooting(path, rows: int) -> None:
    """Every row's window reaches past its 150 s video (clipped); every 997th line is
    not JSON (rejected)."""
    line = '{"qid": %d, "vid": "v%d", "duration": 150, "pred_relevant_windows": [[140, 170, 1]]}'
    path.write_text("".join(("{bad\n" if i % 997 == 996 else line % (i, i // 3) + "\n")
                            for i in range(rows)))


@pytest.mark.parametrize("rows", [5_000, 50_000])
def test_streamed_certify_keeps_a_bounded_tally_with_exact_counts(tmp_path, capsys, rows):
    """Many clipped rows in small batches: the tally keeps five of each action whatever
    the number of rows, its counts are exact, and ``cover certify`` says what the full
    list would have made it say."""
    src = tmp_path / "p.jsonl"
    _overshooting(src, rows)
    cal = sec_calibrator()
    bad = rows // 997
    counts, every = certify_jsonl(cal, src, tmp_path / "o.jsonl", batch_lines=500,
                                  every_problem=False)
    assert every == [] and counts.batches == -(-rows // 500)
    assert (counts.tally.count("clipped"), counts.tally.count("rejected")) == (rows - bad, bad)
    assert len(counts.tally.kept) == 2 * KEEP
    assert [p.line for p in counts.examples] == [997 * (i + 1) for i in range(KEEP)]
    assert sum(counts.reasons.values()) == bad and counts.examples[0].problem in counts.reasons
    full, every = certify_jsonl(cal, src, tmp_path / "f.jsonl", batch_lines=500)
    assert len(every) == rows and full.tally == counts.tally
    cal.save(tmp_path / "cal.json")
    args = ["certify", "--calibrator", str(tmp_path / "cal.json"), "--preds", str(src),
            "-o", str(tmp_path / "cli.jsonl"), "--batch-rows", "500", "--on-error", "reject"]
    if rows == 5_000:  # the command's words, from the tally, are the full list's
        capsys.readouterr()
        assert main(args) == 0
        assert "\n".join(report_lines(every, what=str(src))) in capsys.readouterr().err
        assert (tmp_path / "cli.jsonl").read_bytes() == (tmp_path / "o.jsonl").read_bytes()


def test_streamed_parquet_certify_tallies_every_batch(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    n = 20_000
    start = np.full(n, 140.0)
    start[::7] = 200.0  # wholly outside: rejected
    pq.write_table(pa.table({"qid": np.arange(n), "duration": np.full(n, 150.0),
                             "start": start, "end": np.full(n, 170.0)}), tmp_path / "p.parquet")
    counts = certify_parquet(sec_calibrator(), tmp_path / "p.parquet", tmp_path / "o.parquet",
                             batch_rows=300,
                             columns="qid=qid,duration=duration,start=start,end=end")
    rejected = len(range(0, n, 7))
    assert counts.rejected == counts.tally.count("rejected") == rejected
    assert counts.tally.count("clipped") == n - rejected and len(counts.tally.kept) == 2 * KEEP
    assert [p.line for p in counts.tally.examples("clipped")] == [2, 3, 4, 5, 6]


def test_streamed_calibrate_tallies_as_the_full_list(tmp_path):
    """Streamed calibration of clipped rows: the bounded tally reports what every problem
    (``keep_problems=None``) reports, with exact counts."""
    from cover.stream.calibrate import calibrate_file

    n = 3_000
    src = tmp_path / "p.jsonl"
    src.write_text("".join(json.dumps({"qid": i, "vid": f"v{i // 3}", "duration": 150,
                                       "pred_relevant_windows": [[140, 170 + i % 5, 1]]})
                           + "\n" for i in range(n)))
    m = n + 7  # 7 truth rows without a prediction: rejected
    gt = cover.GroundingTable.from_arrays(qid=np.arange(m), vid=[f"v{i // 3}" for i in range(m)],
                                          duration=150.0, truth=(np.full(m, 140.0), 150.0))
    got = [calibrate_file(cover.Calibrator(), src, gt, batch_rows=128, on_error="reject",
                           keep_problems=keep)[1].problems for keep in (None, KEEP)]
    assert len(got[0].kept) == m and len(got[1].kept) == 2 * KEEP
    assert got[1].count("clipped") == n and got[1].count("rejected") == 7
    assert report_lines(got[1], what="f") == report_lines(got[0].kept, what="f")
    assert no_rows_left("p", "g", got[1]) == no_rows_left("p", "g", got[0].kept)


@given(problems=st.lists(st.builds(
    RowProblem, path=st.just("a.jsonl"), line=st.integers(0, 30), qid=st.none(),
    problem=st.sampled_from([f"k{i}" for i in range(8)]),
    action=st.sampled_from(["rejected", "clipped"])), max_size=60),
    cuts=st.lists(st.integers(0, 60), max_size=6))
def test_the_kind_cap_holds_whatever_the_batches(problems, cuts):
    """With a cap of 3 texts: added batch by batch as a stream adds them, the tally is
    the whole list's: exact counts per action, the first 3 texts of each action in the
    order found with their own counts, every other text counted together."""
    import cover.errors as errors

    old = errors.MAX_KINDS
    errors.MAX_KINDS = 3
    try:
        bounds = [0, *sorted(min(c, len(problems)) for c in cuts), len(problems)]
        tally = ProblemTally()
        for a, b in pairwise(bounds):
            tally.add(problems[a:b])
        for action in ("rejected", "clipped"):
            texts = Counter(p.problem for p in problems if p.action == action)
            want = dict(list(texts.items())[:3])
            if len(texts) > 3:
                want[OTHER_KINDS] = sum(list(texts.values())[3:])
            assert dict(tally.kinds.get(action, {})) == want
            assert tally.count(action) == sum(texts.values())
    finally:
        errors.MAX_KINDS = old


def test_a_count_of_one_takes_the_singular() -> None:
    """Messages count with :func:`cover.errors.counted`: never "1 videos"."""
    from cover.errors import counted

    assert [counted(n, "video") for n in (0, 1, 2)] == ["0 videos", "1 video", "2 videos"]
    assert counted(1, "query", "queries") == "1 query"
    assert counted(3, "query", "queries") == "3 queries"
