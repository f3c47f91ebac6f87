"""Named layouts: file formats that are a mapping (:mod:`cover.io.mapping`), not code.

Each entry is data: a name, a title, the mapping (the same ``FIELD=SOURCE`` language
``--columns`` reads), and one example. :mod:`cover.io.formats` registers each as a
format detected by its shape (:func:`cover.io.mapping_read.sniff`: the first record
gives every field) after the formats with their own readers. A new layout is a new
entry here, no new reader.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from cover.io.mapping import Mapping, parse_mapping


@dataclass(frozen=True)
class Layout:
    """One named layout of prediction (or ground-truth) files."""

    name: str
    title: str
    mapping: dict[str, str]
    example: str
    role: str = "predictions"

    @cached_property
    def parsed(self) -> Mapping:
        return parse_mapping(self.mapping)


LAYOUTS: tuple[Layout, ...] = (
    Layout("distime-by-video", "DisTime json keyed by video, then by query text: "
           "{vid: {query: {start, end, conf}}}; joined on (vid, query text)",
           {"rows": "*.*", "vid": "$key1", "query": "$key2", "start": "start", "end": "end"},
           '{"3MSZA": {"person turn a light on.": {"start": 14.96, "end": 29.79, "conf": 1}}}'),
    Layout("distime-results", "DisTime json: {results: {<vid>-<i>: {timestamp, query, ...}}}, "
           "<i> = the i-th query of the video in the ground truth; joined by that order",
           {"rows": "results.*", "vid": "$key|<vid>-<order>", "query": "query",
            "windows": "timestamp"},
           '{"results": {"v_uqiMw7tQ1Cc-0": {"video_id": "v_uqiMw7tQ1Cc", "anno_id": 0, '
           '"timestamp": [[0.02, 6.83]], "query": "Two men ..."}}}'),
    Layout("distime-list", "DisTime json list: [{qid: QVHighlight_<qid>, query, prediction: "
           "\"[[s, e]]\" (a string)}]",
           {"rows": "*", "qid": "qid|QVHighlight_<qid>", "query": "query",
            "windows": "prediction|json"},
           '[{"qid": "QVHighlight_2579", "query": "A girl and her mother ...", '
           '"prediction": "[[82.04, 145.33]]", "target": "[[82, 150]]", "duration": 150.02}]'),
    Layout("shuffling-videos", "Shuffling-Videos json: {results: {vid: [{sentence, timestamp, "
           "score, video_duration}]}}, each video's queries in ground-truth order",
           {"rows": "results.*.*", "vid": "$key1", "order": "$key2", "query": "sentence",
            "windows": "timestamp", "scores": "score", "duration": "video_duration"},
           '{"version": "V0", "results": {"v_mHVmDOxtVt0": [{"sentence": "we see the black '
           'title screen", "timestamp": [0.0, 2.0], "gt_timestamp": [0.0, 3.16], "score": 1.76, '
           '"video_duration": 126.6}]}}'),
    Layout("tgn-proposals", "TGN proposals json: {results: {<vid>-<k>: [{timestamp, score}, "
           "...]}}, <k> = the k-th query of the video; relevance from the proposals (SLS)",
           {"rows": "results.*", "vid": "$key|<vid>-<order>", "windows": "*.timestamp",
            "scores": "*.score", "relevance": "proposals"},
           '{"results": {"JVLAZ-1": [{"timestamp": [0.5, 5.5], "score": 0.49}, '
           '{"timestamp": [11.5, 23.5], "score": 0.44}]}}'),
    Layout("predictions-wrapper", "a run's json: {config, predictions: {qid: [s, e]}} "
           "(e.g. a sliding-window baseline)",
           {"rows": "predictions.*", "qid": "$key", "windows": "$value"},
           '{"config": {"window": 10}, "predictions": {"2579": [80.0, 140.0]}}'),
)


def by_name(name: str) -> Layout | None:
    return next((x for x in LAYOUTS if x.name == name), None)
