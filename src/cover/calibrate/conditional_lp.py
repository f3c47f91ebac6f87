"""Conditional conformal cutoffs over a finite-dimensional function class (Gibbs,
Cherian & Candès 2023, "Conformal prediction with conditional guarantees"): the linear
programs behind rule ``conditional`` (:mod:`cover.calibrate.conditional`).

Setting. Calibration rows ``i = 1..n`` have scores ``S_i`` and features
``phi_i = Phi(X_i)`` in ``R^d`` (an intercept and the covariates); the function class
is ``F = {x -> phi(x).beta}``; ``tau = 1 - alpha`` and ``l_tau`` is the pinball loss.
For a test row with features ``phi`` and an *imputed* score ``S`` the augmented
quantile regression is

    g_S = argmin_{g in F}  sum_i l_tau(S_i - g(X_i)) + l_tau(S - g(x)),

and its LP dual (``eta`` the per-row dual weights) is

    max sum_i eta_i S_i + eta_{n+1} S   s.t.  sum_i eta_i phi_i + eta_{n+1} phi = 0,
                                              tau - 1 <= eta_i <= tau.

``eta_{n+1}(S)`` is non-decreasing in ``S`` (the paper's monotonicity), so both
variants below are a threshold on the test row's score:

* **Randomised** (exact): ``C(x) = {y : eta_{n+1}(S(x, y)) < U}``, ``U ~ Unif[tau-1,
  tau]`` drawn once per test row. For every ``f in F``,
  ``E[f(X)(1{Y in C(X)} - tau)] = 0``: coverage is exactly ``1 - alpha`` under every
  covariate shift ``dP'/dP = f >= 0`` in the class (and, with group indicators in
  ``F``, within every group).
* **Conservative** (unrandomised, what COVER certifies): ``C(x) = {y : S(x, y) <=
  g_{S(x,y)}(x)}``. For every non-negative ``f in F``, ``E_f[1{Y in C(X)}] >= 1 -
  alpha`` (the paper's Theorem 2; over-coverage at most ``d/(n+1)`` on average under
  continuous scores). Its threshold needs no search: for ``S`` above the fit the test
  term is ``tau (S - g(x))`` and ``g_S`` no longer moves with ``S``, so the cutoff is

      S*(x) = phi(x).beta_inf,   beta_inf = argmin_beta sum_i l_tau(S_i - phi_i.beta)
                                                      - tau phi(x).beta,

  the augmented fit with the test score imputed at ``+inf`` (``eta_{n+1} = tau``):
  every ``S < S*`` is covered and every ``S > S*`` is not (scores in general position:
  continuous scores; with ties the solver's vertex is taken). One LP per distinct
  feature vector: ``n`` box-bounded variables and ``d`` equality constraints (the dual
  above with ``eta_{n+1} = tau``), ``beta_inf`` its equality multipliers. When the LP
  is infeasible (the primal is unbounded: too few calibration rows "above" ``x`` in the
  direction of ``phi(x)``, the analogue of ``k > n`` in split conformal) the cutoff is
  ``+inf``. :func:`cutoff_by_search` finds the same cutoff from the definition by
  bisection over the imputed score (the check in the tests and the bench).

Rows whose score is ``+inf`` (never covered) or ``-inf`` (always covered) enter with
their dual weight fixed at ``tau`` or ``tau - 1``: the fit is the same as with any
score far enough above or below it.

With the intercept only, ``S*`` is the ``ceil((n+1)(1-alpha))``-th smallest score:
split conformal.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray


def design_matrix(x: ArrayLike, center: NDArray[np.float64], scale: NDArray[np.float64]
                  ) -> NDArray[np.float64]:
    """``[1, (x - center) / scale]`` per row: an intercept and standardised covariates
    (an affine change of covariates leaves the function class, and so the cutoffs, as
    they are; standardising only conditions the LP)."""
    a = np.asarray(x, dtype=np.float64)
    a = a.reshape(-1, center.size) if a.ndim != 2 else a
    return np.column_stack([np.ones(a.shape[0]), (a - center) / scale])


def standardiser(x: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Centre and scale of each covariate column (scale 1 for a constant column)."""
    center = x.mean(axis=0)
    scale = x.std(axis=0)
    return center, np.where(scale > 0, scale, 1.0)


def _bounds(scores: NDArray[np.float64], tau: float) -> NDArray[np.float64]:
    lo = np.where(scores == np.inf, tau, tau - 1.0)
    hi = np.where(scores == -np.inf, tau - 1.0, tau)
    return np.column_stack([lo, hi])


def _solve(phi_cal: NDArray[np.float64], scores: NDArray[np.float64], phi: NDArray[np.float64],
           tau: float) -> tuple[NDArray[np.float64], NDArray[np.float64]] | None:
    """The LP of :func:`cutoff` at ``phi``: ``(eta, beta_inf)``, or None when the fit at
    ``phi`` is unbounded (infeasible dual)."""
    from scipy.optimize import linprog

    finite = np.isfinite(scores)
    c = -np.where(finite, scores, 0.0)  # fixed rows add a constant to the objective
    # Dual simplex without presolve: about half the time of the default at these sizes.
    res = linprog(c, A_eq=phi_cal.T, b_eq=-tau * phi, bounds=_bounds(scores, tau),
                  method="highs-ds", options={"presolve": False})
    if res.status == 2:  # infeasible dual: the fit at x is unbounded above
        return None
    if res.status != 0:
        raise RuntimeError(f"the conditional-calibration LP failed: {res.message}")
    # linprog's equality multipliers are d(min -S.eta)/d(b_eq): minus beta_inf.
    return (np.asarray(res.x, dtype=np.float64),
            -np.asarray(res.eqlin.marginals, dtype=np.float64))


def cutoff(phi_cal: NDArray[np.float64], scores: NDArray[np.float64], phi: NDArray[np.float64],
           tau: float) -> float:
    """The conservative cutoff ``S*(x)`` for one test row with features ``phi`` (module
    docstring): one HiGHS LP."""
    got = _solve(phi_cal, scores, phi, tau)
    return math.inf if got is None else float(phi @ got[1])


#: A basis is reused for a feature vector only when its basic weights stay this far
#: inside their bounds: then it is the LP's unique optimal basis there (no tie to break).
_MARGIN = 1e-7


def cutoffs(phi_cal: NDArray[np.float64], scores: NDArray[np.float64],
            phi_test: NDArray[np.float64], alpha: float) -> NDArray[np.float64]:
    """:func:`cutoff` for every test row, with one LP per optimal basis instead of one
    per distinct feature vector.

    The LPs of two test rows differ only in the right-hand side ``-tau phi``. A solved
    LP's optimal basis (its ``d`` weights strictly inside ``[tau - 1, tau]``, the others
    at a bound) stays optimal for another ``phi'`` while the basic weights it implies,
    ``eta_B = Phi_B^-T (-tau phi' - Phi_N^T eta_N)``, stay inside their bounds (LP
    sensitivity: the reduced costs do not depend on the right-hand side); the multipliers
    ``beta_inf`` are then the same, and the cutoff is ``phi' . beta_inf``. Every
    remaining row is checked against each new basis at once; the rows no basis serves
    get LPs of their own."""
    tau = 1.0 - float(alpha)
    uniq, inverse = np.unique(phi_test, axis=0, return_inverse=True)
    vals = np.full(uniq.shape[0], np.nan)
    bounds = _bounds(scores, tau)
    todo = np.arange(uniq.shape[0])
    d = phi_cal.shape[1]
    while todo.size:
        j, todo = todo[0], todo[1:]
        got = _solve(phi_cal, scores, uniq[j], tau)
        if got is None:
            vals[j] = math.inf
            continue
        eta, beta = got
        vals[j] = float(uniq[j] @ beta)
        lo, hi = bounds[:, 0], bounds[:, 1]
        basic = np.flatnonzero((eta > lo + _MARGIN) & (eta < hi - _MARGIN))
        if basic.size != d or not todo.size:
            continue
        fixed = eta.copy()
        fixed[basic] = 0.0
        a_b = phi_cal[basic].T  # d x d: Phi_B^T
        if np.linalg.cond(a_b) > 1e8:
            continue
        rhs = -tau * uniq[todo] - (phi_cal.T @ fixed)[None, :]
        eta_b = np.linalg.solve(a_b, rhs.T).T  # one row of basic weights per test row
        ok = ((eta_b > lo[basic] + _MARGIN) & (eta_b < hi[basic] - _MARGIN)).all(axis=1)
        vals[todo[ok]] = uniq[todo[ok]] @ beta
        todo = todo[~ok]
    return vals[np.asarray(inverse).reshape(-1)]


def augmented_dual(phi_cal: NDArray[np.float64], scores: NDArray[np.float64],
                   phi: NDArray[np.float64], s: float, tau: float) -> tuple[float, float]:
    """``(eta_{n+1}, g_S(x))`` of the augmented fit with the test score imputed at ``s``."""
    from scipy.optimize import linprog

    a = np.vstack([phi_cal, phi[None, :]])
    sc = np.append(scores, s)
    finite = np.isfinite(sc)
    res = linprog(-np.where(finite, sc, 0.0), A_eq=a.T, b_eq=np.zeros(a.shape[1]),
                  bounds=_bounds(sc, tau), method="highs")
    if res.status != 0:
        raise RuntimeError(f"the augmented quantile-regression LP failed: {res.message}")
    return float(res.x[-1]), float(phi @ -np.asarray(res.eqlin.marginals))


def cutoff_by_search(phi_cal: NDArray[np.float64], scores: NDArray[np.float64],
                     phi: NDArray[np.float64], tau: float, *, level: float | None = None,
                     tol: float = 1e-9) -> float:
    """The cutoff from the definition: the largest imputed ``S`` with ``eta_{n+1}(S) <
    level`` found by bisection (``level = tau``: the conservative set; a draw of
    ``Unif[tau-1, tau]``: the randomised one), about 60 LPs. For checks, not for
    certifying."""
    level = tau if level is None else level
    fin = scores[np.isfinite(scores)]
    span = float(fin.max() - fin.min()) + 1.0 if fin.size else 1.0
    lo, hi = float(fin.min()) - span, float(fin.max()) + span
    while augmented_dual(phi_cal, scores, phi, hi, tau)[0] < level - 1e-9:
        hi += 4 * (hi - lo)
        if hi > 1e12:
            return math.inf
    while augmented_dual(phi_cal, scores, phi, lo, tau)[0] >= level - 1e-9:
        lo -= 4 * (hi - lo)
    while hi - lo > tol * max(1.0, abs(hi)):
        mid = 0.5 * (lo + hi)
        if augmented_dual(phi_cal, scores, phi, mid, tau)[0] < level - 1e-9:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)
