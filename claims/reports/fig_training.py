"""The training-loss histories the trained claims store, for the report's training-loss figure.

:func:`loss_curves` is what the claims store (``loss_history_per_seed`` and
``loss_history_steps``; claims/test_ar1_optimum.py, claims/test_banding_trained.py): the
trainer's history (``TrainResult.loss_history``, means over ``history_every`` steps)
reduced to at most :data:`HISTORY_POINTS` block means.  The figures drawn from them (and
from the trained weights) live with their claims: ``training-loss.png`` in
claims/figures/training_basins.py, ``ar1-weights.png`` in claims/figures/ar1_optimum.py.

>>> class R:   # a stand-in for a TrainResult
...     def __init__(self, h, every, steps):
...         self.loss_history, self.history_every = h, every
...         self.config = type("C", (), {"steps": steps})()
>>> d = loss_curves([R([4.0, 2.0, 1.0, 1.0], 10, 40)], points=2)
>>> d["loss_history_per_seed"], d["loss_history_steps"]
([[3.0, 1.0]], [20, 40])
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["HISTORY_POINTS", "loss_curves"]

#: block means stored per run (a curve of 100 points reads as well as the trainer's 500)
HISTORY_POINTS = 100


def loss_curves(runs, points: int = HISTORY_POINTS) -> dict:
    """Every run's training-loss history as at most ``points`` block means, with the step
    at the end of each block (the runs of one cell share their steps and history spacing)."""
    if not runs:
        raise ValueError("runs must be a non-empty list of TrainResults")
    curves, steps = [], None
    for run in runs:
        h = np.asarray(run.loss_history, dtype=float)
        k = max(1, math.ceil(h.size / points))
        n = math.ceil(h.size / k)
        curves.append([float(h[j * k:(j + 1) * k].mean()) for j in range(n)])
        ends = [min((j + 1) * k * int(run.history_every), int(run.config.steps)) for j in range(n)]
        if steps is not None and ends != steps:
            raise ValueError("runs of one cell must share their steps and history spacing")
        steps = ends
    return {"loss_history_per_seed": curves, "loss_history_steps": steps}
