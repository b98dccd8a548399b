"""The learning-rate scan of the trained stacks (docs/notes.md, "Stacks: learning rate per depth").

Run once, not by the suite:  python docs/scans/stack_lr.py [--jobs 2] > scan.jsonl
                        and  python docs/scans/stack_lr.py --shift [--jobs 2] > shift_scan.jsonl

For each depth L in {1, 2, 4}, horizon T in {10, 30, 80} and peak learning rate in
{1e-3, 3e-3, 1e-2, 3e-2}: one stack of window 2 (setting a, radius 0.9, the stacks'
protocol of claims/harness/runs.py except the learning rate: 8000 steps x 1000 sequences, betas
(0.9, 0.99)), trained from a seed of its own (namespace "stack-lr-scan", none of the
claims' seeds), then evaluated on 20 000 fresh held-out sequences of its training law
(namespace "stack-lr-scan-heldout", none of the claims' held-out sets): the mean and the
median squared error of its prediction of y_T, and the median of its error over the
Kalman filter's on the same sequence.  The choice is made on these held-out errors, never
on a claim's metric.

``--shift``: the spectral-shift claim's other training radii (claims/harness/runs.py, SHIFT_RADII:
0.5 and 1.0; 0.9 is the scan above), at its horizon T = 30 and depths L in {1, 4}, peak
learning rates {3e-3, 1e-2, 3e-2, 1e-1}, held-out sequences of each run's own training law
(radius included); otherwise as above.  Rule, fixed before the scan ran: per depth and
radius the learning rate with the lowest held-out median squared error, the stacks' 1e-2
kept unless another lowers that median by more than 1 % (the first scan's differences
under 1 % were within one seed's noise).  A run that diverges (the trainer stops it at a
NaN loss) is a row with infinite errors and the trainer's message.
"""
from __future__ import annotations

import argparse
import itertools
import sys
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import torch

from claims.harness.seeds import rng_for, seed_for
from models.config import TrainConfig
from models.trainer import train
from theory.jsonvalues import dumps
from theory.kalman import kalman_predict
from theory.systems import LDSFamily

DEPTHS, HORIZONS, LRS = (1, 2, 4), (10, 30, 80), (1e-3, 3e-3, 1e-2, 3e-2)
SHIFT_DEPTHS, SHIFT_T, SHIFT_RADII, SHIFT_LRS = (1, 4), 30, (0.5, 1.0), (3e-3, 1e-2, 3e-2, 1e-1)
#: added after the grid: L = 4 at r = 1.0 was best at the grid's lowest rate (3e-3, the two
#: highest diverged), so the next lower one was run to see that the best is inside
SHIFT_EDGE = (4, SHIFT_T, 1e-3, 1.0)
HELDOUT = 20_000


def one(cell):
    L, T, lr, radius = cell
    torch.set_num_threads(1)
    # the first scan's seeds (radius 0.9) are kept as they were
    key = (L, T, lr) if radius == 0.9 else (L, T, lr, radius)
    cfg = TrainConfig(setting="a", s=2, T=T, layers=L, radius=radius, steps=8000, batch=1000, lr=lr,
                      betas=(0.9, 0.99), seed=seed_for("stack-lr-scan", *key))
    try:
        res = train(cfg)
    except RuntimeError as exc:          # the trainer stops a diverged run (NaN loss): a row, not a crash
        if "diverged" not in str(exc):
            raise
        return {"L": L, "T": T, "lr": lr, "radius": radius, "diverged": str(exc),
                "mean": float("inf"), "median": float("inf")}
    held = ("stack-lr-scan-heldout", T) if radius == 0.9 else ("stack-lr-scan-heldout", T, radius)
    systems, y = LDSFamily("a", T=T, radius=radius).sample(rng_for(*held), HELDOUT)
    target = y[:, -1]
    with torch.no_grad():
        pred = res.model(dtype=torch.float64).predict(torch.tensor(y, dtype=torch.float64)).numpy()
    err = (pred - target) ** 2
    kf = (kalman_predict(systems, y).prediction - target) ** 2
    finite = np.isfinite(err)
    return {"L": L, "T": T, "lr": lr, "radius": radius, "wall_s": res.wall_seconds,
            "final_loss": res.final_loss, "finite_share": float(finite.mean()),
            "mean": float(np.mean(err)) if finite.all() else float("inf"),
            "median": float(np.median(err)), "q90": float(np.quantile(err, 0.9)),
            "median_over_kalman": float(np.median(err / kf)),
            "kalman_mean": float(kf.mean()), "kalman_median": float(np.median(kf))}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--shift", action="store_true", help="the spectral-shift claim's training radii")
    args = ap.parse_args(argv)
    cells = ([(L, SHIFT_T, lr, r) for L, r, lr in itertools.product(SHIFT_DEPTHS, SHIFT_RADII, SHIFT_LRS)]
             + [SHIFT_EDGE] if args.shift else [(L, T, lr, 0.9) for L, T, lr in itertools.product(DEPTHS, HORIZONS, LRS)])
    with ProcessPoolExecutor(args.jobs) as pool:
        for row in pool.map(one, cells):
            print(dumps(row), flush=True)


if __name__ == "__main__":
    sys.exit(main())
