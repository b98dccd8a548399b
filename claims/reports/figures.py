"""Figures of the claims report (PNG, matplotlib), drawn from the records alone: a loop over
the claims' figure specs.

Every figure is drawn from data in the records (``claims.json``), never from a rerun, so
a report can be redrawn from a published ``claims.json``.  :func:`render_figures` is called
by the report renderer (claims/reports/report.py, ``render_report``), the one writer of
``claims.md`` and ``index.html``, which link the figures it returns.

For each claim of :data:`claims.specs.CLAIMS`, in that order, each of its figures
(``ClaimSpec.figures``, a :class:`~claims.harness.spec.FigureSpec` defined with the claim
in ``claims/figures/<claim>.py``) reads its typed data from the claim's
:class:`~claims.harness.records.ClaimRecord` s (and those of the claims it ``reads``) and
draws one file per key; then the generic figure of every claim, :data:`SEEDS`
(``seeds-<claim>.png``): the per-run values of every trained check, in the units of the
tolerance each run is held to, each run's own interval where it has one, the verdict and
how many runs hold.  A report without the records of a figure has no such figure; a record
of a figure's check that lacks a key the figure reads stops the drawing with a ValueError
naming the key (claims/figures/common.py).  :func:`claim_of` places a file in its claim
by the specs' stems.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

import numpy as np

from claims.figures.common import distinct_colours, wrap
from claims.harness.records import ClaimRecord
from claims.harness.spec import FigureSpec

__all__ = ["SeedRows", "seed_data", "seed_figure", "SEEDS", "GENERIC", "CLIP_WIDTHS", "claim_of",
           "render_figures"]


def _run_values(r) -> list:
    return r.values or [e.value for e in r.runs or []]


#: the region a value must lie in, by comparator: (low, high) in units of the tolerance's sign
_ALLOWED = {"<=": lambda t: (-np.inf, t), "<": lambda t: (-np.inf, t), ">=": lambda t: (t, np.inf),
            ">": lambda t: (t, np.inf), "abs<=": lambda t: (-abs(t), abs(t))}
#: how far outside the interval-and-tolerance window a run may lie before it is clipped (in
#: widths of that window)
CLIP_WIDTHS = 3.0
#: the resolution :func:`seed_figure` is laid out and saved at (one, so that what a test reads
#: from the drawn canvas is what the PNG shows)
DPI = 80


@dataclass(frozen=True)
class SeedRows:
    """``seeds-<claim>.png``: the claim's checks with a value per run and a tolerance."""

    claim: str
    records: tuple[ClaimRecord, ...]


def seed_data(records) -> dict[str, SeedRows]:
    """``{claim: SeedRows}`` of the checks with a value per run (seeds) and a tolerance, the
    claims of :data:`claims.specs.CLAIMS` in its order, any other after them by name."""
    from claims.specs import CLAIMS
    out: dict = {}
    for r in records:
        vals = _run_values(r)
        comparator, tolerance, _ = r.criterion
        if (vals and all(v is not None for v in vals) and tolerance is not None
                and comparator in _ALLOWED and r.kind != "reported"):
            out.setdefault(r.claim, []).append(r)
    order = [s.name for s in CLAIMS if s.name in out] + sorted(set(out) - {s.name for s in CLAIMS})
    return {claim: SeedRows(claim, tuple(out[claim])) for claim in order}


def per_run_label(r) -> str:
    """The x axis of a seeds panel: for a check judged by run, each run's own value of the check
    and the criterion it is held to (the record's label describes the share), else the label.

    >>> from types import SimpleNamespace as NS
    >>> per_run_label(NS(per_run={"comparator": "abs<=", "tolerance": 0.01, "tolerance_source": "project"},
    ...                  check="trained-coefficient", label="share of runs with ..."))
    "each run's trained-coefficient value, held to abs<= 0.01 (project's)"
    """
    pr = r.per_run
    if not pr:
        return r.label
    return (f"each run's {r.check} value, held to {pr.get('comparator')} {pr.get('tolerance'):g} "
            f"({pr.get('tolerance_source')}'s)")


def basin_colours(records) -> dict:
    """One colour per basin over a whole figure (claims.figures.common.distinct_colours), the
    optimum first (``C0``), the others by name, so that a colour means the same basin in every panel."""
    names = {e.extra.get("basin") for r in records for e in (r.runs or []) if e.extra.get("basin") is not None}
    order = sorted(names, key=lambda b: (b != "optimum", b))
    return dict(zip(order, distinct_colours(len(order))))


def _seed_panel(ax, r, colours: dict | None = None) -> dict:
    """One check in its native units: each run a dot (coloured by the basin it is headed for
    where there are several) with its own interval (a check judged by run) or the 95 %
    interval over runs as a bar coloured by the verdict (any other),
    the tolerance as a line with the allowed side shaded (one-sided and negative tolerances
    as written), runs far outside the window clipped to its edge and drawn as triangles.
    Returns what was drawn: ``{"window", "clipped", "tolerance_lines"}``."""
    runs = r.runs or []
    vals = np.asarray(_run_values(r), dtype=float)
    pr = r.per_run
    by_basin = r.basins or (pr and pr.get("basins"))
    basin = [e.extra.get("basin") for e in runs] if by_basin else [None] * vals.size
    if len(basin) != vals.size:
        basin = [None] * vals.size
    comparator, tol, _ = r.criterion
    tol = float(tol)
    lo_ok, hi_ok = _ALLOWED[comparator](tol)
    # judged by run: each run's own interval (value +- 1.96 SE) where it has one; no mean is drawn
    run_iv = [(e.extra.get("lo"), e.extra.get("hi")) for e in runs] if pr else []
    ends = [x for pair in run_iv for x in pair if x is not None]
    iv = (r.interval or (r.measured, r.measured)) if not pr else (
        (float(vals.min()), float(vals.max())) if vals.size else (tol, tol))
    centre = float(np.median(vals)) if pr and vals.size else r.measured
    core = np.array([*iv, *ends, centre, tol] + ([-tol] if comparator == "abs<=" else []), dtype=float)
    core = core[np.isfinite(core)]
    span = max(float(np.ptp(core)), abs(tol), 1e-12)
    window = (float(core.min()) - CLIP_WIDTHS * span, float(core.max()) + CLIP_WIDTHS * span)
    shown = np.concatenate([core, vals[(vals >= window[0]) & (vals <= window[1])]])
    pad = 0.08 * max(float(np.ptp(shown)), span)
    x0, x1 = float(shown.min()) - pad, float(shown.max()) + pad
    ax.axvspan(max(lo_ok, x0 - span * 10), min(hi_ok, x1 + span * 10), color="0.9", zorder=0)
    tol_lines = [tol] + ([-tol] if comparator == "abs<=" else [])
    for t in tol_lines:
        ax.axvline(t, color="0.3", lw=0.9, ls="--")
    colours = colours or basin_colours([r])
    names = sorted(dict.fromkeys(b for b in basin if b is not None), key=lambda b: (b != "optimum", b))
    clipped = 0
    for k, v in enumerate(vals):
        y = 1 + (names.index(basin[k]) if basin[k] in names else 0) * 0.35
        color = colours.get(basin[k], "black") if basin[k] in names else "black"
        if v < x0 or v > x1:
            clipped += 1
            ax.plot([x0 if v < x0 else x1], [y], "<" if v < x0 else ">", ms=6, color=color, mfc="none")
        else:
            ax.plot([v], [y], "o", ms=3.5, color=color)
        if pr and k < len(run_iv) and run_iv[k][0] is not None:
            ax.plot(np.clip(run_iv[k], x0, x1), [y, y], "-", color=color, lw=1)
    vcol = {"holds": "C2", "fails": "C3", "inconclusive": "C1", "mixed": "C4"}.get(r.verdict, "C7")
    if not pr:           # the interval of a value over runs; a check judged by run has none
        ax.plot(np.clip(iv, x0, x1), [0, 0], "-", color=vcol, lw=3, alpha=0.7)
        ax.plot([np.clip(r.measured, x0, x1)], [0], "|", ms=10, color=vcol)
    ax.set_xlim(x0, x1)
    ax.set_ylim(-0.6, 1.6 + 0.35 * max(len(names) - 1, 0))
    ax.set_yticks([])
    ax.tick_params(labelsize=6)
    ctl = " [control]" if r.expect == "fails" else ""
    share = (f" ({pr['held']} of {pr['n']} runs hold, share [{r.interval[0]:.2f}, {r.interval[1]:.2f}])"
             if pr else "")
    ax.set_title(wrap(f"{r.where}: {r.check}{ctl} -- {r.verdict}{share}", 70), fontsize=7)
    ax.set_xlabel(wrap(per_run_label(r), 60) + (f"\n{clipped} run(s) beyond the axis (triangles)" if clipped else ""),
                  fontsize=6)
    if names:            # above the rows, in room :func:`_room_for_legend` makes once the layout is set
        ax.legend(handles=[ax.plot([], [], "o", color=colours.get(n, "black"), label=n)[0] for n in names],
                  fontsize=5, loc="upper center", ncol=1 if max(map(len, names)) > 24 else min(len(names), 2), borderaxespad=0.2, framealpha=0.85,
                  edgecolor="none",
                  handletextpad=0.1, columnspacing=1.0, labelspacing=0.2)
    return {"window": (x0, x1), "clipped": clipped, "tolerance_lines": tol_lines,
            "top_row": 1 + 0.35 * max(len(names) - 1, 0)}


def _room_for_legend(ax, top_row: float, gap_px: float = 5.0) -> None:
    """Raise the top of ``ax``'s y axis until its highest row of runs (``top_row``, plus a
    marker's ``gap_px``) lies below its legend, which is anchored to the top of the axes: the
    legend then covers no run, clipped or not.  Called once the figure's layout is final."""
    leg = ax.get_legend()
    if leg is None:
        return
    r = ax.figure.canvas.get_renderer()
    box, frame = leg.get_window_extent(r), ax.get_window_extent(r)
    free = box.y0 - frame.y0 - gap_px          # pixels of the axes below the legend
    y0, y1 = ax.get_ylim()
    need = (top_row - y0) / (y1 - y0) * frame.height
    if free > 0 and need > free:
        ax.set_ylim(y0, y0 + (top_row - y0) * frame.height / free)


def seed_figure(plt, data: SeedRows, path, cols: int = 3) -> None:
    """Every trained check of a claim, one panel each (:func:`_seed_panel`)."""
    rows = data.records
    n = len(rows)
    nr = int(np.ceil(n / cols))
    fig, axes = plt.subplots(nr, cols, figsize=(4.2 * cols, 2.1 * nr + 0.8), squeeze=False, dpi=DPI)
    colours = basin_colours(rows)
    drawn = [(ax, _seed_panel(ax, r, colours)) for ax, r in zip(axes.flat, rows)]
    for ax in list(axes.flat)[n:]:       # no empty frames (nor their hidden tick labels) left behind
        fig.delaxes(ax)
    fig.suptitle(wrap(f"{data.claim}: each run's value (dots, coloured by the basin it is headed for where there "
                      "are several, one colour per basin throughout) with its own 95 % interval where it has a standard error (line), the tolerance "
                      "each run is held to (dashed; shaded: allowed), in the check's own units; the title gives "
                      "the verdict and how many runs hold (the share's Clopper-Pearson interval, against 1/2)",
                      150), fontsize=8)
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    for ax, d in drawn:
        _room_for_legend(ax, d["top_row"])
    fig.savefig(path, dpi=DPI)
    plt.close(fig)


#: the per-run figure every claim with trained checks gets, keyed by the claim
SEEDS = FigureSpec("seeds", "{key}: per-seed trained values against each tolerance", seed_data, seed_figure)
#: the figures over every claim's records, each keyed by the claim (drawn after the claims' own)
GENERIC = (SEEDS,)


def claim_of(path) -> str | None:
    """The claim of a figure file drawn by :func:`render_figures` (None for an unknown name):
    the claim whose spec has a figure of that stem, or, for a generic figure, its key.

    >>> claim_of("figures/seeds-banding.png"), claim_of("cosines-a.png"), claim_of("x.png")
    ('banding', 'pcg-alignment', None)
    """
    from claims.specs import CLAIMS
    stem = Path(path).stem
    owners = [(f.stem, spec.name) for spec in CLAIMS for f in spec.figures] + [(f.stem, None) for f in GENERIC]
    for prefix, claim in sorted(owners, key=lambda o: len(o[0]), reverse=True):
        if stem == prefix or stem.startswith(prefix + "-"):
            return claim or stem[len(prefix) + 1:] or None
    return None


def render_figures(records: Iterable[ClaimRecord], directory) -> list[tuple[str, Path]]:
    """Draw every figure the records support into ``directory``; returns (title, path) pairs,
    the claims' figures in :data:`claims.specs.CLAIMS` order, then :data:`GENERIC`.

    Every figure's data is read before anything is drawn (a record lacking a key a figure
    reads: ValueError naming it).  ``records``: :class:`ClaimRecord` s (ValueError naming
    ``records`` otherwise).  Needs matplotlib (a declared dependency); the Agg backend, so no
    display is used.
    """
    from claims.specs import CLAIMS
    records = list(records)
    wrong = sorted({type(r).__name__ for r in records if not isinstance(r, ClaimRecord)})
    if wrong:
        raise ValueError(f"records must be ClaimRecord objects (ClaimRecord.from_dict), got {wrong}")
    by_claim: dict = {}
    for r in records:
        by_claim.setdefault(r.claim, []).append(r)
    todo = []
    for spec in CLAIMS:
        for fig in spec.figures:
            mine = [r for name in (spec.name, *fig.reads) for r in by_claim.get(name, [])]
            todo += [(fig, key, data) for key, data in fig.data(mine).items()]
    for fig in GENERIC:
        todo += [(fig, key, data) for key, data in fig.data(records).items()]
    if not todo:
        return []
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    import matplotlib                   # the backend is chosen here, before pyplot loads, so that
    matplotlib.use("Agg")               # importing this module leaves the caller's backend alone
    import matplotlib.pyplot as plt

    made = []
    for fig, key, data in todo:
        path = fig.path_for(directory, key)
        fig.draw(plt, data, path)
        made.append((fig.title_for(key, data), path))
    return made
