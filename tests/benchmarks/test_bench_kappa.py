"""Speed benchmarks for theory.kappa_exact (pytest-benchmark; never assert on time).

Run with ``pytest tests/benchmarks -m bench -p no:xdist``.  Targets (one core):

- exact rational kappa, T = 30, d = 5 (Kronecker-substitution engine): < 2 s;
- float64 Gauss-Legendre kappa, T = 30, d = 5: < 0.1 s.

Measurements behind the targets: see docs/notes.md, section "kappa engines: timings".
The only assertions are correctness: both reproduce the reference 0.2052454015138651
(docs/math.md section 4) and agree with each other to 1e-12 relative.
"""
from __future__ import annotations

from fractions import Fraction

import pytest

from theory.kappa_exact import kappa_exact_a, kappa_quadrature_a

REF = 0.2052454015138651


@pytest.mark.bench
def test_bench_kappa_exact_rational(benchmark):
    """Exact rational kappa, setting (a), T=30, d=5, sigma_w=sigma_v=0.1. Target < 2 s."""
    benchmark.extra_info.update({"target_s": 2.0, "T": 30, "d": 5, "method": "exact-rational"})
    k = benchmark(kappa_exact_a, 30, 5, Fraction(1, 100), Fraction(1, 100))
    assert isinstance(k, Fraction)
    assert abs(float(k) / REF - 1) < 1e-12
    assert abs(kappa_quadrature_a(30, 5, 0.01, 0.01) / float(k) - 1) < 1e-12


@pytest.mark.bench
def test_bench_kappa_quadrature(benchmark):
    """float64 Gauss-Legendre (3T+1 = 91 nodes) kappa, T=30, d=5. Target < 0.1 s."""
    benchmark.extra_info.update({"target_s": 0.1, "T": 30, "d": 5, "method": "gauss-legendre"})
    q = benchmark(kappa_quadrature_a, 30, 5, 0.01, 0.01)
    exact = kappa_exact_a(30, 5, Fraction(1, 100), Fraction(1, 100))
    assert abs(q / float(exact) - 1) < 1e-12
    assert abs(q / REF - 1) < 1e-12
