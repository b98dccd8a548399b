"""Speed benchmarks of the mathematical core (pytest-benchmark; never timing asserts).

Run with ``pytest tests/benchmarks -m bench`` (excluded from the default run by the
``-m "not bench"`` addopts).  Targets are recorded in ``benchmark.extra_info`` and
judged by a person reading the report, not by an assert.

- Sampling 3000 trajectories of setting (a) at the paper's defaults (d = 5, T = 30):
  target under 2 ms.  The exact sampler needs (T+1) d m + T m = 555,000 standard
  normals, a floor that :func:`test_bench_standard_normals_floor` measures alone.
- Exact covariance K for 3000 systems (T = 30): the diagonal fast path (settings a, c,
  asym) and the general path (b, d).

Measured medians and what they were before the optimisations: see docs/notes.md,
section "Sampler and covariance: timings".
"""
from __future__ import annotations

import numpy as np
import pytest

from theory.systems import LDSFamily

pytestmark = pytest.mark.bench

M = 3000


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
def test_bench_sample_setting_a(benchmark, dtype):
    """3000 fresh systems of setting (a) and one trajectory each, T = 30: target < 2 ms."""
    fam = LDSFamily("a", d=5, T=30)
    rng = np.random.default_rng(0)
    benchmark.extra_info.update(target_ms=2.0, m=M, T=30, d=5, setting="a",
                                dtype=np.dtype(dtype).name,
                                normals_per_call=(30 + 1) * 5 * M + 30 * M)
    systems, y = benchmark(fam.sample, rng, M, dtype=dtype)
    assert y.shape == (M, 30) and y.dtype == dtype


def test_bench_standard_normals_floor(benchmark):
    """Reference: drawing the 555,000 normals the exact sampler needs, nothing else."""
    rng = np.random.default_rng(0)
    benchmark.extra_info.update(note="lower bound for test_bench_sample_setting_a[float64]")
    benchmark(rng.standard_normal, (30 + 1) * 5 * M + 30 * M)


@pytest.mark.parametrize("setting", ["a", "b"])
def test_bench_exact_covariance(benchmark, setting):
    """Exact covariance (3000, 30, 30) of 3000 systems: diagonal (a) and general (b) path."""
    fam = LDSFamily(setting, d=5, T=30)
    systems = fam.sample_systems(np.random.default_rng(0), M)
    benchmark.extra_info.update(m=M, T=30, d=5, setting=setting,
                                path="diagonal" if systems.lam is not None else "general")
    K = benchmark(fam.covariance, systems)
    assert K.shape == (M, 30, 30)
