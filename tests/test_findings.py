"""claims/reports/findings.py: a statement's outcome from its headline checks' verdicts, its key
number, and the rendered table, on synthetic reports (every rule of the module's table), with a
synthetic claim registered beside those of claims.specs."""
from __future__ import annotations

import itertools

import pytest

from claims.harness.identity import Coords
from claims.harness.records import RECORD_FIELDS, ClaimRecord
from claims.harness.reportfile import Report
from claims.harness.spec import ClaimSpec, Headline
from claims.reports.findings import OUTCOMES, anchor, findings, outcome, render_findings, summary_line
from claims.specs import all_headlines, register

#: the synthetic claim's statements: one with a single check, one with several
ONE = Headline("demo-claim", "x is zero.", "eq. 1", ("demo-claim/x/a",))
SEVERAL = Headline("demo-claim", "y is small.", "Fig. 1", ("demo-claim/y/a", "demo-claim/y2/a", "demo-claim/y3/a"),
                   trained=True)

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


@pytest.fixture(autouse=True)
def demo_claim():
    with register(ClaimSpec("demo-claim", "a synthetic claim", "test_demo.py", headlines=(ONE, SEVERAL))) as spec:
        yield spec


def _record(check_id: str, verdict: str) -> ClaimRecord:
    claim, check = check_id.split("/")[:2]
    fields = dict.fromkeys(RECORD_FIELDS)
    fields.update(check_id=check_id, claim=claim, check=check, coords=Coords(setting="a"), label=check,
                  paper_ref="p", kind="check", verdict=verdict, measured=0.5, interval=[0.4, 0.6], comparator="<=",
                  tolerance=0.1, tolerance_source="project", expect="holds", details={})
    if verdict == "mixed":
        fields["basins"] = {"holding_share": 0.25, "holding_share_interval": [0.05, 0.6]}
    return ClaimRecord(**fields)


def _report(verdict_of) -> Report:
    """A report with every headline check, its verdict chosen per check id."""
    return Report(records=tuple(_record(i, verdict_of(i)) for h in all_headlines() for i in h.check_ids))


def test_findings_take_the_weakest_check_as_key_number():
    h = SEVERAL                                         # several checks
    bad = h.check_ids[-1]
    rep = _report(lambda i: "fails" if i == bad else ("mixed" if i == h.check_ids[0] else "holds"))
    f = {x.headline: x for x in findings(rep)}[h]
    assert f.outcome == "partly"
    assert f.counts == {"holds": len(h.check_ids) - 2, "mixed": 1, "fails": 1}
    assert f"`{bad.split('/')[1]}`" in f.key and "against <= 0.1 (project's)" in f.key
    other = {x.headline: x for x in findings(_report(lambda i: "holds"))}[h]
    assert other.outcome == "reproduced" and "0.5 [0.4, 0.6]" in other.key


def test_mixed_key_number_states_the_share_of_runs_that_hold():
    f = {x.headline: x for x in findings(_report(lambda i: "mixed"))}[SEVERAL]
    assert f.outcome == "partly" and "runs in basins that hold: 0.25 [0.05, 0.60]" in f.key


def test_a_report_without_a_headline_check_is_not_run_there():
    rep = _report(lambda i: "holds")
    gone = ONE.check_ids[0]
    f = findings(Report(records=tuple(r for r in rep.records if r.check_id != gone)))
    assert [x.outcome for x in f if x.headline == ONE] == ["not run"]
    assert all(x.outcome == "reproduced" for x in f if x.headline != ONE)
    assert [x.headline for x in f] == list(all_headlines())          # the registry's order


def test_rendered_table_and_summary_count_the_outcomes():
    rep = _report(lambda i: "fails" if i.startswith("demo-claim/y") else "holds")
    text = render_findings(rep, _report(lambda i: "inconclusive"))
    rows = [line for line in text.splitlines() if line.startswith("| [")]
    n = len(all_headlines())
    assert len(rows) == n
    demo = [r for r in rows if r.startswith("| [demo-claim]") and "y is small" in r]
    assert len(demo) == 1 and "**not reproduced** | undecided |" in demo[0]
    assert f"{n - 1} reproduced, 0 partly, 1 not reproduced, 0 undecided" in text
    assert all(f"(docs/results/verdicts.md#{anchor(h.claim)})" in text for h in all_headlines())
    assert set(OUTCOMES) >= {"reproduced", "partly", "not reproduced", "undecided"}
    assert summary_line(findings(rep)).startswith(f"{n} statements of ")


def test_anchor_follows_the_heading_rule():
    assert anchor("pcg-alignment") == "pcg-alignment" and anchor("Ab c.d") == "ab-cd"
