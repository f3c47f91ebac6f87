"""One figure style for every study: the Okabe-Ito colour-blind-safe palette, one colour
and marker per score family, labelled axes with units, PNGs written atomically.

Figures are drawn on ``matplotlib.figure.Figure`` with the Agg canvas directly: no pyplot
state machine (no figure manager, nothing to close), so a figure is drawn the same in this
process or in the figure worker (:mod:`cover.report.figure_pool`).
"""

from __future__ import annotations

import contextlib
import functools
import io
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from cover.io.output import write_bytes

#: Okabe-Ito palette (distinguishable under the common colour-vision deficiencies).
OKABE_ITO = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442",
             "#000000")
FAMILY_STYLE: dict[str, dict[str, str]] = {
    "norm": {"color": "#0072B2", "marker": "o"},
    "sec": {"color": "#D55E00", "marker": "s"},
    "sls": {"color": "#009E73", "marker": "^"},
}
BAND_COLOR = "0.85"
TRUTH_COLOR = "#000000"
PRED_COLOR = "#CC79A7"

#: Text sizes of the study figures (:mod:`cover.report.figures_studies`); the validity
#: figures (:mod:`cover.report.figures`) keep matplotlib's defaults and set sizes per call.
#: (Keys typed ``Any``: matplotlib's stubs take only literal key names.)
STUDY_RC: dict[Any, Any] = {"font.size": 9, "axes.titlesize": 10, "axes.labelsize": 9,
                             "legend.fontsize": 8, "figure.dpi": 110}

#: zlib level of the PNGs: the figures are flat colours, so level 1 gives files within a
#: few per cent of the default level 6 in a fraction of the encoding time.
PNG_COMPRESS_LEVEL = 1

#: Titles sit at the top of their axes (plus the title pad). Given explicitly, so that
#: matplotlib does not measure every tick label at each draw to see whether labels on top
#: or an offset text would collide (none of these figures has either): about a fifth of
#: a figure's drawing, and the same pixels.
TITLE_Y = 1.0

MISSING_PLOTTING = "figures need matplotlib: pip install 'cover-grounding[plot]'"

# Set inside :func:`capture_pngs`: PNGs are collected there instead of written.
_CAPTURED: ContextVar[list[tuple[Path, bytes]] | None] = ContextVar("_CAPTURED", default=None)


class MissingPlotting(ImportError):
    """matplotlib (the ``plot`` extra) is not installed."""


def subplots(*args: Any, figsize: tuple[float, float], dpi: float | None = None,
             **kwargs: Any) -> tuple[Any, Any]:
    """A new figure on the Agg canvas and its axes (``Figure.subplots`` arguments), or
    :class:`MissingPlotting` naming the extra."""
    try:
        # the package first: its submodules may be loaded while it is not importable
        import matplotlib  # noqa: F401
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise MissingPlotting(MISSING_PLOTTING) from None
    fig = Figure(figsize=figsize, dpi=dpi)
    FigureCanvasAgg(fig)
    return fig, fig.subplots(*args, **kwargs)


@contextlib.contextmanager
def study_style() -> Iterator[None]:
    """Draw (and save) a study figure inside this block: :data:`STUDY_RC` applies to it
    alone, whatever was drawn before in the process."""
    try:
        import matplotlib
    except ImportError:
        raise MissingPlotting(MISSING_PLOTTING) from None
    with matplotlib.rc_context():
        matplotlib.rcParams.update(STUDY_RC)
        yield


_P = ParamSpec("_P")
_R = TypeVar("_R")


def study_figure(draw: Callable[_P, _R]) -> Callable[_P, _R]:
    """Decorator: ``draw`` runs inside :func:`study_style`."""
    @functools.wraps(draw)
    def styled(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        with study_style():
            return draw(*args, **kwargs)
    return styled


def finish(ax: Any, xlabel: str, ylabel: str, title: str, legend: str | None = "best") -> None:
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, y=TITLE_Y)
    ax.grid(alpha=0.3)
    if legend is not None and ax.get_legend_handles_labels()[0]:
        ax.legend(loc=legend)


def fixed_layout(fig: Any, *, beside: bool = False) -> None:
    """Margins in inches for figures whose labels sit inside the usual frame (axis labels
    and tick labels, a title of one or two lines per axes, an optional suptitle, legends
    inside the axes): set once, without the extra text-measuring pass of
    ``tight_layout`` (about half the time of a small figure). ``beside``: a legend
    anchored just right of its axes (``bbox_to_anchor=(1.01, 1.0)``); the right margin
    is its measured width (the legend alone is laid out, its text metrics then cached
    for the drawing)."""
    w, h = fig.get_size_inches()
    axes = fig.axes
    lines = max((ax.get_title().count("\n") + 1 for ax in axes if ax.get_title()), default=0)
    sup = fig._suptitle is not None and bool(fig._suptitle.get_text())
    title = 0.12 + 0.17 * lines  # one title line of 10 pt and its pad
    top = 0.1 + title + (0.3 if sup else 0.0)
    rows = max((ax.get_subplotspec().get_geometry()[0] for ax in axes
                if ax.get_subplotspec() is not None), default=1)
    left, bottom, right = 0.72, 0.55, 0.18
    if beside:
        renderer = fig.canvas.get_renderer()
        legend = max((ax.get_legend().get_window_extent(renderer).width for ax in axes
                      if ax.get_legend() is not None), default=0.0) / fig.dpi
        # right = 0.01 * (axes width) + legend + pad, the axes width being w - left - right
        right = (0.01 * (w - left) + legend + 0.15) / 1.01
    panel = (h - top - bottom - (rows - 1) * (title + 0.12)) / rows  # height of one axes
    fig.subplots_adjust(left=left / w, right=1 - right / w, bottom=bottom / h,
                        top=1 - top / h,
                        hspace=(title + 0.12) / panel if rows > 1 else 0.2)


@contextlib.contextmanager
def capture_pngs() -> Iterator[list[tuple[Path, bytes]]]:
    """Inside this block :func:`save` writes no file: it appends (path, PNG bytes) to the
    list yielded, for the caller to write (the figure worker hands them back this way)."""
    got: list[tuple[Path, bytes]] = []
    token = _CAPTURED.set(got)
    try:
        yield got
    finally:
        _CAPTURED.reset(token)


def save(fig: Any, path: str | Path, *, tight: bool = False, beside: bool = False) -> Path:
    """Write ``fig`` as PNG through the atomic writer (or to :func:`capture_pngs`): laid
    out by :func:`fixed_layout` (``beside``: with a legend right of the axes), or by
    ``tight_layout`` when ``tight`` (tick labels of any length outside the usual frame)."""
    if tight:
        fig.tight_layout()
    else:
        fixed_layout(fig, beside=beside)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", pil_kwargs={"compress_level": PNG_COMPRESS_LEVEL})
    out = Path(path)
    captured = _CAPTURED.get()
    if captured is None:
        write_bytes(out, buf.getvalue())
    else:
        captured.append((out, buf.getvalue()))
    return out
