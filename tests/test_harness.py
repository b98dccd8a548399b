"""Tests of the claim harness (claims/records.py, collect.py, report.py, seeds.py,
profiles.py, plugin.py; claims/compare.py in tests/test_compare.py).

Unit tests call the functions directly; the plugin tests build a throwaway project with
``pytester`` that loads the real plugin as the repository's root conftest.py does
(``pytest_plugins = ["claims.plugin"]``, or ``-p claims.plugin``), run it serially and
with ``-n 2``, and read the table and the report files it produces.  One test runs
pytest from the repository root with ``--profile`` before the path.
"""
from __future__ import annotations

import dataclasses
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from claims import harness, report
from claims.profiles import PAPER, PROFILES, QUICK, Profile, get_profile
from claims.records import (ClaimRecorder, Record, compare, format_value, make_record,
                            records_from_user_properties, to_builtin)
from claims.seeds import claim_settings, rng_for, seed_for

pytest_plugins = ["pytester"]

REPO = Path(__file__).resolve().parents[1]
RECORD_KEYS = {"claim", "paper_ref", "setting", "metric", "measured", "tolerance",
               "comparator", "verdict", "expect", "details", "test", "profile", "outcome",
               "xfail_reason", "note", "order"}


# ------------------------------------------------------------------------------ units

@pytest.mark.parametrize("m, op, t, expected", [
    (3, "<=", 3, True), (3, "<", 3, False), (3, ">=", 3, True), (3, ">", 3, False),
    (2, "==", 2, True), (2.0, "==", 2, True), (True, "==", 1, False), ("a", "==", "a", True),
    (-1e-12, "abs<=", 1e-10, True), (-1e-9, "abs<=", 1e-10, False),
    (math.inf, "<=", 1.0, False), (math.nan, "<=", 1.0, False), (math.nan, ">", 1.0, False),
])
def test_compare(m, op, t, expected):
    assert compare(m, op, t) is expected


def test_make_record_converts_and_validates():
    r = make_record(claim="ar1-optimum", paper_ref="Thm 4.1", metric="z",
                    measured=np.float32(0.25), tolerance=np.int64(1), comparator="<=",
                    setting="a", details={"v": np.arange(2.0), np.int64(3): (1, 2)})
    assert type(r["measured"]) is float and type(r["tolerance"]) is int
    assert r["details"] == {"v": [0.0, 1.0], "3": [1, 2]} and r["verdict"] == "holds"
    assert set(r) == RECORD_KEYS
    r = make_record(claim="x", paper_ref="p", metric="m", measured=np.array(2.5),
                    tolerance=1, comparator="<=")
    assert r["measured"] == 2.5 and r["verdict"] == "fails"
    bad = dict(claim="x", paper_ref="p", metric="m", measured=1.0, tolerance=1.0,
               comparator="<=")
    for change, exc in [({"comparator": "~"}, ValueError), ({"expect": "maybe"}, ValueError),
                        ({"claim": "Bad Id"}, ValueError), ({"paper_ref": " "}, ValueError),
                        ({"measured": [1.0, 2.0]}, TypeError), ({"measured": True}, TypeError),
                        ({"measured": 1j}, TypeError), ({"tolerance": math.nan}, ValueError),
                        ({"details": {"f": object()}}, TypeError)]:
        with pytest.raises(exc):
            make_record(**{**bad, **change})


def test_nan_measured_fails_and_check_raises_even_for_a_control():
    for expect in ("holds", "fails"):
        r = make_record(claim="x", paper_ref="p", metric="m", measured=np.float64("nan"),
                        tolerance=1.0, comparator="abs<=", expect=expect)
        assert r["verdict"] == "fails" and "NaN" in r["note"]
        with pytest.raises(AssertionError, match="NaN"):
            Record(r).check()


def test_record_check_messages():
    class Item:
        nodeid = "t.py::test"
        user_properties: list = []

    item = Item()
    rec = ClaimRecorder(item, "quick")
    ok = rec.record(claim="c", paper_ref="eq. 1", metric="err", measured=0.5, tolerance=1,
                    comparator="<=")
    assert ok.check() is ok and ok.holds and rec.unchecked() == []
    bad = rec.record(claim="c", paper_ref="eq. 1", setting="a", metric="err", measured=2.0,
                     tolerance=1, comparator="<=")
    with pytest.raises(AssertionError, match=r"claim c \[eq. 1\] setting a: err = 2 violates <= 1"):
        bad.check()
    ctl = rec.record(claim="c", paper_ref="eq. 1", metric="err", measured=0.5, tolerance=1,
                     comparator="<=", expect="fails")
    with pytest.raises(AssertionError, match="negative control unexpectedly holds"):
        ctl.check()
    assert rec.record(claim="c", paper_ref="eq. 1", metric="err", measured=5, tolerance=1,
                      comparator="<=", expect="fails").check().verdict == "fails"
    props = records_from_user_properties(item.user_properties)
    assert [p["order"] for p in props] == [0, 1, 2, 3]
    assert {p["test"] for p in props} == {"t.py::test"} and props[0]["profile"] == "quick"


def test_to_builtin_torch_and_numbers():
    torch = pytest.importorskip("torch")
    from fractions import Fraction
    assert to_builtin(torch.tensor(1.5)) == 1.5
    assert to_builtin({"w": torch.ones(2, dtype=torch.float64)}) == {"w": [1.0, 1.0]}
    assert to_builtin(Fraction(1, 4)) == 0.25 and to_builtin(np.bool_(True)) is True
    with pytest.raises(TypeError):
        to_builtin({1, 2})


def test_format_value():
    assert [format_value(v) for v in (0.0, 1.23456e-7, 4.0, 12345678, math.nan, "x")] == \
        ["0", "1.235e-07", "4", "1.235e+07", "nan", "x"]


def test_seeds_are_stable_names_not_workers():
    assert seed_for("ar1-optimum", "a", 0) == seed_for("ar1-optimum", "a", 0)
    assert seed_for("ar1-optimum", "a", 0) != seed_for("ar1-optimum", "a", 1)
    assert seed_for("a", 1) == seed_for("a", "1")
    # pinned: sha256("gd-equivalence") first 8 bytes, big endian, top bit cleared
    assert seed_for("gd-equivalence") == int.from_bytes(
        __import__("hashlib").sha256(b"gd-equivalence").digest()[:8], "big") & (2**63 - 1)
    assert all(0 <= seed_for(i) < 2**63 for i in range(200))
    np.testing.assert_array_equal(rng_for("x", 1).random(3), rng_for("x", 1).random(3))
    with pytest.raises(ValueError):
        seed_for()


def test_profiles():
    assert get_profile("quick") is QUICK and get_profile("paper") is PAPER
    assert set(PROFILES) == {"quick", "paper"}
    assert PAPER.train_steps == 8000 and PAPER.train_batch == 3000 and PAPER.n_seeds == 3
    assert QUICK.coef_rel_tol == PAPER.coef_rel_tol == 0.01
    knobs = ("train_steps", "train_batch", "n_seeds", "mc_trajectories",
             "heldout_sequences", "hypothesis_examples", "multistart")
    for f in knobs:
        assert getattr(QUICK, f) <= getattr(PAPER, f), f
    # every knob is read by a claim: no advertised knob that nothing uses
    assert {f.name for f in dataclasses.fields(Profile)} == \
        {"name", "description", "coef_rel_tol", *knobs}
    with pytest.raises(ValueError, match="unknown claims profile 'bogus'"):
        get_profile("bogus")
    with pytest.raises(ValueError):
        dataclasses.replace(QUICK, n_seeds=0)
    with pytest.raises(ValueError):
        dataclasses.replace(QUICK, multistart=True)
    with pytest.raises(ValueError):
        dataclasses.replace(QUICK, coef_rel_tol=2.0)
    assert dataclasses.replace(QUICK, multistart=2).multistart == 2
    with pytest.raises(Exception):  # frozen
        QUICK.n_seeds = 5  # type: ignore[misc]
    assert json.dumps(PAPER.as_dict())
    assert PAPER.as_dict() == dataclasses.asdict(PAPER)


def test_claim_settings(monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    s = claim_settings(PAPER)
    assert s.max_examples == 200 and s.deadline is None and s.derandomize is False
    monkeypatch.setenv("CI", "1")
    assert claim_settings(QUICK).derandomize is True
    with pytest.raises(TypeError):
        claim_settings()   # the profile is always passed in: no global state


def test_write_reports_atomic_and_strict_json(tmp_path):
    recs = [make_record(claim="b", paper_ref="p", metric="m|n", measured=math.nan,
                        tolerance=1, comparator="<="),
            make_record(claim="a", paper_ref="p", metric="m", measured=math.inf,
                        tolerance=1, comparator=">=")]
    for i, r in enumerate(recs):
        r.update(test=f"t::{i}", order=0, outcome="passed")
    j, m = report.write_reports(recs, tmp_path / "out", QUICK.as_dict())
    data = json.loads(j.read_text(), parse_constant=lambda c: pytest.fail(f"non-JSON {c}"))
    assert [r["claim"] for r in data["records"]] == ["a", "b"]
    assert data["records"][0]["measured"] == "Infinity" and data["records"][1]["measured"] == "NaN"
    assert "m\\|n" in m.read_text()
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["claims.json", "claims.md"]


def test_summary_line_wording():
    recs = []
    for verdict_holds, expect, outcome in [(True, "holds", "passed")] * 7 + \
            [(False, "fails", "passed")] * 2 + [(False, "holds", "xfailed")]:
        r = make_record(claim="ar1-optimum", paper_ref="p", metric="m",
                        measured=0.0 if verdict_holds else 2.0, tolerance=1.0,
                        comparator="<=", expect=expect)
        r["outcome"] = outcome
        recs.append(r)
    lines = report.summary_lines(report.summarize(recs))
    assert lines["ar1-optimum"] == ("ar1-optimum: 10 checks, 7 hold, 2 negative controls "
                                    "fail as expected, 1 not reproduced (xfail)")
    assert lines["total"].endswith("all as expected")


# ------------------------------------------------------------------------------ plugin

DEMO = '''
import numpy as np
import pytest

from claims.seeds import seed_for


def test_holds(claim):
    claim.record(claim="alpha", paper_ref="Thm 1", setting="a", metric="|err|",
                 measured=np.float64(0.5), tolerance=1.0, comparator="<=",
                 details={"arr": np.arange(3), "seed": np.int64(seed_for("alpha"))}).check()


def test_control(claim):
    claim.record(claim="alpha", paper_ref="Thm 1", setting="asym", metric="|err|",
                 measured=3.0, tolerance=1.0, comparator="<=", expect="fails").check()


def test_unexpected(claim):
    claim.record(claim="beta", paper_ref="eq. 2", setting="b", metric="gap",
                 measured=2.0, tolerance=1.0, comparator="<=").check()


@pytest.mark.xfail(strict=True, reason="paper's 0.93 does not reproduce")
def test_known(claim):
    claim.record(claim="beta", paper_ref="Tab. 1", setting="c", metric="r2",
                 measured=0.5, tolerance=0.9, comparator=">=").check()


def test_nan(claim):
    rec = claim.record(claim="beta", paper_ref="eq. 3", metric="nan metric",
                       measured=float("nan"), tolerance=1.0, comparator="abs<=")
    assert rec.verdict == "fails"
    with pytest.raises(AssertionError, match="NaN"):
        rec.check()


def test_unchecked(claim):
    claim.record(claim="gamma", paper_ref="eq. 4", metric="m", measured=1, tolerance=1,
                 comparator="==")


@pytest.mark.xfail(strict=True, reason="thought not to reproduce")
def test_xpass(claim):
    claim.record(claim="delta", paper_ref="eq. 5", metric="m", measured=0.0, tolerance=1.0,
                 comparator="<=").check()


@pytest.mark.xfail(False, reason="condition false: not an xfail", strict=True)
def test_cond_xfail(claim):
    claim.record(claim="delta", paper_ref="eq. 5", metric="m", measured=0.0, tolerance=1.0,
                 comparator="<=").check()


@pytest.mark.xfail(1 + 1 == 2, reason="condition true", strict=True)
@pytest.mark.xfail(False, reason="condition false", strict=True)   # evaluated first
def test_cond_xpass(claim):
    claim.record(claim="delta", paper_ref="eq. 5", metric="m", measured=0.0, tolerance=1.0,
                 comparator="<=").check()


@pytest.mark.xfail("1 + 1 == 2", strict=True)
def test_str_cond_xpass(claim):
    claim.record(claim="delta", paper_ref="eq. 5", metric="m", measured=0.0, tolerance=1.0,
                 comparator="<=").check()


@pytest.mark.xfail(raises=ValueError, strict=True, reason="only a ValueError is expected")
def test_other_error(claim):
    claim.record(claim="delta", paper_ref="eq. 5", metric="m", measured=0.0, tolerance=1.0,
                 comparator="<=").check()
    raise TypeError("not the expected error")


def test_plain(profile):
    assert profile.name in ("quick", "paper")
'''

EXPECTED = {  # test name -> outcome of its records
    "test_holds": "passed", "test_control": "passed", "test_unexpected": "failed",
    "test_known": "xfailed", "test_nan": "passed", "test_unchecked": "error",
    "test_xpass": "failed", "test_cond_xfail": "passed", "test_cond_xpass": "failed",
    "test_str_cond_xpass": "failed", "test_other_error": "failed",
}


@pytest.fixture
def project(pytester, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [str(REPO)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    pytester.makeini("[pytest]\naddopts = --strict-markers -p no:cacheprovider\n"
                     "xfail_strict = true\nfilterwarnings =\n    error\n")
    pytester.makeconftest('pytest_plugins = ["claims.plugin"]\n')  # as the root conftest.py
    pytester.makepyfile(test_demo=DEMO)
    return pytester


def _load(path: Path) -> dict:
    data = json.loads(path.read_text(encoding="utf-8"))
    for r in data["records"]:
        r["test"] = r["test"].split("::")[-1]
    return data


def _check_report(result, pytester, profile="quick"):
    # test_unchecked passes its call phase and errors at teardown
    result.assert_outcomes(passed=6, failed=5, xfailed=1, errors=1)
    out = result.stdout.str()
    assert f"claims (profile {profile})" in out
    result.stdout.fnmatch_lines([
        "claim*paper ref*setting*metric*measured*criterion*verdict*expected*outcome",
        "alpha*Thm 1*asym*|err|*3*<= 1*fails*fails*passed",
        "alpha*Thm 1*a*|err|*0.5*<= 1*holds*holds*passed",
        "*alpha: 2 checks, 1 holds, 1 negative control fails as expected",
        "beta*Tab. 1*c*r2*0.5*>= 0.9*fails*holds*xfailed",
        "*beta: 3 checks, 1 not reproduced (xfail), 2 UNEXPECTED verdict, 1 in FAILING tests",
        "*xfail test_known: paper's 0.93 does not reproduce",
        "*note  test_nan: measured is NaN*",
        "*delta: 5 checks, 5 hold, 4 in FAILING tests",
        "*note  test_xpass: XPASS(strict)*",
        "*gamma: 1 check, 1 holds, 1 in FAILING tests",
        "4 claims, 11 checks*NEEDS ATTENTION",
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
    assert sorted(p.name for p in _check_report_dir.iterdir()) == ["claims.json", "claims.md"]
    assert not (project.path / "reports").exists()
    data = _load(_check_report_dir / "claims.json")
    assert data["profile"]["name"] == "paper"
    assert {r["profile"] for r in data["records"]} == {"paper"}

    bogus = project.runpytest("--profile", "bogus")
    assert bogus.ret == pytest.ExitCode.USAGE_ERROR
    assert "--profile" in bogus.stderr.str() and "bogus" in bogus.stderr.str()


def test_plugin_silent_without_records(pytester):
    pytester.makepyfile("def test_a(profile):\n    assert profile.name == 'paper'\n")
    result = pytester.runpytest("-p", "claims.plugin", "--profile", "paper")
    result.assert_outcomes(passed=1)
    assert "claims (profile" not in result.stdout.str()
    assert not (pytester.path / "reports").exists()


@pytest.mark.parametrize("args", [["--profile", "paper", "claims"],
                                  ["claims", "--profile", "paper"]],
                         ids=["option-first", "path-first"])
def test_profile_option_from_the_repository_root(args, tmp_path):
    """The root conftest.py loads the plugin early enough for ``--profile`` anywhere."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTEST_XDIST_WORKER", "PYTEST_ADDOPTS", "PYTEST_PLUGINS")}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO)] + [
        p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", *args, "--collect-only", "-q", "-p", "no:cacheprovider",
         "--claims-report", str(tmp_path / "reports")],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "test_training_run" in proc.stdout
    assert not (tmp_path / "reports").exists()     # nothing recorded, no report


def test_facade_reexports_the_modules():
    from claims import collect, records, seeds
    assert harness.seed_for is seeds.seed_for and harness.ClaimRecorder is records.ClaimRecorder
    assert harness.RecordCollector is collect.RecordCollector
    assert harness.write_reports is report.write_reports
    assert all(hasattr(harness, name) for name in harness.__all__)
