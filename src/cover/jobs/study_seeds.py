"""``--split-seeds N`` of ``cover study`` and ``cover validity``: the split-seed spread of
one pair written as ``split_seeds.json`` / ``split_seeds.md`` beside its studies, and
printed as a console table (:mod:`cover.studies.seed_spread`)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cover.data.table import GroundingTable
from cover.errors import InputError, say
from cover.io.output import write_json, write_text
from cover.jobs.study_inputs import InputPair
from cover.report.tables import render
from cover.studies.context import Pair
from cover.studies.protocol import Protocol
from cover.studies.result import StudyResult
from cover.studies.seed_spread import SPREAD_STUDIES, STUDY_KEY, SplitSpread, split_spread

#: The file stem of the spread in a results folder.
STEM = "split_seeds"


def check_split_seeds(n_seeds: int, target: str) -> None:
    """``n_seeds`` is 0 (no spread) or at least 2 (a mean +/- sd over one seed has no sd),
    and the spread runs on the studies' fast sweep, which certifies the truth envelope."""
    if isinstance(n_seeds, bool) or not isinstance(n_seeds, int) or n_seeds < 0 \
            or n_seeds == 1:
        raise InputError(f"split_seeds must be 0 (no spread) or a whole number >= 2 (the "
                         f"spread over split seeds needs two), got {n_seeds!r}")
    if n_seeds and target != "envelope":
        raise InputError("--split-seeds needs --target envelope (the default): the "
                         "split-seed spread runs on the envelope sweep")


def console_table(spread: SplitSpread) -> str:
    """The spread as an aligned plain-text table under its caption."""
    t = spread.table()
    return (f"{spread.caption()}\n({len(spread.seeds)} seeds in {spread.seconds:.1f} s)\n\n"
            f"{render(t.header, t.rows, markdown=False)}")


def run_spread(table: GroundingTable, *, name: str, dataset: str, protocol: Protocol,
               n_seeds: int, families: Sequence[str], studies: Sequence[str],
               folder: Path, inputs: Sequence[Path | str | None], min_scale: float,
               target: str, lengths: bool = False) -> SplitSpread | None:
    """The spread of the wanted studies among :data:`SPREAD_STUDIES` on one pair: files in
    ``folder``, console table on standard output; ``None`` (with a note) when none of
    them was asked for."""
    wanted = [s for s in SPREAD_STUDIES if s in studies]
    if not wanted:
        say(f"cover: {name} on {dataset}: --split-seeds covers the "
            f"{', '.join(SPREAD_STUDIES)} studies; none of them was asked for")
        return None
    spread = split_spread(table, name=name, dataset=dataset, protocol=protocol,
                          n_seeds=n_seeds, families=families, studies=wanted,
                          lengths=lengths, min_scale=min_scale, target=target)
    res = spread.study_result()
    write_json(folder / f"{STEM}.json", res.to_dict(), inputs=inputs)
    write_text(folder / f"{STEM}.md", res.markdown(), inputs=inputs)
    print(f"\n{console_table(spread)}\n", flush=True)
    return spread


def pair_spread(pair: Pair, inp: InputPair, wanted: Sequence[str], skip: set[str],
                 n_seeds: int, entry: dict[str, Any], out: Path, all_inputs: list[Path],
                 timings: dict[str, float]) -> list[StudyResult]:
    """The pair's split-seed spread, filed in the manifest entry like a study."""
    t0 = time.perf_counter()
    spread = run_spread(pair.table, name=pair.name, dataset=pair.dataset,
                        protocol=pair.protocol, n_seeds=n_seeds, families=pair.families,
                        studies=[s for s in wanted if s not in skip], folder=out / inp.id,
                        inputs=all_inputs, min_scale=pair.min_scale, target=pair.target)
    timings[f"{STUDY_KEY} {inp.id}"] = time.perf_counter() - t0
    if spread is None:
        return []
    entry["studies"][STUDY_KEY] = f"{inp.id}/{STEM}.json"
    entry["figures"][STUDY_KEY] = []
    return [spread.study_result()]
