"""Tests for theory.kappa and theory.kappa_exact: kappa of Theorem 4.1 (eq. 15), docs/math.md
section 4 (the moment forms of theory.kappa_forms: tests/test_kappa_forms.py).

Routes cross-checked against each other:
exact rational (Kronecker substitution)  <->  brute-force Isserlis through
theory.reference.exact_moments_a  <->  float64 Gauss-Legendre  <->  mpmath (high-precision
conversion, and mpmath.quad of the integrand)  <->  sympy symbolic (explicit Wick sums,
theory.reference.kappa_symbolic)  <->  Monte Carlo over systems (exact per-system
moments)  <->  raw trajectories.
"""
from __future__ import annotations

import json
import math
import re
from fractions import Fraction

import mpmath
import numpy as np
import pytest
import sympy as sp
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from theory import kappa_exact
from theory.kappa import KappaResult, kappa, kappa_mc_moments, kappa_mc_trajectories
from theory.kappa_exact import kappa_exact_a, kappa_moments_exact_a, kappa_moments_quadrature_a, kappa_quadrature_a
from theory.kappa_forms import moment_forms
from theory.kappa_forms import Layout
from theory.reference import coordinate_covariance_poly, exact_moments_a, kappa_symbolic
from theory.systems import LDSFamily

REF = 0.2052454015138651           # docs/math.md section 4 (setting a, d=5, T=30, 0.1, 0.1, I)
TOL = 1e-12

variance = st.fractions(min_value=0, max_value=10, max_denominator=200)


def _brute_moments(T, d, sw2, sv2, s02, lo=0, hi=None):
    """E[y_a y_b S], E[y_a^2 S^2] by summing exact 4th/6th moments (theory.reference)."""
    hi = T - 2 if hi is None else hi
    a, b = T - 2, T - 1
    pr = [(i, i + 1) for i in range(lo, hi)]
    num = sum(exact_moments_a([(a, b, i, j) for i, j in pr], T, d, sw2, sv2, s02))
    den = sum(exact_moments_a([(a, a, i, j, k, l) for i, j in pr for k, l in pr], T, d, sw2, sv2, s02))
    return num, den


# --------------------------------------------------------------------------- reference

def test_reference_value_exact():
    k = kappa_exact_a(30, 5, Fraction(1, 100), Fraction(1, 100))
    assert isinstance(k, Fraction)
    assert abs(float(k) / REF - 1) < TOL
    # the family dispatcher reads std devs 0.1 as variances 1/100 exactly
    res = kappa(LDSFamily("a"))
    assert res.method == "exact-rational" and res.exact == k and res.stderr == 0.0
    assert res.kappa == float(k)
    assert res.details["sigma_w2"] == "1/100" and res.details["sigma_v2"] == "1/100"
    num, den = kappa_moments_exact_a(30, 5, Fraction(1, 100), Fraction(1, 100))
    assert 28 * num / den == k                      # exact: kappa = (T-2) num / den
    assert (res.numerator, res.denominator) == (num, den)       # the exact moments, not floats
    assert res.to_json()["numerator"] == f"{num.numerator}/{num.denominator}"
    assert Fraction(res.to_json()["exact"]) == 28 * Fraction(res.to_json()["numerator"]) / Fraction(
        res.to_json()["denominator"])
    assert math.isclose(28 * res.numerator / res.denominator, REF, rel_tol=TOL)


def test_exact_engine_variances_are_exact_rationals():
    """The exact engine reads a float by its decimal repr: 0.01 is 1/100, but the float
    0.1 ** 2 is 0.010000000000000002, a different rational with a different exact kappa.
    Variances for the exact engine are therefore passed as Fraction(1, 100) or "1/100"."""
    want = kappa_exact_a(8, 2, Fraction(1, 100), Fraction(1, 100))
    assert kappa_exact_a(8, 2, "1/100", "1/100") == want
    assert kappa_exact_a(8, 2, 0.01, 0.01) == want
    assert kappa_exact_a(8, 2, Fraction(1, 10) ** 2, Fraction("0.1") ** 2) == want
    assert repr(0.1 ** 2) == "0.010000000000000002"
    assert kappa_exact_a(8, 2, 0.1 ** 2, 0.1 ** 2) != want


def test_reference_value_quadrature():
    q = kappa_quadrature_a(30, 5, 0.01, 0.01)
    assert isinstance(q, float)
    assert abs(q / REF - 1) < TOL
    res = kappa(LDSFamily("a"), method="gauss-legendre")
    assert res.method == "gauss-legendre" and res.exact is None
    assert abs(res.kappa / REF - 1) < TOL
    assert kappa(LDSFamily("a"), method="quadrature").kappa == res.kappa
    assert (res.numerator, res.denominator) == kappa_moments_quadrature_a(30, 5, 0.01, 0.01, 1.0)


def test_to_json_plain_types():
    res = kappa(LDSFamily("a", T=6, d=2))
    js = res.to_json()
    assert js["exact"] == f"{res.exact.numerator}/{res.exact.denominator}"
    assert Fraction(js["exact"]) == res.exact
    assert set(js) >= {"kappa", "exact", "stderr", "method", "numerator", "denominator", "details"}
    json.dumps(js)                                       # plain built-in types only
    for v in js["details"].values():
        assert type(v) in (int, float, str)
    mc = kappa(LDSFamily("b", T=6, d=2), method="mc-moments", m=500, seed=3)
    js = mc.to_json()
    assert js["exact"] is None and js["method"] == "mc-moments" and js["details"]["seed"] == 3
    json.dumps(js)
    for v in js["details"].values():
        assert type(v) in (int, float, str)


# --------------------------------------------------------------------------- exact engine

@settings(max_examples=25)
@given(T=st.integers(3, 6), d=st.integers(1, 3), sw2=variance, sv2=variance, s02=variance)
def test_exact_matches_brute_force_isserlis(T, d, sw2, sv2, s02):
    assume(sw2 or sv2 or s02)
    assert kappa_moments_exact_a(T, d, sw2, sv2, s02) == _brute_moments(T, d, sw2, sv2, s02)


@settings(max_examples=30)
@given(T=st.integers(3, 30), d=st.integers(1, 6), sw2=variance, sv2=variance, s02=variance)
def test_exact_matches_quadrature(T, d, sw2, sv2, s02):
    assume(sw2 or s02)                     # sigma_w = sigma_0 = 0 gives kappa = 0 exactly
    ex = kappa_exact_a(T, d, sw2, sv2, s02)
    q = kappa_quadrature_a(T, d, float(sw2), float(sv2), float(s02))
    assert ex > 0
    assert abs(q / float(ex) - 1) < TOL
    num, den = kappa_moments_exact_a(T, d, sw2, sv2, s02)
    qn, qd = kappa_moments_quadrature_a(T, d, float(sw2), float(sv2), float(s02))
    assert abs(qn / float(num) - 1) < TOL and abs(qd / float(den) - 1) < TOL


def test_white_noise_gives_zero():
    """sigma_w = sigma_0 = 0: y is white noise, E[y_{T-1} y_T S] = 0 exactly."""
    assert kappa_exact_a(7, 3, 0, Fraction(1, 3), 0) == 0
    assert kappa_quadrature_a(7, 3, 0.0, 1 / 3, 0.0) == 0.0
    # T = 3, d = 1, K = I: E[y_1^4] E[y_0^2] = 3
    assert kappa_moments_exact_a(3, 1, 0, 1, 0) == (0, 3)


def test_quadrature_vs_mpmath_high_precision():
    mpmath.mp.dps = 50
    try:
        for T, d, sw2, sv2, s02 in [(30, 5, "1/100", "1/100", 1), (17, 3, "1/7", "2/3", "1/2"), (5, 1, "3", "0", "1")]:
            ex = kappa_exact_a(T, d, sw2, sv2, s02)
            hp = mpmath.mpf(ex.numerator) / ex.denominator
            q = kappa_quadrature_a(T, d, float(Fraction(sw2)), float(Fraction(sv2)), float(Fraction(s02)))
            assert abs((mpmath.mpf(q) - hp) / hp) < TOL
            assert abs(float(hp) - float(ex)) == 0.0 or abs(float(hp) / float(ex) - 1) < 1e-15
        hp_ref = mpmath.mpf(kappa_exact_a(30, 5, "1/100", "1/100").numerator) / kappa_exact_a(30, 5, "1/100", "1/100").denominator
        assert mpmath.nstr(hp_ref, 16, strip_zeros=False).startswith("0.205245401513865")
    finally:
        mpmath.mp.dps = 15


def test_exact_vs_mpmath_quad_of_integrand():
    """d = 1: E_lam of the moment forms of G(lam) by mpmath.quad (adaptive, not Gauss)."""
    T, sw2, sv2 = 5, Fraction(1, 10), Fraction(1, 5)
    G = coordinate_covariance_poly(T, 1, sw2, sv2, 1)
    mpmath.mp.dps = 30
    try:
        def K(lam):
            return np.array([[sum(mpmath.mpf(c.numerator) / c.denominator * lam ** m for m, c in enumerate(G(i, j)))
                              for j in range(T)] for i in range(T)], dtype=object)

        num = mpmath.quad(lambda x: moment_forms(K(x))[0], [-1, 0, 1]) / 2
        den = mpmath.quad(lambda x: moment_forms(K(x))[1], [-1, 0, 1]) / 2
        en, ed = kappa_moments_exact_a(T, 1, sw2, sv2, 1)
        assert abs(num - mpmath.mpf(en.numerator) / en.denominator) < mpmath.mpf(10) ** -25
        assert abs(den - mpmath.mpf(ed.numerator) / ed.denominator) < mpmath.mpf(10) ** -25
    finally:
        mpmath.mp.dps = 15


# --------------------------------------------------------------------------- symbolic

@pytest.mark.parametrize("T", [3, 4, 5])
def test_symbolic_equals_exact(T):
    expr = kappa_symbolic(T)
    w, v = sp.symbols("sigma_w2 sigma_v2", positive=True)
    assert expr.free_symbols <= {w, v}
    num, den = sp.fraction(expr)
    assert sp.Poly(num, w, v).is_ground is False and sp.Poly(den, w, v).degree() >= 1
    for sw2, sv2 in [(Fraction(1, 100), Fraction(1, 100)), (Fraction(3, 7), Fraction(2)),
                     (Fraction(0), Fraction(1, 3)), (Fraction(5), Fraction(0))]:
        val = expr.subs({w: sp.Rational(sw2.numerator, sw2.denominator),
                         v: sp.Rational(sv2.numerator, sv2.denominator)})
        ex = kappa_exact_a(T, 1, sw2, sv2, 1)
        assert val == sp.Rational(ex.numerator, ex.denominator)


def test_symbolic_equals_exact_d2():
    expr = kappa_symbolic(4, d=2)
    w, v = sp.symbols("sigma_w2 sigma_v2", positive=True)
    ex = kappa_exact_a(4, 2, Fraction(1, 9), Fraction(2, 5), 1)
    assert expr.subs({w: sp.Rational(1, 9), v: sp.Rational(2, 5)}) == sp.Rational(ex.numerator, ex.denominator)


# --------------------------------------------------------------------------- Monte Carlo

def test_mc_moments_within_4_stderr_of_exact():
    fam = LDSFamily("a", d=3, T=10)
    ex = float(kappa_exact_a(10, 3, Fraction(1, 100), Fraction(1, 100)))
    res = kappa_mc_moments(fam, 20_000, np.random.default_rng(11))
    assert res.method == "mc-moments" and res.exact is None
    assert 0 < res.stderr < 0.05 * ex
    assert abs(res.kappa - ex) < 4 * res.stderr
    assert res.kappa == pytest.approx(8 * res.numerator / res.denominator, rel=1e-14)
    assert res.details["m"] == 20_000 and res.details["T"] == 10 and res.details["d"] == 3


def test_mc_trajectories_within_4_stderr_of_exact():
    fam = LDSFamily("a", d=3, T=10)
    ex = float(kappa_exact_a(10, 3, Fraction(1, 100), Fraction(1, 100)))
    res = kappa_mc_trajectories(fam, 200_000, np.random.default_rng(12), chunk=50_000)
    assert res.method == "mc-trajectories"
    assert 0 < res.stderr < 0.2 * ex
    assert abs(res.kappa - ex) < 4 * res.stderr


@pytest.mark.parametrize("setting", ["b", "c", "d", "asym"])
def test_mc_estimators_agree_other_settings(setting):
    """The two independent Monte Carlo routes agree (no exact value outside setting a)."""
    fam = LDSFamily(setting, d=3, T=8)
    r1 = kappa(fam, method="mc-moments", m=8_000, seed=1)
    assert r1.method == "mc-moments" and r1.details["seed"] == 1
    r2 = kappa(fam, method="mc-trajectories", m=100_000, seed=2)
    assert np.isfinite(r1.kappa) and r1.stderr > 0 and r2.stderr > 0
    assert abs(r1.kappa - r2.kappa) < 4 * math.hypot(r1.stderr, r2.stderr)
    # determinism
    assert kappa(fam, method="mc-moments", m=8_000, seed=1).kappa == r1.kappa


def test_mc_chunking_invariant():
    """Chunk size is a memory knob only.

    Setting (a) draws nothing but the (m, d) eigenvalues, and numpy's uniform stream does
    not depend on how it is cut, so every chunk size (a divisor of m, a non-divisor, 1, one
    larger than m) must give bitwise the same estimate.  Settings with more than one draw
    per system (b: eigenvalues then Q) interleave the streams per chunk, so there the
    estimate must equal the plain ratio over the concatenated per-chunk draws.
    """
    fam = LDSFamily("a", d=2, T=6)
    ref = kappa_mc_moments(fam, 1000, np.random.default_rng(5), chunk=1000)
    for chunk in (300, 7, 1, 4096):
        r = kappa_mc_moments(fam, 1000, np.random.default_rng(5), chunk=chunk)
        assert (r.kappa, r.stderr, r.numerator, r.denominator) == (ref.kappa, ref.stderr, ref.numerator, ref.denominator)
        assert r.details["chunk"] == chunk and r.details["m"] == 1000
    with pytest.raises(ValueError, match="^chunk must be"):
        kappa_mc_moments(fam, 1000, np.random.default_rng(5), chunk=0)
    fam_b = LDSFamily("b", d=2, T=6)
    rng = np.random.default_rng(5)
    parts = [moment_forms(fam_b.covariance(fam_b.sample_systems(rng, c))) for c in (300, 300, 300, 100)]
    N = np.concatenate([p[0] for p in parts])
    D = np.concatenate([p[1] for p in parts])
    r = kappa_mc_moments(fam_b, 1000, np.random.default_rng(5), chunk=300)
    assert r.kappa == pytest.approx(4 * N.mean() / D.mean(), rel=1e-13)
    assert r.stderr == pytest.approx(4 * np.std(N - N.mean() / D.mean() * D, ddof=1) / (np.sqrt(1000) * D.mean()), rel=1e-10)
    # the raw-trajectory estimator: chunks of 400, 400, 200 from one generator
    rng = np.random.default_rng(6)
    f, g = [], []
    for c in (400, 400, 200):
        _, y = fam_b.sample(rng, c)
        S = (y[:, :4] * y[:, 1:5]).sum(axis=1)
        f.append(y[:, 4] * y[:, 5] * S)
        g.append((y[:, 4] * S) ** 2)
    f, g = np.concatenate(f), np.concatenate(g)
    r = kappa_mc_trajectories(fam_b, 1000, np.random.default_rng(6), chunk=400)
    assert r.kappa == pytest.approx(4 * f.mean() / g.mean(), rel=1e-13)
    assert r.numerator == pytest.approx(f.mean(), rel=1e-13) and r.denominator == pytest.approx(g.mean(), rel=1e-13)


# --------------------------------------------------------------------------- negative controls

def test_negative_control_wrong_prefactor_and_window():
    """Deliberately wrong variants must NOT reproduce the reference."""
    good = kappa_exact_a(30, 5, "1/100", "1/100")
    assert abs(float(good) / REF - 1) < TOL
    # (i) T-1 instead of T-2 in front
    wrong_pref = float(good) * 29 / 28
    assert not math.isclose(wrong_pref, REF, rel_tol=1e-6)
    # (ii) S shifted by one index (sum_{i=2..T-1} y_i y_{i+1}, 1-based)
    shifted = Layout(a=28, b=29, lo=1, hi=29)
    n, d = kappa_exact._exact_parts(30, 5, Fraction(1, 100), Fraction(1, 100), Fraction(1), shifted)
    wrong_window = float(28 * n / d)
    assert not math.isclose(wrong_window, REF, rel_tol=1e-3)
    # the engines agree with each other on the wrong window too (so it is the window,
    # not the engine, that the reference rejects)
    qn, qd = kappa_exact._quad_parts(30, 5, 0.01, 0.01, 1.0, shifted)
    assert abs(28 * qn / qd / wrong_window - 1) < TOL
    # (iii) standard deviations taken as variances
    assert not math.isclose(float(kappa_exact_a(30, 5, "1/10", "1/10")), REF, rel_tol=1e-3)


def test_negative_control_window_brute_force():
    """At small T the shifted-window engine matches brute force and differs from kappa."""
    T, d, sw2, sv2 = 6, 2, Fraction(1, 4), Fraction(1, 3)
    shifted = Layout(a=T - 2, b=T - 1, lo=1, hi=T - 1)
    assert kappa_exact._exact_parts(T, d, sw2, sv2, Fraction(1), shifted) == _brute_moments(T, d, sw2, sv2, 1, lo=1, hi=T - 1)
    assert kappa_exact._exact_parts(T, d, sw2, sv2, Fraction(1), shifted) != kappa_moments_exact_a(T, d, sw2, sv2, 1)


# --------------------------------------------------------------------------- validation

@pytest.mark.parametrize("fn", [kappa_exact_a, kappa_moments_exact_a, kappa_quadrature_a])
@pytest.mark.parametrize("name,kwargs", [
    ("sigma_w2", dict(sigma_w2=float("nan"), sigma_v2=0.01)),
    ("sigma_w2", dict(sigma_w2=-0.01, sigma_v2=0.01)),
    ("sigma_v2", dict(sigma_w2=0.01, sigma_v2=-1)),
    ("sigma_v2", dict(sigma_w2=0.01, sigma_v2=float("inf"))),
    ("sigma_02", dict(sigma_w2=0.01, sigma_v2=0.01, sigma_02=-1)),
    ("sigma_w2, sigma_v2, sigma_02", dict(sigma_w2=0, sigma_v2=0, sigma_02=0)),
])
def test_bad_variances(fn, name, kwargs):
    with pytest.raises(ValueError, match="^" + re.escape(name)):
        fn(T=5, d=2, **kwargs)


@pytest.mark.parametrize("fn", [kappa_exact_a, kappa_quadrature_a])
def test_bad_T_d(fn):
    with pytest.raises(ValueError, match="^T "):
        fn(2, 1, 0.01, 0.01)
    with pytest.raises(ValueError, match="^T "):
        fn(4.0, 1, 0.01, 0.01)
    with pytest.raises(ValueError, match="^d "):
        fn(5, 0, 0.01, 0.01)


def test_bad_method_and_setting():
    with pytest.raises(ValueError, match="^method"):
        kappa(LDSFamily("a", T=5, d=1), method="newton")
    for meth in ("exact-rational", "exact"):
        with pytest.raises(ValueError, match="^method"):
            kappa(LDSFamily("b", T=5, d=1), method=meth)
    for meth in ("gauss-legendre", "quadrature"):        # setting d is no coordinate mixture
        with pytest.raises(ValueError, match="^method"):
            kappa(LDSFamily("d", T=5, d=1), method=meth)
    with pytest.raises(ValueError, match="^family must be an LDSFamily, got str$"):
        kappa("a")
    with pytest.raises(ValueError, match="^m "):
        kappa(LDSFamily("b", T=5, d=1), method="mc-moments", m=0)
    with pytest.raises(ValueError, match="^seed"):
        kappa(LDSFamily("b", T=5, d=1), method="mc-moments", seed=-1)
    with pytest.raises(ValueError, match="^rng"):
        kappa_mc_moments(LDSFamily("a", T=5, d=1), 10, 0)
    with pytest.raises(ValueError, match="^m "):
        kappa_mc_trajectories(LDSFamily("a", T=5, d=1), 0, np.random.default_rng(0))
    with pytest.raises(ValueError, match="^rng"):
        kappa_mc_trajectories(LDSFamily("a", T=5, d=1), 10, 0)
    with pytest.raises(ValueError, match="^T "):
        kappa_symbolic(7)
    with pytest.raises(ValueError, match="^d "):
        kappa_symbolic(4, d=0)


def test_result_is_frozen():
    res = KappaResult(kappa=1.0, exact=None, stderr=0.0, method="gauss-legendre",
                      numerator=1.0, denominator=1.0, details={})
    with pytest.raises(AttributeError):
        res.kappa = 2.0


@pytest.mark.parametrize("setting", ["b", "c", "asym"])
def test_quadrature_kappa_of_mixture_settings_matches_monte_carlo(setting):
    """Gauss-Legendre kappa of eq. 15's forms (settings b, c, control) against the Monte
    Carlo over systems with exact per-system moments (an independent route: no quadrature,
    no coordinate reduction), within 4 standard errors; small T and d keep it cheap.
    Control: the prefactor T-1 instead of T-2 is rejected by the same comparison."""
    fam = LDSFamily(setting, T=6, d=3, sigma_w=0.3, sigma_v=0.2)
    q = kappa(fam, method="gauss-legendre")
    mc = kappa_mc_moments(fam, 100_000, np.random.default_rng(17))
    assert abs(q.kappa - mc.kappa) < 4 * mc.stderr, (q.kappa, mc.kappa, mc.stderr)
    wrong = q.kappa * (fam.T - 1) / (fam.T - 2)
    assert abs(wrong - mc.kappa) > 4 * mc.stderr, (wrong, mc.kappa, mc.stderr)


def test_auto_picks_the_fastest_exact_route_and_says_why():
    from theory.kappa import choose_method, exact_seconds
    assert choose_method(LDSFamily("a"))[0] == "exact-rational"
    assert choose_method(LDSFamily("a", T=300))[0] == "gauss-legendre" and exact_seconds(300, 5) > 1000
    assert [choose_method(LDSFamily(s))[0] for s in ("b", "c", "asym", "d")] == \
        ["gauss-legendre"] * 3 + ["mc-moments"]
    res = kappa(LDSFamily("b"))
    assert res.method == "gauss-legendre" and "quadrature" in res.details["auto"]
    ref = kappa(LDSFamily("a", T=40))
    assert kappa(LDSFamily("a", T=40), method="quadrature").kappa == pytest.approx(ref.kappa, rel=1e-12)


def test_resource_guard_and_strict_json():
    with pytest.raises(ValueError, match="^T = 1000000 needs about"):
        kappa(LDSFamily("d", T=1_000_000))
    with pytest.raises(ValueError, match="^T = 100000 needs about"):
        kappa(LDSFamily("a", T=100_000), method="quadrature")
    with pytest.raises(ValueError, match="^m must be an integer >= 2"):
        kappa(LDSFamily("d"), m=1)
    res = kappa(LDSFamily("d", T=6, d=2), m=50)
    bad = type(res)(kappa=res.kappa, exact=None, stderr=float("inf"), method=res.method,
                    numerator=res.numerator, denominator=float("nan"), details={"x": float("inf")})
    js = bad.to_json()
    assert (js["stderr"], js["denominator"], js["details"]["x"]) == ("Infinity", "NaN", "Infinity")
    json.dumps(js, allow_nan=False)


def test_the_memory_estimate_counts_a_chunk_of_system_matrices():
    """route_bytes is at least what a chunk of the route must hold: for mc-moments the chunk's
    T x T covariances and its d x d system matrices (float64), for the trajectories the chunk's
    d x d matrices; the quadrature's 3T + 1 node covariances."""
    from theory.kappa import route_bytes
    for T, d in ((5, 50), (40, 2)):
        fam = LDSFamily("b", d=d, T=T)
        assert route_bytes(fam, "mc-moments", chunk=10) >= 8 * 10 * (T * T + d * d)
        assert route_bytes(fam, "mc-trajectories", chunk=10) >= 8 * 10 * d * d
    assert route_bytes(LDSFamily("a", d=1, T=9), "gauss-legendre") >= 8 * 28 * 81
