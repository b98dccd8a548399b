"""The point of the family's parameter space the claims run at (``--claims-params``).

Every claim builds its families of systems and trains its layers at one :class:`Point`:
the horizon ``T``, the state dimension ``d`` and the three noise levels ``sigma_w``,
``sigma_v``, ``sigma_0`` (Sigma_0 = sigma_0^2 I).  :data:`DEFAULT` is the paper's window
(T = 30, the d = 5 of its figures) with our choices where it is silent (sigma_w = sigma_v =
0.1, Sigma_0 = I; docs/settings.md); ``pytest claims --claims-params T=60,d=3`` moves every
claim there, trained runs included, and ``ldsicl sweep`` runs the suite at each cell of a
grid of points (claims/cluster/sweep.py).

What a point changes, and what it does not:

* :func:`family` is how a claim builds a family: the point's values for every parameter the
  call does not set itself.  A claim whose statement *is* a grid over one parameter keeps
  its own values there (the depth claim's horizons, the kappa-versus-T table, improper
  learning's long T and its d = 1-3, the hypothesis-drawn checks' draws); each spec's
  ``params`` names the parameters its claim follows (claims/specs/).
* Run ids carry the point where it differs from :data:`DEFAULT`, as a prefix:
  ``@T=60,d=3/ar1/a/seed=0`` (claims/harness/runs.py), and only the parameters the kind
  follows; the training configuration has them too, so the weight cache keys them.
* Check ids do not: the same check at two points has the same id, and the report records
  the point at run level (``run.params`` in claims.json), so ``claims.reports.compare``
  matches records across points.
* Away from :data:`DEFAULT` the paper's numbers (the PCG cosines 0.88 and 0.93) are reported
  beside the measured values, not used as tolerances, and the learning rates tuned at the
  default point are said to be so (the report's run line).

The premise every claim needs (:meth:`Point.__post_init__`): T in [:data:`MIN_T`,
:data:`MAX_T`] (the widest trained window s = 4 needs T >= s + 3 sequences' worth of
regression rows; past MAX_T the exact-rational kappa and the trained runs' cost outgrow a
session), d in [1, :data:`MAX_D`], each sigma in [0, :data:`MAX_SIGMA`] and sigma_w, sigma_v
not both 0 (the paper's noisy systems; the noise-free case is the twins' own claim).
A violation is one ValueError naming the parameter, raised before any work.

The point of a session is process state set once (:func:`activate`, by the plugin in every
pytest process from the same command line, by the CLI from its option) and read by
:func:`current`: the one piece of module state of the harness, because families are built
in helpers that are memoised per process and take no profile.

>>> p = Point.parse("T=60,d=3,sigma_w=0.2")
>>> p.T, p.d, p.sigma_w, p.sigma_v, p.is_default
(60, 3, 0.2, 0.1, False)
>>> p.tag(), DEFAULT.tag(), Point.parse("").is_default
('T=60,d=3,sigma_w=0.2', '', True)
>>> Point.parse("T=60,d=3").prefix(("d", "sigma_w")), DEFAULT.prefix()
('@d=3/', '')
>>> Point.parse("d=0")
Traceback (most recent call last):
ValueError: --claims-params d: must be an integer in [1, 12], got '0'
"""
from __future__ import annotations

import contextlib
import dataclasses
import functools
import math
import re
from dataclasses import dataclass

__all__ = ["Point", "DEFAULT", "PARAMS", "MIN_T", "MAX_T", "MAX_D", "MAX_SIGMA", "OPTION",
           "current", "activate", "family", "point_cached", "split_prefix", "format_value"]

#: the parameters a point sets, in the order ids and tags write them
PARAMS = ("T", "d", "sigma_w", "sigma_v", "sigma_0")
#: T >= the widest trained window (s = 4) + 3; T <= MAX_T (module doc)
MIN_T, MAX_T = 7, 160
#: the largest state dimension (training cost and the population optima grow as d^2)
MAX_D = 12
#: the largest noise level (the moments the claims estimate stay finite and well scaled)
MAX_SIGMA = 10.0
#: the option that names the parameters in errors
OPTION = "--claims-params"
#: the integer parameters and their ranges
_INT_BOUNDS = {"T": (MIN_T, MAX_T), "d": (1, MAX_D)}
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def format_value(v) -> str:
    """A value as ids and tags write it: ints plainly, floats by ``repr`` of the shortest
    round-tripping form (``0.1``, ``1e-05``).

    >>> format_value(3), format_value(0.2), format_value(1.0)
    ('3', '0.2', '1')
    """
    if isinstance(v, int):
        return str(v)
    return f"{v:g}" if float(f"{v:g}") == v else repr(float(v))


def _int(name: str, text, lo: int, hi: int) -> int:
    try:
        v = int(text) if isinstance(text, str) else text
        ok = isinstance(v, int) and not isinstance(v, bool) and lo <= v <= hi
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(f"{OPTION} {name}: must be an integer in [{lo}, {hi}], got {_shown(text)}")
    return v


def _real(name: str, text) -> float:
    try:
        v = float(text) if isinstance(text, str) else text
        ok = (isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
              and 0 <= v <= MAX_SIGMA)
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(f"{OPTION} {name}: must be a finite number in [0, {MAX_SIGMA:g}], got {_shown(text)}")
    return float(v)


def _shown(text) -> str:
    s = repr(text)
    return s if len(s) <= 24 else s[:20] + "...'"


@dataclass(frozen=True)
class Point:
    """One point of the family's parameters (module doc); validated on construction."""

    T: int = 30
    d: int = 5
    sigma_w: float = 0.1
    sigma_v: float = 0.1
    sigma_0: float = 1.0

    def __post_init__(self):
        for name, (lo, hi) in _INT_BOUNDS.items():
            object.__setattr__(self, name, _int(name, getattr(self, name), lo, hi))
        for name in ("sigma_w", "sigma_v", "sigma_0"):
            object.__setattr__(self, name, _real(name, getattr(self, name)))
        if self.sigma_w == 0 and self.sigma_v == 0:
            raise ValueError(f"{OPTION} sigma_w, sigma_v: must not both be 0 (the paper's systems are noisy; "
                             "the noise-free protocol is the training-basins claim's twins)")

    @classmethod
    def parse(cls, text: str) -> "Point":
        """``"T=60,d=3,sigma_w=0.2"`` (commas or spaces; any subset of :data:`PARAMS`; ``""``
        is :data:`DEFAULT`); ValueError naming the parameter otherwise."""
        if not isinstance(text, str):
            raise ValueError(f"{OPTION} must be a str such as 'T=60,d=3', got {text!r}")
        fields: dict = {}
        for item in filter(None, re.split(r"[,\s]+", text.strip())):
            key, eq, value = item.partition("=")
            if not eq or not _KEY.fullmatch(key):
                raise ValueError(f"{OPTION}: expected NAME=VALUE items such as 'T=60,d=3', got {_shown(item)}")
            if key not in PARAMS:
                raise ValueError(f"{OPTION} {key}: unknown parameter; the claims take {', '.join(PARAMS)}")
            if key in fields:
                raise ValueError(f"{OPTION} {key}: given twice")
            fields[key] = value
        return cls(**fields)

    @property
    def is_default(self) -> bool:
        return self == DEFAULT

    def changed(self, follows=PARAMS) -> dict:
        """The parameters among ``follows`` whose value differs from :data:`DEFAULT`, in :data:`PARAMS` order."""
        return {k: getattr(self, k) for k in PARAMS if k in follows and getattr(self, k) != getattr(DEFAULT, k)}

    def tag(self, follows=PARAMS) -> str:
        """``"T=60,d=3"``: the changed parameters (``""`` at the default); :meth:`parse` reads it back."""
        return ",".join(f"{k}={format_value(v)}" for k, v in self.changed(follows).items())

    def prefix(self, follows=PARAMS) -> str:
        """The run-id prefix ``"@<tag>/"`` (``""`` at the default)."""
        tag = self.tag(follows)
        return f"@{tag}/" if tag else ""

    def restricted(self, follows) -> "Point":
        """This point with the parameters outside ``follows`` at their defaults."""
        return dataclasses.replace(DEFAULT, **{k: getattr(self, k) for k in follows})

    def as_dict(self) -> dict:
        return {k: getattr(self, k) for k in PARAMS}

    def family_fields(self) -> dict:
        """The fields of :class:`theory.systems.LDSFamily` and :class:`models.config.TrainConfig` it sets."""
        return self.as_dict()


DEFAULT = Point()

_session: list = [DEFAULT]


def current() -> Point:
    """The session's point (module doc): :data:`DEFAULT` unless :func:`activate` moved it."""
    return _session[-1]


@contextlib.contextmanager
def activate(point: Point):
    """Make ``point`` the session's point inside the block (the plugin enters it for the
    session; the CLI for one command)."""
    if not isinstance(point, Point):
        raise ValueError(f"point must be a Point, got {point!r}")
    _session.append(point)
    try:
        yield point
    finally:
        _session.remove(point)


def point_cached(fn):
    """``functools.lru_cache(maxsize=None)`` keyed by the arguments *and* the session's point,
    for the claims' memoised helpers that build families: a process that moves its point
    (a test, a CLI call inside :func:`activate`) is never served another point's value.

    >>> calls = []
    >>> @point_cached
    ... def horizon(setting):
    ...     calls.append(setting)
    ...     return family(setting).T
    >>> with activate(Point(T=40)):
    ...     a = horizon("a")
    >>> horizon("a"), a, horizon("a"), len(calls)
    (30, 40, 30, 2)
    """
    @functools.lru_cache(maxsize=None)
    def at(point, *args, **kwargs):
        return fn(*args, **kwargs)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return at(current(), *args, **kwargs)

    wrapper.cache_clear = at.cache_clear
    wrapper.cache_info = at.cache_info
    return wrapper


def family(setting: str, **fields):
    """``LDSFamily(setting, **fields)`` with the session's point for every parameter not given.

    >>> family("a").T, family("a", T=40).T
    (30, 40)
    """
    from theory.systems import LDSFamily
    return LDSFamily(setting, **{**current().family_fields(), **fields})


def split_prefix(run: str) -> tuple[Point, str]:
    """``"@T=60/ar1/a/seed=0"`` -> (the point, ``"ar1/a/seed=0"``); an id without a prefix is
    at :data:`DEFAULT`.  ValueError naming the id for a malformed or default-valued prefix."""
    if not isinstance(run, str) or not run.startswith("@"):
        return DEFAULT, run
    tag, slash, rest = run[1:].partition("/")
    if not slash or not tag:
        raise ValueError(f"run {run!r}: a point prefix is '@NAME=VALUE,.../', e.g. '@T=60,d=3/ar1/a/seed=0'")
    try:
        point = Point.parse(tag)
    except ValueError as exc:         # Point.parse speaks of --claims-params: say it is the id's prefix
        why = str(exc).removeprefix("--claims-params ").removeprefix("claims-params ")
        raise ValueError(f"run {run!r}: its point prefix '@{tag}/': {why}") from None
    if point.tag() != tag:
        raise ValueError(f"run {run!r}: the point is written {point.prefix()!r} (changed parameters only, "
                         f"in the order {', '.join(PARAMS)})")
    return point, rest
