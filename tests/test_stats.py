"""claims/harness/stats.py and the verdict rules of claims/harness/records.py: Student-t and Monte Carlo
intervals against tables, scipy and simulation; verdicts of interval checks, ``holds at``,
what would decide an inconclusive check, and how a test's outcome follows from a verdict."""
from __future__ import annotations

import math

import numpy as np
import pytest

from claims.harness import stats
from claims.harness.records import Record, make_record
from claims.harness.seeds import seed_for

P = {"tolerance_source": "project"}


def _rec(**kw) -> dict:
    """A record as its serialised dict (what the reports and the plugin handle)."""
    return make_record(**kw).to_dict()


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
