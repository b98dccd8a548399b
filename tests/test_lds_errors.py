"""claims._lds.error_summary: the heavy-tailed rows of the depth and spectral-shift claims.

Oracle: the order statistics by hand, in exact arithmetic (Fractions), with the linear rule
(Hyndman-Fan type 7: h = p (n - 1), x_(floor h) + (h - floor h)(x_(floor h + 1) - x_(floor h)))
and an infinite error counted as larger than every finite one; independent of numpy's
quantile, which the code under test calls.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from hypothesis import example, given, settings, strategies as st

from claims._lds import TAIL_MULTIPLE, error_summary


def _quantile(values, p: Fraction):
    """Type-7 quantile of ``values`` (floats, +inf allowed), exact; inf where the upper
    order statistic is infinite and carries a positive weight."""
    xs = sorted(values)
    h = p * (len(xs) - 1)
    lo = math.floor(h)
    frac = h - lo
    if frac == 0:
        return xs[lo]
    a, b = xs[lo], xs[lo + 1]
    if math.isinf(b):
        return math.inf
    return float(Fraction(a) + frac * (Fraction(b) - Fraction(a)))


_errors = st.lists(st.one_of(st.floats(0, 1e6, allow_nan=False, allow_infinity=False),
                             st.sampled_from([math.inf, math.nan])), min_size=1, max_size=40)


@settings(max_examples=300, deadline=None)
@given(err=_errors, scale=st.floats(0.1, 10.0))
@example(err=[1.0] * 10 + [math.inf], scale=1.0)      # 90 % of the way is the tenth exactly
@example(err=[0, 0, 0, 0, 0, 1], scale=0.1)      # an error on the threshold, the mean of kf rounded below it
@example(err=[0.0] * 7 + [11.0] * 15, scale=1.0)   # share 15/22 as a float, times 22: 14.999999999999998
def test_summary_matches_the_order_statistics_by_hand(err, scale):
    kf = np.full(len(err), scale)
    got = error_summary(np.array(err), kf)
    as_inf = [math.inf if not math.isfinite(x) else x for x in err]
    assert got["non_finite"] == sum(not math.isfinite(x) for x in err)
    q90 = _quantile(as_inf, Fraction(9, 10))
    assert not math.isnan(got["q90"])
    if math.isinf(q90):
        assert math.isinf(got["q90"])
    else:
        assert math.isclose(got["q90"] * scale, q90, rel_tol=1e-12, abs_tol=1e-300)
    med = _quantile(as_inf, Fraction(1, 2))
    assert (math.isinf(got["median_error"]) if math.isinf(med)
            else math.isclose(got["median_error"], med, rel_tol=1e-12, abs_tol=1e-300))
    # the filter's MSE is the float mean of kf, which may differ from ``scale`` by rounding
    # (np.full(6, 0.1).mean() is 0.09999999999999999): an error within rounding of the
    # threshold counts on either side; every other one as the exact threshold says
    thr = TAIL_MULTIPLE * scale
    near = sum(math.isclose(x, thr, rel_tol=1e-12) for x in as_inf)
    exact = sum(x > thr for x in as_inf)
    # the share is a count over len(err), as a float: the count back within rounding, then exact
    count = got["tail_share"] * len(err)
    assert math.isclose(count, round(count), rel_tol=1e-12, abs_tol=1e-12)
    assert exact - near <= round(count) <= exact + near


def test_the_quantile_on_an_order_statistic_ignores_what_lies_above():
    """n = 11: 90 % of the way is the tenth error exactly; an infinite eleventh has weight 0
    (numpy's own quantile answers NaN there: inf * 0)."""
    err = np.r_[np.arange(1.0, 11.0), np.inf]
    assert error_summary(err, np.ones(11))["q90"] == 10.0
    err[-2] = np.inf                  # now the tenth itself is infinite
    assert error_summary(err, np.ones(11))["q90"] == math.inf
