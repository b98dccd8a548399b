"""Shared pieces of the AR(s) claims for s >= 2 (``banding``: Lemma 4.1; ``pcg-alignment``: eq. 17, 18).

- the trained AR(s) layers (s = 2, 3, 4; settings a-d and the asymmetric control) come
  from the run store (claims/harness/runs.py: ``ArsLayer.config``, ``trained``), shared by the claim files.
- :func:`moments_for` -- the population moments M, c, v of docs/math.md section 2.2 by
  the route theory.population.moments_route picks: exact quadrature (settings a, b, c and
  the control), or on the Monte Carlo route (d) :func:`optimum_moments_mc`, antithetic raw
  trajectories (:data:`D_TRAJECTORIES`, one draw shared by the three windows), whose
  parity zeros hold by construction (docs/math.md section 5.6) -- so they serve the
  optimum, never the parity check.
- :func:`optimum` -- the population optimum with its in-class twins (theory.optimum),
  seeded from the claim id.
- :func:`heldout` -- held-out sequences of a setting, shared by the PCG checks.
- :func:`basins` -- where each trained run is headed: the stationary point of the population
  loss that theory.optimum's local search reaches from its weights, matched across runs by
  the point (theory.optimum.match_point) up to the loss's mirror symmetry where the law of
  A is centrally symmetric (every setting but the asymmetric control), named for display,
  with the run's excess over it (docs/settings.md, "Verdicts by basin").
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from claims.harness.params import family, point_cached
from claims._ar1 import family_key
from claims.harness.basins import BasinSplit
from claims.harness.memo import memoized
from claims.harness.runs import WINDOWS, ars_run, trained
from claims.harness.seeds import rng_for, seed_for
from theory.mc_moments import trajectory_moments_windows
from theory.optimum import StationaryPoint, match_point, nearest_stationary_point, population_optimum
from theory.parity import canonical_gauge
from theory.population import beta_from_weights, moments_route, population_moments
from theory.settings import get_setting

#: antithetic raw trajectories behind the moments of a setting without quadrature -- d
#: (docs/settings.md).
D_TRAJECTORIES = 1_000_000
#: starts of the population optimum (the issue's floor; the paper profile may use more).
MIN_STARTS = 32
#: relative support threshold of the Jaccard distance (docs/settings.md, Definitions).
JACCARD_THRESHOLD = 0.01
#: a stationary point lies in a class when its out-of-class share is at most this (as for
#: the optimum in claims/test_banding.py; docs/settings.md).
POINT_SHARE_TOL = 1e-8


@point_cached
def optimum_moments_mc(setting: str, m: int = D_TRAJECTORIES) -> dict:
    """The Monte Carlo estimator that serves the optimum and the basins, on the Monte Carlo
    route: the moments for every window from one draw of ``m`` antithetic raw trajectories
    (shared on disk between processes, claims/harness/memo.py).  Cheap, and the draw keeps
    the central symmetry A ~ -A by construction -- so its parity zeros hold by construction
    and it never serves the parity check (which takes Monte Carlo over systems with exact
    per-system moments, theory.population "mc-systems")."""
    fam = family(setting)
    return memoized("d-moments", [family_key(fam), list(WINDOWS), m, seed_for("ars-moments", setting, m)],
                    ("theory.mc_moments",),
                    lambda: trajectory_moments_windows(fam, WINDOWS, m,
                                                       rng_for("ars-moments", setting, m), antithetic=True))


def require_trained_window(profile, s: int) -> None:
    """Skip the calling check where ``profile`` trains no AR(s) layer of window s
    (``Profile.trained_windows``; s = 1 is the AR(1) runs, trained in every profile)."""
    if s != 1 and s not in profile.trained_windows:
        pytest.skip(f"profile {profile.name}: the trained AR({s}) layers are the paper profile's "
                    f"(this profile trains s in {list(profile.trained_windows)})")


@point_cached
def moments_for(setting: str, s: int):
    """Population moments at the paper's defaults by the setting's route
    (theory.population.moments_route; module doc)."""
    fam = family(setting)
    if moments_route(fam) == "monte-carlo":
        return optimum_moments_mc(setting)[s]
    return population_moments(fam, s)


def moments_key(mom) -> list:
    """What identifies population moments as an input of a memo (claims/harness/memo.py)."""
    return [mom.s, mom.M, mom.c, float(mom.v), mom.M_se, mom.c_se, float(mom.v_se), mom.method, int(mom.m),
            None if mom.batches is None else [np.asarray(x) for x in mom.batches]]


@point_cached
def optimum(setting: str, s: int, starts: int):
    """theory.optimum.population_optimum on :func:`moments_for`, seeded from the claim id
    (shared on disk between processes, claims/harness/memo.py)."""
    mom, seed, n = moments_for(setting, s), seed_for("banding", "optimum", setting, s), max(MIN_STARTS, starts)
    return memoized("optimum", [moments_key(mom), seed, n], ("theory.optimum",),
                    lambda: population_optimum(mom, seed, starts=n))


@point_cached
def heldout_with_systems(setting: str, m: int):
    """``m`` held-out systems of a setting at the defaults and one sequence each (named seed):
    (Systems, y (m, T)).  The Kalman claims run the filter, which knows the system, on the
    very sequences of the PCG checks."""
    systems, y = family(setting).sample(rng_for("ars-heldout", setting, m), m)
    y.setflags(write=False)
    return systems, y


def heldout(setting: str, m: int) -> np.ndarray:
    """The sequences (m, T) of :func:`heldout_with_systems`."""
    return heldout_with_systems(setting, m)[1]


@dataclass(frozen=True)
class Basin:
    """A stationary point of the population loss that runs are headed for: its display
    ``name`` (``optimum``, ``local-min b-odd +3.30 %``, ``local-min out-of-class +1.62 %``,
    ``saddle ...``; never used to match), the point, its excess over L* and its kind."""

    name: str
    point: StationaryPoint
    rel_excess: float

    def to_dict(self) -> dict:
        V, Q = canonical_gauge(self.point.W_V, self.point.W_QK)
        s = V.shape[0] - 1
        p = self.point
        return {"name": self.name, "loss": p.loss, "rel_excess": self.rel_excess, "kind": p.kind,
                "class": p.cls if p.out_of_class_share <= POINT_SHARE_TOL else None,
                "out_of_class_share": p.out_of_class_share, "odd_share": p.odd_share,
                "hessian_min_eig": p.hessian_min_eig, "converged": p.converged,
                "b": V[s].tolist(), "W_QK": Q[:, :s].tolist()}


class BasinBook:
    """The distinct stationary points met so far in one (setting, s) cell, matched by the
    point (theory.optimum.match_point; a point and its mirror image are one basin where the
    law of A is centrally symmetric, since L and every measure of the checks are the same at
    both), the optimum first.  ``place`` returns the basin of a point and whether the point
    is the basin's mirror image, adding the basin when new; names are unique in the book."""

    def __init__(self, setting: str, s: int, profile):
        opt = optimum(setting, s, profile.multistart)
        self.L_star = opt.loss
        self.moments = moments_for(setting, s)
        self.mirror = get_setting(setting).symmetric
        self._opt = (opt.loss, opt.W_V, opt.W_QK)
        self.basins: list[Basin] = []

    def _match(self, p: StationaryPoint, loss, W_V, W_QK):
        return match_point(p.loss, p.W_V, p.W_QK, loss, W_V, W_QK, mirror=self.mirror)

    def _name(self, p: StationaryPoint, rel: float) -> str:
        if self._match(p, *self._opt):
            return "optimum"
        cls = p.cls if p.out_of_class_share <= POINT_SHARE_TOL else "out-of-class"
        base = f"{p.kind.replace(' ', '-')} {cls} {100 * rel:+.2f} %"
        taken = {b.name for b in self.basins}
        name, k = base, 2
        while name in taken:
            name, k = f"{base} #{k}", k + 1
        return name

    def place(self, p: StationaryPoint) -> tuple[Basin, bool]:
        for b in self.basins:
            how = self._match(p, b.point.loss, b.point.W_V, b.point.W_QK)
            if how:
                return b, how == "mirror"
        rel = (p.loss - self.L_star) / self.L_star
        b = Basin(self._name(p, rel), p, float(rel))
        self.basins.append(b)
        return b, False

    def headed_for(self, W_V, W_QK) -> tuple[Basin, float, bool]:
        """The basin of the point theory.optimum's local search reaches from (W_V, W_QK), the
        excess of the weights over that point, (L(theta) - L(point)) / L(point), and whether
        the point is the basin's mirror image."""
        b, mirrored = self.place(nearest_stationary_point(self.moments, W_V, W_QK))
        loss = float(self.moments.loss(beta_from_weights(W_V, W_QK)))
        return b, (loss - b.point.loss) / b.point.loss, mirrored


@dataclass(frozen=True)
class RunBasins:
    """Where each trained run of a cell is headed (:func:`basins`)."""

    labels: tuple          # basin name per run, in seed order
    run_excess: tuple      # (L(theta_run) - L(point)) / L(point) per run
    mirrored: tuple        # per run: headed for the mirror image of the basin's point
    basins: tuple          # Basin s reached, lowest point first

    def split(self, shared_stderr=None) -> BasinSplit:
        return BasinSplit(self.labels, tuple(b.name for b in self.basins), shared_stderr or {})

    def per_run(self) -> dict:
        """Per-run lists (``*_per_seed``, which the records turn into per-run extras): the
        basin, the run's excess over its point, the point's excess over L* and its loss, and
        whether the run is headed for the point's mirror image."""
        by = {b.name: b for b in self.basins}
        return {"basin_per_seed": list(self.labels),
                "excess_over_basin_per_seed": list(self.run_excess),
                "basin_rel_excess_per_seed": [by[x].rel_excess for x in self.labels],
                "basin_loss_per_seed": [by[x].point.loss for x in self.labels],
                "basin_mirror_per_seed": list(self.mirrored)}

    def details(self) -> dict:
        """:meth:`per_run` and the points themselves, for the records' details."""
        return {**self.per_run(),
                "basins": [dict(b.to_dict(), runs=[i for i, x in enumerate(self.labels) if x == b.name])
                           for b in self.basins]}


@point_cached
def book(setting: str, s: int, profile) -> BasinBook:
    """The cell's basin book, shared by the runs and their noise-free twins (so both name a
    point alike)."""
    return BasinBook(setting, s, profile)


@point_cached
def basins(setting: str, s: int, profile) -> RunBasins:
    """Where each of the profile's trained runs of (setting, s) is headed (module doc); none
    under ``--claims-untrained`` (claims/harness/runopts.py)."""
    if profile.run.untrained:
        return RunBasins(labels=(), run_excess=(), mirrored=(), basins=())
    bk = book(setting, s, profile)
    placed = [bk.headed_for(r.W_V, r.W_QK)
              for r in (trained(ars_run(setting, s, i), profile) for i in range(profile.n_seeds))]
    reached = {b.name for b, _, _ in placed}
    return RunBasins(labels=tuple(b.name for b, _, _ in placed), run_excess=tuple(float(e) for _, e, _ in placed),
                     mirrored=tuple(bool(m) for _, _, m in placed),
                     basins=tuple(sorted((b for b in bk.basins if b.name in reached), key=lambda b: b.point.loss)))
