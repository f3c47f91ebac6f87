"""The user-facing calibrator: configuration, a rule from the registry, fitted thresholds.

Design (SPEC §4, paper §Method):

* A **rule** (``split``, ``bonferroni``, ``asymmetric``, ``rcps``, ``crc``, ... see
  :data:`cover.calibrate.registry.RULES`) is a pure function in its own module from
  score arrays to thresholds per group: ``fn(RuleInput, alpha, params) -> RuleFit``.
  The Calibrator holds the configuration, computes what the rule declares it needs
  (scores, per-side scores, a loss curve, weights), delegates, and keeps the result.
* A **grouping** (``all`` by default: one group) labels every row at fit and at
  certify time; a label unseen at fit time is an error at certify time.
* Thresholds are kept per group label and per side: ``{"both": Side}`` for one-
  parameter rules, ``{"start": Side, "end": Side}`` for per-boundary rules.
* The calibrator is saved as versioned JSON (:mod:`cover.calibrate.calibrator_file`),
  validated field by field when read back.

Extending: a rule or a grouping registered in :mod:`cover.calibrate.registry`
(docs/calibration-rules.md), then ``Calibrator(rule=name, groups=kind)``.

>>> import numpy as np, cover
>>> cal_table = cover.GroundingTable.from_arrays(   # end overshoots by i/4 s
...     qid=np.arange(99), duration=150.0, pred_start=np.full(99, 40.0),
...     pred_end=np.full(99, 60.0), truth=(np.full(99, 45.0), 60.0 + np.arange(99) / 4))
>>> cal = cover.Calibrator(score="sec", alpha=0.1).fit(cal_table)
>>> cal.threshold_, cal.k_              # k = ceil(100 * 0.9) = 90 -> score 89/4
(22.25, 90)
>>> cal.certify(cal_table).row(0)      # [40 - 22.25, 60 + 22.25]
[[17.75, 82.25]]
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Self

import numpy as np
from numpy.typing import NDArray

from cover.calibrate.calibrator_file import from_document, read_document, to_document
from cover.calibrate.crc import coverage_loss
from cover.calibrate.quantile import AlphaLike, as_fraction
from cover.calibrate.registry import (
    ALL,
    Fallback,
    GroupThreshold,
    RuleInput,
    get_grouping,
    get_rule,
)
from cover.calibrate.row_thresholds import RowThresholds
from cover.data.fitted_on import fitted_on
from cover.data.relevance import PROPOSALS, RELEVANCE_SOURCES, SALIENCY, rebuild_relevance
from cover.data.table import GroundingTable, qid_text, raw_ids
from cover.data.validate import FOR_CERTIFY, FOR_FIT, ensure_valid
from cover.regions import Regions, build_regions
from cover.scores import (
    DEFAULT_MIN_SCALE,
    INTERVAL_FAMILIES,
    Scores,
    check_family,
    check_target,
    compute_scores,
    require_family_input,
    require_inputs,
)


@dataclass
class Calibrator(RowThresholds):
    """Calibrate once on a labelled table, then certify any number of new predictions.

    Parameters
    ----------
    score : {"norm", "sec", "sls", "sigma"}
        Score family (paper §Method; ``sigma`` widens by the reported std).
    alpha : float
        Target miscoverage (or risk level for ``rcps``/``crc``).
    rule : str
        Calibration rule, a key of :data:`cover.calibrate.registry.RULES`.
    min_scale : float
        Scale floor in seconds (NORM predicted length, SIGMA std).
    target : {"envelope", "windows"}
        Cover the envelope of multi-window truth (paper) or every window.
    params : dict
        Rule parameters (e.g. ``{"delta": 0.1, "bound": "binomial"}`` for ``rcps``);
        missing ones take the rule's defaults.
    groups : str
        Grouping kind (``"all"``: one group); ``group_params`` its parameters.
    relevance : {"saliency", "proposals"}
        SLS only: where the relevance signal comes from. ``"saliency"`` uses the table's
        own ``relevance`` as given; ``"proposals"`` builds it from the scored predicted
        windows (:func:`cover.data.relevance.rebuild_relevance`) at fit and at certify
        time, over ``[0, T]`` of each row, so the thresholds and the regions read the
        same signal. Saved in the file (``"relevance"``), applied by ``cover certify``.
    keep_scores : bool
        Keep the calibration scores (a sketch beyond 5000 rows per group) in the file,
        so that certify reports each row's conformal p-value
        (:mod:`cover.calibrate.pvalues`; one-parameter rules).

    Fitted attributes end with ``_``: ``thresholds_`` (per group label),
    ``params_``, ``group_params_``, ``fallback_``, ``report_``, ``counts_``,
    ``fitted_on_``; ``threshold_``, ``k_``, ``n_`` for a one-group one-parameter rule.
    """

    score: str = "norm"
    alpha: AlphaLike = 0.1
    rule: str = "split"
    min_scale: float = DEFAULT_MIN_SCALE
    target: str = "envelope"
    params: Mapping[str, Any] | None = None
    groups: str = "all"
    group_params: Mapping[str, Any] | None = None
    keep_scores: bool = False
    relevance: str = SALIENCY
    thresholds_: dict[str, GroupThreshold] = field(default_factory=dict, init=False)
    params_: dict[str, Any] = field(default_factory=dict, init=False)
    group_params_: dict[str, Any] = field(default_factory=dict, init=False)
    fallback_: list[Fallback] = field(default_factory=list, init=False)
    report_: dict[str, Any] = field(default_factory=dict, init=False)
    counts_: dict[str, int] = field(default_factory=dict, init=False)
    _fitted_on: dict[str, Any] | None = field(default=None, init=False, repr=False)
    _fit_ids: NDArray[Any] | None = field(default=None, init=False, repr=False, compare=False)
    clip_: float | None = field(default=None, init=False)
    score_sketch_: dict[str, Any] | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        check_family(self.score)
        check_target(self.target)
        self._alpha = as_fraction(self.alpha)
        self._spec = get_rule(self.rule)
        self._grouping = get_grouping(self.groups)
        if not (isinstance(self.min_scale, (int, float)) and not isinstance(self.min_scale, bool)
                and math.isfinite(self.min_scale) and self.min_scale > 0):
            raise ValueError(f"min_scale must be a finite number > 0 seconds, "
                             f"got {self.min_scale!r}")
        if self.keep_scores and (self._spec.sides != ("both",) or self._spec.needs & {"sides"}):
            raise ValueError(f"keep_scores: p-values are defined for one-parameter rules, "
                             f"not {self.rule!r}")
        if self._spec.needs & {"sides"} and self.score not in INTERVAL_FAMILIES:
            raise ValueError(f"rule {self.rule!r} widens each boundary separately and needs an "
                             f"interval score ({', '.join(INTERVAL_FAMILIES)}), not {self.score!r}")
        self._params = self._spec.check_params({**self._spec.defaults, **(self.params or {})})
        if self.relevance not in RELEVANCE_SOURCES:
            raise ValueError(f"relevance must be one of {', '.join(RELEVANCE_SOURCES)}, "
                             f"got {self.relevance!r}")
        if self.relevance != SALIENCY and self.score != "sls":
            raise ValueError(f"relevance={self.relevance!r} applies to score 'sls' only, "
                             f"not {self.score!r}")

    # ---- fit / certify ------------------------------------------------------------
    def fit(self, table: GroundingTable, *, weights: NDArray[np.float64] | None = None) -> Self:
        """Score the labelled ``table`` and set the thresholds by the rule. A table that
        did not come through :meth:`GroundingTable.from_arrays` is checked by the same
        rules first (:func:`cover.data.validate.ensure_valid`: an InputError naming
        each bad row)."""
        table = self._signal(ensure_valid(table, FOR_FIT, "the table given to Calibrator.fit"))
        if len(table) == 0:
            raise ValueError("cannot calibrate on an empty table")
        require_inputs(table, check_family(self.score))
        spec = self._spec
        if "weights" in spec.needs and weights is None:
            raise ValueError(f"rule {self.rule!r} needs weights for the calibration rows")
        scores = compute_scores(table, self.score, min_scale=self.min_scale, target=self.target,
                                sides=bool(spec.needs & {"sides"}))
        loss = (coverage_loss(table, self.score, self.target, self.min_scale)
                if "loss" in spec.needs else None)
        # The scores are made here and read after the rule only for their counts (and
        # the p-value sketch when kept): the rule may reorder them in place.
        try:  # a failed fit where no row has the family's input says so (checked then)
            return self._fit(scores, table, loss=loss, weights=weights,
                             whole=table if "table" in spec.needs else None,
                             scratch=not self.keep_scores)
        except ValueError:
            require_family_input(table, self.score, table.source)
            raise

    def fit_scores(self, scores: Scores, table: GroundingTable) -> Self:
        """Set the thresholds from ``scores`` already computed on the rows of ``table``
        (e.g. batch by batch over a file, :mod:`cover.stream.calibrate`): ``table``
        needs only what the grouping reads (qid, vid, duration, predicted window), not
        the relevance signals or the truth. Identical to :meth:`fit` on the full table;
        rules that need the whole table (a loss curve, weights) are refused."""
        if len(table) != scores.values.size:
            raise ValueError(f"{scores.values.size} scores for a table of {len(table)} rows")
        if self._spec.needs & {"loss", "weights", "table"} or self._spec.per_row is not None:
            raise ValueError(f"rule {self.rule!r} needs the whole labelled table: use fit()")
        if scores.family != self.score:
            raise ValueError(f"scores of family {scores.family!r}, calibrator {self.score!r}")
        return self._fit(scores, table, loss=None, weights=None)

    def _fit(self, scores: Scores, table: GroundingTable, *, loss: Any,
             weights: NDArray[np.float64] | None, whole: GroundingTable | None = None,
             scratch: bool = False) -> Self:
        spec = self._spec
        if len(table) == 0:
            raise ValueError("cannot calibrate on an empty table")
        gparams = self._grouping.fit(table, dict(self.group_params or {}))
        if self.groups == ALL:  # one label seen n times: a view, not n strings
            labels = np.broadcast_to(np.array(ALL), (len(table),))
        else:
            labels = np.asarray(self._grouping.assign(table, gparams)).astype(str, copy=False)
        data = RuleInput(
            scores=scores.values, groups=labels, start=scores.start, end=scores.end,
            loss=loss,
            weights=None if weights is None else np.asarray(weights, dtype=np.float64),
            features=None if spec.per_row is None else spec.per_row.features(table,
                                                                           self._params),
            table=whole, regions_at=None if whole is None else self._regions_of(whole),
            scratch=scratch,
        )
        result = spec.fn(data, self._alpha, self._params)
        for label, rec in result.thresholds.items():
            for side, s in rec.sides.items():
                if math.isnan(s.value) or s.value == -math.inf:
                    raise ValueError(
                        f"group {label!r}, {side}: the calibrated threshold is {s.value}; at "
                        f"least k={s.k} of its {rec.n} calibration rows are refusals (no usable "
                        f"prediction for score {self.score!r}), so no region can be certified")
        self.thresholds_ = dict(result.thresholds)
        self.params_ = {**self._params, **result.learned}
        self.group_params_ = gparams
        self.fallback_ = list(result.fallback)
        self.report_ = dict(result.report)
        self.counts_ = scores.counts()
        # The digest sorts and hashes every calibration qid (most of a 1e6-row fit):
        # taken when first asked for (saving, marking rows), from the ids as given.
        self._fitted_on, self._fit_ids = None, raw_ids(table)
        self.clip_ = table.clip if self.score == "sls" else None
        if self.keep_scores:
            from cover.calibrate.pvalues import score_sketch

            self.score_sketch_ = score_sketch(scores.values, labels)
        return self

    def _signal(self, table: GroundingTable) -> GroundingTable:
        """``table`` with the relevance this calibrator reads: its own (saliency), or
        built from its scored windows over ``[0, T]`` (proposals; T is known here)."""
        return rebuild_relevance(table) if self.relevance == PROPOSALS else table

    @property
    def fitted_on_(self) -> dict[str, Any] | None:
        """Which rows the thresholds were fitted on (:func:`cover.data.fitted_on.fitted_on`):
        count, sha256 of the sorted qids, and the qids when few."""
        if self._fitted_on is None and self._fit_ids is not None:
            ids = self._fit_ids  # integer ids as given: fitted_on sorts them as text
            self._fitted_on, self._fit_ids = fitted_on(
                ids if ids.dtype.kind in "iu" else qid_text(ids)), None
        return self._fitted_on

    @fitted_on_.setter
    def fitted_on_(self, value: dict[str, Any] | None) -> None:
        self._fitted_on, self._fit_ids = value, None

    def certify(self, table: GroundingTable) -> Regions:
        """Regions at the calibrated thresholds for every row (durations required; a
        table not built by :meth:`GroundingTable.from_arrays` is checked first)."""
        self._require_fitted()
        table = self._signal(ensure_valid(table, FOR_CERTIFY,
                                          "the table given to Calibrator.certify"))
        if self.score == "sls" and self.clip_ is not None and table.clip != self.clip_:
            raise ValueError(
                f"relevance clips are {table.clip} s here but {self.clip_} s at calibration"
            )
        require_inputs(table, check_family(self.score))
        lam_s, lam_e = self.row_lams(table)
        regions = build_regions(table, self.score, lam_s, lam_end=lam_e,
                                min_scale=self.min_scale, alpha=float(self._alpha))
        if self._spec.finish is not None:
            regions = self._spec.finish(regions, table, self.params_)
        if self.score_sketch_ is not None:
            regions = replace(regions, p_value=self._p_values(table))
        return regions

    # ---- persistence (cover.calibrate.calibrator_file) -------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The versioned JSON document (with a sha256 of its own content)."""
        self._require_fitted()
        return to_document(self)

    def save(self, path: str | Path, *, inputs: list[str | Path] | None = None) -> None:
        """Write the JSON document atomically (refusing a target that is one of ``inputs``)."""
        from cover.io.output import write_json

        write_json(path, self.to_dict(), inputs=inputs or ())

    @classmethod
    def from_dict(cls, doc: Any, *, source: str = "<dict>") -> Calibrator:
        """Rebuild a fitted calibrator, validating every field (see calibrator_file)."""
        return from_document(cls, doc, source=source)

    @classmethod
    def load(cls, path: str | Path) -> Calibrator:
        """Read a calibrator written by :meth:`save`."""
        return cls.from_dict(read_document(path), source=str(path))

    def __repr__(self) -> str:
        state = f", groups={len(self.thresholds_)}, n_={self.n_}" if self.fitted else ""
        thr = f", threshold_={self.threshold_!r}" if self.threshold_ is not None else ""
        return (f"Calibrator(score={self.score!r}, alpha={float(self._alpha)!r}, "
                f"rule={self.rule!r}{thr}{state})")
