"""The claim harness in one import: re-exports of the modules that implement it.

The harness is a few modules plus the pytest plugin; this module only re-exports their
public names, so that ``from claims.harness import seed_for, ClaimRecorder`` keeps working.

- :mod:`claims.records`  a record of one check, its verdict, ``claim.record(...).check()``
  (module docstring: verdicts, negative controls, known non-reproductions, record keys).
- :mod:`claims.collect`  records gathered from pytest's test reports, outcome filled in.
- :mod:`claims.report`   counts per claim, the terminal table, ``claims.md``, ``claims.json``.
- :mod:`claims.stats`    intervals (Student-t over seeds, Monte Carlo +- 1.96 SE), verdicts
  of intervals, what would decide an inconclusive check.
- :mod:`claims.seeds`    ``seed_for`` / ``rng_for`` from names, ``claim_settings`` for hypothesis.
- :mod:`claims.runopts`  ``--claims-random`` / ``--retrain`` of the current run.
- :mod:`claims.plugin`   the pytest plugin (``--profile``, ``--claims-report``, the ``claim``
  and ``profile`` fixtures), loaded by the root conftest.py.
- :mod:`claims.compare`  ``python -m claims.compare BEFORE.json AFTER.json``.

>>> seed_for("ar1-optimum", "a", 0) == seed_for("ar1-optimum", "a", 0)
True
"""
from __future__ import annotations

from claims.collect import RecordCollector, sort_records
from claims.records import (
    COMPARATORS,
    EXPECTS,
    KINDS,
    RECORD_KEY,
    TOLERANCE_SOURCES,
    VERDICTS,
    ClaimRecorder,
    Record,
    compare,
    format_criterion,
    format_interval,
    format_value,
    make_record,
    records_from_user_properties,
    to_builtin,
)
from claims.report import (
    render_markdown,
    render_terminal,
    report_payload,
    summarize,
    summary_lines,
    write_reports,
)
from claims.seeds import claim_settings, rng_for, seed_for
from claims.stats import mc_fields, mc_interval, seed_fields, t_interval

__all__ = [
    "RECORD_KEY", "COMPARATORS", "VERDICTS", "EXPECTS", "KINDS", "TOLERANCE_SOURCES",
    "Record", "ClaimRecorder", "format_interval", "t_interval", "mc_interval",
    "seed_fields", "mc_fields",
    "make_record", "compare", "to_builtin", "records_from_user_properties",
    "RecordCollector", "sort_records", "summarize", "summary_lines", "format_value",
    "format_criterion", "render_terminal", "render_markdown", "report_payload",
    "write_reports", "seed_for", "rng_for", "claim_settings",
]
