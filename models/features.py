r"""The effective form of the layer used as the training loss: effective_features and effective_loss.

The layer's prediction is, exactly and for every theta (models/attention.py,
docs/math.md section 2)::

    y_hat_T = [T_theta(Y_0)]_{s+1, n+1} = b^T C W_QK z_q = sum_{r,l,m} b_r W_QK[l,m] C[r,l] z_q[m],

so a training step computes the features F[r,l,m] = C[r,l] z_q[m] of its batch (the
lagged second moments of the context, by one small matrix product) and the loss
1/2 mean (beta . F - y_T)^2 with beta[r,l,m] = b_r W_QK[l,m] built *from the layer's
own parameters* ``W_V`` and ``W_QK``; autograd differentiates through beta to them.
This is the same function of (W_V, W_QK) as the full forward pass, not an
approximation (``tests/test_features.py`` checks loss and gradients against
``LinearSelfAttention.forward`` to 1e-12 in float64).

Example: y = 1..6 (T = 6), s = 1, so n = 4 and z_q = (y_5) = (5)::

    C = (1/4) sum_{t=1..4} (y_t, y_{t+1})^T (y_t, y_{t+1}) = [[7.5, 10], [10, 13.5]]

>>> F, target = effective_features(torch.arange(1.0, 7.0, dtype=torch.float64)[:, None], 1)
>>> F[:, 0].tolist(), target.tolist()
([37.5, 50.0, 50.0, 67.5], [6.0])
"""
from __future__ import annotations

import threading

import numpy as np
import torch

from theory.validation import check_positive_int, check_type, check_window

__all__ = ["effective_features", "effective_loss", "stack_features", "stack_effective_loss"]

_MASKS: dict = {}
_MASKS_LOCK = threading.Lock()


def _lag_tables(s: int, T: int, device, dtype):
    """(M, index): C_flat = M @ P stacks the lag-k sums; C[r, l] = C_flat[index[r, l]]."""
    key = (s, T, str(device), dtype)
    with _MASKS_LOCK:
        hit = _MASKS.get(key)
    if hit is not None:
        return hit
    n = T - s - 1
    rows = sum(s + 1 - k for k in range(s + 1))
    cols = sum(T - k for k in range(s + 1))
    M = torch.zeros(rows, cols, dtype=dtype)
    index = np.empty((s + 1, s + 1), dtype=np.int64)
    row = col = 0
    for k in range(s + 1):
        for r in range(s + 1 - k):
            M[row, col + r: col + r + n] = 1.0 / n
            index[r, r + k] = index[r + k, r] = row
            row += 1
        col += T - k
    out = (M.to(device), torch.as_tensor(index.reshape(-1), device=device))
    with _MASKS_LOCK:
        _MASKS[key] = out
    return out


def effective_features(y_tm: torch.Tensor, s: int):
    r"""Features of a batch for the effective form of the layer; returns ``(F, target)``.

    ``y_tm`` is time-major (T, B).  ``F`` has shape ((s+1)^2 s, B) with
    ``F[(r, l, m)] = C[r, l] z_q[m]`` flattened in (r, l, m) order, where
    ``C = (1/n) sum_t z_t z_t^T`` and ``z_q = (y_{T-s}..y_{T-1})``; ``target = y_T`` (B,).
    Then ``y_hat_T = beta . F`` with ``beta[r, l, m] = W_V[s, r] W_QK[l, m]``.
    """
    check_type("y_tm", y_tm, torch.Tensor, "a (T, B) torch.Tensor")
    if y_tm.ndim != 2:
        raise ValueError(f"y_tm must be a (T, B) torch.Tensor, got shape {tuple(y_tm.shape)}")
    s = check_positive_int("s", s)
    T, B = y_tm.shape
    check_window(s, T)
    M, index = _lag_tables(s, T, y_tm.device, y_tm.dtype)
    P = torch.cat([y_tm[:T - k] * y_tm[k:] for k in range(s + 1)], dim=0)   # lag-k products
    C = (M @ P).index_select(0, index)                     # ((s+1)^2, B)
    zq = y_tm[T - s - 1:T - 1]                             # (s, B)
    F = (C[:, None, :] * zq[None, :, :]).reshape(-1, B)
    return F, y_tm[T - 1]


def _beta(W_V: torch.Tensor, W_QK: torch.Tensor, s: int) -> torch.Tensor:
    """beta[r, l, m] = W_V[s, r] W_QK[l, m] (m < s), flattened in (r, l, m) order."""
    return torch.outer(W_V[s], W_QK[:, :s].reshape(-1)).reshape(-1)


def effective_loss(W_V: torch.Tensor, W_QK: torch.Tensor, F: torch.Tensor, target: torch.Tensor):
    """1/2 mean (y_hat - y_T)^2 with y_hat = beta(W_V, W_QK) . F (differentiable)."""
    s = W_V.shape[0] - 1
    r = _beta(W_V, W_QK, s) @ F - target
    return torch.dot(r, r) * (0.5 / r.shape[0])


def stack_features(y_tm: torch.Tensor, s: int):
    r"""The context moments of a batch for the effective form of a *stack* of layers:
    ``(C, zq, target)`` with C (B, s+1, s+1) = (1/n) sum_t z_t z_t^T, zq (B, s+1) = the query
    token (last entry 0) and target = y_T (B,).

    A layer updates every token by the same matrix, Y -> (I + G) Y with G = W_V C W_QK
    (the query column is neither key nor value), so the next layer's context moments are
    (I + G) C (I + G)^T and its query (I + G) z_q: a stack of L layers is L steps of this
    (s+1) x (s+1) recursion per sequence, whatever T (:func:`stack_effective_loss`).
    Worked example (y = 1..6, s = 1): C = [[7.5, 10], [10, 13.5]] and zq = (5, 0).
    """
    check_type("y_tm", y_tm, torch.Tensor, "a (T, B) torch.Tensor")
    if y_tm.ndim != 2:
        raise ValueError(f"y_tm must be a (T, B) torch.Tensor, got shape {tuple(y_tm.shape)}")
    s = check_positive_int("s", s)
    T, B = y_tm.shape
    check_window(s, T)
    M, index = _lag_tables(s, T, y_tm.device, y_tm.dtype)
    P = torch.cat([y_tm[:T - k] * y_tm[k:] for k in range(s + 1)], dim=0)
    C = (M @ P).index_select(0, index).T.reshape(B, s + 1, s + 1)
    zq = torch.cat([y_tm[T - s - 1:T - 1], y_tm.new_zeros(1, B)], dim=0).T
    return C, zq.contiguous(), y_tm[T - 1]


def stack_effective_loss(W_Vs, W_QKs, C: torch.Tensor, zq: torch.Tensor, target: torch.Tensor):
    """1/2 mean (y_hat - y_T)^2 of a stack, by the recursion of :func:`stack_features`:
    for each layer G = W_V C W_QK, C <- (I + G) C (I + G)^T, q <- (I + G) q; y_hat = q[s]."""
    q = zq[:, :, None]
    eye = torch.eye(C.shape[-1], dtype=C.dtype, device=C.device)
    for W_V, W_QK in zip(W_Vs, W_QKs):
        step = eye + W_V @ C @ W_QK
        C = step @ C @ step.transpose(1, 2)
        q = step @ q
    r = q[:, -1, 0] - target
    return torch.dot(r, r) * (0.5 / r.shape[0])
