"""Shared fixtures: where the real data lives (tests that need it skip without it)."""

from __future__ import annotations

import contextlib
import functools
import gc
import io
import json
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

settings.register_profile("default", max_examples=200, deadline=None)
settings.register_profile("ci", max_examples=200, deadline=None, derandomize=True)
settings.load_profile("ci" if os.environ.get("CI") else "default")

REPO = Path(__file__).resolve().parents[1]


def shared_data_dir() -> Path | None:
    env = os.environ.get("COVER_DATA_DIR")
    for d in ([Path(env)] if env else []) + [REPO.parent / "shared" / "data"]:
        if (d / "qvhighlights" / "annotations" / "highlight_val_release.jsonl").is_file():
            return d
    return None


def pytest_configure(config: pytest.Config) -> None:
    # Bytecode is cached for this run even where PYTHONDONTWRITEBYTECODE is set: pytest
    # rewrites the asserts of ~150 test modules in each xdist worker (about 6 s), and
    # every process the suite starts (the workers, Ray's, each `python -m cover`) would
    # otherwise compile the same modules of .venv again, which the README's install no
    # longer byte-compiles ahead (~27 s for every file of every package). The caches land
    # in __pycache__ folders git ignores; subprocesses inherit the environment.
    sys.dont_write_bytecode = False
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    config.addinivalue_line(
        "markers", "heavy: a long self-contained test (a subprocess of many seconds) that "
        "runs first, so under xdist it never starts last and leaves one worker alone")


def pytest_sessionstart(session: pytest.Session) -> None:
    """Compile ``src/`` to bytecode once, before xdist starts its workers, which would
    otherwise both compile its ~250 modules while they collect."""
    if hasattr(session.config, "workerinput"):  # an xdist worker: the controller did it
        return
    import compileall

    compileall.compile_dir(REPO / "src", quiet=1, workers=1)


@pytest.hookimpl(trylast=True)  # after xdist's own hook has named each item's group
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under ``--dist loadgroup`` every test of an ``xdist_group`` must carry its group in
    its node id, which is how xdist keeps the group on one worker (its shared fixture
    computed once): a pytest that ignores the renaming would split every group
    silently, so each test of a split group fails, saying why.

    Then heavy tests first (a stable sort: every other test keeps its order). xdist
    hands out work in this order after its groups, so the long ones overlap the many
    short ones. Only function-scoped tests are marked: moving a test away from its
    module's siblings would set a module fixture up twice."""
    items.sort(key=lambda item: item.get_closest_marker("heavy") is None)
    if not getattr(config.option, "loadgroup", False):
        return
    why = (f"--dist loadgroup does not keep the tests of an xdist_group together with "
           f"pytest {pytest.__version__} and this pytest-xdist: install the test extra's pins")
    for item in items:
        if item.get_closest_marker("xdist_group") and "@" not in item.nodeid:
            # (an error raised here would crash the worker and hide the sentence)
            item.stash[_SPLIT] = why


_SPLIT = pytest.StashKey[str]()


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    """What collection imported and built (numpy, scipy, pyarrow, Hypothesis, the test
    items and their strategies) lives until the run ends: it is moved out of the cyclic
    collector's reach (``gc.freeze``, after a collection), so each full collection during
    the tests walks what the tests make, not all of it again (without: 27 s of the two
    workers' CPU in 81 full collections; with: 21 s, measured with ``gc.callbacks``)."""
    gc.collect()
    gc.freeze()


@pytest.fixture(autouse=True)
def _group_kept(request: pytest.FixtureRequest) -> None:
    """Fails a test of an xdist_group the run has split (see above)."""
    if _SPLIT in request.node.stash:
        pytest.fail(request.node.stash[_SPLIT], pytrace=False)


def example_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new empty folder for one Hypothesis example, under the run's temporary folder:
    ``mktemp`` would list every folder made so far to number the next one (thousands,
    once per example)."""
    return Path(tempfile.mkdtemp(dir=tmp_path_factory.getbasetemp()))


@pytest.fixture(scope="session")
def data_dir() -> Path:
    d = shared_data_dir()
    if d is None:
        pytest.skip("real data not found (../shared/data or $COVER_DATA_DIR)")
    return d


@pytest.fixture(scope="session")
def qvh_gt(data_dir: Path) -> Path:
    return data_dir / "qvhighlights" / "annotations" / "highlight_val_release.jsonl"


@pytest.fixture(scope="session")
def qdetr_preds(data_dir: Path) -> Path:
    return data_dir / "qvhighlights" / "qd_detr" / "video_checkpoint_best_hl_val_preds.jsonl"


@pytest.fixture(scope="session")
def qdetr_table(qdetr_preds: Path, qvh_gt: Path) -> Any:
    """QD-DETR's real predictions joined with the QVHighlights val truth
    (``cover.load_labelled``), read once for the tests that take it as their data, not
    the reader's tests. Its arrays are read-only: a test, or COVER, that wrote into the
    shared table would fail there, not corrupt the tests after it."""
    import cover

    table, _ = cover.load_labelled(qdetr_preds, qvh_gt)
    _read_only(table)
    return table


def _read_only(obj: Any, depth: int = 0) -> None:
    """Every numpy array of ``obj`` and of the dataclasses it holds made read-only."""
    import dataclasses

    import numpy as np

    for f in dataclasses.fields(obj):
        v = getattr(obj, f.name)
        if isinstance(v, np.ndarray):
            v.setflags(write=False)
        elif dataclasses.is_dataclass(v) and depth < 2:
            _read_only(v, depth + 1)


@pytest.fixture(scope="session")
def qdetr_columns(qdetr_preds: Path, qvh_gt: Path) -> dict[str, list[Any]]:
    """QD-DETR's real predictions as columns (qid, vid, the video duration joined from the
    ground truth, windows, saliency): what the Parquet, Ray and Dask tests write."""
    recs = [json.loads(line) for line in qdetr_preds.read_text().splitlines()]
    dur = {json.loads(x)["qid"]: json.loads(x)["duration"]
           for x in qvh_gt.read_text().splitlines()}
    return {"qid": [r["qid"] for r in recs], "vid": [r["vid"] for r in recs],
            "duration": [float(dur[r["qid"]]) for r in recs],
            "pred_relevant_windows": [r["pred_relevant_windows"] for r in recs],
            "pred_saliency_scores": [r["pred_saliency_scores"] for r in recs]}


@pytest.fixture(scope="session")
def demo_run(data_dir: Path, tmp_path_factory: pytest.TempPathFactory
             ) -> tuple[int, Path, str, str]:
    """One ``cover demo --resamples 5`` on the real data, shared by the tests that read its
    folder (mark them ``xdist_group("demo")`` so one worker runs it once): the exit code,
    the results folder, the printed text (standard output) and what it said on standard
    error."""
    from cover.cli import main

    out = tmp_path_factory.mktemp("demo") / "demo"
    printed, said = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(said):
        code = main(["demo", "--out", str(out), "--data-dir", str(data_dir), "--resamples",
                     "5"])
    return code, out, printed.getvalue(), said.getvalue()


@pytest.fixture(scope="session")
def study_run(data_dir: Path, tmp_path_factory: pytest.TempPathFactory
              ) -> tuple[Path, dict[str, Any]]:
    """One ``cover study all`` run on real data, shared by the job and report tests (mark
    them ``xdist_group("study_run")`` so one worker runs it once): QD-DETR and LA-DETR on
    QVHighlights val, LA-DETR on Charades-STA; the results folder and its manifest."""
    from cover.jobs.study import run_studies
    from cover.jobs.study_inputs import command_line, input_pairs
    from cover.studies.protocol import Protocol

    q = data_dir / "qvhighlights"
    gt = q / "annotations" / "highlight_val_release.jsonl"
    preds = [q / "qd_detr" / "video_checkpoint_best_hl_val_preds.jsonl",
             q / "la_detr" / "best_hl_val_preds.jsonl",
             data_dir / "charades_sta" / "la_detr" / "hl_test_submission.jsonl"]
    gts = [gt, gt, data_dir / "lighthouse" / "charades_test_release.jsonl"]
    out = tmp_path_factory.mktemp("study") / "results"
    inputs = input_pairs(preds, gts, None, None)
    protocol = Protocol(n_resamples=20)
    manifest = run_studies(studies=["all"], inputs=inputs, out=out, protocol=protocol,
                           command=command_line("all", inputs, out, protocol,
                                                humans=data_dir),
                           humans_dir=data_dir)
    return out, manifest


@functools.cache
def _calibrator_validator(rules: tuple[str, ...], groupings: tuple[str, ...],
                          keep_qids: int) -> Any:
    """The checker of the published calibrator schema (built anew when a test registers
    a rule or grouping or changes the qids limit: the schema is made from them)."""
    import jsonschema

    from cover.calibrate.calibrator_schema import calibrator_schema

    schema = calibrator_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def check_calibrator_schema(doc: dict[str, Any]) -> None:
    """Fail unless ``doc`` is valid under ``cover schema calibrator``, naming the field."""
    from cover.calibrate.registry import GROUPINGS, RULES
    from cover.data import fitted_on

    validator = _calibrator_validator(tuple(sorted(RULES)), tuple(sorted(GROUPINGS)),
                                      fitted_on.KEEP_QIDS_MAX)
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
    if errors:
        where = "/".join(map(str, errors[0].absolute_path)) or "(the document)"
        raise AssertionError(f"the calibrator COVER wrote does not match its published "
                             f"schema at {where}: {errors[0].message}")


@pytest.fixture(scope="session", autouse=True)
def _every_written_calibrator_matches_the_schema() -> Iterator[None]:
    """Every calibrator document the suite writes (:meth:`Calibrator.to_dict`, which
    :meth:`Calibrator.save` uses) is checked against the published JSON Schema."""
    from cover.calibrate.calibrator import Calibrator

    original = Calibrator.to_dict

    def to_dict(self: Calibrator) -> dict[str, Any]:
        doc = original(self)
        check_calibrator_schema(doc)
        return doc

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Calibrator, "to_dict", to_dict)
        yield
