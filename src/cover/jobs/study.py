"""The job behind ``cover study``: (prediction, ground truth) pairs in; per pair and per
study JSON, Markdown tables of the paper's shape and figures; cross-pair overview
tables and comparison figures; a ``manifest.json`` the report reads; ``report.html``.

Layout of the results folder::

    manifest.json            command, protocol, pairs, studies run, timings
    tables.md                every table, stacked across pairs (paper shape)
    <pair>/<study>.json|md   one study on one (grounder, dataset) pair
    <pair>/*.png             its figures;  <pair>/queries.json  gallery data
    transfer-<grounder>/     cross-dataset transfer of one grounder
    compare_*.png            comparison figures across pairs
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from cover._version import __version__
from cover.data.table import GroundingTable
from cover.errors import report_problems, say
from cover.io.labelled import load_labelled
from cover.io.output import check_results_folder, results_folder, write_json, write_text
from cover.jobs.study_inputs import InputPair
from cover.jobs.study_overview import comparisons, overview_table, run_transfers
from cover.jobs.study_seeds import check_split_seeds, pair_spread
from cover.report.figure_pool import STUDIES_WITH_FIGURES, FigurePool, pool_during
from cover.studies.common import jsonify
from cover.studies.context import Pair
from cover.studies.minimum import check_enough_rows
from cover.studies.protocol import Protocol
from cover.studies.result import StudyResult, stack
from cover.studies.seed_spread import STUDY_KEY

#: Every study, in the order of SPEC §6 (``all`` runs them all).
STUDIES: tuple[str, ...] = ("coverage", "efficiency", "margins", "two-param", "rcps",
                            "conditional", "transfer", "calsize", "utility",
                            "exchangeability", "uncertainty")

#: The options of ``cover study`` that give a study more calibration or test rows.
STUDY_FLAGS = ("--alphas", "--cal-frac", "--resample-frac")


def per_pair_runners() -> dict[str, Callable[[Pair], StudyResult]]:
    """The per-pair studies of ``cover study all`` other than coverage (whose runner also
    gives the validity result) and transfer (two datasets), by name, in their order."""
    from cover.studies import (
        calsize,
        conditional,
        efficiency,
        exchangeability,
        margins,
        rcps,
        two_param,
        uncertainty,
        utility,
    )

    table: dict[str, Callable[[Pair], StudyResult]] = {
        "efficiency": efficiency.efficiency, "margins": margins.margins,
        "two-param": two_param.two_param, "rcps": rcps.rcps,
        "conditional": conditional.conditional, "calsize": calsize.calsize,
        "utility": utility.utility, "exchangeability": exchangeability.exchangeability,
        "uncertainty": uncertainty.uncertainty,
    }
    return table


def _load(inputs: Sequence[InputPair], timings: dict[str, float],
          read: dict[str, Any] | None = None) -> list[tuple[GroundingTable, dict[str, int]]]:
    """Every labelled table, with the counts of its input problems (reported as read);
    ``read`` are :func:`cover.io.labelled.load_labelled`'s format options."""
    out = []
    for inp in inputs:
        t0 = time.perf_counter()
        table, problems = load_labelled(inp.preds, inp.gt, **(read or {}))
        timings[f"load {inp.id}"] = time.perf_counter() - t0
        report_problems(problems, what=f"{inp.preds} joined with {inp.gt}", limit=1)
        out.append((table, {k: sum(1 for p in problems if p.action == k)
                            for k in ("clipped", "rejected", "refused")}))
    return out


def _run_pair(pair: Pair, inp: InputPair, wanted: Sequence[str], out: Path,
              all_inputs: list[Path], timings: dict[str, float], skip: set[str],
              gallery_alpha: float, figs: FigurePool | None
              ) -> tuple[dict[str, Any], list[StudyResult]]:
    """Every wanted per-pair study on one pair: JSON, Markdown, figures (to ``figs``,
    when given), gallery data."""
    folder = out / inp.id
    folder.mkdir(exist_ok=True)
    entry: dict[str, Any] = {
        "id": inp.id, "name": inp.name, "dataset": inp.dataset, "preds": str(inp.preds),
        "gt": str(inp.gt), "rows": len(pair.table), "pool_rows": len(pair.pool),
        "test_rows": len(pair.test), "pool_units": pair.split.n_units_calibration,
        "test_units": pair.split.n_units_test, "families": list(pair.families),
        "mean_duration": pair.mean_duration, "studies": {}, "figures": {},
    }
    todo = [s for s in wanted if s != "transfer" and s not in skip]
    # With figures, the studies that have some run first: the worker draws while the
    # others are computed. Each study is seeded on its own, so the order changes no
    # number; the results are filed in ``wanted`` order below.
    done: dict[str, StudyResult] = {}
    for study in (todo if figs is None
                  else sorted(todo, key=lambda s: s not in STUDIES_WITH_FIGURES)):
        t0 = time.perf_counter()
        extra = None
        if study == "coverage":
            from cover.studies.coverage import coverage

            res, extra = coverage(pair)
        else:
            res = per_pair_runners()[study](pair)
        timings[f"{study} {inp.id}"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        stem = study.replace("-", "_")
        write_json(folder / f"{stem}.json", res.to_dict(), inputs=all_inputs)
        write_text(folder / f"{stem}.md", res.markdown(), inputs=all_inputs)
        entry["studies"][study] = f"{inp.id}/{stem}.json"
        entry["figures"][study] = ([] if figs is None else
                                   figs.study(study, res.data, extra, folder,
                                              label=pair.label,
                                              mean_duration=pair.mean_duration))
        timings[f"write + figures {inp.id}"] = timings.get(
            f"write + figures {inp.id}", 0.0) + time.perf_counter() - t0
        done[study] = res
    for key in ("studies", "figures"):
        entry[key] = {s: entry[key][s] for s in todo}
    from cover.report.gallery_data import query_records

    write_json(folder / "queries.json", query_records(pair, gallery_alpha), inputs=all_inputs,
               indent=None)
    entry["queries"] = f"{inp.id}/queries.json"
    return entry, [done[s] for s in todo]


def run_studies(
    *,
    studies: Sequence[str],
    inputs: Sequence[InputPair],
    out: Path,
    protocol: Protocol,
    min_scale: float = 1.0,
    target: str = "envelope",
    command: str = "",
    gallery_alpha: float = 0.1,
    humans_dir: Path | None = None,
    read: dict[str, Any] | None = None,
    split_seeds: int = 0,
    report: bool = False,
    figures: bool = True,
) -> dict[str, Any]:
    """Run ``studies`` over every input pair; write the results folder (all or nothing,
    with the HTML report when ``report`` and the figures when ``figures``: they exist
    for the report, and rendering them is most of a run's time); return the manifest.

    Study 9 (uncertainty) runs on the pairs whose predictions report ``start_std`` /
    ``end_std``; when none does it runs on all, so that the output says what it needs.
    ``humans_dir`` (a data folder with the re-annotations) adds the human-grounder table.
    ``split_seeds`` > 0 adds the split-seed spread of studies 1, 2 and 4 per pair
    (:mod:`cover.jobs.study_seeds`).
    """
    check_split_seeds(split_seeds, target)
    wanted = list(STUDIES) if "all" in studies else [s for s in STUDIES if s in studies]
    all_inputs = [p for x in inputs for p in (x.preds, x.gt)]
    check_results_folder(out, all_inputs)
    t_start = time.perf_counter()
    timings: dict[str, float] = {}
    def load() -> tuple[list[tuple[GroundingTable, dict[str, int]]], list[set[str]]]:
        loaded = _load(inputs, timings, read)
        any_std = any(t.start_std is not None for t, _ in loaded)
        skips = [{"uncertainty"} if any_std and t.start_std is None else set()
                 for t, _ in loaded]
        # Too few rows for a study: an error before the results folder is made.
        for inp, (table, _), skip in zip(inputs, loaded, skips, strict=True):
            check_enough_rows(table.units, protocol, [s for s in wanted if s not in skip],
                              what=str(inp.preds), flags=STUDY_FLAGS)
        return loaded, skips

    # The figure worker starts before the inputs are read: it imports matplotlib while
    # this process reads and computes (cover.report.figure_pool).
    figs, (loaded, skips) = pool_during(load, wanted=figures, needs_matplotlib=False)
    # The folder is built beside --out and renamed into place once complete
    # (cover.io.folders): ``out`` names the temporary folder inside this block. The
    # pool's exit stops its worker on every path.
    with figs or contextlib.nullcontext(), results_folder(out, inputs=all_inputs) as out:
        pairs: list[Pair] = []
        manifest_pairs: list[dict[str, Any]] = []
        results: list[StudyResult] = []
        for inp, (table, problems), skip in zip(inputs, loaded, skips, strict=True):
            pair = Pair(inp.name, inp.dataset, table, protocol, min_scale, target)
            pairs.append(pair)
            entry, res = _run_pair(pair, inp, wanted, out, all_inputs, timings, skip,
                                   gallery_alpha, figs)
            entry["problems"] = problems
            if split_seeds:
                res += pair_spread(pair, inp, wanted, skip, split_seeds, entry, out, all_inputs,
                                    timings)
            manifest_pairs.append(entry)
            results += res
            say(f"cover: {pair.label}: {', '.join(s for s in wanted if s not in skip)} done")
        transfers = (run_transfers(pairs, out, all_inputs, results, figs)
                     if "transfer" in wanted else [])
        figs_across = comparisons(results, pairs, out, figs)
        if figs is not None:
            figs.finish()  # every PNG written before the manifest that lists it
        if humans_dir is not None:
            from cover.studies.humans import humans

            t0 = time.perf_counter()
            res_h = humans(humans_dir, protocol, min_scale=min_scale)
            timings["humans"] = time.perf_counter() - t0
            (out / "humans").mkdir(exist_ok=True)
            write_json(out / "humans" / "humans.json", res_h.to_dict(), inputs=all_inputs)
            write_text(out / "humans" / "humans.md", res_h.markdown(), inputs=all_inputs)
            results.append(res_h)
            wanted = [*wanted, "humans"]
        if any(r.study == STUDY_KEY for r in results):
            wanted = [*wanted, STUDY_KEY]
        overview = overview_table(results)
        if overview is not None:
            results.insert(0, StudyResult("overview", "Overview", "all pairs", {}, [overview]))
        timings["total"] = time.perf_counter() - t_start
        tables = stack([t for r in results for t in r.tables])
        md = ["# COVER studies: every table\n"]
        if command:
            md.append(f"Reproduce: `{command}`\n")
        for t in tables:
            md.append(f"## {t.key}\n\n{t.caption}\n\n{t.markdown()}\n")
        missing = sorted({m.text() for r in results for m in r.missing})
        if missing:
            md.append("## Not filled\n\n" + "\n".join(f"* {m}" for m in missing) + "\n")
        manifest = jsonify({
            "cover_version": __version__, "command": command, "protocol": protocol.to_dict(),
            "min_scale": min_scale, "target": target, "studies": wanted, "pairs": manifest_pairs,
            "transfers": transfers, "comparisons": figs_across, "gallery_alpha": gallery_alpha,
            "tables": [t.to_dict() for t in tables], "missing": missing, "timings": timings,
        })
        write_json(out / "manifest.json", manifest, inputs=all_inputs)
        # tables.md opens as the report does: the summary, misses first (read back from
        # the files just written, as the report reads them).
        from cover.report.build import summary_of
        from cover.report.demo_summary import summary_markdown

        md.insert(2 if command else 1, f"## Summary\n\n{summary_markdown(summary_of(out))}")
        write_text(out / "tables.md", "\n".join(md), inputs=all_inputs)
        if report:
            from cover.report.build import build_report

            build_report(out, out / "report.html")
    return dict(manifest)
