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


# ---- with a worker: run in a fresh process ------------------------------------------
# The pool forks only from a process running no other thread (see can_fork), and a test
# process is not one: other tests leave daemon threads behind (tqdm's monitor, AnyIO's
# worker, Ray's). So these scenarios run in one spawned process, where the pool forks.

def _same_bytes(tmp: Path) -> None:
    forked = _draw_all(tmp / "forked", parallel=True)
    local = _draw_all(tmp / "local", parallel=False)
    assert list(forked) == ["compare_margins.png", "margins.png"]
    assert forked == local
    assert all(b.startswith(b"\x89PNG") for b in forked.values())


def _nothing_written_before_finish_nor_after_close(tmp: Path) -> None:
    with FigurePool() as pool:
        pool.submit(figures_studies.margins_sweep, MARGINS, "g on d", tmp / "m.png")
        assert not list(tmp.iterdir())  # the worker hands bytes back, writes nothing
        pool.close()  # a failed run: the figure is dropped
    assert not list(tmp.iterdir())


def _aborted(tmp: Path) -> None:
    """A failed run does not wait for the worker's start (matplotlib's import) nor for a
    figure nobody will write: the worker is killed, and nothing is written."""
    import signal

    pool = FigurePool()
    pool.submit(figures_studies.margins_sweep, MARGINS, "g on d", tmp / "m.png")
    workers = list(pool._pool._processes.values())  # type: ignore[union-attr]
    assert workers
    pool.close(abort=True)
    assert [w.exitcode for w in workers] == [-signal.SIGKILL] * len(workers)
    assert not list(tmp.iterdir())


def _dead_worker(tmp: Path) -> None:
    with FigurePool() as pool:
        pool.submit(_dies_in_worker, MARGINS, "g on d", tmp / "m.png")
        pool.submit(figures_studies.margins_sweep, MARGINS, "g on d", tmp / "n.png")
        pool.finish()
    assert (tmp / "m.png").read_bytes() == (tmp / "n.png").read_bytes()


def _error_at_finish(tmp: Path) -> None:
    bad = {k: v for k, v in MARGINS.items() if k != "calibrated"}
    with FigurePool() as pool:
        pool.submit(figures_studies.margins_sweep, MARGINS, "g on d", tmp / "ok.png")
        pool.submit(figures_studies.margins_sweep, bad, "g on d", tmp / "bad.png")
        with pytest.raises(KeyError, match="calibrated"):
            pool.finish()
    assert not (tmp / "bad.png").exists()


WITH_WORKER = {"same bytes": _same_bytes,
               "nothing written": _nothing_written_before_finish_nor_after_close,
               "aborted": _aborted,
               "dead worker": _dead_worker, "error at finish": _error_at_finish}


def _run_with_worker(tmp: str, reply: Any) -> None:
    """In the spawned process: send each scenario's outcome, ``ok`` or its traceback."""
    import traceback

    out = {"can fork": "ok" if figure_pool.can_fork() else "can_fork() is False"}
    for name, scenario in WITH_WORKER.items():
        d = Path(tmp) / name.replace(" ", "_")
        d.mkdir()
        try:
            scenario(d)
            out[name] = "ok"
        except BaseException as exc:  # reported to the test process
            out[name] = "".join(traceback.format_exception(exc))
    reply.send(out)


#: The tests that read :func:`with_worker`'s outcomes: on one xdist worker, which starts
#: the fresh process (~3 s) once.
ONE_WORKER = pytest.mark.xdist_group("figure_worker")


@pytest.fixture(scope="module")
def with_worker(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")  # a pool's processes may not fork
    got, reply = ctx.Pipe(duplex=False)
    fresh = ctx.Process(target=_run_with_worker,
                        args=(str(tmp_path_factory.mktemp("pool")), reply))
    fresh.start()
    try:
        if not got.poll(120):
            raise AssertionError("the fresh process sent nothing in 120 s")
        out: dict[str, str] = got.recv()
    finally:
        fresh.join(10)
        if fresh.is_alive():
            fresh.kill()
    return out


@ONE_WORKER
def test_worker_draws_the_bytes_of_an_in_process_run(with_worker: dict[str, str]) -> None:
    assert with_worker["can fork"] == "ok"  # the platform of these tests forks
    assert with_worker["same bytes"] == "ok", with_worker["same bytes"]


@ONE_WORKER
def test_nothing_is_written_before_finish_nor_after_close(with_worker: dict[str, str]
                                                          ) -> None:
    assert with_worker["nothing written"] == "ok", with_worker["nothing written"]


@ONE_WORKER
def test_a_failed_run_kills_the_worker_and_writes_nothing(with_worker: dict[str, str]
                                                          ) -> None:
    assert with_worker["aborted"] == "ok", with_worker["aborted"]


@ONE_WORKER
def test_a_dead_worker_leaves_its_figures_to_this_process(with_worker: dict[str, str]
                                                          ) -> None:
    assert with_worker["dead worker"] == "ok", with_worker["dead worker"]


@ONE_WORKER
def test_a_figure_error_is_raised_at_finish_and_nothing_is_written(
        with_worker: dict[str, str]) -> None:
    assert with_worker["error at finish"] == "ok", with_worker["error at finish"]


def test_without_fork_each_figure_is_drawn_when_submitted(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    monkeypatch.setattr(figure_pool, "can_fork", lambda: False)
    with FigurePool() as pool:
        pool.submit(figures_studies.margins_sweep, MARGINS, "g on d", tmp_path / "m.png")
        assert (tmp_path / "m.png").read_bytes().startswith(b"\x89PNG")
        pool.finish()


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


def test_pool_during_starts_the_pool_as_asked_and_stops_it_when_the_load_fails(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``pool_during``: no pool unless wanted (or, where matplotlib is needed, when it is
    missing); a load that raises stops the pool it started (aborted) and raises."""
    pool, got = figure_pool.pool_during(lambda: 7, wanted=False)
    assert pool is None and got == 7
    monkeypatch.setattr("importlib.util.find_spec", lambda name: None)  # no matplotlib
    assert figure_pool.pool_during(lambda: 1)[0] is None
    closed: list[bool] = []
    real_close = FigurePool.close

    def close(self: FigurePool, *, abort: bool = False) -> None:
        closed.append(abort)
        real_close(self, abort=abort)

    monkeypatch.setattr(FigurePool, "close", close)
    started, _ = figure_pool.pool_during(lambda: 2, needs_matplotlib=False)
    assert isinstance(started, FigurePool) and closed == []
    started.close()

    def fails() -> None:
        raise ValueError("bad input")

    with pytest.raises(ValueError, match="bad input"):
        figure_pool.pool_during(fails, needs_matplotlib=False)
    assert closed == [False, True]  # this test's own close, then the abort
