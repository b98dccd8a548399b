"""theory.systems: system families, trajectory sampling and the exact covariance K.

Oracles: a brute-force K = M Sigma_e M^T built from matrix powers in plain loops (floats
and exact sympy rationals), a direct Pi-recursion in loops, and Monte Carlo over 2e5
trajectories with per-entry standard errors.  A deliberately wrong covariance (Pi off
by one step) is run through the same Monte Carlo check to show that the check bites.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
import sympy as sp
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from _oracles import (
    assert_cov_matches_mc,
    brute_force_covariance,
    recursion_covariance,
    wrong_covariance_batch,
)
from theory.systems import (
    SETTINGS,
    SYMMETRIC_SETTINGS,
    LDSFamily,
    Systems,
    covariance,
    get_family,
    psd_factor,
)
from theory.bases import conditioned_gaussian, haar_orthogonal

N_MC = 200_000


def handbuilt_system(m=1):
    """A fixed non-normal A, anisotropic correlated Sigma_w, non-identity Sigma_0, generic c."""
    A = np.array([[0.6, 0.9, 0.0],
                  [0.0, -0.5, 0.7],
                  [0.1, 0.0, 0.3]])
    c = np.array([1.0, -0.4, 0.8])
    Sigma_w = np.array([[0.09, 0.02, 0.00],
                        [0.02, 0.04, -0.01],
                        [0.00, -0.01, 0.01]])
    Sigma_0 = np.array([[1.5, 0.3, 0.0],
                        [0.3, 0.8, 0.2],
                        [0.0, 0.2, 0.5]])
    sigma_v = 0.2
    sys_ = Systems(A=np.repeat(A[None], m, axis=0), c=np.repeat(c[None], m, axis=0),
                   Sigma_w=Sigma_w, Sigma_0=Sigma_0, sigma_v=sigma_v)
    return sys_, (A, c, Sigma_0, Sigma_w, sigma_v)


# ------------------------------------------------------------------ exact K: oracles


def test_handbuilt_system_is_non_normal():
    _, (A, *_rest) = handbuilt_system()
    assert not np.allclose(A @ A.T, A.T @ A)


@pytest.mark.parametrize("T", [1, 2, 7])
def test_covariance_equals_brute_force_handbuilt(T):
    sys_, (A, c, S0, Sw, sv) = handbuilt_system()
    K = covariance(sys_, T)[0]
    K_bf = brute_force_covariance(A, c, S0, Sw, sv, T)
    np.testing.assert_allclose(K, K_bf, rtol=0, atol=1e-12 * max(1.0, np.abs(K_bf).max()))
    np.testing.assert_allclose(K, recursion_covariance(A, c, S0, Sw, sv, T),
                               rtol=0, atol=1e-12 * max(1.0, np.abs(K_bf).max()))


@settings(max_examples=25)
@given(setting=st.sampled_from(SETTINGS), d=st.integers(1, 4), T=st.integers(1, 9),
       sigma_w=st.floats(0.0, 1.0), sigma_v=st.floats(0.0, 1.0), sigma_0=st.floats(0.0, 2.0),
       seed=st.integers(0, 2**32 - 1))
def test_covariance_equals_brute_force_families(setting, d, T, sigma_w, sigma_v, sigma_0, seed):
    assume(sigma_w > 0 or sigma_v > 0 or sigma_0 > 0)        # all zero: y = 0, refused
    fam = LDSFamily(setting, d=d, T=max(T, 3), sigma_w=sigma_w, sigma_v=sigma_v, sigma_0=sigma_0)
    sys_ = fam.sample_systems(np.random.default_rng(seed), 3)
    K = covariance(sys_, T)
    assert K.shape == (3, T, T)
    for k in range(3):
        K_bf = brute_force_covariance(sys_.A[k], sys_.c[k], sys_.Sigma_0, sys_.Sigma_w,
                                      sys_.sigma_v, T)
        np.testing.assert_allclose(K[k], K_bf, rtol=0, atol=1e-12 * max(1.0, np.abs(K_bf).max()))
    np.testing.assert_array_equal(K, np.swapaxes(K, 1, 2))       # exactly symmetric
    assert np.linalg.eigvalsh(K).min() >= -1e-10 * max(1.0, np.abs(K).max())


def test_covariance_equals_exact_sympy_rationals():
    """Third oracle: the same M Sigma_e M^T in exact rational arithmetic."""
    R = sp.Rational
    A = np.array([[R(1, 2), R(3, 4)], [R(-1, 5), R(-1, 3)]], dtype=object)
    c = np.array([R(1), R(-2, 3)], dtype=object)
    S0 = np.array([[R(2), R(1, 2)], [R(1, 2), R(1)]], dtype=object)
    Sw = np.array([[R(1, 10), R(0)], [R(0), R(1, 20)]], dtype=object)
    sv = R(1, 5)
    T = 6
    K_exact = brute_force_covariance(A, c, S0, Sw, sv, T)
    sys_ = Systems(A=A.astype(float)[None], c=c.astype(float)[None], Sigma_w=Sw.astype(float),
                   Sigma_0=S0.astype(float), sigma_v=float(sv))
    K = covariance(sys_, T)[0]
    np.testing.assert_allclose(K, K_exact.astype(float), rtol=0, atol=1e-12)


def test_covariance_worked_example_d1():
    a, q, r = 0.7, 0.04, 0.3
    sys_ = Systems(A=[[[a]]], c=[[1.0]], Sigma_w=[[q]], Sigma_0=[[1.0]], sigma_v=r)
    K = covariance(sys_, 3)[0]
    pi1 = a**2 + q
    pi2 = a**2 * pi1 + q
    assert K[0, 0] == pytest.approx(pi1 + r**2, rel=1e-15)
    assert K[1, 0] == pytest.approx(a * pi1, rel=1e-15)
    assert K[2, 0] == pytest.approx(a**2 * pi1, rel=1e-15)
    assert K[1, 1] == pytest.approx(pi2 + r**2, rel=1e-15)
    assert K[2, 1] == pytest.approx(a * pi2, rel=1e-15)
    # dyadic parameters make every float64 operation exact, so K equals the rational
    # values exactly: a = 3/4, q = 1/16, r = 1/4
    a, q, r = Fraction(3, 4), Fraction(1, 16), Fraction(1, 4)
    sys_ = Systems(A=[[[float(a)]]], c=[[1.0]], Sigma_w=[[float(q)]], Sigma_0=[[1.0]], sigma_v=float(r))
    K = covariance(sys_, 3)[0]
    pi1 = a**2 + q
    pi2 = a**2 * pi1 + q
    expect = [[pi1 + r**2, a * pi1, a**2 * pi1], [a * pi1, pi2 + r**2, a * pi2],
              [a**2 * pi1, a * pi2, a**4 * pi1 + a**2 * q + q + r**2]]
    assert [[Fraction(v) for v in row] for row in K.tolist()] == expect


def test_covariance_method_and_family_agree():
    fam = LDSFamily("b", d=3, T=6)
    sys_ = fam.sample_systems(np.random.default_rng(0), 4)
    np.testing.assert_array_equal(fam.covariance(sys_), covariance(sys_, 6))
    np.testing.assert_array_equal(sys_.covariance(), covariance(sys_, 6))
    np.testing.assert_array_equal(sys_.covariance(4), covariance(sys_, 4))
    np.testing.assert_array_equal(covariance(sys_, 6)[:, :4, :4], covariance(sys_, 4))


def test_diagonal_fast_path_equals_general_path():
    """Settings a/c/asym take a diagonal shortcut; dropping lam forces the general path."""
    for setting in ("a", "c", "asym"):
        fam = LDSFamily(setting, d=4, T=10, sigma_0=0.6)
        s1 = fam.sample_systems(np.random.default_rng(3), 20)
        s2 = Systems(A=s1.A, c=s1.c, Sigma_w=s1.Sigma_w, Sigma_0=s1.Sigma_0,
                     sigma_v=s1.sigma_v, lam=None, T=s1.T)
        np.testing.assert_allclose(covariance(s1, 10), covariance(s2, 10), rtol=1e-13, atol=1e-15)
        y1 = s1.simulate(np.random.default_rng(5))
        y2 = s2.simulate(np.random.default_rng(5))
        np.testing.assert_allclose(y1, y2, rtol=1e-12, atol=1e-12)


# ------------------------------------------------------------- exact K vs Monte Carlo


@pytest.mark.parametrize("setting", SETTINGS)
def test_covariance_matches_monte_carlo_mixture(setting):
    """2e5 trajectories, each from its own fresh system: y_i y_j - K_ij(A_n) has mean 0."""
    fam = LDSFamily(setting, d=3, T=6, sigma_w=0.3, sigma_v=0.2)
    sys_, y = fam.sample(np.random.default_rng(100 + SETTINGS.index(setting)), N_MC)
    assert y.shape == (N_MC, 6) and y.dtype == np.float64
    assert_cov_matches_mc(y, fam.covariance(sys_), what=f"setting {setting}")


@pytest.fixture(scope="module")
def handbuilt_mc():
    """2e5 trajectories (T = 7) of the one hand-built system, and its brute-force K."""
    sys_, params = handbuilt_system(m=N_MC)
    T = 7
    y = sys_.simulate(np.random.default_rng(7), T)
    return y, brute_force_covariance(*params, T), params


def test_covariance_matches_monte_carlo_fixed_handbuilt_system(handbuilt_mc):
    y, K_bf, _ = handbuilt_mc
    K = covariance(handbuilt_system()[0], 7)[0]
    np.testing.assert_allclose(K, K_bf, rtol=0, atol=1e-12)
    assert_cov_matches_mc(y, K, what="hand-built system")


def test_float32_sampling_has_the_same_law():
    sys_, (A, c, S0, Sw, sv) = handbuilt_system(m=N_MC)
    y = sys_.simulate(np.random.default_rng(8), 5, dtype=np.float32)
    assert y.dtype == np.float32 and y.shape == (N_MC, 5)
    assert_cov_matches_mc(y, covariance(sys_, 5)[0], what="float32 sampling")


def test_wrong_covariance_is_rejected_by_the_same_check_fixed_system(handbuilt_mc):
    """A test that the test can fail: Pi_{j-1} in place of Pi_j."""
    y, K_bf, params = handbuilt_mc
    K_wrong = recursion_covariance(*params, 7, pi_shift=1)
    assert not np.allclose(K_wrong, K_bf)
    with pytest.raises(AssertionError, match="standard errors off"):
        assert_cov_matches_mc(y, K_wrong)


def test_wrong_covariance_batch_is_the_loop_variant():
    sys_ = LDSFamily("d", d=3, T=5).sample_systems(np.random.default_rng(0), 3)
    Kw = wrong_covariance_batch(sys_, 5)
    for k in range(3):
        np.testing.assert_allclose(
            Kw[k], recursion_covariance(sys_.A[k], sys_.c[k], sys_.Sigma_0, sys_.Sigma_w,
                                        sys_.sigma_v, 5, pi_shift=1), atol=1e-12)


def test_wrong_covariance_is_rejected_by_the_same_check_mixture():
    fam = LDSFamily("a", d=3, T=6, sigma_w=0.3, sigma_v=0.2)
    sys_, y = fam.sample(np.random.default_rng(100), N_MC)
    with pytest.raises(AssertionError, match="standard errors off"):
        assert_cov_matches_mc(y, wrong_covariance_batch(sys_, 6))
    # the correct K passes on the very same sample
    assert_cov_matches_mc(y, fam.covariance(sys_))


# ------------------------------------------------------------------------ sampling


def test_simulate_uses_callers_generator_and_documented_draws():
    sys_, (A, c, S0, Sw, sv) = handbuilt_system(m=4)
    rng = np.random.default_rng(42)
    y = sys_.simulate(rng, 5)
    after = rng.standard_normal(3)
    ref = np.random.default_rng(42)
    z = ref.standard_normal((6, 4, 3))
    v = ref.standard_normal((5, 4))
    np.testing.assert_array_equal(after, ref.standard_normal(3))  # same number of draws
    # and the same values, from the documented recursion
    L0, Lw = np.linalg.cholesky(S0), np.linalg.cholesky(Sw)
    x = z[0] @ L0.T
    expect = np.empty((4, 5))
    for t in range(5):
        x = x @ A.T + z[t + 1] @ Lw.T
        expect[:, t] = x @ c + sv * v[t]
    np.testing.assert_allclose(y, expect, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("setting", SETTINGS)
def test_sample_is_reproducible_and_shaped(setting):
    fam = LDSFamily(setting, d=2, T=5)
    s1, y1 = fam.sample(np.random.default_rng(1), 7)
    s2, y2 = fam.sample(np.random.default_rng(1), 7)
    np.testing.assert_array_equal(y1, y2)
    np.testing.assert_array_equal(s1.A, s2.A)
    assert y1.shape == (7, 5) and y1.flags.c_contiguous
    assert s1.T == 5 and s1.m == 7 and s1.d == 2


def test_zero_noise_trajectory_is_deterministic_given_x0():
    """sigma_w = sigma_v = 0: y_t = c^T A^t x_0 exactly (checks the time indexing)."""
    fam = LDSFamily("a", d=3, T=6, sigma_w=0.0, sigma_v=0.0, sigma_0=1.0)
    sys_ = fam.sample_systems(np.random.default_rng(0), 5)
    rng = np.random.default_rng(9)
    y = sys_.simulate(rng)
    x0 = np.random.default_rng(9).standard_normal((7, 5, 3))[0]
    expect = np.stack([(sys_.lam ** t * x0).sum(axis=1) for t in range(1, 7)], axis=1)
    np.testing.assert_allclose(y, expect, rtol=1e-12, atol=1e-14)


# ------------------------------------------------------------------------ families


def test_setting_a_and_asym_laws():
    n = 20_000
    for setting, lo in (("a", -1.0), ("asym", 0.0)):
        sys_ = LDSFamily(setting, d=3).sample_systems(np.random.default_rng(0), n)
        lam = sys_.lam
        assert lam.min() >= lo and lam.max() <= 1.0
        np.testing.assert_array_equal(sys_.A, np.stack([np.diag(x) for x in lam]))
        np.testing.assert_array_equal(sys_.c, 1.0)
        mean = (lo + 1.0) / 2
        assert abs(lam.mean() - mean) < 4 * lam.std() / np.sqrt(lam.size)


def test_eigenvalue_range_and_noise_weights_are_the_law():
    """One statement of each setting's law: lambda_i ~ U[lo, hi) and Sigma_w = sigma_w^2 diag(omega)."""
    for setting in SETTINGS:
        fam = LDSFamily(setting, d=4, sigma_w=0.3)
        lo, hi = fam.eigenvalue_range
        assert (lo, hi) == ((0.0, 1.0) if setting == "asym" else (-1.0, 1.0))
        assert type(lo) is float and type(hi) is float
        omega = fam.noise_weights
        expect = 2.0 * np.arange(1, 5) / 5 if setting == "c" else np.ones(4)
        np.testing.assert_array_equal(omega, expect)
        np.testing.assert_array_equal(fam.process_noise_cov(), 0.09 * np.diag(expect))
        assert omega.sum() == pytest.approx(4.0)   # tr Sigma_w = d sigma_w^2 in every setting
        if fam.diagonal:
            lam = fam.sample_systems(np.random.default_rng(3), 5000).lam
            assert lo <= lam.min() and lam.max() < hi and lam.min() < lo + 0.01 and lam.max() > hi - 0.01


@pytest.mark.parametrize("S, kind", [
    (0.09 * np.eye(3), "scalar"),
    (np.zeros((2, 2)), "scalar"),
    (np.diag([0.5, 2.0, 3.0]), "diag"),
    (np.diag([0.5, 0.0, 3.0]), "full"),                     # singular: eigen-square-root
    (np.array([[2.0, 0.5], [0.5, 1.0]]), "full"),           # Cholesky
    (np.array([[1.0, 1.0], [1.0, 1.0]]), "full"),           # singular, not diagonal
])
def test_psd_factor(S, kind):
    got, L = psd_factor(S)
    assert got == kind
    full = {"scalar": lambda: L * np.eye(len(S)), "diag": lambda: np.diag(L), "full": lambda: L}[kind]()
    np.testing.assert_allclose(full @ full.T, S, atol=1e-14)
    if kind == "diag":
        np.testing.assert_array_equal(np.diag(L), np.linalg.cholesky(S))   # it is the Cholesky factor


def test_setting_b_is_orthogonally_similar_to_diag():
    sys_ = LDSFamily("b", d=4).sample_systems(np.random.default_rng(1), 50)
    assert sys_.lam is None
    np.testing.assert_allclose(sys_.A, np.swapaxes(sys_.A, 1, 2), atol=1e-12)   # symmetric
    ev = np.linalg.eigvalsh(sys_.A)
    assert ev.min() >= -1 - 1e-12 and ev.max() <= 1 + 1e-12


def test_setting_c_noise():
    fam = LDSFamily("c", d=4, sigma_w=0.3)
    Sw = fam.process_noise_cov()
    np.testing.assert_allclose(np.diag(Sw), 0.09 * 2 * np.arange(1, 5) / 5)
    assert np.trace(Sw) == pytest.approx(4 * 0.09)
    np.testing.assert_array_equal(Sw, np.diag(np.diag(Sw)))
    np.testing.assert_array_equal(LDSFamily("a", d=4, sigma_w=0.3).process_noise_cov(), 0.09 * np.eye(4))
    np.testing.assert_array_equal(fam.initial_cov(), np.eye(4))


def test_setting_d_is_non_normal_with_real_spectrum():
    fam = LDSFamily("d", d=3, cond_max=10.0)
    sys_ = fam.sample_systems(np.random.default_rng(2), 200)
    ev = np.linalg.eigvals(sys_.A)
    assert np.abs(ev.imag).max() < 1e-8
    assert np.abs(ev.real).max() <= 1 + 1e-8
    AAt = sys_.A @ np.swapaxes(sys_.A, 1, 2)
    AtA = np.swapaxes(sys_.A, 1, 2) @ sys_.A
    assert np.abs(AAt - AtA).max(axis=(1, 2)).min() > 1e-6


def test_central_symmetry_of_the_laws():
    """A ~ -A: the mean of A vanishes in every symmetric setting, not in the control."""
    for setting in SETTINGS:
        A = LDSFamily(setting, d=2).sample_systems(np.random.default_rng(4), 20_000).A
        z = np.abs(A.mean(axis=0)) / (A.std(axis=0) / np.sqrt(A.shape[0]) + 1e-300)
        if setting in SYMMETRIC_SETTINGS:
            assert z.max() < 4.5, setting
        else:
            assert z.max() > 20, setting
    assert LDSFamily("a").symmetric and not LDSFamily("asym").symmetric


def test_haar_orthogonal():
    Q = haar_orthogonal(np.random.default_rng(0), 40_000, 3)
    np.testing.assert_allclose(Q @ np.swapaxes(Q, 1, 2), np.broadcast_to(np.eye(3), Q.shape), atol=1e-12)
    # Haar: every entry has mean 0 and variance 1/d; a QR without the sign fix fails this
    q = Q.reshape(len(Q), -1)
    z = np.abs(q.mean(axis=0)) / (q.std(axis=0) / np.sqrt(len(q)))
    assert z.max() < 4.5
    np.testing.assert_allclose((q ** 2).mean(axis=0), 1 / 3, atol=0.01)


def test_conditioned_gaussian():
    P = conditioned_gaussian(np.random.default_rng(0), 300, 3, 5.0)
    assert np.linalg.cond(P).max() <= 5.0
    with pytest.raises(ValueError, match="cond_max"):
        conditioned_gaussian(np.random.default_rng(0), 1, 4, 1.0 + 1e-9, max_rounds=50)


def test_family_helpers():
    fam = get_family("a", d=2, T=4)
    assert fam == LDSFamily("a", d=2, T=4)
    fam2 = fam.replace(setting="b", sigma_w=0.5)
    assert fam2.setting == "b" and fam2.sigma_w == 0.5 and fam2.d == 2
    assert fam.diagonal and not fam2.diagonal
    for s in SETTINGS:
        assert isinstance(LDSFamily(s).description, str) and LDSFamily(s).description
    assert LDSFamily("a", sigma_w=1).sigma_w == 1.0


def test_systems_default_horizon():
    sys_ = Systems(A=[[[0.5]]], c=[[1.0]], Sigma_w=[[0.1]], Sigma_0=[[1.0]], sigma_v=0.0)
    with pytest.raises(ValueError, match="T must be given"):
        sys_.simulate(np.random.default_rng(0))
    assert sys_.simulate(np.random.default_rng(0), 4).shape == (1, 4)
    assert isinstance(sys_.A, np.ndarray) and sys_.A.dtype == np.float64


def test_systems_compare_by_identity_and_are_hashable():
    s1 = LDSFamily("a", d=2, T=4).sample_systems(np.random.default_rng(0), 3)
    s2 = LDSFamily("a", d=2, T=4).sample_systems(np.random.default_rng(0), 3)
    assert s1 == s1 and s1 != s2          # no elementwise array comparison (which would raise)
    assert len({s1, s2}) == 2


def test_a_family_stores_its_sizes_as_plain_ints():
    """numpy integers are accepted and stored as Python ints (JSON, cache keys and hashing
    see the same value whatever integer type was passed)."""
    fam = LDSFamily("a", d=np.int64(2), T=np.int32(4))
    assert type(fam.d) is int and type(fam.T) is int and (fam.d, fam.T) == (2, 4)
    assert fam == LDSFamily("a", d=2, T=4)


def test_systems_store_validated_plain_floats():
    """sigma_v is stored as the validated Python float, whatever number type was passed."""
    sys_ = Systems(A=np.eye(2)[None] * 0.5, c=np.ones((1, 2)), Sigma_w=np.eye(2), Sigma_0=np.eye(2),
                   sigma_v=np.float32(0.25))
    assert type(sys_.sigma_v) is float and sys_.sigma_v == 0.25
    assert type(Systems(A=sys_.A, c=sys_.c, Sigma_w=sys_.Sigma_w, Sigma_0=sys_.Sigma_0, sigma_v=1).sigma_v) is float
