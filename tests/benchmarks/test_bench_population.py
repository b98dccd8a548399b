"""Speed benchmarks of the population moments and the population optimum (pytest-benchmark; never timed asserts).

Run with ``pytest tests/benchmarks/test_bench_population.py -m bench -p no:xdist``.
Targets (docs/math.md section 5.6, where the measured numbers are):

- exact moments ``population_moments(LDSFamily(setting), 4)`` at the defaults (T = 30,
  d = 5): under 5 s in settings a, b, c (before the shift tables: about 15 s on an idle
  core, 25 to 200 s with two cores shared);
- Monte Carlo moments of setting d, s = 4: per system (exact per-system moments) and per
  raw trajectory;
- the population optimum for s = 4 (32 starts, unconstrained and both classes).

The only assertions are on correctness (shapes, symmetry, the parity zeros).
"""
from __future__ import annotations

import numpy as np
import pytest

from theory.mc_moments import trajectory_moments
from theory.optimum import population_optimum
from theory.population import feature_parity, population_moments
from theory.systems import LDSFamily

pytestmark = pytest.mark.bench


@pytest.mark.parametrize("setting", ["a", "b", "c"])
def test_bench_population_moments_s4(benchmark, setting):
    """Exact (quadrature) moments for s = 4 at the defaults: target < 5 s."""
    fam = LDSFamily(setting)
    benchmark.extra_info.update(target_s=5.0, s=4, T=fam.T, d=fam.d, setting=setting)
    P = benchmark.pedantic(population_moments, args=(fam, 4), rounds=3, iterations=1)
    par = feature_parity(4)
    assert P.M.shape == (100, 100) and np.array_equal(P.M, P.M.T)
    assert np.abs(P.M[np.ix_(par < 0, par > 0)]).max() <= 1e-13 * np.abs(P.M).max()


def test_bench_mc_systems_s4(benchmark):
    """Setting d, s = 4: exact moments of 1000 systems (before: about 31 ms a system)."""
    fam = LDSFamily("d")
    benchmark.extra_info.update(m=1000, s=4, setting="d", note="divide by m for the cost per system")
    benchmark.pedantic(lambda: population_moments(fam, 4, method="mc-systems", m=1000,
                                                  rng=np.random.default_rng(0)), rounds=2, iterations=1)


def test_bench_trajectory_moments_s4(benchmark):
    """Setting d, s = 4: 1e5 raw trajectories (antithetic)."""
    fam = LDSFamily("d")
    benchmark.extra_info.update(m=100_000, s=4, setting="d", note="divide by m for the cost per trajectory")
    benchmark.pedantic(lambda: trajectory_moments(fam, 4, 100_000, np.random.default_rng(0), antithetic=True),
                       rounds=2, iterations=1)


def test_bench_population_optimum_s4(benchmark):
    """Setting a, s = 4: 32 starts unconstrained and 32 in each class."""
    mom = population_moments(LDSFamily("a"), 4)
    benchmark.extra_info.update(s=4, setting="a", starts=32)
    opt = benchmark.pedantic(population_optimum, args=(mom, 1), kwargs={"starts": 32}, rounds=1, iterations=1)
    assert opt.n_converged == 32
