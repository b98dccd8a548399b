"""claims/cli/costs.py: every expensive command estimates its time and memory from its arguments
before any work, announces it, refuses it past the budget unless ``--yes``, and refuses it past
the available memory always.

Oracles: the complexity each estimator states (the ratio of two estimates, not a timing), the
budget constants, and /proc/meminfo read here.  The work itself is stubbed out wherever a
test could start it: a refusal must come before it, an accepted estimate must reach it (the
stub's own error then proves that it was reached: the negative control of each refusal).
No timing is asserted.
"""
from __future__ import annotations

import pytest

from claims.cli import costs
from claims.cli.costs import Cost, CostRefused, check_cost
from claims.cli.main import main
from theory.systems import LDSFamily


class Reached(Exception):
    """Raised by a stubbed piece of work: the command got past its estimate."""


def _stub(*a, **k):
    raise Reached("the work started")


def _error_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if "error:" in line]


# ----------------------------------------------------------------------------- the budget
def test_check_cost_refuses_past_the_budget_unless_yes_and_past_the_memory_always():
    small, slow, big = Cost(1.0, 1, "a"), Cost(7200.0, 1, "b", "a hint"), Cost(1.0, 2 ** 35, "c")
    assert check_cost(small, yes=False, available=2 ** 34) is None
    with pytest.raises(CostRefused, match="^b would take about 2 h and 0 MiB, past the budget of 1 h and 8 GiB; "
                                          "give --yes to run it anyway; a hint$"):
        check_cost(slow, yes=False, available=2 ** 34)
    assert check_cost(slow, yes=True, available=2 ** 34) == "b: about 2 h and 0 MiB"
    for yes in (False, True):                                     # the machine's memory: --yes or not
        with pytest.raises(CostRefused, match="c needs about 32 GiB of memory, more than the 16 GiB"):
            check_cost(big, yes=yes, available=2 ** 34)
    assert check_cost(big, yes=True, available=None) == "c: about 1 s and 32 GiB"   # unknown memory: no refusal
    assert check_cost(Cost(costs.NOTE_SECONDS * 2, 1, "d"), yes=False, available=None) == "d: about 20 s and 0 MiB"


def test_available_memory_is_meminfos_memavailable(tmp_path, monkeypatch):
    """Exactly MemAvailable of the file read (a fixed copy: the live one moves between reads);
    control: a file without the line falls back to the free pages, a live number."""
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       24576000 kB\nMemFree:         1000 kB\nMemAvailable:   23068672 kB\n",
                       encoding="ascii")
    assert costs.available_memory(str(meminfo)) == 23068672 * 1024
    meminfo.write_text("MemTotal:       24576000 kB\n", encoding="ascii")
    monkeypatch.setattr(costs.os, "sysconf", {"SC_AVPHYS_PAGES": 3, "SC_PAGE_SIZE": 4096}.__getitem__)
    assert costs.available_memory(str(meminfo)) == 3 * 4096
    assert costs.available_memory() > 0                              # the live file reads


@pytest.mark.parametrize("bad", [{"seconds": -1.0}, {"bytes": -1}, {"bytes": 1.5}, {"what": ""}])
def test_a_cost_is_validated(bad):
    with pytest.raises(ValueError, match=f"^{next(iter(bad))} must be"):
        Cost(**{"seconds": 1.0, "bytes": 1, "what": "x", **bad})


# ----------------------------------------------------------------------------- the models
def test_the_estimators_grow_as_their_algorithms_do():
    """Exact kappa: T^4.7 time (theory.kappa.exact_seconds), T^4 memory; quadrature T^3; Monte
    Carlo linear in the systems; training linear in steps and batch; the optimum's starts."""
    a30, a60 = (costs.kappa_cost(LDSFamily("a", T=T), "exact-rational", 2) for T in (30, 60))
    assert a60.seconds / a30.seconds == pytest.approx(2 ** 4.7) and a60.bytes / a30.bytes == pytest.approx(16, rel=1e-3)
    q = [costs.kappa_cost(LDSFamily("a", T=T), "gauss-legendre", 2).seconds for T in (100, 200)]
    assert q[1] / q[0] == pytest.approx(8)
    m = [costs.kappa_cost(LDSFamily("d"), "mc-moments", n).seconds for n in (1000, 2000)]
    assert m[1] / m[0] == pytest.approx(2)

    class C:
        steps, batch, T, d, s, layers = 8000, 3000, 30, 5, 1, 1
    one = costs.train_cost(C, 10)
    C.steps *= 2
    assert costs.train_cost(C, 10).seconds - costs.TRAIN_FIXED_SECONDS == pytest.approx(
        2 * (one.seconds - costs.TRAIN_FIXED_SECONDS))
    o = [costs.optimum_cost(LDSFamily("a"), 4, n, 10, True).seconds for n in (32, 64, 96)]
    assert o[2] - o[1] == pytest.approx(o[1] - o[0]) and o[0] > o[1] - o[0]     # the starts, and the moments


def test_runs_spread_over_workers():
    runs = [Cost(100.0, 10, "r"), Cost(300.0, 30, "r"), Cost(100.0, 20, "r")]
    two = costs.runs_cost(runs, 2, "w", extra_seconds=5)
    assert (two.seconds, two.bytes) == (max(500 / 2, 300) + 5, 50)
    assert costs.runs_cost(runs, 1, "w").seconds == 500 and costs.runs_cost([], 4, "w").seconds == 0


# ----------------------------------------------------------------------------- the commands
def test_the_issues_exact_kappa_at_T_100000_is_refused_in_one_line_even_with_yes(monkeypatch, capsys):
    monkeypatch.setattr("theory.kappa.kappa", _stub)
    for yes in ([], ["--yes"]):
        assert main(["kappa", "--method", "exact-rational", "--T", "100000", *yes]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "Traceback" not in err, err               # one line, no usage
        assert "kappa by exact rational arithmetic at --T 100000 needs about" in err
        assert "this machine has available (--yes does not override this)" in err


def test_exact_kappa_at_T_300_needs_yes(monkeypatch, capsys):
    """Past the budget (about 1.8 h): refused without --yes, naming --yes and the quadrature;
    with --yes the estimate is announced and the (stubbed) work starts -- unless the machine
    lacks the memory (then the refusal is the other one)."""
    monkeypatch.setattr("theory.kappa.kappa", _stub)
    monkeypatch.setattr(costs, "available_memory", lambda: 2 ** 40)   # the 20 GiB fit, whatever runs beside
    assert main(["kappa", "--method", "exact", "--T", "300"]) == 2
    (line,) = _error_lines(capsys.readouterr().err)
    assert "would take about 1.8 h" in line and "give --yes" in line and "--method quadrature" in line
    with pytest.raises(Reached):
        main(["kappa", "--method", "exact", "--T", "300", "--yes"])
    assert "ldsicl kappa: estimate: kappa by exact rational arithmetic at --T 300: about 1.8 h" in capsys.readouterr().err


def test_a_cheap_command_says_nothing_and_runs(capsys):
    assert main(["kappa", "--T", "8", "--d", "2", "--json"]) == 0
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("argv, words", [
    (["optimum", "--s", "10", "--starts", "4096", "--max-memory", "1000"], "the optimum of --s 10 over --starts 4096"),
    (["train", "--steps", "10000000", "--no-cache"], "training --steps 10000000 x 3000 sequences of T = 30, s = 1"),
    (["train", "--steps", "2", "--batch", "10000000", "--no-cache", "--max-memory", "1e6"],
     "training --steps 2 x --batch 10000000 sequences of T = 30"),
    (["sweep", "--grid", "T=10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25 d=1,2,3,4,5,6,7,8,9,10,11,12",
      "--claims", "ar1-optimum,banding", "--untrained", "--workers", "2"], "the sweep of 192 cells of --grid"),
])
def test_expensive_work_is_refused_before_it_starts(argv, words, monkeypatch, capsys, tmp_path):
    """Each command's estimate refuses it (one line naming the options that set its size)
    before any work: the work is stubbed to raise, and the stub is never reached."""
    import claims.cli.sweep_command
    import models.trainer
    import theory.optimum
    monkeypatch.setattr(theory.optimum, "optimum_for", _stub)
    monkeypatch.setattr(models.trainer, "train", _stub)
    monkeypatch.setattr(claims.cli.sweep_command, "_sweep", _stub)
    assert main(argv + (["--out", str(tmp_path / "s")] if argv[0] == "sweep" else [])) == 2
    (line,) = _error_lines(capsys.readouterr().err)
    assert words in line and ("give --yes" in line or "--yes does not override" in line), line


def test_yes_lets_a_large_run_through_to_the_work(monkeypatch, capsys):
    """Control of the refusal above: the same run with --yes reaches the (stubbed) training."""
    import models.trainer
    monkeypatch.setattr(models.trainer, "train", _stub)
    with pytest.raises(Reached):
        main(["train", "--steps", "10000000", "--no-cache", "--yes", "--device", "cpu"])
    assert "estimate: training --steps 10000000" in capsys.readouterr().err


def test_report_run_estimates_the_claims_run_before_starting_it(monkeypatch, capsys, tmp_path):
    """``report --run`` in the paper profile with an empty cache: hours of training, refused
    without --yes (pytest is never started); the quick profile with the budget raised starts it."""
    import os
    import subprocess
    monkeypatch.setattr(subprocess, "call", _stub)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)                  # the estimate's pool: CI's 2 cores
    monkeypatch.setenv("LDSICL_CACHE_DIR", str(tmp_path / "cache"))
    assert main(["report", "--run", "--profile", "paper", "--out", str(tmp_path / "r")]) == 2
    (line,) = _error_lines(capsys.readouterr().err)
    assert "the claims run (pytest claims -n auto) of the --profile paper (236 of its 236 runs to train" in line
    monkeypatch.setattr(costs, "BUDGET_SECONDS", 1e9)
    with pytest.raises(Reached):
        main(["report", "--run", "--out", str(tmp_path / "r")])


def test_a_profile_on_a_cluster_is_announced_not_refused(monkeypatch, capsys, tmp_path):
    """The paper profile with an empty cache: refused on this machine's pool without --yes;
    on a cluster's address its core-time is announced and the (stubbed) executor is reached."""
    import os

    import claims.cluster.executor
    monkeypatch.setattr(claims.cluster.executor, "open_executor", _stub)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)                  # the estimate's pool: CI's 2 cores
    argv = ["train", "--profile", "paper", "--cache-dir", str(tmp_path)]
    assert main(argv) == 2
    assert "give --yes" in _error_lines(capsys.readouterr().err)[0]
    with pytest.raises(Reached):
        main(argv + ["--scheduler", "tcp://10.0.0.5:8786"])
    assert "(236 of its 236 runs to train) in core-time on the cluster: about" in capsys.readouterr().err
