"""Claim reports: counts per claim, the terminal table, claims.md and claims.json.

Written by the plugin (claims/harness/plugin.py) at the end of a session with records, see
:func:`write_reports`: ``reports/claims.json`` and ``reports/claims.md``.  Each row shows
the measured value, its 95 % interval and what the interval rests on (``t, n seeds``,
``MC 1.96 SE`` or ``exact``), ``holds at`` (the tightest tolerance that would hold), the
criterion and whose tolerance it is, the verdict and the expectation.  After the table:
the number of interval checks with the number of chance disagreements expected at 95 %
(0.05 per interval), and every inconclusive check by name with what would decide it
(claims/harness/stats.py).  In the JSON file non-finite floats are written as the strings
``"NaN"``, ``"Infinity"``, ``"-Infinity"`` so that the file is strict JSON (the project's
one policy, theory/jsonvalues.py).
``python -m claims.reports.compare`` compares two such JSON files.

>>> from claims.harness.records import make_record
>>> rec = make_record(claim="demo", check="err", label="err", paper_ref="eq. 1", measured=0.5,
...                   tolerance=1, comparator="<=", tolerance_source="project")
>>> summary_lines(summarize([dict(rec.to_dict(), outcome="passed")]))["demo"]
'demo: 1 check, 1 holds'
"""
from __future__ import annotations

import datetime as _dt
from html import escape as html_escape
import os
import platform
import subprocess
import sys
from pathlib import Path
from typing import Iterable, Mapping

from claims.harness.collect import sort_records
from claims.reports.figures import render_figures
from claims.reports.html import render_html
from claims.harness.display import format_basis, format_criterion, format_interval, format_per_run, format_value
from claims.harness.identity import Coords
from claims.harness.stats import LEVEL
from models.files import atomic_write_text
from theory.jsonvalues import dumps

__all__ = ["SCHEMA", "inconclusive_summary", "summarize", "summary_lines", "interval_lines", "inconclusive_lines",
           "render_terminal", "render_markdown", "report_payload", "write_reports", "render_report",
           "environment"]


#: the version of ``claims.json`` this module writes (5: records with ``check_id``, ``coords``,
#: ``label``, per-run entries and, for runs headed for different stationary points, the
#: ``basins`` field and the verdict ``mixed``; 6: records judged by run, with the ``per_run``
#: field, and ``clipped`` intervals; docs/results/README.md).  A schema 4 or 5 report reads as
#: 6 (its records have no ``basins``, ``per_run`` or ``clipped``); claims/reports/legacy.py reads 3.
SCHEMA = 6

# --------------------------------------------------------------------------- summaries

_BAD_OUTCOMES = ("failed", "error", "xpassed", "unknown")
_COUNTS = ("checks", "hold", "inconclusive", "mixed", "controls", "not_reproduced", "unexpected",
           "tests_not_ok", "skipped", "reported", "interval_checks")


def summarize(records: Iterable[Mapping]) -> dict:
    """Counts per claim and overall.

    Per claim: ``checks`` (rows with a verdict); ``hold`` (expected to hold and holds);
    ``inconclusive`` (expected to hold, interval straddles the tolerance: passes);
    ``mixed`` (expected to hold; judged by run, some runs holding and some failing:
    passes, a finding);
    ``controls`` (negative controls that fail as expected); ``not_reproduced`` (verdict
    differs from the expectation, test marked xfail); ``unexpected`` (verdict differs,
    not marked xfail -- and any negative control that does not fail, xfail or not: a
    broken control is never hidden); ``tests_not_ok`` (records whose test failed,
    errored or xpassed); ``skipped``; ``reported`` (descriptive rows, no verdict);
    ``interval_checks`` (positive checks with an interval: the coverage intervals);
    ``ok`` (no unexpected verdict and no failing test).  The total adds ``claims`` and
    ``expected_chance_disagreements`` = (1 - 0.95) x ``interval_checks``.
    """
    per: dict[str, dict] = {}
    for r in records:
        c = per.setdefault(r["claim"], dict.fromkeys(_COUNTS, 0))
        if r.get("kind") == "reported":
            c["reported"] += 1
        else:
            c["checks"] += 1
            # coverage intervals of positive checks: the ones that can miss by chance
            c["interval_checks"] += (r.get("interval") is not None and r["expect"] == "holds")
            if r["verdict"] == r["expect"]:
                c["hold" if r["expect"] == "holds" else "controls"] += 1
            elif r["expect"] == "holds" and r["verdict"] in ("inconclusive", "mixed"):
                c[r["verdict"]] += 1
            elif r.get("outcome") == "xfailed" and r["expect"] == "holds":
                c["not_reproduced"] += 1
            else:
                c["unexpected"] += 1
        if r.get("outcome") in _BAD_OUTCOMES:
            c["tests_not_ok"] += 1
        elif r.get("outcome") == "skipped":
            c["skipped"] += 1
    for c in per.values():
        c["ok"] = c["unexpected"] == 0 and c["tests_not_ok"] == 0
    total = {k: sum(c[k] for c in per.values()) for k in _COUNTS}
    total["claims"] = len(per)
    total["ok"] = all(c["ok"] for c in per.values())
    total["expected_chance_disagreements"] = round((1 - LEVEL) * total["interval_checks"], 2)
    return {"claims": dict(sorted(per.items())), "total": total}


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


def _where(r: Mapping) -> str:
    return r["check_id"]


def _coords(r: Mapping) -> str:
    """The coordinates as the reports show them (claims/harness/records.py, ``Coords.where``)."""
    return Coords.from_dict(r.get("coords") or {}).where()


def _inconclusive(records: Iterable[Mapping]) -> list[Mapping]:
    """The undecided checks: inconclusive, and mixed (some trained runs hold and others
    fail; claims/harness/shares.py)."""
    return [r for r in records if r.get("verdict") in ("inconclusive", "mixed")]


def inconclusive_lines(records: Iterable[Mapping]) -> list[str]:
    """Every inconclusive or mixed check by name, with its interval and what would decide it
    (for a share of runs: how many runs would, if the shares stayed)."""
    rows = _inconclusive(records)
    if not rows:
        return ["inconclusive checks: none"]
    controls = sum(r.get("expect") == "fails" for r in rows)
    mixed = sum(r.get("verdict") == "mixed" for r in rows)
    out = [f"inconclusive checks: {len(rows)}" + (f", {mixed} of them mixed" if mixed else "")
           + f" ({len(rows) - controls} positive, passing; "
           f"{controls} negative control(s), failing their test) -- what would decide each:"]
    for r in rows:
        ctl = " NEGATIVE CONTROL" if r.get("expect") == "fails" else ""
        ctl += " (mixed)" if r.get("verdict") == "mixed" else ""
        out.append(f"  - {_where(r)}{ctl}: {r['label']}: {format_value(r['measured'])}, "
                   f"interval {format_interval(r['interval'])} ({format_basis(r)}) against "
                   f"{format_criterion(r['comparator'], r['tolerance'])}")
        out.append(f"      {r.get('decide') or '-'}")
    return out


# --------------------------------------------------------------------------- rendering

_COLUMNS = ("check_id", "paper ref", "where", "label", "measured", "95% interval", "basis",
            "holds at", "criterion", "tol. by", "verdict", "expected", "outcome")
_MAX_WIDTH = {"paper ref": 34, "label": 64, "check_id": 56}


def _row(r: Mapping) -> list[str]:
    return [r["check_id"], r["paper_ref"], _coords(r), r["label"],
            format_value(r["measured"]), format_interval(r.get("interval")), format_basis(r),
            format_value(r.get("holds_at")), format_criterion(r["comparator"], r["tolerance"])
            + (f"; {format_per_run(r)}" if r.get("per_run") else ""),
            r.get("tolerance_source") or "-", r["verdict"], r.get("expect") or "-",
            r.get("outcome") or "-"]


def _clip(s: str, width: int) -> str:
    return s if len(s) <= width else s[: width - 3] + "..."


def render_terminal(records: list[Mapping], summary: Mapping | None = None) -> list[str]:
    """Plain-text table lines, grouped by claim, a summary line after each group, then
    the interval count and the inconclusive checks."""
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
            if r.get("xfail_reason"):
                notes.append(f"     xfail {r['check_id']}: {r['xfail_reason']}")
            if r.get("note"):
                notes.append(f"     note  {r['check_id']}: {r['note']}")
            i += 1
        out.append(f"  -> {lines_by_claim[name]}")
        out += notes
        out.append("")
    out += interval_lines(summary) + inconclusive_lines(records) + [""]
    out.append(lines_by_claim["total"])
    return out


def _md(s: str) -> str:
    return str(s).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def render_markdown(records: list[Mapping], profile: Mapping | None = None,
                    generated: str | None = None, summary: Mapping | None = None,
                    run: Mapping | None = None, figures: Iterable = (),
                    environment: Mapping | None = None) -> str:
    """A Markdown report: totals, intervals, inconclusive checks, the figures (``(title,
    relative path)`` pairs), then one section (summary line + table) per claim."""
    summary = summary or summarize(records)
    lines_by_claim = summary_lines(summary)
    out = ["# Claims report", ""]
    if profile:
        out.append(f"- profile: `{profile.get('name')}` -- {profile.get('description', '')}")
    if run:
        out.append("- run: " + ", ".join(f"{k} = {v}" for k, v in run.items()))
    if generated:
        out.append(f"- generated: {generated}")
    if environment:
        out.append("- environment: " + ", ".join(f"{k} {v}" for k, v in environment.items() if v is not None))
    out += [f"- summary: {lines_by_claim['total']}",
            f"- {interval_lines(summary)[0]}", ""]
    inc = inconclusive_lines(records)
    out += ["## Inconclusive checks", "", _md(inc[0]), ""]
    for r in _inconclusive(records):
        ctl = " (NEGATIVE CONTROL: fails its test)" if r.get("expect") == "fails" else ""
        out.append(f"- `{_md(_where(r))}`{ctl}: {_md(r['label'])} = "
                   f"{_md(format_value(r['measured']))}, interval "
                   f"{_md(format_interval(r['interval']))} ({_md(format_basis(r))}) against "
                   f"{_md(format_criterion(r['comparator'], r['tolerance']))}; "
                   f"{_md(r.get('decide') or '-')}")
    out.append("")
    figures = list(figures)
    if figures:
        out += ["## Figures", ""] + [f"- [{_md(title)}]({Path(rel).as_posix()})" for title, rel in figures] + [""]
    cols = _COLUMNS + ("test",)
    for name in summary["claims"]:
        recs = [r for r in records if r["claim"] == name]
        out += [f"## {name}", "", lines_by_claim[name], "",
                "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
        notes = []
        for r in recs:
            cells = _row(r) + [f"`{r.get('test') or '-'}`"]
            out.append("| " + " | ".join(_md(c) for c in cells) + " |")
            if r.get("xfail_reason"):
                notes.append(f"- `{r['check_id']}` ({_md(r['label'])}): xfail -- "
                             f"{_md(r['xfail_reason'])}")
            if r.get("note"):
                notes.append(f"- `{r['check_id']}` ({_md(r['label'])}): {_md(r['note'])}")
        out.append("")
        if notes:
            out += ["Notes:", ""] + notes + [""]
    return "\n".join(out).rstrip("\n") + "\n"


def _cpu_model() -> str | None:
    """The CPU's model name with its family and model numbers (``/proc/cpuinfo`` on Linux;
    a virtual machine may report only a generic name), else ``platform.processor()``."""
    fields = {}
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                key, _, value = line.partition(":")
                key = key.strip()
                if key in ("model name", "cpu family", "model") and key not in fields:
                    fields[key] = value.strip()
                if not line.strip() and fields:
                    break
    except OSError:
        pass
    if "model name" in fields:
        return (f"{fields['model name']} (family {fields.get('cpu family', '?')}, "
                f"model {fields.get('model', '?')})")
    return platform.processor() or None


def environment(wall_seconds: float | None = None) -> dict:
    """Where and with what a run ran: Python, platform, the CPU model and the vector
    instruction set torch dispatches to and MKL's code branch (``cpu``,
    ``torch_cpu_capability``, ``mkl_cbwr``: models/kernels.py pins the last two, so that
    trained runs give the same bits on Intel and AMD CPUs -- docs/settings.md, "Training"),
    cores, the versions of the numeric packages, the torch device (CUDA when available, as
    ``--device auto`` would pick it), and the run's wall time."""
    env = {"python": platform.python_version(), "platform": platform.platform(),
           "machine": platform.machine(), "cpu": _cpu_model(), "cpu_count": os.cpu_count()}
    for name in ("torch", "numpy", "scipy", "sympy", "mpmath", "hypothesis", "matplotlib"):
        try:
            env[name] = __import__(name).__version__
        except (ImportError, AttributeError):
            env[name] = None
    try:
        import torch      # about 2.5 s of start-up: only a run's environment needs it, not rendering
        env["device"] = (f"cuda ({torch.cuda.get_device_name(0)})" if torch.cuda.is_available()
                         else "cpu")
        env["torch_cpu_capability"] = torch.backends.cpu.get_cpu_capability()
        from models.kernels import mkl_branch
        env["mkl_cbwr"] = mkl_branch()
    except ImportError:  # pragma: no cover - torch is a dependency
        env["device"] = env["torch_cpu_capability"] = env["mkl_cbwr"] = None
    env["wall_seconds"] = None if wall_seconds is None else round(float(wall_seconds), 1)
    return env


def provenance(profile: str | None = None, run: Mapping | None = None, argv=None,
               root: str | os.PathLike | None = None) -> dict:
    """What produced a run, for a reader who wants to reproduce it: the git commit of the
    checkout the claims ran from and whether it had uncommitted changes (``dirty``; both
    None outside a git checkout), the command that reproduces the run (the profile and the
    run options as ``pytest claims`` options) and the command line as it was invoked.

    >>> provenance("paper", {"hypothesis_draws": "random"}, argv=["pytest"], root="/")["command"]
    'pytest claims -n auto --profile paper --claims-random'
    """
    root = Path(root) if root is not None else Path(__file__).resolve().parents[2]

    def git(*args):
        try:
            out = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=20)
        except (OSError, subprocess.SubprocessError):
            return None
        return out.stdout if out.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    status = git("status", "--porcelain") if commit else None
    command = "pytest claims -n auto"
    if profile and profile != "quick":
        command += f" --profile {profile}"
    run = run or {}
    if run.get("hypothesis_draws") == "random":
        command += " --claims-random"
    if run.get("retrain"):
        command += " --retrain"
    return {"commit": commit.strip() if commit else None,
            "dirty": None if status is None else bool(status.strip()),
            "command": command,
            "argv": " ".join(argv if argv is not None else sys.argv)}


def report_payload(records: list[Mapping], profile: Mapping | None,
                   generated: str | None = None, run: Mapping | None = None,
                   environment: Mapping | None = None, provenance: Mapping | None = None) -> dict:
    """The object written to ``claims.json`` (schema :data:`SCHEMA`: records with their
    identity and coordinates, intervals, inconclusive checks, run options, the
    environment, per-run entries; docs/results/README.md)."""
    summary = summarize(records)
    lines = summary_lines(summary)
    return {
        "schema": SCHEMA,
        "generated": generated or _now(),
        "profile": dict(profile) if profile else None,
        "run": dict(run) if run else None,
        "environment": dict(environment) if environment else None,
        "provenance": dict(provenance) if provenance else None,
        "summary": {"total": summary["total"],
                    "claims": {k: dict(v, line=lines[k]) for k, v in summary["claims"].items()},
                    "line": lines["total"],
                    "intervals": {"level": LEVEL,
                                  "checks": summary["total"]["interval_checks"],
                                  "expected_chance_disagreements":
                                      summary["total"]["expected_chance_disagreements"],
                                  "line": interval_lines(summary)[0]},
                    "inconclusive": inconclusive_summary(records)},
        "records": [dict(r) for r in records],
    }


def inconclusive_summary(records: Iterable[Mapping]) -> list[dict]:
    """The summary's list of inconclusive checks: id, label and how far from decided."""
    return [{k: r.get(k) for k in ("check_id", "claim", "label", "test", "measured", "interval",
                                   "interval_kind", "n_seeds", "comparator", "tolerance", "expect",
                                   "decide")}
            for r in _inconclusive(records)]


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()


def write_reports(records: list[Mapping], directory: str | os.PathLike,
                  profile: Mapping | None = None, generated: str | None = None,
                  run: Mapping | None = None, environment: Mapping | None = None,
                  provenance: Mapping | None = None) -> tuple[Path, Path]:
    """Write ``claims.json`` into ``directory`` and render it there (:func:`render_report`:
    figures, ``claims.md``, ``index.html``); returns the paths of claims.json and claims.md."""
    records = sort_records(records)
    payload = report_payload(records, profile, generated or _now(), run, environment, provenance)
    directory = Path(directory)
    j = atomic_write_text(directory / "claims.json",
                          dumps(payload, indent=2) + "\n")
    return j, render_report(payload, directory)["md"]


def render_report(payload: Mapping, directory: str | os.PathLike) -> dict:
    """Render a report payload (what ``claims.json`` holds) into ``directory``: the figures
    (``figures/``, claims/reports/figures.py), ``claims.md`` and ``index.html`` (claims/reports/html.py),
    both linking the figures.  The one renderer: the plugin calls it after a run through
    :func:`write_reports`, ``ldsicl report`` on a finished ``claims.json``.

    The figures are drawn from the records alone; if drawing fails (no matplotlib, say)
    the pages are still written and say why there are no figures.  Returns the paths
    ``{"md", "html", "figures"}``.
    """
    directory = Path(directory)
    records = list(payload.get("records", []))
    try:
        drawn = render_figures(records, directory / "figures")
        figures = [(title, p.relative_to(directory)) for title, p in drawn]
        missing = None
    except (ImportError, OSError, ValueError, RuntimeError) as exc:
        drawn, figures, missing = [], [], f"{type(exc).__name__}: {exc}"
    md = render_markdown(records, payload.get("profile"), payload.get("generated"),
                         run=payload.get("run"), figures=figures, environment=payload.get("environment"))
    page = render_html(payload, figures)
    if missing:
        md += f"\nNo figures: {missing}\n"
        page = page.replace("</body>", f"<p>No figures: {html_escape(missing)}</p></body>")
    m = atomic_write_text(directory / "claims.md", md)
    h = atomic_write_text(directory / "index.html", page)
    return {"md": m, "html": h, "figures": [p for _, p in drawn]}
