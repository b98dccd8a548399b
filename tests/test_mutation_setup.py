"""tests/conftest.py's part in mutation testing (docs/mutation.md): inside mutmut's copy the
tests that read the source text are skipped, and nowhere else.

mutmut runs the unit tests in ``mutants/``, where every module's text is its rewrite (each
function beside its mutated copies and a trampoline), with ``MUTANT_UNDER_TEST`` set; the
source-text guards (``reads_source``) would report mutmut's function names there, and the
instrumented first run, which must pass, failed on them.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest
from _procs import clean_env, run_bounded

pytest_plugins = ["pytester"]

CONFTEST = Path(__file__).with_name("conftest.py")
ROOT = Path(__file__).resolve().parents[1]
#: a link from docs/mutation.md to a report under docs/results/mutation/
REPORT_LINK = r"\]\((results/mutation/[^)]+/report-[^)]+\.json)\)"


def _doc_report(link: str) -> dict:
    """A report docs/mutation.md links (``link`` relative to docs/)."""
    import json
    return json.loads((ROOT / "docs" / link).read_text(encoding="utf-8"))


@pytest.fixture
def project(pytester):
    pytester.makeini("[pytest]\naddopts = -p no:cacheprovider\nmarkers =\n    reads_source: reads source\n")
    pytester.makeconftest(CONFTEST.read_text(encoding="utf-8"))
    pytester.makepyfile(test_guard="""
        import pytest

        @pytest.mark.reads_source
        def test_guard():
            pass

        def test_other():
            pass
        """)
    return pytester


@pytest.mark.parametrize("env, skipped", [(None, 0), ("stats", 1), ("theory.kappa.x_kappa__mutmut_3", 1)])
def test_source_readers_are_skipped_only_in_mutmuts_runs(project, env, skipped):
    # the variable goes to the child only: set in this process, it would switch mutmut's
    # trampolines here to recording (which looks for mutmut's configuration in pytester's
    # directory) when this test itself runs inside mutmut
    proc = run_bounded([sys.executable, "-m", "pytest", "-rs", "-p", "no:xdist"], timeout=120,
                       cwd=project.path, env=clean_env(project.path, MUTANT_UNDER_TEST=env))
    out = proc.stdout
    passed = f"{2 - skipped} passed"
    assert passed in out and (f"{skipped} skipped" in out) == bool(skipped), out[-2000:]
    if skipped:
        assert "reads the source text" in out, out[-2000:]


def test_every_module_that_parses_source_marks_its_guards():
    """A test module that parses Python source (``ast.parse``) carries the marker (a guard
    without it would fail mutmut's instrumented run, as the JSON-writer guard did); the four
    guards' modules among them."""
    parse = "ast." + "parse("
    modules = {p.name: p.read_text(encoding="utf-8") for p in Path(__file__).parent.glob("test_*.py")}
    parsing = {name for name, text in modules.items() if parse in text}
    marked = {name for name, text in modules.items() if "@pytest.mark.reads_source" in text}
    assert {"test_jsonvalues.py", "test_layers.py", "test_settings.py", "test_identity.py"} <= parsing
    assert parsing <= marked, f"parse source without marking a guard: {sorted(parsing - marked)}"


def _status_and_report():
    """docs/mutation.md's status section and the first report it links under docs/results/mutation/."""
    import re
    doc = (ROOT / "docs" / "mutation.md").read_text(encoding="utf-8")
    status = doc.split("## Status on the current tree", 1)[1].split("\n## ", 1)[0]
    linked = re.findall(REPORT_LINK, status)
    assert linked, "the status links no report"
    return status, _doc_report(linked[0])


def test_the_rate_docs_mutation_quotes_is_the_reports():
    """docs/mutation.md's status quotes the counts of the first report it links under
    docs/results/mutation/ (written by ``sample.py --report`` or ``--merge``), not numbers typed apart."""
    status, rep = _status_and_report()
    run = rep["killed"] + rep["survived"]
    assert f"**{rep['killed']} killed**" in status and f"**{rep['survived']} survived**" in status
    assert f"{rep['killed']} / {run} = **{100 * rep['kill_rate']:.1f} %**" in status
    assert f"**{rep['total_mutants']} mutants**" in status and rep["commit"] in status
    lo, hi = (100 * x for x in rep["kill_rate_wilson95"])
    assert f"Wilson's 95 % interval is {lo:.1f} % to {hi:.1f} %" in " ".join(status.split())
    assert f"**{run} of the {rep['n']} have been run**" in status or run == rep["n"]


def test_each_run_the_status_tabulates_is_its_reports():
    """The table of the runs the rate is joined from: one row per report the joined report was
    merged from, in its order, each row's killed and survived those of the report it links."""
    import re
    status, merged = _status_and_report()
    rows = [r for r in status.splitlines() if r.startswith("| ") and "/report-" in r]
    links = []
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        (link,) = re.findall(REPORT_LINK, cells[-1])
        rep = _doc_report(link)
        assert (int(cells[-3]), int(cells[-2])) == (rep["killed"], rep["survived"]), row
        links.append("docs/" + link)
    assert links == merged["merged"]


def _judged_rows(section: str) -> dict:
    """mutant -> verdict of the rows of a "| mutant | judged | ..." table in a doc section."""
    import re
    return {m.group(1): m.group(2).strip() for m in re.finditer(r"^\| `([^`]+)` \|([^|]+)\|", section, re.M)}


def test_every_survivor_of_the_status_report_is_judged():
    """Each survivor the joined report lists has its row in docs/mutation.md's "Survivors
    judged" table, with a verdict in it, and the table judges no mutant the report does not
    list as a survivor; likewise the survivors of the sample outside the frame, in the table
    of their section, against the last report that section links."""
    import re
    _, rep = _status_and_report()
    doc = (ROOT / "docs" / "mutation.md").read_text(encoding="utf-8")
    table = re.split(r"^### Survivors judged$", doc, flags=re.M)[1].split("\n## ", 1)[0]
    rows = _judged_rows(table)
    assert set(rows) == set(rep["survivors"]) and all(rows.values()), rows
    outside = re.split(r"^### Outside the frame.*$", doc, flags=re.M)[1].split("\n## ", 1)[0]
    last = _doc_report(re.findall(REPORT_LINK, outside)[-1])
    rows = _judged_rows(outside)
    assert set(rows) == set(last["survivors"]) and all(rows.values()), rows


def test_the_readme_quotes_the_same_rate_and_commit():
    """The README's pointer to docs/mutation.md quotes the status report's rate and commit."""
    _, rep = _status_and_report()
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    (line,) = [ln for ln in readme.splitlines() if "(docs/mutation.md)" in ln]
    assert f"{100 * rep['kill_rate']:.1f} %" in line and f"`{rep['commit']}`" in line, line
    lo, hi = (100 * x for x in rep["kill_rate_wilson95"])
    assert f"Wilson 95 %: {lo:.1f}-{hi:.1f} %" in line, line
    assert f"{rep['n']} mutants" in line, line


@pytest.mark.reads_source
def test_every_planted_slip_still_applies_and_the_published_run_caught_them():
    """tests/mutation/slips.py's slips each replace text found exactly once in today's source
    (a list that has fallen behind the code fails here, not silently in a later run), and its
    published run (docs/results/mutation/slips/slips.json) planted every slip of the list and
    found each caught by the tests it names."""
    import json
    sys.path.insert(0, str(ROOT / "tests" / "mutation"))
    try:
        import slips
    finally:
        sys.path.remove(str(ROOT / "tests" / "mutation"))
    for s in slips.SLIPS:
        slips.check_applies(s, ROOT)
    rep = json.loads((ROOT / "docs/results/mutation/slips/slips.json").read_text(encoding="utf-8"))
    assert [r["slip"] for r in rep["slips"]] == [s.name for s in slips.SLIPS]
    assert all(r["caught"] and r["pytest_rc"] == 1 for r in rep["slips"]), rep
    assert rep["caught"] == rep["planted"] == len(slips.SLIPS)
    # the check itself can fail: a slip whose text is not in the file is refused
    bad = slips.Slip("x", "x", "theory/n4sid.py", "no such text", "", ())
    with pytest.raises(ValueError, match="occurs 0 times"):
        slips.check_applies(bad, ROOT)


def _sample_module():
    """tests/mutation/sample.py, loaded under a name of its own (no other ``sample`` module
    found on the path, or already imported, can stand in for it)."""
    import importlib.util
    path = Path(__file__).resolve().parent / "mutation" / "sample.py"
    spec = importlib.util.spec_from_file_location("_mutation_sample", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_mutant_names_map_to_their_functions():
    """mutmut's names: ``x_`` + a function's name, ``xǁClassǁmethod`` for a method."""
    sample = _sample_module()
    assert sample._target("theory.kappa.x_kappa__mutmut_3") == ("theory/kappa.py", ["kappa"])
    assert sample._target("claims.reports.figures.x__seed_panel__mutmut_295") == ("claims/reports/figures.py", ["_seed_panel"])
    assert sample._target("theory.mc_moments.xǁ_Accumulatorǁ__init____mutmut_23") == (
        "theory/mc_moments.py", ["_Accumulator", "__init__"])
    with pytest.raises(ValueError, match="not a mutmut mutant name"):
        sample._target("theory.kappa.kappa")


def test_a_merged_report_takes_a_part_only_where_the_function_is_unchanged():
    """``sample.py --merge``: the last part that ran a mutant gives its outcome, and an older
    part's outcome is refused (\"not checked\") where the mutated function's source changed
    since that part's commit -- whatever else changed in the module."""
    sample = _sample_module()
    old = "def f(x):\n    return x + 1\n\n\ndef g(x):\n    return 2 * x\n\n\nclass C:\n    def m(self):\n        return 1\n"
    new = old.replace("2 * x", "3 * x") + "\n\ndef h():\n    pass\n"
    texts = {("c1", "p/m.py"): old, (None, "p/m.py"): new, ("c2", "p/m.py"): new}
    names = ["p.m.x_f__mutmut_1", "p.m.x_g__mutmut_1", "p.m.x_g__mutmut_2", "p.m.xǁCǁm__mutmut_1"]
    first = {"commit": "c1", "statuses": {"p.m.x_f__mutmut_1": "killed", "p.m.x_g__mutmut_1": "survived",
                                          "p.m.x_g__mutmut_2": "killed", "p.m.xǁCǁm__mutmut_1": "survived"}}
    later = {"commit": "c2", "statuses": {"p.m.x_g__mutmut_2": "survived", "p.m.x_f__mutmut_1": "survived"}}
    out = sample.merge([first, later], names, source=lambda c, p: texts.get((c, p)))
    # f_1: both parts valid, the later one's outcome is taken; g_1: c1's is refused (g changed)
    assert out["counts"] == {"not checked": 1, "survived": 3}
    assert out["survivors"] == ["p.m.x_f__mutmut_1", "p.m.x_g__mutmut_2", "p.m.xǁCǁm__mutmut_1"]
    assert out["other"] == ["p.m.x_g__mutmut_1: not checked"]
    assert out["changed_since_their_part"] == ["p.m.x_g__mutmut_1"]
    assert [p["taken"] for p in out["parts"]] == [1, 2] and out["kill_rate"] == 0
    # the other order: the last part (now c1) wins where its outcome can be taken
    again = sample.merge([later, first], names, source=lambda c, p: texts.get((c, p)))
    assert again["counts"] == {"killed": 1, "not checked": 1, "survived": 2} and again["survivors"] == [
        "p.m.x_g__mutmut_2", "p.m.xǁCǁm__mutmut_1"]
    assert again["changed_since_their_part"] == ["p.m.x_g__mutmut_1"] and again["kill_rate"] == 1 / 3
    # a part measured on a tree that differs from its commit is refused
    with pytest.raises(ValueError, match="differs from its commit"):
        sample.merge([dict(first, source_modified_since_commit=True)], names, source=lambda c, p: None)
    # a report without per-mutant statuses (the older --report) is rebuilt from the sample
    rebuilt = sample.part_statuses({"n": 4, "killed": 2, "survivors": ["p.m.x_g__mutmut_1"],
                                    "other": ["p.m.xǁCǁm__mutmut_1: not checked"]}, names)
    assert rebuilt == {"p.m.x_f__mutmut_1": "killed", "p.m.x_g__mutmut_1": "survived",
                       "p.m.x_g__mutmut_2": "killed", "p.m.xǁCǁm__mutmut_1": "not checked"}
    with pytest.raises(ValueError, match="do not match the sample"):
        sample.part_statuses({"n": 4, "killed": 3, "survivors": [], "other": []}, names)


def test_the_frame_counts_todays_mutants_by_whether_their_function_changed_since_the_draw():
    """``frame``: today's mutants of a function whose source is unchanged since the sample's
    commit are in its frame; those of a changed or new function are listed with their counts."""
    sample = _sample_module()
    old = "def f(x):\n    return x + 1\n\n\ndef g(x):\n    return 2 * x\n"
    new = "# a comment\ndef f(x):\n    return x + 1\n\n\ndef g(x):\n    return 3 * x\n\n\ndef h():\n    return 0\n"
    texts = {("c1", "p/m.py"): old, (None, "p/m.py"): new}
    today = ["p.m.x_f__mutmut_1", "p.m.x_f__mutmut_2", "p.m.x_g__mutmut_1", "p.m.x_h__mutmut_1",
             "p.m.x_h__mutmut_2", "p.m.x_h__mutmut_3"]
    out = sample.frame("c1", today, source=lambda c, p: texts.get((c, p)))
    assert out == {"today_in_unchanged_functions": 2,
                   "today_in_changed_functions": {"p/m.py:g": 1, "p/m.py:h": 3}}
    # the population a sample drawn at c1 leaves out, and a seeded draw from it
    outside = sample.outside_frame("c1", today, source=lambda c, p: texts.get((c, p)))
    assert outside == today[2:]
    drawn = sample.draw(7, 2, outside)
    assert drawn == sorted(drawn) and set(drawn) <= set(outside) and drawn == sample.draw(7, 2, outside[::-1])


def test_wilson_interval_of_a_kill_rate():
    """Wilson's interval against its closed form at hand-checkable points (0 of n gives
    [0, z^2 / (n + z^2)], n of n its mirror) and, at 279 of 300, against its definition: the
    two proportions p with (k/n - p)^2 = z^2 p (1 - p) / n."""
    sample = _sample_module()
    z2 = 1.959963984540054 ** 2
    lo, hi = sample.wilson95(0, 10)
    assert lo == pytest.approx(0, abs=1e-15) and hi == pytest.approx(z2 / (10 + z2), rel=1e-12)
    lo, hi = sample.wilson95(10, 10)
    assert lo == pytest.approx(10 / (10 + z2), rel=1e-12) and hi == pytest.approx(1, abs=1e-15)
    lo, hi = sample.wilson95(279, 300)
    assert lo < 279 / 300 < hi
    for p in (lo, hi):
        assert (279 / 300 - p) ** 2 == pytest.approx(z2 * p * (1 - p) / 300, rel=1e-10)
    assert sample.wilson95(0, 0) is None
