"""Shared pieces of the AR(1) claims (Theorem 4.1 and the GD equivalence).

- :func:`kappa_for` -- kappa of eq. 15 for each setting at the paper's defaults, from the
  most exact route available: rational arithmetic (a), exact-up-to-rounding quadrature
  (b, c; see theory.population), Monte Carlo over systems with exact per-system moments (d).
- :func:`trained_ar1` -- the trained layer for (setting, seed index), cached on disk and
  shared by both claim files (the same seeds, so each run is trained once).
- :func:`coefficients` -- the gauge-invariant coefficients beta of a trained layer.
"""
from __future__ import annotations

import functools

import numpy as np
import pytest

from claims.harness import seed_for
from theory.population import beta_from_weights, feature_list, population_moments
from theory.systems import LDSFamily

#: seed namespace of the AR(1) training runs (shared by ar1-optimum and gd-equivalence).
TRAIN_NAMESPACE = "ar1-train"

_F = feature_list(1)
#: indices into beta for s = 1 (0-based (r, l, m)); "even" = b_2 W[1,1] + b_1 W[2,1] (1-based)
IDX_VALUE = _F.index((1, 0, 0))   # b_2 W[1,1]: the paper's family (W_V* = e_2 e_2^T)
IDX_KEY = _F.index((0, 1, 0))     # b_1 W[2,1]: the second family (MATH.md section 4)
IDX_ODD = (_F.index((0, 0, 0)), _F.index((1, 1, 0)))   # b_1 W[1,1], b_2 W[2,1]


#: Monte Carlo sizes for the references of setting d.  Fixed (not profile knobs) so that a
#: trained run is judged against the same reference in every profile.
KAPPA_D_SYSTEMS = 400_000
MOMENTS_D_SYSTEMS = 100_000


@functools.lru_cache(maxsize=None)
def kappa_for(setting: str, mc_systems: int = KAPPA_D_SYSTEMS) -> dict:
    """kappa (eq. 15) at the paper's defaults for ``setting``: value, stderr, method."""
    fam = LDSFamily(setting)
    if setting == "a":
        from theory.kappa import kappa_exact_a
        q = kappa_exact_a(fam.T, fam.d, "1/100", "1/100")
        return {"kappa": float(q), "stderr": 0.0, "method": "exact-rational", "exact": f"{q.numerator}/{q.denominator}"}
    if setting in ("b", "c", "asym"):
        return {"kappa": population_moments(fam, 1).kappa(), "stderr": 0.0, "method": "quadrature"}
    from theory.kappa import kappa_mc_moments
    res = kappa_mc_moments(fam, mc_systems, np.random.default_rng(seed_for("kappa", setting, mc_systems)))
    return {"kappa": res.kappa, "stderr": res.stderr, "method": res.method, "m": mc_systems}


def train_config(setting: str, seed_index: int, profile):
    from models.trainer import TrainConfig
    return TrainConfig(setting=setting, s=1, steps=profile.train_steps, batch=profile.train_batch,
                       seed=seed_for(TRAIN_NAMESPACE, setting, seed_index))


def trained_ar1(setting: str, seed_index: int, profile):
    """The TrainResult of one AR(1) run (trained once, then read from the disk cache)."""
    from models.cache import train_cached
    return train_cached(train_config(setting, seed_index, profile), device="auto", progress=False)


@functools.lru_cache(maxsize=None)
def moments_for(setting: str, mc_systems: int = MOMENTS_D_SYSTEMS):
    """Population feature moments (s = 1) at the defaults: quadrature, or MC for setting d."""
    fam = LDSFamily(setting)
    if setting == "d":
        return population_moments(fam, 1, method="mc-systems", m=mc_systems,
                                  rng=np.random.default_rng(seed_for("moments", setting, mc_systems)))
    return population_moments(fam, 1)


def coefficients(W_V, W_QK, moments=None) -> dict:
    """Gauge-invariant coefficients of an AR(1) layer (MATH.md sections 4 and 5).

    ``even`` = b_2 W[1,1] + b_1 W[2,1] (1-based) is what eq. 15 sets to kappa; ``family``
    says which optimal family the weights sit in ("value": W_V* = e_2 e_2^T as in the
    paper, "key": b = e_1, W[2,1] = kappa).  With population ``moments``, ``odd_share`` is
    the RMS of the prediction carried by the odd features over that of the even one,
    sqrt(beta_o^T M beta_o / beta_e^T M beta_e) -- zero at theta*.
    """
    beta = beta_from_weights(W_V, W_QK)
    even = float(beta[IDX_VALUE] + beta[IDX_KEY])
    out = {
        "even": even,
        "value_part": float(beta[IDX_VALUE]),
        "key_part": float(beta[IDX_KEY]),
        "odd_max": float(max(abs(beta[i]) for i in IDX_ODD)),
        "family": "value" if abs(beta[IDX_VALUE]) >= abs(beta[IDX_KEY]) else "key",
    }
    if moments is not None:
        odd = np.zeros_like(beta)
        odd[list(IDX_ODD)] = beta[list(IDX_ODD)]
        ev = beta - odd
        out["odd_share"] = float(np.sqrt(odd @ moments.M @ odd / (ev @ moments.M @ ev)))
    return out


# --------------------------------------------------------------------------- verdicts
# Checks of trained layers that do not reproduce at the paper's tolerance.  The training
# runs are the same in every profile (the paper's protocol, 3 seeds, shared cache) and the
# references of setting d use fixed Monte Carlo sizes, so these verdicts hold in every
# profile.  Each reason quotes the measured values (float64 evaluation, CPU, torch 2.13)
# and the tightest tolerance at which the check would hold.  Never widen a tolerance
# instead: a change that makes one of these pass shows up as a strict XPASS.

_D_WHY = (
    "Setting d (P iid N(0,1), cond(P) <= 10) is heavy-tailed: rare strongly non-normal "
    "systems dominate the 6th moment in eq. 15's denominator.  All 3 seeds agree "
    "(0.01739, 0.01734, 0.01736), so this is not seed noise, and the trained weights are "
    "not the population optimum: their population loss exceeds that of theta* by +9.6 %, "
    "+9.2 %, +9.7 % (Monte Carlo moments over 1e5 systems; details of "
    "test_trained_layer_reaches_kappa[d]).  The protocol (AdamW, clipping at norm 1, fresh "
    "batches of 3000) does not reach eq. 15's optimum for this family.")

KNOWN_COEF_FAILURES: dict[str, str] = {
    "b": ("not reproduced at 1 %: seed-mean coefficient 0.088537 vs kappa_b = 0.0874031 "
          "(quadrature, exact up to rounding) is +1.30 %; per seed +0.48 %, +2.52 %, +0.89 %. "
          "Holds at tolerance 1.3 %.  All seeds land above kappa; the paper does not state "
          "its learning rate (ours: 1e-3, chosen on setting a)."),
    "d": ("not reproduced: seed-mean coefficient 0.017318 vs kappa_d = 0.010046 +- 0.00027 "
          "(Monte Carlo, 4e5 systems) is +72.4 % (per seed +72.8 %, +71.5 %, +72.8 %); holds "
          "only at tolerance 73 %.  " + _D_WHY),
}
KNOWN_ODD_FAILURES: dict[str, str] = {}
KNOWN_GAP_FAILURES: dict[str, str] = {
    "d": ("not reproduced: RMS gap to GD(eta = kappa_d) is 17.3 % of std(y_T) (per seed "
          "19.8 %, 19.5 %, 12.6 %), tolerance 1 %; holds at 20 %.  The layer does implement one "
          "GD step (the odd share is < 1 %), but with eta ~ 0.01736, not kappa_d.  " + _D_WHY),
}
KNOWN_ETA_FAILURES: dict[str, str] = {
    "b": ("not reproduced at 1 %: best-matching step size, seed mean 0.088532 vs kappa_b = "
          "0.0874031 is +1.29 % (per seed +0.42 %, +2.87 %, +0.59 %); holds at tolerance "
          "1.3 %, the same offset as the coefficient."),
    "d": ("not reproduced: best-matching step size 0.017362 (per seed 0.017392, 0.017337, "
          "0.017357) vs kappa_d = 0.010046 is +72.8 %; holds only at 73 %.  " + _D_WHY),
}


def known_failures(known: dict[str, str], settings=("a", "b", "c", "d")) -> list:
    """Parametrize values for the settings, with xfail(strict=True) where ``known`` says."""
    return [pytest.param(s, marks=pytest.mark.xfail(strict=True, reason=known[s]))
            if s in known else s for s in settings]
