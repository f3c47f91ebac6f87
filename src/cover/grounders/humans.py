"""Human annotators as grounders: each re-annotation of a pair scored against the
official ground truth, so a person is one more grounder COVER can calibrate.

* Charades-STA test (Otani et al. 2020): 1000 pairs x 5 AMT responses, joined to
  ``charades_sta_test.txt`` on (video, sentence); qid = 12404 + test line index (the
  Lighthouse / Moment-DETR convention); durations from ``charades.json``.
* ActivityNet Captions val_2 (Otani et al. 2020): 1288 pairs x 5 responses, joined
  to ``val_2.json`` on (``v_`` + video, sentence without punctuation and spaces, the
  rule of the authors' notebook); qid = ``<vid>_<sentence index>``.
* UAG-OOPS: the three Oops! workers and the held-out 4th annotator, each as
  ``[onset, end of clip]``, against the UAG ground truth ``[min of the three onsets,
  end of clip]`` (the version the answer files embed); a 4th-annotator "no failure"
  (-1) is a refusal. Split units are source videos (clip name without its index).

Annotator ``k`` is the k-th response to each pair (not one person across pairs).
The official ground truth comes from :mod:`cover.io.charades_sta` and
:mod:`cover.io.activitynet_captions`; windows past the video's end are clipped to it.
"""

from __future__ import annotations

import string
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cover.data.join import index_of
from cover.data.table import GroundingTable
from cover.errors import InputError
from cover.intervals import Intervals
from cover.io.activitynet_captions import read_activitynet_captions
from cover.io.charades_sta import read_charades_sta
from cover.io.folders import slug
from cover.io.jsonl import object_column
from cover.io.otani import OtaniAnnotations, read_otani
from cover.io.uag_oops import read_oops_onsets, read_uag_ground_truth

CHARADES_QID_BASE = 12404
N_RESPONSES = 5


@dataclass(frozen=True)
class HumanGrounders:
    """The official ground truth of the annotated pairs (``truth``, one row per pair)
    and one labelled prediction table per annotator (same rows, same order)."""

    dataset: str
    truth: GroundingTable
    annotators: dict[str, GroundingTable]


@dataclass(frozen=True)
class _Official:
    key: NDArray[np.str_]
    qid: NDArray[np.str_]
    vid: NDArray[np.str_]
    query: list[str]
    start: NDArray[np.float64]
    end: NDArray[np.float64]
    duration: NDArray[np.float64]


def _queries(table: GroundingTable) -> list[str]:
    return [str(q) for q in table.query.tolist()] if table.query is not None else (
        [""] * len(table))


def _official(table: GroundingTable, keys: list[str]) -> _Official:
    s, e = table.truth_envelope()
    return _Official(key=np.array(keys, dtype=str), qid=table.qid, vid=table.vid,
                     query=_queries(table), start=s, end=e, duration=table.duration)


def _charades_official(data: Path) -> _Official:
    t = read_charades_sta(data / "charades_sta/annotations/charades_sta_test.txt",
                          qid_offset=CHARADES_QID_BASE).table
    return _official(t, [f"{v}\t{q}" for v, q in zip(t.vid.tolist(), _queries(t),
                                                     strict=True)])


_DROP = str.maketrans("", "", string.punctuation + string.whitespace)


def _anet_sentence_key(vid: str, sentence: str) -> str:
    return f"{vid}\t{sentence.translate(_DROP)}"


def _activitynet_official(data: Path) -> _Official:
    t = read_activitynet_captions(data / "activitynet_captions/annotations/val_2.json").table
    return _official(t, [_anet_sentence_key(v, q)
                         for v, q in zip(t.vid.tolist(), _queries(t), strict=True)])


def _from_otani(dataset: str, ann: OtaniAnnotations, official: _Official,
                keys: NDArray[np.str_]) -> HumanGrounders:
    """Join each HIT to one official row by ``keys`` and build the annotator tables."""
    hits, first = np.unique(ann.hit, return_index=True)
    order = np.argsort(first)  # pairs in file order
    hits, first = hits[order], first[order]
    row, found = index_of(official.key, keys[first])
    if not found.all():
        i = int(first[~found][0])
        raise InputError(f"{ann.path[i]}:{int(ann.line[i])} (HIT {ann.hit[i]}): no "
                         f"{dataset} ground-truth row for this video and sentence")
    counts = np.bincount(index_of(hits, ann.hit)[0], minlength=hits.size)
    if (counts != N_RESPONSES).any():
        bad = hits[counts != N_RESPONSES][0]
        raise InputError(f"{dataset}: HIT {bad} has {counts[counts != N_RESPONSES][0]} "
                         f"responses, expected {N_RESPONSES}")
    T = official.duration[row]
    s = np.clip(official.start[row], 0.0, T)
    e = np.clip(official.end[row], 0.0, T)
    truth = _table(official.qid[row], official.vid[row], T, truth=(s, e),
                   query=[official.query[i] for i in row.tolist()], source=dataset)
    pair = index_of(hits, ann.hit)[0]  # pair of every annotation row
    annotators: dict[str, GroundingTable] = {}
    for k in range(N_RESPONSES):
        rows = np.flatnonzero(ann.annotator == k)
        ps = np.full(hits.size, np.nan)
        pe = np.full(hits.size, np.nan)
        ps[pair[rows]] = ann.start_pct[rows] / 100.0 * T[pair[rows]]
        pe[pair[rows]] = ann.end_pct[rows] / 100.0 * T[pair[rows]]
        annotators[f"annotator {k + 1}"] = replace(truth, pred_start=ps, pred_end=pe)
    return HumanGrounders(dataset, truth, annotators)


def _table(qid: NDArray[np.str_], vid: NDArray[np.str_], T: NDArray[np.float64], *,
           truth: tuple[NDArray[np.float64], NDArray[np.float64]], query: list[str],
           source: str) -> GroundingTable:
    t = GroundingTable.from_arrays(qid=qid, vid=vid, duration=T,
                                   truth=Intervals.single(truth[0], truth[1]))
    return replace(t, query=object_column(list(query)), source=source)


def charades_sta_humans(data_dir: str | Path) -> HumanGrounders:
    """Charades-STA test: the 5 responses of Otani et al.'s 1000 pairs."""
    data = Path(data_dir)
    ann = read_otani(data / "charades_sta/otani_reannotation")
    vid = np.char.replace(ann.video_id, ".mp4", "")
    keys = np.array([f"{v}\t{d}" for v, d in zip(vid.tolist(), ann.description.tolist(),
                                                 strict=True)], dtype=str)
    return _from_otani("Charades-STA", ann, _charades_official(data), keys)


def activitynet_humans(data_dir: str | Path) -> HumanGrounders:
    """ActivityNet Captions val_2: the 5 responses of Otani et al.'s 1288 pairs."""
    data = Path(data_dir)
    ann = read_otani(data / "activitynet_captions/otani_reannotation")
    keys = np.array([_anet_sentence_key("v_" + v, d) for v, d in
                     zip(ann.video_id.tolist(), ann.description.tolist(), strict=True)],
                    dtype=str)
    return _from_otani("ActivityNet Captions", ann, _activitynet_official(data), keys)


def uag_oops_humans(data_dir: str | Path) -> HumanGrounders:
    """UAG-OOPS: Oops! workers 1-3 and the held-out 4th annotator as grounders."""
    d = Path(data_dir) / "oops_uag/annotations"
    gt = read_uag_ground_truth(d / "uag_oops_dataset_v1_start_time_fixed.json").table
    gt = replace(gt, source="UAG-OOPS")
    workers = read_oops_onsets(d / "oops_transition_times.json").take_clips(gt.qid)
    held = read_oops_onsets(d / "oops_heldout_transition_times.json").take_clips(gt.qid)
    annotators: dict[str, GroundingTable] = {}
    end = gt.duration
    lengths = workers.onsets.lengths
    for k in range(int(lengths.max(initial=0))):
        onset = np.where(lengths > k, workers.onsets.values[
            np.minimum(workers.onsets.offsets[:-1] + k, workers.onsets.values.size - 1)], np.nan)
        annotators[f"worker {k + 1}"] = replace(gt, pred_start=np.minimum(onset, end),
                                                pred_end=end.copy())
    # one held-out onset lies 1 ms past its clip's end: clipped to it, as COVER clips
    first = np.minimum(held.onsets.values[held.onsets.offsets[:-1]], end)
    annotators["held-out annotator"] = replace(gt, pred_start=first,
                                               pred_end=np.where(np.isnan(first), np.nan, end))
    return HumanGrounders("UAG-OOPS", gt, annotators)


def human_grounders(data_dir: str | Path) -> dict[str, HumanGrounders]:
    """Every human grounder the data holds, by dataset."""
    return {h.dataset: h for h in (charades_sta_humans(data_dir), activitynet_humans(data_dir),
                                   uag_oops_humans(data_dir))}


def prediction_rows(table: GroundingTable) -> list[dict[str, Any]]:
    """Moment-DETR-style prediction rows of a table's top-1 interval (none = refusal)."""
    ok = table.has_interval
    return [{"qid": str(q), "vid": str(v), "duration": float(t),
             "pred_relevant_windows": [[float(s), float(e), 1.0]] if k else []}
            for q, v, t, s, e, k in zip(table.qid, table.vid, table.duration, table.pred_start,
                                        table.pred_end, ok, strict=True)]


def truth_rows(table: GroundingTable) -> list[dict[str, Any]]:
    """QVHighlights-style ground-truth rows (``relevant_windows``) of a labelled table."""
    truth = table.require_truth().to_lists()
    query = table.query if table.query is not None else [None] * len(table)
    return [{"qid": str(q), "vid": str(v), "duration": float(t), "query": qu,
             "relevant_windows": w}
            for q, v, t, qu, w in zip(table.qid, table.vid, table.duration, query, truth,
                                      strict=True)]


def write_human_grounders(data_dir: str | Path, out_dir: str | Path) -> list[Path]:
    """Write each dataset's official ground truth (``gt.jsonl``) and every annotator's
    predictions (``<annotator>.jsonl``) under ``out_dir/<dataset>/``, files every COVER
    command reads. Returns the paths written."""
    from cover.io.jsonl import write_jsonl

    written: list[Path] = []
    for h in human_grounders(data_dir).values():
        folder = Path(out_dir) / slug(h.dataset)
        folder.mkdir(parents=True, exist_ok=True)
        write_jsonl(folder / "gt.jsonl", truth_rows(h.truth))
        written.append(folder / "gt.jsonl")
        for name, table in h.annotators.items():
            path = folder / f"{slug(name)}.jsonl"
            write_jsonl(path, prediction_rows(table))
            written.append(path)
    return written

