"""Figures of studies 2-8, drawn from each study's JSON data (``StudyResult.data``).

Every function writes one PNG (atomically) and returns its path; axes carry units,
colours follow :mod:`cover.report.style`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from cover.report.style import (
    BAND_COLOR,
    FAMILY_STYLE,
    OKABE_ITO,
    finish,
    save,
    study_figure,
    subplots,
)
from cover.studies.result import family_label


@study_figure
def margins_sweep(data: dict[str, Any], name: str, path: Path) -> Path:
    """Coverage of hand-picked SEC margins (x: margin, s) vs the calibrated targets."""
    fig, ax = subplots(figsize=(5.6, 4.0))
    lams = np.array(data["lams"], dtype=float)
    ax.plot(lams, data["coverage"], marker="s", color=FAMILY_STYLE["sec"]["color"],
            label="fixed margin (uncalibrated)")
    for c, ls in zip(data["calibrated"], (":", "--"), strict=False):
        ax.axhline(c["target"], ls=ls, color="0.3", lw=1,
                   label=f"target {c['target']:.2f} (calibrated SEC: {c['coverage_mean']:.3f})")
    ax.set_xscale("log", base=2)
    ax.set_xticks(lams, [f"{x:g}" for x in lams])
    ax.set_xticks([], minor=True)
    ax.set_ylim(0, 1.02)
    finish(ax, "hand-picked margin lam (s, log scale)", "realised coverage on test split",
           f"Uncalibrated margins: {name}", legend="lower right")
    return save(fig, path)


@study_figure
def conditional_strata(data: dict[str, Any], name: str, path: Path) -> Path:
    """Coverage per stratum (diagnostic half; Mondrian when present) against the target."""
    cells = [c for c in data["cells"] if c["family"] in ("norm", "sec")]
    strata = list(dict.fromkeys(c["stratum"] for c in cells))
    series = list(dict.fromkeys((c["half"], c["family"]) for c in cells))
    fig, ax = subplots(figsize=(7.6, 4.0))
    width = 0.8 / max(len(series), 1)
    x = np.arange(len(strata))
    for i, (half, fam) in enumerate(series):
        vals = [next((c["coverage"] for c in cells if c["half"] == half and c["family"] == fam
                      and c["stratum"] == s), np.nan) for s in strata]
        st = FAMILY_STYLE.get(fam, {})
        ax.bar(x + (i - (len(series) - 1) / 2) * width, vals, width=width,
               color=st.get("color"), alpha=1.0 if half == "diagnostic" else 0.55,
               hatch="" if half == "diagnostic" else "//", edgecolor="white",
               label=f"{family_label(fam)}, {half}")
    ax.axhline(data["target"], ls="--", color="0.2", lw=1, label=f"target {data['target']:.2f}")
    ax.axhspan(data["target"] - 0.02, data["target"], color=BAND_COLOR, alpha=0.6,
               label="within 0.02 below target")
    ax.set_xticks(x, strata)
    lo = min([c["coverage"] for c in cells] + [data["target"]]) - 0.08
    ax.set_ylim(max(lo, 0), 1.0)
    finish(ax, "stratum of the test split (Mondrian bars: predicted-length terciles)",
           "realised coverage", f"Conditional coverage: {name}", legend=None)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return save(fig, path, beside=True)


@study_figure
def calsize_spread(data: dict[str, Any], name: str, path: Path) -> Path:
    """Coverage mean ± sd vs calibration size (units), with the Beta prediction."""
    cells = [c for c in data["cells"] if c["supported"]]
    fig, ax = subplots(figsize=(5.6, 4.0))
    n = np.array([c["n_units"] for c in cells], dtype=float)
    mu = np.array([c["coverage_mean"] for c in cells])
    sd = np.array([c["coverage_sd"] for c in cells])
    bm = np.array([c["beta_mean"] for c in cells])
    bs = np.array([c["beta_sd"] for c in cells])
    ax.fill_between(n, bm - bs, bm + bs, color=BAND_COLOR, label="Beta prediction (mean ± sd)")
    ax.errorbar(n, mu, yerr=sd, marker="o", capsize=3, color=FAMILY_STYLE["norm"]["color"],
                label="realised (mean ± sd over subsamples)")
    ax.axhline(1 - data["alpha"], ls="--", color="0.3", lw=1,
               label=f"target {1 - data['alpha']:.2f}")
    ax.set_xscale("log")
    ax.set_xticks(n, [f"{int(x)}" for x in n])
    ax.set_xticks([], minor=True)
    finish(ax, "calibration size (units = source videos, log scale)", "realised coverage",
           f"Calibration size: {name}", legend="lower right")
    return save(fig, path)


@study_figure
def transfer_ks(data: dict[str, Any], name: str, path: Path) -> Path:
    """Cross-dataset KS per feature against the within-dataset noise floor."""
    shift = data["shift"]
    fig, ax = subplots(figsize=(8.6, 4.0))
    y = np.arange(len(shift))
    a, b = data["datasets"]
    ax.barh(y + 0.27, [r["cross"] for r in shift], height=0.26, color=OKABE_ITO[1],
            label=f"cross ({a} pool vs {b} test)")
    ax.barh(y, [r["within_source"] for r in shift], height=0.26, color=OKABE_ITO[0],
            label=f"within {a} (noise floor)")
    ax.barh(y - 0.27, [r["within_target"] for r in shift], height=0.26, color=OKABE_ITO[5],
            label=f"within {b} (noise floor)")
    ax.set_yticks(y, [r["feature"] for r in shift])
    ax.invert_yaxis()
    ax.set_xlim(0, 1.0)
    finish(ax, "two-sample KS statistic (0 = same distribution, 1 = disjoint)", "",
           f"Covariate shift: {name}", legend=None)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return save(fig, path, tight=True)


@study_figure
def compare_margins(rows: Sequence[dict[str, Any]], path: Path) -> Path:
    """Coverage of the hand-picked SEC margins for every pair (one line each)."""
    fig, ax = subplots(figsize=(8.0, 4.4))
    markers = "osD^vP*Xh<>"
    ax.set_xscale("log", base=2)  # before the ticks: setting the scale resets them
    for j, r in enumerate(rows):
        lams = np.asarray(r["lams"], dtype=float)
        ax.plot(lams, r["coverage"], marker=markers[j % len(markers)], lw=1.2,
                color=OKABE_ITO[j % len(OKABE_ITO)], label=r["label"])
        ax.set_xticks(lams, [f"{x:g}" for x in lams])
    ax.set_xticks([], minor=True)
    for t, ls in ((0.8, ":"), (0.9, "--")):
        ax.axhline(t, ls=ls, color="0.3", lw=1)
    ax.set_ylim(0, 1.02)
    finish(ax, "hand-picked margin lam (s, log scale); dashed/dotted: targets 0.9/0.8",
           "realised coverage on test split", "Uncalibrated margins, every grounder",
           legend=None)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return save(fig, path, tight=True)


@study_figure
def compare_coverage(rows: Sequence[dict[str, Any]], target: float, path: Path) -> Path:
    """Realised coverage of every (grounder, dataset) and family at one target, with each
    pair's 95% test band."""
    fig, ax = subplots(figsize=(8.0, 0.5 * len(rows) + 1.6))
    y = np.arange(len(rows))
    for j, r in enumerate(rows):
        ax.plot([r["band_lo"], r["band_hi"]], [j, j], color=BAND_COLOR, lw=8,
                solid_capstyle="butt", label="95% test band" if j == 0 else None)
    fams = list(dict.fromkeys(f for r in rows for f in r["coverage"]))
    for i, fam in enumerate(fams):
        st = FAMILY_STYLE.get(fam, {})
        xs = [r["coverage"].get(fam, np.nan) for r in rows]
        ax.scatter(xs, y + (i - 1) * 0.18, color=st.get("color"), marker=st.get("marker", "o"),
                   zorder=3, label=family_label(fam))
    ax.axvline(target, ls="--", color="0.3", lw=1, label=f"target {target:.2f}")
    ax.set_yticks(y, [r["label"] for r in rows])
    ax.invert_yaxis()
    finish(ax, "realised coverage on test split (mean over resamples)", "",
           f"Coverage at target {target:.2f}, every grounder", legend=None)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return save(fig, path, tight=True)


@study_figure
def compare_length(rows: Sequence[dict[str, Any]], target: float, path: Path) -> Path:
    """Mean region length per family for every pair at one target, as share of the video."""
    fig, ax = subplots(figsize=(8.0, 0.6 * len(rows) + 1.6))
    y = np.arange(len(rows))
    fams = list(dict.fromkeys(f for r in rows for f in r["share"]))
    h = 0.8 / max(len(fams), 1)
    for i, fam in enumerate(fams):
        st = FAMILY_STYLE.get(fam, {})
        ax.barh(y + (i - (len(fams) - 1) / 2) * h, [100 * r["share"].get(fam, np.nan)
                                                     for r in rows],
                height=h, color=st.get("color"), label=family_label(fam))
    ax.axvline(100, ls=":", color="0.3", lw=1, label="whole video")
    ax.set_yticks(y, [r["label"] for r in rows])
    ax.invert_yaxis()
    ax.set_xlim(0, 105)
    finish(ax, "mean region length (% of the video)", "",
           f"What a {target:.0%} guarantee costs, every grounder", legend=None)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return save(fig, path, tight=True)


@study_figure
def aci_rolling(data: dict[str, Any], name: str, path: Path) -> Path:
    """Trailing-window miss rate of the fixed split threshold and of online ACI along the
    test stream, per stream order, against alpha."""
    online = data["online"]
    orders = list(online["orders"].items())
    fig, axes = subplots(len(orders), 1, figsize=(6.4, 2.3 * len(orders) + 0.6), sharex=True,
                           squeeze=False)
    for ax, (order, d) in zip(axes[:, 0], orders, strict=True):
        t = np.arange(1, len(d["rolling_aci"]) + 1)
        full = t >= online["window"]  # partial windows at the start are noise
        t = t[full]
        split_r = np.asarray(d["rolling_split"])[full]
        aci_r = np.asarray(d["rolling_aci"])[full]
        ax.plot(t, split_r, color=OKABE_ITO[1], lw=1.2,
                label=f"split conformal, fixed threshold (overall {d['split_miss_rate']:.3f})")
        ax.plot(t, aci_r, color=OKABE_ITO[0], lw=1.2,
                label=f"online ACI (overall {d['aci_miss_rate']:.3f})")
        ax.axhline(online["alpha"], ls="--", color="0.2", lw=1,
                   label=f"alpha = {online['alpha']}")
        ax.set_ylim(0, max(0.3, 1.1 * float(max(split_r.max(), aci_r.max()))))
        finish(ax, "", f"miss rate, last {online['window']}", f"stream order: {order}",
               legend="upper left")
    axes[-1, 0].set_xlabel("test query in stream order (step)")
    fig.suptitle(f"Online ACI vs fixed threshold: {name}", fontsize=10)
    return save(fig, path)
