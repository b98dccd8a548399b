r"""The single-layer linear self-attention (LSA) model, written as docs/math.md section 2 writes it.

::

    T_theta(Y) = Y + (1/n) W_V Y M Y^T W_QK Y,     M = diag(1, ..., 1, 0)  ((n+1) x (n+1))
    y_hat_T    = [T_theta(Y_0)]_{s+1, n+1}            (1-based; [s, n] 0-based)

with full (s+1) x (s+1) matrices W_V and W_QK = W_Q W_K^T, no softmax, no W_O, no MLP;
the query column is neither key nor value (M zeroes it).  Exact effective form, for every
theta (b^T = last row of W_V, C = (1/n) sum_t z_t z_t^T)::

    y_hat_T = b^T C W_QK z_q       (the training loss uses this form: models/features.py).

Tokens are those of :func:`theory.ar.token_matrix` (same layout, same off-by-one):
for y = 1..6 and s = 2, Y_0 = [[1,2,3,4],[2,3,4,5],[3,4,5,0]].
"""
from __future__ import annotations

import numpy as np
import torch
from torch import nn

from theory.validation import (check_choice, check_finite_array, check_nonneg_real, check_positive_int,
                               check_type, check_window)

from .runtime import resolve_device

__all__ = ["build_tokens", "LinearSelfAttention", "StackedAttention", "DTYPES", "MAX_WINDOW", "init_scale_limit"]

#: the floating dtypes a layer holds its weights in.
DTYPES = (torch.float32, torch.float64)
#: the largest window a layer accepts: its (s+1)^2 s features per sequence are 1e9 there.
MAX_WINDOW = 1000


def build_tokens(y: torch.Tensor, s: int) -> torch.Tensor:
    """Y_0 of shape (B, s+1, n+1) from observations y of shape (B, T); see module doc."""
    check_type("y", y, torch.Tensor, "a torch.Tensor")
    if y.ndim != 2:
        raise ValueError(f"y must have shape (B, T), got {tuple(y.shape)}")
    s, T = check_window(s, y.shape[1])
    if not torch.isfinite(y).all():
        raise ValueError("y must be finite (no NaN or inf)")
    n = T - s - 1
    Z = y.unfold(1, s + 1, 1)[:, :n, :].transpose(1, 2)           # (B, s+1, n): Z[:, r, t] = y_{t+r}
    zq = torch.cat([y[:, T - s - 1:T - 1], y.new_zeros(y.shape[0], 1)], dim=1)
    return torch.cat([Z, zq[:, :, None]], dim=2)


def _as_matrix(name, W, dtype) -> torch.Tensor:
    """``W`` (numpy, torch or nested lists of reals) as a tensor of ``dtype``; ValueError naming it."""
    if isinstance(W, torch.Tensor):
        if W.is_complex():
            raise ValueError(f"{name} must be real, got a complex tensor")
        return W.detach().to(dtype)
    return torch.as_tensor(check_finite_array(name, W, ndim=None), dtype=dtype)


def init_scale_limit(dtype: torch.dtype) -> float:
    """The largest ``init_scale`` whose normal draws stay finite in ``dtype``: the dtype's
    largest value over 16 (torch.randn's Box-Muller draws stay below 9 in magnitude: at most
    sqrt(-2 ln 2^-53) = 8.6 in float64)."""
    return float(torch.finfo(dtype).max) / 16


class LinearSelfAttention(nn.Module):
    """One linear attention layer for window ``s``: parameters W_V, W_QK of size (s+1, s+1).

    ``init`` is "normal" (iid N(0, init_scale^2)) or "zeros".  ``forward(Y0)`` returns
    ``(T_theta(Y0), y_hat)`` with shapes (B, s+1, n+1) and (B,).
    """

    def __init__(self, s: int, *, init: str = "normal", init_scale: float = 0.01,
                 dtype: torch.dtype = torch.float32, device=None,
                 generator: torch.Generator | None = None):
        super().__init__()
        s = check_positive_int("s", s)
        if s > MAX_WINDOW:
            raise ValueError(f"s must be <= {MAX_WINDOW} (the layer's features number (s+1)^2 s), got {s}")
        check_choice("dtype", dtype, DTYPES)
        check_choice("init", init, ("normal", "zeros"))
        init_scale = check_nonneg_real("init_scale", init_scale)
        if init_scale > init_scale_limit(dtype):
            raise ValueError(f"init_scale must be <= {init_scale_limit(dtype):.4g} for {dtype} (finite "
                             f"initial weights), got {init_scale!r}")
        if generator is not None:
            check_type("generator", generator, torch.Generator, "a torch.Generator or None")
        if device is not None:
            device = resolve_device(device)
        self.s = s
        shape = (s + 1, s + 1)
        if init == "zeros":
            wv = torch.zeros(shape, dtype=dtype)
            wqk = torch.zeros(shape, dtype=dtype)
        else:
            wv = torch.randn(shape, dtype=dtype, generator=generator) * init_scale
            wqk = torch.randn(shape, dtype=dtype, generator=generator) * init_scale
        self.W_V = nn.Parameter(wv.to(device))
        self.W_QK = nn.Parameter(wqk.to(device))

    @classmethod
    def from_weights(cls, W_V, W_QK, *, dtype: torch.dtype = torch.float64, device=None):
        """A layer holding the given (s+1) x (s+1) weights (numpy or torch)."""
        check_choice("dtype", dtype, DTYPES)
        W_V, W_QK = _as_matrix("W_V", W_V, dtype), _as_matrix("W_QK", W_QK, dtype)
        if W_V.ndim != 2 or W_V.shape[0] != W_V.shape[1] or W_V.shape[0] < 2:
            raise ValueError(f"W_V must be an (s+1) x (s+1) matrix with s >= 1, got {tuple(W_V.shape)}")
        if W_QK.shape != W_V.shape:
            raise ValueError(f"W_QK must have the shape of W_V, {tuple(W_V.shape)}, got {tuple(W_QK.shape)}")
        for name, W in (("W_V", W_V), ("W_QK", W_QK)):
            if not torch.isfinite(W).all():
                raise ValueError(f"{name} must be finite (no NaN or inf)")
        layer = cls(W_V.shape[0] - 1, init="zeros", dtype=dtype, device=device)
        with torch.no_grad():
            layer.W_V.copy_(W_V)
            layer.W_QK.copy_(W_QK)
        return layer

    def forward(self, Y0: torch.Tensor):
        check_type("Y0", Y0, torch.Tensor, "a torch.Tensor")
        if Y0.dtype != self.W_V.dtype:
            raise ValueError(f"Y0 must have the layer's dtype {self.W_V.dtype}, got {Y0.dtype}")
        if Y0.ndim != 3 or Y0.shape[1] != self.s + 1 or Y0.shape[2] < 2:
            raise ValueError(f"Y0 must have shape (B, {self.s + 1}, n+1) with n >= 1, got {tuple(Y0.shape)}")
        if not torch.isfinite(Y0).all():
            raise ValueError("Y0 must be finite (no NaN or inf)")
        n = Y0.shape[2] - 1
        YM = Y0[:, :, :n]                                   # Y M: the query column zeroed (dropped)
        C = YM @ YM.transpose(1, 2) / n                     # (1/n) Y M Y^T
        out = Y0 + self.W_V @ C @ self.W_QK @ Y0
        return out, out[:, self.s, n]

    def predict(self, y: torch.Tensor) -> torch.Tensor:
        """y_hat_T for observations y (B, T), via the full forward pass."""
        return self.forward(build_tokens(y, self.s))[1]

    def weights(self) -> tuple[np.ndarray, np.ndarray]:
        """(W_V, W_QK) as float64 numpy arrays."""
        return (self.W_V.detach().cpu().double().numpy(), self.W_QK.detach().cpu().double().numpy())


class StackedAttention(nn.Module):
    """``layers`` linear attention layers of window ``s`` on one residual stream::

        Y_0 = tokens,   Y_(k+1) = T_(theta_k)(Y_k) = Y_k + (1/n) W_V^k Y_k M Y_k^T W_QK^k Y_k,
        y_hat_T = [Y_L]_(s+1, n+1)

    -- the same tokens and the paper's parametrisation in every layer (docs/math.md
    section 7).  With one layer it is :class:`LinearSelfAttention` itself: the same module
    and the same initial weights from the same generator.
    """

    def __init__(self, s: int, layers: int, *, init: str = "normal", init_scale: float = 0.01,
                 dtype: torch.dtype = torch.float32, device=None, generator: torch.Generator | None = None):
        super().__init__()
        layers = check_positive_int("layers", layers)
        self.s = check_positive_int("s", s)
        self.blocks = nn.ModuleList([LinearSelfAttention(s, init=init, init_scale=init_scale, dtype=dtype,
                                                         device=device, generator=generator)
                                     for _ in range(layers)])

    @classmethod
    def from_weights(cls, W_V, W_QK, *, dtype: torch.dtype = torch.float64, device=None):
        """A stack holding per-layer weights of shape (L, s+1, s+1) (numpy or torch)."""
        W_V, W_QK = _as_matrix("W_V", W_V, dtype), _as_matrix("W_QK", W_QK, dtype)
        if W_V.ndim != 3 or W_V.shape != W_QK.shape:
            raise ValueError(f"W_V and W_QK must both be (L, s+1, s+1), got {tuple(W_V.shape)} and "
                             f"{tuple(W_QK.shape)}")
        stack = cls(W_V.shape[1] - 1, W_V.shape[0], init="zeros", dtype=dtype, device=device)
        for block, V, Q in zip(stack.blocks, W_V, W_QK):
            fresh = LinearSelfAttention.from_weights(V, Q, dtype=dtype, device=device)
            block.load_state_dict(fresh.state_dict())
        return stack

    def forward(self, Y0: torch.Tensor):
        Y = Y0
        for block in self.blocks:
            Y = block(Y)[0]
        n = Y.shape[2] - 1
        return Y, Y[:, self.s, n]

    def predict(self, y: torch.Tensor) -> torch.Tensor:
        """y_hat_T for observations y (B, T), through every layer."""
        return self.forward(build_tokens(y, self.s))[1]

    def weights(self) -> tuple[np.ndarray, np.ndarray]:
        """(W_V, W_QK) as float64 numpy arrays of shape (L, s+1, s+1)."""
        ws = [b.weights() for b in self.blocks]
        return np.stack([w[0] for w in ws]), np.stack([w[1] for w in ws])
