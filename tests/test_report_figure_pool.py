"""The figure worker of ``cover study``: the same PNG bytes as drawn in process, written
only by the caller and only at ``finish``, in process where fork is not available or the
worker dies, and a figure's error raised at ``finish`` with no file left behind."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import cover
from cover.report import figure_pool, figures_studies
from cover.report.figure_pool import FigurePool
from cover.report.figures import coverage_vs_target
from cover.studies import Protocol, coverage_validity

pytest.importorskip("matplotlib")

MARGINS: dict[str, Any] = {
    "lams": [5.0, 10.0, 20.0, 40.0],
    "coverage": [0.41, 0.55, 0.72, 0.9],
    "calibrated": [{"target": 0.8, "coverage_mean": 0.81},
                   {"target": 0.9, "coverage_mean": 0.905}],
}
PARENT = os.getpid()


def _dies_in_worker(data: dict[str, Any], name: str, path: Path) -> Path:
    """margins_sweep, except that the worker process ends abruptly on it."""
    if os.getpid() != PARENT:
        os._exit(3)
    return figures_studies.margins_sweep(data, name, path)


def _draw_all(tmp: Path, parallel: bool) -> dict[str, bytes]:
    tmp.mkdir()
    pool = FigurePool(parallel=parallel)
    with pool:
        pool.submit(figures_studies.margins_sweep, MARGINS, "g on d", tmp / "margins.png")
        pool.submit(figures_studies.compare_margins,
                    [{"label": "a", **MARGINS}, {"label": "b", **MARGINS}],
                    tmp / "compare_margins.png")
        pool.finish()
    return {p.name: p.read_bytes() for p in sorted(tmp.iterdir())}


def test_worker_draws_the_bytes_of_an_in_process_run(tmp_path: Path) -> None:
    assert figure_pool.can_fork()  # the platform of these tests forks
    forked = _draw_all(tmp_path / "forked", parallel=True)
    local = _draw_all(tmp_path / "local", parallel=False)
    assert list(forked) == ["compare_margins.png", "margins.png"]
    assert forked == local
    assert all(b.startswith(b"\x89PNG") for b in forked.values())


def test_nothing_is_written_before_finish_nor_after_close(tmp_path: Path) -> None:
    with FigurePool() as pool:
        pool.submit(figures_studies.margins_sweep, MARGINS, "g on d", tmp_path / "m.png")
        assert not list(tmp_path.iterdir())  # the worker hands bytes back, writes nothing
        pool.close()  # a failed run: the figure is dropped
    assert not list(tmp_path.iterdir())


def test_without_fork_each_figure_is_drawn_when_submitted(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    monkeypatch.setattr(figure_pool, "can_fork", lambda: False)
    with FigurePool() as pool:
        pool.submit(figures_studies.margins_sweep, MARGINS, "g on d", tmp_path / "m.png")
        assert (tmp_path / "m.png").read_bytes().startswith(b"\x89PNG")
        pool.finish()


def test_a_dead_worker_leaves_its_figures_to_this_process(tmp_path: Path) -> None:
    with FigurePool() as pool:
        pool.submit(_dies_in_worker, MARGINS, "g on d", tmp_path / "m.png")
        pool.submit(figures_studies.margins_sweep, MARGINS, "g on d", tmp_path / "n.png")
        pool.finish()
    assert (tmp_path / "m.png").read_bytes() == (tmp_path / "n.png").read_bytes()


def test_a_figure_error_is_raised_at_finish_and_nothing_is_written(tmp_path: Path) -> None:
    bad = {k: v for k, v in MARGINS.items() if k != "calibrated"}
    with FigurePool() as pool:
        pool.submit(figures_studies.margins_sweep, MARGINS, "g on d", tmp_path / "ok.png")
        pool.submit(figures_studies.margins_sweep, bad, "g on d", tmp_path / "bad.png")
        with pytest.raises(KeyError, match="calibrated"):
            pool.finish()
    assert not (tmp_path / "bad.png").exists()


def test_a_study_figure_does_not_restyle_the_next_validity_figure(tmp_path: Path) -> None:
    """The study figures' text sizes apply to them alone: a coverage figure drawn after
    one is the figure drawn before it (they used to leak into the next pair's figures)."""
    rng = np.random.default_rng(0)
    n = 120
    s = rng.uniform(0, 100, n)
    e = s + rng.uniform(5, 40, n)
    ts = np.clip(s + rng.normal(0, 4, n), 0, None)
    te = np.minimum(np.maximum(ts + 1, e + rng.normal(0, 4, n)), 150)
    rel = [list(rng.normal(size=75)) for _ in range(n)]
    table = cover.GroundingTable.from_arrays(qid=np.arange(n), duration=150.0, pred_start=s,
                                             pred_end=e, relevance=rel, truth=(ts, te))
    result = coverage_validity(table, name="synthetic", protocol=Protocol(n_resamples=2))
    first = coverage_vs_target(result, tmp_path / "first.png").read_bytes()
    figures_studies.margins_sweep(MARGINS, "g on d", tmp_path / "margins.png")
    assert coverage_vs_target(result, tmp_path / "second.png").read_bytes() == first


def test_no_fork_from_a_process_running_other_threads(tmp_path: Path) -> None:
    """A fork copies the locks another thread may hold: the pool draws in process."""
    import threading

    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert not figure_pool.can_fork()
        with FigurePool() as pool:
            pool.submit(figures_studies.margins_sweep, MARGINS, "g on d", tmp_path / "m.png")
            assert (tmp_path / "m.png").exists()  # drawn when submitted
            pool.finish()
    finally:
        stop.set()
        other.join()
