"""Figures of study results (needs the ``plot`` extra: matplotlib).

Each function writes one PNG and returns its path. Figures are made to be read:
labelled axes with units, the exact-coverage diagonal, the finite-sample
test band, and one colour + marker per score family throughout.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from cover.report.style import (
    FAMILY_STYLE,
    MISSING_PLOTTING,
    TITLE_Y,
    MissingPlotting,
    save,
    subplots,
)
from cover.studies.coverage_validity import ValidityResult
from cover.studies.result import family_label

STYLE = FAMILY_STYLE  # one colour-blind-safe colour + marker per family (report.style)

__all__ = ["MISSING_PLOTTING", "MissingPlotting", "coverage_vs_target", "frontier",
           "length_vs_target", "validity_figures"]


def _finish(ax: Any, xlabel: str, ylabel: str, title: str, legend: str = "upper left") -> None:
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    ax.set_title(title, fontsize=10, y=TITLE_Y)
    ax.legend(fontsize=8, loc=legend)


def _series(result: ValidityResult, family: str, attr: str) -> np.ndarray:
    return np.array([getattr(result.cell(family, a), attr) for a in result.protocol.alphas])


def coverage_vs_target(result: ValidityResult, path: str | Path) -> Path:
    """Realised coverage (mean ± sd over resamples) against 1 - alpha, with the
    diagonal and the ``k/(n+1)`` test band."""
    target = 1 - np.array(result.protocol.alphas)
    order = np.argsort(target)
    fam0 = result.families[0]
    fig, ax = subplots(figsize=(5.6, 4.8), dpi=110)
    lo, hi = _series(result, fam0, "band_lo"), _series(result, fam0, "band_hi")
    ax.fill_between(target[order], lo[order], hi[order], color="0.85",
                    label="95% test band")
    ax.plot([0.45, 1.0], [0.45, 1.0], ls="--", color="0.3", lw=1, label="exact coverage")
    for i, fam in enumerate(result.families):
        st = STYLE.get(fam, {})
        dx = (i - (len(result.families) - 1) / 2) * 0.006  # keep error bars apart
        ax.errorbar(target[order] + dx, _series(result, fam, "coverage_mean")[order],
                    yerr=_series(result, fam, "coverage_sd")[order], capsize=3, lw=1.4,
                    ms=5, label=family_label(fam), **st)
    ax.set_xlim(0.45, 1.0)
    ax.set_ylim(0.45, 1.0)
    ax.set_aspect("equal")
    # The band and the points run along the diagonal: the legend goes bottom right.
    _finish(ax, "target coverage 1 - alpha", "realised coverage on test split",
            f"Coverage vs target: {result.name}", legend="lower right")
    return save(fig, path)


def length_vs_target(result: ValidityResult, path: str | Path,
                     mean_duration: float | None = None) -> Path:
    """Mean region length (s, mean ± sd over resamples) against 1 - alpha."""
    target = 1 - np.array(result.protocol.alphas)
    order = np.argsort(target)
    fig, ax = subplots(figsize=(5.6, 4.8), dpi=110)
    for fam in result.families:
        st = STYLE.get(fam, {})
        ax.errorbar(target[order], _series(result, fam, "length_mean")[order],
                    yerr=_series(result, fam, "length_sd")[order], capsize=3, lw=1.4, ms=5,
                    label=family_label(fam), **st)
    if mean_duration is not None:
        ax.axhline(mean_duration, ls=":", color="0.3", lw=1,
                   label=f"whole video (mean {mean_duration:.0f} s)")
    ax.set_ylim(0, None if mean_duration is None else 1.1 * mean_duration)
    # Lengths rise to the right: the legend goes where the curves are not.
    _finish(ax, "target coverage 1 - alpha", "mean region length (s)",
            f"Region length vs target: {result.name}", legend="lower right")
    return save(fig, path)


def frontier(results: Sequence[ValidityResult] | ValidityResult, path: str | Path) -> Path:
    """Coverage-length frontier: mean length against realised coverage; rings mark
    the 0.8 and 0.9 targets."""
    results = [results] if isinstance(results, ValidityResult) else list(results)
    fig, ax = subplots(figsize=(5.6, 4.8), dpi=110)
    linestyles = ["-", "--", ":", "-."]
    for j, res in enumerate(results):
        alphas = np.array(res.protocol.alphas)
        order = np.argsort(1 - alphas)
        for fam in res.families:
            st = STYLE.get(fam, {})
            cov = _series(res, fam, "coverage_mean")[order]
            length = _series(res, fam, "length_mean")[order]
            label = family_label(fam) if len(results) == 1 else f"{res.name} {family_label(fam)}"
            ax.plot(cov, length, ls=linestyles[j % 4], lw=1.4, ms=5, label=label, **st)
            ring = np.isin(np.round(1 - alphas[order], 2), [0.8, 0.9])
            ax.scatter(cov[ring], length[ring], s=110, facecolors="none",
                       edgecolors=st.get("color", "k"), lw=1.2)
    title = results[0].name if len(results) == 1 else f"{len(results)} grounders"
    _finish(ax, "realised coverage on test split", "mean region length (s)",
            f"Coverage-length frontier: {title}\n(rings mark targets 1 - alpha = 0.8 and 0.9)")
    return save(fig, path)


def validity_figures(result: ValidityResult, out_dir: str | Path,
                     mean_duration: float | None = None,
                     submit: Callable[..., Any] | None = None) -> list[Path]:
    """The three standard figures of a coverage-validity run: drawn here, or handed to
    ``submit`` (a :class:`cover.report.figure_pool.FigurePool`'s, called as
    ``submit(draw, *args, path, **kwargs)``); their paths."""
    d = Path(out_dir)
    todo: list[tuple[Callable[..., Path], Path, dict[str, Any]]] = [
        (coverage_vs_target, d / "coverage_vs_target.png", {}),
        (length_vs_target, d / "length_vs_target.png", {"mean_duration": mean_duration}),
        (frontier, d / "frontier.png", {})]
    if submit is None:
        return [draw(result, path, **kw) for draw, path, kw in todo]
    for draw, path, kw in todo:
        submit(draw, result, path, **kw)
    return [path for _, path, _ in todo]
