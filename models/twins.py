r"""Noise-free twins: the paper's training protocol with the exact population loss in place of sampled batches.

A trained run minimises 1/2 mean (y_hat - y_T)^2 over fresh batches; its *twin* starts from
the same initial weights (the trainer's own initialisation: same seed, same init law,
:func:`initial_weights`) and takes the same optimiser steps -- ``torch.optim.AdamW`` with
the run's lr, betas, eps and weight decay, the trainer's schedule
(``models.config.lr_schedule``) and global-norm clipping at ``grad_clip`` -- on the exact
population loss of the layer (docs/math.md section 2.2)

    L(theta) = 1/2 beta^T M beta - c^T beta + 1/2 v,     beta_(r,l,m) = b_r W_QK[l, m],

in float64, with (M, c, v) from ``theory.population`` (exact for settings a, b, c; Monte
Carlo over systems for d, whose error the caller states).  So a twin says where the
protocol goes without sampling noise.  It is not a replay of the run in every other
respect: the trainer runs float32 with fused AdamW, a twin float64 without (the fused and
plain float64 steps agree to rounding), and where the clipping binds the trajectory is
sensitive to its start (a 1e-15 change grows to about 1e-3 in a few hundred steps), so a
twin and its run agree step by step only over short stretches; their end points are
compared by the stationary point they are headed for.

Many twins run at once: the weights of n twins are one (n, s+1, s+1) tensor per matrix,
AdamW is elementwise (its state and bias correction are per entry, its step count shared),
so one optimiser over the stacked tensors takes exactly the steps of n separate ones; the
clipping, which the trainer applies to the global norm of one model's gradients, is
applied per twin (:func:`clip_per_twin`, torch's formula max_norm / (norm + 1e-6), capped
at 1).  tests/test_twins.py checks this against a literal per-model loop of the trainer's
steps, and the population gradient against autograd of the forward pass on sampled
sequences.

Worked example: with no weight decay (the protocol's) a twin started at a stationary point
of L stays there, since its gradient is 0 (up to the optimiser's eps; tests/test_twins.py);
AdamW's decoupled weight decay would move it.
"""
from __future__ import annotations

import numpy as np
import torch

from theory.population import PopulationMoments, feature_list
from theory.validation import check_positive_int, check_type

from .attention import LinearSelfAttention
from .config import DTYPES, TrainConfig, lr_schedule, stream_seed
from .trainer import _STREAM_INIT

__all__ = ["initial_weights", "law_weights", "population_loss_torch", "clip_per_twin", "run_twins"]


def initial_weights(config: TrainConfig) -> tuple[np.ndarray, np.ndarray]:
    """(W_V, W_QK) of the run ``config`` before its first step, exactly as the trainer draws
    them (its generator stream and dtype), as float64 arrays of shape (s+1, s+1)."""
    check_type("config", config, TrainConfig, "a TrainConfig")
    if config.layers != 1:
        raise ValueError(f"config.layers must be 1 for a twin (one layer), got {config.layers}")
    gen = torch.Generator().manual_seed(stream_seed(config.seed, _STREAM_INIT))
    layer = LinearSelfAttention(config.s, init=config.init, init_scale=config.init_scale,
                                dtype=DTYPES[config.dtype], generator=gen)
    return tuple(np.asarray(W.detach().double().numpy()) for W in (layer.W_V, layer.W_QK))


def law_weights(config: TrainConfig, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` further initialisations from the trainer's init law (``config.init``,
    ``config.init_scale``, its dtype), drawn with seeds derived from ``seed``: arrays
    (n, s+1, s+1)."""
    n = check_positive_int("n", n)
    out = [initial_weights(config.replace(seed=int(stream_seed(seed, k)))) for k in range(n)]
    return np.stack([o[0] for o in out]), np.stack([o[1] for o in out])


def _beta(W_V: torch.Tensor, W_QK: torch.Tensor, s: int) -> torch.Tensor:
    """beta (n, f) in theory.population's feature order: b_r W_QK[l, m], b = W_V[s, :]."""
    b = W_V[:, s, :]
    return (b[:, :, None, None] * W_QK[:, None, :, :s]).reshape(W_V.shape[0], -1)


def population_loss_torch(W_V: torch.Tensor, W_QK: torch.Tensor, M: torch.Tensor, c: torch.Tensor,
                          v: float) -> torch.Tensor:
    """L per twin (n,): 1/2 beta^T M beta - c^T beta + 1/2 v (differentiable)."""
    s = W_V.shape[-1] - 1
    beta = _beta(W_V, W_QK, s)
    return 0.5 * torch.einsum("ni,ij,nj->n", beta, M, beta) - beta @ c + 0.5 * v


def clip_per_twin(grads: list[torch.Tensor], max_norm: float) -> torch.Tensor:
    """Scale each twin's gradients (in place) as ``torch.nn.utils.clip_grad_norm_`` scales one
    model's: by min(1, max_norm / (norm + 1e-6)), norm over all its entries.  Returns the norms."""
    norms = torch.sqrt(sum(g.reshape(g.shape[0], -1).square().sum(1) for g in grads))
    coef = torch.clamp(max_norm / (norms + 1e-6), max=1.0)
    for g in grads:
        g.mul_(coef.reshape((-1,) + (1,) * (g.ndim - 1)))
    return norms


def run_twins(config: TrainConfig, moments: PopulationMoments, W_V0, W_QK0, *, steps: int | None = None,
              record_every: int = 0) -> dict:
    """Run n twins from (W_V0, W_QK0) (arrays (n, s+1, s+1)) with the optimiser settings and
    schedule of ``config`` on the population loss of ``moments``.

    Returns ``W_V``, ``W_QK`` (float64 arrays (n, s+1, s+1)) at the end, ``loss`` (n,), and,
    with ``record_every`` > 0, ``history`` (the losses every that many steps).  ``steps``
    shortens the run (the schedule stays the config's: the first ``steps`` of it)."""
    check_type("config", config, TrainConfig, "a TrainConfig")
    check_type("moments", moments, PopulationMoments, "PopulationMoments")
    s = config.s
    if moments.s != s:
        raise ValueError(f"moments are for s = {moments.s}, the config for s = {s}")
    W_V0, W_QK0 = (np.asarray(W, dtype=np.float64) for W in (W_V0, W_QK0))
    if W_V0.ndim != 3 or W_V0.shape[1:] != (s + 1, s + 1) or W_QK0.shape != W_V0.shape:
        raise ValueError(f"W_V0 and W_QK0 must be arrays (n, {s + 1}, {s + 1}), got {W_V0.shape} and {W_QK0.shape}")
    n_steps = config.steps if steps is None else check_positive_int("steps", steps)
    if n_steps > config.steps:
        raise ValueError(f"steps must be <= config.steps = {config.steps}, got {n_steps}")
    if len(feature_list(s)) != moments.c.size:
        raise ValueError("moments do not match the feature list of s")
    V = torch.tensor(W_V0, dtype=torch.float64, requires_grad=True)
    Q = torch.tensor(W_QK0, dtype=torch.float64, requires_grad=True)
    M = torch.tensor(moments.M, dtype=torch.float64)
    c = torch.tensor(moments.c, dtype=torch.float64)
    opt = torch.optim.AdamW([V, Q], lr=config.lr, betas=config.betas, eps=config.eps,
                            weight_decay=config.weight_decay)
    lrs = lr_schedule(config).tolist()
    history = []
    for step in range(n_steps):
        loss = population_loss_torch(V, Q, M, c, moments.v)
        opt.zero_grad(set_to_none=True)
        loss.sum().backward()                       # twins are independent: the sum's gradient is each one's
        if config.grad_clip is not None:
            clip_per_twin([V.grad, Q.grad], config.grad_clip)
        opt.param_groups[0]["lr"] = lrs[step]
        opt.step()
        if record_every and step % record_every == 0:
            history.append(loss.detach().numpy().copy())
    with torch.no_grad():
        final = population_loss_torch(V, Q, M, c, moments.v).numpy()
    out = {"W_V": V.detach().numpy().copy(), "W_QK": Q.detach().numpy().copy(), "loss": final, "steps": n_steps}
    if record_every:
        out["history"] = np.array(history)
    return out
