"""Speed benchmark of the noise-free twins (pytest-benchmark; never a timed assert).

Run with ``pytest tests/benchmarks/test_bench_twins.py -m bench -p no:xdist``.  Target
(the basins issue): 64 twins of one (setting, s = 4) cell through the full protocol
(8000 AdamW steps on the exact population loss) in at most 30 s on 2 cores.
"""
from __future__ import annotations

import numpy as np
import pytest

from models.config import TrainConfig
from models.twins import law_weights, run_twins
from theory.population import population_moments
from theory.systems import LDSFamily

pytestmark = pytest.mark.bench


def test_bench_64_twins_s4(benchmark):
    mom = population_moments(LDSFamily("b"), 4)
    cfg = TrainConfig(setting="b", s=4, lr=3e-2, betas=(0.9, 0.99), seed=1)
    V0, Q0 = law_weights(cfg, 64, seed=7)
    benchmark.extra_info.update(target_s=30.0, twins=64, steps=cfg.steps, s=4, setting="b")
    out = benchmark.pedantic(run_twins, args=(cfg, mom, V0, Q0), rounds=1, iterations=1)
    assert out["W_V"].shape == (64, 5, 5) and np.isfinite(out["loss"]).all()
