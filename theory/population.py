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
rank-<=2 query form, so each moment costs O(T^2) per system.

Over a random A the moments are expectations of these multilinear forms.  For the
diagonal settings ("a", "c", "asym") the d coordinates are independent, K = sum_k G_k
with G_k = G(lambda_k; sigma_wk) the one-coordinate covariance (plus sigma_v^2/d I), and
multilinearity gives the expectation from one-coordinate integrals over lambda, which
are polynomials of degree <= 6T: Gauss-Legendre with 3T+1 nodes integrates them exactly
(up to rounding).  Setting "b" reduces to the same form with random coordinate weights,
K = sum_k w_k G_k, w = d * Dirichlet(1/2, ..., 1/2) (see _coordinate_weight_moments), so
it is exact too.  G, the quadrature and its combinatorics over coordinate patterns are
:func:`theory.coordinate.mixture_quadrature` (the engine of kappa's quadrature route
too).  For setting "d" the moments are averaged over sampled systems (exact per system,
Monte Carlo over A), with standard errors.

Worked example: for s = 1, F = (C00 y_{T-1}, C01 y_{T-1}, C10 y_{T-1}, C11 y_{T-1}),
c[1] = E[C01 y_{T-1} y_T] = E[y_{T-1} y_T S]/n and M[1, 1] = E[y_{T-1}^2 S^2]/n^2, so
eq. 15's kappa is c[1] / M[1, 1].
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .coordinate import UNIT_WEIGHTS, mixture_quadrature
from .systems import LDSFamily, covariance
from .validation import check_finite_array, check_positive_int, check_window

__all__ = [
    "feature_list",
    "feature_parity",
    "gaussian_feature_moments",
    "PopulationMoments",
    "population_moments",
    "beta_from_weights",
    "population_loss",
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


# ----------------------------------------------------------------- structured forms


@dataclass(frozen=True)
class _Ctx:
    """Context form B_(r,l): y^T B y = sum_{t=0}^{n-1} y[t+r] y[t+l] (B symmetrised)."""

    r: int
    l: int
    n: int

    def right(self, X):
        """X B for X (..., T, T)."""
        out = np.zeros_like(X)
        r, l, n = self.r, self.l, self.n
        out[..., :, l:l + n] += 0.5 * X[..., :, r:r + n]
        out[..., :, r:r + n] += 0.5 * X[..., :, l:l + n]
        return out

    def vec(self, x):
        """B x for x (..., T)."""
        out = np.zeros_like(x)
        r, l, n = self.r, self.l, self.n
        out[..., l:l + n] += 0.5 * x[..., r:r + n]
        out[..., r:r + n] += 0.5 * x[..., l:l + n]
        return out

    def tr(self, X):
        """tr(X B)."""
        r, l, n = self.r, self.l, self.n
        idx = np.arange(n)
        return 0.5 * (X[..., idx + r, idx + l] + X[..., idx + l, idx + r]).sum(-1)


@dataclass(frozen=True)
class _Pair:
    """Rank-<=2 form y^T A y = y[p] y[q] (A = (e_p e_q^T + e_q e_p^T)/2)."""

    p: int
    q: int

    def tr(self, X):
        return 0.5 * (X[..., self.q, self.p] + X[..., self.p, self.q])


def _t2(X, A1, Y, A2):
    """tr(X A1 Y A2), A1 a _Pair, A2 a context form: 1/2 (Y A2 X)[q,p] + 1/2 (Y A2 X)[p,q]."""
    p, q = A1.p, A1.q

    def ybx(i, j):     # (Y B X)[i, j] = (B Y[i, :])^T X[:, j]   (B symmetric)
        return np.einsum("...k,...k->...", A2.vec(Y[..., i, :]), X[..., :, j])
    return 0.5 * (ybx(q, p) + ybx(p, q))


def _t2_ctx(Y, A2, Z, A3):
    """tr(Y A2 Z A3) for two context forms: sum((Y A2) * (Z A3)^T)."""
    return np.einsum("...ij,...ji->...", A2.right(Y), A3.right(Z))


def _t3(X, A1, Y, A2, Z, A3):
    """tr(X A1 Y A2 Z A3) with A1 a _Pair and A2, A3 context forms: O(T^2)."""
    p, q = A1.p, A1.q

    def entry(i, j):   # (Y A2 Z A3 X)[i, j] = (A2 Y[i,:])^T Z (A3 X[:, j])
        u = A2.vec(Y[..., i, :])
        w = A3.vec(X[..., :, j])
        return np.einsum("...k,...kl,...l->...", u, Z, w)
    return 0.5 * (entry(q, p) + entry(p, q))


def _m2(X, A1, Y, A2):
    """Multilinear E[Q1 Q2]: tr(X A1) tr(Y A2) + 2 tr(X A1 Y A2) (A1 a _Pair)."""
    return A1.tr(X) * A2.tr(Y) + 2.0 * _t2(X, A1, Y, A2)


def _m3(X, A1, Y, A2, Z, A3):
    """Multilinear E[Q1 Q2 Q3] (A1 a _Pair, A2, A3 context forms); M3(K,K,K) = E[Q1Q2Q3]."""
    t1, t2, t3 = A1.tr(X), A2.tr(Y), A3.tr(Z)
    return (t1 * t2 * t3
            + 2.0 * (t1 * _t2_ctx(Y, A2, Z, A3) + t2 * _t2(X, A1, Z, A3) + t3 * _t2(X, A1, Y, A2))
            + 8.0 * _t3(X, A1, Y, A2, Z, A3))


def _forms(s: int, T: int):
    n = T - s - 1
    ctx = {(r, l): _Ctx(r, l, n) for r in range(s + 1) for l in range(s + 1)}
    q0 = T - s - 1                      # 0-based position of z_q[0] = y_{T-s}
    return n, ctx, q0


def _feature_moments_multilinear(s, T, X, Y, Z):
    """(M, c) as multilinear forms in (X, Y, Z) (c uses (X, Y)); arrays broadcast."""
    n, ctx, q0 = _forms(s, T)
    feats = feature_list(s)
    f = len(feats)
    batch = np.broadcast_shapes(X.shape[:-2], Y.shape[:-2], Z.shape[:-2])
    M = np.empty(batch + (f, f))
    c = np.empty(batch + (f,))
    for a, (r, l, m) in enumerate(feats):
        c[..., a] = _m2(X, _Pair(q0 + m, T - 1), Y, ctx[(r, l)]) / n
        for b in range(a, f):
            r2, l2, m2 = feats[b]
            val = _m3(X, _Pair(q0 + m, q0 + m2), Y, ctx[(r, l)], Z, ctx[(r2, l2)]) / n ** 2
            M[..., a, b] = val
            # Any multilinear form with M3(K, K, K) = E[F_a F_b] yields the exact expectation
            # once summed over all coordinate patterns, so the mirror entry may reuse it.
            M[..., b, a] = val
    return M, c


def gaussian_feature_moments(K, s: int):
    """Exact (M, c, v) of the features for y ~ N(0, K): K (..., T, T) -> (..., f, f), (..., f), (...)."""
    K = check_finite_array("K", K, ndim=None)
    if K.ndim < 2 or K.shape[-1] != K.shape[-2]:
        raise ValueError(f"K must be (..., T, T), got shape {K.shape}")
    s, T = check_window(s, K.shape[-1])
    M, c = _feature_moments_multilinear(s, T, K, K, K)
    return M, c, K[..., T - 1, T - 1].copy()


# ----------------------------------------------------------------- mixtures over A


@dataclass(frozen=True)
class PopulationMoments:
    """M = E[F F^T] (f, f), c = E[F y_T] (f,), v = E[y_T^2], with standard errors.

    ``method`` is "quadrature" (exact up to rounding; stderr zero) or "mc-systems".
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

    def loss(self, beta) -> np.ndarray:
        return population_loss(beta, self.M, self.c, self.v)

    def kappa(self) -> float:
        """eq. 15 read off the moments (s = 1): c[(1,0,0)] / M[(1,0,0),(1,0,0)]."""
        if self.s != 1:
            raise ValueError(f"s must be 1 for kappa, got {self.s}")
        i = feature_list(1).index((1, 0, 0))
        return float(self.c[i] / self.M[i, i])


def _coordinate_weight_moments(family: LDSFamily) -> dict:
    """Moments of the coordinate weights w_k in K = sum_k w_k G(lambda_k).

    Settings a, c, asym: w = 1.  Setting b: A = Q^T diag(lambda) Q with Q Haar and
    Sigma_0, Sigma_w isotropic, so Pi_t = Q^T diag(pi_t(lambda)) Q and
    c^T A^k Pi_t c = sum_k u_k^2 lambda_k^k pi_t(lambda_k) with u = Q c uniform on the
    sphere of radius |c| = sqrt(d): w = u^2 = d * Dirichlet(1/2, ..., 1/2), independent of
    lambda, and sum_k w_k = d, so the noise sigma_v^2 I = sum_k w_k (sigma_v^2 / d) I too.
    Returned keys: "3" E[w1^3], "21" E[w1^2 w2], "111" E[w1 w2 w3], "2" E[w1^2], "11" E[w1 w2].
    """
    if family.setting != "b":
        return dict(UNIT_WEIGHTS)
    d = family.d
    a, A = 0.5, 0.5 * d
    r3 = A * (A + 1) * (A + 2)
    r2 = A * (A + 1)
    return {"3": d ** 3 * a * (a + 1) * (a + 2) / r3, "21": d ** 3 * a * a * (a + 1) / r3,
            "111": d ** 3 * a ** 3 / r3, "2": d ** 2 * a * (a + 1) / r2, "11": d ** 2 * a * a / r2}


def _quadrature_moments(family: LDSFamily, s: int) -> PopulationMoments:
    """Exact-up-to-rounding moments of a diagonal setting (or b) by the coordinate quadrature."""
    T, d = family.T, family.d
    lo, hi = family.eigenvalue_range          # lambda_i ~ U[lo, hi], the setting's law
    if hi != 1.0:  # pragma: no cover - every setting draws lambda up to 1 (docs/settings.md)
        raise ValueError(f"the coordinate quadrature maps [-1, 1] to [lo, 1], got hi={hi}")

    def form(X, Y, Z):
        return _feature_moments_multilinear(s, T, X, Y, Z)

    M, c, Kbar = mixture_quadrature(form, T, np.diag(family.process_noise_cov()),
                                    family.sigma_0 ** 2, family.sigma_v ** 2 / d, lo,
                                    _coordinate_weight_moments(family))
    v = float(Kbar[T - 1, T - 1])
    f = len(feature_list(s))
    return PopulationMoments(s=s, M=np.asarray(M), c=np.asarray(c), v=v, M_se=np.zeros((f, f)),
                             c_se=np.zeros(f), v_se=0.0, method="quadrature")


def _mc_moments(family: LDSFamily, s: int, m: int, rng: np.random.Generator,
                chunk: int = 2000) -> PopulationMoments:
    sums = None
    n_done = 0
    while n_done < m:
        k = min(chunk, m - n_done)
        systems = family.sample_systems(rng, k)
        K = covariance(systems, family.T)
        M, c, v = gaussian_feature_moments(K, s)
        flat = np.concatenate([M.reshape(k, -1), c, v[:, None]], axis=1)
        part = (flat.sum(0), (flat ** 2).sum(0))
        sums = part if sums is None else (sums[0] + part[0], sums[1] + part[1])
        n_done += k
    mean = sums[0] / m
    var = np.maximum(sums[1] / m - mean ** 2, 0.0) * m / max(m - 1, 1)
    se = np.sqrt(var / m)
    f = len(feature_list(s))
    return PopulationMoments(
        s=s, M=mean[:f * f].reshape(f, f), c=mean[f * f:f * f + f], v=float(mean[-1]),
        M_se=se[:f * f].reshape(f, f), c_se=se[f * f:f * f + f], v_se=float(se[-1]),
        method="mc-systems", m=m)


def population_moments(family: LDSFamily, s: int, *, method: str = "auto", m: int = 20000,
                       rng: np.random.Generator | None = None) -> PopulationMoments:
    """Population feature moments of ``family`` for window ``s``.

    ``method``: "quadrature" (diagonal settings a, c, asym; exact up to rounding),
    "mc-systems" (any setting; needs ``rng``), or "auto" (quadrature when possible).
    """
    s, _ = check_window(s, family.T)
    if method == "auto":
        method = "mc-systems" if family.setting == "d" else "quadrature"
    if method == "quadrature":
        if family.setting == "d":
            raise ValueError("method 'quadrature' is not available for setting 'd' (non-normal A)")
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

