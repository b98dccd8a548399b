"""The counts of a run's records per claim and overall, and the lines that say them.

A row with a verdict is a *check*; per claim it counts as ``hold`` (expected to hold and
holds), ``inconclusive`` or ``mixed`` (expected to hold, undecided: passes), ``controls``
(negative controls that fail as expected), ``not_reproduced`` (a known non-reproduction,
xfailed) or ``unexpected``.  The coverage intervals are the positive checks with an
interval; at level 0.95 about (1 - 0.95) x their number miss the true value by chance.

>>> from claims.harness.records import make_record
>>> from dataclasses import replace
>>> rec = make_record(claim="demo", check="err", label="err", paper_ref="eq. 1", measured=0.5,
...                   tolerance=1, comparator="<=", tolerance_source="project")
>>> summary_lines(summarize([replace(rec, outcome="passed")]))["demo"]
'demo: 1 check, 1 holds'
"""
from __future__ import annotations

from typing import Iterable, Mapping

from claims.harness.display import format_criterion, format_interval, format_value
from claims.harness.known import cannot_tell
from claims.harness.records import ClaimRecord
from claims.harness.stats import LEVEL

__all__ = ["summarize", "summary_lines", "interval_lines", "undecided", "inconclusive_lines",
           "inconclusive_summary"]

_BAD_OUTCOMES = ("failed", "error", "xpassed", "unknown")
_COUNTS = ("checks", "hold", "inconclusive", "mixed", "controls", "not_reproduced", "cannot_tell", "unexpected",
           "tests_not_ok", "skipped", "reported", "interval_checks")


def summarize(records: Iterable[ClaimRecord]) -> dict:
    """Counts per claim and overall.

    Per claim: ``checks`` (rows with a verdict); ``hold`` (expected to hold and holds);
    ``inconclusive`` (expected to hold, interval straddles the tolerance: passes);
    ``mixed`` (expected to hold; judged by run, some runs holding and some failing:
    passes, a finding);
    ``controls`` (negative controls that fail as expected); ``not_reproduced`` (verdict
    differs from the expectation, test marked xfail -- in a test that records a check listed in
    its claim's ``known`` for the record's profile, only the listed check itself);
    ``cannot_tell`` (a negative control that is inconclusive,
    test marked xfail, listed the same way with the reason it cannot tell there,
    claims/harness/known.py); ``unexpected`` (any other verdict that differs: a broken
    control -- one that holds, or one nobody listed -- and a failing check that only shares
    a listed check's xfail are never hidden); ``tests_not_ok`` (records whose test failed,
    errored or xpassed); ``skipped``; ``reported`` (descriptive rows, no verdict);
    ``interval_checks`` (positive checks with an interval: the coverage intervals);
    ``ok`` (no unexpected verdict and no failing test).  The total adds ``claims`` and
    ``expected_chance_disagreements`` = (1 - 0.95) x ``interval_checks``.  The claims come in
    the order of claims.specs.CLAIMS (the README's), any other claim after them, sorted.
    """
    from claims.specs import CLAIMS, known_failures    # the registry imports the harness: on call
    known, records = known_failures(), list(records)
    listed = lambda r: r.profile in known.get(r.check_id, {})      # noqa: E731
    # tests whose xfail is a registry listing: a failing record there must be listed itself
    listed_tests = {r.test for r in records if r.test and listed(r)}
    per: dict[str, dict] = {}
    for r in records:
        c = per.setdefault(r.claim, dict.fromkeys(_COUNTS, 0))
        if r.kind == "reported":
            c["reported"] += 1
        else:
            c["checks"] += 1
            # coverage intervals of positive checks: the ones that can miss by chance
            c["interval_checks"] += (r.interval is not None and r.expect == "holds")
            if r.verdict == r.expect:
                c["hold" if r.expect == "holds" else "controls"] += 1
            elif r.expect == "holds" and r.verdict in ("inconclusive", "mixed"):
                c[r.verdict] += 1
            elif r.outcome == "xfailed" and r.expect == "holds" and (listed(r) or r.test not in listed_tests):
                c["not_reproduced"] += 1
            elif cannot_tell(r):
                c["cannot_tell"] += 1
            else:
                c["unexpected"] += 1
        if r.outcome in _BAD_OUTCOMES:
            c["tests_not_ok"] += 1
        elif r.outcome == "skipped":
            c["skipped"] += 1
    for c in per.values():
        c["ok"] = c["unexpected"] == 0 and c["tests_not_ok"] == 0
    total = {k: sum(c[k] for c in per.values()) for k in _COUNTS}
    total["claims"] = len(per)
    total["ok"] = all(c["ok"] for c in per.values())
    total["expected_chance_disagreements"] = round((1 - LEVEL) * total["interval_checks"], 2)
    # the README's order; claims no spec lists after them, sorted
    order = [s.name for s in CLAIMS if s.name in per] + sorted(set(per) - {s.name for s in CLAIMS})
    return {"claims": {c: per[c] for c in order}, "total": total}


def _plural(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"


def _summary_text(c: Mapping) -> str:
    parts = [_plural(c["checks"], "check")]
    if c["hold"]:
        parts.append(f"{c['hold']} hold" if c["hold"] != 1 else "1 holds")
    if c["inconclusive"]:
        parts.append(f"{c['inconclusive']} inconclusive")
    if c.get("mixed"):
        parts.append(f"{c['mixed']} mixed (some trained runs hold, others fail)")
    if c["controls"]:
        parts.append(_plural(c["controls"], "negative control") + " fail as expected"
                     if c["controls"] != 1 else "1 negative control fails as expected")
    if c["not_reproduced"]:
        parts.append(f"{c['not_reproduced']} not reproduced (xfail)")
    if c.get("cannot_tell"):
        parts.append(_plural(c["cannot_tell"], "negative control") + " cannot tell (xfail, reason stated)")
    if c["unexpected"]:
        parts.append(f"{c['unexpected']} UNEXPECTED verdict")
    if c["tests_not_ok"]:
        parts.append(f"{c['tests_not_ok']} in FAILING tests")
    if c["skipped"]:
        parts.append(f"{c['skipped']} skipped")
    if c["reported"]:
        parts.append(_plural(c["reported"], "reported row") + " (no verdict)")
    return ", ".join(parts)


def summary_lines(summary: Mapping) -> dict[str, str]:
    """One line per claim, e.g. ``"ar1-optimum: 9 checks, 5 hold, 2 inconclusive, 2
    negative controls fail as expected"``, plus ``"total"``."""
    lines = {name: f"{name}: {_summary_text(c)}" for name, c in summary["claims"].items()}
    t = summary["total"]
    lines["total"] = (f"{_plural(t['claims'], 'claim')}, {_summary_text(t)} -- "
                      + ("all as expected" if t["ok"] else "NEEDS ATTENTION"))
    return lines


def interval_lines(summary: Mapping) -> list[str]:
    """The interval count and the chance disagreements expected at 95 %."""
    t = summary["total"]
    n = t["interval_checks"]
    return [f"interval checks: {n} with a {LEVEL:.0%} interval; about "
            f"{t['expected_chance_disagreements']:g} (= {1 - LEVEL:.2f} x {n}) expected to "
            f"miss the true value by chance, so a verdict may flip now and then"]


def undecided(records: Iterable[ClaimRecord]) -> list[ClaimRecord]:
    """The undecided checks: inconclusive, and mixed (some trained runs hold and others
    fail; claims/harness/shares.py)."""
    return [r for r in records if r.verdict in ("inconclusive", "mixed")]


def inconclusive_lines(records: Iterable[ClaimRecord]) -> list[str]:
    """Every inconclusive or mixed check by name, with its interval and what would decide it
    (for a share of runs: how many runs would, if the shares stayed)."""
    rows = undecided(records)
    if not rows:
        return ["inconclusive checks: none"]
    controls = sum(r.expect == "fails" for r in rows)
    mixed = sum(r.verdict == "mixed" for r in rows)
    out = [f"inconclusive checks: {len(rows)}" + (f", {mixed} of them mixed" if mixed else "")
           + f" ({len(rows) - controls} positive, passing; "
           f"{controls} negative control(s), failing their test) -- what would decide each:"]
    for r in rows:
        ctl = " NEGATIVE CONTROL" if r.expect == "fails" else ""
        ctl += " (mixed)" if r.verdict == "mixed" else ""
        out.append(f"  - {r.check_id}{ctl}: {r.label}: {format_value(r.measured)}, "
                   f"interval {format_interval(r.interval)} ({r.basis}) against "
                   f"{format_criterion(r.comparator, r.tolerance)}")
        out.append(f"      {r.decide or '-'}")
    return out


def inconclusive_summary(records: Iterable[ClaimRecord]) -> list[dict]:
    """The summary's list of inconclusive checks: id, label and how far from decided."""
    return [{k: getattr(r, k) for k in ("check_id", "claim", "label", "test", "measured", "interval",
                                        "interval_kind", "n_seeds", "comparator", "tolerance", "expect",
                                        "decide")}
            for r in undecided(records)]
