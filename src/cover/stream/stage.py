"""The one certify stage: rows read from any format meet the same rules here, once.

Every path of ``cover certify`` (JSON lines streamed or served,
:class:`cover.stream.jsonl.CertifyKernel`; CSV and Parquet batches through Arrow,
:func:`cover.stream.arrow.certify_batch`; a whole file of any format,
:mod:`cover.jobs.certify`) reads its rows into a :class:`~cover.io.qvhighlights.Loaded`
batch (the rows it could read, each with its file and line, and the problems it
found) and hands it to :meth:`CertifyStage.run`, which applies in this order, each by
one implementation:

1. the id rule (:func:`cover.data.validate.id_reasons`: an empty or space-padded qid
   or vid is no id; a reader of typed values has already refused floats and booleans);
2. the duplicate check across batches (``seen``; within a batch the reader's), on every
   row the reader kept or rejected for its numbers, as a whole read checks it
   (:func:`cover.io.batch_join.across_batches`);
3. the ``--qids`` filter;
4. durations from the row or ``--videos`` (a contradiction, or none known, rejects the
   row) and clipping to ``[0, T]`` (counted; wholly outside, or ``--strict``, rejects):
   :func:`cover.data.join.fill_durations`; for a calibrator reading relevance from
   proposals, a T whose signal would be too long rejects the row
   (:func:`cover.data.relevance.signal_rule`);
5. the calibrator (:meth:`Calibrator.certify`; an SLS calibrator fitted on relevance
   from proposals builds it there, from each row's scored windows over ``[0, T]`` now
   that T is known), and the mark of the rows it was fitted
   on (``cover.in_calibration``);
6. ``--max-p``: the rows whose conformal p-value is above it abstain
   (:func:`cover.calibrate.pvalues.abstain_above`; the p-values come from a calibrator
   fitted with ``--keep-scores``, :attr:`CertifyStage.p_values`).

So a row gets the same fate, region and reason whichever format and path it comes in.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cover.calibrate.calibrator import Calibrator
from cover.calibrate.pvalues import abstain_above
from cover.data.join import fill_durations
from cover.data.relevance import signal_rule
from cover.data.rules import OnError, raise_on_rejections, with_files_of
from cover.data.table import GroundingTable, ids_as_given
from cover.data.validate import id_reasons, ids_checked
from cover.errors import KEEP, ProblemTally, RowProblem
from cover.io.batch_join import across_batches
from cover.io.narrow import sorted_find
from cover.io.qvhighlights import Loaded
from cover.io.seen import SeenIds
from cover.io.video_index import VideoIndex
from cover.regions import Regions
from cover.row_status import ABSTAINED, CERTIFIED, REFUSED, REJECTED, empty_rows
from cover.stream.output_fields import calibrator_fields

#: ``--videos`` durations: ``(vids, durations)`` in any order, or an index of them.
Videos = tuple[NDArray[np.str_], NDArray[np.float64]] | VideoIndex


@dataclass(frozen=True)
class Staged:
    """One batch after the stage: the kept rows and their regions, every rejected row
    (``bad``, the reader's included) and which kept rows the calibrator was fitted on."""

    table: GroundingTable
    regions: Regions
    bad: list[RowProblem]
    in_calibration: NDArray[np.bool_] | None
    #: Every problem of the batch, the reader's and the stage's, in line order (so the
    #: first ones shown are the same whatever the batch size).
    problems: list[RowProblem]
    #: Which qids of the stage's ``--qids`` list a row of the batch has, kept or rejected
    #: (:meth:`CertifyStage._listed`); None without a list.
    listed: NDArray[np.bool_] | None = None

    @property
    def n_in_calibration(self) -> int:
        """Calibration rows among those given a region (a row whose region is empty is
        rejected: it is marked, but is no row certified)."""
        if self.in_calibration is None:
            return 0
        return int((self.in_calibration & ~empty_rows(self.regions)).sum())


@dataclass(frozen=True)
class CertifyStage:
    """The certify stage of one run: the calibrator, the ``--videos`` durations, the
    ``--qids`` filter, ``--strict`` and ``--max-p``, applied to each batch by
    :meth:`run`."""

    cal: Calibrator
    meta: dict[str, Any]
    fitted: NDArray[np.str_] | None
    #: ``--videos`` as sorted UTF-8 bytes: each batch looks up only its own vids
    index: VideoIndex | None
    videos_source: str
    qids: NDArray[np.str_] | None
    strict: bool
    max_p: float | None = None

    @classmethod
    def of(cls, cal: Calibrator, *, videos: Videos | None = None,
           videos_source: str = "--videos", qids: NDArray[np.str_] | None = None,
           strict: bool = False, max_p: float | None = None) -> CertifyStage:
        """The stage of ``cal``; ``max_p`` needs a calibrator that kept its calibration
        scores (:attr:`p_values`; the caller says so in the user's terms first)."""
        if max_p is not None and cal.score_sketch_ is None:
            raise ValueError("max_p needs per-row p-values: the calibrator kept no "
                             "calibration scores")
        fo = cal.fitted_on_ or {}
        meta = calibrator_fields(cal, **({"calibration_sha256": fo["sha256"]}
                                         if fo.get("sha256") else {}))
        # sorted once: each batch then looks its qids up (np.isin sorted these again for
        # every batch, most of the cost of a one-row request to the service)
        fitted = None if fo.get("qids") is None else np.unique(np.asarray(fo["qids"], dtype=str))
        index = videos if isinstance(videos, VideoIndex) or videos is None else \
            VideoIndex.of(*videos)
        return cls(cal, meta, fitted, index, videos_source, qids, strict, max_p)

    def raise_on(self, problems: list[RowProblem] | ProblemTally, on_error: OnError,
                 what: str, late: Sequence[RowProblem] = ()) -> None:
        """Under ``on_error='raise'``, the rows this run rejected as one error, the same
        on every path (:func:`cover.data.rules.raise_on_rejections`; without
        ``--videos``, rows with no duration say what to pass). ``late``: problems of
        another file among ``problems`` (a ``--qids`` list's), whose file the error
        names beside ``what``."""
        raise_on_rejections(problems, on_error, with_files_of(what, late),
                            videos_given=self.index is not None)

    def end_of_input(self, bad: ProblemTally, counts: StreamCounts, on_error: OnError,
                     name: str, late: list[RowProblem]) -> None:
        """Every batch read: the problems found once the input is read whole (``late``:
        the ``--qids`` list's qids no row has) count as the rows' do, and under
        ``on_error='raise'`` every rejected row (``bad``) stops the run, as a whole read
        names them (:meth:`raise_on`)."""
        if on_error == "raise":
            bad.add(late)
        self.raise_on(bad, on_error, name, late)
        counts.tally.add(late)

    def known_durations(self, vid: NDArray[Any]
                        ) -> tuple[NDArray[np.str_], NDArray[np.float64]] | tuple[None, None]:
        """The ``--videos`` durations a batch of ``vid`` needs, for
        :func:`cover.data.join.fill_durations`: the batch's own known vids (sorted)
        and their durations, or ``(None, None)`` when none is known (the same message
        as no ``--videos``), without sorting every video again for each batch."""
        if self.index is None:
            return None, None
        known = self.index.known(vid)
        return (None, None) if known[0].size == 0 else known

    def with_durations(self, table: GroundingTable) -> tuple[GroundingTable, list[RowProblem]]:
        """``table`` with each row's duration, from the row or ``--videos`` (by vid, or by
        qid from a ground truth: :attr:`VideoIndex.by`), clipped to ``[0, T]``, and the
        rows it rejected or clipped (:func:`cover.data.join.fill_durations`)."""
        by = "vid" if self.index is None else self.index.by
        return fill_durations(table, *self.known_durations(getattr(table, by)),
                              strict=self.strict, source=self.videos_source, by=by)

    @property
    def p_values(self) -> bool:
        """Whether every certified row gets a conformal p-value (``cover.p_value``): the
        calibrator kept its calibration scores (``cover calibrate --keep-scores``)."""
        return self.cal.score_sketch_ is not None

    def run(self, loaded: Loaded, seen: SeenIds | None = None) -> Staged:
        """Apply the stage to ``loaded`` (see the module docstring); ``seen`` holds the
        qids of earlier batches (a repeat is rejected) and gets this batch's."""
        table = loaded.table
        listed = None if self.qids is None else self._listed(loaded)
        rows, found = _id_rejections(table)
        if rows:
            table = table.take(np.delete(np.arange(len(table)), rows))
        read = list(loaded.problems)
        if seen is not None:  # before --qids: the rule holds for every row, listed or not
            table, read, repeats = across_batches(loaded, table, seen)
            found += repeats
        if self.qids is not None:
            table = table.select_qids(self.qids)
        table, filled = self.with_durations(table)
        found += filled
        rule = signal_rule(self.cal.relevance)  # a signal T makes too long: the row, not the run
        if rule is not None:
            table, long = rule(table)
            found += long
        table = ids_checked(table)  # rule 1 held: the calibrator's gate need not judge ids
        problems = sorted([*read, *found], key=attrgetter("line"))
        bad = [p for p in problems if p.action == "rejected"]
        in_cal = None if self.fitted is None else _among(table.qid, self.fitted)
        regions = self.cal.certify(table)
        if self.max_p is not None:
            regions = abstain_above(regions, self.max_p)
        return Staged(table, regions, bad, in_cal, problems, listed)

    def _listed(self, loaded: Loaded) -> NDArray[np.bool_]:
        """Which qids of the ``--qids`` list a row of the batch has: a row the reader
        kept, or one rejected (by the reader too) whose qid was read. A listed row
        rejected for another field was found, and its own reason says why."""
        assert self.qids is not None
        named = [p.qid for p in loaded.problems if p.qid is not None]
        return np.isin(self.qids, loaded.table.qid) | np.isin(self.qids, np.array(named, str))

    def listed_seen(self, counts: StreamCounts) -> NDArray[np.str_]:
        """The qids of the ``--qids`` list some row of the run had (the batches counted
        in ``counts``): what :func:`cover.io.qids.unknown_qids` is told, on every path."""
        assert self.qids is not None
        return self.qids[counts.listed] if counts.listed is not None else self.qids[:0]


def _id_rejections(table: GroundingTable) -> tuple[list[int], list[RowProblem]]:
    """The rows whose qid (else vid) is no id, and their rejections. Integer ids are
    always ids: they are judged as given, not made text for it
    (:func:`cover.data.table.ids_as_given`)."""
    why = (id_reasons(ids_as_given(table, "vid"), "vid")
           | id_reasons(ids_as_given(table, "qid"), "qid"))  # the qid's reason first
    rows = sorted(why)
    lines = table.line if table.line is not None else np.zeros(len(table), dtype=np.int64)
    return rows, [RowProblem(table.source, int(lines[i]), str(table.qid[i]), why[i],
                             "rejected") for i in rows]


@dataclass
class StreamCounts:
    """What happened to every input row: the counts, and the problems found (rejected and
    clipped rows) tallied (:class:`~cover.errors.ProblemTally`: a count per action and
    kind and the first few of each, not every problem: memory stays bounded)."""

    rows: int = 0
    certified: int = 0
    refused: int = 0
    rejected: int = 0
    abstained: int = 0
    batches: int = 0
    in_calibration: int = 0
    tally: ProblemTally = field(default_factory=ProblemTally)
    #: The summed length (seconds) of the regions written: certified, refused and
    #: abstained rows (a rejected row has none).
    length: float = 0.0
    #: Which qids of the stage's ``--qids`` list some row had (:attr:`Staged.listed`).
    listed: NDArray[np.bool_] | None = None

    @property
    def mean_length(self) -> float:
        """Mean region length over the rows given one (NaN when none is)."""
        n = self.certified + self.refused + self.abstained
        return self.length / n if n else float("nan")

    @property
    def examples(self) -> list[RowProblem]:
        """The first five rejected rows (fewer if the tally keeps fewer), in file order."""
        return self.tally.examples("rejected")[:KEEP]

    @property
    def reasons(self) -> Counter[str]:
        """How many rows were rejected for each reason."""
        return self.tally.kinds.get("rejected", Counter())

    def add(self, by_status: Mapping[str, int], problems: list[RowProblem],
            length: float = 0.0) -> None:
        """Count one batch: how many written rows have each status, what was found in
        them, and the summed length of their regions."""
        self.batches += 1
        self.rows += sum(by_status.values())
        self.length += length
        self.certified += by_status.get(CERTIFIED, 0)
        self.refused += by_status.get(REFUSED, 0)
        self.rejected += by_status.get(REJECTED, 0)
        self.abstained += by_status.get(ABSTAINED, 0)
        self.tally.add(problems)

    def add_staged(self, by_status: Mapping[str, int], done: Staged) -> None:
        """Count one batch after the stage: how many written rows have each status (the
        reader's rejections among them), what was found, the summed length of the regions
        (a rejected row's is empty) and the calibration rows given one
        (:attr:`Staged.n_in_calibration`), the same on every format."""
        self.add(by_status, done.problems, float(done.regions.length.sum()))
        self.in_calibration += done.n_in_calibration
        if done.listed is not None:
            self.listed = done.listed if self.listed is None else self.listed | done.listed


def _among(qids: NDArray[Any], fitted: NDArray[np.str_]) -> NDArray[np.bool_]:
    """Whether each qid is one of ``fitted`` (sorted, distinct): a binary search a row.
    Text qids only; any other kind is matched by ``np.isin``, as before (a number is never
    equal to text)."""
    if qids.dtype.kind != "U":
        return np.isin(qids, fitted)
    return sorted_find(fitted, qids)[1]
