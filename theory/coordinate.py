r"""The one-coordinate covariance G(lambda) and its mean over lambda: one float engine, one exact engine.

In the diagonal settings (A = diag(lambda), c = 1; docs/math.md section 1 and
docs/settings.md) coordinate k of the state contributes G(lambda_k; sigma_wk^2) to the
covariance of y, so K = sum_{k=1..d} G(lambda_k) with (0-based positions i, j; position
i holds time i + 1)::

    G(lam)[i, j] = lam^|i-j| Pi_{min(i,j)+1}(lam) + share [i = j],     share = sigma_v^2 / d,
    Pi_t(lam)    = lam^2 Pi_{t-1}(lam) + sigma_w^2,   Pi_0 = sigma_0^2
                 = sigma_0^2 lam^(2t) + sigma_w^2 (1 + lam^2 + ... + lam^(2t-2)),

a polynomial of degree i + j + 2 <= 2T with non-negative coefficients; G[i, j] has the
parity of i + j.  (The observation noise sigma_v^2 I is split evenly over the d
coordinates.)  Setting (b) reduces to a weighted sum K = sum_k w_k G(lambda_k), see
:mod:`theory.population`.

Worked example (T = 2, sigma_0 = 1): Pi_1 = lam^2 + sigma_w^2, Pi_2 = lam^4 + sigma_w^2
(1 + lam^2), and G = [[Pi_1 + share, lam Pi_1], [lam Pi_1, Pi_2 + share]].

The moments this suite needs are polynomials in lambda (products of up to three G's,
degree <= 6T) averaged over lambda ~ U[lo, 1].  This module computes them two ways.

Float engine: Gauss-Legendre quadrature
---------------------------------------
:func:`gauss_legendre` gives the 3T+1 nodes of [lo, 1] with probability weights (the
uniform law); they integrate every polynomial of degree <= 6T+1 exactly, so the float64
result is exact up to rounding.  :func:`coordinate_covariance` evaluates G at all nodes
at once, and :func:`mixture_quadrature` takes any trilinear form F3 (with a bilinear
part F2) to its expectation over the coordinate mixture.  By multilinearity, summing
over ordered coordinate triples (k1, k2, k3) of F3(G_k1, G_k2, G_k3)::

    all equal       sum_k E[F3(G_k, G_k, G_k)]
    exactly two     sum_k E[F3(G_k, G_k, R_k) + F3(G_k, R_k, G_k) + F3(R_k, G_k, G_k)],
                    R_k = Kbar - Gbar_k (the other coordinates' means)
    all distinct    F3(Kbar, Kbar, Kbar) - sum_k [F3(Gb_k, Gb_k, Kbar) + F3(Gb_k, Kbar, Gb_k)
                    + F3(Kbar, Gb_k, Gb_k)] + 2 sum_k F3(Gb_k, Gb_k, Gb_k)  (inclusion-exclusion)

with Gbar_k = E G_k and Kbar = sum_k Gbar_k, and F2(K, K) = sum_k E[F2(G_k, G_k)] +
F2(Kbar, Kbar) - sum_k F2(Gb_k, Gb_k).  With random coordinate weights w (setting b)
each pattern carries its weight moment E[w1^3], E[w1^2 w2], E[w1 w2 w3] (and E[w1^2],
E[w1 w2] for F2).  Coordinates are grouped by their sigma_wk^2 (setting c has d
distinct ones, the others one), so the cost is one batched F3 call per group.

Exact engine: integers and Kronecker substitution
-------------------------------------------------
For rational variances, D = lcm of the denominators of sigma_0^2, sigma_w^2, share makes
Gi = D G a matrix of polynomials with non-negative *integer* coefficients, and
L1 = lcm(1, 3, ..., 2T+1) makes Gbi = L1 D Gbar an integer matrix
(:func:`integer_scales`, :func:`coordinate_covariance_int`, :func:`coordinate_mean_int`).
A polynomial P built from such entries by sums and products with positive integer
weights has coefficients c_m <= P(1) < 2^k for k = bitlength(P(1)), so P(2^k) -- the
very same arithmetic run on the Python integers Gi(2^k) -- holds c_m as its base-2^k
digits ("Kronecker substitution": one big-integer evaluation replaces all polynomial
arithmetic), and E_lam P = sum_{m even} c_m / (m+1) for lambda ~ U[-1, 1]
(:func:`uniform_mean_packed`).

Tiny example of the substitution: P(lam) = 3 + 2 lam^2 has P(1) = 5 < 2^3, and
P(8) = 131 = 0o203 reads off the digits (3, 0, 2), so E P = 3 + 2/3:

>>> uniform_mean_packed(131, 3)
Fraction(11, 3)

The reference routes that check both engines (exact Fraction polynomials, sympy) live in
:mod:`theory.reference`.
"""
from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache, reduce

import numpy as np

from .settings import SETTING_SPECS, get_setting

__all__ = [
    "gauss_legendre",
    "coordinate_covariance",
    "mixture_quadrature",
    "UNIT_WEIGHTS",
    "setting_weight_moments",
    "family_quadrature",
    "integer_scales",
    "odd_lcm",
    "coordinate_covariance_int",
    "coordinate_mean_int",
    "uniform_mean_packed",
]

#: weight moments of K = sum_k w_k G_k when every w_k = 1 (all settings but b).
UNIT_WEIGHTS = {"3": 1.0, "21": 1.0, "111": 1.0, "2": 1.0, "11": 1.0}


# --------------------------------------------------------------------------- float engine

@lru_cache(maxsize=64)
def gauss_legendre(T: int, lo: float = -1.0, hi: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """(nodes, probability weights) of the 3T+1-point Gauss-Legendre rule on [lo, hi].

    Exact (up to rounding) for E p(lambda), lambda ~ U[lo, hi], p of degree <= 6T+1.
    The arrays are cached and read-only.

    >>> x, w = gauss_legendre(1)                 # 4 nodes: E lam^2 = 1/3, E lam^6 = 1/7
    >>> round(float(w @ x**2), 15), round(float(w @ x**6), 15)
    (0.333333333333333, 0.142857142857143)
    """
    nodes, weights = np.polynomial.legendre.leggauss(3 * T + 1)
    lam = 0.5 * (hi - lo) * nodes + 0.5 * (hi + lo)        # map [-1, 1] -> [lo, hi]
    wts = 0.5 * weights                                    # probability weights
    lam.flags.writeable = False
    wts.flags.writeable = False
    return lam, wts


def coordinate_covariance(lam, T: int, sw2: float, s02: float, share: float) -> np.ndarray:
    """G(lam_n) for every node, shape (N, T, T), float64 (module doc).

    ``lam`` (N,) eigenvalues, ``sw2`` = sigma_w^2 of the coordinate, ``s02`` = sigma_0^2,
    ``share`` = sigma_v^2 / d added on the diagonal.

    >>> coordinate_covariance(np.array([0.5]), 2, 0.25, 1.0, 0.0)[0]   # Pi_1 = 1/2, Pi_2 = 3/8
    array([[0.5  , 0.25 ],
           [0.25 , 0.375]])
    """
    x = np.asarray(lam, dtype=np.float64)
    n = x.shape[0]
    Pi = np.empty((n, T + 1))
    Pi[:, 0] = s02
    x2 = x * x
    for t in range(1, T + 1):
        Pi[:, t] = Pi[:, t - 1] * x2 + sw2                 # Pi_t = lam^2 Pi_{t-1} + sigma_w^2
    pw = x[:, None] ** np.arange(T)[None, :]
    i, j = np.indices((T, T))
    # C order (node axis first in memory): the reductions downstream sum in that order
    G = np.ascontiguousarray(pw[:, np.abs(i - j)] * Pi[:, np.minimum(i, j) + 1])
    G[:, np.arange(T), np.arange(T)] += share
    return G


def mixture_quadrature(form, T: int, sw2, s02: float, share: float, lo: float = -1.0,
                       weights: dict | None = None, *, nodes=None, coordinate=None,
                       chunk: int | None = None):
    """(E F3(K, K, K), E F2(K, K), Kbar) over K = sum_k w_k G(lambda_k; sw2[k]), lambda_k iid U[lo, 1]
    (U[lo, hi] with ``nodes = gauss_legendre(T, lo, hi)``).

    ``form(X, Y, Z) -> (F3(X, Y, Z), F2(X, Y))``: multilinear in its arguments, which
    are (T, T) or node-batched (N, T, T) arrays (broadcasting), returning arrays with
    the batch axes first.  ``sw2``: the d per-coordinate sigma_w^2.  ``weights``: the
    moments of the coordinate weights (keys "3", "21", "111", "2", "11"; default
    :data:`UNIT_WEIGHTS`).  Combinatorics in the module doc; ``Kbar`` = E K (without the
    weights, which average to one).

    Other coordinate laws (theory.stationary): ``nodes`` = (lambda, probability weights)
    replaces the Gauss-Legendre rule of [lo, 1] (a radius below 1: :func:`family_quadrature`
    passes the rule of [lo, hi]), ``coordinate(lam, sw2) -> (N, T, T)``
    replaces :func:`coordinate_covariance` (``s02`` and ``share`` are then the caller's),
    and ``chunk`` evaluates the node-batched forms ``chunk`` nodes at a time (memory);
    with all three left out the result is the one above, bit for bit.
    """
    lam, wts = gauss_legendre(T, lo) if nodes is None else nodes
    e = UNIT_WEIGHTS if weights is None else weights
    sw2 = np.asarray(sw2, dtype=np.float64)

    def E(x):                                              # E over lambda of node-batched x
        return np.tensordot(wts, x, axes=(0, 0))

    def cov(v):
        if coordinate is None:
            return coordinate_covariance(lam, T, v, s02, share)
        return coordinate(lam, v)

    def node_terms(G, R):
        """E F3(G, G, G), E F2(G, G) and E of the three two-equal patterns with R."""
        if chunk is None:
            Fs, fs = form(G, G, G)
            return E(Fs), E(fs), E(form(G, G, R)[0] + form(G, R, G)[0] + form(R, G, G)[0])
        out = None
        for i in range(0, G.shape[0], chunk):
            g, w = G[i:i + chunk], wts[i:i + chunk]
            Fs, fs = form(g, g, g)
            two = form(g, g, R)[0] + form(g, R, g)[0] + form(R, g, g)[0]
            part = [np.tensordot(w, x, axes=(0, 0)) for x in (Fs, fs, two)]
            out = part if out is None else [a + b for a, b in zip(out, part)]
        return tuple(out)

    distinct = sorted(set(sw2.tolist()))
    Gs = {v: cov(v) for v in distinct}
    Gbar = {v: E(Gs[v]) for v in distinct}
    counts = {v: int(np.sum(sw2 == v)) for v in distinct}
    Kbar = sum(counts[v] * Gbar[v] for v in distinct)

    F3_distinct, F2_distinct = form(Kbar, Kbar, Kbar)
    F3_same = F3_two = F2_same = 0.0
    for v in distinct:
        G, Gb, cnt = Gs[v], Gbar[v], counts[v]
        R = Kbar - Gb
        same3, same2, two = node_terms(G, R)
        F3_same = F3_same + cnt * same3
        F2_same = F2_same + cnt * same2
        F3_two = F3_two + cnt * two
        F_ggk, f_gg = form(Gb, Gb, Kbar)
        F3_distinct = F3_distinct - cnt * (F_ggk + form(Gb, Kbar, Gb)[0] + form(Kbar, Gb, Gb)[0]
                                           - 2.0 * form(Gb, Gb, Gb)[0])
        F2_distinct = F2_distinct - cnt * f_gg
    F3 = e["3"] * F3_same + e["21"] * F3_two + e["111"] * F3_distinct
    F2 = e["2"] * F2_same + e["11"] * F2_distinct
    return F3, F2, Kbar


def setting_weight_moments(setting: str, d: int) -> dict:
    """Moments of the coordinate weights w_k in K = sum_k w_k G(lambda_k) of a setting.

    Settings a, c, asym: w = 1.  Setting b: A = Q^T diag(lambda) Q with Q Haar and
    Sigma_0, Sigma_w isotropic, so Pi_t = Q^T diag(pi_t(lambda)) Q and
    c^T A^k Pi_t c = sum_k u_k^2 lambda_k^k pi_t(lambda_k) with u = Q c uniform on the
    sphere of radius |c| = sqrt(d): w = u^2 = d * Dirichlet(1/2, ..., 1/2), independent of
    lambda, and sum_k w_k = d, so the noise sigma_v^2 I = sum_k w_k (sigma_v^2 / d) I too.
    Returned keys: "3" E[w1^3], "21" E[w1^2 w2], "111" E[w1 w2 w3], "2" E[w1^2], "11" E[w1 w2].

    >>> setting_weight_moments("b", 2)["2"]        # w1 = 2 u1^2, u1^2 ~ Beta(1/2, 1/2)
    1.5
    """
    if not get_setting(setting).dirichlet_weights:
        return dict(UNIT_WEIGHTS)
    a, A = 0.5, 0.5 * d
    r3 = A * (A + 1) * (A + 2)
    r2 = A * (A + 1)
    return {"3": d ** 3 * a * (a + 1) * (a + 2) / r3, "21": d ** 3 * a * a * (a + 1) / r3,
            "111": d ** 3 * a ** 3 / r3, "2": d ** 2 * a * (a + 1) / r2, "11": d ** 2 * a * a / r2}


#: settings whose law is a coordinate mixture (docs/math.md section 4.7).
QUADRATURE_SETTINGS = tuple(name for name, spec in SETTING_SPECS.items() if spec.quadrature)


def family_quadrature(form, family):
    """:func:`mixture_quadrature` with a family's law: its per-coordinate process noise
    sigma_w^2 omega_k, Sigma_0 = sigma_0^2 I, sigma_v^2 shared as sigma_v^2 / d per
    coordinate, lambda ~ U[lo, hi] (the family's radius) and the weight moments of its setting.
    ``family``: an LDSFamily of a setting in :data:`QUADRATURE_SETTINGS`."""
    if getattr(family, "setting", None) not in QUADRATURE_SETTINGS:
        raise ValueError(f"family must be an LDSFamily of a setting in {QUADRATURE_SETTINGS}, "
                         f"got {family!r}")
    lo, hi = family.eigenvalue_range          # lambda_i ~ U[lo, hi], the setting's law
    return mixture_quadrature(form, family.T, np.diag(family.process_noise_cov()),
                              family.sigma_0 ** 2, family.sigma_v ** 2 / family.d, lo,
                              setting_weight_moments(family.setting, family.d),
                              nodes=None if hi == 1.0 else gauss_legendre(family.T, lo, hi))


# --------------------------------------------------------------------------- exact engine

def _lcm(values) -> int:
    return reduce(lambda x, y: x * y // math.gcd(x, y), values, 1)


@lru_cache(maxsize=64)
def odd_lcm(n: int) -> int:
    """lcm(1, 3, 5, ..., n) (n odd or even; only odd numbers taken).

    >>> odd_lcm(9)
    315
    """
    return _lcm(range(1, n + 1, 2))


def integer_scales(sw2: Fraction, share: Fraction, s02: Fraction) -> tuple[int, int, int, int]:
    """(D, D sigma_0^2, D sigma_w^2, D share) with D the lcm of the three denominators.

    >>> integer_scales(Fraction(1, 100), Fraction(1, 500), Fraction(1))
    (500, 500, 5, 1)
    """
    D = _lcm([s02.denominator, sw2.denominator, share.denominator])
    return D, int(s02 * D), int(sw2 * D), int(share * D)


def coordinate_covariance_int(T: int, S0: int, SW: int, SV: int, lam: int) -> np.ndarray:
    """Gi(lam) = D G(lam) as a (T, T) object array of Python ints, at an integer lam.

    ``S0, SW, SV`` = D sigma_0^2, D sigma_w^2, D share (:func:`integer_scales`).

    >>> coordinate_covariance_int(2, 4, 1, 0, 1).tolist()   # lam = 1: Pi_1 = 5, Pi_2 = 6
    [[5, 5], [5, 6]]
    """
    lam2 = lam * lam
    Pi = [S0]
    for _ in range(T):
        Pi.append(Pi[-1] * lam2 + SW)                 # Pi_t = lam^2 Pi_{t-1} + sigma_w^2
    pw = [1]
    for _ in range(T):
        pw.append(pw[-1] * lam)
    G = np.empty((T, T), dtype=object)
    for i in range(T):
        G[i, i] = Pi[i + 1] + SV
        p = Pi[i + 1]
        for g in range(1, T - i):
            G[i, i + g] = G[i + g, i] = p * pw[g]
    return G


def coordinate_mean_int(T: int, S0: int, SW: int, SV: int, L1: int) -> np.ndarray:
    """Gbi = L1 D E_lam G (lambda ~ U[-1, 1]) as a (T, T) object array of Python ints.

    ``L1`` must be a multiple of every odd number up to 2T+1 (e.g. ``odd_lcm(2T+1)``).

    >>> coordinate_mean_int(2, 3, 0, 0, 15).tolist()        # 15 * 3 E[[lam^2, lam^3], [lam^3, lam^4]]
    [[15, 0], [0, 9]]
    """
    # E lam^(g + 2t) = 1/(g+2t+1) for even g (0 for odd g); sums accumulated over t.
    Gb = np.empty((T, T), dtype=object)
    for i in range(T):
        t = i + 1
        for g in range(0, T - i):
            if g % 2:
                val = 0
            else:
                val = S0 * (L1 // (g + 2 * t + 1)) + SW * sum(L1 // (g + 2 * mm + 1) for mm in range(t))
                if g == 0:
                    val += SV * L1
            Gb[i, i + g] = Gb[i + g, i] = val
    return Gb


def uniform_mean_packed(V: int, k: int) -> Fraction:
    """E_lam P (lambda ~ U[-1, 1]) for P(2^k) = V, P with base-2^k digits c_m >= 0."""
    if V == 0:
        return Fraction(0)
    nbits = V.bit_length()
    ndig = -(-nbits // k)
    mask = (1 << k) - 1
    Lc = odd_lcm(ndig + 1)
    total = 0
    for m in range(0, ndig, 2):
        c = (V >> (k * m)) & mask
        if c:
            total += c * (Lc // (m + 1))
    return Fraction(total, Lc)
