"""The job behind ``cover validity``: prediction files in; JSON, Markdown, figures and an
HTML report of study 1 (coverage validity) out."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np

from cover._progress import Progress
from cover.errors import RowProblem, report_lines
from cover.io.labelled import load_labelled
from cover.report.tables import multi_validity_table, validity_summary, validity_table
from cover.studies.coverage_validity import ValidityResult, coverage_validity, n_steps
from cover.studies.protocol import PAPER_ALPHAS, Protocol


def _say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "grounder"


def write_validity(result: ValidityResult, out: Path, mean_duration: float) -> list[Path]:
    """JSON + Markdown + figures of one grounder's coverage-validity run."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "validity.json").write_text(json.dumps(result.to_dict(), indent=2) + "\n")
    md = (f"# Coverage validity: {result.name}\n\n{validity_summary(result)}\n\n"
          f"{validity_table(result, markdown=True)}\n\n"
          "Coverage and length are mean ± sd over calibration resamples; `*` marks a mean "
          "outside the reference band k/(n+1) ± 1.96·sqrt(sd_Beta² + sd_test²).\n")
    (out / "validity.md").write_text(md)
    try:
        from cover.report.figures import validity_figures
    except ImportError:  # pragma: no cover
        _say("cover: matplotlib is not installed; skipping figures (pip install '.[plot]')")
        return []
    return validity_figures(result, out, mean_duration)


def run_validity(
    *,
    preds: list[Path],
    gt: Path,
    out: Path,
    names: list[str],
    families: tuple[str, ...] = ("norm", "sec", "sls"),
    alphas: tuple[float, ...] = PAPER_ALPHAS,
    n_resamples: int = 50,
    seed: int = 42,
    cal_frac: float = 0.4,
    min_scale: float = 1.0,
    target: str = "envelope",
    read_options: dict[str, Any] | None = None,
) -> list[ValidityResult]:
    """Study 1 for one or more grounders; one sub-folder each when there are several.
    ``read_options`` go to :func:`cover.io.labelled.load_labelled` (formats, durations)."""
    protocol = Protocol(cal_frac=cal_frac, seed=seed, n_resamples=n_resamples, alphas=alphas)
    results: list[ValidityResult] = []
    sections: list[tuple[str, str, str, list[Path]]] = []
    for path, name in zip(preds, names, strict=True):
        table, problems = load_labelled(path, gt, log=_say, **(read_options or {}))
        _note_problems(problems, str(path))
        with Progress(f"{name}: calibrating", n_steps(protocol, families)) as prog:
            res = coverage_validity(table, name=name, families=families, protocol=protocol,
                                    min_scale=min_scale, target=target, progress=prog)
        results.append(res)
        folder = out if len(preds) == 1 else out / slug(name)
        figs = write_validity(res, folder, float(np.mean(table.duration)))
        print(f"\n{validity_summary(res)}\n")
        print(validity_table(res))
        sections.append((name, validity_summary(res), validity_table(res, markdown=True), figs))
    if len(results) > 1:
        _write_overview(results, out)
    from cover.report.html import write_html

    write_html(out / "report.html", "COVER coverage validity", sections)
    _say(f"wrote {out}/ (validity.json, validity.md, figures, report.html)")
    return results


def _note_problems(problems: list[RowProblem], what: str) -> None:
    for line in report_lines(problems, what=what, limit=1):
        _say(line)


def _write_overview(results: list[ValidityResult], out: Path) -> None:
    parts = ["# Coverage validity across grounders\n"]
    for alpha in results[0].protocol.alphas:
        parts.append(f"## 1 - alpha = {1 - alpha:.2f}\n\n"
                     f"{multi_validity_table(results, alpha)}\n")
    (out / "overview.md").write_text("\n".join(parts))
    (out / "overview.json").write_text(json.dumps([r.to_dict() for r in results], indent=2))
