"""The grammar of run ids (claims/harness/runs.py): one ``FORM`` per kind of run gives its id and parser.

A kind of run is a frozen dataclass deriving from :class:`RunKind` with a ``FORM`` -- the id
with a ``{field}`` per field, ending with :data:`SEED_SUFFIX` -- and a ``point`` field (the
point of the family's parameters it trains at, claims/harness/params.py).  ``.run`` writes
the id: the point's prefix (only the parameters of ``FOLLOWS`` that differ from the
default, ``@T=60,d=3/``), then ``FORM`` with each field written as :data:`FIELDS` says;
``Kind.parse(id)`` is its inverse, ValueError naming the id otherwise.

>>> from dataclasses import dataclass
>>> from typing import ClassVar
>>> from claims.harness.params import Point
>>> @dataclass(frozen=True)
... class Demo(RunKind):
...     setting: str
...     seed: int
...     FORM: ClassVar = "demo/{setting}/seed={seed}"
...     point: Point = point_field()
>>> Demo("a", 2, point=Point(T=60)).run, Demo.parse("@T=60/demo/a/seed=2") == Demo("a", 2, point=Point(T=60))
('@T=60/demo/a/seed=2', True)
>>> seed_index("@T=60/demo/a/seed=2")
2
"""
from __future__ import annotations

import dataclasses
import re
from typing import ClassVar

from claims.harness.identity import RunRef
from claims.harness.params import PARAMS, Point, current, split_prefix

__all__ = ["RunKind", "SEED_SUFFIX", "FIELDS", "seed_index", "seed_stem", "point_field", "radius_text"]

_INT = r"(?:0|[1-9][0-9]*)"


def radius_text(text: str) -> float:
    """A radius as an id writes it (``f"{r:g}"``); another spelling of it is no id."""
    r = float(text)
    if f"{r:g}" != text:
        raise ValueError(f"radius must be written {r:g}, got {text!r}")
    return r


#: how an id writes a field: (pattern, read, write); every field not listed is an index (_INT)
FIELDS = {
    "setting": (r"[a-z]+", str, str),
    "variant": (r"[^/]+", str, str),
    "radius": (r"[0-9.]+", radius_text, lambda r: f"{r:g}"),
    "Ts": (rf"{_INT}(?:\+{_INT})+", lambda t: tuple(int(x) for x in t.split("+")), lambda Ts: "+".join(map(str, Ts))),
    "radii": (r"[0-9.]+\+[0-9.]+", lambda t: tuple(radius_text(x) for x in t.split("+")),
              lambda radii: "+".join(f"{r:g}" for r in radii)),
}
_INDEX = (_INT, int, str)


SEED_SUFFIX = "/seed={seed}"                  # how every kind's id ends: its seed index
_SEED = re.compile(rf"/seed=({_INT})")


def seed_index(run: str) -> int | None:
    """The seed index an id ends with (:data:`SEED_SUFFIX`), None for an id without one.
    >>> seed_index("ars/b/s=4/seed=12"), seed_index("ar1/a"), seed_index("x/seed=01")
    (12, None, None)
    """
    m = _SEED.search(run) if isinstance(run, str) else None
    return int(m[1]) if m is not None and m.end() == len(run) else None


def seed_stem(run: str) -> str:
    """The id without its seed suffix (the run's kind and fields), the id itself without one.
    >>> seed_stem("@T=60/ars/b/s=4/seed=12"), seed_stem("ar1/a")
    ('@T=60/ars/b/s=4', 'ar1/a')
    """
    m = _SEED.search(run)
    return run[:m.start()] if m is not None and m.end() == len(run) else run


def _id_fields(kind):
    """The fields an id writes in its ``FORM`` (every field but the point, which is its prefix)."""
    return [f for f in dataclasses.fields(kind) if f.name != "point"]


class RunKind:
    """What every kind shares: ``FORM``, the id with a ``{field}`` per field (:data:`FIELDS`),
    ending with :data:`SEED_SUFFIX`, gives ``run`` and ``parse`` (its inverse; ValueError
    naming ``run`` for another id)."""

    FORM: ClassVar[str]
    PATTERN: ClassVar[re.Pattern]
    #: the parameters of the session's point (claims/harness/params.py) this kind trains at
    FOLLOWS: ClassVar[tuple] = PARAMS

    def __post_init__(self):
        point = self.point
        if not isinstance(point, Point):
            raise ValueError(f"point must be a claims.harness.params.Point, got {point!r}")
        object.__setattr__(self, "point", point.restricted(self.FOLLOWS))

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        if "FORM" in cls.__dict__:
            if not cls.FORM.endswith(SEED_SUFFIX):
                raise TypeError(f"{cls.__name__}.FORM must end with {SEED_SUFFIX!r}, got {cls.FORM!r}")
            cls.PATTERN = re.compile(re.sub(r"\\\{(\w+)\\\}", lambda m: f"(?P<{m[1]}>{FIELDS.get(m[1], _INDEX)[0]})",
                                            re.escape(cls.FORM)))

    @property
    def run(self) -> str:
        """The run id: ``FORM`` with each field written as :data:`FIELDS` says."""
        return self.point.prefix(self.FOLLOWS) + self.FORM.format(
            **{f.name: FIELDS.get(f.name, _INDEX)[2](getattr(self, f.name)) for f in _id_fields(self)})

    def __str__(self) -> str:
        return self.run

    @property
    def ref(self) -> RunRef:
        """The run as a record names it: its id and seed index."""
        return RunRef(self.run, self.seed)

    @classmethod
    def parse(cls, run: str):
        """The run of this kind whose id is ``run`` (ValueError naming ``run`` otherwise)."""
        point, rest = split_prefix(run)
        m = cls.PATTERN.fullmatch(rest) if isinstance(rest, str) else None
        if m is None:
            raise ValueError(f"run must be an id of the form {cls.FORM!r}, got {run!r}")
        kind = cls(**{f.name: FIELDS.get(f.name, _INDEX)[1](m[f.name]) for f in _id_fields(cls)}, point=point)
        if kind.run != run:
            raise ValueError(f"run {run!r}: its point sets parameters a {cls.__name__} does not follow "
                             f"(it follows {', '.join(cls.FOLLOWS)}); the id is {kind.run!r}")
        return kind

    def check(self, profile) -> None:
        """ValueError unless some claim trains this run in ``profile`` (``config`` checks the grid)."""



def point_field():
    """The ``point`` field of a kind: the session's point (claims/harness/params.py) unless given."""
    return dataclasses.field(default_factory=current)
