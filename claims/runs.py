"""Run ids: the name of each trained run a claim uses, derived from its configuration.

A run id names the configuration a claim trains, in the words of the claims (family,
setting, window, depth, horizon, seed index), not the cache key: the same id names the
same configuration in every profile that trains it (a profile's seed i is the quick
profile's seed i; the stacks' batch is a profile knob, docs/settings.md, Profiles).  The
records carry them in their per-run entries (claims/records.py, ``RunEntry``).

>>> ar1_run("a", 0), ars_run("d", 4, 2), depth_run(4, 80, 1), shift_run(1, 0)
('ar1/a/seed=0', 'ars/d/s=4/seed=2', 'depth/L=4/T=80/seed=1', 'shift/L=1/seed=0')
>>> sensitivity_run("b", "lr=5e-4", 1), depth_group(1, (10, 80), 2)
('sensitivity/b/lr=5e-4/seed=1', 'depth/L=1/T=10+80/seed=2')
"""
from __future__ import annotations

from typing import Iterable

__all__ = ["ar1_run", "ars_run", "depth_run", "depth_group", "shift_run", "sensitivity_run",
           "trained_layer_run"]


def ar1_run(setting: str, seed_index: int) -> str:
    """An AR(1) layer of the paper's protocol (claims/_ar1.py, ``train_config``)."""
    return f"ar1/{setting}/seed={seed_index}"


def ars_run(setting: str, s: int, seed_index: int) -> str:
    """An AR(s) layer, s >= 2, of the paper's protocol (claims/_ars.py, ``train_config``)."""
    return f"ars/{setting}/s={s}/seed={seed_index}"


def trained_layer_run(setting: str, s: int, seed_index: int) -> str:
    """The single layer a claim uses for window s: the AR(1) run for s = 1, else AR(s)."""
    return ar1_run(setting, seed_index) if s == 1 else ars_run(setting, s, seed_index)


def depth_run(layers: int, T: int, seed_index: int) -> str:
    """A stack of the depth claim (claims/_lds.py, ``depth_config``)."""
    return f"depth/L={layers}/T={T}/seed={seed_index}"


def depth_group(layers: int, Ts: Iterable[int], seed_index: int) -> str:
    """The stacks of one depth and seed over several horizons, read together by one value
    (a ratio or a slope over T)."""
    return f"depth/L={layers}/T={'+'.join(str(T) for T in Ts)}/seed={seed_index}"


def shift_run(layers: int, seed_index: int) -> str:
    """A stack of the spectral-shift claim (claims/_lds.py, ``shift_config``)."""
    return f"shift/L={layers}/seed={seed_index}"


def sensitivity_run(setting: str, variant: str, seed_index: int) -> str:
    """An AR(1) run with one training choice changed (claims/test_sensitivity.py)."""
    return f"sensitivity/{setting}/{variant}/seed={seed_index}"
