r"""Claim ``improper-learning``: AR(s) predictors approach the Kalman filter geometrically in s (docs/math.md sections 3, 7).

Paper (its section 3, after Tsiamis-Pappas and Kozdoba et al.): the Kalman predictor
unrolled s steps is y_hat_(t+1) = sum_j c^T L^(j-1) K_g y_(t+1-j) + c^T L^s x_hat with
L = A - K_g c^T, so the best AR(s) predictor approaches the filter with an excess error of
order rho(L)^(2s) -- the reason the paper can study AR(s) windows at all.

Checked exactly, without Monte Carlo: for a known system the error variance of the best
AR(s) predictor of y_T is K_TT - k_q^T K_qq^-1 k_q (theory.kalman.ar_population_predictor),
that of the filter L[T, T]^2 from the Cholesky factor of K (theory.kalman.optimal_mse), and
rho(L) comes from the steady-state Riccati solution (theory.kalman.steady_state).  Over
hypothesis-drawn stable systems (settings a-d, d = 1..3, T = 160, so that the filter is
in its steady state), log(excess(s)) is fitted against s on the asymptotic range
1e-10 < excess < 1e-3, and the fitted slope is compared with 2 log rho(L):

1. every draw decays at least as fast as rho(L)^(2s) (slope / (2 log rho) >= 0.9);
2. typically exactly that fast: the median over draws of |slope / (2 log rho) - 1|
   is at most 0.1 (bootstrap interval over the draws).

The record states the share of draws more than 10 % off and, for each, the reasons that
apply (any of): the slope over the fit range's last 3 points is within 10 % of the rate
(the slowest mode of L carries little weight in the excess -- weakly excited or weakly
observed -- so faster modes dominate most of the range); the draw follows L's second mode
(its slope within 10 % of 2 log |mu_2(L)|); few points (< 6) in the fit range; else
"unexplained".  Controls, plausible wrong rates: the open-loop rho(A)^(2s) (the system's
own memory rather than the filter's) for the median check, and L's second mode
|mu_2(L)|^(2s) (draws with d >= 2) for the floor.

Reported: the estimation trade-off at the paper's T = 30 (setting a): in-context least
squares AR(s) gets worse with s beyond a few lags (more coefficients from 29 - s points)
while the best AR(s) predictor of each known system keeps improving -- the window the
paper studies (s <= 4) is a bias-variance choice, not only an approximation one.
"""
from __future__ import annotations

import numpy as np
from hypothesis import assume, given, strategies as st

from claims.basins import clopper_pearson
from claims.seeds import claim_settings, rng_for
from claims.stats import bootstrap_fields
from theory.ar import ols_ar, predict_ar
from theory.kalman import ar_population_predictor, kalman_predict, optimal_mse, steady_state
from theory.systems import LDSFamily, Systems

CLAIM = "improper-learning"
REF = "paper, Sec. 3: AR(s) approximation of the Kalman filter (after Tsiamis-Pappas, Kozdoba et al.)"
T_LONG = 160
S_MAX = 40
RATE_FLOOR = 0.9       # slope / (2 log rho) at least this: decays at least like rho^(2s) (project's)
RATE_TOL = 0.1         # median |slope / (2 log rho) - 1| at most this (project's)
FEW_POINTS = 6         # a draw with fewer fitted points is flagged "few points" (a reason, no filter)


def _rate(systems: Systems):
    """(slope of log excess(s), 2 log rho(L), points fitted, 2 log rho(A), 2 log |mu_2(L)|,
    slope over the last 3 fitted points) for one system (mu_2: the second-largest
    eigenvalue modulus of L = A - K_g c^T)."""
    opt = optimal_mse(systems, T_LONG)[0]
    s = np.arange(1, S_MAX + 1)
    ex = np.array([ar_population_predictor(systems, T_LONG, k)[1][0] / opt - 1 for k in s])
    ok = (ex > 1e-10) & (ex < 1e-3)
    if ok.sum() < 3:
        return None
    slope = np.polyfit(s[ok], np.log(ex[ok]), 1)[0]
    ss = steady_state(systems)
    mods = np.abs(np.linalg.eigvals(systems.A[0] - np.outer(ss.gain[0], systems.c[0])))
    below = mods[mods < mods.max() * (1 - 1e-9)]               # a conjugate pair is one mode
    second = float(2 * np.log(below.max())) if below.size and below.max() > 0 else None     # None: no second mode
    tail = np.polyfit(s[ok][-3:], np.log(ex[ok][-3:]), 1)[0]          # the last 3 fitted points
    return (float(slope), float(2 * np.log(ss.closed_loop_radius[0])), int(ok.sum()),
            float(2 * np.log(np.abs(np.linalg.eigvals(systems.A[0])).max())), second, float(tail))


def _draws(profile):
    """(rows, rejected): one row per draw whose excess leaves at least 3 points in the fit
    range; ``rejected`` counts the others (they decay past 1e-10 within a few s, or, with
    rho(L) near 1, stay above 1e-3 up to s = 40) -- the check covers the rows only."""
    rows, rejected = [], []

    @claim_settings(profile)
    @given(setting=st.sampled_from(["a", "b", "c", "d"]), d=st.integers(1, 3), seed=st.integers(0, 2 ** 32 - 1))
    def run(setting, d, seed):
        fam = LDSFamily(setting, d=d, T=T_LONG)
        systems = fam.sample_systems(np.random.default_rng(seed), 1)
        rate = _rate(systems)
        if rate is None:                      # fewer than 3 points inside the fit range
            rejected.append(float(steady_state(systems).closed_loop_radius[0]))
        assume(rate is not None)
        slope, two_log_rho, n, two_log_rho_A, two_log_mu2, tail = rate
        rows.append({"setting": setting, "d": d, "seed": seed, "slope": slope, "two_log_rho": two_log_rho,
                     "points": n, "ratio": slope / two_log_rho, "ratio_open_loop": slope / two_log_rho_A,
                     "second_mode_ratio": None if two_log_mu2 is None else two_log_mu2 / two_log_rho,
                     "tail_ratio": tail / two_log_rho})

    run()
    return rows, rejected


#: a draw is "off" when |slope / (2 log rho(L)) - 1| exceeds this (as in the median check)
OFF = RATE_TOL
WORST = 5


def _reasons(row: dict) -> list[str]:
    """Why a draw's rate is off: every reason that applies (module doc)."""
    r, second, tail = row["ratio"], row["second_mode_ratio"], row["tail_ratio"]
    out = []
    if abs(tail - 1) <= OFF:
        out.append(f"reaches the rate only at the end of the fit range (last 3 points: {tail:.3g}): the slowest "
                   "mode of L carries little weight in the excess (weakly excited or observed)")
    if second is not None and abs(r / second - 1) <= OFF:
        out.append(f"follows L's second mode (its rate ratio {second:.3g})")
    if row["points"] < FEW_POINTS:
        out.append(f"few fitted points ({row['points']})")
    return out or ["unexplained: not the end of the range, L's second mode or few points"]


def test_ar_excess_decays_like_rho_squared(claim, profile):
    """Fitted slope of log(excess of the best AR(s) over the filter) in s, over 2 log rho(L).
    Controls: L's second mode for the floor, the open-loop rate rho(A)^(2s) for the median;
    reported: the share of draws more than 10 % off, the worst with their reasons."""
    rows, rejected = _draws(profile)
    details = {"draws": rows, "T": T_LONG, "s_max": S_MAX, "fit_range": "1e-10 < excess < 1e-3",
               "rejected_draws": len(rejected), "rejected_rho": rejected}
    r = np.array([x["ratio"] for x in rows])
    claim.record(
        claim=CLAIM, check="rate-floor", setting="a-d", paper_ref=REF,
        label=f"min over draws of fitted slope / log-rate of rho(L)^(2s) (>= {RATE_FLOOR}: at least that fast)",
        measured=float(r.min()), tolerance=RATE_FLOOR, comparator=">=", tolerance_source="project",
        details=details)
    second = [x["ratio"] / x["second_mode_ratio"] for x in rows if x["second_mode_ratio"] is not None]
    claim.record(
        claim=CLAIM, check="rate-floor", setting="a-d", variant="rate-second-mode", paper_ref=REF,
        label="control: min over draws (d >= 2) of fitted slope / log-rate of |mu_2(L)|^(2s), L's second mode",
        measured=float(min(second)), tolerance=RATE_FLOOR, comparator=">=", tolerance_source="project",
        expect="fails", details={"ratios": second, "draws": len(second)})
    for key, expect, what, variant in (("ratio", "holds", "rho(L)^(2s)", None),
                                       ("ratio_open_loop", "fails", "control: rho(A)^(2s)", "rate-rho-A-2s")):
        v = np.array([x[key] for x in rows])
        claim.record(
            claim=CLAIM, check="rate-median-deviation", setting="a-d", variant=variant, paper_ref=REF,
            label=f"median over draws of |fitted slope / log-rate of {what} - 1|",
            **bootstrap_fields(np.abs(v - 1), np.median, rng_for(CLAIM, "bootstrap", key)),
            tolerance=RATE_TOL, comparator="<=", tolerance_source="project", expect=expect,
            details={"ratios": v.tolist(), "draws": len(v)})
    off = sorted((x for x in rows if abs(x["ratio"] - 1) > OFF), key=lambda x: -abs(x["ratio"] - 1))
    ci = clopper_pearson(len(off), len(rows))
    reasons = [_reasons(x) for x in off]
    claim.record(
        claim=CLAIM, check="rate-off-share", setting="a-d", paper_ref=REF,
        label=f"share of draws whose slope / log-rate of rho(L)^(2s) is more than {OFF:.0%} off 1",
        measured=len(off) / len(rows), interval=ci,
        interval_kind="clopper-pearson95", kind="reported",
        details={"off": len(off), "draws": len(rows), "faster": sum(x["ratio"] > 1 for x in off),
                 "reasons": {k: sum(any(y.startswith(k) for y in rs) for rs in reasons)
                             for k in ("reaches the rate", "follows L's second mode", "few fitted points",
                                       "unexplained")},
                 "worst": [{**{k: x[k] for k in ("setting", "d", "seed", "ratio", "points", "second_mode_ratio",
                                                 "tail_ratio")}, "reasons": rs}
                           for x, rs in zip(off[:WORST], reasons)]})
    claim.check_all()


TRADEOFF_T = 30                 # the paper's length
TRADEOFF_S = tuple(range(1, 9))


def test_estimation_tradeoff(claim, profile):
    """Reported: at T = 30 (setting a, the paper's family), MSE over the filter's of
    in-context least squares AR(s) and of the best AR(s) predictor of each known system,
    s = 1..8.  Least squares' error is Rao-Blackwellised through the filter's prediction
    (E (y_T - f)^2 = E (f - m)^2 + E v); the best AR(s)'s is exact per system."""
    fam = LDSFamily("a", T=TRADEOFF_T)
    systems, y = fam.sample(rng_for(CLAIM, "tradeoff"), profile.heldout_sequences)
    kf = kalman_predict(systems, y)
    filt = float(kf.variance.mean())
    ls, best = {}, {}
    for s in TRADEOFF_S:
        f = predict_ar(ols_ar(y, s, ridge=1e-8), y, s)
        ls[s] = float(((f - kf.prediction) ** 2).mean() + filt) / filt
        best[s] = float(ar_population_predictor(systems, TRADEOFF_T, s)[1].mean()) / filt
    s_best = min(ls, key=ls.get)
    claim.record(
        claim=CLAIM, check="estimation-tradeoff", setting="a", T=TRADEOFF_T, paper_ref=REF,
        label=f"the window s (1..{TRADEOFF_S[-1]}) at which in-context least squares AR(s) predicts best, T = {TRADEOFF_T}",
        measured=s_best, kind="reported",
        details={"least_squares_mse_over_filter": ls, "best_ar_mse_over_filter": best,
                 "sequences": int(y.shape[0])})
