"""models/trainer.py: the training loop, train() -- bitwise determinism whatever the thread
count, the shards' bases, the result's fields and round trip, a short AR(1) run against
Theorem 4.1's kappa, the forward paths, other settings and windows, divergence, progress,
argument and resource guards, stacks and the radius.  (Its pieces: tests/test_config.py,
tests/test_features.py, tests/test_sampler.py, tests/test_runtime.py,
tests/test_cache_training.py.)

Oracles: the layer's own forward pass; theory.population.beta_from_weights for the learned
coefficients; Theorem 4.1's kappa (exact, docs/math.md section 4) for a short sanity run.
"""
from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch

from models.attention import LinearSelfAttention, build_tokens
from models.runtime import torch_threads
from models.config import TrainConfig, stream_seed
from models.result import TrainResult
from models.sampler import TorchLDSSampler
from models.batches import SHARD_SIZE
from models.trainer import train
from theory.population import beta_from_weights
from theory.systems import LDSFamily

REFERENCE_KAPPA = 0.2052454015138651  # docs/math.md section 4, setting (a) defaults
TINY = dict(steps=60, batch=64)


def beta(result):
    """Gauge-invariant coefficients beta[r, l, m] = W_V[s, r] W_QK[l, m], shape (s+1, s+1, s)."""
    s = result.config.s
    return beta_from_weights(result.W_V, result.W_QK).reshape(s + 1, s + 1, s)


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
    bases, drawn from stream (seed, 3, k) (models.batches.Batches); the last block is
    short; blocks asked for out of order or again are the same."""
    from models.batches import BASES_BLOCK, Batches
    cfg = TrainConfig("d", d=3, T=4, seed=2, steps=BASES_BLOCK + 3, batch=SHARD_SIZE + 10)
    sampler = TorchLDSSampler(cfg.family(), dtype=torch.float64)
    batches = Batches(cfg, sampler, 0, cfg.batch, False, cfg.steps)
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
    assert Batches(cfg.replace(setting="a"), TorchLDSSampler(cfg.replace(setting="a").family()),
                    0, cfg.batch, False, cfg.steps).bases(0, 0) is None


def test_result_fields_and_round_trip(tiny_result):
    r = tiny_result
    assert r.W_V.dtype == np.float64 and r.W_V.shape == (2, 2) and r.W_QK.shape == (2, 2)
    assert r.device == "cpu" and r.wall_seconds > 0 and r.history_every == 1
    assert len(r.loss_history) == TINY["steps"] and np.all(np.isfinite(r.loss_history))
    assert r.final_window == 6 and r.final_loss == pytest.approx(r.loss_history[-6:].mean())
    # one history point per step here, so the window's standard error is recomputable too
    assert r.final_loss_stderr == pytest.approx(r.loss_history[-6:].std(ddof=1) / math.sqrt(6), rel=1e-6)
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
    # a one-step window has no standard error: written as null (before the JSON policy too), read as NaN
    assert math.isnan(TrainResult.from_dict({**d, "final_loss_stderr": None}).final_loss_stderr)


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


# ----------------------------------------------------------------------------- details
def test_result_record_without_torch_version(tiny_result):
    d = tiny_result.to_dict()
    del d["torch_version"]
    assert TrainResult.from_dict(d).torch_version == ""


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


def test_eval_loss_is_the_held_out_loss_of_the_returned_weights():
    """A result's ``eval_loss``, recomputed from its own fields by another route: the
    held-out batch (the trainer's evaluation stream, two shards at batch 3000) predicted by
    theory.ar's eq. 17 predictor from the returned W_V, W_QK in numpy, 1/2 the mean squared
    error of y_T.  Weights off by a millionth, the initial weights or a loss without the
    1/2 give another number."""
    from models.batches import Batches
    from models.trainer import _STREAM_EVAL
    from theory.ar import attention_ar_weights, query_features

    r = train(TrainConfig(seed=1, steps=50, batch=3000, lr=1e-2), device="cpu", progress=False)
    batches = Batches(r.config, TorchLDSSampler(r.config.family(), dtype=torch.float64), _STREAM_EVAL,
                       r.config.batch, False, 1)
    assert len(batches.sizes) == 2
    y = batches.join([batches.shard(0, j) for j in range(len(batches.sizes))]).T.numpy()
    assert y.shape == (3000, r.config.T)

    def held_out(W_V, W_QK):
        pred = np.einsum("ni,ni->n", attention_ar_weights(W_V, W_QK, y, 1), query_features(y, 1))
        return 0.5 * np.mean((pred - y[:, -1]) ** 2)

    assert r.eval_loss == pytest.approx(held_out(r.W_V, r.W_QK), rel=1e-10)
    assert abs(held_out(r.W_V * (1 + 1e-6), r.W_QK) - r.eval_loss) > 1e-9 * r.eval_loss
