"""Free-text grounder answers -> intervals in seconds, or a classified non-answer.

Video-LLMs answer in prose: ``mm:ss`` and ``hh:mm:ss`` ranges, JSON(-like) blocks,
start-only answers, copies of the prompt's example, refusals. :func:`parse_answer`
reads one answer; :func:`parse_answers` many (as columns, with rates per class);
:func:`answers_to_predictions` turns them into prediction rows any COVER command
reads, unreadable answers being refusals (whole-video regions), never dropped.

Modules: :mod:`.notation` (time mentions), :mod:`.reading` (a mention as seconds),
:mod:`.stages` and :mod:`.extract` (the reading stages),
:mod:`.answer` (classes), :mod:`.batch` (columns and prediction rows),
:mod:`.files` (answer files, per-file summaries).
"""

from cover.grounders.parse.answer import (
    ANSWERED,
    STATUSES,
    ParsedAnswer,
    Status,
    parse_answer,
    refusal_phrase,
)
from cover.grounders.parse.batch import (
    ParsedColumns,
    StartOnly,
    answers_to_predictions,
    parse_answers,
    prediction_table,
)
from cover.grounders.parse.extract import BARE_RULES, BareRule
from cover.grounders.parse.notation import NOTATIONS, format_time

__all__ = [
    "ANSWERED",
    "BARE_RULES",
    "NOTATIONS",
    "STATUSES",
    "BareRule",
    "ParsedAnswer",
    "ParsedColumns",
    "StartOnly",
    "Status",
    "answers_to_predictions",
    "format_time",
    "parse_answer",
    "parse_answers",
    "prediction_table",
    "refusal_phrase",
]
