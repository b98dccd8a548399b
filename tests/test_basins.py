"""claims.basins: verdicts by basin (docs/settings.md, "Verdicts by basin").

Oracles: the seed rule itself (claims.stats.t_interval + interval_verdict) for runs in one
basin, the exact binomial interval of scipy, and hand-worked cases -- the three synthetic
cases of the basins issue.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from claims.basins import basin_verdicts, clopper_pearson, judge_by_basin
from claims.stats import interval_verdict, t_interval

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
