"""Verdicts by run (claims/harness/shares.py) against independent oracles: the Clopper-Pearson
interval from the beta distribution's quantiles, the issue's synthetic cases, and the
record that carries the rule (claims/harness/records.py, ``per_run=True``, ``bounds``)."""
from __future__ import annotations

import math

import pytest
from hypothesis import example, given, strategies as st
from scipy import stats as st_

from claims.harness.records import make_record
from claims.harness.runs import ar1_run, ars_run
from claims.harness.shares import (TARGET_SHARE, decide_text, judge_runs, run_verdict, runs_to_decide, share_interval,
                           share_verdict)
from claims.harness.stats import t_interval

P = {"tolerance_source": "project"}


def _cp(k: int, n: int) -> tuple[float, float]:
    """Clopper-Pearson 95 % from the beta quantiles (an independent route to scipy's binomtest)."""
    lo = 0.0 if k == 0 else st_.beta.ppf(0.025, k, n - k + 1)
    hi = 1.0 if k == n else st_.beta.ppf(0.975, k + 1, n - k)
    return float(lo), float(hi)


@given(n=st.integers(1, 40), data=st.data())
def test_share_interval_is_clopper_pearson_of_the_held_and_the_not_failed(n, data):
    k = data.draw(st.integers(0, n))
    u = data.draw(st.integers(0, n - k))
    lo, hi = share_interval(k, u, n)
    assert math.isclose(lo, _cp(k, n)[0], abs_tol=1e-9) and math.isclose(hi, _cp(k + u, n)[1], abs_tol=1e-9)
    assert 0.0 <= lo <= k / n <= hi <= 1.0


@given(n=st.integers(1, 40), data=st.data())
@example(n=8, data=None)
def test_the_verdict_reads_the_interval_against_the_target(n, data):
    if data is None:                       # the paper profile's n: only 8 of 8 holds, only 0 of 8 fails
        assert [share_verdict(k, 0, 8).verdict for k in range(9)] == (
            ["fails"] + ["mixed"] * 7 + ["holds"])
        return
    k = data.draw(st.integers(0, n))
    u = data.draw(st.integers(0, n - k))
    v = share_verdict(k, u, n)
    lo, hi = _cp(k, n)[0], _cp(k + u, n)[1]
    expected = ("holds" if lo >= TARGET_SHARE else "fails" if hi < TARGET_SHARE
                else "mixed" if k and n - k - u else "inconclusive")
    assert v.verdict == expected and (v.held, v.undecided, v.failed) == (k, u, n - k - u)


def test_the_paper_profiles_odd_share_b_s3_fails():
    """All 8 runs above 1 % (0.0176 to 0.256), two headed for another point: the pooled rule
    read its two-run basin inconclusive ([-0.098, 0.153] straddles 0.01); by run it fails,
    and so does its larger basin; the two-run basin alone cannot decide (0 of 2: CP_hi 0.84)."""
    values = [0.031, 0.064, 0.12, 0.2, 0.256, 0.043, 0.0176, 0.0374]
    j = judge_runs(values, "<=", 0.01, labels=["optimum"] * 6 + ["b-odd +4.83 %"] * 2)
    assert j.verdict == "fails" and j.held == 0 and j.interval[1] < TARGET_SHARE
    assert [(b.basin, b.verdict) for b in j.basins] == [("optimum", "fails"), ("b-odd +4.83 %", "inconclusive")]
    assert t_interval(values[6:])[1] < 0.01 < t_interval(values[6:])[2]      # what the pooled rule saw


def test_eight_exact_coefficients_within_one_percent_hold_three_are_undecided():
    eight = judge_runs([0.004, -0.006, 0.0012, 0.0099, -0.0031, 0.0, 0.007, -0.0089], "abs<=", 0.01)
    assert eight.verdict == "holds" and eight.held == 8
    assert [round(x, 3) for x in eight.interval] == [0.631, 1.0]
    three = judge_runs([0.004, -0.006, 0.0012], "abs<=", 0.01)
    assert three.verdict == "inconclusive" and three.held == 3
    assert runs_to_decide(3, 0, 3) == 6 and "about 6 would" in decide_text(three)


@given(v=st.floats(-1, 1), se=st.floats(0, 0.1), tol=st.floats(0.001, 0.5))
@example(v=0.009, se=0.001, tol=0.01)
def test_a_run_with_a_standard_error_is_judged_on_value_pm_1_96_se(v, se, tol):
    r = run_verdict(v, "abs<=", tol, se)
    lo, hi = v - 1.959963984540054 * se, v + 1.959963984540054 * se
    inside, outside = -tol <= lo and hi <= tol, lo > tol or hi < -tol
    assert r.verdict == ("holds" if inside else "fails" if outside else "undecided")


def test_a_shared_error_joins_the_runs_own_in_quadrature():
    r = run_verdict(0.0, "abs<=", 1.0, 0.3, shared_stderr=0.4)
    assert math.isclose(r.interval[1], 1.959963984540054 * 0.5)


@pytest.mark.parametrize("values, verdict", [([0.2, 0.3, 0.4], "fails"), ([0.2, 0.3, 0.005], "mixed"),
                                             ([0.2] * 8, "fails")])
def test_a_negative_control_fails_only_when_every_run_fails(values, verdict):
    assert judge_runs(values, "<=", 0.01, rule="control").verdict == verdict


def test_an_undecided_run_keeps_a_control_from_failing():
    assert judge_runs([0.2, 0.3, 0.0105], "<=", 0.01, [None, None, 0.001], rule="control").verdict == "inconclusive"


def test_a_record_judged_by_run_carries_the_share_and_the_per_run_criterion():
    runs = [ars_run("b", 3, i) for i in range(8)]
    r = make_record(claim="banding", check="trained-odd-share", setting="b", s=3, label="x", paper_ref="Lemma 4.1",
                    runs=runs, run_values=[0.0176, 0.031, 0.064, 0.12, 0.2, 0.256, 0.0277, 0.0253], per_run=True,
                    tolerance=0.01, comparator="<=", **P)
    assert (r.verdict, r.measured, r.comparator, r.tolerance, r.interval_kind) == (
        "fails", 0.0, ">=", TARGET_SHARE, "clopper-pearson95")
    assert r.per_run["comparator"] == "<=" and r.per_run["tolerance"] == 0.01 and r.per_run["failed"] == 8
    assert r.per_run["every_run_holds_at"] == 0.256
    assert all(e.extra["verdict"] == "fails" for e in r.runs)
    assert r.interval[0] == 0.0 and r.interval[1] < 0.5


def test_a_record_judged_by_run_refuses_a_mean():
    with pytest.raises(ValueError, match="judged by run"):
        make_record(claim="demo", check="c", label="x", paper_ref="p", runs=[ar1_run("a", i) for i in range(3)],
                    run_values=[0.0] * 3, measured=0.0, per_run=True, tolerance=0.01, comparator="abs<=", **P)


def test_an_interval_outside_the_quantitys_range_is_clipped_and_marked():
    r = make_record(claim="demo", check="share", label="x", paper_ref="p", kind="reported",
                    measured=0.02, interval=(-0.144, 0.18), n_seeds=3, bounds=(0.0, 1.0))
    assert r.interval == [0.0, 0.18] and r.clipped is True
    r = make_record(claim="demo", check="share", label="x", paper_ref="p", kind="reported",
                    measured=0.02, interval=(0.01, 0.18), n_seeds=3, bounds=(0.0, 1.0))
    assert r.interval == [0.01, 0.18] and r.clipped is False
