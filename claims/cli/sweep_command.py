"""What ``ldsicl sweep`` does: the claims' own pytest run at each cell of a grid of points, gathered
into one sweep file, with its report (claims/cluster/sweep.py, claims/reports/sweep.py).

:func:`add_parser` adds the subcommand to ``ldsicl``'s subparsers (claims/cli/main.py);
:func:`run_sweep` runs it.  The conventions of claims/cli/commands.py: every argument --
the grid (claims/cluster/grid.py: unknown parameter, empty or repeated axis, repeated or
non-numeric value, a cell outside the claims' premise, more than 512 cells), the claims,
the ``-k`` expression, the profile, the output folder, the scheduler and the workers -- is
checked before any work, a bad one reported as one line naming its option (exit status 2).
Then the sweep's cost is estimated (:func:`sweep_cost`, an upper bound; claims/cli/costs.py):
announced on stderr, or refused in one line past the budget unless ``--yes`` (on a cluster's
address its core-time is announced, not held against this machine's budget).  Then each cell
runs as one task on the executor (claims/cluster/executor.py: a local process
pool, ``--scheduler local`` a dask LocalCluster, or a dask cluster's address); one line is
printed per cell as it finishes (cell, status, seconds, checks held / failed), then where
the sweep file and the report are.  A cell already done with the same profile, params and
selection is reused, and says so.  ``--report-only`` renders ``OUT/sweep.json`` again
without running anything.

Exit status: 0 every cell ran (a check that fails is an outcome, recorded), 1 some cell
failed (pytest crashed or wrote no usable report: the report lists why), 2 a bad argument.
Nothing here imports torch or dask at import time (tests/test_startup.py); the estimate of a
sweep that trains imports torch (the run store's configurations and the cache key).
"""
from __future__ import annotations

import argparse
import contextlib
import os
from pathlib import Path

from claims.cli import costs
from claims.cli.shared import MAX_WORKERS, REPO, ParameterError, check_out_dir, short, usage_error
from claims.harness.profiles import PROFILES

__all__ = ["add_parser", "run_sweep", "sweep_cost", "DEFAULT_OUT", "CELL_SECONDS"]

#: a cell's pytest run of a few selected checks (``-k``): a sweep of four twin cells took
#: 103.8 s on one worker (docs/running.md, "What a cluster buys")
CELL_SECONDS = 26.0

#: where a sweep goes unless ``--out`` says otherwise
DEFAULT_OUT = REPO / "reports" / "sweep"

_EXAMPLES = (
    'ldsicl sweep --grid "T=10,30,60" --claims ar1-optimum -k exact_kappa_equals_quadrature',
    'ldsicl sweep --grid "T=10,30 d=1,3,5" --claims banding,pcg-alignment --profile quick',
    'ldsicl sweep --grid "T=30,60 sigma_w=0.05,0.1,0.3" --claims ar1-optimum --scheduler local --workers 4',
    'ldsicl sweep --grid "d=3,5" --claims depth --scheduler tcp://10.0.0.5:8786 --out /tmp/sweep',
    "ldsicl sweep --report-only --out /tmp/sweep",
)


def _workers(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = None
    if n is None or n < 1:
        raise argparse.ArgumentTypeError(f"workers must be an integer >= 1, got {short(text)}")
    if n > MAX_WORKERS:
        raise argparse.ArgumentTypeError(f"workers must be <= {MAX_WORKERS}, got {short(text)}")
    return n


def add_parser(subparsers, formatter_class):
    """Add ``sweep`` to ``subparsers`` (``ldsicl``'s), its help formatted by ``formatter_class``."""
    p = subparsers.add_parser(
        "sweep", help="run the claims at every cell of a grid of points and map their verdicts",
        formatter_class=formatter_class,
        description="Run the claims' own pytest run (`pytest <their files> --claims-params CELL`) at each cell "
                    "of a grid of points of the family's parameters, each cell a task on a local process pool "
                    "or a dask cluster, and gather the cells into DIR/sweep.json with a report: a verdict map "
                    "(headline check x cell, sweep.md and index.html) and heatmaps of the reported measures "
                    "over the grid (DIR/figures/).  A cell already done with the same profile, params and "
                    "selection is reused; trained runs come from the weight cache.",
        epilog="examples:\n" + "\n".join(f"  {line}" for line in _EXAMPLES)
               + "\n\nexit status: 0 every cell ran (failing checks included), 1 a cell failed, 2 a bad argument")
    p.add_argument("--grid", default=None, metavar="AXES",
                   help="the grid: NAME=V1,V2,... axes separated by spaces, NAME one of T, d, sigma_w, sigma_v, "
                        "sigma_0, the others at their defaults; at most 512 cells (required unless --report-only)")
    p.add_argument("--claims", default=None, metavar="NAMES",
                   help="the claims to run, by name, comma-separated (ar1-optimum, banding, ...; `ldsicl runs` "
                        "lists them; required unless --report-only)")
    p.add_argument("--select", "-k", dest="select", default=None, metavar="EXPR",
                   help="a pytest -k expression: run only the claims' tests it selects (default: all of them)")
    p.add_argument("--untrained", action="store_true",
                   help="skip the checks that read trained runs and train nothing (each cell runs "
                        "--claims-untrained): the claims' theory side, cheap at every cell")
    p.add_argument("--profile", choices=tuple(PROFILES), default="quick", help="the profile of every cell")
    p.add_argument("--out", default=str(DEFAULT_OUT), metavar="DIR",
                   help="the sweep's folder: cells/, sweep.json, sweep.md, index.html, figures/")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="'local' for a dask LocalCluster, or a dask scheduler's address such as "
                        "tcp://10.0.0.5:8786 (default: a local process pool)")
    p.add_argument("--workers", type=_workers, default=None, metavar="N",
                   help="cells run at once on the local pool or --scheduler local (default: one per CPU)")
    p.add_argument("--report-only", action="store_true",
                   help="run nothing: render the report of DIR/sweep.json again")
    return p


def _out_dir(parser, text: str) -> Path:
    try:
        return check_out_dir(text)
    except ValueError as exc:
        usage_error(parser, exc)


def _cell_line(cell, grid) -> str:
    """The line printed when a cell is known.

    >>> from claims.cluster.grid import Grid
    >>> from claims.cluster.sweepfile import SweepCell
    >>> g = Grid.parse("T=10,30")
    >>> _cell_line(SweepCell("T=10", g.cells()[0], "failed", 4, 2.04, 1.5, "cpu", "h", False,
    ...                      "pytest exit status 4 (pytest usage error): ...", None, ()), g)
    'cell T=10: failed in 2.0 s: pytest exit status 4 (pytest usage error): ...'
    """
    s = cell.summary
    plural = "" if s is None or s.checks == 1 else "s"
    counts = "" if s is None else f", {s.checks} check{plural}: {s.held} held, {s.failed} failed"
    counts += f", {s.reported} reported" if s is not None and s.reported else ""
    took = "-" if cell.seconds is None else f"{cell.seconds:.1f} s"
    if cell.reused:
        return (f"cell {grid.label(cell.params)}: reused ({cell.status}, {took} when it ran; same profile, params "
                f"and selection){counts}")
    tail = f": {cell.error.strip().splitlines()[0]}" if cell.status == "failed" and cell.error else ""
    return f"cell {grid.label(cell.params)}: {cell.status} in {took}{counts}{tail}"


def _report(result, out: Path) -> None:
    from claims.reports.sweep import render_sweep       # matplotlib: only when the report is drawn

    paths = render_sweep(result, out)
    n = len(paths["figures"])
    print(f"report: {paths['html']}")
    print(f"        {paths['md']}" + (f" ({n} figures in {out / 'figures'})" if n else " (no figures)"))


def run_sweep(args, parser) -> int:
    """``ldsicl sweep`` (module doc)."""
    from claims.cluster.executor import check_scheduler, check_workers
    from claims.cluster.grid import Grid
    from claims.cluster.sweepfile import SWEEP_FILE, Selection, load_sweep

    try:
        if args.report_only:
            given = [f for f, v in (("--grid", args.grid), ("--claims", args.claims), ("--select", args.select),
                                    ("--untrained", args.untrained or None), ("--scheduler", args.scheduler),
                                    ("--workers", args.workers)) if v is not None]
            if given:
                raise ParameterError(None, f"--report-only runs nothing; it takes only --out, not {', '.join(given)}")
        else:
            missing = [f for f, v in (("--grid", args.grid), ("--claims", args.claims)) if v is None]
            if missing:
                raise ParameterError(None, f"{' and '.join(missing)} {'is' if len(missing) == 1 else 'are'} "
                                           "required (or --report-only)")
            grid = Grid.parse(args.grid)
            selection = Selection.parse(args.claims, args.select, args.untrained)
            scheduler = check_scheduler(args.scheduler)
            workers = check_workers(scheduler, args.workers)
    except ValueError as exc:
        usage_error(parser, exc)
    if not args.report_only:
        try:
            cost = sweep_cost(grid, selection, args.profile, workers, remote=scheduler not in (None, "local"))
        except ValueError as exc:
            usage_error(parser, exc)
        costs.enforce(parser, cost, yes=args.yes or scheduler not in (None, "local"))   # a cluster's time
    if args.report_only:
        out = Path(args.out).expanduser()
        try:
            result = load_sweep(out / SWEEP_FILE)
        except ValueError as exc:
            usage_error(parser, ParameterError("out", f"out: {exc}"))
        _report(result, _out_dir(parser, args.out))
        return 0
    return _sweep(parser, grid, selection, args.profile, _out_dir(parser, args.out), scheduler, workers)


def sweep_cost(grid, selection, profile: str, workers, *, remote: bool = False):
    """The :class:`~claims.cli.costs.Cost` of a sweep, an upper bound (cells already done are
    reused, ``-k`` may skip trained checks): per cell :data:`CELL_SECONDS`, plus, without
    ``-k``, each claim's share of its profile's evaluation
    (claims.cli.compute_commands.EVALUATION_SECONDS on 2 cores, split evenly among the
    claims), plus, unless ``--untrained``, the training of every run the claims train at that
    cell that the weight cache lacks; the cells spread over the workers."""
    from claims.cli.compute_commands import EVALUATION_SECONDS
    from claims.harness.params import activate
    from claims.specs import CLAIMS, claim_runs

    per_claim = 0.0 if selection.select else 2 * EVALUATION_SECONDS[profile] / len(CLAIMS)
    base = CELL_SECONDS + per_claim * len(selection.claims)
    cells = []
    if selection.untrained:
        cells = [costs.Cost(base, 0, "cell") for _ in grid.cells()]
    else:
        from claims.harness.profiles import get_profile
        from claims.harness.runs import config_for                 # torch: the run store's configurations
        from models.cache import cache_path
        from models.trainer import memory_estimate

        prof = get_profile(profile)
        for point in grid.cells():
            with activate(point):
                ids = dict.fromkeys(r.run for name in selection.claims for r in claim_runs(name, prof))
            runs = [config_for(rid, prof) for rid in ids]
            todo = [costs.train_cost(c, memory_estimate(c)) for c in runs if not cache_path(c).is_file()]
            cells.append(costs.Cost(base + sum(c.seconds for c in todo), max((c.bytes for c in todo), default=0),
                                    "cell"))
    n = workers or (1 if remote else os.cpu_count() or 1)      # a cluster: its core-time
    total = costs.runs_cost(cells, n, f"the sweep of {len(cells)} cell{'' if len(cells) == 1 else 's'} of --grid "
                                      f"{grid.tag()}, claims "
                                      f"{selection.describe()}, {n} at a time, at most")
    return costs.Cost(total.seconds, 0 if remote else total.bytes, total.what, "fewer cells or --untrained")


def _sweep(parser, grid, selection, profile, out: Path, scheduler, workers) -> int:
    from claims.cluster.executor import open_executor
    from claims.cluster.sweep import run_sweep as sweep
    from claims.cluster.sweepfile import SWEEP_FILE

    n = len(grid.cells())
    print(f"sweep: {n} cell{'' if n == 1 else 's'} of {grid.tag()}, claims {selection.describe()}, "
          f"profile {profile} -> {out}", flush=True)
    # the local pool shares this machine's cores among the cells it runs at once
    threads = None if scheduler else max(1, (os.cpu_count() or 1) // min(n, workers or os.cpu_count() or 1))
    with contextlib.ExitStack() as stack:
        try:
            executor = stack.enter_context(open_executor(scheduler, workers))
        except ValueError as exc:                  # no dask, an unreachable scheduler: before any cell ran
            usage_error(parser, exc)
        result = sweep(grid, selection, profile, out, executor, threads=threads,
                       on_cell=lambda cell: print(_cell_line(cell, grid), flush=True),
                       log=lambda line: print(line, flush=True))
    failed = [grid.label(c.params) for c in result.cells if c.status == "failed"]
    print(f"sweep: {out / SWEEP_FILE} ({n} cell{'' if n == 1 else 's'}"
          + (f"; failed: {', '.join(failed)}" if failed else "") + ")")
    _report(result, out)
    return 1 if failed else 0
