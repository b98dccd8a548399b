"""Figures of the trained runs themselves: the AR(1) weights beside theta* (the paper's
Fig. 1b, c) and every run's training loss against the population optimum's loss L*.

Drawn from the records alone, like every figure of the report (claims/reports/figures.py, which
calls :func:`render_training_figures`):

- ``ar1-weights.png``: for settings a-d, the trained W_V and W_QK of every seed beside
  theta* of Theorem 4.1 (eq. 15) in the family the run reached (docs/math.md section 4),
  each in the gauge of theta* (the scale that makes the largest entry of
  b = W_V[2, :] equal to +1; W_QK takes the inverse scale, so the layer's function is
  unchanged); the entries' values printed in the cells; one colour scale per matrix
  over the row (colour bars at the row's end).  Row 1 of W_V does not enter a single
  layer's prediction (y_hat_T = b^T C W_QK z_q), so it keeps its initial values;
- ``training-loss.png``: the training loss of every run (block means of the stored
  history, each step on a fresh batch, so a Monte Carlo estimate) divided by L*, against
  steps, one panel per setting for AR(1) and per (setting, s) for AR(s), on a log axis,
  with the line at 1 (L* itself: exact population moments; setting d: Monte Carlo
  moments) and, for AR(s), the losses of the stationary points the runs are headed for.

:func:`loss_curves` is what the claims store (``loss_history_per_seed`` and
``loss_history_steps``): the trainer's history (``TrainResult.loss_history``, means over
``history_every`` steps) reduced to at most :data:`HISTORY_POINTS` block means.

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
from pathlib import Path

import numpy as np

from theory.ar import ar1_optimal_weights

__all__ = ["HISTORY_POINTS", "loss_curves", "ar1_gauge", "ar1_weight_data", "ar1_weight_figure",
           "loss_data", "loss_figure", "render_training_figures"]

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


def ar1_gauge(W_V, W_QK) -> tuple[np.ndarray, np.ndarray]:
    """(W_V / g, W_QK * g) with g the entry of b = W_V[1, :] (0-based) of largest magnitude:
    the gauge of theta*, whose b is a unit vector (e_2 in the paper's family, e_1 in the
    other).  The layer's function is unchanged (y_hat_T is bilinear in b and W_QK).

    >>> V, Q = ar1_gauge([[0.3, 0.1], [0.0, -2.0]], [[-0.1, 0.0], [0.0, 0.0]])
    >>> V.tolist(), Q.tolist()
    ([[-0.15, -0.05], [-0.0, 1.0]], [[0.2, -0.0], [-0.0, -0.0]])
    """
    V, Q = np.asarray(W_V, dtype=float), np.asarray(W_QK, dtype=float)
    b = V[1]
    g = float(b[int(np.argmax(np.abs(b)))])
    if g == 0.0:
        raise ValueError("W_V's last row is zero: the layer predicts 0 and has no gauge")
    return V / g, Q * g


def ar1_weight_data(records) -> dict:
    """{setting: {"kappa", "families", "runs": [(W_V, W_QK), ...]}} from the
    ``ar1-optimum/trained-coefficient`` records that carry every run's weights."""
    out = {}
    for r in records:
        if r.get("claim") != "ar1-optimum" or r.get("check") != "trained-coefficient":
            continue
        d = r.get("details") or {}
        if "W_V_per_seed" not in d or "W_QK_per_seed" not in d:
            continue
        st = str((r.get("coords") or {}).get("setting"))
        out[st] = {"kappa": float(d["kappa"]), "families": list(d.get("family_per_seed") or []),
                   "runs": list(zip(d["W_V_per_seed"], d["W_QK_per_seed"]))}
    return out


def _matrix(ax, M, lim, title):
    M = np.asarray(M, dtype=float)
    im = ax.imshow(M, cmap="RdBu_r", vmin=-lim, vmax=lim)
    for (i, j), x in np.ndenumerate(M):
        ax.text(j, i, f"{x:.3g}", ha="center", va="center", fontsize=6,
                color="white" if abs(x) > 0.6 * lim else "black")
    ax.set_xticks([])
    ax.set_yticks([])
    ax.set_title(title, fontsize=7)
    return im


def ar1_weight_figure(plt, data, path) -> dict:
    """The paper's Fig. 1b, c for every trained seed: one row per setting, W_V over W_QK;
    theta* first (one column per family reached).  Returns the colour limits per setting,
    (W_V's, W_QK's)."""
    settings = sorted(data)
    cols = {st: [f for f in ("value", "key") if f in data[st]["families"]] or ["value"] for st in settings}
    ncol = max(len(cols[st]) + len(data[st]["runs"]) for st in settings)
    fig, axes = plt.subplots(2 * len(settings), ncol, figsize=(1.45 * ncol + 1.0, 3.0 * len(settings) + 1.0),
                             squeeze=False)
    fig.subplots_adjust(hspace=0.55, top=1 - 1.4 / (3.0 * len(settings) + 1.0), bottom=0.02)
    limits = {}
    for i, st in enumerate(settings):
        kappa = data[st]["kappa"]
        panels = [(f"theta* ({f} family)", *ar1_optimal_weights(kappa, f)) for f in cols[st]]
        fams = data[st]["families"] or [None] * len(data[st]["runs"])
        panels += [(f"seed {k}" + (f" ({fam})" if fam else ""), *ar1_gauge(V, Q))
                   for k, ((V, Q), fam) in enumerate(zip(data[st]["runs"], fams))]
        lim_v = max(max(np.abs(V).max() for _, V, _ in panels), 1e-12)
        lim_q = max(max(np.abs(Q).max() for _, _, Q in panels), 1e-12)
        limits[st] = (float(lim_v), float(lim_q))
        for j in range(ncol):
            ax_v, ax_q = axes[2 * i, j], axes[2 * i + 1, j]
            if j >= len(panels):
                ax_v.axis("off")
                ax_q.axis("off")
                continue
            title, V, Q = panels[j]
            im_v = _matrix(ax_v, V, lim_v, f"{st}: {title}\nW_V")
            im_q = _matrix(ax_q, Q, lim_q, "W_QK")
        fig.colorbar(im_v, ax=list(axes[2 * i]), fraction=0.02, pad=0.01).ax.tick_params(labelsize=6)
        fig.colorbar(im_q, ax=list(axes[2 * i + 1]), fraction=0.02, pad=0.01).ax.tick_params(labelsize=6)
    fig.suptitle("Theorem 4.1 (the paper's Fig. 1b, c): trained AR(1) weights of every seed beside theta*\n"
                 "(eq. 15, kappa of the setting), in theta*'s gauge (largest |b| = +1, b = row 2 of W_V);\n"
                 "row 1 of W_V does not enter the prediction", fontsize=8)
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return limits


def loss_data(records) -> list[dict]:
    """Panels of the training-loss figure: {"title", "steps", "curves", "L_star",
    "basin_losses"} per AR(1) setting, then per AR(s) (setting, s), from the records that
    carry ``loss_history_per_seed`` (negative controls left out)."""
    panels = []
    for r in records:
        d = r.get("details") or {}
        c = r.get("coords") or {}
        if "loss_history_per_seed" not in d or c.get("control"):
            continue
        if r.get("claim") == "ar1-optimum" and r.get("check") == "trained-coefficient":
            title, L_star, basins = f"AR(1), setting {c.get('setting')}", d["population_loss_theta_star"], []
        elif r.get("claim") == "banding" and r.get("check") == "trained-out-of-class-share":
            title, L_star = f"AR({c.get('s')}), setting {c.get('setting')}", d["population_loss_optimum"]
            basins = sorted({(float(x), str(n)) for x, n in zip(d.get("basin_loss_per_seed") or [],
                                                               d.get("basin_per_seed") or [])})
        else:
            continue
        panels.append({"title": title, "steps": d["loss_history_steps"], "curves": d["loss_history_per_seed"],
                       "L_star": float(L_star), "basin_losses": basins})
    return panels


def _plain_ticks(value, _pos=None) -> str:
    """Tick labels of the log axes as plain numbers (1.2, not 1.2 x 10^0)."""
    return f"{value:g}"


def loss_figure(plt, panels, path, cols: int = 4) -> None:
    """Training loss / L* against steps, every run, one panel per cell (log axis)."""
    rows = -(-len(panels) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.2 * cols, 2.4 * rows + 0.6), squeeze=False)
    for ax, p in zip(axes.flat, panels):
        steps = np.asarray(p["steps"], dtype=float)
        for k, curve in enumerate(p["curves"]):
            ax.plot(steps, np.asarray(curve, dtype=float) / p["L_star"], lw=0.8, color=f"C{k % 10}",
                    label=f"seed {k}")
        ax.axhline(1.0, color="k", lw=1.0, label="L* (optimum)")
        others = [(loss, name) for loss, name in p["basin_losses"] if not name.startswith("optimum")]
        for k, (loss, name) in enumerate(others):
            ax.axhline(loss / p["L_star"], color="0.5", lw=0.8, ls="--")
            # labels of nearby lines staggered along the axis so that they do not overprint
            ax.text(steps[-1] * (1 - 0.38 * (k % 3)), loss / p["L_star"], name, fontsize=5, ha="right",
                    va="bottom", color="0.3")
        ax.set_yscale("log")
        for axis_formatter in (ax.yaxis.set_major_formatter, ax.yaxis.set_minor_formatter):
            axis_formatter(_plain_ticks)
        ax.set_title(p["title"], fontsize=8)
        ax.set_xlabel("step", fontsize=7)
        ax.set_ylabel("training loss / L*", fontsize=7)
        ax.tick_params(labelsize=6)
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=5, loc="upper right")
    fig.suptitle("training loss (block means of fresh batches: a Monte Carlo estimate) over the population "
                 "optimum's loss L* (setting d: Monte Carlo moments); dashed: stationary points the AR(s) runs "
                 "are headed for", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)


def render_training_figures(plt, records, directory: Path) -> list[tuple[str, Path]]:
    """Draw the two figures where the records support them; (title, path) pairs."""
    made = []
    weights = ar1_weight_data(records)
    panels = loss_data(records)
    if weights or panels:
        directory.mkdir(parents=True, exist_ok=True)
    if weights:
        path = directory / "ar1-weights.png"
        ar1_weight_figure(plt, weights, path)
        made.append(("Theorem 4.1 (Fig. 1b, c): trained AR(1) weights of every seed beside theta*", path))
    if panels:
        path = directory / "training-loss.png"
        loss_figure(plt, panels, path)
        made.append(("training loss against steps, over the optimum's loss L*", path))
    return made
