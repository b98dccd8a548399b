"""The HTML report (``index.html``): the findings, then one section per claim.

Rendered by the report writer (claims/reports/report.py) from the same
:class:`~claims.harness.reportfile.Report` as ``claims.json`` and next to ``claims.md``; every
value comes from the report, every figure from claims/reports/figures.py.  Layout, top to bottom:

1. the findings (claims/reports/findings.py): per statement of the sources, its outcome in plain
   words and its weakest check, each linking to its claim's section;
2. the provenance of the run (git commit and whether the checkout had uncommitted
   changes, profile, when, the command that reproduces it, the environment), and the
   test run's summary in pytest's terms;
3. per claim, in the order of claims.specs.CLAIMS (claims no spec lists after them), a
   section (``id`` = the claim): its statements and their outcomes, the
   claim's summary line, what would decide each inconclusive or mixed check (on the page,
   not in a tooltip), the table of its checks, and its figures (claims.reports.figures.claim_of).

Plain HTML with one small style block, no scripts, no external resources, so the page opens
anywhere, offline.  tests/test_html.py parses it (well-formed, every image and link
resolves) and loads it in headless Chromium where one is installed.

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
from claims.reports.figures import claim_of
from claims.reports.findings import anchor, findings, summary_line
from claims.specs import CLAIMS

__all__ = ["render_html", "claim_order"]

_STYLE = """body{font-family:sans-serif;margin:2em;max-width:110em}
table{border-collapse:collapse;font-size:0.85em}td,th{border:1px solid #bbb;padding:2px 6px}
th{background:#eee;text-align:left}.holds{background:#dfd}.fails{background:#fdd}.inconclusive{background:#ffd}
.mixed{background:#e8dcf5}.reported{color:#555}.control{font-style:italic}
img{max-width:100%;border:1px solid #ccc}code{font-size:0.95em}
.reproduced{background:#dfd}.partly{background:#e8dcf5}.not-reproduced{background:#fdd}.undecided{background:#ffd}
.not-run{background:#eee}section{border-top:2px solid #888;margin-top:2em}
.figures{display:flex;flex-wrap:wrap;gap:1em}.figures figure{margin:0;max-width:48em}
.decide{font-size:0.9em}"""

_COLUMNS = ("check_id", "paper ref", "where", "label", "measured", "95% interval", "basis",
            "criterion", "tol. by", "verdict", "expected")


def _e(x) -> str:
    return html.escape(str(x), quote=True)


def _row(r: ClaimRecord) -> str:
    cells = [r.check_id, r.paper_ref, r.where, r.label,
             format_value(r.measured), format_interval(r.interval), r.basis,
             format_criterion(r.comparator, r.tolerance) + (f"; {r.per_run_text}" if r.per_run else ""),
             r.tolerance_source or "-", r.verdict, r.expect or "-"]
    cls = r.verdict + (" control" if r.expect == "fails" else "")
    return f'<tr class="{_e(cls)}">' + "".join(f"<td>{_e(c)}</td>" for c in cells) + "</tr>"


def _kv_table(rows: Mapping) -> list[str]:
    return ["<table>"] + [f"<tr><th>{_e(k)}</th><td>{_e(v if isinstance(v, str) else format_value(v))}</td></tr>"
                          for k, v in rows.items() if v is not None] + ["</table>"]


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
             "generated": report.generated,
             "reproduce with": prov.get("command"), "invoked as": prov.get("argv")}
    if report.run:
        rows["run options"] = ", ".join(f"{k} = {v}" for k, v in report.run.items())
    env = dict(report.environment or {})
    rows["environment"] = ", ".join(f"{k} {v}" for k, v in env.items() if v is not None) or None
    return ["<h2>Provenance</h2>"] + _kv_table(rows)


def _findings(report: Report, found) -> list[str]:
    out = ["<h2>Findings</h2>", f"<p><b>{_e(summary_line(found, report.profile_name))}</b></p>",
           "<p>Outcomes: reproduced (every headline check holds), partly (some runs or checks "
           "hold, others fail), not reproduced (checks fail, none holds), undecided (an "
           "interval straddles the tolerance).</p>",
           "<table><tr><th>claim</th><th>statement (source)</th><th>kind</th><th>outcome</th>"
           "<th>checks</th><th>weakest check</th></tr>"]
    for f in found:
        h = f.headline
        out.append(f'<tr class="{_e(f.outcome.replace(" ", "-"))}"><td><a href="#{_e(anchor(h.claim))}">'
                   f"{_e(h.claim)}</a></td><td>{_e(h.statement)} ({_e(h.source)})</td>"
                   f"<td>{'training' if h.trained else 'theory'}</td><td><b>{_e(f.outcome)}</b></td>"
                   f"<td>{_e(f.counts_text())}</td><td>{_e(f.key.replace('`', ''))}</td></tr>")
    return out + ["</table>"]


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
    out += ["<table><tr>" + "".join(f"<th>{_e(c)}</th>" for c in _COLUMNS) + "</tr>"]
    out += [_row(r) for r in records] + ["</table>"]
    if figures:
        out.append('<div class="figures">')
        for title, rel in figures:
            out.append(f'<figure><img src="{_e(Path(rel).as_posix())}" alt="{_e(title)}">'
                       f"<figcaption>{_e(title)}</figcaption></figure>")
        out.append("</div>")
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
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           "<title>Claims report</title>", f"<style>{_STYLE}</style></head><body>",
           "<h1>Reproducibility report: learning linear dynamical systems in context with attention layers</h1>"]
    if claims:
        out.append("<p>Claims: " + ", ".join(f'<a href="#{_e(anchor(c))}">{_e(c)}</a>' for c in claims) + "</p>")
    found = findings(report) if records else []
    if records:
        out += _findings(report, found)
    out += _provenance(report)
    out += ["<h2>The test run</h2>", f"<p>{_e(summary.get('line', ''))}</p>"]
    if summary.get("intervals"):
        out.append(f"<p>{_e(summary['intervals'].get('line', ''))}</p>")
    out.append("<p>Rows of the check tables: green holds, red fails, yellow inconclusive, violet mixed "
               "(some trained runs hold, others fail), italic a negative control (it must "
               "fail).  The full records are in <code>claims.json</code>; the same tables in "
               "<code>claims.md</code>.</p>")
    for c in claims:
        out += _section(c, [r for r in records if r.claim == c], lines[c],
                        [(t, p) for t, p in figures if claim_of(p) == c], found)
    rest = [(t, p) for t, p in figures if claim_of(p) not in claims]
    if rest:
        out += ["<section><h2>Other figures</h2>", '<div class="figures">']
        out += [f'<figure><img src="{_e(Path(p).as_posix())}" alt="{_e(t)}"><figcaption>{_e(t)}</figcaption></figure>'
                for t, p in rest]
        out += ["</div></section>"]
    out += ["</body></html>"]
    return "\n".join(out) + "\n"
