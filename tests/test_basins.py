"""claims.harness.basins: verdicts by basin (docs/settings.md, "Verdicts by basin").

Oracles: the seed rule itself (claims.harness.stats.t_interval + interval_verdict) for runs in one
basin, the exact binomial interval of scipy, and hand-worked cases -- the three synthetic
cases of the basins issue.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from claims.harness.basins import basin_verdicts, clopper_pearson, judge_by_basin
from claims.harness.stats import interval_verdict, t_interval

PCG_B = [-0.10, -0.11, -0.12, -0.13, -0.14, -0.12, -0.11, -1.42]   # the pcg b case (cos_1 - 0.93)


def test_one_run_elsewhere_no_longer_hides_a_clear_failure():
    """All eight runs pooled: inconclusive; by basin (seven at one point, one at another):
    both basins fail, so the check fails."""
    _, lo, hi = t_interval(PCG_B)
    assert interval_verdict(lo, hi, "abs<=", 0.01) == "inconclusive"
    out = judge_by_basin(PCG_B, ["p"] * 7 + ["q"], "abs<=", 0.01)
    assert out["verdict"] == "fails"
    assert [b["verdict"] for b in out["basins"]] == ["fails", "fails"]
    assert out["basins"][1]["interval"] is None                     # one run, no own error: exact


@settings(max_examples=60, deadline=None)
@given(values=st.lists(st.floats(-5, 5), min_size=2, max_size=12),
       comparator=st.sampled_from(["<=", "<", ">=", ">", "abs<="]), tol=st.floats(0, 3))
def test_one_basin_is_judged_exactly_as_the_seed_rule(values, comparator, tol):
    _, lo, hi = t_interval(values)
    out = judge_by_basin(values, ["x"] * len(values), comparator, tol)
    expected = interval_verdict(lo, hi, comparator, tol)
    assert out["verdict"] == expected
    assert out["basins"][0]["interval"] == pytest.approx((lo, hi), abs=0, rel=0)


def test_a_single_run_basin_is_judged_by_its_own_held_out_error():
    """Six runs holding at one point, one run at another judged by its held-out standard
    error: straddling the tolerance -> inconclusive; clearly past it -> fails, and the check
    is mixed with the share of runs in holding basins (6 of 7, Clopper-Pearson)."""
    values = [0.01, 0.012, 0.011, 0.009, 0.01, 0.013, 0.06]
    basins = ["opt"] * 6 + ["saddle"]
    straddle = judge_by_basin(values, basins, "<=", 0.05, stderr=[None] * 6 + [0.02])
    assert [b["verdict"] for b in straddle["basins"]] == ["holds", "inconclusive"]
    assert straddle["verdict"] == "inconclusive"
    clear = judge_by_basin(values, basins, "<=", 0.05, stderr=[None] * 6 + [0.002])
    assert clear["basins"][1]["interval_kind"] == "mc95"
    assert clear["verdict"] == "mixed"
    assert clear["holding_share"] == pytest.approx(6 / 7)
    lo, hi = clear["holding_share_interval"]
    assert lo < 6 / 7 < hi and hi < 1


def test_every_basin_holding_holds_and_none_holding_with_undecided_is_inconclusive():
    assert judge_by_basin([0.1, 0.1, 0.2], ["a", "a", "b"], "<=", 1)["verdict"] == "holds"
    out = judge_by_basin([5.0, 5.1, 0.9], ["a", "a", "b"], "<=", 1, stderr=[None, None, 0.5])
    assert [b["verdict"] for b in out["basins"]] == ["fails", "inconclusive"]
    assert out["verdict"] == "inconclusive" and "holding_share" not in out


def test_clopper_pearson_against_the_beta_quantiles():
    from scipy.stats import beta
    for k, n in ((0, 8), (3, 8), (8, 8), (17, 64)):
        lo, hi = clopper_pearson(k, n)
        assert lo == pytest.approx(0.0 if k == 0 else beta.ppf(0.025, k, n - k + 1), abs=1e-12)
        assert hi == pytest.approx(1.0 if k == n else beta.ppf(0.975, k + 1, n - k), abs=1e-12)


def test_bad_input():
    with pytest.raises(ValueError, match="values and basins must be non-empty"):
        basin_verdicts([1.0, 2.0], ["a"], "<=", 1)
    with pytest.raises(ValueError, match="stderr must have one entry per run"):
        basin_verdicts([1.0, 2.0], ["a", "b"], "<=", 1, stderr=[0.1])
    with pytest.raises(ValueError, match="k and n must be integers"):
        clopper_pearson(3, 2)
    assert np.isfinite(basin_verdicts([1.0], ["a"], "<=", 2)[0]["measured"])


# ---------------------------------------------------------------------------- records judged by basin

from claims.harness.basins import BasinSplit, headline_basin, record_fields  # noqa: E402
from claims.harness.identity import RunRef  # noqa: E402
from claims.harness.records import Record, make_record  # noqa: E402
from claims.harness.stats import AFFORDABLE_SEEDS, widen_for_reference, seed_fields  # noqa: E402

RUNS = [RunRef(f"ars/a/s=2/seed={i}", i) for i in range(8)]
CHECK = dict(claim="demo", check="odd-share", label="odd share", paper_ref="Lemma 4.1", setting="a", s=2,
             tolerance=0.01, comparator="<=", tolerance_source="project")


def test_a_record_judged_by_basin_headlines_its_largest_basin_and_keeps_every_basin():
    values = [0.157, 0.004, 0.158, 0.005, 0.003, 0.156, 0.158, 0.157]
    labels = ["out", "in", "out", "in", "in", "out", "out", "out"]
    rec = make_record(**CHECK, runs=RUNS, run_values=values, basins=BasinSplit(labels, ("in", "out")))
    assert rec.verdict == "mixed" and Record(rec.to_dict()).check().verdict == "mixed"   # passes
    assert rec.basins["headline"] == "out" and rec.n_seeds == 5 and rec.values is None
    _, lo, hi = t_interval([v for v, b in zip(values, labels) if b == "out"])
    assert rec.interval == pytest.approx([lo, hi]) and rec.measured == pytest.approx(np.mean([values[i] for i in (0, 2, 5, 6, 7)]))
    assert [b["basin"] for b in rec.basins["verdicts"]] == ["in", "out"]                 # lowest point first
    assert rec.basins["verdicts"][0]["runs"] == [RUNS[i].run for i in (1, 3, 4)]
    assert rec.basins["all_runs_mean"] == pytest.approx(np.mean(values))
    assert rec.basins["holding_share"] == pytest.approx(3 / 8)
    assert [e.extra["basin"] for e in rec.runs] == labels and [e.value for e in rec.runs] == values
    assert rec.label == "odd share"                          # not a basin's name
    assert "seeds will not decide it" in rec.decide and "3 of 8" in rec.decide
    control = make_record(**CHECK, runs=RUNS, run_values=values, basins=BasinSplit(labels, ("in", "out")),
                          expect="fails")
    with pytest.raises(AssertionError, match="negative control is mixed"):
        Record(control.to_dict()).check()


def test_one_basin_reads_exactly_as_the_seed_rule_with_a_shared_error():
    values = [1.40, 1.38, 1.41]
    rec = make_record(**{**CHECK, "tolerance": 1.05}, runs=RUNS[:3], run_values=values,
                      basins=BasinSplit(["p"] * 3, ("p",), {"p": 0.004}))
    ref = widen_for_reference(seed_fields(values), 0.004)
    assert rec.interval == pytest.approx(list(ref["interval"]), rel=1e-12) and rec.values == values
    assert rec.verdict == "fails" and rec.n_seeds == 3 and rec.interval_kind == "t95-seeds"


def test_headline_ties_go_to_the_lower_point_and_bad_splits_are_refused():
    per = [{"basin": "b", "runs": [0, 1]}, {"basin": "a", "runs": [2, 3]}]
    assert headline_basin(per, ("a", "b"))["basin"] == "a"
    with pytest.raises(ValueError, match="order must name every basin"):
        BasinSplit(["a", "c"], ("a", "b"))
    with pytest.raises(ValueError, match="shared_stderr"):
        BasinSplit(["a"], ("a",), {"a": -1.0})
    with pytest.raises(ValueError, match="give run_values, not measured"):
        make_record(**CHECK, runs=RUNS[:2], run_values=[0.1, 0.2], measured=0.15, basins=BasinSplit(["a", "a"], ("a",)))
    with pytest.raises(ValueError, match="basins need runs"):
        make_record(**CHECK, basins=BasinSplit(["a"], ("a",)))
    out = record_fields([0.1, 0.2, 0.3], BasinSplit(["a", "a", "b"], ("a", "b")), ["x", "y", "z"], None, None)
    assert out["verdict"] is None and out["basins"]["verdicts"][1]["verdict"] is None


def test_an_inconclusive_check_by_basin_names_each_undecided_basin_and_the_seed_ceiling():
    values = [0.009, 0.012, 0.008, 0.002, 0.003]
    rec = make_record(**CHECK, runs=RUNS[:5], run_values=values,
                      basins=BasinSplit(["p", "p", "p", "q", "q"], ("p", "q")))
    assert rec.verdict == "inconclusive"
    assert rec.decide.startswith("basin p (3 runs): ")
    # a mean a hair from the boundary with a wide spread: more than AFFORDABLE_SEEDS needed
    far = make_record(**CHECK, runs=RUNS[:3], run_values=[0.0, 0.0199, 0.0101], basins=BasinSplit(["p"] * 3, ("p",)))
    assert far.verdict == "inconclusive" and far.decide.startswith("seeds will not decide it at this tolerance")
    assert AFFORDABLE_SEEDS == 64
