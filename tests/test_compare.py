"""Tests of ``python -m claims.reports.compare`` (claims/reports/compare.py) on small synthetic reports:
each is written as JSON (a dict here, so that a test can change one field) and read back through
claims.harness.reportfile, as the command reads its files."""
from __future__ import annotations

import copy
import json
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from _procs import clean_env, run_bounded

from claims.reports.compare import compare_reports, compare_verdicts, format_comparison, function_name, main
from claims.harness.profiles import QUICK
from claims.harness.records import ClaimRecord, make_record
from claims.harness.reportfile import report_from_dict
from claims.reports.report import make_report
from claims.harness.stats import seed_fields

REPO = Path(__file__).resolve().parents[1]


def _rec(test, order=0, **kw):
    args = dict(claim="ar1-optimum", paper_ref="Thm 4.1", check="k1", label="err", measured=0.1,
                tolerance=1e-12, comparator="<=", setting="a", tolerance_source="project")
    args.update(kw)
    return replace(make_record(**args), test=test, order=order, profile="quick", outcome="passed")


def _cmp(before: dict, after: dict, **kw):
    """compare_reports of two reports given as their JSON objects."""
    return compare_reports(report_from_dict(before, "BEFORE"), report_from_dict(after, "AFTER"), **kw)


def _verdicts(before: dict, after: dict, **kw):
    return compare_verdicts(report_from_dict(before, "BEFORE"), report_from_dict(after, "AFTER"), **kw)


def _report():
    """A report as the plugin writes it, with the removed profile knobs still in it."""
    recs = [
        _rec("claims/test_a.py::test_exact", check="exact", measured=3, tolerance=3, comparator="==",
             details={"exact": "2052/9999", "kappa": 0.2052454015138651}),
        _rec("claims/test_a.py::test_float[a]", check="float", measured=1.1e-16,
             details={"per_seed": [0.1, 0.2, 0.30000000000000004], "elapsed": 1.5}),
        _rec("claims/test_a.py::test_float[b]", check="float", setting="b", measured=2.5e-13),
        # a check and its control: told apart by the control flag in the check_id
        _rec("claims/test_a.py::test_sym[control]", setting="symbolic", check="sym", label="nonzero",
             measured=4, tolerance=0, comparator="==", expect="fails", tolerance_source="paper"),
        _rec("claims/test_a.py::test_sym[holds]", setting="symbolic", check="sym", label="nonzero",
             measured=0, tolerance=0, comparator="==", tolerance_source="paper"),
        # an interval check over seeds (inconclusive) and a reported row
        _rec("claims/test_a.py::test_trained[a]", check="k4", label="signed err",
             **seed_fields([0.0125, -0.0072, 0.0004]), tolerance=0.01, comparator="abs<="),
        _rec("claims/test_a.py::test_table[a]", check="k5", label="mse", kind="reported", tolerance=None,
             comparator=None, tolerance_source=None, **seed_fields([0.2, 0.25, 0.3])),
    ]
    profile = dict(QUICK.as_dict(), mc_systems=20_000, settings_trained=["a", "b", "c", "d"])
    return json.loads(json.dumps(make_report(recs, profile, "2026-01-01T00:00:00+00:00").to_dict()))


def _after(before):
    """The same run after a refactoring: new node ids and timestamp, knobs removed."""
    after = copy.deepcopy(before)
    after["generated"] = "2026-02-02T00:00:00+00:00"
    del after["profile"]["mc_systems"], after["profile"]["settings_trained"]
    for r in after["records"]:
        r["test"] = r["test"].replace("claims/test_a.py", "claims/test_b.py").replace(
            "[a]", "[setting=a]")
    return after


def test_function_name():
    assert function_name("claims/x.py::test_f[a-1]") == "test_f"
    assert function_name("x.py::Cls::test_g") == "test_g" and function_name(None) is None


def test_identical_apart_from_ignored_keys():
    before = _report()
    res = _cmp(before, _after(before))
    assert res.ok and len(res.identical) == 7 and not res.within and not res.differing
    assert "RESULT: MATCH" in format_comparison(res)[-1]
    # the knobs are ignored only because they are named
    res = _cmp(before, _after(before), ignore_profile_keys=())
    assert not res.ok and {p for p, *_ in res.report_diffs} == {
        "profile.mc_systems", "profile.settings_trained"}


def test_floats_within_rtol_are_counted_apart_from_bit_identical():
    before = _report()
    after = _after(before)
    r = after["records"][1]
    assert r["details"]["per_seed"][2] == 0.30000000000000004
    r["details"]["per_seed"][2] = 0.3                      # 1 ulp: rel 1.85e-16
    res = _cmp(before, after)
    assert res.ok and len(res.identical) == 6 and len(res.within) == 1
    rel, key, path = res.max_within()
    assert path == "details.per_seed[2]" and 1e-16 < rel < 2e-16
    text = "\n".join(format_comparison(res))
    assert "within rtol 1e-14:  1 (max rel diff 1.85e-16" in text
    assert not _cmp(before, after, rtol=0.0).ok


@pytest.mark.parametrize("change, path", [
    (lambda a: a["records"][2].update(measured=2.5e-13 * (1 + 1e-12)), "measured"),
    (lambda a: a["records"][0].update(measured=3.0), "measured"),            # int -> float
    (lambda a: a["records"][0]["details"].update(exact="2052/9998"), "details.exact"),
    (lambda a: a["records"][3].update(verdict="holds"), "verdict"),
    (lambda a: a["records"][6].update(expect="holds"), "expect"),
    (lambda a: a["records"][4].update(outcome="xfailed"), "outcome"),
    (lambda a: a["records"][1]["details"]["per_seed"].pop(), "details.per_seed (length)"),
    (lambda a: a["records"][1].update(note="a note"), "note"),
    # intervals and reported rows are compared like every other field
    (lambda a: a["records"][5]["interval"].__setitem__(1, 0.0266), "interval[1]"),
    (lambda a: a["records"][5].update(verdict="holds"), "verdict"),
    (lambda a: a["records"][5].update(n_seeds=8), "n_seeds"),
    (lambda a: a["records"][5].update(decide="other"), "decide"),
    (lambda a: a["records"][5].update(tolerance_source="paper"), "tolerance_source"),
    (lambda a: a["records"][6].update(measured=0.26), "measured"),
    (lambda a: a["records"][6].update(kind="check"), "kind"),
])
def test_differences_fail(change, path):
    before = _report()
    after = _after(before)
    change(after)
    res = _cmp(before, after)
    assert not res.ok and len(res.differing) == 1
    assert path in [p for p, *_ in res.differing[0][1]]
    text = "\n".join(format_comparison(res))
    assert "DIFFERS" in text and text.endswith("RESULT: DIFFERENT")


def test_reported_rows_and_intervals_round_trip():
    before = _report()
    by = {r["test"].rsplit("::", 1)[1]: r for r in before["records"]}
    assert by["test_table[a]"]["verdict"] == "reported" and by["test_table[a]"]["expect"] is None
    assert by["test_trained[a]"]["verdict"] == "inconclusive"
    assert len(before["summary"]["inconclusive"]) == 1
    assert before["summary"]["intervals"]["checks"] == 1        # the reported row is no check
    assert _cmp(before, _after(before)).ok


def test_unmatched_records_and_summary_fail():
    before = _report()
    after = _after(before)
    after["records"][2].update(check="renamed", check_id="ar1-optimum/renamed/b")
    res = _cmp(before, after)
    assert not res.ok and len(res.only_before) == 1 and len(res.only_after) == 1
    assert "unmatched: 1 only in BEFORE, 1 only in AFTER" in format_comparison(res)
    after = _after(before)
    dropped = after["records"].pop(4)                     # test_sym[holds]
    summary = make_report([ClaimRecord.from_dict(r) for r in after["records"]], None).summary
    after = dict(after, summary=json.loads(json.dumps(summary)))
    res = _cmp(before, after)
    assert not res.ok and len(res.only_before) == 1 and not res.only_after
    assert dropped["expect"] == "holds" and res.only_before == [("ar1-optimum/sym/symbolic",)]
    assert ("ar1-optimum/sym/symbolic/control",) in res.identical       # its control still matches
    assert {"summary.total.checks", "summary.total.hold"} <= {p for p, *_ in res.report_diffs}


def test_ignore_keys_option_and_key_fields(tmp_path):
    before = _report()
    after = _after(before)
    after["records"][1]["details"]["elapsed"] = 9.9
    res = _cmp(before, after)
    assert [p for p, *_ in res.differing[0][1]] == ["details.elapsed"]
    assert _cmp(before, after,
                           ignore_keys=("generated", "test", "elapsed")).ok
    # matching on the node id instead: the renamed ids no longer match
    res = _cmp(before, after, key=("test",), ignore_keys=("generated", "elapsed"))
    assert len(res.only_before) == 7


def _write(tmp_path, name, data):
    p = tmp_path / name
    p.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return str(p)


def test_main_exit_codes(tmp_path, capsys):
    before = _report()
    b = _write(tmp_path, "before.json", before)
    assert main([b, _write(tmp_path, "after.json", _after(before))]) == 0
    out = capsys.readouterr().out
    assert "bit-identical:      7" in out and out.rstrip().endswith("RESULT: MATCH")

    changed = _after(before)
    changed["records"][0]["verdict"] = "fails"
    assert main([b, _write(tmp_path, "changed.json", changed)]) == 1
    assert "verdict: 'holds' -> 'fails'" in capsys.readouterr().out

    after = _after(before)
    after["records"][1]["details"]["elapsed"] = 2.0
    a = _write(tmp_path, "timed.json", after)
    assert main([b, a]) == 1
    assert main([b, a, "--ignore-keys", "generated,test,elapsed"]) == 0
    capsys.readouterr()

    for bad, problem in [(_write(tmp_path, "x.json", "{not json"), "not JSON"),
                         (_write(tmp_path, "y.json", {"records": {}}), "not a claims report"),
                         (_write(tmp_path, "z.json", {"schema": 6, "records": [{"check_id": "c/x"}]}),
                          "records[0]: record 'c/x' lacks the fields ['claim', 'check', 'coords'"),
                         (_write(tmp_path, "old.json", {"schema": 3, "records": []}), "of schema 3"),
                         (_write(tmp_path, "renamed.json", dict(before, records=[
                             {("tol" if k == "tolerance" else k): v for k, v in before["records"][0].items()}])),
                          "lacks the fields ['tolerance']"),
                         (str(tmp_path / "missing.json"), "cannot read")]:
        assert main([b, bad]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and problem in err and bad in err
    assert main([b, b, "--rtol", "-1"]) == 2
    capsys.readouterr()


def test_module_runs_as_a_script(tmp_path):
    before = _report()
    b = _write(tmp_path, "before.json", before)
    a = _write(tmp_path, "after.json", _after(before))
    proc = run_bounded([sys.executable, "-m", "claims.reports.compare", b, a], env=clean_env(REPO),
                       timeout=120)
    assert proc.returncode == 0 and "RESULT: MATCH" in proc.stdout, proc.stdout + proc.stderr


def test_verdict_comparison_ignores_numbers_but_not_conclusions(tmp_path):
    r = _rec("t.py::f[a]", check="m", label="m", measured=0.1, tolerance=1.0)
    a = json.loads(json.dumps(make_report([r], None, "x").to_dict()))
    b = dict(a, records=[dict(a["records"][0], measured=0.2)])
    assert _verdicts(a, b) == []
    c = dict(a, records=[dict(a["records"][0], verdict="inconclusive")])
    assert _verdicts(a, c) == ["DIFFERS: ar1-optimum/m/a: verdict 'holds' -> 'inconclusive'"]
    d = dict(a, records=a["records"] + [dict(a["records"][0], check_id="ar1-optimum/m/b",
                                             coords=dict(a["records"][0]["coords"], setting="b"))])
    assert _verdicts(a, d) == ["only in AFTER:  ar1-optimum/m/b"]
    pa, pc = tmp_path / "a.json", tmp_path / "c.json"
    pa.write_text(json.dumps(a))
    pc.write_text(json.dumps(c))
    assert main([str(pa), str(pa), "--verdicts"]) == 0
    assert main([str(pa), str(pc), "--verdicts"]) == 1


def test_reworded_labels_keep_the_verdicts(tmp_path):
    """Records are matched by check_id: rewording every label (and moving every test) leaves
    ``--verdicts`` green; the full comparison names the label as the one field that moved."""
    before = _report()
    after = _after(before)
    for r in after["records"]:
        r["label"] = "reworded: " + r["label"][::-1]
    assert main([_write(tmp_path, "b.json", before), _write(tmp_path, "a.json", after), "--verdicts"]) == 0
    res = _cmp(before, after)
    assert not res.only_before and not res.only_after and len(res.differing) == 7
    assert all([p for p, *_ in diffs] == ["label"] for _, diffs in res.differing)
    # matching by the old key (the label) would have lost every record
    assert len(_cmp(before, after, key=("label",)).only_before) == 7


def test_a_key_on_one_side_only_is_shown_as_missing_on_the_other():
    from claims.reports.compare import _Diff
    d = _Diff(rtol=1e-9, ignore=frozenset({"skip"}))
    d.values({"a": 1.0, "only_before": 2, "skip": 1}, {"a": 1.0, "only_after": [3], "skip": 2}, "rec")
    assert d.differ == [("rec.only_after", "<missing>", [3]), ("rec.only_before", 2, "<missing>")]


def test_long_values_are_cut_to_120_characters_with_an_ellipsis():
    from claims.reports.compare import _short
    assert _short("x" * 10) == repr("x" * 10)
    cut = _short("y" * 500)
    assert len(cut) == 120 and cut == repr("y" * 500)[:117] + "..."


def test_the_published_runs_agree_with_themselves(capsys):
    quick = str(REPO / "docs" / "results" / "quick.json")
    assert main([quick, quick]) == 0 and capsys.readouterr().out.rstrip().endswith("RESULT: MATCH")
