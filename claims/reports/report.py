"""Claim reports: the terminal table, ``claims.md``, ``claims.json`` and the page beside them.

Written by the plugin (claims/harness/plugin.py) at the end of a session with records, see
:func:`write_reports`: ``reports/claims.json`` (the :class:`~claims.harness.reportfile.Report`
serialised once) and, rendered from it, ``reports/claims.md``, ``index.html`` and the
figures.  Each row shows the measured value, its 95 % interval and what the interval rests
on (``t, n seeds``, ``MC 1.96 SE`` or ``exact``), ``holds at`` (the tightest tolerance that
would hold), the criterion and whose tolerance it is, the verdict and the expectation; after
the table, the counts of claims/reports/summary.py.  In the JSON file non-finite floats are
written as the strings ``"NaN"``, ``"Infinity"``, ``"-Infinity"`` (theory/jsonvalues.py).
``python -m claims.reports.compare`` compares two such JSON files.

>>> from claims.harness.records import make_record
>>> rec = make_record(claim="demo", check="err", label="err", paper_ref="eq. 1", measured=0.5,
...                   tolerance=1, comparator="<=", tolerance_source="project")
>>> make_report([rec], None, "2026-01-01").summary["line"]
'1 claim, 1 check, 1 holds -- all as expected'
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
from claims.harness.display import format_criterion, format_interval, format_value
from claims.harness.records import ClaimRecord
from claims.harness.reportfile import SCHEMA, Report
from claims.harness.stats import LEVEL
from claims.reports.figures import render_figures
from claims.reports.html import render_html
from claims.reports.summary import (inconclusive_lines, inconclusive_summary, interval_lines, summarize,
                                    summary_lines, undecided)
from models.files import atomic_write_text
from theory.jsonvalues import dumps

__all__ = ["render_terminal", "render_markdown", "make_report", "write_reports", "render_report", "environment",
           "provenance"]


# --------------------------------------------------------------------------- rendering

_COLUMNS = ("check_id", "paper ref", "where", "label", "measured", "95% interval", "basis",
            "holds at", "criterion", "tol. by", "verdict", "expected", "outcome")
_MAX_WIDTH = {"paper ref": 34, "label": 64, "check_id": 56}


def _row(r: ClaimRecord) -> list[str]:
    return [r.check_id, r.paper_ref, r.where, r.label,
            format_value(r.measured), format_interval(r.interval), r.basis,
            format_value(r.holds_at), format_criterion(r.comparator, r.tolerance)
            + (f"; {r.per_run_text}" if r.per_run else ""),
            r.tolerance_source or "-", r.verdict, r.expect or "-", r.outcome or "-"]


def _clip(s: str, width: int) -> str:
    return s if len(s) <= width else s[: width - 3] + "..."


def render_terminal(records: list[ClaimRecord], summary: Mapping | None = None) -> list[str]:
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
        while i < len(records) and records[i].claim == name:
            out.append(fmt(rows[i]))
            r = records[i]
            if r.xfail_reason:
                notes.append(f"     xfail {r.check_id}: {r.xfail_reason}")
            if r.note:
                notes.append(f"     note  {r.check_id}: {r.note}")
            i += 1
        out.append(f"  -> {lines_by_claim[name]}")
        out += notes
        out.append("")
    out += interval_lines(summary) + inconclusive_lines(records) + [""]
    out.append(lines_by_claim["total"])
    return out


def _md(s: str) -> str:
    return str(s).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def render_markdown(records: list[ClaimRecord], profile: Mapping | None = None,
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
    for r in undecided(records):
        ctl = " (NEGATIVE CONTROL: fails its test)" if r.expect == "fails" else ""
        out.append(f"- `{_md(r.check_id)}`{ctl}: {_md(r.label)} = "
                   f"{_md(format_value(r.measured))}, interval "
                   f"{_md(format_interval(r.interval))} ({_md(r.basis)}) against "
                   f"{_md(format_criterion(r.comparator, r.tolerance))}; "
                   f"{_md(r.decide or '-')}")
    out.append("")
    figures = list(figures)
    if figures:
        out += ["## Figures", ""] + [f"- [{_md(title)}]({Path(rel).as_posix()})" for title, rel in figures] + [""]
    cols = _COLUMNS + ("test",)
    for name in summary["claims"]:
        recs = [r for r in records if r.claim == name]
        out += [f"## {name}", "", lines_by_claim[name], "",
                "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
        notes = []
        for r in recs:
            cells = _row(r) + [f"`{r.test or '-'}`"]
            out.append("| " + " | ".join(_md(c) for c in cells) + " |")
            if r.xfail_reason:
                notes.append(f"- `{r.check_id}` ({_md(r.label)}): xfail -- {_md(r.xfail_reason)}")
            if r.note:
                notes.append(f"- `{r.check_id}` ({_md(r.label)}): {_md(r.note)}")
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
        import torch      # about 0.7 s of start-up (docs/notes.md): only a run's environment needs it, not rendering
        env["device"] = (f"cuda ({torch.cuda.get_device_name(0)})" if torch.cuda.is_available()
                         else "cpu")
        env["torch_cpu_capability"] = torch.backends.cpu.get_cpu_capability()
        from models.kernels import mkl_branch
        env["mkl_cbwr"] = mkl_branch()
    except ImportError:  # pragma: no cover - torch is a dependency
        env["device"] = env["torch_cpu_capability"] = env["mkl_cbwr"] = None
    env["wall_seconds"] = None if wall_seconds is None else round(float(wall_seconds), 1)
    return env


def _training_sources() -> str | None:
    """The sha256 of this checkout's training code (models/fingerprint.py ``source_digest``):
    the code every trained run of the run was trained by, as the weight cache serves only
    weights whose key carries it."""
    try:
        from models.fingerprint import source_digest
        return source_digest()
    except (ImportError, OSError, ValueError):  # pragma: no cover - a checkout without its sources
        return None


def provenance(profile: str | None = None, run: Mapping | None = None, argv=None,
               root: str | os.PathLike | None = None) -> dict:
    """What produced a run, for a reader who wants to reproduce it: the git commit of the
    checkout the claims ran from and whether it had uncommitted changes (``dirty``; both
    None outside a git checkout), the source digest of the training code that trained its
    runs (``training_sources``: tests/test_published_runs.py holds the published runs to
    today's), the command that reproduces the run (the profile and the
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
    if run.get("trained_runs"):
        command += " --claims-untrained"
    params = run.get("params")
    if params:
        from claims.harness.params import Point
        tag = Point(**params).tag()
        if tag:
            command += f" --claims-params {tag}"
    return {"commit": commit.strip() if commit else None,
            "dirty": None if status is None else bool(status.strip()),
            "training_sources": _training_sources(),
            "command": command,
            "argv": " ".join(argv if argv is not None else sys.argv)}


def make_report(records: Iterable[ClaimRecord], profile: Mapping | None, generated: str | None = None,
                run: Mapping | None = None, environment: Mapping | None = None,
                provenance: Mapping | None = None) -> Report:
    """The report of a run (schema :data:`~claims.harness.reportfile.SCHEMA`): its records in
    the order given, the run's options, environment and provenance, and the summary counted
    from the records (docs/results/README.md)."""
    records = list(records)
    summary = summarize(records)
    lines = summary_lines(summary)
    return Report(
        records=tuple(records), schema=SCHEMA, generated=generated or _now(),
        profile=dict(profile) if profile else None, run=dict(run) if run else None,
        environment=dict(environment) if environment else None,
        provenance=dict(provenance) if provenance else None,
        summary={"total": summary["total"],
                 "claims": {k: dict(v, line=lines[k]) for k, v in summary["claims"].items()},
                 "line": lines["total"],
                 "intervals": {"level": LEVEL,
                               "checks": summary["total"]["interval_checks"],
                               "expected_chance_disagreements": summary["total"]["expected_chance_disagreements"],
                               "line": interval_lines(summary)[0]},
                 "inconclusive": inconclusive_summary(records)})


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()


def write_reports(records: Iterable[ClaimRecord], directory: str | os.PathLike,
                  profile: Mapping | None = None, generated: str | None = None,
                  run: Mapping | None = None, environment: Mapping | None = None,
                  provenance: Mapping | None = None) -> tuple[Path, Path]:
    """Write ``claims.json`` into ``directory`` (the :func:`make_report`, serialised once) and
    render it there (:func:`render_report`: figures, ``claims.md``, ``index.html``); returns
    the paths of claims.json and claims.md."""
    report = make_report(sort_records(records), profile, generated or _now(), run, environment, provenance)
    directory = Path(directory)
    j = atomic_write_text(directory / "claims.json", dumps(report.to_dict(), indent=2) + "\n")
    return j, render_report(report, directory)["md"]


def render_report(report: Report, directory: str | os.PathLike) -> dict:
    """Render a :class:`~claims.harness.reportfile.Report` into ``directory``: the figures
    (``figures/``, claims/reports/figures.py), ``claims.md`` and ``index.html``
    (claims/reports/html.py), both linking the figures.  The one renderer: the plugin calls it
    after a run through :func:`write_reports`, ``ldsicl report`` on a loaded ``claims.json``
    (claims.harness.reportfile.load_report).

    The figures are drawn from the records alone; if drawing fails (no matplotlib, say)
    the pages are still written and say why there are no figures.  Returns the paths
    ``{"md", "html", "figures"}``.
    """
    directory = Path(directory)
    records = list(report.records)
    try:
        drawn = render_figures(records, directory / "figures")
        figures = [(title, p.relative_to(directory)) for title, p in drawn]
        missing = None
    except (ImportError, OSError, ValueError, RuntimeError) as exc:
        drawn, figures, missing = [], [], f"{type(exc).__name__}: {exc}"
    md = render_markdown(records, report.profile, report.generated, summary=None,
                         run=report.run, figures=figures, environment=report.environment)
    page = render_html(report, figures)
    if missing:
        md += f"\nNo figures: {missing}\n"
        page = page.replace("</body>", f"<p>No figures: {html_escape(missing)}</p></body>")
    m = atomic_write_text(directory / "claims.md", md)
    h = atomic_write_text(directory / "index.html", page)
    return {"md": m, "html": h, "figures": [p for _, p in drawn]}
