r"""Claim records: what one check measured, its verdict, and how a test records it.

A *claim* is a statement of the paper (id such as ``"ar1-optimum"``); a *check* is one
measurement against one tolerance.  A check records a **record** -- a flat dict of plain
built-in types -- and then asserts that the verdict is the expected one::

    def test_kappa_exact_vs_mc(claim, profile):          # fixtures from claims/plugin.py
        z = ...                                          # measured on profile.mc_trajectories draws
        rec = claim.record(
            claim="ar1-optimum", paper_ref="Thm 4.1, eq. 15", setting="a",
            metric="|kappa_exact - kappa_mc| / stderr", measured=z,
            tolerance=4.0, comparator="<=",
            details={"seed": seed_for("ar1-optimum", "a"), "m": profile.mc_trajectories},
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
    report, see claims.collect), xfail_reason

Records travel as ``("claim_record", dict)`` pairs in ``item.user_properties``.  numpy /
torch scalars and arrays are converted to floats / lists (:func:`to_builtin`).

>>> make_record(claim="demo", paper_ref="eq. 1", metric="err", measured=0.5,
...             tolerance=1, comparator="<=")["verdict"]
'holds'
"""
from __future__ import annotations

import math
import numbers
import operator
import re
from typing import Any, Iterable, Mapping

import numpy as np

__all__ = [
    "RECORD_KEY", "COMPARATORS", "VERDICTS", "Record", "ClaimRecorder", "make_record",
    "compare", "to_builtin", "records_from_user_properties", "format_value",
    "format_criterion",
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
