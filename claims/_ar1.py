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


@functools.lru_cache(maxsize=None)
def kappa_for(setting: str, mc_systems: int = 200_000) -> dict:
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


def coefficients(W_V, W_QK) -> dict:
    """Gauge-invariant coefficients of an AR(1) layer (MATH.md section 4)."""
    beta = beta_from_weights(W_V, W_QK)
    even = float(beta[IDX_VALUE] + beta[IDX_KEY])
    return {
        "even": even,
        "value_part": float(beta[IDX_VALUE]),
        "key_part": float(beta[IDX_KEY]),
        "odd_max": float(max(abs(beta[i]) for i in IDX_ODD)),
        "family": "value" if abs(beta[IDX_VALUE]) >= abs(beta[IDX_KEY]) else "key",
        "value_share": float(beta[IDX_VALUE] / even) if even != 0 else float("nan"),
    }
