"""The job behind ``cover validity``: prediction files in; JSON, Markdown, figures and an
HTML report of study 1 (coverage validity) out."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from cover._progress import Progress
from cover.data.table import DEFAULT_CLIP_SECONDS, GroundingTable
from cover.errors import InputError, report_problems, say
from cover.io.folders import slug
from cover.io.jsonl import OnError
from cover.io.labelled import read_labelled
from cover.io.output import (
    check_results_folder,
    make_folder,
    results_folder,
    strict_json,
    write_json,
    write_text,
)
from cover.jobs.study_inputs import guess_dataset
from cover.jobs.study_seeds import check_split_seeds, run_spread
from cover.report.demo_summary import summary_markdown
from cover.report.figure_pool import FigurePool, pool_during
from cover.report.summary import summary_html
from cover.report.tables import multi_validity_table, render, validity_summary, validity_table
from cover.scores import missing_family_input
from cover.studies.coverage_validity import ValidityResult, coverage_validity, n_steps
from cover.studies.minimum import check_enough_rows
from cover.studies.protocol import PAPER_ALPHAS, Protocol
from cover.studies.result import TIES_LEGEND, family_label

#: The first paragraph of every validity report, in plain words.
WHAT_IT_CHECKS = (
    "What this checks: COVER widens each prediction into a certified region that should "
    "contain the true moment for at least a share 1 - alpha of queries. The queries are "
    "split by source video into a calibration pool and a test set; the threshold is fitted "
    "on resamples of the pool, and we count how often the test queries' true moments fall "
    "inside their regions. If the guarantee holds, that coverage sits near k/(n+1), inside "
    "its 95% test band (the spread expected from a finite calibration set and a finite test "
    "set, clustered by source video), "
    "at every alpha; shorter regions at the same coverage are better. This guarantee is "
    "marginal, on average over all queries: within a group of them (the longest moments, "
    "queries with several moments) coverage can fall short. The summary says what this run "
    "checked: the groups below their noise floor at the 0.90 target come from the "
    "conditional study of NORM and SEC on the same split (cover study conditional has "
    "every group's numbers)."
)
#: The same, as the first section of an HTML report (title, text, table, figures).
CHECKS_SECTION: tuple[str, str, str, Sequence[Path]] = (
    "What this checks", WHAT_IT_CHECKS.removeprefix("What this checks: "), "", ())


def grounder_names(preds: Sequence[Path], names: Sequence[str] | None = None
                   ) -> tuple[list[str], list[str]]:
    """Display names and output folder names, both unique, one per prediction file.

    Without ``names`` a file is named as a study names it
    (:func:`cover.jobs.study_inputs.default_names`: its folder, the grounder, with the
    file's stem when one folder holds several). A name or folder that still repeats gets
    a ``(2)`` / ``-2`` suffix, so no grounder's results replace another's.
    """
    from cover.jobs.study_inputs import default_names

    shown = list(names) if names else default_names(preds)
    display: list[str] = []
    folders: list[str] = []
    for name in shown:
        d, f, i = name, slug(name, "grounder"), 1
        while d in display or f in folders:
            i += 1
            d, f = f"{name} ({i})", f"{slug(name, 'grounder')}-{i}"
        display.append(d)
        folders.append(f)
    return display, folders


def validity_body(result: ValidityResult) -> str:
    """validity.md below its opening: the run's summary, its table and the legend."""
    return (f"{validity_summary(result)}\n\n{validity_table(result, markdown=True)}\n\n"
            "Coverage and length are mean ± sd over calibration resamples; `*` marks a mean "
            "outside its 95% test band: k/(n+1) ± t·sqrt(deff·sd_Beta² + sd_test²), the "
            "calibration band's spread plus the test split's own noise, clustered by source "
            f"video (docs/bands.md). {TIES_LEGEND}\n")


def groups_study(table: GroundingTable, result: ValidityResult, dataset: str,
                 min_scale: float, target: str) -> dict[str, Any] | None:
    """The conditional study (:func:`cover.studies.conditional.conditional`, 0.90 target)
    on the split of ``result``'s run, its cells kept for the families the run studied;
    None when it studied neither NORM nor SEC (the only families the study reads)."""
    from cover.studies.conditional import conditional
    from cover.studies.context import Pair

    if not {"norm", "sec"} & set(result.families):
        return None
    pair = Pair(result.name, dataset, table, replace(result.protocol, n_resamples=0),
                min_scale, target)
    doc = conditional(pair).to_dict()
    doc["data"]["cells"] = [c for c in doc["data"]["cells"] if c["family"] in result.families]
    return doc


def summary_entry(result: ValidityResult, folder: str, dataset: str,
                  groups: dict[str, Any] | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """What :func:`cover.report.summary.summary_html` reads of one grounder's run: the
    pair (named, sized) and its studies (coverage, and the groups when studied)."""
    pair = {"id": folder, "name": result.name, "dataset": dataset,
            "rows": result.n_rows, "test_rows": result.n_test}
    return pair, {"coverage": {"data": result.to_dict()},
                  **({"conditional": groups} if groups is not None else {})}


def write_validity(result: ValidityResult, out: Path, mean_duration: float, *,
                   inputs: Sequence[Path | str | None] = (), lead: str = "",
                   pool: FigurePool | None = None) -> list[Path]:
    """JSON + Markdown + figures of one grounder's coverage-validity run (every file
    through the atomic writer; figures skipped with one line when matplotlib is absent),
    then its summary and table printed. ``lead``: Markdown that opens validity.md under
    its title (the demo's misses first, from the study of groups it ran). ``pool``: the
    figures are drawn by its worker and written when it finishes."""
    make_folder(out)
    write_json(out / "validity.json", strict_json(result.to_dict()), inputs=inputs)
    md = (f"# Coverage validity: {result.name}\n\n{lead}{WHAT_IT_CHECKS}\n\n"
          f"{validity_body(result)}")
    write_text(out / "validity.md", md, inputs=inputs)
    from cover.report.figures import MissingPlotting, validity_figures

    try:
        figs = validity_figures(result, out, mean_duration,
                                None if pool is None else pool.submit)
    except MissingPlotting as exc:
        say(f"cover: skipping figures: {exc}")
        figs = []
    print(f"\n{validity_summary(result)}\n")
    print(validity_table(result))
    return figs


def run_validity(
    *,
    preds: list[Path],
    gt: Path,
    out: Path,
    names: list[str] | None = None,
    families: tuple[str, ...] = ("norm", "sec", "sls"),
    alphas: tuple[float, ...] = PAPER_ALPHAS,
    n_resamples: int = 50,
    seed: int = 42,
    cal_frac: float = 0.4,
    min_scale: float = 1.0,
    target: str = "envelope",
    qids: Path | None = None,
    on_error: OnError = "raise",
    clip: float = DEFAULT_CLIP_SECONDS,
    strict: bool = False,
    read_options: dict[str, Any] | None = None,
    split_seeds: int = 0,
) -> list[ValidityResult]:
    """Study 1 for one or more grounders; one sub-folder each when there are several.
    ``read_options`` go to :func:`cover.io.labelled.load_labelled` (formats, durations).

    A family whose input no row of a file carries (SLS without saliency) is skipped for
    that file with one line; its cells would all read coverage 1.000 and mean nothing.
    ``split_seeds`` > 0 adds each grounder's split-seed spread (coverage and length per
    cell over seeds ``0 .. N - 1``; :mod:`cover.jobs.study_seeds`).
    """
    if names and len(names) != len(preds):
        raise InputError("give one --name per --preds")
    check_split_seeds(split_seeds, target)
    protocol = Protocol(cal_frac=cal_frac, seed=seed, n_resamples=n_resamples, alphas=alphas)
    display, folders = grounder_names(preds, names)
    inputs: list[Path | str | None] = [*preds, gt, qids]
    # Every file read and checked before the output folder is made: too few rows for the
    # study is an error that leaves nothing behind.
    check_results_folder(out, inputs)

    def read_all() -> list[GroundingTable]:
        tables = []
        for path in preds:
            table = labelled(path, gt, qids=qids, clip=clip, strict=strict,
                             on_error=on_error, log=say, **(read_options or {}))
            check_enough_rows(table.units, protocol, ("validity",), what=str(path))
            tables.append(table)
        return tables

    # The figure worker imports matplotlib while this process reads and computes.
    pool, tables = pool_during(read_all)
    # The whole folder is built beside --out and renamed into place at the end: a run
    # that fails half-way leaves no folder (or the previous one) behind. The pool's exit
    # stops its worker on every path.
    with pool or nullcontext(), results_folder(out, inputs=inputs) as work:
        results: list[ValidityResult] = []
        entries: list[tuple[dict[str, Any], dict[str, Any]]] = []
        leads: list[str] = []  # each grounder's summary, as Markdown
        dataset = guess_dataset(gt)
        sections: list[tuple[str, str, str, Sequence[Path]]] = []
        for path, name, sub, table in zip(preds, display, folders, tables, strict=True):
            fams = []
            for fam in families:
                why = missing_family_input(table, fam)
                if why is None:
                    fams.append(fam)
                else:
                    say(f"cover: {name}: skipping {family_label(fam)}: {why} in {path}")
            if not fams:
                say(f"cover: {name}: no score family can be studied; skipping {path}")
                continue
            with Progress(f"{name}: calibrating", n_steps(protocol, tuple(fams))) as prog:
                res = coverage_validity(table, name=name, families=tuple(fams),
                                        protocol=protocol, min_scale=min_scale, target=target,
                                        progress=prog)
            if not any(np.isfinite(c.coverage_mean) for c in res.cells):
                # NaN everywhere (no test row left to certify): no table, no figure.
                raise InputError(f"{path}: no coverage could be measured: no row of the test "
                                 "split could be certified (see the lines above)")
            results.append(res)
            folder = work if len(preds) == 1 else work / sub
            # Misses first: the groups below their floor and the cells out of band.
            entry = summary_entry(res, sub, dataset, groups_study(table, res, dataset,
                                                                    min_scale, target))
            entries.append(entry)
            box = summary_html([entry[0]], {sub: entry[1]}, [], [])
            print(f"\n{summary_markdown(box, plain=True)}", end="")
            leads.append(f"{summary_markdown(box)}\n")
            figs = write_validity(res, folder, float(np.mean(table.duration)), inputs=inputs,
                                  lead=leads[-1], pool=pool)
            sections.append((name, validity_summary(res), validity_table(res, markdown=True),
                             figs))
            if split_seeds:
                spread = run_spread(table, name=name, dataset=dataset,
                                    protocol=protocol, n_seeds=split_seeds, families=fams,
                                    studies=("coverage",), folder=folder, inputs=inputs,
                                    min_scale=min_scale, target=target, lengths=True)
                if spread is not None:
                    t = spread.table()
                    sections.append((f"{name}: split-seed spread", spread.caption(),
                                     render(t.header, t.rows, markdown=True), []))
        if not results:
            raise InputError("no grounder could be studied (see the lines above)")
        if len(results) > 1:
            _write_overview(results, work, inputs, leads)
        from cover.report.html import write_html

        if pool is not None:
            pool.finish()  # every PNG written before the report embeds it
        sections.insert(0, CHECKS_SECTION)
        write_html(work / "report.html", "COVER coverage validity", sections, inputs=inputs,
                   lead=summary_html([p for p, _ in entries], {p["id"]: st for p, st in entries},
                                     [], []))
        where = "" if len(preds) == 1 else f", one folder per grounder: {', '.join(folders)}"
        seeds = ", split_seeds.json, split_seeds.md" if split_seeds else ""
    say(f"wrote {out}/ (validity.json, validity.md{seeds}, figures, report.html{where})")
    return results


def labelled(preds: Path, gt: Path, *, truth_qids: bool = False, **read: Any
             ) -> GroundingTable:
    """The labelled rows of ``preds`` (:func:`cover.io.labelled.read_labelled`, ``read``
    its keywords), their problems said in one line per kind (first example only);
    ``truth_qids``: each row named by its ground-truth qid, where the join renamed the
    ground truth to the predictions' names (:meth:`cover.io.labelled.Labelled.truth_qids`)."""
    got = read_labelled(preds, gt, **read)
    report_problems(got.problems, what=f"{preds} joined with {gt}", limit=1)
    return replace(got.table, qid=got.truth_qids()) if truth_qids else got.table


def _write_overview(results: list[ValidityResult], out: Path,
                    inputs: Sequence[Path | str | None], leads: list[str]) -> None:
    """overview.md (each grounder's summary, misses first, then one table per alpha)
    and overview.json."""
    common = [f for f in results[0].families if all(f in r.families for r in results)]
    parts = ["# Coverage validity across grounders\n", *(x.rstrip("\n") + "\n" for x in leads),
             WHAT_IT_CHECKS + "\n"]
    left_out = sorted({f for r in results for f in r.families} - set(common))
    if left_out:
        parts.append("Families not studied for every grounder are left out of this "
                     f"overview: {', '.join(family_label(f) for f in left_out)}.\n")
    if common:
        same = [replace(r, cells=[c for c in r.cells if c.family in common]) for r in results]
        for alpha in results[0].protocol.alphas:
            parts.append(f"## 1 - alpha = {1 - alpha:.2f}\n\n"
                         f"{multi_validity_table(same, alpha)}\n")
    write_text(out / "overview.md", "\n".join(parts), inputs=inputs)
    write_json(out / "overview.json", strict_json([r.to_dict() for r in results]),
               inputs=inputs)
