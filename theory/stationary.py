r"""Stationary linear dynamical systems: x_0 drawn from the stationary law (docs/math.md section 7.3).

The depth claim's systems (the setting of Cole, Zhao, Lu, Zhang, NeurIPS 2025, not the
paper's): stable A with eigenvalues on U[-r, r], r < 1, and the state started in its stationary law, so that
y is a stationary Gaussian process and no x_0 transient mixes with the error's decay
in T.  With Pi the stationary state covariance,

    Pi = A Pi A^T + Sigma_w            (for A = diag(lambda): Pi_ij = Sigma_w,ij / (1 - lambda_i lambda_j)),
    gamma(h) = Cov(y_t, y_(t+h)) = c^T A^h Pi c + sigma_v^2 [h = 0],

and the covariance of (y_1..y_T) is the Toeplitz matrix K[i, j] = gamma(|i - j|).

* :func:`autocovariances`: gamma(0..h) per system (Pi by the Kronecker solve of the
  Lyapunov equation, or the closed form when A is diagonal).
* :func:`best_ar`: the best AR(s) predictor of y_t from its s predecessors, the same for
  every t: w = Gamma_s^-1 (gamma(s), ..., gamma(1)), error variance gamma(0) - w^T (...).
* :func:`simulate_with_filter`: sequences whose first observation is taken after a
  burn-in of ``burn_in`` steps from x_0 ~ N(0, Sigma_0) (the law of the state after B
  steps differs from Pi by A^B (Sigma_0 - Pi) A^B^T, of order r^(2B): 0.9^400 = 5e-19
  for the default B = 200), with the Kalman prediction of the last observation from
  *all* earlier ones (burn-in included).  For a predictor f of y_T computed from the
  last T - 1 observations, E[(y_T - f)^2] = E[(f - m)^2] + v with m that prediction and
  v its (deterministic) error variance, so excesses between predictors are estimated
  from (f - m)^2 without the noise of y_T (Rao-Blackwellised).
* :func:`stationary_moments`: the population feature moments of one attention layer
  (theory.population) for setting a with stationary x_0, by Gauss-Legendre quadrature
  over each coordinate's eigenvalue on [-r, r] with the one-coordinate covariance

      G(lam)[i, j] = sigma_w^2 lam^|i-j| / (1 - lam^2) + (sigma_v^2 / d) [i = j],

  a rational function of lam analytic on a neighbourhood of [-r, r] (poles at +-1): the
  rule's error falls geometrically with its nodes (3T + 1 + :data:`EXTRA_NODES`; checked
  against a rule with three times the extra nodes, and against Monte Carlo over systems
  with exact per-system moments, in tests/test_stationary.py).

Worked example (d = 1, lambda = 1/2, sigma_w = 1, sigma_v = 0): Pi = 1 / (1 - 1/4) = 4/3,
gamma(h) = (4/3) 2^-h, and the best AR(1) weight is gamma(1) / gamma(0) = 1/2 with error
variance 4/3 - 1/2 * 2/3 = 1 (the process noise):

>>> import numpy as np
>>> from theory.systems import Systems
>>> one = Systems(A=np.array([[[0.5]]]), c=np.ones((1, 1)), Sigma_w=np.eye(1), Sigma_0=np.eye(1), sigma_v=0.0)
>>> autocovariances(one, 2).round(4).tolist()
[[1.3333, 0.6667, 0.3333]]
>>> w, v = best_ar(one, 1)
>>> float(w[0, 0]), float(v[0])
(0.5, 1.0)

*Improper learning: the excess of the best AR(s) predictor over the Kalman filter, and its rate in s* (docs/math.md section 7.1; claims/test_improper_learning.py).

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

from .coordinate import mixture_quadrature
from .kalman import kalman_predict
from .population import PopulationMoments, _reduced_moments, expand_reduced, feature_list
from .systems import LDSFamily, Systems
from .validation import (check_finite_array, check_generator, check_positive_int, check_real, check_type,
                         check_window)

__all__ = ["BURN_IN", "EXTRA_NODES", "state_covariance", "autocovariances", "toeplitz_covariance",
           "best_ar", "simulate_with_filter", "stationary_coordinate_covariance", "stationary_nodes",
           "stationary_moments", "stationary_family", "window2_eigen_bounds", "limit_moments",
           "limit_weights", "limit_excess", "stationary_ar_excess", "excess_from_autocovariances", "paired_log_excess", "paired_rate", "window_rate"]

#: burn-in steps before the first observation (module doc: the transient is of order r^(2B))
BURN_IN = 200
#: Gauss-Legendre nodes beyond the 3T + 1 of the polynomial rule (the stationary G is rational)
EXTRA_NODES = 64


def _stable(systems: Systems) -> Systems:
    check_type("systems", systems, Systems, "a Systems batch")
    rho = np.abs(np.linalg.eigvals(systems.A)).max()
    if not rho < 1:
        raise ValueError(f"systems must be stable (spectral radius < 1) for a stationary law, got {rho:.6g}")
    return systems


def state_covariance(systems: Systems) -> np.ndarray:
    """Pi (m, d, d), the solution of Pi = A Pi A^T + Sigma_w (module doc)."""
    systems = _stable(systems)
    Sw = systems.Sigma_w
    if systems.lam is not None:
        lam = systems.lam
        return Sw[None] / (1.0 - lam[:, :, None] * lam[:, None, :])
    m, d = systems.m, systems.d
    kron = np.einsum("mij,mkl->mikjl", systems.A, systems.A).reshape(m, d * d, d * d)
    Pi = np.linalg.solve(np.eye(d * d)[None] - kron, np.broadcast_to(Sw.reshape(-1), (m, d * d))[..., None])
    Pi = Pi[..., 0].reshape(m, d, d)
    return 0.5 * (Pi + np.swapaxes(Pi, 1, 2))


def autocovariances(systems: Systems, h_max: int) -> np.ndarray:
    """gamma(0..h_max) of the stationary observations, shape (m, h_max + 1)."""
    h_max = check_positive_int("h_max", h_max, minimum=0)
    Pi = state_covariance(systems)
    x = np.einsum("mij,mj->mi", Pi, systems.c)                 # A^h Pi c, h = 0, 1, ...
    out = np.empty((systems.m, h_max + 1))
    for h in range(h_max + 1):
        out[:, h] = np.einsum("mi,mi->m", systems.c, x)
        x = np.einsum("mij,mj->mi", systems.A, x)
    out[:, 0] += float(systems.sigma_v) ** 2
    return out


def toeplitz_covariance(systems: Systems, T: int) -> np.ndarray:
    """K (m, T, T), K[i, j] = gamma(|i - j|): the covariance of T stationary observations."""
    T = check_positive_int("T", T)
    g = autocovariances(systems, T - 1)
    i = np.arange(T)
    return g[:, np.abs(i[:, None] - i[None, :])]


def best_ar(systems: Systems, s: int) -> tuple[np.ndarray, np.ndarray]:
    """(w (m, s) in the order y_(t-s)..y_(t-1), error variance (m,)) of the best AR(s)
    predictor of the stationary process (theory.kalman.ar_population_predictor's order)."""
    s = check_positive_int("s", s)
    g = autocovariances(systems, s)
    i = np.arange(s)
    G = g[:, np.abs(i[:, None] - i[None, :])]
    rhs = g[:, s:0:-1]                                         # Cov(y_(t-s+j), y_t) = gamma(s - j)
    w = np.linalg.solve(G, rhs[..., None])[..., 0]
    return w, g[:, 0] - np.einsum("ms,ms->m", w, rhs)


def simulate_with_filter(systems: Systems, rng: np.random.Generator, T: int, burn_in: int = BURN_IN):
    """(y (m, T), m_T (m,), v_T (m,)): T stationary observations per system (after
    ``burn_in`` steps), the Kalman prediction of the last from all earlier observations
    (burn-in included) and its error variance (module doc)."""
    _stable(systems)
    T = check_positive_int("T", T, minimum=2)
    burn_in = check_positive_int("burn_in", burn_in, minimum=0)
    check_generator("rng", rng)
    full = systems.simulate(rng, burn_in + T)
    kf = kalman_predict(systems, full)
    return np.ascontiguousarray(full[:, burn_in:]), kf.prediction, kf.variance


def stationary_coordinate_covariance(lam, T: int, sw2: float, share: float) -> np.ndarray:
    """G(lam_n) (N, T, T) of one stationary coordinate (module doc)."""
    x = np.asarray(lam, dtype=np.float64)
    i = np.arange(T)
    G = (sw2 / (1.0 - x * x))[:, None, None] * x[:, None, None] ** np.abs(i[:, None] - i[None, :])[None]
    G = np.ascontiguousarray(G)
    G[:, i, i] += share
    return G


def stationary_nodes(T: int, radius: float, extra: int = EXTRA_NODES) -> tuple[np.ndarray, np.ndarray]:
    """(nodes, probability weights) of the (3T + 1 + extra)-point Gauss-Legendre rule on [-r, r]."""
    x, w = np.polynomial.legendre.leggauss(3 * T + 1 + extra)
    return radius * x, 0.5 * w


def _stationary_diagonal(family) -> LDSFamily:
    check_type("family", family, LDSFamily, "an LDSFamily")
    if not family.spec.stationary_quadrature or family.radius >= 1:
        raise ValueError(f"family must be setting 'a' with radius < 1 (a stationary law), got {family!r}")
    return family


def stationary_moments(s: int, family: LDSFamily, *, extra: int = EXTRA_NODES, chunk: int = 32) -> PopulationMoments:
    """Population feature moments (theory.population) of ``family`` -- setting a: A =
    diag(lambda), lambda_i iid U[-r, r], c = 1, Sigma_w = sigma_w^2 I, r < 1 -- at its T with
    x_0 from the stationary law, by quadrature over each coordinate's lambda (module doc).
    ``method`` is "quadrature-stationary"; the standard errors are zero (the rule's error is
    checked in the tests, not estimated here)."""
    family = _stationary_diagonal(family)
    s, T = check_window(s, family.T)
    d, r = family.d, family.radius
    sw2, share = family.sigma_w ** 2, family.sigma_v ** 2 / d

    def form(X, Y, Z):
        return _reduced_moments(s, T, X, Y, Z)

    M, c, Kbar = mixture_quadrature(
        form, T, np.full(d, sw2), 0.0, share, nodes=stationary_nodes(T, r, extra),
        coordinate=lambda lam, v: stationary_coordinate_covariance(lam, T, v, share), chunk=chunk)
    M, c = expand_reduced(s, np.asarray(M), np.asarray(c))
    f = len(feature_list(s))
    return PopulationMoments(s=s, M=M, c=c, v=float(Kbar[T - 1, T - 1]), M_se=np.zeros((f, f)),
                             c_se=np.zeros(f), v_se=0.0, method="quadrature-stationary")


def _limit_pieces(systems: Systems, s: int):
    g = autocovariances(systems, s)
    i = np.arange(s + 1)
    G = g[:, np.abs(i[:, None] - i[None, :])]                 # the tokens' covariance Gamma_(s+1)
    feats = feature_list(s)
    Fr = np.stack([G[:, r, l] for (r, l, _) in feats], 1)      # (systems, f): Gamma[r, l] of each feature
    mq = np.array([m for (_, _, m) in feats])
    return g, G, Fr, mq


def limit_moments(systems: Systems, s: int) -> PopulationMoments:
    """The one layer's feature moments in the limit T -> infinity, averaged over ``systems``.

    As T grows C -> Gamma_(s+1) (the tokens' stationary covariance), so the feature
    F_(r,l,m) = C[r, l] z_q[m] tends to Gamma[r, l] z_q[m] and the layer predicts u^T z_q
    with u_m = sum_(r,l) beta_(r,l,m) Gamma[r, l] (:func:`limit_weights`): an AR(s)
    predictor whose weights are linear in the autocovariances.  Hence
    M = E[Gamma_rl Gamma_r'l' Gamma_s[m, m']], c = E[Gamma_rl gamma(s - m)],
    v = E[gamma(0)] (docs/math.md section 7.3).  ``method`` is "limit" (Monte Carlo over
    the given systems; no standard errors)."""
    s = check_positive_int("s", s)
    g, G, Fr, mq = _limit_pieces(systems, s)
    Gq, cq = G[:, :s, :s], g[:, s:0:-1]
    M = np.einsum("Na,Nb,Nab->ab", Fr, Fr, Gq[:, mq[:, None], mq[None, :]]) / systems.m
    c = np.einsum("Na,Na->a", Fr, cq[:, mq]) / systems.m
    f = len(mq)
    return PopulationMoments(s=s, M=M, c=c, v=float(g[:, 0].mean()), M_se=np.zeros((f, f)), c_se=np.zeros(f),
                             v_se=0.0, method="limit", m=systems.m)


def limit_weights(systems: Systems, s: int, beta) -> np.ndarray:
    """u (m, s): the AR(s) weights the layer with features beta predicts by in the limit
    T -> infinity, per system (:func:`limit_moments`)."""
    _, _, Fr, mq = _limit_pieces(systems, check_positive_int("s", s))
    beta = np.asarray(beta, dtype=float)
    return np.stack([(Fr * np.where(mq == k, beta, 0.0)).sum(1) for k in range(s)], 1)


def limit_excess(systems: Systems, s: int, beta) -> np.ndarray:
    """Per system, the limit predictor's excess over the best AR(s): (u - w*)^T Gamma_s (u - w*)."""
    w, _ = best_ar(systems, s)
    g = autocovariances(systems, s)
    i = np.arange(s)
    Gs = g[:, np.abs(i[:, None] - i[None, :])]
    d = limit_weights(systems, s, beta) - w
    return np.einsum("Ns,Nst,Nt->N", d, Gs, d)


def window2_eigen_bounds(family: LDSFamily) -> tuple[float, float]:
    """(inf, sup) over the systems of a diagonal family (A = diag(lambda), |lambda_k| <= r,
    c = 1, Sigma_w = sigma_w^2 I) of the eigenvalues of Gamma_2, the stationary covariance of
    two consecutive observations: gamma(0) -+ |gamma(1)| with
    gamma(0) = sigma_v^2 + sum_k sigma_w^2 / (1 - lambda_k^2), gamma(1) = sum_k sigma_w^2 lambda_k / (1 - lambda_k^2),
    so gamma(0) - |gamma(1)| >= sigma_v^2 + d sigma_w^2 / (1 + r) and
    gamma(0) + |gamma(1)| <= sigma_v^2 + d sigma_w^2 / (1 - r), both attained with every
    lambda_k = r (docs/math.md section 7.3).

    >>> window2_eigen_bounds(stationary_family(30))
    (0.036315789473684..., 0.51...)
    """
    family = _stationary_diagonal(family)
    sw2, sv2, d, r = family.sigma_w ** 2, family.sigma_v ** 2, family.d, family.radius
    return sv2 + d * sw2 / (1 + r), sv2 + d * sw2 / (1 - r)


def stationary_family(T: int, radius: float = 0.9, **params) -> LDSFamily:
    """The family whose systems the stationary routes take (setting a, eigenvalues on
    U[-r, r]); its Sigma_0 only seeds the burn-in of :func:`simulate_with_filter`."""
    return LDSFamily("a", T=T, radius=radius, **params)

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
