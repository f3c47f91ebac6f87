"""The registry of file formats COVER reads (``cover formats`` prints it).

Each :class:`Format` has a name, a role (predictions or ground truth), a sniff
function over the file's first row or parsed document, a reader, and one example
row. The formats with their own reader come first, then the named layouts read by the
mapping engine (:mod:`cover.io.layouts`): detection (:func:`cover.io.formats.detect`)
tries them in this order. The column-mapping reader (:data:`COLUMNS_FORMAT`) is
chosen by ``--columns``, never by sniffing.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cover.data.table import DEFAULT_CLIP_SECONDS
from cover.io import (
    activitynet_captions,
    charades_cd,
    charades_rf,
    charades_sta,
    lmms_eval,
    tacos,
    timechat,
    uag_oops,
)
from cover.io.columns import Role
from cover.io.gt_lean import read_ground_truth_lean
from cover.io.jsonl import OnError
from cover.io.jsonl_by_line import read_gt_by_line
from cover.io.layouts import LAYOUTS, Layout
from cover.io.mapping import Mapping
from cover.io.peek import Peek
from cover.io.qvhighlights import Loaded, read_ground_truth, read_predictions


@dataclass
class Options:
    """What a reader may need besides the path."""

    clip: float = DEFAULT_CLIP_SECONDS
    on_error: OnError = "raise"
    durations: str | Path | None = None
    columns: str | dict[str, str] | None = None
    #: False: a reader may drop the parsed rows (the table's ``records``), which the
    #: caller does not need (``cover evaluate``'s ground truth).
    keep_records: bool = True
    #: "proposals": the relevance signal is built from the scored windows
    #: (:mod:`cover.data.relevance`), whatever the file holds; None: the file's own.
    relevance_from: str | None = None


Reader = Callable[[Path, Options, Peek], Loaded]


@dataclass(frozen=True)
class Format:
    """One file format: ``sniff(peek)`` says whether a file is in it."""

    name: str
    role: Role
    title: str
    sniff: Callable[[Peek], bool]
    read: Reader
    example: str
    unit: str = ""
    #: False when the format's qids are positions (line or entry index), not ids the
    #: other file shares: then a join on (vid, query) text is tried.
    native_qids: bool = True
    #: The mapping of a named layout (:mod:`cover.io.layouts`); None for a reader.
    mapping: Mapping | None = None


def _doc(test: Callable[[Any], bool]) -> Callable[[Peek], bool]:
    return lambda p: isinstance(p.doc, dict) and p.first_row is None and test(p.doc)


_CHARADES_LINE = re.compile(rb"^\s*\S+ +\d+(\.\d+)? +\d+(\.\d+)? *##")

FORMATS: tuple[Format, ...] = (
    Format("moment-detr", "predictions",
           "Moment-DETR / Lighthouse / QD-DETR jsonl (QVHighlights, Charades-STA, TACoS, ...)",
           lambda p: p.first_row is not None and "qid" in p.first_row and (
               "pred_relevant_windows" in p.first_row or (
                   "pred_saliency_scores" in p.first_row and not timechat.sniff_vhd(p.first_row))),
           lambda path, o, p: read_predictions(path, clip=o.clip, on_error=o.on_error,
                                               keep_records=o.keep_records),
           '{"qid": 2579, "vid": "NUsG9BgSes0_210.0_360.0", "pred_relevant_windows": '
           '[[0, 70, 0.95]], "pred_saliency_scores": [-0.4, ...]}'),
    Format("timechat-tvg", "predictions",
           "TimeChat / VTG-LLM grounding json: {qid: {timestamp, query, vid}}",
           _doc(timechat.sniff_tvg),
           lambda path, o, p: timechat.read_timechat_tvg(path, clip=o.clip, on_error=o.on_error,
                                                         doc=p.doc),
           '{"1805": {"timestamp": [[20.8, 30.0]], "query": "person laugh ...", '
           '"vid": "JS3TB.mp4"}}', native_qids=False),
    Format("timechat-vhd", "predictions",
           "TimeChat highlight json: [{qid, vid: v_<vid>.mp4, pred_saliency_scores}] "
           "(no windows: SLS only)",
           lambda p: p.first_row is not None and timechat.sniff_vhd(p.first_row),
           lambda path, o, p: timechat.read_timechat_vhd(path, clip=o.clip, on_error=o.on_error),
           '{"qid": 2579, "vid": "v_NUsG9BgSes0_210.0_360.0.mp4", "pred_saliency_scores": '
           '[0.0, 0.65, ...]}'),
    Format("lmms-eval-samples", "predictions",
           "lmms-eval --log_samples of a temporal-grounding task (answer text parsed)",
           lambda p: p.first_row is not None and lmms_eval.sniff_samples(p.first_row),
           lambda path, o, p: lmms_eval.read_lmms_eval_samples(path, clip=o.clip,
                                                               on_error=o.on_error),
           '{"doc_id": 0, "doc": {"video": "3MSZA.mp4", "caption": "person turn a light on.", '
           '"timestamp": [24.3, 30.4]}, "filtered_resps": ["... 24.0 - 30.0 seconds."]}',
           native_qids=False),
    Format("lmms-eval-submission", "predictions",
           "lmms-eval temporal-grounding submission json: {video>>>caption>>>gt: answer}",
           _doc(lmms_eval.sniff_submission),
           lambda path, o, p: lmms_eval.read_lmms_eval_submission(
               path, clip=o.clip, on_error=o.on_error, doc=p.doc),
           '{"3MSZA.mp4>>>person turn a light on.>>>[24.3, 30.4]": "... 24.0 - 30.0 ..."}',
           native_qids=False),
    Format("moment-detr-gt", "ground_truth",
           "QVHighlights / Lighthouse / Moment-DETR ground-truth jsonl (also ActivityNet-CD, "
           "Charades-STA-Len/Mom)",
           lambda p: p.first_row is not None and "relevant_windows" in p.first_row,
           lambda path, o, p: read_ground_truth(path, on_error=o.on_error)
           if o.keep_records else read_ground_truth_lean(path, on_error=o.on_error),
           '{"qid": 12404, "query": "person turn a light on.", "duration": 30.96, '
           '"vid": "3MSZA", "relevant_windows": [[24.3, 30.4]]}',
           unit="source video: `vid` (QVHighlights: the YouTube id of "
                "`<id>_<start>_<end>`)"),
    Format("moment-detr-gt-by-line", "ground_truth",
           "moment-detr-gt whose qids repeat (MomentDiff Charades-STA-Len/Mom): qid = line "
           "index, joined on (vid, query); only by --gt-format",
           lambda p: False,
           lambda path, o, p: read_gt_by_line(path, on_error=o.on_error),
           '{"qid": 0, "query": "person drinking a glass of water.", "duration": 30.62, '
           '"vid": "Y1HGC", "relevant_windows": [[1.7, 12.1]]}',
           unit="source video: `vid`", native_qids=False),
    Format("charades-sta", "ground_truth",
           "Charades-STA text: '<vid> <start> <end>##<sentence>' + charades.json durations",
           lambda p: bool(_CHARADES_LINE.match(p.head)),
           lambda path, o, p: charades_sta.read_charades_sta(path, durations=o.durations,
                                                             on_error=o.on_error),
           "3MSZA 24.3 30.4##person turn a light on.", unit=charades_sta.UNIT,
           native_qids=False),
    Format("timeit-gt", "ground_truth",
           "TimeChat / TimeIT grounding ground truth: {annotations: [{image_id, caption, "
           "timestamp, id}]} + a durations file",
           _doc(timechat.sniff_timeit),
           lambda path, o, p: timechat.read_timeit_gt(path, durations=o.durations,
                                                      on_error=o.on_error, doc=p.doc),
           '{"annotations": [{"image_id": "3MSZA.mp4", "caption": "person turn a light on.", '
           '"timestamp": [24.3, 30.4], "id": 0}]}', unit=charades_sta.UNIT, native_qids=False),
    Format("activitynet-captions", "ground_truth",
           "ActivityNet Captions json: {v_<id>: {duration, timestamps, sentences}}",
           _doc(activitynet_captions.sniff),
           lambda path, o, p: activitynet_captions.read_activitynet_captions(
               path, on_error=o.on_error, doc=p.doc),
           '{"v_uqiMw7tQ1Cc": {"duration": 55.15, "timestamps": [[0.28, 55.15]], '
           '"sentences": ["A weight lifting tutorial is given."]}}',
           unit=activitynet_captions.UNIT, native_qids=False),
    Format("tacos", "ground_truth",
           "TACoS json (2D-TAN split): {<video>.avi: {timestamps (frames), sentences, fps, "
           "num_frames}}",
           _doc(tacos.sniff),
           lambda path, o, p: tacos.read_tacos(path, on_error=o.on_error, doc=p.doc),
           '{"s30-d52.avi": {"timestamps": [[141, 354]], "sentences": ["She took out kiwi"], '
           '"fps": 29.4, "num_frames": 7346}}', unit=tacos.UNIT, native_qids=False),
    Format("charades-cd", "ground_truth",
           "Charades-CD json: {vid: {timestamps, sentences, video_duration, ...}}",
           _doc(charades_cd.sniff),
           lambda path, o, p: charades_cd.read_charades_cd(path, on_error=o.on_error, doc=p.doc),
           '{"WXXYY": {"timestamps": [[28.0, 36.0]], "sentences": ["person sits on the floor"],'
           ' "video_duration": 35.4, "framestamps": [[448, 576]], "decode_fps": 16.0}}',
           unit=charades_cd.UNIT, native_qids=False),
    Format("uag-oops", "ground_truth",
           "UAG-OOPS json (either version): {clip: {video_path, start_time, end_time, "
           "description}}; window [failure onset, end of clip]",
           _doc(uag_oops.sniff),
           lambda path, o, p: uag_oops.read_uag_ground_truth(path, on_error=o.on_error),
           '{"34 Funny Kid Nominees - FailArmy Hall Of Fame (May 2017)0": {"video_path": '
           '".../0.mp4", "start_time": 3.03, "end_time": 3.75, "description": "A guy jumps '
           'onto a bed ..."}}', unit=uag_oops.UNIT),
    Format("charades-rf", "ground_truth",
           "Charades-RF json: {vid: {duration, sts: [{sentence, id, timestamp, no_answer}]}}",
           _doc(charades_rf.sniff),
           lambda path, o, p: charades_rf.read_charades_rf(path, on_error=o.on_error, doc=p.doc),
           '{"3MSZA": {"duration": 30.96, "sts": [{"sentence": "person turn the light switch '
           'on.", "id": "3MSZA-0000", "timestamp": [24.3, 30.4], "no_answer": false}]}}',
           unit=charades_rf.UNIT, native_qids=False),
)



def _layout(x: Layout) -> Format:
    """A named layout as a format: detected by its shape, read by the mapping engine."""
    from cover.io import mapping_read

    m = x.parsed
    return Format(x.name, "ground_truth" if x.role == "ground_truth" else "predictions",
                  x.title, lambda p: isinstance(p.doc, (dict, list)) and
                  mapping_read.sniff(m, p.doc),
                  lambda path, o, p: mapping_read.read_mapped(
                      path, m, role=_role(x.role), clip=o.clip, on_error=o.on_error, doc=p.doc,
                      relevance_from=o.relevance_from),
                  x.example, native_qids=m.join == "qid", mapping=m)


def _role(role: str) -> Role:
    return "ground_truth" if role == "ground_truth" else "predictions"


# The named layouts come after the formats with readers: those are detected first.
FORMATS = FORMATS + tuple(_layout(x) for x in LAYOUTS)

#: The column-mapping reader, chosen by ``--columns`` (never by sniffing).
COLUMNS_FORMAT = "columns"
COLUMNS_EXAMPLE = ("--columns qid=id,vid=video,start=pred.0,end=pred.1  for rows like "
                   '{"id": "q1", "video": "v1", "pred": [3.0, 9.5]}  (jsonl, json, csv, parquet)')


