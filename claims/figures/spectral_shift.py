"""The figure of the spectral-shift claim (claims/specs/spectral_shift.py): ``spectral-shift.png``.

The median squared error over the filter's (each ``median-error-ratio`` record's measured
value and interval) against the radius r of the test systems (lambda ~ U[-r, r]): one series
per depth and training radius of the trained stacks (the mean over seeds, its t interval),
one per baseline (:data:`SERIES`).  Medians, not means: a stack's error is heavy-tailed out
of distribution.  A linear axis clipped at :data:`claims.figures.common.CLIP` (said on the
figure; points beyond it as triangles on the edge).

>>> from claims.harness.records import make_record
>>> r = make_record(claim="spectral-shift", check="median-error-ratio", label="m", paper_ref="Sec. 5",
...                 measured=1.1, kind="reported", setting="a", radius=0.9, variant="n4sid")
>>> shift_data([r])[""].points
(ShiftPoint(series='N4SID (median)', radius=0.9, value=1.1, interval=None, stack=False),)
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from claims.figures.common import CLIP, interval_of, of_check, one_setting, wrap
from claims.harness.spec import FigureSpec

__all__ = ["SERIES", "ShiftPoint", "ShiftFigure", "shift_data", "shift_figure", "FIGURES"]

CLAIM = "spectral-shift"
STEM = "spectral-shift"

#: the baselines' series, by variant (a stack's series is its depth and training radius)
SERIES = {"least-squares-ar2": "in-context least squares AR(2) (median)", "n4sid": "N4SID (median)"}


@dataclass(frozen=True)
class ShiftPoint:
    """One value: the series, the test radius, the median error over the filter's, its
    interval (or None) and whether the series is a trained stack."""

    series: str
    radius: float
    value: float
    interval: tuple[float, float] | None
    stack: bool


@dataclass(frozen=True)
class ShiftFigure:
    """``spectral-shift.png``: the setting the systems are drawn in and every point."""

    setting: str
    points: tuple[ShiftPoint, ...]


def _series(c) -> str:
    if c.layers is not None:
        return f"L={c.layers}, {(c.variant or '').replace('trained-at-r=', 'trained at r = ')}"
    return SERIES.get(c.variant or "", c.variant or "")


def shift_data(records) -> dict[str, ShiftFigure]:
    """``{"": ShiftFigure}`` of the ``median-error-ratio`` records; ``{}`` without one."""
    found = of_check(records, CLAIM, "median-error-ratio")
    if not found:
        return {}
    points = tuple(ShiftPoint(_series(r.coords), float(r.coords.radius), float(r.measured), interval_of(r),
                              r.coords.layers is not None) for r in found)
    return {"": ShiftFigure(one_setting(found, STEM), points)}


def shift_figure(plt, data: ShiftFigure, path) -> int:
    """Median squared error / the filter's against the test radius, per depth and training
    radius (mean over seeds, t-interval bars) and per baseline; returns the number of
    clipped points."""
    rows = data.points
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
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
    ax.axvline(0.9, color="0.6", ls=":", lw=1)
    # the axis ends just above the highest point or interval drawn, at most at the clip
    highs = [min(max(p.value, p.interval[1] if p.interval else p.value), CLIP) for p in rows]
    ax.set_ylim(0.9, max(1.2, max(highs, default=1.0) * 1.08) if not clipped else CLIP * 1.05)
    ax.set_xlabel("spectral radius r of the test systems (the stacks' own training radius 0.9: dotted)")
    ax.set_ylabel("median squared error / the filter's")
    ax.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.set_title(wrap(f"spectral shift: setting {data.setting}, lambda ~ U[-r, r]; medians (errors are "
                      f"heavy-tailed); axis clipped at {CLIP:g} ({clipped} point(s) above, triangles)", 70),
                 fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return clipped


FIGURES = (FigureSpec(STEM, "spectral shift: median error over the filter's against the test radius",
                      shift_data, shift_figure),)
