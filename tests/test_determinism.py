"""Claims runs are reproducible: the same records serially, under pytest-xdist and with CI set.

A tiny claim file using the real plugin (loaded as the repository's root conftest.py does)
draws hypothesis examples through ``claims.harness.seeds.claim_settings``, builds Student-t and
Monte Carlo intervals from named seeds and writes a reported row.  It is run in
subprocesses -- twice serially (once with the environment variable CI set, once without)
and once with ``-n 2`` -- and ``python -m claims.reports.compare`` must find the reports identical
(timestamps and node ids aside; the records carry no timings).  Control: two runs with
``--claims-random`` draw different examples, and the same comparison tells them apart.
Every subprocess is bounded and killed with its process group when it runs over
(tests/_procs.py).
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from _procs import PYTHON, clean_env, run_bounded

REPO = Path(__file__).resolve().parents[1]
BOUND_S = 300

TINY = '''
import math

import pytest
from hypothesis import given, strategies as st

from claims.harness.seeds import claim_settings, rng_for
from claims.harness.stats import mc_fields, seed_fields


def test_draws(claim, profile):
    drawn = []

    @claim_settings(profile)
    @given(x=st.floats(-1, 1), n=st.integers(0, 10 ** 9))
    def run(x, n):
        drawn.append([x, n])

    run()
    claim.record(claim="tiny", paper_ref="eq. 0", setting="a", check="draws", label="max |x| over draws",
                 measured=max(abs(x) for x, _ in drawn), tolerance=2.0, comparator="<=",
                 tolerance_source="project", details={"drawn": drawn}).check()


@pytest.mark.parametrize("setting", ["a", "b", "c"])
def test_seeds(claim, setting):
    values = [float(rng_for("tiny", setting, i).normal(0.0, 0.01)) for i in range(3)]
    claim.record(claim="tiny", paper_ref="eq. 0", setting=setting, check="seeds", label="signed error",
                 **seed_fields(values), tolerance=0.05, comparator="abs<=",
                 tolerance_source="project", details={"per_seed": values}).check()


def test_mc(claim):
    x = rng_for("tiny", "mc").standard_normal(1000)
    claim.record(claim="tiny", paper_ref="eq. 0", setting="a", check="mc-mean", label="mean",
                 **mc_fields(x.mean(), x.std(ddof=1) / math.sqrt(x.size)), tolerance=0.2,
                 comparator="abs<=", tolerance_source="project").check()


def test_table(claim):
    claim.record(claim="tiny", paper_ref="Tab. 0", setting="a", check="table", label="mse",
                 kind="reported", measured=float(rng_for("tiny", "mse").random()))
'''


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    d = tmp_path_factory.mktemp("tiny")
    (d / "pytest.ini").write_text("[pytest]\naddopts = -p no:cacheprovider\n")
    (d / "conftest.py").write_text('pytest_plugins = ["claims.harness.plugin"]\n')
    (d / "test_tiny.py").write_text(TINY)
    return d


def _run(tiny: Path, name: str, *args, ci=None) -> Path:
    out = tiny / "reports" / name
    proc = run_bounded([PYTHON, "-m", "pytest", "-q", "test_tiny.py", "--claims-report",
                        str(out), *args], timeout=BOUND_S, cwd=tiny,
                       env=clean_env(REPO, CI=ci))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "6 passed" in proc.stdout
    return out / "claims.json"


def _compare(a: Path, b: Path):
    return run_bounded([PYTHON, "-m", "claims.reports.compare", str(a), str(b)], timeout=120,
                       cwd=REPO, env=clean_env(REPO))


def test_serial_xdist_and_ci_runs_write_identical_records(tiny, tmp_path):
    serial = _run(tiny, "serial", ci=None)
    serial_ci = _run(tiny, "serial-ci", ci="1")
    xdist = _run(tiny, "xdist", "-n", "2", ci=None)
    data = json.loads(serial.read_text())
    assert data["run"] == {"hypothesis_draws": "derandomized", "retrain": False,
                           "params": {"T": 30, "d": 5, "sigma_w": 0.1, "sigma_v": 0.1, "sigma_0": 1.0}}
    assert len(data["records"]) == 6 and len(data["summary"]["inconclusive"]) == 0
    draws = next(r for r in data["records"] if r["label"] == "max |x| over draws")
    assert len(draws["details"]["drawn"]) >= 10            # hypothesis really drew examples
    for other in (serial_ci, xdist):
        res = _compare(serial, other)
        assert res.returncode == 0, res.stdout + res.stderr
        assert "bit-identical:      6" in res.stdout and "RESULT: MATCH" in res.stdout
    # the same claims with every label reworded in the source: the records match by
    # check_id, so what the run concludes is the same (--verdicts); the full comparison
    # names the labels as the one thing that moved
    reworded = tmp_path / "reworded"
    reworded.mkdir()
    for name in ("pytest.ini", "conftest.py"):
        (reworded / name).write_text((tiny / name).read_text())
    (reworded / "test_tiny.py").write_text(TINY.replace('label="', 'label="reworded: ').replace(
        'label=f"', 'label=f"reworded: '))
    assert (reworded / "test_tiny.py").read_text().count('label="reworded: ') == 4
    other = _run(reworded, "serial")
    res = run_bounded([PYTHON, "-m", "claims.reports.compare", "--verdicts", str(serial), str(other)],
                      timeout=120, cwd=REPO, env=clean_env(REPO))
    assert res.returncode == 0 and "RESULT: SAME VERDICTS" in res.stdout, res.stdout + res.stderr
    res = _compare(serial, other)
    assert res.returncode == 1 and "unmatched: 0 only in BEFORE, 0 only in AFTER" in res.stdout
    assert res.stdout.count("        label: ") == 6


def test_control_random_draws_are_told_apart(tiny):
    a = _run(tiny, "random-1", "--claims-random")
    b = _run(tiny, "random-2", "--claims-random")
    assert json.loads(a.read_text())["run"]["hypothesis_draws"] == "random"
    res = _compare(a, b)
    assert res.returncode == 1, res.stdout + res.stderr
    assert "DIFFERS: tiny/draws/a" in res.stdout
    # the seeded rows do not depend on hypothesis: they still match
    assert "bit-identical:      5" in res.stdout


def test_run_bounded_kills_the_process_group(tmp_path):
    """A child that outlives its bound is killed together with the grandchild it started."""
    script = ("import subprocess, sys, time\n"
              "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'])\n"
              "print(p.pid, flush=True)\n"
              "time.sleep(120)\n")
    with pytest.raises(pytest.fail.Exception, match="killed with its process group") as exc:
        run_bounded([PYTHON, "-c", script], timeout=3, cwd=tmp_path, env=clean_env(REPO))
    grandchild = int(str(exc.value).split("--- stdout\n", 1)[1].split()[0])
    deadline = time.monotonic() + 10
    while _alive(grandchild):
        if time.monotonic() > deadline:
            pytest.fail(f"grandchild {grandchild} survived the kill of its process group")
        time.sleep(0.1)


def _alive(pid: int) -> bool:
    """Running (a killed process not yet reaped by its new parent is a zombie: dead)."""
    stat = Path(f"/proc/{pid}/stat")
    if stat.parent.parent.is_dir() and Path("/proc/self").exists():
        try:
            return stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"
        except (FileNotFoundError, ProcessLookupError):
            return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_a_real_claim_serially_and_under_xdist(tmp_path):
    """The same for a claim of the suite: ``gd-equivalence``'s exact check (theta* against
    one GD step, hypothesis-drawn systems of settings a-d, with its two negative controls),
    run from the repository root serially and with ``-n 2``."""
    node = "claims/test_gd_equivalence.py::test_theta_star_predicts_one_gd_step"
    reports = []
    for name, args in (("serial", ()), ("xdist", ("-n", "2"))):
        out = tmp_path / name
        proc = run_bounded([PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider", node,
                            "--claims-report", str(out), *args], timeout=BOUND_S, cwd=REPO,
                           env=clean_env(REPO))
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        assert "3 passed" in proc.stdout
        reports.append(out / "claims.json")
    assert len(json.loads(reports[0].read_text())["records"]) == 3
    res = _compare(*reports)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "bit-identical:      3" in res.stdout and "RESULT: MATCH" in res.stdout


CONTEXT = '''
import sys
if sys.argv[1] == "extra":
    import theory.n4sid, theory.stationary, models.twins      # project modules the rest leaves out
from hypothesis import given, settings, strategies as st
from claims.harness.profiles import get_profile
from claims.harness.seeds import claim_settings
drawn = []
deco = (claim_settings(get_profile("paper")) if sys.argv[2] == "claim"      # 200 examples
        else settings(max_examples=100, derandomize=True, deadline=None, database=None))
@deco
@given(n=st.integers(0, 2 ** 32 - 1))
def run(n):
    drawn.append(n)
run()
print(drawn)
'''


def _draws(tmp_path, context: str, mode: str) -> str:
    script = tmp_path / "draws.py"
    script.write_text(CONTEXT)
    proc = run_bounded([PYTHON, str(script), context, mode], timeout=120, cwd=tmp_path, env=clean_env(REPO))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.stdout.strip()


def test_claim_draws_do_not_depend_on_the_modules_imported_before(tmp_path):
    """claims.harness.seeds.claim_settings draws the same examples whether or not other project
    modules were imported first (it imports them all: import_every_module).  Control: plain
    derandomised hypothesis settings do depend on it in this hypothesis (it draws constants
    from the local modules imported so far) -- the context the claims' draws were exposed to."""
    assert _draws(tmp_path, "bare", "claim") == _draws(tmp_path, "extra", "claim")
    from hypothesis.internal.conjecture import providers
    if not hasattr(providers, "_get_local_constants"):
        pytest.skip("this hypothesis draws no constants from local modules: the control has nothing to show")
    assert _draws(tmp_path, "bare", "plain") != _draws(tmp_path, "extra", "plain")
