"""The run store: every trained run a claim uses -- its id, its configuration, its weights.

One place decides what the claims train.  A **run id** names a configuration in the
claims' words (family, setting, window, depth, horizon, the stacks' batch, the seed index),
never the cache key, so the same id names the same configuration wherever it is trained:

* ``ar1/<setting>/seed=<i>``                    an AR(1) layer of the paper's protocol;
* ``ars/<setting>/s=<s>/seed=<i>``              an AR(s) layer, s >= 2 (lr and betas below);
* ``depth/L=<L>/T=<T>/batch=<b>/seed=<i>``      a stack of the depth claim;
* ``shift/L=<L>/r=<r>/batch=<b>/seed=<i>``      a stack of the spectral-shift claim, trained at radius r;
* ``sensitivity/<setting>/<variant>/seed=<i>``  an AR(1) run with one training choice changed.

The single layers' seed i is the same run in both profiles (the paper profile's first
seeds are the quick profile's); the stacks, trained at ``profile.stack_batch`` (1000
quick, 1500 paper), carry their batch in the id.  From an id:

* :func:`config_for` builds the :class:`~models.config.TrainConfig` the claims train (the
  ``*_config`` functions below are the only definitions; ``ldsicl train --claim <id>``
  calls the same function, so the command line and the claims cannot drift apart);
* :func:`trained` returns its weights (trained once per configuration and code
  fingerprint, then read from the disk cache, models/cache.py; under ``pytest claims
  --retrain`` the session's start goes to ``stale_before``, claims/harness/runopts.py);
* :func:`claim_runs` lists the ids each claim uses in a profile (``ldsicl runs``; the
  published runs are checked against it in tests/test_runs.py).

The learning rates and betas are the project's choices (the paper gives one protocol for
AR(1), docs/math.md section 2): AR(s) runs train at :data:`ARS_LR` with betas
:data:`ARS_BETAS` (docs/notes.md, "Learning rate and betas for s >= 2"); a stack of L
layers at :data:`STACK_LR` [L], chosen per depth on the held-out median squared error by a
scan of its own (docs/notes.md, "Stacks: learning rate per depth"; docs/scans/stack_lr.py),
never on a claim's metric.  Every stack trains on eigenvalues in [-0.9, 0.9]
(:data:`TRAIN_RADIUS`, the depth construction's law, claims/test_depth.py), except the
spectral-shift claim's wider and narrower trainings (:data:`SHIFT_RADII`), whose learning
rate per depth and radius comes from the same scan at their radius (:data:`SHIFT_LR`,
``stack_lr.py --shift``).

Which windows and depths a profile trains is the profile's (claims/harness/profiles.py,
``trained_windows``, ``shift_depths``); the ids are the same in both.

>>> from claims.harness.profiles import QUICK
>>> ars_run("d", 4, 2).run, shift_run(1, 1.0, 1000, 0).run
('ars/d/s=4/seed=2', 'shift/L=1/r=1/batch=1000/seed=0')
>>> c = config_for("ars/a/s=4/seed=0", QUICK)
>>> (c.setting, c.s, c.lr, c.betas, c.steps, c.batch), c == ars_config("a", 4, 0, QUICK)
(('a', 4, 0.03, (0.9, 0.99), 8000, 3000), True)
>>> config_for("depth/L=4/T=80/batch=1000/seed=1", QUICK).layers
4
>>> len(claim_runs("pcg-alignment", QUICK)), claim_runs("pcg-alignment", QUICK)[0].run
(12, 'ars/a/s=4/seed=0')
"""
from __future__ import annotations

import re
from typing import Callable, Iterable

from claims.harness.identity import RunRef
from claims.harness.seeds import seed_for
from models.cache import train_cached
from models.config import TrainConfig

__all__ = ["RunRef", "ar1_run", "ars_run", "trained_layer_run", "depth_run", "depth_group", "shift_run", "shift_pair", "shift_null_pair",
           "sensitivity_run", "ar1_config", "ars_config", "depth_config", "shift_config",
           "sensitivity_config", "config_for", "trained", "claim_runs", "CLAIM_RUNS",
           "AR1_SETTINGS", "ARS_SETTINGS", "WINDOWS", "ARS_LR", "ARS_BETAS", "STACK_S", "DEPTHS",
           "DEPTH_T", "SHIFT_DEPTHS", "TRAIN_RADIUS", "STACK_LR", "SHIFT_LR", "STACK_BETAS", "STACK_SEEDS", "SHIFT_NULL_SEEDS",
           "SENSITIVITY_SETTINGS", "SENSITIVITY_VARIANTS", "SENSITIVITY_SEEDS", "PCG_S", "PCG_SETTINGS",
           "PARITY_SETTINGS", "PARITY_WINDOWS", "BASIN_SETTINGS"]

# ----------------------------------------------------------------------------- what is trained
#: seed namespaces (claims/harness/seeds.py): ar1-optimum and gd-equivalence share the AR(1) runs,
#: banding, pcg-alignment, training-basins and kalman-parity the AR(s) runs.
AR1_NAMESPACE = "ar1-train"
ARS_NAMESPACE = "ars-train"
DEPTH_NAMESPACE = "depth-train"
SHIFT_NAMESPACE = "shift-train"

#: the AR(1) layers: the four symmetric settings.
AR1_SETTINGS = ("a", "b", "c", "d")
#: the AR(s) layers, s >= 2: windows and settings (the asymmetric control "asym" included).
WINDOWS = (2, 3, 4)
ARS_SETTINGS = ("a", "b", "c", "d", "asym")
#: peak learning rate and AdamW betas of the AR(s) runs (module doc).
ARS_LR = 3e-2
ARS_BETAS = (0.9, 0.99)

#: the stacks (setting a, window STACK_S): the depth claim's grid and the spectral-shift
#: claim's depths (the paper profile's; the quick profile trains Profile.shift_depths),
#: trained at TRAIN_RADIUS; STACK_SEEDS seeds in both profiles (the paper's 3).
STACK_S = 2
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
#: baseline (docs/settings.md, Training), on the first SENSITIVITY_SEEDS AR(1) seeds.
SENSITIVITY_SETTINGS = ("a", "b")
SENSITIVITY_VARIANTS = {
    "weight_decay=0.01": {"weight_decay": 0.01},
    "grad_clip=1": {"grad_clip": 1.0},
    "lr=5e-4": {"lr": 5e-4},
    "lr=2e-3": {"lr": 2e-3},
}
SENSITIVITY_SEEDS = 3

#: which trained layers the other claims read: pcg-alignment the AR(PCG_S) layers of
#: PCG_SETTINGS, kalman-parity the layers of PARITY_WINDOWS (1: the AR(1) runs) in
#: PARITY_SETTINGS, training-basins the AR(s) layers of BASIN_SETTINGS.
PCG_S = 4
PCG_SETTINGS = ("a", "b", "c", "d")
PARITY_SETTINGS = ("a", "b", "c", "d")
PARITY_WINDOWS = (1, 2, 3, 4)
BASIN_SETTINGS = ("a", "b", "c", "d")


# ----------------------------------------------------------------------------- run ids
def ar1_run(setting: str, seed_index: int) -> RunRef:
    """An AR(1) layer of the paper's protocol (:func:`ar1_config`)."""
    return RunRef(f"ar1/{setting}/seed={seed_index}", seed_index)


def ars_run(setting: str, s: int, seed_index: int) -> RunRef:
    """An AR(s) layer, s >= 2 (:func:`ars_config`)."""
    return RunRef(f"ars/{setting}/s={s}/seed={seed_index}", seed_index)


def trained_layer_run(setting: str, s: int, seed_index: int) -> RunRef:
    """The single layer a claim uses for window s: the AR(1) run for s = 1, else AR(s)."""
    return ar1_run(setting, seed_index) if s == 1 else ars_run(setting, s, seed_index)


def depth_run(layers: int, T: int, batch: int, seed_index: int) -> RunRef:
    """A stack of the depth claim (:func:`depth_config`)."""
    return RunRef(f"depth/L={layers}/T={T}/batch={batch}/seed={seed_index}", seed_index)


def depth_group(layers: int, Ts: Iterable[int], batch: int, seed_index: int) -> RunRef:
    """The stacks of one depth and seed over several horizons, read together by one value
    (a ratio or a slope over T); not a run of its own (:func:`config_for` refuses it)."""
    return RunRef(f"depth/L={layers}/T={'+'.join(str(T) for T in Ts)}/batch={batch}/seed={seed_index}",
                  seed_index)


def shift_run(layers: int, radius: float, batch: int, seed_index: int) -> RunRef:
    """A stack of the spectral-shift claim trained at ``radius`` (:func:`shift_config`)."""
    return RunRef(f"shift/L={layers}/r={radius:g}/batch={batch}/seed={seed_index}", seed_index)


def shift_pair(layers: int, radii: tuple, batch: int, seed_index: int) -> RunRef:
    """Two spectral-shift stacks of one depth and seed index trained at two radii, read
    together by one value (a ratio of their errors); not a run of its own (as
    :func:`depth_group`; :func:`config_for` refuses it)."""
    return RunRef(f"shift/L={layers}/r={'+'.join(f'{r:g}' for r in radii)}/batch={batch}/seed={seed_index}",
                  seed_index)


def shift_null_pair(layers: int, batch: int, seed_index: int) -> RunRef:
    """A spectral-shift stack trained at TRAIN_RADIUS and its re-training with other seeds
    (seed index ``seed_index + STACK_SEEDS``, :data:`SHIFT_NULL_SEEDS`), read together by
    one value: the null control of the gain and cost checks; not a run of its own."""
    return RunRef(f"shift/L={layers}/r={TRAIN_RADIUS:g}+{TRAIN_RADIUS:g}-rerun/batch={batch}/seed={seed_index}",
                  seed_index)


def sensitivity_run(setting: str, variant: str, seed_index: int) -> RunRef:
    """An AR(1) run with one training choice changed (:func:`sensitivity_config`)."""
    return RunRef(f"sensitivity/{setting}/{variant}/seed={seed_index}", seed_index)


# ----------------------------------------------------------------------------- configurations
def ar1_config(setting: str, seed_index: int, profile) -> TrainConfig:
    """The AR(1) run: the paper's protocol at the profile's steps and batch (8000 x 3000)."""
    return TrainConfig(setting=setting, s=1, steps=profile.train_steps, batch=profile.train_batch,
                       seed=seed_for(AR1_NAMESPACE, setting, seed_index))


def ars_config(setting: str, s: int, seed_index: int, profile) -> TrainConfig:
    """The AR(s) run, s >= 2: the AR(1) protocol at ARS_LR and ARS_BETAS."""
    return TrainConfig(setting=setting, s=s, steps=profile.train_steps, batch=profile.train_batch,
                       lr=ARS_LR, betas=ARS_BETAS, seed=seed_for(ARS_NAMESPACE, setting, s, seed_index))


def depth_config(layers: int, T: int, seed_index: int, profile) -> TrainConfig:
    """A stack of the depth grid: setting a, window STACK_S, horizon T, the profile's stack batch."""
    return TrainConfig(setting="a", s=STACK_S, T=T, layers=layers, radius=TRAIN_RADIUS, steps=profile.train_steps,
                       batch=profile.stack_batch, lr=STACK_LR[layers], betas=STACK_BETAS,
                       seed=seed_for(DEPTH_NAMESPACE, layers, T, seed_index))


def shift_config(layers: int, radius: float, seed_index: int, profile) -> TrainConfig:
    """A stack of the spectral-shift claim: as the depth grid at T = 30, systems of ``radius``
    (one of SHIFT_RADII); the seed of the run at TRAIN_RADIUS is the one it had before the
    claim trained other radii, so that each radius starts from its own seed."""
    key = (layers, seed_index) if radius == TRAIN_RADIUS else (layers, radius, seed_index)
    return TrainConfig(setting="a", s=STACK_S, layers=layers, radius=radius, steps=profile.train_steps,
                       batch=profile.stack_batch, lr=SHIFT_LR.get((layers, radius), STACK_LR[layers]),
                       betas=STACK_BETAS, seed=seed_for(SHIFT_NAMESPACE, *key))


def sensitivity_config(setting: str, variant: str, seed_index: int, profile) -> TrainConfig:
    """The AR(1) run of the same seed with one choice of SENSITIVITY_VARIANTS changed."""
    if variant not in SENSITIVITY_VARIANTS:
        raise ValueError(f"variant must be one of {list(SENSITIVITY_VARIANTS)}, got {variant!r}")
    return ar1_config(setting, seed_index, profile).replace(**SENSITIVITY_VARIANTS[variant])


_INT = r"(0|[1-9][0-9]*)"


def _one_of(what: str, value, allowed) -> None:
    if value not in allowed:
        raise ValueError(f"no claim trains {what} {value!r} (the claims train {list(allowed)})")


def _ar1(m, p):
    _one_of("an AR(1) layer of setting", m["setting"], AR1_SETTINGS)
    return ar1_config(m["setting"], int(m[2]), p)


def _ars(m, p):
    _one_of("an AR(s) layer of setting", m["setting"], ARS_SETTINGS)
    _one_of("an AR(s) layer of window s =", int(m[2]), WINDOWS)
    if int(m[2]) not in p.trained_windows:
        raise ValueError(f"window s = {m[2]} is not trained in the {p.name} profile "
                         f"(it trains s in {list(p.trained_windows)})")
    return ars_config(m["setting"], int(m[2]), int(m[3]), p)


def _depth(m, p):
    _one_of("a depth-grid stack of L =", int(m[1]), DEPTHS)
    _one_of("a depth-grid stack of T =", int(m[2]), DEPTH_T)
    return _stack(depth_config(int(m[1]), int(m[2]), int(m[4]), p), int(m[3]), p)


def _shift(m, p):
    _one_of("a spectral-shift stack of L =", int(m[1]), p.shift_depths)
    radius = {f"{r:g}": r for r in SHIFT_RADII}.get(m["radius"])
    _one_of("a spectral-shift stack of radius r =", m["radius"] if radius is None else radius, SHIFT_RADII)
    return _stack(shift_config(int(m[1]), radius, int(m[4]), p), int(m[3]), p)


def _sensitivity(m, p):
    _one_of("a sensitivity run of setting", m["setting"], SENSITIVITY_SETTINGS)
    return sensitivity_config(m["setting"], m["variant"], int(m[3]), p)


_PATTERNS: list[tuple[re.Pattern, Callable]] = [
    (re.compile(rf"ar1/(?P<setting>[a-z]+)/seed={_INT}"), _ar1),
    (re.compile(rf"ars/(?P<setting>[a-z]+)/s={_INT}/seed={_INT}"), _ars),
    (re.compile(rf"depth/L={_INT}/T={_INT}/batch={_INT}/seed={_INT}"), _depth),
    (re.compile(rf"shift/L={_INT}/r=(?P<radius>[0-9.]+)/batch={_INT}/seed={_INT}"), _shift),
    (re.compile(rf"sensitivity/(?P<setting>[a-z]+)/(?P<variant>[^/]+)/seed={_INT}"), _sensitivity),
]


def _stack(config: TrainConfig, batch: int, profile) -> TrainConfig:
    if batch != profile.stack_batch:
        raise ValueError(f"a stack of batch {batch} is not a run of the {profile.name} profile "
                         f"(its stacks train at batch {profile.stack_batch})")
    return config


def config_for(run, profile, *, name: str = "run") -> TrainConfig:
    """The configuration the claims train for a run id (or :class:`RunRef`) in ``profile``.

    Every seed index is accepted (the paper profile trains more than the quick one); the
    rest must be a run some claim trains: a setting, window, depth or horizon outside the
    claims' grids, a depth group (several runs read together), a typo or a stack of the
    other profile's batch is one ValueError whose message starts with ``name`` (the command
    line passes the option it came from).
    """
    rid = run.run if isinstance(run, RunRef) else run
    if not isinstance(rid, str):
        raise ValueError(f"{name} must be a run id (str), got {rid!r}")
    for pattern, build in _PATTERNS:
        m = pattern.fullmatch(rid)
        if m:
            try:
                return build(m, profile)
            except ValueError as exc:
                raise ValueError(f"{name} {rid!r}: {exc}") from None
    raise ValueError(f"{name} must be a run id such as 'ar1/a/seed=0' or 'ars/b/s=4/seed=2' "
                     f"(`ldsicl runs` lists them), got {rid!r}")


def trained(run, profile):
    """The :class:`~models.result.TrainResult` of a run id, :class:`RunRef` or configuration,
    trained once per configuration and code fingerprint, then read from the disk cache."""
    config = run if isinstance(run, TrainConfig) else config_for(run, profile)
    return train_cached(config, device="auto", progress=False, stale_before=profile.run.retrain_before)


# ----------------------------------------------------------------------------- runs per claim
def _seeds(profile) -> range:
    return range(profile.n_seeds)


CLAIM_RUNS: dict[str, Callable] = {
    "ar1-optimum": lambda p: [ar1_run(st, i) for st in AR1_SETTINGS for i in _seeds(p)],
    "gd-equivalence": lambda p: [ar1_run(st, i) for st in AR1_SETTINGS for i in _seeds(p)],
    "banding": lambda p: [ars_run(st, s, i) for st in ARS_SETTINGS for s in p.trained_windows for i in _seeds(p)],
    "pcg-alignment": lambda p: [ars_run(st, PCG_S, i) for st in PCG_SETTINGS for i in _seeds(p)],
    "training-basins": lambda p: [ars_run(st, s, i) for st in BASIN_SETTINGS for s in p.trained_windows
                                  for i in _seeds(p)],
    "kalman-parity": lambda p: [trained_layer_run(st, s, i) for st in PARITY_SETTINGS
                                for s in PARITY_WINDOWS if s == 1 or s in p.trained_windows
                                for i in _seeds(p)],
    "depth": lambda p: ([depth_run(L, T, p.stack_batch, i) for L in DEPTHS for T in DEPTH_T
                         for i in range(STACK_SEEDS)] if p.depth_stacks else []),
    "spectral-shift": lambda p: ([shift_run(L, r, p.stack_batch, i) for L in p.shift_depths
                                  for r in SHIFT_RADII for i in range(STACK_SEEDS)]
                                 + [shift_run(L, TRAIN_RADIUS, p.stack_batch, i) for L in p.shift_depths
                                    for i in SHIFT_NULL_SEEDS]),
    # the variants, then the AR(1) runs they are compared with (the baseline, read too)
    "training-sensitivity": lambda p: ([sensitivity_run(st, v, i) for st in SENSITIVITY_SETTINGS
                                        for v in SENSITIVITY_VARIANTS for i in range(SENSITIVITY_SEEDS)]
                                       + [ar1_run(st, i) for st in SENSITIVITY_SETTINGS
                                          for i in range(SENSITIVITY_SEEDS)]
                                       if p.name == "paper" else []),
}


def claim_runs(claim: str, profile) -> list[RunRef]:
    """The runs ``claim`` trains in ``profile`` (claims that train nothing, e.g. the exact
    ``ar1-kappa`` checks, are not listed); ValueError naming ``claim`` otherwise."""
    if claim not in CLAIM_RUNS:
        raise ValueError(f"claim must be one of {list(CLAIM_RUNS)} (claims that train a model), "
                         f"got {claim!r}")
    return CLAIM_RUNS[claim](profile)
