"""The figure of the depth claim (claims/specs/depth.py): ``depth.png``.

Every value is a median ratio: the median over the held-out sequences of a predictor's
squared error, over the Kalman filter's median on the same sequences (claims._lds.error_summary;
medians, as the errors are heavy-tailed).  Against T: per depth of trained stacks
(``trained-median-error``: the mean over seeds of each seed's median ratio, t-interval
bars) and per reference (``reference-median-error``, by variant, one evaluation each: the
construction at the stacks' depths and at L(T) = ceil(C ln T) (claims._depth.depth_for; one
series over T), the one-layer optimum, least squares, the best AR(2) of each system);
beside it the trained stacks against depth, per T.  Series in a logical order (trained by
depth, the construction by depth, then the references), each in its own colour.  A linear
axis clipped at :data:`claims.figures.common.CLIP` (triangles on the edge: a fixed-depth
construction diverges on some sequences).

>>> from claims.harness.records import make_record
>>> r = make_record(claim="depth", check="reference-median-error", label="m", paper_ref="Sec. 5",
...                 measured=1.2, kind="reported", setting="a", T=10, variant="least-squares")
>>> depth_data([r])[""].points
(DepthPoint(series='least squares', layers=None, T=10, value=1.2, interval=None, seeds=None),)
>>> r17 = make_record(claim="depth", check="reference-median-error", label="m", paper_ref="Sec. 5",
...                   measured=2.0, kind="reported", setting="a", T=10, variant="construction-L=17")
>>> [p.series for p in depth_data([r17])[""].points]                  # L(10) = 17
['construction at L(T)']
>>> sorted(["least squares", "construction L=17", "trained L=2", "construction L=2", "trained L=10"],
...        key=series_order)
['trained L=2', 'trained L=10', 'construction L=2', 'construction L=17', 'least squares']
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from claims._depth import depth_for
from claims.figures.common import CLIP, distinct_colours, interval_of, of_check, one_setting
from claims.harness.spec import FigureSpec

__all__ = ["DepthPoint", "DepthFigure", "depth_data", "series_order", "depth_figure", "FIGURES"]

CLAIM = "depth"
STEM = "depth"
#: the series of the construction run at L(T), one depth per T
AT_LT = "construction at L(T)"
#: the references after the trained stacks and the construction, in this order
REFERENCES = ("one layer optimum", "least squares", "best ar2 of the system")
YLABEL = "median squared error / the filter's median"


@dataclass(frozen=True)
class DepthPoint:
    """One value: its series, the stack's depth (None for a reference; the construction's
    depth for a construction), T, the median ratio (for trained stacks the mean over seeds
    of the seeds' median ratios), its interval (or None) and the number of seeds (None for
    a reference)."""

    series: str
    layers: int | None
    T: int
    value: float
    interval: tuple[float, float] | None
    seeds: int | None = None


@dataclass(frozen=True)
class DepthFigure:
    """``depth.png``: the setting the stacks train on and every point."""

    setting: str
    points: tuple[DepthPoint, ...]

    @property
    def seeds(self) -> tuple[int, ...]:
        """The numbers of seeds of the trained points (one, as a rule)."""
        return tuple(sorted({p.seeds for p in self.points if p.seeds is not None}))


def depth_data(records) -> dict[str, DepthFigure]:
    """``{"": DepthFigure}`` of the median-error records; ``{}`` without one.  The
    construction at L(T) is one series over T (its own depth in ``layers``); at a T where
    L(T) is also one of the trained stacks' depths the point is in both series."""
    found = of_check(records, CLAIM, "trained-median-error", "reference-median-error")
    if not found:
        return {}
    trained_depths = {r.coords.layers for r in found if r.check == "trained-median-error"}
    points = []
    for r in found:
        c = r.coords
        if c.layers is not None and r.check == "trained-median-error":
            points.append(DepthPoint(f"trained L={c.layers}", c.layers, c.T, float(r.measured), interval_of(r),
                                     r.n_seeds))
            continue
        name = (c.variant or "").replace("-", " ")
        m = re.fullmatch(r"construction L=(\d+)", name)
        L = int(m.group(1)) if m else None
        where = [name] if L is None or L != depth_for(c.T) or L in trained_depths else []
        if L is not None and L == depth_for(c.T):
            where.append(AT_LT)
        points += [DepthPoint(n, L, c.T, float(r.measured), interval_of(r)) for n in where]
    return {"": DepthFigure(one_setting(found, STEM), tuple(points))}


def series_order(name: str) -> tuple:
    """The legend's order: trained stacks by depth, the construction by depth then at L(T),
    the references of :data:`REFERENCES`, anything else by name."""
    m = re.fullmatch(r"(trained|construction) L=(\d+)", name)
    if m:
        return (0 if m.group(1) == "trained" else 1, int(m.group(2)), name)
    if name == AT_LT:
        return (1, float("inf"), name)
    return (2, REFERENCES.index(name) if name in REFERENCES else len(REFERENCES), name)


def _label(name: str, pts: list[DepthPoint]) -> str:
    if name.startswith("trained"):
        n = sorted({p.seeds for p in pts if p.seeds})
        return f"{name} (mean of {'/'.join(map(str, n)) or 'the'} seeds)"
    if name == AT_LT:
        return f"{name} (L = {', '.join(str(p.layers) for p in pts)})"
    return name


def depth_figure(plt, data: DepthFigure, path) -> None:
    """Against T (log axis, ticks at the T drawn), one line per series with its interval
    bars, clipped at :data:`CLIP`, legend in :func:`series_order`; beside it the trained
    stacks against depth, one line per T."""
    pts: dict[str, list[DepthPoint]] = {}
    for p in data.points:
        pts.setdefault(p.series, []).append(p)
    names = sorted(pts, key=series_order)
    colours = dict(zip(names, distinct_colours(len(names))))
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(14, 4.6))
    clipped = 0
    for name in names:
        p = sorted(pts[name], key=lambda x: x.T)
        ys = np.array([x.value for x in p])
        over = ys > CLIP
        clipped += int(over.sum())
        err = np.array([[x.value - x.interval[0], x.interval[1] - x.value] if x.interval else [0.0, 0.0]
                        for x in p]).T
        trained = name.startswith("trained")
        ref = name in REFERENCES          # drawn over the trained lines, open squares: the one-layer
        a1.errorbar([x.T for x in p], np.minimum(ys, CLIP), yerr=np.clip(err, 0, None) * ~over,   # optimum sits on L=1
                    fmt="-o" if trained else (":s" if ref else "--."), ms=4 if ref else 3, capsize=2,
                    color=colours[name], label=_label(name, p), zorder=3 if ref else 2,
                    **({"mfc": "none", "lw": 1.6} if ref else {}))
        if over.any():
            a1.plot(np.array([x.T for x in p])[over], [CLIP] * int(over.sum()), "^", ms=7, color=colours[name])
    Ts = sorted({p.T for p in data.points})
    a1.set_xscale("log")
    a1.set_xticks(Ts, [str(T) for T in Ts])
    a1.minorticks_off()
    a1.set_xlabel("T")
    a1.axhline(1.0, color="black", lw=0.8)
    seeds = "/".join(map(str, data.seeds))
    a1.set_ylabel(f"{YLABEL}\n(trained: mean of {seeds or 'the'} seeds, bars: 95 % t intervals)", fontsize=8)
    a1.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    a1.set_title(f"against T (axis clipped at {CLIP:g}: {clipped} point(s) above, triangles; "
                 "line at 1: the filter)", fontsize=8)
    for T in Ts:
        depth = sorted((x.layers, x.value) for n in names if n.startswith("trained") for x in pts[n] if x.T == T)
        if depth:
            a2.plot([d for d, _ in depth], [v for _, v in depth], "-o", ms=3, label=f"T = {T}")
    depths = sorted({x.layers for n in names if n.startswith("trained") for x in pts[n]})
    a2.set_xlabel("depth L of the trained stack")
    a2.set_xticks(depths)
    a2.set_ylabel(f"{YLABEL}\n(mean of {seeds or 'the'} seeds)", fontsize=8)
    a2.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    a2.set_title("trained stacks against depth", fontsize=9)
    fig.suptitle(f"depth: trained stacks of linear attention layers (s = 2, setting {data.setting}, "
                 "lambda ~ U[-0.9, 0.9])\neach value: the median over held-out sequences of the squared error, "
                 "over the filter's median -- the errors are heavy-tailed; trained stacks: the mean over seeds "
                 "of each seed's median", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


FIGURES = (FigureSpec(STEM, "depth: median error of the trained stacks against T and against depth",
                      depth_data, depth_figure),)
