"""Independent oracles for the core-module tests (deliberately naive: plain loops).

Nothing here imports from ``theory`` or ``models``: every function re-derives its
object from the definitions in docs/math.md so that agreement with the library is evidence,
not a tautology.  The ``wrong_*`` functions are deliberately buggy variants used to show
that the checks can fail.
"""
from __future__ import annotations

import functools
import itertools
import math
from fractions import Fraction

import numpy as np

# --------------------------------------------------------------------- covariance


def brute_force_covariance(A, c, Sigma_0, Sigma_w, sigma_v, T):
    """K = M Sigma_e M^T with y = M e, e = (x_0, w_1..w_T, v_1..v_T).

    Row t (1-based) of M: y_t = c^T A^t x_0 + sum_{s=1..t} c^T A^(t-s) w_s + v_t.
    Works for numpy floats and for sympy Rationals (object arrays) alike.
    """
    A = np.asarray(A)
    d = A.shape[0]
    obj = A.dtype == object
    zero = 0 if obj else 0.0
    one = 1 if obj else 1.0

    def matpow(k):
        P = np.array([[one if i == j else zero for j in range(d)] for i in range(d)],
                     dtype=A.dtype)
        for _ in range(k):
            P = P.dot(A)
        return P

    c = np.asarray(c)
    ne = d + T * d + T
    M = np.array([[zero] * ne for _ in range(T)], dtype=A.dtype)
    for t in range(1, T + 1):
        M[t - 1, :d] = c.dot(matpow(t))
        for s in range(1, t + 1):
            M[t - 1, d + (s - 1) * d: d + s * d] = c.dot(matpow(t - s))
        M[t - 1, d + T * d + (t - 1)] = one
    Se = np.array([[zero] * ne for _ in range(ne)], dtype=A.dtype)
    Se[:d, :d] = Sigma_0
    for s in range(1, T + 1):
        Se[d + (s - 1) * d: d + s * d, d + (s - 1) * d: d + s * d] = Sigma_w
    for t in range(T):
        Se[d + T * d + t, d + T * d + t] = sigma_v ** 2
    return M.dot(Se).dot(M.T)


def _pi_sequence(A, Sigma_0, Sigma_w, T):
    Pi = [np.asarray(Sigma_0, dtype=float)]
    for _ in range(T):
        Pi.append(A @ Pi[-1] @ A.T + Sigma_w)
    return Pi


def recursion_covariance(A, c, Sigma_0, Sigma_w, sigma_v, T, *, pi_shift=0):
    """K[i, j] = c^T A^(i-j) Pi_(j - pi_shift) c + sigma_v^2 [i = j] (1-based, i >= j).

    ``pi_shift = 0`` is the correct formula; ``pi_shift = 1`` is the deliberately wrong
    off-by-one variant (Pi_{j-1}: it forgets that Pi_1 = A Sigma_0 A^T + Sigma_w).
    """
    A = np.asarray(A, float)
    c = np.asarray(c, float)
    Pi = _pi_sequence(A, Sigma_0, Sigma_w, T)
    K = np.zeros((T, T))
    for i in range(1, T + 1):
        for j in range(1, i + 1):
            v = c @ np.linalg.matrix_power(A, i - j) @ Pi[j - pi_shift] @ c
            K[i - 1, j - 1] = K[j - 1, i - 1] = v
        K[i - 1, i - 1] += sigma_v ** 2
    return K


def wrong_covariance_batch(systems, T):
    """The off-by-one covariance (Pi_{j-1} for Pi_j) for every system of a batch.

    Vectorised over systems (the loop-based :func:`recursion_covariance` with
    ``pi_shift=1`` is the same formula for one system; a test checks they agree).
    """
    A, c = systems.A, systems.c
    m, d, _ = A.shape
    Pi = [np.broadcast_to(systems.Sigma_0, (m, d, d))]
    for _ in range(T):
        Pi.append(A @ Pi[-1] @ np.swapaxes(A, 1, 2) + systems.Sigma_w)
    rows = [c]                                   # c^T A^k
    for _ in range(T):
        rows.append(np.einsum("mi,mij->mj", rows[-1], A))
    K = np.zeros((m, T, T))
    for i in range(1, T + 1):
        for j in range(1, i + 1):
            v = np.einsum("mi,mij,mj->m", rows[i - j], Pi[j - 1], c)    # WRONG: Pi_{j-1}
            K[:, i - 1, j - 1] = K[:, j - 1, i - 1] = v
        K[:, i - 1, i - 1] += systems.sigma_v ** 2
    return K


def sample_second_moments(y):
    """All products y_i y_j per trajectory, shape (N, T, T) -- for second-moment checks."""
    return y[:, :, None] * y[:, None, :]


def assert_cov_matches_mc(y, K, *, nsig=4.0, what="covariance"):
    """Every entry of E[y y^T] agrees with ``K`` within ``nsig`` standard errors.

    ``y`` (N, T) trajectories.  ``K`` is either (T, T), a fixed system's covariance (the
    standard error is then exact: Var(y_i y_j) = K_ii K_jj + K_ij^2), or (N, T, T), the
    covariance of the system each trajectory came from: the check is then on the
    differences y_i y_j - K_ij(A_n), whose standard error is estimated from the samples.
    Returns the largest |z| (raises AssertionError when it exceeds ``nsig``).
    """
    y = np.asarray(y, dtype=np.float64)
    N, T = y.shape
    if K.ndim == 2:
        diff = sample_second_moments(y).mean(axis=0) - K
        var = np.outer(np.diag(K), np.diag(K)) + K ** 2
        se = np.sqrt(var / N)
    else:
        D = sample_second_moments(y) - K
        diff = D.mean(axis=0)
        se = D.std(axis=0, ddof=1) / np.sqrt(N)
    z = np.abs(diff) / se
    worst = float(z.max())
    assert worst <= nsig, (f"{what}: entry {np.unravel_index(z.argmax(), z.shape)} is "
                           f"{worst:.2f} standard errors off (allowed {nsig})")
    return worst


def assert_means_match_mc(samples, expected, *, nsig=4.0, what="moments"):
    """Column means of ``samples`` (N, k) equal ``expected`` (k,) within nsig stderr."""
    samples = np.asarray(samples, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    se = samples.std(axis=0, ddof=1) / np.sqrt(samples.shape[0])
    z = np.abs(samples.mean(axis=0) - expected) / se
    worst = float(z.max())
    assert worst <= nsig, f"{what}: column {int(z.argmax())} is {worst:.2f} standard errors off"
    return worst


def random_spd(rng, n, *, cond=20.0):
    """A random symmetric positive-definite n x n matrix with eigenvalues in [1, cond]."""
    Q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    ev = np.exp(rng.uniform(0.0, np.log(cond), n))
    return (Q * ev) @ Q.T


# ----------------------------------------------------------------------- pairings


@functools.lru_cache(maxsize=None)
def brute_force_pairings(n):
    """Perfect matchings of range(n), from all n! permutations, deduplicated.

    A permutation (p0, p1, p2, p3, ...) is read as the pairs {p0,p1}, {p2,p3}, ...; the
    pairing is the *set* of *unordered* pairs.  Returns a sorted list of tuples of pairs.
    """
    seen = set()
    for perm in itertools.permutations(range(n)):
        pairs = frozenset(frozenset(perm[k:k + 2]) for k in range(0, n, 2))
        seen.add(pairs)
    return tuple(sorted(tuple(sorted(tuple(sorted(p)) for p in pairing)) for pairing in seen))


def wrong_pairings_ordered(n):
    """Deliberately wrong: keeps the order *inside* each pair, so (a,b) and (b,a) both count."""
    seen = set()
    for perm in itertools.permutations(range(n)):
        seen.add(frozenset(tuple(perm[k:k + 2]) for k in range(0, n, 2)))
    return sorted(tuple(sorted(p)) for p in seen)


def wrong_pairings_dropped(n):
    """Deliberately wrong: forgets the last pairing."""
    return brute_force_pairings(n)[:-1]


def wrong_pairings_counted_twice(n):
    """Deliberately wrong: every pairing listed twice (ordered pairs double-counted)."""
    return brute_force_pairings(n) * 2


def isserlis_from_pairings(K, idx, pairing_list):
    """sum over pairings of prod K[idx[a], idx[b]] -- plain loops, any number type."""
    if len(idx) % 2:
        return 0
    total = 0
    for pairing in pairing_list:
        term = 1
        for a, b in pairing:
            term = term * K[idx[a]][idx[b]]
        total = total + term
    return total


def double_factorial(n):
    return math.prod(range(n, 0, -2)) if n > 0 else 1


# ------------------------------------------------------------------------- AR / LSA


def loop_tokens(y, s):
    """Y_0 as a list of lists: columns z_1..z_n (z_t = (y_t..y_{t+s})) then z_q."""
    T = len(y)
    n = T - s - 1
    Y = [[0.0] * (n + 1) for _ in range(s + 1)]
    for t in range(n):
        for r in range(s + 1):
            Y[r][t] = float(y[t + r])
    for r in range(s):
        Y[r][n] = float(y[T - s - 1 + r])
    Y[s][n] = 0.0
    return Y


def loop_context_stats(y, s):
    """(H, g, gamma) by explicit sums over t = 1..n (0-based t = 0..n-1)."""
    T = len(y)
    n = T - s - 1
    H = [[0.0] * s for _ in range(s)]
    g = [0.0] * s
    gamma = 0.0
    for t in range(n):
        for a in range(s):
            for b in range(s):
                H[a][b] += y[t + a] * y[t + b] / n
            g[a] += y[t + a] * y[t + s] / n
        gamma += y[t + s] ** 2 / n
    return np.array(H), np.array(g), gamma


def loop_lsa_forward(Y, W_V, W_QK, *, absolute=False):
    """T_theta(Y) = Y + (1/n) W_V (Y M Y^T) W_QK Y by explicit sums (no matmul).

    With ``absolute=True`` every quantity is replaced by its absolute value: the result
    bounds the sum of |terms|, which scales the floating-point tolerance.
    """
    f = abs if absolute else (lambda x: x)
    k = len(Y)
    ncol = len(Y[0])
    n = ncol - 1
    C = [[0.0] * k for _ in range(k)]
    for a in range(k):
        for b in range(k):
            acc = 0.0
            for t in range(n):              # M drops the query column
                acc += f(Y[a][t]) * f(Y[b][t])
            C[a][b] = acc / n
    VC = [[sum(f(W_V[r][a]) * C[a][b] for a in range(k)) for b in range(k)] for r in range(k)]
    VCW = [[sum(VC[r][b] * f(W_QK[b][e]) for b in range(k)) for e in range(k)] for r in range(k)]
    out = [[f(Y[r][col]) + sum(VCW[r][e] * f(Y[e][col]) for e in range(k)) for col in range(ncol)]
           for r in range(k)]
    return np.array(out)


def fraction_matrix(M):
    return [[Fraction(x) for x in row] for row in M]
