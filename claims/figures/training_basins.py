"""The figures of the training-basins claim (claims/specs/training_basins.py).

- ``basins-<setting>.png`` (:func:`basin_data`, :func:`basin_figure`): for s = 2, 3, 4,
  the share of noise-free twins and of trained runs headed for each stationary point of the
  population loss (the ``twin-optimum-share`` record's ``points``, ``twins`` and
  ``trained_runs``), the optimum first, then by loss;
- ``training-loss.png`` (:func:`loss_data`, :func:`loss_figure`): where the protocol
  goes, in time: the training loss of every trained run (block means of the stored history,
  each step on a fresh batch, so a Monte Carlo estimate; claims.reports.fig_training.loss_curves)
  divided by L*, against steps, one panel per setting for AR(1) (the ar1-optimum claim's
  ``trained-coefficient`` records) and per (setting, s) for AR(s) (the banding claim's
  ``trained-out-of-class-share`` records; negative controls left out), on a log axis, with
  the line at 1 (L* itself: exact population moments, or Monte Carlo ones where the setting
  has no quadrature) and, for AR(s), the losses of the stationary points the runs are
  headed for.  It reads those claims' records (``reads`` of its figure spec).

>>> from claims.harness.records import make_record
>>> r = make_record(claim="training-basins", check="twin-optimum-share", label="t", paper_ref="-",
...                 measured=0.5, kind="reported", setting="c", s=2,
...                 details={"points": [{"basin": "optimum", "share": 0.5, "runs": 3}], "twins": 64,
...                          "trained_runs": {"optimum": 3}})
>>> basin_data([r])["c"].windows[2].points
(BasinPoint(basin='optimum', share=0.5, runs=3),)
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np

from claims.figures.common import detail, of_check, vector
from claims.harness.coverage import MONTE_CARLO
from claims.harness.spec import FigureSpec

__all__ = ["BasinPoint", "BasinWindow", "Basins", "basin_data", "basin_figure",
           "LossPanel", "loss_data", "loss_figure", "FIGURES"]

CLAIM = "training-basins"


@dataclass(frozen=True)
class BasinPoint:
    """A stationary point: its name (kind, class, excess over L*), the share of twins and
    the number of trained runs headed for it."""

    basin: str
    share: float
    runs: int


@dataclass(frozen=True)
class BasinWindow:
    """One window: its points (the optimum first, then by loss), the number of twins and
    the trained runs per point."""

    s: int
    points: tuple[BasinPoint, ...]
    twins: int
    trained_runs: Mapping[str, int]


@dataclass(frozen=True)
class Basins:
    """``basins-<setting>.png``: the setting's windows."""

    setting: str
    windows: Mapping[int, BasinWindow]


def _point(p, where: str) -> BasinPoint:
    missing = [k for k in ("basin", "share", "runs") if k not in p]
    if missing:
        raise ValueError(f"figure basins: {where} has no {missing}")
    return BasinPoint(str(p["basin"]), float(p["share"]), int(p["runs"]))


def basin_data(records) -> dict[str, Basins]:
    """``{setting: Basins}`` of the ``twin-optimum-share`` records, settings sorted."""
    cells: dict = {}
    for r in of_check(records, CLAIM, "twin-optimum-share"):
        points = tuple(_point(p, f"{r.check_id} details['points'][{i}]")
                       for i, p in enumerate(detail(r, "points", "basins")))
        cells.setdefault(str(r.coords.setting), {})[r.coords.s] = BasinWindow(
            r.coords.s, points, int(detail(r, "twins", "basins")),
            {str(k): int(v) for k, v in detail(r, "trained_runs", "basins").items()})
    return {st: Basins(st, dict(sorted(per_s.items()))) for st, per_s in sorted(cells.items())}


def basin_figure(plt, data: Basins, path, top: int = 7) -> None:
    """Per window, bars of the share of twins and of runs at each point (at most ``top``
    points, the rest pooled as "other")."""
    windows = sorted(data.windows)
    fig, axes = plt.subplots(1, len(windows), figsize=(4.2 * len(windows), 3.8), squeeze=False)
    for ax, s in zip(axes[0], windows):
        d = data.windows[s]
        pts = d.points
        n_runs = max(1, sum(d.trained_runs.values()))
        names = [p.basin for p in pts[:top]]
        tw = [p.share for p in pts[:top]]
        rn = [p.runs / n_runs for p in pts[:top]]
        if len(pts) > top:
            names.append(f"other ({len(pts) - top})")
            tw.append(sum(p.share for p in pts[top:]))
            rn.append(sum(p.runs for p in pts[top:]) / n_runs)
        x = np.arange(len(names))
        ax.bar(x - 0.2, tw, 0.4, label=f"noise-free twins (n = {d.twins})", color="C0")
        ax.bar(x + 0.2, rn, 0.4, label=f"trained runs (n = {n_runs})", color="C1")
        ax.set_xticks(x, names, rotation=60, ha="right", fontsize=6)
        ax.set_ylim(0, 1)
        ax.set_ylabel("share headed for the point", fontsize=7)
        ax.set_title(f"s = {s}", fontsize=9)
        ax.legend(fontsize=6)
    fig.suptitle(f"where the protocol goes, setting {data.setting}: stationary points of the population loss "
                 "(names: kind, class, excess over L*)", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


@dataclass(frozen=True)
class LossPanel:
    """One panel of ``training-loss.png``: every run's loss history at ``steps``, L*, and
    the (loss, name) of each stationary point the runs are headed for."""

    title: str
    steps: tuple[float, ...]
    curves: tuple[tuple[float, ...], ...]
    L_star: float
    basin_losses: tuple[tuple[float, str], ...]


#: the trained records whose loss histories the figure draws: (claim, check) -> the
#: details key of the population optimum's loss L*
LOSS_SOURCES = {("ar1-optimum", "trained-coefficient"): "population_loss_theta_star",
                ("banding", "trained-out-of-class-share"): "population_loss_optimum"}


def loss_data(records) -> dict[str, tuple[LossPanel, ...]]:
    """``{"": panels}``: per AR(1) setting, then per AR(s) (setting, s), each in the records'
    order, negative controls left out; ``{}`` without one."""
    panels = []
    for r in (r for claim, check in LOSS_SOURCES for r in of_check(records, claim, check)):
        key = LOSS_SOURCES[r.claim, r.check]
        c = r.coords
        if c.control:
            continue
        if r.claim == "ar1-optimum":
            title, basins = f"AR(1), setting {c.setting}", ()
        else:
            title = f"AR({c.s}), setting {c.setting}"
            basins = tuple(sorted({(float(x), str(n)) for x, n in zip(detail(r, "basin_loss_per_seed", "training-loss"),
                                                                     detail(r, "basin_per_seed", "training-loss"))}))
        panels.append(LossPanel(title, vector(detail(r, "loss_history_steps", "training-loss")),
                                tuple(vector(h) for h in detail(r, "loss_history_per_seed", "training-loss")),
                                float(detail(r, key, "training-loss")), basins))
    return {"": tuple(panels)} if panels else {}


def _plain_ticks(value, _pos=None) -> str:
    """Tick labels of the log axes as plain numbers (1.2, not 1.2 x 10^0)."""
    return f"{value:g}"


def loss_figure(plt, panels: tuple[LossPanel, ...], path, cols: int = 4) -> None:
    """Training loss / L* against steps, every run, one panel per cell (log axis)."""
    rows = -(-len(panels) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.2 * cols, 2.4 * rows + 0.6), squeeze=False)
    for ax, p in zip(axes.flat, panels):
        steps = np.asarray(p.steps, dtype=float)
        for k, curve in enumerate(p.curves):
            ax.plot(steps, np.asarray(curve, dtype=float) / p.L_star, lw=0.8, color=f"C{k % 10}",
                    label=f"seed {k}")
        ax.axhline(1.0, color="k", lw=1.0, label="L* (optimum)")
        others = [(loss, name) for loss, name in p.basin_losses if not name.startswith("optimum")]
        for k, (loss, name) in enumerate(others):
            ax.axhline(loss / p.L_star, color="0.5", lw=0.8, ls="--")
            # labels of nearby lines staggered along the axis so that they do not overprint
            ax.text(steps[-1] * (1 - 0.38 * (k % 3)), loss / p.L_star, name, fontsize=5, ha="right",
                    va="bottom", color="0.3")
        ax.set_yscale("log")
        for axis_formatter in (ax.yaxis.set_major_formatter, ax.yaxis.set_minor_formatter):
            axis_formatter(_plain_ticks)
        ax.set_title(p.title, fontsize=8)
        ax.set_xlabel("step", fontsize=7)
        ax.set_ylabel("training loss / L*", fontsize=7)
        ax.tick_params(labelsize=6)
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=5, loc="upper right")
    fig.suptitle("training loss (block means of fresh batches: a Monte Carlo estimate) over the population "
                 f"optimum's loss L* (setting {', '.join(MONTE_CARLO)}: Monte Carlo moments); dashed: stationary "
                 "points the AR(s) runs are headed for", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)


FIGURES = (
    FigureSpec("basins", "training basins, setting {key}: noise-free twins beside the trained runs",
               basin_data, basin_figure),
    FigureSpec("training-loss", "training loss against steps, over the optimum's loss L*", loss_data, loss_figure,
               reads=tuple(sorted({claim for claim, _ in LOSS_SOURCES}))),
)
