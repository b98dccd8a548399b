"""The HTML report (claims/reports/html.py) on small made-up reports: how a negative control's
row is shaded (failing as it must is not the red of a failing check; not failing stands out),
every list of claims follows claims.specs.CLAIMS whatever order the report holds, every
figure links to its PNG, and every table sits in its scroll wrapper.  No training, no
browser: each test renders a page in milliseconds.
"""
from __future__ import annotations

import re

import pytest

import claims.reports.html as page_module
from claims.harness.records import make_record
from claims.harness.reportfile import Report
from claims.reports.findings import anchor
from claims.reports.html import CONTROL_BROKEN, CONTROL_OK, VIEWPORT, render_html
from claims.specs import CLAIMS

RANK = {s.name: i for i, s in enumerate(CLAIMS)}


def _rec(claim: str, check: str, measured: float, expect: str = "holds"):
    return make_record(claim=claim, check=check, label=check, paper_ref="eq. 1", measured=measured,
                       tolerance=1, comparator="<=", tolerance_source="project", expect=expect)


def _row_classes(page: str) -> dict[str, str]:
    """check_id -> the class of its row."""
    return dict((cid, cls) for cls, cid in re.findall(r'<tr class="([^"]*)"><td>([^<]*)</td>', page))


def _style(page: str, selector: str) -> str:
    m = re.search(re.escape(selector) + r"\{([^}]*)\}", page)
    assert m, selector
    return m.group(1)


def test_a_control_that_fails_as_it_must_is_not_shaded_as_a_failure_and_a_broken_one_stands_out():
    recs = (_rec("ar1-optimum", "ctl", 2.0, "fails"),        # control, fails: as it must
            _rec("ar1-optimum", "broken", 0.0, "fails"),     # control, holds: broken
            _rec("ar1-optimum", "bad", 2.0))                 # a check that fails
    assert [(r.verdict, r.coords.control) for r in recs] == [("fails", True), ("holds", True), ("fails", False)]
    page = render_html(Report(records=recs), [])
    cls = _row_classes(page)
    ok, broken, bad = (cls[r.check_id].split() for r in recs)
    assert ok == ["control", "control-ok"] and "fails" not in ok          # not the red of .fails
    assert broken == ["control", "control-broken"] and "holds" not in broken
    assert bad == ["fails"]
    # the colours: a failing check red, a control that fails as it must not red, a broken one louder
    fails_bg = _style(page, ".fails")
    assert "background:#fdd" in fails_bg and "#fdd" not in _style(page, ".control-ok")
    assert "background:#f77" in _style(page, ".control-broken") and "bold" in _style(page, ".control-broken")
    # the verdict cell says which, and the legend explains both
    for r, label in zip(recs, (CONTROL_OK, CONTROL_BROKEN)):
        row = page[page.index(f"<td>{r.check_id}</td>"):]
        assert f"<td>{r.verdict} ({label})</td>" in row[:row.index("</tr>")], r.check_id
    legend = page[page.index("<p>Rows of the check tables"):]
    legend = legend[:legend.index("</p>")]
    assert "fails as it must" in legend and "does not" in legend and "italic" in legend


def _claim_lists(page: str) -> dict[str, list[str]]:
    """Every list of claims on the page, each as the claims in the order it shows them."""
    top = page[page.index("<p>Claims: "):]
    top = top[:top.index("</p>")]
    find = page[page.index("<h2>Findings</h2>"):page.index("<h2>Provenance</h2>")]
    out = {"links at the top": re.findall(r'href="#([^"]+)"', top),
           "sections": re.findall(r'<section id="([^"]+)">', page)}
    for i, table in enumerate(re.findall(r"<table.*?</table>", find, flags=re.S)):
        out[f"findings table {i}"] = list(dict.fromkeys(re.findall(r'href="#([^"]+)"', table)))
    return out


def _alphabetical_report() -> Report:
    """Records and summary in alphabetical claim order (as summarize() writes the summary)."""
    names = sorted(["gd-equivalence", "banding", "ar1-optimum", "depth", "training-basins"])
    recs = tuple(_rec(c, "x", 0.5) for c in names)
    return Report(records=recs, summary={"line": "5 claims", "claims": {c: {"line": f"{c}: 1 check"} for c in names}})


def test_every_list_of_claims_follows_the_registry_not_the_alphabet(monkeypatch):
    rep = _alphabetical_report()
    names = [r.claim for r in rep.records]
    assert names == sorted(names) != sorted(names, key=RANK.get)      # the two orders differ here
    # findings() handed back alphabetically too: the page must still sort them
    alpha = page_module.findings
    monkeypatch.setattr(page_module, "findings", lambda r: sorted(alpha(r), key=lambda f: f.headline.claim))
    lists = _claim_lists(render_html(rep, []))
    assert len(lists) >= 4 and lists["sections"] == [anchor(c) for c in sorted(names, key=RANK.get)]
    assert sum(len(c) > 2 for c in lists.values()) >= 3
    for where, claims in lists.items():
        assert claims == sorted(claims, key=RANK.get), where
    # control: a page that lists the claims alphabetically is caught
    monkeypatch.setattr(page_module, "claim_order", sorted)
    bad = _claim_lists(render_html(rep, []))
    assert [w for w, c in bad.items() if c != sorted(c, key=RANK.get)]


def test_figures_link_to_their_full_size_and_tables_sit_in_scroll_wrappers():
    rep = _alphabetical_report()
    page = render_html(rep, [("AR(1) weights", "figures/ar1-weights.png"), ("loose", "figures/zz-other.png")])
    assert VIEWPORT in page[:page.index("</head>")]
    imgs = re.findall(r"<img [^>]*>", page)
    linked = re.findall(r'<a href="([^"]+)"><img src="([^"]+)"', page)
    assert len(imgs) == len(linked) == 2 and all(a == s for a, s in linked)
    assert "click a figure for its full size" in page.lower()
    n = page.count("<table")
    assert n > 3 and n == len(re.findall(r'<div class="scroll"><table[ >]', page)) == page.count("</table></div>")
    assert "overflow-x:auto" in _style(page, ".scroll") and "@media (max-width:" in page
    assert "<script" not in page and "http" not in page.lower().replace("http-equiv", "")


@pytest.mark.parametrize("expect", ["fails", "holds"])
def test_the_row_class_follows_the_control_flag_and_the_verdict(expect):
    """Both verdicts for both expectations: only an expected-fails row is a control."""
    for measured in (0.0, 2.0):
        r = _rec("ar1-optimum", "x", measured, expect)
        cls = page_module._row_class(r).split()
        if expect == "fails":
            assert cls[0] == "control" and cls[1] == ("control-ok" if r.verdict == "fails" else "control-broken")
        else:
            assert cls == [r.verdict]


def test_the_page_names_commit_and_machine_and_says_the_truth_about_controls():
    """The first lines of the findings name the run's commit and machine; the controls sentence
    counts the families; the families without a control are listed with their reason.
    Control: a broken control (one that does not fail) changes the sentence."""
    env = {"cpu": "AMD EPYC (family 25, model 17)", "cpu_count": 2}
    prov = {"commit": "0123456789abcdef", "dirty": False}
    ok = (_rec("banding", "trained-odd-share", 0.0), _rec("banding", "x", 0.0), _rec("banding", "x", 2.0, "fails"))
    recs = tuple(r if r.expect == "holds" else r.__class__(**{**r.__dict__, "coords": r.coords.__class__(
        **{**r.coords.__dict__, "control": True})}) for r in ok)
    page = render_html(Report(records=recs, provenance=prov, environment=env), [])
    assert "This run: commit 0123456 on AMD EPYC (family 25, model 17), 2 cores." in page
    assert "1 of 2 check families has a negative control" in page and "The other 1 has none" in page
    assert "banding/trained-odd-share</code>:" in page
    broken = recs[:2] + (recs[2].__class__(**{**recs[2].__dict__, "verdict": "holds"}),)
    assert "1 does not fail, with no stated reason" in render_html(Report(records=broken, provenance=prov,
                                                                          environment=env), [])


def test_the_page_names_a_control_that_cannot_tell_with_its_reason():
    """The spectral shift's null control at L = 4, r = 1.05, inconclusive in a paper run whose test
    was the registry's strict xfail: the page names it, with the registry's reason, apart from the
    broken controls (its row stays 'control-broken': it does not fail).  Control: in a quick run the
    registry lists nothing, so no such block is drawn."""
    from dataclasses import replace
    from claims.specs.spectral_shift import SPEC
    rec = make_record(claim="spectral-shift", check="gain-outside", setting="a", layers=4, radius=1.05,
                      variant="null-same-radius", label="x", paper_ref="y", tolerance=0.5, comparator=">=",
                      tolerance_source="project", measured=0.45, interval=(0.0, 0.9), expect="fails")
    why = SPEC.known[rec.check_id]["paper"]
    page = render_html(Report(records=(replace(rec, profile="paper", outcome="xfailed"),)), [])
    assert "The controls that cannot tell in this run, and why" in page
    assert f"<code>{rec.check_id}</code> (inconclusive): " in page and why.replace("'", "&#x27;") in page
    quick = render_html(Report(records=(replace(rec, profile="quick", outcome="failed"),)), [])
    assert "cannot tell in this run" not in quick and "does not fail, with no stated reason" in quick
