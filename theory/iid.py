r"""In-context linear regression with i.i.d. tokens: the depth claim's contrast (docs/math.md section 7.4).

The task: w ~ N(0, I_d); context x_i ~ N(0, I_d), y_i = w^T x_i + sigma e_i, i = 1..n;
query x_q, target y_q = w^T x_q + sigma e_q (all e standard normal, independent).  With
tokens z_i = (x_i, y_i) and the query z_q = (x_q, 0) this is the paper's layer for the
window s = d: the same features F_(r,l,m) = C[r, l] x_q[m], C = (1/n) sum_i z_i z_i^T, so
theory.population's quadratic L = 1/2 beta^T M beta - c^T beta + 1/2 v applies with

    M[(r,l,m), (r',l',m')] = E[C_rl C_r'l'] [m = m'],   c[(r,l,m)] = E[C_rl w_m],   v = d + sigma^2

(x_q is isotropic and independent of the context).  Given w the tokens are i.i.d.
N(0, S), S = [[I, w], [w^T, |w|^2 + sigma^2]], so (Isserlis)

    E[C_ab | w] = S_ab,    E[C_ab C_cd | w] = S_ab S_cd + (S_ac S_bd + S_ad S_bc) / n,

polynomials of degree <= 4 in each w_k: the 3-point Gauss-Hermite rule per coordinate
(3^d nodes) integrates them exactly.

Closed form (the oracle the tests and the claim hold the optimiser to): the global
optimum of one layer on this task is one step of gradient descent from 0 (Mahankali,
Hashimoto and Ma 2023, for this full parametrisation and isotropic covariates),
y_hat = gamma h^T x_q with h = (1/n) sum_i y_i x_i; its step size and loss, derived in
docs/math.md section 7.4 from E[(X^T X)^2] = n (n + d + 1) I:

    gamma* = n / (n + D),   2 L* = sigma^2 + d D / (n + D),   D = d + 1 + sigma^2,

so the excess 2 L* - sigma^2 over the noise floor vanishes like d D / n.  The LDS case is
different (theory.stationary, claims/test_depth.py): there the excess of the one-layer
optimum over the best AR(s) predictor tends to a positive constant.

Worked example (d = 1, sigma = 0, n = 2): D = 2, gamma* = 1/2, 2 L* = 1/2:

>>> round(optimal_half_mse(2, 1, 0.0) * 2, 12), one_step_gamma(2, 1, 0.0)
(0.5, 0.5)
"""
from __future__ import annotations

import itertools

import numpy as np

from .population import PopulationMoments, feature_list
from .validation import check_positive_int, check_real

__all__ = ["one_step_gamma", "optimal_half_mse", "iid_moments", "one_step_beta", "sample_features"]


def _D(d: int, sigma: float) -> float:
    return d + 1.0 + sigma ** 2


def one_step_gamma(n: int, d: int, sigma: float) -> float:
    """gamma* = n / (n + d + 1 + sigma^2) (module doc)."""
    n, d = check_positive_int("n", n), check_positive_int("d", d)
    return n / (n + _D(d, check_real("sigma", sigma, minimum=0.0)))


def optimal_half_mse(n: int, d: int, sigma: float) -> float:
    """L* = 1/2 (sigma^2 + d D / (n + D)), D = d + 1 + sigma^2 (module doc)."""
    n, d = check_positive_int("n", n), check_positive_int("d", d)
    sigma = check_real("sigma", sigma, minimum=0.0)
    D = _D(d, sigma)
    return 0.5 * (sigma ** 2 + d * D / (n + D))


def iid_moments(n: int, d: int, sigma: float) -> PopulationMoments:
    """Exact (M, c, v) of the features for this task (module doc; Gauss-Hermite over w)."""
    n, d = check_positive_int("n", n), check_positive_int("d", d)
    sigma = check_real("sigma", sigma, minimum=0.0)
    x, wx = np.polynomial.hermite_e.hermegauss(3)
    wx = wx / wx.sum()
    EC = np.zeros((d + 1, d + 1, d))                  # E[C_ab w_m]
    ECC = np.zeros((d + 1,) * 4)                      # E[C_ab C_cd]
    for idx in itertools.product(range(3), repeat=d):
        w = x[list(idx)]
        p = float(np.prod(wx[list(idx)]))
        S = np.eye(d + 1)
        S[:d, d] = S[d, :d] = w
        S[d, d] = w @ w + sigma ** 2
        EC += p * S[:, :, None] * w[None, None, :]
        ECC += p * (np.einsum("ab,cd->abcd", S, S)
                    + (np.einsum("ac,bd->abcd", S, S) + np.einsum("ad,bc->abcd", S, S)) / n)
    feats = feature_list(d)
    M = np.array([[ECC[r, l, r2, l2] * (m == m2) for (r2, l2, m2) in feats] for (r, l, m) in feats])
    c = np.array([EC[r, l, m] for (r, l, m) in feats])
    f = len(feats)
    return PopulationMoments(s=d, M=M, c=c, v=d + sigma ** 2, M_se=np.zeros((f, f)), c_se=np.zeros(f),
                             v_se=0.0, method="iid-gauss-hermite")


def one_step_beta(d: int, gamma: float) -> np.ndarray:
    """beta of y_hat = gamma h^T x_q: gamma on the features C[d, k] x_q[k] (C[k, d] is the
    same number; the weight is put on the r = d row, b = e_d, W_QK[:d, :d] = gamma I)."""
    return np.array([gamma if (r == d and l == m) else 0.0 for (r, l, m) in feature_list(d)])


def sample_features(rng: np.random.Generator, m: int, n: int, d: int, sigma: float):
    """(F (m, f), y_q (m,)): ``m`` sampled tasks, for Monte Carlo checks of the moments."""
    w = rng.standard_normal((m, d))
    X = rng.standard_normal((m, n, d))
    y = np.einsum("mnd,md->mn", X, w) + sigma * rng.standard_normal((m, n))
    Z = np.concatenate([X, y[..., None]], axis=2)
    C = np.einsum("mna,mnb->mab", Z, Z) / n
    xq = rng.standard_normal((m, d))
    yq = np.einsum("md,md->m", xq, w) + sigma * rng.standard_normal(m)
    F = np.stack([C[:, r, l] * xq[:, k] for (r, l, k) in feature_list(d)], axis=1)
    return F, yq
