"""Study 7, downstream utility of the certified width (paper Tables 15-16; SPEC §6.7).

With the whole pool calibrated at ``alpha`` (1 - alpha = 0.9 by default), over the
non-refused test rows: Spearman rank correlation between certified width and the base
grounder's point-IoU, mean point-IoU by width quartile (Q1 narrowest), and the
selective-prediction rule "retain a row when its width is within a budget" at the
widths where 20%, 50% and 100% of rows are retained (ties at the budget are kept, and
the realised share is reported): point-IoU of retained vs abstained rows, and coverage
among the retained (which marginal theory does not guarantee).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cover.calibrate.split import split_conformal
from cover.metrics import point_iou
from cover.report.tables import family_label
from cover.studies.context import Pair
from cover.studies.result import StudyResult, Table, fmt

RETENTIONS: tuple[float, ...] = (0.2, 0.5, 1.0)


def spearman(x: np.ndarray, y: np.ndarray) -> float:
    """Spearman's rho: Pearson correlation of average ranks (ties share their mean rank)."""
    from scipy.stats import rankdata

    if x.size < 3:
        return float("nan")
    rx, ry = rankdata(x), rankdata(y)
    if rx.std() == 0 or ry.std() == 0:
        return float("nan")
    return float(np.corrcoef(rx, ry)[0, 1])


def utility(pair: Pair, alpha: float = 0.1,
            retentions: tuple[float, ...] = RETENTIONS) -> StudyResult:
    """Width vs point-IoU, by quartile, and selective prediction, for NORM and SEC."""
    piou_all = point_iou(pair.test)
    cells: list[dict[str, Any]] = []
    for fam in ("norm", "sec"):
        if fam not in pair.families:
            continue
        test = pair.sweep("test", fam)
        lam = split_conformal(pair.sweep("pool", fam).scores, alpha=alpha, warn=False).value
        m = test.at(np.array([lam]))
        keep = ~test.refused
        width = m.length[0][keep]
        piou = piou_all[keep]
        covered = m.covered[0][keep]
        # Quartiles by rank, so ties in width never leave a quartile empty.
        order = np.argsort(width, kind="stable")
        quart = np.empty(width.size, dtype=np.int64)
        quart[order] = (4 * np.arange(width.size)) // max(width.size, 1)
        q_iou = [float(piou[quart == q].mean()) if (quart == q).any() else float("nan")
                 for q in range(4)]
        selective = []
        for r in retentions:
            # The budget is the width at the requested retention; every row within it is
            # kept, so ties at the budget (e.g. many whole-video regions) keep more.
            n_keep = max(round(r * width.size), 1)
            budget = float(width[order[n_keep - 1]]) if width.size else 0.0
            ret = width <= budget
            selective.append({
                "retention": r, "budget_s": budget, "retained_share": float(ret.mean())
                if ret.size else float("nan"),
                "iou_retained": float(piou[ret].mean()) if ret.any() else float("nan"),
                "iou_abstained": float(piou[~ret].mean()) if (~ret).any() else float("nan"),
                "coverage_retained": float(covered[ret].mean()) if ret.any() else float("nan"),
            })
        cells.append({"family": fam, "threshold": lam, "rho": spearman(width, piou),
                      "quartile_iou": q_iou, "n": int(width.size), "selective": selective,
                      "mean_point_iou": float(piou.mean()) if piou.size else float("nan")})
    corr = Table("utility_corr", f"Spearman rho between certified width (1-alpha = "
                 f"{1 - alpha:.2f}) and the grounder's point-IoU over non-refused test rows, "
                 "with mean point-IoU by width quartile (Q1 narrowest).",
                 ("Grounder", "Dataset", "Family", "rho", "Q1", "Q2", "Q3", "Q4", "n"),
                 tuple((pair.name, pair.dataset, family_label(c["family"]),
                        "n/a" if c["rho"] != c["rho"] else f"{c['rho']:+.3f}",
                        *(fmt(q) for q in c["quartile_iou"]), str(c["n"]))
                       for c in cells))
    sel_rows = []
    for c in cells:
        for s in c["selective"]:
            sel_rows.append((pair.name, pair.dataset, family_label(c["family"]),
                             f"{s['retention']:.2f}", f"{s['budget_s']:.1f}",
                             f"{s['retained_share']:.2f}", fmt(s["iou_retained"]),
                             "--" if s["retained_share"] >= 1 else fmt(s["iou_abstained"]),
                             fmt(s["coverage_retained"])))
    sel = Table("utility_selective", "Selective prediction: retain a row when its certified "
                "width is within a budget (the width at the requested retention; rows tied "
                "at the budget are all kept, so the realised share can be larger); point-IoU "
                "of retained vs abstained rows and coverage among the retained.",
                ("Grounder", "Dataset", "Family", "Retention", "Budget (s)", "Retained",
                 "IoU ret.", "IoU abst.", "Cov. (ret.)"), tuple(sel_rows))
    data = {"alpha": alpha, "cells": cells}
    return StudyResult("utility", "Downstream utility of the certified width", pair.label,
                       data, [corr, sel])
