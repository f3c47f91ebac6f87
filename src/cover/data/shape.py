"""What the row rules read of a grounding table: its shape, as a protocol, and its id
columns as given.

The validator (:mod:`cover.data.validate`), the join (:mod:`cover.data.join`) and the
row finders (:mod:`cover.data.row_finders`) work on any table of this shape and hand
back the same kind of table (``dataclasses.replace``, ``take``). So
:meth:`GroundingTable.from_arrays <cover.data.table.GroundingTable.from_arrays>` can
validate through them while none of them imports the table's module: the data layer
has no import circle.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

if TYPE_CHECKING:
    from typing import Self

    from cover.errors import RowProblem
    from cover.intervals import Intervals
    from cover.ragged import Ragged

__all__ = ["ANSWERED", "TableShape", "ids_as_given", "raw_ids", "replace_keeping_ids"]

#: A mark of ``table.checked``: every row has a finite top-1 interval inside ``[0, T]``
#: (no refusal) and a finite ``T > 0``, so scoring and widening skip those tests.
ANSWERED = "answered"


class TableShape(Protocol):
    """The columns and views of :class:`cover.data.table.GroundingTable` that the row
    rules read (a frozen dataclass: members read-only)."""

    __dataclass_fields__: ClassVar[dict[str, Any]]

    @property
    def qid(self) -> NDArray[np.str_]: ...
    @property
    def vid(self) -> NDArray[np.str_]: ...
    @property
    def duration(self) -> NDArray[np.float64]: ...
    @property
    def pred_start(self) -> NDArray[np.float64]: ...
    @property
    def pred_end(self) -> NDArray[np.float64]: ...
    @property
    def relevance(self) -> Ragged: ...
    @property
    def truth(self) -> Intervals | None: ...
    @property
    def truth_saliency(self) -> Ragged | None: ...
    @property
    def line(self) -> NDArray[np.int64] | None: ...
    @property
    def source(self) -> str: ...
    @property
    def query(self) -> NDArray[np.object_] | None: ...
    @property
    def checked(self) -> frozenset[str]: ...
    @property
    def problems(self) -> tuple[RowProblem, ...]: ...
    @property
    def has_interval(self) -> NDArray[np.bool_]: ...
    def __len__(self) -> int: ...
    def require_truth(self) -> Intervals: ...
    def take(self, rows: ArrayLike) -> Self: ...


#: Any table of the shape; functions that hand one back give the kind they were given.
T = TypeVar("T", bound=TableShape)


def require_table(value: object, what: str) -> None:
    """A TypeError in words when ``value`` is no table (None, a list, a dict), where an
    attribute read inside would fail in Python's words."""
    if not isinstance(getattr(value, "checked", None), frozenset):
        raise TypeError(f"{what} must be a GroundingTable (GroundingTable.from_arrays, "
                        "cover.load_labelled, cover.read_predictions), got "
                        f"{type(value).__name__}")


def raw_ids(table: TableShape, name: str = "qid") -> NDArray[Any]:
    """The ``qid`` (or ``vid``) column as given to the table: text or integers."""
    return table.__dict__[f"_{name}_raw"]


def ids_as_given(table: TableShape, name: str = "qid") -> NDArray[Any]:
    """The ``qid`` (or ``vid``) column for checks and messages row by row: integers as
    given (an integer is always an id, and ``str`` of one is its text), else the text
    column; a batch of integer ids is then never made text as a whole."""
    raw = raw_ids(table, name)
    return raw if raw.dtype.kind in "iu" else getattr(table, name)


def replace_keeping_ids(table: T, **changes: Any) -> T:
    """``dataclasses.replace`` keeping the ids as given: integers stay integers
    (``replace`` reads each field, and reading ``qid`` makes it text)."""
    q, v = raw_ids(table), raw_ids(table, "vid")
    return replace(table, qid=q, vid=q if v is q else v, **changes)
