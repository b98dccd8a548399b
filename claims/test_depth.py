r"""Claim ``depth``: one linear attention layer keeps a non-vanishing error on LDS data; deeper stacks track least squares (docs/math.md section 7).

The second source (Cole, Lu et al., NeurIPS 2025): a class of single-layer linear
transformers has an error that does not vanish on noisy LDS (non-i.i.d.) data, while
stacks of depth O(log T) reach the least-squares rate.  With the window fixed (s = 2) no
predictor reaches the Kalman filter, so the references are in-context least-squares AR(2)
(what the deep constructions approximate) and the best AR(2) predictor of each known
system.  Setting a, stacks of depth L in {1, 2, 4} trained at T in {10, 20, 40, 80}
(claims/_lds.py: the paper's protocol with 3 seeds, at batch 1000 in the quick profile and
1500 in the paper profile),
each evaluated on 2e4 held-out systems and sequences of its T:

1. L = 1 does not approach the AR(2) optimum: its excess MSE over the best AR(2)
   predictor of each system at T = 80 is at least half of that at T = 10 (the issue's
   span) and at T = 40 (one doubling, over which an error of order 1/T would halve) --
   per seed with a Student-t interval (widened by the held-out sampling error the seeds
   share), and for the population optimum of one layer
   (exact quadrature moments, theory.optimum) against the per-system optimum averaged
   over 2e4 systems (bootstrap interval).  Control: in-context least squares, whose
   excess does vanish.  At the population optimum the 10 -> 80 ratio fails (a strict
   xfail with its numbers): the short-context transient, not a vanishing error, as the
   doubling ratio and the levelling-off at T = 160 (docs/math.md section 7.1) show;
2. the deepest stack (L = 4) tracks least squares better as T grows: the fitted
   log-log slope against T of its distance from in-context least squares,
   mean((y_hat - y_hat_LS)^2) / var(y_T), has an interval at most -0.1 (a trend, not a
   drift; least squares itself converges like 1/T).  (Its excess MSE over least squares
   changes sign -- a trained stack can beat least squares on short contexts, where least
   squares is noisy -- so the distance of the predictions is used.)  Control: the same fit
   for a predictor that ignores the context (the best fixed AR(2) weights over the
   family), whose distance levels off at a constant;

the depth trend at fixed T (MSE of every depth, least squares and the AR(2) optimum) is
a ``reported`` table.
"""
from __future__ import annotations

import functools

import numpy as np
import pytest

from claims import _lds
from claims.known import known_params
from claims.seeds import rng_for, seed_for
from claims.runs import depth_group, depth_run
from claims.stats import ratio_stderr, seed_fields, widen_for_reference
from theory.ar import ols_ar, predict_ar, query_features
from theory.kalman import ar_population_predictor
from theory.optimum import population_optimum
from theory.population import population_moments
from theory.systems import LDSFamily

CLAIM = "depth"
REF = "Cole, Lu et al. (second source): depth separation on LDS data"
HALF = 0.5                      # excess at T = 80 over that at T = 10: at least this (the issue's)
POP_SYSTEMS = 20_000            # systems behind the averaged per-system AR(2) optimum


@pytest.mark.parametrize("seed_index", range(_lds.STACK_SEEDS))
@pytest.mark.parametrize("T", _lds.DEPTH_T)
@pytest.mark.parametrize("layers", _lds.DEPTHS)
def test_training_run(profile, layers, T, seed_index):
    """One stack of the depth grid (cached); sanity: it learned something -- the held-out
    loss of its final weights (``eval_loss``: the full forward pass, float64) is below the
    training loss of its first steps.  Not the mean training loss of the last steps
    (``final_loss``): a stack's per-sequence loss is so heavy-tailed that a rare batch can
    lift that mean above the first steps' loss with the weights fixed
    (:func:`test_training_loss_tails`)."""
    run = _lds.trained_stack(_lds.depth_config(layers, T, seed_index, profile), profile)
    assert np.isfinite(run.eval_loss) and run.eval_loss < run.loss_history[0]


#: the late phase of a run: its last 10 % of steps, where the learning rate of the cosine
#: schedule is below 3 % of its peak (the weights barely move)
LATE = 0.1
#: a late loss bin this many times the late median counts as a spike
SPIKE = 10.0


@pytest.mark.parametrize("layers", _lds.DEPTHS)
def test_training_loss_tails(claim, profile, layers):
    """Reported: how heavy-tailed the training loss of the stacks of depth L is late in
    training.  Per run (4 T x 3 seeds), the largest late bin of ``loss_history`` (means of
    consecutive steps) over the median late bin; with the weights nearly fixed, a spike is
    a rare batch on which the stack errs enormously.  Such errors (a prediction of degree
    3^L in the observations) are too rare to show in 2e4 held-out sequences, so the
    held-out MSEs of the stacks are typical-case estimates; the population MSE of a deep
    stack may be far larger (docs/math.md section 7)."""
    ratios, keys, runs = [], [], []
    for T in _lds.DEPTH_T:
        for i in range(_lds.STACK_SEEDS):
            cfg = _lds.depth_config(layers, T, i, profile)
            h = np.asarray(_lds.trained_stack(cfg, profile).loss_history)
            late = h[int(round((1 - LATE) * len(h))):]
            ratios.append(float(late.max() / np.median(late)))
            keys.append(f"T={T} seed {i}")
            runs.append(depth_run(layers, T, profile.stack_batch, i))
    claim.record(claim=CLAIM, check="training-loss-tails", setting="a", s=_lds.S_DEPTH, layers=layers,
                 paper_ref=REF, runs=runs, run_values=ratios, label=f"runs with a late training-loss bin > {SPIKE:g} x the late median (of {len(ratios)})",
                 measured=float(sum(r > SPIKE for r in ratios)), kind="reported",
                 details={"largest_late_bin_over_median": max(ratios), "per_run": dict(zip(keys, ratios)),
                          "late_fraction": LATE, "batch": profile.stack_batch})


@functools.lru_cache(maxsize=None)
def _grid(profile) -> dict:
    """Per T: errors of least squares, of the per-system AR(2) optimum, of the fixed
    (context-free) AR(2) weights, var(y_T), and per depth and seed the model's errors and
    its distance from least squares."""
    out = {}
    s = _lds.S_DEPTH
    for T in _lds.DEPTH_T:
        systems, y = _lds.heldout_systems("a", profile.heldout_sequences, T)
        target, q = y[:, -1], query_features(y, s)
        ls = predict_ar(ols_ar(y, s, ridge=1e-8), y, s)
        w_pop, _ = ar_population_predictor(systems, T, s)
        pop = np.einsum("ms,ms->m", w_pop, q)
        w_fix = _fixed_weights(T)
        fixed = q @ w_fix
        var = float(target.var())
        row = {"err_ls": (ls - target) ** 2, "err_pop": (pop - target) ** 2, "var": var,
               "dist_fixed": float(np.mean((fixed - ls) ** 2) / var), "models": {}}
        for L in _lds.DEPTHS:
            per = []
            for i in range(_lds.STACK_SEEDS):
                pred = _lds.predict(_lds.trained_stack(_lds.depth_config(L, T, i, profile), profile), y)
                per.append({"err": (pred - target) ** 2, "dist_ls": float(np.mean((pred - ls) ** 2) / var)})
            row["models"][L] = per
        out[T] = row
    return out


@functools.lru_cache(maxsize=None)
def _fixed_weights(T: int) -> np.ndarray:
    """The best AR(2) weights over the family (one vector for every system): least squares
    over a separate draw of systems and sequences -- a predictor that ignores the context."""
    fam = LDSFamily("a", T=T)
    _, y = fam.sample(rng_for(CLAIM, "fixed-weights", T), 200_000)
    q = query_features(y, _lds.S_DEPTH)
    return np.linalg.lstsq(q, y[:, -1], rcond=None)[0]


def _excess(err_model, err_pop):
    return float(np.mean(err_model - err_pop))


#: pairs of lengths compared: the issue's (10 -> 80) and one doubling (40 -> 80), where a
#: vanishing error of order 1/T would halve
SPANS = ((10, 80), (40, 80))
KNOWN_POPULATION_FAILURES = {
    (10, 80): ("not reproduced at the population level: the excess of the one-layer optimum over "
               "the AR(2) optimum falls from 0.0876 (T = 10) to 0.0198 (T = 80), ratio 0.225 "
               "[0.224, 0.227] against 0.5 -- a short-context transient, not a vanishing error: it "
               "levels off at 0.0238 (T = 40), 0.0198 (80), 0.0188 (160)"),
}


def test_one_layer_keeps_its_error(claim, profile):
    """Trained L = 1: excess MSE over the per-system AR(2) optimum at T = 80 / at T = 10 (the
    issue's), and at T = 80 / at T = 40 (a doubling), each >= 0.5 per seed mean.  Control:
    in-context least squares over the same span, whose excess does vanish (about 1/T)."""
    g = _grid(profile)
    for lo_T, hi_T in SPANS:
        ratios = [_excess(g[hi_T]["models"][1][i]["err"], g[hi_T]["err_pop"])
                  / _excess(g[lo_T]["models"][1][i]["err"], g[lo_T]["err_pop"]) for i in range(_lds.STACK_SEEDS)]
        # the seeds share each T's held-out sequences (independent across T): that sampling
        # error is added in quadrature, from the seed-averaged per-sequence excesses
        held_se = ratio_stderr(*(np.mean([m["err"] for m in g[T]["models"][1]], axis=0) - g[T]["err_pop"]
                                 for T in (hi_T, lo_T)), paired=False)
        claim.record(
            claim=CLAIM, check="excess-ratio", setting="a", s=_lds.S_DEPTH, layers=1,
            variant=f"T{hi_T}-over-T{lo_T}", paper_ref=REF,
            runs=[depth_group(1, (lo_T, hi_T), profile.stack_batch, i) for i in range(_lds.STACK_SEEDS)],
            label=f"mean_seeds excess MSE over the AR(2) optimum at T = {hi_T} / at T = {lo_T}",
            **widen_for_reference(seed_fields(ratios), held_se), tolerance=HALF, comparator=">=",
            tolerance_source="project",
            details={"per_seed": ratios, "heldout_stderr": held_se,
                     "excess_per_T": {T: [_excess(m["err"], g[T]["err_pop"]) for m in g[T]["models"][1]]
                                      for T in g}})
    ls = _excess(g[80]["err_ls"], g[80]["err_pop"]) / _excess(g[10]["err_ls"], g[10]["err_pop"])
    claim.record(
        claim=CLAIM, check="excess-ratio", setting="a", s=_lds.S_DEPTH, variant="least-squares-T80-over-T10",
        paper_ref=REF, label="control: excess MSE of in-context least squares over the AR(2) optimum, T = 80 / T = 10",
        measured=ls, tolerance=HALF, comparator=">=", tolerance_source="project", expect="fails",
        details={"excess_per_T": {T: _excess(g[T]["err_ls"], g[T]["err_pop"]) for T in g}})
    claim.check_all()


@pytest.mark.parametrize("span", known_params(KNOWN_POPULATION_FAILURES, SPANS, unpack=False),
                         ids=[f"T{a}-T{b}" for a, b in SPANS])
def test_one_layer_optimum_keeps_its_error(claim, profile, span):
    """The population optimum of one layer (exact quadrature moments): 2 L*(T) minus the mean
    over 2e4 systems of the AR(2) optimum's error, at the longer over the shorter T, >= 0.5
    (bootstrap over the systems)."""
    lo_T, hi_T = span
    pop = _population_excess(profile, lo_T, hi_T)
    claim.record(
        claim=CLAIM, check="optimum-excess-ratio", setting="a", s=_lds.S_DEPTH, layers=1,
        variant=f"T{hi_T}-over-T{lo_T}", paper_ref=REF,
        label=f"excess of 2 L* over the averaged per-system AR(2) optimum, T = {hi_T} / T = {lo_T}",
        **pop["fields"], tolerance=HALF, comparator=">=", tolerance_source="project", details=pop["details"],
    ).check()


@functools.lru_cache(maxsize=None)
def _population_excess(profile, lo_T: int, hi_T: int) -> dict:
    """2 L*(T) (the one-layer optimum's MSE, exact) minus the mean over systems of the best
    AR(2) error variance, at lo_T and hi_T, and their ratio with a bootstrap over the systems."""
    vals, per_sys = {}, {}
    for T in (lo_T, hi_T):
        vals[T], per_sys[T] = _optimum_and_ar2(profile, T)
    units = np.stack([per_sys[lo_T], per_sys[hi_T]], 1)

    def ratio(u):
        return (vals[hi_T] - u[:, 1].mean()) / (vals[lo_T] - u[:, 0].mean())
    rng = rng_for(CLAIM, "pop-bootstrap", lo_T, hi_T)
    boot = np.array([ratio(units[rng.integers(0, POP_SYSTEMS, POP_SYSTEMS)]) for _ in range(1000)])
    r = float(ratio(units))
    lo, hi = np.quantile(boot, [0.025, 0.975])
    return {"fields": {"measured": r, "interval": (float(min(lo, r)), float(max(hi, r))),
                       "interval_kind": "bootstrap95"},
            "details": {"two_L_star": vals, "mean_ar2_optimum": {T: float(v.mean()) for T, v in per_sys.items()},
                        "excess": {T: vals[T] - float(per_sys[T].mean()) for T in vals}, "systems": POP_SYSTEMS}}


@functools.lru_cache(maxsize=None)
def _optimum_and_ar2(profile, T: int):
    opt = population_optimum(population_moments(LDSFamily("a", T=T), _lds.S_DEPTH),
                             seed_for(CLAIM, "optimum", T), starts=max(32, profile.multistart))
    systems = LDSFamily("a", T=T).sample_systems(rng_for(CLAIM, "pop-systems", T), POP_SYSTEMS)
    return 2 * opt.loss, ar_population_predictor(systems, T, _lds.S_DEPTH)[1]


def _slope(Ts, values):
    return float(np.polyfit(np.log(Ts), np.log(values), 1)[0])


#: the deepest stack's distance from least squares must shrink at least like T^SLOPE_TOL
SLOPE_TOL = -0.1
#: lengths at which the context-free control is evaluated (it needs no training)
CONTROL_T = (10, 15, 20, 30, 40, 60, 80, 120)


def test_the_deepest_stack_tracks_least_squares(claim, profile):
    """L = 4: the log-log slope against T of its distance from least squares, per seed, with
    a Student-t interval at most -0.1 (a trend, not a drift).  Control: the same slope for
    a context-free predictor (the best fixed AR(2) weights of the family), whose distance
    from least squares levels off at a constant, over 8 lengths T = 10..120 (a fit's
    interval)."""
    g = _grid(profile)
    Ts = np.array(_lds.DEPTH_T, dtype=float)
    deepest = max(_lds.DEPTHS)
    slopes = [_slope(Ts, [g[T]["models"][deepest][i]["dist_ls"] for T in _lds.DEPTH_T])
              for i in range(_lds.STACK_SEEDS)]
    claim.record(
        claim=CLAIM, check="distance-to-least-squares-slope", setting="a", s=_lds.S_DEPTH, layers=deepest,
        paper_ref=REF, runs=[depth_group(deepest, _lds.DEPTH_T, profile.stack_batch, i)
                             for i in range(_lds.STACK_SEEDS)],
        label="mean_seeds log-log slope over T of mean((y_hat - y_hat_LS)^2) / var(y_T)",
        **seed_fields(slopes), tolerance=SLOPE_TOL, comparator="<=", tolerance_source="project",
        details={"per_seed": slopes, "distance": {T: [m["dist_ls"] for m in g[T]["models"][deepest]] for T in g}})
    fixed = [_fixed_distance(profile, T) for T in CONTROL_T]
    fit = np.polyfit(np.log(CONTROL_T), np.log(fixed), 1, cov=True)
    from scipy import stats as scistats
    hw = float(scistats.t.ppf(0.975, len(CONTROL_T) - 2) * np.sqrt(fit[1][0, 0]))
    claim.record(
        claim=CLAIM, check="distance-to-least-squares-slope", setting="a", s=_lds.S_DEPTH,
        variant="context-free-ar2", paper_ref=REF,
        label="control: log-log slope over T of the same distance for fixed AR(2) weights",
        measured=float(fit[0][0]), interval=(float(fit[0][0] - hw), float(fit[0][0] + hw)),
        interval_kind="t95-fit", tolerance=SLOPE_TOL, comparator="<=", tolerance_source="project",
        expect="fails", details={"T": list(CONTROL_T), "distance": fixed})
    claim.check_all()


def _fixed_distance(profile, T: int) -> float:
    """mean((y_hat_fixed - y_hat_LS)^2) / var(y_T) for the context-free AR(2) predictor."""
    if T in _lds.DEPTH_T:
        return _grid(profile)[T]["dist_fixed"]
    _, y = _lds.heldout_systems("a", profile.heldout_sequences, T)
    q = query_features(y, _lds.S_DEPTH)
    ls = predict_ar(ols_ar(y, _lds.S_DEPTH, ridge=1e-8), y, _lds.S_DEPTH)
    return float(np.mean((q @ _fixed_weights(T) - ls) ** 2) / y[:, -1].var())


@pytest.mark.parametrize("T", _lds.DEPTH_T)
def test_depth_trend(claim, profile, T):
    """Reported: MSE at this T of every depth (seed mean), of least squares, of the per-system
    AR(2) optimum, in units of var(y_T)."""
    row = _grid(profile)[T]
    cells = []
    for L in _lds.DEPTHS:
        per_seed = [float(m["err"].mean()) / row["var"] for m in row["models"][L]]
        runs = {"runs": [depth_run(L, T, profile.stack_batch, i) for i in range(len(per_seed))],
                "run_values": per_seed}
        cells.append(({"layers": L, **runs}, f"L={L} (mean over seeds)",
                      float(np.mean([m["err"].mean() for m in row["models"][L]]))))
    cells += [({"variant": "least-squares"}, "in-context least squares AR(2)", float(row["err_ls"].mean())),
              ({"variant": "best-ar2-of-the-system"}, "best AR(2) predictor of each system",
               float(row["err_pop"].mean()))]
    for where, name, mse in cells:
        claim.record(claim=CLAIM, check="mse-over-var", setting="a", s=_lds.S_DEPTH, T=T, **where, paper_ref=REF,
                     label=f"MSE / var(y_T): {name}", measured=mse / row["var"], kind="reported",
                     details={"mse": mse, "var": row["var"]})
