"""Run profiles for the claim suite: how much compute a check may spend.

``pytest claims`` runs the ``quick`` profile (what CI runs); ``pytest claims --profile paper``
runs the paper's protocol (docs/math.md section 2).  A claim file never hard-codes a sample
size, a step count or a number of restarts: it reads them from the :class:`Profile` it gets
from the ``profile`` fixture, so that one file serves both profiles.

Tolerances that the paper states (``coef_rel_tol``) are the same in both profiles: the
quick profile may spend less compute, never accept a looser match.  A check that cannot
reach the paper's tolerance on the quick budget must say so itself (its own documented
``xfail``/``skip`` reason), not widen the knob.

Example
-------
>>> from claims.profiles import get_profile
>>> p = get_profile("quick")
>>> p.name, p.n_seeds, p.coef_rel_tol
('quick', 3, 0.01)
>>> get_profile("paper").train_steps
8000
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

__all__ = ["Profile", "QUICK", "PAPER", "PROFILES", "DEFAULT_PROFILE", "get_profile"]


@dataclass(frozen=True)
class Profile:
    """Named numeric knobs read by the claim files (every knob is read by a claim).

    Attributes
    ----------
    name : profile name, ``"quick"`` or ``"paper"``.
    description : one line, printed in the pytest header and the reports.
    train_steps : optimiser steps per training run of the attention layer
        (paper: 8000).
    train_batch : sequences per optimiser step (paper: 3000 for the AR(1) runs).
    n_seeds : independent training runs (initialisations) per setting (paper: 3); every
        profile trains the four symmetric settings a-d.
    mc_trajectories : raw simulated trajectories (one fresh system each) for Monte-Carlo
        estimates that use no exact moment at all (e.g. the independent check of kappa).
        Products of 4-6 observations are heavy-tailed, so this is large even in the quick
        profile (see docs/notes.md, section "Raw-trajectory Monte Carlo: heavy tails").
    heldout_sequences : fresh test sequences for held-out comparisons of trained models
        (the same in both profiles, so that a trained run gets the same verdict in each).
    hypothesis_examples : ``max_examples`` of property-based claims
        (see :func:`claims.seeds.claim_settings`).
    multistart : random restarts of non-convex minimisations (population-loss optima).
    coef_rel_tol : relative tolerance on fitted/optimal coefficients that the paper
        states (1 %); the same in every profile.
    """

    name: str
    description: str
    train_steps: int
    train_batch: int
    n_seeds: int
    mc_trajectories: int
    heldout_sequences: int
    hypothesis_examples: int
    multistart: int
    coef_rel_tol: float

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"Profile.name must be a non-empty str, got {self.name!r}")
        for f in dataclasses.fields(self):
            if f.type in ("int", int):
                v = getattr(self, f.name)
                if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                    raise ValueError(f"Profile.{f.name} must be a positive int, got {v!r}")
        tol = self.coef_rel_tol
        if isinstance(tol, bool) or not isinstance(tol, (int, float)) or not 0 < tol < 1:
            raise ValueError(f"Profile.coef_rel_tol must be in (0, 1), got {tol!r}")
        object.__setattr__(self, "coef_rel_tol", float(tol))

    def as_dict(self) -> dict:
        """Plain built-in types only (for the JSON report)."""
        return dataclasses.asdict(self)


#: What CI runs: every claim; about ten minutes on two CPU cores, mostly training (the
#: on-disk weight cache makes reruns fast).
QUICK = Profile(
    name="quick",
    description=("CI budget: the paper's training protocol (8000 x 3000, 3 seeds), fewer Monte "
                 "Carlo samples, hypothesis examples and restarts; the paper's tolerances"),
    train_steps=8000,
    train_batch=3000,
    n_seeds=3,
    mc_trajectories=200_000,
    heldout_sequences=20_000,
    hypothesis_examples=20,
    multistart=8,
    coef_rel_tol=0.01,
)

#: The paper's protocol (docs/math.md section 2).
PAPER = Profile(
    name="paper",
    description="the paper's protocol (docs/math.md section 2)",
    train_steps=8000,
    train_batch=3000,
    n_seeds=3,
    mc_trajectories=2_000_000,
    heldout_sequences=20_000,
    hypothesis_examples=200,
    multistart=64,
    coef_rel_tol=0.01,
)

PROFILES: dict[str, Profile] = {p.name: p for p in (QUICK, PAPER)}
DEFAULT_PROFILE = "quick"


def get_profile(name: str) -> Profile:
    """The profile called ``name``; ``ValueError`` naming the choices otherwise."""
    try:
        return PROFILES[name]
    except (KeyError, TypeError):
        raise ValueError(
            f"unknown claims profile {name!r}; choose one of {list(PROFILES)}") from None
