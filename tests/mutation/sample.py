"""Seeded random sample of mutmut mutants over theory/, models/ and claims/ (the harness, not the
claim files; docs/mutation.md).

Not a test module (pytest collects ``test_*.py`` only) and never run in CI.  Run it from
the repository root with mutmut 3.8.1 installed (``pip install -e ".[test,mutation]"``):

    CI=1 python tests/mutation/sample.py --seed 7 --n 300 --run      # generate, sample, run
    python tests/mutation/sample.py --seed 7 --n 300 --report        # kill rate of the sample

How the sample is drawn (reproducible for a given source tree):

1. mutmut writes every mutant of every function in ``source_paths`` ([tool.mutmut] in
   pyproject.toml) into ``mutants/`` (its own generator, nothing filtered);
2. the mutant names (``theory.kappa.x_kappa__mutmut_12``, ...) are read from the
   ``mutants/**/*.py.meta`` files and sorted as strings;
3. ``random.Random(seed).sample(names, n)`` picks ``n`` of them, sorted again;
4. ``mutmut run --max-children N NAME ...`` runs exactly those (``--run``; N = ``--children``,
   default 2), with Python allowed to write bytecode: mutmut's copy of the modules is about
   five times the size of ours, and a process that compiles it afresh (every subprocess a
   test starts, where ``PYTHONDONTWRITEBYTECODE`` is set) spends 35 s on the imports alone.

Kill rate = killed / (killed + survived), where a timeout counts as killed (the tests
did not pass) and a mutant that no test reaches ("no tests") counts as survived.
``--names FILE`` runs or reports an explicit list instead (one name a line), e.g. the
survivors after new tests were added.

``--merge OLD.json NEW.json ...`` (with ``--names`` the sample's list) joins reports of parts of
one sample run at different commits into one report for the checked-out tree: each mutant's
outcome is taken from the last part that ran it, and a part's outcome is taken only where the
mutated function's source at that part's commit equals today's (``ast.dump`` of the function
or method; mutmut numbers a function's mutants from its source alone, so equal source, equal
mutant).  A mutant whose function changed since the only part that ran it is "not checked".
The merged report also says where the sample stands on today's tree (``drawn_from``): how many
of today's mutants lie in functions unchanged since the commit it was drawn at -- of those the
sample is a uniform draw -- and which functions changed or were added since, with their mutants
(``--drawn-at`` names the commit of the draw where it is not the first part's).
``--outside-frame COMMIT`` draws from those changed or added functions' mutants alone.

``--report``, ``--list`` and ``--merge`` read the mutants in ``mutants/`` as they are (they
generate them only where there are none); ``mutmut run`` brings the changed files up to date
itself.  After a change to the source without a run, delete ``mutants/`` before a report.
"""
from __future__ import annotations

import argparse
import ast
import functools
import json
import math
import os
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path

KILLED = {"killed", "timeout", "segfault", "caught by type check"}
SURVIVED = {"survived", "no tests"}
METHOD = "\u01c1"    # mutmut's separator in a method's mutant name: x\u01c1Class\u01c1method


def generate() -> None:
    """Write all mutants into mutants/ with mutmut's own generator (no tests are run)."""
    from mutmut.__main__ import create_mutants
    from mutmut.utils.file_utils import copy_also_copy_files, copy_src_dir, setup_source_paths

    Path("mutants").mkdir(exist_ok=True)
    copy_src_dir()
    copy_also_copy_files()
    setup_source_paths()
    create_mutants(1)


def meta_files() -> list[Path]:
    return sorted(Path("mutants").glob("**/*.py.meta"))


def all_names() -> list[str]:
    names = []
    for meta in meta_files():
        names += json.loads(meta.read_text())["exit_code_by_key"]
    return sorted(names)


def exit_codes() -> dict:
    codes = {}
    for meta in meta_files():
        codes.update(json.loads(meta.read_text())["exit_code_by_key"])
    return codes


def draw(seed: int, n: int, names: list[str] | None = None) -> list[str]:
    """``n`` of ``names`` (default: every mutant), seeded, sorted."""
    names = sorted(all_names() if names is None else names)
    if n > len(names):
        raise SystemExit(f"--n {n} exceeds the {len(names)} mutants")
    return sorted(random.Random(seed).sample(names, n))


def provenance() -> dict:
    """The commit checked out and the git tree ids of the mutated packages: the sample is a
    function of those trees (a change elsewhere -- tests, docs -- leaves it as it is)."""
    def git(*args):
        out = subprocess.run(["git", *args], capture_output=True, text=True)
        return out.stdout.strip() if out.returncode == 0 else None
    trees = {pkg: git("rev-parse", f"HEAD:{pkg}") for pkg in ("theory", "models", "claims")}
    dirty = git("status", "--porcelain", "--", "theory", "models", "claims")
    return {"commit": git("rev-parse", "--short=7", "HEAD"), "source_trees": trees,
            "source_modified_since_commit": bool(dirty)}


def report(names: list[str]) -> dict:
    from mutmut.stats import status_by_exit_code

    codes = exit_codes()
    status = {name: status_by_exit_code[codes.get(name)] for name in names}
    return {**tally(status), "statuses": dict(sorted(status.items()))}


def wilson95(k: int, n: int) -> list[float] | None:
    """Wilson's 95 % interval of a proportion k / n (None for n = 0): the two p with
    (k/n - p)^2 = z^2 p (1 - p) / n; e.g. 279 of 300: [0.8954..., 0.9538...]."""
    if n == 0:
        return None
    z, p = 1.959963984540054, k / n
    centre, half = p + z * z / (2 * n), z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return [(centre - half) / (1 + z * z / n), (centre + half) / (1 + z * z / n)]


def tally(status: dict) -> dict:
    """The counts of a sample's statuses: killed (a timeout counted as killed), survived (a
    mutant no test reaches counted as survived), the kill rate and its Wilson 95 % interval
    (the sample's uncertainty about the rate of the mutants it was drawn from), the survivors
    and the mutants neither killed nor survived (not run, not checked)."""
    counts = Counter(status.values())
    killed = sum(v for s, v in counts.items() if s in KILLED)
    survived = sum(v for s, v in counts.items() if s in SURVIVED)
    return {"n": len(status), "counts": dict(sorted(counts.items())), "killed": killed,
            "survived": survived,
            "kill_rate": killed / (killed + survived) if killed + survived else None,
            "kill_rate_wilson95": wilson95(killed, killed + survived),
            "survivors": sorted(n for n, s in status.items() if s in SURVIVED),
            "other": sorted(f"{n}: {s}" for n, s in status.items() if s not in KILLED | SURVIVED)}


def _target(name: str) -> tuple[str, list[str]]:
    """A mutant's module path and qualified function name: ``theory.kappa.x_kappa__mutmut_3``
    -> (``theory/kappa.py``, [``kappa``]); ``models.result.xǁTrainResultǁfrom_dict__mutmut_1``
    -> (``models/result.py``, [``TrainResult``, ``from_dict``])."""
    head, sep, num = name.rpartition("__mutmut_")
    if not sep or not num.isdigit():
        raise ValueError(f"not a mutmut mutant name: {name!r}")
    module, _, func = head.rpartition(".")
    if not func.startswith("x"):
        raise ValueError(f"not a mutmut mutant name: {name!r}")
    parts = [q for q in func[1:].split(METHOD) if q] if METHOD in func else [func[2:]]
    return module.replace(".", "/") + ".py", parts


def _function_key(path: str, qual) -> str:
    """``path:qualified.name`` of a function (how :func:`frame` lists functions)."""
    return f"{path}:{'.'.join(qual)}"


def function_source(text: str | None, qual: list[str]) -> str | None:
    """``ast.dump`` of the function ``qual`` (top-level, or a method of a top-level class) in a
    module's text; None when the text or the function is absent."""
    if text is None:
        return None
    body = ast.parse(text).body
    for i, part in enumerate(qual):
        kinds = (ast.FunctionDef, ast.AsyncFunctionDef) if i == len(qual) - 1 else (ast.ClassDef,)
        node = next((n for n in body if isinstance(n, kinds) and n.name == part), None)
        if node is None:
            return None
        body = node.body
    return ast.dump(node)


def _show(commit: str | None, path: str) -> str | None:
    """A file's text at a commit (None: not there), or in the working tree (commit None)."""
    if commit is None:
        f = Path(path)
        if not f.exists() and f.with_suffix("").is_dir():
            f = f.with_suffix("") / "__init__.py"
        return f.read_text(encoding="utf-8") if f.exists() else None
    for p in (path, path[:-3] + "/__init__.py"):
        out = subprocess.run(["git", "show", f"{commit}:{p}"], capture_output=True, text=True)
        if out.returncode == 0:
            return out.stdout
    return None


def part_statuses(rep: dict, names: list[str]) -> dict:
    """Each mutant's status in one report: its own ``statuses`` where it recorded them, else
    rebuilt from the sample (``survivors`` and ``other`` named, the rest killed -- a timeout
    among them is counted as killed either way)."""
    if "statuses" in rep:
        return dict(rep["statuses"])
    other = dict(o.split(": ", 1) for o in rep["other"])
    survived = set(rep["survivors"])
    out = {n: ("survived" if n in survived else other.get(n, "killed")) for n in names}
    if len(out) != rep["n"] or sum(s in KILLED for s in out.values()) != rep["killed"]:
        raise ValueError("the report's counts do not match the sample it is merged with")
    return out


def merge(parts: list[dict], names: list[str], source=_show) -> dict:
    """One report of ``names`` from reports of parts of its run (oldest first); ``source(commit,
    path)`` reads a module's text at a part's commit (None: today's working tree).

    A mutant's outcome is that of the last part whose outcome can be taken: one run where
    the mutated function's source equals today's.  What this does not see: a change outside
    the function (a callee, a class attribute, module-level code) that changes what the same
    mutant does.  ``changed_since_their_part`` lists the mutants no outcome of which could be
    taken.  A part measured on a source tree that differed from its commit is refused."""
    source = functools.lru_cache(maxsize=None)(source)
    status = {n: "not checked" for n in names}
    origin: dict[str, int] = {}
    stale: set[str] = set()
    for k, rep in enumerate(parts):
        if rep.get("source_modified_since_commit"):
            raise ValueError(f"part {k} ({rep['commit']}) was measured on a source tree that differs from its commit")
        for n, s in part_statuses(rep, names).items():
            if n not in status:
                raise ValueError(f"{n} is not in the sample")
            if s not in KILLED | SURVIVED:
                continue
            path, qual = _target(n)
            then = function_source(source(rep["commit"], path), qual)
            if then is None or then != function_source(source(None, path), qual):
                stale.add(n)
                continue
            status[n], origin[n] = s, k
    stale -= set(origin)
    return {**tally(status),
            "parts": [{"commit": rep["commit"], "source_trees": rep.get("source_trees"),
                       "taken": sum(1 for v in origin.values() if v == k)} for k, rep in enumerate(parts)],
            "changed_since_their_part": sorted(stale)}


def frame(commit: str, today: list[str], source=_show) -> dict:
    """Where a sample drawn at ``commit`` stands on today's tree: how many of today's mutants
    (``today``) lie in functions whose source is unchanged since ``commit`` (the same mutants,
    of which the sample is a uniform draw), and the functions changed or added since, each with
    its number of mutants today (outside the sample's frame)."""
    source = functools.lru_cache(maxsize=None)(source)
    by_function: Counter = Counter(tuple([path, *qual]) for path, qual in map(_target, today))
    same, changed = 0, {}
    for (path, *qual), count in sorted(by_function.items()):
        now = function_source(source(None, path), qual)
        if now is not None and now == function_source(source(commit, path), qual):
            same += count
        else:
            changed[_function_key(path, qual)] = count
    return {"today_in_unchanged_functions": same, "today_in_changed_functions": changed}


def outside_frame(commit: str, today: list[str], source=_show) -> list[str]:
    """Today's mutants in the functions changed or added since ``commit`` (see :func:`frame`):
    the population a sample drawn at ``commit`` does not cover."""
    changed = set(frame(commit, today, source)["today_in_changed_functions"])
    return sorted(n for n in today if _function_key(*_target(n)) in changed)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--n", type=int, default=300)
    p.add_argument("--names", type=Path, help="a file of mutant names instead of the seeded sample")
    p.add_argument("--run", action="store_true", help="run mutmut on the sample")
    p.add_argument("--report", action="store_true", help="print the kill rate of the sample (JSON)")
    p.add_argument("--list", action="store_true", help="print the sampled names")
    p.add_argument("--children", type=int, default=2, help="mutmut's --max-children (parallel mutant runs)")
    p.add_argument("--outside-frame", metavar="COMMIT",
                   help="draw from the mutants of the functions changed since COMMIT only (the "
                        "mutants a sample drawn at COMMIT does not cover)")
    p.add_argument("--merge", type=Path, nargs="+", metavar="REPORT",
                   help="join reports of parts of one run (oldest first; needs --names, the sample)")
    p.add_argument("--drawn-at", metavar="COMMIT",
                   help="with --merge: the commit the sample was drawn at (default: the first part's)")
    args = p.parse_args(argv)
    if args.merge:
        if not args.names:
            raise SystemExit("--merge needs --names, the sample's list of mutants")
        names = [ln.strip() for ln in args.names.read_text().splitlines() if ln.strip()]
        parts = [json.loads(f.read_text(encoding="utf-8")) for f in args.merge]
        first = parts[0]
        drawn_at = args.drawn_at or first["commit"]
        if not meta_files():
            generate()
        print(json.dumps({"seed": first["seed"], "total_mutants": len(all_names()),
                          "sample": str(args.names), **provenance(),
                          "drawn_from": {"commit": drawn_at, "total_mutants": first["total_mutants"],
                                         **frame(drawn_at, all_names())},
                          **merge(parts, names), "merged": [str(f) for f in args.merge]}, indent=1))
        return 0
    if not meta_files():
        generate()
    names = ([ln.strip() for ln in args.names.read_text().splitlines() if ln.strip()]
             if args.names else draw(args.seed, args.n, outside_frame(args.outside_frame, all_names())
                                     if args.outside_frame else None))
    if args.list:
        print("\n".join(names))
    if args.run:
        if args.children < 1:
            raise SystemExit(f"--children must be at least 1, not {args.children}")
        cmd = [str(Path(sys.executable).with_name("mutmut")), "run", "--max-children", str(args.children), *names]
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        rc = subprocess.call(cmd, env=env)
        if rc:
            return rc
    if args.report:
        print(json.dumps({"seed": args.seed, "total_mutants": len(all_names()), **provenance(),
                          **report(names)}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
