r"""kappa by its exact routes: rational arithmetic (setting a) and Gauss-Legendre quadrature (a, b, c, control).

Setting (a): A = diag(lambda), lambda_k iid U[-1, 1], c = 1, Sigma_0 = sigma_0^2 I and
Sigma_w = sigma_w^2 I (docs/math.md section 4).  Then K = sum_{k=1..d} G(lambda_k) with
the one-coordinate covariance G of :mod:`theory.coordinate`, and the moments N, D of
kappa are the forms M2, M3 of :mod:`theory.kappa_forms` averaged over the iid
coordinates.  By multilinearity (Gbar = E_lam G)::

    E_A M2(K, K)    = d E M2(G, G) + d(d-1) M2(Gbar, Gbar)
    E_A M3(K, K, K) = d E M3(G, G, G)
                      + d(d-1) E[M3(G, G, Gbar) + M3(G, Gbar, G) + M3(Gbar, G, G)]
                      + d(d-1)(d-2) M3(Gbar, Gbar, Gbar),

and E_lam of a polynomial sum_m c_m lam^m is sum_{m even} c_m / (m+1).

Exact rational route (:func:`kappa_exact_a`), Kronecker substitution
-------------------------------------------------------------------
With the integer scales of :mod:`theory.coordinate` (Gi = D G with integer polynomial
entries, Gbi = L1 D Gbar an integer matrix, L1 = lcm(1, 3, ..., 2T+1)) the integrands::

    Pn(lam) = M2(Gi, Gi)                                                     (deg <= 4T)
    Pd(lam) = L1 4M3(Gi, Gi, Gi) + (d-1) [4M3(Gi,Gi,Gbi) + 4M3(Gi,Gbi,Gi) + 4M3(Gbi,Gi,Gi)]
                                                                             (deg <= 6T)

are polynomials with non-negative integer coefficients (every term of M2 and 4 M3 is
a product of entries with a positive integer weight).  So they are evaluated once, at
lam = 2^k with k the bit length of their value at lam = 1, on Python integers, and their
base-2^k digits are their coefficients (Kronecker substitution).  Then::

    E_A M2  = [d L1^2 E Pn + d(d-1) M2(Gbi, Gbi)] / (D^2 L1^2)
    E_A M3  = [d L1^2 E Pd + d(d-1)(d-2) 4M3(Gbi, Gbi, Gbi)] / (4 D^3 L1^3)
    kappa   = (T-2) E_A M2 / E_A M3                                  (an exact Fraction).

Parity: every monomial of the integrands carries the parity of its index sum (each G_ij
has the parity of i + j; Gbar vanishes where i + j is odd), and a + a + 2(i + j) + 2 and
a + b + 2i + 1 are even, so Pn and Pd are *even* polynomials: the quadrature below
suffers no odd-part cancellation and the odd base-2^k digits are zero (tests check the
evenness).

Gauss-Legendre route (:func:`kappa_quadrature_a`, :func:`kappa_moments_quadrature`)
-----------------------------------------------------------------------------------
The same forms run vectorised over the 3T+1 Gauss-Legendre nodes of [-1, 1], which
integrate the degree <= 6T integrands exactly, through the coordinate-mixture engine
:func:`theory.coordinate.mixture_quadrature` -- the engine of the population moments
(:mod:`theory.population`), of which kappa is one ratio.  The mixture covers every
setting whose law is a coordinate mixture: a, c and the control (independent
coordinates) and b (weighted diagonal systems, docs/math.md section 4.7), so
:func:`kappa_moments_quadrature` gives kappa of eq. 15 for those from eq. 15's own forms,
without the layer's features.

Reference (setting (a), d = 5, T = 30, sigma_w = sigma_v = 0.1, Sigma_0 = I):
kappa = 0.2052454015138651...
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from .coordinate import (
    coordinate_covariance_int,
    coordinate_mean_int,
    family_quadrature,
    integer_scales,
    mixture_quadrature,
    odd_lcm,
    uniform_mean_packed,
)
from .kappa_forms import M2, M3x4, Layout
from .validation import check_nonneg_real, check_positive_int, check_rational

__all__ = [
    "kappa_ratio",
    "kappa_exact_a",
    "kappa_moments_exact_a",
    "kappa_quadrature_a",
    "kappa_moments_quadrature_a",
    "kappa_moments_quadrature",
]


def kappa_ratio(T, numerator, denominator):
    """Eq. 15 from its two moments: kappa = (T - 2) numerator / denominator, with
    numerator = E[y_{T-1} y_T S] and denominator = E[y_{T-1}^2 S^2] (n = T - 2 products in S).
    Exact for Fractions, float64 for floats; every route of this package ends here.

    >>> kappa_ratio(30, Fraction(1, 7), Fraction(2, 3))
    Fraction(6, 1)
    """
    return (T - 2) * numerator / denominator


# --------------------------------------------------------------------------- validation

def _check_inputs(T, d, sigma_w2, sigma_v2, sigma_02, *, exact: bool):
    """Validated (T, d, sw2, sv2, s02): Fractions when ``exact``, else floats."""
    T = check_positive_int("T", T, minimum=3)
    d = check_positive_int("d", d)
    check = check_rational if exact else check_nonneg_real
    sw2 = check("sigma_w2", sigma_w2)
    sv2 = check("sigma_v2", sigma_v2)
    s02 = check("sigma_02", sigma_02)
    if sw2 == 0 and sv2 == 0 and s02 == 0:
        raise ValueError("sigma_w2, sigma_v2, sigma_02 must not all be zero (y = 0, kappa undefined)")
    return T, d, sw2, sv2, s02


# --------------------------------------------------------------------------- exact

def _exact_parts(T: int, d: int, sw2: Fraction, sv2: Fraction, s02: Fraction, L: Layout):
    """Exact (N, D) as Fractions for the layout ``L`` (the paper's, or a negative control)."""
    D, S0, SW, SV = integer_scales(sw2, sv2 / d, s02)
    L1 = odd_lcm(2 * T + 1)
    Gbi = coordinate_mean_int(T, S0, SW, SV, L1)

    def integrands(G):
        pn = M2(G, G, L)
        pd = L1 * M3x4(G, G, G, L)
        if d > 1:
            mixed = M3x4(G, G, Gbi, L) + M3x4(G, Gbi, G, L) + M3x4(Gbi, G, G, L)
            pd += (d - 1) * mixed
        return pn, pd

    # exact digit bounds: the same integrands at lam = 1 (all coefficients >= 0)
    bn, bd = integrands(coordinate_covariance_int(T, S0, SW, SV, 1))
    kn, kd = max(1, int(bn).bit_length()), max(1, int(bd).bit_length())
    if kn == kd:
        vn, vd = integrands(coordinate_covariance_int(T, S0, SW, SV, 1 << kn))
    else:                                          # pragma: no cover - rare, still exact
        vn, _ = integrands(coordinate_covariance_int(T, S0, SW, SV, 1 << kn))
        _, vd = integrands(coordinate_covariance_int(T, S0, SW, SV, 1 << kd))
    En = uniform_mean_packed(int(vn), kn)
    Ed = uniform_mean_packed(int(vd), kd)
    num = (d * L1 * L1 * En + d * (d - 1) * int(M2(Gbi, Gbi, L))) / (D * D * L1 * L1)
    den = (d * L1 * L1 * Ed + d * (d - 1) * (d - 2) * int(M3x4(Gbi, Gbi, Gbi, L))) / (4 * D ** 3 * L1 ** 3)
    return Fraction(num), Fraction(den)


def kappa_moments_exact_a(T, d, sigma_w2, sigma_v2, sigma_02=1) -> tuple[Fraction, Fraction]:
    """Exact (E[y_{T-1} y_T S], E[y_{T-1}^2 S^2]) in setting (a), as Fractions.

    Variances are rationals (ints, Fractions, decimal strings, floats read by repr:
    0.01 -> 1/100).  Kronecker-substitution engine (module doc).

    >>> kappa_moments_exact_a(3, 1, 0, 1, 0)      # white noise: E[y1 y2 y0 y1] = 0, E[y1^4 y0^2] = 3
    (Fraction(0, 1), Fraction(3, 1))
    """
    T, d, sw2, sv2, s02 = _check_inputs(T, d, sigma_w2, sigma_v2, sigma_02, exact=True)
    return _exact_parts(T, d, sw2, sv2, s02, Layout.paper(T))


def kappa_exact_a(T, d, sigma_w2, sigma_v2, sigma_02=1) -> Fraction:
    """Exact kappa in setting (a) as a Fraction (variances as rationals).

    >>> float(kappa_exact_a(30, 5, "1/100", "1/100"))   # the paper's defaults
    0.20524540151386514
    """
    T, d, sw2, sv2, s02 = _check_inputs(T, d, sigma_w2, sigma_v2, sigma_02, exact=True)
    num, den = _exact_parts(T, d, sw2, sv2, s02, Layout.paper(T))
    return kappa_ratio(T, num, den)


# --------------------------------------------------------------------------- quadrature

def _forms(L: Layout):
    def form(X, Y, Z):
        return M3x4(X, Y, Z, L), M2(X, Y, L)
    return form


def _quad_parts(T: int, d: int, sw2: float, sv2: float, s02: float, L: Layout):
    """float64 (N, D) for the layout ``L`` by the coordinate-mixture quadrature."""
    den4, num, _ = mixture_quadrature(_forms(L), T, np.full(d, sw2), s02, sv2 / d)
    return float(num), float(den4) / 4.0


def kappa_moments_quadrature_a(T, d, sigma_w2, sigma_v2, sigma_02=1.0) -> tuple[float, float]:
    """(E[y_{T-1} y_T S], E[y_{T-1}^2 S^2]) in setting (a), float64, by exact quadrature."""
    T, d, sw2, sv2, s02 = _check_inputs(T, d, sigma_w2, sigma_v2, sigma_02, exact=False)
    return _quad_parts(T, d, sw2, sv2, s02, Layout.paper(T))


def kappa_quadrature_a(T, d, sigma_w2, sigma_v2, sigma_02=1.0) -> float:
    """kappa in setting (a) in float64: Gauss-Legendre with 3T+1 nodes (exact in exact
    arithmetic for the degree <= 6T integrands), vectorised over nodes.

    >>> abs(kappa_quadrature_a(30, 5, 0.01, 0.01) / 0.2052454015138651 - 1) < 1e-12
    True
    """
    T, d, sw2, sv2, s02 = _check_inputs(T, d, sigma_w2, sigma_v2, sigma_02, exact=False)
    num, den = _quad_parts(T, d, sw2, sv2, s02, Layout.paper(T))
    return kappa_ratio(T, num, den)


def kappa_moments_quadrature(family) -> tuple[float, float]:
    """(E[y_{T-1} y_T S], E[y_{T-1}^2 S^2]) for a coordinate-mixture family, float64.

    Settings a, c and the control (A diagonal: independent coordinates with the family's
    per-coordinate noise sigma_w^2 omega_k and lambda ~ U[lo, 1]) and b (weighted
    diagonal systems, w = d Dirichlet(1/2), docs/math.md section 4.7): eq. 15's own
    moment forms (:mod:`theory.kappa_forms`) averaged by the coordinate quadrature.
    This route never builds the layer's features, so it is independent of the
    population moments of :mod:`theory.population` (which share only the quadrature).

    >>> from theory.systems import LDSFamily
    >>> n, d = kappa_moments_quadrature(LDSFamily("a"))
    >>> abs(28 * n / d / 0.2052454015138651 - 1) < 1e-12
    True
    """
    den4, num, _ = family_quadrature(_forms(Layout.paper(family.T)), family)
    return float(num), float(den4) / 4.0
