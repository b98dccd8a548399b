r"""The claim harness: one way for a check to record what it measured, and the reports.

A *claim* is a statement of the paper (id such as ``"ar1-optimum"``); a *check* is one
measurement against one tolerance.  A check records a **record** -- a flat dict of plain
built-in types -- and then asserts that the verdict is the expected one::

    def test_kappa_exact_vs_mc(claim, profile):          # fixtures from claims/conftest.py
        z = ...                                          # measured on profile.mc_systems draws
        rec = claim.record(
            claim="ar1-optimum", paper_ref="Thm 4.1, eq. 15", setting="a",
            metric="|kappa_exact - kappa_mc| / stderr", measured=z,
            tolerance=4.0, comparator="<=",
            details={"seed": seed_for("ar1-optimum", "a"), "m": profile.mc_systems},
            expect="holds",                              # "fails" for a negative control
        )
        rec.check()          # AssertionError with a readable message unless verdict == expect

Verdict
    ``"holds"`` if ``measured <comparator> tolerance`` is true, else ``"fails"``.
    Comparators: ``"<="``, ``"<"``, ``">="``, ``">"``, ``"=="`` (exact equality; the
    tolerance is then the expected value and may also be a bool or a str) and ``"abs<="``
    (``|measured| <= tolerance``).  A NaN measurement is rejected: its verdict is
    ``"fails"`` whatever the comparator, and :meth:`Record.check` raises for it even in a
    negative control (a NaN shows that the computation broke, not that the bad case was
    told apart).
Negative controls
    ``expect="fails"``: the check is run where the claim must *not* hold (e.g. the
    asymmetric setting); :meth:`Record.check` passes when the verdict is ``"fails"``.
Known non-reproductions
    mark the test ``@pytest.mark.xfail(strict=True, reason="...")``; the record is kept
    (verdict ``"fails"``, outcome ``"xfailed"``) with the reason in ``xfail_reason``.

Record keys (all values plain built-ins, so records survive pytest-xdist)::

    claim, paper_ref, setting, metric, measured, tolerance, comparator, verdict, expect,
    details, note, test (node id), order (index within the test), profile (name),
    outcome (passed/failed/error/xfailed/xpassed/skipped, filled in from the test
    report), xfail_reason

Records travel as ``("claim_record", dict)`` pairs in ``item.user_properties``.  numpy /
torch scalars and arrays are converted to floats / lists (:func:`to_builtin`).

Reports (written by the plugin in claims/conftest.py, see :func:`write_reports`):
``reports/claims.json`` and ``reports/claims.md``.  In the JSON file non-finite floats
are written as the strings ``"NaN"``, ``"Infinity"``, ``"-Infinity"`` so that the file is
strict JSON.

Seeds derive from names, never from worker ids or test order::

    >>> seed_for("ar1-optimum", "a", 0) == seed_for("ar1-optimum", "a", 0)
    True
    >>> 0 <= seed_for("gd-equivalence") < 2**63
    True
    >>> rng_for("ar1-optimum", "a").standard_normal(2).shape
    (2,)
    >>> make_record(claim="demo", paper_ref="eq. 1", metric="err", measured=0.5,
    ...             tolerance=1, comparator="<=")["verdict"]
    'holds'
"""
from __future__ import annotations

import datetime as _dt
import hashlib
import json
import math
import numbers
import operator
import os
import re
from pathlib import Path
from typing import Any, Iterable, Mapping

import numpy as np

from models.files import atomic_write_text

__all__ = [
    "RECORD_KEY", "COMPARATORS", "OUTCOMES", "Record", "ClaimRecorder",
    "make_record", "compare", "to_builtin", "records_from_user_properties",
    "RecordCollector", "summarize", "summary_lines", "format_value", "format_criterion",
    "render_terminal", "render_markdown", "report_payload", "write_reports",
    "seed_for", "rng_for", "claim_settings",
]

#: name of the ``item.user_properties`` entries that carry records.
RECORD_KEY = "claim_record"

COMPARATORS = {
    "<=": operator.le,
    "<": operator.lt,
    ">=": operator.ge,
    ">": operator.gt,
    "==": operator.eq,
    "abs<=": lambda m, t: abs(m) <= t,
}
VERDICTS = ("holds", "fails")
#: pytest outcomes a record can carry ("error": the setup or teardown of the test failed).
OUTCOMES = ("passed", "failed", "error", "xfailed", "xpassed", "skipped")

_CLAIM_ID = re.compile(r"^[a-z0-9][a-z0-9._-]*$")


# --------------------------------------------------------------------------- conversion

def to_builtin(obj: Any, *, _path: str = "value") -> Any:
    """``obj`` as plain built-ins (None/bool/int/float/str/list/dict with str keys).

    numpy scalars -> int/float/bool, numpy arrays and torch tensors -> nested lists,
    tuples -> lists, other ``numbers.Real`` (Fraction, mpmath, sympy numbers) -> float.
    Anything else (complex, sets, arbitrary objects) raises ``TypeError``.

    >>> to_builtin({"x": np.float64(1.5), "v": np.arange(2), "t": (1, "a")})
    {'x': 1.5, 'v': [0, 1], 't': [1, 'a']}
    """
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, int):
        return int(obj)
    if isinstance(obj, float):
        return float(obj)
    if isinstance(obj, np.generic):
        return to_builtin(obj.item(), _path=_path)
    if isinstance(obj, np.ndarray):
        return to_builtin(obj.tolist(), _path=_path)
    if hasattr(obj, "detach") and hasattr(obj, "tolist"):  # torch.Tensor, without importing torch
        return to_builtin(obj.detach().cpu().tolist(), _path=_path)
    if isinstance(obj, Mapping):
        out = {}
        for k, v in obj.items():
            key = to_builtin(k, _path=f"{_path} key")
            if isinstance(key, (bool, int, float)):
                key = str(key)
            if not isinstance(key, str):
                raise TypeError(f"{_path}: dict keys must be str or numbers, got {k!r}")
            out[key] = to_builtin(v, _path=f"{_path}[{key!r}]")
        return out
    if isinstance(obj, (list, tuple)):
        return [to_builtin(v, _path=f"{_path}[{i}]") for i, v in enumerate(obj)]
    if isinstance(obj, numbers.Integral):
        return int(obj)
    if isinstance(obj, numbers.Real):
        return float(obj)
    if not isinstance(obj, complex) and hasattr(obj, "__float__"):
        try:
            return float(obj)
        except (TypeError, ValueError):
            pass
    raise TypeError(f"{_path}: cannot record {type(obj).__name__} {obj!r} as a plain "
                    "built-in (use numbers, str, lists, dicts, numpy or torch values)")


def _scalar(value: Any, name: str, comparator: str):
    v = to_builtin(value, _path=name)
    if comparator == "==":
        ok = isinstance(v, (bool, int, float, str))
    else:
        ok = isinstance(v, (int, float)) and not isinstance(v, bool)
    if not ok:
        kinds = "a number, bool or str" if comparator == "==" else "a real number"
        raise TypeError(f"{name} must be {kinds} for comparator {comparator!r}, "
                        f"got {type(value).__name__} {value!r}")
    return v


def _is_nan(v) -> bool:
    return isinstance(v, float) and math.isnan(v)


# --------------------------------------------------------------------------- records

def compare(measured, comparator: str, tolerance) -> bool:
    """``measured <comparator> tolerance``; ``False`` for a NaN measurement.

    >>> compare(3, "<=", 4), compare(-5e-12, "abs<=", 1e-10), compare(float("nan"), ">", 0)
    (True, True, False)
    """
    if comparator not in COMPARATORS:
        raise ValueError(f"comparator must be one of {sorted(COMPARATORS)}, got {comparator!r}")
    if _is_nan(measured):
        return False
    if comparator == "==" and type(measured) is not type(tolerance) and (
            isinstance(measured, (bool, str)) or isinstance(tolerance, (bool, str))):
        return False  # no True == 1 or "1" == 1 surprises
    return bool(COMPARATORS[comparator](measured, tolerance))


def make_record(*, claim: str, paper_ref: str, metric: str, measured, tolerance,
                comparator: str, setting=None, details: Mapping | None = None,
                expect: str = "holds", note: str | None = None) -> dict:
    """Validate the inputs and return a record dict with its verdict.

    ``note`` is a short free-text remark shown in the reports (e.g. which optimal family a
    trained run reached).

    ``test``, ``order``, ``profile``, ``outcome`` and ``xfail_reason`` are ``None`` here;
    :class:`ClaimRecorder` and the plugin fill them in.
    """
    if not isinstance(claim, str) or not _CLAIM_ID.match(claim):
        raise ValueError(f"claim must be a lower-case id such as 'ar1-optimum' "
                         f"(letters, digits, '.', '_', '-'), got {claim!r}")
    for name, val in (("paper_ref", paper_ref), ("metric", metric)):
        if not isinstance(val, str) or not val.strip():
            raise ValueError(f"{name} must be a non-empty str, got {val!r}")
    if comparator not in COMPARATORS:
        raise ValueError(f"comparator must be one of {sorted(COMPARATORS)}, got {comparator!r}")
    if expect not in VERDICTS:
        raise ValueError(f"expect must be 'holds' or 'fails' (negative control), got {expect!r}")
    m = _scalar(measured, "measured", comparator)
    t = _scalar(tolerance, "tolerance", comparator)
    if _is_nan(t):
        raise ValueError("tolerance is NaN")
    if comparator == "abs<=" and t < 0:
        raise ValueError(f"tolerance of 'abs<=' must be >= 0, got {t!r}")
    if setting is not None:
        setting = str(to_builtin(setting, _path="setting"))
    details = {} if details is None else to_builtin(details, _path="details")
    if not isinstance(details, dict):
        raise TypeError(f"details must be a dict, got {type(details).__name__}")
    if note is not None and not isinstance(note, str):
        raise ValueError(f"note must be a str or None, got {note!r}")
    if _is_nan(m):
        nan_note = "measured is NaN: rejected (verdict 'fails'; check() always raises)"
        note = f"{note}; {nan_note}" if note else nan_note
    return {
        "claim": claim, "paper_ref": paper_ref.strip(), "setting": setting,
        "metric": metric.strip(), "measured": m, "tolerance": t, "comparator": comparator,
        "verdict": "holds" if compare(m, comparator, t) else "fails", "expect": expect,
        "details": details, "note": note, "test": None, "order": None, "profile": None,
        "outcome": None, "xfail_reason": None,
    }


def format_value(v) -> str:
    """Compact display: ints as ints, floats with 4 significant digits (scientific when
    tiny or huge), ``None`` as ``-``.

    >>> [format_value(x) for x in (3, 0.123456, 1.5e-9, 123456.0, None, True)]
    ['3', '0.1235', '1.5e-09', '1.235e+05', '-', 'True']
    """
    if v is None:
        return "-"
    if isinstance(v, bool) or isinstance(v, str):
        return str(v)
    if isinstance(v, int):
        return str(v) if abs(v) < 10**7 else f"{v:.4g}"
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        return f"{v:.4g}"
    return str(v)


def format_criterion(comparator: str, tolerance) -> str:
    """``"<= 4"``, ``"abs<= 1e-10"``, ``"== 3"``."""
    return f"{comparator} {format_value(tolerance)}"


def _describe(r: Mapping) -> str:
    where = f" setting {r['setting']}" if r.get("setting") is not None else ""
    return (f"claim {r['claim']} [{r['paper_ref']}]{where}: {r['metric']} = "
            f"{format_value(r['measured'])}")


class Record:
    """A recorded check (wraps the record dict, which is already stored on the test).

    ``check()`` raises ``AssertionError`` unless the verdict is the expected one.
    """

    def __init__(self, data: dict):
        self.data = data
        self.checked = False

    verdict = property(lambda self: self.data["verdict"])
    expect = property(lambda self: self.data["expect"])
    measured = property(lambda self: self.data["measured"])
    holds = property(lambda self: self.data["verdict"] == "holds")

    def check(self) -> "Record":
        __tracebackhide__ = True
        self.checked = True
        r = self.data
        crit = format_criterion(r["comparator"], r["tolerance"])
        if _is_nan(r["measured"]):
            raise AssertionError(f"{_describe(r)}: measured is NaN, the check could not be "
                                 f"evaluated (criterion {crit}, expected {r['expect']})")
        if r["verdict"] == r["expect"]:
            return self
        if r["expect"] == "holds":
            raise AssertionError(f"{_describe(r)} violates {crit} (verdict fails, expected "
                                 f"holds); details: {r['details']}")
        raise AssertionError(f"negative control unexpectedly holds: {_describe(r)} satisfies "
                             f"{crit} (expected fails), so the check does not tell the bad "
                             f"case apart; details: {r['details']}")

    def __repr__(self) -> str:
        r = self.data
        return (f"Record({r['claim']!r}, {r['metric']!r}, measured={format_value(r['measured'])}, "
                f"{format_criterion(r['comparator'], r['tolerance'])}, verdict={r['verdict']!r}, "
                f"expect={r['expect']!r})")


class ClaimRecorder:
    """Records checks on one test item (what the ``claim`` fixture returns).

    ``item`` is a ``pytest.Item`` (or any object with ``nodeid`` and ``user_properties``);
    each :meth:`record` appends ``("claim_record", dict)`` to ``item.user_properties``.
    """

    def __init__(self, item, profile_name: str | None = None):
        self.item = item
        self.profile_name = profile_name
        self.records: list[Record] = []

    def record(self, *, claim: str, paper_ref: str, metric: str, measured, tolerance,
               comparator: str, setting=None, details: Mapping | None = None,
               expect: str = "holds", note: str | None = None) -> Record:
        """Record one check and return it; call ``.check()`` on the result."""
        data = make_record(claim=claim, paper_ref=paper_ref, metric=metric, measured=measured,
                           tolerance=tolerance, comparator=comparator, setting=setting,
                           details=details, expect=expect, note=note)
        data["test"] = self.item.nodeid
        data["order"] = len(self.records)
        data["profile"] = self.profile_name
        self.item.user_properties.append((RECORD_KEY, data))
        rec = Record(data)
        self.records.append(rec)
        return rec

    def unchecked(self) -> list[Record]:
        return [r for r in self.records if not r.checked]

    def check_all(self) -> None:
        """Check every record not checked yet; one AssertionError naming all that failed.

        Use it when a test records several checks: every record is kept and judged even
        when an earlier one fails (``check()`` in sequence would stop at the first).
        """
        __tracebackhide__ = True
        errors = []
        for rec in self.unchecked():
            try:
                rec.check()
            except AssertionError as exc:
                errors.append(str(exc))
        if errors:
            raise AssertionError(f"{len(errors)} check(s) failed:\n" + "\n".join(errors))


def records_from_user_properties(props: Iterable) -> list[dict]:
    """The record dicts among ``(name, value)`` user properties (tuples or lists)."""
    out = []
    for p in props or ():
        if isinstance(p, (tuple, list)) and len(p) == 2 and p[0] == RECORD_KEY \
                and isinstance(p[1], dict):
            out.append(p[1])
    return out


# --------------------------------------------------------------------------- collection

class RecordCollector:
    """Gathers records from test reports (controller side) and fills in ``outcome``.

    Feed it every ``TestReport`` (``pytest_runtest_logreport``); the setup, call and
    teardown reports of one test are merged: an error in setup/teardown gives
    ``"error"``, a strict XPASS gives ``"failed"`` with a note.
    """

    def __init__(self):
        self._tests: dict[str, dict] = {}

    def add(self, report) -> None:
        props = records_from_user_properties(getattr(report, "user_properties", ()))
        st = self._tests.get(report.nodeid)
        if st is None:
            if not props:
                return
            st = self._tests[report.nodeid] = {"records": [], "reports": {}}
        if props:
            st["records"] = [dict(p) for p in props]  # later phases carry all earlier records
        st["reports"][report.when] = report

    @staticmethod
    def _outcome(reports: Mapping) -> tuple[str, str | None, str | None]:
        """(outcome, xfail_reason, note) from the phase reports of one test."""
        setup, call, teardown = (reports.get(w) for w in ("setup", "call", "teardown"))
        reason = note = None
        if setup is not None and setup.failed:
            return "error", None, "setup failed"
        if call is None:
            outcome = "skipped" if setup is not None and setup.skipped else "unknown"
        else:
            wasxfail = getattr(call, "wasxfail", None)
            if call.skipped:
                outcome = "xfailed" if wasxfail is not None else "skipped"
                reason = wasxfail or None
            elif call.passed:
                outcome = "xpassed" if wasxfail is not None else "passed"
                reason = wasxfail or None
            else:
                outcome = "failed"
                longrepr = call.longrepr if isinstance(call.longrepr, str) else ""
                if longrepr.startswith("[XPASS(strict)]"):
                    reason = longrepr[len("[XPASS(strict)]"):].strip() or None
                    note = "XPASS(strict): passed although marked xfail; remove the xfail"
        if teardown is not None and teardown.failed and outcome in ("passed", "xpassed",
                                                                     "skipped", "unknown"):
            outcome, note = "error", "teardown failed"
        return outcome, reason, note

    def records(self) -> list[dict]:
        """All records, outcome filled in, sorted by (claim, test, order)."""
        out = []
        for st in self._tests.values():
            outcome, reason, note = self._outcome(st["reports"])
            for r in st["records"]:
                r = dict(r)
                r["outcome"] = outcome
                r["xfail_reason"] = reason
                if note:
                    r["note"] = f"{r['note']}; {note}" if r.get("note") else note
                out.append(r)
        return sort_records(out)


def sort_records(records: Iterable[Mapping]) -> list[dict]:
    return sorted((dict(r) for r in records),
                  key=lambda r: (r["claim"], r.get("test") or "", r.get("order") or 0))


# --------------------------------------------------------------------------- summaries

_BAD_OUTCOMES = ("failed", "error", "xpassed", "unknown")


def summarize(records: Iterable[Mapping]) -> dict:
    """Counts per claim and overall.

    Per claim: ``checks``; ``hold`` (expected to hold and holds); ``controls`` (negative
    controls that fail as expected); ``not_reproduced`` (verdict differs from the
    expectation, test marked xfail); ``unexpected`` (verdict differs, not marked xfail);
    ``tests_not_ok`` (records whose test failed, errored or xpassed); ``skipped``;
    ``ok`` (no unexpected verdict and no failing test).
    """
    per: dict[str, dict] = {}
    for r in records:
        c = per.setdefault(r["claim"], {"checks": 0, "hold": 0, "controls": 0,
                                        "not_reproduced": 0, "unexpected": 0,
                                        "tests_not_ok": 0, "skipped": 0})
        c["checks"] += 1
        if r["verdict"] == r["expect"]:
            c["hold" if r["expect"] == "holds" else "controls"] += 1
        elif r.get("outcome") == "xfailed":
            c["not_reproduced"] += 1
        else:
            c["unexpected"] += 1
        if r.get("outcome") in _BAD_OUTCOMES:
            c["tests_not_ok"] += 1
        elif r.get("outcome") == "skipped":
            c["skipped"] += 1
    for c in per.values():
        c["ok"] = c["unexpected"] == 0 and c["tests_not_ok"] == 0
    total = {k: sum(c[k] for c in per.values())
             for k in ("checks", "hold", "controls", "not_reproduced", "unexpected",
                       "tests_not_ok", "skipped")}
    total["claims"] = len(per)
    total["ok"] = all(c["ok"] for c in per.values())
    return {"claims": dict(sorted(per.items())), "total": total}


def _plural(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"


def _summary_text(c: Mapping) -> str:
    parts = [_plural(c["checks"], "check")]
    if c["hold"]:
        parts.append(f"{c['hold']} hold" if c["hold"] != 1 else "1 holds")
    if c["controls"]:
        parts.append(_plural(c["controls"], "negative control") + " fail as expected"
                     if c["controls"] != 1 else "1 negative control fails as expected")
    if c["not_reproduced"]:
        parts.append(f"{c['not_reproduced']} not reproduced (xfail)")
    if c["unexpected"]:
        parts.append(f"{c['unexpected']} UNEXPECTED verdict")
    if c["tests_not_ok"]:
        parts.append(f"{c['tests_not_ok']} in FAILING tests")
    if c["skipped"]:
        parts.append(f"{c['skipped']} skipped")
    return ", ".join(parts)


def summary_lines(summary: Mapping) -> dict[str, str]:
    """One line per claim, e.g. ``"ar1-optimum: 9 checks, 7 hold, 2 negative controls
    fail as expected"``, plus ``"total"``."""
    lines = {name: f"{name}: {_summary_text(c)}" for name, c in summary["claims"].items()}
    t = summary["total"]
    lines["total"] = (f"{_plural(t['claims'], 'claim')}, {_summary_text(t)} -- "
                      + ("all as expected" if t["ok"] else "NEEDS ATTENTION"))
    return lines


# --------------------------------------------------------------------------- rendering

_COLUMNS = ("claim", "paper ref", "setting", "metric", "measured", "criterion", "verdict",
            "expected", "outcome")
_MAX_WIDTH = {"paper ref": 34, "metric": 72}


def _row(r: Mapping) -> list[str]:
    return [r["claim"], r["paper_ref"], format_value(r.get("setting")), r["metric"],
            format_value(r["measured"]), format_criterion(r["comparator"], r["tolerance"]),
            r["verdict"], r["expect"], r.get("outcome") or "-"]


def _clip(s: str, width: int) -> str:
    return s if len(s) <= width else s[: width - 3] + "..."


def render_terminal(records: list[Mapping], summary: Mapping | None = None) -> list[str]:
    """Plain-text table lines, grouped by claim, a summary line after each group."""
    summary = summary or summarize(records)
    lines_by_claim = summary_lines(summary)
    rows = [[_clip(cell, _MAX_WIDTH.get(col, 10**6)) for col, cell in zip(_COLUMNS, _row(r))]
            for r in records]
    widths = [max([len(col)] + [len(row[i]) for row in rows]) for i, col in enumerate(_COLUMNS)]

    def fmt(cells):
        return "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()

    out = [fmt(_COLUMNS), fmt(["-" * w for w in widths])]
    i = 0
    for name in summary["claims"]:
        notes = []
        while i < len(records) and records[i]["claim"] == name:
            out.append(fmt(rows[i]))
            r = records[i]
            test = (r.get("test") or "-").rsplit("::", 1)[-1]
            if r.get("xfail_reason"):
                notes.append(f"     xfail {test}: {r['xfail_reason']}")
            if r.get("note"):
                notes.append(f"     note  {test}: {r['note']}")
            i += 1
        out.append(f"  -> {lines_by_claim[name]}")
        out += notes
        out.append("")
    out.append(lines_by_claim["total"])
    return out


def _md(s: str) -> str:
    return str(s).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def render_markdown(records: list[Mapping], profile: Mapping | None = None,
                    generated: str | None = None, summary: Mapping | None = None) -> str:
    """A Markdown report: one section (summary line + table) per claim."""
    summary = summary or summarize(records)
    lines_by_claim = summary_lines(summary)
    out = ["# Claims report", ""]
    if profile:
        out.append(f"- profile: `{profile.get('name')}` -- {profile.get('description', '')}")
    if generated:
        out.append(f"- generated: {generated}")
    out += [f"- summary: {lines_by_claim['total']}", ""]
    cols = ("paper ref", "setting", "metric", "measured", "criterion", "verdict", "expected",
            "outcome", "test")
    for name in summary["claims"]:
        recs = [r for r in records if r["claim"] == name]
        out += [f"## {name}", "", lines_by_claim[name], "",
                "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
        notes = []
        for r in recs:
            cells = _row(r)[1:] + [f"`{r.get('test') or '-'}`"]
            out.append("| " + " | ".join(_md(c) for c in cells) + " |")
            if r.get("xfail_reason"):
                notes.append(f"- `{r.get('test')}` ({_md(r['metric'])}): xfail -- "
                             f"{_md(r['xfail_reason'])}")
            if r.get("note"):
                notes.append(f"- `{r.get('test')}` ({_md(r['metric'])}): {_md(r['note'])}")
        out.append("")
        if notes:
            out += ["Notes:", ""] + notes + [""]
    return "\n".join(out).rstrip("\n") + "\n"


def _json_safe(obj):
    if isinstance(obj, float) and not math.isfinite(obj):
        return "NaN" if math.isnan(obj) else ("Infinity" if obj > 0 else "-Infinity")
    if isinstance(obj, dict):
        return {k: _json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_json_safe(v) for v in obj]
    return obj


def report_payload(records: list[Mapping], profile: Mapping | None,
                   generated: str | None = None) -> dict:
    """The object written to ``claims.json``."""
    summary = summarize(records)
    lines = summary_lines(summary)
    return {
        "schema": 1,
        "generated": generated or _now(),
        "profile": dict(profile) if profile else None,
        "summary": {"total": summary["total"],
                    "claims": {k: dict(v, line=lines[k]) for k, v in summary["claims"].items()},
                    "line": lines["total"]},
        "records": [dict(r) for r in records],
    }


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()


def write_reports(records: list[Mapping], directory: str | os.PathLike,
                  profile: Mapping | None = None, generated: str | None = None
                  ) -> tuple[Path, Path]:
    """Write ``claims.json`` and ``claims.md`` into ``directory``; returns both paths."""
    records = sort_records(records)
    generated = generated or _now()
    payload = report_payload(records, profile, generated)
    directory = Path(directory)
    j = atomic_write_text(directory / "claims.json",
                          json.dumps(_json_safe(payload), indent=2, allow_nan=False) + "\n")
    m = atomic_write_text(directory / "claims.md",
                          render_markdown(records, profile, generated))
    return j, m


# --------------------------------------------------------------------------- seeds, hypothesis

def seed_for(*parts) -> int:
    """A 63-bit non-negative seed from names: sha256 of ``"/".join(map(str, parts))``.

    Parts are joined as strings, so ``seed_for("a", 1) == seed_for("a", "1")``.
    """
    if not parts:
        raise ValueError("seed_for needs at least one part (e.g. the claim id)")
    digest = hashlib.sha256("/".join(map(str, parts)).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") & (2**63 - 1)


def rng_for(*parts) -> np.random.Generator:
    """``np.random.default_rng(seed_for(*parts))``."""
    return np.random.default_rng(seed_for(*parts))


def claim_settings(profile):
    """``hypothesis.settings`` for a property-based claim, sized by the profile.

    ``max_examples = profile.hypothesis_examples``, ``deadline=None``, and
    ``derandomize=True`` when the environment variable ``CI`` is set (as the root
    conftest's ``ci`` profile).  Other settings inherit from the loaded hypothesis
    profile.  Nothing global is changed, and nothing global is read: the profile comes
    from the ``profile`` fixture of the test::

        def test_x(profile):
            @claim_settings(profile)
            @given(...)
            def inner(...): ...
            inner()
    """
    from hypothesis import settings

    return settings(max_examples=profile.hypothesis_examples, deadline=None,
                    derandomize=bool(os.environ.get("CI")))
