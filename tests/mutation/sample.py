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
"""
from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path

KILLED = {"killed", "timeout", "segfault", "caught by type check"}
SURVIVED = {"survived", "no tests"}


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


def draw(seed: int, n: int) -> list[str]:
    names = all_names()
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
    counts = Counter(status.values())
    killed = sum(counts[s] for s in KILLED)
    survived = sum(counts[s] for s in SURVIVED)
    out = {"n": len(names), "counts": dict(sorted(counts.items())), "killed": killed,
           "survived": survived,
           "kill_rate": killed / (killed + survived) if killed + survived else None,
           "survivors": sorted(n for n, s in status.items() if s in SURVIVED),
           "other": sorted(f"{n}: {s}" for n, s in status.items() if s not in KILLED | SURVIVED)}
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--n", type=int, default=300)
    p.add_argument("--names", type=Path, help="a file of mutant names instead of the seeded sample")
    p.add_argument("--run", action="store_true", help="run mutmut on the sample")
    p.add_argument("--report", action="store_true", help="print the kill rate of the sample (JSON)")
    p.add_argument("--list", action="store_true", help="print the sampled names")
    p.add_argument("--children", type=int, default=2, help="mutmut's --max-children (parallel mutant runs)")
    args = p.parse_args(argv)
    if not meta_files():
        generate()
    names = ([ln.strip() for ln in args.names.read_text().splitlines() if ln.strip()]
             if args.names else draw(args.seed, args.n))
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
