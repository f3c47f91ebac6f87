"""The worker protocol that puts peers living in other environments into the benchmark.

``bench/peer_client.py`` drives ``bench/peer_worker.py`` in another interpreter; here the
worker runs under the current interpreter with its numpy contender (the 5-line script),
so the suite needs none of the peer environments. The bench modules are loaded from
their files (``bench/`` is not a package).
"""

from __future__ import annotations

import importlib.util
import math
import os
import signal
import sys
import tempfile
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import cover

BENCH = Path(__file__).resolve().parents[1] / "bench"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up while being built
    spec.loader.exec_module(mod)
    return mod


client = _load("peer_client")
timing = _load("timing")


@pytest.fixture(scope="module")
def worker():
    with client.PeerWorker("numpy", sys.executable) as w:
        yield w


def test_hello_reports_the_interpreter_and_libraries(worker) -> None:
    assert worker.info["executable"] == sys.executable
    assert worker.libs["numpy"] == np.__version__
    assert worker.proc.pid == worker.info["pid"]


def test_threshold_cell_round_trip_agrees_with_cover(worker) -> None:
    s = np.random.default_rng(1).exponential(1.0, 1000)
    names = worker.stage({"residuals": s})
    cell = worker.cell("numpy", "threshold", {"residuals": names[0]}, {"alpha": 0.1})
    q, seconds = cell.warm()
    assert q == cover.split_conformal(s, alpha=0.1).value
    assert seconds > 0
    assert cell.time(3) > 0
    cell.close()
    worker.free(names)
    with pytest.raises(client.PeerError, match="KeyError"):  # freed means gone
        worker.cell("numpy", "threshold", {"residuals": names[0]}, {"alpha": 0.1}).warm()


def test_remote_cell_takes_its_turn_in_every_interleaved_round(worker) -> None:
    s = np.random.default_rng(2).exponential(1.0, 500)
    names = worker.stage({"residuals": s})
    remote = worker.cell("numpy", "threshold", {"residuals": names[0]}, {"alpha": 0.05})
    local = timing.Contender("local", lambda: cover.split_conformal(s, alpha=0.05).value)
    peer = timing.Contender("peer", remote=remote)
    out = timing.interleaved([local, peer], rounds=4, min_time=0.001)
    assert len(out["peer"].rounds) == len(out["local"].rounds) == 4
    assert all(t > 0 for t in out["peer"].rounds)
    assert peer.result == local.result
    remote.close()
    worker.free(names)


def test_pipeline_intervals_come_back_equal_to_covers(worker) -> None:
    rng = np.random.default_rng(3)

    def rows(n: int) -> tuple[np.ndarray, ...]:
        T = np.full(n, 150.0)
        ts = rng.uniform(0, 110, n)
        te = ts + rng.uniform(2, 40, n)
        ps, pe = ts + rng.normal(0, 4, n), te + rng.normal(0, 4, n)
        ps, pe = np.clip(np.minimum(ps, pe), 0, T), np.clip(np.maximum(ps, pe), 0, T)
        return ps, pe, ts, te, T

    def table(ps, pe, ts, te, T) -> cover.GroundingTable:
        return cover.GroundingTable.from_arrays(qid=np.arange(ps.size), duration=T,
                                                pred_start=ps, pred_end=pe, truth=(ts, te))

    cal, test = rows(2000), rows(3000)
    s = cover.compute_scores(table(*cal), "norm").values
    q = cover.split_conformal(s, alpha=0.1).value
    want = cover.build_regions(table(*test), "norm", q, alpha=0.1).intervals
    arrays = {"cal_ps": cal[0], "cal_pe": cal[1], "cal_ts": cal[2], "cal_te": cal[3],
              "test_ps": test[0], "test_pe": test[1], "test_T": test[4]}
    names = worker.stage(arrays)
    from cover.scores import DEFAULT_MIN_SCALE
    cell = worker.cell("numpy", "pipeline", dict(zip(arrays, names, strict=True)),
                       {"alpha": 0.1, "min_scale": DEFAULT_MIN_SCALE})
    (lo, hi), _ = cell.warm()
    assert np.array_equal(lo, want.starts) and np.array_equal(hi, want.ends)
    assert not list(worker.tmp.glob(f"{cell.id}_*"))  # result files removed once read
    cell.close()
    worker.free(names)


@given(st.lists(st.floats(0, 1e6, allow_nan=False), min_size=1, max_size=300),
       st.sampled_from([0.05, 0.1, 0.2]))
def test_scores_cross_the_pipe_exactly(worker, scores: list[float], alpha: float) -> None:
    # the numpy script's float-ceil rank is exact at these alphas for n <= 1000
    got = worker.thresholds("numpy", [{"scores": scores, "alpha": alpha}])[0]
    want = cover.split_conformal(np.array(scores), alpha=alpha, warn=False).value
    assert got == want or (math.isinf(got) and math.isinf(want))


def test_refusal_is_a_value_and_a_bad_request_an_error(worker) -> None:
    with pytest.raises(client.PeerError, match="unknown kind"):
        worker.cell("numpy", "nonsense", {}, {"alpha": 0.1}).warm()
    assert worker.thresholds("numpy", [{"arange": 9, "alpha": 0.1}]) == [9.0]  # still serving


def test_a_peer_missing_from_the_environment_is_an_error_not_a_refusal(worker) -> None:
    absent = [lib for lib in ("puncc", "torchcp") if worker.libs[lib] is None]
    if not absent:
        pytest.skip("puncc and torchcp are both installed here")
    with pytest.raises(client.PeerError, match=r"ModuleNotFoundError|ImportError"):
        worker.thresholds(absent[0], [{"arange": 9, "alpha": 0.1}])


def test_a_dead_worker_is_a_clear_error() -> None:
    w = client.PeerWorker("victim", sys.executable)
    try:
        os.kill(w.proc.pid, signal.SIGKILL)
        w.proc.wait(timeout=10)
        with pytest.raises(client.PeerError, match=r"'victim'.*exited with code -9"):
            w.thresholds("numpy", [{"arange": 9, "alpha": 0.1}])
    finally:
        w.close()


def test_a_worker_that_cannot_start_is_a_clear_error(tmp_path: Path) -> None:
    before = set(Path(tempfile.gettempdir()).glob("cover-bench-broken-*"))
    with pytest.raises(client.PeerError, match=r"(?s)sent no answer.*exited with code 3.*boom"):
        client.PeerWorker("broken", _fake_python(tmp_path, "echo boom >&2; exit 3"))
    assert set(Path(tempfile.gettempdir()).glob("cover-bench-broken-*")) == before  # cleaned


def test_a_worker_answering_out_of_protocol_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(client.PeerError, match="out of protocol"):
        client.PeerWorker("chatty", _fake_python(tmp_path, "echo hello there; sleep 0.2"))


def _fake_python(tmp_path: Path, body: str) -> Path:
    exe = tmp_path / "python"
    exe.write_text(f"#!/bin/sh\n{body}\n")
    exe.chmod(0o755)
    return exe
