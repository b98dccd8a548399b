"""The figures of the pcg-alignment claim (claims/specs/pcg_alignment.py): ``cosines-<setting>.png``.

For each candidate cosine cos_1, cos_2, cos_3 (docs/math.md section 6.3) two panels on one
x axis, each trained run coloured by the basin it is headed for (``basin_per_seed``):

* top, *what the paper's number is about*: each run's mean of the cosine over its held-out
  sequences (a dot; the ``cos_1-mean`` record's ``per_seed``) and the population
  optimum's (``optimum``, a black diamond); on cos_1, the paper's value and tolerance
  (0.88 +- 0.05 in setting a, 0.93 +- 0.01 in b) as a line and band -- a statement about
  these means, read back from the ``trained-cos1`` record (its run values are each run's
  mean cos_1 minus the paper's number, so the paper's number is the median of mean - value
  over the runs);
* bottom: the distribution of the cosine over single held-out sequences, one step line per
  run (each normalised to its own sequences, not pooled) and the optimum's in black; no band
  is drawn there -- single sequences are not held to the paper's number.

The legend (a figure legend) sits right of the panels, off every axes.

>>> from claims.harness.records import make_record
>>> h = {"mean": 0.5, "hist": [1, 3]}
>>> cos = {"cos_1": h, "cos_2": h, "cos_3": h}
>>> r = make_record(claim="pcg-alignment", check="cos_1-mean", label="c", paper_ref="Sec. 4",
...                 measured=0.5, kind="reported", setting="b", s=4,
...                 details={"per_seed": [cos], "optimum": cos, "basin_per_seed": ["optimum"]})
>>> d = cosine_data([r])["b"]
>>> d.optimum["cos_1"], d.paper
(Histogram(mean=0.5, hist=(1.0, 3.0)), None)
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np

from claims.figures.common import detail, of_check, vector, wrap
from claims.harness.display import format_value
from claims.harness.spec import FigureSpec

__all__ = ["COSINES", "Histogram", "Cosines", "cosine_data", "cosine_figure", "FIGURES"]

CLAIM = "pcg-alignment"
STEM = "cosines"
#: the candidate cosines each panel of the figure shows (docs/math.md section 6.3)
COSINES = ("cos_1", "cos_2", "cos_3")
#: the resolution the figure is laid out and saved at (what a test reads from the canvas is the PNG)
DPI = 90


@dataclass(frozen=True)
class Histogram:
    """One cosine over the held-out sequences: its mean and its histogram's counts on [-1, 1]."""

    mean: float
    hist: tuple[float, ...]


@dataclass(frozen=True)
class Cosines:
    """``cosines-<setting>.png``: each seed's histograms, the optimum's, the basin each seed's
    run is headed for, and (the paper's cos_1, its tolerance) where a trained record has them."""

    setting: str
    per_seed: tuple[Mapping[str, Histogram], ...]
    optimum: Mapping[str, Histogram]
    basins: tuple[str | None, ...]
    paper: tuple[float, float] | None = None


def _histograms(d, where: str) -> dict[str, Histogram]:
    missing = [c for c in COSINES if c not in d] or [f"{c}.{k}" for c in COSINES for k in ("mean", "hist")
                                                      if k not in d[c]]
    if missing:
        raise ValueError(f"figure {STEM}: {where} has no {missing}")
    return {c: Histogram(float(d[c]["mean"]), vector(d[c]["hist"])) for c in COSINES}


def cosine_data(records) -> dict[str, Cosines]:
    """``{setting: Cosines}`` from the trained layers' ``cos_1-mean`` records (not the
    population optimum's own row, variant ``population-optimum``) and the non-control
    ``trained-cos1`` records of the same settings, settings sorted."""
    out = {}
    for r in of_check(records, CLAIM, "cos_1-mean"):
        if r.coords.variant is not None:
            continue
        st = str(r.coords.setting)
        per_seed = tuple(_histograms(sd, f"{r.check_id} details['per_seed'][{i}]")
                         for i, sd in enumerate(detail(r, "per_seed", STEM)))
        out[st] = Cosines(st, per_seed, _histograms(detail(r, "optimum", STEM), f"{r.check_id} details['optimum']"),
                          tuple(None if b is None else str(b) for b in detail(r, "basin_per_seed", STEM)))
    for r in of_check(records, CLAIM, "trained-cos1"):
        st = str(r.coords.setting)
        if st in out and r.runs and not r.coords.control:
            means = [sd["cos_1"].mean for sd in out[st].per_seed]
            refs = [m - e.value for m, e in zip(means, r.runs)]
            tolerance = r.per_run["tolerance"] if r.per_run else r.tolerance
            d = out[st]
            out[st] = Cosines(d.setting, d.per_seed, d.optimum, d.basins,
                              (float(np.median(refs)), float(tolerance)))
    return dict(sorted(out.items()))


def _colours(d: Cosines) -> tuple[list, list]:
    """The basin of each run (None where unknown) and the basins in order of first run."""
    basins = list(d.basins) + [None] * (len(d.per_seed) - len(d.basins))
    return basins, list(dict.fromkeys(b for b in basins if b is not None))


def _run_colour(basin, order) -> str:
    return f"C{order.index(basin) % 10}" if basin in order else "C0"


def _means_strip(ax, d: Cosines, name: str, basins, order) -> None:
    """Each run's mean of ``name`` over its sequences (dots), the optimum's (diamond) and, on
    cos_1, the paper's band for those means."""
    if name == "cos_1" and d.paper:
        ref, tol = d.paper
        ax.axvspan(ref - tol, ref + tol, color="goldenrod", alpha=0.35, lw=0)
        ax.axvline(ref, color="darkgoldenrod", lw=1.4, ls="--")
    for i, sd in enumerate(d.per_seed):
        ax.plot([sd[name].mean], [1], "o", ms=5, mec="white", mew=0.5, color=_run_colour(basins[i], order))
    ax.plot([d.optimum[name].mean], [0], "D", ms=5, color="black")
    ax.set_yticks([0, 1], ["optimum", "runs"], fontsize=7)
    ax.set_ylim(-0.7, 1.7)
    ax.tick_params(axis="x", labelbottom=False)
    means = [sd[name].mean for sd in d.per_seed]
    ax.set_title(f"{name}: each run's MEAN over its test sequences\n({format_value(float(min(means)))} to "
                 f"{format_value(float(max(means)))}; optimum {format_value(d.optimum[name].mean)})", fontsize=7.5)


def cosine_figure(plt, d: Cosines, path) -> None:
    """Per candidate cosine, each run's mean over its sequences (top; the paper's cos_1 band
    is for these) and each run's distribution over single sequences (bottom, no band), runs
    coloured by the basin they are headed for, the population optimum in black."""
    fig = plt.figure(figsize=(15.5, 4.8), dpi=DPI)
    grid = fig.add_gridspec(2, 3, height_ratios=(1, 3.2))
    hists = [fig.add_subplot(grid[1, k]) for k in range(3)]
    strips = [fig.add_subplot(grid[0, k], sharex=hists[k]) for k in range(3)]
    edges = np.linspace(-1.0, 1.0, len(d.optimum["cos_1"].hist) + 1)
    basins, order = _colours(d)
    for ax, top, name in zip(hists, strips, COSINES):
        for i, sd in enumerate(d.per_seed):
            h = np.asarray(sd[name].hist, dtype=float)
            h = h / max(h.sum(), 1.0)
            ax.step(edges, np.append(h, h[-1]), where="post", color=_run_colour(basins[i], order), lw=0.9,
                    alpha=0.8)
        op = np.asarray(d.optimum[name].hist, dtype=float)
        op = op / max(op.sum(), 1.0)
        ax.step(edges, np.append(op, op[-1]), where="post", color="black", lw=1.6)
        ax.set_xlim(-1.02, 1.02)
        ax.set_xlabel(f"{name} of ONE test sequence (per-sequence distribution, one line per run)", fontsize=7.5)
        ax.set_ylabel("share of the run's sequences", fontsize=8)
        ax.set_yscale("log")
        _means_strip(top, d, name, basins, order)
    handles = [hists[0].plot([], [], color=f"C{i % 10}", marker="o", ms=4, label=f"runs headed for {b}")[0]
               for i, b in enumerate(order)]
    handles.append(hists[0].plot([], [], color="black", lw=1.6, marker="D", ms=4, label="population optimum")[0])
    if d.paper:
        from matplotlib.patches import Patch
        handles.append(Patch(color="goldenrod", alpha=0.35,
                             label=wrap(f"paper: a trained layer's MEAN cos_1 = {d.paper[0]:g} +- {d.paper[1]:g} "
                                        "(band, top left: for the runs' means, not single sequences)", 38)))
    legend = fig.legend(handles=handles, fontsize=6.5, loc="center right", borderaxespad=0.3)
    fig.suptitle(f"PCG alignment, AR(4), setting {d.setting}: top, each trained run's mean over its test sequences; "
                 "bottom, each run's per-sequence distribution (docs/math.md section 6.3)", fontsize=9)
    width = legend.get_window_extent(fig.canvas.get_renderer()).width + 8     # the panels end left of it
    fig.tight_layout(rect=(0, 0, 1 - width / (fig.get_figwidth() * fig.dpi), 1))
    fig.savefig(path, dpi=DPI)
    plt.close(fig)


FIGURES = (FigureSpec(STEM, "PCG cosines, AR(4), setting {key}", cosine_data, cosine_figure),)
