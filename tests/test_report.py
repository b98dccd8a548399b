"""claims/reports/report.py and claims/reports/summary.py: reported rows, the summary counts and
lines, the inconclusive list, the report written to ``claims.json`` and its atomic, strict-JSON
writing (the records typed until the one serialisation)."""
from __future__ import annotations

import json
import math
from pathlib import Path
from dataclasses import replace

import pytest

from claims.reports import report, summary

from claims.harness import stats
from claims.harness.profiles import QUICK
from claims.harness.records import ClaimRecorder, make_record
from claims.harness.reportfile import SCHEMA, load_report

P = {"tolerance_source": "project"}


def _rec(**kw):
    """A record (:class:`~claims.harness.records.ClaimRecord`)."""
    return make_record(**kw)


def test_reported_rows():
    class Item:
        nodeid = "t.py::test_table"
        user_properties: list = []

    rec = ClaimRecorder(Item(), "quick")
    row = rec.record(claim="tables", paper_ref="Tab. 2", setting="a", check="k17", label="mse",
                     kind="reported", **stats.seed_fields([0.2, 0.25, 0.3]))
    assert rec.unchecked() == [] and row.check() is row
    d = row.record
    assert d.verdict == "reported" and d.expect is None and d.holds_at is None
    assert d.tolerance is None and d.comparator is None and d.tolerance_source is None
    s = summary.summarize([replace(d, outcome="passed")])
    assert s["claims"]["tables"]["checks"] == 0 and s["claims"]["tables"]["reported"] == 1
    assert s["total"]["interval_checks"] == 0 and s["total"]["ok"]
    assert summary.summary_lines(s)["tables"] == "tables: 0 checks, 1 reported row (no verdict)"
    for bad in ({"tolerance": 1.0}, {"comparator": "<="}, {"tolerance_source": "project"},
                {"expect": "holds"}):
        with pytest.raises(ValueError, match="reported row has no verdict"):
            _rec(claim="t", paper_ref="p", check="k18", label="m", measured=1.0, kind="reported",
                        **bad)


def test_summary_counts_inconclusive_and_intervals():
    recs = []
    for iv, expect, outcome in [((0.1, 0.9), "holds", "passed"), ((0.5, 1.5), "holds", "passed"),
                                ((0.5, 1.5), "holds", "passed"), ((1.5, 2.5), "fails", "passed"),
                                ((0.5, 1.5), "fails", "failed"), (None, "holds", "passed")]:
        m = 0.5 if iv is None else sum(iv) / 2
        r = _rec(claim="c", paper_ref="p", check="k19", label="m", measured=m, interval=iv,
                        n_seeds=None if iv is None else 3, tolerance=1.0, comparator="<=",
                        expect=expect, **P)
        recs.append(replace(r, outcome=outcome, test=f"t.py::test_{len(recs)}"))
    s = summary.summarize(recs)
    t = s["total"]
    assert (t["checks"], t["hold"], t["inconclusive"], t["controls"], t["unexpected"],
            t["interval_checks"], t["expected_chance_disagreements"]) == (6, 2, 2, 1, 1, 3, 0.15)
    assert not t["ok"]
    lines = report.render_terminal(recs, s)
    assert any(l.startswith("interval checks: 3 with a 95% interval; about 0.15 (= 0.05 x 3)")
               for l in lines)
    # the table: a header, then a rule of dashes under each column
    head, rule = lines[0], lines[1]
    assert head.split()[:1] == [report._COLUMNS[0].split()[0]]
    assert set(rule) <= {"-", " "} and len(rule.split()) == len(report._COLUMNS)
    inc = summary.inconclusive_lines(recs)
    assert inc[0].startswith("inconclusive checks: 3 ") and "NEGATIVE CONTROL" in inc[-2]
    made = report.make_report(recs, None, "x", run={"hypothesis_draws": "derandomized"})
    assert made.schema == SCHEMA == 6 and len(made.summary["inconclusive"]) == 3
    assert made.run == {"hypothesis_draws": "derandomized"} and made.records == tuple(recs)
    assert summary.inconclusive_lines(recs[:1]) == ["inconclusive checks: none"]


def test_write_reports_atomic_and_strict_json(tmp_path):
    recs = [_rec(claim="b", paper_ref="p", check="k20", label="m|n", measured=math.nan,
                        tolerance=1, comparator="<=", **P),
            _rec(claim="a", paper_ref="p", check="k21", label="m", measured=math.inf,
                        tolerance=1, comparator=">=", **P)]
    recs = [replace(r, test=f"t::{i}", order=0, outcome="passed") for i, r in enumerate(recs)]
    j, m = report.write_reports(recs, tmp_path / "out", QUICK.as_dict())
    data = json.loads(j.read_text(), parse_constant=lambda c: pytest.fail(f"non-JSON {c}"))
    assert [r["claim"] for r in data["records"]] == ["a", "b"]
    assert data["records"][0]["measured"] == "Infinity" and data["records"][1]["measured"] == "NaN"
    back = load_report(j)                    # the file parses back into the records written
    assert [r.check_id for r in back.records] == ["a/k21", "b/k20"]
    assert [r.to_dict() for r in back.records] == data["records"] and back.records[1].details == recs[0].details
    assert "m\\|n" in m.read_text()
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["claims.json", "claims.md", "index.html"]


def test_environment_records_each_numeric_packages_version_and_the_wall_time():
    import importlib
    env = report.environment(12.34)
    for name in ("torch", "numpy", "scipy", "sympy", "mpmath", "hypothesis", "matplotlib"):
        assert env[name] == importlib.import_module(name).__version__, name
    assert env["wall_seconds"] == 12.3 and report.environment()["wall_seconds"] is None


def test_environment_names_the_python_and_the_platform_it_ran_on():
    import platform
    env = report.environment()
    assert env["python"] == platform.python_version() and env["platform"] == platform.platform()


def test_summary_line_wording(monkeypatch):
    # the xfailed check is a known non-reproduction of the quick profile (claims.specs' registry)
    monkeypatch.setattr("claims.specs.known_failures", lambda: {"ar1-optimum/k22x": {"quick": "why"}})
    recs = []
    for verdict_holds, expect, outcome in [(True, "holds", "passed")] * 7 + \
            [(False, "fails", "passed")] * 2 + [(False, "holds", "xfailed")]:
        r = _rec(claim="ar1-optimum", paper_ref="p", check="k22x" if outcome == "xfailed" else "k22", label="m",
                        measured=0.0 if verdict_holds else 2.0, tolerance=1.0,
                        comparator="<=", expect=expect, **P)
        recs.append(replace(r, outcome=outcome, profile="quick"))
    lines = summary.summary_lines(summary.summarize(recs))
    assert lines["ar1-optimum"] == ("ar1-optimum: 10 checks, 7 hold, 2 negative controls "
                                    "fail as expected, 1 not reproduced (xfail)")
    assert lines["total"].endswith("all as expected")


def test_summary_lists_claims_in_the_readmes_order():
    """claims.md and every page read the summary's order: CLAIMS' (the README's), then others sorted.
    Control: the published quick run's claims, given in alphabetical order, come back reordered."""
    from claims.harness.reportfile import load_report
    from claims.specs import CLAIMS
    recs = sorted(load_report(Path(__file__).resolve().parents[1] / "docs/results/quick.json").records,
                  key=lambda r: r.claim)
    got = list(summary.summarize(recs)["claims"])
    assert got == [s.name for s in CLAIMS if s.name in got] and got != sorted(got)


def _shift_records(profile: str, control_verdict_at: float, outcome: str = "xfailed", main_at: float = 0.5):
    """The spectral shift's gain check at L = 4, r = 1.05 and its null control, as one test of a
    run of ``profile`` records them (measured share with a Clopper-Pearson-like interval around it)."""
    test = "claims/test_spectral_shift.py::test_wider_training_pays_outside[4-1.05]"
    common = dict(claim="spectral-shift", check="gain-outside", setting="a", layers=4, radius=1.05, label="x",
                  paper_ref="y", tolerance=0.5, comparator=">=", **P)
    iv = lambda m: (max(m - 0.4, 0.0), min(m + 0.4, 1.0))   # noqa: E731
    main = _rec(measured=main_at, interval=iv(main_at), **common)
    ctl = _rec(measured=control_verdict_at, interval=iv(control_verdict_at), variant="null-same-radius",
               expect="fails", **common)
    return [replace(r, outcome=outcome, profile=profile, test=test) for r in (main, ctl)]


def test_a_listed_control_that_cannot_tell_is_counted_apart_and_nothing_else_is():
    """The registry lists the null control at L = 4, r = 1.05 for the paper profile: inconclusive
    there and xfailed, it counts as 'cannot tell' and the run is ok.  Controls: the same record
    in a quick run, one whose test passed, one that holds (broken: it shows the effect), and a
    failing check that only shares the listed control's xfail are each unexpected."""
    listed = summary.summarize(_shift_records("paper", 0.5))["total"]
    assert (listed["cannot_tell"], listed["unexpected"], listed["inconclusive"], listed["ok"]) == (1, 0, 1, True)
    assert "1 negative control cannot tell (xfail, reason stated)" in summary.summary_lines(
        summary.summarize(_shift_records("paper", 0.5)))["total"]
    for recs in (_shift_records("quick", 0.5), _shift_records("paper", 0.5, outcome="passed"),
                 _shift_records("paper", 0.9)):
        t = summary.summarize(recs)["total"]
        assert (t["cannot_tell"], t["unexpected"]) == (0, 1) and not t["ok"]
    sibling = summary.summarize(_shift_records("paper", 0.5, main_at=0.0))["total"]
    assert sibling["not_reproduced"] == 0 and sibling["unexpected"] == 1 and not sibling["ok"]
