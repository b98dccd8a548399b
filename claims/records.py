r"""Claim records: what one check measured, its interval, its verdict, and how a test records it.

A *claim* is a statement of the paper (id such as ``"ar1-optimum"``); a *check* is one
measurement against one tolerance.  A check records a **record** -- a flat dict of plain
built-in types -- and then asserts that the verdict is the expected one::

    from claims.stats import seed_fields

    def test_trained_coefficient(claim, profile):          # fixtures from claims/plugin.py
        errs = [...]                                       # signed per-seed relative errors
        rec = claim.record(
            claim="ar1-optimum", paper_ref="Thm 4.1, eq. 15", setting="a",
            metric="mean_seeds (coef - kappa) / kappa", **seed_fields(errs),
            tolerance=profile.coef_rel_tol, comparator="abs<=", tolerance_source="project",
            details={"rel_error_per_seed": errs},
            expect="holds",                                # "fails" for a negative control
        )
        rec.check()     # AssertionError with a readable message unless the verdict fits

Tolerances say whose they are: ``tolerance_source`` is ``"paper"`` only where the paper
states the number (or the statement is exact and checked in exact arithmetic), else
``"project"``; every project tolerance has its one-line reason in docs/settings.md,
"Tolerances".

Intervals (docs/settings.md, "Verdicts and intervals"; helpers in claims/stats.py)
    ``interval=None`` for an exact check.  Otherwise ``(lo, hi)``, a 95 % two-sided
    interval of the measured quantity, which must contain ``measured``:
    ``interval_kind="t95-seeds"`` -- Student-t over ``n_seeds`` per-seed values
    (``seed_fields``); ``"mc95"`` -- a Monte Carlo estimate +- 1.96 SE (``mc_fields``);
    ``"bootstrap95"`` -- a percentile bootstrap over >= 10 independent units (``bootstrap_fields``);
    ``"t95-fit"`` -- a Student-t interval of a fitted coefficient from the fit's residuals.
    When ``interval_kind`` is omitted it is ``"t95-seeds"`` if ``n_seeds`` is given and
    ``"mc95"`` otherwise.
Verdict
    Exact checks: ``"holds"`` if ``measured <comparator> tolerance`` is true, else
    ``"fails"``.  Comparators: ``"<="``, ``"<"``, ``">="``, ``">"``, ``"=="`` (exact
    equality; the tolerance is then the expected value and may also be a bool or a str)
    and ``"abs<="`` (``|measured| <= tolerance``, a signed metric).  Interval checks
    (any comparator but ``"=="``): ``"holds"`` if the whole interval satisfies the
    criterion, ``"fails"`` if none of it does, else ``"inconclusive"``
    (:func:`claims.stats.interval_verdict`).  A NaN measurement is rejected: its verdict
    is ``"fails"`` whatever the comparator, and :meth:`Record.check` raises for it even
    in a negative control (a NaN shows that the computation broke, not that the bad case
    was told apart).
``holds_at``
    The tightest tolerance at which the verdict would be ``"holds"``: the far end of the
    interval (max(|lo|, |hi|) for ``"abs<="``), or the measured value of an exact check.
Outcomes
    ``expect="holds"`` passes on ``"holds"`` and on ``"inconclusive"`` (counted and named
    in the reports, with ``decide``: what would decide it); ``expect="fails"`` (a negative
    control, run where the claim must *not* hold) passes only on ``"fails"``: an
    inconclusive control fails its test.
Known non-reproductions
    only a check whose whole interval lies outside its tolerance (verdict ``"fails"``)
    may be marked ``@pytest.mark.xfail(strict=True, reason="...")``; the record is kept
    (outcome ``"xfailed"``) with the reason in ``xfail_reason``.  An inconclusive check so
    marked passes, hence XPASS(strict), hence a failing test.
Reported rows
    ``kind="reported"``: a descriptive row (e.g. a table of MSEs beside the claims) with
    no tolerance, no comparator, no expectation and verdict ``"reported"``; only for
    tables on which the paper makes no claim, never for a claim.  Nothing to check.

Record keys (all values plain built-ins, so records survive pytest-xdist)::

    claim, paper_ref, setting, metric, kind, measured, interval, interval_kind, n_seeds,
    values (per-seed values of a t95-seeds interval, else None), tolerance, comparator,
    tolerance_source, verdict, holds_at, decide, expect, details, note, test (node id),
    order (index within the test), profile (name), outcome (passed/failed/error/xfailed/
    xpassed/skipped, filled in from the test report, see claims.collect), xfail_reason

Records travel as ``("claim_record", dict)`` pairs in ``item.user_properties``.  numpy /
torch scalars and arrays are converted to floats / lists (:func:`to_builtin`).

>>> make_record(claim="demo", paper_ref="eq. 1", metric="err", measured=0.5,
...             tolerance=1, comparator="<=", tolerance_source="project")["verdict"]
'holds'
>>> r = make_record(claim="demo", paper_ref="eq. 1", metric="err", measured=0.5,
...                 interval=(0.2, 1.3), n_seeds=3, tolerance=1, comparator="<=",
...                 tolerance_source="project")
>>> r["verdict"], r["holds_at"], r["interval_kind"]
('inconclusive', 1.3, 't95-seeds')
"""
from __future__ import annotations

import math
import numbers
import operator
import re
from typing import Any, Iterable, Mapping

import numpy as np

from claims.display import format_basis, format_criterion, format_interval, format_value

__all__ = [
    "RECORD_KEY", "COMPARATORS", "VERDICTS", "EXPECTS", "KINDS", "TOLERANCE_SOURCES",
    "INTERVAL_KINDS", "Record", "ClaimRecorder", "make_record", "compare", "to_builtin",
    "records_from_user_properties", "format_value", "format_criterion", "format_interval",
    "format_basis",
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
#: every verdict a record can carry ("reported" only for kind "reported").
VERDICTS = ("holds", "fails", "inconclusive", "reported")
#: what a check may expect: "holds", or "fails" for a negative control.
EXPECTS = ("holds", "fails")
KINDS = ("check", "reported")
TOLERANCE_SOURCES = ("paper", "project")
INTERVAL_KINDS = ("t95-seeds", "mc95", "bootstrap95", "t95-fit")

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


def _interval(interval, interval_kind, n_seeds, comparator, m):
    """Validated (interval, interval_kind, n_seeds)."""
    if interval is None:
        if interval_kind is not None or n_seeds is not None:
            raise ValueError("interval_kind and n_seeds need an interval")
        return None, None, None
    iv = to_builtin(interval, _path="interval")
    if (not isinstance(iv, list) or len(iv) != 2
            or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in iv)):
        raise ValueError(f"interval must be a (lo, hi) pair of numbers, got {interval!r}")
    lo, hi = float(iv[0]), float(iv[1])
    if math.isnan(lo) or math.isnan(hi) or lo > hi:
        raise ValueError(f"interval must satisfy lo <= hi (no NaN), got {interval!r}")
    if comparator == "==":
        raise ValueError("comparator '==' is exact: it takes no interval")
    if isinstance(m, float) and not math.isnan(m) and not lo <= m <= hi:
        raise ValueError(f"the interval [{lo!r}, {hi!r}] must contain measured = {m!r}")
    if interval_kind is None:
        interval_kind = "t95-seeds" if n_seeds is not None else "mc95"
    if interval_kind not in INTERVAL_KINDS:
        raise ValueError(f"interval_kind must be one of {INTERVAL_KINDS}, got {interval_kind!r}")
    if interval_kind == "t95-seeds":
        if isinstance(n_seeds, bool) or not isinstance(n_seeds, int) or n_seeds < 2:
            raise ValueError(f"a 't95-seeds' interval needs n_seeds >= 2, got {n_seeds!r}")
    elif n_seeds is not None:
        raise ValueError("n_seeds belongs to 't95-seeds' intervals only")
    return [lo, hi], interval_kind, n_seeds


def make_record(*, claim: str, paper_ref: str, metric: str, measured, tolerance=None,
                comparator: str | None = None, tolerance_source: str | None = None,
                setting=None, details: Mapping | None = None, expect: str | None = None,
                note: str | None = None, interval=None, interval_kind: str | None = None,
                n_seeds: int | None = None, kind: str = "check",
                decide: str | None = None, values=None) -> dict:
    """Validate the inputs and return a record dict with its verdict (see module doc).

    Checks (``kind="check"``) need ``tolerance``, ``comparator`` and ``tolerance_source``;
    ``expect`` defaults to ``"holds"``.  ``note`` is a short free-text remark shown in
    the reports (e.g. which optimal family a trained run reached).  ``decide`` overrides
    the automatic text saying what would decide an inconclusive check
    (:func:`claims.stats.decide_text`).  ``values``: the per-seed values behind a
    ``t95-seeds`` interval (:func:`claims.stats.seed_fields` fills it in), which the
    report's figures plot against the tolerance.

    ``test``, ``order``, ``profile``, ``outcome`` and ``xfail_reason`` are ``None`` here;
    :class:`ClaimRecorder` and the plugin fill them in.
    """
    from claims import stats

    if not isinstance(claim, str) or not _CLAIM_ID.match(claim):
        raise ValueError(f"claim must be a lower-case id such as 'ar1-optimum' "
                         f"(letters, digits, '.', '_', '-'), got {claim!r}")
    for name, val in (("paper_ref", paper_ref), ("metric", metric)):
        if not isinstance(val, str) or not val.strip():
            raise ValueError(f"{name} must be a non-empty str, got {val!r}")
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    if kind == "reported":
        given = [n for n, v in (("tolerance", tolerance), ("comparator", comparator),
                                ("tolerance_source", tolerance_source), ("expect", expect))
                 if v is not None]
        if given:
            raise ValueError(f"a reported row has no verdict: drop {', '.join(given)}")
        m = _scalar(measured, "measured", "==")
        t = None
    else:
        if comparator not in COMPARATORS:
            raise ValueError(f"comparator must be one of {sorted(COMPARATORS)}, "
                             f"got {comparator!r}")
        if tolerance_source not in TOLERANCE_SOURCES:
            raise ValueError("tolerance_source is required: 'paper' (the paper states the "
                             "number) or 'project' (ours; reason in docs/settings.md, "
                             f"Tolerances), got {tolerance_source!r}")
        expect = "holds" if expect is None else expect
        if expect not in EXPECTS:
            raise ValueError(f"expect must be 'holds' or 'fails' (negative control), "
                             f"got {expect!r}")
        if tolerance is None:
            raise ValueError("a check needs a tolerance")
        m = _scalar(measured, "measured", comparator)
        t = _scalar(tolerance, "tolerance", comparator)
        if _is_nan(t):
            raise ValueError("tolerance is NaN")
        if comparator == "abs<=" and t < 0:
            raise ValueError(f"tolerance of 'abs<=' must be >= 0, got {t!r}")
    iv, interval_kind, n_seeds = _interval(interval, interval_kind, n_seeds, comparator, m)
    if setting is not None:
        setting = str(to_builtin(setting, _path="setting"))
    details = {} if details is None else to_builtin(details, _path="details")
    if not isinstance(details, dict):
        raise TypeError(f"details must be a dict, got {type(details).__name__}")
    for name, val in (("note", note), ("decide", decide)):
        if val is not None and not isinstance(val, str):
            raise ValueError(f"{name} must be a str or None, got {val!r}")
    if kind == "reported":
        verdict = "reported"
    elif _is_nan(m):
        verdict = "fails"
        nan_note = "measured is NaN: rejected (verdict 'fails'; check() always raises)"
        note = f"{note}; {nan_note}" if note else nan_note
    elif iv is not None:
        verdict = stats.interval_verdict(iv[0], iv[1], comparator, t)
    else:
        verdict = "holds" if compare(m, comparator, t) else "fails"
    if values is not None:
        values = to_builtin(values, _path="values")
        if (not isinstance(values, list) or interval_kind != "t95-seeds" or len(values) != n_seeds
                or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in values)):
            raise ValueError("values must be the n_seeds numbers behind a 't95-seeds' interval")
    rec = {
        "claim": claim, "paper_ref": paper_ref.strip(), "setting": setting,
        "metric": metric.strip(), "kind": kind, "measured": m, "interval": iv,
        "interval_kind": interval_kind, "n_seeds": n_seeds, "tolerance": t,
        "comparator": comparator, "tolerance_source": tolerance_source, "verdict": verdict,
        "holds_at": None if kind == "reported" else stats.holds_at(m, comparator, iv),
        "decide": None, "expect": expect, "details": details, "note": note, "test": None,
        "order": None, "profile": None, "outcome": None, "xfail_reason": None, "values": values,
    }
    if verdict == "inconclusive":
        rec["decide"] = decide or stats.decide_text(rec)
    return rec


def _describe(r: Mapping) -> str:
    where = f" setting {r['setting']}" if r.get("setting") is not None else ""
    iv = (f" (95 % interval {format_interval(r['interval'])}, {format_basis(r)})"
          if r.get("interval") is not None else "")
    return (f"claim {r['claim']} [{r['paper_ref']}]{where}: {r['metric']} = "
            f"{format_value(r['measured'])}{iv}")


class Record:
    """A recorded check (wraps the record dict, which is already stored on the test).

    ``check()`` raises ``AssertionError`` unless the verdict fits the expectation: a
    positive check passes on ``"holds"`` or ``"inconclusive"``, a negative control only
    on ``"fails"``; a reported row has nothing to check.
    """

    def __init__(self, data: dict):
        self.data = data
        self.checked = data.get("kind") == "reported"

    verdict = property(lambda self: self.data["verdict"])
    expect = property(lambda self: self.data["expect"])
    measured = property(lambda self: self.data["measured"])
    interval = property(lambda self: self.data["interval"])
    holds = property(lambda self: self.data["verdict"] == "holds")
    inconclusive = property(lambda self: self.data["verdict"] == "inconclusive")

    def check(self) -> "Record":
        __tracebackhide__ = True
        self.checked = True
        r = self.data
        if r.get("kind") == "reported":
            return self
        crit = format_criterion(r["comparator"], r["tolerance"])
        if _is_nan(r["measured"]):
            raise AssertionError(f"{_describe(r)}: measured is NaN, the check could not be "
                                 f"evaluated (criterion {crit}, expected {r['expect']})")
        if r["verdict"] == r["expect"]:
            return self
        if r["expect"] == "holds":
            if r["verdict"] == "inconclusive":
                return self            # passes; counted and named in the reports
            raise AssertionError(f"{_describe(r)} violates {crit} (verdict fails, expected "
                                 f"holds); details: {r['details']}")
        if r["verdict"] == "inconclusive":
            raise AssertionError(f"negative control is inconclusive: {_describe(r)} "
                                 f"straddles {crit}, so the check does not tell the bad case "
                                 f"apart clearly ({r['decide']}); details: {r['details']}")
        raise AssertionError(f"negative control unexpectedly holds: {_describe(r)} satisfies "
                             f"{crit} (expected fails), so the check does not tell the bad "
                             f"case apart; details: {r['details']}")

    def __repr__(self) -> str:
        r = self.data
        iv = f", interval={format_interval(r['interval'])}" if r.get("interval") else ""
        return (f"Record({r['claim']!r}, {r['metric']!r}, measured={format_value(r['measured'])}"
                f"{iv}, {format_criterion(r['comparator'], r['tolerance'])}, "
                f"verdict={r['verdict']!r}, expect={r['expect']!r})")


class ClaimRecorder:
    """Records checks on one test item (what the ``claim`` fixture returns).

    ``item`` is a ``pytest.Item`` (or any object with ``nodeid`` and ``user_properties``);
    each :meth:`record` appends ``("claim_record", dict)`` to ``item.user_properties``.
    """

    def __init__(self, item, profile_name: str | None = None):
        self.item = item
        self.profile_name = profile_name
        self.records: list[Record] = []

    def record(self, **fields) -> Record:
        """Record one check (keywords of :func:`make_record`) and return it; call
        ``.check()`` on the result (a reported row needs none)."""
        data = make_record(**fields)
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
