"""Start-up of ``ldsicl`` (pytest-benchmark; never assert on time).

Run with ``pytest tests/benchmarks/test_bench_startup.py -m bench -p no:xdist``.  Each round
is one fresh interpreter running ``python -m claims.cli.main ARGS`` to its end, so the
median is the start-up a user waits for (plus the command's own work, which for these
arguments is a few milliseconds).  Targets (one core): ``--version`` and ``kappa`` (setting
a, T = 8) under 0.5 s -- they import no torch (tests/test_startup.py) --, against about
1.1 s when the parser imported models.config, and with it torch.

The only assertions are correctness: the command exits 0 and prints what it should.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from _procs import clean_env, run_bounded                    # tests/ is on sys.path (tests/conftest.py)

REPO = Path(__file__).resolve().parents[2]


def _ldsicl(*args):
    proc = run_bounded([sys.executable, "-m", "claims.cli.main", *args], timeout=120, cwd=REPO,
                       env=clean_env(REPO, OMP_NUM_THREADS="1"))
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


@pytest.mark.bench
@pytest.mark.parametrize("args, prints", [
    (("--version",), "ldsicl "),
    (("kappa", "--setting", "a", "--T", "8"), "kappa = "),
    (("train", "--help"), "AR window s (default: 1)"),       # imports torch: the comparison
], ids=["version", "kappa", "train-help"])
def test_bench_startup(benchmark, args, prints):
    """One ``ldsicl`` process per round, start to end.  Target < 0.5 s for version and kappa."""
    benchmark.extra_info.update({"target_s": None if args[0] == "train" else 0.5, "args": " ".join(args)})
    out = benchmark.pedantic(_ldsicl, args=args, rounds=9, iterations=1, warmup_rounds=1)
    assert prints in " ".join(out.split())
