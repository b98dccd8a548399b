"""theory.reference (moments part): Isserlis moments, symbolic moments, exact setting-(a) expectations.

Oracles (each independent of the code under test):

- a brute-force pairing enumeration (all permutations of the 2k positions, deduplicated);
- sympy: the symbolic Isserlis sum with numbers substituted, and exact integration over
  lambda of the symbolic moment of a symbolic K(lambda) built by brute force;
- mpmath quadrature for the uniform moments;
- Monte Carlo (fixed K; a mixture over sampled systems; raw trajectories), within
  4 standard errors computed from the samples.

Deliberately wrong pairing lists are pushed through the same checks to show they fail.
"""
from __future__ import annotations

import itertools
from fractions import Fraction

import mpmath
import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from _oracles import (
    assert_means_match_mc,
    brute_force_covariance,
    brute_force_pairings,
    double_factorial,
    isserlis_from_pairings,
    random_spd,
    wrong_pairings_counted_twice,
    wrong_pairings_dropped,
    wrong_pairings_ordered,
)
from theory.reference import (
    coordinate_covariance_poly,
    exact_moments_a,
    gaussian_moments,
    mixture_moments,
    pairings,
    set_partitions,
    symbolic_moment,
    uniform_moment,
)
from theory.systems import LDSFamily


def index_tuples(T_max=5, orders=(2, 4, 6, 8)):
    """(T, idx): a horizon and one 0-based index tuple of an allowed order."""
    return st.integers(1, T_max).flatmap(
        lambda T: st.tuples(st.just(T), st.sampled_from(orders).flatmap(
            lambda k: st.lists(st.integers(0, T - 1), min_size=k, max_size=k).map(tuple))))


def assert_isserlis_matches(K, idx, pairing_list, *, rtol=1e-12):
    """The comparison check: library Isserlis value == sum over ``pairing_list``."""
    ours = gaussian_moments(K, [idx])[0]
    ref = isserlis_from_pairings(K, idx, pairing_list)
    scale = isserlis_from_pairings(np.abs(K), idx, pairing_list)
    assert abs(ours - ref) <= rtol * max(scale, 1e-300), (ours, ref)


def to_rational(q: Fraction) -> sp.Rational:
    return sp.Rational(q.numerator, q.denominator)


# ------------------------------------------------------------------------ pairings


@pytest.mark.parametrize("order", [2, 4, 6, 8])
def test_pairings_match_brute_force(order):
    P = pairings(order)
    assert P.shape == (double_factorial(order - 1), order // 2, 2)
    assert len(P) == {2: 1, 4: 3, 6: 15, 8: 105}[order]
    ours = sorted(tuple(sorted(tuple(sorted(p)) for p in pr)) for pr in P.tolist())
    assert ours == list(brute_force_pairings(order))
    for pr in P:                                  # each one is a perfect matching
        assert sorted(pr.ravel().tolist()) == list(range(order))


def test_wrong_pairing_lists_have_wrong_counts():
    assert len(wrong_pairings_ordered(4)) == 12
    assert len(wrong_pairings_dropped(6)) == 14
    assert len(wrong_pairings_counted_twice(4)) == 6


# --------------------------------------------------- Isserlis: brute force and sympy


@given(ti=index_tuples(), seed=st.integers(0, 2**32 - 1))
def test_gaussian_moments_equal_brute_force(ti, seed):
    T, idx = ti
    K = random_spd(np.random.default_rng(seed), T)
    assert_isserlis_matches(K, idx, brute_force_pairings(len(idx)))


@settings(max_examples=10)
@given(ti=index_tuples(T_max=4), seed=st.integers(0, 2**32 - 1))
def test_gaussian_moments_batched_over_systems(ti, seed):
    T, idx = ti
    rng = np.random.default_rng(seed)
    Ks = np.stack([random_spd(rng, T) for _ in range(3)])
    out = gaussian_moments(Ks, [idx, idx])
    assert out.shape == (3, 2)
    for k in range(3):
        assert out[k, 0] == out[k, 1]
        # batched and single evaluations may sum the pairings in a different order:
        # equal to float64 round-off (the suite's 1e-12), not bit for bit
        np.testing.assert_allclose(out[k, 0], gaussian_moments(Ks[k], idx)[0], rtol=1e-12)


@pytest.mark.parametrize("order,which", [(4, "dropped"), (6, "dropped"), (8, "dropped"),
                                         (4, "ordered"), (6, "twice")])
def test_wrong_pairings_fail_the_same_check(order, which):
    wrong = {"dropped": wrong_pairings_dropped, "ordered": wrong_pairings_ordered,
             "twice": wrong_pairings_counted_twice}[which](order)
    K = random_spd(np.random.default_rng(order), 4)
    idx = tuple(np.random.default_rng(1).integers(0, 4, order))
    assert_isserlis_matches(K, idx, brute_force_pairings(order))
    with pytest.raises(AssertionError):
        assert_isserlis_matches(K, idx, wrong)


@settings(max_examples=15)
@given(ti=index_tuples(T_max=4, orders=(2, 4, 6)), seed=st.integers(0, 2**32 - 1))
def test_gaussian_moments_equal_sympy_substitution(ti, seed):
    T, idx = ti
    K = random_spd(np.random.default_rng(seed), T)
    expr = symbolic_moment(idx)
    subs = {sp.Symbol(f"K_{a}_{b}"): K[a, b] for a in range(T) for b in range(a, T)}
    val = float(expr.subs(subs))
    ours = gaussian_moments(K, [idx])[0]
    scale = isserlis_from_pairings(np.abs(K), idx, brute_force_pairings(len(idx)))
    assert abs(val - ours) <= 1e-12 * scale


@settings(max_examples=15)
@given(ti=index_tuples(T_max=4, orders=(2, 4, 6)),
       entries=st.lists(st.fractions(-3, 3, max_denominator=20), min_size=10, max_size=10))
def test_symbolic_moment_with_rational_matrix_is_exact(ti, entries):
    T, idx = ti
    F = [[Fraction(0)] * T for _ in range(T)]
    it = iter(entries)
    for a in range(T):
        for b in range(a, T):
            F[a][b] = F[b][a] = next(it)
    M = sp.Matrix(T, T, lambda a, b: to_rational(F[a][b]))
    exact = isserlis_from_pairings(F, idx, brute_force_pairings(len(idx)))
    assert symbolic_moment(idx, K=M) == to_rational(Fraction(exact))


def test_symbolic_moment_examples():
    assert str(symbolic_moment((0, 1, 2, 3))) == "K_0_1*K_2_3 + K_0_2*K_1_3 + K_0_3*K_1_2"
    k00, k01, k11 = sp.symbols("K_0_0 K_0_1 K_1_1")
    assert symbolic_moment((0, 0, 1, 1)) == sp.expand(k00 * k11 + 2 * k01**2)
    assert symbolic_moment((0, 0, 0, 0)) == 3 * k00**2
    assert symbolic_moment((0, 1, 1)) == 0
    assert len(symbolic_moment((0, 1, 2, 3, 4, 5)).args) == 15


def test_gaussian_moments_examples():
    K = np.array([[2.0, 0.5], [0.5, 1.0]])
    np.testing.assert_allclose(gaussian_moments(K, [[0, 0, 1, 1]]), [2.5])
    np.testing.assert_allclose(gaussian_moments(K, [0, 0, 0, 0]), [12.0])      # 3 K00^2
    np.testing.assert_allclose(gaussian_moments(K, [[0] * 6]), [15 * 8.0])    # 15 K00^3
    np.testing.assert_array_equal(gaussian_moments(K, [[0, 1, 1]]), [0.0])     # odd order
    np.testing.assert_array_equal(gaussian_moments(np.stack([K, K]), [[0], [1]]), np.zeros((2, 2)))


# ------------------------------------------------------------ Isserlis: Monte Carlo


@pytest.fixture(scope="module")
def gaussian_sample():
    T, N = 3, 400_000
    K = random_spd(np.random.default_rng(11), T, cond=5.0)
    y = np.random.default_rng(12).standard_normal((N, T)) @ np.linalg.cholesky(K).T
    return K, y


def all_tuples(T, order):
    return [t for t in itertools.combinations_with_replacement(range(T), order)]


def mc_products(y, tuples):
    return np.stack([np.prod(y[:, list(t)], axis=1) for t in tuples], axis=1)


@pytest.mark.parametrize("order", [2, 4, 6])
def test_gaussian_moments_match_monte_carlo(gaussian_sample, order):
    K, y = gaussian_sample
    tuples = all_tuples(K.shape[0], order)
    assert_means_match_mc(mc_products(y, tuples), gaussian_moments(K, tuples), what=f"order {order}")


@pytest.mark.parametrize("order,which", [(4, "dropped"), (4, "ordered"), (6, "dropped")])
def test_wrong_pairings_fail_the_monte_carlo_check(gaussian_sample, order, which):
    K, y = gaussian_sample
    wrong = {"dropped": wrong_pairings_dropped, "ordered": wrong_pairings_ordered}[which](order)
    tuples = all_tuples(K.shape[0], order)
    bad = [isserlis_from_pairings(K, t, wrong) for t in tuples]
    with pytest.raises(AssertionError, match="standard errors off"):
        assert_means_match_mc(mc_products(y, tuples), bad)


# --------------------------------------------------------------- mixture_moments


def test_mixture_moments_mean_and_stderr():
    rng = np.random.default_rng(0)
    Ks = np.stack([random_spd(rng, 3) for _ in range(50)])
    idx = [(0, 1), (1, 2)]
    mean, se = mixture_moments(Ks, idx)
    per = np.array([[isserlis_from_pairings(K, t, brute_force_pairings(len(t))) for t in idx] for K in Ks])
    np.testing.assert_allclose(mean, per.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(se, per.std(axis=0, ddof=1) / np.sqrt(50), rtol=1e-10)
    mean1, se1 = mixture_moments(Ks[:1], idx)
    assert np.all(np.isinf(se1))


# ------------------------------------------------------------- exact setting (a)


def test_set_partitions_bell_numbers():
    for k, bell in enumerate([1, 1, 2, 5, 15, 52]):
        parts = set_partitions(k)
        assert len(parts) == bell
        canon = {frozenset(frozenset(b) for b in p) for p in parts}
        assert len(canon) == bell                               # no duplicates
        for p in parts:
            assert sorted(x for b in p for x in b) == list(range(k))
            assert all(b for b in p)


@pytest.mark.parametrize("m", range(9))
def test_uniform_moment_vs_mpmath(m):
    q = uniform_moment(m)
    assert isinstance(q, Fraction)
    ref = mpmath.quad(lambda x: x**m, [-1, 1]) / 2
    assert abs(mpmath.mpf(q.numerator) / q.denominator - ref) < mpmath.mpf(10) ** -14


def test_coordinate_covariance_poly_vs_sympy():
    lam = sp.Symbol("lam")
    T, d = 5, 3
    sw2, sv2, s02 = sp.Rational(1, 4), sp.Rational(1, 9), sp.Rational(3, 2)
    K1 = brute_force_covariance(np.array([[lam]], dtype=object), np.array([sp.Integer(1)], dtype=object),
                                np.array([[s02]], dtype=object), np.array([[sw2]], dtype=object),
                                sp.sqrt(sv2 / d), T)
    G = coordinate_covariance_poly(T, d, "1/4", "1/9", "3/2")
    for i in range(T):
        for j in range(T):
            coeffs = G(i, j)
            assert all(isinstance(x, Fraction) for x in coeffs)
            poly = sum(to_rational(cf) * lam**m for m, cf in enumerate(coeffs))
            assert sp.expand(poly - K1[i, j]) == 0, (i, j)


def test_exact_moments_a_trivial_cases_are_exact_rationals():
    for d in (1, 2, 5):
        (m2,) = exact_moments_a([(0, 0)], T=3, d=d, sigma_w2="1/100", sigma_v2="1/100")
        assert isinstance(m2, Fraction)
        assert m2 == d * (Fraction(1, 3) + Fraction(1, 100)) + Fraction(1, 100)
    # floats are read by their decimal repr, so 0.01 means exactly 1/100
    assert exact_moments_a([(0, 0)], T=1, d=5, sigma_w2=0.01, sigma_v2=0.01) == \
        exact_moments_a([(0, 0)], T=1, d=5, sigma_w2=Fraction(1, 100), sigma_v2="0.01")
    # sigma_0 enters as sigma_02: E[y_1^2] = d (s02/3 + sw2) + sv2
    assert exact_moments_a([(0, 0)], T=1, d=2, sigma_w2=0, sigma_v2=0, sigma_02=3) == [Fraction(2)]
    # d = 1: E[y_1^4] = 3 E[K11^2], K11 = s02 lam^2 + sw2 + sv2
    s02, sw2, sv2 = Fraction(2), Fraction(1, 4), Fraction(1, 9)
    q = sw2 + sv2
    expect = 3 * (s02**2 / 5 + 2 * s02 * q / 3 + q**2)
    assert exact_moments_a([(0, 0, 0, 0)], T=2, d=1, sigma_w2=sw2, sigma_v2=sv2, sigma_02=s02) == [expect]
    # E[y_2 y_1] = E[lam Pi_1(lam)] d = 0 (odd parity)
    assert exact_moments_a([(1, 0)], T=2, d=3, sigma_w2=sw2, sigma_v2=sv2) == [Fraction(0)]
    # E[y_3 y_1] = d E[lam^2 (s02 lam^2 + sw2)] = d (s02/5 + sw2/3)
    assert exact_moments_a([(2, 0)], T=3, d=3, sigma_w2=sw2, sigma_v2=sv2, sigma_02=s02) == \
        [3 * (s02 / 5 + sw2 / 3)]


def _symbolic_K_setting_a(d, T, sw2, sv2, s02):
    lams = sp.symbols(f"l0:{d}")
    eye = lambda v: np.array([[v if i == j else sp.Integer(0) for j in range(d)] for i in range(d)],
                             dtype=object)
    A = np.array([[lams[i] if i == j else sp.Integer(0) for j in range(d)] for i in range(d)], dtype=object)
    c = np.array([sp.Integer(1)] * d, dtype=object)
    K = brute_force_covariance(A, c, eye(s02), eye(sw2), sp.sqrt(sv2), T)
    return sp.Matrix(K), lams


@pytest.mark.parametrize("d,T,idx", [
    (1, 2, (0, 1)), (1, 3, (0, 2)), (1, 3, (0, 0, 1, 2)), (1, 3, (1, 1, 2, 2)),
    (1, 3, (0, 1, 1, 2, 2, 2)), (1, 3, (0, 0, 0, 1, 1, 2)),
    (2, 3, (1, 2)), (2, 3, (0, 0, 2, 2)), (2, 2, (0, 0, 1, 1, 1, 1)), (3, 2, (0, 1, 1, 0)),
    (3, 3, (0, 0, 1, 1, 2, 2)),
])
def test_exact_moments_a_vs_sympy_integration_over_lambda(d, T, idx):
    """E over lambda_k ~ U[-1,1] of the symbolic Isserlis sum of the brute-force K(lambda).

    d >= 2 (and d = 3 at order 6) exercises the set-partition / falling-factorial sum.
    """
    sw2, sv2, s02 = sp.Rational(1, 4), sp.Rational(1, 9), sp.Rational(2)
    K, lams = _symbolic_K_setting_a(d, T, sw2, sv2, s02)
    val = symbolic_moment(idx, K=K)
    for lam in lams:
        val = sp.integrate(val, (lam, -1, 1)) / 2
    (ours,) = exact_moments_a([idx], T=T, d=d, sigma_w2="1/4", sigma_v2="1/9", sigma_02=2)
    assert to_rational(ours) == sp.nsimplify(val)


@settings(max_examples=20)
@given(ti=index_tuples(T_max=4, orders=(2, 4)), perm_seed=st.integers(0, 1000),
       d=st.integers(1, 4), scale=st.fractions(1, 5, max_denominator=7))
def test_exact_moments_a_symmetry_and_homogeneity(ti, perm_seed, d, scale):
    """Invariant under permuting the tuple; scaling all variances by c scales order 2k by c^k."""
    T, idx = ti
    perm = tuple(np.random.default_rng(perm_seed).permutation(idx).tolist())
    base = dict(T=T, d=d, sigma_w2=Fraction(1, 4), sigma_v2=Fraction(1, 9), sigma_02=Fraction(1))
    (m1,) = exact_moments_a([idx], **base)
    (m2,) = exact_moments_a([perm], **base)
    assert m1 == m2
    (m3,) = exact_moments_a([idx], T=T, d=d, sigma_w2=scale / 4, sigma_v2=scale / 9, sigma_02=scale)
    assert m3 == m1 * scale ** (len(idx) // 2)
    if sum(idx) % 2:
        assert m1 == 0


@pytest.fixture(scope="module")
def setting_a_mixture():
    """1e5 systems of setting (a), d = 2, T = 4, and their exact covariances."""
    fam = LDSFamily("a", d=2, T=4, sigma_w=0.5, sigma_v=0.3, sigma_0=1.0)
    sys_, y = fam.sample(np.random.default_rng(21), 100_000)
    return fam, fam.covariance(sys_), y


def _some_tuples(T, order, n, seed):
    tuples = all_tuples(T, order)
    pick = np.random.default_rng(seed).choice(len(tuples), size=min(n, len(tuples)), replace=False)
    return [tuples[i] for i in sorted(pick)]


@pytest.mark.parametrize("order", [2, 4, 6])
def test_exact_moments_a_vs_mixture_over_sampled_systems(setting_a_mixture, order):
    fam, K, _ = setting_a_mixture
    tuples = _some_tuples(4, order, 8, order)
    exact = exact_moments_a(tuples, T=4, d=2, sigma_w2="1/4", sigma_v2="9/100")
    for t, ex in zip(tuples, exact):
        mean, se = mixture_moments(K, [t])
        assert abs(mean[0] - float(ex)) <= 4 * se[0] + 1e-15, (t, mean[0], float(ex), se[0])


@pytest.mark.parametrize("order", [2, 4, 6])
def test_exact_moments_a_vs_raw_trajectories(setting_a_mixture, order):
    """Fully independent of Isserlis: sample means of products of simulated y's."""
    _, _, y = setting_a_mixture
    tuples = all_tuples(4, order) if order < 6 else _some_tuples(4, 6, 12, 6)
    exact = [float(q) for q in exact_moments_a(tuples, T=4, d=2, sigma_w2="1/4", sigma_v2="9/100")]
    assert_means_match_mc(mc_products(y, tuples), exact, what=f"setting (a), order {order}")


# ------------------------------------------------------------------ parity (symmetry)


ODD_TUPLES = {2: [(0, 1), (1, 2), (0, 3)], 4: [(0, 0, 0, 1), (0, 1, 2, 2), (1, 1, 1, 2)],
              6: [(0, 0, 1, 2, 3, 3)]}


@pytest.mark.parametrize("order", [2, 4, 6])
def test_odd_parity_moments_vanish_exactly_in_setting_a(order):
    got = exact_moments_a(ODD_TUPLES[order], T=4, d=3, sigma_w2="1/100", sigma_v2="1/100")
    assert got == [Fraction(0)] * len(ODD_TUPLES[order])
    even = {2: [(0, 2)], 4: [(0, 0, 1, 1)], 6: [(0, 0, 1, 1, 2, 2)]}[order]
    assert exact_moments_a(even, T=4, d=3, sigma_w2="1/100", sigma_v2="1/100")[0] > 0


@pytest.mark.parametrize("setting", ["b", "c", "d", "asym"])
def test_odd_parity_moments_mc(setting):
    """Symmetric laws: odd-parity mixture moments are 0 within 4 stderr; the control breaks it."""
    fam = LDSFamily(setting, d=2, T=4, sigma_w=0.3, sigma_v=0.2)
    sys_ = fam.sample_systems(np.random.default_rng(31), 40_000)
    K = fam.covariance(sys_)
    z = np.concatenate([np.abs(m) / se for m, se in (mixture_moments(K, ODD_TUPLES[k]) for k in (2, 4))])
    if setting == "asym":
        assert z.min() > 10, z
    else:
        assert z.max() < 4, z

