"""A claim is one object: a synthetic claim registered as a spec, with one check, one
headline and one figure, is picked up by the run store, the report, the README findings
renderer, the HTML page and the figure registry, with no edit anywhere else.

Oracle: the spec and the record written here; every consumer is reached through its public
entry (the ``ldsicl runs`` command, ``render_report``, ``readme.render_block``,
``html.render_html``, ``figures.render_figures`` / ``claim_of``).  Control: without the
registration none of them names the claim.
"""
from __future__ import annotations

import contextlib
import io
import json

import pytest

from claims.cli.main import main
from claims.harness.coverage import REFERENCE
from claims.harness.profiles import QUICK
from claims.harness.records import make_record
from claims.harness.reportfile import Report
from claims.harness.runs import ar1_run
from claims.harness.spec import ClaimSpec, FigureSpec, Headline
from claims.reports.figures import claim_of, render_figures
from claims.reports.html import render_html
from claims.reports.readme import render_block
from claims.reports.report import make_report, render_report
from claims.specs import claim_runs, register

NAME = "synthetic-claim"
STATEMENT = "The synthetic quantity x stays below one."


def _x_data(records) -> dict:
    values = tuple(r.measured for r in records if r.check == "x-below-one")
    return {"": values} if values else {}


def _x_draw(plt, values, path) -> None:
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.plot(range(len(values)), values, "o")
    fig.savefig(path)
    plt.close(fig)


SPEC = ClaimSpec(
    NAME, "a synthetic claim of the tests", "test_synthetic.py",
    runs=lambda profile: [ar1_run(REFERENCE, 0)],
    headlines=(Headline(NAME, STATEMENT, "eq. 0", (f"{NAME}/x-below-one/{REFERENCE}",),
                        reason="the only check of x"),),
    figures=(FigureSpec("synthetic-x", "synthetic: x against its index", _x_data, _x_draw),),
)


def _record():
    return make_record(claim=NAME, check="x-below-one", setting=REFERENCE, label="x", paper_ref="eq. 0",
                       measured=0.25, tolerance=1.0, comparator="<=", tolerance_source="project")


def _report() -> Report:
    return make_report([_record()], QUICK.as_dict(), generated="2026-12-06T00:00:00Z")


def _runs_json() -> dict:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["runs", "--json"]) == 0
    return json.loads(out.getvalue())["claims"]


@pytest.fixture
def synthetic():
    with register(SPEC) as spec:
        yield spec


def test_the_run_store_lists_its_runs(synthetic):
    assert [r.run for r in claim_runs(NAME, QUICK)] == [ar1_run(REFERENCE, 0).run]
    assert [e["run"] for e in _runs_json()[NAME]] == [ar1_run(REFERENCE, 0).run]


def test_the_figure_registry_draws_its_figure(synthetic, tmp_path):
    drawn = render_figures([_record()], tmp_path)
    assert [(t, p.name) for t, p in drawn] == [("synthetic: x against its index", "synthetic-x.png")]
    assert (tmp_path / "synthetic-x.png").stat().st_size > 0 and claim_of("synthetic-x.png") == NAME


def test_the_report_and_the_html_show_its_section_figure_and_headline(synthetic, tmp_path):
    paths = render_report(_report(), tmp_path)
    md, page = paths["md"].read_text(), paths["html"].read_text()
    assert [p.name for p in paths["figures"]] == ["synthetic-x.png"]
    for text in (md, page):
        assert f"{NAME}/x-below-one/{REFERENCE}" in text and "synthetic-x.png" in text
    assert STATEMENT in page and STATEMENT in render_html(_report(), [])


def test_the_readme_findings_show_its_statement(synthetic):
    block = render_block(_report(), None)
    assert STATEMENT in block and "reproduced" in block


def test_without_the_registration_nothing_names_it(tmp_path):
    """Control: the same record without its spec reaches no registry."""
    assert NAME not in _runs_json()
    assert render_figures([_record()], tmp_path) == [] and claim_of("synthetic-x.png") is None
    assert STATEMENT not in render_block(_report(), None)
    with pytest.raises(ValueError, match="claim"):
        claim_runs(NAME, QUICK)
