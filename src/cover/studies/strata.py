"""The diagnostic strata of test rows: terciles of the true event length (cut points from
the pool) and, where some truth has several windows, single vs multi-window rows. The
conditional study, the rule comparison and the split-seed spread cut the same strata."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from cover.data.table import GroundingTable

TERCILES = ("Short", "Medium", "Long")


def tercile_of(x: NDArray[np.float64], ref: NDArray[np.float64]) -> NDArray[np.int64]:
    """0/1/2 by the 1/3 and 2/3 quantiles of ``ref``."""
    cuts = np.quantile(ref, [1 / 3, 2 / 3])
    return np.searchsorted(cuts, x, side="right").astype(np.int64)


def strata(pool_len: NDArray[np.float64], test_len: NDArray[np.float64],
           test_windows: NDArray[np.int64]) -> list[tuple[str, NDArray[np.bool_]]]:
    """The diagnostic strata of the test rows: terciles of the true event length (cut
    points from the pool's true lengths) and, where some truth has several windows,
    single vs multi-window."""
    t = tercile_of(test_len, pool_len)
    out = [(TERCILES[i], t == i) for i in range(3)]
    if (test_windows > 1).any():
        out += [("Single-window", test_windows == 1), ("Multi-window", test_windows > 1)]
    return out


def table_strata(pool: GroundingTable, test: GroundingTable
                 ) -> list[tuple[str, NDArray[np.bool_]]]:
    """:func:`strata` of ``test``'s rows, cut at ``pool``'s true event lengths."""
    ps, pe = pool.truth_envelope()
    ts, te = test.truth_envelope()
    return strata(pe - ps, te - ts, test.require_truth().n_components)
