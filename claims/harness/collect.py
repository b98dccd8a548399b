"""Collecting claim records from pytest's test reports, with each test's outcome filled in.

The controller process (never a pytest-xdist worker) feeds every ``TestReport`` to a
:class:`RecordCollector`.  The records travel serialised in ``report.user_properties`` (see
claims.harness.records) and are parsed here, once, into
:class:`~claims.harness.records.ClaimRecord` s; the outcome of their test is read from the report attributes of its
setup, call and teardown phases (``report.outcome``, ``report.wasxfail``), never from
the text of ``report.longrepr``:

==========================================  ==========================================
phase reports                               outcome of the test's records
==========================================  ==========================================
setup failed                                ``"error"`` (note "setup failed")
setup skipped, no call                      ``"skipped"``
call skipped with ``wasxfail``              ``"xfailed"`` (``xfail_reason`` = wasxfail)
call skipped                                ``"skipped"``
call passed with ``wasxfail``               ``"xpassed"`` (non-strict xfail)
call passed                                 ``"passed"``
call failed, :data:`STRICT_XPASS` set       ``"failed"`` (note "XPASS(strict)...")
call failed                                 ``"failed"``
teardown failed after a non-failing call    ``"error"`` (note "teardown failed")
==========================================  ==========================================

A strict XPASS is a call phase that pytest reports as failed although the test raised
nothing.  pytest gives such a report no attribute of its own, so the plugin's
``pytest_runtest_makereport`` wrapper, which sees the call, sets :data:`STRICT_XPASS`
on it (:func:`mark_strict_xpass`); the attribute travels with the report through
pytest-xdist like any other.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Iterable, Mapping

from claims.harness.records import RECORD_KEY, ClaimRecord

__all__ = ["RecordCollector", "sort_records", "STRICT_XPASS", "mark_strict_xpass",
           "xfail_reason", "records_from_user_properties"]

#: report attribute set on a call phase that failed only because a test marked
#: ``xfail(strict=True)`` passed; its value is the xfail reason ("" when none).
STRICT_XPASS = "claims_strict_xpass"


def xfail_reason(item) -> str | None:
    """The reason of the xfail mark that applies to ``item``, ``None`` without one.

    The first ``xfail`` mark that is unconditional or has a true condition wins, as in
    pytest.  A string condition (``xfail("sys.platform == 'win32'")``) is taken as true
    without being evaluated: this is only asked once pytest has decided that an xfail
    applied.  Without ``reason=`` the reason is ``""`` (``"condition: ..."`` for a string
    condition), as pytest writes it.
    """
    for mark in item.iter_markers(name="xfail"):
        conditions = (mark.kwargs["condition"],) if "condition" in mark.kwargs else mark.args
        if not conditions:
            return mark.kwargs.get("reason", "")
        for condition in conditions:
            if isinstance(condition, str):
                return mark.kwargs.get("reason", "condition: " + condition)
            if condition:
                return mark.kwargs.get("reason", "")
    return None


def mark_strict_xpass(item, call, report) -> None:
    """Set :data:`STRICT_XPASS` on ``report`` if it is a strict XPASS (see module doc).

    Called by the plugin's ``pytest_runtest_makereport`` wrapper once pytest's own
    (xfail) handling has produced the report.
    """
    if report.when == "call" and report.failed and call.excinfo is None:
        reason = xfail_reason(item)
        if reason is not None:
            setattr(report, STRICT_XPASS, reason)


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
            st["records"] = props                   # later phases carry all earlier records
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
                strict_xpass = getattr(call, STRICT_XPASS, None)
                if strict_xpass is not None:
                    reason = strict_xpass.strip() or None
                    note = "XPASS(strict): passed although marked xfail; remove the xfail"
        if teardown is not None and teardown.failed and outcome in ("passed", "xpassed",
                                                                     "skipped", "unknown"):
            outcome, note = "error", "teardown failed"
        return outcome, reason, note

    def records(self) -> list[ClaimRecord]:
        """All records, outcome filled in, sorted by (claim, test, order)."""
        out = []
        for st in self._tests.values():
            outcome, reason, note = self._outcome(st["reports"])
            for r in st["records"]:
                r = replace(r, outcome=outcome, xfail_reason=reason)
                if note:
                    r = replace(r, note=f"{r.note}; {note}" if r.note else note)
                out.append(r)
        return sort_records(out)


def sort_records(records: Iterable[ClaimRecord]) -> list[ClaimRecord]:
    """Records sorted by (claim, test node id, order within the test)."""
    return sorted(records, key=lambda r: (r.claim, r.test or "", r.order or 0))


def records_from_user_properties(props: Iterable) -> list[ClaimRecord]:
    """The records among ``(name, serialised record)`` user properties (tuples or lists), parsed
    (:meth:`~claims.harness.records.ClaimRecord.from_dict`: ValueError naming a missing field)."""
    return [ClaimRecord.from_dict(p[1]) for p in props or ()
            if isinstance(p, (tuple, list)) and len(p) == 2 and p[0] == RECORD_KEY and isinstance(p[1], Mapping)]
