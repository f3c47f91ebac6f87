"""Benchmark tables: one row per implementation, one column per workload, in Markdown."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from timing import Timing, fmt_time, ratio


@dataclass
class Cell:
    timing: Timing | None
    ratio: tuple[float, float, float] | None = None
    agrees: str = ""  # "" = not checked, "yes", or a short reason


@dataclass
class Row:
    impl: str
    ref: str | None  # name of the COVER row the ratio is relative to
    cells: dict[str, Cell] = field(default_factory=dict)


class Stage:
    """One table: rows are implementations, columns workloads; each cell the median time
    with its min–max, and the median round-by-round ratio to the row's COVER reference."""

    def __init__(self, title: str, note: str) -> None:
        self.title, self.note = title, note
        self.rows: dict[str, Row] = {}
        self.columns: list[str] = []

    def add(self, col: str, impl: str, ref: str | None, timing: Timing | None,
            agrees: str = "") -> None:
        if col not in self.columns:
            self.columns.append(col)
        row = self.rows.setdefault(impl, Row(impl, ref))
        row.cells[col] = Cell(timing, None, agrees)

    def finish(self) -> None:
        for row in self.rows.values():
            for col, cell in row.cells.items():
                if row.ref is None or cell.timing is None or row.ref == row.impl:
                    continue
                ref = self.rows[row.ref].cells.get(col)
                if ref is not None and ref.timing is not None:
                    cell.ratio = ratio(cell.timing, ref.timing)

    def _cell(self, row: Row, c: Cell | None) -> str:
        if c is None:
            return "—"
        if c.timing is None:
            return c.agrees or "n/a"
        t = c.timing
        text = f"{fmt_time(t.median)} [{fmt_time(t.min)}–{fmt_time(t.max)}]"
        if row.ref == row.impl:
            return f"**{text}**"
        if c.ratio is None:
            return text
        lo, med, hi = c.ratio
        return f"{text} (**{med:.2f}×**, {lo:.2f}–{hi:.2f})"

    def markdown(self) -> str:
        head = ["implementation", *self.columns, "agrees with COVER"]
        lines = [f"### {self.title}", "", self.note, "",
                 "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for row in self.rows.values():
            cells = [self._cell(row, row.cells.get(col)) for col in self.columns]
            checks = [(col, row.cells[col].agrees) for col in self.columns
                      if col in row.cells and row.cells[col].timing is not None
                      and row.cells[col].agrees]
            if row.ref == row.impl or not checks:
                verdict = "(reference)" if row.ref == row.impl else "—"
            elif all(a == "yes" or a.startswith("yes ") for _, a in checks):
                verdict = "yes"
            else:
                verdict = "; ".join(f"{col}: {a}" for col, a in checks if a != "yes")
            lines.append(f"| {row.impl} | " + " | ".join(cells) + f" | {verdict} |")
        return "\n".join(lines)


def same(a: float, b: float) -> str:
    return "yes" if a == b else f"no ({a:.6g} vs {b:.6g})"


def same_arrays(pairs: list[tuple[Any, Any]]) -> str:
    for a, b in pairs:
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape:
            return f"no (shape {a.shape} vs {b.shape})"
        if not np.array_equal(a, b):
            diff = float(np.max(np.abs(a.astype(float) - b.astype(float))))
            if diff <= 1e-9:
                return f"yes (max abs diff {diff:.1e} s)"
            return f"no (max abs diff {diff:.3g})"
    return "yes"
