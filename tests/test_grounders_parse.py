"""The answer parser: notations, structures, classes, fuzz and round trips."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cover.grounders.parse import (
    STATUSES,
    answers_to_predictions,
    format_time,
    parse_answer,
    parse_answers,
)

CASES = [
    # (answer, kwargs, status, intervals)
    ("The given query happens in 0 - 10 seconds.", {}, "ok", [(0, 10)]),
    ("The start time is 00:00:00 and the end time is 00:00:04.", {}, "ok", [(0, 4)]),
    ("the start time of the query is approximately 0:00 - 0:03 and the end time is "
     "approximately 0:04 - 0:06.", {}, "ok", [(1.5, 5)]),
    ("start_time: 1.126568, end_time: 2.125", {}, "ok", [(1.126568, 2.125)]),
    ('Here it is:\n{\n"start_time": 2.0s,\n"end_time": 3.0s\n}\nAt 5.0s a man ...', {}, "ok",
     [(2, 3)]),
    ('{"start": 00:00:00, "end": 00:00:30}', {}, "ok", [(0, 30)]),
    ("Start Time: 00:01:02\nEnd Time: 00:01:10.5", {}, "ok", [(62, 70.5)]),
    ("<answer>12.5 to 20</answer>", {}, "ok", [(12.5, 20)]),
    ("From <time>3</time> until <time>9.5</time>.", {}, "ok", [(3, 9.5)]),
    ("It happens between 3 and 7 seconds.", {}, "ok", [(3, 7)]),
    ("from 1:05 to 1:20", {}, "ok", [(65, 80)]),
    ("[0.0, 18.0]", {}, "ok", [(0, 18)]),
    ("2 to 3 minutes", {}, "ok", [(120, 180)]),
    ("It starts at 4.0s and ends at 4.2s.", {}, "ok", [(4, 4.2)]),
    ("The start and end times are 2.0s and 5.0s respectively.", {}, "ok", [(2, 5)]),
    ("It occurs at 0:10-0:15 and again at 0:40-0:45.", {}, "ok", [(10, 15), (40, 45)]),
    ("from 20% to 40%", {"duration": 60}, "ok", [(12, 24)]),
    ("20-40% of the video", {"duration": 50}, "ok", [(10, 20)]),
    ("the first half of the video", {"duration": 60}, "ok", [(0, 30)]),
    ("the last quarter", {"duration": 40}, "ok", [(30, 40)]),
    ("from 0:05 to the end of the video", {"duration": 60}, "ok", [(5, 60)]),
    ("frames 10 to 40", {"fps": 2}, "ok", [(5, 20)]),
    ("from frame 10 to frame 40", {"n_frames": 100, "duration": 50}, "ok", [(5, 20)]),
    ("From 05 to 45, the man jumps.", {"duration": 60, "bare": "bins"}, "ok", [(3, 27)]),
    ("The start time is 00:00:00 and the end time is 00:00:00.", {}, "zero_length", [(0, 0)]),
    ("Start time: 4.0s\nEnd time: 3.0s", {}, "ok", [(3, 4)]),
    ("the start time is 0:07 and the end time is 0:13.", {"duration": 6.5}, "out_of_range",
     [(7, 13)]),
    ("the start time is approximately 0:23 seconds into the video. The end time is not "
     "explicitly shown.", {}, "start_only", []),
    ("I'm sorry, but I cannot provide the start and end times.", {}, "refusal", []),
    ("I apologize, but I cannot help with that request.", {}, "refusal", []),
    ("The start and end times of the query are not provided in the video.", {}, "refusal", []),
    ('{"start_time": null, "end_time": null}', {}, "refusal", []),
    ('The start and end timestamps for the query "a man jumps 2 times" are in JSON format.',
     {}, "failure", []),
    ("The end time is 10:20.", {}, "failure", []),
    ("at 2.0s a man walks; at 5.0s he falls; at 7s he stands", {}, "failure", []),
    ("", {}, "failure", []),
    ("50%", {"duration": 10}, "start_only", []),
    ("50%", {}, "failure", []),
    ("from 20% to 40%", {}, "failure", []),
    ("frames 10 to 40", {}, "failure", []),
]


@pytest.mark.parametrize(("text", "kw", "status", "intervals"), CASES)
def test_cases(text: str, kw: dict[str, float], status: str, intervals: list[tuple[float, float]]
               ) -> None:
    got = parse_answer(text, **kw)  # type: ignore[arg-type]
    assert got.status == status, got
    assert np.allclose(np.array(got.intervals, dtype=float).reshape(-1, 2),
                       np.array(intervals, dtype=float).reshape(-1, 2)), got
    assert got.reason


@pytest.mark.parametrize(("text", "what"), [
    ("99:99", "impossible clock time 99:99: its seconds (99) must be below 60"),
    ("from 00:75 to 01:10", "impossible clock time 00:75: its seconds (75) must be below 60"),
    ("00:61:61 - 00:62:00", "impossible clock time 00:61:61"),
    ("00:61:00 - 00:62:00", "impossible clock time 00:61:00: its minutes (61) must be below 60"),
    ("The start time is 0:05 and the end time is 0:60.", "impossible clock time 0:60"),
    # one impossible time makes the whole answer untrusted, even next to a good range
    ("0:05 - 0:09, or maybe at 0:99", "impossible clock time 0:99"),
])
def test_impossible_clock_times_fail_with_the_reason(text: str, what: str) -> None:
    got = parse_answer(text, duration=4000)
    assert got.status == "failure" and got.intervals == () and what in got.reason, got


@pytest.mark.parametrize(("text", "value"), [
    ("from -5 to 10 seconds", "-5"),
    ("between -2.5 and 4 s", "-2.5"),
    ('{"start": -1, "end": -1}', "-1"),
    ("start: 3, end: -2", "-2"),
    ("[-5, 10]", "-5"),
    ("\u22123 to 4 s", "-3"),
    ("It starts at -4 s.", "-4"),
    ("-0:05 - 0:09", "-5"),
])
def test_a_minus_sign_is_never_dropped(text: str, value: str) -> None:
    got = parse_answer(text, duration=60)
    assert got.status == "failure" and got.intervals == (), got
    assert f"a negative time ({value} s)" in got.reason


@pytest.mark.parametrize(("text", "intervals"), [
    ("0-10", [(0, 10)]),  # a dash after a time is a range, not a sign
    ("0 -10 seconds", [(0, 10)]),
    ("20%-40%", [(12, 24)]),
    ("75:30 to 76:00", [(4530, 4560)]),  # minutes >= 60 in mm:ss: a long video's time
    ("The temperature is -5 degrees. The moment is 0:05 - 0:09.", [(5, 9)]),
    ("Qwen-7 says 1 - 2 s", [(1, 2)]),
])
def test_dashes_that_are_not_signs(text: str, intervals: list[tuple[float, float]]) -> None:
    got = parse_answer(text, duration=60 if "%" in text else 6000)
    assert got.status == "ok" and got.intervals == tuple(
        (float(a), float(b)) for a, b in intervals), got


def test_start_only_keeps_start_and_reasons() -> None:
    got = parse_answer("The query starts around 6.0s; the end is not mentioned.")
    assert got.status == "start_only" and got.start == 6.0 and not got.answered
    assert "no end" in got.reason


def test_notation_names() -> None:
    assert parse_answer("0:00:05 to 0:00:09").notation == "hh:mm:ss"
    assert parse_answer("0:05 - 0:09").notation == "mm:ss"
    assert parse_answer("5s - 9s").notation == "seconds"
    assert parse_answer("from 0:05 to the end", duration=9).notation == "mm:ss+relative"


def test_echo_of_prompt_example() -> None:
    ex = '{"start": 00:00:00, "end": 00:00:30}'
    assert parse_answer(ex, prompt_examples=[ex]).status == "echo"
    assert parse_answer(f"Sure! {ex}", prompt_examples=[ex]).status == "echo"
    assert parse_answer(ex, prompt_examples=[f"Answer like {ex}"]).status == "echo"
    # different times: a real answer, not an echo
    assert parse_answer('{"start": 00:00:02, "end": 00:00:07}',
                        prompt_examples=[ex]).status == "ok"
    # a time-free template repeated verbatim
    tpl = "The given query happens in X - Y seconds."
    assert parse_answer(tpl.upper(), prompt_examples=[tpl]).status == "echo"
    assert parse_answer(ex).status == "ok"  # echo detection is opt-in


def test_quoted_query_numbers_are_not_times() -> None:
    got = parse_answer('The start time of the query "a man jumps 3 times over 2 chairs" is '
                       'around 0:30 seconds and the end time is around 0:35 seconds.')
    assert got.status == "ok" and got.intervals == ((30.0, 35.0),)


# ---- fuzz: never an exception -------------------------------------------------------
_pieces = st.sampled_from(["start", "end", ":", "-", " to ", "between", " and ", "{", "}",
                           '"', "<answer>", "</answer>", "%", "frame", "0:05", "00:00:03",
                           "12.5", "s", "sorry", "null", "the end of the video", ",", "[",
                           "]", "\n", "first half", "min", "1e309", "９", "٣"])


@settings(max_examples=300, deadline=None)
@given(text=st.one_of(st.text(max_size=300), st.lists(_pieces, max_size=40).map("".join)),
       duration=st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True)),
       fps=st.one_of(st.none(), st.floats(min_value=-5, max_value=120)),
       n_frames=st.one_of(st.none(), st.integers(-3, 10_000)),
       bare=st.sampled_from(["seconds", "percent", "bins", "frames"]))
def test_fuzz_any_text(text: str, duration: float | None, fps: float | None,
                       n_frames: int | None, bare: str) -> None:
    got = parse_answer(text, duration=duration, fps=fps, n_frames=n_frames,
                       prompt_examples=[text[:20]], bare=bare)  # type: ignore[arg-type]
    assert got.status in STATUSES and isinstance(got.reason, str) and got.reason
    for s, e in got.intervals:
        assert math.isfinite(s) and math.isfinite(e) and s <= e
    assert got.answered == (got.status in ("ok", "zero_length"))


@settings(max_examples=150, deadline=None)
@given(data=st.binary(max_size=300))
def test_fuzz_any_bytes(data: bytes) -> None:
    texts = [data.decode("utf-8", errors=e) for e in ("replace", "surrogateescape", "ignore")]
    texts += [data.decode("latin-1"), data.decode("utf-16", errors="replace")]
    for text in texts:
        assert parse_answer(text, duration=30.0).status in STATUSES


def test_an_echoed_reversed_range_keeps_its_bounds_in_order() -> None:
    # Found by the fuzz test: the prompt's own example "1-0", echoed back.
    got = parse_answer("1-0", prompt_examples=["1-0"])
    assert got.status == "echo" and got.intervals == ((0.0, 1.0),)


# ---- round trip: a formatted interval parses back to itself ------------------------
TEMPLATES = [
    "{s} - {e}", "from {s} to {e}", "The moment happens between {s} and {e}.",
    "{s} until {e}", '{{"start": {s}, "end": {e}}}', '{{"start_time": "{s}", "end_time": "{e}"}}',
    "Start time: {s}\nEnd time: {e}", "The start time is {s} and the end time is {e}.",
    "<answer>{s} to {e}</answer>", "[{s}, {e}]",
]


@settings(max_examples=300, deadline=None)
@given(a=st.floats(0, 3000), length=st.floats(1.0, 600), notation=st.sampled_from(
    ["seconds", "s", "mm:ss", "hh:mm:ss", "percent", "frames", "bins"]),
    template=st.sampled_from(TEMPLATES))
def test_round_trip(a: float, length: float, notation: str, template: str) -> None:
    fps = 10.0
    b = a + length
    duration = b + 5.0
    s = format_time(a, notation, duration=duration, fps=fps)  # type: ignore[arg-type]
    e = format_time(b, notation, duration=duration, fps=fps)  # type: ignore[arg-type]
    text = template.format(s=s, e=e)
    got = parse_answer(text, duration=duration, fps=fps,
                       bare="bins" if notation == "bins" else "seconds")
    tol = {"frames": 0.5 / fps, "percent": 1e-3 * duration / 100,
           "bins": 1e-3 * duration / 100}.get(notation, 1e-3)
    assert got.status == "ok", (text, got)
    assert len(got.intervals) == 1, (text, got)
    (gs, ge), = got.intervals
    assert abs(gs - a) <= tol + 1e-9 and abs(ge - b) <= tol + 1e-9, (text, got)


@settings(max_examples=100, deadline=None)
@given(a=st.floats(1.0, 3000), b=st.floats(0, 3000), notation=st.sampled_from(
    ["seconds", "s", "mm:ss", "hh:mm:ss", "percent", "frames", "bins"]),
    template=st.sampled_from(TEMPLATES))
def test_a_negative_start_is_never_read_as_positive(a: float, b: float, notation: str,
                                                    template: str) -> None:
    duration = 4000.0
    s = format_time(-a, notation, duration=duration, fps=10.0)  # type: ignore[arg-type]
    e = format_time(b, notation, duration=duration, fps=10.0)  # type: ignore[arg-type]
    got = parse_answer(template.format(s=s, e=e), duration=duration, fps=10.0,
                       bare="bins" if notation == "bins" else "seconds")
    assert got.status == "failure" and "a negative time" in got.reason, (s, e, got)


# ---- batches and prediction rows ----------------------------------------------------
def test_parse_answers_columns_and_rates() -> None:
    texts = ["0 - 10 seconds", "I'm sorry, I cannot.", "nothing here", "0 - 10 seconds",
             "from 20% to 40%"]
    pc = parse_answers(texts, [20.0, 20.0, 20.0, 20.0, 50.0])
    assert pc.status.tolist() == ["ok", "refusal", "failure", "ok", "ok"]
    assert sum(pc.counts().values()) == len(texts)
    assert math.isclose(sum(pc.rates().values()), 1.0)
    assert pc.intervals.to_lists()[4] == [[10.0, 20.0]]
    ps, pe = pc.top1()
    assert np.isnan(ps[1]) and pe[0] == 10.0
    with pytest.raises(ValueError, match="one per answer"):
        parse_answers(texts, [1.0, 2.0])


def test_predictions_never_drop_a_row() -> None:
    texts = ["0 - 10 seconds", "sorry, I can't", "", "starts at 3 s", "0:05-0:08 and 0:10-0:12"]
    rows, _ = answers_to_predictions([f"q{i}" for i in range(5)], texts, durations=20.0)
    assert [r["qid"] for r in rows] == ["q0", "q1", "q2", "q3", "q4"]
    assert [bool(r["pred_relevant_windows"]) for r in rows] == [True, False, False, False, True]
    assert rows[4]["pred_relevant_windows"] == [[5.0, 8.0, 1.0], [10.0, 12.0, 0.5]]
    assert all(r["answer"] == t for r, t in zip(rows, texts, strict=True))
    rows2, _ = answers_to_predictions([f"q{i}" for i in range(5)], texts, durations=20.0,
                                      start_only="to_end")
    assert rows2[3]["pred_relevant_windows"] == [[3.0, 20.0, 1.0]]


@pytest.mark.parametrize("text", [
    "Start time: 0:00 - 0:10\nEnd time: 0:10 - 0:20",  # was certified as [5, 15]
    "The event happens 00:00:10 to 00:00:20.",
    "10 - 20 seconds",
    "The moment is between 0:10 and 0:20.",
])
def test_an_echo_of_the_examples_times_in_any_notation(text: str) -> None:
    got = parse_answer(text, prompt_examples=["0:10 - 0:20"], duration=30)
    assert got.status == "echo" and "repeats the prompt's example '0:10 - 0:20'" in got.reason


def test_other_times_next_to_the_example_are_not_an_echo() -> None:
    got = parse_answer("0:03 - 0:07", prompt_examples=["0:10 - 0:20"], duration=30)
    assert got.status == "ok" and got.intervals == ((3.0, 7.0),)


def test_echoes_in_the_real_uag_oops_answers(data_dir) -> None:
    # Only the answer whose times are the example's own is flagged (VideoLLaMA2 file).
    import json

    path = data_dir / "oops_uag/hasnat79_uag/video_llama2_pred_uag_oops_dataset_v1_null_fixed.json"
    rows = json.loads(path.read_text()).values()
    echoes = [r["video_llama2_pred"] for r in rows
              if parse_answer(r["video_llama2_pred"], prompt_examples=["0:10 - 0:20"]).status
              == "echo"]
    assert len(echoes) == 1


@pytest.mark.parametrize(("text", "interval"), [
    ("It begins at 0:05 and continues until 0:09.", (5, 9)),  # was start_only
    ("It begins at 5 seconds and lasts until 9 seconds.", (5, 9)),
    ("The man can't stop laughing from 0:03 to 0:08.", (3, 8)),  # was an end-only failure
    ("The dog begins barking at 0:05 and doesn't stop until 0:09.", (5, 9)),
    ("The event occurs from 0:05 to 0:09; the person begins to fall at 0:05.", (5, 9)),
    ("The video begins at 0:00 with a walk; he falls between 0:05 and 0:09.", (5, 9)),
    ("She begins at 0:05 and it does not end until the end of the video.", (5, 30)),
    ("It happens at 0:05 and goes on until 0:09.", (5, 9)),
])
def test_explicit_ranges_win_over_narrative_cue_words(text: str,
                                                       interval: tuple[float, float]) -> None:
    got = parse_answer(text, duration=30)
    assert got.status == "ok" and got.intervals == (tuple(map(float, interval)),), got


@pytest.mark.parametrize(("text", "status"), [
    # a named start and end still win over a later range (the first pair is the answer)
    ("It starts at 0:02 and ends at 0:04. Later, 0:10 - 0:12 shows a replay.", "ok"),
    # "can't stop" names no bound, and two loose times are not guessed into a range
    ("The girl can't stop at 0:04 and she falls at 0:07.", "failure"),
    # a lone start with no range anywhere stays a start
    ("The action begins at 0:05 and the video continues.", "start_only"),
])
def test_cue_words_without_a_range_keep_their_reading(text: str, status: str) -> None:
    got = parse_answer(text, duration=30)
    assert got.status == status, got
    if status == "ok":
        assert got.intervals == ((2.0, 4.0),)
