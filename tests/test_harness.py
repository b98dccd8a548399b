"""Tests of the claim harness (claims/records.py, collect.py, report.py, seeds.py,
profiles.py, plugin.py; claims/compare.py in tests/test_compare.py).

Unit tests call the functions directly; the plugin tests build a throwaway project with
``pytester`` that loads the real plugin as the repository's root conftest.py does
(``pytest_plugins = ["claims.plugin"]``, or ``-p claims.plugin``), run it serially and
with ``-n 2``, and read the table and the report files it produces.  One test runs
pytest from the repository root with ``--profile`` before the path.
"""
from __future__ import annotations

import dataclasses
import json
import math
import os
import sys
from pathlib import Path

import numpy as np
import pytest
from _procs import clean_env, run_bounded

from claims import report, runopts, stats
from claims.profiles import PAPER, PROFILES, QUICK, Profile, get_profile
from claims.records import (ClaimRecorder, Record, compare, format_value, make_record,
                            records_from_user_properties, to_builtin)
from claims.seeds import claim_settings, rng_for, seed_for

pytest_plugins = ["pytester"]

REPO = Path(__file__).resolve().parents[1]
RECORD_KEYS = {"check_id", "claim", "check", "coords", "label", "paper_ref", "kind", "measured",
               "interval", "interval_kind", "n_seeds", "values", "runs", "basins", "tolerance", "comparator",
               "tolerance_source", "verdict", "holds_at", "decide", "expect", "details", "note",
               "test", "order", "profile", "outcome", "xfail_reason"}
P = {"tolerance_source": "project"}


def _rec(**kw) -> dict:
    """A record as its serialised dict (what the reports and the plugin handle)."""
    return make_record(**kw).to_dict()


# ------------------------------------------------------------------------------ units

@pytest.mark.parametrize("m, op, t, expected", [
    (3, "<=", 3, True), (3, "<", 3, False), (3, ">=", 3, True), (3, ">", 3, False),
    (2, "==", 2, True), (2.0, "==", 2, True), (True, "==", 1, False), ("a", "==", "a", True),
    (-1e-12, "abs<=", 1e-10, True), (-1e-9, "abs<=", 1e-10, False),
    (math.inf, "<=", 1.0, False), (math.nan, "<=", 1.0, False), (math.nan, ">", 1.0, False),
])
def test_compare(m, op, t, expected):
    assert compare(m, op, t) is expected


def test_make_record_converts_and_validates():
    r = _rec(claim="ar1-optimum", paper_ref="Thm 4.1", check="k1", label="z",
                    measured=np.float32(0.25), tolerance=np.int64(1), comparator="<=", **P,
                    setting="a", details={"v": np.arange(2.0), np.int64(3): (1, 2)})
    assert type(r["measured"]) is float and type(r["tolerance"]) is int
    assert r["details"] == {"v": [0.0, 1.0], "3": [1, 2]} and r["verdict"] == "holds"
    assert set(r) == RECORD_KEYS
    r = _rec(claim="x", paper_ref="p", check="k2", label="m", measured=np.array(2.5),
                    tolerance=1, comparator="<=", **P)
    assert r["measured"] == 2.5 and r["verdict"] == "fails"
    bad = dict(claim="x", paper_ref="p", check="k3", label="m", measured=1.0, tolerance=1.0,
               comparator="<=", **P)
    for change, exc in [({"comparator": "~"}, ValueError), ({"expect": "maybe"}, ValueError),
                        ({"claim": "Bad Id"}, ValueError), ({"paper_ref": " "}, ValueError),
                        ({"measured": [1.0, 2.0]}, TypeError), ({"measured": True}, TypeError),
                        ({"measured": 1j}, TypeError), ({"tolerance": math.nan}, ValueError),
                        ({"details": {"f": object()}}, TypeError),
                        ({"tolerance_source": None}, ValueError),
                        ({"tolerance_source": "paper's"}, ValueError),
                        ({"tolerance": None}, ValueError), ({"kind": "table"}, ValueError),
                        ({"kind": "reported"}, ValueError),       # with a tolerance
                        ({"interval": (0.0, 2.0), "comparator": "=="}, ValueError),
                        ({"interval": (1.5, 2.0)}, ValueError),   # must contain measured
                        ({"interval": (2.0, 0.0)}, ValueError),
                        ({"interval": (0.0, math.nan)}, ValueError),
                        ({"interval": (0.0, 1.0, 2.0)}, ValueError),
                        ({"interval": (0.0, 2.0), "n_seeds": 1}, ValueError),
                        ({"interval": (0.0, 2.0), "n_seeds": 3, "interval_kind": "mc95"},
                         ValueError),
                        ({"interval": (0.0, 2.0), "interval_kind": "boot"}, ValueError),
                        ({"n_seeds": 3}, ValueError), ({"decide": 3}, ValueError)]:
        with pytest.raises(exc):
            make_record(**{**bad, **change})


def test_nan_measured_fails_and_check_raises_even_for_a_control():
    for expect in ("holds", "fails"):
        r = _rec(claim="x", paper_ref="p", check="k4", label="m", measured=np.float64("nan"),
                        tolerance=1.0, comparator="abs<=", expect=expect, **P)
        assert r["verdict"] == "fails" and "NaN" in r["note"]
        with pytest.raises(AssertionError, match="NaN"):
            Record(r).check()


def test_record_check_messages():
    class Item:
        nodeid = "t.py::test"
        user_properties: list = []

    item = Item()
    rec = ClaimRecorder(item, "quick")
    ok = rec.record(claim="c", paper_ref="eq. 1", check="k5", label="err", measured=0.5, tolerance=1,
                    comparator="<=", **P)
    assert ok.check() is ok and ok.holds and rec.unchecked() == []
    bad = rec.record(claim="c", paper_ref="eq. 1", setting="a", check="k6", label="err", measured=2.0,
                     tolerance=1, comparator="<=", **P)
    with pytest.raises(AssertionError, match=r"c/k6/a \[eq. 1\]: err = 2 violates <= 1"):
        bad.check()
    ctl = rec.record(claim="c", paper_ref="eq. 1", check="k7", label="err", measured=0.5, tolerance=1,
                     comparator="<=", expect="fails", **P)
    with pytest.raises(AssertionError, match="negative control unexpectedly holds"):
        ctl.check()
    assert rec.record(claim="c", paper_ref="eq. 1", check="k8", label="err", measured=5, tolerance=1,
                      comparator="<=", expect="fails", **P).check().verdict == "fails"
    props = records_from_user_properties(item.user_properties)
    assert [p["order"] for p in props] == [0, 1, 2, 3]
    assert {p["test"] for p in props} == {"t.py::test"} and props[0]["profile"] == "quick"


# ------------------------------------------------------------------ intervals and verdicts

def test_t_interval_against_tables_and_scipy():
    """Student-t quantiles from printed tables (t_{0.975, 2} = 4.303, t_{0.975, 7} = 2.365)
    and scipy's own ``t.interval`` as an independent formula for the half-width."""
    from scipy import stats as st
    v = [0.0125, -0.0072, 0.0004]
    mean, lo, hi = stats.t_interval(v)
    sd = float(np.std(v, ddof=1))
    assert mean == pytest.approx(0.0019) and hi - mean == pytest.approx(4.303 * sd / 3 ** 0.5,
                                                                       rel=1e-4)
    assert (lo, hi) == pytest.approx(st.t.interval(0.95, 2, loc=mean, scale=sd / 3 ** 0.5),
                                     rel=1e-12)
    v8 = np.linspace(-1, 1, 8)
    m8, lo8, hi8 = stats.t_interval(v8)
    assert hi8 - m8 == pytest.approx(2.365 * np.std(v8, ddof=1) / 8 ** 0.5, rel=1e-3)
    assert stats.t_interval([2.0, 2.0]) == (2.0, 2.0, 2.0)
    assert stats.mc_interval(1.0, 0.5) == pytest.approx((1 - 0.98, 1 + 0.98), abs=1e-4)
    for bad in ([1.0], [], [1.0, math.nan]):
        with pytest.raises(ValueError):
            stats.t_interval(bad)
    with pytest.raises(ValueError):
        stats.mc_interval(1.0, -1.0)
    f = stats.seed_fields([1, 2, 3])
    assert f["measured"] == 2.0 and f["n_seeds"] == 3 and f["interval_kind"] == "t95-seeds"
    assert stats.mc_fields(1.0, 0.1)["interval_kind"] == "mc95"


def test_ratio_stderr_against_the_spread_of_repeated_samples():
    """The delta-method SE of mean(a) / mean(b) against the sd of the ratio over 4000
    independent repetitions of the sample (paired and correlated; independent), to 5 %."""
    rng = np.random.default_rng(seed_for("test", "ratio-stderr"))
    n, reps = 400, 4000
    z = rng.standard_normal((reps, n, 2))
    a = (1.0 + 0.8 * z[..., 0]) ** 2                  # squared errors, correlated with b
    b = (0.7 + 0.5 * z[..., 0] + 0.4 * z[..., 1]) ** 2
    spread = np.std(a.mean(1) / b.mean(1), ddof=1)
    se = np.median([stats.ratio_stderr(a[i], b[i]) for i in range(200)])
    assert se == pytest.approx(spread, rel=0.05)
    b2 = rng.exponential(2.0, size=(reps, n // 2))   # an independent sample of another size
    spread2 = np.std(a.mean(1) / b2.mean(1), ddof=1)
    se2 = np.median([stats.ratio_stderr(a[i], b2[i], paired=False) for i in range(200)])
    assert se2 == pytest.approx(spread2, rel=0.05)
    # pairing matters: the unpaired formula on paired data misses the correlation
    assert stats.ratio_stderr(a[0], b[0], paired=False) > 1.2 * stats.ratio_stderr(a[0], b[0])
    for bad in (([1.0], [1.0, 2.0]), ([1.0, 2.0], [0.0, 0.0]), ([1.0, 2.0, 3.0], [1.0, 2.0])):
        with pytest.raises(ValueError):
            stats.ratio_stderr(*bad)


def test_t_interval_covers_95_percent():
    """Coverage by simulation: 95 % of 3-seed intervals contain the true mean."""
    rng = np.random.default_rng(seed_for("test", "coverage"))
    x = rng.normal(0.3, 2.0, size=(20_000, 3))
    hits = sum(lo <= 0.3 <= hi for _, lo, hi in map(stats.t_interval, x))
    assert abs(hits / 20_000 - 0.95) < 4 * (0.95 * 0.05 / 20_000) ** 0.5


@pytest.mark.parametrize("lo, hi, cmp_, tol, verdict", [
    (0.2, 0.9, "<=", 1.0, "holds"), (0.2, 1.0, "<=", 1.0, "holds"),
    (0.2, 1.1, "<=", 1.0, "inconclusive"), (1.0, 1.2, "<=", 1.0, "inconclusive"),
    (1.01, 1.2, "<=", 1.0, "fails"), (0.2, 1.0, "<", 1.0, "inconclusive"),
    (1.0, 1.2, "<", 1.0, "fails"),
    (1.0, 2.0, ">=", 1.0, "holds"), (0.9, 2.0, ">=", 1.0, "inconclusive"),
    (0.1, 0.9, ">=", 1.0, "fails"), (1.0, 2.0, ">", 1.0, "inconclusive"),
    (0.1, 1.0, ">", 1.0, "fails"),
    (-1.0, 1.0, "abs<=", 1.0, "holds"), (-1.1, 0.5, "abs<=", 1.0, "inconclusive"),
    (0.5, 1.1, "abs<=", 1.0, "inconclusive"), (-3.0, 3.0, "abs<=", 1.0, "inconclusive"),
    (1.1, 3.0, "abs<=", 1.0, "fails"), (-3.0, -1.1, "abs<=", 1.0, "fails"),
])
def test_interval_verdicts(lo, hi, cmp_, tol, verdict):
    assert stats.interval_verdict(lo, hi, cmp_, tol) == verdict
    r = _rec(claim="c", paper_ref="p", check="k9", label="m", measured=(lo + hi) / 2,
                    interval=(lo, hi), tolerance=tol, comparator=cmp_, **P)
    assert r["verdict"] == verdict and r["interval"] == [lo, hi]
    assert (r["decide"] is not None) == (verdict == "inconclusive")
    # holds_at: the tightest tolerance at which the same interval holds
    at = r["holds_at"]
    assert at == {"<=": hi, "<": hi, ">=": lo, ">": lo, "abs<=": max(abs(lo), abs(hi))}[cmp_]
    if cmp_ in ("<=", ">=", "abs<="):
        assert stats.interval_verdict(lo, hi, cmp_, at) == "holds"


def test_holds_at_of_exact_checks():
    r = _rec(claim="c", paper_ref="p", check="k10", label="m", measured=-3e-13, tolerance=1e-12,
                    comparator="abs<=", **P)
    assert r["holds_at"] == 3e-13 and r["interval"] is None and r["interval_kind"] is None
    r = _rec(claim="c", paper_ref="p", check="k11", label="m", measured=4, tolerance=0,
                    comparator="==", tolerance_source="paper")
    assert r["holds_at"] is None and r["verdict"] == "fails"
    assert _rec(claim="c", paper_ref="p", check="k12", label="m", measured=0.3, tolerance=0.1,
                       comparator=">=", **P)["holds_at"] == 0.3


def test_seeds_to_decide_is_the_smallest_sufficient_n():
    from scipy import stats as st
    for mean, sd, cmp_, tol in [(0.0019, 0.0099, "abs<=", 0.01), (-0.0089, 0.0073, "abs<=", 0.01),
                                (0.0144, 0.0018, "<=", 0.01), (0.0064, 0.0049, "<=", 0.01)]:
        n = stats.seeds_to_decide(mean, sd, cmp_, tol)
        dist = stats.distance_to_decision(mean, cmp_, tol)
        half = lambda k: st.t.ppf(0.975, k - 1) * sd / k ** 0.5  # noqa: E731
        assert half(n) < dist and (n == 2 or half(n - 1) >= dist), (mean, sd, n)
    assert stats.seeds_to_decide(0.01, 0.001, "<=", 0.01) is None      # on the boundary
    assert stats.seeds_to_decide(0.0, 1.0, "abs<=", 1e-6) is None       # beyond MAX_SEEDS
    # the sd recovered from an interval is the one that built it
    v = [0.3, 0.1, 0.7, 0.2]
    _, lo, hi = stats.t_interval(v)
    assert stats.sd_from_t_interval(lo, hi, 4) == pytest.approx(np.std(v, ddof=1), rel=1e-12)


def test_decide_texts():
    r = _rec(claim="c", paper_ref="p", check="k13", label="m", **stats.seed_fields([0.0125, -0.0072, 0.0004]),
                    tolerance=0.01, comparator="abs<=", **P)
    assert r["verdict"] == "inconclusive"
    assert r["decide"].startswith("more seeds: the interval half-width is 0.02")
    assert "about 9 seeds would resolve it (towards holds" in r["decide"]
    r = _rec(claim="c", paper_ref="p", check="k14", label="m", **stats.mc_fields(1.1, 0.1),
                    tolerance=1.0, comparator="<=", **P)
    assert "about 3.8x the samples" in r["decide"] and "towards fails" in r["decide"]
    r = _rec(claim="c", paper_ref="p", check="k15", label="m", **stats.mc_fields(1.1, 0.1),
                    tolerance=1.0, comparator="<=", decide="ask someone", **P)
    assert r["decide"] == "ask someone"


def test_outcome_rules_of_interval_checks():
    """holds/inconclusive pass a positive check; a control passes only on fails."""
    def rec(interval, expect):
        lo, hi = interval
        return Record(_rec(claim="c", paper_ref="p", check="k16", label="m", measured=(lo + hi) / 2,
                                  interval=interval, n_seeds=3, tolerance=1.0,
                                  comparator="<=", expect=expect, **P))
    assert rec((0.1, 0.9), "holds").check().holds
    assert rec((0.5, 1.5), "holds").check().inconclusive
    with pytest.raises(AssertionError, match="violates"):
        rec((1.5, 2.5), "holds").check()
    assert rec((1.5, 2.5), "fails").check().verdict == "fails"
    with pytest.raises(AssertionError, match="negative control is inconclusive.*straddles"):
        rec((0.5, 1.5), "fails").check()
    with pytest.raises(AssertionError, match="negative control unexpectedly holds"):
        rec((0.1, 0.9), "fails").check()


def test_reported_rows():
    class Item:
        nodeid = "t.py::test_table"
        user_properties: list = []

    rec = ClaimRecorder(Item(), "quick")
    row = rec.record(claim="tables", paper_ref="Tab. 2", setting="a", check="k17", label="mse",
                     kind="reported", **stats.seed_fields([0.2, 0.25, 0.3]))
    assert rec.unchecked() == [] and row.check() is row
    d = row.data
    assert d["verdict"] == "reported" and d["expect"] is None and d["holds_at"] is None
    assert d["tolerance"] is None and d["comparator"] is None and d["tolerance_source"] is None
    s = report.summarize([dict(d, outcome="passed")])
    assert s["claims"]["tables"]["checks"] == 0 and s["claims"]["tables"]["reported"] == 1
    assert s["total"]["interval_checks"] == 0 and s["total"]["ok"]
    assert report.summary_lines(s)["tables"] == "tables: 0 checks, 1 reported row (no verdict)"
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
        r.update(outcome=outcome, test=f"t.py::test_{len(recs)}")
        recs.append(r)
    s = report.summarize(recs)
    t = s["total"]
    assert (t["checks"], t["hold"], t["inconclusive"], t["controls"], t["unexpected"],
            t["interval_checks"], t["expected_chance_disagreements"]) == (6, 2, 2, 1, 1, 3, 0.15)
    assert not t["ok"]
    lines = report.render_terminal(recs, s)
    assert any(l.startswith("interval checks: 3 with a 95% interval; about 0.15 (= 0.05 x 3)")
               for l in lines)
    inc = report.inconclusive_lines(recs)
    assert inc[0].startswith("inconclusive checks: 3 ") and "NEGATIVE CONTROL" in inc[-2]
    payload = report.report_payload(recs, None, "x", run={"hypothesis_draws": "derandomized"})
    assert payload["schema"] == report.SCHEMA == 5 and len(payload["summary"]["inconclusive"]) == 3
    assert payload["run"] == {"hypothesis_draws": "derandomized"}
    assert report.inconclusive_lines(recs[:1]) == ["inconclusive checks: none"]


def test_trained_ar1_passes_stale_before_only_under_retrain(monkeypatch):
    """claims/_ar1.py hands the --retrain start time to train_cached, and nothing else."""
    pytest.importorskip("torch")
    import models.cache
    from claims import _ar1

    calls = []
    monkeypatch.setattr(models.cache, "train_cached", lambda config, **kw: calls.append(kw))
    _ar1.trained_ar1("a", 0, QUICK)
    _ar1.trained_ar1("a", 0, dataclasses.replace(QUICK, run=runopts.RunOptions(retrain_before=1234.5)))
    assert calls == [{"device": "auto", "progress": False, "stale_before": None},
                     {"device": "auto", "progress": False, "stale_before": 1234.5}]


def test_to_builtin_torch_and_numbers():
    torch = pytest.importorskip("torch")
    from fractions import Fraction
    assert to_builtin(torch.tensor(1.5)) == 1.5
    assert to_builtin({"w": torch.ones(2, dtype=torch.float64)}) == {"w": [1.0, 1.0]}
    assert to_builtin(Fraction(1, 4)) == 0.25 and to_builtin(np.bool_(True)) is True
    with pytest.raises(TypeError):
        to_builtin({1, 2})


def test_format_value():
    assert [format_value(v) for v in (0.0, 1.23456e-7, 4.0, 12345678, math.nan, "x")] == \
        ["0", "1.235e-07", "4", "1.235e+07", "nan", "x"]


def test_seeds_are_stable_names_not_workers():
    assert seed_for("ar1-optimum", "a", 0) == seed_for("ar1-optimum", "a", 0)
    assert seed_for("ar1-optimum", "a", 0) != seed_for("ar1-optimum", "a", 1)
    assert seed_for("a", 1) == seed_for("a", "1")
    # pinned: sha256("gd-equivalence") first 8 bytes, big endian, top bit cleared
    assert seed_for("gd-equivalence") == int.from_bytes(
        __import__("hashlib").sha256(b"gd-equivalence").digest()[:8], "big") & (2**63 - 1)
    assert all(0 <= seed_for(i) < 2**63 for i in range(200))
    np.testing.assert_array_equal(rng_for("x", 1).random(3), rng_for("x", 1).random(3))
    with pytest.raises(ValueError):
        seed_for()


def test_profiles():
    assert get_profile("quick") is QUICK and get_profile("paper") is PAPER
    assert set(PROFILES) == {"quick", "paper"}
    assert PAPER.train_steps == 8000 and PAPER.train_batch == 3000
    assert QUICK.n_seeds == 3 and PAPER.n_seeds == 8        # the paper's 3; our 8, labelled
    assert "project's choice" in PAPER.description and "paper's 3" in QUICK.description
    assert "paper's tolerance" not in QUICK.description + PAPER.description
    assert QUICK.coef_rel_tol == PAPER.coef_rel_tol == 0.01
    assert (QUICK.stack_batch, PAPER.stack_batch) == (1000, 1500)    # ours: claims/_lds.py
    knobs = ("train_steps", "train_batch", "stack_batch", "n_seeds", "mc_trajectories", "mc_systems",
             "heldout_sequences", "hypothesis_examples", "multistart", "twins")
    for f in knobs:
        assert getattr(QUICK, f) <= getattr(PAPER, f), f
    # every knob is read by a claim: no advertised knob that nothing uses
    assert {f.name for f in dataclasses.fields(Profile)} == \
        {"name", "description", "coef_rel_tol", "run", *knobs}
    with pytest.raises(ValueError, match="unknown claims profile 'bogus'"):
        get_profile("bogus")
    with pytest.raises(ValueError):
        dataclasses.replace(QUICK, n_seeds=0)
    with pytest.raises(ValueError):
        dataclasses.replace(QUICK, multistart=True)
    with pytest.raises(ValueError):
        dataclasses.replace(QUICK, coef_rel_tol=2.0)
    assert dataclasses.replace(QUICK, multistart=2).multistart == 2
    with pytest.raises(Exception):  # frozen
        QUICK.n_seeds = 5  # type: ignore[misc]
    assert json.dumps(PAPER.as_dict())
    assert PAPER.as_dict() == {k: v for k, v in dataclasses.asdict(PAPER).items() if k != "run"}


@pytest.mark.parametrize("ci", [None, "1"])
def test_claim_settings_always_derandomised(monkeypatch, ci):
    """Claims draw the same examples whether or not CI is set; --claims-random opts out."""
    if ci is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", ci)
    s = claim_settings(PAPER)
    assert s.max_examples == 200 and s.deadline is None and s.derandomize is True
    assert s.database is None
    random = dataclasses.replace(QUICK, run=runopts.RunOptions(random_draws=True))
    assert claim_settings(random).derandomize is False
    assert random == QUICK and hash(random) == hash(QUICK)   # run options: not the identity
    assert "run" not in random.as_dict()
    assert claim_settings(QUICK).derandomize is True
    with pytest.raises(TypeError):
        claim_settings()   # the profile is always passed in


def test_write_reports_atomic_and_strict_json(tmp_path):
    recs = [_rec(claim="b", paper_ref="p", check="k20", label="m|n", measured=math.nan,
                        tolerance=1, comparator="<=", **P),
            _rec(claim="a", paper_ref="p", check="k21", label="m", measured=math.inf,
                        tolerance=1, comparator=">=", **P)]
    for i, r in enumerate(recs):
        r.update(test=f"t::{i}", order=0, outcome="passed")
    j, m = report.write_reports(recs, tmp_path / "out", QUICK.as_dict())
    data = json.loads(j.read_text(), parse_constant=lambda c: pytest.fail(f"non-JSON {c}"))
    assert [r["claim"] for r in data["records"]] == ["a", "b"]
    assert data["records"][0]["measured"] == "Infinity" and data["records"][1]["measured"] == "NaN"
    assert "m\\|n" in m.read_text()
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["claims.json", "claims.md", "index.html"]


def test_summary_line_wording():
    recs = []
    for verdict_holds, expect, outcome in [(True, "holds", "passed")] * 7 + \
            [(False, "fails", "passed")] * 2 + [(False, "holds", "xfailed")]:
        r = _rec(claim="ar1-optimum", paper_ref="p", check="k22", label="m",
                        measured=0.0 if verdict_holds else 2.0, tolerance=1.0,
                        comparator="<=", expect=expect, **P)
        r["outcome"] = outcome
        recs.append(r)
    lines = report.summary_lines(report.summarize(recs))
    assert lines["ar1-optimum"] == ("ar1-optimum: 10 checks, 7 hold, 2 negative controls "
                                    "fail as expected, 1 not reproduced (xfail)")
    assert lines["total"].endswith("all as expected")


# ------------------------------------------------------------------------------ plugin

DEMO = '''
import numpy as np
import pytest

from claims.seeds import seed_for


def test_holds(claim):
    claim.record(claim="alpha", paper_ref="Thm 1", setting="a", check="k23", label="|err|",
                 measured=np.float64(0.5), tolerance=1.0, comparator="<=", tolerance_source="project",
                 details={"arr": np.arange(3), "seed": np.int64(seed_for("alpha"))}).check()


def test_control(claim):
    claim.record(claim="alpha", paper_ref="Thm 1", setting="asym", check="k24", label="|err|",
                 measured=3.0, tolerance=1.0, comparator="<=", tolerance_source="project", expect="fails").check()


def test_unexpected(claim):
    claim.record(claim="beta", paper_ref="eq. 2", setting="b", check="k25", label="gap",
                 measured=2.0, tolerance=1.0, comparator="<=", tolerance_source="project").check()


@pytest.mark.xfail(strict=True, reason="paper's 0.93 does not reproduce")
def test_known(claim):
    claim.record(claim="beta", paper_ref="Tab. 1", setting="c", check="k26", label="r2",
                 measured=0.5, tolerance=0.9, comparator=">=", tolerance_source="project").check()


def test_nan(claim):
    rec = claim.record(claim="beta", paper_ref="eq. 3", check="k27", label="nan metric",
                       measured=float("nan"), tolerance=1.0, comparator="abs<=", tolerance_source="project")
    assert rec.verdict == "fails"
    with pytest.raises(AssertionError, match="NaN"):
        rec.check()


def test_unchecked(claim):
    claim.record(claim="gamma", paper_ref="eq. 4", check="k28", label="m", measured=1, tolerance=1,
                 comparator="==", tolerance_source="project")


@pytest.mark.xfail(strict=True, reason="thought not to reproduce")
def test_xpass(claim):
    claim.record(claim="delta", paper_ref="eq. 5", check="k29", label="m", measured=0.0, tolerance=1.0,
                 comparator="<=", tolerance_source="project").check()


@pytest.mark.xfail(False, reason="condition false: not an xfail", strict=True)
def test_cond_xfail(claim):
    claim.record(claim="delta", paper_ref="eq. 5", check="k30", label="m", measured=0.0, tolerance=1.0,
                 comparator="<=", tolerance_source="project").check()


@pytest.mark.xfail(1 + 1 == 2, reason="condition true", strict=True)
@pytest.mark.xfail(False, reason="condition false", strict=True)   # evaluated first
def test_cond_xpass(claim):
    claim.record(claim="delta", paper_ref="eq. 5", check="k31", label="m", measured=0.0, tolerance=1.0,
                 comparator="<=", tolerance_source="project").check()


@pytest.mark.xfail("1 + 1 == 2", strict=True)
def test_str_cond_xpass(claim):
    claim.record(claim="delta", paper_ref="eq. 5", check="k32", label="m", measured=0.0, tolerance=1.0,
                 comparator="<=", tolerance_source="project").check()


@pytest.mark.xfail(raises=ValueError, strict=True, reason="only a ValueError is expected")
def test_other_error(claim):
    claim.record(claim="delta", paper_ref="eq. 5", check="k33", label="m", measured=0.0, tolerance=1.0,
                 comparator="<=", tolerance_source="project").check()
    raise TypeError("not the expected error")


def test_plain(profile):
    assert profile.name in ("quick", "paper")


def test_inconclusive(claim):
    from claims.stats import seed_fields
    rec = claim.record(claim="epsilon", paper_ref="eq. 6", setting="a", check="k34", label="signed err",
                       **seed_fields([0.002, 0.012, -0.008]), tolerance=0.01,
                       comparator="abs<=", tolerance_source="project")
    assert rec.inconclusive
    rec.check()


def test_control_inconclusive(claim):
    claim.record(claim="epsilon", paper_ref="eq. 6", setting="asym", check="k35", label="gap",
                 measured=0.012, interval=(0.008, 0.016), tolerance=0.01, comparator="<=",
                 tolerance_source="project", expect="fails").check()


def test_reported(claim):
    claim.record(claim="epsilon", paper_ref="Tab. 2", setting="a", check="k36", label="mse",
                 kind="reported", measured=0.25, interval=(0.2, 0.3), n_seeds=3)


@pytest.mark.xfail(strict=True, reason="listed although its interval contains 1 %")
def test_xfail_inconclusive(claim):
    claim.record(claim="epsilon", paper_ref="eq. 6", setting="d", check="k37", label="odd share",
                 measured=0.0144, interval=(0.0098, 0.0189), n_seeds=3, tolerance=0.01,
                 comparator="<=", tolerance_source="project").check()
'''

EXPECTED = {  # test name -> outcome of its records
    "test_holds": "passed", "test_control": "passed", "test_unexpected": "failed",
    "test_known": "xfailed", "test_nan": "passed", "test_unchecked": "error",
    "test_xpass": "failed", "test_cond_xfail": "passed", "test_cond_xpass": "failed",
    "test_str_cond_xpass": "failed", "test_other_error": "failed",
    "test_inconclusive": "passed", "test_control_inconclusive": "failed",
    "test_reported": "passed", "test_xfail_inconclusive": "failed",
}


@pytest.fixture
def project(pytester, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [str(REPO)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    pytester.makeini("[pytest]\naddopts = --strict-markers -p no:cacheprovider\n"
                     "xfail_strict = true\nfilterwarnings =\n    error\n")
    pytester.makeconftest('pytest_plugins = ["claims.plugin"]\n')  # as the root conftest.py
    pytester.makepyfile(test_demo=DEMO)
    return pytester


def _load(path: Path) -> dict:
    data = json.loads(path.read_text(encoding="utf-8"))
    for r in data["records"]:
        r["test"] = r["test"].split("::")[-1]
    return data


def _check_report(result, pytester, profile="quick"):
    # test_unchecked passes its call phase and errors at teardown
    result.assert_outcomes(passed=8, failed=7, xfailed=1, errors=1)
    out = result.stdout.str()
    assert f"claims (profile {profile})" in out
    result.stdout.fnmatch_lines([
        "check_id*paper ref*where*label*measured*95% interval*basis*holds at*criterion*"
        "tol. by*verdict*expected*outcome",
        "alpha/k24/asym/control*Thm 1*asym*|err|*3*-*exact*3*<= 1*project*fails*fails*passed",
        "alpha/k23/a*Thm 1*a*|err|*0.5*-*exact*0.5*<= 1*project*holds*holds*passed",
        "*alpha: 2 checks, 1 holds, 1 negative control fails as expected",
        "beta/k26/c*Tab. 1*c*r2*0.5*>= 0.9*fails*holds*xfailed",
        "*beta: 3 checks, 1 not reproduced (xfail), 2 UNEXPECTED verdict, 1 in FAILING tests",
        "*xfail beta/k26/c: paper's 0.93 does not reproduce",
        "*note  beta/k27: measured is NaN*",
        "*delta: 5 checks, 5 hold, 4 in FAILING tests",
        "*note  delta/k29: XPASS(strict)*",
        "epsilon/k35/asym/control*eq. 6*asym*gap*0.012*[[]0.008, 0.016]*MC 1.96 SE*0.016*<= 0.01*project*"
        "inconclusive*fails*failed",
        "epsilon/k34/a*eq. 6*a*signed err*0.002*[[]-0.0228*, 0.0268*]*t, 3 seeds*0.0268*abs<= 0.01*"
        "project*inconclusive*holds*passed",
        "epsilon/k36/a*Tab. 2*a*mse*0.25*[[]0.2, 0.3]*t, 3 seeds*-*-*-*reported*-*passed",
        "*epsilon: 3 checks, 2 inconclusive, 1 UNEXPECTED verdict, 2 in FAILING tests, "
        "1 reported row (no verdict)",
        "*note  epsilon/k37/d: XPASS(strict)*",
        "*gamma: 1 check, 1 holds, 1 in FAILING tests",
        "interval checks: 2 with a 95% interval; about 0.1 (= 0.05 x 2) expected*",
        "inconclusive checks: 3 (2 positive, passing; 1 negative control(s), failing their "
        "test)*",
        "  - epsilon/k35/asym/control NEGATIVE CONTROL: gap: 0.012, interval "
        "[[]0.008, 0.016] (MC 1.96 SE) against <= 0.01",
        "      more Monte Carlo samples: the interval half-width is 0.004 against a "
        "tolerance of 0.01; * about 4x the samples would resolve it (towards fails)*",
        "  - epsilon/k34/a: signed err: 0.002, interval *",
        "      more seeds: *about * seeds would resolve it (towards holds, if the mean stays;"
        " n = 3 now)",
        "5 claims, 14 checks*NEEDS ATTENTION",
    ])
    data = _load(pytester.path / "reports" / "claims.json")
    assert {"records", "profile", "generated", "summary"} <= set(data)
    assert data["profile"]["name"] == profile
    recs = data["records"]
    assert all(RECORD_KEYS <= set(r) for r in recs)
    assert {r["test"]: r["outcome"] for r in recs} == EXPECTED
    assert [(r["claim"], r["test"]) for r in recs] == sorted((r["claim"], r["test"]) for r in recs)
    by = {r["test"]: r for r in recs}
    assert by["test_holds"]["measured"] == 0.5 and by["test_holds"]["details"] == {
        "arr": [0, 1, 2], "seed": seed_for("alpha")}
    assert by["test_known"]["verdict"] == "fails"
    assert by["test_known"]["xfail_reason"] == "paper's 0.93 does not reproduce"
    assert by["test_nan"]["measured"] == "NaN" and by["test_nan"]["verdict"] == "fails"
    assert by["test_xpass"]["xfail_reason"] == "thought not to reproduce"
    assert "XPASS(strict)" in by["test_xpass"]["note"]
    assert by["test_cond_xfail"]["xfail_reason"] is None
    assert by["test_cond_xpass"]["xfail_reason"] == "condition true"
    assert by["test_str_cond_xpass"]["xfail_reason"] == "condition: 1 + 1 == 2"
    for name in ("test_cond_xpass", "test_str_cond_xpass"):
        assert "XPASS(strict)" in by[name]["note"]
    assert by["test_other_error"]["xfail_reason"] is None
    assert by["test_other_error"]["note"] is None
    assert by["test_holds"]["xfail_reason"] is None and by["test_holds"]["note"] is None
    assert all(r["profile"] == profile for r in recs)
    assert data["summary"]["claims"]["alpha"]["ok"] is True
    assert data["summary"]["total"]["ok"] is False
    md = (pytester.path / "reports" / "claims.md").read_text(encoding="utf-8")
    assert "## alpha" in md and "\\|err\\|" in md and "paper's 0.93 does not reproduce" in md
    assert "## Inconclusive checks" in md and "NEGATIVE CONTROL: fails its test" in md
    assert "interval checks: 2 with a 95% interval" in md
    assert by["test_reported"]["verdict"] == "reported" and by["test_reported"]["expect"] is None
    assert by["test_reported"]["holds_at"] is None and by["test_reported"]["tolerance"] is None
    assert by["test_inconclusive"]["interval_kind"] == "t95-seeds"
    assert by["test_inconclusive"]["n_seeds"] == 3 and by["test_inconclusive"]["decide"]
    assert by["test_control_inconclusive"]["interval_kind"] == "mc95"
    assert by["test_xfail_inconclusive"]["verdict"] == "inconclusive"
    assert "XPASS(strict)" in by["test_xfail_inconclusive"]["note"]
    summ = data["summary"]
    assert summ["intervals"]["checks"] == 2 and summ["intervals"]["level"] == 0.95
    assert summ["intervals"]["expected_chance_disagreements"] == 0.1
    assert sorted(r["test"].split("::")[-1] for r in summ["inconclusive"]) == [
        "test_control_inconclusive", "test_inconclusive", "test_xfail_inconclusive"]
    assert all(r["decide"] for r in summ["inconclusive"])
    assert summ["claims"]["epsilon"]["reported"] == 1 and summ["total"]["inconclusive"] == 2
    assert data["run"] == {"hypothesis_draws": "derandomized", "retrain": False}
    return data


def test_plugin_serial_and_xdist_agree(project):
    serial = _check_report(project.runpytest(), project)
    parallel = _check_report(project.runpytest("-n", "2"), project)
    assert serial["records"] == parallel["records"]
    assert serial["summary"] == parallel["summary"]


def test_plugin_options(project):
    result = project.runpytest("--profile", "paper", "--claims-report", "out/claims")
    out = result.stdout.str()
    assert "claims profile: paper" in out
    _check_report_dir = project.path / "out" / "claims"
    assert sorted(p.name for p in _check_report_dir.iterdir()) == ["claims.json", "claims.md", "figures", "index.html"]
    assert not (project.path / "reports").exists()
    data = _load(_check_report_dir / "claims.json")
    assert data["profile"]["name"] == "paper"
    assert {r["profile"] for r in data["records"]} == {"paper"}

    bogus = project.runpytest("--profile", "bogus")
    assert bogus.ret == pytest.ExitCode.USAGE_ERROR
    assert "--profile" in bogus.stderr.str() and "bogus" in bogus.stderr.str()


RUNOPTS_DEMO = """
import pytest

from claims.seeds import claim_settings


@pytest.mark.parametrize("i", range(4))
def test_opts(claim, profile, i):
    o = profile.run
    claim.record(claim="opts", paper_ref="-", check="k38", label=f"retrain_before {i}", kind="reported",
                 measured=-1.0 if o.retrain_before is None else o.retrain_before,
                 details={"derandomize": claim_settings(profile).derandomize})
"""


@pytest.fixture
def opts_project(pytester, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [str(REPO)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    pytester.makeini("[pytest]\naddopts = -p no:cacheprovider\n")
    pytester.makeconftest('pytest_plugins = ["claims.plugin"]\n')
    pytester.makepyfile(test_opts=RUNOPTS_DEMO)
    return pytester


def _opts(pytester, *args):
    result = pytester.runpytest(*args)
    result.assert_outcomes(passed=4)
    data = json.loads((pytester.path / "reports" / "claims.json").read_text())
    return data, result.stdout.str()


def test_claims_random_option(opts_project):
    data, _ = _opts(opts_project, "-n", "2")
    assert {r["details"]["derandomize"] for r in data["records"]} == {True}
    assert data["run"] == {"hypothesis_draws": "derandomized", "retrain": False}
    data, out = _opts(opts_project, "-n", "2", "--claims-random")
    assert {r["details"]["derandomize"] for r in data["records"]} == {False}
    assert data["run"]["hypothesis_draws"] == "random" and "hypothesis_draws = random" in out


def test_retrain_option_hands_the_start_time_to_every_worker(opts_project):
    import time

    t0 = time.time()
    data, _ = _opts(opts_project, "-n", "2", "--retrain")
    t1 = time.time()
    stamps = {r["measured"] for r in data["records"]}
    assert len(stamps) == 1 and t0 <= stamps.pop() <= t1          # one session time, all workers
    assert {r["details"]["derandomize"] for r in data["records"]} == {True}
    assert data["run"] == {"hypothesis_draws": "derandomized", "retrain": True}
    data, _ = _opts(opts_project)                                  # without it: no time at all
    assert {r["measured"] for r in data["records"]} == {-1.0}


def test_plugin_silent_without_records(pytester):
    pytester.makepyfile("def test_a(profile):\n    assert profile.name == 'paper'\n")
    result = pytester.runpytest("-p", "claims.plugin", "--profile", "paper")
    result.assert_outcomes(passed=1)
    assert "claims (profile" not in result.stdout.str()
    assert not (pytester.path / "reports").exists()


KNOWN_DEMO = """
import pytest
from claims.known import known_params

KNOWN = {"b": "fails everywhere", ("c", 2): {"paper": "fails with 8 seeds"}}

@pytest.mark.parametrize("setting", known_params(KNOWN, ["a", "b"]))
def test_one(setting):
    assert setting == "a"

@pytest.mark.parametrize("setting, s", known_params(KNOWN, [("c", 1), ("c", 2)]))
def test_two(setting, s):
    assert s == 1
"""


@pytest.mark.parametrize("profile, outcomes", [("quick", dict(passed=2, xfailed=1, failed=1)),
                                               ("paper", dict(passed=2, xfailed=2))])
def test_known_params_marks_per_profile(pytester, profile, outcomes):
    """A reason string xfails in every profile; a {profile: reason} mapping only in that
    profile, read from --profile when pytest evaluates the mark (strict: no XPASS)."""
    pytester.makepyfile(test_known=KNOWN_DEMO)
    result = pytester.runpytest("-p", "claims.plugin", "-p", "no:cacheprovider", "-o", "xfail_strict=true",
                                "--profile", profile)
    result.assert_outcomes(**outcomes)
    if profile == "paper":
        result.stdout.no_fnmatch_line("*XPASS*")


@pytest.mark.parametrize("args", [["--profile", "paper", "claims"],
                                  ["claims", "--profile", "paper"]],
                         ids=["option-first", "path-first"])
def test_profile_option_from_the_repository_root(args, tmp_path):
    """The root conftest.py loads the plugin early enough for ``--profile`` anywhere."""
    proc = run_bounded(
        [sys.executable, "-m", "pytest", *args, "--collect-only", "-q", "-p", "no:cacheprovider",
         "--claims-report", str(tmp_path / "reports")],
        cwd=REPO, env=clean_env(REPO), timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "test_training_run" in proc.stdout
    assert not (tmp_path / "reports").exists()     # nothing recorded, no report

