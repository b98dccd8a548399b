"""The report of a sweep (``ldsicl sweep``): a verdict map, the reported measures over the grid, its pages.

Drawn from a sweep file alone (claims/cluster/sweepfile.py, :class:`SweepResult`) by
:func:`render_sweep` into the sweep's folder:

* ``sweep.md`` and ``index.html`` (one self-contained page: a style block, no scripts, no
  external resources; a viewport meta, the tables scroll sideways on a narrow screen, each
  figure links to its full-size PNG): the sweep's grid, profile and selection; one row per
  cell (status, seconds, counts); the *verdict map* (:func:`verdict_map`) -- one row per
  headline check (claims.specs.all_headlines, in that order), one column per cell, the
  verdict in each (``not run`` for a failed cell, ``absent`` for a cell without that
  record); where the selection runs no headline check, every check's row; then the
  reported measures and the failed cells' errors.
* ``figures/<check>.png``: for every *reported measure* (:func:`measures`: a record of kind
  ``reported`` with a numeric ``measured`` in some cell), its value over the grid's axes
  with more than one value (colour = value, float values written in each cell): one axis a
  line plot, two a heatmap (the first axis across), three one heatmap per value of the third
  (four or more: one per combination of the rest, at most :data:`MAX_PANELS`); a cell
  without the value is grey and says ``not run`` (``NaN`` for a measured NaN).

>>> from claims.cluster.grid import Grid
>>> from claims.cluster.sweepfile import CellSummary, Selection, SweepCell, SweepRecord, SweepResult
>>> g = Grid.parse("T=10,30")
>>> rec = SweepRecord("ar1-optimum/kappa-vs-T/a+b+c", "ar1-optimum", "reported", "reported", None, 0.2,
...                   None, None, None)
>>> cells = (SweepCell("T=10", g.cells()[0], "ok", 0, 1.0, 1.0, "cpu", "h", False, None, None, (rec,)),
...          SweepCell("default", g.cells()[1], "failed", 4, 1.0, 1.0, "cpu", "h", False, "usage", None, ()))
>>> r = SweepResult(g, "quick", Selection(("ar1-optimum",)), cells)
>>> [(m.check_id, m.values) for m in measures(r)]
[('ar1-optimum/kappa-vs-T/a+b+c', (0.2, None))]
>>> vm = verdict_map(r)
>>> vm.headline, vm.rows, vm.entries
(False, (), ())
"""
from __future__ import annotations

import html
import math
import os
import re
from dataclasses import dataclass
from pathlib import Path

from claims.cluster.sweepfile import SweepCell, SweepResult
from claims.harness.display import format_value
from claims.specs import all_headlines
from models.files import atomic_write_text
from theory.jsonvalues import NON_FINITE

__all__ = ["VerdictMap", "Measure", "verdict_map", "measures", "draw_measure", "render_sweep", "MAX_PANELS"]

#: the most heatmap panels one figure draws (a grid of four or more varying axes)
MAX_PANELS = 16
#: what a cell shows for a check it has no value or verdict of
NOT_RUN, ABSENT = "not run", "absent"

_STYLE = """body{font-family:sans-serif;margin:1em 2em;max-width:110em}
table{border-collapse:collapse;font-size:0.85em}td,th{border:1px solid #bbb;padding:2px 6px;white-space:nowrap}
th{background:#eee;text-align:left}.scroll{overflow-x:auto;max-width:100%}
.holds,.ok{background:#dfd}.fails,.failed{background:#fdd}.inconclusive{background:#ffd}.mixed{background:#e8dcf5}
.checks-failed{background:#fec}.not-run,.absent{background:#eee;color:#666}
img{max-width:100%;border:1px solid #ccc}.figures{display:flex;flex-wrap:wrap;gap:1em}
.figures figure{margin:0;max-width:48em}pre{white-space:pre-wrap;font-size:0.8em;background:#f6f6f6;padding:0.5em}
@media (max-width:40em){body{margin:0.5em}}"""


@dataclass(frozen=True)
class VerdictMap:
    """Checks x cells: ``entries[i][j]`` is the verdict of check ``rows[i]`` in cell ``columns[j]``
    (or ``not run`` / ``absent``); ``headline``: the rows are the headline checks."""

    rows: tuple[str, ...]
    columns: tuple[str, ...]
    entries: tuple[tuple[str, ...], ...]
    headline: bool


@dataclass(frozen=True)
class Measure:
    """A reported measure over the cells (in the grid's order): its value in each, None where
    the cell has none (a failed cell, or no such record), NaN for a measured NaN."""

    check_id: str
    values: tuple[float | None, ...]


def _number(v) -> float | None:
    """A record's ``measured`` as a float (non-finite spelled as in theory.jsonvalues), None if not a number."""
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str) and v in NON_FINITE:
        return NON_FINITE[v]
    return None


def verdict_map(result: SweepResult) -> VerdictMap:
    """The verdict map of ``result`` (module doc): headline checks, else every check (kind
    ``check``) in the order first met."""
    seen = {r.check_id for c in result.cells for r in c.records if r.kind == "check"}
    rows = tuple(dict.fromkeys(i for h in all_headlines() for i in h.check_ids if i in seen))
    headline = bool(rows)
    if not headline:
        rows = tuple(dict.fromkeys(r.check_id for c in result.cells for r in c.records if r.kind == "check"))
    verdicts = [{r.check_id: r.verdict for r in c.records} for c in result.cells]
    entries = tuple(tuple(NOT_RUN if c.status == "failed" else v.get(row, ABSENT)
                          for c, v in zip(result.cells, verdicts)) for row in rows)
    return VerdictMap(rows, _labels(result), entries, headline)


def _labels(result: SweepResult) -> tuple[str, ...]:
    """The cells' names in the reports: their values on the grid's axes (claims.cluster.grid.Grid.label)."""
    return tuple(result.grid.label(c.params) for c in result.cells)


def measures(result: SweepResult) -> tuple[Measure, ...]:
    """Every reported measure of ``result`` (module doc), in the order first met."""
    values = [{r.check_id: _number(r.measured) for r in c.records if r.kind == "reported"} for c in result.cells]
    ids = dict.fromkeys(k for v in values for k, x in v.items() if x is not None)
    return tuple(Measure(i, tuple(v.get(i) for v in values)) for i in ids)


def _stem(check_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9._=+-]+", "_", check_id).strip("_") or "measure"


def _fmt(v: float | None) -> str:
    if v is None:
        return NOT_RUN
    return "NaN" if math.isnan(v) else format_value(v)


def _panels(result: SweepResult, measure: Measure):
    """The measure as arrays over the varying axes: [(panel title, 2-D values (rows: second axis,
    columns: first axis), 2-D "not run" mask)], the axes' names and values."""
    import numpy as np

    grid = result.grid
    shape = tuple(len(a.values) for a in grid.axes)
    vals = np.array([np.nan if v is None else v for v in measure.values], dtype=float).reshape(shape)
    missing = np.array([v is None for v in measure.values]).reshape(shape)
    keep = tuple(i for i, a in enumerate(grid.axes) if len(a.values) > 1)
    squeeze = tuple(i for i in range(len(shape)) if i not in keep)
    vals, missing = vals.squeeze(axis=squeeze), missing.squeeze(axis=squeeze)
    axes = [grid.axes[i] for i in keep]
    if len(axes) == 1:
        return [("", vals[:, None].T, missing[:, None].T)], axes
    rest = axes[2:]
    panels = []
    for index in np.ndindex(*(len(a.values) for a in rest)):
        where = ", ".join(f"{a.name} = {format_value(a.values[i])}" for a, i in zip(rest, index))
        sl = (slice(None), slice(None), *index)
        panels.append((where, vals[sl].T, missing[sl].T))
    return panels, axes


def draw_measure(result: SweepResult, measure: Measure, path) -> Path | None:
    """Draw ``measure`` over the grid (module doc) into the PNG ``path``; None (nothing drawn)
    when the grid has no axis with two values or more than :data:`MAX_PANELS` panels."""
    if not result.grid.varying:
        return None
    panels, axes = _panels(result, measure)
    if len(panels) > MAX_PANELS:
        return None
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    fixed = ", ".join(f"{a.name} = {format_value(a.values[0])}" for a in result.grid.axes if len(a.values) == 1)
    title = measure.check_id + (f"  ({fixed})" if fixed else "")
    if len(axes) == 1:
        (_, vals, missing), = panels
        x, y, gone = np.array(axes[0].values, dtype=float), vals[0], missing[0]
        fig, ax = plt.subplots(figsize=(6.4, 4.0))
        ax.plot(x, y, "o-", color="C0")
        finite = y[np.isfinite(y)]
        low = float(finite.min()) if finite.size else 0.0
        for xi, yi, g in zip(x, y, gone):
            if np.isfinite(yi):
                ax.annotate(format_value(float(yi)), (xi, yi), textcoords="offset points", xytext=(0, 6),
                            ha="center", fontsize=8)
            else:
                ax.plot([xi], [low], "x", color="grey")
                ax.annotate(NOT_RUN if g else "NaN", (xi, low), textcoords="offset points", xytext=(0, -12),
                            ha="center", fontsize=8, color="grey")
        ax.set_xlabel(axes[0].name)
        ax.set_ylabel("measured")
        ax.set_xticks(x)
        ax.grid(alpha=0.3)
    else:
        n = len(panels)
        cols = min(n, 3)
        rows = math.ceil(n / cols)
        fig, grid_axes = plt.subplots(rows, cols, figsize=(1.0 + 4.6 * cols, 0.6 + 3.8 * rows), squeeze=False)
        finite = np.concatenate([v[np.isfinite(v)] for _, v, _ in panels])
        lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
        cmap = matplotlib.colormaps["viridis"].with_extremes(bad="#dddddd")
        image = None
        for ax, (where, vals, missing) in zip(grid_axes.flat, panels):
            image = ax.imshow(np.ma.masked_invalid(vals), origin="lower", aspect="auto", cmap=cmap,
                              vmin=lo, vmax=hi if hi > lo else lo + 1)
            for (i, j), v in np.ndenumerate(vals):
                text = format_value(float(v)) if np.isfinite(v) else (NOT_RUN if missing[i, j] else "NaN")
                shade = "white" if np.isfinite(v) and (v - lo) < 0.5 * (hi - lo) else "black"
                ax.text(j, i, text, ha="center", va="center", fontsize=8, color=shade)
            ax.set_xticks(range(len(axes[0].values)), [format_value(v) for v in axes[0].values])
            ax.set_yticks(range(len(axes[1].values)), [format_value(v) for v in axes[1].values])
            ax.set_xlabel(axes[0].name)
            ax.set_ylabel(axes[1].name)
            if where:
                ax.set_title(where, fontsize=9)
        for ax in list(grid_axes.flat)[n:]:
            ax.set_visible(False)
        fig.colorbar(image, ax=grid_axes.ravel().tolist(), label="measured", shrink=0.9)
    fig.suptitle(title, fontsize=9)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return path


def _counts_text(c: SweepCell) -> tuple[str, str, str]:
    s = c.summary
    return ("-", "-", "-") if s is None else (str(s.checks), str(s.held), str(s.failed))


def _status_line(result: SweepResult) -> str:
    by = {s: sum(c.status == s for c in result.cells) for s in ("ok", "checks-failed", "failed")}
    reused = sum(c.reused for c in result.cells)
    return (f"{len(result.cells)} (" + ", ".join(f"{n} {s}" for s, n in by.items() if n)
            + (f"; {reused} reused from an earlier sweep" if reused else "") + ")")


def _about(result: SweepResult) -> dict:
    sel = result.selection
    return {"grid": result.grid.tag(), "profile": result.profile, "claims": ", ".join(sel.claims),
            "select (pytest -k)": sel.select or "every check of the claims",
            "gathered": result.generated or "-", "cells": _status_line(result)}


def _cell_rows(result: SweepResult) -> list[list[str]]:
    return [[label, c.status + (" (reused)" if c.reused else ""), _fmt(c.seconds), _fmt(c.cpu_seconds),
             *_counts_text(c), c.host or "-", f"cells/{c.tag}"]
            for c, label in zip(result.cells, _labels(result))]


_CELL_HEAD = ("cell", "status", "seconds", "CPU seconds", "checks", "held", "failed", "host", "folder")


def _md_table(head, rows) -> list[str]:
    cell = lambda x: str(x).replace("|", "\\|")                          # noqa: E731
    return (["| " + " | ".join(map(cell, head)) + " |", "|" + "---|" * len(head)]
            + ["| " + " | ".join(map(cell, r)) + " |" for r in rows])


def _map_title(vm: VerdictMap) -> str:
    return ("Verdict map: headline checks x cells" if vm.headline else
            "Verdict map: every check x cells (the selection runs no headline check)")


def render_markdown(result: SweepResult, figures: dict[str, str], note: str | None = None) -> str:
    """``sweep.md``: the sweep, its cells, the verdict map, the measures (with their figures
    ``{check_id: path relative to the page}``) and the failed cells."""
    out = [f"# Sweep {result.grid.tag()}", ""] + [f"- {k}: {v}" for k, v in _about(result).items()]
    out += ["", "## Cells", ""] + _md_table(_CELL_HEAD, _cell_rows(result))
    vm = verdict_map(result)
    out += ["", f"## {_map_title(vm)}", ""]
    out += (_md_table(("check", *vm.columns), [(r, *e) for r, e in zip(vm.rows, vm.entries)]) if vm.rows
            else ["No check was recorded in any cell."])
    ms = measures(result)
    out += ["", "## Reported measures", ""]
    if ms:
        out += _md_table(("measure", *_labels(result)), [(m.check_id, *map(_fmt, m.values)) for m in ms])
        out += [""] + [f"![{m.check_id}]({figures[m.check_id]})" for m in ms if m.check_id in figures]
    else:
        out.append("No reported measure with a numeric value.")
    if note:
        out += ["", note]
    failed = [c for c in result.cells if c.status == "failed"]
    if failed:
        out += ["", "## Failed cells", ""]
        for c in failed:
            out += [f"### {result.grid.label(c.params)} (cells/{c.tag})", "", "```", (c.error or "-").strip(),
                    "```", ""]
    return "\n".join(out).rstrip() + "\n"


def _e(x) -> str:
    return html.escape(str(x), quote=True)


def _html_table(head, rows, classes=None) -> list[str]:
    out = ['<div class="scroll"><table>', "<tr>" + "".join(f"<th>{_e(h)}</th>" for h in head) + "</tr>"]
    for i, row in enumerate(rows):
        cls = (classes or (lambda i, j, x: ""))
        out.append("<tr>" + "".join(
            (f'<td class="{_e(cls(i, j, x))}">' if cls(i, j, x) else "<td>") + f"{_e(x)}</td>"
            for j, x in enumerate(row)) + "</tr>")
    return out + ["</table></div>"]


def render_html(result: SweepResult, figures: dict[str, str], note: str | None = None) -> str:
    """``index.html``: the page of the sweep (module doc)."""
    vm = verdict_map(result)
    ms = measures(result)
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           f"<title>Sweep {_e(result.grid.tag())}</title>", f"<style>{_STYLE}</style></head><body>",
           f"<h1>Sweep {_e(result.grid.tag())}</h1>", "<table>"]
    out += [f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in _about(result).items()] + ["</table>"]
    out += ["<h2>Cells</h2>"] + _html_table(_CELL_HEAD, _cell_rows(result),
                                            lambda i, j, x: result.cells[i].status if j == 1 else "")
    out += [f"<h2>{_e(_map_title(vm))}</h2>",
            "<p>Each cell is the claims' own pytest run at that point (its claims.json under "
            "<code>cells/</code>); green holds, red fails, yellow inconclusive, violet mixed, grey not run "
            "(the cell failed) or absent (no such record in the cell).</p>"]
    out += (_html_table(("check", *vm.columns), [(r, *e) for r, e in zip(vm.rows, vm.entries)],
                        lambda i, j, x: x.replace(" ", "-") if j else "")
            if vm.rows else ["<p>No check was recorded in any cell.</p>"])
    out.append("<h2>Reported measures</h2>")
    if ms:
        out += _html_table(("measure", *_labels(result)),
                           [(m.check_id, *map(_fmt, m.values)) for m in ms],
                           lambda i, j, x: "not-run" if x == NOT_RUN else "")
        drawn = [(m.check_id, figures[m.check_id]) for m in ms if m.check_id in figures]
        if drawn:
            out.append('<div class="figures">')
            out += [f'<figure><a href="{_e(p)}"><img src="{_e(p)}" alt="{_e(t)}"></a>'
                    f"<figcaption>{_e(t)}</figcaption></figure>" for t, p in drawn]
            out.append("</div>")
    else:
        out.append("<p>No reported measure with a numeric value.</p>")
    if note:
        out.append(f"<p>{_e(note)}</p>")
    failed = [c for c in result.cells if c.status == "failed"]
    if failed:
        out.append("<h2>Failed cells</h2>")
        out += [f"<h3>{_e(result.grid.label(c.params))} (cells/{_e(c.tag)})</h3>"
                f"<pre>{_e((c.error or '-').strip())}</pre>" for c in failed]
    return "\n".join(out + ["</body></html>"]) + "\n"


def render_sweep(result: SweepResult, directory: str | os.PathLike) -> dict:
    """Write the figures, ``sweep.md`` and ``index.html`` of ``result`` into ``directory``;
    returns ``{"md", "html", "figures"}`` (paths).  If drawing fails (no matplotlib, say) the
    pages are still written and say why there are no figures."""
    directory = Path(directory)
    figures: dict[str, str] = {}
    note = None
    try:
        skipped = []
        for m in measures(result):
            path = draw_measure(result, m, directory / "figures" / f"{_stem(m.check_id)}.png")
            if path is None:
                skipped.append(m.check_id)
            else:
                figures[m.check_id] = path.relative_to(directory).as_posix()
        if skipped:
            note = (f"Not drawn ({len(skipped)}): the grid has no axis with two values or more, or more than "
                    f"{MAX_PANELS} panels.")
    except (ImportError, OSError, ValueError, RuntimeError) as exc:
        note = f"No figures: {type(exc).__name__}: {exc}"
    md = atomic_write_text(directory / "sweep.md", render_markdown(result, figures, note))
    page = atomic_write_text(directory / "index.html", render_html(result, figures, note))
    return {"md": md, "html": page, "figures": [directory / p for p in figures.values()]}
