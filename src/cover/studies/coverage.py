"""Study 1 as a :class:`StudyResult`: :func:`coverage_validity` on a prepared pair, with
its table in the paper's shape (realised coverage and length vs target per family)."""

from __future__ import annotations

from cover.scores import FAMILIES
from cover.studies.context import Pair
from cover.studies.coverage_validity import ValidityResult, pair_validity
from cover.studies.result import TIES_LEGEND, StudyResult, Table, cell_marks, family_label, fmt


def coverage(pair: Pair) -> tuple[StudyResult, ValidityResult]:
    """Coverage validity over the alpha grid for every applicable family."""
    res = pair_validity(pair)
    header = ["Grounder", "Dataset", "1-alpha", "k/(n+1) [95% test band]"]
    for f in FAMILIES:
        header += [f"{family_label(f)} cov.", f"{family_label(f)} len. (s)"]
    rows = []
    for a in res.protocol.alphas:
        c0 = res.cell(res.families[0], a)
        row = [pair.name, pair.dataset, f"{1 - a:.2f}",
               f"{c0.expected:.3f} [{c0.band_lo:.3f}, {c0.band_hi:.3f}]"]
        for f in FAMILIES:
            if f not in res.families:
                row += ["--", "--"]  # not applicable: no usable prediction of this family
                continue
            c = res.cell(f, a)
            row += [f"{c.coverage_mean:.3f} ± {c.coverage_sd:.3f}{cell_marks(c)}",
                    f"{fmt(c.length_mean, 1)}"]
        rows.append(tuple(row))
    table = Table("coverage", "Realised coverage and region length vs target (mean ± sd over "
                  "calibration resamples). The 95% test band is k/(n+1) ± t·sqrt(deff·sd_Beta² + "
                  "sd_test²): the calibration band's spread plus the test split's own "
                  "noise, clustered by source video (docs/bands.md); * = mean outside "
                  f"the band; {TIES_LEGEND}",
                  tuple(header), tuple(rows))
    data = res.to_dict()
    return StudyResult("coverage", "Coverage validity", pair.label, data, [table]), res
