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
from matplotlib.lines import Line2D

from claims.figures.common import detail, of_check, vector
from claims.harness.coverage import MONTE_CARLO
from claims.harness.spec import FigureSpec

__all__ = ["BasinPoint", "BasinWindow", "Basins", "basin_data", "basin_figure",
           "LossPanel", "loss_data", "spread", "loss_figure", "FIGURES"]

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


def spread(ys, gap: float, lo: float = 0.0, hi: float = 1.0) -> list[float]:
    """Positions for labels wanted at ``ys`` (any order), each at least ``gap`` from the
    next and, where they fit, inside [lo, hi]: the labels' order kept, each moved as little
    as the others allow (a forward, a backward and a forward pass).

    >>> [round(y, 2) for y in spread([0.5, 0.52, 0.1], 0.1)]
    [0.46, 0.56, 0.1]
    >>> [round(y, 2) for y in spread([0.99, 1.0], 0.1, 0.05, 0.95)]
    [0.85, 0.95]
    """
    order = sorted(range(len(ys)), key=lambda i: ys[i])
    p = [float(ys[i]) for i in order]
    n = len(p)
    if n == 0:
        return []
    centre = [max(p[0], lo)]
    for y in p[1:]:
        centre.append(max(y, centre[-1] + gap))
    # a cluster pushed up is centred on its wanted positions, then kept within [lo, hi]
    out, k = list(centre), 0
    while k < n:
        j = k
        while j + 1 < n and out[j + 1] - out[j] <= gap + 1e-12:
            j += 1
        shift = (sum(p[k:j + 1]) - sum(out[k:j + 1])) / (j + 1 - k)
        for i in range(k, j + 1):
            out[i] += min(0.0, shift)
        k = j + 1
    for i in range(n - 1, -1, -1):
        out[i] = min(out[i], hi if i == n - 1 else out[i + 1] - gap)
    for i in range(n):
        out[i] = max(out[i], lo if i == 0 else out[i - 1] + gap)
    res = [0.0] * n
    for rank, i in enumerate(order):
        res[i] = out[rank]
    return res


#: the layout of ``training-loss.png``, in inches: per column the room for the y tick
#: labels and label, the axes and the margin column of labels; per row the axes, the room
#: above them (title) and below (x tick labels and label); the suptitle's band
_PAD_LEFT, _AX_W, _MARGIN, _AX_H, _PAD_TOP, _PAD_BOTTOM, _TITLE = 0.62, 2.4, 1.6, 1.85, 0.3, 0.5, 0.55
_LABEL_SIZE = 6


def _margin_labels(ax, items, x_at) -> None:
    """Label horizontal lines of ``ax`` in its right margin: ``items`` of (y in data units,
    text), each text at its line's height or moved off its neighbours (:func:`spread`),
    joined to the line's end by a thin leader."""
    if not items:
        return
    to_axes = ax.transAxes.inverted()
    want = [float(to_axes.transform(ax.transData.transform((x_at, y)))[1]) for y, _ in items]
    gap = 1.35 * _LABEL_SIZE / 72 / _AX_H
    for (_, text), y, at in zip(items, want, spread(want, gap, gap / 2, 1 - gap / 2)):
        # the leader is the figure's (not the axes'): it is no data line of the panel
        ax.figure.add_artist(Line2D([1.0, 1.025, 1.06], [y, y, at], transform=ax.transAxes, lw=0.5, color="0.5"))
        ax.text(1.065, at, text, transform=ax.transAxes, fontsize=_LABEL_SIZE, va="center", ha="left",
                color="0.25")


def loss_figure(plt, panels: tuple[LossPanel, ...], path, cols: int = 4) -> None:
    """Training loss / L* against steps, every run, one panel per cell (log axis); the line
    at L* and those of the stationary points the runs are headed for labelled in a margin
    column right of each panel (:func:`_margin_labels`: no label overprints another, a
    curve or a tick label); the runs' colours in a legend in the first panel's margin."""
    rows = -(-len(panels) // cols)
    cell_w, cell_h = _PAD_LEFT + _AX_W + _MARGIN, _PAD_TOP + _AX_H + _PAD_BOTTOM
    W, H = cols * cell_w + 0.1, rows * cell_h + _TITLE
    fig = plt.figure(figsize=(W, H))
    axes = []
    for k, p in enumerate(panels):
        r, c = divmod(k, cols)
        ax = fig.add_axes(((c * cell_w + _PAD_LEFT) / W, (H - _TITLE - (r + 1) * cell_h + _PAD_BOTTOM) / H,
                           _AX_W / W, _AX_H / H))
        axes.append(ax)
        steps = np.asarray(p.steps, dtype=float)
        for j, curve in enumerate(p.curves):
            ax.plot(steps, np.asarray(curve, dtype=float) / p.L_star, lw=0.8, color=f"C{j % 10}",
                    label=f"seed {j}")
        ax.axhline(1.0, color="k", lw=1.0, label="L* (optimum)")
        others = [(loss / p.L_star, name) for loss, name in p.basin_losses if not name.startswith("optimum")]
        for y, _ in others:
            ax.axhline(y, color="0.5", lw=0.8, ls="--")
        ax.set_yscale("log")
        for axis_formatter in (ax.yaxis.set_major_formatter, ax.yaxis.set_minor_formatter):
            axis_formatter(_plain_ticks)
        ax.set_title(p.title, fontsize=8)
        ax.set_xlabel("step", fontsize=7)
        ax.set_ylabel("training loss / L*", fontsize=7)
        ax.tick_params(labelsize=6)
        ax.set_ylim(ax.get_ylim())                       # fixed before the labels are placed
        _margin_labels(ax, [(1.0, "L* (optimum)")] + others, steps[-1])
    if axes:
        most = max(range(len(panels)), key=lambda k: len(panels[k].curves))
        handles = [h for h in axes[most].get_lines() if h.get_label().startswith("seed")]
        axes[0].legend(handles=handles, fontsize=6, loc="upper left", bbox_to_anchor=(1.02, 1.0),
                       title="runs", title_fontsize=6)
    fig.suptitle("training loss (block means of fresh batches: a Monte Carlo estimate) over the population "
                 f"optimum's loss L* (setting {', '.join(MONTE_CARLO)}: Monte Carlo moments);\nright of each "
                 "panel: L* and the stationary points the AR(s) runs are headed for (dashed; name: kind, class, "
                 "excess over L*)", fontsize=8, y=1 - 0.08 / H, va="top")
    fig.savefig(path, dpi=90)
    plt.close(fig)


FIGURES = (
    FigureSpec("basins", "training basins, setting {key}: noise-free twins beside the trained runs",
               basin_data, basin_figure),
    FigureSpec("training-loss", "training loss against steps, over the optimum's loss L*", loss_data, loss_figure,
               reads=tuple(sorted({claim for claim, _ in LOSS_SOURCES}))),
)
