"""Across pairs of a ``cover study`` run: the overview table (the field's point metrics
next to what COVER certifies), the comparison figures and the cross-dataset transfer of
each grounder found on two datasets."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cover.io.folders import slug
from cover.io.output import write_json, write_text
from cover.report.figure_pool import FigurePool
from cover.studies.common import Missing
from cover.studies.context import Pair
from cover.studies.result import StudyResult, Table


def overview_table(results: Sequence[StudyResult], target: float = 0.9) -> Table | None:
    """One row per pair: the field's point metrics next to what COVER certifies at
    ``target`` (coverage and length of each family, shortest family's share of the video)."""
    from cover.scores import FAMILIES

    cov = {r.subject: r for r in results if r.study == "coverage"}
    eff = {r.subject: r for r in results if r.study == "efficiency"}
    if not cov:
        return None
    from cover.report.tables import highlight_values

    # HL-mAP / HIT@1 columns only when some pair has highlight labels (QVHighlights).
    hl = any(highlight_values(r.data.get("field_metrics") or {}) for r in cov.values())
    header = ["Grounder", "Dataset", "Test rows", "R1@0.5", "R1@0.7", "mIoU", "mAP"]
    header += ["HL-mAP", "HIT@1"] if hl else []
    header += [f"{f.upper()} cov. / len. (s)" for f in FAMILIES]
    header += ["Shortest: share of video"]
    rows = []
    for subject, r in cov.items():
        d = r.data
        fm = d.get("field_metrics", {}).get("full", {})

        def pm(key: str, fm: dict[str, Any] = fm) -> str:
            v = fm.get(key)
            return f"{v:.2f}" if isinstance(v, (int, float)) else "n/a"

        name, dataset = subject.split(" on ", 1)
        row = [name, dataset, str(d["rows"]["test"]), pm("R1@0.5"), pm("R1@0.7"), pm("mIoU"),
               pm("mAP")]
        if hl:
            v = highlight_values(d.get("field_metrics") or {})
            row += ["n/a", "n/a"] if v is None else [f"{v[0]:.2f}", f"{v[1]:.2f}"]
        for f in FAMILIES:
            c = next((c for c in d["cells"] if c["family"] == f
                      and abs(c["target"] - target) < 1e-9), None)
            row.append("--" if c is None else
                       f"{c['coverage_mean']:.3f} / {c['length_mean']:.1f}")
        e = eff.get(subject)
        cells = [c for c in e.data["cells"] if abs(c["target"] - target) < 1e-9] if e else []
        best = min(cells, key=lambda c: c["length_mean"]) if cells else None
        row.append("n/a" if best is None else
                   f"{best['length_frac_mean']:.0%} ({best['family'].upper()})")
        rows.append(tuple(row))
    return Table("overview", f"Every pair at target {target:.2f}: the field's point metrics of "
                 "the grounder on the test split (percent; Moment-DETR's evaluator; HL-mAP and "
                 "HIT@1 at the VeryGood level where there are highlight labels) next to "
                 "COVER's realised coverage / mean region length per family, and what the "
                 "shortest family's region costs as share of the video.", tuple(header),
                 tuple(rows))


def comparisons(results: list[StudyResult], pairs: list[Pair], out: Path,
                pool: FigurePool | None) -> list[dict[str, str]]:
    """Comparison figures across pairs (submitted to ``pool``), each with the section it
    belongs to: coverage with bands and cost at the 0.9 target (overview), hand-picked
    margins (margins); none without a ``pool``."""
    figs: list[dict[str, str]] = []
    if pool is None:
        return figs
    from cover.report import figures_studies as fs

    by = {s: [r for r in results if r.study == s] for s in ("coverage", "efficiency",
                                                            "margins")}
    if len(by["coverage"]) > 1:
        rows = []
        for r in by["coverage"]:
            cells = [c for c in r.data["cells"] if abs(c["target"] - 0.9) < 1e-9]
            if cells:
                rows.append({"label": r.subject, "band_lo": cells[0]["band_lo"],
                             "band_hi": cells[0]["band_hi"],
                             "coverage": {c["family"]: c["coverage_mean"] for c in cells}})
        if rows:
            pool.submit(fs.compare_coverage, rows, 0.9, out / "compare_coverage.png")
            figs.append({"study": "overview", "path": "compare_coverage.png"})
    if len(by["efficiency"]) > 1:
        rows = [{"label": r.subject, "share": {c["family"]: c["length_frac_mean"]
                                               for c in r.data["cells"]
                                               if abs(c["target"] - 0.9) < 1e-9}}
                for r in by["efficiency"]]
        pool.submit(fs.compare_length, rows, 0.9, out / "compare_length.png")
        figs.append({"study": "overview", "path": "compare_length.png"})
    if len(by["margins"]) > 1:
        rows = [{"label": r.subject, "lams": r.data["lams"], "coverage": r.data["coverage"]}
                for r in by["margins"]]
        pool.submit(fs.compare_margins, rows, out / "compare_margins.png")
        figs.append({"study": "margins", "path": "compare_margins.png"})
    return figs


def run_transfers(pairs: list[Pair], out: Path, all_inputs: list[Path],
                   results: list[StudyResult], figs: FigurePool | None
                   ) -> list[dict[str, Any]]:
    """Transfer for every grounder name that appears on two datasets (first two)."""
    from cover.report.figures_studies import transfer_ks
    from cover.studies.transfer import transfer

    done = []
    by_name: dict[str, list[Pair]] = {}
    for p in pairs:
        by_name.setdefault(p.name, []).append(p)
    for name, group in by_name.items():
        datasets = list(dict.fromkeys(p.dataset for p in group))
        if len(datasets) < 2:
            continue
        a = next(p for p in group if p.dataset == datasets[0])
        b = next(p for p in group if p.dataset == datasets[1])
        res = transfer(a, b)
        folder = out / f"transfer-{slug(name)}"
        folder.mkdir(exist_ok=True)
        write_json(folder / "transfer.json", res.to_dict(), inputs=all_inputs)
        write_text(folder / "transfer.md", res.markdown(), inputs=all_inputs)
        if figs is not None:
            figs.submit(transfer_ks, res.data, name, folder / "transfer_ks.png")
        results.append(res)
        done.append({"name": name, "datasets": [a.dataset, b.dataset],
                     "json": f"{folder.name}/transfer.json",
                     "figures": [] if figs is None else [f"{folder.name}/transfer_ks.png"]})
    if not done:
        results.append(StudyResult("transfer", "Cross-dataset transfer", "no pair", {}, [], [
            Missing("Cross-dataset transfer", "one grounder (same --name) on two datasets")]))
    return done
