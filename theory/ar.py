r"""The AR(s) in-context objective and the optimisers it is compared with (docs/math.md sections 2, 3, 6).

Tokens (window s >= 1, n = T - s - 1 context tokens, 1-based times)::

    z_t = (y_t, ..., y_{t+s})^T          t = 1..n
    z_q = (y_{T-s}, ..., y_{T-1}, 0)^T   (query; its last slot is the unknown y_T)
    Y_0 = [z_1 ... z_n  z_q]             shape (s+1, n+1)

Worked example, y = (1, 2, 3, 4, 5, 6), s = 2: T = 6, n = 3 and
``Y_0 = [[1, 2, 3, 4], [2, 3, 4, 5], [3, 4, 5, 0]]`` (columns z_1, z_2, z_3, z_q);
y_6 = 6 is the target and appears nowhere in Y_0.

AR(s) least squares on the context (ybar_t = (y_t..y_{t+s-1})^T)::

    L_AR(w) = 1/(2n) sum_{t=1..n} (y_{t+s} - w^T ybar_t)^2
    H = (1/n) sum ybar_t ybar_t^T  (the Hessian),   g = (1/n) sum ybar_t y_{t+s} = -grad L_AR(0),
    gamma = (1/n) sum y_{t+s}^2,   C = (1/n) sum z_t z_t^T = [[H, g], [g^T, gamma]].

A weight vector w predicts y_T by ``w^T ybar_q`` with ybar_q = (y_{T-s}..y_{T-1}).
All functions broadcast over leading batch axes of ``y`` (..., T).
"""
from __future__ import annotations

import numpy as np

from .validation import check_finite_array, check_nonneg_real, check_positive_int, check_window

__all__ = [
    "token_matrix",
    "context_stats",
    "query_features",
    "ar_loss",
    "ar_grad",
    "gd",
    "pcg",
    "ols_ar",
    "predict_ar",
    "attention_ar_weights",
    "ar1_optimal_weights",
]


def _y(y, s):
    y = check_finite_array("y", y, ndim=None)
    if y.ndim < 1:
        raise ValueError("y must have a last axis of length T")
    s, T = check_window(s, y.shape[-1])
    return y, s, T


def _weights(name, w, s: int) -> np.ndarray:
    """A finite weight array whose last axis has length s (broadcasts over the batch)."""
    w = check_finite_array(name, w, ndim=None)
    if w.ndim < 1 or w.shape[-1] != s:
        raise ValueError(f"{name} must have a last axis of length s = {s}, got shape {w.shape}")
    return w


def token_matrix(y, s: int) -> np.ndarray:
    """Y_0 of shape (..., s+1, n+1): columns z_1..z_n, then z_q (module doc).

    >>> token_matrix(np.arange(1.0, 7.0), 2)
    array([[1., 2., 3., 4.],
           [2., 3., 4., 5.],
           [3., 4., 5., 0.]])
    """
    y, s, T = _y(y, s)
    n = T - s - 1
    cols = np.arange(n)[None, :] + np.arange(s + 1)[:, None]      # (s+1, n): row r, col t -> y_{t+r}
    Z = y[..., cols]
    zq = np.concatenate([y[..., T - s - 1:T - 1], np.zeros(y.shape[:-1] + (1,))], axis=-1)
    return np.concatenate([Z, zq[..., :, None]], axis=-1)


def context_stats(y, s: int):
    """(H, g, gamma) of the context, shapes (..., s, s), (..., s), (...).  Note the 1/n."""
    Y0 = token_matrix(y, s)
    Z = Y0[..., :-1]
    n = Z.shape[-1]
    C = Z @ np.swapaxes(Z, -1, -2) / n
    return C[..., :s, :s], C[..., :s, s], C[..., s, s]


def query_features(y, s: int) -> np.ndarray:
    """ybar_q = (y_{T-s}, ..., y_{T-1}), shape (..., s)."""
    y, s, T = _y(y, s)
    return y[..., T - s - 1:T - 1]


def ar_loss(w, y, s: int) -> np.ndarray:
    """L_AR(s)(w) = 1/(2n) sum_t (y_{t+s} - w^T ybar_t)^2, shape (...)."""
    Y0 = token_matrix(y, s)
    Z = Y0[..., :-1]
    w = _weights("w", w, s)
    resid = Z[..., s, :] - np.einsum("...r,...rt->...t", w, Z[..., :s, :])
    return 0.5 * np.mean(resid ** 2, axis=-1)


def ar_grad(w, y, s: int) -> np.ndarray:
    """grad L_AR(s)(w) = H w - g, shape (..., s)."""
    H, g, _ = context_stats(y, s)
    return np.einsum("...ij,...j->...i", H, _weights("w", w, s)) - g


def gd(y, s: int, eta, steps: int = 1, w0=None) -> np.ndarray:
    """``steps`` gradient steps w_{k+1} = w_k - eta grad L_AR(w_k) from w0 (default 0).

    ``eta`` is a scalar or broadcasts against the batch.  One step from 0 is eta * g.
    """
    steps = check_positive_int("steps", steps)
    H, g, _ = context_stats(y, s)
    eta = np.asarray(check_finite_array("eta", eta, ndim=None))[..., None]
    if w0 is None:
        w = np.zeros_like(g)
    else:
        w = _weights("w0", w0, g.shape[-1])
        try:
            w = np.broadcast_to(w, g.shape).copy()
        except ValueError:
            raise ValueError(f"w0 must broadcast to {g.shape}, got shape {w.shape}") from None
    for _ in range(steps):
        w = w - eta * (np.einsum("...ij,...j->...i", H, w) - g)
    return w


def pcg(H, g, P=None, k: int = 1, w0=None) -> np.ndarray:
    r"""Iterates of preconditioned conjugate gradient on  min 1/2 w^T H w - g^T w.

    The preconditioner ``P`` approximates H^{-1} and may be non-symmetric (default I,
    plain CG).  Returns the iterates w_0..w_k stacked on a new first axis,
    shape (k+1, ..., s).  Recurrence (Hestenes-Stiefel form, residual r = g - H w)::

        r_0 = g - H w_0,  u_0 = P r_0,  p_0 = u_0
        alpha_i = r_i^T u_i / p_i^T H p_i,   w_{i+1} = w_i + alpha_i p_i
        r_{i+1} = r_i - alpha_i H p_i,  u_{i+1} = P r_{i+1}
        beta_i  = r_{i+1}^T u_{i+1} / r_i^T u_i,   p_{i+1} = u_{i+1} + beta_i p_i

    From w_0 = 0 two steps give tau_1 P H P g + tau_2 P g (paper eq. 18, with
    grad L_AR(0) = -g).  A step whose denominator vanishes (converged) keeps w.
    """
    H = check_finite_array("H", H, ndim=None)
    g = check_finite_array("g", g, ndim=None)
    if H.ndim < 2 or H.shape[-1] != H.shape[-2] or g.shape[-1] != H.shape[-1]:
        raise ValueError(f"H must be (..., s, s) and g (..., s), got {H.shape} and {g.shape}")
    k = check_positive_int("k", k)
    s = g.shape[-1]
    if P is None:
        P = np.eye(s)
    P = check_finite_array("P", P, ndim=None)
    if P.shape[-2:] != (s, s):
        raise ValueError(f"P must have trailing shape {(s, s)}, got {P.shape}")

    def mv(M, v):
        return np.einsum("...ij,...j->...i", M, v)

    def dot(a, b):
        return np.einsum("...i,...i->...", a, b)

    batch = np.broadcast_shapes(H.shape[:-2], g.shape[:-1], P.shape[:-2])
    if w0 is None:
        w = np.zeros(batch + (s,))
    else:
        w = _weights("w0", w0, s)
        try:
            w = np.broadcast_to(w, batch + (s,)).copy()
        except ValueError:
            raise ValueError(f"w0 must broadcast to {batch + (s,)}, got shape {w.shape}") from None
    r = np.broadcast_to(g - mv(H, w), batch + (s,)).copy()
    u = mv(P, r)
    p = u.copy()
    rz = dot(r, u)
    out = [w.copy()]
    for _ in range(k):
        Hp = mv(H, p)
        den = dot(p, Hp)
        ok = den != 0
        alpha = np.where(ok, rz / np.where(ok, den, 1.0), 0.0)
        w = w + alpha[..., None] * p
        r = r - alpha[..., None] * Hp
        u = mv(P, r)
        rz_new = dot(r, u)
        okb = rz != 0
        beta = np.where(okb, rz_new / np.where(okb, rz, 1.0), 0.0)
        p = u + beta[..., None] * p
        rz = rz_new
        out.append(w.copy())
    return np.stack(out)


def ols_ar(y, s: int, ridge: float = 0.0) -> np.ndarray:
    """In-context least squares AR(s): w = (H + ridge I)^{-1} g, shape (..., s)."""
    ridge = check_nonneg_real("ridge", ridge)
    H, g, _ = context_stats(y, s)
    return np.linalg.solve(H + ridge * np.eye(H.shape[-1]), g[..., None])[..., 0]


def predict_ar(w, y, s: int) -> np.ndarray:
    """The AR prediction of y_T: w^T ybar_q, shape (...)."""
    q = query_features(y, s)
    return np.einsum("...i,...i->...", _weights("w", w, q.shape[-1]), q)


def attention_ar_weights(W_V, W_QK, y, s: int) -> np.ndarray:
    r"""The AR weights the attention layer applies to ybar_q (docs/math.md section 6, eq. 17).

    With b = (b_x, b_y) the last row of W_V, P = W_QK[:s, :s]^T and p = W_QK[s, :s]^T::

        y_hat_T = w_attn^T ybar_q,   w_attn = P H b_x + b_y P g + (b_x^T g + b_y gamma) p.

    Exact for every theta; returns w_attn, shape (..., s).
    """
    s = check_positive_int("s", s)
    W_V = check_finite_array("W_V", W_V, ndim=None)
    W_QK = check_finite_array("W_QK", W_QK, ndim=None)
    for name, W in (("W_V", W_V), ("W_QK", W_QK)):
        if W.ndim < 2 or W.shape[-2:] != (s + 1, s + 1):
            raise ValueError(f"{name} must have trailing shape {(s + 1, s + 1)}, got {W.shape}")
    H, g, gamma = context_stats(y, s)
    b = W_V[..., s, :]
    bx, by = b[..., :s], b[..., s]
    P = np.swapaxes(W_QK[..., :s, :s], -1, -2)
    p = W_QK[..., s, :s]
    PH = np.einsum("...ij,...jk->...ik", P, H)
    return (np.einsum("...ij,...j->...i", PH, bx)
            + by[..., None] * np.einsum("...ij,...j->...i", P, g)
            + (np.einsum("...i,...i->...", bx, g) + by * gamma)[..., None] * p)


def ar1_optimal_weights(kappa: float, family: str = "value"):
    r"""theta* of Theorem 4.1 (eq. 15) as (W_V, W_QK), 2 x 2 float64.

    ``family="value"`` (the paper's): W_QK = [[kappa, 0], [0, 0]], W_V = [[0, 0], [0, 1]]
    (b = e_2).  ``family="key"`` (docs/math.md section 4, the second family):
    W_QK = [[0, 0], [kappa, 0]], W_V = [[0, 0], [1, 0]] (b = e_1).  Both predict
    y_hat_T = (kappa / n) y_{T-1} sum_{t<=n} y_t y_{t+1}.
    """
    kappa = float(check_finite_array("kappa", kappa, ndim=0))
    W_V = np.zeros((2, 2))
    W_QK = np.zeros((2, 2))
    if family == "value":
        W_V[1, 1] = 1.0
        W_QK[0, 0] = kappa
    elif family == "key":
        W_V[1, 0] = 1.0
        W_QK[1, 0] = kappa
    else:
        raise ValueError(f"family must be 'value' or 'key', got {family!r}")
    return W_V, W_QK
