r"""Stationary linear dynamical systems: x_0 drawn from the stationary law (docs/math.md section 7.3).

The depth claim's systems (the second source's setting, not the paper's): stable A with
eigenvalues on U[-r, r], r < 1, and the state started in its stationary law, so that
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
"""
from __future__ import annotations

import numpy as np

from .coordinate import mixture_quadrature
from .kalman import kalman_predict
from .population import PopulationMoments, _reduced_moments, expand_reduced, feature_list
from .systems import LDSFamily, Systems
from .validation import check_generator, check_positive_int, check_type, check_window

__all__ = ["BURN_IN", "EXTRA_NODES", "state_covariance", "autocovariances", "toeplitz_covariance",
           "best_ar", "simulate_with_filter", "stationary_coordinate_covariance", "stationary_nodes",
           "stationary_moments", "stationary_family", "window2_eigen_bounds", "limit_moments",
           "limit_weights", "limit_excess"]

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
