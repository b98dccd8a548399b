"""Shared pieces of the AR(s) claims for s >= 2 (``banding``: Lemma 4.1; ``pcg-alignment``: eq. 17, 18).

- :func:`train_config`, :func:`trained_ars` -- the trained AR(s) layers (s = 2, 3, 4;
  settings a-d and the asymmetric control), trained once and cached on disk like the
  AR(1) runs (claims/_ar1.py), shared by both claim files.
- :func:`moments_for` -- the population moments M, c, v of docs/math.md section 2.2:
  exact quadrature in settings a, b, c and the control; in setting d antithetic raw
  trajectories (:data:`D_TRAJECTORIES`, one draw shared by the three windows), whose
  parity zeros hold by construction (docs/math.md section 5.6) -- so they serve the
  optimum, never the parity check.
- :func:`optimum` -- the population optimum with its in-class twins (theory.optimum),
  seeded from the claim id.
- :func:`heldout` -- held-out sequences of a setting, shared by the PCG checks.
"""
from __future__ import annotations

import functools

import numpy as np

from claims.seeds import rng_for, seed_for
from theory.mc_moments import trajectory_moments_windows
from theory.optimum import population_optimum
from theory.population import population_moments
from theory.systems import LDSFamily

#: seed namespace of the AR(s) training runs, s >= 2 (shared by banding and pcg-alignment).
TRAIN_NAMESPACE = "ars-train"
#: windows and settings of the trained AR(s) layers (the control "asym" included).
WINDOWS = (2, 3, 4)
TRAIN_SETTINGS = ("a", "b", "c", "d", "asym")
#: peak learning rate and AdamW betas of the AR(s) runs, s >= 2 (the project's choice;
#: docs/settings.md, "Training", and docs/notes.md, "Learning rate and betas for s >= 2").
ARS_LR = 3e-2
ARS_BETAS = (0.9, 0.99)
#: antithetic raw trajectories behind the moments of setting d (docs/settings.md).
D_TRAJECTORIES = 1_000_000
#: starts of the population optimum (the issue's floor; the paper profile may use more).
MIN_STARTS = 32
#: relative support threshold of the Jaccard distance (docs/settings.md, Definitions).
JACCARD_THRESHOLD = 0.01


def train_config(setting: str, s: int, seed_index: int, profile):
    from models.trainer import TrainConfig
    return TrainConfig(setting=setting, s=s, steps=profile.train_steps, batch=profile.train_batch,
                       lr=ARS_LR, betas=ARS_BETAS, seed=seed_for(TRAIN_NAMESPACE, setting, s, seed_index))


def trained_ars(setting: str, s: int, seed_index: int, profile):
    """The TrainResult of one AR(s) run (trained once, then read from the disk cache)."""
    from models.cache import train_cached
    return train_cached(train_config(setting, s, seed_index, profile), device="auto",
                        progress=False, stale_before=profile.run.retrain_before)


@functools.lru_cache(maxsize=None)
def _d_moments(m: int = D_TRAJECTORIES) -> dict:
    return trajectory_moments_windows(LDSFamily("d"), WINDOWS, m, rng_for("ars-moments", "d", m),
                                      antithetic=True)


@functools.lru_cache(maxsize=None)
def moments_for(setting: str, s: int):
    """Population moments at the paper's defaults (module doc)."""
    if setting == "d":
        return _d_moments()[s]
    return population_moments(LDSFamily(setting), s)


@functools.lru_cache(maxsize=None)
def optimum(setting: str, s: int, starts: int):
    """theory.optimum.population_optimum on :func:`moments_for`, seeded from the claim id."""
    return population_optimum(moments_for(setting, s), seed_for("banding", "optimum", setting, s),
                              starts=max(MIN_STARTS, starts))


@functools.lru_cache(maxsize=None)
def heldout_with_systems(setting: str, m: int):
    """``m`` held-out systems of a setting at the defaults and one sequence each (named seed):
    (Systems, y (m, T)).  The Kalman claims run the filter, which knows the system, on the
    very sequences of the PCG checks."""
    systems, y = LDSFamily(setting).sample(rng_for("ars-heldout", setting, m), m)
    y.setflags(write=False)
    return systems, y


def heldout(setting: str, m: int) -> np.ndarray:
    """The sequences (m, T) of :func:`heldout_with_systems`."""
    return heldout_with_systems(setting, m)[1]
