"""The job behind ``cover demo``: QD-DETR's real QVHighlights predictions in; calibrators,
certified regions, the coverage-validity study and an HTML report out."""

from __future__ import annotations

from contextlib import nullcontext
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from cover._progress import Progress
from cover.bands import fitted_clusters
from cover.calibrate import Calibrator
from cover.data.splits import split_by_unit
from cover.data.table import GroundingTable
from cover.errors import say
from cover.io.datasets import DEMO_GROUNDER, QVH_VAL_GT, QVH_VAL_PREDICTIONS, data_dir_for
from cover.io.output import (
    check_results_folder,
    make_folder,
    results_folder,
    strict_json,
    write_json,
    write_text,
)
from cover.io.qids import write_qids
from cover.io.regions_jsonl import certified_rows, write_certified
from cover.jobs.validity import (
    CHECKS_SECTION,
    WHAT_IT_CHECKS,
    labelled,
    validity_body,
    write_validity,
)
from cover.metrics import evaluate
from cover.report.figure_pool import FigurePool, pool_during
from cover.report.tables import validity_summary, validity_table
from cover.studies.coverage_validity import coverage_validity, n_steps
from cover.studies.protocol import Protocol
from cover.studies.result import family_label


def certified_note(n_pool: int, n_test: int, evaluation: dict[str, Any]) -> str:
    """What the alpha = 0.1 table holds, with the run's own sizes, and where its files are."""
    lengths = ", ".join(f"{family_label(f)} {ev['marginal']['mean_length_frac']:.0%}"
                        for f, ev in evaluation.items())
    return (f"One calibrator per family, fitted on the whole calibration pool ({n_pool} "
            f"queries), certifies the {n_test} test queries; expected coverage is k/(n+1) and "
            "its 95% test band adds, to the calibration band (the Beta(k, n+1-k) spread of "
            "one calibration set, widened for calibration queries that share a video), the "
            "test split's own sampling noise, clustered by source video. The price of the "
            f"guarantee is the region's length: on average {lengths} of the video. The "
            "calibrators, the certified test regions and their metrics are in calibrators/, "
            "regions/ and evaluation_alpha0.1.json.")


def certified_table(evaluation: dict[str, Any], *, markdown: bool = False) -> str:
    """One row per family: threshold, coverage against its test band, length, IoU."""
    from cover.report.tables import render

    rows = []
    for fam, ev in evaluation.items():
        m, ref = ev["marginal"], ev["reference"]
        th = ev["threshold"]
        # What the threshold does, in the family's own terms (SLS keeps f(t) >= -lam).
        shown = {"norm": f"± {th:.4g} × pred. length", "sec": f"± {th:.4g} s",
                 "sls": f"clips with relevance ≥ {-th:.4g}"}.get(fam, f"{th:.4g}")
        rows.append([family_label(fam), shown, f"{m['coverage']:.3f}",
                     f"{ref['expected']:.3f} [{ref['band_lo']:.3f}, {ref['band_hi']:.3f}]",
                     f"{m['mean_length_s']:.1f}", f"{m['mean_length_frac']:.1%}",
                     f"{m['mean_iou']:.3f}", f"{m['mean_components']:.2f}",
                     f"{ev['counts']['refused']}"])
    header = ["family", "threshold", "coverage", "k/(n+1) [95% test band]", "length (s)",
              "share of T", "IoU", "components", "refused"]
    return render(header, rows, markdown)


def run_demo(*, out: Path, data_dir: str | None = None, n_resamples: int = 50) -> None:
    """QD-DETR's real QVHighlights val predictions -> calibrators, certified regions,
    the coverage-validity table, JSON, Markdown, figures and an HTML report."""
    rel = QVH_VAL_PREDICTIONS[DEMO_GROUNDER]
    data = data_dir_for((QVH_VAL_GT, rel), data_dir)
    say(f"cover demo: {DEMO_GROUNDER} predictions on QVHighlights val from {data}")
    inputs = [data / rel, data / QVH_VAL_GT]
    check_results_folder(out, inputs)
    pool, table = pool_during(lambda: labelled(data / rel, data / QVH_VAL_GT))
    # Written beside --out and renamed into place when complete (cover.io.folders).
    with pool or nullcontext(), results_folder(out, inputs=inputs) as work:
        _write_demo(work, table, inputs, Protocol(n_resamples=n_resamples), pool)
    say(f"\nwrote {out}/: report.html, report.md, validity.json, validity.md, "
         "coverage_vs_target.png, length_vs_target.png, frontier.png, calibrators/, regions/, "
         "evaluation_alpha0.1.json")


def _write_demo(out: Path, table: GroundingTable, inputs: list[Path],
                protocol: Protocol, figures: FigurePool | None) -> None:
    """Every file of the demo folder, written into ``out`` (the figures by the worker of
    ``figures`` when given)."""
    # 1. The deployable artefacts: a unit-level split, one calibrator per family at
    #    alpha = 0.1 on the whole pool, certified regions and metrics on the test split.
    split = split_by_unit(table.units, cal_frac=protocol.cal_frac, seed=protocol.seed)
    write_qids(out / "calibration_qids.txt", table.qid[split.calibration], inputs=inputs)
    write_qids(out / "test_qids.txt", table.qid[split.test], inputs=inputs)
    pool, test = table.take(split.calibration), table.take(split.test)
    make_folder(out / "calibrators")
    make_folder(out / "regions")
    evaluation: dict[str, Any] = {}
    families = ("norm", "sec", "sls")
    for fam in families:
        cal = Calibrator(score=fam, alpha=0.1).fit(pool)
        write_json(out / "calibrators" / f"{fam}_alpha0.1.json", cal.to_dict(), inputs=inputs)
        regions = cal.certify(test)
        meta = {"score": fam, "rule": cal.rule, "alpha": 0.1, "k": cal.k_,
                "n_calibration": cal.n_}
        write_certified(out / "regions" / f"{fam}_alpha0.1_test.jsonl",
                        certified_rows(test, regions, meta, []), inputs=inputs)
        # the calibration band widened for queries sharing a video, as calibrate prints it
        evaluation[fam] = evaluate(regions, test, calibration=(cal.n_ or 0, cal.k_ or 0),
                                   calibration_clusters=fitted_clusters(cal, pool)
                                   ).to_dict() | {"threshold": cal.threshold_}
    write_json(out / "evaluation_alpha0.1.json", strict_json(evaluation), inputs=inputs)

    # 2. The study: every family over the paper's alpha grid with resampling.
    with Progress("calibrating 3 families x 6 alphas x resamples",
                  n_steps(protocol, families)) as prog:
        res = coverage_validity(table, name=f"{DEMO_GROUNDER} on QVHighlights val",
                                families=families, protocol=protocol, progress=prog)
    from cover.report.demo_summary import demo_summary_html, summary_markdown
    from cover.report.html import write_html
    from cover.studies.conditional import conditional
    from cover.studies.context import Pair

    # The conditional study on the same split: the strata the marginal guarantee misses.
    strata = conditional(Pair(DEMO_GROUNDER, "QVHighlights val", table,
                              Protocol(n_resamples=0)), alpha=0.1).to_dict()
    title = f"{DEMO_GROUNDER} on QVHighlights val"
    summary = partial(demo_summary_html, evaluation=evaluation, validity=res.to_dict(),
                      conditional=strata, target=0.9,
                      mean_duration=float(np.mean(table.duration)))
    lead = summary(title)
    # The console opens as the reports do: where the guarantee falls short, first.
    print(f"\n{summary_markdown(lead, plain=True)}", end="")
    # validity.md, report.md and report.html open alike: the misses first.
    lead_md = summary_markdown(lead)
    # validity.md's title names the pair: its summary does not again.
    figs = write_validity(res, out, float(np.mean(table.duration)), inputs=inputs,
                          lead=f"{summary_markdown(summary(None))}\n", pool=figures)
    certified = certified_table(evaluation)
    print("\nAt alpha = 0.1, calibrated on the whole pool and certified on the test split:")
    print(certified)
    note = certified_note(len(pool), len(test), evaluation)
    resampled = (f"Coverage and length are mean ± sd over {protocol.n_resamples} calibration "
                 "resamples; the figures show the same cells.")
    certified_md = certified_table(evaluation, markdown=True)
    write_text(out / "report.md",
        f"# COVER demo\n\n{lead_md}\n{WHAT_IT_CHECKS}\n\n"
        "## Coverage validity\n\n" + validity_body(res) +
        "\n![coverage](coverage_vs_target.png)\n![length](length_vs_target.png)\n"
        f"![frontier](frontier.png)\n\n## Certified at alpha = 0.1\n\n{note}\n\n"
        f"{certified_md}\n", inputs=inputs)
    if figures is not None:
        figures.finish()  # every PNG written before the report embeds it
    write_html(out / "report.html", f"COVER demo: {title}",
               [CHECKS_SECTION,
                ("Coverage validity", f"{validity_summary(res)} {resampled}",
                 validity_table(res, markdown=True), figs),
                ("Certified at alpha = 0.1", note, certified_md, [])],
               inputs=inputs, lead=lead)
