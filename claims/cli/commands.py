"""What the ``ldsicl`` subcommands kappa, train, optimum and report do (claims/cli/main.py holds the
parser and ``main``; runs and cache: claims/cli/cache_commands.py).

The command line is the top floor: it calls theory/, models/ and the claims' run store
(claims/harness/runs.py), and nothing below it imports it.  Each ``run_<command>(args, parser)``
validates its arguments before any expensive work -- a bad one is reported through
``parser.error`` as one line naming its flag (exit status 2) -- then does the work and
returns the exit status.  JSON output is strict, under the project's one policy
(theory/jsonvalues.py: non-finite numbers as ``"NaN"`` / ``"Infinity"``).

Imports: what every command needs is imported here, and none of it imports torch, so that
``ldsicl --version``, ``kappa``, ``optimum`` and ``report`` start without it
(tests/test_startup.py).  The modules that pull in torch (models/*, and the configurations
claims/harness/runs.py builds: about 0.7 s of start-up) and
scipy.optimize or matplotlib (theory.optimum, the report: about 1 s each) are imported by
the commands that use them.

A bad argument is a :class:`claims.cli.shared.ParameterError` naming its parameter (the
library calls are wrapped in :func:`claims.cli.shared.naming` with the parameters they
validate), reported by :func:`claims.cli.shared.usage_error`.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

from claims.cli.shared import REPO, ParameterError, check_out, check_out_dir, naming, usage_error
from claims.harness.profiles import get_profile
from theory.jsonvalues import dumps
from theory import kappa as kappa_mod
from theory.systems import LDSFamily
from theory.validation import check_window

__all__ = ["run_kappa", "run_train", "run_optimum", "run_report", "TRAIN_FIELDS", "FAMILY_PARAMS"]

#: the parameters of a family (theory.systems.LDSFamily), named by its errors
FAMILY_PARAMS = ("setting", "T", "d", "sigma_w", "sigma_v", "sigma_0")


def _sigmas(args) -> dict:
    """The standard deviations given (exact Fractions) as floats; ValueError naming the field
    of one beyond the float range."""
    out = {}
    for name in ("sigma_w", "sigma_v", "sigma_0"):
        v = getattr(args, name)
        if v is not None:
            try:
                out[name] = float(v)
            except OverflowError:
                raise ParameterError(name, f"{name} must be finite, got {v}") from None
    return out


def _family(args):
    """The LDSFamily of the family arguments; ParameterError naming its field."""
    sigmas = _sigmas(args)
    with naming(*FAMILY_PARAMS):
        return LDSFamily(args.setting, d=args.d, T=args.T, **sigmas)


def run_kappa(args, parser) -> int:
    """``ldsicl kappa``: theory.kappa.kappa (the one place that picks a route) with the exact
    variances typed (1/3 stays 1/3 on the exact route)."""
    try:
        family = _family(args)
        variances = tuple(q ** 2 for q in (args.sigma_w, args.sigma_v, args.sigma_0))
        method = {"exact": "exact-rational", "quadrature": "gauss-legendre"}.get(args.method, args.method)
        why = None
        with naming("method"):
            if method == "auto":
                method, why = kappa_mod.choose_method(family)
            exact = method == "exact-rational" and "exact-rational" in kappa_mod.exact_routes(family)
        if exact:
            sec = kappa_mod.exact_seconds(args.T, args.d)
            if sec > 10:
                print(f"ldsicl kappa: warning: exact rational arithmetic at T = {args.T} takes about "
                      f"{_duration(sec)} (about T^{kappa_mod.EXACT_GROWTH:g}); --method quadrature gives "
                      f"the same value to about 1e-13 in well under a second", file=sys.stderr)
        with naming("method", "T", "m", "seed"):
            res = kappa_mod.kappa(family, method=method, m=args.mc_systems, seed=args.seed, variances=variances)
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


def _duration(sec: float) -> str:
    if sec < 120:
        return f"{sec:.0f} s"
    if sec < 7200:
        return f"{sec / 60:.0f} min"
    return f"{sec / 3600:.1f} h"


def run_optimum(args, parser) -> int:
    """``ldsicl optimum``: theory.optimum.optimum_for, every field under a name that says what it is."""
    from theory.optimum import optimum_for          # scipy.optimize: about 1 s of start-up (module doc)
    from theory.population import moment_memory

    try:
        family = _family(args)
        with naming("T"):                              # check_window's error names T (T > s + 1)
            check_window(args.s, args.T)
        need = moment_memory(args.s, args.T)
        if need > args.max_memory * 2 ** 30:
            raise ParameterError("max_memory", f"s = {args.s} (with T = {args.T}) needs about "
                                 f"{need / 2 ** 30:.3g} GiB for the moments, more than --max-memory "
                                 f"{args.max_memory:g} GiB")
        with naming("s", "starts", "seed", "trajectories"):
            opt = optimum_for(family, args.s, args.seed, starts=args.starts, in_class=not args.no_classes,
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
    print(_format_matrix(np.asarray(opt.W_V)[s:s + 1]))
    print("W_QK[:, :s] =")
    print(_format_matrix(np.asarray(opt.W_QK)[:, :s]))
    print(f"setting {args.setting}, s={s}, T={args.T}, d={args.d}, sigma_w={args.sigma_w}, "
          f"sigma_v={args.sigma_v}, sigma_0={args.sigma_0}")
    return 0


def run_report(args, parser) -> int:
    """``ldsicl report``: render a finished claims.json (or run the claims first) into DIR."""
    from claims.harness.reportfile import SCHEMA, load_report   # the records (no torch)
    from claims.reports.report import render_report              # the specs and matplotlib: seconds

    try:
        out = check_out_dir(args.out)
    except ValueError as exc:
        usage_error(parser, exc)
    src = Path(args.source).expanduser() if args.source else out / "claims.json"
    if args.run:
        if not (REPO / "claims" / "test_banding.py").is_file():
            usage_error(parser, ParameterError("run", "run needs a checkout of the repository (the claim "
                                               "files are not installed with the package)"))
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


def _format_matrix(W) -> str:
    return "\n".join("  [" + "  ".join(f"{x: .8f}" for x in row) + "]" for row in W)


def _kappa_line(config, coefficient):
    """kappa of the run's family (auto route; 2e4 systems in setting d) and the coefficient's
    relative error, for s = 1; where no route can compute kappa for the family (a T beyond
    every route's memory), None for the numbers and the reason."""
    try:
        res = kappa_mod.kappa(config.family(), m=20_000, seed=0)
    except ValueError as exc:
        return {"kappa": None, "kappa_stderr": None, "kappa_method": None, "coefficient": coefficient,
                "coefficient_rel_error": None, "kappa_not_computed": str(exc)}
    return {"kappa": res.kappa, "kappa_stderr": res.stderr, "kappa_method": res.method,
            "coefficient": coefficient, "coefficient_rel_error": coefficient / res.kappa - 1.0}


#: ``train`` options that are fields of TrainConfig (None: not given on the command line).
TRAIN_FIELDS = ("setting", "s", "T", "d", "layers", "radius", "steps", "batch", "seed", "lr", "lr_min",
                "warmup_steps", "weight_decay", "betas", "grad_clip", "init_scale", "dtype", "forward")


def claims_point(text):
    """The point ``--claims-params TEXT`` names (claims/harness/params.py), or None when not
    given; a ParameterError whose message names ``--claims-params`` otherwise."""
    from claims.harness.params import Point

    if text is None:
        return None
    try:
        return Point.parse(text)
    except ValueError as exc:
        raise ParameterError(None, str(exc)) from None


def _claim_at(claim: str, point) -> str:
    """The run id ``--claim`` names at ``--claims-params``: an id without a point prefix moved
    to the point (the prefix of the parameters its kind follows), an id with one kept when it
    agrees; a malformed id is left for ``config_for`` to report."""
    from claims.harness.params import split_prefix
    from claims.harness.runs import parse_run

    if point is None:
        return claim
    try:
        moved = point.prefix(type(parse_run(claim)).FOLLOWS) + split_prefix(claim)[1]
    except ValueError:
        return claim
    if claim.startswith("@") and claim != moved:
        raise ParameterError("claim", f"claim {claim!r} is not at --claims-params {point.tag() or 'the default'} "
                             f"(that run there is {moved!r})")
    return moved


def _train_config(args):
    """The configuration ``ldsicl train`` trains: (the run id it comes from or None, that
    run's configuration or None, the configuration).

    Without ``--claim``: TrainConfig's defaults, changed by every option given.  With
    ``--claim RUN``: the claims' own configuration of that run (claims/harness/runs.py
    ``config_for``, the function the claims call) at ``--claims-params``, changed by every
    option given -- e.g. ``--steps 20`` for a shortened copy, which is then no longer that
    run (the record's ``run`` is None and ``changed_from`` names the run and the fields
    changed).  ParameterError naming the option otherwise.
    """
    from claims.harness.runs import config_for                 # its TrainConfig imports torch (module doc)
    from models.config import TrainConfig

    given = {name: getattr(args, name) for name in TRAIN_FIELDS if getattr(args, name) is not None}
    given.update(_sigmas(args))
    if args.scheduler is not None or args.workers is not None:
        raise ParameterError(None, "--scheduler and --workers train every run of a profile: give --profile "
                                   "without --claim")
    point = claims_point(args.claims_params)
    if args.claim is None:                            # (--profile without --claim: _train_profile)
        if point is not None:
            raise ParameterError(None, "--claims-params moves the runs of the claims: give --claim RUN or --profile "
                                       "(--T, --d and --sigma-* set the family of one run of TrainConfig's defaults)")
        claim, base = None, None
    else:
        claim = _claim_at(args.claim, point)
        with naming("claim"):
            base = config_for(claim, get_profile(args.profile or "quick"), name="claim")
    with naming(*given):
        return claim, base, TrainConfig(**given) if base is None else base.replace(**given)


def _train_profile(args, parser) -> int:
    """``ldsicl train --profile P`` without ``--claim``: every run the claims train in P at
    ``--claims-params`` (claims.cluster.training.profile_runs, as ``ldsicl runs`` lists them)
    that this code has not cached, trained on ``--scheduler``'s executor (claims/cluster/);
    the summary on stdout (``--json``: as JSON; ``--out``: also to a file).  Exit status 1
    when a run failed or was refused."""
    from claims.cluster.executor import open_executor
    from claims.cluster.training import profile_runs, train_runs
    from claims.harness.params import DEFAULT, activate
    from claims.harness.runs import config_for                 # torch (module doc)
    from models.cache import resolve_cache_dir
    from models.files import atomic_write_text
    from models.trainer import check_resources

    max_memory = None if args.max_memory is None else args.max_memory * 2 ** 30
    try:
        given = [n for n in TRAIN_FIELDS if getattr(args, n) is not None] + list(_sigmas(args))
        if given:
            raise ParameterError(given[0], "with --profile alone every run is trained as the claims "
                                 "configure it; give --claim RUN to change one run")
        if args.no_cache:
            raise ParameterError("profile", "profile: --profile names a profile whose runs are trained into the "
                                 "weight cache, which --no-cache turns off; give --claim RUN --no-cache for one run")
        if args.device.strip().lower() not in ("auto", "cpu"):
            raise ParameterError("device", f"device: the runs of a profile train on the CPUs of the workers; "
                                 f"got {args.device!r}")
        profile = get_profile(args.profile)
        point = claims_point(args.claims_params) or DEFAULT
        with activate(point):
            ids = profile_runs(profile)
        for rid in ids:
            with naming("batch", "max_memory", "sigma_w", "sigma_v", "sigma_0"):
                check_resources(config_for(rid, profile), max_memory)
        with naming("cache_dir"):
            cache_dir = resolve_cache_dir(args.cache_dir)
        out = check_out(args.out) if args.out else None
        try:
            executor = open_executor(args.scheduler, args.workers)
        except ValueError as exc:
            raise ParameterError(None, str(exc)) from None
    except ValueError as exc:
        usage_error(parser, exc)
    progress = sys.stderr.isatty() if args.progress is None else args.progress
    try:
        with activate(point):
            summary = train_runs(ids, profile, executor, cache_dir=cache_dir, progress=progress)
    except ValueError as exc:                    # an unreachable scheduler, found when the executor opens
        usage_error(parser, ParameterError(None, str(exc)))
    text = dumps(summary.to_dict())
    print(text if args.json else summary.text())
    if out is not None:
        try:
            atomic_write_text(out, text + "\n")
        except OSError as exc:
            print(f"ldsicl train: error: cannot write {str(out)!r} ({exc})", file=sys.stderr)
            return 1
    return 0 if summary.ok else 1


def run_train(args, parser) -> int:
    """``ldsicl train``: one run (a claim's run with ``--claim``), cached unless ``--no-cache``;
    with ``--profile`` and no ``--claim``, every run of the profile (:func:`_train_profile`)."""
    if args.claim is None and args.profile is not None:
        return _train_profile(args, parser)
    from models.cache import cache_path, load_cached, train_cached   # torch (module doc)
    from models.files import atomic_write_text
    from models.runtime import resolve_device
    from models.trainer import check_resources, train

    max_memory = None if args.max_memory is None else args.max_memory * 2 ** 30
    try:
        claim, base, config = _train_config(args)
        with naming("batch", "max_memory", "sigma_w", "sigma_v", "sigma_0"):
            check_resources(config, max_memory)
        with naming("device"):
            resolve_device(args.device)
        out = check_out(args.out) if args.out else None
        cached = None
        if not args.no_cache:
            with naming("cache_dir", "device"):
                cached = load_cached(config, args.cache_dir, device=args.device)
    except ValueError as exc:
        usage_error(parser, exc)
    try:
        if args.no_cache:
            result = train(config, device=args.device, progress=args.progress, max_memory=max_memory)
        elif cached is not None:
            result = cached
            print(f"loaded from cache: {cache_path(config, args.cache_dir, device=args.device)}",
                  file=sys.stderr)
        else:
            result = train_cached(config, cache_dir=args.cache_dir, device=args.device,
                                  progress=args.progress, max_memory=max_memory)
    except RuntimeError as exc:  # e.g. the loss diverged
        print(f"ldsicl train: error: {exc}", file=sys.stderr)
        return 1
    record = result.to_dict()
    record["run"] = claim if config == base else None
    if base is not None and config != base:
        record["changed_from"] = {"run": claim, "fields": sorted(
            f for f, v in config.to_dict().items() if base.to_dict()[f] != v)}
    c = result.config
    if c.s == 1 and c.layers == 1:
        record["kappa"] = _kappa_line(c, result.ar1_coefficient())
    text = dumps(record)
    if out is not None:
        try:
            atomic_write_text(out, text + "\n")
        except OSError as exc:                 # checked above; a disk that filled up meanwhile
            print(f"ldsicl train: error: cannot write {str(out)!r} ({exc}); the record follows on "
                  f"stdout", file=sys.stderr)
            print(text)
            return 1
    if args.json:
        print(text)
        return 0
    print((f"run {claim} ({args.profile or 'quick'} profile): " if record["run"] else "")
          + (f"a copy of run {claim} with {', '.join(record['changed_from']['fields'])} changed: "
             if "changed_from" in record else "")
          + f"setting {c.setting}, s={c.s}, layers={c.layers}, T={c.T}, d={c.d}, radius={c.radius:g}, "
          f"steps={c.steps}, batch={c.batch}, seed={c.seed}, lr={c.lr}, betas={c.betas}, device={result.device}")
    for name, weights in (("W_V", result.W_V), ("W_QK", result.W_QK)):
        per_layer = np.reshape(weights, (c.layers,) + weights.shape[-2:])
        for layer, W in enumerate(per_layer, start=1):
            print(f"{name} =" if c.layers == 1 else f"{name} (layer {layer}) =")
            print(_format_matrix(W))
    if "kappa" in record and record["kappa"]["kappa"] is None:
        k = record["kappa"]
        print(f"AR(1) coefficient b_2 W[1,1] + b_1 W[2,1] = {k['coefficient']!r}; kappa (eq. 15) not "
              f"computed: {k['kappa_not_computed']}")
    elif "kappa" in record:
        k = record["kappa"]
        se = f" +- {k['kappa_stderr']:.2g}" if k["kappa_stderr"] else ""
        print(f"AR(1) coefficient b_2 W[1,1] + b_1 W[2,1] = {k['coefficient']!r}; kappa (eq. 15) = "
              f"{k['kappa']!r}{se} ({k['kappa_method']}); relative error {100 * k['coefficient_rel_error']:+.3g} %")
    print(f"final loss = {result.final_loss:.6g} +- {result.final_loss_stderr:.2g} "
          f"(last {result.final_window} steps); held-out loss (full forward pass) = {result.eval_loss:.6g}")
    print(f"wall time = {result.wall_seconds:.2f} s")
    return 0
