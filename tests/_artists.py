"""What a drawn figure shows, read from its artists (for the per-figure tests of tests/test_figures*.py).

Each function takes a drawn :class:`matplotlib.figure.Figure` (or one of its axes) and returns
the defects it finds, so a test asserts ``== []`` and a negative control asserts the defect is
found on a figure drawn with it:

* :func:`texts_outside` -- visible non-empty texts (titles, labels, tick labels, annotations,
  legend entries) whose box leaves the canvas;
* :func:`overlapping_texts` -- pairs of visible texts whose boxes overlap;
* :func:`repeated_colours` -- labelled series of one axes that share a colour;
* :func:`points_under_legend` -- data points (line vertices, scatter offsets, error-bar ends)
  that the axes' legend box covers;
* :func:`horizontal_lines` -- the y of every horizontal line drawn across an axes (a tolerance);
* :func:`lowest_y` -- the lowest y of every drawn point, bar and error bar (no share below 0);
* :func:`blank_margins` -- the share of the canvas left blank at each edge (a loose layout).
* :func:`points_under_legends` -- per axes, the data points under its legend or a figure
  legend, after one draw (a figure of many panels).

>>> import matplotlib; matplotlib.use("Agg"); import matplotlib.pyplot as plt
>>> fig, ax = plt.subplots(); _ = ax.plot([0, 1], [0, 1], label="x"); _ = ax.plot([0, 1], [1, 0], label="y")
>>> _ = ax.axhline(0.5); repeated_colours(ax), horizontal_lines(ax), texts_outside(fig)
([], [0.5], [])
>>> fig.subplots_adjust(bottom=0.4); blank_margins(fig)["bottom"] > 0.3
True
>>> _ = ax.set_title("a title far too long to fit on the canvas of a figure this small " * 2)
>>> len(texts_outside(fig)) > 0
True
>>> plt.close(fig)
"""
from __future__ import annotations

import numpy as np
from matplotlib.collections import LineCollection, PathCollection, PolyCollection
from matplotlib.colors import to_rgba
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle
from matplotlib.text import Text

__all__ = ["texts", "texts_outside", "overlapping_texts", "repeated_colours", "points_under_legend",
           "horizontal_lines", "lowest_y", "blank_margins", "points_under_legends"]


def _renderer(fig):
    fig.canvas.draw()
    return fig.canvas.get_renderer()


def texts(fig) -> list[Text]:
    """Every visible, non-empty text artist of ``fig`` that is drawn (tick labels of ticks
    outside the view are not), after a draw."""
    _renderer(fig)
    return _drawn_texts(fig)


def _drawn_texts(fig) -> list[Text]:
    """:func:`texts` of a figure just drawn (no second draw)."""
    hidden = set()
    for ax in fig.axes:
        for axis in ax._axis_map.values():
            drawn = {id(t) for t in axis._update_ticks()}
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                if id(tick) not in drawn:
                    hidden.update((id(tick.label1), id(tick.label2)))
    return [t for t in fig.findobj(Text)
            if t.get_visible() and t.get_text().strip() and id(t) not in hidden]


def _box(t: Text, renderer):
    return t.get_window_extent(renderer)


def texts_outside(fig, pad: float = 0.5) -> list[str]:
    """The texts whose box is not inside the canvas (``pad`` pixels of slack)."""
    r = _renderer(fig)
    W, H = fig.canvas.get_width_height()
    out = []
    for t in _drawn_texts(fig):
        b = _box(t, r)
        if b.x0 < -pad or b.y0 < -pad or b.x1 > W + pad or b.y1 > H + pad:
            out.append(t.get_text())
    return out


def overlapping_texts(fig, pad: float = 0.0) -> list[tuple[str, str]]:
    """Pairs of visible texts whose boxes overlap by more than ``pad`` pixels each way."""
    r = _renderer(fig)
    found = _drawn_texts(fig)
    names = [t.get_text() for t in found]
    b = np.array([[x.x0, x.y0, x.x1, x.y1] for x in (_box(t, r) for t in found)]).reshape(-1, 4)
    w = np.minimum(b[:, None, 2], b[None, :, 2]) - np.maximum(b[:, None, 0], b[None, :, 0])
    h = np.minimum(b[:, None, 3], b[None, :, 3]) - np.maximum(b[:, None, 1], b[None, :, 1])
    i, j = np.nonzero(np.triu((w > pad) & (h > pad), k=1))
    return [(names[a], names[c]) for a, c in zip(i.tolist(), j.tolist())]


def _colour(artist):
    if isinstance(artist, Line2D):
        return to_rgba(artist.get_color())
    if isinstance(artist, (PathCollection, PolyCollection, LineCollection)):
        fc = artist.get_facecolor() if len(artist.get_facecolor()) else artist.get_edgecolor()
        return tuple(np.round(fc[0], 3)) if len(fc) else None
    if isinstance(artist, Rectangle):
        return to_rgba(artist.get_facecolor())
    return None


def _labelled(ax):
    arts = list(ax.lines) + list(ax.collections) + list(ax.patches)
    for container in ax.containers:
        label = container.get_label()
        if label and not label.startswith("_"):
            first = next(iter(a for a in container if a is not None), None)
            if isinstance(first, tuple):
                first = first[0] if first else None
            if first is not None:
                yield label, first
    for a in arts:
        label = a.get_label()
        if label and not label.startswith("_"):
            yield label, a


def repeated_colours(ax) -> list[tuple[str, str]]:
    """Pairs of differently labelled series of ``ax`` drawn in the same colour."""
    seen: dict[tuple, str] = {}
    out = []
    for label, art in _labelled(ax):
        c = _colour(art)
        if c is None:
            continue
        c = tuple(np.round(c, 3))
        if c in seen and seen[c] != label:
            out.append((seen[c], label))
        seen.setdefault(c, label)
    return out


def _data_points(ax) -> np.ndarray:
    pts = []
    for line in ax.lines:
        xy = np.asarray(line.get_xydata(), dtype=float)
        if line.get_marker() not in (None, "None", "", " ") and len(xy):
            pts.append(ax.transData.transform(xy))
    for coll in ax.collections:
        if isinstance(coll, PathCollection):
            off = np.asarray(coll.get_offsets(), dtype=float)
            if len(off):
                pts.append(coll.get_offset_transform().transform(off))
        elif isinstance(coll, LineCollection):
            for seg in coll.get_segments():
                if len(seg):
                    pts.append(ax.transData.transform(np.asarray(seg, dtype=float)))
    if not pts:
        return np.zeros((0, 2))
    pts = np.concatenate(pts)
    return pts[np.all(np.isfinite(pts), axis=1)]


def points_under_legend(ax) -> int:
    """How many data points of ``ax`` lie inside its legend's box (0 without a legend)."""
    leg = ax.get_legend()
    if leg is None or not leg.get_visible():
        return 0
    r = _renderer(ax.figure)
    b = leg.get_window_extent(r)
    pts = _data_points(ax)
    # only points inside the axes' view count (clipped ones are not drawn)
    ab = ax.get_window_extent(r)
    inside_ax = (pts[:, 0] >= ab.x0) & (pts[:, 0] <= ab.x1) & (pts[:, 1] >= ab.y0) & (pts[:, 1] <= ab.y1)
    under = (pts[:, 0] >= b.x0) & (pts[:, 0] <= b.x1) & (pts[:, 1] >= b.y0) & (pts[:, 1] <= b.y1)
    return int(np.sum(inside_ax & under))


def horizontal_lines(ax) -> list[float]:
    """The y of every line of ``ax`` that is horizontal across it (``axhline`` or a constant line)."""
    out = []
    for line in ax.lines:
        y = np.asarray(line.get_ydata(), dtype=float)
        x = np.asarray(line.get_xdata(), dtype=float)
        if len(y) >= 2 and np.all(y == y[0]) and np.ptp(x) > 0:
            out.append(float(y[0]))
    return out


def lowest_y(ax) -> float:
    """The lowest y (data units) of every point, error-bar end and bar of ``ax`` (``inf`` if none)."""
    inv = ax.transData.inverted()
    ys = [inv.transform(_data_points(ax))[:, 1]] if len(_data_points(ax)) else []
    for p in ax.patches:
        if isinstance(p, Rectangle) and p.get_height() != 0:
            ys.append(np.array([p.get_y(), p.get_y() + p.get_height()]))
    return float(min((y.min() for y in ys if len(y)), default=np.inf))


def blank_margins(fig) -> dict[str, float]:
    """The share of the canvas's width (left, right) or height (bottom, top) between each
    edge and the nearest drawn axes (its ticks, labels and title included) or text."""
    r = _renderer(fig)
    W, H = fig.canvas.get_width_height()
    boxes = [ax.get_tightbbox(r) for ax in fig.axes if ax.get_visible()]
    boxes += [_box(t, r) for t in _drawn_texts(fig)]
    boxes = [b for b in boxes if b is not None and b.width > 0 and b.height > 0]
    if not boxes:
        return {"left": 1.0, "bottom": 1.0, "right": 1.0, "top": 1.0}
    edges = {"left": min(b.x0 for b in boxes) / W, "bottom": min(b.y0 for b in boxes) / H,
             "right": 1 - max(b.x1 for b in boxes) / W, "top": 1 - max(b.y1 for b in boxes) / H}
    return {k: max(0.0, float(v)) for k, v in edges.items()}


def points_under_legends(fig) -> list[int]:
    """Per axes of ``fig``, how many of its data points in view lie inside its own legend's
    box or any figure legend's (``fig.legend``), after one draw of the canvas
    (:func:`points_under_legend` draws once per axes: slow on a figure of many panels).

    >>> import matplotlib; matplotlib.use("Agg"); import matplotlib.pyplot as plt
    >>> fig, (a, b) = plt.subplots(1, 2); _ = a.plot([0, 1], [0, 1], "o", label="x")
    >>> _ = b.plot([0.5], [0.5], "o"); _ = fig.legend(loc="center")
    >>> points_under_legends(fig)
    [0, 0]
    >>> _ = a.legend(loc="lower left", bbox_to_anchor=(0, 0)); points_under_legends(fig)[0] > 0
    True
    >>> plt.close(fig)
    """
    r = _renderer(fig)
    shared = [leg.get_window_extent(r) for leg in fig.legends if leg.get_visible()]
    out = []
    for ax in fig.axes:
        leg = ax.get_legend()
        boxes = shared + ([leg.get_window_extent(r)] if leg is not None and leg.get_visible() else [])
        pts = _data_points(ax)
        ab = ax.get_window_extent(r)
        inside = (pts[:, 0] >= ab.x0) & (pts[:, 0] <= ab.x1) & (pts[:, 1] >= ab.y0) & (pts[:, 1] <= ab.y1)
        under = np.zeros(len(pts), dtype=bool)
        for b in boxes:
            under |= (pts[:, 0] >= b.x0) & (pts[:, 0] <= b.x1) & (pts[:, 1] >= b.y0) & (pts[:, 1] <= b.y1)
        out.append(int(np.sum(inside & under)))
    return out
