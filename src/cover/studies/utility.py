"""Study 7, downstream utility of the certified width (paper Tables 15-16; SPEC §6.7).

With the whole pool calibrated at ``alpha`` (1 - alpha = 0.9 by default), over the
non-refused test rows: Spearman rank correlation between certified width and the base
grounder's point-IoU, mean point-IoU by width quartile (Q1 narrowest), and the
selective-prediction rule "retain the narrowest rows" at retentions 20%, 50% and 100%:
point-IoU of retained vs abstained rows, and coverage among the retained (which
marginal theory does not guarantee).

The defaults are the paper's definitions; the others are options, named in the output:

* ``iou="envelope"`` (paper): point-IoU against the envelope of the truth windows, the
  truth COVER certifies. ``"windows"``: max over the windows (QVHighlights' "MR-full").
  On QD-DETR / QVHighlights the two give rho = +0.150 and +0.007.
* ``retention="strict"`` (paper): exactly ``round(r n)`` rows are retained, the narrowest
  by width, ties at the budget broken by row order, so the retained share is the one
  asked for. ``"ties"``: every row within the budget (the width at the requested
  retention) is kept, so ties at the budget (e.g. many whole-video regions) keep more.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cover.calibrate.split import split_conformal
from cover.metrics import point_iou
from cover.studies.common import spearman
from cover.studies.context import Pair
from cover.studies.result import StudyResult, Table, family_label, fmt

RETENTIONS: tuple[float, ...] = (0.2, 0.5, 1.0)
#: Point-IoU definitions: the paper's first.
IOU_DEFINITIONS: dict[str, str] = {
    "envelope": "point-IoU against the envelope of the truth windows (the paper's)",
    "windows": "point-IoU as the max over the truth windows (QVHighlights MR-full)",
}
#: Retention rules: the paper's first.
RETENTION_RULES: dict[str, str] = {
    "strict": "exactly the requested share, the narrowest rows, ties at the budget broken "
              "by row order (the paper's)",
    "ties": "every row within the budget (the width at the requested retention), so ties "
            "at the budget can keep more than the requested share",
}


def _retained(width: np.ndarray, order: np.ndarray, r: float, rule: str
              ) -> tuple[np.ndarray, float]:
    """``(retained mask, budget)`` of retention ``r`` under ``rule``."""
    n_keep = max(round(r * width.size), 1)
    budget = float(width[order[n_keep - 1]]) if width.size else 0.0
    if rule == "ties":
        return width <= budget, budget
    ret = np.zeros(width.size, dtype=bool)
    ret[order[:n_keep]] = True
    return ret, budget


def utility(pair: Pair, alpha: float = 0.1, retentions: tuple[float, ...] = RETENTIONS,
            *, iou: str = "envelope", retention: str = "strict") -> StudyResult:
    """Width vs point-IoU, by quartile, and selective prediction, for NORM and SEC
    (``iou`` and ``retention``: see the module docstring; the defaults are the paper's)."""
    if iou not in IOU_DEFINITIONS:
        raise ValueError(f"iou must be one of {', '.join(IOU_DEFINITIONS)}, got {iou!r}")
    if retention not in RETENTION_RULES:
        raise ValueError(f"retention must be one of {', '.join(RETENTION_RULES)}, "
                         f"got {retention!r}")
    piou_all = point_iou(pair.test, iou)
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
            ret, budget = _retained(width, order, r, retention)
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
                 f"with mean point-IoU by width quartile (Q1 narrowest). IoU: "
                 f"{IOU_DEFINITIONS[iou]}.",
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
    sel = Table("utility_selective", "Selective prediction: retain the rows with the "
                "narrowest certified width (budget = the width at the requested retention). "
                f"Retention: {RETENTION_RULES[retention]}. Point-IoU ({iou}) of retained vs "
                "abstained rows and coverage among the retained.",
                ("Grounder", "Dataset", "Family", "Retention", "Budget (s)", "Retained",
                 "IoU ret.", "IoU abst.", "Cov. (ret.)"), tuple(sel_rows))
    data = {"alpha": alpha, "cells": cells, "iou": iou, "retention": retention,
            "definitions": {"iou": IOU_DEFINITIONS[iou],
                            "retention": RETENTION_RULES[retention]}}
    return StudyResult("utility", "Downstream utility of the certified width", pair.label,
                       data, [corr, sel])
