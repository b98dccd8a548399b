"""The HTML report (``index.html``): the findings, then one section per claim.

Rendered by the report writer (claims/reports/report.py) from the same
:class:`~claims.harness.reportfile.Report` as ``claims.json`` and next to ``claims.md``; every
value comes from the report, every figure from claims/reports/figures.py.  Layout, top to bottom:

1. the findings (claims/reports/findings.py): the summary line, then one table per kind of
   statement (claims.reports.findings.KINDS, in its order: the sources' statements at their
   own tolerance, at ours, and statements of ours), each under its heading with a count
   line; per statement its outcome in plain words and its weakest check, linking to its
   claim's section;
2. the provenance of the run (git commit and whether the checkout had uncommitted
   changes, profile, when, the command that reproduces it, the environment), and the
   test run's summary in pytest's terms, with the legend of the check tables;
3. per claim a section (``id`` = the claim): its statements and their outcomes, the
   claim's summary line, what would decide each inconclusive or mixed check (on the page,
   not in a tooltip), the table of its checks, and its figures (claims.reports.figures.claim_of).

Every list of claims on the page -- the links at the top, the findings, the sections --
follows claims.specs.CLAIMS (as the README does; claims no spec lists after them), whatever
order the report's records or summary hold.  A negative control's row is ``control
control-ok`` (it fails as it must: neutral, not the red of a failing check) or ``control
control-broken`` (it does not: bright red).  Every table sits in a ``scroll`` wrapper, so
a wide one scrolls inside it and the page never scrolls sideways (the viewport follows the
device's width); every figure is a link to its PNG at full size.

Plain HTML with one small style block, no scripts, no external resources, so the page opens
anywhere, offline.  tests/test_html.py parses it (well-formed, every image and link
resolves) and loads it in headless Chromium at a phone's and a desktop's width.

>>> page = render_html(Report(records=(), summary={"line": "0 claims"},
...                           generated="2026-01-01T00:00:00+00:00", environment={}), [])
>>> "<h1>" in page and "0 claims" in page and "not recorded" in page
True
"""
from __future__ import annotations

import html
from pathlib import Path
from typing import Iterable, Mapping

from claims.harness.display import format_criterion, format_interval, format_value
from claims.harness.records import ClaimRecord
from claims.harness.reportfile import Report
from claims.reports.controls import control_sentence, controls
from claims.reports.figures import claim_of
from claims.harness.spec import KINDS
from claims.reports.findings import anchor, count_line, findings, summary_line
from claims.specs import CLAIMS

__all__ = ["render_html", "claim_order", "run_line", "VIEWPORT", "CONTROL_OK", "CONTROL_BROKEN"]

#: the page is laid out for the device's width (a phone does not zoom out a desktop page)
VIEWPORT = '<meta name="viewport" content="width=device-width, initial-scale=1">'

_STYLE = """body{font-family:sans-serif;margin:2em;max-width:110em;overflow-wrap:break-word}
table{border-collapse:collapse;font-size:0.85em}td,th{border:1px solid #bbb;padding:2px 6px}
th{background:#eee;text-align:left}.holds{background:#dfd}.fails{background:#fdd}.inconclusive{background:#ffd}
.mixed{background:#e8dcf5}.reported{color:#555}.control{font-style:italic}
.control-ok{background:#e4ede8;color:#344}.control-broken{background:#f77;font-weight:bold}
.scroll{overflow-x:auto;max-width:100%}img{max-width:100%;height:auto;border:1px solid #ccc}code{font-size:0.95em}
.reproduced{background:#dfd}.partly{background:#e8dcf5}.not-reproduced{background:#fdd}.undecided{background:#ffd}
.not-run{background:#eee}section{border-top:2px solid #888;margin-top:2em}
.figures{display:flex;flex-wrap:wrap;gap:1em}.figures figure{margin:0;max-width:min(48em,100%)}
.decide{font-size:0.9em}table.wide{min-width:40em}table.checks{min-width:56em}
.kv td{overflow-wrap:anywhere}td a{white-space:nowrap}.hint{font-size:0.9em;color:#555}
@media (max-width:40em){body{margin:0.5em}ul{padding-left:1.2em}h1{font-size:1.4em}}"""

_COLUMNS = ("check_id", "paper ref", "where", "label", "measured", "95% interval", "basis",
            "criterion", "tol. by", "verdict", "expected")


def _e(x) -> str:
    return html.escape(str(x), quote=True)


#: the verdict cell of a negative control, by whether it failed as it must
CONTROL_OK, CONTROL_BROKEN = "control fails as it must", "control does NOT fail: its check is broken"


def _row_class(r: ClaimRecord) -> str:
    """The row's class: its verdict; a negative control (``coords.control``, expecting
    ``fails``) is ``control control-ok`` when its verdict is its expectation and ``control
    control-broken`` otherwise, never the red of a failing check.

    >>> from claims.harness.records import make_record
    >>> kw = dict(claim="demo", check="c", label="c", paper_ref="-", tolerance=1, comparator="<=",
    ...           tolerance_source="project")
    >>> [_row_class(make_record(measured=m, expect=e, **kw)) for m, e in ((2, "fails"), (0, "fails"), (2, "holds"))]
    ['control control-ok', 'control control-broken', 'fails']
    """
    if r.expect == "fails" or r.coords.control:
        return "control " + ("control-ok" if r.verdict == r.expect else "control-broken")
    return r.verdict


def _row(r: ClaimRecord) -> str:
    verdict = r.verdict
    if r.expect == "fails" or r.coords.control:
        verdict += f" ({CONTROL_OK if r.verdict == r.expect else CONTROL_BROKEN})"
    cells = [r.check_id, r.paper_ref, r.where, r.label,
             format_value(r.measured), format_interval(r.interval), r.basis,
             format_criterion(r.comparator, r.tolerance) + (f"; {r.per_run_text}" if r.per_run else ""),
             r.tolerance_source or "-", verdict, r.expect or "-"]
    return f'<tr class="{_e(_row_class(r))}">' + "".join(f"<td>{_e(c)}</td>" for c in cells) + "</tr>"


def _table(rows: Iterable[str], cls: str = "") -> list[str]:
    """A table in its ``scroll`` wrapper: a wide table scrolls inside it, not the page."""
    attr = f' class="{cls}"' if cls else ""
    return [f'<div class="scroll"><table{attr}>', *rows, "</table></div>"]


def _figure(title: str, rel) -> str:
    """A figure, its image a link to the PNG itself (full size)."""
    src = _e(Path(rel).as_posix())
    return (f'<figure><a href="{src}"><img src="{src}" alt="{_e(title)}"></a>'
            f"<figcaption>{_e(title)}</figcaption></figure>")


def _figures(figures) -> list[str]:
    return ['<p class="hint">Click a figure for its full size.</p>', '<div class="figures">',
            *(_figure(t, p) for t, p in figures), "</div>"]


def _kv_table(rows: Mapping) -> list[str]:
    return _table([f"<tr><th>{_e(k)}</th><td>{_e(v if isinstance(v, str) else format_value(v))}</td></tr>"
                   for k, v in rows.items() if v is not None], "kv")


def _machine(env: Mapping) -> str:
    """The machine a run ran on, in one line: CPU, cores, the kernels it trained with, the device."""
    if not env.get("cpu"):
        return "not recorded"
    bits = [str(env["cpu"])]
    if env.get("cpu_count"):
        bits.append(f"{env['cpu_count']} cores")
    bits += [f"kernels {k}" for k in (env.get("torch_cpu_capability"),) if k]
    bits += [f"MKL {env['mkl_cbwr']}" for _ in (1,) if env.get("mkl_cbwr")]
    bits += [f"device {env['device']}" for _ in (1,) if env.get("device")]
    return ", ".join(bits)


def run_line(report: Report) -> str:
    """One line naming the run's commit and machine, for the top of the page.

    >>> run_line(Report(records=(), provenance={"commit": "abcdef0123", "dirty": False},
    ...                 environment={"cpu": "AMD EPYC", "cpu_count": 2}))
    'This run: commit abcdef0 on AMD EPYC, 2 cores.'
    """
    prov = report.provenance or {}
    commit = (prov.get("commit") or "")[:7] or "not recorded"
    if prov.get("dirty"):
        commit += " (with uncommitted changes)"
    return f"This run: commit {commit} on {_machine(report.environment or {})}."


def _provenance(report: Report) -> list[str]:
    prov = report.provenance or {}
    prof = report.profile or {}
    if prov:
        dirty = {True: "yes (uncommitted changes)", False: "no", None: "unknown"}[prov.get("dirty")]
        rows = {"git commit": prov.get("commit") or "unknown (not a git checkout)",
                "uncommitted changes": dirty}
    else:
        rows = {"git commit": "not recorded (a run written before provenance was recorded)"}
    rows |= {"profile": prof.get("name"), "seeds per setting": prof.get("n_seeds"),
             "generated": report.generated, "training code (sha256)": prov.get("training_sources") or "not recorded (a run written before it was)",
             "reproduce with": prov.get("command"), "invoked as": prov.get("argv")}
    if report.run:
        rows["run options"] = ", ".join(f"{k} = {v}" for k, v in report.run.items())
    env = dict(report.environment or {})
    rows["machine"] = _machine(env)
    rows["environment"] = ", ".join(f"{k} {v}" for k, v in env.items() if v is not None) or None
    return ["<h2>Provenance</h2>"] + _kv_table(rows)


_FINDING_HEAD = ("<tr><th>claim</th><th>statement (source)</th><th>theory or training</th><th>outcome</th>"
                 "<th>checks</th><th>weakest check</th></tr>")


def _finding_row(f) -> str:
    h = f.headline
    return (f'<tr class="{_e(f.outcome.replace(" ", "-"))}"><td><a href="#{_e(anchor(h.claim))}">'
            f"{_e(h.claim)}</a></td><td>{_e(h.statement)} ({_e(h.source)})</td>"
            f"<td>{'training' if h.trained else 'theory'}</td><td><b>{_e(f.outcome)}</b></td>"
            f"<td>{_e(f.counts_text())}</td><td>{_e(f.key.replace('`', ''))}</td></tr>")


def _findings(report: Report, found, claims: list[str]) -> list[str]:
    """The findings: the summary line, then one table per kind of statement (:data:`KINDS`,
    in its order), each under its heading with its count line; the claims of ours that
    state nothing are named under the statements of ours."""
    out = ["<h2>Findings</h2>", f"<p>{_e(run_line(report))}</p>",
           f"<p><b>{_e(summary_line(found, report.profile_name))}</b></p>",
           "<p>Outcomes: reproduced (every headline check holds), partly (some runs or checks "
           "hold, others fail), not reproduced (checks fail, none holds), undecided (an "
           "interval straddles the tolerance).</p>"]
    for kind, heading in KINDS.items():
        rows = [f for f in found if f.kind == kind]
        out += [f'<h3 id="{_e(kind)}">{_e(heading)}</h3>', f'<p class="count">{_e(count_line(rows))}.</p>']
        if rows:
            out += _table([_FINDING_HEAD] + [_finding_row(f) for f in rows], "wide")
        silent = [spec for spec in CLAIMS if spec.ours and spec.name in claims]
        if kind == "ours-statement" and silent:
            out.append("<p>Claims of ours with no statement (so no outcome), their checks in their "
                       "sections:</p><ul>" + "".join(
                           f'<li><a href="#{_e(anchor(spec.name))}">{_e(spec.name)}</a>: '
                           f"{_e(spec.without_headline)}</li>" for spec in silent) + "</ul>")
    c = controls(report.records)
    out.append(f"<p>{_e(control_sentence(c).replace('`', ''))}</p>")
    if c.without:
        out.append("<details><summary>The families without a negative control, and why</summary><ul>"
                   + "".join(f"<li><code>{_e(cl)}/{_e(ch)}</code>: {_e(why)}</li>" for cl, ch, why in c.without)
                   + "</ul></details>")
    if c.known_not_failing:
        out.append("<details open><summary>The controls that cannot tell in this run, and why</summary><ul>"
                   + "".join(f"<li><code>{_e(cid)}</code> ({_e(verdict)}): {_e(why)}</li>"
                             for cid, verdict, why in c.known_not_failing) + "</ul></details>")
    out.append("<details><summary>Why these checks carry each statement</summary><ul>"
               + "".join(f"<li>{_e(f.headline.claim)} ({'training' if f.headline.trained else 'theory'}): "
                         f"{_e(f.headline.reason)}</li>" for f in found) + "</ul></details>")
    return out


def _section(claim: str, records: list[ClaimRecord], line: str, figures: list, found) -> list[str]:
    out = [f'<section id="{_e(anchor(claim))}">', f"<h2>{_e(claim)}</h2>"]
    mine = [f for f in found if f.headline.claim == claim]
    if mine:
        out.append("<ul>" + "".join(f"<li>{_e(f.headline.statement)} ({_e(f.headline.source)}): "
                                    f"<b>{_e(f.outcome)}</b> ({_e(f.counts_text())})</li>" for f in mine) + "</ul>")
    elif not any(spec.headlines for spec in CLAIMS if spec.name == claim):
        out.append("<p>A claim of ours: it tests no statement of the sources.</p>")
    out.append(f"<p>{_e(line)}</p>")
    undecided = [r for r in records if r.decide]
    if undecided:
        out.append('<p>What would decide the checks that are not decided:</p><ul class="decide">'
                   + "".join(f"<li><code>{_e(r.check_id)}</code> ({_e(r.verdict)}): {_e(r.decide)}</li>"
                             for r in undecided) + "</ul>")
    known = [r for r in records if r.outcome == "xfailed"]
    if known:
        out.append("<p>Known non-reproductions (expected to fail):</p><ul>"
                   + "".join(f"<li><code>{_e(r.check_id)}</code>: {_e(r.xfail_reason or r.verdict)}</li>"
                             for r in known) + "</ul>")
    out += _table(["<tr>" + "".join(f"<th>{_e(c)}</th>" for c in _COLUMNS) + "</tr>"]
                  + [_row(r) for r in records], "wide checks")
    if figures:
        out += _figures(figures)
    return out + ["</section>"]


def claim_order(claims: Iterable[str]) -> list[str]:
    """``claims`` (each once) in the order of claims.specs.CLAIMS, those no spec lists after
    them in the order given."""
    claims = list(dict.fromkeys(claims))
    return [s.name for s in CLAIMS if s.name in claims] + [c for c in claims if c not in {s.name for s in CLAIMS}]


def render_html(report: Report, figures: Iterable[tuple[str, Path]]) -> str:
    """The page for a :class:`~claims.harness.reportfile.Report` and its figures (``(title,
    path relative to the page)`` pairs)."""
    records = list(report.records)
    summary = report.summary or {}
    figures = list(figures)
    claims = claim_order([r.claim for r in records] + list(summary.get("claims", {})))
    lines = {c: (summary.get("claims", {}).get(c) or {}).get("line", c) for c in claims}
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">', VIEWPORT,
           "<title>Claims report</title>", f"<style>{_STYLE}</style></head><body>",
           "<h1>Reproducibility report: learning linear dynamical systems in context with attention layers</h1>"]
    if claims:
        out.append("<p>Claims: " + ", ".join(f'<a href="#{_e(anchor(c))}">{_e(c)}</a>' for c in claims) + "</p>")
    found = findings(report) if records else []
    rank = {c: i for i, c in enumerate(claim_order(claims + [f.headline.claim for f in found]))}
    found.sort(key=lambda f: rank[f.headline.claim])           # claims.specs.CLAIMS order, as the README
    if records:
        out += _findings(report, found, claims)
    out += _provenance(report)
    out += ["<h2>The test run</h2>", f"<p>{_e(summary.get('line', ''))}</p>"]
    if summary.get("intervals"):
        out.append(f"<p>{_e(summary['intervals'].get('line', ''))}</p>")
    out.append("<p>Rows of the check tables: green holds, red fails, yellow inconclusive, violet mixed "
               "(some trained runs hold, others fail).  A negative control (italic) is a check built "
               f"to fail, to show the check can catch the defect it guards: grey-green when it fails "
               f"as it must (&ldquo;{_e(CONTROL_OK)}&rdquo;), bold on bright red when it does not "
               "(its check is broken).  Wide tables scroll sideways; click a figure for its full "
               "size.  The full records are in <code>claims.json</code>; the same tables in "
               "<code>claims.md</code>.</p>")
    for c in claims:
        out += _section(c, [r for r in records if r.claim == c], lines[c],
                        [(t, p) for t, p in figures if claim_of(p) == c], found)
    rest = [(t, p) for t, p in figures if claim_of(p) not in claims]
    if rest:
        out += ["<section><h2>Other figures</h2>", *_figures(rest), "</section>"]
    out += ["</body></html>"]
    return "\n".join(out) + "\n"
