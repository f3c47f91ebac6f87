"""The text-only CPU grounder: its TF-IDF matches scikit-learn's, it learns what the words
say about position, the model file is JSON that round-trips, and it runs on real data."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cover.calibrate import Calibrator
from cover.cli import main
from cover.data.table import GroundingTable
from cover.errors import InputError
from cover.grounders.blind import BlindGrounder, prediction_rows, targets, tfidf
from cover.grounders.queries import read_queries
from cover.intervals import Intervals
from cover.io import read_predictions, write_jsonl
from cover.metrics import point_iou
from grounding_cases import unchecked_table

WORDS = ["open", "door", "the", "person", "Laptop", "sits", "opens", "a", "x", "éclair",
         "sandwich", "42", "light", "on", "off"]
sentence = st.lists(st.sampled_from(WORDS), max_size=9).map(" ".join) | st.text(max_size=30)


@settings(max_examples=25, deadline=None, derandomize=True)
@given(st.lists(sentence, min_size=3, max_size=30), st.lists(sentence, min_size=1, max_size=8),
       st.integers(1, 3))
def test_tfidf_matches_scikit_learn(corpus, new, n):
    from sklearn.feature_extraction.text import TfidfVectorizer

    vec = TfidfVectorizer(ngram_range=(1, n), sublinear_tf=True)
    try:
        vec.fit(corpus)
    except ValueError:  # empty vocabulary
        return
    mine = tfidf(new, vec.vocabulary_, np.asarray(vec.idf_), n)
    np.testing.assert_allclose(mine.toarray(), vec.transform(new).toarray(), atol=1e-12)


def _toy(n: int = 300, seed: int = 0) -> GroundingTable:
    """Queries saying "early" happen in the first fifth of the video, "late" in the last."""
    rng = np.random.default_rng(seed)
    late = rng.random(n) < 0.5
    t = rng.uniform(20, 200, n)
    s = np.where(late, 0.8, 0.0) * t
    e = np.minimum(s + 0.2 * t, t)  # 0.8 t + 0.2 t may round past t
    noise = rng.choice(["a person", "someone", "the man", "she"], n)
    query = [f"{w} does it {'late' if lt else 'early'}" for w, lt in zip(noise, late,
                                                                          strict=True)]
    table = GroundingTable.from_arrays(qid=np.arange(n), duration=t, truth=(s, e))
    return replace(table, query=np.array(query, dtype=object))


def test_learns_position_from_words_and_relevance_follows():
    train, test = _toy(300, 0), _toy(100, 1)
    model = BlindGrounder(alpha=0.01, bins=10, min_df=1).fit(train)
    pred = model.predict(test, clip=1.0)
    late = np.array(["late" in str(q) for q in test.query])
    centre = (pred.pred_start + pred.pred_end) / 2 / pred.duration
    assert (centre[late] > 0.7).all() and (centre[~late] < 0.3).all()
    assert point_iou(pred).mean() > 0.6
    np.testing.assert_array_equal(pred.relevance.lengths, np.ceil(test.duration / 1.0))
    i = int(np.flatnonzero(late)[0])
    sig = pred.relevance.row(i)
    assert sig[-1] > 0.5 > sig[0]
    # the length prior knows no words: one normalised answer for everyone
    prior = BlindGrounder(prior_only=True).fit(train).predict(test)
    y = targets(train, 20)
    np.testing.assert_allclose(prior.pred_start / prior.duration, y[:, 0].mean())
    np.testing.assert_allclose(prior.pred_end / prior.duration, y[:, 1].mean())


def test_a_duration_in_the_wrong_unit_is_an_error_naming_the_row():
    """A video of 1e12 s would need a relevance signal of 1e12 clips: an error naming
    the row, not a MemoryError (or, near 1e9 s, the process killed for memory)."""
    test = _toy(3, 1)
    test = replace(test, duration=np.array([30.0, 1e12, 30.0]))
    model = BlindGrounder(alpha=0.01, bins=10, min_df=1).fit(_toy(50, 0))
    with pytest.raises(InputError, match=rf"^<memory> \(qid={test.qid[1]}\): a relevance "
                                         r"signal over its duration of 1e\+12 s \(its ground "
                                         r"truth's\) would need "
                                         r"more than 4,194,304 clips of 1 s"):
        model.predict(test, clip=1.0)


@settings(max_examples=50, deadline=None, derandomize=True)
@given(st.floats(0, 90), st.floats(0, 90), st.floats(1, 100), st.integers(1, 30))
def test_targets_are_the_envelope_and_bin_shares(s, d, t, bins):
    # Truth past T on purpose (targets clamp it): built without from_arrays' checks.
    table = unchecked_table(qid=[0], duration=t, truth=Intervals.from_lists(
        [[[s, s + d], [s, s + d / 2]]]))
    y = targets(table, bins)[0]
    sn, en = min(s / t, 1.0), min((s + d) / t, 1.0)
    np.testing.assert_allclose(y[:2], [sn, en])
    np.testing.assert_allclose(y[2:].sum() / bins, en - sn, atol=1e-9)
    assert (y[2:] >= 0).all() and (y[2:] <= 1 + 1e-12).all()


def test_model_file_round_trips_and_bad_files_are_clear(tmp_path):
    train, test = _toy(200, 0), _toy(50, 1)
    model = BlindGrounder(bins=8, min_df=1).fit(train)
    path = tmp_path / "m.json"
    model.save(path)
    doc = json.loads(path.read_text())
    assert doc["schema"] == "cover.blind_grounder" and len(doc["vocabulary"]) > 0
    back = BlindGrounder.load(path)
    a, b = model.predict(test), back.predict(test)
    np.testing.assert_array_equal(a.pred_start, b.pred_start)
    np.testing.assert_array_equal(a.relevance.values, b.relevance.values)
    doc["coef"] = doc["coef"][:-1]
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError, match=r"malformed|inconsistent"):
        BlindGrounder.load(path)
    path.write_text("{}")
    with pytest.raises(InputError, match="not a COVER blind-grounder"):
        BlindGrounder.load(path)
    with pytest.raises(RuntimeError, match="not fitted"):
        BlindGrounder().predict(test)


def _vocabulary_by_rule(texts: list[str], n: int, min_df: int, limit: int) -> list[str]:
    """The rule written out: terms in at least ``min_df`` texts, the ``limit`` with the
    most occurrences, ties broken by the term; listed in term order."""
    from collections import Counter

    from cover.grounders.blind import ngrams

    grams = [ngrams(t, n) for t in texts]
    df = Counter(g for gs in grams for g in set(gs))
    tf = Counter(g for gs in grams for g in gs)
    ranked = sorted((g for g in tf if df[g] >= min_df), key=lambda g: (-tf[g], g))
    return sorted(ranked[:limit])


def test_vocabulary_cut_breaks_ties_by_term_on_real_queries(data_dir: Path):
    # Thousands of terms tie at the cut on a real training file; the kept ones must not
    # depend on the order of the rows, nor on the machine's sort kernel.
    table = read_queries(data_dir / "lighthouse" / "charades_train_release.jsonl").table
    texts = [str(q) for q in table.query]
    model = BlindGrounder(max_features=700).fit(table)
    assert model.vocabulary_ == _vocabulary_by_rule(texts, 2, 2, 700)
    order = np.random.default_rng(3).permutation(len(table))
    again = BlindGrounder(max_features=700).fit(table.take(order))
    assert again.vocabulary_ == model.vocabulary_
    np.testing.assert_allclose(again.idf_, model.idf_, rtol=1e-12)


def test_training_queries_from_activitynet_train_json(data_dir: Path):
    loaded = read_queries(data_dir / "activitynet_captions" / "annotations" / "train.json",
                          on_error="reject")
    t = loaded.table
    rejected = [p for p in loaded.problems if p.action == "rejected"]
    assert len(t) + len(rejected) == 37421 and len(rejected) == 2
    assert t.qid[0] == "v_QOlSCBRmfWY_0" and t.query is not None
    assert str(t.query[1]).strip() == ("The girl dances around the room while the camera "
                                       "captures her movements.")
    y = targets(t, 10)  # windows a hair past T are clipped to the video
    assert (y[:, 0] <= y[:, 1]).all() and (y >= 0).all() and (y[:, :2] <= 1).all()


def test_train_predict_commands_on_real_charades(tmp_path: Path, data_dir: Path, capsys):
    lh = data_dir / "lighthouse"
    train_rows = (lh / "charades_train_release.jsonl").read_text().splitlines()[:4000]
    test_rows = (lh / "charades_test_release.jsonl").read_text().splitlines()[:1000]
    (tmp_path / "train.jsonl").write_text("\n".join(train_rows) + "\n")
    (tmp_path / "test.jsonl").write_text("\n".join(test_rows) + "\n")
    ious = {}
    for kind in ("blind", "prior"):
        model, out = tmp_path / f"{kind}.json", tmp_path / f"{kind}.jsonl"
        extra = ["--prior-only"] if kind == "prior" else []
        assert main(["grounder", "train", "--train", str(tmp_path / "train.jsonl"), "-o",
                     str(model), *extra]) == 0
        assert main(["grounder", "predict", "--model", str(model), "--queries",
                     str(tmp_path / "test.jsonl"), "-o", str(out)]) == 0
        preds = read_predictions(out).table
        gt = read_queries(tmp_path / "test.jsonl").table
        assert len(preds) == 1000
        assert (preds.relevance.lengths == np.ceil(gt.duration / 2.0 - 1e-9)).all()
        from cover.data.join import attach_truth
        joined, problems = attach_truth(preds, gt)
        assert len(joined) == 1000 and not [p for p in problems if p.action == "rejected"]
        ious[kind] = point_iou(joined).mean()
        if kind == "blind":  # every family runs on it, SLS included
            for fam in ("norm", "sec", "sls"):
                cal = Calibrator(score=fam, alpha=0.1).fit(joined)
                assert np.isfinite(cal.threshold_)
    # the words carry position information beyond the length prior
    assert ious["blind"] > ious["prior"] + 0.03
    assert main(["grounder", "train", "--train", str(tmp_path / "nope.jsonl"), "-o",
                 str(tmp_path / "x.json")]) == 2
    bad = tmp_path / "q.jsonl"
    write_jsonl(bad, [{"qid": 1, "vid": "v", "query": "hi"}])
    assert main(["grounder", "predict", "--model", str(tmp_path / "blind.json"), "--queries",
                 str(bad), "-o", str(tmp_path / "y.jsonl")]) == 2
    assert "duration" in capsys.readouterr().err


def test_prediction_rows_keep_original_qids():
    train = _toy(100, 0)
    pred = BlindGrounder(prior_only=True).fit(train).predict(train)
    rows = prediction_rows(pred)
    assert rows[0]["qid"] == "0" and len(rows[0]["pred_relevant_windows"]) == 1
