"""models.trainer (config, sampler, features, result, loop), models.cache, models.runtime.

Oracles: the theory's exact covariance (theory.systems.covariance) and exact setting-(a)
moments (theory.reference.exact_moments_a) for the torch sampler; the layer's own forward
pass (LinearSelfAttention.forward + autograd) for the effective loss used in training;
theory.population.beta_from_weights for the learned coefficients; Theorem 4.1's kappa
(exact, docs/math.md section 4) for a short sanity run.
"""
from __future__ import annotations

import json
import logging
import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import torch

from models import cache as cache_mod
from models.attention import LinearSelfAttention, build_tokens
from models.runtime import cap_threads, resolve_device, torch_threads
from models.trainer import (
    KEY_FORMAT,
    SHARD_SIZE,
    TorchLDSSampler,
    TrainConfig,
    TrainResult,
    effective_features,
    effective_loss,
    lr_schedule,
    stream_seed,
    train,
)
from theory.reference import exact_moments_a
from theory.population import beta_from_weights
from theory.systems import SETTINGS, LDSFamily, Systems, covariance

REPO = Path(__file__).resolve().parents[1]
REFERENCE_KAPPA = 0.2052454015138651  # docs/math.md section 4, setting (a) defaults
TINY = dict(steps=60, batch=64)


def sample(sampler, m, generator):
    """m fresh systems, one trajectory each, (m, T): the training path draw -> finish."""
    return sampler.finish(sampler.draw(m, generator)).T


def simulate(sampler, systems, generator):
    """One torch trajectory per given system, (m, T): the sampler's simulation on the
    systems' own A, fed through ``finish`` with freshly drawn normals."""
    fam = sampler.family
    if (systems.d != fam.d or not np.array_equal(systems.Sigma_w, fam.process_noise_cov())
            or not np.array_equal(systems.Sigma_0, fam.initial_cov())
            or float(systems.sigma_v) != fam.sigma_v or not np.all(systems.c == 1.0)):
        raise ValueError("systems must share the sampler family's d, c and noise model")
    m, T, d = systems.m, fam.T, fam.d
    z = torch.randn((T + 1) * d * m + T * m, generator=generator, dtype=sampler.dtype)
    if systems.lam is not None:
        drawn = ("diag", torch.as_tensor(systems.lam.T.copy(), dtype=sampler.dtype), z)
    else:
        drawn = ("full", torch.as_tensor(systems.A, dtype=sampler.dtype).permute(1, 2, 0).contiguous(), z)
    return sampler.finish(drawn).T


def beta(result):
    """Gauge-invariant coefficients beta[r, l, m] = W_V[s, r] W_QK[l, m], shape (s+1, s+1, s)."""
    s = result.config.s
    return beta_from_weights(result.W_V, result.W_QK).reshape(s + 1, s + 1, s)


# ----------------------------------------------------------------------------- config
@pytest.mark.parametrize("field, value", [
    ("setting", "z"), ("setting", None), ("s", 0), ("s", 1.5), ("s", True), ("d", 0),
    ("T", 2), ("T", 30.0), ("sigma_w", -0.1), ("sigma_v", float("nan")),
    ("sigma_0", float("inf")), ("sigma_w", "0.1"), ("cond_max", 0.5), ("steps", 0),
    ("batch", 0), ("batch", 2.0), ("lr", -1e-3), ("lr", 0.0), ("lr", float("nan")),
    ("lr_min", -1.0), ("lr_min", 1.0), ("warmup_steps", -1), ("warmup_steps", 10 ** 6),
    ("weight_decay", -0.1), ("weight_decay", float("nan")), ("betas", (1.0, 0.9)),
    ("betas", (0.9,)), ("betas", "ab"), ("eps", 0.0), ("grad_clip", 0.0),
    ("grad_clip", float("inf")), ("init", "xavier"), ("init_scale", -1.0), ("seed", -1),
    ("seed", 2 ** 63), ("seed", 1.0), ("dtype", "float16"), ("forward", "full"),
])
def test_config_rejects_bad_field_naming_it(field, value):
    with pytest.raises(ValueError, match=rf"^{field}"):
        TrainConfig(**{field: value})


def test_config_T_must_exceed_window():
    with pytest.raises(ValueError, match=r"^T must exceed s \+ 1"):
        TrainConfig(s=3, T=4)
    TrainConfig(s=3, T=5, steps=1, batch=1)  # n = 1 context token: allowed


def test_config_defaults_are_the_paper_protocol():
    c = TrainConfig()
    assert (c.setting, c.s, c.d, c.T, c.sigma_w, c.sigma_v, c.sigma_0) == ("a", 1, 5, 30, 0.1, 0.1, 1.0)
    assert (c.steps, c.batch, c.weight_decay, c.grad_clip, c.dtype) == (8000, 3000, 0.0, 1000.0, "float32")
    assert (c.lr, c.lr_min, c.betas, c.init_scale) == (1e-3, 0.0, (0.9, 0.999), 0.01)
    assert c.warmup == 400 and c.n == 28
    assert c.family() == LDSFamily("a")


def test_key_is_stable_normalised_and_sensitive_to_every_field():
    base = TrainConfig()
    assert base.key() == TrainConfig().key()
    assert len(base.key()) == 64 and int(base.key(), 16) >= 0
    # documented recipe
    import hashlib
    blob = json.dumps({"format": KEY_FORMAT, "config": base.to_dict()}, sort_keys=True,
                      separators=(",", ":"))
    assert base.key() == hashlib.sha256(blob.encode()).hexdigest()
    # ints and floats normalised
    assert TrainConfig(sigma_0=1).key() == base.key()
    assert TrainConfig(betas=[0.9, 0.999]).key() == base.key()
    changes = dict(setting="b", s=2, d=4, T=31, sigma_w=0.2, sigma_v=0.05, sigma_0=0.5,
                   cond_max=5.0, steps=7999, batch=2999, lr=2e-3, lr_min=1e-4, warmup_steps=100,
                   weight_decay=1e-4, betas=(0.8, 0.999), eps=1e-7, grad_clip=None, init="zeros",
                   init_scale=0.1, seed=1, dtype="float64", forward="model", radius=0.9, layers=2)
    from dataclasses import fields
    assert set(changes) == {f.name for f in fields(TrainConfig)}
    keys = {base.key()}
    for name, value in changes.items():
        keys.add(base.replace(**{name: value}).key())
    assert len(keys) == len(changes) + 1


def test_config_dict_round_trip():
    c = TrainConfig(setting="c", s=2, steps=10, batch=5, warmup_steps=2, grad_clip=None)
    d = json.loads(json.dumps(c.to_dict()))
    assert TrainConfig.from_dict(d) == c
    with pytest.raises(ValueError, match="unknown fields"):
        TrainConfig.from_dict({**d, "colour": "red"})


def test_lr_schedule_warmup_then_cosine():
    c = TrainConfig(steps=1000, lr=0.01, lr_min=0.001, warmup_steps=100)
    lr = lr_schedule(c)
    assert lr.shape == (1000,)
    np.testing.assert_allclose(lr[:100], 0.01 * np.arange(1, 101) / 100)
    assert lr[100] == pytest.approx(0.01)
    assert np.all(np.diff(lr[100:]) < 0)
    assert lr[-1] == pytest.approx(0.001, rel=1e-3) and lr[-1] > 0.001
    assert np.all(lr > 0)
    c0 = TrainConfig(steps=10, warmup_steps=0)
    assert lr_schedule(c0)[0] == c0.lr
    assert np.all(lr_schedule(TrainConfig(steps=5, warmup_steps=5)) == c0.lr * np.arange(1, 6) / 5)


def test_trainer_reexports_its_pieces():
    """``from models.trainer import ...`` keeps working after the split into modules."""
    import models.config, models.features, models.result, models.sampler, models.trainer as mt
    assert mt.TrainConfig is models.config.TrainConfig and mt.KEY_FORMAT == models.config.KEY_FORMAT
    assert mt.lr_schedule is models.config.lr_schedule and mt.stream_seed is models.config.stream_seed
    assert mt.TorchLDSSampler is models.sampler.TorchLDSSampler
    assert mt.effective_features is models.features.effective_features
    assert mt.effective_loss is models.features.effective_loss
    assert mt.TrainResult is models.result.TrainResult
    assert all(hasattr(mt, name) for name in mt.__all__)


def test_stream_seed():
    assert stream_seed(0, 0, 1, 0) != stream_seed(0, 0, 0, 1)
    assert stream_seed(1, 2, 3) == stream_seed(1, 2, 3)
    assert 0 <= stream_seed(2 ** 70, 5) < 2 ** 63
    with pytest.raises(ValueError, match=r"^words\[0\] must be an integer >= 0"):
        stream_seed(-1)


# ----------------------------------------------------------------------------- effective form
@pytest.mark.parametrize("s, T", [(1, 30), (2, 12), (3, 9), (1, 3)])
def test_effective_loss_equals_forward_pass_value_and_gradient(s, T):
    """The training loss is the layer's: same value and same gradients as autograd
    through LinearSelfAttention.forward, in float64, for random weights and data."""
    g = torch.Generator().manual_seed(10 * s + T)
    y = torch.randn(257, T, generator=g, dtype=torch.float64) * 1.5
    model = LinearSelfAttention(s, init_scale=0.7, dtype=torch.float64, generator=g)
    out, y_hat = model(build_tokens(y, s))
    loss_full = 0.5 * (y_hat - y[:, -1]).square().mean()
    gV_full, gQ_full = torch.autograd.grad(loss_full, [model.W_V, model.W_QK])

    F, target = effective_features(y.T.contiguous(), s)
    assert F.shape == ((s + 1) ** 2 * s, 257)
    assert torch.equal(target, y[:, -1])
    beta = (model.W_V[s][:, None, None] * model.W_QK[None, :, :s]).reshape(-1)
    torch.testing.assert_close(beta @ F, y_hat, rtol=1e-12, atol=1e-12)
    loss_eff = effective_loss(model.W_V, model.W_QK, F, target)
    gV, gQ = torch.autograd.grad(loss_eff, [model.W_V, model.W_QK])
    torch.testing.assert_close(loss_eff, loss_full, rtol=1e-12, atol=0)
    torch.testing.assert_close(gV, gV_full, rtol=1e-10, atol=1e-13)
    torch.testing.assert_close(gQ, gQ_full, rtol=1e-10, atol=1e-13)
    # the parameters the effective form ignores have zero gradient in the full model too
    assert torch.all(gV_full[:s] == 0) and torch.all(gQ_full[:, s] == 0)


def test_effective_loss_is_not_vacuous():
    """A deliberately wrong feature map (query shifted by one) gives a different loss."""
    g = torch.Generator().manual_seed(0)
    y = torch.randn(64, 10, generator=g, dtype=torch.float64)
    model = LinearSelfAttention(1, init_scale=0.5, dtype=torch.float64, generator=g)
    F, target = effective_features(y.T.contiguous(), 1)
    F_wrong, _ = effective_features(torch.roll(y, 1, dims=1).T.contiguous(), 1)
    right = effective_loss(model.W_V, model.W_QK, F, target)
    wrong = effective_loss(model.W_V, model.W_QK, F_wrong, target)
    assert abs((right - wrong).detach().item()) > 1e-6


# ----------------------------------------------------------------------------- sampler law
def _zscores(samples_a, mean_b, se_b=0.0):
    """(mean(samples_a) - mean_b) / combined standard error, per column."""
    n = samples_a.shape[0]
    se = np.sqrt(samples_a.var(axis=0, ddof=1) / n + se_b ** 2)
    return (samples_a.mean(axis=0) - mean_b) / se


class _CorrelatedNoise(LDSFamily):
    """Setting a with full (correlated) Sigma_w and Sigma_0: exercises the samplers'
    "full" noise factor, which no named setting reaches."""

    def process_noise_cov(self):
        return self.sigma_w ** 2 * (0.6 * np.eye(self.d) + 0.4 * np.ones((self.d, self.d)))

    def initial_cov(self):
        return self.sigma_0 ** 2 * (0.5 * np.eye(self.d) + 0.5 * np.ones((self.d, self.d)))


@pytest.mark.parametrize("setting", SETTINGS + ("correlated",))
def test_torch_simulation_given_systems_matches_exact_covariance(setting):
    """Conditionally on the systems, y ~ N(0, K(A)): compare the empirical second
    moments of many torch trajectories per system with the theory's exact covariance."""
    kw = dict(T=7, d=3, sigma_w=0.3, sigma_v=0.2, sigma_0=0.8)
    fam = _CorrelatedNoise("a", **kw) if setting == "correlated" else LDSFamily(setting, **kw)
    systems = fam.sample_systems(np.random.default_rng(1), 3)
    K = covariance(systems, fam.T)
    reps = 20000
    rep_systems = Systems(A=np.repeat(systems.A, reps, 0), c=np.repeat(systems.c, reps, 0),
                                Sigma_w=systems.Sigma_w, Sigma_0=systems.Sigma_0,
                                sigma_v=systems.sigma_v,
                                lam=None if systems.lam is None else np.repeat(systems.lam, reps, 0),
                                T=fam.T)
    sampler = TorchLDSSampler(fam, device="cpu", dtype=torch.float64)
    y = simulate(sampler, rep_systems, torch.Generator().manual_seed(2)).numpy().reshape(3, reps, fam.T)
    i, j = np.triu_indices(fam.T)
    z = []
    for k in range(3):
        prods = y[k][:, i] * y[k][:, j]
        z.append(_zscores(prods, K[k][i, j]))
    z = np.abs(np.concatenate(z))
    assert z.max() < 5.0, z.max()
    assert np.abs(y.mean(axis=1)).max() < 5 * np.sqrt(K.diagonal(axis1=1, axis2=2).max() / reps)


def test_torch_sampler_matches_exact_setting_a_moments():
    """Over random systems (setting a), E[y_i y_j] and two 4th moments equal the exact
    rational moments of theory.reference.exact_moments_a."""
    T, d = 6, 5
    fam = LDSFamily("a", T=T, d=d, sigma_w=0.1, sigma_v=0.1)
    sampler = TorchLDSSampler(fam, device="cpu", dtype=torch.float32)
    m = 400_000
    y = sample(sampler, m, torch.Generator().manual_seed(3)).double().numpy()
    assert y.shape == (m, T)
    pairs = [(a, b) for a in range(T) for b in range(a, T)]
    exact2 = exact_moments_a(pairs, T, d, "1/100", "1/100")
    prods = np.stack([y[:, a] * y[:, b] for a, b in pairs], axis=1)
    z2 = _zscores(prods, np.array([float(e) for e in exact2]))
    quads = [(T - 2, T - 2, T - 1, T - 1), (0, 1, T - 2, T - 1)]
    exact4 = exact_moments_a(quads, T, d, "1/100", "1/100")
    prods4 = np.stack([np.prod(y[:, list(q)], axis=1) for q in quads], axis=1)
    z4 = _zscores(prods4, np.array([float(e) for e in exact4]))
    assert np.abs(z2).max() < 5.0 and np.abs(z4).max() < 5.0, (z2, z4)


def test_torch_sampler_asym_control_is_not_symmetric():
    """The asymmetric control has E[y_1 y_2] > 0 well beyond noise; setting a has ~0."""
    gen = torch.Generator().manual_seed(4)
    ya = sample(TorchLDSSampler(LDSFamily("a", T=4)), 100_000, gen).double().numpy()
    yc = sample(TorchLDSSampler(LDSFamily("asym", T=4)), 100_000, gen).double().numpy()
    za = _zscores((ya[:, 0] * ya[:, 1])[:, None], np.zeros(1))[0]
    zc = _zscores((yc[:, 0] * yc[:, 1])[:, None], np.zeros(1))[0]
    assert abs(za) < 5 and zc > 50


@pytest.mark.parametrize("setting", ["b", "c", "d"])
def test_torch_sampler_marginal_covariance_matches_theory_sampler(setting):
    """Over random systems: E[y_i y_j] from the torch sampler vs the theory's exact
    covariance averaged over systems from the theory's own numpy sampler."""
    fam = LDSFamily(setting, T=6, d=4)
    m = 100_000
    y = sample(TorchLDSSampler(fam, dtype=torch.float64), m, torch.Generator().manual_seed(5)).numpy()
    K = covariance(fam.sample_systems(np.random.default_rng(6), 40_000), fam.T)
    i, j = np.triu_indices(fam.T)
    Kij = K[:, i, j]
    z = _zscores(y[:, i] * y[:, j], Kij.mean(axis=0), Kij.std(axis=0, ddof=1) / math.sqrt(len(K)))
    assert np.abs(z).max() < 5.0, z


def test_sampler_validation():
    fam = LDSFamily("a", T=5)
    with pytest.raises(ValueError, match="^family"):
        TorchLDSSampler("a")
    with pytest.raises(ValueError, match="^dtype"):
        TorchLDSSampler(fam, dtype=torch.float16)
    s = TorchLDSSampler(fam)
    with pytest.raises(ValueError, match="^m must"):
        s.draw(0, torch.Generator())
    with pytest.raises(ValueError, match="^generator"):
        s.draw(3, np.random.default_rng(0))
    with pytest.raises(ValueError, match="^systems must share"):
        simulate(s, LDSFamily("a", T=5, d=2).sample_systems(np.random.default_rng(0), 2), torch.Generator())


# ----------------------------------------------------------------------------- training
@pytest.fixture(scope="module")
def tiny_result():
    return train(TrainConfig(seed=3, **TINY), device="cpu", progress=False)


def test_same_seed_gives_bitwise_identical_weights(tiny_result):
    again = train(TrainConfig(seed=3, **TINY), device="cpu", progress=False)
    assert np.array_equal(again.W_V, tiny_result.W_V) and np.array_equal(again.W_QK, tiny_result.W_QK)
    assert np.array_equal(again.loss_history, tiny_result.loss_history)
    other = train(TrainConfig(seed=4, **TINY), device="cpu", progress=False)
    assert not np.array_equal(other.W_V, tiny_result.W_V)


@pytest.mark.parametrize("setting", ["a", "d"])
def test_weights_do_not_depend_on_the_thread_count(setting):
    """Data streams are per (seed, step, shard) and, for the eigenbases of setting d, per
    block of steps, never per thread: 1 and 2 torch threads (no helper / one helper
    thread) give bitwise the same weights.  batch > SHARD_SIZE so that a step has two
    shards; in setting d 20 steps span two blocks of bases (16 + 4)."""
    cfg = TrainConfig(setting, seed=5, steps=8 if setting == "a" else 20, batch=3100)
    with torch_threads(1):
        one = train(cfg, device="cpu", progress=False)
    with torch_threads(2):
        two = train(cfg, device="cpu", progress=False)
    assert np.array_equal(one.W_V, two.W_V) and np.array_equal(one.W_QK, two.W_QK)


def test_shards_take_their_columns_of_the_bases_block():
    """Setting d: shard j of step t gets columns (t - 16 k) batch + offset_j of block k's
    bases, drawn from stream (seed, 3, k) (models.trainer._Batches); the last block is
    short; blocks asked for out of order or again are the same."""
    from models.trainer import BASES_BLOCK, _Batches
    cfg = TrainConfig("d", d=3, T=4, seed=2, steps=BASES_BLOCK + 3, batch=SHARD_SIZE + 10)
    sampler = TorchLDSSampler(cfg.family(), dtype=torch.float64)
    batches = _Batches(cfg, sampler, 0, cfg.batch, False, cfg.steps)
    assert batches.sizes == [773, 773] and batches.offsets == [0, 773]
    ref = [sampler.draw_bases(n * cfg.batch, torch.Generator().manual_seed(stream_seed(2, 3, k)))
           for k, n in ((1, 3), (0, BASES_BLOCK))]
    for step, j in ((BASES_BLOCK + 2, 1), (0, 0), (5, 1), (BASES_BLOCK, 0), (5, 1)):
        k, i = divmod(step, BASES_BLOCK)
        R_ref, c_ref = ref[1 - k]
        lo = i * cfg.batch + batches.offsets[j]
        R, c = batches.bases(step, j)
        assert torch.equal(R, R_ref[:, :, lo:lo + 773]) and torch.equal(c, c_ref[:, lo:lo + 773])
        drawn = batches.draw(step, j)
        assert torch.equal(drawn[1][1], R)
    assert batches.bases_block(1)[0].shape == (3, 3, 3 * cfg.batch)
    assert _Batches(cfg.replace(setting="a"), TorchLDSSampler(cfg.replace(setting="a").family()),
                    0, cfg.batch, False, cfg.steps).bases(0, 0) is None


def test_result_fields_and_round_trip(tiny_result):
    r = tiny_result
    assert r.W_V.dtype == np.float64 and r.W_V.shape == (2, 2) and r.W_QK.shape == (2, 2)
    assert r.device == "cpu" and r.wall_seconds > 0 and r.history_every == 1
    assert len(r.loss_history) == TINY["steps"] and np.all(np.isfinite(r.loss_history))
    assert r.final_window == 6 and r.final_loss == pytest.approx(r.loss_history[-6:].mean())
    d = json.loads(json.dumps(r.to_dict()))
    back = TrainResult.from_dict(d)
    assert back.config == r.config
    assert np.array_equal(back.W_V, r.W_V) and np.array_equal(back.W_QK, r.W_QK)
    assert np.array_equal(back.loss_history, r.loss_history)
    assert back.final_loss == r.final_loss and back.eval_loss == r.eval_loss
    m = r.model()
    assert isinstance(m, LinearSelfAttention) and m.W_V.dtype == torch.float64
    assert np.array_equal(m.weights()[0], r.W_V) and np.array_equal(m.weights()[1], r.W_QK)
    assert r.model(dtype=torch.float32).W_QK.dtype == torch.float32
    assert r.ar1_coefficient() == pytest.approx(beta(r)[1, 0, 0] + beta(r)[0, 1, 0])
    with pytest.raises(ValueError, match="format"):
        TrainResult.from_dict({**d, "format": "other"})
    with pytest.raises(ValueError, match="malformed"):
        TrainResult.from_dict({k: v for k, v in d.items() if k != "W_QK"})
    with pytest.raises(ValueError, match="shape"):
        TrainResult.from_dict({**d, "W_V": [[1.0]]})


def test_one_step_run_is_strict_json():
    """steps < 20: the final window is one step, its stderr NaN -> null in the record."""
    r = train(TrainConfig(steps=1, batch=4, warmup_steps=0), device="cpu", progress=False)
    assert r.final_window == 1 and math.isnan(r.final_loss_stderr)
    text = json.dumps(r.to_dict(), allow_nan=False)
    back = TrainResult.from_dict(json.loads(text))
    assert math.isnan(back.final_loss_stderr) and back.final_loss == r.final_loss


def test_ar1_training_reduces_loss_and_approaches_kappa():
    """Sanity only (the real claim check lives in claims/): a short AR(1) run in setting
    (a) lowers the loss and its gauge-invariant coefficient b_2 W[1,1] + b_1 W[2,1]
    lands within 15 % of kappa.  (Short run, so lr 1e-2 instead of the default 1e-3.)"""
    r = train(TrainConfig(seed=0, steps=300, batch=512, lr=1e-2), device="cpu", progress=False)
    h = r.loss_history
    assert h[-50:].mean() < 0.9 * h[:10].mean()
    assert r.ar1_coefficient() == pytest.approx(REFERENCE_KAPPA, rel=0.15)
    assert r.eval_loss == pytest.approx(r.final_loss, rel=0.2)
    # the second family of optima (docs/math.md section 4) stays small: b_1 W[1,1] and b_2 W[2,1]
    b = beta(r)
    assert abs(b[0, 0, 0]) < 0.05 and abs(b[1, 1, 0]) < 0.05


def _forward_forms_agree(config):
    """forward="model" (the layer's or stack's forward pass + autograd) and the default
    effective form follow the same trajectory (float64: equal to rounding)."""
    eff = train(config, device="cpu", progress=False)
    full = train(config.replace(forward="model"), device="cpu", progress=False)
    np.testing.assert_allclose(full.W_V, eff.W_V, rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(full.W_QK, eff.W_QK, rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(full.loss_history, eff.loss_history, rtol=1e-9)


def test_model_forward_path_trains_the_same_function():
    _forward_forms_agree(TrainConfig(seed=2, steps=40, batch=128, dtype="float64"))


@pytest.mark.parametrize("setting, s", [("b", 1), ("c", 2), ("d", 1), ("asym", 3)])
def test_other_settings_and_windows_train(setting, s):
    r = train(TrainConfig(setting=setting, s=s, T=12, steps=15, batch=32), device="cpu", progress=False)
    assert r.W_V.shape == (s + 1, s + 1) and np.all(np.isfinite(r.loss_history))
    assert beta(r).shape == (s + 1, s + 1, s)
    if s != 1:
        with pytest.raises(ValueError, match="s = 1"):
            r.ar1_coefficient()


def test_divergence_is_reported():
    cfg = TrainConfig(seed=0, steps=30, batch=16, lr=1e30, grad_clip=None, warmup_steps=0,
                      init_scale=1.0)
    with pytest.raises(RuntimeError, match="lower lr"):
        train(cfg, device="cpu", progress=False)


def test_progress_bar_goes_to_stderr(capsys):
    train(TrainConfig(steps=20, batch=8), device="cpu", progress=True)
    err = capsys.readouterr().err
    assert "train a s=1" in err and "20/20" in err


def test_train_argument_validation():
    with pytest.raises(ValueError, match="^config"):
        train({"setting": "a"})
    with pytest.raises(ValueError, match="^device"):
        train(TrainConfig(**TINY), device="tpu")


# ----------------------------------------------------------------------------- runtime
def test_resolve_device():
    assert resolve_device("cpu") == torch.device("cpu")
    assert resolve_device(torch.device("cpu")) == torch.device("cpu")
    assert resolve_device("auto").type == ("cuda" if torch.cuda.is_available() else "cpu")
    for bad in ("tpu", "", "cuda:x", 3):
        with pytest.raises(ValueError, match="^device"):
            resolve_device(bad)
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="CUDA is not available"):
            resolve_device("cuda")


def test_thread_helpers():
    before = torch.get_num_threads()
    with torch_threads(1) as prev:
        assert prev == before and torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
    assert cap_threads(before) == before
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="^n must"):
            cap_threads(bad)


# ----------------------------------------------------------------------------- cache
def test_cache_trains_once_then_loads(tmp_path, monkeypatch):
    calls = []
    real = cache_mod.train

    def counting(config, **kw):
        calls.append(config)
        return real(config, **kw)

    monkeypatch.setattr(cache_mod, "train", counting)
    cfg = TrainConfig(seed=7, **TINY)
    first = cache_mod.train_cached(cfg, cache_dir=tmp_path, device="cpu", progress=False)
    second = cache_mod.train_cached(cfg, cache_dir=tmp_path, device="cpu", progress=False)
    assert len(calls) == 1
    assert np.array_equal(first.W_V, second.W_V) and np.array_equal(first.W_QK, second.W_QK)
    path = cache_mod.cache_path(cfg, tmp_path, device="cpu")
    assert path == tmp_path / f"{cache_mod.cache_key(cfg, 'cpu')}.json" and path.exists()
    assert not list(tmp_path.glob("*.tmp"))
    stored = json.loads(path.read_text())
    assert stored["config"] == cfg.to_dict() and stored["key"] == cfg.key()
    # a different configuration is a different entry
    cache_mod.train_cached(cfg.replace(seed=8), cache_dir=tmp_path, device="cpu", progress=False)
    assert len(calls) == 2


def test_cache_distrusts_corrupt_or_foreign_records(tmp_path, monkeypatch, caplog):
    calls = []
    real = cache_mod.train
    monkeypatch.setattr(cache_mod, "train", lambda c, **kw: calls.append(c) or real(c, **kw))
    cfg = TrainConfig(seed=9, **TINY)
    path = cache_mod.cache_path(cfg, tmp_path, device="cpu")
    tmp_path.mkdir(exist_ok=True)
    path.write_text("{ not json")
    with caplog.at_level(logging.WARNING, logger="models.cache"):
        res = cache_mod.train_cached(cfg, cache_dir=tmp_path, device="cpu", progress=False)
    assert len(calls) == 1 and "corrupt" in caplog.text
    assert cache_mod.load_cached(cfg, tmp_path, device="cpu") is not None
    # a record holding another configuration under this key is not trusted
    other = json.loads(path.read_text())
    other["config"] = cfg.replace(seed=10).to_dict()
    path.write_text(json.dumps(other))
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="models.cache"):
        again = cache_mod.train_cached(cfg, cache_dir=tmp_path, device="cpu", progress=False)
    assert len(calls) == 2 and "different configuration" in caplog.text
    assert np.array_equal(again.W_V, res.W_V)


def test_cache_dir_default_and_env(monkeypatch, tmp_path):
    monkeypatch.delenv(cache_mod.ENV_VAR, raising=False)
    assert cache_mod.default_cache_dir() == REPO / ".cache" / "ldsicl"
    monkeypatch.setenv(cache_mod.ENV_VAR, str(tmp_path / "c"))
    assert cache_mod.default_cache_dir() == tmp_path / "c"
    assert cache_mod.cache_path(TrainConfig()).parent == tmp_path / "c"
    with pytest.raises(ValueError, match="^cache_dir"):
        cache_mod.cache_path(TrainConfig(), cache_dir=3)
    with pytest.raises(ValueError, match="^config"):
        cache_mod.train_cached("a", cache_dir=tmp_path)


_CHILD = textwrap.dedent("""
    import json, os, sys, time
    from pathlib import Path
    import models.cache as cm
    from models.trainer import TrainConfig
    tmp = Path(sys.argv[1]); me = sys.argv[2]
    real = cm.train
    def counting(config, **kw):
        with open(tmp / "trained.log", "a") as fh:
            fh.write(me + "\\n")
        return real(config, **kw)
    cm.train = counting
    (tmp / ("ready-" + me)).touch()
    while not (tmp / "go").exists():
        time.sleep(0.01)
    res = cm.train_cached(TrainConfig(seed=11, steps=300, batch=128), cache_dir=tmp / "cache",
                          device="cpu", progress=False)
    print(json.dumps({"W_V": res.W_V.tolist(), "W_QK": res.W_QK.tolist()}))
""")


def test_concurrent_processes_train_once(tmp_path):
    """Two processes asking for the same configuration at the same moment: one trains,
    the other waits on the per-key file lock and loads; both get the same weights."""
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""),
           "OMP_NUM_THREADS": "1"}
    procs = [subprocess.Popen([sys.executable, "-c", _CHILD, str(tmp_path), name], cwd=REPO, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for name in ("p1", "p2")]
    import time
    deadline = time.monotonic() + 120
    while not all((tmp_path / f"ready-{n}").exists() for n in ("p1", "p2")):
        assert time.monotonic() < deadline, "children did not start"
        assert all(p.poll() is None for p in procs), [p.communicate() for p in procs]
        time.sleep(0.02)
    (tmp_path / "go").touch()
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    trained = (tmp_path / "trained.log").read_text().split()
    assert len(trained) == 1, trained
    w1, w2 = (json.loads(o[0].strip().splitlines()[-1]) for o in outs)
    assert w1 == w2


# ----------------------------------------------------------------------------- details
def test_result_record_without_torch_version(tiny_result):
    d = tiny_result.to_dict()
    del d["torch_version"]
    assert TrainResult.from_dict(d).torch_version == ""


def test_cache_logs_what_it_trains(tmp_path, caplog):
    cfg = TrainConfig(seed=11, **TINY)
    with caplog.at_level(logging.INFO, logger="models.cache"):
        cache_mod.train_cached(cfg, cache_dir=tmp_path, device="cpu", progress=False)
    msgs = [r.getMessage() for r in caplog.records if r.name == "models.cache"]
    assert any(m.startswith("training ") and cache_mod.cache_key(cfg, "cpu") in m for m in msgs), msgs


def test_splitmix64_known_answers():
    """The mixer behind stream_seed is Vigna's splitmix64: its published first outputs
    from state 0 are e220a8397b1dcdaf, 6e789e6aa1b965f4, 06c45d188009454f."""
    from models.config import _splitmix64
    gamma, mask = 0x9E3779B97F4A7C15, 2 ** 64 - 1
    assert [_splitmix64((k * gamma) & mask) for k in range(3)] == \
        [0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F]


def test_the_schedule_reaches_the_optimizer():
    """Warm-up only changes the learning rates, so it must change the trained weights."""
    a = train(TrainConfig(warmup_steps=0, **TINY), device="cpu", progress=False)
    b = train(TrainConfig(warmup_steps=30, **TINY), device="cpu", progress=False)
    assert not np.array_equal(a.W_V, b.W_V)


def test_loss_history_thinning_and_precision():
    """At most 500 history points: blocks of ceil(steps / 500) steps; float64 runs keep
    float64 losses (not rounded through float32)."""
    r = train(TrainConfig(steps=501, batch=4, T=6, d=2, dtype="float64", warmup_steps=0),
              device="cpu", progress=False)
    assert r.history_every == 2 and len(r.loss_history) == 251
    assert np.any(r.loss_history.astype(np.float32).astype(np.float64) != r.loss_history)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_training_runs():
    """The CUDA branch of train() (no helper threads); CPU-only machines skip it."""
    r = train(TrainConfig(**TINY), device="cuda", progress=False)
    assert r.device.startswith("cuda") and np.isfinite(r.final_loss) and np.all(np.isfinite(r.W_V))


# ----------------------------------------------------------------------------- resources
def test_resource_guards_name_the_parameter_before_any_work():
    from models.trainer import check_resources, data_scale, memory_estimate
    base = TrainConfig("a")
    assert data_scale(base)[1] == "sigma_0" and 0 < data_scale(base)[0] < 10
    with pytest.raises(ValueError, match="^batch = 1000000000 needs about"):
        train(TrainConfig("a", batch=10 ** 9), device="cpu")
    with pytest.raises(ValueError, match="^batch = 3000 needs"):
        check_resources(base, max_memory=1024.0)
    check_resources(base, max_memory=2.0 * memory_estimate(base))
    with pytest.raises(ValueError, match="^sigma_w = 100000.0 makes the data scale"):
        train(TrainConfig("a", sigma_w=1e5), device="cpu")
    check_resources(TrainConfig("a", sigma_w=1e5, dtype="float64"))       # float64 holds it
    with pytest.raises(ValueError, match="^max_memory"):
        check_resources(base, max_memory=0.0)
    # the estimate grows with the batch and the window
    assert memory_estimate(base.replace(batch=6000)) > 1.9 * memory_estimate(base)
    assert memory_estimate(base.replace(s=4)) > memory_estimate(base)


def test_layer_refuses_non_float_dtypes_and_non_finite_input():
    with pytest.raises(ValueError, match="^dtype"):
        LinearSelfAttention(1, dtype=torch.int32)
    with pytest.raises(ValueError, match="^dtype"):
        LinearSelfAttention.from_weights(np.eye(2), np.eye(2), dtype=torch.float16)
    with pytest.raises(ValueError, match="^W_V must be"):
        LinearSelfAttention.from_weights([["a", "b"], ["c", "d"]], np.eye(2))
    layer = LinearSelfAttention(1, dtype=torch.float64)
    Y0 = build_tokens(torch.ones(2, 6, dtype=torch.float64), 1)
    Y0[0, 0, 0] = float("nan")
    with pytest.raises(ValueError, match="^Y0 must be finite"):
        layer(Y0)


# ----------------------------------------------------------------------------- stacks and radius
def test_stack_of_one_is_the_layer_and_the_stack_effective_form_is_the_forward_pass():
    from models.attention import StackedAttention
    from models.features import stack_effective_loss, stack_features
    g1, g2 = torch.Generator().manual_seed(5), torch.Generator().manual_seed(5)
    one = LinearSelfAttention(2, dtype=torch.float64, generator=g1)
    stack1 = StackedAttention(2, 1, dtype=torch.float64, generator=g2)
    y = torch.randn(9, 14, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    assert torch.equal(one.predict(y), stack1.predict(y))
    for L in (1, 2, 4):
        st = StackedAttention(2, L, dtype=torch.float64, init_scale=0.4,
                              generator=torch.Generator().manual_seed(L))
        full = 0.5 * (st.predict(y) - y[:, -1]).square().mean()
        eff = stack_effective_loss([b.W_V for b in st.blocks], [b.W_QK for b in st.blocks],
                                   *stack_features(y.T.contiguous(), 2))
        assert float(eff.detach()) == pytest.approx(float(full.detach()), rel=1e-12)
        g_full = torch.autograd.grad(full, list(st.parameters()))
        g_eff = torch.autograd.grad(eff, list(st.parameters()))
        for a, b in zip(g_full, g_eff):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10, atol=1e-13)
    # the stack is not vacuous: its second layer changes the prediction
    st = StackedAttention(2, 2, dtype=torch.float64, init_scale=0.4, generator=torch.Generator().manual_seed(2))
    first = LinearSelfAttention.from_weights(st.blocks[0].W_V.detach(), st.blocks[0].W_QK.detach())
    assert not torch.allclose(st.predict(y), first.predict(y))


def test_stacks_train_round_trip_and_are_checked():
    res = train(TrainConfig("a", s=2, layers=3, T=12, steps=40, batch=64, lr=0.01), device="cpu", progress=False)
    assert res.W_V.shape == (3, 3, 3) and np.isfinite(res.eval_loss)
    back = TrainResult.from_dict(res.to_dict())
    assert np.array_equal(back.W_V, res.W_V) and back.config.layers == 3
    y = torch.randn(4, 12, dtype=torch.float64)
    assert torch.equal(back.model().predict(y), res.model().predict(y))
    with pytest.raises(ValueError, match="^ar1_coefficient needs s = 1 and one layer"):
        res.ar1_coefficient()
    with pytest.raises(ValueError, match="^layers must be <="):
        TrainConfig(layers=9)
    with pytest.raises(ValueError, match="^layers"):
        TrainConfig(layers=0)
    assert TrainConfig(layers=2).key() != TrainConfig(layers=1).key()


def _stack_config(batch):
    return TrainConfig("a", s=1, layers=2, T=6, steps=3, batch=batch, lr=0.01, dtype="float64")


def test_an_effective_stack_trains_on_a_batch_of_two_shards():
    """The shards' stack features (batch first) are joined along the batch axis: the
    effective form follows the forward pass on a batch of two shards (this failed at
    the first step while the join used the last axis)."""
    _forward_forms_agree(_stack_config(SHARD_SIZE + 1))


def test_an_effective_stack_follows_its_forward_pass_on_one_shard():
    """The reference of the test above, on one shard (where no join is needed)."""
    _forward_forms_agree(_stack_config(SHARD_SIZE))


def test_radius_scales_the_eigenvalues_of_every_sampler():
    fam = LDSFamily("a", d=3, T=6, radius=0.5)
    assert fam.eigenvalue_range == (-0.5, 0.5) and LDSFamily("asym", radius=0.9).eigenvalue_range == (0.0, 0.9)
    lam = fam.sample_systems(np.random.default_rng(0), 4000).lam
    assert np.abs(lam).max() <= 0.5 and np.abs(lam).max() > 0.49
    drawn = TorchLDSSampler(fam, dtype=torch.float64).draw(4000, torch.Generator().manual_seed(0))
    assert float(drawn[1][0].abs().max()) <= 0.5
    cfg = TrainConfig("a", radius=0.9)
    assert cfg.family().radius == 0.9 and cfg.key() != TrainConfig("a").key()
    for bad in (0.0, -1.0, 2.0, float("nan")):
        with pytest.raises(ValueError, match="^radius"):
            LDSFamily("a", radius=bad)
    from theory.population import population_moments
    with pytest.raises(ValueError, match="^radius must be 1 for the coordinate quadrature"):
        population_moments(fam, 1)
