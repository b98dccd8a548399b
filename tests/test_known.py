"""The known non-reproductions (each claim spec's ``known``, gathered by claims.specs.known_failures;
their marks: claims/harness/known.py) against the published runs: every listed check fails
there, every check that fails there (and is expected to hold) is listed, and the xfail reasons
carry the published numbers, not numbers typed by hand."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from claims.harness.display import format_value
from claims.harness.known import known_params, reason
from claims.specs import known_failures

ROOT = Path(__file__).resolve().parents[1]
KNOWN = known_failures()


def _records(profile):
    return json.loads((ROOT / "docs" / "results" / f"{profile}.json").read_text(encoding="utf-8"))["records"]


@pytest.mark.parametrize("profile", ["quick", "paper"])
def test_the_registry_is_what_the_published_run_found(profile):
    recs = {r["check_id"]: r for r in _records(profile)}
    listed = {cid for cid, by in KNOWN.items() if profile in by}
    for cid in listed:
        assert cid in recs, cid
        r = recs[cid]
        # a check that fails where it should hold, or a control that cannot tell (inconclusive;
        # one that holds is broken, and listing it would hide that)
        assert r["verdict"] == ("fails" if r["expect"] == "holds" else "inconclusive"), cid
        # and the listing reached its test: the strict xfail mark was on it when the run was made
        assert r["outcome"] == "xfailed", (cid, r["outcome"])
    # the checks a strict xfail swallowed: each failing one is listed, and any other (one that
    # holds or cannot be decided) was recorded by the test of a listed one
    xfailed = {cid for cid, r in recs.items() if r["outcome"] == "xfailed" and r.get("expect") == "holds"
               and r.get("tolerance") is not None}
    listed_tests = {recs[cid]["test"] for cid in listed}
    stray = {cid for cid in xfailed if recs[cid]["verdict"] == "fails" or recs[cid]["test"] not in listed_tests}
    assert stray <= listed, sorted(stray - listed)


def test_a_reason_renders_the_published_numbers():
    cid, rec = next((c, r) for c, r in ((r["check_id"], r) for r in _records("paper")) if c in KNOWN
                    and "paper" in KNOWN[c])
    text = reason(cid, "paper")
    assert text.startswith("paper profile: ") and KNOWN[cid]["paper"] in text
    assert f"last published paper run: {format_value(rec['measured'])}" in text and "verdict fails" in text
    assert reason(cid, "nope") is None and reason("no/such/check", "paper") is None


def test_known_params_marks_only_listed_checks():
    params = known_params(lambda st: f"pcg-alignment/optimum-cos1/{st}/s=4", ["a", "c"])
    marked, plain = params
    assert plain == "c"
    assert marked.values == ("a",) and {m.kwargs["condition"] for m in marked.marks} == {
        "config.getoption('claims_profile') == 'quick'", "config.getoption('claims_profile') == 'paper'"}
    assert all(m.kwargs["strict"] for m in marked.marks)
    for m in marked.marks:
        profile = m.kwargs["condition"].rsplit("'", 2)[1]
        assert m.kwargs["reason"] == reason("pcg-alignment/optimum-cos1/a/s=4", profile)
    # a check listed for one profile only carries one mark
    (one,) = known_params(lambda st, s: f"banding/trained-odd-share/{st}/s={s}", [("b", 3)])
    assert [m.kwargs["condition"] for m in one.marks] == ["config.getoption('claims_profile') == 'paper'"]


def test_a_listed_control_marks_the_test_of_its_check():
    """A listed control (``<check_id>/<variant>/control``) marks the test whose check it extends,
    with the control's own reason; a check that merely shares a prefix is not marked."""
    ctl = "spectral-shift/gain-outside/a/L=4/r=1.05/null-same-radius/control"
    assert "paper" in KNOWN[ctl]
    marked, plain, other = known_params(lambda L, r: f"spectral-shift/gain-outside/a/L={L}/r={r:g}",
                                        [(4, 1.05), (1, 1.05), (4, 1.0)])
    assert marked.values == (4, 1.05) and [m.kwargs["reason"] for m in marked.marks] == [reason(ctl, "paper")]
    assert plain == (1, 1.05) and other == (4, 1.0)
    assert known_params(lambda L: f"spectral-shift/gain-outside/a/L={L}/r=1.0", [4]) == [4]


def test_the_published_phrase_without_an_interval(monkeypatch):
    import claims.harness.known as known
    from claims.harness.records import make_record
    rec = make_record(claim="x", check="y", label="y", paper_ref="-", measured=1.25, tolerance=1.05,
                      comparator="<=", tolerance_source="project")
    monkeypatch.setattr(known, "_published", lambda profile: {"x/y": rec})
    assert known.published_numbers("x/y", "quick") == \
        "last published quick run: 1.25 against <= 1.05 (project's), verdict fails"
    assert known.published_numbers("x/z", "quick") is None


@pytest.mark.parametrize("profile", ["quick", "paper"])
def test_the_parity_words_quote_the_checks_own_tolerance(profile):
    """The registry's words for the Kalman-parity failures name the criterion each run of the
    published records was judged against (the project's tolerance) and that every run fails."""
    import re
    recs = {r["check_id"]: r for r in _records(profile)}
    seen = 0
    for cid, by in KNOWN.items():
        if not cid.startswith("kalman-parity/trained-mse-ratio/") or profile not in by or cid not in recs:
            continue
        r, why = recs[cid], by[profile]
        pr = r["per_run"]
        assert re.search(rf"within the {pr['tolerance_source']}'s {format_value(pr['tolerance'])}(\s|$)", why), why
        assert "every run fails" in why and pr["held"] == pr["undecided"] == 0, why
        seen += 1
    assert seen or profile == "quick"         # the quick profile's 3 runs decide no share
