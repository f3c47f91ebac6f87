"""What every study returns: machine-readable data, tables of the paper's shape, and the
parts it could not fill (with the piece they need)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from cover.studies.common import Missing, jsonify

_FAMILY_LABEL = {"norm": "NORM", "sec": "SEC", "sls": "SLS"}

#: Marks a validity cell whose calibration scores are tied at the threshold.
TIES_MARK = "†"
TIES_MEANING = ("calibration scores tied at the threshold (in at least half the resamples): "
                "the upper bound 1 - alpha + 1/(n+1) assumes distinct scores and does not "
                "apply, so coverage above it can come from the ties")
TIES_LEGEND = f"{TIES_MARK} = {TIES_MEANING}."


def family_label(family: str) -> str:
    """A score family as tables and figures name it (``norm`` -> ``NORM``)."""
    return _FAMILY_LABEL.get(family, family.upper())


def cell_marks(cell: Any) -> str:
    """`` *`` when a cell's mean coverage is outside its test band, then :data:`TIES_MARK`
    when the upper bound does not apply (ties at the threshold); "" for neither."""
    out = "" if cell.within_band else " *"
    if not cell.upper_bound_applies:
        out += TIES_MARK if out else f" {TIES_MARK}"
    return out


@dataclass(frozen=True)
class Table:
    """One table of the paper's shape. Rows start with the grounder and dataset columns,
    so the tables of several (grounder, dataset) pairs stack into one (same ``key``)."""

    key: str
    caption: str
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]

    def markdown(self) -> str:
        lines = ["| " + " | ".join(self.header) + " |",
                 "|" + "|".join("---" if i < 2 else "---:" for i in range(len(self.header)))
                 + "|"]
        lines += ["| " + " | ".join(r) + " |" for r in self.rows]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "caption": self.caption, "header": list(self.header),
                "rows": [list(r) for r in self.rows]}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Table:
        return cls(d["key"], d["caption"], tuple(d["header"]),
                   tuple(tuple(r) for r in d["rows"]))


def stack(tables: Sequence[Table]) -> list[Table]:
    """Tables with the same key and header merged into one (rows in order of appearance);
    a table whose header differs stays on its own."""
    merged: dict[str | tuple[str, tuple[str, ...]], Table] = {}
    for t in tables:
        if t.key in merged and merged[t.key].header != t.header:
            key: str | tuple[str, tuple[str, ...]] = (t.key, t.header)
            m = merged.get(key)
            merged[key] = t if m is None else Table(m.key, m.caption, m.header, m.rows + t.rows)
        elif t.key in merged:
            m = merged[t.key]
            merged[t.key] = Table(m.key, m.caption, m.header, m.rows + t.rows)
        else:
            merged[t.key] = t
    return list(merged.values())


@dataclass
class StudyResult:
    """One study on one (grounder, dataset) pair, or on a pair of pairs (transfer)."""

    study: str
    title: str
    subject: str
    data: dict[str, Any]
    tables: list[Table] = field(default_factory=list)
    missing: list[Missing] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return jsonify({
            "study": self.study, "title": self.title, "subject": self.subject,
            "data": self.data, "tables": [t.to_dict() for t in self.tables],
            "missing": [{"part": m.part, "needs": m.needs} for m in self.missing],
        })

    def markdown(self) -> str:
        parts = [f"# {self.title}: {self.subject}\n"]
        for t in self.tables:
            parts.append(f"{t.caption}\n\n{t.markdown()}\n")
        for m in self.missing:
            parts.append(f"**Not filled.** {m.text()}.\n")
        return "\n".join(parts)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> StudyResult:
        return cls(d["study"], d["title"], d["subject"], d["data"],
                   [Table.from_dict(t) for t in d.get("tables", [])],
                   [Missing(m["part"], m["needs"]) for m in d.get("missing", [])])


def fmt(x: float, digits: int = 3) -> str:
    """A number for a table cell: fixed digits, ``inf``/``nan`` spelled out."""
    if x != x:
        return "n/a"
    if x in (float("inf"), float("-inf")):
        return "inf" if x > 0 else "-inf"
    return f"{x:.{digits}f}"
