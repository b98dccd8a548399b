"""What the figures of every claim share: reading a record's details strictly, typed
vectors and matrices, a setting's colour, cell outlines and wrapped titles.

A figure reads each field it draws in one place, its data function, through
:func:`detail`: a record of the figure's check that lacks a key the figure reads is an
error naming the key, the record and the figure (so that a renamed key in a claim file
cannot make a figure silently disappear); a report with no record of the check simply has
no such figure.

>>> from claims.harness.records import make_record
>>> r = make_record(claim="demo", check="x", label="x", paper_ref="-", measured=0.0,
...                 kind="reported", setting="a", details={"b": [1, 2]})
>>> vector(detail(r, "b", "demo"))
(1.0, 2.0)
>>> detail(r, "W_QK", "demo")
Traceback (most recent call last):
...
ValueError: figure demo: record 'demo/x/a' has no details['W_QK']
>>> setting_colour("b")
'C1'
>>> distinct_colours(3), len(set(distinct_colours(25)))
(['C0', 'C1', 'C2'], 25)
"""
from __future__ import annotations

import textwrap
from typing import Iterable

import numpy as np

from claims.harness.coverage import ALL

__all__ = ["CLIP", "detail", "of_check", "vector", "matrix", "interval_of", "setting_colour",
           "one_setting", "outline", "wrap", "distinct_colours"]

#: the error-ratio figures (spectral shift, depth) stop their axis at this multiple of the
#: filter's median error; points above are drawn as triangles on the edge
CLIP = 10.0


def detail(r, key: str, figure: str):
    """``r.details[key]``; ValueError naming ``key``, the record and ``figure`` if it is absent."""
    try:
        return r.details[key]
    except KeyError:
        raise ValueError(f"figure {figure}: record {r.check_id!r} has no details[{key!r}]") from None


def of_check(records: Iterable, claim: str, *checks: str) -> list:
    """The records of ``claim`` whose check is one of ``checks`` (by field, never by label)."""
    return [r for r in records if r.claim == claim and r.check in checks]


def vector(x) -> tuple[float, ...]:
    """A list of numbers as a tuple of floats (the typed figures' vectors)."""
    return tuple(float(v) for v in np.asarray(x, dtype=float).ravel())


def matrix(x) -> tuple[tuple[float, ...], ...]:
    """A 2-d list of numbers as a tuple of tuples of floats (ValueError unless 2-d).

    >>> matrix([[1, 2], [3, 4]])
    ((1.0, 2.0), (3.0, 4.0))
    """
    a = np.asarray(x, dtype=float)
    if a.ndim != 2:
        raise ValueError(f"a matrix must be 2-d, got shape {a.shape}")
    return tuple(tuple(float(v) for v in row) for row in a)


def interval_of(r) -> tuple[float, float] | None:
    """A record's interval as a (lo, hi) tuple, or None (an exact value)."""
    return tuple(r.interval) if r.interval else None


def setting_colour(setting: str) -> str:
    """A setting's matplotlib colour: its position in the registry of settings
    (:data:`claims.harness.coverage.ALL`), so that a setting has one colour in every figure."""
    return f"C{ALL.index(setting) % 10}"


def one_setting(records: Iterable, figure: str) -> str:
    """The one setting the records of a figure share (named in its title); ValueError if
    they are of several."""
    found = sorted({str(r.coords.setting) for r in records})
    if len(found) != 1:
        raise ValueError(f"figure {figure}: its records must share one setting, got {found}")
    return found[0]


def outline(ax, mask, inset: float = 0.1) -> None:
    """Outline the kept cells of a boolean mask (rows x cols) on an imshow axis, each inside
    its own cell (inset), so that a checkerboard does not outline every cell."""
    from matplotlib.patches import Rectangle
    for (i, j), keep in np.ndenumerate(mask):
        if keep:
            ax.add_patch(Rectangle((j - 0.5 + inset, i - 0.5 + inset), 1 - 2 * inset, 1 - 2 * inset,
                                   fill=False, edgecolor="black", linewidth=1.8))


def wrap(text: str, width: int) -> str:
    """``text`` wrapped at ``width`` characters (titles of the figures)."""
    return "\n".join(textwrap.wrap(str(text), width))


def distinct_colours(n: int) -> list:
    """``n`` pairwise different colours for the labelled series of one axes: matplotlib's
    cycle C0..C9 up to ten, else tab20's twenty, else evenly spaced hues."""
    if n <= 10:
        return [f"C{k}" for k in range(n)]
    from matplotlib import colormaps
    cmap = colormaps["tab20" if n <= 20 else "hsv"]
    return [tuple(float(v) for v in cmap(k / n if n > 20 else k)) for k in range(n)]
