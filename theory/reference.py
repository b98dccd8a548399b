r"""Reference routes kept apart from production: brute-force Isserlis, exact Fraction polynomials, sympy.

Like SciPy's mpmath references, the functions here are written straight from the
definitions, are slow, and exist to check the production engines; the production path
(:mod:`theory.kappa`, :mod:`theory.kappa_exact`, :mod:`theory.population`,
:mod:`theory.coordinate`) never calls them.  They stay importable from the package so
that any layer may use them as an independent check:

- :func:`pairings`, :func:`gaussian_moments`, :func:`mixture_moments`,
  :func:`symbolic_moment` -- Isserlis' theorem written out pairing by pairing (float64
  and sympy), the check of the structured moment forms of :mod:`theory.kappa_forms`
  and :mod:`theory.population`;
- :func:`coordinate_covariance_poly`, :func:`exact_moments_a` (with
  :func:`set_partitions`, :func:`uniform_moment`) -- G(lambda) as Fraction polynomials
  and exact setting-(a) moments of any index tuple, the check of both engines of
  :mod:`theory.coordinate` (integer Kronecker substitution and Gauss-Legendre);
- :func:`kappa_symbolic` -- kappa as a rational function of sigma_w^2, sigma_v^2 by
  explicit sympy Wick sums, a third route to Theorem 4.1.

Gaussian moments (docs/math.md section 1)
-----------------------------------------

Given a system, y = (y_1..y_T) ~ N(0, K) and Isserlis' (Wick's) theorem gives every
moment exactly::

    E[y_i1 ... y_i2k] = sum over the (2k-1)!! pairings P of {1..2k} of
                        prod_{(a, b) in P} K[i_a, i_b],        odd orders vanish.

For example E[y_1 y_2 y_3 y_4] = K12 K34 + K13 K24 + K14 K23 (3 pairings) and an
order-6 moment has 15 pairings.  Indices here are 0-based array positions: position
``k`` holds time ``k + 1``.

Over a random A (a "setting") y is a Gaussian mixture and every moment is
E_A[ Isserlis(K(A)) ]; :func:`mixture_moments` averages over a sample of systems.

Setting (a) admits the expectation over A in exact rational arithmetic
(:func:`exact_moments_a`).  With A = diag(lambda), c = 1 and isotropic noise the d
coordinates are iid, so K = sum_k G(lambda_k) with the one-coordinate covariance::

    G(lam)[i, j] = lam^|i-j| Pi_{min(i,j)+1}(lam) + (sigma_v^2 / d) [i = j],
    Pi_t(lam)    = sigma_0^2 lam^(2t) + sigma_w^2 (1 + lam^2 + ... + lam^(2t-2)),

a polynomial in lam; E over lam ~ U[-1, 1] of lam^m is 1/(m+1) for even m, 0 for odd.
A product of k entries of K expands over the set partitions pi of its k factors
(which factors share a coordinate)::

    E_A[ prod_r K[p_r] ] = sum_pi  d (d-1) ... (d-|pi|+1)  prod_{B in pi} E_lam[ prod_{r in B} G(lam)[p_r] ].
"""
from __future__ import annotations

import functools
from fractions import Fraction
from functools import reduce

import numpy as np
import sympy as sp

from .validation import check_finite_array, check_positive_int, check_rational

__all__ = [
    "pairings",
    "gaussian_moments",
    "symbolic_moment",
    "mixture_moments",
    "set_partitions",
    "coordinate_covariance_poly",
    "uniform_moment",
    "exact_moments_a",
    "kappa_symbolic",
]


@functools.lru_cache(maxsize=None)
def _pairings_cached(n: int) -> tuple:
    if n == 0:
        return ((),)
    out = []
    first = 0
    rest = tuple(range(1, n))
    for j, partner in enumerate(rest):
        remaining = rest[:j] + rest[j + 1:]
        for sub in _pairings_cached(len(remaining)):
            out.append(((first, partner),) + tuple((remaining[a], remaining[b]) for a, b in sub))
    return tuple(out)


def pairings(order: int) -> np.ndarray:
    """All perfect matchings of ``range(order)`` as an int array (P, order/2, 2).

    ``P = (order-1)!!``: 1, 3, 15, 105 for orders 2, 4, 6, 8.

    >>> pairings(4).tolist()
    [[[0, 1], [2, 3]], [[0, 2], [1, 3]], [[0, 3], [1, 2]]]
    """
    order = check_positive_int("order", order)
    if order % 2:
        raise ValueError(f"order must be even to have pairings, got {order}")
    return np.array(_pairings_cached(order), dtype=np.intp).reshape(-1, order // 2, 2)


def _check_tuples(idx, T: int | None) -> np.ndarray:
    try:
        arr = np.asarray(idx)
    except ValueError:  # ragged
        raise ValueError("idx must be an (N, order) array of index tuples of one order") from None
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2 or arr.shape[0] < 1 or arr.shape[1] < 1:
        raise ValueError(f"idx must be an (N, order) array of index tuples, got shape {arr.shape}")
    if not np.issubdtype(arr.dtype, np.integer):
        raise ValueError("idx must hold integer indices")
    if T is not None and (arr.min() < 0 or arr.max() >= T):
        raise ValueError(f"idx entries must lie in 0..{T - 1} (0-based times), got {arr.min()}..{arr.max()}")
    return arr.astype(np.intp)


def gaussian_moments(K, idx) -> np.ndarray:
    """E[y_i1 ... y_ik] for y ~ N(0, K), by Isserlis, vectorised over tuples and systems.

    ``K``: (T, T) or (m, T, T), symmetric.  ``idx``: (N, k) 0-based index tuples (one
    tuple may be passed as a 1-D sequence).  Returns (N,) or (m, N); zero for odd k.

    >>> K = np.array([[2.0, 0.5], [0.5, 1.0]])
    >>> gaussian_moments(K, [[0, 0, 1, 1]])   # K00 K11 + 2 K01^2
    array([2.5])
    """
    K = check_finite_array("K", K, ndim=(2, 3))
    if K.shape[-1] != K.shape[-2]:
        raise ValueError(f"K must be square in its last two axes, got shape {K.shape}")
    if K.size and np.abs(K - np.swapaxes(K, -1, -2)).max() > 1e-9 * max(1.0, np.abs(K).max()):
        raise ValueError("K must be symmetric (a covariance matrix)")
    squeeze = K.ndim == 2
    Kb = K[None] if squeeze else K
    arr = _check_tuples(idx, K.shape[-1])
    order = arr.shape[1]
    if order % 2:
        out = np.zeros((Kb.shape[0], arr.shape[0]))
    else:
        P = pairings(order)                          # (P, k, 2)
        I = arr[:, P]                                # (N, P, k, 2)
        vals = Kb[:, I[..., 0], I[..., 1]]           # (m, N, P, k)
        out = vals.prod(axis=-1).sum(axis=-1)
    return out[0] if squeeze else out


def symbolic_moment(idx, K=None) -> sp.Expr:
    """Isserlis sum for one index tuple as a sympy expression.

    ``K`` is a sympy Matrix (default: a symmetric matrix of symbols ``K_i_j``, i <= j).

    >>> symbolic_moment((0, 1, 2, 3))
    K_0_1*K_2_3 + K_0_2*K_1_3 + K_0_3*K_1_2
    """
    arr = np.asarray(idx)
    if arr.ndim != 1 or arr.size == 0 or not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"idx must be one non-empty tuple of integer indices, got {idx!r}")
    idx = tuple(int(i) for i in arr)
    if any(i < 0 for i in idx):
        raise ValueError("idx entries must be >= 0")
    if K is None:
        def entry(a, b):
            a, b = min(a, b), max(a, b)
            return sp.Symbol(f"K_{a}_{b}")
    else:
        if not isinstance(K, sp.MatrixBase) or K.rows != K.cols:
            raise ValueError("K must be a square sympy Matrix")
        if max(idx) >= K.rows:
            raise ValueError(f"idx entries must be < {K.rows} (the size of K)")

        def entry(a, b):
            return K[a, b]
    if len(idx) % 2:
        return sp.Integer(0)
    total = sp.Integer(0)
    for pairing in _pairings_cached(len(idx)):
        term = sp.Integer(1)
        for a, b in pairing:
            term *= entry(idx[a], idx[b])
        total += term
    return sp.expand(total)


def mixture_moments(K, idx) -> tuple[np.ndarray, np.ndarray]:
    """Moments of the Gaussian mixture over a sample of systems.

    ``K``: (m, T, T) covariances of m sampled systems.  Returns ``(mean, stderr)``, each
    (N,): the sample mean over systems of the exact per-system moments, and its
    standard error (std / sqrt(m)).
    """
    per = gaussian_moments(K, idx)
    if per.ndim != 2:
        raise ValueError("K must be a batch (m, T, T) of covariances")
    m = per.shape[0]
    se = per.std(axis=0, ddof=1) / np.sqrt(m) if m > 1 else np.full(per.shape[1], np.inf)
    return per.mean(axis=0), se


# --------------------------------------------------------------------------- exact (a)

def set_partitions(k: int) -> list[list[list[int]]]:
    """All set partitions of ``range(k)`` (Bell(k) of them: 1, 2, 5, 15 for k = 1..4)."""
    if k == 0:
        return [[]]
    out = []
    for part in set_partitions(k - 1):
        for b in range(len(part)):
            out.append([blk + [k - 1] if i == b else list(blk) for i, blk in enumerate(part)])
        out.append([list(blk) for blk in part] + [[k - 1]])
    return out


def uniform_moment(m: int) -> Fraction:
    """E[lam^m] for lam ~ U[-1, 1]: 1/(m+1) for even m, 0 for odd m."""
    return Fraction(1, m + 1) if m % 2 == 0 else Fraction(0)


def coordinate_covariance_poly(T: int, d: int, sigma_w2, sigma_v2, sigma_02=1):
    """Coefficient lists of G(lam)[i, j] (see module doc), exact Fractions.

    Returns a function ``G(i, j) -> tuple of Fractions`` (coefficient of lam^m at m),
    for 0-based i, j < T.  Includes the share sigma_v^2/d of the observation noise.
    """
    T = check_positive_int("T", T)
    d = check_positive_int("d", d)
    sw2 = check_rational("sigma_w2", sigma_w2)
    sv2 = check_rational("sigma_v2", sigma_v2)
    s02 = check_rational("sigma_02", sigma_02)

    @functools.lru_cache(maxsize=None)
    def G(i: int, j: int) -> tuple:
        if not (0 <= i < T and 0 <= j < T):
            raise ValueError(f"i and j must lie in 0..{T - 1} (0-based times), got ({i}, {j})")
        lo, gap = min(i, j), abs(i - j)
        t = lo + 1
        coeffs = [Fraction(0)] * (gap + 2 * t + 1)
        coeffs[gap + 2 * t] += s02
        for mm in range(t):
            coeffs[gap + 2 * mm] += sw2
        if i == j:
            coeffs[0] += sv2 / d
        return tuple(coeffs)

    return G


def _poly_mul(p, q):
    out = [Fraction(0)] * (len(p) + len(q) - 1)
    for a, pa in enumerate(p):
        if pa:
            for b, qb in enumerate(q):
                if qb:
                    out[a + b] += pa * qb
    return out


def _poly_mean(p) -> Fraction:
    return sum((c * uniform_moment(m) for m, c in enumerate(p) if c), Fraction(0))


def _falling(d: int, r: int) -> int:
    out = 1
    for i in range(r):
        out *= d - i
    return out


def exact_moments_a(idx, T: int, d: int, sigma_w2, sigma_v2, sigma_02=1) -> list[Fraction]:
    """Exact E_A E[y_i1 ... y_ik] in setting (a), as Fractions, one per index tuple.

    ``sigma_w2``, ``sigma_v2``, ``sigma_02`` are *variances*, given as rationals (ints,
    Fractions, decimal strings, or floats read by their decimal repr: 0.01 -> 1/100).
    The expectation is over lambda_k iid U[-1, 1] and the Gaussian noise (module doc).

    >>> exact_moments_a([(0, 0)], T=1, d=1, sigma_w2=0, sigma_v2=0)  # E[lam^2 x0^2] = 1/3
    [Fraction(1, 3)]
    """
    G = coordinate_covariance_poly(T, d, sigma_w2, sigma_v2, sigma_02)
    arr = _check_tuples(idx, T)
    order = arr.shape[1]
    if order % 2:
        return [Fraction(0)] * arr.shape[0]
    k = order // 2
    parts = set_partitions(k)
    block_cache: dict = {}

    def block_mean(entries: tuple) -> Fraction:
        key = tuple(sorted(entries))
        if key not in block_cache:
            p = [Fraction(1)]
            for (i, j) in key:
                p = _poly_mul(p, G(i, j))
            block_cache[key] = _poly_mean(p)
        return block_cache[key]

    results = []
    for row in arr.tolist():
        total = Fraction(0)
        for pairing in _pairings_cached(order):
            factors = [tuple(sorted((row[a], row[b]))) for a, b in pairing]
            for part in parts:
                term = Fraction(_falling(d, len(part)))
                if term == 0:
                    continue
                for blk in part:
                    term *= block_mean(tuple(factors[r] for r in blk))
                    if term == 0:
                        break
                total += term
        results.append(total)
    return results


# --------------------------------------------------------------------------- kappa, symbolic

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
    T = check_positive_int("T", T, minimum=3)
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
