"""theory.coordinate: G(lambda) in float and exact form, and the coordinate-mixture quadrature.

Oracles: the Fraction-polynomial G(lambda) of theory.reference (itself checked against
the brute-force covariance with sympy in test_moments.py), exact uniform moments of
lambda on [lo, 1], and a plain sum over ordered coordinate triples for the mixture
combinatorics.
"""
from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from theory.coordinate import (
    UNIT_WEIGHTS,
    coordinate_covariance,
    coordinate_covariance_int,
    coordinate_mean_int,
    gauss_legendre,
    integer_scales,
    mixture_quadrature,
    odd_lcm,
    uniform_mean_packed,
)
from theory.reference import coordinate_covariance_poly, uniform_moment

variance = st.fractions(min_value=0, max_value=5, max_denominator=60)


def _poly_at(coeffs, x):
    return sum(c * x ** m for m, c in enumerate(coeffs))


@settings(max_examples=20)
@given(T=st.integers(1, 12), d=st.integers(1, 5), sw2=variance, sv2=variance, s02=variance)
def test_float_G_equals_reference_polynomial(T, d, sw2, sv2, s02):
    G = coordinate_covariance_poly(T, d, sw2, sv2, s02)
    lam = np.array([-1.0, -0.7, 0.0, 0.31, 0.999])
    ours = coordinate_covariance(lam, T, float(sw2), float(s02), float(sv2 / d))
    assert ours.shape == (5, T, T) and ours.flags.c_contiguous
    for n, x in enumerate(lam.tolist()):
        ref = np.array([[float(_poly_at(G(i, j), Fraction(x))) for j in range(T)] for i in range(T)])
        np.testing.assert_allclose(ours[n], ref, rtol=1e-13, atol=1e-300)


@settings(max_examples=20)
@given(T=st.integers(1, 10), d=st.integers(1, 5), sw2=variance, sv2=variance, s02=variance,
       lam=st.integers(-5, 2 ** 40))
def test_integer_G_equals_reference_polynomial(T, d, sw2, sv2, s02, lam):
    """Gi(lam) = D G(lam) exactly, at any integer lam (the Kronecker evaluation points)."""
    D, S0, SW, SV = integer_scales(sw2, sv2 / d, s02)
    assert Fraction(S0, D) == s02 and Fraction(SW, D) == sw2 and Fraction(SV, D) == sv2 / d
    G = coordinate_covariance_poly(T, d, sw2, sv2, s02)
    Gi = coordinate_covariance_int(T, S0, SW, SV, lam)
    for i in range(T):
        for j in range(T):
            assert isinstance(Gi[i, j], int)
            assert Gi[i, j] == D * _poly_at(G(i, j), lam)


@settings(max_examples=20)
@given(T=st.integers(1, 10), d=st.integers(1, 5), sw2=variance, sv2=variance, s02=variance)
def test_integer_mean_equals_reference(T, d, sw2, sv2, s02):
    D, S0, SW, SV = integer_scales(sw2, sv2 / d, s02)
    L1 = odd_lcm(2 * T + 1)
    G = coordinate_covariance_poly(T, d, sw2, sv2, s02)
    Gb = coordinate_mean_int(T, S0, SW, SV, L1)
    for i in range(T):
        for j in range(T):
            mean = sum((c * uniform_moment(m) for m, c in enumerate(G(i, j))), Fraction(0))
            assert Gb[i, j] == L1 * D * mean


@given(coeffs=st.lists(st.integers(0, 10 ** 6), min_size=1, max_size=40))
def test_uniform_mean_packed_reads_the_digits(coeffs):
    k = max(1, sum(coeffs).bit_length())                    # c_m <= P(1) < 2^k
    V = sum(c << (k * m) for m, c in enumerate(coeffs))
    assert uniform_mean_packed(V, k) == sum((c * uniform_moment(m) for m, c in enumerate(coeffs)), Fraction(0))


def test_odd_lcm():
    assert [odd_lcm(n) for n in (1, 2, 3, 5, 9, 10)] == [1, 1, 3, 15, 315, 315]


@pytest.mark.parametrize("lo", [-1.0, 0.0, -0.5])
@pytest.mark.parametrize("T", [1, 4, 30])
def test_gauss_legendre_is_exact_to_degree_6T_plus_1(T, lo):
    x, w = gauss_legendre(T, lo)
    assert x.shape == w.shape == (3 * T + 1,)
    assert not x.flags.writeable and not w.flags.writeable
    assert x.min() > lo and x.max() < 1
    for m in range(6 * T + 2):
        exact = (1 - lo ** (m + 1)) / ((1 - lo) * (m + 1))   # E lam^m, lam ~ U[lo, 1]
        assert abs(float(w @ x ** m) - exact) < 1e-14
    assert gauss_legendre(T, lo) is gauss_legendre(T, lo)    # cached


def _uniform_mean(poly, lo: Fraction):
    """E p(lam), lam ~ U[lo, 1], p a dict power -> Fraction."""
    return sum((c * (1 - lo ** (m + 1)) / ((1 - lo) * (m + 1)) for m, c in poly.items()), Fraction(0))


@pytest.mark.parametrize("lo", [Fraction(-1), Fraction(0)])
@pytest.mark.parametrize("sw2s,weights", [
    ((Fraction(1, 4),) * 3, None),
    ((Fraction(1, 10), Fraction(1, 5), Fraction(3, 10), Fraction(2, 5)), None),   # setting-(c) style
    ((Fraction(1, 3), Fraction(1, 3), Fraction(1)), None),
    ((Fraction(1, 2),) * 3, {"3": 2.0, "21": 0.5, "111": 0.25, "2": 1.5, "11": 0.75}),
])
def test_mixture_combinatorics_equal_sum_over_ordered_triples(lo, sw2s, weights):
    """F3 = X00 Y01 Z11 and F2 = X00 Y11 (T = 2) against the plain sum over (k1, k2, k3)."""
    T, s02, share = 2, Fraction(3, 2), Fraction(1, 7)
    d = len(sw2s)

    def form(X, Y, Z):
        return X[..., 0, 0] * Y[..., 0, 1] * Z[..., 1, 1], X[..., 0, 0] * Y[..., 1, 1]

    F3, F2, Kbar = mixture_quadrature(form, T, [float(v) for v in sw2s], float(s02), float(share),
                                      float(lo), weights)
    e = UNIT_WEIGHTS if weights is None else weights

    # G entries of coordinate k as polynomials in lam: {power: coefficient}
    def entries(sw2):
        pi1 = {2: s02, 0: sw2}
        pi2 = {4: s02, 2: sw2, 0: sw2}
        return {(0, 0): {**pi1, 0: pi1[0] + share}, (0, 1): {m + 1: c for m, c in pi1.items()},
                (1, 1): {**pi2, 0: pi2[0] + share}}

    def mul(p, q):
        out = {}
        for a, b in itertools.product(p, q):
            out[a + b] = out.get(a + b, 0) + p[a] * q[b]
        return out

    G = [entries(v) for v in sw2s]
    want3 = want2 = Fraction(0)
    for ks in itertools.product(range(d), repeat=3):
        polys = [G[ks[0]][0, 0], G[ks[1]][0, 1], G[ks[2]][1, 1]]
        groups = {}
        for k, p in zip(ks, polys):
            groups[k] = mul(groups.get(k, {0: Fraction(1)}), p)
        term = Fraction(1)
        for p in groups.values():
            term *= _uniform_mean(p, lo)
        pattern = {3: "111", 2: "21", 1: "3"}[len(groups)]
        want3 += Fraction(e[pattern]) * term
    for ks in itertools.product(range(d), repeat=2):
        if ks[0] == ks[1]:
            term = _uniform_mean(mul(G[ks[0]][0, 0], G[ks[0]][1, 1]), lo)
        else:
            term = _uniform_mean(G[ks[0]][0, 0], lo) * _uniform_mean(G[ks[1]][1, 1], lo)
        want2 += Fraction(e["2" if ks[0] == ks[1] else "11"]) * term
    assert float(F3) == pytest.approx(float(want3), rel=1e-13)
    assert float(F2) == pytest.approx(float(want2), rel=1e-13)
    kbar01 = sum(_uniform_mean(g[0, 1], lo) for g in G)
    assert Kbar.shape == (T, T) and Kbar[0, 1] == pytest.approx(float(kbar01), rel=1e-13, abs=1e-15)
