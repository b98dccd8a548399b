"""Shared pieces of the AR(1) claims (Theorem 4.1 and the GD equivalence).

- :func:`kappa_for` -- kappa of eq. 15 for each setting at the paper's defaults, from the
  most exact route available (theory.kappa.kappa, the one place that picks a route):
  rational arithmetic (a), exact-up-to-rounding quadrature (b, c, the control), Monte
  Carlo over systems with exact per-system moments (d; computed once and shared on disk
  between processes, claims/harness/memo.py).
- :func:`moments_for` -- the population moments (s = 1) by the route that
  theory.population.moments_route picks: the quadrature, or Monte Carlo over systems with
  exact per-system moments (:func:`reference_moments_mc`, the estimator that serves a
  reference with standard errors).
- the trained layers themselves come from the run store (claims/harness/runs.py: ``Ar1Layer.config``,
  ``trained``), shared by both claim files (the same seeds, so each run is trained once).
- :func:`coefficients` -- the gauge-invariant coefficients beta of a trained layer.
"""
from __future__ import annotations


import numpy as np

from claims.harness.params import family, point_cached
from claims.harness.memo import memoized
from claims.harness.seeds import seed_for
from theory.kappa import kappa
from theory.population import beta_from_weights, feature_list, moments_route, population_moments
from theory.systems import LDSFamily

_F = feature_list(1)
#: indices into beta for s = 1 (0-based (r, l, m)); "even" = b_2 W[1,1] + b_1 W[2,1] (1-based)
IDX_VALUE = _F.index((1, 0, 0))   # b_2 W[1,1]: the paper's family (W_V* = e_2 e_2^T)
IDX_KEY = _F.index((0, 1, 0))     # b_1 W[2,1]: the second family (docs/math.md section 4)
IDX_ODD = (_F.index((0, 0, 0)), _F.index((1, 1, 0)))   # b_1 W[1,1], b_2 W[2,1]


#: Monte Carlo sizes for the references of setting d.  Fixed (not profile knobs) so that a
#: trained run is judged against the same reference in every profile.
KAPPA_D_SYSTEMS = 2_000_000
MOMENTS_D_SYSTEMS = 100_000


def family_key(fam: LDSFamily) -> list:
    """What identifies a family as an input of a memo (claims/harness/memo.py): every field."""
    return [fam.setting, fam.d, fam.T, fam.sigma_w, fam.sigma_v, fam.sigma_0, fam.cond_max, fam.radius]


@point_cached
def kappa_for(setting: str, mc_systems: int = KAPPA_D_SYSTEMS) -> dict:
    """kappa (eq. 15) at the session's point (claims/harness/params.py) for ``setting``: value, stderr, method."""
    fam, seed = family(setting), seed_for("kappa", setting, mc_systems)
    res = memoized("kappa", [family_key(fam), "auto", mc_systems, seed], ("theory.kappa",),
                   lambda: kappa(fam, method="auto", m=mc_systems, seed=seed))
    out = {"kappa": res.kappa, "stderr": res.stderr, "method": res.method}
    if res.exact is not None:
        out["exact"] = f"{res.exact.numerator}/{res.exact.denominator}"
    if res.method.startswith("mc"):
        out["m"] = mc_systems
    return out


@point_cached
def moments_for(setting: str, mc_systems: int = MOMENTS_D_SYSTEMS):
    """Population feature moments (s = 1) at the defaults by the setting's route
    (theory.population.moments_route): the quadrature, or on the Monte Carlo route
    :func:`reference_moments_mc`."""
    fam = family(setting)
    if moments_route(fam) == "monte-carlo":
        return reference_moments_mc(fam, mc_systems)
    return population_moments(fam, 1)


def reference_moments_mc(fam: LDSFamily, mc_systems: int):
    """The Monte Carlo estimator that serves a reference the trained AR(1) layers are judged
    against: ``mc_systems`` systems, each with its exact moments (theory.population,
    "mc-systems"), so every entry is unbiased and carries its standard error (the odd
    share is read from M; no antithetic pairing, which would impose its zeros).  Seeded
    by (setting, mc_systems); shared on disk between processes (claims/harness/memo.py)."""
    seed = seed_for("moments", fam.setting, mc_systems)
    return memoized("ar1-moments", [family_key(fam), 1, "mc-systems", mc_systems, seed], ("theory.population",),
                    lambda: population_moments(fam, 1, method="mc-systems", m=mc_systems,
                                               rng=np.random.default_rng(seed)))


def coefficients(W_V, W_QK, moments=None) -> dict:
    """Gauge-invariant coefficients of an AR(1) layer (docs/math.md sections 4 and 5).

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
        "family": "value" if abs(beta[IDX_VALUE]) >= abs(beta[IDX_KEY]) else "key",
    }
    if moments is not None:
        odd = np.zeros_like(beta)
        odd[list(IDX_ODD)] = beta[list(IDX_ODD)]
        ev = beta - odd
        out["odd_share"] = float(np.sqrt(odd @ moments.M @ odd / (ev @ moments.M @ ev)))
    return out


# Trained checks that do not reproduce are listed by check_id in claims/harness/known.py (none of
# the AR(1) checks today).
