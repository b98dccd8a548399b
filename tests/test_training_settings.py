"""models/trainer.py: every training hyper-parameter of TrainConfig reaches the optimiser
(or the step it governs) and changes what is learned.

Oracles: the arguments torch itself receives (``torch.optim.AdamW``'s constructor and
``param_groups``, ``torch.nn.utils.clip_grad_norm_``), recorded by wrapping those torch
functions -- not the trainer's own account of them; and the learned weights of a run that
differs from a reference run in that one setting only.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

from models.config import lr_schedule
from models.config import TrainConfig
from models.trainer import train

BASE = dict(seed=5, steps=40, batch=64, T=10, d=2, warmup_steps=5)

#: one value per hyper-parameter, different from the default (TrainConfig), all legal
CHANGED = {
    "lr": 3e-3, "lr_min": 5e-4, "warmup_steps": 20, "weight_decay": 0.5, "betas": (0.5, 0.9),
    "eps": 1e-2, "grad_clip": 1e-4, "init": "zeros", "init_scale": 0.2, "steps": 41, "batch": 65,
}


def _run(**over):
    return train(TrainConfig(**{**BASE, **over}), device="cpu", progress=False)


@pytest.fixture(scope="module")
def reference():
    return _run()


@pytest.mark.parametrize("name", sorted(CHANGED))
def test_each_setting_changes_what_is_learned(reference, name):
    other = _run(**{name: CHANGED[name]})
    assert getattr(other.config, name) == CHANGED[name] != getattr(reference.config, name)
    assert np.isfinite(other.W_V).all() and np.isfinite(other.W_QK).all()
    assert not (np.array_equal(other.W_V, reference.W_V) and np.array_equal(other.W_QK, reference.W_QK)), name


class _Spy:
    """Wraps AdamW and clip_grad_norm_: what torch receives, step by step."""

    def __init__(self, monkeypatch):
        self.adamw, self.lrs, self.clips = [], [], []
        real_adamw, real_clip = torch.optim.AdamW, torch.nn.utils.clip_grad_norm_
        spy = self

        class AdamW(real_adamw):
            def __init__(self, params, **kw):
                spy.adamw.append(dict(kw))
                super().__init__(params, **kw)

            def step(self, *a, **kw):
                spy.lrs.append(self.param_groups[0]["lr"])
                return super().step(*a, **kw)

        def clip(params, max_norm, *a, **kw):
            spy.clips.append(max_norm)
            return real_clip(params, max_norm, *a, **kw)

        monkeypatch.setattr(torch.optim, "AdamW", AdamW)
        monkeypatch.setattr(torch.nn.utils, "clip_grad_norm_", clip)


@pytest.mark.parametrize("over", [{}, {"lr": 3e-3, "lr_min": 5e-4, "weight_decay": 0.5, "betas": (0.5, 0.9),
                                      "eps": 1e-2, "grad_clip": 1e-4, "warmup_steps": 20}])
def test_the_optimiser_receives_every_setting(monkeypatch, over):
    spy = _Spy(monkeypatch)
    cfg = TrainConfig(**{**BASE, **over})
    train(cfg, device="cpu", progress=False)
    assert len(spy.adamw) == 1
    kw = spy.adamw[0]
    assert kw["lr"] == cfg.lr and tuple(kw["betas"]) == tuple(cfg.betas)
    assert kw["eps"] == cfg.eps and kw["weight_decay"] == cfg.weight_decay
    # the learning rate of every step is the schedule's (warm-up, cosine to lr_min)
    np.testing.assert_allclose(spy.lrs, lr_schedule(cfg), rtol=0, atol=0)
    assert spy.clips == [cfg.grad_clip] * cfg.steps


def test_no_clipping_when_grad_clip_is_none(monkeypatch):
    spy = _Spy(monkeypatch)
    train(TrainConfig(**{**BASE, "grad_clip": None}), device="cpu", progress=False)
    assert spy.clips == [] and len(spy.lrs) == BASE["steps"]
