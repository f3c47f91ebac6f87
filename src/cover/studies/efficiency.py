"""Study 2a, efficiency at matched coverage (paper §Efficiency, Table 2; SPEC §6.2).

At each headline target (1 - alpha in {0.8, 0.9}) and for every applicable family:
mean region length on the test split (mean over the calibration resamples), its share
of the video, realised coverage, and the non-refused length (the fair basis when a
grounder refuses). The shortest family per target is marked.

Two intervals go with each length, and they measure different things, so each is
labelled by what it is:

* **test-row 95% CI (clustered by source video)**, the paper's interval (Table 2): how
  far the mean length of one calibration's regions moves with the finite test sample.
  Per resample, ``t_{G-1}`` times the CR1 cluster-robust sd of the test mean over the
  ``G`` test videos (:func:`cover.bands.clustered_half_width`); the half-widths are
  averaged over the resamples and put around the mean length.
* **resample spread (calibration resamples, 2.5-97.5 percentiles)**: how far the mean
  length moves with the calibration draw alone (the test rows fixed); 2-5x narrower.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cover.bands import clustered_half_width
from cover.studies.common import HEADLINE_TARGETS, alpha_of, ci95, mean_sd
from cover.studies.context import Pair
from cover.studies.result import StudyResult, Table, family_label, fmt

TEST_CI = "test-row 95% CI (clustered by source video)"
SPREAD = "resample spread (calibration resamples, 2.5–97.5 percentiles)"


def efficiency(pair: Pair, targets: tuple[float, ...] = HEADLINE_TARGETS) -> StudyResult:
    """Length per family at matched target coverage, with its test-row 95% CI (clustered
    by source video) and its resample spread (see the module docstring)."""
    alphas = tuple(alpha_of(t) for t in targets)
    cells: list[dict[str, Any]] = []
    refused_test = pair.sweep("test", pair.families[0]).refused
    for fam in pair.families:
        th = pair.thresholds(fam, alphas)
        sw = pair.sweep("test", fam)
        for j, tgt in enumerate(targets):
            m = sw.at(th.values[j])
            length = m.mean("length")
            lo, hi = ci95(length)
            half = float(np.mean(clustered_half_width(m.length, pair.test_codes)))
            cov_m, cov_sd = mean_sd(m.coverage())
            nr = ~sw.refused
            cells.append({
                "family": fam, "target": tgt, "alpha": alphas[j],
                "length_mean": float(length.mean()),
                "length_test_ci_lo": float(length.mean()) - half,
                "length_test_ci_hi": float(length.mean()) + half, "length_test_ci_half": half,
                "length_spread_lo": lo, "length_spread_hi": hi,
                "length_frac_mean": float(m.mean("frac").mean()),
                "coverage_mean": cov_m, "coverage_sd": cov_sd,
                "nonrefused_length_mean": float(m.mean("length", nr).mean()),
                "nonrefused_coverage_mean": float(np.nanmean(m.coverage(nr))),
                "components_mean": float(m.mean("components").mean()),
                "threshold_mean": float(np.mean(th.values[j][np.isfinite(th.values[j])]))
                if np.isfinite(th.values[j]).any() else float("inf"),
            })
    best: dict[float, str] = {}
    for tgt in targets:
        here = [c for c in cells if c["target"] == tgt]
        best[tgt] = min(here, key=lambda c: c["length_mean"])["family"]
    for c in cells:
        c["shortest"] = best[c["target"]] == c["family"]
    header = ["Grounder", "Dataset"]
    row = [pair.name, pair.dataset]
    from cover.scores import FAMILIES

    for tgt in targets:
        for fam in FAMILIES:
            header += [f"{family_label(fam)} len @{tgt:.2f} (s)", TEST_CI, SPREAD]
            found = [c for c in cells if c["family"] == fam and c["target"] == tgt]
            if not found:
                row += ["--", "--", "--"]
                continue
            c = found[0]
            val = fmt(c["length_mean"], 1)
            row += [f"**{val}**" if c["shortest"] else val,
                    f"[{c['length_test_ci_lo']:.2f}, {c['length_test_ci_hi']:.2f}]",
                    f"[{c['length_spread_lo']:.2f}, {c['length_spread_hi']:.2f}]"]
    table = Table("efficiency", "Region length (s) at matched target coverage, mean over "
                  "calibration resamples; shortest family in bold; -- = family not "
                  f"applicable (no relevance signal). {TEST_CI}: how far the mean length moves "
                  "with the finite test sample (the paper's interval; t quantile times the "
                  "CR1 cluster-robust sd over the test videos, averaged over resamples). "
                  f"{SPREAD}: how far it moves with the calibration draw alone.",
                  tuple(header), (tuple(row),))
    cov_header = ["Grounder", "Dataset", "Family", "1-alpha", "coverage", "length (s)",
                  "share of video", "non-refused length (s)", "components"]
    cov_rows = tuple(
        (pair.name, pair.dataset, family_label(c["family"]), f"{c['target']:.2f}",
         f"{c['coverage_mean']:.3f} ± {c['coverage_sd']:.3f}", fmt(c["length_mean"], 1),
         f"{c['length_frac_mean']:.0%}", fmt(c["nonrefused_length_mean"], 1),
         fmt(c["components_mean"], 2))
        for c in cells)
    detail = Table("efficiency_detail", "Coverage and cost at the headline targets "
                   "(mean over resamples): marginal length, share of the video, length "
                   "over non-refused rows only.", tuple(cov_header), cov_rows)
    data = {"targets": list(targets), "cells": cells, "refused_test": int(refused_test.sum()),
            "n_test": len(pair.test), "mean_duration": float(np.mean(pair.test.duration)),
            "intervals": {"length_test_ci": TEST_CI, "length_spread": SPREAD}}
    return StudyResult("efficiency", "Efficiency at matched coverage", pair.label, data,
                       [table, detail])
