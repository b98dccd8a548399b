"""The figure of the spectral-shift claim (claims/specs/spectral_shift.py): ``spectral-shift.png``.

The median squared error over the filter's (each ``median-error-ratio`` record's measured
value and interval) against the radius r of the test systems (lambda ~ U[-r, r]): one series
per depth and training radius of the trained stacks (the mean over seeds, its t interval),
one per baseline (:data:`SERIES`).  Medians, not means: a stack's error is heavy-tailed out
of distribution.  A linear axis clipped at :data:`claims.figures.common.CLIP` (said on the
figure; points beyond it as triangles on the edge).  The x label says what x is (the test
systems' radius) and names every training radius of the stacks (read from their variants,
``trained-at-r=<r>``); those in view are dotted vertical lines.  The legend sits right of
the axes, off the data.

>>> from claims.harness.records import make_record
>>> r = make_record(claim="spectral-shift", check="median-error-ratio", label="m", paper_ref="Sec. 5",
...                 measured=1.1, kind="reported", setting="a", radius=0.9, variant="n4sid")
>>> shift_data([r])[""].points
(ShiftPoint(series='N4SID (median)', radius=0.9, value=1.1, interval=None, stack=False, trained_at=None),)
>>> trained_at("trained-at-r=0.9"), trained_at("n4sid")
(0.9, None)
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from claims.figures.common import CLIP, interval_of, of_check, one_setting, wrap
from claims.harness.spec import FigureSpec

__all__ = ["SERIES", "ShiftPoint", "ShiftFigure", "trained_at", "shift_data", "shift_figure", "FIGURES"]

CLAIM = "spectral-shift"
STEM = "spectral-shift"
#: the resolution the figure is laid out and saved at (what a test reads from the canvas is the PNG)
DPI = 90

#: the baselines' series, by variant (a stack's series is its depth and training radius)
SERIES = {"least-squares-ar2": "in-context least squares AR(2) (median)", "n4sid": "N4SID (median)"}


@dataclass(frozen=True)
class ShiftPoint:
    """One value: the series, the test radius, the median error over the filter's, its
    interval (or None), whether the series is a trained stack and the radius the stack was
    trained at (None: a baseline, or not recorded)."""

    series: str
    radius: float
    value: float
    interval: tuple[float, float] | None
    stack: bool
    trained_at: float | None = None


@dataclass(frozen=True)
class ShiftFigure:
    """``spectral-shift.png``: the setting the systems are drawn in and every point."""

    setting: str
    points: tuple[ShiftPoint, ...]


def _series(c) -> str:
    if c.layers is not None:
        return f"L={c.layers}, {(c.variant or '').replace('trained-at-r=', 'trained at r = ')}"
    return SERIES.get(c.variant or "", c.variant or "")


def trained_at(variant: str | None) -> float | None:
    """The training radius a stack's variant names (``trained-at-r=0.9``), else None."""
    prefix = "trained-at-r="
    return float(variant[len(prefix):]) if variant and variant.startswith(prefix) else None


def shift_data(records) -> dict[str, ShiftFigure]:
    """``{"": ShiftFigure}`` of the ``median-error-ratio`` records; ``{}`` without one."""
    found = of_check(records, CLAIM, "median-error-ratio")
    if not found:
        return {}
    points = tuple(ShiftPoint(_series(r.coords), float(r.coords.radius), float(r.measured), interval_of(r),
                              r.coords.layers is not None,
                              trained_at(r.coords.variant) if r.coords.layers is not None else None)
                   for r in found)
    return {"": ShiftFigure(one_setting(found, STEM), points)}


def shift_figure(plt, data: ShiftFigure, path) -> int:
    """Median squared error / the filter's against the test radius, per depth and training
    radius (mean over seeds, t-interval bars) and per baseline; returns the number of
    clipped points."""
    rows = data.points
    fig, ax = plt.subplots(figsize=(8.2, 4.4), dpi=DPI)
    series: dict = {}
    stacks = set()
    for p in rows:
        series.setdefault(p.series, []).append((p.radius, p.value, p.interval))
        if p.stack:
            stacks.add(p.series)
    clipped = 0
    for name, pts in sorted(series.items()):
        pts.sort()
        rs = np.array([q[0] for q in pts])
        ys = np.array([q[1] for q in pts])
        err = np.array([[q[1] - q[2][0], q[2][1] - q[1]] if q[2] else [0.0, 0.0] for q in pts]).T
        over = ys > CLIP
        clipped += int(over.sum())
        line = ax.errorbar(rs, np.minimum(ys, CLIP), yerr=np.clip(err, 0, None) * ~over,
                           fmt="-o" if name in stacks else "--o",
                           ms=3, capsize=2, label=name)
        if over.any():
            ax.plot(rs[over], [CLIP] * int(over.sum()), "^", ms=7, color=line[0].get_color())
    ax.axhline(1.0, color="black", lw=0.8)
    radii = sorted({p.trained_at for p in rows if p.trained_at is not None})
    lo, hi = min(p.radius for p in rows), max(p.radius for p in rows)
    for r in radii:
        if lo <= r <= hi:
            ax.axvline(r, color="0.6", ls=":", lw=1)
    # the axis ends just above the highest point or interval drawn, at most at the clip
    highs = [min(max(p.value, p.interval[1] if p.interval else p.value), CLIP) for p in rows]
    ax.set_ylim(0.9, max(1.2, max(highs, default=1.0) * 1.08) if not clipped else CLIP * 1.05)
    named = ", ".join(f"{r:g}" for r in radii)
    inside = [f"{r:g}" for r in radii if lo <= r <= hi]
    ax.set_xlabel("test radius r: the test systems' lambda ~ U[-r, r]" + (
        f"\nthe stacks' training radii: r = {named}" + (f" (dotted: {', '.join(inside)})" if inside else "")
        if radii else ""), fontsize=9)
    ax.set_ylabel("median squared error / the filter's")
    ax.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0), title_fontsize=6,
              title="stacks: depth L, training radius r;\nbaselines fit in context")
    ax.set_title(wrap(f"spectral shift: setting {data.setting}, lambda ~ U[-r, r]; medians (errors are "
                      f"heavy-tailed); axis clipped at {CLIP:g} ({clipped} point(s) above, triangles)", 70),
                 fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return clipped


FIGURES = (FigureSpec(STEM, "spectral shift: median error over the filter's against the test radius",
                      shift_data, shift_figure),)
