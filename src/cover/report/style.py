"""One figure style for every study: the Okabe-Ito colour-blind-safe palette, one colour
and marker per score family, labelled axes with units, PNGs written atomically."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

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


def plt() -> Any:
    """matplotlib.pyplot on the Agg backend, or a clear message naming the extra."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as pyplot
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("figures need matplotlib: pip install 'cover-grounding[plot]'") from exc
    pyplot.rcParams.update({"font.size": 9, "axes.titlesize": 10, "axes.labelsize": 9,
                            "legend.fontsize": 8, "figure.dpi": 110})
    return pyplot


def finish(ax: Any, xlabel: str, ylabel: str, title: str, legend: str | None = "best") -> None:
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    if legend is not None and ax.get_legend_handles_labels()[0]:
        ax.legend(loc=legend)


def fixed_layout(fig: Any) -> None:
    """Margins in inches for figures whose labels sit inside the usual frame (axis labels
    and tick labels, a title of one or two lines per axes, an optional suptitle, legends
    inside the axes): set once, without the extra text-measuring pass of
    ``tight_layout`` (about half the time of a small figure)."""
    w, h = fig.get_size_inches()
    axes = fig.axes
    lines = max((ax.get_title().count("\n") + 1 for ax in axes if ax.get_title()), default=0)
    sup = fig._suptitle is not None and bool(fig._suptitle.get_text())
    title = 0.12 + 0.17 * lines  # one title line of 10 pt and its pad
    top = 0.1 + title + (0.3 if sup else 0.0)
    rows = max((ax.get_subplotspec().get_geometry()[0] for ax in axes
                if ax.get_subplotspec() is not None), default=1)
    left, bottom, right = 0.72, 0.55, 0.18
    panel = (h - top - bottom - (rows - 1) * (title + 0.12)) / rows  # height of one axes
    fig.subplots_adjust(left=left / w, right=1 - right / w, bottom=bottom / h,
                        top=1 - top / h,
                        hspace=(title + 0.12) / panel if rows > 1 else 0.2)


def save(fig: Any, path: str | Path, *, tight: bool = False) -> Path:
    """Write ``fig`` as PNG through the atomic writer and close it: laid out by
    :func:`fixed_layout`, or by ``tight_layout`` when ``tight`` (labels or a legend
    outside the usual frame: long tick labels, a legend beside the axes)."""
    pyplot = plt()
    if tight:
        fig.tight_layout()
    else:
        fixed_layout(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    pyplot.close(fig)
    out = Path(path)
    write_bytes(out, buf.getvalue())
    return out
