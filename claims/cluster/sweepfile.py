"""The sweep file (``OUT/sweep.json`` of ``ldsicl sweep``) as typed objects, written and read back.

A sweep (:class:`SweepResult`) is its grid (claims/cluster/grid.py), its profile, its
selection (:class:`Selection`: the claims and a pytest ``-k`` expression), when it was
gathered, and one :class:`SweepCell` per cell of the grid in the grid's order: the point, the
status (:data:`STATUSES`: ``ok`` = pytest exit 0, ``checks-failed`` = exit 1, ``failed`` =
anything else or no usable report; claims/cluster/sweep.py), pytest's exit status, wall and
CPU seconds, the worker's processor and host, whether it was reused from an earlier sweep,
why it failed, its counts (:class:`CellSummary`) and what the sweep keeps of each record
(:class:`SweepRecord`).  :meth:`SweepResult.to_dict` is the file's object (strict JSON through
theory.jsonvalues.dumps; non-finite numbers as ``"NaN"``...); :func:`load_sweep` reads it
back, every field required, so that ``SweepResult.from_dict(r.to_dict()) == r``; a file of
another schema, a missing or unknown field is one ValueError naming the file.  The fields,
one by one: docs/results/README.md, "Sweep files".

>>> from claims.cluster.grid import Grid
>>> sel = Selection.parse("ar1-optimum", "kappa_exact")
>>> g = Grid.parse("T=10,30")
>>> cell = SweepCell(tag="T=10", params=g.cells()[0], status="failed", exit_status=4, seconds=1.0,
...                  cpu_seconds=0.9, cpu="cpu x 2", host="h", reused=False, error="usage", summary=None,
...                  records=())
>>> r = SweepResult(grid=g, profile="quick", selection=sel, cells=(cell,), generated="2026-01-01T00:00:00+00:00")
>>> SweepResult.from_dict(r.to_dict()) == r, r.to_dict()["selection"]["test_files"]
(True, ['claims/test_ar1_optimum.py', 'claims/test_ar1_kappa.py'])
>>> SweepResult.from_dict({**r.to_dict(), "schema": 9}, "s.json")
Traceback (most recent call last):
ValueError: s.json: a sweep file of schema 9; only 1 is read
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from claims.cluster.grid import Grid
from claims.harness.params import Point
from claims.harness.records import ClaimRecord

__all__ = ["SCHEMA", "SWEEP_FILE", "CELL_REPORT", "CELL_META", "STATUSES", "Selection", "SweepRecord",
           "CellSummary", "SweepCell", "SweepResult", "load_sweep"]

#: the version of the sweep file (docs/results/README.md, "Sweep files")
SCHEMA = 1
#: the sweep file, the cell's report and the cell's own record, under OUT and OUT/cells/<tag>
SWEEP_FILE, CELL_REPORT, CELL_META = "sweep.json", "claims.json", "cell.json"
#: the status of a cell (claims/cluster/sweep.py, "Status")
STATUSES = ("ok", "checks-failed", "failed")


def _fields(data, names, where: str) -> dict:
    """``data``'s fields ``names`` (an object with exactly these keys), or ValueError naming ``where``."""
    if not isinstance(data, Mapping):
        raise ValueError(f"{where}: must be an object, got {type(data).__name__}")
    if set(data) != set(names):
        raise ValueError(f"{where}: fields {sorted(data)} are not {sorted(names)}")
    return {k: data[k] for k in names}


@dataclass(frozen=True)
class Selection:
    """The claims a sweep runs (``--claims``, names of :data:`claims.specs.CLAIMS`), the
    pytest ``-k`` expression that picks some of their checks (``--select``; None: all) and
    whether the checks that read trained runs are skipped (``--untrained``: the cells run
    ``--claims-untrained``, claims/harness/runopts.py)."""

    claims: tuple[str, ...]
    select: str | None = None
    untrained: bool = False

    def __post_init__(self):
        from claims.specs import get_spec
        if not isinstance(self.claims, tuple) or not self.claims:
            raise ValueError("--claims: no claim named; give one or more claim names, e.g. 'banding,depth'")
        for name in self.claims:
            try:
                get_spec(name)
            except ValueError as exc:
                raise ValueError(f"--claims {name}: {exc}") from None
            if self.claims.count(name) > 1:
                raise ValueError(f"--claims {name}: named twice")
        if self.select is not None:
            if not isinstance(self.select, str) or not self.select.strip():
                raise ValueError(f"--select: must be a non-empty pytest -k expression, got {self.select!r}")
            try:
                from _pytest.mark.expression import Expression
            except ImportError:                        # pragma: no cover - pytest moved its parser: each cell says it
                return
            try:
                Expression.compile(self.select)
            except Exception as exc:                   # ParseError (pytest < 9) or SyntaxError (pytest 9)
                raise ValueError(f"--select: not a pytest -k expression: {exc}") from None

    @classmethod
    def parse(cls, claims: str, select: str | None = None, untrained: bool = False) -> "Selection":
        """``"banding,depth"`` (commas or spaces), the ``-k`` expression, ``--untrained``."""
        return cls(tuple(filter(None, str(claims).replace(",", " ").split())), select, bool(untrained))

    def test_files(self) -> tuple[str, ...]:
        """The claims' test files, relative to the repository root, each once."""
        from claims.specs import get_spec
        return tuple(dict.fromkeys(f"claims/{f}" for c in self.claims for f in get_spec(c).test_files()))

    def describe(self) -> str:
        return (",".join(self.claims) + (f" -k {self.select!r}" if self.select else "")
                + (" (untrained)" if self.untrained else ""))

    def as_dict(self) -> dict:
        return {"claims": list(self.claims), "select": self.select, "untrained": self.untrained}

    @classmethod
    def from_dict(cls, data) -> "Selection":
        d = _fields(data, ("claims", "select", "untrained"), "selection")
        if not isinstance(d["claims"], list) or not isinstance(d["untrained"], bool):
            raise ValueError("selection: claims must be a list and untrained a bool")
        return cls(tuple(d["claims"]), d["select"], d["untrained"])


@dataclass(frozen=True)
class SweepRecord:
    """What the sweep file keeps of one record of a cell (claims/harness/records.py)."""

    check_id: str
    claim: str
    kind: str
    verdict: str
    expect: str | None
    measured: Any
    interval: list | None
    tolerance: Any
    comparator: str | None

    @classmethod
    def of(cls, r: ClaimRecord) -> "SweepRecord":
        return cls(r.check_id, r.claim, r.kind, r.verdict, r.expect, r.measured, r.interval, r.tolerance,
                   r.comparator)

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}

    @classmethod
    def from_dict(cls, data) -> "SweepRecord":
        return cls(**_fields(data, tuple(cls.__dataclass_fields__), f"record {dict(data).get('check_id')!r}"
                                 if isinstance(data, Mapping) else "record"))


@dataclass(frozen=True)
class CellSummary:
    """The counts of a cell's records (claims.reports.summary.summarize's total) and its line;
    ``held`` = hold + controls (as expected), ``failed`` = unexpected + not_reproduced."""

    checks: int
    hold: int
    inconclusive: int
    mixed: int
    controls: int
    not_reproduced: int
    unexpected: int
    tests_not_ok: int
    reported: int
    line: str

    @classmethod
    def of(cls, total: Mapping, line: str) -> "CellSummary":
        return cls(**{k: int(total[k]) for k in cls.__dataclass_fields__ if k != "line"}, line=line)

    held = property(lambda self: self.hold + self.controls)
    failed = property(lambda self: self.unexpected + self.not_reproduced)

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}

    @classmethod
    def from_dict(cls, data) -> "CellSummary":
        return cls(**_fields(data, tuple(cls.__dataclass_fields__), "summary"))


@dataclass(frozen=True)
class SweepCell:
    """One cell of a sweep: its point, status (:data:`STATUSES`), pytest's exit status, wall
    and CPU seconds, the worker's processor and host, whether it was reused from an earlier
    sweep, why it failed, its counts and its records (empty for a failed cell)."""

    tag: str
    params: Point
    status: str
    exit_status: int | None
    seconds: float | None
    cpu_seconds: float | None
    cpu: str | None
    host: str | None
    reused: bool
    error: str | None
    summary: CellSummary | None
    records: tuple[SweepRecord, ...]

    def __post_init__(self):
        if self.status not in STATUSES:
            raise ValueError(f"cell {self.tag!r}: status must be one of {STATUSES}, got {self.status!r}")

    def to_dict(self) -> dict:
        out = {k: getattr(self, k) for k in self.__dataclass_fields__}
        out |= {"params": self.params.as_dict(), "summary": self.summary and self.summary.to_dict(),
                "records": [r.to_dict() for r in self.records]}
        return out

    @classmethod
    def from_dict(cls, data) -> "SweepCell":
        d = _fields(data, tuple(cls.__dataclass_fields__), f"cell {dict(data).get('tag')!r}"
                    if isinstance(data, Mapping) else "cell")
        try:
            d["params"] = Point(**d["params"])
        except TypeError as exc:
            raise ValueError(f"cell {d['tag']!r}: params: {exc}") from None
        d["summary"] = None if d["summary"] is None else CellSummary.from_dict(d["summary"])
        d["records"] = tuple(SweepRecord.from_dict(r) for r in d["records"])
        return cls(**d)


@dataclass(frozen=True)
class SweepResult:
    """A sweep (the sweep file, docs/results/README.md "Sweep files"): its grid, profile,
    selection, when it was gathered, and its cells in the grid's order."""

    grid: Grid
    profile: str
    selection: Selection
    cells: tuple[SweepCell, ...]
    generated: str | None = None
    schema: int = SCHEMA

    def to_dict(self) -> dict:
        return {"schema": self.schema, "generated": self.generated, "grid": self.grid.as_dict(),
                "profile": self.profile, "selection": {**self.selection.as_dict(),
                                                       "test_files": list(self.selection.test_files())},
                "cells": [c.to_dict() for c in self.cells]}

    @classmethod
    def from_dict(cls, data, name: str = "sweep file") -> "SweepResult":
        try:
            d = _fields(data, ("schema", "generated", "grid", "profile", "selection", "cells"), name)
            if d["schema"] != SCHEMA:
                raise ValueError(f"{name}: a sweep file of schema {d['schema']!r}; only {SCHEMA} is read")
            sel = dict(d["selection"]) if isinstance(d["selection"], Mapping) else d["selection"]
            if isinstance(sel, dict):
                sel.pop("test_files", None)
            return cls(grid=Grid.from_dict(d["grid"]), profile=d["profile"], selection=Selection.from_dict(sel),
                       cells=tuple(SweepCell.from_dict(c) for c in d["cells"]), generated=d["generated"])
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{name}: {exc}" if not str(exc).startswith(name) else str(exc)) from None


def load_sweep(path) -> SweepResult:
    """The sweep file ``path``; one ValueError naming it when it cannot be read or is no sweep file."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ValueError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: not JSON: {exc}") from None
    return SweepResult.from_dict(data, str(path))
