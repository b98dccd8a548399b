"""theory.population after the speed-up: the same moments as before, and their structure.

Oracle: a frozen copy of the feature-moment forms as they were before the shift tables
(one Magnus trace at a time, O(T^2) per feature pair), run through the same coordinate
quadrature.  Both are multilinear forms with the same value at X = Y = Z, so the
quadrature of either is exact (docs/math.md section 4.7) and they must agree to rounding;
for distinct X, Y, Z they agree after symmetrising over the six orders (polarisation).
Tolerance: 1e-13 relative to the largest entry (the project's; float64 round-off of
these sums is 1e-16 to 1e-15; measured at the defaults, s = 1..4, settings a, b, c, asym:
at most 8e-16).
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import pytest

from theory.coordinate import mixture_quadrature, setting_weight_moments
from theory.population import (
    _feature_moments_multilinear,
    context_pairs,
    feature_list,
    feature_parity,
    gaussian_feature_moments,
    population_moments,
    reduced_index,
)
from theory.systems import LDSFamily, covariance

TOL = 1e-13


# ----------------------------------------------------------------- frozen copy (before the speed-up)

@dataclass(frozen=True)
class _Ctx:
    """Context form B_(r,l): y^T B y = sum_{t=0}^{n-1} y[t+r] y[t+l] (B symmetrised)."""

    r: int
    l: int
    n: int

    def right(self, X):
        """X B for X (..., T, T)."""
        out = np.zeros_like(X)
        r, l, n = self.r, self.l, self.n
        out[..., :, l:l + n] += 0.5 * X[..., :, r:r + n]
        out[..., :, r:r + n] += 0.5 * X[..., :, l:l + n]
        return out

    def vec(self, x):
        """B x for x (..., T)."""
        out = np.zeros_like(x)
        r, l, n = self.r, self.l, self.n
        out[..., l:l + n] += 0.5 * x[..., r:r + n]
        out[..., r:r + n] += 0.5 * x[..., l:l + n]
        return out

    def tr(self, X):
        """tr(X B)."""
        r, l, n = self.r, self.l, self.n
        idx = np.arange(n)
        return 0.5 * (X[..., idx + r, idx + l] + X[..., idx + l, idx + r]).sum(-1)

@dataclass(frozen=True)
class _Pair:
    """Rank-<=2 form y^T A y = y[p] y[q] (A = (e_p e_q^T + e_q e_p^T)/2)."""

    p: int
    q: int

    def tr(self, X):
        return 0.5 * (X[..., self.q, self.p] + X[..., self.p, self.q])

def _t2(X, A1, Y, A2):
    """tr(X A1 Y A2), A1 a _Pair, A2 a context form: 1/2 (Y A2 X)[q,p] + 1/2 (Y A2 X)[p,q]."""
    p, q = A1.p, A1.q

    def ybx(i, j):     # (Y B X)[i, j] = (B Y[i, :])^T X[:, j]   (B symmetric)
        return np.einsum("...k,...k->...", A2.vec(Y[..., i, :]), X[..., :, j])
    return 0.5 * (ybx(q, p) + ybx(p, q))

def _t2_ctx(Y, A2, Z, A3):
    """tr(Y A2 Z A3) for two context forms: sum((Y A2) * (Z A3)^T)."""
    return np.einsum("...ij,...ji->...", A2.right(Y), A3.right(Z))

def _t3(X, A1, Y, A2, Z, A3):
    """tr(X A1 Y A2 Z A3) with A1 a _Pair and A2, A3 context forms: O(T^2)."""
    p, q = A1.p, A1.q

    def entry(i, j):   # (Y A2 Z A3 X)[i, j] = (A2 Y[i,:])^T Z (A3 X[:, j])
        u = A2.vec(Y[..., i, :])
        w = A3.vec(X[..., :, j])
        return np.einsum("...k,...kl,...l->...", u, Z, w)
    return 0.5 * (entry(q, p) + entry(p, q))

def _m2(X, A1, Y, A2):
    """Multilinear E[Q1 Q2]: tr(X A1) tr(Y A2) + 2 tr(X A1 Y A2) (A1 a _Pair)."""
    return A1.tr(X) * A2.tr(Y) + 2.0 * _t2(X, A1, Y, A2)

def _m3(X, A1, Y, A2, Z, A3):
    """Multilinear E[Q1 Q2 Q3] (A1 a _Pair, A2, A3 context forms); M3(K,K,K) = E[Q1Q2Q3]."""
    t1, t2, t3 = A1.tr(X), A2.tr(Y), A3.tr(Z)
    return (t1 * t2 * t3
            + 2.0 * (t1 * _t2_ctx(Y, A2, Z, A3) + t2 * _t2(X, A1, Z, A3) + t3 * _t2(X, A1, Y, A2))
            + 8.0 * _t3(X, A1, Y, A2, Z, A3))

def _old_forms(s: int, T: int):
    n = T - s - 1
    ctx = {(r, l): _Ctx(r, l, n) for r in range(s + 1) for l in range(s + 1)}
    q0 = T - s - 1                      # 0-based position of z_q[0] = y_{T-s}
    return n, ctx, q0

def old_feature_moments(s, T, X, Y, Z):
    """(M, c) as multilinear forms in (X, Y, Z) (c uses (X, Y)); arrays broadcast."""
    n, ctx, q0 = _old_forms(s, T)
    feats = feature_list(s)
    f = len(feats)
    batch = np.broadcast_shapes(X.shape[:-2], Y.shape[:-2], Z.shape[:-2])
    M = np.empty(batch + (f, f))
    c = np.empty(batch + (f,))
    for a, (r, l, m) in enumerate(feats):
        c[..., a] = _m2(X, _Pair(q0 + m, T - 1), Y, ctx[(r, l)]) / n
        for b in range(a, f):
            r2, l2, m2 = feats[b]
            val = _m3(X, _Pair(q0 + m, q0 + m2), Y, ctx[(r, l)], Z, ctx[(r2, l2)]) / n ** 2
            M[..., a, b] = val
            # Any multilinear form with M3(K, K, K) = E[F_a F_b] yields the exact expectation
            # once summed over all coordinate patterns, so the mirror entry may reuse it.
            M[..., b, a] = val
    return M, c


def old_quadrature(family, s):
    """The quadrature route of theory.population as it was, on the frozen forms."""
    T, d = family.T, family.d
    lo, _ = family.eigenvalue_range
    M, c, Kbar = mixture_quadrature(lambda X, Y, Z: old_feature_moments(s, T, X, Y, Z), T,
                                    np.diag(family.process_noise_cov()), family.sigma_0 ** 2,
                                    family.sigma_v ** 2 / d, lo, setting_weight_moments(family.setting, family.d))
    return M, c, float(Kbar[T - 1, T - 1])


def old_mc_systems(family, s, m, rng, chunk=2000):
    """The per-system Monte Carlo as it was (means only)."""
    total = None
    done = 0
    while done < m:
        k = min(chunk, m - done)
        K = covariance(family.sample_systems(rng, k), family.T)
        M, c = old_feature_moments(s, family.T, K, K, K)
        part = np.concatenate([M.reshape(k, -1), c, K[:, -1, -1, None]], axis=1).sum(0)
        total = part if total is None else total + part
        done += k
    f = len(feature_list(s))
    mean = total / m
    return mean[:f * f].reshape(f, f), mean[f * f:-1], mean[-1]


def _rel(a, b):
    return float(np.abs(a - b).max() / np.abs(b).max())


def _spd(rng, shape, T):
    B = rng.standard_normal(shape + (T, T))
    return B @ np.swapaxes(B, -1, -2) / T + 0.1 * np.eye(T)


# ----------------------------------------------------------------- the same numbers as before


@pytest.mark.parametrize("s", [1, 2, 3, 4])
def test_gaussian_feature_moments_equal_frozen_copy(s):
    rng = np.random.default_rng(100 + s)
    T = s + 5
    K = _spd(rng, (2 if s < 4 else 1,), T)
    M, c, v = gaussian_feature_moments(K, s)
    M0, c0 = old_feature_moments(s, T, K, K, K)
    assert _rel(M, M0) <= TOL and _rel(c, c0) <= TOL
    assert np.array_equal(v, K[:, -1, -1])


@pytest.mark.parametrize("s", [2, 3])
def test_distinct_arguments_agree_after_polarisation(s):
    """For X != Y != Z the two forms differ (tr(X A Y B Z B') is not symmetric), but their
    symmetrisations over the 6 orders agree: both extend the same cubic K -> E[F F^T]."""
    rng = np.random.default_rng(7 + s)
    T = s + 3
    XYZ = _spd(rng, (3,), T)
    new = sum(_feature_moments_multilinear(s, T, *XYZ[list(p)])[0] for p in itertools.permutations(range(3)))
    old = sum(old_feature_moments(s, T, *XYZ[list(p)])[0] for p in itertools.permutations(range(3)))
    assert _rel(new, old) <= TOL


def test_broadcasting_node_batch_against_fixed_matrix():
    """mixture_quadrature calls the form with (N, T, T) and (T, T) arguments mixed."""
    rng = np.random.default_rng(3)
    s, T = 2, 7
    G = _spd(rng, (4,), T)
    R = _spd(rng, (), T)
    for args in [(G, G, R), (G, R, G), (R, G, G)]:
        M, c = _feature_moments_multilinear(s, T, *args)
        full = [np.broadcast_to(a, G.shape) for a in args]
        M1, c1 = _feature_moments_multilinear(s, T, *[a.copy() for a in full])
        assert M.shape == (4,) + M1.shape[1:] and _rel(M, M1) <= TOL and _rel(c, c1) <= TOL


@pytest.mark.parametrize("setting", ["a", "b", "c", "asym"])
@pytest.mark.parametrize("s", [1, 2])
def test_quadrature_equals_frozen_copy(setting, s):
    fam = LDSFamily(setting, d=3, T=s + 5)
    P = population_moments(fam, s)
    M0, c0, v0 = old_quadrature(fam, s)
    assert _rel(P.M, M0) <= TOL and _rel(P.c, c0) <= TOL and P.v == v0


@pytest.mark.parametrize("s", [1, 2])
def test_quadrature_equals_frozen_copy_at_the_defaults(s):
    """d = 5, T = 30 (s = 3, 4 and settings b, c, asym take the frozen copy minutes; measured
    once, at most 8e-16: docs/math.md section 5.6)."""
    P = population_moments(LDSFamily("a"), s)
    M0, c0, v0 = old_quadrature(LDSFamily("a"), s)
    assert _rel(P.M, M0) <= TOL and _rel(P.c, c0) <= TOL and P.v == v0


def test_s1_monte_carlo_over_systems_keeps_its_values():
    """The AR(1) claims read setting d's moments from this route: same stream, same numbers."""
    fam = LDSFamily("d", T=12)
    P = population_moments(fam, 1, method="mc-systems", m=3000, rng=np.random.default_rng(11))
    M0, c0, v0 = old_mc_systems(fam, 1, 3000, np.random.default_rng(11))
    assert _rel(P.M, M0) <= 1e-14 and _rel(P.c, c0) <= 1e-14 and abs(P.v - v0) <= 1e-14 * abs(v0)


# ----------------------------------------------------------------- structure


@pytest.mark.parametrize("s", [1, 2, 3, 4])
def test_reduced_index_maps_mirror_features_together(s):
    idx = reduced_index(s)
    ri, li = context_pairs(s)
    feats = feature_list(s)
    assert sorted(set(idx.tolist())) == list(range(ri.size * s))
    for a, (r, l, m) in enumerate(feats):
        assert idx[a] == idx[feats.index((l, r, m))]
        i, mm = divmod(int(idx[a]), s)
        assert (ri[i], li[i], mm) == (min(r, l), max(r, l), m)


@pytest.mark.parametrize("setting", ["a", "asym"])
def test_moments_symmetric_and_mirror_rows_identical(setting):
    s = 3
    P = population_moments(LDSFamily(setting, d=3, T=9), s)
    feats = feature_list(s)
    assert np.array_equal(P.M, P.M.T)
    for a, (r, l, m) in enumerate(feats):
        b = feats.index((l, r, m))
        assert np.array_equal(P.M[a], P.M[b]) and P.c[a] == P.c[b]
    # the parity zeros are computed, not imposed: rounding-size, non-zero entries remain
    par = feature_parity(s)
    block = np.abs(P.M[np.ix_(par < 0, par > 0)])
    if setting == "a":
        assert block.max() <= 1e-13 * np.abs(P.M).max()
    else:
        assert block.max() > 1e-2 * np.abs(P.M).max()


def test_monte_carlo_batches_average_to_the_mean():
    fam = LDSFamily("d", d=3, T=8)
    P = population_moments(fam, 2, method="mc-systems", m=300, rng=np.random.default_rng(2))
    Mb, cb, vb = P.batches
    sizes = np.diff((np.arange(33) * 300) // 32)
    assert Mb.shape[0] == 32
    assert np.allclose((sizes[:, None, None] * Mb).sum(0) / 300, P.M, rtol=1e-13, atol=0)
    assert np.allclose((sizes[:, None] * cb).sum(0) / 300, P.c, rtol=1e-12, atol=1e-15)
    assert abs((sizes * vb).sum() / 300 - P.v) <= 1e-13 * P.v


def test_symmetrised_input_is_the_identity_on_symmetric_K():
    rng = np.random.default_rng(5)
    K = _spd(rng, (), 8)
    K = 0.5 * (K + K.T)
    M1, c1, _ = gaussian_feature_moments(K, 2)
    M2, c2 = old_feature_moments(2, 8, K, K, K)
    assert _rel(M1, M2) <= TOL and _rel(c1, c2) <= TOL
