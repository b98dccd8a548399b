r"""Identity of a check and of the runs behind it: ``check_id``, :class:`Coords`, :class:`RunRef`, :class:`RunEntry`.

Check ids (schema 4; docs/results/README.md describes every field)
    ``check_id`` = ``claim/check/coordinates``, e.g. ``banding/trained-odd-share/a/s=2`` or
    ``spectral-shift/mse-ratio/a/L=4/r=1.05/seed=0``: the claim, the check's name and its
    coordinates (:class:`Coords`: setting, s, T, layers, radius, seed, variant, and
    ``control`` for a negative control), never the label text, so rewording a label
    changes nothing that compares runs (claims.reports.compare matches by ``check_id``).  Unique
    within a run: :class:`claims.harness.records.ClaimRecorder` refuses a second record of one id
    in a test, the plugin fails the session on a duplicate across tests.  ``label`` is the
    human text.
Per-run entries
    ``runs``: for checks on trained runs, one :class:`RunEntry` per run (run id, seed
    index, value, its standard error where it has one, ``extra``), in one shape for
    every claim; a claim names its runs as :class:`RunRef` s (claims/harness/runs.py) and
    :func:`claims.harness.records.run_entries` turns them into entries.

>>> check_id("spectral-shift", "mse-ratio", Coords(setting="a", layers=4, radius=1.05, seed=0))
'spectral-shift/mse-ratio/a/L=4/r=1.05/seed=0'
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Mapping, NamedTuple

__all__ = ["COORDINATES", "Coords", "check_id", "RunRef", "RunEntry", "per_run_extras"]

#: the coordinates of a check, in the order they appear in its ``check_id``.
COORDINATES = ("setting", "s", "T", "layers", "radius", "seed", "variant")
#: prefix of each coordinate in a ``check_id`` (the setting and the variant stand bare).
_ID_PREFIX = {"setting": "", "s": "s=", "T": "T=", "layers": "L=", "radius": "r=", "seed": "seed=",
              "variant": ""}
_TOKEN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9.,+*=_-]*$")
_RANGE_INT = re.compile(r"^\d+-\d+$")
_RANGE_REAL = re.compile(r"^\d+(\.\d+)?-\d+(\.\d+)?$")


def _token(name: str, value) -> str:
    """A coordinate or check name as it enters a ``check_id``: no '/', no white space."""
    text = f"{value:g}" if isinstance(value, float) else str(value)
    if not _TOKEN.match(text):
        raise ValueError(f"{name} must be a short token (letters, digits and . , + * = _ -; "
                         f"no '/' or spaces) to enter a check_id, got {value!r}")
    return text


@dataclass(frozen=True)
class Coords:
    """Where a check was made: the structured coordinates of a record.

    ``setting``: a system family (``"a"`` ... ``"d"``, ``"asym"``) or a scope such as
    ``"symbolic"``, ``"drawn"`` or ``"a-d"``; ``s``: the AR window (an int, or a range such
    as ``"2-4"`` when one check covers several); ``T``: the sequence length; ``layers``:
    the depth of a stack; ``radius``: the spectral radius of the test systems (a float, or
    a range ``"0.9-1.05"``); ``seed``: the seed index of a per-run row; ``variant``: what
    else tells two checks of one name apart (a broken variant, a training choice);
    ``control``: a negative control (``expect == "fails"``).  ``None`` where not applicable.

    >>> Coords(setting="a", s=2).id_parts()
    ['a', 's=2']
    >>> Coords(setting="a", layers=4, radius=1.05, control=True).id_parts()
    ['a', 'L=4', 'r=1.05', 'control']
    """

    setting: str | None = None
    s: int | str | None = None
    T: int | None = None
    layers: int | None = None
    radius: float | str | None = None
    seed: int | None = None
    variant: str | None = None
    control: bool = False

    def __post_init__(self):
        for name, kinds, what in (("s", (int, str), "an int"), ("radius", (int, float, str), "a number")):
            v = getattr(self, name)
            if v is not None and (isinstance(v, bool) or not isinstance(v, kinds)):
                raise ValueError(f"{name} must be {what}, a range string such as '2-4', or None, got {v!r}")
        for name in ("T", "layers", "seed"):
            v = getattr(self, name)
            if v is not None and (isinstance(v, bool) or not isinstance(v, int)):
                raise ValueError(f"{name} must be an int or None, got {v!r}")
        for name in ("setting", "variant"):
            v = getattr(self, name)
            if v is not None and not isinstance(v, str):
                raise ValueError(f"{name} must be a str or None, got {v!r}")
        if not isinstance(self.control, bool):
            raise ValueError(f"control must be a bool, got {self.control!r}")
        # one check_id, one set of coordinates: the setting leads every id that has
        # coordinates, a variant cannot pass for another coordinate, a radius is written exactly
        if self.setting is None and any(getattr(self, c) is not None for c in COORDINATES[1:]):
            raise ValueError("setting is required when other coordinates are given (it leads the check_id)")
        for name in ("setting", "variant"):
            v = getattr(self, name)
            if v is not None and (v == "control" or any(v.startswith(p) for p in _ID_PREFIX.values() if p)):
                raise ValueError(f"{name} must not read like another coordinate ('s=', 'T=', 'L=', 'r=', "
                                 f"'seed=', 'control'), got {v!r}")
        if isinstance(self.s, str) and not _RANGE_INT.match(self.s):
            raise ValueError(f"s as a string must be a range such as '2-4', got {self.s!r}")
        if isinstance(self.radius, str) and not _RANGE_REAL.match(self.radius):
            raise ValueError(f"radius as a string must be a range such as '0.9-1.05', got {self.radius!r}")
        if isinstance(self.radius, (int, float)) and not math.isfinite(self.radius):
            raise ValueError(f"radius must be finite, got {self.radius!r}")
        if isinstance(self.radius, float) and float(f"{self.radius:g}") != self.radius:
            raise ValueError(f"radius must be written exactly by 6 significant digits, got {self.radius!r}")
        self.id_parts()     # every coordinate must be a token

    def id_parts(self) -> list[str]:
        parts = [_ID_PREFIX[c] + _token(c, getattr(self, c)) for c in COORDINATES
                 if getattr(self, c) is not None]
        return parts + (["control"] if self.control else [])

    def where(self) -> str:
        """The coordinates as the reports show them: ``"a, s=2"``, ``"a, L=4, r=1.05"``."""
        parts = [("" if c in ("setting", "variant") else _ID_PREFIX[c])
                 + (f"{getattr(self, c):g}" if isinstance(getattr(self, c), float) else str(getattr(self, c)))
                 for c in COORDINATES if getattr(self, c) is not None]
        return ", ".join(parts) if parts else "-"

    def to_dict(self) -> dict:
        return {c: getattr(self, c) for c in COORDINATES + ("control",)}

    @classmethod
    def from_dict(cls, data: Mapping) -> "Coords":
        unknown = sorted(set(data) - set(COORDINATES + ("control",)))
        if unknown:
            raise ValueError(f"coords: unknown fields {unknown}")
        return cls(**dict(data))


def check_id(claim: str, check: str, coords: Coords) -> str:
    """``claim/check/coordinates...``: stable, from the claim, the check's name and its
    coordinates, never from label text.

    >>> check_id("banding", "odd-share", Coords(setting="a", s=2))
    'banding/odd-share/a/s=2'
    """
    return "/".join([_token("claim", claim), _token("check", check)] + coords.id_parts())


class RunRef(NamedTuple):
    """A trained run as a claim names it: its id, derived from the configuration the claim
    trains (claims/harness/runs.py), and its seed index."""

    run: str
    seed: int | None = None


@dataclass
class RunEntry:
    """One trained run behind a check: its id, seed index, value, the value's own
    uncertainty (a standard error, where it has one) and a free ``extra`` mapping.

    ``run`` is derived from the configuration the claim trains (claims/harness/runs.py, e.g.
    ``"ars/a/s=4/seed=2"``), the same in every profile that trains that configuration.
    """

    run: str
    seed: int | None
    value: float
    stderr: float | None = None
    extra: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"run": self.run, "seed": self.seed, "value": self.value, "stderr": self.stderr,
                "extra": dict(self.extra)}

    @classmethod
    def from_dict(cls, data: Mapping) -> "RunEntry":
        unknown = sorted(set(data) - {"run", "seed", "value", "stderr", "extra"})
        if unknown:
            raise ValueError(f"runs: unknown fields {unknown}")
        return cls(run=data["run"], seed=data.get("seed"), value=data["value"],
                   stderr=data.get("stderr"), extra=dict(data.get("extra") or {}))


def per_run_extras(details: Mapping, n: int) -> list[dict]:
    """The per-run scalars of ``details``: entry i of every ``<name>_per_seed`` list of
    length ``n`` whose entries are numbers, strings, bools or None, as ``{name: value}``
    (the lists stay in the details).  One rule for every claim, so a run's extra fields
    need no claim-specific code.

    >>> per_run_extras({"class_per_seed": ["b-odd", "b-even"], "x": 1}, 2)
    [{'class': 'b-odd'}, {'class': 'b-even'}]
    """
    out = [{} for _ in range(n)]
    for key, v in details.items():
        if (key.endswith("_per_seed") and key != "per_seed" and isinstance(v, list) and len(v) == n
                and all(x is None or isinstance(x, (bool, int, float, str)) for x in v)):
            for i, x in enumerate(v):
                out[i][key[: -len("_per_seed")]] = x
    return out
