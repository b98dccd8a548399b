"""The one-page HTML report (``index.html``): summary table, environment, figures.

Rendered by the report writer (claims/report.py) from the same payload as ``claims.json``
and next to ``claims.md``; every value comes from the payload, every figure from
claims/figures.py.  Plain HTML with one small style block, no scripts, no external
resources, so the page opens anywhere, offline.

>>> page = render_html({"records": [], "summary": {"line": "0 claims"}, "profile": None,
...                     "generated": "2026-01-01T00:00:00+00:00", "environment": {}}, [])
>>> "<h1>" in page and "0 claims" in page
True
"""
from __future__ import annotations

import html
from pathlib import Path
from typing import Iterable, Mapping

from claims.display import format_basis, format_criterion, format_interval, format_value
from claims.records import Coords

__all__ = ["render_html"]

_STYLE = """body{font-family:sans-serif;margin:2em;max-width:110em}
table{border-collapse:collapse;font-size:0.85em}td,th{border:1px solid #bbb;padding:2px 6px}
th{background:#eee}.holds{background:#dfd}.fails{background:#fdd}.inconclusive{background:#ffd}.mixed{background:#e8dcf5}
.reported{color:#555}.control{font-style:italic}img{max-width:100%;border:1px solid #ccc}
code{font-size:0.95em}"""

_COLUMNS = ("check_id", "paper ref", "where", "label", "measured", "95% interval", "basis",
            "criterion", "tol. by", "verdict", "expected", "outcome")


def _e(x) -> str:
    return html.escape(str(x), quote=True)


def _row(r: Mapping) -> str:
    cells = [r["check_id"], r["paper_ref"], Coords.from_dict(r.get("coords") or {}).where(), r["label"],
             format_value(r["measured"]), format_interval(r.get("interval")), format_basis(r),
             format_criterion(r.get("comparator"), r.get("tolerance")),
             r.get("tolerance_source") or "-", r["verdict"], r.get("expect") or "-",
             r.get("outcome") or "-"]
    cls = r["verdict"] + (" control" if r.get("expect") == "fails" else "")
    title = _e(r.get("note") or r.get("xfail_reason") or r.get("decide") or "")
    return (f'<tr class="{cls}" title="{title}">' + "".join(f"<td>{_e(c)}</td>" for c in cells)
            + "</tr>")


def _environment(env: Mapping, payload: Mapping) -> list[str]:
    rows = dict(env or {})
    prof = payload.get("profile") or {}
    rows.setdefault("profile", prof.get("name"))
    if prof:
        rows["seeds per setting"] = prof.get("n_seeds")
    if payload.get("run"):
        rows["run options"] = ", ".join(f"{k} = {v}" for k, v in payload["run"].items())
    rows["generated"] = payload.get("generated")
    return ["<table>"] + [f"<tr><th>{_e(k)}</th><td>{_e(format_value(v) if not isinstance(v, str) else v)}"
                          f"</td></tr>" for k, v in rows.items() if v is not None] + ["</table>"]


def render_html(payload: Mapping, figures: Iterable[tuple[str, Path]]) -> str:
    """The page for a report payload (claims/report.py, ``report_payload``) and its figures
    (``(title, path relative to the page)`` pairs)."""
    records = payload.get("records", [])
    summary = payload.get("summary", {})
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           "<title>Claims report</title>", f"<style>{_STYLE}</style></head><body>",
           "<h1>Reproducibility report: learning linear dynamical systems in context with attention layers</h1>",
           f"<p><b>{_e(summary.get('line', ''))}</b></p>"]
    if summary.get("intervals"):
        out.append(f"<p>{_e(summary['intervals'].get('line', ''))}</p>")
    claims = summary.get("claims", {})
    if claims:
        out.append("<ul>" + "".join(f"<li>{_e(c.get('line', name))}</li>" for name, c in claims.items())
                   + "</ul>")
    out += ["<h2>Environment</h2>"] + _environment(payload.get("environment"), payload)
    figures = list(figures)
    if figures:
        out.append("<h2>Figures</h2>")
        for title, rel in figures:
            out.append(f'<h3>{_e(title)}</h3><p><img src="{_e(Path(rel).as_posix())}" alt="{_e(title)}"></p>')
    out += ["<h2>Checks</h2>",
            "<p>Rows: green holds, red fails, yellow inconclusive, violet mixed (runs in basins that hold and in basins that fail), italic a negative control "
            "(it must fail); hover a row for its note or what would decide it.  The full "
            "records, with their details, are in <code>claims.json</code>; the same table "
            "in <code>claims.md</code>.</p>",
            "<table><tr>" + "".join(f"<th>{_e(c)}</th>" for c in _COLUMNS) + "</tr>"]
    out += [_row(r) for r in records]
    out += ["</table>", "</body></html>"]
    return "\n".join(out) + "\n"
