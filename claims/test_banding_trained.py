r"""Claim ``banding``, trained part: Lemma 4.1's parity structure on trained AR(s) layers, s >= 2 (the paper's Fig. 1).

Check 4, trained layers (the paper's protocol, s = 2, 3, 4, settings a-d, the profile's seeds):
the out-of-class share of each run and the odd share of its prediction, judged by run
(docs/settings.md, "Verdicts by run": the share of runs that hold, and per basin -- the
stationary point each run is headed for, claims/_ars.py), with the class it reached,
its Jaccard distance and its excess over L* and over its point; control: the
asymmetric family, which fails only when every run is out of class.

The exact checks (parity zeros of the moments, class invariance of the gradient, the
population optimum in a class) are claims/test_banding.py.
"""
from __future__ import annotations

import functools

import numpy as np
import pytest

from claims import _ars
from claims.reports.fig_training import loss_curves
from claims.harness.coverage import CONTROLS, SYMMETRIC
from claims.harness.known import known_params
from claims.harness.profiles import PAPER, QUICK
from claims.harness.runs import ARS_SETTINGS, WINDOWS, ars_run, trained
from claims.specs.banding import SPEC
from theory.parity import CLASSES, canonical_gauge, classify, jaccard_support_distance, odd_share
from theory.population import beta_from_weights

CLAIM = SPEC.name
REF = "Lemma 4.1 (eq. 12)"
#: trained layers: out-of-class share (share^2 <= 1 %: 99 % of the squared norm in the class)
TRAINED_SHARE_TOL = 0.1


# --------------------------------------------------------------------------- 0. training runs


@pytest.mark.parametrize("seed_index", range(max(QUICK.n_seeds, PAPER.n_seeds)))
@pytest.mark.parametrize("s", WINDOWS)
@pytest.mark.parametrize("setting", ARS_SETTINGS)
def test_training_run(profile, setting, s, seed_index):
    """One AR(s) run of the paper's protocol (trained once, cached); collected first so that
    ``-n auto`` spreads the runs.  Sanity only: the population loss at the trained weights
    is below the zero predictor's, v / 2."""
    if seed_index >= profile.n_seeds:
        pytest.skip(f"profile {profile.name} trains {profile.n_seeds} seed(s)")
    _ars.require_trained_window(profile, s)
    run = trained(ars_run(setting, s, seed_index), profile)
    assert np.isfinite(run.final_loss) and np.isfinite(run.eval_loss)
    mom = _ars.moments_for(setting, s)
    assert float(mom.loss(beta_from_weights(run.W_V, run.W_QK))) < mom.v / 2


# --------------------------------------------------------------------------- 4. trained layers


def run_banding(run, setting, s, profile) -> dict:
    """Per trained run: the nearer class, out-of-class share, Jaccard distance, odd share,
    excess population loss and its weights in the canonical gauge (for the figures).  Where
    the run is headed (the stationary point, its basin) is claims/_ars.py's ``basins``."""
    cls, shares = classify(run.W_V, run.W_QK)
    mom = _ars.moments_for(setting, s)
    beta = beta_from_weights(run.W_V, run.W_QK)
    V, Q = canonical_gauge(run.W_V, run.W_QK)
    L_star = _ars.optimum(setting, s, profile.multistart).loss
    return {"class": cls, "share": shares[cls] if cls else min(shares.values()),
            "jaccard": jaccard_support_distance(run.W_V, run.W_QK, cls or CLASSES[0], _ars.JACCARD_THRESHOLD),
            "odd_share": odd_share(beta, mom.M, s), "beta": beta,
            "excess": float((mom.loss(beta) - L_star) / L_star),
            "b": V[s].tolist(), "W_QK": Q[:, :s].tolist()}


@functools.lru_cache(maxsize=None)
def _trained(setting, s, profile):
    _ars.require_trained_window(profile, s)
    runs = [trained(ars_run(setting, s, i), profile) for i in range(profile.n_seeds)]
    per = [run_banding(r, setting, s, profile) for r in runs]
    mom = _ars.moments_for(setting, s)
    mean_beta = np.mean([p["beta"] for p in per], axis=0)
    rb = _ars.basins(setting, s, profile)
    return per, rb, {
        "seeds": [r.config.seed for r in runs], "lr": runs[0].config.lr, "steps": profile.train_steps,
        "batch": profile.train_batch, "class_per_seed": [p["class"] for p in per],
        "out_of_class_share_per_seed": [p["share"] for p in per],
        "jaccard_per_seed": [p["jaccard"] for p in per], "jaccard_threshold": _ars.JACCARD_THRESHOLD,
        "odd_share_per_seed": [p["odd_share"] for p in per],
        "odd_share_of_seed_mean_beta": odd_share(mean_beta, mom.M, s),
        "rel_excess_population_loss_per_seed": [p["excess"] for p in per],
        **rb.details(),
        "b_per_run": [p["b"] for p in per], "W_QK_per_run": [p["W_QK"] for p in per],
        "seed0_b": per[0]["b"], "seed0_W_QK": per[0]["W_QK"], "moments": mom.method,
        "population_loss_optimum": float(_ars.optimum(setting, s, profile.multistart).loss),
        **loss_curves(runs)}


def _trained_cells(settings) -> list:
    return [(st, s) for st in settings for s in WINDOWS]


# Trained checks that do not reproduce are listed by check_id in claims/harness/known.py (the one
# registry; their numbers are rendered from the published runs).


@pytest.mark.parametrize("setting, s", known_params(lambda st, s: f"{CLAIM}/trained-out-of-class-share/{st}/s={s}",
                                                    _trained_cells(ARS_SETTINGS)))
def test_trained_layers_are_banded(claim, profile, setting, s):
    """Trained AR(s) layers: the out-of-class share of each run (nearer class, canonical
    gauge), judged by run (the share of runs that hold, per basin beside it); the Jaccard distance and the
    excess population loss over L* beside it (reported), and per seed the stationary
    point the run is headed for.  Control: the asymmetric family."""
    per, rb, details = _trained(setting, s, profile)
    where = {"setting": setting, "s": s}
    runs = [ars_run(setting, s, i) for i in range(profile.n_seeds)]
    basin_details = rb.per_run()
    shares = details["out_of_class_share_per_seed"]
    if setting in CONTROLS:
        # the control: a family without the symmetry has no classes to be near, whichever
        # point a run is headed for; shown to fail run by run (every run beyond the tolerance)
        claim.record(
            claim=CLAIM, check="trained-out-of-class-share", **where, paper_ref=REF + " (trained; Fig. 1)",
            label=(f"control: share of runs with out-of-class share <= {TRAINED_SHARE_TOL:g} (asymmetric family; "
                   "fails only when every run fails)"),
            runs=runs, run_values=shares, per_run=True, tolerance=TRAINED_SHARE_TOL,
            comparator="<=", tolerance_source="project", expect="fails", details=details, note=basin_note(rb))
    else:
        claim.record(
            claim=CLAIM, check="trained-out-of-class-share", **where, paper_ref=REF + " (trained; Fig. 1)",
            label=(f"share of runs with out-of-class share |x_out| / |x| <= {TRAINED_SHARE_TOL:g} (nearer class, "
                   "canonical gauge), per basin beside it"),
            runs=runs, run_values=shares, basins=rb.split(), per_run=True, tolerance=TRAINED_SHARE_TOL,
            comparator="<=", tolerance_source="project", details=details, note=basin_note(rb))
    claim.record(
        claim=CLAIM, check="trained-jaccard", **where, paper_ref=REF + " (trained; Fig. 1)",
        runs=runs, run_values=details["jaccard_per_seed"], basins=rb.split(), bounds=(0.0, 1.0),
        label=f"Jaccard distance of the support (threshold {_ars.JACCARD_THRESHOLD:g} of the largest entry), by basin",
        kind="reported",
        details={"jaccard_per_seed": details["jaccard_per_seed"], "class_per_seed": details["class_per_seed"],
                 **basin_details})
    claim.record(
        claim=CLAIM, check="trained-excess-loss", **where, paper_ref=REF + " (trained)",
        runs=runs, run_values=details["rel_excess_population_loss_per_seed"], basins=rb.split(), bounds=(0.0, None),
        label="(L(theta_trained) - L*) / L* (population loss), by basin",
        kind="reported",
        details={"per_seed": details["rel_excess_population_loss_per_seed"], "moments": details["moments"],
                 **basin_details, "basins": details["basins"]})
    claim.check_all()


def basin_note(rb) -> str:
    """Which runs reached which stationary point, and how far above it they stopped."""
    by = {}
    for i, (b, e) in enumerate(zip(rb.labels, rb.run_excess)):
        by.setdefault(b, []).append((i, e))
    return "runs by the stationary point they are headed for: " + "; ".join(
        f"{b}: seed{'s' if len(v) > 1 else ''} {', '.join(str(i) for i, _ in v)} "
        f"(at {', '.join(f'{100 * e:+.2g}' for _, e in v)} % of it)" for b, v in by.items())


@pytest.mark.parametrize("setting, s", known_params(lambda st, s: f"{CLAIM}/trained-odd-share/{st}/s={s}",
                                                    _trained_cells(SYMMETRIC)))
def test_trained_layers_have_no_odd_part(claim, profile, setting, s):
    """Trained AR(s) layers: the odd features carry < 1 % of the prediction (the odd share,
    loss-equivalent, as for s = 1), judged by run (each run's exact odd share against 1 %;
    the share of runs that hold against 1/2, per basin beside it); the odd share of the
    seed-averaged coefficients beside it in the details.  (No control on the
    asymmetric family: its odd features are correlated with the even ones, so the odd
    share measures nothing there; the out-of-class share is its control.)"""
    _, rb, details = _trained(setting, s, profile)
    claim.record(
        claim=CLAIM, check="trained-odd-share", setting=setting, s=s,
        paper_ref=REF + " (trained; zero odd part)",
        label=(f"share of runs with rms(odd-feature prediction) / rms(even-feature prediction) <= "
               f"{profile.coef_rel_tol:.0%}, per basin beside it"),
        runs=[ars_run(setting, s, i) for i in range(profile.n_seeds)],
        run_values=details["odd_share_per_seed"], basins=rb.split(), per_run=True, tolerance=profile.coef_rel_tol,
        comparator="<=", tolerance_source="project",
        details={"odd_share_per_seed": details["odd_share_per_seed"],
                 "odd_share_of_seed_mean_beta": details["odd_share_of_seed_mean_beta"],
                 **rb.per_run()},
        note=basin_note(rb),
    ).check()
