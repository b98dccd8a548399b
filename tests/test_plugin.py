"""claims/harness/plugin.py: the pytest plugin, run on a throwaway project with ``pytester`` that
loads the real plugin as the repository's root conftest.py does (``pytest_plugins =
["claims.harness.plugin"]``, or ``-p claims.harness.plugin``), serially and with ``-n 2``; the table and
the report files it produces; its options; known non-reproductions per profile; one test
runs pytest from the repository root with ``--profile`` before the path.  (Its scheduling:
tests/test_plugin_scheduling.py.)"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from _procs import clean_env, run_bounded

from claims.harness.seeds import seed_for

pytest_plugins = ["pytester"]

REPO = Path(__file__).resolve().parents[1]
#: the default point as a run records it (claims/harness/params.py)
DEFAULT_PARAMS = {"T": 30, "d": 5, "sigma_w": 0.1, "sigma_v": 0.1, "sigma_0": 1.0}
RECORD_KEYS = {"check_id", "claim", "check", "coords", "label", "paper_ref", "kind", "measured",
               "interval", "interval_kind", "n_seeds", "values", "runs", "basins", "per_run", "clipped",
               "tolerance", "comparator",
               "tolerance_source", "verdict", "holds_at", "decide", "expect", "details", "note",
               "test", "order", "profile", "outcome", "xfail_reason"}


# ------------------------------------------------------------------------------ plugin

DEMO = '''
import numpy as np
import pytest

from claims.harness.seeds import seed_for


def test_holds(claim):
    claim.record(claim="alpha", paper_ref="Thm 1", setting="a", check="k23", label="|err|",
                 measured=np.float64(0.5), tolerance=1.0, comparator="<=", tolerance_source="project",
                 details={"arr": np.arange(3), "seed": np.int64(seed_for("alpha"))}).check()


def test_control(claim):
    claim.record(claim="alpha", paper_ref="Thm 1", setting="asym", check="k24", label="|err|",
                 measured=3.0, tolerance=1.0, comparator="<=", tolerance_source="project", expect="fails").check()


def test_unexpected(claim):
    claim.record(claim="beta", paper_ref="eq. 2", setting="b", check="k25", label="gap",
                 measured=2.0, tolerance=1.0, comparator="<=", tolerance_source="project").check()


@pytest.mark.xfail(strict=True, reason="paper's 0.93 does not reproduce")
def test_known(claim):
    claim.record(claim="beta", paper_ref="Tab. 1", setting="c", check="k26", label="r2",
                 measured=0.5, tolerance=0.9, comparator=">=", tolerance_source="project").check()


def test_nan(claim):
    rec = claim.record(claim="beta", paper_ref="eq. 3", check="k27", label="nan metric",
                       measured=float("nan"), tolerance=1.0, comparator="abs<=", tolerance_source="project")
    assert rec.verdict == "fails"
    with pytest.raises(AssertionError, match="NaN"):
        rec.check()


def test_unchecked(claim):
    claim.record(claim="gamma", paper_ref="eq. 4", check="k28", label="m", measured=1, tolerance=1,
                 comparator="==", tolerance_source="project")


@pytest.mark.xfail(strict=True, reason="thought not to reproduce")
def test_xpass(claim):
    claim.record(claim="delta", paper_ref="eq. 5", check="k29", label="m", measured=0.0, tolerance=1.0,
                 comparator="<=", tolerance_source="project").check()


@pytest.mark.xfail(False, reason="condition false: not an xfail", strict=True)
def test_cond_xfail(claim):
    claim.record(claim="delta", paper_ref="eq. 5", check="k30", label="m", measured=0.0, tolerance=1.0,
                 comparator="<=", tolerance_source="project").check()


@pytest.mark.xfail(1 + 1 == 2, reason="condition true", strict=True)
@pytest.mark.xfail(False, reason="condition false", strict=True)   # evaluated first
def test_cond_xpass(claim):
    claim.record(claim="delta", paper_ref="eq. 5", check="k31", label="m", measured=0.0, tolerance=1.0,
                 comparator="<=", tolerance_source="project").check()


@pytest.mark.xfail("1 + 1 == 2", strict=True)
def test_str_cond_xpass(claim):
    claim.record(claim="delta", paper_ref="eq. 5", check="k32", label="m", measured=0.0, tolerance=1.0,
                 comparator="<=", tolerance_source="project").check()


@pytest.mark.xfail(raises=ValueError, strict=True, reason="only a ValueError is expected")
def test_other_error(claim):
    claim.record(claim="delta", paper_ref="eq. 5", check="k33", label="m", measured=0.0, tolerance=1.0,
                 comparator="<=", tolerance_source="project").check()
    raise TypeError("not the expected error")


def test_plain(profile):
    assert profile.name in ("quick", "paper")


def test_inconclusive(claim):
    from claims.harness.stats import seed_fields
    rec = claim.record(claim="epsilon", paper_ref="eq. 6", setting="a", check="k34", label="signed err",
                       **seed_fields([0.002, 0.012, -0.008]), tolerance=0.01,
                       comparator="abs<=", tolerance_source="project")
    assert rec.inconclusive
    rec.check()


def test_control_inconclusive(claim):
    claim.record(claim="epsilon", paper_ref="eq. 6", setting="asym", check="k35", label="gap",
                 measured=0.012, interval=(0.008, 0.016), tolerance=0.01, comparator="<=",
                 tolerance_source="project", expect="fails").check()


def test_reported(claim):
    claim.record(claim="epsilon", paper_ref="Tab. 2", setting="a", check="k36", label="mse",
                 kind="reported", measured=0.25, interval=(0.2, 0.3), n_seeds=3)


@pytest.mark.xfail(strict=True, reason="listed although its interval contains 1 %")
def test_xfail_inconclusive(claim):
    claim.record(claim="epsilon", paper_ref="eq. 6", setting="d", check="k37", label="odd share",
                 measured=0.0144, interval=(0.0098, 0.0189), n_seeds=3, tolerance=0.01,
                 comparator="<=", tolerance_source="project").check()
'''

EXPECTED = {  # test name -> outcome of its records
    "test_holds": "passed", "test_control": "passed", "test_unexpected": "failed",
    "test_known": "xfailed", "test_nan": "passed", "test_unchecked": "error",
    "test_xpass": "failed", "test_cond_xfail": "passed", "test_cond_xpass": "failed",
    "test_str_cond_xpass": "failed", "test_other_error": "failed",
    "test_inconclusive": "passed", "test_control_inconclusive": "failed",
    "test_reported": "passed", "test_xfail_inconclusive": "failed",
}


@pytest.fixture
def project(pytester, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [str(REPO)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    pytester.makeini("[pytest]\naddopts = --strict-markers -p no:cacheprovider\n"
                     "xfail_strict = true\nfilterwarnings =\n    error\n"
                     # as pyproject.toml: pytest-benchmark's notice under xdist is not an error
                     "    ignore:Benchmarks are automatically disabled because xdist plugin is active\n")
    pytester.makeconftest('pytest_plugins = ["claims.harness.plugin"]\n')  # as the root conftest.py
    pytester.makepyfile(test_demo=DEMO)
    return pytester


def _load(path: Path) -> dict:
    data = json.loads(path.read_text(encoding="utf-8"))
    for r in data["records"]:
        r["test"] = r["test"].split("::")[-1]
    return data


def _check_report(result, pytester, profile="quick"):
    # test_unchecked passes its call phase and errors at teardown
    result.assert_outcomes(passed=8, failed=7, xfailed=1, errors=1)
    out = result.stdout.str()
    assert f"claims (profile {profile})" in out
    result.stdout.fnmatch_lines([
        "check_id*paper ref*where*label*measured*95% interval*basis*holds at*criterion*"
        "tol. by*verdict*expected*outcome",
        "alpha/k24/asym/control*Thm 1*asym*|err|*3*-*exact*3*<= 1*project*fails*fails*passed",
        "alpha/k23/a*Thm 1*a*|err|*0.5*-*exact*0.5*<= 1*project*holds*holds*passed",
        "*alpha: 2 checks, 1 holds, 1 negative control fails as expected",
        "beta/k26/c*Tab. 1*c*r2*0.5*>= 0.9*fails*holds*xfailed",
        "*beta: 3 checks, 1 not reproduced (xfail), 2 UNEXPECTED verdict, 1 in FAILING tests",
        "*xfail beta/k26/c: paper's 0.93 does not reproduce",
        "*note  beta/k27: measured is NaN*",
        "*delta: 5 checks, 5 hold, 4 in FAILING tests",
        "*note  delta/k29: XPASS(strict)*",
        "epsilon/k35/asym/control*eq. 6*asym*gap*0.012*[[]0.008, 0.016]*MC 1.96 SE*0.016*<= 0.01*project*"
        "inconclusive*fails*failed",
        "epsilon/k34/a*eq. 6*a*signed err*0.002*[[]-0.0228*, 0.0268*]*t, 3 seeds*0.0268*abs<= 0.01*"
        "project*inconclusive*holds*passed",
        "epsilon/k36/a*Tab. 2*a*mse*0.25*[[]0.2, 0.3]*t, 3 seeds*-*-*-*reported*-*passed",
        "*epsilon: 3 checks, 2 inconclusive, 1 UNEXPECTED verdict, 2 in FAILING tests, "
        "1 reported row (no verdict)",
        "*note  epsilon/k37/d: XPASS(strict)*",
        "*gamma: 1 check, 1 holds, 1 in FAILING tests",
        "interval checks: 2 with a 95% interval; about 0.1 (= 0.05 x 2) expected*",
        "inconclusive checks: 3 (2 positive, passing; 1 negative control(s), failing their "
        "test)*",
        "  - epsilon/k35/asym/control NEGATIVE CONTROL: gap: 0.012, interval "
        "[[]0.008, 0.016] (MC 1.96 SE) against <= 0.01",
        "      more Monte Carlo samples: the interval half-width is 0.004 against a "
        "tolerance of 0.01; * about 4x the samples would resolve it (towards fails)*",
        "  - epsilon/k34/a: signed err: 0.002, interval *",
        "      more seeds: *about * seeds would resolve it (towards holds, if the mean stays;"
        " n = 3 now)",
        "5 claims, 14 checks*NEEDS ATTENTION",
    ])
    data = _load(pytester.path / "reports" / "claims.json")
    assert {"records", "profile", "generated", "summary"} <= set(data)
    assert data["profile"]["name"] == profile
    recs = data["records"]
    assert all(RECORD_KEYS <= set(r) for r in recs)
    assert {r["test"]: r["outcome"] for r in recs} == EXPECTED
    assert [(r["claim"], r["test"]) for r in recs] == sorted((r["claim"], r["test"]) for r in recs)
    by = {r["test"]: r for r in recs}
    assert by["test_holds"]["measured"] == 0.5 and by["test_holds"]["details"] == {
        "arr": [0, 1, 2], "seed": seed_for("alpha")}
    assert by["test_known"]["verdict"] == "fails"
    assert by["test_known"]["xfail_reason"] == "paper's 0.93 does not reproduce"
    assert by["test_nan"]["measured"] == "NaN" and by["test_nan"]["verdict"] == "fails"
    assert by["test_xpass"]["xfail_reason"] == "thought not to reproduce"
    assert "XPASS(strict)" in by["test_xpass"]["note"]
    assert by["test_cond_xfail"]["xfail_reason"] is None
    assert by["test_cond_xpass"]["xfail_reason"] == "condition true"
    assert by["test_str_cond_xpass"]["xfail_reason"] == "condition: 1 + 1 == 2"
    for name in ("test_cond_xpass", "test_str_cond_xpass"):
        assert "XPASS(strict)" in by[name]["note"]
    assert by["test_other_error"]["xfail_reason"] is None
    assert by["test_other_error"]["note"] is None
    assert by["test_holds"]["xfail_reason"] is None and by["test_holds"]["note"] is None
    assert all(r["profile"] == profile for r in recs)
    assert data["summary"]["claims"]["alpha"]["ok"] is True
    assert data["summary"]["total"]["ok"] is False
    md = (pytester.path / "reports" / "claims.md").read_text(encoding="utf-8")
    assert "## alpha" in md and "\\|err\\|" in md and "paper's 0.93 does not reproduce" in md
    assert "## Inconclusive checks" in md and "NEGATIVE CONTROL: fails its test" in md
    assert "interval checks: 2 with a 95% interval" in md
    assert by["test_reported"]["verdict"] == "reported" and by["test_reported"]["expect"] is None
    assert by["test_reported"]["holds_at"] is None and by["test_reported"]["tolerance"] is None
    assert by["test_inconclusive"]["interval_kind"] == "t95-seeds"
    assert by["test_inconclusive"]["n_seeds"] == 3 and by["test_inconclusive"]["decide"]
    assert by["test_control_inconclusive"]["interval_kind"] == "mc95"
    assert by["test_xfail_inconclusive"]["verdict"] == "inconclusive"
    assert "XPASS(strict)" in by["test_xfail_inconclusive"]["note"]
    summ = data["summary"]
    assert summ["intervals"]["checks"] == 2 and summ["intervals"]["level"] == 0.95
    assert summ["intervals"]["expected_chance_disagreements"] == 0.1
    assert sorted(r["test"].split("::")[-1] for r in summ["inconclusive"]) == [
        "test_control_inconclusive", "test_inconclusive", "test_xfail_inconclusive"]
    assert all(r["decide"] for r in summ["inconclusive"])
    assert summ["claims"]["epsilon"]["reported"] == 1 and summ["total"]["inconclusive"] == 2
    assert data["run"] == {"hypothesis_draws": "derandomized", "retrain": False, "params": DEFAULT_PARAMS}
    return data


def test_plugin_serial_and_xdist_agree(project):
    serial = _check_report(project.runpytest(), project)
    parallel = _check_report(project.runpytest("-n", "2"), project)
    assert serial["records"] == parallel["records"]
    assert serial["summary"] == parallel["summary"]


def test_plugin_options(project):
    result = project.runpytest("--profile", "paper", "--claims-report", "out/claims")
    out = result.stdout.str()
    assert "claims profile: paper" in out
    _check_report_dir = project.path / "out" / "claims"
    assert sorted(p.name for p in _check_report_dir.iterdir()) == ["claims.json", "claims.md", "figures", "index.html"]
    assert not (project.path / "reports").exists()
    data = _load(_check_report_dir / "claims.json")
    assert data["profile"]["name"] == "paper"
    assert {r["profile"] for r in data["records"]} == {"paper"}

    bogus = project.runpytest("--profile", "bogus")
    assert bogus.ret == pytest.ExitCode.USAGE_ERROR
    assert "--profile" in bogus.stderr.str() and "bogus" in bogus.stderr.str()


RUNOPTS_DEMO = """
import pytest

from claims.harness.seeds import claim_settings


@pytest.mark.parametrize("i", range(4))
def test_opts(claim, profile, i):
    o = profile.run
    claim.record(claim="opts", paper_ref="-", check="k38", label=f"retrain_before {i}", kind="reported",
                 measured=-1.0 if o.retrain_before is None else o.retrain_before,
                 details={"derandomize": claim_settings(profile).derandomize})
"""


@pytest.fixture
def opts_project(pytester, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [str(REPO)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    pytester.makeini("[pytest]\naddopts = -p no:cacheprovider\n")
    pytester.makeconftest('pytest_plugins = ["claims.harness.plugin"]\n')
    pytester.makepyfile(test_opts=RUNOPTS_DEMO)
    return pytester


def _opts(pytester, *args):
    result = pytester.runpytest(*args)
    result.assert_outcomes(passed=4)
    data = json.loads((pytester.path / "reports" / "claims.json").read_text())
    return data, result.stdout.str()


def test_claims_random_option(opts_project):
    data, _ = _opts(opts_project, "-n", "2")
    assert {r["details"]["derandomize"] for r in data["records"]} == {True}
    assert data["run"] == {"hypothesis_draws": "derandomized", "retrain": False, "params": DEFAULT_PARAMS}
    data, out = _opts(opts_project, "-n", "2", "--claims-random")
    assert {r["details"]["derandomize"] for r in data["records"]} == {False}
    assert data["run"]["hypothesis_draws"] == "random" and "hypothesis_draws = random" in out


def test_retrain_option_hands_the_start_time_to_every_worker(opts_project):
    import time

    t0 = time.time()
    data, _ = _opts(opts_project, "-n", "2", "--retrain")
    t1 = time.time()
    stamps = {r["measured"] for r in data["records"]}
    assert len(stamps) == 1 and t0 <= stamps.pop() <= t1          # one session time, all workers
    assert {r["details"]["derandomize"] for r in data["records"]} == {True}
    assert data["run"] == {"hypothesis_draws": "derandomized", "retrain": True, "params": DEFAULT_PARAMS}
    data, _ = _opts(opts_project)                                  # without it: no time at all
    assert {r["measured"] for r in data["records"]} == {-1.0}


def test_plugin_silent_without_records(pytester):
    pytester.makepyfile("def test_a(profile):\n    assert profile.name == 'paper'\n")
    result = pytester.runpytest("-p", "claims.harness.plugin", "--profile", "paper")
    result.assert_outcomes(passed=1)
    assert "claims (profile" not in result.stdout.str()
    assert not (pytester.path / "reports").exists()


#: the claim harness's section of ``pytest --help`` as reviewed (tests/data/plugin_help.txt),
#: whitespace collapsed so that the terminal's width and pytest's wrapping do not matter;
#: after a deliberate change to an option, rewrite it with ``plugin_help(pytester)`` and review
PLUGIN_HELP = Path(__file__).parent / "data" / "plugin_help.txt"


def plugin_help(pytester) -> str:
    """The section of ``pytest -p claims.harness.plugin --help`` that the plugin adds, from its
    heading to the next heading, whitespace collapsed to single spaces."""
    lines = pytester.runpytest_inprocess("-p", "claims.harness.plugin", "--help").outlines
    start = next(i for i, ln in enumerate(lines) if ln.startswith("claim harness"))
    end = next((i for i in range(start + 1, len(lines)) if lines[i] and not lines[i][0].isspace()), len(lines))
    return " ".join(" ".join(lines[start:end]).split())


def test_the_plugins_options_read_as_reviewed(pytester):
    """What ``pytest claims --help`` tells a reviewer about --profile, --claims-report,
    --claims-random and --retrain changes only on purpose: the section equals its reviewed copy."""
    got = plugin_help(pytester)
    assert got == " ".join(PLUGIN_HELP.read_text(encoding="utf-8").split()), got


KNOWN_DEMO = """
import pytest
from claims.harness import known
from claims.harness.spec import ClaimSpec
from claims.specs import register

DEMO = ClaimSpec("demo", "a demo claim", "test_known_demo.py",
                 known={"demo/one/b": {"quick": "fails", "paper": "fails"},
                        "demo/two/c/s=2": {"paper": "fails with 8 seeds"}})

with register(DEMO):        # registered while the marks are made, removed after
    ONE = known.known_params(lambda st: f"demo/one/{st}", ["a", "b"])
    TWO = known.known_params(lambda st, s: f"demo/two/{st}/s={s}", [("c", 1), ("c", 2)])

@pytest.mark.parametrize("setting", ONE)
def test_one(setting):
    assert setting == "a"

@pytest.mark.parametrize("setting, s", TWO)
def test_two(setting, s):
    assert s == 1
"""


@pytest.mark.parametrize("profile, outcomes", [("quick", dict(passed=2, xfailed=1, failed=1)),
                                               ("paper", dict(passed=2, xfailed=2))])
def test_known_params_marks_per_profile(pytester, profile, outcomes):
    """A check listed for both profiles xfails in both; one listed for a profile only there,
    read from --profile when pytest evaluates the mark (strict: no XPASS).  The demo's claim
    is registered only while its marks are made (claims.specs.register): the in-process run
    shares this process's registry, and entries left behind made tests/test_known.py fail
    when it ran later in one process (mutmut's serial run found it)."""
    import claims.specs
    before = list(claims.specs.CLAIMS)
    pytester.makepyfile(test_known_demo=KNOWN_DEMO)
    result = pytester.runpytest("-p", "claims.harness.plugin", "-p", "no:cacheprovider", "-o", "xfail_strict=true",
                                "--profile", profile)
    result.assert_outcomes(**outcomes)
    if profile == "paper":
        result.stdout.no_fnmatch_line("*XPASS*")
    assert claims.specs.CLAIMS == before


@pytest.mark.parametrize("args", [["--profile", "paper", "claims"],
                                  ["claims", "--profile", "paper"]],
                         ids=["option-first", "path-first"])
def test_profile_option_from_the_repository_root(args, tmp_path):
    """The root conftest.py loads the plugin early enough for ``--profile`` anywhere."""
    proc = run_bounded(
        [sys.executable, "-m", "pytest", *args, "--collect-only", "-q", "-p", "no:cacheprovider",
         "--claims-report", str(tmp_path / "reports")],
        cwd=REPO, env=clean_env(REPO), timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "test_training_run" in proc.stdout
    assert not (tmp_path / "reports").exists()     # nothing recorded, no report
