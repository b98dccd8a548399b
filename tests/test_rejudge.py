"""Re-judging a published report from its stored per-run values (claims/reports/rejudge.py)."""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from claims.harness.basins import BasinSplit
from claims.harness.identity import RunRef
from claims.harness.records import make_record
from claims.harness.reportfile import SCHEMA, load_report
from claims.reports.rejudge import PER_RUN, main, rejudge
from claims.reports.report import make_report
from claims.harness.shares import judge_runs
from claims.harness.stats import seed_fields

ROOT = Path(__file__).resolve().parents[1]
P = {"tolerance_source": "project"}


def _pooled(values, labels=None, **kw):
    """A record judged the old way (a mean over seeds, or by basin), as a schema 5 file has it."""
    runs = [RunRef(f"ars/b/s=3/seed={i}", i) for i in range(len(values))]
    if labels:
        rec = make_record(claim="banding", check="trained-odd-share", setting="b", s=3, label="odd share",
                          paper_ref="Lemma 4.1", runs=runs, run_values=values,
                          basins=BasinSplit(tuple(labels), tuple(dict.fromkeys(labels))), tolerance=0.01,
                          comparator="<=", **P, **kw)
    else:
        rec = make_record(claim="ar1-optimum", check="trained-coefficient", setting="a", label="coef",
                          paper_ref="Thm 4.1", runs=[RunRef(f"ar1/a/seed={i}", i) for i in range(len(values))],
                          **seed_fields(values), tolerance=0.01, comparator="abs<=", **P, **kw)
    assert rec.per_run is None and rec.clipped is None
    return rec


def _report(records, profile="paper"):
    return make_report(records, {"name": profile}, generated="2026-12-03T00:00:00+00:00")


def test_a_pooled_record_is_judged_by_run_from_its_stored_values():
    values = [0.031, 0.064, 0.12, 0.2, 0.256, 0.043, 0.0176, 0.0374]
    labels = ["p"] * 6 + ["q"] * 2
    old = _pooled(values, labels)
    assert old.verdict == "inconclusive"            # what the pooled rule said of the two-run basin
    new = rejudge(_report([old]))
    r, = new.records
    expect = judge_runs(values, "<=", 0.01, labels=labels)
    assert (r.verdict, r.per_run["held"], r.per_run["failed"]) == (expect.verdict, 0, 8) == ("fails", 0, 8)
    assert [b["basin"] for b in r.per_run["basins"]] == ["p", "q"]
    assert r.check_id == old.check_id and r.details == old.details
    assert r.label == "share of runs with odd share <= 0.01"
    assert [e.extra["verdict"] for e in r.runs] == ["fails"] * 8
    assert new.schema == SCHEMA and new.generated == "2026-12-03T00:00:00+00:00"
    assert "banding/trained-odd-share" in new.rejudged["rebuilt"]


def test_a_reference_error_is_shared_by_every_run():
    old = _pooled([0.004, -0.006, 0.0095])
    old = replace(old, details={"kappa": 0.5, "kappa_stderr": 0.5 * 0.003})
    r, = rejudge(_report([old])).records
    assert r.per_run["shared_stderr"] == pytest.approx(0.003)
    assert [e.extra["verdict"] for e in r.runs] == ["holds", "undecided", "undecided"]


def test_re_judging_is_idempotent_and_keeps_the_outcome_fields():
    old = _pooled([0.0005, 0.031, 0.064], ["q", "p", "p"])
    old = replace(old, basins={**old.basins, "verdicts": sorted(old.basins["verdicts"], key=lambda b: b["basin"])},
                  outcome="passed", test="claims/test_banding.py::t", order=3, profile="quick")  # p first, not q
    once = rejudge(_report([old]))
    twice = rejudge(once)
    assert [replace(r, decide=None) for r in twice.records] == [replace(r, decide=None) for r in once.records]
    assert (once.records[0].outcome, once.records[0].order) == ("passed", 3)
    assert [b["basin"] for b in twice.records[0].per_run["basins"]] == ["p", "q"]


def test_the_step_size_shares_kappas_error_from_the_reports_coefficient_record():
    coef = _pooled([0.004, -0.006, 0.0095])
    coef = replace(coef, details={"kappa": 0.5, "kappa_stderr": 0.5 * 0.003})
    step = make_record(claim="gd-equivalence", check="trained-step-size", setting="a", label="mean_seeds step",
                       paper_ref="x", runs=[RunRef(f"ar1/a/seed={i}", i) for i in range(3)],
                       **seed_fields([0.004, -0.006, 0.0095]), tolerance=0.01, comparator="abs<=", **P)
    out = {r.check: r for r in rejudge(_report([coef, step])).records}
    assert out["trained-step-size"].per_run["shared_stderr"] == pytest.approx(0.003)
    assert out["trained-step-size"].per_run["undecided"] == 2


def test_a_premise_holds_only_when_every_run_holds():
    runs = [RunRef(f"shift/L=1/r=0.9/batch=1500/seed={i}", i) for i in range(3)]
    prem = make_record(claim="spectral-shift", check="one-layer-stack-over-its-optimum", setting="a", label="L/L*",
                       paper_ref="x", runs=runs, **seed_fields([1.001, 1.002, 1.03]), tolerance=1.02,
                       comparator="<=", **P)
    r, = rejudge(_report([prem])).records
    assert (r.verdict, r.per_run["rule"], r.holds_at) == ("fails", "every", None)


def test_a_spliced_report_replaces_its_families_and_must_be_of_the_profile():
    old = _pooled([0.004, -0.006, 0.0095])
    fresh_rec = make_record(claim="depth", check="construction-divergence-vanishes", setting="a", label="share",
                            paper_ref="x", measured=0.0, tolerance=1e-3, comparator="<=", **P)
    new = rejudge(_report([old]), [_report([fresh_rec])])
    assert [r.check for r in new.records] == ["trained-coefficient", "construction-divergence-vanishes"]
    with pytest.raises(ValueError, match="profile"):
        rejudge(_report([old]), [_report([fresh_rec], profile="quick")])


def test_every_family_judged_by_run_is_rebuilt_in_the_published_runs():
    """The published runs hold no check of a family judged by run that is not judged by run."""
    for name in ("quick", "paper"):
        for r in load_report(ROOT / "docs" / "results" / f"{name}.json").records:
            if (r.claim, r.check) in PER_RUN and r.kind == "check" and r.runs:
                assert r.per_run, (name, r.check_id)


def test_the_command_line_writes_the_file_and_refuses_a_bad_input(tmp_path, capsys):
    src = tmp_path / "p.json"
    src.write_text(json.dumps(_report([_pooled([0.004, -0.006, 0.0095])]).to_dict()), encoding="utf-8")
    assert main([str(src), "--out", str(tmp_path / "o.json")]) == 0
    assert json.loads((tmp_path / "o.json").read_text())["records"][0]["per_run"]["n"] == 3
    assert main([str(tmp_path / "missing.json"), "--out", str(tmp_path / "x.json")]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_a_retired_variant_is_dropped_by_its_pattern():
    old = _pooled([0.004, -0.006, 0.0095])
    ctl = make_record(claim="spectral-shift", check="gain-outside", setting="a", layers=1, radius=1.0,
                      variant="narrower-training-r=0.5", label="ratio", paper_ref="x", measured=0.5, tolerance=1.05,
                      comparator=">=", expect="fails", **P)
    new = rejudge(_report([old, ctl]), retire=("spectral-shift/*/narrower-training-r=0.5/control",))
    assert [r.check for r in new.records] == ["trained-coefficient"]


def test_a_retired_family_is_dropped_and_an_unknown_one_refused():
    old = _pooled([0.004, -0.006, 0.0095])
    other = make_record(claim="depth", check="construction-rate-slope", setting="a", label="slope",
                        paper_ref="x", measured=0.0, tolerance=0.1, comparator="<=", **P)
    new = rejudge(_report([old, other]), retire=("depth/construction-rate-slope",))
    assert [r.check for r in new.records] == ["trained-coefficient"]
    assert new.rejudged["retired"] == ["depth/construction-rate-slope"]
    with pytest.raises(ValueError, match="matches no record"):
        rejudge(_report([old]), retire=("depth/nope",))


def test_re_judging_a_fresh_run_gives_each_test_the_outcome_pytest_gave_it():
    """Oracle: the paper run's own outcomes, as pytest settled them test by test.  Re-judged,
    every record keeps its outcome -- the listed control that cannot tell and the check beside
    it in one xfailed test, the premise whose test carries its listing -- because a test's
    outcome is settled from all of its records, not record by record."""
    path = ROOT / "docs" / "results" / "paper.json"
    assert "rejudged" not in json.loads(path.read_text(encoding="utf-8"))      # a run, not a re-judged file
    published = load_report(path)
    before = {r.check_id: r.outcome for r in published.records}
    after = {r.check_id: r.outcome for r in rejudge(published).records}
    assert after == before
    assert after["spectral-shift/gain-outside/a/L=4/r=1.05/null-same-radius/control"] == "xfailed"
    assert after["spectral-shift/gain-outside/a/L=4/r=1.05"] == "xfailed"
