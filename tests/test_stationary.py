"""theory.stationary: stationary LDS, its autocovariances, the best AR(s), the filter over a
burn-in, and the one-layer moments by quadrature over the stationary coordinate law.

Oracles: the exact covariance of theory.systems (the Pi_t recursion from Sigma_0) over a
long burn-in, theory.kalman.ar_population_predictor on that covariance, sampled sequences
(Monte Carlo), the paper-law quadrature of theory.coordinate (for the chunked route), and
per-system exact moments (theory.population.gaussian_feature_moments) averaged over
sampled systems.  Controls: a short burn-in, the initial law's moments.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from theory.coordinate import mixture_quadrature
from theory.kalman import ar_population_predictor
from theory.population import _reduced_moments, gaussian_feature_moments, population_moments
from theory.stationary import (autocovariances, best_ar, simulate_with_filter, stationary_family,
                               stationary_moments, toeplitz_covariance, window2_eigen_bounds)
from theory.systems import LDSFamily, Systems, covariance

B = 300          # burn-in of the oracle: 0.9^600 ~ 3e-28


def _systems(setting, d, seed, m=6, radius=0.9):
    return LDSFamily(setting, d=d, T=10, radius=radius).sample_systems(np.random.default_rng(seed), m)


@settings(max_examples=25, deadline=None)
@given(setting=st.sampled_from(["a", "b", "c", "d"]), d=st.integers(1, 4), seed=st.integers(0, 2 ** 32 - 1),
       T=st.integers(2, 12))
def test_toeplitz_covariance_is_the_limit_of_the_exact_covariance(setting, d, seed, T):
    """The last T x T block of K over B + T steps from Sigma_0 (theory.systems) equals the
    stationary Toeplitz covariance to 1e-12 relative; control: after 3 steps it does not."""
    sy = _systems(setting, d, seed)
    K = covariance(sy, B + T)[:, B:, B:]
    St = toeplitz_covariance(sy, T)
    assert np.abs(K - St).max() <= 1e-12 * np.abs(St).max()
    short = covariance(sy, 3 + T)[:, 3:, 3:]
    assert np.abs(short - St).max() > 1e-6 * np.abs(St).max()


@settings(max_examples=20, deadline=None)
@given(setting=st.sampled_from(["a", "b", "d"]), d=st.integers(1, 4), seed=st.integers(0, 2 ** 32 - 1),
       s=st.integers(1, 4))
def test_best_ar_matches_the_population_predictor_after_a_burn_in(setting, d, seed, s):
    sy = _systems(setting, d, seed)
    w, v = best_ar(sy, s)
    w_ref, v_ref = ar_population_predictor(sy, B + s + 2, s)
    assert np.allclose(w, w_ref, rtol=1e-9, atol=1e-12)
    assert np.allclose(v, v_ref, rtol=1e-9)


def test_simulated_sequences_are_stationary_and_the_filter_calibrated():
    """Monte Carlo: var(y_t) at the first and last position equals gamma(0), and the filter's
    prediction error has variance v (each within 5 standard errors)."""
    fam = stationary_family(20)
    rng = np.random.default_rng(7)
    sy = fam.sample_systems(rng, 1)
    many = Systems(A=np.repeat(sy.A, 40000, 0), c=np.repeat(sy.c, 40000, 0), Sigma_w=sy.Sigma_w,
                   Sigma_0=sy.Sigma_0, sigma_v=sy.sigma_v, lam=np.repeat(sy.lam, 40000, 0))
    y, m, v = simulate_with_filter(many, rng, 20)
    g0 = autocovariances(sy, 0)[0, 0]
    for col in (0, -1):
        x = y[:, col] ** 2
        assert abs(x.mean() - g0) < 5 * x.std() / np.sqrt(x.size)
    e = (y[:, -1] - m) ** 2
    assert abs(e.mean() - v[0]) < 5 * e.std() / np.sqrt(e.size)
    assert v[0] < g0


def test_unstable_systems_are_refused():
    sy = _systems("a", 2, 0, radius=1.0)
    sy = Systems(A=sy.A * 0 + np.eye(2), c=sy.c, Sigma_w=sy.Sigma_w, Sigma_0=sy.Sigma_0, sigma_v=0.1)
    with pytest.raises(ValueError, match="systems must be stable"):
        autocovariances(sy, 3)


def test_window2_bounds_hold_and_are_attained():
    fam = stationary_family(30)
    lo, hi = window2_eigen_bounds(fam)
    sy = fam.sample_systems(np.random.default_rng(3), 20000)
    g = autocovariances(sy, 1)
    ev = np.stack([g[:, 0] - np.abs(g[:, 1]), g[:, 0] + np.abs(g[:, 1])], 1)
    assert ev[:, 0].min() >= lo * (1 - 1e-12) and ev[:, 1].max() <= hi * (1 + 1e-12)
    edge = Systems(A=np.eye(fam.d)[None] * fam.radius, c=np.ones((1, fam.d)), Sigma_w=fam.process_noise_cov(),
                   Sigma_0=fam.initial_cov(), sigma_v=fam.sigma_v, lam=np.full((1, fam.d), fam.radius))
    G = toeplitz_covariance(edge, 2)[0]
    assert np.allclose(np.linalg.eigvalsh(G), [lo, hi], rtol=1e-12)
    for bad in (LDSFamily("b", radius=0.9), LDSFamily("a", radius=1.0)):
        with pytest.raises(ValueError, match="family must be setting 'a'"):
            window2_eigen_bounds(bad)
        with pytest.raises(ValueError, match="family must be setting 'a'"):
            stationary_moments(2, bad)


def test_chunked_quadrature_equals_the_unchunked_one():
    """theory.coordinate.mixture_quadrature with ``chunk``: the same sums in another order."""
    fam = LDSFamily("c", d=3, T=9)
    full = population_moments(fam, 2)
    s, T = 2, fam.T

    def form(X, Y, Z):
        return _reduced_moments(s, T, X, Y, Z)
    M, c, _ = mixture_quadrature(form, T, np.diag(fam.process_noise_cov()), fam.sigma_0 ** 2,
                                 fam.sigma_v ** 2 / fam.d, chunk=5)
    from theory.population import expand_reduced
    M, c = expand_reduced(s, np.asarray(M), np.asarray(c))
    assert np.abs(M - full.M).max() <= 1e-13 * np.abs(full.M).max()
    assert np.abs(c - full.c).max() <= 1e-13 * np.abs(full.c).max()


@pytest.mark.parametrize("T", [8, 20])
def test_stationary_moments_against_systems_monte_carlo(T):
    """Quadrature against exact per-system moments averaged over 4000 sampled systems (every
    entry of M, c and v within 5 standard errors), and against a rule with three times the
    extra nodes (1e-11); control: the paper's initial law (x_0 ~ N(0, I)) is many standard
    errors away."""
    s = 2
    fam = stationary_family(T)
    mom = stationary_moments(s, fam)
    sy = fam.sample_systems(np.random.default_rng(T), 4000)
    M, c, v = gaussian_feature_moments(toeplitz_covariance(sy, T), s)
    for q, ref in ((M, mom.M), (c, mom.c), (v, mom.v)):
        se = q.std(0) / np.sqrt(q.shape[0])
        z = np.abs(q.mean(0) - ref) / np.maximum(se, 1e-300)
        assert np.max(z) < 5
    more = stationary_moments(s, fam, extra=3 * 64)
    for a, b in ((more.M, mom.M), (more.c, mom.c)):
        assert np.abs(a - b).max() <= 1e-11 * np.abs(b).max()
    assert abs(more.v - mom.v) <= 1e-11 * mom.v
    init = population_moments(LDSFamily("a", T=T, radius=0.9), s, method="mc-systems", m=4000,
                              rng=np.random.default_rng(1))
    se = M.std(0) / np.sqrt(M.shape[0])
    assert (np.abs(init.M - mom.M) / np.maximum(se, 1e-300)).max() > 20


def test_limit_moments_are_the_large_T_limit_of_the_exact_moments():
    """At a fixed beta, the per-system exact loss at length T (gaussian_feature_moments of the
    Toeplitz covariance) approaches the limit loss like 1/T: the gap L_T - L_inf halves
    from T = 100 to 200 (ratio within [1.8, 2.2]), and L_200 - L_inf is under 1 % of L_inf.  The limit loss
    equals the best AR(2) error plus the limit excess (to 1e-12).  Control: limit moments
    whose target covariances are reversed (gamma(1 + m) for gamma(s - m)) are off."""
    from theory.population import PopulationMoments, beta_from_weights, feature_list
    from theory.stationary import limit_excess, limit_moments
    s = 2
    sy = stationary_family(30).sample_systems(np.random.default_rng(11), 40)
    rng = np.random.default_rng(12)
    beta = beta_from_weights(rng.standard_normal((s + 1, s + 1)), rng.standard_normal((s + 1, s + 1)))
    lim = limit_moments(sy, s)
    L_inf = float(lim.loss(beta))
    _, var = best_ar(sy, s)
    assert abs(2 * L_inf - (var + limit_excess(sy, s, beta)).mean()) <= 1e-12 * 2 * L_inf
    scaled = {}
    for T in (100, 200):
        M, c, v = gaussian_feature_moments(toeplitz_covariance(sy, T), s)
        L_T = float(PopulationMoments(s=s, M=M.mean(0), c=c.mean(0), v=float(v.mean()), M_se=M[0] * 0,
                                      c_se=c[0] * 0, v_se=0.0, method="exact").loss(beta))
        scaled[T] = (L_T - L_inf) * T
    gap_ratio = (scaled[100] / 100) / (scaled[200] / 200)     # doubling T halves an O(1/T) gap
    assert 1.8 < gap_ratio < 2.2
    assert abs(scaled[200] / 200) < 0.01 * L_inf
    g = autocovariances(sy, s)
    mq = np.array([m for (_, _, m) in feature_list(s)])
    i = np.arange(s + 1)
    G = g[:, np.abs(i[:, None] - i[None, :])]
    Fr = np.stack([G[:, r, l] for (r, l, _) in feature_list(s)], 1)
    wrong_c = np.einsum("Na,Na->a", Fr, g[:, 1:s + 1][:, mq]) / sy.m
    wrong = PopulationMoments(s=s, M=lim.M, c=wrong_c, v=lim.v, M_se=lim.M_se, c_se=lim.c_se, v_se=0.0,
                              method="limit")
    assert abs(float(wrong.loss(beta)) - L_inf) > 0.05 * L_inf


def test_the_coordinate_covariance_is_computed_in_float64_whatever_the_nodes_dtype():
    """Nodes handed over in float32 give the float64 covariance of the same (rounded) nodes:
    sw2 / (1 - lam^2) lam^|i-j| loses ~1e-7 in float32 near |lam| = 1."""
    from theory.stationary import stationary_coordinate_covariance
    lam32 = np.array([0.999, -0.5, 0.0], dtype=np.float32)
    got = stationary_coordinate_covariance(lam32, 6, 0.01, 0.25)
    ref = stationary_coordinate_covariance(lam32.astype(np.float64), 6, 0.01, 0.25)
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, ref)


def test_the_filter_simulation_needs_two_observations():
    from theory.stationary import simulate_with_filter
    many = stationary_family(5, 0.5, d=1).sample_systems(np.random.default_rng(0), 2)
    with pytest.raises(ValueError, match="^T must be"):
        simulate_with_filter(many, np.random.default_rng(1), 1)
    y, m, v = simulate_with_filter(many, np.random.default_rng(1), 2)
    assert y.shape == (2, 2) and m.shape == v.shape == (2,)
