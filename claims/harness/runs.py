"""The run store: every trained run a claim uses -- its id, its configuration, its weights.

A **run id** names a configuration in the claims' words (family, setting, window, depth,
horizon, the stacks' batch, the seed index), never the cache key, so the same id names the
same configuration wherever it is trained.  Each kind of id is one frozen type: its id
(``.run``, ``str()``), its parser (``Kind.parse(id)``, the inverse of ``.run``), the
:class:`RunRef` a record names (``.ref``) and its configuration for a profile (``.config``):

* :class:`Ar1Layer`  ``ar1/<setting>/seed=<i>``: an AR(1) layer of the paper's protocol;
* :class:`ArsLayer`  ``ars/<setting>/s=<s>/seed=<i>``: an AR(s) layer, s >= 2;
* :class:`DepthStack` ``depth/L=<L>/T=<T>/batch=<b>/seed=<i>``: a stack of the depth claim;
* :class:`ShiftStack` ``shift/L=<L>/r=<r>/batch=<b>/seed=<i>``: a spectral-shift stack trained at radius r;
* :class:`SensitivityRun` ``sensitivity/<setting>/<variant>/seed=<i>``: an AR(1) run with one choice changed;
* several stacks read together by one value, no run of their own (``config``: their members'):
  :class:`DepthGroup` (``T=10+80``), :class:`ShiftPair` (``r=1+0.9``), :class:`ShiftNullPair`
  (``r=0.9+0.9-rerun``).

Every kind also carries the point of the family's parameters it trains at (claims/harness/params.py:
the session's point unless given); away from the default its id starts with the point's
prefix, ``@T=60,d=3/ar1/a/seed=0``, naming only the parameters the kind follows (a depth-grid
stack keeps its own T); the grammar is claims/harness/runform.py.  A layer's seed i is the same run in both profiles; a stack carries the profile's
``stack_batch`` in its id.  :func:`config_for` builds an id's
:class:`~models.config.TrainConfig` (``ldsicl train --claim <id>`` too); :func:`trained`
returns its weights, trained once per configuration and code fingerprint, then read from
the disk cache (models/cache.py).  Which runs a claim reads is its spec's
(``claims/specs/<claim>.py``).  Learning rates and betas are the project's, each chosen by
a scan of its own on the held-out error, never on a claim's metric (docs/notes.md,
"Learning rate and betas for s >= 2", "Stacks: learning rate per depth"): :data:`ARS_LR`,
:data:`ARS_BETAS`, :data:`STACK_LR` per depth, :data:`SHIFT_LR` per depth and radius.
Every stack trains on the reference law (claims/harness/coverage.py) with eigenvalues in
[-:data:`TRAIN_RADIUS`, :data:`TRAIN_RADIUS`], the spectral shift's other trainings at
:data:`SHIFT_RADII`.

>>> from claims.harness.profiles import QUICK
>>> ArsLayer("d", 4, 2).run, str(ShiftStack(1, 1.0, 1000, 0))
('ars/d/s=4/seed=2', 'shift/L=1/r=1/batch=1000/seed=0')
>>> ShiftStack.parse("shift/L=1/r=1/batch=1000/seed=0") == ShiftStack(1, 1.0, 1000, 0)
True
>>> c = config_for("ars/a/s=4/seed=0", QUICK)
>>> (c.setting, c.s, c.lr, c.betas, c.steps, c.batch), c == ArsLayer("a", 4, 0).config(QUICK)
(('a', 4, 0.03, (0.9, 0.99), 8000, 3000), True)
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from claims.harness.coverage import CONTROLS, REFERENCE, SYMMETRIC
from claims.harness.identity import RunRef
from claims.harness.params import PARAMS, Point, split_prefix
from claims.harness.runform import SEED_SUFFIX, RunKind, point_field, seed_index
from claims.harness.seeds import seed_for

__all__ = ["Ar1Layer", "ArsLayer", "DepthStack", "DepthGroup", "ShiftStack", "ShiftPair", "ShiftNullPair",
           "SensitivityRun", "KINDS", "TRAINED_KINDS", "parse_run", "seed_index", "SEED_SUFFIX", "ar1_run", "ars_run", "trained_layer_run",
           "depth_run", "depth_group", "shift_run", "shift_pair", "shift_null_pair", "sensitivity_run",
           "config_for", "trained", "AR1_SETTINGS", "ARS_SETTINGS", "WINDOWS", "ARS_LR", "ARS_BETAS", "STACK_S", "DEPTHS",
           "DEPTH_T", "SHIFT_DEPTHS", "TRAIN_RADIUS", "SHIFT_RADII", "STACK_LR", "SHIFT_LR", "STACK_BETAS",
           "STACK_SEEDS", "SHIFT_NULL_SEEDS", "SENSITIVITY_SETTINGS", "SENSITIVITY_VARIANTS", "SENSITIVITY_SEEDS"]

# ----------------------------------------------------------------------------- what is trained
#: seed namespaces (claims/harness/seeds.py): one per family of runs, whichever claims read it
AR1_NAMESPACE, ARS_NAMESPACE, DEPTH_NAMESPACE, SHIFT_NAMESPACE = "ar1-train", "ars-train", "depth-train", "shift-train"

#: the AR(1) layers: the symmetric settings.
AR1_SETTINGS = SYMMETRIC
#: the AR(s) layers, s >= 2: windows and settings (the asymmetric controls included).
WINDOWS = (2, 3, 4)
ARS_SETTINGS = SYMMETRIC + CONTROLS
#: peak learning rate and AdamW betas of the AR(s) runs (module doc).
ARS_LR = 3e-2
ARS_BETAS = (0.9, 0.99)

#: the stacks (the REFERENCE law, window STACK_S): the depth grid and the spectral shift's depths
#: (Profile.shift_depths: a profile's), at TRAIN_RADIUS; STACK_SEEDS seeds in both profiles (the paper's 3).
STACK_S = 2
#: the parameters of the session's point a depth-grid stack follows: all but T, its grid's axis
DEPTH_FOLLOWS = tuple(p for p in PARAMS if p != "T")
DEPTHS = (1, 2, 4)
DEPTH_T = (10, 20, 40, 80)
SHIFT_DEPTHS = (1, 4)
TRAIN_RADIUS = 0.9
#: the spectral-shift claim's training radii: the narrower control, the stacks' own, the wider
SHIFT_RADII = (0.5, TRAIN_RADIUS, 1.0)
#: peak learning rate of a stack of L layers (module doc)
STACK_LR = {1: 1e-2, 2: 1e-2, 4: 1e-2}
#: the spectral shift's stacks: the peak learning rate per (depth, training radius) where the
#: scan at that radius chose another than STACK_LR (docs/notes.md; stack_lr.py --shift)
SHIFT_LR = {(1, 1.0): 1e-1, (4, 1.0): 3e-3}
STACK_BETAS = (0.9, 0.99)
STACK_SEEDS = 3
#: the spectral shift's null control: the stacks at TRAIN_RADIUS trained again with other seeds
SHIFT_NULL_SEEDS = range(STACK_SEEDS, 2 * STACK_SEEDS)

#: training-sensitivity (paper profile): one choice changed at a time against the AR(1)
#: baseline (docs/settings.md, Training), on the first SENSITIVITY_SEEDS AR(1) seeds of the
#: first two symmetric settings (24 runs: the table's budget, the project's choice).
SENSITIVITY_SETTINGS = SYMMETRIC[:2]
SENSITIVITY_VARIANTS = {"weight_decay=0.01": {"weight_decay": 0.01}, "grad_clip=1": {"grad_clip": 1.0},
                        "lr=5e-4": {"lr": 5e-4}, "lr=2e-3": {"lr": 2e-3}}
SENSITIVITY_SEEDS = 3


# ----------------------------------------------------------------------------- what may be trained
def _one_of(what: str, value, allowed, shown=None) -> None:
    if value not in allowed:
        raise ValueError(f"no claim trains {what} {value if shown is None else shown!r} "
                         f"(the claims train {list(allowed)})")


def _stack_batch(batch: int, profile) -> None:
    if batch != profile.stack_batch:
        raise ValueError(f"a stack of batch {batch} is not a run of the {profile.name} profile "
                         f"(its stacks train at batch {profile.stack_batch})")
@dataclass(frozen=True)
class Ar1Layer(RunKind):
    """An AR(1) layer: the paper's protocol at the profile's steps and batch (8000 x 3000)."""

    setting: str
    seed: int
    FORM: ClassVar = "ar1/{setting}/seed={seed}"
    point: Point = point_field()

    def config(self, profile) -> TrainConfig:
        _one_of("an AR(1) layer of setting", self.setting, AR1_SETTINGS)
        return _train_config(self.point, setting=self.setting, s=1, steps=profile.train_steps, batch=profile.train_batch,
                           seed=seed_for(AR1_NAMESPACE, self.setting, self.seed))


@dataclass(frozen=True)
class ArsLayer(RunKind):
    """An AR(s) layer, s >= 2: the AR(1) protocol at ARS_LR, ARS_BETAS; configured for every window
    (the twins of an untrained one start from it), ``check``: is the window trained."""

    setting: str
    s: int
    seed: int
    FORM: ClassVar = "ars/{setting}/s={s}/seed={seed}"
    point: Point = point_field()

    def _grid(self) -> None:
        _one_of("an AR(s) layer of setting", self.setting, ARS_SETTINGS)
        _one_of("an AR(s) layer of window s =", self.s, WINDOWS)

    def check(self, profile) -> None:
        self._grid()
        if self.s not in profile.trained_windows:
            raise ValueError(f"window s = {self.s} is not trained in the {profile.name} profile "
                             f"(it trains s in {list(profile.trained_windows)})")

    def config(self, profile) -> TrainConfig:
        self._grid()
        return _train_config(self.point, setting=self.setting, s=self.s, steps=profile.train_steps, batch=profile.train_batch,
                           lr=ARS_LR, betas=ARS_BETAS, seed=seed_for(ARS_NAMESPACE, self.setting, self.s, self.seed))


@dataclass(frozen=True)
class DepthStack(RunKind):
    """A stack of the depth grid: the REFERENCE law, window STACK_S, horizon T, the profile's stack batch."""

    layers: int
    T: int
    batch: int
    seed: int
    FORM: ClassVar = "depth/L={layers}/T={T}/batch={batch}/seed={seed}"
    FOLLOWS: ClassVar = DEPTH_FOLLOWS
    point: Point = point_field()

    def check(self, profile) -> None:
        _one_of("a depth-grid stack of L =", self.layers, DEPTHS)
        _one_of("a depth-grid stack of T =", self.T, DEPTH_T)
        _stack_batch(self.batch, profile)

    def config(self, profile) -> TrainConfig:
        self.check(profile)
        return _train_config(self.point, setting=REFERENCE, s=STACK_S, T=self.T, layers=self.layers, radius=TRAIN_RADIUS,
                           steps=profile.train_steps, batch=profile.stack_batch, lr=STACK_LR[self.layers],
                           betas=STACK_BETAS, seed=seed_for(DEPTH_NAMESPACE, self.layers, self.T, self.seed))


@dataclass(frozen=True)
class ShiftStack(RunKind):
    """A stack of the spectral-shift claim: as the depth grid at T = 30, systems of ``radius``
    (one of SHIFT_RADII); the seed of the run at TRAIN_RADIUS is the one it had before the
    claim trained other radii, so that each radius starts from its own seed."""

    layers: int
    radius: float
    batch: int
    seed: int
    FORM: ClassVar = "shift/L={layers}/r={radius}/batch={batch}/seed={seed}"
    point: Point = point_field()

    def check(self, profile) -> None:
        _one_of("a spectral-shift stack of L =", self.layers, SHIFT_DEPTHS)
        _one_of("a spectral-shift stack of radius r =", self.radius, SHIFT_RADII, shown=f"{self.radius:g}")
        if self.layers not in profile.shift_depths:
            raise ValueError(f"a spectral-shift stack of L = {self.layers} is not trained in the {profile.name} "
                             f"profile (it trains L in {list(profile.shift_depths)})")
        _stack_batch(self.batch, profile)

    def config(self, profile) -> TrainConfig:
        self.check(profile)
        L, r = self.layers, self.radius
        key = (L, self.seed) if r == TRAIN_RADIUS else (L, r, self.seed)
        return _train_config(self.point, setting=REFERENCE, s=STACK_S, layers=L, radius=r, steps=profile.train_steps,
                           batch=profile.stack_batch, lr=SHIFT_LR.get((L, r), STACK_LR[L]),
                           betas=STACK_BETAS, seed=seed_for(SHIFT_NAMESPACE, *key))


@dataclass(frozen=True)
class SensitivityRun(RunKind):
    """The AR(1) run of the same seed with one choice of SENSITIVITY_VARIANTS changed."""

    setting: str
    variant: str
    seed: int
    FORM: ClassVar = "sensitivity/{setting}/{variant}/seed={seed}"
    point: Point = point_field()

    def config(self, profile) -> TrainConfig:
        _one_of("a sensitivity run of setting", self.setting, SENSITIVITY_SETTINGS)
        if self.variant not in SENSITIVITY_VARIANTS:
            raise ValueError(f"variant must be one of {list(SENSITIVITY_VARIANTS)}, got {self.variant!r}")
        return Ar1Layer(self.setting, self.seed, point=self.point).config(profile).replace(
            **SENSITIVITY_VARIANTS[self.variant])


class _Group(RunKind):
    """Several stacks read together by one value (``members``); ``config``: theirs."""

    def config(self, profile) -> tuple[TrainConfig, ...]:
        return tuple(m.config(profile) for m in self.members)


@dataclass(frozen=True)
class DepthGroup(_Group):
    """The depth stacks of one depth and seed over several horizons (a ratio or a slope over T)."""

    layers: int
    Ts: tuple
    batch: int
    seed: int
    FORM: ClassVar = "depth/L={layers}/T={Ts}/batch={batch}/seed={seed}"
    FOLLOWS: ClassVar = DEPTH_FOLLOWS
    point: Point = point_field()

    @property
    def members(self) -> tuple[DepthStack, ...]:
        return tuple(DepthStack(self.layers, T, self.batch, self.seed, point=self.point) for T in self.Ts)


@dataclass(frozen=True)
class ShiftPair(_Group):
    """Two spectral-shift stacks of one depth and seed index at two radii (a ratio of their errors)."""

    layers: int
    radii: tuple
    batch: int
    seed: int
    FORM: ClassVar = "shift/L={layers}/r={radii}/batch={batch}/seed={seed}"
    point: Point = point_field()

    @property
    def members(self) -> tuple[ShiftStack, ...]:
        return tuple(ShiftStack(self.layers, r, self.batch, self.seed, point=self.point) for r in self.radii)


@dataclass(frozen=True)
class ShiftNullPair(_Group):
    """A shift stack at TRAIN_RADIUS and its re-training with seed index ``seed + STACK_SEEDS``
    (:data:`SHIFT_NULL_SEEDS`): the null control of the gain and cost checks."""

    layers: int
    batch: int
    seed: int
    FORM: ClassVar = f"shift/L={{layers}}/r={TRAIN_RADIUS:g}+{TRAIN_RADIUS:g}-rerun/batch={{batch}}/seed={{seed}}"
    point: Point = point_field()

    @property
    def members(self) -> tuple[ShiftStack, ...]:
        return tuple(ShiftStack(self.layers, TRAIN_RADIUS, self.batch, i, point=self.point)
                     for i in (self.seed, self.seed + STACK_SEEDS))


#: the kinds that are one trained run each (:func:`config_for` reads these), and every kind
TRAINED_KINDS = (Ar1Layer, ArsLayer, DepthStack, ShiftStack, SensitivityRun)
KINDS = TRAINED_KINDS + (DepthGroup, ShiftPair, ShiftNullPair)


def parse_run(run: str):
    """The run kind an id names (a group of runs included); ValueError naming ``run`` otherwise.

    >>> parse_run("shift/L=4/r=0.9+0.9-rerun/batch=1500/seed=1").members[1].run
    'shift/L=4/r=0.9/batch=1500/seed=4'
    """
    rest = split_prefix(run)[1] if isinstance(run, str) else run
    for kind in KINDS:
        if isinstance(rest, str) and kind.PATTERN.fullmatch(rest):
            return kind.parse(run)
    raise ValueError(f"run must be a run id such as 'ar1/a/seed=0' or 'ars/b/s=4/seed=2', got {run!r}")


# ----------------------------------------------------------------------------- constructors
def ar1_run(setting: str, seed_index: int) -> RunRef:
    """An AR(1) layer of the paper's protocol (:class:`Ar1Layer`)."""
    return Ar1Layer(setting, seed_index).ref


def ars_run(setting: str, s: int, seed_index: int) -> RunRef:
    """An AR(s) layer, s >= 2 (:class:`ArsLayer`)."""
    return ArsLayer(setting, s, seed_index).ref


def trained_layer_run(setting: str, s: int, seed_index: int) -> RunRef:
    """The single layer a claim uses for window s: the AR(1) run for s = 1, else AR(s)."""
    return ar1_run(setting, seed_index) if s == 1 else ars_run(setting, s, seed_index)


def depth_run(layers: int, T: int, batch: int, seed_index: int) -> RunRef:
    """A stack of the depth claim (:class:`DepthStack`)."""
    return DepthStack(layers, T, batch, seed_index).ref


def depth_group(layers: int, Ts, batch: int, seed_index: int) -> RunRef:
    """Depth stacks read together (:class:`DepthGroup`)."""
    return DepthGroup(layers, tuple(Ts), batch, seed_index).ref


def shift_run(layers: int, radius: float, batch: int, seed_index: int) -> RunRef:
    """A stack of the spectral-shift claim trained at ``radius`` (:class:`ShiftStack`)."""
    return ShiftStack(layers, radius, batch, seed_index).ref


def shift_pair(layers: int, radii: tuple, batch: int, seed_index: int) -> RunRef:
    """Two spectral-shift stacks read together (:class:`ShiftPair`)."""
    return ShiftPair(layers, tuple(radii), batch, seed_index).ref


def shift_null_pair(layers: int, batch: int, seed_index: int) -> RunRef:
    """A spectral-shift stack and its re-training with other seeds (:class:`ShiftNullPair`)."""
    return ShiftNullPair(layers, batch, seed_index).ref


def sensitivity_run(setting: str, variant: str, seed_index: int) -> RunRef:
    """An AR(1) run with one training choice changed (:class:`SensitivityRun`)."""
    return SensitivityRun(setting, variant, seed_index).ref


# ----------------------------------------------------------------------------- from an id
def _train_config(point: Point, **fields) -> "TrainConfig":
    """A :class:`~models.config.TrainConfig` at ``point`` (the fields given win: a depth stack's
    own T); imported here: the run ids, their parsers and the claims' specs load without
    torch, which ``models.config`` imports."""
    from models.config import TrainConfig
    return TrainConfig(**{**point.family_fields(), **fields})


def config_for(run, profile, *, name: str = "run") -> TrainConfig:
    """The configuration the claims train for a run id (a :class:`RunRef` or a kind) in ``profile``.

    Every seed index is accepted; the rest must be a run some claim trains in ``profile``: a
    setting, window, depth or horizon off the claims' grids, a group of runs, a typo or a stack
    of the other profile's batch is one ValueError starting with ``name`` (the CLI's option).
    """
    rid = getattr(run, "run", run)
    if not isinstance(rid, str):
        raise ValueError(f"{name} must be a run id (str), got {rid!r}")
    try:
        rest = split_prefix(rid)[1]
    except ValueError as exc:
        raise ValueError(f"{name} {exc}") from None
    for kind in TRAINED_KINDS:
        if kind.PATTERN.fullmatch(rest):
            try:
                spec = kind.parse(rid)
                spec.check(profile)
                return spec.config(profile)
            except ValueError as exc:
                raise ValueError(f"{name} {rid!r}: {exc}") from None
    raise ValueError(f"{name} must be a run id such as 'ar1/a/seed=0' or 'ars/b/s=4/seed=2' "
                     f"(`ldsicl runs` lists them), got {rid!r}")


def trained(run, profile):
    """The :class:`~models.result.TrainResult` of a run id, :class:`RunRef`, kind or configuration,
    trained once per configuration and code fingerprint, then read from the disk cache."""
    if profile.run.untrained:
        import pytest
        pytest.skip("--claims-untrained: this check reads a trained run")
    from models.cache import train_cached
    from models.config import TrainConfig
    config = run if isinstance(run, TrainConfig) else config_for(run, profile)
    return train_cached(config, device="auto", progress=False, stale_before=profile.run.retrain_before)
