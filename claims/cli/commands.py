"""What ``ldsicl train`` does: one run (``--claim RUN``: a run a claim trains), or every run of a
profile (claims/cli/main.py holds the parser and ``main``; kappa, optimum and report:
claims/cli/compute_commands.py; runs and cache: claims/cli/cache_commands.py).

The command line is the top floor: it calls theory/, models/ and the claims' run store
(claims/harness/runs.py), and nothing below it imports it.  Each ``run_<command>(args, parser)``
validates its arguments before any expensive work -- a bad one is reported through
``parser.error`` as one line naming its flag (exit status 2) -- then estimates the work
(claims/cli/costs.py: announced on stderr when notable, refused in one line past the budget
unless ``--yes``, past the available memory always; the runs of a profile on a cluster's
address: their core-time announced, the work being the cluster's), then does it and returns
the exit status.  JSON output is strict, under the project's one policy (theory/jsonvalues.py:
non-finite numbers as ``"NaN"`` / ``"Infinity"``).

``--claim RUN`` takes a run some claim trains in the chosen profile (``--profile``, default
quick) at the point of ``--claims-params`` (or of the id's own ``@...`` prefix): the runs
``ldsicl runs`` lists (claims.cluster.training.profile_runs).  Any other id is refused in one
line that says which profiles train runs of its kind and with which seeds, or, for a run of
the paper profile asked for in the quick one, to give ``--profile paper``
(:func:`check_claimed`).  A shortened copy of a claim's run (``--claim RUN --steps 20``) is
allowed, and its record says it is a copy.

Imports: the modules that pull in torch (models/*, and the configurations claims/harness/runs.py
builds: about 0.7 s of start-up) are imported by the commands that use them; nothing here
imports torch at import time (tests/test_startup.py).
"""
from __future__ import annotations

import os
import sys

import numpy as np

from claims.cli import costs
from claims.cli.shared import (ParameterError, cache_folder, check_out, format_matrix, naming, sigmas, usage_error,
                               window)
from claims.harness.profiles import get_profile
from theory import kappa as kappa_mod
from theory.jsonvalues import dumps

__all__ = ["run_train", "check_claimed", "profile_cost", "claims_point", "TRAIN_FIELDS"]


#: ``train`` options that are fields of TrainConfig (None: not given on the command line).
TRAIN_FIELDS = ("setting", "s", "T", "d", "layers", "radius", "steps", "batch", "seed", "lr", "lr_min",
                "warmup_steps", "weight_decay", "betas", "grad_clip", "init_scale", "dtype", "forward")


def claims_point(text):
    """The point ``--claims-params TEXT`` names (claims/harness/params.py), or None when not
    given; a ParameterError whose message names ``--claims-params`` otherwise."""
    from claims.harness.params import Point

    if text is None:
        return None
    if not text.strip():
        raise ParameterError(None, "--claims-params: must name a point, e.g. T=60,d=3, got ''")
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
    given.update(sigmas(args))
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
        profile = get_profile(args.profile or "quick")
        try:
            base = config_for(claim, profile, name="claim")
        except ValueError as exc:                  # off the profile's grid: maybe the other profile's run
            other = check_claimed(claim, profile, point, elsewhere_only=True)
            raise ParameterError("claim", str(exc) + (f"; the {other} profile trains it: give --profile {other}"
                                                      if other else "")) from None
        check_claimed(claim, profile, point)
    start = base or TrainConfig()
    s, T = given.get("s", start.s), given.get("T", start.T)
    if isinstance(s, int) and isinstance(T, int):           # the window is blamed on the option given
        window(s, T, blame="T" if "T" in given else "s")
    with naming(*given):
        return claim, base, TrainConfig(**given) if base is None else base.replace(**given)


def _seeds(seeds) -> str:
    """``seeds 0-7``, ``seed 3``, ``seeds 0, 2, 5``.

    >>> _seeds([0, 1, 2]), _seeds([3]), _seeds([0, 2, 5])
    ('seeds 0-2', 'seed 3', 'seeds 0, 2, 5')
    """
    seeds = sorted(seeds)
    if len(seeds) == 1:
        return f"seed {seeds[0]}"
    if seeds == list(range(seeds[0], seeds[-1] + 1)):
        return f"seeds {seeds[0]}-{seeds[-1]}"
    return "seeds " + ", ".join(map(str, seeds))


def check_claimed(claim: str, profile, point, *, elsewhere_only: bool = False):
    """Refuse a run id no claim trains in ``profile`` at ``point`` (None: the id's own prefix):
    ParameterError naming ``claim`` that says which profile trains this very run (``give
    --profile paper``), or else which profiles train runs of its kind, with their seeds.
    ``elsewhere_only`` (an id ``profile`` cannot even configure): return the name of the other
    profile that trains it, or None; raise nothing."""
    from claims.cluster import training
    from claims.harness.params import activate, split_prefix
    from claims.harness.profiles import PROFILES
    from claims.harness.runform import seed_index, seed_stem

    try:
        at = point if point is not None else split_prefix(claim)[0]
    except ValueError:                             # a malformed prefix: config_for says so
        return None

    def runs_of(p):
        with activate(at):
            return training.profile_runs(p)
    names = [profile.name] + [n for n in PROFILES if n != profile.name]
    ids = {profile.name: runs_of(profile)} if not elsewhere_only else {}
    if claim in ids.get(profile.name, ()):
        return
    for name in names[1:]:
        ids[name] = runs_of(get_profile(name))
        if claim in ids[name]:
            if elsewhere_only:
                return name
            raise ParameterError("claim", f"no claim trains {claim} in the {profile.name} profile; the {name} "
                                          f"profile does: give --profile {name}")
    if elsewhere_only:
        return None
    stem = seed_stem(claim)
    where = []
    for name in names:
        seeds = [seed_index(r) for r in ids[name] if seed_stem(r) == stem]
        where.append(f"the {name} profile ({_seeds(seeds) if seeds else 'no run of this kind'})")
    raise ParameterError("claim", f"no claim trains {claim} in {' or '.join(where)}; `ldsicl runs` lists the "
                                  "runs the claims train")


def profile_cost(profile, point, cache_dir, workers, what: str, extra_seconds: float = 0.0):
    """The :class:`~claims.cli.costs.Cost` of training every run the claims train in ``profile``
    (a Profile or its name) at ``point`` (None: the default) that the weight cache
    (``cache_dir``) lacks, on ``workers`` processes (None: one per CPU; 0: their core-time, the
    runs one after the other), plus ``extra_seconds``."""
    from claims.cluster import training
    from claims.harness.params import DEFAULT, activate
    from claims.harness.runs import config_for                 # torch (module doc)
    from models.cache import cache_path
    from models.trainer import memory_estimate

    profile = get_profile(profile) if isinstance(profile, str) else profile
    with activate(point or DEFAULT):
        ids = training.profile_runs(profile)
    todo = []
    for rid in ids:
        config = config_for(rid, profile)
        with naming("cache_dir"):
            cached = cache_path(config, cache_dir).is_file()
        if not cached:
            todo.append(costs.train_cost(config, memory_estimate(config)))
    n = 1 if workers == 0 else max(1, min(workers or os.cpu_count() or 1, len(todo)))
    spread = f", {n} at a time" if workers != 0 else ""
    return costs.runs_cost(todo, n, f"{what} ({len(todo)} of its {len(ids)} runs to train{spread})", extra_seconds)


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
    from models.files import atomic_write_text
    from models.trainer import check_resources

    max_memory = None if args.max_memory is None else args.max_memory * 2 ** 30
    try:
        given = [n for n in TRAIN_FIELDS if getattr(args, n) is not None] + list(sigmas(args))
        if given:
            raise ParameterError(given[0], "with --profile alone every run is trained as the claims "
                                 "configure it; give --claim RUN to change one run")
        if args.no_cache:
            raise ParameterError("profile", "profile alone trains the runs of a profile into the weight cache, "
                                 "which --no-cache turns off; give --claim RUN --no-cache for one run")
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
        cache_dir = cache_folder(args.cache_dir)
        out = check_out(args.out) if args.out is not None else None
        remote = args.scheduler not in (None, "local")
        cost = profile_cost(profile, point, cache_dir, 0 if remote else args.workers,
                            f"training the {profile.name} profile" + (f" at {point.tag()}" if point.tag() else ""))
        # on a cluster the work and its memory are the cluster's: its core-time is announced, not
        # held against this machine's budget
        cost = costs.Cost(cost.seconds, 0 if remote else cost.bytes,
                          cost.what + (" in core-time on the cluster" if remote else ""),
                          "more --workers, or a cluster (--scheduler)")
        costs.enforce(parser, cost, yes=args.yes or remote)
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
    from models.trainer import check_resources, memory_estimate, train

    max_memory = None if args.max_memory is None else args.max_memory * 2 ** 30
    try:
        claim, base, config = _train_config(args)
        with naming("device"):
            resolve_device(args.device)
        out = check_out(args.out) if args.out is not None else None
        cached = None
        if not args.no_cache:
            cache_folder(args.cache_dir)
            with naming("cache_dir", "device"):
                cached = load_cached(config, args.cache_dir, device=args.device)
        if cached is None:                         # the estimate names the options given (--T 10**50)
            given = [n for n in ("steps", "batch", "T", "s", "layers", "d") if getattr(args, n) is not None]
            costs.enforce(parser, costs.train_cost(config, memory_estimate(config), given), yes=args.yes)
        with naming("batch", "max_memory", "sigma_w", "sigma_v", "sigma_0"):
            check_resources(config, max_memory)
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
            print(format_matrix(W))
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
