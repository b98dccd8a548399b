"""Claim reports: counts per claim, the terminal table, claims.md and claims.json.

Written by the plugin (claims/plugin.py) at the end of a session with records, see
:func:`write_reports`: ``reports/claims.json`` and ``reports/claims.md``.  In the JSON
file non-finite floats are written as the strings ``"NaN"``, ``"Infinity"``,
``"-Infinity"`` so that the file is strict JSON.  ``python -m claims.compare`` compares
two such JSON files.

>>> from claims.records import make_record
>>> rec = make_record(claim="demo", paper_ref="eq. 1", metric="err", measured=0.5,
...                   tolerance=1, comparator="<=")
>>> summary_lines(summarize([dict(rec, outcome="passed")]))["demo"]
'demo: 1 check, 1 holds'
"""
from __future__ import annotations

import datetime as _dt
import json
import math
import os
from pathlib import Path
from typing import Iterable, Mapping

from claims.collect import sort_records
from claims.records import format_criterion, format_value
from models.files import atomic_write_text

__all__ = ["summarize", "summary_lines", "render_terminal", "render_markdown",
           "report_payload", "write_reports"]


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

