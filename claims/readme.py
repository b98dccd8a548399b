r"""The README's verdict tables, rendered from the published runs (docs/results/*.json).

``python -m claims.readme`` rewrites the block between the markers

    <!-- verdicts:start -->  ...  <!-- verdicts:end -->

of README.md from ``docs/results/quick.json`` and ``docs/results/paper.json``;
``python -m claims.readme --check`` exits 1 (printing a diff) when the committed block is
not what they render to, which ``tests/test_readme.py`` asserts, so the README never
drifts from the published results.  The block holds, per claim, the summary line of each
profile, and one table of every check whose verdict rests on an interval or that does
not hold (the exact checks that hold are counted in the summary lines and listed in the
published reports): the measured value, its interval, the criterion with whose
tolerance it is, and the verdict, quick and paper side by side.

>>> q = {"summary": {"claims": {"x": {"line": "x: 1 check, 1 holds"}}}, "records": [],
...      "environment": {"torch": "2.13.0"}, "generated": "2026-01-01"}
>>> "**x**: quick: 1 check, 1 holds" in render_block(q, None)
True
"""
from __future__ import annotations

import argparse
import difflib
import json
import sys
from pathlib import Path
from typing import Mapping

from claims.compare import current
from claims.display import format_basis, format_criterion, format_interval, format_value
from claims.records import Coords

__all__ = ["START", "END", "render_block", "replace_block", "main"]

START = "<!-- verdicts:start -->"
END = "<!-- verdicts:end -->"
ROOT = Path(__file__).resolve().parents[1]
#: claims whose reported rows get a table of their own (descriptive tables, no verdict).
REPORTED_TABLES = ("training-sensitivity",)
RESULTS = ROOT / "docs" / "results"


def _md(s) -> str:
    return str(s).replace("|", "\\|").replace("\n", " ")


def _cell(r: Mapping | None) -> str:
    if r is None:
        return "-"
    iv = f" {format_interval(r['interval'])} ({format_basis(r)})" if r.get("interval") else ""
    verdict = r["verdict"] + (" (xfail)" if r.get("outcome") == "xfailed" else "")
    bf = r.get("basins")
    by = ""
    if bf and len(bf["verdicts"]) > 1:         # judged by basin: which basin the value is, and the others
        total = sum(b["n"] for b in bf["verdicts"])
        head = next(b for b in bf["verdicts"] if b["basin"] == bf["headline"])
        by = (f" (basin {bf['headline']}: {head['n']} of {total} runs; "
              + ", ".join(f"{b['verdict']} {b['n']}" for b in bf["verdicts"] if b["basin"] != bf["headline"])
              + " in the other basins"
              + (f"; holding share {bf['holding_share']:.2f} [{bf['holding_share_interval'][0]:.2f}, "
                 f"{bf['holding_share_interval'][1]:.2f}]" if bf.get("holding_share") is not None else "") + ")")
    return f"{format_value(r['measured'])}{iv}{by}: **{verdict}**"


def _where(r: Mapping) -> str:
    return Coords.from_dict(r.get("coords") or {}).where()


def _listed(r: Mapping) -> bool:
    """Rows of the table: checks with an interval, and checks that do not hold."""
    return r.get("kind") != "reported" and (r.get("interval") is not None or r["verdict"] != r.get("expect"))


def _env_line(name: str, p: Mapping) -> str:
    env = p.get("environment") or {}
    prof = p.get("profile") or {}
    bits = [f"generated {p.get('generated', '-')}"]
    if prof.get("n_seeds"):
        bits.append(f"{prof['n_seeds']} seeds per setting")
    bits += [f"{k} {env[k]}" for k in ("torch", "numpy", "python", "device") if env.get(k)]
    if env.get("wall_seconds"):
        bits.append(f"wall time {env['wall_seconds'] / 60:.1f} min")
    return f"- {name} (`docs/results/{name}.json`): " + ", ".join(bits)


def render_block(quick: Mapping, paper: Mapping | None) -> str:
    """The README block (without the markers) for the two published reports."""
    runs = [("quick", quick)] + ([("paper", paper)] if paper else [])
    out = ["Rendered by `python -m claims.readme` from the published runs; do not edit by hand.", ""]
    out += [_env_line(name, p) for name, p in runs] + [""]
    claims = sorted(set().union(*[set((p.get("summary") or {}).get("claims", {})) for _, p in runs]))
    for c in claims:
        out.append(f"- **{c}**: " + "; ".join(
            f"{name}: {((p.get('summary') or {}).get('claims', {}).get(c) or {}).get('line', '-').split(': ', 1)[-1]}"
            for name, p in runs))
    out.append("")
    keyed = [{r["check_id"]: r for r in p.get("records", [])} for _, p in runs]
    keys = []
    for table in keyed:
        keys += [k for k, r in table.items() if _listed(r) and k not in keys]
    if keys:
        head = ["check_id", "where", "label", "criterion (tolerance by)"] + [name for name, _ in runs]
        out += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for k in keys:
            r0 = next(t[k] for t in keyed if k in t)
            ctl = " [control: must fail]" if r0.get("expect") == "fails" else ""
            row = [f"`{r0['check_id']}`", _where(r0), r0["label"] + ctl,
                   f"{format_criterion(r0.get('comparator'), r0.get('tolerance'))} ({r0.get('tolerance_source')})"]
            row += [_cell(t.get(k)) for t in keyed]
            out.append("| " + " | ".join(_md(c) for c in row) + " |")
    for c in REPORTED_TABLES:
        rows = [(name, r) for name, p in runs for r in p.get("records", [])
                if r["claim"] == c and r.get("kind") == "reported"]
        if rows:
            out += ["", f"`{c}` ({', '.join(sorted({name for name, _ in rows}))} profile; reported rows, "
                        "no verdict):", "", "| where | row | value |", "|---|---|---|"]
            out += [f"| {_md(_where(r))} | {_md(r['label'])} | "
                    f"{_md(format_value(r['measured']))} |" for _, r in rows]
    return "\n".join(out).rstrip() + "\n"


def replace_block(text: str, block: str) -> str:
    """``text`` with the marked block replaced; ValueError when the markers are missing."""
    i, j = text.find(START), text.find(END)
    if i < 0 or j < i:
        raise ValueError(f"README.md must contain {START} ... {END}")
    return text[:i + len(START)] + "\n" + block + text[j:]


def _load(path: Path):
    """The report at ``path`` in the current schema (a schema 3 one mapped, claims/legacy.py)."""
    return current(json.loads(path.read_text(encoding="utf-8")), str(path)) if path.is_file() else None


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m claims.readme",
                                description="Render README.md's verdict tables from docs/results/*.json.")
    p.add_argument("--check", action="store_true", help="exit 1 if README.md is not up to date")
    p.add_argument("--readme", default=str(ROOT / "README.md"), help="the README to render into")
    p.add_argument("--results", default=str(RESULTS), help="folder of quick.json and paper.json")
    args = p.parse_args(argv)
    quick = _load(Path(args.results) / "quick.json")
    if quick is None:
        print(f"claims.readme: {args.results}/quick.json is missing", file=sys.stderr)
        return 2
    block = render_block(quick, _load(Path(args.results) / "paper.json"))
    readme = Path(args.readme)
    old = readme.read_text(encoding="utf-8")
    try:
        new = replace_block(old, block)
    except ValueError as exc:
        print(f"claims.readme: {exc}", file=sys.stderr)
        return 2
    if args.check:
        if new != old:
            sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), new.splitlines(True),
                                                       "README.md (committed)", "README.md (rendered)"))
            return 1
        return 0
    if new != old:
        readme.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
