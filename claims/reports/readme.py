r"""The README's findings and the full verdict tables, rendered from the published runs
(docs/results/quick.json and paper.json).

``python -m claims.reports.readme`` rewrites

- the block between the markers ``<!-- findings:start -->`` and ``<!-- findings:end -->``
  of README.md: the findings table of claims/reports/findings.py (one row per statement of the
  sources, its outcome in plain words in the paper profile and the quick profile, its
  weakest check), and
- ``docs/results/verdicts.md``: per claim, a section (its statements and their outcomes,
  the summary line of each profile, and one table of every check whose verdict rests on
  an interval or that does not hold -- the measured value, its interval, the criterion
  with whose tolerance it is, and the verdict, quick and paper side by side; the exact
  checks that hold are counted in the summary lines and listed in the published reports).

``python -m claims.reports.readme --check`` exits 1 (printing a diff) when either committed text
is not what the runs render to, which ``tests/test_readme.py`` asserts, so neither drifts
from the published results.

>>> q = Report(records=(), summary={"claims": {"x": {"line": "x: 1 check, 1 holds"}}},
...            environment={"torch": "2.13.0"}, generated="2026-01-01")
>>> "- quick: 1 check, 1 holds" in render_verdicts(q, None)
True
"""
from __future__ import annotations

import argparse
import difflib
import sys
from pathlib import Path

from claims.harness.display import format_criterion, format_interval, format_value
from claims.harness.records import ClaimRecord
from claims.harness.reportfile import Report, load_report
from claims.reports.controls import ANCHOR, control_sentence, controls, render_without_controls, short_sentence
from claims.harness.spec import KINDS
from claims.reports.findings import anchor, findings, render_findings
from claims.specs import CLAIMS, all_headlines

__all__ = ["START", "END", "render_block", "render_verdicts", "replace_block", "main"]

START = "<!-- findings:start -->"
END = "<!-- findings:end -->"
ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "docs" / "results"
VERDICTS = "verdicts.md"
_CONTROLS_LINK = f"docs/results/verdicts.md#{ANCHOR}"


def _md(s) -> str:
    return str(s).replace("|", "\\|").replace("\n", " ")


def _cell(r: ClaimRecord | None) -> str:
    if r is None:
        return "-"
    iv = f" {format_interval(r.interval)} ({r.basis})" if r.interval else ""
    verdict = r.verdict + (" (xfail)" if r.outcome == "xfailed" else "")
    bf = r.basins
    by = ""
    if r.per_run:                              # judged by run: the criterion each run is held to, per basin
        by = f" ({r.per_run_text})"
    elif bf and len(bf["verdicts"]) > 1:         # judged by basin: which basin the value is, and the others
        total = sum(b["n"] for b in bf["verdicts"])
        head = next(b for b in bf["verdicts"] if b["basin"] == bf["headline"])
        by = (f" (basin {bf['headline']}: {head['n']} of {total} runs; "
              + ", ".join(f"{b['verdict']} {b['n']}" for b in bf["verdicts"] if b["basin"] != bf["headline"])
              + " in the other basins"
              + (f"; holding share {bf['holding_share']:.2f} [{bf['holding_share_interval'][0]:.2f}, "
                 f"{bf['holding_share_interval'][1]:.2f}]" if bf.get("holding_share") is not None else "") + ")")
    return f"{format_value(r.measured)}{iv}{by}: **{verdict}**"


def _listed(r: ClaimRecord) -> bool:
    """Rows of the table: checks with an interval, and checks that do not hold."""
    return r.kind != "reported" and (r.interval is not None or r.verdict != r.expect)


def _env_line(name: str, p: Report) -> str:
    env = p.environment or {}
    prof = p.profile or {}
    bits = [f"generated {p.generated or '-'}"]
    if prof.get("n_seeds"):
        bits.append(f"{prof['n_seeds']} seeds per setting")
    bits += [f"{k} {env[k]}" for k in ("torch", "numpy", "python", "device") if env.get(k)]
    if env.get("cpu"):      # the machine, and the kernels trained runs are reproducible on (models/kernels.py)
        kernels = [k for k in (env.get("torch_cpu_capability"),
                               env.get("mkl_cbwr") and f"MKL {env['mkl_cbwr']}") if k]
        cores = f", {env['cpu_count']} cores" if env.get("cpu_count") else ""
        bits.append(f"machine: {env['cpu']}{cores}" + (f" ({', '.join(kernels)})" if kernels else ""))
    if env.get("wall_seconds"):
        bits.append(f"wall time {env['wall_seconds'] / 60:.1f} min")
    prov = p.provenance or {}
    if prov.get("commit"):
        bits.append(f"commit {prov['commit'][:7]}" + (" with uncommitted changes" if prov.get("dirty") else ""))
    bits.append(f"training code sha256 {prov['training_sources'][:12]}" if prov.get("training_sources")
                else "training code not recorded")
    rj = p.rejudged
    if rj:        # claims/reports/rejudge.py: new rules on the stored per-run values, no layer retrained
        by = (rj.get("by") or {}).get("commit") or "-"
        bits.append(f"re-judged at commit {by[:7]} from its stored per-run values, no layer retrained "
                    f"({len(rj.get('spliced') or {})} families of checks that train nothing run again "
                    "there; docs/results/README.md)")
    return f"- {name} (`docs/results/{name}.json`): " + ", ".join(bits)


def render_block(quick: Report, paper: Report | None) -> str:
    """README.md's findings block (without the markers): the findings table of the paper
    profile with the quick profile beside it (the quick profile alone when there is no
    paper run), and the runs it is rendered from."""
    runs = [("paper", paper), ("quick", quick)] if paper else [("quick", quick)]
    out = ["Rendered by `python -m claims.reports.readme` from the published runs; do not edit by hand.", ""]
    out += [_env_line(name, p) for name, p in runs] + [""]
    first = controls(runs[0][1].records)
    line = f"{runs[0][0].capitalize()} run. " + control_sentence(first, _CONTROLS_LINK)
    for name, p in runs[1:]:
        line += f"  {name.capitalize()} run: " + short_sentence(controls(p.records))
    out += [line, ""]
    out += [render_findings(runs[0][1], runs[1][1] if len(runs) > 1 else None,
                            names=tuple(n for n, _ in runs) + ("",) * (2 - len(runs)))]
    return "\n".join(out).rstrip() + "\n"


def _statements(c: str, runs, found) -> list[str]:
    """The claim's statements with their outcome in each run (``found``: each run's findings)."""
    per = [{f.headline: f for f in fs if f.headline.claim == c} for fs in found]
    out = []
    for h in (h for h in all_headlines() if h.claim == c):
        res = "; ".join(f"{name}: **{f[h].outcome}** ({f[h].counts_text()})" for (name, _), f in zip(runs, per))
        out.append(f"- {h.statement} ({h.source}) -- {res}")
    return out


def _by_kind(runs, found) -> list[str]:
    """The statements grouped by kind (claims.harness.spec.KINDS), each with its outcome in every
    run and the reason its headline checks carry it."""
    out = ["## Statements by kind", ""]
    for kind, heading in KINDS.items():
        out += [f"### {heading}", ""]
        rows = [i for i, f in enumerate(found[0]) if f.kind == kind]
        for i in rows:
            h = found[0][i].headline
            res = "; ".join(f"{name}: **{f[i].outcome}** ({f[i].counts_text()})" for (name, _), f in zip(runs, found))
            out.append(f"- [{h.claim}](#{anchor(h.claim)}) ({'training' if h.trained else 'theory'}): "
                       f"{h.statement} ({h.source}) -- {res}.  Why these checks: {h.reason}")
        if kind == "ours-statement":
            out += [f"- [{s.name}](#{anchor(s.name)}): no statement, so no outcome -- {s.without_headline}."
                    for s in CLAIMS if s.ours]
        elif not rows:
            out.append("- none")
        out.append("")
    return out


def render_verdicts(quick: Report, paper: Report | None) -> str:
    """docs/results/verdicts.md for the two published reports: a section per claim."""
    runs = [("quick", quick)] + ([("paper", paper)] if paper else [])
    out = ["# Verdicts of the published runs", "",
           "Rendered by `python -m claims.reports.readme` from the published runs; do not edit by hand.  "
           "README.md's findings table links here; docs/results/README.md describes the runs' fields.  "
           "A row per check whose verdict rests on an interval, or that does not hold (a negative "
           "control is expected to fail); the exact checks that hold are counted in the summary "
           "lines and listed in the reports.  Verdicts: `holds` (the whole interval inside the "
           "tolerance), `fails` (entirely outside), `inconclusive` (it straddles the tolerance), "
           "`mixed` (judged by run: some trained runs hold and others fail; docs/settings.md, "
           "\"Verdicts by run\"); a check judged by run shows the share of runs that hold, against "
           "1/2, and how many of them hold; \"(xfail)\" marks a known non-reproduction.", ""]
    out += [_env_line(name, p) for name, p in runs] + [""]
    found = [findings(p) for _, p in runs]
    out += _by_kind(runs, found)
    present = set().union(*[set((p.summary or {}).get("claims", {})) for _, p in runs])
    claims = [s.name for s in CLAIMS if s.name in present] + sorted(present - {s.name for s in CLAIMS})
    keyed = [{r.check_id: r for r in p.records} for _, p in runs]
    for c in claims:
        out += [f"## {c}", ""]
        st = _statements(c, runs, found)
        if st:
            out += ["Statements of the sources and their outcome (claims/reports/findings.py):", ""] + st + [""]
        for name, p in runs:
            line = p.claim_line(c).split(": ", 1)[-1]
            out.append(f"- {name}: {line}")
        out.append("")
        keys = []
        for table in keyed:
            keys += [k for k, r in table.items() if r.claim == c and _listed(r) and k not in keys]
        if keys:
            head = ["check_id", "where", "label", "criterion (tolerance by)"] + [name for name, _ in runs]
            out += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
            for k in keys:
                r0 = next(t[k] for t in keyed if k in t)
                ctl = " [control: must fail]" if r0.expect == "fails" else ""
                row = [f"`{r0.check_id}`", r0.where, r0.label + ctl,
                       f"{format_criterion(r0.comparator, r0.tolerance)} ({r0.tolerance_source})"]
                row += [_cell(t.get(k)) for t in keyed]
                out.append("| " + " | ".join(_md(x) for x in row) + " |")
            out.append("")
        if c in {s.name for s in CLAIMS if s.reported_table}:
            rows = [(name, r) for name, p in runs for r in p.records if r.claim == c and r.kind == "reported"]
            if rows:
                out += [f"Reported rows ({', '.join(sorted({name for name, _ in rows}))} profile; no verdict):",
                        "", "| where | row | value |", "|---|---|---|"]
                out += [f"| {_md(r.where)} | {_md(r.label)} | {_md(format_value(r.measured))} |" for _, r in rows]
                out.append("")
    out += render_without_controls([(name, controls(p.records)) for name, p in runs])
    return "\n".join(out).rstrip() + "\n"


def replace_block(text: str, block: str) -> str:
    """``text`` with the marked block replaced; ValueError when the markers are missing."""
    i, j = text.find(START), text.find(END)
    if i < 0 or j < i:
        raise ValueError(f"README.md must contain {START} ... {END}")
    return text[:i + len(START)] + "\n" + block + text[j:]


def _load(path: Path) -> Report | None:
    """The report at ``path`` (claims.harness.reportfile.load_report), None when there is none."""
    return load_report(path) if path.is_file() else None


def _diff(old: str, new: str, name: str) -> bool:
    if new != old:
        sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), new.splitlines(True),
                                                   f"{name} (committed)", f"{name} (rendered)"))
    return new != old


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m claims.reports.readme",
                                description="Render README.md's findings and docs/results/verdicts.md "
                                            "from docs/results/*.json.")
    p.add_argument("--check", action="store_true", help="exit 1 if either is not up to date")
    p.add_argument("--readme", default=str(ROOT / "README.md"), help="the README to render into")
    p.add_argument("--results", default=str(RESULTS), help="folder of quick.json and paper.json")
    p.add_argument("--verdicts", default=None, help=f"the verdict tables to write (default RESULTS/{VERDICTS})")
    args = p.parse_args(argv)
    quick = _load(Path(args.results) / "quick.json")
    if quick is None:
        print(f"claims.reports.readme: {args.results}/quick.json is missing", file=sys.stderr)
        return 2
    paper = _load(Path(args.results) / "paper.json")
    readme = Path(args.readme)
    verdicts = Path(args.verdicts) if args.verdicts else Path(args.results) / VERDICTS
    old = readme.read_text(encoding="utf-8")
    try:
        new = replace_block(old, render_block(quick, paper))
    except ValueError as exc:
        print(f"claims.reports.readme: {exc}", file=sys.stderr)
        return 2
    old_v = verdicts.read_text(encoding="utf-8") if verdicts.is_file() else ""
    new_v = render_verdicts(quick, paper)
    if args.check:
        stale = [_diff(old, new, "README.md"), _diff(old_v, new_v, str(verdicts.name))]
        return int(any(stale))
    if new != old:
        readme.write_text(new, encoding="utf-8")
    if new_v != old_v:
        verdicts.write_text(new_v, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
