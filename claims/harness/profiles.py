"""Run profiles for the claim suite: how much compute a check may spend.

``pytest claims`` runs the ``quick`` profile (what CI runs); ``pytest claims --profile paper``
runs the paper's protocol (docs/math.md section 2).  A claim file never hard-codes a sample
size, a step count or a number of restarts: it reads them from the :class:`Profile` it gets
from the ``profile`` fixture, so that one file serves both profiles.

The tolerance of the trained-model checks (``coef_rel_tol``, 1 %) is the project's
(the paper states none; docs/settings.md, "Tolerances") and the same in both profiles:
the quick profile may spend less compute, never accept a looser match.  A check that
cannot reach its tolerance on the quick budget is inconclusive or fails on its own
interval; it never widens the knob.

Seeds: the quick profile trains the paper's 3 seeds per setting; the paper profile
trains 8 -- the project's choice, not the paper's, made so that the share of runs that
hold can decide a per-layer statement (docs/settings.md, "Verdicts by run"): 8 of 8 has a
Clopper-Pearson lower end of 0.63 >= 1/2, while 3 of 3 has 0.29, so 3 runs decide no share.

Example
-------
>>> from claims.harness.profiles import get_profile
>>> p = get_profile("quick")
>>> p.name, p.n_seeds, p.coef_rel_tol
('quick', 3, 0.01)
>>> get_profile("paper").train_steps, get_profile("paper").n_seeds
(8000, 8)
>>> COMMON_TRAINED_WINDOWS
(2, 4)
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from claims.harness.runopts import RunOptions

__all__ = ["Profile", "QUICK", "PAPER", "PROFILES", "DEFAULT_PROFILE", "COMMON_TRAINED_WINDOWS", "get_profile"]


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
    stack_batch : sequences per optimiser step of the stacked-layer runs (the depth and
        spectral-shift claims): the project's choice in both profiles, as the paper trains
        no stack (the batch and its cost: docs/settings.md, Profiles; the stacks' protocol:
        claims/harness/runs.py).
    n_seeds : independent training runs (initialisations) per setting; the paper uses 3
        (the quick profile), the paper profile 8 (the project's choice, see above).
        Every profile trains the four symmetric settings a-d; a trained check is the
        share of its n_seeds runs that hold (docs/settings.md, "Verdicts by run").
    mc_trajectories : raw simulated trajectories (one fresh system each) for Monte-Carlo
        estimates that use no exact moment at all (e.g. the independent check of kappa).
        Products of 4-6 observations are heavy-tailed, so this is large even in the quick
        profile (see docs/notes.md, section "Raw-trajectory Monte Carlo: heavy tails").
    mc_systems : systems of a Monte Carlo over systems with exact per-system moments (the
        parity zeros of setting d, whose A has no quadrature; claims/test_banding.py).
    heldout_sequences : fresh test sequences for held-out comparisons of trained models
        (the same in both profiles, so that a trained run gets the same verdict in each).
    hypothesis_examples : ``max_examples`` of property-based claims
        (see :func:`claims.harness.seeds.claim_settings`).
    improper_systems : systems per state dimension d of the improper-learning claim (a
        quarter from each setting a-d, drawn from a seeded generator; claims/test_improper_learning.py):
        200 quick (the default), 800 paper.
    multistart : random restarts of non-convex minimisations (population-loss optima).
    twins : noise-free twins per (setting, s) cell of the trained AR(s) layers (the runs'
        own initialisations first, then draws from the init law; claims/test_training_basins.py):
        64 quick, 512 paper (the basins issue's floors).
    run : the options of the current run that are no compute budget (``--claims-random``,
        ``--retrain``; :class:`claims.harness.runopts.RunOptions`), set by the plugin on the
        ``profile`` fixture's value; not part of the profile's identity (equality, hash,
        :meth:`as_dict`).
    coef_rel_tol : tolerance of the trained-model checks (1 %, relative): the project's,
        not the paper's (docs/settings.md, "Tolerances"); the same in every profile.
    trained_windows : the windows s >= 2 whose AR(s) layers are trained (banding,
        training-basins, kalman-parity; pcg-alignment reads s = 4, always among them):
        (2, 4) quick, (2, 3, 4) paper -- the quick profile leaves s = 3 (15 runs, a fifth of
        its training) to the paper profile; the exact checks of s = 3 run in both.
    shift_depths : the depths L of the spectral-shift claim's stacks: (1,) quick, (1, 4)
        paper (each depth trains 3 radii x 3 seeds; docs/running.md, "Where the time goes").
    depth_stacks : whether the depth claim trains its grid of stacks (3 depths x 4 T x 3
        seeds = 36 runs, a third of the quick profile's training); their rows are reported,
        with no verdict (claims/test_depth.py), so the quick profile leaves them to the
        paper profile: CI checks verdicts (docs/running.md, "Where the time goes").
    """

    name: str
    description: str
    train_steps: int
    train_batch: int
    stack_batch: int
    n_seeds: int
    mc_trajectories: int
    mc_systems: int
    heldout_sequences: int
    hypothesis_examples: int
    multistart: int
    twins: int
    coef_rel_tol: float
    trained_windows: tuple
    shift_depths: tuple
    depth_stacks: bool
    improper_systems: int = 200
    run: RunOptions = dataclasses.field(default=RunOptions(), compare=False)

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"Profile.name must be a non-empty str, got {self.name!r}")
        for f in dataclasses.fields(self):
            if f.type in ("int", int):
                v = getattr(self, f.name)
                if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                    raise ValueError(f"Profile.{f.name} must be a positive int, got {v!r}")
        for name, allowed in (("trained_windows", (2, 3, 4)), ("shift_depths", (1, 4))):
            v = getattr(self, name)
            if not isinstance(v, tuple) or not v or any(x not in allowed for x in v) or list(v) != sorted(set(v)):
                raise ValueError(f"Profile.{name} must be a non-empty increasing tuple of {allowed}, got {v!r}")
        if 4 not in self.trained_windows:
            raise ValueError(f"Profile.trained_windows must hold 4 (the PCG claim's window), got {self.trained_windows!r}")
        if self.improper_systems % 4:
            raise ValueError(f"Profile.improper_systems must be a multiple of 4 (one quarter per setting a-d), "
                             f"got {self.improper_systems!r}")
        if not isinstance(self.depth_stacks, bool):
            raise ValueError(f"Profile.depth_stacks must be a bool, got {self.depth_stacks!r}")
        tol = self.coef_rel_tol
        if isinstance(tol, bool) or not isinstance(tol, (int, float)) or not 0 < tol < 1:
            raise ValueError(f"Profile.coef_rel_tol must be in (0, 1), got {tol!r}")
        object.__setattr__(self, "coef_rel_tol", float(tol))

    def as_dict(self) -> dict:
        """Plain built-in types only (for the JSON report); the run options are reported
        apart (``run`` in claims.json)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "run"}


#: What CI runs: every claim (the depth claim without its trained stacks, reported rows
#: only); mostly training (the on-disk weight cache makes reruns fast).
QUICK = Profile(
    name="quick",
    description=("CI budget: the paper's training protocol (8000 x 3000, the paper's 3 seeds), "
                 "fewer Monte Carlo samples, hypothesis examples and restarts; the trained AR(3) layers, "
                 "the depth grid's trained stacks and the spectral shift's 4-layer stacks left to the "
                 "paper profile; the project's tolerances"),
    train_steps=8000,
    train_batch=3000,
    stack_batch=1000,
    n_seeds=3,
    mc_trajectories=200_000,
    mc_systems=10_000,
    heldout_sequences=20_000,
    hypothesis_examples=20,
    multistart=8,
    twins=64,
    coef_rel_tol=0.01,
    trained_windows=(2, 4),
    shift_depths=(1,),
    depth_stacks=False,
    improper_systems=200,
)

#: The paper's protocol (docs/math.md section 2), with 8 seeds instead of the paper's 3
#: (the project's choice, see the module doc).
PAPER = Profile(
    name="paper",
    description=("the paper's protocol (docs/math.md section 2) with 8 seeds per setting "
                 "(the project's choice; the paper uses 3)"),
    train_steps=8000,
    train_batch=3000,
    stack_batch=1500,
    n_seeds=8,
    mc_trajectories=2_000_000,
    mc_systems=40_000,
    heldout_sequences=20_000,
    hypothesis_examples=200,
    multistart=64,
    twins=512,
    coef_rel_tol=0.01,
    trained_windows=(2, 3, 4),
    shift_depths=(1, 4),
    depth_stacks=True,
    improper_systems=800,
)

PROFILES: dict[str, Profile] = {p.name: p for p in (QUICK, PAPER)}
DEFAULT_PROFILE = "quick"
#: the windows s >= 2 whose AR(s) layers every profile trains, so that a headline naming
#: their checks is recorded by every published run: (2, 4)
COMMON_TRAINED_WINDOWS: tuple = tuple(s for s in PAPER.trained_windows
                                      if all(s in p.trained_windows for p in PROFILES.values()))


def get_profile(name: str) -> Profile:
    """The profile called ``name``; ``ValueError`` naming the choices otherwise."""
    try:
        return PROFILES[name]
    except (KeyError, TypeError):
        raise ValueError(
            f"unknown claims profile {name!r}; choose one of {list(PROFILES)}") from None
