"""Figures drawn beside the computation: a forked worker process imports matplotlib and
draws each figure while the caller goes on with the next study.

Rule: the worker draws, the caller writes. A figure function runs in the worker inside
:func:`cover.report.style.capture_pngs`, so it hands back (path, PNG bytes) and the caller
writes the files through the atomic writer, in the order submitted, when it calls
:meth:`FigurePool.finish`; no file is written from the worker, and none is left behind when
the run fails (:meth:`FigurePool.close` cancels what has not started). Same figures either
way: the worker is a fork of the caller, with its modules and settings, and the drawing
functions read only their arguments (:mod:`cover.report.style`), so the PNG bytes are those
of an in-process run. Where ``fork`` is not available (Windows; macOS' default spawn
would re-import everything), in a process running other threads, or when a pool is asked
not to fork, each figure is drawn in process when submitted; if the worker dies, the
figures it did not hand back are drawn in process.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

from cover.io.output import write_bytes
from cover.report.style import capture_pngs

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor

Draw = Callable[..., Path]
T = TypeVar("T")

#: The per-pair studies that have figures (:meth:`FigurePool.study`).
STUDIES_WITH_FIGURES = frozenset({"coverage", "margins", "conditional", "exchangeability",
                                  "calsize"})

# multiprocessing and concurrent.futures are imported when a worker is forked, not with
# this module: a run without figures (``cover study --no-report``) does not pay for them.


def can_fork() -> bool:
    """Whether a worker can be forked here: the platform has ``fork`` (a copy of this
    process, at no import cost) and no other Python thread runs (a fork copies the locks
    another thread may hold, and the child could wait on them for ever)."""
    import multiprocessing

    return ("fork" in multiprocessing.get_all_start_methods()
            and threading.active_count() == 1)


def _warm() -> None:
    """Worker start: import matplotlib and the figure modules before the first figure
    arrives (the import is about half a second: the point of the worker).

    The worker never shows help text, so it skips the ``set()`` docstrings matplotlib
    writes for every Artist class as it is defined (``matplotlib.artist.kwdoc``: about
    0.2 s of the import, no part of any drawing); this process is untouched. The
    figures then drawn are the same (a figure reads only its arguments and the settings
    it sets itself)."""
    import matplotlib.artist

    if callable(getattr(matplotlib.artist, "kwdoc", None)):
        matplotlib.artist.kwdoc = lambda artist: ""
    from cover.report import figures, figures_studies  # noqa: F401
    from cover.report.style import save, subplots

    # One tiny figure: fonts, markers, legend and PNG writer are set up while the worker
    # waits for the first study (their first use is about 0.07 s).
    fig, ax = subplots(figsize=(1.0, 1.0), dpi=20)
    ax.errorbar([1, 2], [0, 1], yerr=[0.1, 0.1], marker="o", capsize=2, label="a")
    ax.bar([1], [1], hatch="//")
    ax.set_xscale("log")
    ax.set_title("a")
    ax.legend()
    with capture_pngs():  # encoded and dropped: nothing is written
        save(fig, Path("warm-up.png"))


def _ready() -> None:
    """A no-op job: submitting it starts the worker at once."""


def _draw(draw: Draw, args: tuple[Any, ...], kwargs: dict[str, Any]
          ) -> list[tuple[Path, bytes]]:
    """In the worker: run ``draw(*args, **kwargs)`` and hand back the PNGs it saved."""
    with capture_pngs() as pngs:
        draw(*args, **kwargs)
    return pngs


def pool_during(load: Callable[[], T], *, wanted: bool = True,
                needs_matplotlib: bool = True) -> tuple[FigurePool | None, T]:
    """A pool whose worker starts before ``load()`` runs (it imports matplotlib while the
    caller reads its inputs), and what ``load`` returned; the pool is stopped when
    ``load`` fails. None instead of a pool when not ``wanted``, or when matplotlib is not
    installed and ``needs_matplotlib`` (the caller draws in process and says the figures
    are skipped)."""
    import importlib.util

    pool = FigurePool() if wanted and not (
        needs_matplotlib and importlib.util.find_spec("matplotlib") is None) else None
    try:
        return pool, load()
    except BaseException:
        if pool is not None:
            pool.close(abort=True)
        raise


class FigurePool:
    """Draw figures in one forked worker (``parallel`` and :func:`can_fork`) or in this
    process; :meth:`finish` writes every submitted figure (see the module docstring)."""

    def __init__(self, *, parallel: bool = True) -> None:
        self._jobs: list[tuple[Draw, tuple[Any, ...], dict[str, Any],
                               Future[list[tuple[Path, bytes]]]]] = []
        self._pool: ProcessPoolExecutor | None = None
        if parallel and can_fork():
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            self._pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork"),
                                             initializer=_warm)
            self._pool.submit(_ready)

    def submit(self, draw: Draw, *args: Any, **kwargs: Any) -> None:
        """Draw ``draw(*args, **kwargs)``: a figure function of :mod:`cover.report.figures`
        or :mod:`cover.report.figures_studies` (module-level, so the worker can be sent
        it), which saves its PNG through :func:`cover.report.style.save`."""
        if self._pool is None:
            draw(*args, **kwargs)
            return
        from concurrent.futures.process import BrokenProcessPool

        try:
            future = self._pool.submit(_draw, draw, args, kwargs)
        except BrokenProcessPool:
            draw(*args, **kwargs)
            return
        self._jobs.append((draw, args, kwargs, future))

    def study(self, study: str, data: dict[str, Any], extra: Any, folder: Path, *,
              label: str, mean_duration: float | None) -> list[str]:
        """Submit the figures of ``study`` on one pair (``data``: its ``StudyResult.data``;
        ``extra``: the coverage study's ``ValidityResult``), written into ``folder``; their
        names relative to the results folder (``folder``'s parent)."""
        from cover.report import figures as fv
        from cover.report import figures_studies as fs

        # (file name, figure function, its arguments before the path, keyword arguments)
        todo: list[tuple[str, Draw, tuple[Any, ...], dict[str, Any]]] = []
        if study == "coverage" and extra is not None:
            return [f"{folder.name}/{path.name}" for path in
                    fv.validity_figures(extra, folder, mean_duration, self.submit)]
        if study == "margins":
            todo = [("margins.png", fs.margins_sweep, (data, label), {})]
        elif study == "conditional":
            todo = [("conditional.png", fs.conditional_strata, (data, label), {})]
        elif study == "exchangeability":
            todo = [("aci_rolling.png", fs.aci_rolling, (data, label), {})]
        elif study == "calsize" and any(c["supported"] for c in data["cells"]):
            todo = [("calsize.png", fs.calsize_spread, (data, label), {})]
        for name, draw, args, kwargs in todo:
            self.submit(draw, *args, folder / name, **kwargs)
        return [f"{folder.name}/{name}" for name, *_ in todo]

    def finish(self) -> None:
        """Wait for the worker and write its figures; an error of a figure function is
        raised here, as it would have been in process."""
        from concurrent.futures.process import BrokenProcessPool

        jobs, self._jobs = self._jobs, []
        try:
            for draw, args, kwargs, future in jobs:
                try:
                    pngs = future.result()
                except BrokenProcessPool:  # the worker died: draw what it did not
                    draw(*args, **kwargs)
                    continue
                for path, data in pngs:
                    write_bytes(path, data)
        finally:
            self.close()

    def close(self, *, abort: bool = False) -> None:
        """Stop the worker; figures not yet drawn are dropped (nothing is written).
        ``abort`` (a failed run): the worker is killed at once, not waited for while it
        imports matplotlib or draws a figure nobody will write."""
        pool, self._pool = self._pool, None
        if pool is None:
            return
        if abort:
            kill = getattr(pool, "kill_workers", None)  # Python 3.14
            # Before 3.14 the pool names its processes only in a private attribute: read
            # it if it is there; without it the shutdown below waits, as it always did.
            for process in ([] if kill else list(getattr(pool, "_processes", {}).values())):
                process.kill()
            if kill:
                kill()
        pool.shutdown(wait=True, cancel_futures=True)

    def __enter__(self) -> FigurePool:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close(abort=kind is not None)
