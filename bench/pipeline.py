"""Calibrate + certify in memory: n_cal calibration rows, m test rows, NORM, alpha = 0.1.

Every contender does the whole job from the same arrays: NORM scores of the calibration
rows, the threshold, then the widened and clipped intervals of the m test rows. The
cost of building COVER's tables from those arrays is a row of its own (a user with
arrays pays it once; a user reading files gets the tables from the reader).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from baselines import np_copy_floor, np_shortest, np_tuned
from numpy.typing import NDArray
from peers import ConformalRegressor, SplitConformalRegressor, for_peers, mapie_threshold
from results import Stage, same_arrays
from stages import ALPHA, Entry, run_cell
from workloads import Data, short

import cover
from cover.scores import DEFAULT_MIN_SCALE as MIN_SCALE

F = NDArray[np.float64]
REF = "COVER GroundingTable.from_arrays + Calibrator(score='norm').fit(cal).certify(test)"
TITLE = "d) Calibrate + certify in memory (NORM, alpha = 0.1)"
SHORTEST = "numpy, shortest correct script: NORM scores + np.partition + widen/clip"
TUNED = "numpy, tuned in place: the same, no temporaries, in-place partition"
SAMPLED = "numpy, sampled select: the tuned script, the k-th score by a sampled bracket"
FLOOR = "numpy, the floor: a copy of the 7 input arrays"


def scripts() -> str:
    """The numpy scripts of table d) as they are timed (shown under the table)."""
    import inspect

    import baselines

    parts = ["The numpy scripts of table d), exactly as timed (`bench/baselines.py`):", ""]
    for fn in (baselines.np_shortest, baselines.np_tuned, baselines.np_sampled_select,
               baselines.np_copy_floor):
        parts += ["```python", inspect.getsource(fn).rstrip(), "```", ""]
    return "\n".join(parts)
NOTE = ("Column `n_cal → m`. Every row computes the NORM calibration scores, the threshold "
        "and the m widened, clipped test intervals from the same arrays. The reference "
        "(bold) is what a user holding arrays runs: a calibration table (with truth) and a "
        "test table (predictions only) built from the arrays with the ids as they come, "
        "every row checked by COVER's validator, then `Calibrator.fit` and `certify`. Ratio "
        "= time / the reference: **< 1 means faster than COVER's user path**. The numpy "
        "rows are the scripts printed below this table: the shortest correct script, the "
        "same script tuned in place, the tuned script with a sampled select of the k-th "
        "score (the fastest correct numpy script we know), and the floor (a copy of the 7 "
        "input arrays). The "
        "array pipeline (no tables, no Calibrator) and the tables alone are rows of their "
        "own. Peers get `max(S, 0)` as residuals (as in a); the intervals are checked "
        "against COVER's. puncc and TorchCP give the threshold in their own environments "
        "(worker processes, timed there, interleaved round by round) and numpy at that "
        "environment's version widens and clips; the numpy row of an environment is the "
        "shortest script there.")


def _scale(d: Data) -> F:
    lenp = d.pe - d.ps
    return np.maximum(lenp, MIN_SCALE)


def _norm_scores(d: Data) -> F:
    scale = _scale(d)
    return np.maximum((d.ps - d.ts) / scale, (d.te - d.pe) / scale)


def _widen_with(test: Data, q: float) -> tuple[F, F]:
    scale = _scale(test)
    return np.maximum(test.ps - q * scale, 0.0), np.minimum(test.pe + q * scale, test.T)


def crepes_pipeline(cal: Data, test: Data) -> tuple[F, F]:
    cr = ConformalRegressor().fit(for_peers(_norm_scores(cal)), sigmas=np.ones(len(cal.ps)))
    m = test.ps.size
    scale = _scale(test)
    out = cr.predict_int(np.concatenate([test.ps, test.pe]), sigmas=np.concatenate([scale, scale]),
                         confidence=1 - ALPHA, y_min=0.0)
    return np.maximum(out[:m, 0], 0.0), np.minimum(out[m:, 1], test.T)


def mapie_pipeline(cal: Data, test: Data) -> tuple[F, F]:
    return _widen_with(test, mapie_threshold(for_peers(_norm_scores(cal)), ALPHA))


def cover_arrays(cal: Data, test: Data) -> cover.Regions:
    s = cover.compute_scores(cal.table, "norm").values
    q = cover.split_conformal(s, alpha=ALPHA).value
    return cover.build_regions(test.table, "norm", q, alpha=ALPHA)


def cover_calibrator(cal: Data, test: Data) -> cover.Regions:
    return cover.Calibrator(score="norm", alpha=ALPHA).fit(cal.table).certify(test.table)


def cover_user(cal: Data, test: Data, ids: tuple[Any, Any]) -> cover.Regions:
    a, b = build_tables(cal, test, ids)
    return cover.Calibrator(score="norm", alpha=ALPHA).fit(a).certify(b)


def build_tables(cal: Data, test: Data, ids: tuple[Any, Any]) -> Any:
    """The calibration table (with truth) and the test table (predictions only), from
    the arrays and the ids as they come (built outside the timing, like the arrays)."""
    return (cover.GroundingTable.from_arrays(
                qid=ids[0], duration=cal.T, pred_start=cal.ps, pred_end=cal.pe,
                truth=(cal.ts, cal.te), clip=cal.table.clip),
            cover.GroundingTable.from_arrays(
                qid=ids[1], duration=test.T, pred_start=test.ps, pred_end=test.pe,
                clip=test.table.clip))


def calibrate_certify(st: Stage, cal: Data, test: Data, rounds: int, peers: Any = None) -> None:
    """One cell of table d); ``peers`` (``peer_rows.Peers``) adds puncc and TorchCP."""
    col = f"{short(cal.ps.size)} → {short(test.ps.size)}"

    def same_regions(out: Any, res: dict[str, Any]) -> str:
        iv = res[REF].intervals
        return same_arrays([(out[0], iv.starts), (out[1], iv.ends)])

    def same_cover(out: Any, res: dict[str, Any]) -> str:
        iv = res[REF].intervals
        return same_arrays([(out.intervals.starts, iv.starts), (out.intervals.ends, iv.ends)])

    ids = (np.arange(cal.ps.size), np.arange(test.ps.size))
    entries = [
        Entry(REF, REF, lambda: cover_user(cal, test, ids)),
        Entry("COVER Calibrator(score='norm').fit(cal).certify(test), tables prebuilt", REF,
              lambda: cover_calibrator(cal, test), same_cover),
        Entry("COVER compute_scores + split_conformal + build_regions (arrays, no tables)",
              REF, lambda: cover_arrays(cal, test), same_cover),
        Entry("COVER GroundingTable.from_arrays (cal + test tables, alone)", REF,
              lambda: build_tables(cal, test, ids)),
        Entry(SHORTEST, REF, lambda: np_shortest(cal, test, ALPHA), same_regions),
        Entry(TUNED, REF, lambda: np_tuned(cal, test, ALPHA), same_regions),
        Entry(SAMPLED, REF, lambda: np_tuned(cal, test, ALPHA, sampled=True), same_regions),
        Entry(FLOOR, REF, lambda: np_copy_floor(cal, test)),
        Entry("crepes fit(max(S,0)) + normalized predict_int + clip to T", REF,
              None if ConformalRegressor is None else lambda: crepes_pipeline(cal, test),
              same_regions),
        Entry("MAPIE conformalize + predict_interval (threshold) + numpy widen/clip", REF,
              None if SplitConformalRegressor is None else lambda: mapie_pipeline(cal, test),
              same_regions),
    ]
    if peers is None:
        run_cell(st, col, entries, rounds)
        return
    with peers.pipeline_entries(cal, test, REF, same_regions) as remote:
        run_cell(st, col, entries + remote, rounds)
