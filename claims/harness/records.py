r"""Claim records: what one check measured, its interval, its verdict, and how a test records it.

A *claim* is a statement of the paper (id such as ``"ar1-optimum"``); a *check* is one
measurement against one tolerance.  A check records a **record** -- a flat dict of plain
built-in types -- and then asserts that the verdict is the expected one::

    from claims.harness.stats import seed_fields

    def test_trained_coefficient(claim, profile):          # fixtures from claims/harness/plugin.py
        errs = [...]                                       # signed per-seed relative errors
        rec = claim.record(
            claim="ar1-optimum", check="trained-coefficient", setting="a",
            label="mean_seeds (coef - kappa) / kappa", paper_ref="Thm 4.1, eq. 15",
            **seed_fields(errs), runs=[ar1_run("a", i) for i in range(3)],   # claims/harness/runs.py
            tolerance=profile.coef_rel_tol, comparator="abs<=", tolerance_source="project",
            details={"rel_error_per_seed": errs},
            expect="holds",                                # "fails" for a negative control
        )
        rec.check()     # AssertionError with a readable message unless the verdict fits

Tolerances say whose they are: ``tolerance_source`` is ``"paper"`` only where the paper
states the number (or the statement is exact and checked in exact arithmetic), else
``"project"``; every project tolerance has its one-line reason in docs/settings.md,
"Tolerances".

Intervals (docs/settings.md, "Verdicts and intervals"; helpers in claims/harness/stats.py)
    ``interval=None`` for an exact check.  Otherwise ``(lo, hi)``, a 95 % two-sided
    interval of the measured quantity, which must contain ``measured``:
    ``interval_kind="t95-seeds"`` -- Student-t over ``n_seeds`` per-seed values
    (``seed_fields``); ``"mc95"`` -- a Monte Carlo estimate +- 1.96 SE (``mc_fields``);
    ``"bootstrap95"`` -- a percentile bootstrap over >= 10 independent units (``bootstrap_fields``);
    ``"t95-fit"`` -- a Student-t interval of a fitted coefficient from the fit's residuals;
    ``"t95-fit+mc"`` -- such a fit's interval combined with the Monte Carlo error of a
    reference shared by every fitted point; ``"clopper-pearson95"`` -- the exact binomial
    interval of a share.
    When ``interval_kind`` is omitted it is ``"t95-seeds"`` if ``n_seeds`` is given and
    ``"mc95"`` otherwise.
Verdict
    Exact checks: ``"holds"`` if ``measured <comparator> tolerance`` is true, else
    ``"fails"``.  Comparators: ``"<="``, ``"<"``, ``">="``, ``">"``, ``"=="`` (exact
    equality; the tolerance is then the expected value and may also be a bool or a str)
    and ``"abs<="`` (``|measured| <= tolerance``, a signed metric).  Interval checks
    (any comparator but ``"=="``): ``"holds"`` if the whole interval satisfies the
    criterion, ``"fails"`` if none of it does, else ``"inconclusive"``
    (:func:`claims.harness.stats.interval_verdict`).  A NaN measurement is rejected: its verdict
    is ``"fails"`` whatever the comparator, and :meth:`Record.check` raises for it even
    in a negative control (a NaN shows that the computation broke, not that the bad case
    was told apart).  Checks judged by run (``per_run=True``, :mod:`claims.harness.shares`): each
    run holds, fails or is undecided, and the record measures the share of runs that hold
    against 1/2 (``"mixed"``: undecided, some runs holding and some failing; a negative
    control fails only when every run fails; ``every_run=True``: holds only when every run
    holds).  Rows over runs in several basins (``basins=``, :mod:`claims.harness.basins`): each
    basin by the rule above.
``holds_at``
    The tightest tolerance at which the verdict would be ``"holds"``: the far end of the
    interval (max(|lo|, |hi|) for ``"abs<="``), or the measured value of an exact check.
Outcomes
    ``expect="holds"`` passes on ``"holds"``, ``"inconclusive"`` and ``"mixed"`` (counted
    and named in the reports, with ``decide``: what would decide it); ``expect="fails"``
    (a negative control, run where the claim must *not* hold) passes only on ``"fails"``:
    an inconclusive or mixed control fails its test.
Known non-reproductions
    only a check whose whole interval lies outside its tolerance (verdict ``"fails"``)
    may be marked ``@pytest.mark.xfail(strict=True, reason="...")``; the record is kept
    (outcome ``"xfailed"``) with the reason in ``xfail_reason``.  An inconclusive or mixed
    check so marked passes, hence XPASS(strict), hence a failing test.
Reported rows
    ``kind="reported"``: a descriptive row (e.g. a table of MSEs beside the claims) with
    no tolerance, no comparator, no expectation and verdict ``"reported"``; only for
    tables on which the paper makes no claim, never for a claim.  Nothing to check.

Identity and per-run entries
    ``check_id``, :class:`Coords`, :class:`RunRef` and :class:`RunEntry` live in
    :mod:`claims.harness.identity`.

Record fields (:data:`RECORD_FIELDS`; all values plain built-ins once serialised, so
records survive pytest-xdist)::

    check_id, claim, check, coords, label, paper_ref, kind, measured, interval,
    interval_kind, n_seeds, values (per-seed values of a t95-seeds interval, else None),
    runs, basins, per_run, clipped, tolerance, comparator, tolerance_source, verdict, holds_at, decide, expect,
    details, note, test (node id), order (index within the test), profile (name),
    outcome (passed/failed/error/xfailed/xpassed/skipped, filled in from the test report,
    see claims.harness.collect), xfail_reason

Records travel as ``("claim_record", dict)`` pairs in ``item.user_properties``.  numpy /
torch scalars and arrays are converted to floats / lists (:func:`to_builtin`).

>>> make_record(claim="demo", check="err", setting="a", label="err", paper_ref="eq. 1",
...             measured=0.5, tolerance=1, comparator="<=", tolerance_source="project").verdict
'holds'
>>> r = make_record(claim="demo", check="err", label="err", paper_ref="eq. 1", measured=0.5,
...                 interval=(0.2, 1.3), n_seeds=3, tolerance=1, comparator="<=",
...                 tolerance_source="project")
>>> r.check_id, r.verdict, r.holds_at, r.interval_kind
('demo/err', 'inconclusive', 1.3, 't95-seeds')
"""
from __future__ import annotations

import math
import numbers
import operator
import re
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

import numpy as np

from claims.harness import stats
from claims.harness.basins import BasinSplit, record_fields
from claims.harness.shares import TARGET_SHARE, judge_runs
from claims.harness.shares import decide_text as shares_decide_text
from claims.harness.display import format_basis, format_criterion, format_interval, format_value
from claims.harness.identity import Coords, RunEntry, RunRef, check_id, per_run_extras

__all__ = [
    "RECORD_FIELDS", "ClaimRecord", "run_entries", "duplicate_ids",
    "RECORD_KEY", "COMPARATORS", "VERDICTS", "EXPECTS", "KINDS", "TOLERANCE_SOURCES",
    "INTERVAL_KINDS", "Record", "ClaimRecorder", "make_record", "compare", "to_builtin",
    "records_from_user_properties", "clip_intervals",
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
VERDICTS = ("holds", "fails", "inconclusive", "mixed", "reported")
#: what a check may expect: "holds", or "fails" for a negative control.
EXPECTS = ("holds", "fails")
KINDS = ("check", "reported")
TOLERANCE_SOURCES = ("paper", "project")
INTERVAL_KINDS = ("t95-seeds", "mc95", "bootstrap95", "t95-fit", "t95-fit+mc", "clopper-pearson95")

_CLAIM_ID = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
_CHECK = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")


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
    if isinstance(m, (int, float)) and not isinstance(m, bool) and not (isinstance(m, float) and math.isnan(m)) \
            and not lo <= m <= hi:
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


#: fields of a serialised record (schema 4), in the order they are written.
RECORD_FIELDS = ("check_id", "claim", "check", "coords", "label", "paper_ref", "kind", "measured",
                 "interval", "interval_kind", "n_seeds", "values", "runs", "basins", "per_run", "clipped",
                 "tolerance", "comparator",
                 "tolerance_source", "verdict", "holds_at", "decide", "expect", "details", "note",
                 "test", "order", "profile", "outcome", "xfail_reason")


@dataclass
class ClaimRecord:
    """One record: what one check measured, its interval, its verdict and where it was made.

    Built by :func:`make_record` (which validates and judges); serialised by
    :meth:`to_dict` to plain JSON types (``coords`` and ``runs`` as nested objects) and
    read back by :meth:`from_dict`.  The readers (compare, figures, README, report) take
    fields from here -- ``check_id``, ``coords``, ``runs`` -- never from ``label``, which is
    free text for people.
    """

    check_id: str
    claim: str
    check: str
    coords: Coords
    label: str
    paper_ref: str
    kind: str
    measured: Any
    interval: list | None
    interval_kind: str | None
    n_seeds: int | None
    values: list | None
    runs: list | None
    basins: dict | None
    per_run: dict | None
    clipped: bool | None
    tolerance: Any
    comparator: str | None
    tolerance_source: str | None
    verdict: str
    holds_at: Any
    decide: str | None
    expect: str | None
    details: dict
    note: str | None = None
    test: str | None = None
    order: int | None = None
    profile: str | None = None
    outcome: str | None = None
    xfail_reason: str | None = None

    @property
    def setting(self) -> str | None:
        return self.coords.setting

    @property
    def where(self) -> str:
        return self.coords.where()

    @property
    def is_control(self) -> bool:
        return self.expect == "fails"

    def to_dict(self) -> dict:
        out = {}
        for name in RECORD_FIELDS:
            v = getattr(self, name)
            if name == "coords":
                v = v.to_dict()
            elif name == "runs" and v is not None:
                v = [r.to_dict() for r in v]
            out[name] = v
        return out

    @classmethod
    def from_dict(cls, data: Mapping) -> "ClaimRecord":
        """A record from its serialised form (schema 4); ValueError naming what is wrong."""
        if not isinstance(data, Mapping):
            raise ValueError(f"a record must be an object, got {type(data).__name__}")
        missing = [k for k in ("check_id", "claim", "check", "coords", "label", "measured", "verdict")
                   if k not in data]
        if missing:
            raise ValueError(f"record {data.get('check_id', '?')!r} lacks {missing} (schema 4)")
        unknown = sorted(set(data) - set(RECORD_FIELDS))
        if unknown:
            raise ValueError(f"record {data['check_id']!r} has unknown fields {unknown}")
        kw = {name: data.get(name) for name in RECORD_FIELDS}
        kw["coords"] = Coords.from_dict(data["coords"] or {})
        kw["runs"] = None if data.get("runs") is None else [RunEntry.from_dict(r) for r in data["runs"]]
        kw["details"] = dict(data.get("details") or {})
        rec = cls(**kw)
        if rec.check_id != check_id(rec.claim, rec.check, rec.coords):
            raise ValueError(f"record {rec.check_id!r}: its check_id is not what its claim, check and "
                             f"coordinates make ({check_id(rec.claim, rec.check, rec.coords)!r})")
        if rec.kind == "check" and rec.coords.control != (rec.expect == "fails"):
            raise ValueError(f"record {rec.check_id!r}: control contradicts expect={rec.expect!r}")
        return rec


def make_record(*, claim: str, check: str, label: str, paper_ref: str, measured=None, tolerance=None,
                comparator: str | None = None, tolerance_source: str | None = None,
                setting=None, s=None, T=None, layers=None, radius=None, seed=None,
                variant=None, control: bool | None = None, runs=None, run_values=None, run_stderr=None,
                details: Mapping | None = None, expect: str | None = None,
                note: str | None = None, interval=None, interval_kind: str | None = None,
                n_seeds: int | None = None, kind: str = "check",
                decide: str | None = None, values=None, basins=None, per_run: bool = False,
                shared_stderr: float = 0.0, bounds=None, every_run: bool = False) -> ClaimRecord:
    """Validate the inputs and return a :class:`ClaimRecord` with its verdict (module doc).

    ``check``: the check's name within the claim (a token such as ``"odd-share"``); with
    the coordinates (``setting``, ``s``, ``T``, ``layers``, ``radius``, ``seed``,
    ``variant``, and ``control``, which defaults to ``expect == "fails"``) it makes the
    record's ``check_id``.  ``label``: the human text shown in the reports.

    Checks (``kind="check"``) need ``tolerance``, ``comparator`` and ``tolerance_source``;
    ``expect`` defaults to ``"holds"``.  ``note`` is a short free-text remark shown in
    the reports (e.g. which optimal family a trained run reached).  ``decide`` overrides
    the automatic text saying what would decide an inconclusive check
    (:func:`claims.harness.stats.decide_text`).  ``values``: the per-seed values behind a
    ``t95-seeds`` interval (:func:`claims.harness.stats.seed_fields` fills it in).  ``runs``: the
    trained runs behind the value, as :class:`RunRef` s (claims/harness/runs.py) or
    :class:`RunEntry` s; run i takes ``run_values[i]`` (the per-run values of a reported
    row or of a check whose interval is not over seeds), else ``values[i]``, else
    ``measured`` (a single run), its standard error ``run_stderr[i]`` where it has one, and
    the per-run scalars of the details (:func:`run_entries`).

    ``basins``: a :class:`claims.harness.basins.BasinSplit` -- which basin (stationary point of the
    population loss) each of ``runs`` is headed for.  The record is then judged by basin
    (:mod:`claims.harness.basins`; docs/settings.md, "Verdicts by basin") from ``run_values`` (and
    ``run_stderr``): ``measured`` and the interval are the headline basin's (give neither),
    the verdict is the basins' (``"mixed"`` when some hold and some fail), each run's
    ``extra`` names its basin and the record's ``basins`` field keeps every basin's verdict.

    ``per_run=True``: a statement about each trained layer (:mod:`claims.harness.shares`;
    docs/settings.md, "Verdicts by run").  ``tolerance``, ``comparator`` and
    ``tolerance_source`` are then the criterion each run is judged by (from ``run_values``,
    ``run_stderr`` and ``shared_stderr``, an error every run shares, such as a Monte Carlo
    reference's); the record measures the share of runs that hold, with its interval
    [CP_lo(k, n), CP_hi(k + u, n)] against the target share (``>= 0.5``, ours), and its
    ``per_run`` field keeps the per-run criterion, the counts and, with ``basins``, the same
    per basin; each run entry's ``extra`` has its ``verdict`` (and ``lo``, ``hi``).  A negative
    control judged by run fails only when every run fails; ``every_run=True``: a statement
    about every run (a premise, a null twin), which holds only when every run holds and
    fails when any fails (:data:`claims.harness.shares.RULES`).  Such records have no ``holds_at``.

    ``bounds``: the quantity's range ``(lo, hi)`` (None for an open end); an interval
    reaching outside it is clipped to it and the record marked ``clipped``.

    ``test``, ``order``, ``profile``, ``outcome`` and ``xfail_reason`` are ``None`` here;
    :class:`ClaimRecorder` and the plugin fill them in.
    """
    if not isinstance(claim, str) or not _CLAIM_ID.match(claim):
        raise ValueError(f"claim must be a lower-case id such as 'ar1-optimum' "
                         f"(letters, digits, '.', '_', '-'), got {claim!r}")
    if not isinstance(check, str) or not _CHECK.match(check):
        raise ValueError(f"check must be a name such as 'odd-share' or 'kappa-vs-T' "
                         f"(letters, digits, '.', '_', '+', '-'), got {check!r}")
    for name, val in (("paper_ref", paper_ref), ("label", label)):
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
        m = None if basins is not None else _scalar(measured, "measured", "==")
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
        m = None if (basins is not None or per_run) else _scalar(measured, "measured", comparator)
        t = _scalar(tolerance, "tolerance", comparator)
        if _is_nan(t):
            raise ValueError("tolerance is NaN")
        if comparator == "abs<=" and t < 0:
            raise ValueError(f"tolerance of 'abs<=' must be >= 0, got {t!r}")
    basin_field = basin_verdict = per_run_field = share = None
    if per_run:
        if kind != "check":
            raise ValueError("per_run judges a check: a reported row has no per-run verdict")
        if comparator == "==":
            raise ValueError("per_run needs a tolerance to judge each run by, not the exact comparator '=='")
        rv = _run_inputs("per_run", "a record judged by run takes measured and its interval from the share of "
                         "runs that hold", runs, run_values, basins, (measured, interval, interval_kind, n_seeds, values))
        errs = None if run_stderr is None else to_builtin(run_stderr, _path="run_stderr")
        rule = "control" if expect == "fails" else "every" if every_run else "share"
        share = judge_runs(rv, comparator, t, errs, float(shared_stderr),
                           None if basins is None else basins.labels, None if basins is None else basins.order,
                           rule=rule)
        per_run_field = _per_run_field(share, comparator, t, tolerance_source, float(shared_stderr),
                                       [r.run for r in runs], basins)
        m, interval, interval_kind = share.share, share.interval, "clopper-pearson95"
        comparator, t, tolerance_source = ">=", TARGET_SHARE, "project"
        extras = per_run_extras(to_builtin(details or {}, _path="details"), len(runs))
        runs = [RunEntry(run=r.run, seed=r.seed, value=v, stderr=None if errs is None else errs[i], extra=x)
                for i, (r, v, x) in enumerate(zip(runs, rv, extras))]
        run_values = run_stderr = None
    elif basins is not None:
        rv = _run_inputs("basins", "a record judged by basin takes measured and its interval from its basins",
                         runs, run_values, basins, (measured, interval, interval_kind, n_seeds, values))
        rf = record_fields(rv, basins, [r.run for r in runs], comparator if kind == "check" else None,
                           t, None if run_stderr is None else to_builtin(run_stderr, _path="run_stderr"))
        m, interval, interval_kind, n_seeds, values = (rf["measured"], rf["interval"], rf["interval_kind"],
                                                       rf["n_seeds"], rf["values"])
        basin_field, basin_verdict = rf["basins"], rf["verdict"]
        if values is not None or len(runs) == 1:
            run_values = None            # one basin: the runs take the seed interval's values
    iv, interval_kind, n_seeds = _interval(interval, interval_kind, n_seeds, comparator, m)
    clipped = None
    if bounds is not None:
        iv, basin_field, clipped = clip_intervals(iv, basin_field, bounds)
    if control is not None and control != (expect == "fails"):
        raise ValueError(f"control={control!r} contradicts expect={expect!r}: a negative control is "
                         "a check that expects 'fails'")
    coords = Coords(setting=to_builtin(setting, _path="setting"),
                    s=to_builtin(s, _path="s"), T=to_builtin(T, _path="T"),
                    layers=to_builtin(layers, _path="layers"),
                    radius=to_builtin(radius, _path="radius"), seed=to_builtin(seed, _path="seed"),
                    variant=variant, control=(expect == "fails") if control is None else control)
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
    elif share is not None:
        verdict = share.verdict
    elif basin_verdict is not None:
        verdict = basin_verdict
    elif iv is not None:
        verdict = stats.interval_verdict(iv[0], iv[1], comparator, t)
    else:
        verdict = "holds" if compare(m, comparator, t) else "fails"
    if values is not None:
        values = to_builtin(values, _path="values")
        if (not isinstance(values, list) or interval_kind != "t95-seeds" or len(values) != n_seeds
                or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in values)):
            raise ValueError("values must be the n_seeds numbers behind a 't95-seeds' interval")
    runs = run_entries(runs, values, m, details, run_values, run_stderr)
    if basins is not None:
        for e, name in zip(runs, basins.labels):
            e.extra["basin"] = name
    if share is not None:
        for e, rv_ in zip(runs, share.runs):
            e.extra["verdict"] = rv_.verdict
            if rv_.interval is not None:
                e.extra["lo"], e.extra["hi"] = rv_.interval
    rec = ClaimRecord(
        check_id=check_id(claim, check, coords), claim=claim, check=check, coords=coords,
        label=label.strip(), paper_ref=paper_ref.strip(), kind=kind, measured=m, interval=iv,
        interval_kind=interval_kind, n_seeds=n_seeds, values=values, runs=runs, basins=basin_field,
        per_run=per_run_field, clipped=clipped, tolerance=t,
        comparator=comparator, tolerance_source=tolerance_source, verdict=verdict,
        holds_at=(None if kind == "reported" or (share is not None and share.rule != "share")
                  else stats.holds_at(m, comparator, iv)),
        decide=None, expect=expect, details=details, note=note)
    if verdict in ("inconclusive", "mixed"):
        rec.decide = decide or (shares_decide_text(share) if share is not None else stats.decide_text(rec.to_dict()))
    return rec


def _run_inputs(what: str, why: str, runs, run_values, basins, given) -> list:
    """The validated run values of a record judged by run or by basin (``what``, its option)."""
    if basins is not None and not isinstance(basins, BasinSplit):
        raise ValueError(f"basins must be a claims.harness.basins.BasinSplit, got {type(basins).__name__}")
    if (runs is None or run_values is None or not isinstance(runs, (list, tuple))
            or not all(isinstance(r, RunRef) for r in runs)):
        raise ValueError(f"{what} need runs (RunRef s) and their run_values")
    if any(x is not None for x in given):
        raise ValueError(f"{why}: give run_values, not measured, interval, interval_kind, n_seeds or values")
    return _finite_list(run_values, len(runs), "run_values")


def _finite_list(values, n: int, name: str) -> list:
    v = to_builtin(values, _path=name)
    if (not isinstance(v, list) or len(v) != n
            or not all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in v)):
        raise ValueError(f"{name} must be {n} finite numbers, got {values!r}")
    return v


def _per_run_field(share, comparator, tolerance, source, shared_stderr, run_ids, split) -> dict:
    """The ``per_run`` field of a record judged by run (:func:`make_record`, ``per_run=True``)."""
    def counts(sv):
        return {"n": sv.n, "held": sv.held, "undecided": sv.undecided, "failed": sv.failed,
                "share": sv.share, "interval": list(sv.interval), "verdict": sv.verdict}
    ends = [stats.holds_at(r.value, comparator, r.interval) for r in share.runs]
    every = (None if comparator == "==" else max(ends) if comparator in ("<=", "<", "abs<=") else min(ends))
    return {"comparator": comparator, "tolerance": tolerance, "tolerance_source": source, "rule": share.rule,
            "target": TARGET_SHARE, "shared_stderr": shared_stderr or None, **counts(share),
            "every_run_holds_at": every,
            "basins": None if split is None else [
                {"basin": b.basin, "runs": [i for i, lab in zip(run_ids, split.labels) if lab == b.basin], **counts(b)}
                for b in share.basins]}


def clip_intervals(iv, basin_field, bounds):
    """(interval, basins field, clipped): every interval of a record -- its own and its
    basins' -- clipped to ``bounds`` (``(lo, hi)``, None for an open end), and whether any moved.

    >>> clip_intervals([-0.1, 0.2], None, (0.0, 1.0))
    ([0.0, 0.2], None, True)
    """
    lo_b, hi_b = bounds
    hit = False

    def clip(pair):
        nonlocal hit
        if pair is None:
            return None
        a, b = pair
        a2 = a if lo_b is None else max(a, lo_b)
        b2 = b if hi_b is None else min(b, hi_b)
        hit = hit or (a2, b2) != (a, b)
        return [a2, b2]
    iv = clip(iv)
    if basin_field is not None:
        basin_field = {**basin_field, "verdicts": [{**v, "interval": clip(v["interval"])}
                                                   for v in basin_field["verdicts"]]}
    return iv, basin_field, hit


def run_entries(runs, values, measured, details, run_values=None, run_stderr=None) -> list | None:
    """Validated run entries (see :func:`make_record`).

    ``runs``: :class:`RunEntry` s, or :class:`RunRef` s (claims/harness/runs.py) that take their
    values from ``run_values``, else from the per-seed ``values`` of a seed interval, else
    (a single run) ``measured``; their standard errors from ``run_stderr`` (or None); and
    the per-run scalars of ``details`` (:func:`per_run_extras`).
    """
    if runs is None:
        if run_values is not None or run_stderr is not None:
            raise ValueError("run_values and run_stderr need runs")
        return None
    if isinstance(runs, (str, RunRef, RunEntry)) or not isinstance(runs, (list, tuple)) or not runs:
        raise ValueError(f"runs must be a non-empty list of RunRef or RunEntry, got {runs!r}")
    if all(isinstance(r, RunEntry) for r in runs):
        if run_values is not None or run_stderr is not None:
            raise ValueError("RunEntry runs carry their own values and standard errors")
        entries = []
        for r in runs:
            extra = to_builtin(r.extra, _path="extra")
            if not isinstance(extra, dict) or not all(x is None or isinstance(x, (bool, int, float, str))
                                                      for x in extra.values()):
                raise ValueError(f"a run's extra must map names to scalars, got {r.extra!r} ({r.run})")
            entries.append(RunEntry(run=r.run, seed=to_builtin(r.seed, _path="seed"),
                                    value=to_builtin(r.value, _path="value"),
                                    stderr=to_builtin(r.stderr, _path="stderr"), extra=extra))
    elif all(isinstance(r, RunRef) for r in runs):
        if run_values is not None:
            if values is not None or len(runs) == 1:
                raise ValueError("run_values are for several runs without a seed interval: a seed "
                                 "interval's runs take its values, a single run takes measured")
            vals = to_builtin(run_values, _path="run_values")
        elif values is not None:
            vals = values
        elif len(runs) == 1:
            vals = [measured]
        else:
            raise ValueError("runs need their per-run values: run_values, or the per-seed values "
                             "of a 't95-seeds' interval (a single run takes measured)")
        if not isinstance(vals, list) or len(vals) != len(runs):
            raise ValueError(f"{len(runs)} runs for {len(vals) if isinstance(vals, list) else vals!r} "
                             "per-run values")
        errs = [None] * len(runs) if run_stderr is None else to_builtin(run_stderr, _path="run_stderr")
        if not isinstance(errs, list) or len(errs) != len(runs):
            raise ValueError(f"run_stderr must give one standard error (or None) per run, got {run_stderr!r}")
        extras = per_run_extras(details, len(runs))
        entries = [RunEntry(run=r.run, seed=r.seed, value=v, stderr=e, extra=x)
                   for r, v, e, x in zip(runs, vals, errs, extras)]
    else:
        raise ValueError(f"runs must be all RunRef or all RunEntry, got {runs!r}")
    for e in entries:
        if not isinstance(e.run, str) or not e.run or (e.seed is not None and (isinstance(e.seed, bool)
                                                                             or not isinstance(e.seed, int))):
            raise ValueError(f"a run needs a non-empty id and an int seed index (or None), got {e!r}")
        for name, v in (("value", e.value), ("stderr", e.stderr)):
            if (v is not None or name == "value") and (isinstance(v, bool) or not isinstance(v, (int, float))):
                raise ValueError(f"a run's {name} must be a number, got {v!r} ({e.run})")
        if e.stderr is not None and not (math.isfinite(e.stderr) and e.stderr >= 0):
            raise ValueError(f"a run's stderr must be finite and >= 0, got {e.stderr!r} ({e.run})")
        if e.seed is not None and not e.run.endswith(f"seed={e.seed}"):
            raise ValueError(f"run {e.run!r} does not name its seed index {e.seed}")
    if len({e.run for e in entries}) != len(entries):
        raise ValueError(f"runs must name each run once, got {[e.run for e in entries]}")
    if values is not None and [e.value for e in entries] != list(values):
        raise ValueError("the runs' values must be the per-seed values, in order")
    return entries


def _describe(r: Mapping) -> str:
    iv = (f" (95 % interval {format_interval(r['interval'])}, {format_basis(r)})"
          if r.get("interval") is not None else "")
    return (f"{r['check_id']} [{r['paper_ref']}]: {r['label']} = "
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
            if r["verdict"] in ("inconclusive", "mixed"):
                return self            # passes (a finding); counted and named in the reports
            raise AssertionError(f"{_describe(r)} violates {crit} (verdict fails, expected "
                                 f"holds); details: {r['details']}")
        if r["verdict"] in ("inconclusive", "mixed"):
            raise AssertionError(f"negative control is {r['verdict']}: {_describe(r)} "
                                 f"straddles {crit}, so the check does not tell the bad case "
                                 f"apart clearly ({r['decide']}); details: {r['details']}")
        raise AssertionError(f"negative control unexpectedly holds: {_describe(r)} satisfies "
                             f"{crit} (expected fails), so the check does not tell the bad "
                             f"case apart; details: {r['details']}")

    def __repr__(self) -> str:
        r = self.data
        iv = f", interval={format_interval(r['interval'])}" if r.get("interval") else ""
        return (f"Record({r['check_id']!r}, {r['label']!r}, measured={format_value(r['measured'])}"
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
        data = make_record(**fields).to_dict()
        if any(r.data["check_id"] == data["check_id"] for r in self.records):
            raise ValueError(f"check_id {data['check_id']!r} recorded twice in one test: give the "
                             "checks different names or coordinates")
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


def duplicate_ids(records: Iterable[Mapping]) -> list[str]:
    """The ``check_id`` s that occur more than once among ``records`` (sorted).

    >>> duplicate_ids([{"check_id": "c/x"}, {"check_id": "c/y"}, {"check_id": "c/x"}])
    ['c/x']
    """
    seen, dups = set(), set()
    for r in records:
        (dups if r["check_id"] in seen else seen).add(r["check_id"])
    return sorted(dups)


def records_from_user_properties(props: Iterable) -> list[dict]:
    """The record dicts among ``(name, value)`` user properties (tuples or lists)."""
    out = []
    for p in props or ():
        if isinstance(p, (tuple, list)) and len(p) == 2 and p[0] == RECORD_KEY \
                and isinstance(p[1], dict):
            out.append(p[1])
    return out
