r"""Compare two claims reports (claims.json): do two runs of the claims agree?

Usage::

    python -m claims.reports.compare BEFORE.json AFTER.json [--rtol 1e-14]
        [--ignore-keys generated,test,environment,provenance] [--ignore-profile-keys mc_systems,settings_trained]
        [--key check_id] [--verbose] [--verdicts]

``--verdicts`` compares only what the reports conclude (each matched record's kind,
verdict, expectation and test outcome, and the unmatched records); ``.ci/run`` uses it
to compare a fresh quick run with the published ``docs/results/quick.json``.

Records are matched by their ``check_id`` (claims/harness/records.py: the claim, the check's name
and its coordinates), which survives a reworded label, a renamed parametrization id or a
moved test file.  ``--key`` names other record fields to match by (``function`` is the
test's function name, from the node id ``claims/test_x.py::test_f[a-1]``); records that
share a key are matched in report order, i.e. by node id and then by their order within
the test.  Records without a partner are reported and make the comparison fail.

Each file is loaded by claims.harness.reportfile.load_report: its records parsed into
ClaimRecord s (a renamed or missing field fails there, naming it); a report of a retired
schema (3) is unusable input.

Two matched records must agree on every key except those of ``--ignore-keys`` (at any
depth: in the report, in a record, in its ``details``; default: the timestamp
``generated``, the node id ``test``, the report's ``environment``, which holds the
wall time, and its ``provenance``, which holds the commit and the command line):

- floats (measured values, details): bit-identical, or within ``--rtol`` relative,
  ``|a - b| <= rtol * max(|a|, |b|)`` (default 1e-14);
- everything else -- ints, strings (exact rationals are written as ``"p/q"``, non-finite
  floats as ``"NaN"`` / ``"Infinity"``), bools, ``None``, the verdict, the expectation,
  the outcome -- identical, with the same JSON type (``1`` and ``1.0`` differ).

The report's profile is compared without ``--ignore-profile-keys`` (knobs that one side
may no longer have; default ``mc_systems,settings_trained``), and the report's summary
counts must be identical.

Output: the number of records; how many are bit-identical, how many agree only within
rtol (with the largest relative difference and where), how many differ (each with the
differing fields, before -> after); the unmatched records.  Exit status 0 when
everything matches, 1 when something differs, 2 when an input is unusable (one line on
stderr naming the file and the problem).

>>> from dataclasses import replace
>>> from claims.harness.records import make_record
>>> from claims.harness.reportfile import Report
>>> r = make_record(claim="c", check="m", setting="a", label="m", paper_ref="p", measured=0.1,
...                 tolerance=1, comparator="<=", tolerance_source="project")
>>> a = Report(records=(replace(r, test="t.py::f[x]"),))
>>> b = Report(records=(replace(r, label="reworded", test="u.py::f[y]", measured=0.1 + 1e-17),))
>>> compare_reports(a, b, ignore_keys=("test", "label")).ok
True
>>> compare_verdicts(a, b)          # --verdicts: the label is no part of what a run concludes
[]
"""
from __future__ import annotations

import argparse
import math
import struct
import sys
from dataclasses import dataclass, field
from typing import Sequence

from claims.harness.records import RECORD_FIELDS, ClaimRecord
from claims.harness.reportfile import Report, load_report

__all__ = ["DEFAULT_IGNORE_KEYS", "DEFAULT_IGNORE_PROFILE_KEYS", "DEFAULT_KEY", "Comparison",
           "compare_reports", "compare_verdicts", "main"]

DEFAULT_IGNORE_KEYS = ("generated", "test", "environment", "provenance")
DEFAULT_IGNORE_PROFILE_KEYS = ("mc_systems", "settings_trained")
DEFAULT_KEY = ("check_id",)
DEFAULT_RTOL = 1e-14


def function_name(nodeid: str | None) -> str | None:
    """``"claims/test_x.py::test_f[a-1]"`` -> ``"test_f"`` (``None`` stays ``None``)."""
    if nodeid is None:
        return None
    return str(nodeid).rsplit("::", 1)[-1].split("[", 1)[0]


def record_key(r: ClaimRecord, fields: Sequence[str]) -> tuple:
    """The values of ``fields`` of ``r`` (``function``: its test's function name; a name that is no
    field of a record: None)."""
    return tuple(function_name(r.test) if f == "function" else getattr(r, f) if f in RECORD_FIELDS else None
                 for f in fields)


def _bits(x: float) -> bytes:
    return struct.pack("<d", x)


@dataclass
class _Diff:
    """What comparing two values found: float rel. differences within rtol, mismatches."""

    rtol: float
    ignore: frozenset
    within: list = field(default_factory=list)      # (path, rel)
    differ: list = field(default_factory=list)      # (path, before, after)

    def values(self, a, b, path: str) -> None:
        if isinstance(a, dict) and isinstance(b, dict):
            for k in sorted(set(a) | set(b), key=str):
                if k in self.ignore:
                    continue
                sub = f"{path}.{k}" if path else str(k)
                if k not in a or k not in b:
                    self.differ.append((sub, a.get(k, "<missing>"), b.get(k, "<missing>")))
                else:
                    self.values(a[k], b[k], sub)
        elif isinstance(a, list) and isinstance(b, list):
            if len(a) != len(b):
                self.differ.append((f"{path} (length)", len(a), len(b)))
            for i, (x, y) in enumerate(zip(a, b)):
                self.values(x, y, f"{path}[{i}]")
        elif type(a) is float and type(b) is float:
            if _bits(a) == _bits(b):
                return
            scale = max(abs(a), abs(b))
            rel = abs(a - b) / scale if scale > 0 else 0.0
            if math.isfinite(rel) and rel <= self.rtol:
                self.within.append((path, rel))
            else:
                self.differ.append((path, a, b))
        elif type(a) is not type(b) or a != b:
            self.differ.append((path, a, b))


@dataclass
class Comparison:
    """The result of :func:`compare_reports`; ``ok`` when everything matches."""

    n_before: int
    n_after: int
    key: tuple
    rtol: float
    identical: list = field(default_factory=list)   # keys
    within: list = field(default_factory=list)      # (key, [(path, rel)])
    differing: list = field(default_factory=list)   # (key, [(path, before, after)])
    only_before: list = field(default_factory=list)
    only_after: list = field(default_factory=list)
    report_diffs: list = field(default_factory=list)  # (path, before, after) outside records

    @property
    def ok(self) -> bool:
        return not (self.differing or self.only_before or self.only_after or self.report_diffs)

    def max_within(self):
        """(rel, key, path) of the largest relative difference within rtol, or None."""
        cands = [(rel, k, p) for k, items in self.within for p, rel in items]
        return max(cands, key=lambda c: c[0]) if cands else None


def _keyed(records: Sequence[ClaimRecord], fields: Sequence[str]) -> dict:
    """Records by key; records sharing a key get an occurrence index in report order."""
    order = sorted(records, key=lambda r: (str(r.test or ""), r.order or 0))
    out, seen = {}, {}
    for r in order:
        k = record_key(r, fields)
        n = seen[k] = seen.get(k, -1) + 1
        out[k + ((f"#{n}",) if n else ())] = r
    return out


def compare_reports(before: Report, after: Report, *, rtol: float = DEFAULT_RTOL,
                    ignore_keys: Sequence[str] = DEFAULT_IGNORE_KEYS,
                    ignore_profile_keys: Sequence[str] = DEFAULT_IGNORE_PROFILE_KEYS,
                    key: Sequence[str] = DEFAULT_KEY) -> Comparison:
    """Compare two parsed reports (see the module doc for the rules)."""
    ignore = frozenset(ignore_keys)
    res = Comparison(len(before.records), len(after.records), tuple(key), rtol)
    kb, ka = _keyed(before.records, key), _keyed(after.records, key)
    res.only_before = [k for k in kb if k not in ka]
    res.only_after = [k for k in ka if k not in kb]
    for k in kb:
        if k not in ka:
            continue
        d = _Diff(rtol, ignore)
        d.values(kb[k].to_dict(), ka[k].to_dict(), "")
        if d.differ:
            res.differing.append((k, d.differ))
        elif d.within:
            res.within.append((k, d.within))
        else:
            res.identical.append(k)
    # the rest of the report: profile (without removed knobs), summary, schema, ...
    rest = _Diff(rtol, ignore | {"records"})
    strip = frozenset(ignore_profile_keys)

    def without_knobs(report: Report):
        out = report.to_dict()
        if isinstance(out.get("profile"), dict):
            out["profile"] = {k: v for k, v in out["profile"].items() if k not in strip}
        return out

    rest.values(without_knobs(before), without_knobs(after), "")
    res.report_diffs = rest.differ          # floats within rtol there are a match too
    return res


#: what a verdict comparison looks at in each matched record.
VERDICT_FIELDS = ("kind", "verdict", "expect", "outcome")


def compare_verdicts(before: Report, after: Report, *, key: Sequence[str] = DEFAULT_KEY) -> list[str]:
    """What two reports conclude differently: one line per matched record whose verdict,
    expectation, kind or test outcome differs, and per record without a partner.  Numbers
    are not compared (``--verdicts``: a change in what the suite concludes, not in a digit)."""
    kb, ka = _keyed(before.records, key), _keyed(after.records, key)
    out = [f"only in BEFORE: {_name(k)}" for k in kb if k not in ka]
    out += [f"only in AFTER:  {_name(k)}" for k in ka if k not in kb]
    for k in kb:
        if k in ka:
            diff = [f"{f} {getattr(kb[k], f)!r} -> {getattr(ka[k], f)!r}" for f in VERDICT_FIELDS
                    if getattr(kb[k], f) != getattr(ka[k], f)]
            if diff:
                out.append(f"DIFFERS: {_name(k)}: " + "; ".join(diff))
    return out


def _name(k: tuple) -> str:
    return " / ".join("-" if v is None else str(v) for v in k)


def _short(v) -> str:
    s = repr(v)
    return s if len(s) <= 120 else s[:117] + "..."


def format_comparison(res: Comparison, verbose: bool = False) -> list[str]:
    """The printed summary (see the module doc)."""
    out = [f"records: {res.n_before} before, {res.n_after} after; matched "
           f"{len(res.identical) + len(res.within) + len(res.differing)} by "
           f"({', '.join(res.key)})",
           f"  bit-identical:      {len(res.identical)}"]
    top = res.max_within()
    line = f"  {'within rtol ' + format(res.rtol, 'g') + ':':<19} {len(res.within)}"
    if top is not None:
        line += f" (max rel diff {top[0]:.3g} in {_name(top[1])}: {top[2]})"
    out.append(line)
    out.append(f"  differing:          {len(res.differing)}")
    if verbose:
        out += [f"    identical: {_name(k)}" for k in res.identical]
    for k, items in res.within:
        worst = max(items, key=lambda it: it[1])
        out.append(f"    within rtol: {_name(k)}: {len(items)} float(s), max rel diff "
                   f"{worst[1]:.3g} ({worst[0]})")
        if verbose:
            out += [f"        {p}: rel diff {rel:.3g}" for p, rel in items]
    for k, items in res.differing:
        out.append(f"    DIFFERS: {_name(k)}")
        out += [f"        {p}: {_short(a)} -> {_short(b)}" for p, a, b in items]
    out.append(f"unmatched: {len(res.only_before)} only in BEFORE, "
               f"{len(res.only_after)} only in AFTER")
    out += [f"    only in BEFORE: {_name(k)}" for k in res.only_before]
    out += [f"    only in AFTER:  {_name(k)}" for k in res.only_after]
    if res.report_diffs:
        out.append(f"report (profile, summary, ...): {len(res.report_diffs)} difference(s)")
        out += [f"    {p}: {_short(a)} -> {_short(b)}" for p, a, b in res.report_diffs]
    else:
        out.append("report (profile, summary, ...): identical")
    out.append("RESULT: " + ("MATCH" if res.ok else "DIFFERENT"))
    return out


def _csv(text: str) -> tuple[str, ...]:
    return tuple(s.strip() for s in text.split(",") if s.strip())


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m claims.reports.compare",
        description="Compare two claims.json reports; exit 0 if they match, 1 if not, "
                    "2 for unusable input.")
    p.add_argument("before", metavar="BEFORE.json")
    p.add_argument("after", metavar="AFTER.json")
    p.add_argument("--rtol", type=float, default=DEFAULT_RTOL,
                   help=f"relative tolerance on floats (default {DEFAULT_RTOL:g})")
    p.add_argument("--ignore-keys", type=_csv, default=DEFAULT_IGNORE_KEYS,
                   help="comma-separated keys ignored at any depth (default: "
                        f"{','.join(DEFAULT_IGNORE_KEYS)})")
    p.add_argument("--ignore-profile-keys", type=_csv, default=DEFAULT_IGNORE_PROFILE_KEYS,
                   help="comma-separated profile knobs ignored (default: "
                        f"{','.join(DEFAULT_IGNORE_PROFILE_KEYS)})")
    p.add_argument("--key", type=_csv, default=DEFAULT_KEY,
                   help="comma-separated record fields that match records ('function' = "
                        f"test function name; default: {','.join(DEFAULT_KEY)})")
    p.add_argument("-v", "--verbose", action="store_true", help="list every record")
    p.add_argument("--verdicts", action="store_true",
                   help="compare only what the reports conclude: each matched record's kind, "
                        "verdict, expectation and outcome, and the unmatched records")
    args = p.parse_args(argv)
    if not (args.rtol >= 0 and math.isfinite(args.rtol)):
        print(f"claims.reports.compare: --rtol must be a finite number >= 0, got {args.rtol}",
              file=sys.stderr)
        return 2
    if not args.key:
        print("claims.reports.compare: --key needs at least one field", file=sys.stderr)
        return 2
    try:
        before, after = load_report(args.before), load_report(args.after)
    except ValueError as exc:
        print(f"claims.reports.compare: {exc}", file=sys.stderr)
        return 2
    if args.verdicts:
        lines = compare_verdicts(before, after, key=args.key)
        print("\n".join([f"records: {len(before.records)} before, {len(after.records)} after"]
                        + lines + ["RESULT: " + ("SAME VERDICTS" if not lines else
                                                 f"VERDICTS DIFFER ({len(lines)})")]))
        return 0 if not lines else 1
    res = compare_reports(before, after, rtol=args.rtol, ignore_keys=args.ignore_keys,
                          ignore_profile_keys=args.ignore_profile_keys, key=args.key)
    print("\n".join(format_comparison(res, args.verbose)))
    return 0 if res.ok else 1


if __name__ == "__main__":
    sys.exit(main())
