r"""Claim ``spectral-shift``: trained at spectral radius 0.9, tested up to 1.05, against the Kalman filter (docs/math.md section 7).

The second seed (a blog summary of Cole et al.) advises testing spectral radii outside the training
range against the Kalman filter, least squares and N4SID; nothing numeric is claimed, so
the table is ``reported``.  Setting a with lambda_i ~ U[-r, r] (LDSFamily ``radius``):
layers of window s = 2 and depth L in {1, 4} trained at r = 0.9 (3 seeds), then, at
r in {0.9, 0.95, 1.0, 1.05}, on held-out systems of that radius: the MSE of each model,
of in-context least squares AR(2), of N4SID (on the first 2000 sequences) and of the
Kalman filter, each as a ratio to the filter's MSE on the same sequences.

One check: the filter knows the system, so it stays optimal out of distribution -- at
every r no method's ratio is below 1 beyond its interval (the smallest upper end of the
95 % intervals, over every radius and method, is at least 1).  Control: the same with a
filter given the training law instead of the true system (A scaled by 0.9 / r, its
eigenvalues moved back into the training range), which the true filter, among others,
then beats.
"""
from __future__ import annotations

import functools

import numpy as np
import pytest

from claims import _lds
from claims._lds import paired_ratio
from claims.runs import SHIFT_DEPTHS, STACK_SEEDS, TRAIN_RADIUS, shift_run, trained
from claims.seeds import rng_for
from theory.ar import ols_ar, predict_ar
from theory.kalman import kalman_predict
from theory.n4sid import n4sid_predict
from theory.systems import Systems

CLAIM = "spectral-shift"
REF = ("the second seed's advice (a blog summary of Cole et al., NeurIPS 2025), not a theorem: test "
       "outside the training radius")
N4SID_SEQUENCES = 2000
#: names of the baseline rows (they also seed each row's bootstrap, claims.seeds.rng_for).
LS_ROW, N4SID_ROW = "in-context least squares AR(2)", "N4SID"


def _stack_row(layers: int, seed_index: int) -> str:
    return f"L={layers} seed {seed_index}"


#: the coordinates of each row of the table (claims/records.py, Coords).
ROW_COORDS = {**{_stack_row(L, i): {"layers": L, "seed": i}
                 for L in SHIFT_DEPTHS for i in range(STACK_SEEDS)},
              LS_ROW: {"variant": "least-squares-ar2"}, N4SID_ROW: {"variant": "n4sid"},
              "Kalman filter (true system)": {"variant": "kalman-true-system"}}


@pytest.mark.parametrize("seed_index", range(STACK_SEEDS))
@pytest.mark.parametrize("layers", SHIFT_DEPTHS)
def test_training_run(profile, layers, seed_index):
    """One stack trained at radius 0.9 (cached); sanity: the held-out loss of its final
    weights is below the training loss of its first steps (not the heavy-tailed mean of
    the last steps' losses: claims/test_depth.py, test_training_run)."""
    run = trained(shift_run(layers, profile.stack_batch, seed_index), profile)
    assert np.isfinite(run.eval_loss) and run.eval_loss < run.loss_history[0]


@functools.lru_cache(maxsize=None)
def _table(profile) -> dict:
    """{radius: {method: (errors per sequence, errors of the filter on the same sequences)}}."""
    runs = {L: [trained(shift_run(L, profile.stack_batch, i), profile) for i in range(STACK_SEEDS)]
            for L in SHIFT_DEPTHS}
    out = {}
    for r in _lds.TEST_RADII:
        systems, y = _lds.heldout_systems("a", profile.heldout_sequences, 30, r)
        target = y[:, -1]
        kf = (kalman_predict(systems, y).prediction - target) ** 2
        wrong = Systems(A=systems.A * (TRAIN_RADIUS / r), c=systems.c, Sigma_w=systems.Sigma_w,
                        Sigma_0=systems.Sigma_0, sigma_v=systems.sigma_v, T=systems.T)
        kf_wrong = (kalman_predict(wrong, y).prediction - target) ** 2
        rows = {_stack_row(L, i): (_lds.predict(run, y) - target) ** 2
                for L, rs in runs.items() for i, run in enumerate(rs)}
        rows[LS_ROW] = (predict_ar(ols_ar(y, 2, ridge=1e-8), y, 2) - target) ** 2
        n4 = n4sid_predict(y[:N4SID_SEQUENCES]).prediction
        rows[N4SID_ROW] = (n4 - target[:N4SID_SEQUENCES]) ** 2
        out[r] = {"rows": rows, "kalman": kf, "kalman_wrong": kf_wrong}
    return out


def _ratios(table, reference: str, extra_true_filter: bool):
    """[(radius, method, ratio, lo, hi, dropped)] of every row against ``reference``; a
    non-finite prediction (N4SID's failed fits) leaves the ratio, and ``dropped`` counts it."""
    res = []
    for r, t in table.items():
        ref = t[reference]
        rows = dict(t["rows"])
        if extra_true_filter:
            rows["Kalman filter (true system)"] = t["kalman"]
        for name, err in rows.items():
            ok = np.isfinite(err)
            if ok.sum() < 2:
                raise ValueError(f"{name} at r = {r:g}: only {int(ok.sum())} finite predictions")
            ratio, lo, hi = paired_ratio(err[ok], ref[:err.size][ok], rng_for(CLAIM, reference, r, name))
            res.append((r, name, ratio, lo, hi, int(err.size - ok.sum())))
    return res


def test_the_filter_stays_optimal_out_of_distribution(claim, profile):
    table = _table(profile)
    rows = _ratios(table, "kalman", False)
    for r, name, ratio, lo, hi, dropped in rows:
        where = ROW_COORDS[name]
        claim.record(claim=CLAIM, check="mse-ratio", setting="a", radius=float(r), **where, paper_ref=REF,
                     label=f"MSE({name}) / MSE(Kalman)", measured=ratio, kind="reported",
                     runs=[shift_run(where["layers"], profile.stack_batch, where["seed"])] if "layers" in where
                     else None,
                     interval=(lo, hi), interval_kind="bootstrap95", details={"non_finite_dropped": dropped})
    wrong = _ratios(table, "kalman_wrong", True)
    for rows_, expect, what in ((rows, "holds", "the Kalman filter"),
                                (wrong, "fails", "control: a filter given the training law (A 0.9 / r)")):
        worst = min(rows_, key=lambda x: x[4])
        claim.record(
            claim=CLAIM, check="filter-lower-bound", setting="a",
            radius=f"{min(_lds.TEST_RADII):g}-{max(_lds.TEST_RADII):g}",
            variant=None if expect == "holds" else "filter-of-the-training-law", paper_ref=REF,
            label=f"smallest upper end of the 95 % interval of MSE / MSE({what}) over radii and methods",
            measured=float(worst[4]), tolerance=1.0, comparator=">=", tolerance_source="project",
            expect=expect, details={"worst": list(worst[:2]), "rows": [list(x) for x in rows_]})
    claim.check_all()
