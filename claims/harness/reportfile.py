"""A claims report as one typed object: :class:`Report`, its records parsed once into ClaimRecord s.

``claims.json`` (written by claims/reports/report.py) and the published runs
(docs/results/quick.json, paper.json) hold one object: the run-level fields of
:data:`REPORT_FIELDS` and the list of serialised records.  :func:`load_report` reads such a
file into a :class:`Report` -- every record through
:meth:`~claims.harness.records.ClaimRecord.from_dict`, which fails naming a missing or
renamed field -- and :meth:`Report.to_dict` writes it back, field for field, so that
``report_from_dict(d).to_dict() == d`` for a report of the current schema.  Only schema
:data:`SCHEMA` is read, and 4 and 5, whose records lack the later fields (``basins``,
``per_run``, ``clipped``: None); any other schema is one ValueError naming the file.

>>> rep = report_from_dict({"schema": SCHEMA, "records": []}, "x.json")
>>> rep.records, rep.to_dict()["schema"]
((), 6)
>>> report_from_dict({"schema": 3, "records": []}, "old.json")
Traceback (most recent call last):
ValueError: old.json: a claims report of schema 3; only schemas 4, 5 and 6 are read (schema 3 was retired with claims/legacy.py)
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any, Mapping

from claims.harness.records import ClaimRecord

__all__ = ["SCHEMA", "REPORT_FIELDS", "Report", "report_from_dict", "load_report"]

#: the version of ``claims.json`` written today (5: records with ``check_id``, ``coords``,
#: per-run entries, ``basins`` and the verdict ``mixed``; 6: records judged by run, with the
#: ``per_run`` field, and ``clipped`` intervals; docs/results/README.md).
SCHEMA = 6
#: schemas read as :data:`SCHEMA`, their records without the fields added since
_OLDER = {4: ("basins", "per_run", "clipped"), 5: ("per_run", "clipped")}
#: the run-level fields of a report, in the order they are written (``rejudged`` only when set)
REPORT_FIELDS = ("schema", "generated", "profile", "run", "environment", "provenance", "summary", "records",
                 "rejudged")


@dataclass(frozen=True)
class Report:
    """One claims report: its records and the run-level fields the reports read.

    ``profile``, ``run``, ``environment``, ``provenance``: what ran, with which options,
    where and from which commit; ``summary``: the counts per claim and their lines
    (claims/reports/summary.py); ``rejudged``: set by claims/reports/rejudge.py.
    """

    records: tuple[ClaimRecord, ...]
    schema: int = SCHEMA
    generated: str | None = None
    profile: Mapping | None = None
    run: Mapping | None = None
    environment: Mapping | None = None
    provenance: Mapping | None = None
    summary: Mapping | None = None
    rejudged: Mapping | None = None

    @property
    def profile_name(self) -> str | None:
        return (self.profile or {}).get("name")

    def claim_line(self, claim: str, default: str = "-") -> str:
        """The summary line of ``claim`` (``"banding: 12 checks, ..."``), ``default`` without one."""
        return ((self.summary or {}).get("claims", {}).get(claim) or {}).get("line", default)

    def to_dict(self) -> dict:
        """The object ``claims.json`` holds (:data:`REPORT_FIELDS`; ``rejudged`` only when set)."""
        out = {k: getattr(self, k) for k in REPORT_FIELDS if k != "records"}
        out["records"] = [r.to_dict() for r in self.records]
        out = {k: out[k] for k in REPORT_FIELDS}
        if self.rejudged is None:
            del out["rejudged"]
        return out


def report_from_dict(data: Any, name: str) -> Report:
    """The report ``data`` (a parsed ``claims.json``; ``name`` says where it came from in
    errors) as a :class:`Report`; one ValueError naming ``name`` and what is wrong."""
    if not isinstance(data, Mapping) or not isinstance(data.get("records"), list):
        raise ValueError(f"{name}: not a claims report (no list 'records' at the top level)")
    schema = data.get("schema")
    if schema != SCHEMA and schema not in _OLDER:
        why = " (schema 3 was retired with claims/legacy.py)" if schema == 3 else ""
        raise ValueError(f"{name}: a claims report of schema {schema!r}; only schemas "
                         f"{', '.join(map(str, sorted(_OLDER)))} and {SCHEMA} are read{why}")
    unknown = sorted(set(data) - set(REPORT_FIELDS))
    if unknown:
        raise ValueError(f"{name}: unknown report fields {unknown}")
    records = []
    for i, r in enumerate(data["records"]):
        if schema in _OLDER and isinstance(r, Mapping):
            r = {**r, **{k: r.get(k) for k in _OLDER[schema]}}
        try:
            records.append(ClaimRecord.from_dict(r))
        except ValueError as exc:
            raise ValueError(f"{name}: records[{i}]: {exc}") from None
    return Report(records=tuple(records), schema=SCHEMA, **{k: data.get(k) for k in REPORT_FIELDS
                                                            if k not in ("schema", "records")})


def load_report(path: str | os.PathLike) -> Report:
    """The report in the file ``path`` (:func:`report_from_dict`); ValueError naming the file
    when it cannot be read, is not JSON or not a claims report of a schema read today."""
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except OSError as exc:
        raise ValueError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: not JSON: {exc}") from None
    return report_from_dict(data, str(path))
