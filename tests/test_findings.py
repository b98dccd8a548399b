"""claims/reports/findings.py: a statement's outcome from its headline checks' verdicts, its key
number, and the rendered table, on synthetic reports (every rule of the module's table)."""
from __future__ import annotations

import itertools

import pytest

from claims.reports.findings import OUTCOMES, anchor, findings, outcome, render_findings, summary_line
from claims.harness.headlines import HEADLINES

VERDICTS = ("holds", "fails", "mixed", "inconclusive")


def _expected(vs) -> str:
    """The module's table, written as a plain case analysis."""
    if all(v == "holds" for v in vs):
        return "reproduced"
    if "mixed" in vs or ("holds" in vs and "fails" in vs):
        return "partly"
    if "fails" in vs:
        return "not reproduced"
    return "undecided"


@pytest.mark.parametrize("n", [1, 2, 3])
def test_outcome_follows_the_table_for_every_combination(n):
    for vs in itertools.product(VERDICTS, repeat=n):
        assert outcome(list(vs)) == _expected(vs), vs


def test_outcome_of_a_missing_check_and_bad_verdicts():
    assert outcome(["holds", None]) == "not run" and outcome([]) == "not run"
    with pytest.raises(ValueError, match="verdicts"):
        outcome(["holds", "passed"])


def _report(verdict_of) -> dict:
    """A report with every headline check, its verdict chosen per check id."""
    recs = []
    for h in HEADLINES:
        for i in h.check_ids:
            claim, check = i.split("/")[:2]
            v = verdict_of(i)
            rec = {"check_id": i, "claim": claim, "check": check, "coords": {"setting": "a"},
                   "verdict": v, "measured": 0.5, "interval": [0.4, 0.6], "comparator": "<=",
                   "tolerance": 0.1, "tolerance_source": "project"}
            if v == "mixed":
                rec["basins"] = {"holding_share": 0.25, "holding_share_interval": [0.05, 0.6]}
            recs.append(rec)
    return {"records": recs}


def test_findings_take_the_weakest_check_as_key_number():
    h = HEADLINES[1]                                   # several checks
    bad = h.check_ids[-1]
    rep = _report(lambda i: "fails" if i == bad else ("mixed" if i == h.check_ids[0] else "holds"))
    f = {x.headline: x for x in findings(rep)}[h]
    assert f.outcome == "partly"
    assert f.counts == {"holds": len(h.check_ids) - 2, "mixed": 1, "fails": 1}
    assert f"`{bad.split('/')[1]}`" in f.key and "against <= 0.1 (project's)" in f.key
    other = {x.headline: x for x in findings(_report(lambda i: "holds"))}[h]
    assert other.outcome == "reproduced" and "0.5 [0.4, 0.6]" in other.key


def test_mixed_key_number_states_the_share_of_runs_that_hold():
    h = HEADLINES[1]
    f = {x.headline: x for x in findings(_report(lambda i: "mixed"))}[h]
    assert f.outcome == "partly" and "runs in basins that hold: 0.25 [0.05, 0.60]" in f.key


def test_a_report_without_a_headline_check_is_not_run_there():
    rep = _report(lambda i: "holds")
    gone = HEADLINES[0].check_ids[0]
    rep["records"] = [r for r in rep["records"] if r["check_id"] != gone]
    f = findings(rep)
    assert f[0].outcome == "not run" and all(x.outcome == "reproduced" for x in f[1:])


def test_rendered_table_and_summary_count_the_outcomes():
    rep = _report(lambda i: "fails" if i.startswith("kalman-parity") else "holds")
    text = render_findings(rep, _report(lambda i: "inconclusive"))
    rows = [line for line in text.splitlines() if line.startswith("| [")]
    assert len(rows) == len(HEADLINES)
    kalman = [r for r in rows if r.startswith("| [kalman-parity]")]
    assert kalman and all("**not reproduced** | undecided |" in r for r in kalman)
    assert f"{len(HEADLINES) - len(kalman)} reproduced, 0 partly, {len(kalman)} not reproduced, 0 undecided" in text
    assert all(f"(docs/results/verdicts.md#{anchor(h.claim)})" in text for h in HEADLINES)
    assert set(OUTCOMES) >= {"reproduced", "partly", "not reproduced", "undecided"}
    assert summary_line(findings(rep)).startswith(f"{len(HEADLINES)} statements of ")


def test_anchor_follows_the_heading_rule():
    assert anchor("pcg-alignment") == "pcg-alignment" and anchor("Ab c.d") == "ab-cd"
