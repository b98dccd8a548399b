r"""The Gaussian moment forms behind kappa: E[y_{T-1} y_T S] and E[y_{T-1}^2 S^2] for y ~ N(0, K).

kappa of Theorem 4.1 (docs/math.md section 4) is the ratio (T-2) N / D of the two
moments N = E[y_{T-1} y_T S] and D = E[y_{T-1}^2 S^2], S = sum_{i=1..T-2} y_i y_{i+1}
(1-based times).  In the code arrays are 0-based (position i holds time i+1), so
``a = T-2`` is the position of y_{T-1}, ``b = T-1`` that of y_T, and
S = sum_{i=0..T-3} y_i y_{i+1}.  This module writes N and D, for one Gaussian y ~ N(0, K),
as multilinear forms in K; every kappa route (exact, quadrature, Monte Carlo) evaluates
them.

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

The forms work on arrays of shape (..., T, T) of float64 *or* of Python objects (ints,
Fractions, sympy expressions): only slicing, +, * and .sum are used, which is what lets
the exact engine run them on big integers.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Layout", "M2", "M3x4", "moment_forms"]


@dataclass(frozen=True)
class Layout:
    """Positions: a (query y_{T-1}), b (target y_T), and the path lo..hi of S's pairs.

    S = sum_{i=lo..hi-1} y_i y_{i+1}.  The paper's layout is a = T-2, b = T-1, lo = 0,
    hi = T-2; other layouts exist only for negative controls (a shifted window).
    """

    a: int
    b: int
    lo: int
    hi: int

    @staticmethod
    def paper(T: int) -> "Layout":
        return Layout(a=T - 2, b=T - 1, lo=0, hi=T - 2)


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


def _trB(Y, L: Layout):
    """t'(Y) = tr(Y B') = sum_i (Y[i, i+1] + Y[i+1, i])."""
    i = np.arange(L.lo, L.hi)
    return _sum_last(Y[..., i, i + 1]) + _sum_last(Y[..., i + 1, i])


def M2(X, Y, L: Layout):
    """Bilinear M2 with M2(K, K) = E[y_a y_b S] for y ~ N(0, K) (module doc)."""
    a, b, lo, hi = L.a, L.b, L.lo, L.hi
    i = np.arange(lo, hi)
    return (X[..., a, b] * _sum_last(Y[..., i, i + 1])
            + _sum_last(X[..., a, lo:hi] * Y[..., b, lo + 1:hi + 1])
            + _sum_last(X[..., a, lo + 1:hi + 1] * Y[..., b, lo:hi]))


def M3x4(X, Y, Z, L: Layout):
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
    L = Layout.paper(T)
    num = M2(K, K, L)
    den = M3x4(K, K, K, L) / 4
    if K.dtype != object:
        return (float(num), float(den)) if np.ndim(num) == 0 else (num, den)
    return num, den
