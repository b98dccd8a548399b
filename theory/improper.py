r"""Improper learning: the excess of the best AR(s) predictor over the Kalman filter, and its rate in s (docs/math.md section 7.1).

*The excess without cancellation.*  For a stationary system (the state started in its
stationary law, theory.stationary) y is a stationary Gaussian process with autocovariances
gamma(h), and the best AR(s) predictor of y_T is the same for every T.  Levinson-Durbin's
recursion over s gives its error sigma_s^2 through the partial autocorrelations phi_kk:
sigma_s^2 = sigma_(s-1)^2 (1 - phi_ss^2).  The optimal predictor of y_T from all T - 1
earlier observations (the Kalman filter started from the stationary law) has error
sigma_(T-1)^2, so

    excess(s) = sigma_s^2 / sigma_(T-1)^2 - 1 = prod_(k = s+1..T-1) 1 / (1 - phi_kk^2) - 1
              = expm1(-sum_(k = s+1..T-1) log1p(-phi_kk^2))

(:func:`excess_from_autocovariances`): no difference of two numbers of order one -- the
subtraction MSE_AR(s) / MSE_opt - 1 (theory.kalman.ar_population_predictor against
theory.kalman.optimal_mse) loses every digit below about 1e-13 -- and non-increasing in s
by construction.  Against 60-digit mpmath it agrees to 1.3e-8 (relative) down to excess
1e-12, to 4e-6 down to 1e-16 and to 2e-4 down to 1e-20, on the three worst-conditioned of
1600 systems drawn from settings a-d with d = 1, 2, 3, 5 at T = 160 (cond(K) up to 1.8e4;
docs/notes.md, "Improper learning across dimensions").  O(T^2) operations per system,
batched over systems, with no factorisation.

*The rate, fitted on pairs of windows.*  The unrolled filter (docs/math.md section 3) gives
excess(s) = c^T L^s V_s L^sT c / MSE_opt with L = A - K_g c^T and V_s the error covariance of
the filter's state estimate x_hat_(T-s|T-s-1) given the s observations after it -- so
asymptotically a sum of terms mu_i^s mu_j^s over the eigenvalues of L.  When the eigenvalues
of largest modulus are a pair +-mu (a system with eigenvalues +-lambda), the leading terms
are rho^(2s) (C + D (-1)^s): the excess falls in steps of two windows, and a straight line
through log excess(s) over a few windows has a slope that depends on where the steps fall
(over four windows of an exact staircase, 0.8 or 1.2 times the rate).  Write
excess(s) = rho^(2s) g(s) with g of period 2; the *paired log excess*

    z(s) = (log excess(s) + log excess(s + 1)) / 2 = (2s + 1) log rho + (log g(0) + log g(1)) / 2

is exactly linear in s with slope 2 log rho whatever g is (:func:`paired_log_excess`): the
average over two neighbouring windows removes every period-2 component.  Its differences are
the two-window log ratios, z(s + 1) - z(s) = (log excess(s + 2) - log excess(s)) / 2, so a
least-squares slope of z over consecutive s is a weighted mean of them.  :func:`paired_rate`
fits that slope over the last ``pairs`` pairs (s, s + 1) whose two windows both lie in the
fit range: the last ones, because the claim is about large s (the faster modes of L have
decayed there; the lower end of the range is where the numbers stop being exact).  An
oscillation of another period (a complex pair of L with an argument other than 0 or pi) is
not removed; no such pair leads L in the 1600 systems above.

Worked example: an exact staircase, excess(2k) = excess(2k + 1) = 0.04^(2k) (rho = 0.2); a
straight line through four windows misses the rate by 20 %, the paired fit returns it:

>>> import numpy as np
>>> ex = 0.04 ** (2 * (np.arange(1, 13) // 2))
>>> round(float(window_rate(ex[2:6], 0.0, 1.0)[0] / (2 * np.log(0.2))), 3)
1.2
>>> round(float(paired_rate(ex, 0.0, 1.0)[0] / (2 * np.log(0.2))), 12)
1.0
"""
from __future__ import annotations

import numpy as np

from .stationary import autocovariances
from .systems import Systems
from .validation import check_finite_array, check_positive_int, check_real, check_type

__all__ = ["stationary_ar_excess", "excess_from_autocovariances", "paired_log_excess", "paired_rate", "window_rate"]


def stationary_ar_excess(systems: Systems, T: int, s_max: int) -> np.ndarray:
    """excess(s) = (MSE of the best AR(s) predictor of y_T - MSE of the optimal predictor
    from y_1..y_(T-1)) / the latter, s = 1..s_max, shape (m, s_max), for each system started
    from its stationary law (theory.stationary.autocovariances; module doc)."""
    check_type("systems", systems, Systems, "a Systems batch")
    T = check_positive_int("T", T, minimum=3)
    return excess_from_autocovariances(autocovariances(systems, T - 1), s_max)


def excess_from_autocovariances(gamma, s_max: int) -> np.ndarray:
    """excess(s), s = 1..s_max, of a stationary process with autocovariances gamma (m, T)
    (lags 0..T-1): prod_(k > s) 1 / (1 - phi_kk^2) - 1 over the partial autocorrelations
    phi_kk, k < T, from Levinson-Durbin's recursion (module doc).

    An AR(1) process (gamma(h) = 2^-h) needs one lag; white noise none:

    >>> excess_from_autocovariances(np.array([[1.0, 0.5, 0.25, 0.125], [1.0, 0.0, 0.0, 0.0]]), 3).tolist()
    [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]
    """
    g = check_finite_array("gamma", gamma, ndim=2)
    m, T = g.shape
    if T < 3 or np.any(g[:, 0] <= 0):
        raise ValueError(f"gamma must hold at least 3 lags with gamma(0) > 0, got shape {g.shape}")
    s_max = check_positive_int("s_max", s_max)
    if s_max > T - 1:
        raise ValueError(f"s_max must be at most T - 1 = {T - 1}, got {s_max}")
    phi = np.zeros((m, T))                  # phi[:, 1..k]: the AR(k) coefficients of lags 1..k
    v = g[:, 0].copy()                      # sigma_k^2
    log_keep = np.zeros((m, T))             # log(1 - phi_kk^2), k = 1..T-1
    for k in range(1, T):
        a = (g[:, k] - np.einsum("mj,mj->m", phi[:, 1:k], g[:, k - 1:0:-1])) / v
        if np.any(np.abs(a) >= 1):
            raise ValueError("gamma must be the autocovariances of a regular stationary process "
                             "(positive definite Toeplitz matrix)")
        phi[:, 1:k] -= a[:, None] * phi[:, k - 1:0:-1]
        phi[:, k] = a
        v *= 1 - a * a
        log_keep[:, k] = np.log1p(-a * a)
    tail = np.cumsum(log_keep[:, ::-1], axis=1)[:, ::-1]        # tail[:, k] = sum_(j >= k) log_keep[:, j]
    return np.expm1(-np.concatenate([tail[:, 2:], np.zeros((m, 1))], axis=1)[:, :s_max]) + 0.0     # no -0.0


def _excess_1d(excess) -> np.ndarray:
    ex = check_finite_array("excess", excess, ndim=1)
    if ex.size < 2:
        raise ValueError(f"excess must hold at least 2 windows (s = 1, 2, ...), got {ex.size}")
    return ex


def _range(lo, hi) -> tuple[float, float]:
    lo = check_real("lo", lo, minimum=0.0)
    hi = check_real("hi", hi)
    if not lo < hi:
        raise ValueError(f"lo must be below hi, got {lo!r} and {hi!r}")
    return lo, hi


def paired_log_excess(excess) -> np.ndarray:
    """z(s) = (log excess(s) + log excess(s + 1)) / 2 for s = 1..S-1, from excess (S,) over
    s = 1..S (module doc); NaN where a window's excess is not positive."""
    ex = _excess_1d(excess)
    with np.errstate(divide="ignore", invalid="ignore"):
        lg = np.where(ex > 0, np.log(np.where(ex > 0, ex, 1.0)), np.nan)
    return 0.5 * (lg[:-1] + lg[1:])


def paired_rate(excess, lo: float, hi: float, pairs: int = 4):
    """The least-squares slope in s of the paired log excess z (module doc) over the last
    ``pairs`` pairs (s, s + 1) with lo < excess(s), excess(s + 1) < hi, and the s of those
    pairs; ``(nan, s)`` with fewer than 2 such pairs.  excess (S,) is over s = 1..S.  On a
    sequence rho^(2s) g(s) with g of period 2 the slope is 2 log rho exactly."""
    ex = _excess_1d(excess)
    lo, hi = _range(lo, hi)
    pairs = check_positive_int("pairs", pairs, minimum=2)
    inside = (ex > lo) & (ex < hi)
    idx = np.flatnonzero(inside[:-1] & inside[1:])[-pairs:]
    s = idx + 1
    if idx.size < 2:
        return float("nan"), s
    z = paired_log_excess(ex)[idx]
    return float(np.polyfit(s, z, 1)[0]), s


def window_rate(excess, lo: float, hi: float):
    """The least-squares slope in s of log excess(s) over every window with lo < excess < hi,
    and those s (``(nan, s)`` with fewer than 3): the one-window rule the paired fit replaces
    -- broken by a staircase (module doc), kept for the controls that show it."""
    ex = _excess_1d(excess)
    lo, hi = _range(lo, hi)
    s = np.flatnonzero((ex > lo) & (ex < hi)) + 1
    if s.size < 3:
        return float("nan"), s
    return float(np.polyfit(s, np.log(ex[s - 1]), 1)[0]), s
