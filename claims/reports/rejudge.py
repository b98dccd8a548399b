r"""Re-judge a published claims report by today's rules, from the per-run values it stores -- no training.

``python -m claims.reports.rejudge PUBLISHED.json --out OUT.json [--splice FRESH.json ...] [--retire CLAIM/CHECK ...]``

A published run (docs/results/) records, for every trained check, each run's value (and,
where it had one, its held-out standard error) and which basin the run is headed for.  When
the rule that turns those values into a verdict changes, the verdicts can be recomputed
from them without retraining a single layer:

* every record of a check family judged by run today (:data:`PER_RUN`) is rebuilt by
  :func:`claims.harness.records.make_record` with ``per_run=True`` from its stored runs -- values,
  standard errors, basin labels (in the order of its ``basins`` field), the shared error of
  a Monte Carlo reference (``kappa_stderr / kappa`` in its details) -- keeping its identity,
  label, details, outcome fields; where the published run stored no standard error for a
  value that has one today (the GD gap, the step size, the spectral shift's ratios) the
  value is judged as stored and the record's ``per_run`` says ``stderr: "not stored"``;
* every interval of a reported row over seeds is clipped to its quantity's range
  (:data:`BOUNDS`);
* ``--splice FRESH.json``: the records of FRESH (a report of today's code) replace those of
  the same check families (claim and check, every coordinate) -- for checks whose
  computation changed and which train nothing, so that they can be recomputed at the
  published profile cheaply; FRESH must be of the published profile;
* ``--retire CLAIM/CHECK`` (or a ``check_id`` pattern with ``*``): the records of a check
  family, or of one variant, that today's claims no longer record (one a spliced report
  replaces under a new name, a control replaced by another) are dropped.

The output says what was done in its ``rejudged`` field (commit, rule, the families rebuilt,
spliced and from which run) and carries the original ``generated``, ``environment`` and
``provenance`` of the trained runs.  Its summary is recomputed.

>>> BOUNDS[("banding", "trained-jaccard")]
(0.0, 1.0)
"""
from __future__ import annotations

import argparse
import fnmatch
import sys
from dataclasses import replace
from pathlib import Path

from claims.harness.basins import BasinSplit
from claims.harness.display import format_criterion
from claims.harness.identity import RunRef
from claims.harness.records import ClaimRecord, make_record
from claims.harness.reportfile import SCHEMA, Report, load_report
from claims.harness.runentries import clip_intervals
from claims.reports.report import make_report, provenance
from claims.specs import known_failures
from theory.jsonvalues import dumps

__all__ = ["PER_RUN", "BOUNDS", "rejudge", "main"]

#: (claim, check) of the families judged by run today, and whether a value that has a held-out
#: standard error today may lack one in a published run
PER_RUN = {
    ("ar1-optimum", "trained-coefficient"): False,
    ("ar1-optimum", "trained-odd-share"): False,
    ("banding", "trained-out-of-class-share"): False,
    ("banding", "trained-odd-share"): False,
    ("gd-equivalence", "trained-gd-gap"): True,
    ("gd-equivalence", "trained-step-size"): True,
    ("kalman-parity", "trained-mse-ratio"): False,
    ("pcg-alignment", "trained-cos1"): False,
    ("depth", "one-layer-stack-over-its-optimum"): False,
    ("spectral-shift", "one-layer-stack-over-its-optimum"): False,
    ("spectral-shift", "gain-outside"): True,
    ("spectral-shift", "cost-inside"): True,
}
#: the range of the quantity of reported rows over seeds whose interval can leave it
BOUNDS = {
    ("banding", "trained-jaccard"): (0.0, 1.0),
    ("banding", "trained-excess-loss"): (0.0, None),
    ("depth", "trained-median-error"): (0.0, None),
    ("spectral-shift", "median-error-ratio"): (0.0, None),
    ("spectral-shift", "one-layer-stack-over-its-optimum"): (0.0, None),
    ("pcg-alignment", "heldout-mse"): (0.0, None),
    ("pcg-alignment", "cos_1-share_above_0.9"): (0.0, 1.0),
    ("pcg-alignment", "cos_3-median_abs"): (0.0, None),
    ("training-sensitivity", "odd-share"): (0.0, None),
}
_COSINES = ("cos_1-mean", "cos_1-median", "cos_2-mean", "cos_2-median", "cos_3-mean", "cos_3-median")
BOUNDS.update({("pcg-alignment", c): (-1.0, 1.0) for c in _COSINES})

def _bounds_for(r: ClaimRecord) -> tuple | None:
    return BOUNDS.get((r.claim, r.check))


def _coords_kw(rec: ClaimRecord) -> dict:
    c = rec.coords
    return {"setting": c.setting, "s": c.s, "T": c.T, "layers": c.layers, "radius": c.radius, "seed": c.seed,
            "variant": c.variant, "control": c.control}


#: the families whose per-run value is relative to kappa, a Monte Carlo reference in setting d
#: (its error is shared by every run); the odd share and the gap are not
_AGAINST_KAPPA = {("ar1-optimum", "trained-coefficient"), ("gd-equivalence", "trained-step-size")}


#: the families whose runs are a premise or a null twin: every run must hold (claims.harness.shares, rule "every")
_EVERY_RUN = {("depth", "one-layer-stack-over-its-optimum"), ("spectral-shift", "one-layer-stack-over-its-optimum")}


def _shared_stderr(r: ClaimRecord, kappa_refs: dict) -> float:
    """The error every run of ``r`` shares: the one it was judged with, else kappa's relative
    Monte Carlo error of its setting (from the record's details, else from the report's own
    trained-coefficient record of that setting, which stores kappa and its error)."""
    if r.per_run and r.per_run.get("shared_stderr") is not None:
        return float(r.per_run["shared_stderr"])
    if _family(r) not in _AGAINST_KAPPA:
        return 0.0
    d = r.details
    if not (d.get("kappa_stderr") and d.get("kappa")):
        d = kappa_refs.get(r.coords.setting, {})
    return float(d["kappa_stderr"]) / float(d["kappa"]) if d.get("kappa_stderr") and d.get("kappa") else 0.0


def _label(label: str, comparator: str, tolerance) -> str:
    """Today's wording of a pooled record's label: the share of runs that meet the criterion.

    >>> _label("mean_seeds (b2 W11 + b1 W21 - kappa) / kappa (signed)", "abs<=", 0.01)
    'share of runs with (b2 W11 + b1 W21 - kappa) / kappa (signed) abs<= 0.01'
    """
    if label.startswith("share of runs") or label.startswith("share of pairs"):
        return label
    core = label.removeprefix("mean_seeds ").replace(", by basin", "").replace(" by basin", "").strip()
    return f"share of runs with {core} {format_criterion(comparator, tolerance)}"


def _rejudge_record(rec: ClaimRecord, kappa_refs: dict) -> ClaimRecord:
    comparator, tolerance, source = rec.criterion   # a record judged before by pooling: its own
    runs = [RunRef(e.run, e.seed) for e in rec.runs]
    values = [e.value for e in rec.runs]
    errs = [e.stderr for e in rec.runs]
    labels = [e.extra.get("basin") for e in rec.runs]
    split = None
    if all(labels) and rec.kind == "check" and rec.expect != "fails":
        order = ([b["basin"] for b in (rec.per_run or {}).get("basins") or []]
                 or [b["basin"] for b in (rec.basins or {}).get("verdicts", [])] or list(dict.fromkeys(labels)))
        order += [b for b in dict.fromkeys(labels) if b not in order]
        split = BasinSplit(tuple(labels), tuple(order))
    missing = PER_RUN[(rec.claim, rec.check)] and all(e is None for e in errs)
    new = make_record(claim=rec.claim, check=rec.check, label=_label(rec.label, comparator, tolerance),
                      paper_ref=rec.paper_ref,
                      **_coords_kw(rec), runs=runs, run_values=values,
                      run_stderr=None if all(e is None for e in errs) else errs,
                      shared_stderr=_shared_stderr(rec, kappa_refs), per_run=True, basins=split,
                      every_run=_family(rec) in _EVERY_RUN and rec.expect != "fails", tolerance=tolerance,
                      comparator=comparator, tolerance_source=source, expect=rec.expect, details=dict(rec.details),
                      note=rec.note)
    # each run keeps the extras it was published with (and gains its verdict)
    entries = []
    for e_new, e_old in zip(new.runs, rec.runs):
        old = {k: v for k, v in e_old.extra.items() if k not in ("verdict", "lo", "hi")}
        entries.append(replace(e_new, extra={**old, **{k: v for k, v in e_new.extra.items()
                                                          if k in ("verdict", "lo", "hi", "basin")}}))
    per_run = {**new.per_run, "stderr": "not stored"} if missing else new.per_run
    new = replace(new, runs=entries, per_run=per_run, test=rec.test, order=rec.order, profile=rec.profile)
    outcome, reason = _outcome(new, rec.profile)
    return replace(new, outcome=outcome, xfail_reason=reason)


def _fits(r: ClaimRecord) -> bool:
    """Whether a record's verdict lets its test pass: its expectation, or an undecided
    positive check (a reported row always does)."""
    return (r.kind != "check" or r.verdict == r.expect
            or (r.expect == "holds" and r.verdict in ("inconclusive", "mixed")))


def _outcome(r: ClaimRecord, profile: str | None) -> tuple:
    """(outcome, xfail reason) the record's test would have today, were it the test's only
    record: :func:`_settle_tests` then gives every record of one test that test's outcome."""
    return _test_outcome([r], profile)


def _test_outcome(records: list, profile: str | None) -> tuple:
    """(outcome, xfail reason) of a test that records ``records``, as pytest settles it: a
    test that records a check (or a control of it) the registry of known non-reproductions
    (claims.specs.known_failures) lists for the profile carries a strict xfail, so it is
    ``xfailed`` when any record does not fit (:func:`_fits`) and a failing XPASS otherwise;
    any other test passes when every record fits and fails otherwise."""
    known = known_failures()
    why = next((known[r.check_id][profile] for r in records if profile in known.get(r.check_id, {})), None)
    ok = all(_fits(r) for r in records)
    if why is not None:
        return ("xfailed", f"{profile} profile: {why}") if not ok else ("failed", None)
    return ("passed" if ok else "failed"), None


def _settle_tests(records: list, tests: set) -> list:
    """``records`` with every record of each test in ``tests`` given that test's outcome."""
    by_test: dict = {}
    for r in records:
        if r.test in tests:
            by_test.setdefault(r.test, []).append(r)
    settled = {t: _test_outcome(recs, recs[0].profile) for t, recs in by_test.items()}
    return [replace(r, outcome=settled[r.test][0], xfail_reason=settled[r.test][1]) if r.test in settled else r
            for r in records]


def _clip_record(r: ClaimRecord) -> ClaimRecord:
    iv, basins, clipped = clip_intervals(r.interval, r.basins or None, _bounds_for(r))
    return replace(r, interval=iv, basins=basins if r.basins else r.basins, clipped=clipped)


def _family(r: ClaimRecord) -> tuple:
    return r.claim, r.check


def _retired(r: ClaimRecord, patterns) -> bool:
    """Whether a record is retired: its family ``claim/check`` is named, or its ``check_id``
    matches a pattern (``fnmatch``: ``spectral-shift/*/narrower-training-r=0.5/control``)."""
    return any("/".join(_family(r)) == p or fnmatch.fnmatchcase(r.check_id, p) for p in patterns)


def rejudge(published: Report, fresh: list[Report] = (), retire: tuple = ()) -> Report:
    """The published report re-judged (module doc); ``fresh``: reports whose records replace
    those of the same check families; ``retire``: ``"claim/check"`` families to drop."""
    records, rebuilt, spliced = [], set(), {}
    retire = set(retire)
    unknown = {p for p in retire if not any(_retired(r, (p,)) for r in published.records)}
    if unknown:
        raise ValueError(f"--retire matches no record of the published report: {sorted(unknown)}")
    kappa_refs = {r.coords.setting: r.details for r in published.records
                  if (r.claim, r.check) == ("ar1-optimum", "trained-coefficient")}
    replace_by = {}
    for f in fresh:
        if f.profile_name != published.profile_name:
            raise ValueError(f"a spliced report must be of the published profile "
                             f"{published.profile_name!r}, got {f.profile_name!r}")
        for r in f.records:
            replace_by.setdefault(_family(r), []).append(r)
            spliced[_family(r)] = (f.provenance or {}).get("commit")
    done = set()
    for r in published.records:
        fam = _family(r)
        if _retired(r, retire):
            continue
        if fam in replace_by:
            if fam not in done:
                records += replace_by[fam]
                done.add(fam)
            continue
        if fam in PER_RUN and r.kind == "check" and r.runs:
            r = _rejudge_record(r, kappa_refs)
            rebuilt.add(fam)
        elif _bounds_for(r) and r.kind == "reported":
            r = _clip_record(r)
        records.append(r)
    for fam, recs in replace_by.items():          # families the published run did not have
        if fam not in done:
            records += recs
    records = _settle_tests(records, {r.test for r in records if _family(r) in rebuilt and r.test})
    out = make_report(records, published.profile, generated=published.generated, run=published.run,
                      environment=published.environment, provenance=published.provenance)
    return replace(out, rejudged={"schema": SCHEMA, "by": provenance(), "rule": "verdicts by run (docs/settings.md)",
                                  "rebuilt": sorted("/".join(f) for f in rebuilt),
                                  "spliced": {"/".join(f): c for f, c in sorted(spliced.items())},
                                  "retired": sorted(retire)})


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m claims.reports.rejudge", description=__doc__.splitlines()[0])
    p.add_argument("published")
    p.add_argument("--out", required=True)
    p.add_argument("--splice", action="append", default=[], metavar="FRESH.json")
    p.add_argument("--retire", action="append", default=[], metavar="CLAIM/CHECK")
    a = p.parse_args(argv)
    try:
        out = rejudge(load_report(a.published), [load_report(f) for f in a.splice], tuple(a.retire))
    except (OSError, ValueError, KeyError) as exc:
        print(f"python -m claims.reports.rejudge: error: {exc}", file=sys.stderr)
        return 2
    Path(a.out).write_text(dumps(out.to_dict(), indent=2) + "\n", encoding="utf-8")
    print(f"{a.out}: {len(out.records)} records; rebuilt {', '.join(out.rejudged['rebuilt'])}; "
          f"spliced {', '.join(out.rejudged['spliced']) or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
