"""The published runs (docs/results/quick.json, paper.json) against today's code and against what
the README and the docs say of them.

* **The training code.**  Each published run records the sha256 of the training code that
  trained its runs (``provenance.training_sources``, models/fingerprint.py ``source_digest``;
  the machine-dependent parts of the weight cache's key -- torch, numpy, kernels, device --
  are in its ``environment``).  The guard fails when it differs from today's training code,
  so a run trained by other code never reaches the README unnoticed.  The rule for an edit of
  the training code (docs/results/README.md, "Published runs and the training code"): any
  edit of the closure changes the digest and fails the guard, even one that keeps the golden
  weight digests (tests/test_golden_weights.py pins a few configurations, not the 236
  published runs), and both published runs are then regenerated.
* **Negative controls.**  Every family of checks of each run has controls that all fail as
  they must -- but for a control that cannot tell, which its claim's ``known`` names with the
  reason for that profile and whose test was that strict xfail -- or is named with its reason
  in its claim's ``no_control`` (and every name there is a family of the runs that has no
  control).
* **The three kinds.**  A statement counted "at the sources' own tolerance" is judged, in
  every headline check, at a tolerance the source states; one "at our tolerance" has a
  headline check at ours.
* **The README's sentences** about the runs: the tolerances it calls the paper's, the seeds
  per setting, no blanket sentence the records contradict.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from claims.harness.reportfile import load_report
from claims.reports.controls import control_sentence, controls, render_without_controls, short_sentence
from claims.specs import CLAIMS, all_headlines
from models.fingerprint import source_digest

ROOT = Path(__file__).resolve().parents[1]
PUBLISHED = {name: ROOT / "docs" / "results" / f"{name}.json" for name in ("quick", "paper")}
README = (ROOT / "README.md").read_text(encoding="utf-8")


def stale_training(path: Path) -> str | None:
    """Why the published run at ``path`` was not trained by today's training code (None: it was)."""
    prov = json.loads(path.read_text(encoding="utf-8")).get("provenance") or {}
    got, today = prov.get("training_sources"), source_digest()
    if got is None:
        return f"{path.name}: provenance.training_sources is missing (a run of code before the guard)"
    if got != today:
        return (f"{path.name}: trained by training code {got[:12]}, today's is {today[:12]}: "
                "regenerate the published runs (docs/results/README.md)")
    return None


RUNS = list(PUBLISHED)


@pytest.fixture(scope="module")
def reports():
    return {name: load_report(p) for name, p in PUBLISHED.items()}


@pytest.mark.parametrize("name", RUNS)
def test_published_run_was_trained_by_todays_training_code(name):
    assert stale_training(PUBLISHED[name]) is None


@pytest.mark.parametrize("change", ["digest", "missing"])
def test_the_guard_fails_on_a_run_of_other_training_code(tmp_path, change):
    """Control: the quick run with its digest changed (or removed) is caught, naming the field."""
    data = json.loads(PUBLISHED["quick"].read_text(encoding="utf-8"))
    if change == "digest":
        data["provenance"]["training_sources"] = "0" * 64
    else:
        data["provenance"].pop("training_sources", None)
    bad = tmp_path / "quick.json"
    bad.write_text(json.dumps(data), encoding="utf-8")
    why = stale_training(bad)
    assert why is not None and ("training code" in why or "training_sources" in why)


@pytest.mark.parametrize("name", RUNS)
def test_every_family_has_a_failing_control_or_a_stated_reason(reports, name):
    c = controls(reports[name].records)
    assert c.problems == []
    assert c.with_control + len(c.without) == c.families
    # a control that cannot tell is named with its reason, and its test was a strict xfail
    for cid, _, _ in c.known_not_failing:
        rec = next(r for r in reports[name].records if r.check_id == cid)
        assert rec.outcome == "xfailed", cid


def test_every_family_named_without_a_control_is_one_of_the_runs():
    """No stale entry: each ``no_control`` name is a family of the published runs, without a control."""
    families, with_control = set(), set()
    for p in PUBLISHED.values():
        for r in load_report(p).records:
            if r.kind == "check":
                families.add(f"{r.claim}/{r.check}")
                if r.coords.control:
                    with_control.add(f"{r.claim}/{r.check}")
    listed = {f"{s.name}/{c}" for s in CLAIMS for c in s.no_control}
    assert listed <= families - with_control


def test_a_family_without_control_or_reason_is_caught(reports):
    """Control: drop one control record family's controls and the family is reported unlisted."""
    recs = [r for r in reports["quick"].records if not (r.check == "trained-cos1" and r.coords.control)]
    assert "pcg-alignment/trained-cos1" in controls(recs).unlisted


def _inconclusive_control(profile: str, outcome: str = "xfailed", interval=(0.0, 0.9)):
    """The spectral shift's null control at L = 4, r = 1.05, inconclusive (by default), as a
    run of ``profile`` records it, its test's ``outcome``."""
    from dataclasses import replace
    from claims.harness.records import make_record
    r = make_record(claim="spectral-shift", check="gain-outside", setting="a", layers=4, radius=1.05,
                    variant="null-same-radius", label="x", paper_ref="y", tolerance=0.5, comparator=">=",
                    tolerance_source="project", measured=sum(interval) / 2, interval=interval, expect="fails")
    assert r.check_id.endswith("/null-same-radius/control")
    return replace(r, profile=profile, outcome=outcome)


def test_a_control_that_cannot_tell_is_named_with_its_reason_only_where_listed():
    """Control: the registry lists the inconclusive null control for the paper profile only; in a
    quick run the same record is a problem, and the sentences say which control and why."""
    paper = controls([_inconclusive_control("paper")])
    assert paper.problems == [] and [k[0] for k in paper.known_not_failing] == [_inconclusive_control("paper").check_id]
    assert "cannot tell in this run" in control_sentence(paper) and "(inconclusive)" in short_sentence(paper)
    assert any("seed-to-seed spread" in line for line in render_without_controls([("paper", paper)]))
    quick = controls([_inconclusive_control("quick")])
    assert quick.known_not_failing == () and quick.problems == [
        f"{_inconclusive_control('quick').check_id}: a negative control that does not fail"]
    assert "does not fail, with no stated reason" in control_sentence(quick)
    # nor where its test was not the listed xfail, nor where the control holds (it shows the effect: broken)
    for rec in (_inconclusive_control("paper", outcome="passed"), _inconclusive_control("paper", interval=(0.6, 0.9))):
        assert controls([rec]).known_not_failing == () and controls([rec]).not_failing == (rec.check_id,)


def kind_agrees(h, by_id) -> bool:
    """Does the records' criterion of each headline check bear out the headline's kind?"""
    sources = {by_id[i].criterion[2] for i in h.check_ids if i in by_id}
    if h.kind == "paper-tolerance":
        return sources == {"paper"}
    if h.kind == "ours-tolerance":
        return "project" in sources
    return bool(sources)


@pytest.mark.parametrize("name", PUBLISHED)
def test_each_statement_is_counted_in_its_kind(reports, name):
    by_id = {r.check_id: r for r in reports[name].records}
    assert [h.statement for h in all_headlines() if not kind_agrees(h, by_id)] == []


def test_a_statement_declared_in_the_wrong_kind_is_caught(reports):
    """Control: the Kalman statement (its checks at our 1.05) declared at the paper's tolerance,
    and the trained cosines (at the paper's +-) declared at ours, both disagree with the records."""
    from dataclasses import replace
    by_id = {r.check_id: r for r in reports["quick"].records}
    kalman = next(h for h in all_headlines() if h.claim == "kalman-parity")
    cosines = next(h for h in all_headlines() if h.kind == "paper-tolerance")
    assert kind_agrees(kalman, by_id) and kind_agrees(cosines, by_id)
    assert not kind_agrees(replace(kalman, tolerance="paper"), by_id)
    assert not kind_agrees(replace(cosines, tolerance="ours"), by_id)


@pytest.mark.parametrize("name", PUBLISHED)
def test_the_tolerances_the_readme_calls_the_papers_are_the_only_ones(reports, name):
    """README: the paper's own tolerances are its AR(4) cosines' +- 0.05 / 0.01 and == 0 of the
    exact identities (symbolic, or exact rational arithmetic); every other is ours."""
    assert "+- 0.05 / 0.01" in README and "exact identities at == 0 are the paper's" in README
    for r in reports[name].records:
        if r.tolerance_source == "paper":
            assert (r.comparator, r.tolerance) == ("==", 0) or (
                r.check in ("trained-cos1", "optimum-cos1") and r.tolerance in (0.05, 0.01)), r.check_id
        if (r.per_run or {}).get("tolerance_source") == "paper":
            assert r.check == "trained-cos1" and r.per_run["tolerance"] in (0.05, 0.01), r.check_id


def test_the_readme_states_the_seeds_the_runs_have(reports):
    assert reports["paper"].profile["n_seeds"] == 8 and "8 seeds per setting" in README
    assert reports["quick"].profile["n_seeds"] == 3 and "the quick profile the paper's 3" in README


def test_no_blanket_sentence_the_records_contradict():
    """The false sentence of the past, and its like, are gone: not every family has a control."""
    text = re.sub(r"\s+", " ", README)
    for false in ("every check has a negative control", "every check family has a negative control",
                  "all checks have a negative control"):
        assert false not in text.lower()


def test_the_readmes_counts_of_runs_and_what_their_seeds_decide():
    """README: the quick profile trains 54 models; 8 seeds decide "8 of 8" or "0 of 8" against
    1/2, the quick profile's 3 decide no share (Clopper-Pearson 95 %, claims.harness.basins)."""
    from claims.harness.basins import clopper_pearson
    from claims.harness.profiles import PAPER, QUICK
    from claims.specs import claim_runs
    quick = {r.run for s in CLAIMS for r in claim_runs(s.name, QUICK)}
    assert "training 54 models" in re.sub(r"\s+", " ", README) and len(quick) == 54
    assert PAPER.n_seeds == 8 and QUICK.n_seeds == 3
    assert clopper_pearson(8, 8)[0] > 0.5 and clopper_pearson(0, 8)[1] < 0.5
    assert clopper_pearson(3, 3)[0] < 0.5 < clopper_pearson(0, 3)[1]


@pytest.mark.parametrize("name", PUBLISHED)
def test_each_row_at_our_tolerance_shows_ours(reports, name):
    """The heading promises our tolerance in each row: the key check of every statement at our
    tolerance is one judged at ours; at the sources' tolerance, the per-run criterion is theirs."""
    from claims.reports.findings import findings
    for f in findings(reports[name]):
        if f.kind == "ours-tolerance":
            assert "(project's)" in f.key, f.headline.statement
        elif f.kind == "paper-tolerance":
            assert "(paper's)" in f.key, f.headline.statement
