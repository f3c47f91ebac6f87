"""QVHighlights' highlight labels in a ground-truth row: ``relevant_clip_ids`` and
``saliency_scores``.

``relevant_clip_ids`` lists 2-s clip indices (integers >= 0); ``saliency_scores`` gives,
for each of them in the same order, the scores of the three annotators (numbers in
0..4). Both fields are optional; a row with neither has no labels (an empty row). A
row with one but not the other, lists of different lengths, a clip index that is not
an integer >= 0 or a score row that is not three numbers is rejected with the reason,
like any other malformed ground-truth field.
"""

from __future__ import annotations

import math
import sys
from itertools import chain, compress, repeat
from operator import is_not, methodcaller
from typing import Any

import numpy as np

from cover.ragged import Ragged, offsets_from_lengths

#: Annotators per labelled clip in QVHighlights.
ANNOTATORS = 3
_IDS, _SCORES = "relevant_clip_ids", "saliency_scores"
_FLOAT_MAX = int(sys.float_info.max)


def _is_number(x: Any) -> bool:
    """A finite float, or an int a float can hold (Python's ints have no bound: one past
    ~1.8e308 would overflow the float array the scores become)."""
    if type(x) is int:
        return -_FLOAT_MAX <= x <= _FLOAT_MAX
    return type(x) is float and math.isfinite(x)


def _label_problem(ids: Any, scores: Any) -> str | None:
    """Why a row's labels ``ids`` and ``scores`` (None: absent or null) cannot be read
    (None when fine or absent)."""
    if ids is None and scores is None:
        return None
    if ids is None or scores is None:
        return f"{_SCORES if ids is None else _IDS} without {_IDS if ids is None else _SCORES}"
    if type(ids) is not list or not all(type(i) is int and 0 <= i <= _FLOAT_MAX for i in ids):
        return f"{_IDS} must be a list of clip indices (integers >= 0)"
    if type(scores) is not list or not all(
            type(r) is list and len(r) == ANNOTATORS and all(map(_is_number, r))
            for r in scores):
        return f"{_SCORES} must be a list of [{ANNOTATORS} numbers] per clip"
    if len(ids) != len(scores):
        return (f"{_IDS} has {len(ids)} clips but {_SCORES} has {len(scores)} rows "
                "(one per clip expected)")
    return None


def label_columns(records: list[dict[str, Any]]) -> tuple[list[Any], list[Any], bool]:
    """Each row's ``relevant_clip_ids`` and ``saliency_scores`` (None where absent or
    null), and whether any row names ``relevant_clip_ids`` (a file whose rows all lack
    it has no labels, not empty ones)."""
    return (list(map(methodcaller("get", _IDS), records)),
            list(map(methodcaller("get", _SCORES), records)),
            any(_IDS in rec for rec in records))


def label_problems(ids: list[Any], scores: list[Any]) -> dict[int, str]:
    """Row -> why its highlight labels are malformed (rows without labels are fine),
    from :func:`label_columns`. The rows are first checked all at once; only a file with
    a bad row is looked at row by row, to name each one."""
    if _all_clean(ids, scores):
        return {}
    return {i: why for i, pair in enumerate(zip(ids, scores, strict=True))
            if (why := _label_problem(*pair)) is not None}


def _all_clean(ids: list[Any], scores: list[Any]) -> bool:
    """Whether :func:`_label_problem` finds nothing in any row, decided with one pass of
    C-level maps over all the labels instead of a Python test per number (a file holds
    ~70 label numbers a row). False only means "look row by row": any doubt (an integer
    numpy cannot hold, a type the per-row rule might refuse) answers False."""
    has_ids = list(map(is_not, ids, repeat(None)))
    if has_ids != list(map(is_not, scores, repeat(None))):
        return False  # a row with one field but not the other
    id_lists = list(compress(ids, has_ids))
    score_lists = list(compress(scores, has_ids))
    if not (set(map(type, id_lists)) <= {list} and set(map(type, score_lists)) <= {list}
            and list(map(len, id_lists)) == list(map(len, score_lists))):
        return False
    flat_ids = list(chain.from_iterable(id_lists))
    clips = list(chain.from_iterable(score_lists))
    if not (set(map(type, flat_ids)) <= {int} and set(map(type, clips)) <= {list}
            and set(map(len, clips)) <= {ANNOTATORS}):
        return False
    numbers = list(chain.from_iterable(clips))
    if not set(map(type, numbers)) <= {int, float}:
        return False
    try:
        id_arr = np.array(flat_ids, dtype=np.int64)
        values = np.array(numbers, dtype=np.float64)
    except OverflowError:  # past int64 or float: the per-row rule decides
        return False
    return bool((id_arr >= 0).all() and np.isfinite(values).all())


def saliency_labels(ids: list[Any], scores: list[Any], keyed: bool) -> Ragged | None:
    """The labels of well-formed rows (:func:`label_problems` found nothing) as a
    :class:`Ragged` of ``(k, 4)`` values (clip index, three scores); None when no row
    names ``relevant_clip_ids`` (``keyed``), so tables of files without them carry
    nothing. The scores go to numpy as one flat list (a list of 3-lists a clip is
    several times slower to convert)."""
    if not keyed:
        return None
    id_lists = [i or [] for i in ids]
    flat = np.empty((sum(map(len, id_lists)), 1 + ANNOTATORS))
    flat[:, 0] = list(chain.from_iterable(id_lists))
    flat[:, 1:] = np.array(list(chain.from_iterable(chain.from_iterable(
        s for s in scores if s))), dtype=np.float64).reshape(-1, ANNOTATORS)
    return Ragged(flat, offsets_from_lengths(list(map(len, id_lists))))


__all__ = ["ANNOTATORS", "label_columns", "label_problems", "saliency_labels"]
