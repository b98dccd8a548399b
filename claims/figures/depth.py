"""The figure of the depth claim (claims/specs/depth.py): ``depth.png``.

The median squared error over the filter's (each record's measured value and interval)
against T, per depth of trained stacks (``trained-median-error``: the mean over seeds,
t-interval bars) and per reference (``reference-median-error``, by variant: the
construction at the stacks' depths and at L(T), the one-layer optimum, least squares, the
best AR(2) of each system); and against depth, per T.  A linear axis clipped at
:data:`claims.figures.common.CLIP` (triangles on the edge: a fixed-depth construction
diverges on some sequences).

>>> from claims.harness.records import make_record
>>> r = make_record(claim="depth", check="reference-median-error", label="m", paper_ref="Sec. 5",
...                 measured=1.2, kind="reported", setting="a", T=10, variant="least-squares")
>>> depth_data([r])[""].points
(DepthPoint(series='least squares', layers=None, T=10, value=1.2, interval=None),)
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from claims.figures.common import CLIP, interval_of, of_check, one_setting
from claims.harness.spec import FigureSpec

__all__ = ["DepthPoint", "DepthFigure", "depth_data", "depth_figure", "FIGURES"]

CLAIM = "depth"
STEM = "depth"


@dataclass(frozen=True)
class DepthPoint:
    """One value: its series, the stack's depth (None for a reference), T, the median error
    over the filter's and its interval (or None)."""

    series: str
    layers: int | None
    T: int
    value: float
    interval: tuple[float, float] | None


@dataclass(frozen=True)
class DepthFigure:
    """``depth.png``: the setting the stacks train on and every point."""

    setting: str
    points: tuple[DepthPoint, ...]


def depth_data(records) -> dict[str, DepthFigure]:
    """``{"": DepthFigure}`` of the median-error records; ``{}`` without one."""
    found = of_check(records, CLAIM, "trained-median-error", "reference-median-error")
    if not found:
        return {}
    points = []
    for r in found:
        c = r.coords
        if c.layers is not None and r.check == "trained-median-error":
            name, layers = f"trained L={c.layers} (mean over seeds)", c.layers
        else:
            name, layers = (c.variant or "").replace("-", " "), None
        points.append(DepthPoint(name, layers, c.T, float(r.measured), interval_of(r)))
    return {"": DepthFigure(one_setting(found, STEM), tuple(points))}


def depth_figure(plt, data: DepthFigure, path) -> None:
    """Against T (log axis), one line per series with its interval bars, clipped at
    :data:`CLIP`; beside it the trained stacks against depth, one line per T."""
    pts: dict = {}
    depth_of = {}
    for p in data.points:
        depth_of[p.series] = p.layers
        pts.setdefault(p.series, []).append((p.T, p.value, p.interval))
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(14, 4.2))
    clipped = 0
    for name, p in sorted(pts.items()):
        p.sort(key=lambda x: x[0])
        ys = np.array([x[1] for x in p])
        over = ys > CLIP
        clipped += int(over.sum())
        err = np.array([[x[1] - x[2][0], x[2][1] - x[1]] if x[2] else [0.0, 0.0] for x in p]).T
        line = a1.errorbar([x[0] for x in p], np.minimum(ys, CLIP), yerr=np.clip(err, 0, None) * ~over,
                           fmt="-o" if depth_of[name] is not None else "--.", ms=3, capsize=2, label=name)
        if over.any():
            a1.plot(np.array([x[0] for x in p])[over], [CLIP] * int(over.sum()), "^", ms=7,
                    color=line[0].get_color())
    a1.set_xscale("log")
    a1.set_xlabel("T")
    a1.axhline(1.0, color="black", lw=0.8)
    a1.set_ylabel("median squared error / the filter's (bars: 95 % t intervals over seeds)")
    a1.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    a1.set_title(f"against T (axis clipped at {CLIP:g}: {clipped} point(s) above, triangles)", fontsize=8)
    Ts = sorted({x[0] for p in pts.values() for x in p})
    for T in Ts:
        depth = sorted((depth_of[n], v) for n, p in pts.items() if depth_of[n] is not None
                       for t, v, _ in p if t == T)
        if depth:
            a2.plot([d for d, _ in depth], [v for _, v in depth], "-o", ms=3, label=f"T = {T}")
    a2.set_xlabel("depth L of the trained stack")
    a2.set_xticks([1, 2, 4])
    a2.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    a2.set_title("trained stacks against depth", fontsize=9)
    fig.suptitle(f"depth: trained stacks of linear attention layers (s = 2, setting {data.setting}, "
                 "lambda ~ U[-0.9, 0.9]); medians -- the errors are heavy-tailed", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


FIGURES = (FigureSpec(STEM, "depth: median error of the trained stacks against T and against depth",
                      depth_data, depth_figure),)
