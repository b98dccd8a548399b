"""The figures of the kalman-parity claim (claims/specs/kalman_parity.py).

- ``kalman-parity.png`` (:func:`parity_data`, :func:`parity_figure`): MSE / MSE(Kalman)
  against the (integer) window s, one panel per setting, one series per method
  (:data:`SERIES`, from each record's check and variant; a stack by its depth), with each
  value's interval -- for a check judged by run, the runs' mean and range, not the share --
  N4SID (no window) as a reference line, and the tolerance each trained run is held to
  (``MSE ratio <= 1.05``, read from the records) as a labelled horizontal line; the legend
  sits right of the last panel, off the data;
- ``per-position.png`` (:func:`position_data`, :func:`position_figure`): the MSE of
  predicting y_t from y_1..y_(t-1) at every position t (the ``per-position-mse`` record's
  ``t``, ``mse`` and ``sequences``), on a log axis clipped at 3 x the 95th percentile.

>>> from claims.harness.records import make_record
>>> r = make_record(claim="kalman-parity", check="baseline-mse-ratio", label="r", paper_ref="Sec. 5",
...                 measured=1.3, kind="reported", setting="a", variant="n4sid")
>>> (p,) = parity_data([r])[""]
>>> p.series, p.value, p.interval, p.tolerance      # a reported baseline: no tolerance line
('N4SID (in context)', 1.3, None, None)
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np

from claims.figures.common import detail, interval_of, of_check, vector
from claims.harness.spec import FigureSpec

__all__ = ["SERIES", "RatioPoint", "parity_data", "parity_figure", "PerPosition", "position_data",
           "position_figure", "FIGURES"]

CLAIM = "kalman-parity"
#: the resolution the figures are laid out and saved at (one, so that what a test reads from
#: the drawn canvas is what the PNG shows)
DPI = 90

#: the series of the ratio-to-Kalman figure, by check and variant
SERIES = {("trained-mse-ratio", None): "trained layer (runs: mean and range)",
          ("baseline-mse-ratio", "least-squares"): "least squares AR(s)",
          ("baseline-mse-ratio", "best-ar-of-the-system"): "best AR(s) of the system",
          ("baseline-mse-ratio", "n4sid"): "N4SID (in context)"}


@dataclass(frozen=True)
class RatioPoint:
    """One value of a series of the parity figure: MSE / MSE(Kalman) at (setting, s), its
    interval or None, and the upper bound the value (each run's, for a check judged by run)
    is held to, or None (a reported baseline)."""

    setting: str
    s: int | None
    variant: str | None
    series: str
    value: float
    interval: tuple[float, float] | None
    tolerance: float | None = None


def parity_data(records) -> dict[str, tuple[RatioPoint, ...]]:
    """``{"": points}`` of the ``trained-mse-ratio`` and ``baseline-mse-ratio`` records whose
    series :data:`SERIES` names (or a stack's depth); ``{}`` without one."""
    out = []
    for r in of_check(records, CLAIM, "trained-mse-ratio", "baseline-mse-ratio"):
        c = r.coords
        name = f"L={c.layers}" if c.layers is not None else SERIES.get((r.check, c.variant))
        if name is None:
            continue
        if r.per_run:       # judged by run: the runs' mean and range, not the share
            vals = [float(v) for v in (r.values or [e.value for e in r.runs or []])]
            value, iv = float(np.mean(vals)), (min(vals), max(vals))
        else:
            value, iv = float(r.measured), interval_of(r)
        comparator, tol, _ = r.criterion          # each run's criterion where judged by run
        tol = float(tol) if tol is not None and comparator in ("<=", "<") else None
        out.append(RatioPoint(str(c.setting), c.s, c.variant, name, value, iv, tol))
    return {"": tuple(out)} if out else {}


def parity_figure(plt, rows: tuple[RatioPoint, ...], path) -> None:
    """MSE / MSE(Kalman) against the window s (integer ticks), per setting and method, with
    the filter at 1 and each trained check's tolerance as a labelled line."""
    from matplotlib.ticker import FixedLocator
    settings = sorted({p.setting for p in rows})
    fig, axes = plt.subplots(1, len(settings), figsize=(3.3 * len(settings) + 2.4, 3.4), squeeze=False,
                             sharey=True, dpi=DPI)
    names = sorted({p.series for p in rows if p.s is not None})
    colour = {n: f"C{i % 10}" for i, n in enumerate(names)}
    tols = sorted({p.tolerance for p in rows if p.tolerance is not None})
    for ax, st in zip(axes[0], settings):
        series: dict = {}
        for p in rows:
            if p.setting != st or p.s is None:
                continue
            series.setdefault(p.series, []).append((p.s, p.value, p.interval))
        for name, pts in sorted(series.items()):
            pts.sort()
            xs = [q[0] for q in pts]
            ys = [q[1] for q in pts]
            err = np.array([[q[1] - q[2][0], q[2][1] - q[1]] if q[2] else [0, 0] for q in pts]).T
            ax.errorbar(xs, ys, yerr=np.clip(err, 0, None), fmt="-o", ms=3, capsize=2, label=name,
                        color=colour[name])
        n4 = [p.value for p in rows if p.setting == st and p.variant == "n4sid"]
        if n4:
            ax.axhline(n4[0], color="0.45", ls="--", lw=1, label="N4SID (in context, no window)")
        ax.axhline(1.0, color="black", lw=0.8, label="Kalman filter (= 1)")
        for k, t in enumerate(tols):
            ax.axhline(t, color="darkred", ls=(0, (4, 2)) if k == 0 else ":", lw=1.1,
                       label=f"tolerance {t:g}: a trained run holds at <= {t:g}")
        windows = sorted({p.s for p in rows if p.s is not None})
        ax.xaxis.set_major_locator(FixedLocator(windows))       # s is an integer window: no 1.5
        ax.set_title(f"setting {st}", fontsize=9)
        ax.set_xlabel("window s (integer)")
    axes[0][0].set_ylabel("MSE / MSE(Kalman filter)")
    axes[0][-1].legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.03, 1.0), borderaxespad=0.0)
    fig.suptitle("Kalman parity: every predictor against the filter, same held-out sequences", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)


@dataclass(frozen=True)
class PerPosition:
    """``per-position.png``: the MSE at each position ``t`` per predictor, in one setting,
    over ``sequences`` held-out sequences."""

    setting: str
    t: tuple[int, ...]
    mse: Mapping[str, tuple[float, ...]]
    sequences: int


def position_data(records) -> dict[str, PerPosition]:
    """``{"": PerPosition}`` from the (first) ``per-position-mse`` record; ``{}`` without one."""
    found = of_check(records, CLAIM, "per-position-mse")
    if not found:
        return {}
    r = found[0]
    return {"": PerPosition(str(r.coords.setting), tuple(int(t) for t in detail(r, "t", "per-position")),
                            {str(k): vector(v) for k, v in detail(r, "mse", "per-position").items()},
                            int(detail(r, "sequences", "per-position")))}


def position_figure(plt, d: PerPosition, path) -> None:
    """Every predictor's MSE against the position, one early-position spike clipped (drawn
    as a triangle on the edge and counted in the title)."""
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    allv = np.concatenate([np.asarray(v, dtype=float) for v in d.mse.values()])
    allv = allv[np.isfinite(allv) & (allv > 0)]
    top = float(np.quantile(allv, 0.95)) * 3.0        # one early-position spike must not squeeze the rest
    clipped = 0
    for name, v in d.mse.items():
        v = np.asarray(v, dtype=float)
        over = v > top
        clipped += int(over.sum())
        line, = ax.plot(d.t, np.minimum(v, top), "-", label=name)
        if over.any():
            ax.plot(np.asarray(d.t)[over], [top] * int(over.sum()), "^", ms=6, color=line.get_color())
    ax.set_xlabel("position t (predicting y_t from y_1..y_(t-1))")
    ax.set_ylabel("MSE")
    ax.set_yscale("log")
    ax.set_ylim(top=top * 1.3)
    ax.legend(fontsize=7)
    ax.set_title(f"per-position MSE, setting {d.setting} ({d.sequences} held-out sequences); axis clipped at 3 x "
                 f"the 95th percentile ({clipped} point(s) above, triangles)", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


FIGURES = (
    FigureSpec("kalman-parity", "Kalman parity: MSE ratio to the filter against s, per method",
               parity_data, parity_figure),
    FigureSpec("per-position", "per-position MSE curves, setting {data.setting}", position_data, position_figure),
)
