"""Start-up of ``ldsicl``: the commands that need no torch import none (claims/cli/main.py).

Each command runs in a fresh interpreter (tests/_procs.py bounds it) through
``claims.cli.main.main``, which then reports whether ``torch`` is in ``sys.modules``.
``--version``, ``--help``, ``kappa``, ``optimum`` and ``report`` compute nothing with torch,
so they must not pay its import (about 0.7 s of a 1.1 s start-up).  ``runs`` and ``cache`` do
import it: they read the run store's configurations (models.config.TrainConfig, which
imports torch) and the cache key (torch's version).  The control:
``train --help`` shows TrainConfig's defaults, so it imports torch, and the probe sees it.
Timings are measured apart, never asserted (tests/benchmarks/test_bench_startup.py).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from _procs import clean_env, run_bounded

REPO = Path(__file__).resolve().parents[1]

#: runs ``main(argv)`` and prints, last, one JSON line: the exit status and whether torch was imported
PROBE = """
import json, sys
from claims.cli.main import main
argv = json.loads(sys.argv[1])
status = main(argv)
print(json.dumps({"status": status, "torch": "torch" in sys.modules}))
"""


def _probe(argv) -> dict:
    proc = run_bounded([sys.executable, "-c", PROBE, json.dumps(argv)], timeout=120, cwd=REPO,
                       env=clean_env(REPO, OMP_NUM_THREADS="1"))
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("argv, status", [(argv, 2 if "bad" in why else 0) for argv, why in [
    (["--version"], ""),
    (["--help"], ""),
    (["kappa", "--help"], ""),
    (["kappa", "--setting", "a", "--T", "8", "--d", "2"], "exact rational"),
    (["kappa", "--setting", "b", "--T", "8", "--d", "2", "--json"], "quadrature"),
    (["kappa", "--T", "2"], "a bad argument: exit status 2"),
    (["kappa", "--setting", "b", "--method", "exact"], "a bad argument, found by theory.kappa"),
    (["optimum", "--setting", "a", "--s", "1", "--T", "6", "--d", "2", "--starts", "2", "--no-classes"], ""),
]], ids=lambda x: " ".join(x) if isinstance(x, list) else str(x))
def test_a_command_that_needs_no_torch_imports_none(argv, status):
    out = _probe(argv)
    assert out["status"] == status
    assert out["torch"] is False, f"ldsicl {' '.join(argv)} imported torch"


def test_report_imports_no_torch(tmp_path):
    """``ldsicl report`` renders a published run's records (a few of them, so that no figure
    is drawn) without torch: the claims' specs and run ids load without it."""
    data = json.loads((REPO / "docs" / "results" / "quick.json").read_text(encoding="utf-8"))
    data["records"] = [r for r in data["records"] if r["claim"] == "gd-equivalence" and not r["per_run"]]
    assert data["records"]
    src = tmp_path / "claims.json"
    src.write_text(json.dumps(data), encoding="utf-8")
    out = _probe(["report", "--from", str(src), "--out", str(tmp_path / "out")])
    assert out == {"status": 0, "torch": False} and (tmp_path / "out" / "index.html").is_file()


def test_control_train_help_imports_torch():
    """The probe sees torch where it is imported: ``train --help`` reads TrainConfig's defaults."""
    out = _probe(["train", "--help"])
    assert out == {"status": 0, "torch": True}
