"""Speed benchmarks of training (pytest-benchmark; never timing asserts).

Run with ``pytest tests/benchmarks -m bench -p no:xdist`` (excluded from the default
run by the ``-m "not bench"`` addopts).  Targets are recorded in
``benchmark.extra_info`` and judged by a person reading the report.

- One paper-protocol AR(1) run (setting a, 8000 steps x 3000 fresh systems, T = 30,
  d = 5, s = 1): target under 20 s on 2 CPU cores (a straightforward PyTorch loop takes
  about 25 s there).  The floor is drawing the 555,000 normals of every step:
  8000 x 555,000 x ~4 ns = ~18 CPU-seconds, i.e. ~9 s on two cores.
- A 1000-step variant (same batch) for quicker comparisons.
- One AR(4) run of the AR(s) claims' protocol in each setting a-d: target under 40 s on
  2 CPU cores.

Each round trains from scratch (``train``, no cache).  ``extra_info`` also records the
learned gauge-invariant coefficient b_2 W[1,1] + b_1 W[2,1] and its relative distance to
kappa (Theorem 4.1), so the report shows that the fast path still learns the optimum.
"""
from __future__ import annotations

import os

import pytest
import torch

from models.config import TrainConfig
from models.trainer import train

pytestmark = pytest.mark.bench

REFERENCE_KAPPA = 0.2052454015138651  # docs/math.md section 4, setting (a) defaults


def _record(benchmark, cfg, res, target_s):
    benchmark.extra_info.update(
        target_seconds=target_s, steps=cfg.steps, batch=cfg.batch, setting=cfg.setting, s=cfg.s,
        device=res.device, torch_threads=torch.get_num_threads(), cpu_count=os.cpu_count(),
        train_wall_seconds=res.wall_seconds, final_loss=res.final_loss, eval_loss=res.eval_loss,
        ar1_coefficient=res.ar1_coefficient(),
        ar1_relative_error=res.ar1_coefficient() / REFERENCE_KAPPA - 1.0,
        seconds_per_step_ms=1e3 * res.wall_seconds / cfg.steps,
    )


def test_bench_train_paper_protocol_ar1(benchmark):
    """8000 steps x 3000 fresh systems, setting (a), s = 1: target < 20 s on 2 CPU cores."""
    cfg = TrainConfig("a", s=1, steps=8000, batch=3000, seed=0)
    res = benchmark.pedantic(train, args=(cfg,), kwargs=dict(device="auto", progress=False),
                             rounds=1, iterations=1)
    _record(benchmark, cfg, res, 20.0)
    assert res.W_V.shape == (2, 2)


def test_bench_train_1000_steps(benchmark):
    """1000 steps x 3000 fresh systems: target < 2.5 s on 2 CPU cores (1/8 of the above)."""
    cfg = TrainConfig("a", s=1, steps=1000, batch=3000, seed=0)
    res = benchmark.pedantic(train, args=(cfg,), kwargs=dict(device="auto", progress=False),
                             rounds=3, iterations=1)
    _record(benchmark, cfg, res, 2.5)
    assert res.W_V.shape == (2, 2)


@pytest.mark.parametrize("setting", ["a", "b", "c", "d"])
def test_bench_train_paper_protocol_ar4(benchmark, setting):
    """8000 steps x 3000 fresh systems, s = 4 (the AR(s) claims' protocol): target < 40 s on
    2 CPU cores in every setting (settings b and d draw their systems in torch,
    models/sampler.py)."""
    from claims.harness.runs import ARS_BETAS, ARS_LR
    cfg = TrainConfig(setting, s=4, steps=8000, batch=3000, seed=0, lr=ARS_LR, betas=ARS_BETAS)
    res = benchmark.pedantic(train, args=(cfg,), kwargs=dict(device="auto", progress=False),
                             rounds=1, iterations=1)
    benchmark.extra_info.update(target_seconds=40.0, steps=cfg.steps, batch=cfg.batch, setting=setting, s=4,
                                device=res.device, torch_threads=torch.get_num_threads(),
                                train_wall_seconds=res.wall_seconds, final_loss=res.final_loss,
                                seconds_per_step_ms=1e3 * res.wall_seconds / cfg.steps)
    assert res.W_V.shape == (5, 5)
