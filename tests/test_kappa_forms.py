"""Tests for theory.kappa_forms: the two Gaussian moments of kappa (eq. 15) as forms in the
covariance K (Magnus' formulas), docs/math.md section 4.

Oracles: brute-force Wick (Isserlis) sums over the perfect matchings
(theory.reference.gaussian_moments, and an exact Fraction version here) for an arbitrary SPD
K; the evenness in lambda of the d = 1 integrands (theory.reference's exact polynomials).
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from theory.kappa_forms import moment_forms
from theory.reference import coordinate_covariance_poly, gaussian_moments, pairings


def _isserlis_fraction(K, tuples) -> Fraction:
    """sum over tuples of E[y_i1 ... y_ik] for y ~ N(0, K), K an object array of Fractions:
    Isserlis' sum over the perfect matchings of theory.reference.pairings, in exact arithmetic."""
    total = Fraction(0)
    for t in tuples:
        for matching in pairings(len(t)).tolist():
            term = Fraction(1)
            for p, q in matching:
                term *= K[t[p], t[q]]
            total += term
    return total


@settings(max_examples=25)
@given(T=st.integers(3, 8), seed=st.integers(0, 2**32 - 1))
@example(T=3, seed=7708)      # K's rounding to 2^-20 moved den by 1.2e-5 relative (a flake of the old 1e-5 bound)
def test_moment_forms_equal_isserlis(T, seed):
    """M2 / M3 (Magnus) equal the brute-force Wick sums for an arbitrary SPD K."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((T, T + 2))
    K = X @ X.T / (T + 2) + 0.1 * np.eye(T)
    a, b = T - 2, T - 1
    pr = [(i, i + 1) for i in range(T - 2)]
    num_b = gaussian_moments(K, [(a, b, i, j) for i, j in pr]).sum()
    den_b = gaussian_moments(K, [(a, a, i, j, k, l) for i, j in pr for k, l in pr]).sum()
    num, den = moment_forms(K)
    assert num == pytest.approx(num_b, rel=1e-12, abs=1e-12 * den_b)
    assert den == pytest.approx(den_b, rel=1e-12)
    # batched and object (exact) versions agree
    nb, db = moment_forms(np.stack([K, 2 * K]))
    assert nb[1] == pytest.approx(4 * num, rel=1e-12, abs=1e-12 * den) and db[1] == pytest.approx(8 * den, rel=1e-12)
    # the object (exact) version on a dyadic rounding Kq of K equals Isserlis' sum in
    # Fractions on that same Kq, exactly
    Kq = np.array([[Fraction(int(v * 2**20), 2**20) for v in row] for row in (K + K.T) / 2], dtype=object)
    nq, dq = moment_forms(Kq)
    assert isinstance(nq, Fraction) and isinstance(dq, Fraction)
    assert nq == _isserlis_fraction(Kq, [(a, b, i, j) for i, j in pr])
    assert dq == _isserlis_fraction(Kq, [(a, a, i, j, k, l) for i, j in pr for k, l in pr])
    # the exact form on Kq equals the float form on the same Kq (the rounding of K to 2^-20
    # moves den itself by up to ~1e-5 relative, so K's own den is no oracle for dq)
    nf, df = moment_forms(Kq.astype(float))
    assert float(dq) == pytest.approx(df, rel=1e-12) and float(nq) == pytest.approx(nf, rel=1e-12, abs=1e-12 * df)


def test_integrands_are_even_in_lambda():
    """Parity (module doc): the d = 1 integrands are even in lambda."""
    T = 9
    G = coordinate_covariance_poly(T, 1, Fraction(1, 50), Fraction(1, 30), 1)
    for lam in (0.3, 0.77, 0.95):
        def mat(x):
            return np.array([[sum(float(c) * x ** m for m, c in enumerate(G(i, j))) for j in range(T)]
                             for i in range(T)])
        n1, d1 = moment_forms(mat(lam))
        n2, d2 = moment_forms(mat(-lam))
        assert n1 == pytest.approx(n2, rel=1e-13) and d1 == pytest.approx(d2, rel=1e-13)
