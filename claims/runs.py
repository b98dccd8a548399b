"""Run ids: the name of each trained run a claim uses, derived from its configuration.

A run id names the configuration a claim trains in the claims' words -- family, setting,
window, depth, horizon, the stacks' batch, the seed index -- not the cache key, so the
same id names the same configuration wherever it is trained: the single layers' seed i is
the same run in both profiles (the paper profile's first seeds are the quick profile's),
while the stacks, trained at ``profile.stack_batch`` (1000 quick, 1500 paper), carry their
batch in the id.  Each function returns a :class:`~claims.records.RunRef` (id and seed
index), which records turn into per-run entries (claims/records.py, ``RunEntry``).

>>> ar1_run("a", 0).run, ars_run("d", 4, 2).run, shift_run(1, 1000, 0).run
('ar1/a/seed=0', 'ars/d/s=4/seed=2', 'shift/L=1/batch=1000/seed=0')
>>> depth_run(4, 80, 1500, 1)
RunRef(run='depth/L=4/T=80/batch=1500/seed=1', seed=1)
>>> depth_group(1, (10, 80), 1000, 2).run, sensitivity_run("b", "lr=5e-4", 1).run
('depth/L=1/T=10+80/batch=1000/seed=2', 'sensitivity/b/lr=5e-4/seed=1')
"""
from __future__ import annotations

from typing import Iterable

from claims.records import RunRef

__all__ = ["RunRef", "ar1_run", "ars_run", "trained_layer_run", "depth_run", "depth_group", "shift_run",
           "sensitivity_run"]


def ar1_run(setting: str, seed_index: int) -> RunRef:
    """An AR(1) layer of the paper's protocol (claims/_ar1.py, ``train_config``)."""
    return RunRef(f"ar1/{setting}/seed={seed_index}", seed_index)


def ars_run(setting: str, s: int, seed_index: int) -> RunRef:
    """An AR(s) layer, s >= 2, of the paper's protocol (claims/_ars.py, ``train_config``)."""
    return RunRef(f"ars/{setting}/s={s}/seed={seed_index}", seed_index)


def trained_layer_run(setting: str, s: int, seed_index: int) -> RunRef:
    """The single layer a claim uses for window s: the AR(1) run for s = 1, else AR(s)."""
    return ar1_run(setting, seed_index) if s == 1 else ars_run(setting, s, seed_index)


def depth_run(layers: int, T: int, batch: int, seed_index: int) -> RunRef:
    """A stack of the depth claim (claims/_lds.py, ``depth_config``)."""
    return RunRef(f"depth/L={layers}/T={T}/batch={batch}/seed={seed_index}", seed_index)


def depth_group(layers: int, Ts: Iterable[int], batch: int, seed_index: int) -> RunRef:
    """The stacks of one depth and seed over several horizons, read together by one value
    (a ratio or a slope over T)."""
    return RunRef(f"depth/L={layers}/T={'+'.join(str(T) for T in Ts)}/batch={batch}/seed={seed_index}",
                  seed_index)


def shift_run(layers: int, batch: int, seed_index: int) -> RunRef:
    """A stack of the spectral-shift claim (claims/_lds.py, ``shift_config``)."""
    return RunRef(f"shift/L={layers}/batch={batch}/seed={seed_index}", seed_index)


def sensitivity_run(setting: str, variant: str, seed_index: int) -> RunRef:
    """An AR(1) run with one training choice changed (claims/test_sensitivity.py)."""
    return RunRef(f"sensitivity/{setting}/{variant}/seed={seed_index}", seed_index)
