"""A grid of points of the family's parameters (``ldsicl sweep --grid``), validated up front.

A grid is a list of *axes*, each a parameter of :data:`claims.harness.params.PARAMS` with
the values it takes, in the order given; its *cells* are the cartesian product of the axes
(the first axis varies slowest), every parameter on no axis at its default
(:data:`claims.harness.params.DEFAULT`).  Written ``"T=10,30,60 d=1,3,5"``: axes separated by
spaces (or ``;``), values by commas; :meth:`Grid.tag` writes it back so that
``Grid.parse(g.tag()) == g``.

Rule: #cells = prod over axes of #values <= :data:`MAX_CELLS`; every cell is a
:class:`~claims.harness.params.Point`, so it satisfies the premise every claim needs (T in
[7, 160], d in [1, 12], each sigma in [0, 10], sigma_w and sigma_v not both 0).

Everything is checked by :meth:`Grid.parse` (and the constructor) before any work, each
violation one ValueError that names ``--grid`` and the axis (or the cell): an unknown
parameter, an empty axis (``T=``), an axis given twice, a value given twice on an axis, a
value that is not a finite number (an integer for T and d), more than :data:`MAX_CELLS`
cells, a cell that breaks the premise.

>>> g = Grid.parse("T=10,30 d=3 sigma_w=0.05,0.2")
>>> g.names, len(g.cells()), g.tag(), str(g) == g.tag()
(('T', 'd', 'sigma_w'), 4, 'T=10,30 d=3 sigma_w=0.05,0.2', True)
>>> [c.tag() for c in g.cells()]
['T=10,d=3,sigma_w=0.05', 'T=10,d=3,sigma_w=0.2', 'd=3,sigma_w=0.05', 'd=3,sigma_w=0.2']
>>> Grid.parse(g.tag()) == g, g.values("T"), g.varying
(True, (10, 30), ('T', 'sigma_w'))
>>> Grid.parse("T=10,30 T=60")
Traceback (most recent call last):
ValueError: --grid T: axis given twice
>>> Grid.parse("sigma_w=0,0.1 sigma_v=0")
Traceback (most recent call last):
ValueError: --grid cell sigma_w=0,sigma_v=0: sigma_w, sigma_v: must not both be 0 (the paper's systems ...)
"""
from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass

from claims.harness.params import PARAMS, Point, format_value

__all__ = ["Axis", "Grid", "MAX_CELLS", "OPTION", "cell_dir_name"]

#: the most cells a grid may have (a sweep runs the suite once per cell)
MAX_CELLS = 512
#: the option named in errors
OPTION = "--grid"
#: the parameters whose values are integers (the others are reals)
_INTEGER = frozenset({"T", "d"})


def _shown(text) -> str:
    s = repr(text)
    return s if len(s) <= 24 else s[:20] + "...'"


def _value(name: str, text: str):
    """One value of axis ``name`` read from ``text``: an int for T and d, a finite float otherwise."""
    text = text.strip()
    if name in _INTEGER:
        if not re.fullmatch(r"[+-]?\d+", text):
            raise ValueError(f"{OPTION} {name}: values must be integers, got {_shown(text)}")
        return int(text)
    try:
        v = float(text)
    except ValueError:
        raise ValueError(f"{OPTION} {name}: values must be numbers, got {_shown(text)}") from None
    if not math.isfinite(v):
        raise ValueError(f"{OPTION} {name}: values must be finite numbers, got {_shown(text)}")
    return v


@dataclass(frozen=True)
class Axis:
    """One axis: a parameter of :data:`PARAMS` and its values (distinct, in the order given)."""

    name: str
    values: tuple

    def __post_init__(self):
        if self.name not in PARAMS:
            raise ValueError(f"{OPTION} {self.name}: unknown parameter; the claims take {', '.join(PARAMS)}")
        if not isinstance(self.values, tuple) or not self.values:
            raise ValueError(f"{OPTION} {self.name}: no values (an axis is NAME=V1,V2,..., e.g. 'T=10,30')")
        kind = int if self.name in _INTEGER else (int, float)
        for v in self.values:
            if isinstance(v, bool) or not isinstance(v, kind) or not math.isfinite(v):
                what = "integers" if self.name in _INTEGER else "finite numbers"
                raise ValueError(f"{OPTION} {self.name}: values must be {what}, got {v!r}")
        if self.name not in _INTEGER:
            object.__setattr__(self, "values", tuple(float(v) for v in self.values))
        seen = set()
        for v in self.values:
            if v in seen:
                raise ValueError(f"{OPTION} {self.name}: value {format_value(v)} given twice")
            seen.add(v)

    def tag(self) -> str:
        """``"T=10,30"``."""
        return f"{self.name}=" + ",".join(format_value(v) for v in self.values)


@dataclass(frozen=True)
class Grid:
    """A grid of points (module doc): its axes, validated with every cell on construction."""

    axes: tuple[Axis, ...]

    def __post_init__(self):
        if not isinstance(self.axes, tuple) or not self.axes:
            raise ValueError(f"{OPTION}: no axis; a grid is NAME=V1,V2,... items separated by spaces, "
                             "e.g. 'T=10,30 d=3'")
        names = [a.name for a in self.axes]
        for name in names:
            if names.count(name) > 1:
                raise ValueError(f"{OPTION} {name}: axis given twice")
        n = math.prod(len(a.values) for a in self.axes)
        if n > MAX_CELLS:
            sizes = " x ".join(f"{len(a.values)} {a.name}" for a in self.axes)
            raise ValueError(f"{OPTION}: {n} cells ({sizes}); at most {MAX_CELLS} (a sweep runs the suite "
                             "once per cell)")
        cells = []
        for combo in itertools.product(*(a.values for a in self.axes)):
            fields = dict(zip(names, combo))
            try:
                cells.append(Point(**fields))
            except ValueError as exc:
                where = ",".join(f"{k}={format_value(fields[k])}" for k in PARAMS if k in fields)
                message = str(exc).removeprefix("--claims-params").lstrip(" :")
                raise ValueError(f"{OPTION} cell {where}: {message}") from None
        object.__setattr__(self, "_cells", tuple(cells))

    @classmethod
    def parse(cls, text: str) -> "Grid":
        """``"T=10,30 d=3"`` (module doc); one ValueError naming ``--grid`` and the axis otherwise."""
        if not isinstance(text, str):
            raise ValueError(f"{OPTION} must be a str such as 'T=10,30 d=3', got {text!r}")
        text = re.sub(r"\s*([=,])\s*", r"\1", text.strip())
        axes, seen = [], set()
        for item in filter(None, re.split(r"[\s;]+", text)):
            name, eq, values = item.partition("=")
            if not eq or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
                raise ValueError(f"{OPTION}: expected NAME=V1,V2,... items separated by spaces, such as "
                                 f"'T=10,30 d=3', got {_shown(item)}")
            if name not in PARAMS:
                raise ValueError(f"{OPTION} {name}: unknown parameter; the claims take {', '.join(PARAMS)}")
            if name in seen:
                raise ValueError(f"{OPTION} {name}: axis given twice")
            seen.add(name)
            if not values:
                raise ValueError(f"{OPTION} {name}: no values (an axis is NAME=V1,V2,..., e.g. 'T=10,30')")
            axes.append(Axis(name, tuple(_value(name, v) for v in values.split(","))))
        return cls(tuple(axes))

    @property
    def names(self) -> tuple[str, ...]:
        """The axes' parameters, in the order given."""
        return tuple(a.name for a in self.axes)

    @property
    def varying(self) -> tuple[str, ...]:
        """The axes with more than one value (those a figure can draw)."""
        return tuple(a.name for a in self.axes if len(a.values) > 1)

    def values(self, name: str) -> tuple:
        """The values of axis ``name`` (ValueError naming it when the grid has no such axis)."""
        for a in self.axes:
            if a.name == name:
                return a.values
        raise ValueError(f"{OPTION} {name}: not an axis of the grid {self.tag()!r}")

    def cells(self) -> tuple[Point, ...]:
        """The cells, the cartesian product of the axes (the first axis slowest)."""
        return self._cells

    def label(self, point: Point) -> str:
        """``point`` as the grid's axes show it, every axis written (a cell's name in the reports).

        >>> Grid.parse("T=10,30 d=3").label(Point(d=3))
        'T=30,d=3'
        """
        return ",".join(f"{n}={format_value(getattr(point, n))}" for n in self.names)

    def tag(self) -> str:
        """The grid as :meth:`parse` reads it: ``"T=10,30 d=3"``."""
        return " ".join(a.tag() for a in self.axes)

    def as_dict(self) -> dict:
        """``{name: [values]}`` in the order given (the sweep file's ``grid``)."""
        return {a.name: list(a.values) for a in self.axes}

    @classmethod
    def from_dict(cls, data) -> "Grid":
        """The grid of :meth:`as_dict` (ValueError naming ``--grid`` for a malformed one)."""
        if not isinstance(data, dict):
            raise ValueError(f"{OPTION}: a grid must be an object {{name: [values]}}, got {type(data).__name__}")
        axes = []
        for name, values in data.items():
            if not isinstance(values, list):
                raise ValueError(f"{OPTION} {name}: values must be a list, got {type(values).__name__}")
            axes.append(Axis(name, tuple(values)))
        return cls(tuple(axes))

    def __str__(self) -> str:
        return self.tag()


def cell_dir_name(point: Point) -> str:
    """The folder of a cell under a sweep's ``cells/``: its tag, ``default`` at the default point.

    >>> cell_dir_name(Point(T=60)), cell_dir_name(Point())
    ('T=60', 'default')
    """
    return point.tag() or "default"
