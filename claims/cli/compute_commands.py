"""What the ``ldsicl`` subcommands kappa, optimum and report do (claims/cli/main.py holds the parser;
train: claims/cli/commands.py, whose conventions these follow).

Each ``run_<command>(args, parser)`` validates its arguments -- a bad one is one line naming its
flag (claims.cli.shared.usage_error, exit status 2) -- then estimates the work from them
(claims/cli/costs.py) and announces it or refuses it in one line (exit status 2; ``--yes``
lifts the time and memory budget, never the machine's available memory), and only then does
it.  ``report --run`` estimates the claims run it starts: the training of the profile's runs
the weight cache lacks, and the evaluation (:data:`EVALUATION_SECONDS`).

Imports: none of this imports torch at import time, and kappa, optimum and report without
``--run`` never do (tests/test_startup.py); scipy.optimize (theory.optimum) and the report's
specs and matplotlib are imported by the command that uses them.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

from claims.cli import costs
from claims.cli.shared import (REPO, ParameterError, check_out_dir, family, format_matrix, naming,
                               usage_error, window)
from theory import kappa as kappa_mod
from theory.jsonvalues import dumps

__all__ = ["run_kappa", "run_optimum", "run_report", "EVALUATION_SECONDS"]

#: wall-clock seconds of the claims' evaluation once every weight is cached, on 2 cores
#: (docs/running.md, Profiles: about 8 min for quick; 21.8 min for paper on the slower Intel
#: kind of CI machine, 10.6 min on the AMD kind: an estimate keeps the slower)
EVALUATION_SECONDS = {"quick": 8 * 60.0, "paper": 21.8 * 60}


def _library_refuses(family_, method: str, m: int) -> bool:
    """Whether theory.kappa.kappa refuses the route itself (over its MAX_BYTES, one line naming
    T or m): then that refusal, not a budget the --yes could lift, is what the user sees."""
    if method == "exact-rational":
        return False
    return kappa_mod.route_bytes(family_, method, 1 if method == "mc-moments" else None) > kappa_mod.MAX_BYTES \
        or (method.startswith("mc") and 16 * m > kappa_mod.MAX_BYTES)


def run_kappa(args, parser) -> int:
    """``ldsicl kappa``: theory.kappa.kappa (the one place that picks a route) with the exact
    variances typed (1/3 stays 1/3 on the exact route), after its cost is estimated."""
    try:
        fam = family(args)
        variances = tuple(q ** 2 for q in (args.sigma_w, args.sigma_v, args.sigma_0))
        method = {"exact": "exact-rational", "quadrature": "gauss-legendre"}.get(args.method, args.method)
        why = None
        with naming("method"):
            if method == "auto":
                method, why = kappa_mod.choose_method(fam)
            routes = kappa_mod.exact_routes(fam)
        if (method in routes or method.startswith("mc")) and not _library_refuses(fam, method, args.mc_systems):
            costs.enforce(parser, costs.kappa_cost(fam, method, args.mc_systems), yes=args.yes)
        with naming("method", "T", "m", "seed"):
            res = kappa_mod.kappa(fam, method=method, m=args.mc_systems, seed=args.seed, variances=variances)
    except ValueError as exc:
        usage_error(parser, exc)
    if args.json:
        out = res.to_json()
        out.update({"setting": args.setting, "T": args.T, "d": args.d, "sigma_w": str(args.sigma_w),
                    "sigma_v": str(args.sigma_v), "sigma_0": str(args.sigma_0), "auto": why})
        print(dumps(out))
        return 0
    print(f"kappa = {res.kappa!r}  (method {res.method}" + (f"; auto: {why}" if why else "") + ")")
    if res.exact is not None:
        print(f"exact = {res.exact.numerator}/{res.exact.denominator}")
    elif res.stderr:
        print(f"stderr = {res.stderr!r}")
    print(f"setting {args.setting}, T={args.T}, d={args.d}, sigma_w={args.sigma_w}, "
          f"sigma_v={args.sigma_v}, sigma_0={args.sigma_0}")
    return 0


def run_optimum(args, parser) -> int:
    """``ldsicl optimum``: theory.optimum.optimum_for, every field under a name that says what it is."""
    from theory.optimum import MAX_STARTS, MAX_TRAJECTORIES, optimum_for   # scipy.optimize: about 1 s
    from theory.population import moment_memory, moments_route

    try:
        fam = family(args)
        # the window must fit the sequence, and the moments the memory: blamed on --s unless
        # --T was moved from its default
        blame = "T" if args.T != parser.get_default("T") else "s"
        window(args.s, args.T, blame=blame)
        if args.starts > MAX_STARTS:                   # before the estimate, which would say --yes
            raise ParameterError("starts", f"starts must be <= {MAX_STARTS}, got {args.starts}")
        need = moment_memory(args.s, args.T)
        if need > args.max_memory * 2 ** 30:
            other = f"s = {args.s}" if blame == "T" else f"T = {args.T}"
            raise ParameterError(blame, f"{blame} = {getattr(args, blame)} needs about {need / 2 ** 30:.3g} GiB "
                                 f"for the moments (at {other}), more than the --max-memory of "
                                 f"{args.max_memory:g} GiB; raise that, or a smaller {blame}")
        if moments_route(fam) == "monte-carlo" and args.trajectories > MAX_TRAJECTORIES:
            raise ParameterError("trajectories", f"trajectories must be <= {MAX_TRAJECTORIES:.0e}, got "
                                                 f"{args.trajectories}")
        costs.enforce(parser, costs.optimum_cost(fam, args.s, args.starts, args.trajectories, not args.no_classes),
                      yes=args.yes)
        with naming("s", "starts", "seed", "trajectories"):
            opt = optimum_for(fam, args.s, args.seed, starts=args.starts, in_class=not args.no_classes,
                              trajectories=args.trajectories)
    except ValueError as exc:
        usage_error(parser, exc)
    s = args.s
    in_class = opt.cls if opt.cls and opt.out_of_class_share <= 1e-8 else None
    out = {
        "loss": opt.loss, "stderr": opt.stderr, "method": opt.method,
        "W_V": np.asarray(opt.W_V).tolist(), "W_QK": np.asarray(opt.W_QK).tolist(),
        "class": in_class, "nearer_class": opt.cls,
        "out_of_class_share": opt.out_of_class_share,
        "out_of_class_share_by_class": opt.shares,
        "odd_share": opt.odd_share, "grad_norm": opt.grad_norm, "hessian_eigs": list(opt.hessian_eigs),
        "starts": opt.n_starts, "converged": opt.n_converged, "at_optimum": opt.n_at_optimum,
        "found_only_by_in_class_starts": opt.found_in_class, "seed": opt.seed,
        "in_class": {k: {"loss": v.loss, "rel_excess": v.rel_excess, "excess_stderr": v.excess_stderr,
                         "full_hessian_min_eig": v.full_hessian_min_eig} for k, v in opt.in_class.items()},
        "stationary_points": [{"loss": p.loss, "rel_excess": (p.loss - opt.loss) / opt.loss, "starts": n,
                               "class": p.cls if p.out_of_class_share <= 1e-8 else None,
                               "nearer_class": p.cls, "out_of_class_share": p.out_of_class_share,
                               "kind": p.kind}
                              for p, n in opt.stationary_points],
        "setting": args.setting, "s": s, "T": args.T, "d": args.d, "sigma_w": str(args.sigma_w),
        "sigma_v": str(args.sigma_v), "sigma_0": str(args.sigma_0),
    }
    if args.json:
        print(dumps(out))
        return 0
    print(f"L* = {opt.loss!r}" + (f" +- {opt.stderr:.2g}" if opt.stderr else "") + f"  (moments: {opt.method})")
    print(f"class {in_class or 'none'} (out-of-class share {opt.out_of_class_share:.3g}, odd share "
          f"{opt.odd_share:.3g}); {opt.n_at_optimum} of {opt.n_starts} starts reached L*")
    for k, v in opt.in_class.items():
        print(f"best point in class {k}: {100 * v.rel_excess:+.4g} % of L*")
    print("b = W_V[s, :] (canonical gauge, largest |b_r| = 1) =")
    print(format_matrix(np.asarray(opt.W_V)[s:s + 1]))
    print("W_QK[:, :s] =")
    print(format_matrix(np.asarray(opt.W_QK)[:, :s]))
    print(f"setting {args.setting}, s={s}, T={args.T}, d={args.d}, sigma_w={args.sigma_w}, "
          f"sigma_v={args.sigma_v}, sigma_0={args.sigma_0}")
    return 0


def _source(args, out: Path) -> Path:
    """The claims.json ``--from`` names (DIR/claims.json by default): a file that exists,
    checked before the claims run or the rendering; ParameterError naming ``from``."""
    if args.source is None:
        if not (out / "claims.json").is_file():
            raise ParameterError("from", f"from: none given, and {str(out / 'claims.json')!r} does not exist; "
                                 "give --from FILE, or --run to run the claims first")
        return out / "claims.json"
    if not args.source.strip():
        raise ParameterError("from", "from must be a claims.json file, got ''")
    src = Path(args.source).expanduser()
    if src.is_dir():
        raise ParameterError("from", f"from must be a claims.json file, got the directory {str(src)!r}")
    if not src.is_file():
        raise ParameterError("from", f"from: no such file {str(src)!r}")
    return src


def run_report(args, parser) -> int:
    """``ldsicl report``: render a finished claims.json (or run the claims first) into DIR."""
    from claims.harness.reportfile import SCHEMA, load_report   # the records (no torch)

    try:
        out = check_out_dir(args.out)
        src = None if args.run else _source(args, out)
        if args.run and args.source is not None:
            raise ParameterError("from", "from: --run renders the claims run it starts, not --from's file; "
                                 "give one of them")
        if args.run and not (REPO / "claims" / "test_banding.py").is_file():
            raise ParameterError("run", "run needs a checkout of the repository (the claim files are not "
                                 "installed with the package)")
    except ValueError as exc:
        usage_error(parser, exc)
    if args.run:
        from claims.cli.commands import profile_cost      # the run store's configurations: torch

        try:
            cost = profile_cost(args.profile, None, None, None, "the claims run (pytest claims -n auto) of the "
                                f"--profile {args.profile}", EVALUATION_SECONDS[args.profile])
        except ValueError as exc:
            usage_error(parser, exc)
        costs.enforce(parser, cost, yes=args.yes)
        cmd = [sys.executable, "-m", "pytest", "claims", "-n", "auto", "-q", "--profile", args.profile,
               "--claims-report", str(out.resolve())]
        print("running: " + " ".join(cmd), file=sys.stderr)
        rc = subprocess.call(cmd, cwd=REPO)
        if rc not in (0, 1):                                  # 1: some test failed, still a report
            print(f"ldsicl report: error: the claims run exited with status {rc}", file=sys.stderr)
            return 1
        src = out / "claims.json"
    try:
        report = load_report(src)
    except ValueError as exc:
        usage_error(parser, ParameterError("from", f"from: {exc}"))
    from claims.reports.report import render_report              # the specs and matplotlib: seconds

    paths = render_report(report, out)
    if src.resolve() != (out / "claims.json").resolve():
        if json.loads(src.read_text(encoding="utf-8")).get("schema") == SCHEMA:
            shutil.copyfile(src, out / "claims.json")
        else:                             # an older schema, as read today (claims/harness/reportfile.py)
            (out / "claims.json").write_text(dumps(report.to_dict(), indent=2) + "\n", encoding="utf-8")
    print(f"report: {paths['html']}")
    print(f"        {paths['md']}" + (f" ({len(paths['figures'])} figures in {out / 'figures'})"
                                       if paths["figures"] else " (no figures)"))
    return 0
