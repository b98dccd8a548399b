"""The figures of the pcg-alignment claim (claims/specs/pcg_alignment.py): ``cosines-<setting>.png``.

Histograms of cos_1, cos_2, cos_3 over the held-out sequences (docs/math.md section 6.3),
one line per trained seed (the ``cos_1-mean`` record's ``per_seed``, coloured by the basin
its run is headed for, ``basin_per_seed``) and the population optimum's (``optimum``) in
black, with the paper's cos_1 and its tolerance as a line and band, read back from the
``trained-cos1`` record (its run values are each seed's mean cos_1 minus the paper's number,
so the paper's number is the median of mean - value over the runs).

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

from claims.figures.common import detail, of_check, vector
from claims.harness.display import format_value
from claims.harness.spec import FigureSpec

__all__ = ["COSINES", "Histogram", "Cosines", "cosine_data", "cosine_figure", "FIGURES"]

CLAIM = "pcg-alignment"
STEM = "cosines"
#: the candidate cosines each panel of the figure shows (docs/math.md section 6.3)
COSINES = ("cos_1", "cos_2", "cos_3")


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


def cosine_figure(plt, d: Cosines, path) -> None:
    """Per seed (coloured by the basin its run is headed for), the distribution of each
    candidate cosine over the held-out sequences, the population optimum's in black, and the
    paper's cos_1 with its tolerance as a line and band."""
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
    edges = np.linspace(-1.0, 1.0, len(d.optimum["cos_1"].hist) + 1)
    basins = d.basins or [None] * len(d.per_seed)
    order = list(dict.fromkeys(b for b in basins if b is not None))
    for ax, name in zip(axes, COSINES):
        for i, sd in enumerate(d.per_seed):
            h = np.asarray(sd[name].hist, dtype=float)
            h = h / max(h.sum(), 1.0)
            b = basins[i] if i < len(basins) else None
            color = f"C{order.index(b) % 10}" if b in order else "C0"
            ax.step(edges, np.append(h, h[-1]), where="post", color=color, lw=0.9, alpha=0.8)
        op = np.asarray(d.optimum[name].hist, dtype=float)
        op = op / max(op.sum(), 1.0)
        ax.step(edges, np.append(op, op[-1]), where="post", color="black", lw=1.6)
        if name == "cos_1" and d.paper:
            ref, tol = d.paper
            ax.axvspan(ref - tol, ref + tol, color="goldenrod", alpha=0.25)
            ax.axvline(ref, color="darkgoldenrod", lw=1.4, ls="--")
        means = [sd[name].mean for sd in d.per_seed]
        ax.set_title(f"{name}: seeds' means {format_value(float(min(means)))} to {format_value(float(max(means)))}, "
                     f"optimum {format_value(d.optimum[name].mean)}", fontsize=8)
        ax.set_xlabel(f"{name} over held-out sequences", fontsize=8)
        ax.set_ylabel("share of sequences", fontsize=8)
        ax.set_yscale("log")
    handles = [axes[0].plot([], [], color=f"C{i % 10}", label=f"seeds headed for {b}")[0] for i, b in enumerate(order)]
    handles.append(axes[0].plot([], [], color="black", lw=1.6, label="population optimum")[0])
    if d.paper:
        handles.append(axes[0].plot([], [], color="darkgoldenrod", ls="--",
                                    label=f"paper: cos_1 = {d.paper[0]:g} +- {d.paper[1]:g}")[0])
    axes[0].legend(handles=handles, fontsize=6, loc="upper left")
    fig.suptitle(f"PCG alignment, AR(4), setting {d.setting}: one line per seed (docs/math.md section 6.3)",
                 fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


FIGURES = (FigureSpec(STEM, "PCG cosines, AR(4), setting {key}", cosine_data, cosine_figure),)
