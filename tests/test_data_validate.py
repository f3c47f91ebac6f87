"""The API's boundary: from_arrays, fit and certify apply the readers' row rules."""

from __future__ import annotations

import json
import warnings
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from cover.calibrate import Calibrator
from cover.data.rules import repeats
from cover.data.table import GroundingTable
from cover.errors import CoverWarning, InputError
from cover.io.qvhighlights import read_ground_truth, read_predictions

N = 8


def _arrays() -> dict[str, object]:
    """Eight clean rows: predictions and truth inside [0, 100]."""
    ps = np.linspace(5.0, 40.0, N)
    return {"qid": np.arange(N), "duration": np.full(N, 100.0), "pred_start": ps,
            "pred_end": ps + 20.0, "truth": (ps + 1.0, ps + 22.0)}


def _set(kw: dict[str, object], key: str, i: int, value: object) -> None:
    a = np.array(kw[key], dtype=object if isinstance(value, str) else None)
    a[i] = value
    kw[key] = a


def _truth(kw: dict[str, object], i: int, s: float, e: float) -> None:
    ts, te = (np.array(x, dtype=float) for x in kw["truth"])  # type: ignore[union-attr]
    ts[i], te[i] = s, e
    kw["truth"] = (ts, te)


# kind -> (how to break row i, the field named, the reason shown)
BREAK = {
    "reversed": (lambda kw, i: (_set(kw, "pred_start", i, 50.0), _set(kw, "pred_end", i, 49.0)),
                 "pred_start, pred_end", "a predicted window has start > end"),
    "outside": (lambda kw, i: (_set(kw, "pred_start", i, 500.0), _set(kw, "pred_end", i, 600.0)),
                "pred_start, pred_end", "lies wholly outside the video [0, 100]"),
    "inf": (lambda kw, i: _set(kw, "pred_end", i, np.inf), "pred_start, pred_end",
            "non-finite number (inf)"),
    "duration 0": (lambda kw, i: _set(kw, "duration", i, 0.0), "duration",
                   "duration must be a finite number > 0"),
    "duration nan": (lambda kw, i: _set(kw, "duration", i, np.nan), "duration",
                     "duration must be a finite number > 0"),
    "text number": (lambda kw, i: _set(kw, "duration", i, "100"), "duration",
                    'duration holds the string "100" where a number is expected'),
    "repeat": (lambda kw, i: _set(kw, "qid", i, 0 if i else 1), "qid",
               "duplicate qid (first seen at row"),
    "truth reversed": (lambda kw, i: _truth(kw, i, 30.0, 10.0), "truth",
                       "a true window has start > end"),
    "truth outside": (lambda kw, i: _truth(kw, i, 120.0, 130.0), "truth",
                      "ground-truth windows lie outside [0, T]"),
    "truth nan": (lambda kw, i: _truth(kw, i, np.nan, 10.0), "truth",
                  "non-finite number in a window"),
}


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(kind=st.sampled_from(sorted(BREAK)), row=st.integers(0, N - 1),
       entry=st.sampled_from(["from_arrays", "fit", "certify"]))
def test_a_bad_row_is_an_error_naming_row_qid_and_field_never_a_region(kind, row, entry):
    assume(not (kind == "repeat" and entry == "certify"))  # certifying a qid twice is harmless
    kw = _arrays()
    breaks, field, reason = BREAK[kind]
    breaks(kw, row)
    own = reason  # what from_arrays says
    if kind == "text number" and entry != "from_arrays":  # no text once a table is built
        field, reason = BREAK["duration nan"][1:]
    bad_row = row if kind != "repeat" or row else 1  # the repeat is the later row
    cal = Calibrator(score="norm", alpha=0.2).fit(GroundingTable.from_arrays(**_arrays()))
    with pytest.raises(InputError) as err:
        if entry == "from_arrays":
            GroundingTable.from_arrays(**kw)
        else:  # a table that bypassed from_arrays, e.g. built directly or by replace()
            good = GroundingTable.from_arrays(**_arrays())
            raw = _unchecked(good, kw)
            Calibrator(score="norm").fit(raw) if entry == "fit" else cal.certify(raw)
    text = str(err.value)
    assert f"row {bad_row} (qid=" in text and reason in text, text
    assert field in text and "Traceback" not in text and "array(" not in text

    if kind == "text number":
        kw = _arrays()
        _set(kw, "duration", row, "100")
    kept = GroundingTable.from_arrays(**kw, on_error="reject")
    assert len(kept) == N - 1
    (p,) = [p for p in kept.problems if p.action == "rejected"]
    assert p.path == f"row {bad_row}" and own in p.problem
    regions = cal.certify(kept)
    assert (regions.intervals.n_components > 0).all()  # never an empty certified region


def _unchecked(good: GroundingTable, kw: dict[str, object]) -> GroundingTable:
    """``good`` with the (possibly broken) columns of ``kw``, by dataclasses.replace."""
    from cover.intervals import Intervals

    def num(v: object) -> np.ndarray:
        return np.array([np.nan if isinstance(x, str) else x for x in np.asarray(v).tolist()],
                        dtype=float)

    return replace(good, qid=np.asarray(kw["qid"]), duration=num(kw["duration"]),
                   pred_start=num(kw["pred_start"]), pred_end=num(kw["pred_end"]),
                   truth=Intervals.single(*(num(x) for x in kw["truth"])))  # type: ignore[union-attr]


def test_the_issue_cases_are_refused() -> None:
    """Each case the issue found accepted: a prediction outside the video, a qid four
    times, boolean / object qids, numbers as text, clip 0."""
    kw = _arrays()
    with pytest.raises(InputError, match=r"row 3 \(qid=0\): duplicate qid \(first seen at "
                                         r"row 0\)"):
        GroundingTable.from_arrays(**kw | {"qid": [0, 1, 2, 0, 0, 0, 6, 7]})
    with pytest.raises(InputError, match="qid must be an integer or a string, got true"):
        GroundingTable.from_arrays(**kw | {"qid": [True, False] * 4})
    dicts = np.empty(N, dtype=object)
    dicts[:] = [{"a": i} for i in range(N)]
    with pytest.raises(InputError, match=r'row 0 \(qid=\{"a": 0\}\): qid must be .* an object'):
        GroundingTable.from_arrays(**kw | {"qid": dicts})
    with pytest.raises(InputError, match=r'pred_start holds the string "5\.0"'):
        GroundingTable.from_arrays(**kw | {"pred_start": np.linspace(5.0, 40.0, N).astype(str)})
    with pytest.raises(InputError, match=r"clip must be a finite number of seconds > 0, got 0\.0"):
        GroundingTable.from_arrays(**kw, clip=0.0)
    with pytest.raises(InputError, match=r"duration has shape \(3,\)"):
        GroundingTable.from_arrays(**kw | {"duration": [1.0, 2.0, 3.0]})


def test_partly_outside_windows_are_clipped_and_counted_or_refused_when_strict() -> None:
    kw = _arrays()
    _set(kw, "pred_start", 2, -4.0)
    _truth(kw, 5, 90.0, 104.0)
    with pytest.warns(CoverWarning, match="2 window"):
        t = GroundingTable.from_arrays(**kw)
    assert len(t) == N and t.pred_start[2] == 0.0 and t.truth.row(5) == [[90.0, 100.0]]
    assert sorted((p.path, p.action) for p in t.problems) == [("row 2", "clipped"),
                                                              ("row 5", "clipped")]
    with pytest.raises(InputError, match=r"row 2 \(qid=2\): .*strict mode"):
        GroundingTable.from_arrays(**kw, strict=True)
    kept = GroundingTable.from_arrays(**kw, strict=True, on_error="reject")
    assert kept.qid.tolist() == ["0", "1", "3", "4", "6", "7"]


def test_a_checked_table_is_not_checked_again_and_a_replaced_one_is() -> None:
    t = GroundingTable.from_arrays(**_arrays())
    # "answered": no refusal, every interval inside [0, T] (scoring skips those tests)
    assert t.checked == {"rows", "unique", "durations", "answered"}
    assert t.take(t.pred_start > 10).checked == t.checked
    assert "unique" not in t.take([0, 0]).checked  # a repeated row is a repeated qid
    bad = replace(t, pred_end=t.pred_start - 1.0)
    assert bad.checked == frozenset()
    with pytest.raises(InputError, match=r"given to Calibrator\.fit"):
        Calibrator().fit(bad)
    with pytest.raises(InputError, match=r"Calibrator.fit:\n  row 1 \(qid=0\): duplicate qid "
                                         r"\(first seen at row 0\)"):
        Calibrator().fit(replace(t, qid=np.array([0, 0, 2, 3, 4, 5, 6, 7])))


@pytest.mark.parametrize(("pred", "truth", "reason"), [
    ({"pred_relevant_windows": [[30.0, 10.0, 1.0]]}, None, "a predicted window has start > end"),
    ({"pred_relevant_windows": [[1.0, 9.0, 1.0]], "duration": 0}, None,
     "duration must be a finite number > 0"),
    (None, [[30.0, 10.0]], "a true window has start > end"),
])
def test_one_bad_row_gets_the_same_reason_from_the_reader_and_from_arrays(
        tmp_path, pred, truth, reason):
    """A rule the reader and the API share gives the same words (the API adds the
    row index and the field instead of file:line)."""
    if pred is not None:
        path = tmp_path / "p.jsonl"
        path.write_text(json.dumps({"qid": 7, "vid": "v"} | pred) + "\n")
        (got,) = read_predictions(path, on_error="reject").problems
        s, e = pred["pred_relevant_windows"][0][:2]
        arrays = {"pred_start": [s], "pred_end": [e], "duration": pred.get("duration", 60.0)}
    else:
        path = tmp_path / "g.jsonl"
        path.write_text(json.dumps({"qid": 7, "vid": "v", "duration": 60,
                                    "relevant_windows": truth}) + "\n")
        (got,) = read_ground_truth(path, on_error="reject").problems
        arrays = {"duration": 60.0, "truth": ([truth[0][0]], [truth[0][1]])}
    assert got.problem == reason and str(got).startswith(f"{path}:1 (qid=7): ")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (api,) = GroundingTable.from_arrays(qid=[7], **arrays, on_error="reject").problems
    assert api.problem.endswith(reason) and str(api).startswith("row 0 (qid=7): ")


@settings(max_examples=80, deadline=None, derandomize=True, database=None)
@given(st.lists(st.integers(0, 12), max_size=30), st.booleans())
def test_repeats_are_the_rows_after_a_first_occurrence(keys, text):
    k = np.array([f"q{x}" for x in keys]) if text else np.array(keys, dtype=np.int64)
    rows, first = repeats(k)
    seen: dict[object, int] = {}
    want = [(i, seen.setdefault(x, i)) for i, x in enumerate(k.tolist())]
    assert list(zip(rows.tolist(), first.tolist(), strict=True)) == [
        (i, f) for i, f in want if i != f]


@given(st.lists(st.integers(-3, 40), max_size=40), st.integers(1, 5))
def test_increasing_is_the_strict_order_across_block_edges(keys, block):
    """The blocked test of strictly increasing ids (blocks of ``block`` rows
    overlapping by one) is ``all(k[i] < k[i + 1])``, also when the only pair out of
    order straddles two blocks."""
    from unittest import mock

    from cover.data import rules

    k = np.array(keys, dtype=np.int64)
    with mock.patch.object(rules, "BLOCK_ROWS", block):
        got = rules.increasing(k)
    assert got == bool(np.all(k[1:] > k[:-1]))
    edge = np.arange(4 * block + 2, dtype=np.int64)
    edge[block] = edge[block - 1]  # a repeat between the first block's last row and the next
    with mock.patch.object(rules, "BLOCK_ROWS", block):
        assert not rules.increasing(edge)
        assert rules.increasing(np.arange(4 * block + 2))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet=["a", " ", "\t", "\x1c", "\u3000", "\u3001", "é",
                                  "\u2028", "\U0001f600", "\x00", "\ud800", "\udfff"],
                        max_size=4),
                min_size=1, max_size=6))
def test_the_id_rule_on_text_is_the_row_rule(values):
    """Text ids are judged exactly as :func:`id_problem` judges each one: emptiness and
    padding (``str.isspace``) by the first and last characters, an inner NUL and a lone
    surrogate by the code points (numpy drops trailing NULs, as the readers' ids do)."""
    from cover.data.row_finders import id_rows
    from cover.data.rules import id_problem

    raw = np.array(values, dtype=str)
    found = id_rows(raw, "qid")
    got = found[0][0].tolist() if found else []
    assert got == [i for i, v in enumerate(raw.tolist()) if id_problem(v, "qid")]


def test_ids_checked_tables_are_not_judged_again():
    """A table whose ids its maker judged (the certify stage) is marked so: the gate
    skips the id rule for integer or text ids; other values are always judged."""
    from cover.data.validate import IDS, ids_checked, validate_table

    table = GroundingTable.from_arrays(**_arrays())
    text = replace(table, qid=np.array([f"q{i}" for i in range(N)]))
    assert IDS in ids_checked(text).checked and IDS in ids_checked(table).checked
    padded = replace(table, qid=np.array([" q"] + [f"q{i}" for i in range(1, N)]))
    with pytest.raises(InputError, match="qid"):
        validate_table(padded)
    assert len(validate_table(ids_checked(padded))) == N  # judged by its maker: trusted
    mixed = replace(table, qid=np.array([1.5] + list(range(1, N)), dtype=object))
    assert ids_checked(mixed) is mixed


# How one value of row i is broken (or set to an edge it may take); "truth" kinds need truth.
INJECT = {
    "T nan": ("duration", np.nan), "T inf": ("duration", np.inf), "T 0": ("duration", 0.0),
    "T negative": ("duration", -5.0), "T tiny": ("duration", 1e-9),
    "ps nan": ("pred_start", np.nan), "pe nan": ("pred_end", np.nan),
    "ps inf": ("pred_start", np.inf), "pe -inf": ("pred_end", -np.inf),
    "ps negative": ("pred_start", -3.0), "ps 0": ("pred_start", 0.0),
    "pe past T": ("pred_end", 1e3), "ps past T": ("pred_start", 1e3),
    "pe 0": ("pred_end", 0.0), "pe = T": ("pred_end", "T"), "ps = pe": ("pred_start", "pe"),
    "ts nan": ("truth starts", np.nan), "te inf": ("truth ends", np.inf),
    "ts negative": ("truth starts", -1.0), "te past T": ("truth ends", 1e3),
    "ts past T": ("truth starts", 1e3), "te 0": ("truth ends", 0.0),
    "te = T": ("truth ends", "T"), "ts = te": ("truth starts", "te"),
    "qid repeated": ("qid", "repeat"),
}


def _outcome(kw: dict[str, object], fast: bool) -> tuple[object, ...]:
    """What from_arrays gives for ``kw`` (the table's columns, problems, checks and
    warnings, or the error), with the plain-table fast path on or forced off."""
    from contextlib import nullcontext
    from unittest import mock

    from cover.data.table import ANSWERED, raw_ids

    off = mock.patch("cover.data.validate.plainly_valid", lambda table: False)
    with warnings.catch_warnings(record=True) as seen, (nullcontext() if fast else off):
        warnings.simplefilter("always")
        try:
            t = GroundingTable.from_arrays(**kw)  # type: ignore[arg-type]
        except InputError as exc:
            return ("error", str(exc))
    tr = t.truth
    columns = [raw_ids(t), t.duration, t.pred_start, t.pred_end]
    columns += [] if tr is None else [tr.starts, tr.ends, tr.offsets]
    return ("table", [(c.dtype.str, c.tobytes()) for c in columns], t.problems,  # NaN == NaN
            t.checked - {ANSWERED}, [str(w.message) for w in seen])


@settings(max_examples=150, deadline=None, derandomize=True, database=None)
@given(n=st.integers(1, 12), seed=st.integers(0, 2**16),
       hits=st.lists(st.tuples(st.sampled_from(sorted(INJECT)), st.integers(0, 11)),
                     max_size=3),
       with_truth=st.booleans(), on_error=st.sampled_from(["raise", "reject"]),
       strict=st.booleans())
def test_the_plain_fast_path_and_the_rule_by_rule_check_agree(n, seed, hits, with_truth,
                                                              on_error, strict):
    """``from_arrays`` proves a clean table with a few whole-column passes
    (:func:`cover.data.row_finders.plainly_valid`) and checks any other rule by rule:
    on random rows with NaN, inf, zero or negative durations, reversed windows, windows
    partly or wholly outside ``[0, T]`` and repeated qids injected, both give the same
    table, problems, checks and warnings, or the same error."""
    rng = np.random.default_rng(seed)
    t = rng.choice([60.0, 150.0], n)
    ps = rng.uniform(0, 30, n)
    kw: dict[str, object] = {"qid": np.arange(n) * 3, "duration": t, "pred_start": ps,
                             "pred_end": ps + rng.uniform(0, 25, n), "on_error": on_error,
                             "strict": strict}
    ts = rng.uniform(0, 30, n)
    cols = {"truth starts": ts, "truth ends": ts + rng.uniform(0, 25, n)}
    for kind, i in hits:
        key, value = INJECT[kind]
        i %= n
        if key.startswith("truth") and not with_truth:
            continue
        a = cols[key] if key in cols else np.array(kw[key])
        if value == "repeat":
            a[i] = a[(i + 1) % n]
        elif isinstance(value, str):  # an edge: equal to another column of the row
            other = {"T": kw["duration"], "pe": kw["pred_end"], "te": cols["truth ends"]}
            a[i] = np.asarray(other[value])[i]
        else:
            a[i] = value
        if key in kw:
            kw[key] = a
    if with_truth:
        kw["truth"] = (cols["truth starts"], cols["truth ends"])
    from unittest import mock

    slow = _outcome(kw, fast=False)
    assert _outcome(kw, fast=True) == slow
    with mock.patch("cover.data.row_finders.BLOCK_ROWS", 5):  # blocks ending mid-table
        assert _outcome(kw, fast=True) == slow


@settings(max_examples=40, deadline=None, derandomize=True, database=None)
@given(n=st.integers(1, 40), seed=st.integers(0, 2**16), family=st.sampled_from(["norm", "sec"]),
       outside=st.booleans())
def test_the_callers_arrays_are_kept_as_given_and_never_written(n, seed, family, outside):
    """``from_arrays``, ``fit`` and ``certify`` read the caller's arrays without copying
    them (1-D, float64 columns, integer qids: the table's columns are those very arrays)
    and never write to them: every array is read-only here, so a write anywhere would
    raise. A window reaching outside ``[0, T]`` is clipped into new arrays."""
    rng = np.random.default_rng(seed)
    t = rng.choice([60.0, 150.0], n)
    ps = rng.uniform(0, 30, n)
    pe = ps + rng.uniform(0, 25, n)
    ts = rng.uniform(0, 30, n)
    te = ts + rng.uniform(0, 25, n)
    if outside:
        pe[0], ts[-1] = t[0] + 5.0, -1.0
    ids = np.arange(n) * 2
    cols = (t, ps, pe, ts, te, ids)
    before = [c.copy() for c in cols]
    for c in cols:
        c.flags.writeable = False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CoverWarning)
        cal = GroundingTable.from_arrays(qid=ids, duration=t, pred_start=ps, pred_end=pe,
                                         truth=(ts, te))
        test = GroundingTable.from_arrays(qid=ids + 1, duration=t, pred_start=ps, pred_end=pe)
        Calibrator(score=family, alpha=0.5).fit(cal).certify(test)
    assert all(np.array_equal(c, b) for c, b in zip(cols, before, strict=True))
    if not outside:
        from cover.data.table import raw_ids

        assert raw_ids(cal) is ids and cal.pred_start is ps and cal.pred_end is pe
        assert cal.truth is not None and cal.truth.starts is ts and cal.truth.ends is te
        assert np.shares_memory(cal.duration, t) and test.pred_start is ps


# qid given -> the row flagged (None: the whole column refused) and the words shown
BAD_IDS = {
    "a list among object ids": (np.array(["a", [1], "c"], dtype=object), 1,
                                "qid must be an integer or a string, got a list"),
    "an object among object ids": (np.array(["a", "b", {"k": 1}], dtype=object), 2,
                                   "qid must be an integer or a string, got an object"),
    "a boolean in a list": ([0, True, 2], 1, "qid must be an integer or a string, got true"),
    "a boolean array": (np.array([True, False, True]), 0,
                        "qid must be an integer or a string, got true"),
    "a column of shape (3, 1)": (np.array([[0], [1], [2]]), None,
                                 "qid has shape (3, 1); expected one id per row"),
    "nested lists": ([[0], [1], [2]], None, "qid has shape (3, 1); expected one id per row"),
}


@pytest.mark.parametrize("case", sorted(BAD_IDS))
@pytest.mark.parametrize("column", ["qid", "vid"])
def test_ids_that_are_no_ids_are_named_as_the_readers_name_them(case, column):
    """A list, an object or a boolean among the ids, or a 2-D column: an InputError
    naming the row and what it holds (a list raised numpy's "setting an array element
    with a sequence"; [0, True, 2] became the ids "0", "1", "2" and a (3, 1) column three
    ids), as the readers refuse such an id; a scalar is still one id."""
    ids, row, why = BAD_IDS[case]
    kw = {"qid": np.arange(3), "duration": 60.0, "pred_start": np.ones(3),
          "pred_end": np.full(3, 5.0), column: ids}
    with pytest.raises(InputError) as err:
        GroundingTable.from_arrays(**kw)
    text = str(err.value).replace("qid", column) if column == "vid" else str(err.value)
    assert why.replace("qid", column) in text, text
    if row is not None:
        assert f"row {row} (qid=" in str(err.value), text
        kept = GroundingTable.from_arrays(**kw, on_error="reject")
        assert len(kept) == 3 - (1 if case != "a boolean array" else 3)
    assert "sequence" not in text and "array(" not in text
    assert GroundingTable.from_arrays(qid=7, duration=60.0, pred_start=1.0,
                                      pred_end=5.0).qid.tolist() == ["7"]


@pytest.mark.parametrize("given", [None, [1, 2], {"qid": [1]}, np.arange(3)])
@pytest.mark.parametrize("entry", ["fit", "certify"])
def test_fit_and_certify_of_no_table_say_what_they_take(given, entry):
    """Not a table: a TypeError naming the method and what it takes (it was an
    AttributeError "'list' object has no attribute 'checked'" from inside)."""
    cal = Calibrator(score="norm", alpha=0.2)
    if entry == "certify":
        cal.fit(GroundingTable.from_arrays(**_arrays()))
    with pytest.raises(TypeError) as err:
        cal.fit(given) if entry == "fit" else cal.certify(given)
    assert str(err.value) == (
        f"the table given to Calibrator.{entry} must be a GroundingTable "
        "(GroundingTable.from_arrays, cover.load_labelled, cover.read_predictions), got "
        f"{type(given).__name__}")


@pytest.mark.parametrize("reader", ["read_predictions", "read_ground_truth", "load_labelled",
                                    "from_arrays", "read_regions"])
@pytest.mark.parametrize("word", ["skip", "ignore", "Reject", None])
def test_on_error_is_raise_or_reject_at_every_entry(qvh_gt, qdetr_preds, reader, word):
    """Any other word was taken without a message by the readers (and read as
    "reject" wherever they test for "raise"), while from_arrays refused it."""
    import cover

    calls = {"read_predictions": lambda: cover.read_predictions(qdetr_preds, on_error=word),
             "read_ground_truth": lambda: cover.read_ground_truth(qvh_gt, on_error=word),
             "load_labelled": lambda: cover.load_labelled(qdetr_preds, qvh_gt,
                                                          on_error=word),
             "from_arrays": lambda: GroundingTable.from_arrays(**_arrays(), on_error=word),
             "read_regions": lambda: cover.io.read_regions(qdetr_preds, on_error=word)}
    with pytest.raises(ValueError, match=f"on_error must be 'raise' or 'reject', got "
                                         f"{word!r}"):
        calls[reader]()
