"""models.twins: noise-free twins of the trained runs (the protocol on the exact population loss).

Oracles: the trainer itself (its initial weights, read off a run whose first step moves the
weights by about 1e-12), a literal per-model loop of the trainer's optimiser steps
(``torch.optim.AdamW`` on one LinearSelfAttention, ``clip_grad_norm_``), and autograd of the
float64 forward pass over sampled sequences (Monte Carlo, 4 standard errors).  Controls: the
moments of T + 1 instead of T; a twin off the optimum moves.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

from models.attention import LinearSelfAttention
from models.config import TrainConfig, lr_schedule
from models.trainer import train
from models.twins import initial_weights, law_weights, population_loss_torch, run_twins
from theory.ar import token_matrix
from theory.optimum import population_optimum
from theory.population import beta_from_weights, population_moments
from theory.systems import LDSFamily


def _config(**kw):
    base = dict(setting="a", s=2, steps=60, batch=64, lr=3e-2, betas=(0.9, 0.99), seed=11, warmup_steps=10)
    base.update(kw)
    return TrainConfig(**base)


def test_initial_weights_are_the_trainers():
    """A run of one step at lr 1e-12 ends within 1e-9 (relative) of the twin's start."""
    cfg = _config(steps=1, lr=1e-12, warmup_steps=1, batch=16)
    run = train(cfg, device="cpu", progress=False)
    V0, Q0 = initial_weights(cfg)
    for W, W0 in ((run.W_V, V0), (run.W_QK, Q0)):
        assert np.abs(np.asarray(W, dtype=float) - W0).max() <= 1e-9 * np.abs(W0).max()
    other = initial_weights(cfg.replace(seed=12))
    assert np.abs(other[0] - V0).max() > 1e-4


def _reference_loop(cfg, mom, V0, Q0, steps, fused=False):
    """The trainer's step, one model at a time, with the population loss for the batch loss."""
    M, c = torch.tensor(mom.M), torch.tensor(mom.c)
    s = cfg.s
    out = []
    lrs = lr_schedule(cfg).tolist()
    for v0, q0 in zip(V0, Q0):
        model = LinearSelfAttention.from_weights(v0, q0, dtype=torch.float64)
        params = list(model.parameters())
        opt = torch.optim.AdamW(params, lr=cfg.lr, betas=cfg.betas, eps=cfg.eps, weight_decay=cfg.weight_decay,
                                fused=fused)
        for step in range(steps):
            b = model.W_V[s, :]
            beta = (b[:, None, None] * model.W_QK[None, :, :s]).reshape(-1)
            loss = 0.5 * beta @ M @ beta - beta @ c + 0.5 * mom.v
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, cfg.grad_clip)
            opt.param_groups[0]["lr"] = lrs[step]
            opt.step()
        out.append((model.W_V.detach().numpy().copy(), model.W_QK.detach().numpy().copy()))
    return np.stack([o[0] for o in out]), np.stack([o[1] for o in out])


@pytest.mark.parametrize("clip, weight_decay, fused", [(1000.0, 0.0, False), (1e-3, 0.0, False),
                                                      (1000.0, 0.01, False), (1000.0, 0.0, True)])
def test_batched_twins_take_the_per_model_steps(clip, weight_decay, fused):
    """Four twins at once equal four separate optimisers (1e-12): clipping binding or not,
    with weight decay, and against the trainer's fused AdamW (in float64)."""
    cfg = _config(grad_clip=clip, steps=40, weight_decay=weight_decay)
    mom = population_moments(LDSFamily("a", T=12), 2)
    V0, Q0 = law_weights(cfg.replace(init_scale=0.3), 4, seed=5)
    twins = run_twins(cfg, mom, V0, Q0)
    V, Q = _reference_loop(cfg, mom, V0, Q0, 40, fused=fused)
    assert np.abs(twins["W_V"] - V).max() <= 1e-12 * np.abs(V).max()
    assert np.abs(twins["W_QK"] - Q).max() <= 1e-12 * np.abs(Q).max()
    assert np.abs(twins["W_V"] - V0).max() > 1e-3                    # control: they moved


def _features(y, s):
    Y0 = token_matrix(y, s)
    Z, zq = Y0[..., :-1], Y0[..., :s, -1]
    C = np.einsum("mat,mbt->mab", Z, Z) / Z.shape[-1]
    from theory.population import feature_list
    return np.stack([C[:, r, l] * zq[:, k] for (r, l, k) in feature_list(s)], axis=1)


def test_population_gradient_against_autograd_of_the_forward_pass():
    """At random weights: the twins' gradient (autograd of the exact quadratic) is J^T (M beta
    - c), J = d beta / d theta (1e-12); M beta - c against the mean per-sequence gradient
    (beta.F - y) F over 2e5 sampled sequences (4 standard errors, every entry); and J^T of
    that mean against autograd of the float64 forward pass on the batch (1e-10).  Control:
    the moments of T + 1, more than 4 standard errors off."""
    s, T, m = 2, 6, 200_000
    fam = LDSFamily("a", T=T)
    rng = np.random.default_rng(3)
    V0 = rng.standard_normal((1, s + 1, s + 1))
    Q0 = rng.standard_normal((1, s + 1, s + 1))
    beta = beta_from_weights(V0[0], Q0[0])

    def beta_of(theta):
        v, q = theta[:(s + 1) ** 2].reshape(s + 1, s + 1), theta[(s + 1) ** 2:].reshape(s + 1, s + 1)
        return (v[s, :][:, None, None] * q[None, :, :s]).reshape(-1)
    J = torch.autograd.functional.jacobian(beta_of, torch.tensor(np.concatenate([V0.ravel(), Q0.ravel()]))).numpy()
    mom, wrong = population_moments(fam, s), population_moments(fam.replace(T=T + 1), s)
    V = torch.tensor(V0, requires_grad=True)
    Q = torch.tensor(Q0, requires_grad=True)
    population_loss_torch(V, Q, torch.tensor(mom.M), torch.tensor(mom.c), mom.v).sum().backward()
    g_theta = np.concatenate([V.grad.numpy().ravel(), Q.grad.numpy().ravel()])
    g_beta = mom.M @ beta - mom.c
    assert np.abs(g_theta - J.T @ g_beta).max() <= 1e-12 * np.abs(g_theta).max()
    _, y = fam.sample(rng, m)
    F = _features(y, s)
    per = (F @ beta - y[:, -1])[:, None] * F
    mean, se = per.mean(0), per.std(0) / np.sqrt(m)
    assert np.max(np.abs(g_beta - mean) / se) < 4
    assert np.max(np.abs(wrong.M @ beta - wrong.c - mean) / se) > 4
    layer = LinearSelfAttention.from_weights(V0[0], Q0[0], dtype=torch.float64)
    yt = torch.tensor(y)
    (0.5 * (layer.predict(yt) - yt[:, -1]).square().mean()).backward()
    auto = np.concatenate([layer.W_V.grad.numpy().ravel(), layer.W_QK.grad.numpy().ravel()])
    assert np.abs(auto - J.T @ mean).max() <= 1e-10 * np.abs(auto).max()


def test_a_twin_started_at_the_optimum_stays_there():
    """The full protocol (8000 steps, the AR(s) lr and betas) from theta* of setting a, s = 2:
    beta moves by at most 1e-8 relative.  Control: a twin from the trainer's init moves."""
    fam = LDSFamily("a", T=30)
    mom = population_moments(fam, 2)
    opt = population_optimum(mom, 0, starts=8, in_class=False)
    cfg = _config(steps=8000, warmup_steps=None)
    start = beta_from_weights(opt.W_V, opt.W_QK)
    twin = run_twins(cfg, mom, opt.W_V[None], opt.W_QK[None])
    end = beta_from_weights(twin["W_V"][0], twin["W_QK"][0])
    assert np.abs(end - start).max() <= 1e-8 * np.abs(start).max()
    V0, Q0 = initial_weights(cfg)
    moved = run_twins(cfg, mom, V0[None], Q0[None], steps=200)
    assert np.abs(beta_from_weights(moved["W_V"][0], moved["W_QK"][0])
                  - beta_from_weights(V0, Q0)).max() > 1e-3


def test_bad_input():
    cfg = _config()
    mom = population_moments(LDSFamily("a", T=12), 2)
    V0, Q0 = initial_weights(cfg)
    with pytest.raises(ValueError, match="W_V0 and W_QK0 must be arrays"):
        run_twins(cfg, mom, V0, Q0)
    with pytest.raises(ValueError, match="moments are for s = 2"):
        run_twins(cfg.replace(s=3), mom, V0[None], Q0[None])
    with pytest.raises(ValueError, match="steps must be <= config.steps"):
        run_twins(cfg, mom, V0[None], Q0[None], steps=10 ** 6)
    with pytest.raises(ValueError, match="config.layers must be 1"):
        initial_weights(cfg.replace(layers=2, forward="model"))
    with pytest.raises(ValueError, match="^moments must be PopulationMoments"):
        run_twins(cfg, {"M": None}, V0[None], Q0[None])
    out = run_twins(cfg, mom, V0[None], Q0[None], steps=3)
    assert out["steps"] == 3 and out["loss"].shape == (1,) and out["W_V"].shape == (1, 3, 3)
