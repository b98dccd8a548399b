r"""Claim records: what one check measured, its interval, its verdict, and how a test records it.

A *claim* is a statement of a source (``"ar1-optimum"``); a *check* is one measurement
against one tolerance.  A test records a check with ``claim.record(...)`` (the ``claim``
fixture is a :class:`ClaimRecorder`), which validates and judges it (:func:`make_record`)
and returns a :class:`Record`; ``.check()`` then asserts that the verdict is the expected
one.  The record itself is a :class:`ClaimRecord`, typed from the test to the reports: it
travels through pytest-xdist as its serialised form (:meth:`ClaimRecord.to_dict`, plain
built-ins), is parsed back once where a run's records are collected
(claims/harness/collect.py) or a published file is loaded (claims/harness/reportfile.py),
and every reader takes its attributes.

Verdict (docs/settings.md, "Verdicts and intervals"; whose each tolerance is: "Tolerances")
    an exact check holds iff ``measured <comparator> tolerance`` (:mod:`claims.harness.plain`);
    a check with a 95 % interval ``[lo, hi]`` (which contains ``measured``) holds when the
    whole interval satisfies the criterion, fails when none of it does, and is
    ``"inconclusive"`` otherwise; a check judged by run (``per_run=True``) measures the share
    of runs that hold against 1/2 (``"mixed"`` when some hold and some fail); a NaN
    measurement fails and ``check()`` raises for it.  ``holds_at`` is the tightest tolerance
    that would hold: max(|lo|, |hi|) for ``"abs<="``, the far end of the interval otherwise.
Outcomes
    ``expect="holds"`` passes on holds, inconclusive and mixed (``decide``: what would decide
    it); a negative control (``expect="fails"``) only on fails.  A reported row has no verdict.
Fields (:data:`RECORD_FIELDS`; docs/results/README.md): identity (claims/harness/identity.py), runs
(claims/harness/runentries.py), ``details`` (plain values the figures read), and where it was made.

>>> r = make_record(claim="demo", check="err", label="err", paper_ref="eq. 1", measured=0.5,
...                 interval=(0.2, 1.3), n_seeds=3, tolerance=1, comparator="<=",
...                 tolerance_source="project")
>>> r.check_id, r.verdict, r.holds_at, r.interval_kind
('demo/err', 'inconclusive', 1.3, 't95-seeds')
>>> ClaimRecord.from_dict(r.to_dict()) == r
True
"""
from __future__ import annotations

import re
from dataclasses import dataclass, fields, replace
from typing import Any, Iterable, Mapping

from claims.harness import stats
from claims.harness.basins import record_fields
from claims.harness.display import format_basis, format_criterion, format_interval, format_per_run, format_value
from claims.harness.identity import Coords, RunEntry, check_id, per_run_extras
from claims.harness.plain import KINDS, checked_criterion, checked_interval, compare, is_nan, to_builtin
from claims.harness.runentries import clip_intervals, per_run_field, run_entries, run_inputs
from claims.harness.shares import TARGET_SHARE, judge_runs
from claims.harness.shares import decide_text as shares_decide_text

__all__ = ["RECORD_FIELDS", "ClaimRecord", "duplicate_ids", "RECORD_KEY", "VERDICTS", "Record", "ClaimRecorder",
           "make_record"]

#: name of the ``item.user_properties`` entries that carry records.
RECORD_KEY = "claim_record"
#: every verdict a record can carry ("reported" only for kind "reported").
VERDICTS = ("holds", "fails", "inconclusive", "mixed", "reported")

_CLAIM_ID = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
_CHECK = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")

@dataclass(frozen=True)
class ClaimRecord:
    """One record: what one check measured, its interval, its verdict and where it was made.

    Built by :func:`make_record` (which validates and judges); serialised by
    :meth:`to_dict` to plain JSON types (``coords`` and ``runs`` as nested objects) and
    read back by :meth:`from_dict`, which requires every field of :data:`RECORD_FIELDS`.
    The readers (compare, figures, README, report) take its attributes -- ``check_id``,
    ``coords``, ``runs``, ``details`` -- never ``label``, which is free text for people.
    ``basins``, ``per_run`` and ``details`` are mappings of plain values.
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
    runs: list[RunEntry] | None
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

    setting = property(lambda self: self.coords.setting, doc="the setting of the coordinates")
    where = property(lambda self: self.coords.where(), doc="the coordinates as the reports show them")
    is_control = property(lambda self: self.expect == "fails", doc="a negative control")
    criterion = property(lambda self: tuple(self.per_run[k] for k in ("comparator", "tolerance", "tolerance_source"))
                         if self.per_run else (self.comparator, self.tolerance, self.tolerance_source),
                         doc="(comparator, tolerance, whose): each run's for a check judged by run, else its own")

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

    @property
    def basis(self) -> str:
        """What the interval rests on, as the reports show it (``"t, 3 seeds"``, ``"exact"``, ...)."""
        return format_basis(self._display_fields())

    @property
    def per_run_text(self) -> str:
        """The criterion each run is held to and how many hold; ``""`` unless judged by run."""
        return format_per_run(self._display_fields())

    def _display_fields(self) -> dict:
        return {"per_run": self.per_run, "expect": self.expect, "interval_kind": self.interval_kind,
                "n_seeds": self.n_seeds, "kind": self.kind}

    @classmethod
    def from_dict(cls, data: Mapping) -> "ClaimRecord":
        """A record from its serialised form: every field of :data:`RECORD_FIELDS`, no other;
        ValueError naming the record and the missing, unknown or inconsistent field.

        >>> ClaimRecord.from_dict({"check_id": "c/x"})
        Traceback (most recent call last):
        ValueError: record 'c/x' lacks the fields ['claim', 'check', 'coords', 'label', 'paper_ref', 'kind', 'measured', 'interval', 'interval_kind', 'n_seeds', 'values', 'runs', 'basins', 'per_run', 'clipped', 'tolerance', 'comparator', 'tolerance_source', 'verdict', 'holds_at', 'decide', 'expect', 'details', 'note', 'test', 'order', 'profile', 'outcome', 'xfail_reason']
        """
        if not isinstance(data, Mapping):
            raise ValueError(f"a record must be an object, got {type(data).__name__}")
        name = data.get("check_id", "?")
        missing = [k for k in RECORD_FIELDS if k not in data]
        if missing:
            raise ValueError(f"record {name!r} lacks the fields {missing}")
        unknown = sorted(set(data) - set(RECORD_FIELDS))
        if unknown:
            raise ValueError(f"record {name!r} has unknown fields {unknown}")
        kw = {k: data[k] for k in RECORD_FIELDS}
        for k, kinds in (("coords", Mapping), ("details", Mapping), ("runs", (list, type(None))),
                         ("basins", (Mapping, type(None))), ("per_run", (Mapping, type(None)))):
            if not isinstance(kw[k], kinds):
                raise ValueError(f"record {name!r}: {k} must not be {type(kw[k]).__name__}")
        if kw["verdict"] not in VERDICTS or kw["kind"] not in KINDS:
            raise ValueError(f"record {name!r}: verdict must be one of {VERDICTS} and kind one of {KINDS}, "
                             f"got {kw['verdict']!r}, {kw['kind']!r}")
        try:
            kw["coords"] = Coords.from_dict(kw["coords"])
            kw["runs"] = None if kw["runs"] is None else [RunEntry.from_dict(r) for r in kw["runs"]]
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"record {name!r}: {exc}") from None
        kw["details"] = dict(kw["details"])
        rec = cls(**kw)
        if rec.check_id != check_id(rec.claim, rec.check, rec.coords):
            raise ValueError(f"record {rec.check_id!r}: its check_id is not what its claim, check and "
                             f"coordinates make ({check_id(rec.claim, rec.check, rec.coords)!r})")
        if rec.kind == "check" and rec.coords.control != (rec.expect == "fails"):
            raise ValueError(f"record {rec.check_id!r}: control contradicts expect={rec.expect!r}")
        return rec

#: fields of a serialised record (schema 6), in the order they are written.
RECORD_FIELDS = tuple(f.name for f in fields(ClaimRecord))


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
  ``test``, ``order``, ``profile``, ``outcome``, ``xfail_reason``: filled in later.
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
    m, t, expect = checked_criterion(kind, measured, tolerance, comparator, tolerance_source, expect,
                                     judged_by_runs=basins is not None or (per_run and kind != "reported"))
    basin_field = basin_verdict = per_run_data = share = None
    if per_run:
        if kind != "check":
            raise ValueError("per_run judges a check: a reported row has no per-run verdict")
        if comparator == "==":
            raise ValueError("per_run needs a tolerance to judge each run by, not the exact comparator '=='")
        rv = run_inputs("per_run", "a record judged by run takes measured and its interval from the share of "
                         "runs that hold", runs, run_values, basins, (measured, interval, interval_kind, n_seeds, values))
        errs = None if run_stderr is None else to_builtin(run_stderr, _path="run_stderr")
        rule = "control" if expect == "fails" else "every" if every_run else "share"
        share = judge_runs(rv, comparator, t, errs, float(shared_stderr),
                           None if basins is None else basins.labels, None if basins is None else basins.order,
                           rule=rule)
        per_run_data = per_run_field(share, comparator, t, tolerance_source, float(shared_stderr),
                                       [r.run for r in runs], basins)
        m, interval, interval_kind = share.share, share.interval, "clopper-pearson95"
        comparator, t, tolerance_source = ">=", TARGET_SHARE, "project"
        extras = per_run_extras(to_builtin(details or {}, _path="details"), len(runs))
        runs = [RunEntry(run=r.run, seed=r.seed, value=v, stderr=None if errs is None else errs[i], extra=x)
                for i, (r, v, x) in enumerate(zip(runs, rv, extras))]
        run_values = run_stderr = None
    elif basins is not None:
        rv = run_inputs("basins", "a record judged by basin takes measured and its interval from its basins",
                         runs, run_values, basins, (measured, interval, interval_kind, n_seeds, values))
        rf = record_fields(rv, basins, [r.run for r in runs], comparator if kind == "check" else None,
                           t, None if run_stderr is None else to_builtin(run_stderr, _path="run_stderr"))
        m, interval, interval_kind, n_seeds, values = (rf["measured"], rf["interval"], rf["interval_kind"],
                                                       rf["n_seeds"], rf["values"])
        basin_field, basin_verdict = rf["basins"], rf["verdict"]
        if values is not None or len(runs) == 1:
            run_values = None            # one basin: the runs take the seed interval's values
    iv, interval_kind, n_seeds = checked_interval(interval, interval_kind, n_seeds, comparator, m)
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
    elif is_nan(m):
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
        per_run=per_run_data, clipped=clipped, tolerance=t,
        comparator=comparator, tolerance_source=tolerance_source, verdict=verdict,
        holds_at=(None if kind == "reported" or (share is not None and share.rule != "share")
                  else stats.holds_at(m, comparator, iv)),
        decide=None, expect=expect, details=details, note=note)
    if verdict in ("inconclusive", "mixed"):
        rec = replace(rec, decide=decide or (shares_decide_text(share) if share is not None
                                             else stats.decide_text(rec.to_dict())))
    return rec


def _describe(r: ClaimRecord) -> str:
    iv = f" (95 % interval {format_interval(r.interval)}, {r.basis})" if r.interval is not None else ""
    return f"{r.check_id} [{r.paper_ref}]: {r.label} = {format_value(r.measured)}{iv}"


class Record:
    """A recorded check: its :class:`ClaimRecord` (``record``; a serialised one is parsed).

    ``check()`` raises ``AssertionError`` unless the verdict fits the expectation: a
    positive check passes on ``"holds"``, ``"inconclusive"`` or ``"mixed"``, a negative
    control only on ``"fails"``; a reported row has nothing to check.
    """

    def __init__(self, record: ClaimRecord | Mapping):
        self.record = record if isinstance(record, ClaimRecord) else ClaimRecord.from_dict(record)
        self.checked = self.record.kind == "reported"

    verdict = property(lambda self: self.record.verdict)
    expect = property(lambda self: self.record.expect)
    measured = property(lambda self: self.record.measured)
    interval = property(lambda self: self.record.interval)
    holds = property(lambda self: self.record.verdict == "holds")
    inconclusive = property(lambda self: self.record.verdict == "inconclusive")

    def check(self) -> "Record":
        __tracebackhide__ = True
        self.checked = True
        r = self.record
        if r.kind == "reported":
            return self
        crit = format_criterion(r.comparator, r.tolerance)
        if is_nan(r.measured):
            raise AssertionError(f"{_describe(r)}: measured is NaN, the check could not be "
                                 f"evaluated (criterion {crit}, expected {r.expect})")
        if r.verdict == r.expect:
            return self
        if r.expect == "holds":
            if r.verdict in ("inconclusive", "mixed"):
                return self            # passes (a finding); counted and named in the reports
            raise AssertionError(f"{_describe(r)} violates {crit} (verdict fails, expected "
                                 f"holds); details: {r.details}")
        if r.verdict in ("inconclusive", "mixed"):
            raise AssertionError(f"negative control is {r.verdict}: {_describe(r)} "
                                 f"straddles {crit}, so the check does not tell the bad case "
                                 f"apart clearly ({r.decide}); details: {r.details}")
        raise AssertionError(f"negative control unexpectedly holds: {_describe(r)} satisfies "
                             f"{crit} (expected fails), so the check does not tell the bad "
                             f"case apart; details: {r.details}")

    def __repr__(self) -> str:
        r = self.record
        iv = f", interval={format_interval(r.interval)}" if r.interval else ""
        return (f"Record({r.check_id!r}, {r.label!r}, measured={format_value(r.measured)}"
                f"{iv}, {format_criterion(r.comparator, r.tolerance)}, "
                f"verdict={r.verdict!r}, expect={r.expect!r})")


class ClaimRecorder:
    """Records checks on one test item (what the ``claim`` fixture returns).

    ``item`` is a ``pytest.Item`` (or any object with ``nodeid`` and ``user_properties``);
    each :meth:`record` appends ``("claim_record", serialised record)`` to
    ``item.user_properties``, the form in which records cross pytest-xdist.
    """

    def __init__(self, item, profile_name: str | None = None):
        self.item = item
        self.profile_name = profile_name
        self.records: list[Record] = []

    def record(self, **fields) -> Record:
        """Record one check (keywords of :func:`make_record`) and return it; call
        ``.check()`` on the result (a reported row needs none)."""
        rec = make_record(**fields)
        if any(r.record.check_id == rec.check_id for r in self.records):
            raise ValueError(f"check_id {rec.check_id!r} recorded twice in one test: give the "
                             "checks different names or coordinates")
        rec = replace(rec, test=self.item.nodeid, order=len(self.records), profile=self.profile_name)
        self.item.user_properties.append((RECORD_KEY, rec.to_dict()))
        out = Record(rec)
        self.records.append(out)
        return out

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


def duplicate_ids(records: Iterable[ClaimRecord]) -> list[str]:
    """The ``check_id`` s that occur more than once among ``records`` (sorted).

    >>> r = make_record(claim="c", check="x", label="x", paper_ref="p", kind="reported", measured=1)
    >>> duplicate_ids([r, r])
    ['c/x']
    """
    seen, dups = set(), set()
    for r in records:
        (dups if r.check_id in seen else seen).add(r.check_id)
    return sorted(dups)
