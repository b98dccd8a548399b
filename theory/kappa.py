r"""kappa of Theorem 4.1 (paper eq. 15): exact, quadrature, symbolic and Monte Carlo.

Definition (MATH.md section 4; 1-based times, window s = 1, n = T - 2)::

    kappa = (T-2) E[y_{T-1} y_T S] / E[y_{T-1}^2 S^2],     S = sum_{i=1..T-2} y_i y_{i+1},

the expectation taken over the random system A of the family *and* the Gaussian noise.
In the code arrays are 0-based (position i holds time i+1), so ``a = T-2`` is the
position of y_{T-1}, ``b = T-1`` that of y_T, and S = sum_{i=0..T-3} y_i y_{i+1}.

Step 1 -- Gaussian moments as quadratic forms (one system, y ~ N(0, K))
-----------------------------------------------------------------------
Let B' be the adjacency matrix of the path 0 - 1 - ... - (T-2) (B'[i, i+1] = B'[i+1, i] = 1
for i = 0..T-3, zero elsewhere), B = B'/2 and E = e_a e_a^T, so S = y^T B y and
y_a^2 = y^T E y.  Isserlis gives the numerator::

    E[y_a y_b S] = M2(K, K),
    M2(X, Y) = X_ab sum_i Y_{i,i+1} + sum_i X_{a,i} Y_{b,i+1} + sum_i X_{a,i+1} Y_{b,i},

and Magnus' formula for three quadratic forms, E[Q1 Q2 Q3] = t1 t2 t3 + 2 (t1 t23 + t2 t13
+ t3 t12) + 8 t123 (t_i = tr K A_i, t_ij = tr K A_i K A_j, t123 = tr K A1 K A2 K A3), with
A1 = E, A2 = A3 = B, gives the denominator E[y_a^2 S^2] = M3(K, K, K) for the multilinear
(not symmetrised) form::

    4 M3(X, Y, Z) = X_aa t'(Y) t'(Z)
                    + 2 [ X_aa tr(Y B' Z B') + t'(Y) tr(X E Z B') + t'(Z) tr(X E Y B') ]
                    + 8 tr(X E Y B' Z B'),          t'(Y) = tr(Y B').

(working with B' and 4 M3 keeps integers integral).  E has rank one and B' is
sparse, so every term costs O(T) or O(T^2), never a dense T^3 product::

    tr(X E Z B')      = Z[a, :] . (B' X[:, a])
    tr(X E Y B' Z B') = (B' Y[a, :])^T  Z  (B' X[:, a])
    tr(Y B' Z B')     = sum_ij (Y B')_ij (Z B')_ji            (only the path window matters)

Worked example (T = 3, so a = 1, b = 2, S = y_0 y_1, B' = [[0,1,0],[1,0,0],[0,0,0]]):
M2(K, K) = K_12 K_01 + K_10 K_21 + K_11 K_20 = E[y_1 y_2 y_0 y_1] (3 Wick pairings), and
for K = I: t'(K) = 0, tr(K B' K B') = 2, tr(K E K B') = 0, tr(K E K B' K B') = 1, so
4 M3 = 2 * 2 + 8 * 1 = 12, M3 = 3 = E[y_1^2 (y_0 y_1)^2] = E[y_1^4] E[y_0^2].

Step 2 -- the expectation over A in setting (a)
-----------------------------------------------
With A = diag(lambda), lambda_k iid U[-1, 1], c = 1, Sigma_0 = sigma_0^2 I and
Sigma_w = sigma_w^2 I, K = sum_{k=1..d} G(lambda_k) with (see
:func:`theory.moments.coordinate_covariance_poly`)::

    G(lam)[i, j] = lam^|i-j| Pi_{min(i,j)+1}(lam) + (sigma_v^2 / d) [i = j],
    Pi_t(lam)    = sigma_0^2 lam^(2t) + sigma_w^2 (1 + lam^2 + ... + lam^(2t-2)),

a polynomial of degree i + j + 2 <= 2T with non-negative coefficients.  The d coordinates
are iid, so by multilinearity (Gbar = E_lam G)::

    E_A M2(K, K)    = d E M2(G, G) + d(d-1) M2(Gbar, Gbar)
    E_A M3(K, K, K) = d E M3(G, G, G)
                      + d(d-1) E[M3(G, G, Gbar) + M3(G, Gbar, G) + M3(Gbar, G, G)]
                      + d(d-1)(d-2) M3(Gbar, Gbar, Gbar),

and E_lam of a polynomial sum_m c_m lam^m is sum_{m even} c_m / (m+1).

Step 3a -- exact rational engine (:func:`kappa_exact_a`), Kronecker substitution
-------------------------------------------------------------------------------
Scale to integers: D = lcm of the denominators of sigma_0^2, sigma_w^2, sigma_v^2/d, so
Gi = D G has non-negative *integer* polynomial entries, and L1 = lcm(1, 3, ..., 2T+1)
clears the denominators of Gbar, so Gbi = L1 D Gbar is an integer matrix.  The
integrands::

    Pn(lam) = M2(Gi, Gi)                                                     (deg <= 4T)
    Pd(lam) = L1 4M3(Gi, Gi, Gi) + (d-1) [4M3(Gi,Gi,Gbi) + 4M3(Gi,Gbi,Gi) + 4M3(Gbi,Gi,Gi)]
                                                                             (deg <= 6T)

are polynomials with non-negative integer coefficients c_m (every term of M2 and 4 M3 is
a product of entries with a positive integer weight).  So c_m <= P(1) < 2^k for
k = bitlength(P(1)), and P(2^k) -- computed by running the very same M2 / M3 code on the
Python integers Gi(2^k) -- holds c_m as its base-2^k digits ("Kronecker substitution":
one big-integer evaluation replaces all polynomial arithmetic).  Then::

    E_A M2  = [d L1^2 E Pn + d(d-1) M2(Gbi, Gbi)] / (D^2 L1^2)
    E_A M3  = [d L1^2 E Pd + d(d-1)(d-2) 4M3(Gbi, Gbi, Gbi)] / (4 D^3 L1^3)
    kappa   = (T-2) E_A M2 / E_A M3                                  (an exact Fraction).

Parity: every monomial of the integrands carries the parity of its index sum (each G_ij
has the parity of i + j; Gbar vanishes where i + j is odd), and a + a + 2(i + j) + 2 and
a + b + 2i + 1 are even, so Pn and Pd are *even* polynomials: the quadrature below
suffers no odd-part cancellation and the odd base-2^k digits are zero (tests check the
evenness).

Tiny example of the substitution: P(lam) = 3 + 2 lam^2 has P(1) = 5 < 2^3, and P(8) = 131 =
0o203 reads off the digits (3, 0, 2), so E P = 3 + 2/3.

Step 3b -- float64 quadrature (:func:`kappa_quadrature_a`)
---------------------------------------------------------
The same M2 / M3 code runs vectorised over the 3T+1 Gauss-Legendre nodes of [-1, 1]
(weights halved for the uniform law), which integrates the degree <= 6T integrands
exactly; Gbar is the same quadrature of G.

Monte Carlo (any setting)
-------------------------
:func:`kappa_mc_moments` draws systems, computes each one's exact covariance K(A_j) and the
exact conditional moments N_j = M2(K_j, K_j), D_j = M3(K_j, K_j, K_j) (only the average
over A is random), then kappa = (T-2) mean(N) / mean(D) with a delta-method standard
error (T-2) sd(N_j - R D_j) / (sqrt(m) mean(D)), R = mean(N)/mean(D), which accounts for
the N-D covariance.  :func:`kappa_mc_trajectories` is the independent raw-trajectory
estimator of the same ratio.  :func:`kappa_symbolic` re-derives kappa for small T in
sympy by a third route (explicit Wick sums over K = sum_k G(lam_k), integrated over each
lam_k), a rational function of the symbols sigma_w2, sigma_v2 (Sigma_0 = I).

Reference (setting (a), d = 5, T = 30, sigma_w = sigma_v = 0.1, Sigma_0 = I):
kappa = 0.2052454015138651...
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from fractions import Fraction
from functools import lru_cache, reduce

import numpy as np
import sympy as sp

from .validation import check_nonneg_real, check_positive_int, check_rational
from .moments import pairings
from .systems import LDSFamily, covariance

__all__ = [
    "KappaResult",
    "METHODS",
    "kappa",
    "kappa_exact_a",
    "kappa_moments_exact_a",
    "kappa_quadrature_a",
    "kappa_moments_quadrature_a",
    "kappa_symbolic",
    "kappa_mc_moments",
    "kappa_mc_trajectories",
    "moment_forms",
]

#: method names accepted by :func:`kappa` (plus "auto", and the aliases in _ALIASES).
METHODS = ("exact-rational", "gauss-legendre", "mc-moments", "mc-trajectories")
_ALIASES = {"exact": "exact-rational", "quadrature": "gauss-legendre"}


@dataclass(frozen=True)
class KappaResult:
    """One kappa estimate.

    ``kappa`` (float), ``exact`` (Fraction or None), ``stderr`` (0.0 for exact and
    quadrature), ``method``, ``numerator`` = E[y_{T-1} y_T S] and ``denominator`` =
    E[y_{T-1}^2 S^2] (estimates; kappa = (T-2) numerator / denominator), and ``details``
    (plain ints / floats / strs only: T, d, m, seed, ...).
    """

    kappa: float
    exact: Fraction | None
    stderr: float
    method: str
    numerator: float
    denominator: float
    details: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        """JSON-ready dict; ``exact`` as the string "p/q" (or None)."""
        return {
            "kappa": float(self.kappa),
            "exact": None if self.exact is None else f"{self.exact.numerator}/{self.exact.denominator}",
            "stderr": float(self.stderr),
            "method": self.method,
            "numerator": float(self.numerator),
            "denominator": float(self.denominator),
            "details": dict(self.details),
        }


# --------------------------------------------------------------------------- generic forms
# Every function below works on arrays of shape (..., T, T) of float64 *or* of Python
# objects (ints, Fractions, sympy expressions): only slicing, +, * and .sum are used.

@dataclass(frozen=True)
class _Layout:
    """Positions: a (query y_{T-1}), b (target y_T), and the path lo..hi of S's pairs.

    S = sum_{i=lo..hi-1} y_i y_{i+1}.  The paper's layout is a = T-2, b = T-1, lo = 0,
    hi = T-2; other layouts exist only for negative controls.
    """

    a: int
    b: int
    lo: int
    hi: int

    @staticmethod
    def paper(T: int) -> "_Layout":
        return _Layout(a=T - 2, b=T - 1, lo=0, hi=T - 2)


def _sum_last(x):
    return x.sum(axis=-1)


def _path_vec(v, lo, hi):
    """B' v restricted to the window lo..hi (returns the window part, length hi-lo+1)."""
    w = v[..., lo:hi + 1]
    out = np.zeros_like(w)
    out[..., 1:] = out[..., 1:] + w[..., :-1]
    out[..., :-1] = out[..., :-1] + w[..., 1:]
    return out


def _path_right(Y):
    """Y_w B'_w for a window block Y_w (..., W, W): column j gets Y[:, j-1] + Y[:, j+1]."""
    out = np.zeros_like(Y)
    out[..., :, 1:] = out[..., :, 1:] + Y[..., :, :-1]
    out[..., :, :-1] = out[..., :, :-1] + Y[..., :, 1:]
    return out


def _trB(Y, L: _Layout):
    """t'(Y) = tr(Y B') = sum_i (Y[i, i+1] + Y[i+1, i])."""
    i = np.arange(L.lo, L.hi)
    return _sum_last(Y[..., i, i + 1]) + _sum_last(Y[..., i + 1, i])


def _M2(X, Y, L: _Layout):
    """Bilinear M2 with M2(K, K) = E[y_a y_b S] for y ~ N(0, K) (module doc)."""
    a, b, lo, hi = L.a, L.b, L.lo, L.hi
    i = np.arange(lo, hi)
    return (X[..., a, b] * _sum_last(Y[..., i, i + 1])
            + _sum_last(X[..., a, lo:hi] * Y[..., b, lo + 1:hi + 1])
            + _sum_last(X[..., a, lo + 1:hi + 1] * Y[..., b, lo:hi]))


def _M3x4(X, Y, Z, L: _Layout):
    """4 M3(X, Y, Z), trilinear, with M3(K, K, K) = E[y_a^2 S^2] (module doc, Magnus)."""
    a, lo, hi = L.a, L.lo, L.hi
    w = slice(lo, hi + 1)
    Xaa = X[..., a, a]
    tY = _trB(Y, L)
    tZ = _trB(Z, L)
    Yw = Y[..., w, w]
    Zw = Z[..., w, w]
    YB = _path_right(Yw)
    ZB = _path_right(Zw)
    trYBZB = _sum_last(_sum_last(YB * np.swapaxes(ZB, -1, -2)))
    v = _path_vec(X[..., :, a], lo, hi)               # B' X[:, a]   (window part)
    u = _path_vec(Y[..., a, :], lo, hi)               # B' Y[a, :]
    trXEZB = _sum_last(Z[..., a, w] * v)
    trXEYB = _sum_last(Y[..., a, w] * v)
    Zv = _sum_last(Zw * v[..., None, :])
    t123 = _sum_last(u * Zv)
    return Xaa * tY * tZ + 2 * (Xaa * trYBZB + tY * trXEZB + tZ * trXEYB) + 8 * t123


def moment_forms(K, T: int | None = None):
    """(E[y_{T-1} y_T S], E[y_{T-1}^2 S^2]) for y ~ N(0, K), exactly, vectorised.

    ``K``: (..., T, T) float covariances (or an object array of exact numbers).
    O(T^2) per matrix (no dense T^3 products).

    >>> K = np.eye(3)            # T = 3: E[y_1 y_2 y_0 y_1] = 0, E[y_1^4 y_0^2] = 3
    >>> moment_forms(K)
    (0.0, 3.0)
    """
    K = np.asarray(K)
    if K.ndim < 2 or K.shape[-1] != K.shape[-2]:
        raise ValueError(f"K must be (..., T, T), got shape {K.shape}")
    T = K.shape[-1] if T is None else T
    if T < 3 or K.shape[-1] != T:
        raise ValueError(f"K must be (..., T, T) with T >= 3, got shape {K.shape}")
    L = _Layout.paper(T)
    num = _M2(K, K, L)
    den = _M3x4(K, K, K, L) / 4
    if K.dtype != object:
        return (float(num), float(den)) if np.ndim(num) == 0 else (num, den)
    return num, den


# --------------------------------------------------------------------------- validation

def _check_T(T):
    return check_positive_int("T", T, minimum=3)


def _check_inputs(T, d, sigma_w2, sigma_v2, sigma_02, *, exact: bool):
    """Validated (T, d, sw2, sv2, s02): Fractions when ``exact``, else floats."""
    T = _check_T(T)
    d = check_positive_int("d", d)
    check = check_rational if exact else check_nonneg_real
    sw2 = check("sigma_w2", sigma_w2)
    sv2 = check("sigma_v2", sigma_v2)
    s02 = check("sigma_02", sigma_02)
    if sw2 == 0 and sv2 == 0 and s02 == 0:
        raise ValueError("sigma_w2, sigma_v2, sigma_02 must not all be zero (y = 0, kappa undefined)")
    return T, d, sw2, sv2, s02


def _check_rational_inputs(T, d, sigma_w2, sigma_v2, sigma_02):
    return _check_inputs(T, d, sigma_w2, sigma_v2, sigma_02, exact=True)


def _check_float_inputs(T, d, sigma_w2, sigma_v2, sigma_02):
    return _check_inputs(T, d, sigma_w2, sigma_v2, sigma_02, exact=False)


# --------------------------------------------------------------------------- exact (a)

def _lcm(values) -> int:
    return reduce(lambda x, y: x * y // math.gcd(x, y), values, 1)


@lru_cache(maxsize=64)
def _odd_lcm(n: int) -> int:
    """lcm(1, 3, 5, ..., n) (n odd or even; only odd numbers taken)."""
    return _lcm(range(1, n + 1, 2))


def _packed_G(T: int, S0: int, SW: int, SV: int, lam: int) -> np.ndarray:
    """Gi(lam) = D G(lam) as a (T, T) object array of Python ints, at an integer lam."""
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


def _Gbar_scaled(T: int, S0: int, SW: int, SV: int, L1: int) -> np.ndarray:
    """Gbi = L1 * D * E_lam G as a (T, T) object array of Python ints."""
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


def _uniform_mean_packed(V: int, k: int) -> Fraction:
    """E_lam P for P(2^k) = V with base-2^k digits c_m = coefficients of P (all >= 0)."""
    if V == 0:
        return Fraction(0)
    nbits = V.bit_length()
    ndig = -(-nbits // k)
    mask = (1 << k) - 1
    Lc = _odd_lcm(ndig + 1)
    total = 0
    for m in range(0, ndig, 2):
        c = (V >> (k * m)) & mask
        if c:
            total += c * (Lc // (m + 1))
    return Fraction(total, Lc)


def _exact_parts(T: int, d: int, sw2: Fraction, sv2: Fraction, s02: Fraction, L: _Layout):
    sv2d = sv2 / d
    D = _lcm([s02.denominator, sw2.denominator, sv2d.denominator])
    S0, SW, SV = int(s02 * D), int(sw2 * D), int(sv2d * D)
    L1 = _odd_lcm(2 * T + 1)
    Gbi = _Gbar_scaled(T, S0, SW, SV, L1)

    def integrands(G):
        pn = _M2(G, G, L)
        pd = L1 * _M3x4(G, G, G, L)
        if d > 1:
            mixed = _M3x4(G, G, Gbi, L) + _M3x4(G, Gbi, G, L) + _M3x4(Gbi, G, G, L)
            pd += (d - 1) * mixed
        return pn, pd

    # exact digit bounds: the same integrands at lam = 1 (all coefficients >= 0)
    bn, bd = integrands(_packed_G(T, S0, SW, SV, 1))
    kn, kd = max(1, int(bn).bit_length()), max(1, int(bd).bit_length())
    if kn == kd:
        vn, vd = integrands(_packed_G(T, S0, SW, SV, 1 << kn))
    else:                                          # pragma: no cover - rare, still exact
        vn, _ = integrands(_packed_G(T, S0, SW, SV, 1 << kn))
        _, vd = integrands(_packed_G(T, S0, SW, SV, 1 << kd))
    En = _uniform_mean_packed(int(vn), kn)
    Ed = _uniform_mean_packed(int(vd), kd)
    num = (d * L1 * L1 * En + d * (d - 1) * int(_M2(Gbi, Gbi, L))) / (D * D * L1 * L1)
    den = (d * L1 * L1 * Ed + d * (d - 1) * (d - 2) * int(_M3x4(Gbi, Gbi, Gbi, L))) / (4 * D ** 3 * L1 ** 3)
    return Fraction(num), Fraction(den)


def kappa_moments_exact_a(T, d, sigma_w2, sigma_v2, sigma_02=1) -> tuple[Fraction, Fraction]:
    """Exact (E[y_{T-1} y_T S], E[y_{T-1}^2 S^2]) in setting (a), as Fractions.

    Variances are rationals (ints, Fractions, decimal strings, floats read by repr:
    0.01 -> 1/100).  Kronecker-substitution engine (module doc, step 3a).

    >>> kappa_moments_exact_a(3, 1, 0, 1, 0)      # white noise: E[y1 y2 y0 y1] = 0, E[y1^4 y0^2] = 3
    (Fraction(0, 1), Fraction(3, 1))
    """
    T, d, sw2, sv2, s02 = _check_rational_inputs(T, d, sigma_w2, sigma_v2, sigma_02)
    return _exact_parts(T, d, sw2, sv2, s02, _Layout.paper(T))


def kappa_exact_a(T, d, sigma_w2, sigma_v2, sigma_02=1) -> Fraction:
    """Exact kappa in setting (a) as a Fraction (variances as rationals).

    >>> float(kappa_exact_a(30, 5, "1/100", "1/100"))   # the paper's defaults
    0.20524540151386514
    """
    T, d, sw2, sv2, s02 = _check_rational_inputs(T, d, sigma_w2, sigma_v2, sigma_02)
    num, den = _exact_parts(T, d, sw2, sv2, s02, _Layout.paper(T))
    return (T - 2) * num / den


# --------------------------------------------------------------------------- quadrature (a)

@lru_cache(maxsize=64)
def _gauss_legendre(n: int):
    x, w = np.polynomial.legendre.leggauss(n)
    return x, w / 2.0


def _float_G(x: np.ndarray, T: int, sw2: float, sv2d: float, s02: float) -> np.ndarray:
    """G(x_n) for every node, shape (n, T, T), float64."""
    n = x.shape[0]
    Pi = np.empty((n, T + 1))
    Pi[:, 0] = s02
    x2 = x * x
    for t in range(1, T + 1):
        Pi[:, t] = Pi[:, t - 1] * x2 + sw2
    pw = x[:, None] ** np.arange(T)[None, :]
    i, j = np.indices((T, T))
    G = pw[:, np.abs(i - j)] * Pi[:, np.minimum(i, j) + 1]
    G[:, np.arange(T), np.arange(T)] += sv2d
    return G


def _quad_parts(T: int, d: int, sw2: float, sv2: float, s02: float, L: _Layout):
    x, w = _gauss_legendre(3 * T + 1)
    G = _float_G(x, T, sw2, sv2 / d, s02)
    Gb = np.tensordot(w, G, axes=1)
    num = d * (w @ _M2(G, G, L)) + d * (d - 1) * _M2(Gb, Gb, L)
    den = d * (w @ _M3x4(G, G, G, L))
    if d > 1:
        Gbb = np.broadcast_to(Gb, G.shape)
        mixed = _M3x4(G, G, Gbb, L) + _M3x4(G, Gbb, G, L) + _M3x4(Gbb, G, G, L)
        den += d * (d - 1) * (w @ mixed) + d * (d - 1) * (d - 2) * _M3x4(Gb, Gb, Gb, L)
    return float(num), float(den) / 4.0


def kappa_moments_quadrature_a(T, d, sigma_w2, sigma_v2, sigma_02=1.0) -> tuple[float, float]:
    """(E[y_{T-1} y_T S], E[y_{T-1}^2 S^2]) in setting (a), float64, by exact quadrature."""
    T, d, sw2, sv2, s02 = _check_float_inputs(T, d, sigma_w2, sigma_v2, sigma_02)
    return _quad_parts(T, d, sw2, sv2, s02, _Layout.paper(T))


def kappa_quadrature_a(T, d, sigma_w2, sigma_v2, sigma_02=1.0) -> float:
    """kappa in setting (a) in float64: Gauss-Legendre with 3T+1 nodes (exact in exact
    arithmetic for the degree <= 6T integrands), vectorised over nodes.

    >>> abs(kappa_quadrature_a(30, 5, 0.01, 0.01) / 0.2052454015138651 - 1) < 1e-12
    True
    """
    T, d, sw2, sv2, s02 = _check_float_inputs(T, d, sigma_w2, sigma_v2, sigma_02)
    num, den = _quad_parts(T, d, sw2, sv2, s02, _Layout.paper(T))
    return (T - 2) * num / den


# --------------------------------------------------------------------------- symbolic

def kappa_symbolic(T, d=1) -> sp.Expr:
    """kappa in setting (a) as a rational function of the symbols ``sigma_w2``,
    ``sigma_v2`` (Sigma_0 = I), for small T (3..6) and d (1..3).

    An independent route: K = sum_{k=1..d} G(lam_k) with symbols lam_k, the Wick sums
    E[y_a y_b y_i y_{i+1}] and E[y_a y_a y_i y_{i+1} y_j y_{j+1}] written out pairing by
    pairing (no M2/M3 forms, no coordinate expansion), each lam_k integrated over
    U[-1, 1] monomial by monomial; returns ``sp.cancel((T-2) N / D)``.

    >>> w, v = sp.symbols("sigma_w2 sigma_v2", positive=True)
    >>> kappa_symbolic(3).subs({w: 0, v: 0})     # y_t = lam^t x_0: (1/3) / (15/11)
    11/45
    """
    T = _check_T(T)
    if T > 6:
        raise ValueError(f"T must be <= 6 for the symbolic route (cost grows fast), got {T}")
    d = check_positive_int("d", d)
    if d > 3:
        raise ValueError(f"d must be <= 3 for the symbolic route, got {d}")
    sw2, sv2 = sp.symbols("sigma_w2 sigma_v2", positive=True)
    lams = sp.symbols(f"lam1:{d + 1}")
    dom = sp.QQ[sw2, sv2]

    def coord(lam):
        Pi = [sp.Integer(1)]
        for _ in range(T):
            Pi.append(sp.expand(lam ** 2 * Pi[-1] + sw2))
        return Pi

    Pis = [coord(l_) for l_ in lams]
    K = {}
    for i in range(T):
        for j in range(i, T):
            e = sum(lams[k] ** (j - i) * Pis[k][i + 1] for k in range(d))
            if i == j:
                e += sv2
            K[i, j] = K[j, i] = sp.Poly(e, *lams, domain=dom)

    def wick(idx):
        total = sp.Poly(0, *lams, domain=dom)
        for pairing in pairings(len(idx)).tolist():
            term = sp.Poly(1, *lams, domain=dom)
            for p, q in pairing:
                term = term * K[idx[p], idx[q]]
            total = total + term
        return total

    def mean(poly):
        acc = sp.Integer(0)
        for monom, coeff in poly.terms():
            if any(e % 2 for e in monom):
                continue
            c = dom.to_sympy(coeff) if not isinstance(coeff, sp.Expr) else coeff
            for e in monom:
                c = c / (e + 1)
            acc += c
        return sp.expand(acc)

    a, b = T - 2, T - 1
    pairs = [(i, i + 1) for i in range(T - 2)]
    num = mean(reduce(lambda x, y: x + y, [wick((a, b, i, j)) for i, j in pairs]))
    den = mean(reduce(lambda x, y: x + y,
                      [wick((a, a, i, j, k, l)) for i, j in pairs for k, l in pairs]))
    return sp.cancel((T - 2) * num / den)


# --------------------------------------------------------------------------- Monte Carlo

def _ratio(Nv: np.ndarray, Dv: np.ndarray, T: int):
    """kappa = (T-2) mean N / mean D, delta-method stderr (with the N-D covariance)."""
    m = Nv.shape[0]
    Nm, Dm = float(Nv.mean()), float(Dv.mean())
    R = Nm / Dm
    if m > 1:
        resid = Nv - R * Dv
        se = (T - 2) * float(resid.std(ddof=1)) / (math.sqrt(m) * Dm)
        se_n = float(Nv.std(ddof=1)) / math.sqrt(m)
        se_d = float(Dv.std(ddof=1)) / math.sqrt(m)
    else:
        se = se_n = se_d = math.inf
    return (T - 2) * R, se, Nm, Dm, se_n, se_d


def _family_details(family: LDSFamily) -> dict:
    return {"setting": family.setting, "T": int(family.T), "d": int(family.d),
            "sigma_w": float(family.sigma_w), "sigma_v": float(family.sigma_v),
            "sigma_0": float(family.sigma_0)}


def _check_family(family):
    if not isinstance(family, LDSFamily):
        raise ValueError(f"family must be an LDSFamily, got {type(family).__name__}")
    return family


def _check_rng(rng):
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    return rng


def _mc_result(family: LDSFamily, m: int, chunk: int, draw, method: str) -> KappaResult:
    """Ratio estimate from ``draw(c) -> (N_c, D_c)`` called in chunks of <= chunk, m in all."""
    Nv = np.empty(m)
    Dv = np.empty(m)
    done = 0
    while done < m:
        c = min(chunk, m - done)
        Nv[done:done + c], Dv[done:done + c] = draw(c)
        done += c
    k, se, Nm, Dm, se_n, se_d = _ratio(Nv, Dv, family.T)
    det = _family_details(family) | {"m": m, "chunk": chunk, "numerator_stderr": se_n,
                                     "denominator_stderr": se_d}
    return KappaResult(kappa=k, exact=None, stderr=se, method=method,
                       numerator=Nm, denominator=Dm, details=det)


def kappa_mc_moments(family: LDSFamily, m: int, rng: np.random.Generator, *,
                     chunk: int = 4096) -> KappaResult:
    """Monte Carlo over systems only: exact per-system Gaussian moments, any setting.

    Draws ``m`` systems in chunks of ``chunk``, computes K(A_j) exactly and
    N_j = E[y_{T-1} y_T S | A_j], D_j = E[y_{T-1}^2 S^2 | A_j] in closed form (O(T^2)
    each), returns (T-2) mean(N)/mean(D) with a delta-method stderr.
    """
    family = _check_family(family)
    m = check_positive_int("m", m)
    chunk = check_positive_int("chunk", chunk)
    rng = _check_rng(rng)
    T = family.T
    L = _Layout.paper(T)

    def draw(c):
        K = covariance(family.sample_systems(rng, c), T)
        return _M2(K, K, L), _M3x4(K, K, K, L) / 4.0

    return _mc_result(family, m, chunk, draw, "mc-moments")


def kappa_mc_trajectories(family: LDSFamily, m: int, rng: np.random.Generator,
                          chunk: int = 100_000) -> KappaResult:
    """Monte Carlo from raw simulated trajectories (systems and noise both sampled).

    Ratio of the sample means of f = y_{T-1} y_T S and g = y_{T-1}^2 S^2 over ``m``
    trajectories (one per fresh system), times T-2, with a delta-method stderr.
    """
    family = _check_family(family)
    m = check_positive_int("m", m)
    chunk = check_positive_int("chunk", chunk)
    rng = _check_rng(rng)
    T = family.T

    def draw(c):
        _, y = family.sample(rng, c)
        S = np.einsum("mi,mi->m", y[:, :T - 2], y[:, 1:T - 1])
        ya = y[:, T - 2]
        return ya * y[:, T - 1] * S, (ya * S) ** 2

    return _mc_result(family, m, chunk, draw, "mc-trajectories")


# --------------------------------------------------------------------------- dispatcher

def _family_variances(family: LDSFamily):
    """(sigma_w2, sigma_v2, sigma_02) as exact Fractions from the family's std devs,
    each read by its decimal repr (0.1 -> 1/10, squared 1/100)."""
    return tuple(Fraction(repr(float(getattr(family, n)))) ** 2
                 for n in ("sigma_w", "sigma_v", "sigma_0"))


def kappa(family: LDSFamily, *, method: str = "auto", m: int = 200_000, seed: int = 0) -> KappaResult:
    """kappa for a family.

    ``method``: "auto" (setting "a" -> "exact-rational", others -> "mc-moments"),
    "exact-rational" (alias "exact"), "gauss-legendre" (alias "quadrature"),
    "mc-moments", "mc-trajectories".  ``m`` and ``seed`` are used by the Monte Carlo
    methods only (``np.random.default_rng(seed)``).
    """
    family = _check_family(family)
    if not isinstance(method, str):
        raise ValueError(f"method must be a string, got {method!r}")
    meth = _ALIASES.get(method, method)
    if meth == "auto":
        meth = "exact-rational" if family.setting == "a" else "mc-moments"
    if meth not in METHODS:
        raise ValueError(f"method must be 'auto' or one of {METHODS} (aliases {tuple(_ALIASES)}), "
                         f"got {method!r}")
    if meth in ("exact-rational", "gauss-legendre") and family.setting != "a":
        raise ValueError(f"method {method!r} is only available for setting 'a', "
                         f"got setting {family.setting!r}; use 'mc-moments'")
    base = _family_details(family)
    if meth == "exact-rational":
        sw2, sv2, s02 = _family_variances(family)
        num, den = kappa_moments_exact_a(family.T, family.d, sw2, sv2, s02)
        ex = (family.T - 2) * num / den
        det = base | {"sigma_w2": str(sw2), "sigma_v2": str(sv2), "sigma_02": str(s02)}
        return KappaResult(kappa=float(ex), exact=ex, stderr=0.0, method=meth,
                           numerator=float(num), denominator=float(den), details=det)
    if meth == "gauss-legendre":
        sw2, sv2, s02 = (float(family.sigma_w) ** 2, float(family.sigma_v) ** 2, float(family.sigma_0) ** 2)
        num, den = kappa_moments_quadrature_a(family.T, family.d, sw2, sv2, s02)
        det = base | {"nodes": 3 * family.T + 1}
        return KappaResult(kappa=(family.T - 2) * num / den, exact=None, stderr=0.0, method=meth,
                           numerator=num, denominator=den, details=det)
    m = check_positive_int("m", m)
    seed = check_positive_int("seed", seed, minimum=0)
    rng = np.random.default_rng(seed)
    fn = kappa_mc_moments if meth == "mc-moments" else kappa_mc_trajectories
    res = fn(family, m, rng)
    return replace(res, details=res.details | {"seed": seed})
