r"""The population loss of the linear attention layer, as an exact quadratic in the features.

Features and coefficients (docs/math.md sections 2 and 5; 0-based r, l in 0..s, m in 0..s-1)::

    F_(r,l,m) = C[r, l] z_q[m],   C = (1/n) sum_{t=1..n} z_t z_t^T,   z_q[m] = y_{T-s+m}
    beta_(r,l,m) = b_r W_QK[l, m]   (b = last row of W_V)
    y_hat_T = sum_(r,l,m) beta_(r,l,m) F_(r,l,m)       (exact for every theta)

so the population loss L(theta) = E[1/2 (y_hat_T - y_T)^2] is the quadratic

    L = 1/2 beta^T M beta - c^T beta + 1/2 v,    M = E[F F^T],  c = E[F y_T],  v = E[y_T^2].

M and c are moments of order 6 and 4 of y.  Each F is a quadratic form times an
observation, so Magnus' formulas for Gaussian quadratic forms Q_i = y^T A_i y
(A_i symmetric, y ~ N(0, K)) give them exactly:

    E[Q1 Q2]    = tr(K A1) tr(K A2) + 2 tr(K A1 K A2)
    E[Q1 Q2 Q3] = t1 t2 t3 + 2 (t1 t23 + t2 t13 + t3 t12) + 8 t123,
                  t_i = tr(K A_i), t_ij = tr(K A_i K A_j), t123 = tr(K A1 K A2 K A3).

Here every A is either the context form B_(r,l) (sum_t y_{t+r} y_{t+l} = y^T B y) or a
rank-<=2 query form, and every trace is a sum of entries of four "shift tables", each
one batched matrix product over all shifts (section "shift tables" below): all of M
and c for one covariance cost O((s+1)^6 n^2) flops, without a loop over feature pairs
(docs/math.md section 5.6).  The features F_(r,l,m) = F_(l,r,m) coincide, so the work is
done on the reduced features (r <= l, m) and expanded (:func:`reduced_index`).

Over a random A the moments are expectations of these multilinear forms.  For the
diagonal settings ("a", "c", "asym") the d coordinates are independent, K = sum_k G_k
with G_k = G(lambda_k; sigma_wk) the one-coordinate covariance (plus sigma_v^2/d I), and
multilinearity gives the expectation from one-coordinate integrals over lambda, which
are polynomials of degree <= 6T: Gauss-Legendre with 3T+1 nodes integrates them exactly
(up to rounding).  Setting "b" reduces to the same form with random coordinate weights,
K = sum_k w_k G_k, w = d * Dirichlet(1/2, ..., 1/2) (see theory.coordinate.setting_weight_moments), so
it is exact too.  G, the quadrature and its combinatorics over coordinate patterns are
:func:`theory.coordinate.mixture_quadrature` (the engine of kappa's quadrature route
too).  For setting "d" the moments are averaged over sampled systems (exact per system,
Monte Carlo over A), with standard errors and batch means; theory.mc_moments has the
cheaper raw-trajectory route.

Worked example: for s = 1, F = (C00 y_{T-1}, C01 y_{T-1}, C10 y_{T-1}, C11 y_{T-1}),
c[1] = E[C01 y_{T-1} y_T] = E[y_{T-1} y_T S]/n and M[1, 1] = E[y_{T-1}^2 S^2]/n^2, so
eq. 15's kappa is c[1] / M[1, 1].
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .coordinate import family_quadrature
from .systems import LDSFamily, covariance
from .validation import check_finite_array, check_positive_int, check_type, check_window

__all__ = [
    "MOMENTS_ROUTES",
    "moments_route",
    "feature_list",
    "feature_parity",
    "gaussian_feature_moments",
    "PopulationMoments",
    "population_moments",
    "context_pairs",
    "reduced_index",
    "expand_reduced",
    "beta_from_weights",
    "population_loss",
    "moment_memory",
]


def feature_list(s: int) -> list[tuple[int, int, int]]:
    """The features (r, l, m), 0-based, in the order used by every array here."""
    s = check_positive_int("s", s)
    return [(r, l, m) for r in range(s + 1) for l in range(s + 1) for m in range(s)]


def feature_parity(s: int) -> np.ndarray:
    """+1 for even features, -1 for odd ones (docs/math.md section 5).

    Under A -> -A, y_t -> (-1)^t y_t, and F_(r,l,m) y_T picks up the sign
    (-1)^(r+l+m+s+1) (1-based r, l, m), i.e. (-1)^(r+l+m+s) with 0-based r, l, m
    (the three shifts add 3, flipping the parity once).  Odd features are uncorrelated
    with y_T and with every even feature when the law of A is symmetric.
    """
    return np.array([1 if (r + l + m + s) % 2 == 0 else -1 for r, l, m in feature_list(s)])


# ----------------------------------------------------------------- shift tables
#
# C is symmetric, so F_(r,l,m) = F_(l,r,m): the moments are computed for the reduced
# features (r <= l, m), P s of them (P = (s+1)(s+2)/2 context pairs), and expanded.
# The context form of C[r, l] (0-based) is B_rl = (S_r^T S_l + S_l^T S_r) / 2 with S_a the
# n x T selection (S_a y)_t = y[t + a], and the query forms are A_kk' = (e_p e_p'^T +
# e_p' e_p^T) / 2, p = q0 + k, p' = q0 + k', at the last s + 1 positions (q0 = n =
# T - s - 1; k = s is y_T).  Every trace of Magnus' formulas (module doc) is a sum of
# entries of four shift tables, each one batched matrix product over all shifts:
#
#   D_Y[a, b]            = sum_t Y[t+a, t+b]                    = tr(Y S_b^T S_a)
#   R_YX[k, a, b, k']    = sum_t Y[p, t+a] X[t+b, p']           = (Y S_a^T S_b X)[p, p']
#   Q_YZ[a, b, c, d]     = sum_{t,u} Y[t+a, u+d] Z[t+b, u+c]    = tr(Y S_a^T S_b Z S_c^T S_d)
#   W[k, a, b, c, d, k'] = sum_{t,u} Y[p, t+a] Z[t+b, u+c] X[u+d, p']
#                                                               = (Y S_a^T S_b Z S_c^T S_d X)[p, p']
#
# (Q uses Y = Y^T), and averaging over (a, b) <-> (b, a), (c, d) <-> (d, c) and
# k <-> k' gives the traces with the symmetric forms.  Cost O((s+1)^6 n^2) flops per
# covariance and no Python loop over feature pairs (docs/math.md section 5.6).


def context_pairs(s: int) -> tuple[np.ndarray, np.ndarray]:
    """The P = (s+1)(s+2)/2 unordered context pairs (r, l), r <= l, 0-based, row-major."""
    return np.triu_indices(s + 1)


def reduced_index(s: int) -> np.ndarray:
    """For each feature (r, l, m) of :func:`feature_list`, its reduced index i(min, max) s + m."""
    s = check_positive_int("s", s)
    ri, li = context_pairs(s)
    pair = np.empty((s + 1, s + 1), dtype=int)
    pair[ri, li] = pair[li, ri] = np.arange(ri.size)
    return np.array([pair[r, l] * s + m for r, l, m in feature_list(s)])


def _tables(s: int, T: int, X, Y, Z):
    """Symmetrised traces on the reduced features (batch axes first, broadcast).

    Returns n, t1[k, k'], t2[i], t3[j], t12[k, i, k'], t13[k, j, k'], t23[i, j],
    t123[k, i, j, k'] (k, k' < s in t123) for context pairs i, j: t1 = tr(X A_kk'),
    t2 = tr(Y B_i), t3 = tr(Z B_j), t12 = tr(X A Y B_i), t13 = tr(X A Z B_j),
    t23 = tr(Y B_i Z B_j), t123 = tr(X A Y B_i Z B_j).
    """
    n = q0 = T - s - 1
    S, t = np.arange(s + 1), np.arange(n)
    Qp = q0 + S
    ri, li = context_pairs(s)
    ab, ba = ri * (s + 1) + li, li * (s + 1) + ri            # flat (a, b) of each pair, both orders

    def D(V):                                                 # tr(V B_i) = (D[l, r] + D[r, l]) / 2
        return 0.5 * (V[..., ri[:, None] + t, li[:, None] + t].sum(-1)
                      + V[..., li[:, None] + t, ri[:, None] + t].sum(-1))

    def rows(V, K):                                           # V[q0+k, t+a]: (.., K (s+1), n)
        g = V[..., q0 + np.arange(K)[:, None, None], S[None, :, None] + t]
        return g.reshape(g.shape[:-3] + (K * (s + 1), n))

    def band(V, K):                                           # V[t+b, q0+k']: (.., n, (s+1) K)
        g = V[..., t[:, None, None] + S[None, :, None], q0 + np.arange(K)[None, None, :]]
        return g.reshape(g.shape[:-3] + (n, (s + 1) * K))

    def sym_pairs(x, axis):                                   # flat (a, b) axis -> pairs i, averaged
        x = np.moveaxis(x, axis, -1)
        return np.moveaxis(0.5 * (x[..., ab] + x[..., ba]), -1, axis)

    def R(V, U):                                              # t12-type table [k, i, k'] (k, k' in 0..s)
        r4 = rows(V, s + 1) @ band(U, s + 1)                  # [(k, a), (b, k')]
        r4 = r4.reshape(r4.shape[:-2] + (s + 1, (s + 1) ** 2, s + 1))
        r4 = sym_pairs(r4, -2)
        return 0.5 * (r4 + np.swapaxes(r4, -3, -1))

    t1 = 0.5 * (X[..., Qp[:, None], Qp] + X[..., Qp, Qp[:, None]])
    t2 = D(Y)
    t3 = t2 if Z is Y else D(Z)
    t12 = R(Y, X)
    t13 = t12 if Z is Y else R(Z, X)

    # t23 from Q_YZ: Yg[a, d, t, u] = Y[t+a, u+d], Zg[b, c, t, u] = Z[t+b, u+c] (one gather)
    gi = S[:, None, None, None] + t[None, None, :, None], S[None, :, None, None] + t[None, None, None, :]

    def flat(g):
        return g.reshape(g.shape[:-4] + ((s + 1) ** 2, n * n))
    Zg = flat(Z[..., gi[0], gi[1]])
    Yg = Zg if Z is Y else flat(Y[..., gi[0], gi[1]])
    q4 = Yg @ np.swapaxes(Zg, -1, -2)                          # [(a, d), (b, c)]
    q4 = q4.reshape(q4.shape[:-2] + (s + 1, s + 1, s + 1, s + 1))
    q4 = np.moveaxis(q4, -3, -1).reshape(q4.shape[:-4] + ((s + 1) ** 2, (s + 1) ** 2))   # [(a, b), (c, d)]
    t23 = sym_pairs(sym_pairs(q4, -2), -1)

    # t123: U[k, a, (b, c, u)] = sum_t Y[q0+k, t+a] Z[t+b, u+c];  W = U X[u+d, q0+k']
    Zt = Z[..., t[:, None, None, None] + S[None, :, None, None], S[None, None, :, None] + t[None, None, None, :]]
    U = rows(Y, s) @ Zt.reshape(Zt.shape[:-4] + (n, (s + 1) ** 2 * n))
    W = U.reshape(U.shape[:-2] + (s * (s + 1) ** 3, n)) @ band(X, s)           # [(k, a, b, c), (d, k')]
    W = W.reshape(W.shape[:-2] + (s, (s + 1) ** 2, (s + 1) ** 2, s))          # [k, (a, b), (c, d), k']
    W = sym_pairs(sym_pairs(W, -3), -2)
    t123 = 0.5 * (W + np.swapaxes(W, -4, -1))
    return n, t1, t2, t3, t12, t13, t23, t123


def _reduced_moments(s, T, X, Y, Z):
    """(M, c) on the reduced features (i, m), multilinear in (X, Y, Z); X, Y, Z symmetric.

    Magnus' E[Q1 Q2 Q3] with Q1 = y_(q0+m) y_(q0+m2) (X), Q2 = C_i (Y), Q3 = C_j (Z), and
    E[Q1 Q2] for c (Q1 = y_(q0+m) y_T).  The entry (a, b), a <= b, is evaluated with
    (Y, Z) on (a, b) and mirrored: any multilinear form with M3(K, K, K) = E[F_a F_b]
    gives the exact expectation once summed over all coordinate patterns
    (theory.coordinate.mixture_quadrature).
    """
    n, t1, t2, t3, t12, t13, t23, t123 = _tables(s, T, X, Y, Z)
    P = t2.shape[-1]
    u1 = t1[..., None, :s, None, :s]                                   # axes [i, m, j, m2]
    u2, u3 = t2[..., :, None, None, None], t3[..., None, None, :, None]
    full = (u1 * u2 * u3
            + 2.0 * (u1 * t23[..., :, None, :, None] + u2 * t13[..., None, :s, :, :s]
                     + u3 * np.swapaxes(t12[..., :s, :, :s], -3, -2)[..., :, :, None, :])
            + 8.0 * np.swapaxes(t123, -4, -3)) / n ** 2
    f = P * s
    full = full.reshape(full.shape[:-4] + (f, f))
    M = np.where(np.triu(np.ones((f, f), dtype=bool)), full, np.swapaxes(full, -1, -2))
    c = (t1[..., None, :s, s] * t2[..., :, None] + 2.0 * np.swapaxes(t12[..., :s, :, s], -1, -2)) / n
    return M, c.reshape(c.shape[:-2] + (f,))


def expand_reduced(s, M, c):
    """Reduced (M, c) -> the full feature order of :func:`feature_list`."""
    idx = reduced_index(s)
    return M[..., idx[:, None], idx[None, :]], c[..., idx]


def _feature_moments_multilinear(s, T, X, Y, Z):
    """(M, c) in the full feature order, multilinear in symmetric (X, Y, Z); arrays broadcast."""
    return expand_reduced(s, *_reduced_moments(s, T, X, Y, Z))


def gaussian_feature_moments(K, s: int):
    """Exact (M, c, v) of the features for y ~ N(0, K): K (..., T, T) -> (..., f, f), (..., f), (...).

    K must be symmetric (a covariance); it is symmetrised as (K + K^T) / 2, which leaves an
    exactly symmetric K bit for bit unchanged.
    """
    K = check_finite_array("K", K, ndim=None)
    if K.ndim < 2 or K.shape[-1] != K.shape[-2]:
        raise ValueError(f"K must be (..., T, T), got shape {K.shape}")
    s, T = check_window(s, K.shape[-1])
    K = 0.5 * (K + np.swapaxes(K, -1, -2))
    M, c = _feature_moments_multilinear(s, T, K, K, K)
    return M, c, K[..., T - 1, T - 1].copy()


# ----------------------------------------------------------------- mixtures over A


@dataclass(frozen=True)
class PopulationMoments:
    """M = E[F F^T] (f, f), c = E[F y_T] (f,), v = E[y_T^2], with standard errors.

    ``method`` is "quadrature" (exact up to rounding; stderr zero) or "mc-systems".
    Monte Carlo moments also keep ``batches`` = (M_b, c_b, v_b), the means over B
    consecutive equal blocks of the m systems, so that the standard error of any smooth
    function of the moments (L* of theory.optimum) is the spread of its batch values.
    """

    s: int
    M: np.ndarray
    c: np.ndarray
    v: float
    M_se: np.ndarray
    c_se: np.ndarray
    v_se: float
    method: str
    m: int = 0
    batches: tuple | None = None

    def loss(self, beta) -> np.ndarray:
        return population_loss(beta, self.M, self.c, self.v)

    def batch_losses(self, beta) -> np.ndarray:
        """L(beta) on each of the B batch means of Monte Carlo moments, (B,); ValueError for
        exact moments, which have no batches."""
        if self.batches is None:
            raise ValueError(f"moments of method {self.method!r} have no batches")
        Mb, cb, vb = self.batches
        beta = np.asarray(beta, dtype=float)
        return 0.5 * np.einsum("i,bij,j->b", beta, Mb, beta) - cb @ beta + 0.5 * vb

    def loss_stderr(self, beta) -> float:
        """Monte Carlo standard error of L(beta): sd of the B batch losses / sqrt(B); 0 if exact."""
        if self.batches is None:
            return 0.0
        lb = self.batch_losses(beta)
        return float(lb.std(ddof=1) / np.sqrt(lb.size))

    def kappa(self) -> float:
        """eq. 15 read off the moments (s = 1): c[(1,0,0)] / M[(1,0,0),(1,0,0)]."""
        if self.s != 1:
            raise ValueError(f"s must be 1 for kappa, got {self.s}")
        i = feature_list(1).index((1, 0, 0))
        return float(self.c[i] / self.M[i, i])


def _quadrature_moments(family: LDSFamily, s: int) -> PopulationMoments:
    """Exact-up-to-rounding moments of a diagonal setting (or b) by the coordinate quadrature."""
    T = family.T

    def form(X, Y, Z):
        return _reduced_moments(s, T, X, Y, Z)

    M, c, Kbar = family_quadrature(form, family)
    M, c = expand_reduced(s, np.asarray(M), np.asarray(c))
    v = float(Kbar[T - 1, T - 1])
    f = len(feature_list(s))
    return PopulationMoments(s=s, M=np.asarray(M), c=np.asarray(c), v=v, M_se=np.zeros((f, f)),
                             c_se=np.zeros(f), v_se=0.0, method="quadrature")


def moment_memory(s: int, T: int) -> int:
    """Bytes the quadrature route holds at its peak for window s and length T (float64).

    The shift tables of one batch of 3T+1 quadrature nodes (:func:`_floats_per_system`
    floats each) plus the moments themselves: a guard for callers that take s and T from
    a user (the ``ldsicl optimum`` command)."""
    s, T = check_window(s, T)
    f = (s + 1) * (s + 1) * s
    return 8 * ((3 * T + 1) * _floats_per_system(s, T) + 4 * f * f)


#: floats of the largest intermediate per system of _tables (s = 4, T = 30: about 7e4).
def _floats_per_system(s: int, T: int) -> int:
    n = T - s - 1
    return 3 * (s + 1) ** 2 * n * n + 2 * s * (s + 1) ** 3 * n + 4 * ((s + 1) * (s + 2) // 2 * s) ** 2


def _mc_moments(family: LDSFamily, s: int, m: int, rng: np.random.Generator, chunk: int = 2000,
                batches: int = 32, budget: float = 4e6) -> PopulationMoments:
    """Monte Carlo over systems, exact moments per system (docs/math.md section 4.10).

    Systems are drawn ``chunk`` at a time (so the random stream does not depend on s) and
    their moments computed in sub-chunks of at most ``budget`` floats of work space.
    """
    T = family.T
    f_r = (s + 1) * (s + 2) // 2 * s
    sub = max(1, min(chunk, int(budget // _floats_per_system(s, T))))
    B = min(batches, m)
    edges = (np.arange(B + 1) * m) // B                       # batch j = systems edges[j]..edges[j+1]-1
    width = f_r * f_r + f_r + 1
    total, total_sq = np.zeros(width), np.zeros(width)
    bsum = np.zeros((B, width))
    n_done = 0
    while n_done < m:
        k = min(chunk, m - n_done)
        K = covariance(family.sample_systems(rng, k), T)
        K = 0.5 * (K + np.swapaxes(K, -1, -2))
        for i0 in range(0, k, sub):
            Kc = K[i0:i0 + sub]
            M, c = _reduced_moments(s, T, Kc, Kc, Kc)
            flat = np.concatenate([M.reshape(len(Kc), -1), c, Kc[:, T - 1, T - 1, None]], axis=1)
            total += flat.sum(0)
            total_sq += (flat ** 2).sum(0)
            idx = n_done + i0 + np.arange(len(Kc))
            np.add.at(bsum, np.searchsorted(edges, idx, side="right") - 1, flat)
        n_done += k
    mean = total / m
    var = np.maximum(total_sq / m - mean ** 2, 0.0) * m / max(m - 1, 1)
    se = np.sqrt(var / m)
    bmean = bsum / np.diff(edges)[:, None]

    def split(x):
        lead = x.shape[:-1]
        M, c = expand_reduced(s, x[..., :f_r * f_r].reshape(lead + (f_r, f_r)), x[..., f_r * f_r:-1])
        return M, c, x[..., -1]
    M, c, v = split(mean)
    M_se, c_se, v_se = split(se)
    return PopulationMoments(s=s, M=M, c=c, v=float(v), M_se=M_se, c_se=c_se, v_se=float(v_se),
                             method="mc-systems", m=m, batches=split(bmean) if B >= 2 else None)


#: the two routes of a setting's population moments (:func:`moments_route`)
MOMENTS_ROUTES = ("quadrature", "monte-carlo")


def moments_route(family: LDSFamily) -> str:
    """How the population moments of ``family`` are computed: ``"quadrature"`` where its
    setting has the coordinate quadrature (``Setting.quadrature``: exact up to rounding),
    else ``"monte-carlo"``.  The one place this is decided: :func:`population_moments`'
    "auto", theory.optimum.optimum_for and the claims (claims/_ar1.py, claims/_ars.py) ask
    here, and each picks the Monte Carlo estimator that serves its purpose.  ValueError
    naming ``family`` when it is not an LDSFamily.

    >>> moments_route(LDSFamily("b")), moments_route(LDSFamily("d"))
    ('quadrature', 'monte-carlo')
    """
    family = check_type("family", family, LDSFamily, "an LDSFamily")
    return MOMENTS_ROUTES[0] if family.spec.quadrature else MOMENTS_ROUTES[1]


def population_moments(family: LDSFamily, s: int, *, method: str = "auto", m: int = 20000,
                       rng: np.random.Generator | None = None) -> PopulationMoments:
    """Population feature moments of ``family`` for window ``s``.

    ``method``: "quadrature" (settings with the coordinate quadrature, a, b, c, asym; exact
    up to rounding), "mc-systems" (any setting; needs ``rng``), or "auto" (the route of
    :func:`moments_route`: quadrature when possible, else "mc-systems").
    """
    s, _ = check_window(s, family.T)
    if method == "auto":
        method = "quadrature" if moments_route(family) == "quadrature" else "mc-systems"
    if method == "quadrature":
        if moments_route(family) != "quadrature":
            raise ValueError(f"method 'quadrature' is not available for setting {family.setting!r} "
                             f"(its basis is {family.spec.basis}: no coordinate quadrature)")
        return _quadrature_moments(family, s)
    if method == "mc-systems":
        if rng is None:
            raise ValueError("rng must be given for method 'mc-systems'")
        return _mc_moments(family, s, check_positive_int("m", m, minimum=2), rng)
    raise ValueError(f"method must be 'auto', 'quadrature' or 'mc-systems', got {method!r}")


# ----------------------------------------------------------------- loss in theta


def beta_from_weights(W_V, W_QK) -> np.ndarray:
    """beta_(r,l,m) = b_r W_QK[l, m] with b = W_V[-1, :]; (..., f)."""
    W_V = np.asarray(W_V, dtype=float)
    W_QK = np.asarray(W_QK, dtype=float)
    s = W_V.shape[-1] - 1
    b = W_V[..., s, :]
    beta = b[..., :, None, None] * W_QK[..., None, :, :s]
    return beta.reshape(beta.shape[:-3] + ((s + 1) * (s + 1) * s,))


def population_loss(beta, M, c, v) -> np.ndarray:
    """1/2 beta^T M beta - c^T beta + 1/2 v."""
    beta = np.asarray(beta, dtype=float)
    return (0.5 * np.einsum("...i,ij,...j->...", beta, M, beta)
            - np.einsum("...i,i->...", beta, c) + 0.5 * v)

