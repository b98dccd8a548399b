"""The figures of the banding claim (claims/specs/banding.py): ``banding-<setting>.png``.

For s = 2, 3, 4, heatmaps of b = W_V[s, :] and W_QK[:, :s] of the population optimum (the
``optimum-in-a-class`` record's ``b``, ``W_QK``) beside those of every trained run (the
``trained-out-of-class-share`` record's ``b_per_run``, ``W_QK_per_run``, in the canonical
gauge, largest |b_r| = +1), each titled with the basin it is headed for
(``basin_per_seed``; a run headed for the mirror image y_t -> (-1)^t y_t of its basin's
point, ``basin_mirror_per_seed``, shown as that point's image, :func:`mirror_image`), one
colour scale per row with its colour bars, outlined: the entries the optimum's class keeps
(theory.parity) -- or, for a negative control, beside trained seed 0 (``seed0_b``,
``seed0_W_QK``; like the paper's Fig. 1).

>>> from claims.harness.records import make_record
>>> r = make_record(claim="banding", check="optimum-in-a-class", label="c", paper_ref="Lemma 4.1",
...                 measured=0.0, kind="reported", setting="a", s=2,
...                 details={"b": [1.0, 0.0, 0.5], "W_QK": [[0.0, 1.0], [2.0, 0.0], [0.0, 3.0]]})
>>> fig = banding_data([r])["a"]
>>> fig.windows[2].optimum.b, fig.gallery
((1.0, 0.0, 0.5), False)
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np

from claims.figures.common import detail, matrix, of_check, outline, vector, wrap
from claims.harness.spec import FigureSpec
from theory.parity import class_masks, classify

__all__ = ["Weights", "RunWeights", "BandingWindow", "BandingFigure", "mirror_image", "banding_data",
           "seed0_figure", "gallery_figure", "banding_figure", "FIGURES"]

CLAIM = "banding"
STEM = "banding"


@dataclass(frozen=True)
class Weights:
    """b = W_V[s, :] (s + 1 entries) and W_QK[:, :s] ((s + 1) x s) of one point."""

    b: tuple[float, ...]
    W: tuple[tuple[float, ...], ...]


@dataclass(frozen=True)
class RunWeights:
    """One trained run's weights and the basin it is headed for (None where not known)."""

    b: tuple[float, ...]
    W: tuple[tuple[float, ...], ...]
    basin: str | None


@dataclass(frozen=True)
class BandingWindow:
    """One window s: the optimum, trained seed 0 and every run (None where not recorded)."""

    s: int
    optimum: Weights | None = None
    seed0: Weights | None = None
    runs: tuple[RunWeights, ...] | None = None


@dataclass(frozen=True)
class BandingFigure:
    """``banding-<setting>.png``: the setting's windows; a gallery of every run where a
    window has them, else (a negative control) the optimum beside seed 0."""

    setting: str
    windows: Mapping[int, BandingWindow]

    @property
    def gallery(self) -> bool:
        return any(w.runs is not None for w in self.windows.values())

    @property
    def subject(self) -> str:
        return "every run's weights beside the optimum" if self.gallery else "optimum vs trained seed 0"


def mirror_image(b, W) -> tuple[np.ndarray, np.ndarray]:
    """The weights of the mirror image y_t -> (-1)^t y_t of a point (theory.optimum.match_point:
    beta's odd features negated): b_r (-1)^r, W[l, m] (-1)^(l+m+s) (0-based indices), back in
    the canonical gauge (largest |b| = +1).  tests/test_figures.py checks it against the
    parity of theory.parity.

    >>> mirror_image([1.0, 0.0, -0.5], [[0.0, 2.0], [1.0, 0.0], [0.0, 3.0]])[0].tolist()
    [1.0, -0.0, -0.5]
    """
    b, W = np.asarray(b, dtype=float), np.asarray(W, dtype=float)
    s = b.size - 1
    b2 = b * (-1.0) ** np.arange(s + 1)
    W2 = W * (-1.0) ** (np.arange(s + 1)[:, None] + np.arange(s)[None, :] + s)
    g = b2[int(np.argmax(np.abs(b2)))]
    return b2 / g, W2 * g


def _runs(r) -> tuple[RunWeights, ...] | None:
    """Every run's counted weights of a trained record, with the basin each is headed for
    (None for a negative control, drawn beside seed 0 alone)."""
    if r.coords.control:
        return None
    bs, Ws = detail(r, "b_per_run", STEM), detail(r, "W_QK_per_run", STEM)
    names = detail(r, "basin_per_seed", STEM)
    mirrored = detail(r, "basin_mirror_per_seed", STEM)
    out = []
    for b, W, name, mir in zip(bs, Ws, names, mirrored, strict=True):
        # a run headed for the mirror image of its basin's point, shown as that point's image
        if mir:
            b, W = mirror_image(b, W)
            name = f"{name} (mirror image shown)"
        out.append(RunWeights(vector(b), matrix(W), None if name is None else str(name)))
    return tuple(out)


def banding_data(records) -> dict[str, BandingFigure]:
    """``{setting: BandingFigure}`` from the ``optimum-in-a-class`` and
    ``trained-out-of-class-share`` records, settings sorted."""
    cells: dict = {}
    for r in of_check(records, CLAIM, "optimum-in-a-class"):
        w = Weights(vector(detail(r, "b", STEM)), matrix(detail(r, "W_QK", STEM)))
        cells.setdefault(str(r.coords.setting), {}).setdefault(r.coords.s, {})["optimum"] = w
    for r in of_check(records, CLAIM, "trained-out-of-class-share"):
        cell = cells.setdefault(str(r.coords.setting), {}).setdefault(r.coords.s, {})
        cell["seed0"] = Weights(vector(detail(r, "seed0_b", STEM)), matrix(detail(r, "seed0_W_QK", STEM)))
        cell["runs"] = _runs(r)
    return {st: BandingFigure(st, {s: BandingWindow(s, **cell) for s, cell in sorted(per_s.items())})
            for st, per_s in sorted(cells.items())}


def seed0_figure(plt, data: BandingFigure, path) -> None:
    """Per window, the optimum's b and W_QK beside trained seed 0's, one colour scale each."""
    setting, per_s = data.setting, data.windows
    rows = sorted(s for s in per_s if s is not None)
    fig, axes = plt.subplots(len(rows), 4, figsize=(11, 2.6 * len(rows)), squeeze=False,
                             gridspec_kw={"width_ratios": [1, 4, 1, 4]})
    for i, s in enumerate(rows):
        for k, (who, weights) in enumerate((("optimum", per_s[s].optimum), ("trained", per_s[s].seed0))):
            ax_b, ax_w = axes[i, 2 * k], axes[i, 2 * k + 1]
            if weights is None:
                ax_b.axis("off")
                ax_w.axis("off")
                continue
            b, W = (np.asarray(x, dtype=float) for x in (weights.b, weights.W))
            W_V = np.zeros((s + 1, s + 1))
            W_QK = np.zeros((s + 1, s + 1))
            W_V[s], W_QK[:, :s] = b, W
            cls, _ = classify(W_V, W_QK)
            bm, Wm = class_masks(s, cls or "b-odd")
            lim_b, lim = max(np.abs(b).max(), 1e-12), max(np.abs(W).max(), 1e-12)
            ax_b.imshow(b[:, None], cmap="RdBu_r", vmin=-lim_b, vmax=lim_b)
            outline(ax_b, bm[:, None])
            im = ax_w.imshow(W, cmap="RdBu_r", vmin=-lim, vmax=lim)
            outline(ax_w, Wm)
            ax_b.set_xticks([])
            ax_b.set_yticks(range(s + 1), [str(r + 1) for r in range(s + 1)])
            ax_w.set_xticks(range(s), [str(m + 1) for m in range(s)])
            ax_w.set_yticks(range(s + 1), [str(l + 1) for l in range(s + 1)])
            ax_b.set_title(f"s={s} {who}: b", fontsize=9)
            ax_w.set_title(f"W_QK[:, 1..{s}] (outlined: class {cls})", fontsize=9)
            fig.colorbar(im, ax=ax_w, fraction=0.04)
    fig.suptitle(f"banding, setting {setting}: population optimum vs trained seed 0 (canonical gauge; "
                 f"outlined: the entries the nearer class keeps)")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


#: the gallery's layout, in inches: a column's pitch, a matrix's width (b strip) or height
#: (W_QK), the room of the y tick labels at the left, of a row of tick labels, of a title's
#: line, the gap between rows and the colour bars' column at the right
_PITCH, _IMG, _LEFT, _TICKS, _LINE, _GAP, _BARS = 1.45, 1.2, 0.3, 0.16, 6 * 1.3 / 72, 0.1, 0.55


def _index_ticks(ax, rows: int | None, cols: int) -> None:
    """1-based index ticks (the features 1..s+1, W_QK's columns 1..s) on an imshow axis;
    ``rows`` None: none on the y axis (a b strip)."""
    ax.set_xticks(range(cols), [str(m + 1) for m in range(cols)])
    ax.set_yticks([] if rows is None else range(rows), [] if rows is None else [str(r + 1) for r in range(rows)])
    ax.tick_params(labelsize=6, length=2, pad=1)


def _gallery_panels(per_s, s):
    """(the optimum's class masks or None, [(title, b, W)]) of one row: the optimum (or a
    blank) first, then every run."""
    masks, opt = None, per_s[s].optimum
    if opt is not None:
        V, Q = np.zeros((s + 1, s + 1)), np.zeros((s + 1, s + 1))
        V[s], Q[:, :s] = np.asarray(opt.b, dtype=float), np.asarray(opt.W, dtype=float)
        cls, _ = classify(V, Q)
        masks = class_masks(s, cls) if cls else None
    panels = [(f"s={s} optimum", opt.b, opt.W)] if opt is not None else [(None, None, None)]
    panels += [(wrap(f"s={s} seed {k}: {run.basin or ''}".replace("(mirror image shown)", "(mirrored)"), 24),
                run.b, run.W) for k, run in enumerate(per_s[s].runs)]
    return masks, panels


def gallery_figure(plt, data: BandingFigure, path) -> dict:
    """Every run's b and W_QK beside the population optimum's, one row per window s, one
    colour scale for all b panels and one for all W_QK panels of a row (colour bars at the
    end of the row); the canonical gauge fixes scale and sign (the b entry of largest
    magnitude is +1); each run titled with the basin it is headed for; 1-based index ticks
    on every matrix.  Laid out in inches (each entry a square of one size per row, each
    row's titles given the room of their lines): no title runs into the matrix above and
    the canvas ends at the last row.  Returns the colour limits per row."""
    setting, per_s = data.setting, data.windows
    rows = sorted(s for s in per_s if s is not None and per_s[s].runs is not None)
    ncol = 1 + max(len(per_s[s].runs) for s in rows)
    width = _LEFT + ncol * _PITCH + _BARS
    title = wrap(f"banding, setting {setting}: b (top strip, transposed) and W_QK[:, 1..s] of every run "
                 "beside the optimum; ticks: the features 1..s+1 (b's entries, W_QK's rows) and W_QK's "
                 "columns 1..s; canonical gauge (largest |b| = +1); one colour scale per row; outlined: "
                 "the entries the optimum's class keeps; a run headed for the mirror image y_t -> (-1)^t y_t "
                 "of its point is shown mirrored", int(14 * width))
    row_panels = {s: _gallery_panels(per_s, s) for s in rows}
    room = {s: max(str(t).count("\n") + 1 for t, _, _ in row_panels[s][1] if t) * _LINE + 0.05 for s in rows}
    band = (title.count("\n") + 1) * 8 * 1.3 / 72 + 0.15
    height = band + sum(room[s] + _IMG / (s + 1) + _IMG + 2 * _TICKS + 2 * _GAP for s in rows)
    fig = plt.figure(figsize=(width, height))
    limits, top = {}, height - band
    for s in rows:
        masks, panels = row_panels[s]
        lim_w = max(max(np.abs(np.asarray(W, dtype=float)).max() for _, _, W in panels if W is not None), 1e-12)
        limits[s] = (1.0, lim_w)
        h_b = _IMG / (s + 1)
        y_b = top - room[s] - h_b
        y_w = y_b - _TICKS - _GAP - _IMG
        for j, (name, b, W) in enumerate(panels):
            if b is None:
                continue
            x = _LEFT + j * _PITCH
            ax_b = fig.add_axes((x / width, y_b / height, _IMG / width, h_b / height))
            ax_w = fig.add_axes((x / width, y_w / height, _IMG * s / (s + 1) / width, _IMG / height))
            im_b = ax_b.imshow(np.asarray(b, dtype=float)[None, :], cmap="RdBu_r", vmin=-1.0, vmax=1.0)
            im_w = ax_w.imshow(np.asarray(W, dtype=float), cmap="RdBu_r", vmin=-lim_w, vmax=lim_w)
            if masks is not None:
                outline(ax_b, masks[0][None, :])
                outline(ax_w, masks[1])
            _index_ticks(ax_b, None, s + 1)
            _index_ticks(ax_w, s + 1, s)
            ax_b.set_title(name, fontsize=6, pad=2)
        x_bar = (_LEFT + ncol * _PITCH) / width
        for im, y, h in ((im_b, y_b, h_b), (im_w, y_w, _IMG)):
            cax = fig.add_axes((x_bar, y / height, 0.1 / width, max(h, 0.3) / height), label="<colorbar>")
            fig.colorbar(im, cax=cax).ax.tick_params(labelsize=6)
        top = y_w - _TICKS - _GAP
    fig.suptitle(title, fontsize=8, y=1 - 0.05 / height, va="top")
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return limits


def banding_figure(plt, data: BandingFigure, path) -> None:
    """The gallery where the setting has every run's weights, else optimum vs seed 0."""
    (gallery_figure if data.gallery else seed0_figure)(plt, data, path)


FIGURES = (FigureSpec(STEM, "banding, setting {key}: {data.subject}", banding_data, banding_figure),)
