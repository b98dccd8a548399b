"""What each ``ldsicl`` subcommand does (models/cli.py holds the parser and ``main``).

Each ``run_<command>(args, parser)`` validates its arguments before any expensive work --
a bad one is reported through ``parser.error`` as one line naming its flag (exit status
2) -- then does the work and returns the exit status.  JSON output is strict: numpy values
become Python values and non-finite numbers ``null`` (``_plain``).
"""
from __future__ import annotations

import json
import sys
from fractions import Fraction
from pathlib import Path

__all__ = ["run_kappa", "run_train", "run_optimum", "run_report", "run_cache", "FLAGS"]

# library field name -> command-line flag, to turn a ValueError into "argument --flag: ..."
FLAGS = {
    "setting": "--setting", "T": "--T", "d": "--d", "s": "--s", "sigma_w": "--sigma-w",
    "sigma_v": "--sigma-v", "sigma_0": "--sigma-0", "method": "--method", "m": "--mc-systems",
    "seed": "--seed", "steps": "--steps", "batch": "--batch", "lr": "--lr", "lr_min": "--lr-min",
    "warmup_steps": "--warmup-steps", "weight_decay": "--weight-decay",
    "grad_clip": "--grad-clip", "init_scale": "--init-scale", "dtype": "--dtype",
    "forward": "--forward", "device": "--device", "cache_dir": "--cache-dir",
    "cond_max": "--cond-max", "starts": "--starts", "trajectories": "--trajectories",
    "max_memory": "--max-memory", "out": "--out", "from": "--from", "run": "--run",
}
#: the repository checkout this module sits in (the claims live there, not in the package).
REPO = Path(__file__).resolve().parents[1]


def _plain(obj):
    """``obj`` with numpy scalars and arrays as Python values and non-finite floats as None
    (strict JSON has no NaN or Infinity)."""
    import math

    import numpy as np

    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return _plain(obj.tolist())
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def _family(args):
    """The LDSFamily of the family arguments; ValueError naming the flag's field."""
    from theory.systems import LDSFamily

    kw = {}
    for name in ("sigma_w", "sigma_v", "sigma_0"):
        try:
            kw[name] = float(getattr(args, name))
        except OverflowError:
            raise ValueError(f"{name} must be finite, got {getattr(args, name)}") from None
    return LDSFamily(args.setting, d=args.d, T=args.T, **kw)


def _value_error(parser, exc: ValueError):
    msg = str(exc)
    name = msg.split(" ", 1)[0].rstrip(":,")
    flag = FLAGS.get(name)
    parser.error(f"argument {flag}: {msg}" if flag else msg)


def _exact_for_decimal(q: Fraction) -> bool:
    return Fraction(repr(float(q))) == q


def run_kappa(args, parser) -> int:
    from theory import kappa as kappa_mod

    try:
        family = _family(args)
        exact_inputs = all(_exact_for_decimal(q) for q in (args.sigma_w, args.sigma_v, args.sigma_0))
        method = {"exact": "exact-rational", "quadrature": "gauss-legendre"}.get(args.method, args.method)
        why = None
        if method == "auto":
            method, why = kappa_mod.choose_method(family)
        if method == "exact-rational" and args.setting == "a":
            sec = kappa_mod.exact_seconds(args.T, args.d)
            if sec > 10:
                print(f"ldsicl kappa: warning: exact rational arithmetic at T = {args.T} takes about "
                      f"{_duration(sec)} (about T^{kappa_mod.EXACT_GROWTH:g}); --method quadrature gives "
                      f"the same value to about 1e-13 in well under a second", file=sys.stderr)
        if method == "exact-rational" and args.setting == "a" and not exact_inputs:
            # e.g. --sigma-w 1/3: pass the exact rationals, not their float reprs
            sw2, sv2, s02 = args.sigma_w ** 2, args.sigma_v ** 2, args.sigma_0 ** 2
            num, den = kappa_mod.kappa_moments_exact_a(args.T, args.d, sw2, sv2, s02)
            ex = (args.T - 2) * num / den
            res = kappa_mod.KappaResult(
                kappa=float(ex), exact=ex, stderr=0.0, method="exact-rational",
                numerator=float(num), denominator=float(den),
                details={"setting": "a", "T": args.T, "d": args.d, "sigma_w2": str(sw2),
                         "sigma_v2": str(sv2), "sigma_02": str(s02)})
        else:
            res = kappa_mod.kappa(family, method=method, m=args.mc_systems, seed=args.seed)
    except ValueError as exc:
        _value_error(parser, exc)
    if args.json:
        out = res.to_json()
        out.update({"setting": args.setting, "T": args.T, "d": args.d, "sigma_w": str(args.sigma_w),
                    "sigma_v": str(args.sigma_v), "sigma_0": str(args.sigma_0), "auto": why})
        print(json.dumps(_plain(out), allow_nan=False))
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
    import numpy as np

    from theory.optimum import optimum_for
    from theory.population import moment_memory

    try:
        family = _family(args)
        from theory.validation import check_window
        check_window(args.s, args.T)
        need = moment_memory(args.s, args.T)
        if need > args.max_memory * 2 ** 30:
            raise ValueError(f"s = {args.s} (with T = {args.T}) needs about {need / 2 ** 30:.3g} GiB for the "
                             f"moments, more than --max-memory {args.max_memory:g} GiB")
        opt = optimum_for(family, args.s, args.seed, starts=args.starts, in_class=not args.no_classes,
                          trajectories=args.trajectories)
    except ValueError as exc:
        _value_error(parser, exc)
    s = args.s
    out = {
        "loss": opt.loss, "stderr": opt.stderr, "method": opt.method,
        "W_V": np.asarray(opt.W_V).tolist(), "W_QK": np.asarray(opt.W_QK).tolist(),
        "class": opt.cls if opt.cls and opt.out_of_class_share <= 1e-8 else None,
        "nearer_class": opt.cls, "out_of_class_share": opt.out_of_class_share, "shares": opt.shares,
        "odd_share": opt.odd_share, "grad_norm": opt.grad_norm, "hessian_eigs": list(opt.hessian_eigs),
        "starts": opt.n_starts, "converged": opt.n_converged, "at_optimum": opt.n_at_optimum,
        "found_in_class": opt.found_in_class, "seed": opt.seed,
        "in_class": {k: {"loss": v.loss, "rel_excess": v.rel_excess, "excess_stderr": v.excess_stderr,
                         "full_hessian_min_eig": v.full_hessian_min_eig} for k, v in opt.in_class.items()},
        "stationary_points": [{"loss": p.loss, "rel_excess": (p.loss - opt.loss) / opt.loss, "starts": n,
                               "class": p.cls, "out_of_class_share": p.out_of_class_share, "kind": p.kind}
                              for p, n in opt.stationary_points],
        "setting": args.setting, "s": s, "T": args.T, "d": args.d, "sigma_w": str(args.sigma_w),
        "sigma_v": str(args.sigma_v), "sigma_0": str(args.sigma_0),
    }
    if args.json:
        print(json.dumps(_plain(out), allow_nan=False))
        return 0
    print(f"L* = {opt.loss!r}" + (f" +- {opt.stderr:.2g}" if opt.stderr else "") + f"  (moments: {opt.method})")
    print(f"class {out['class'] or 'none'} (out-of-class share {opt.out_of_class_share:.3g}, odd share "
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
    import os
    import shutil
    import subprocess

    out = Path(args.out).expanduser()
    if out.exists() and not out.is_dir():
        _value_error(parser, ValueError(f"out must be a directory, got the file {str(out)!r}"))
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        _value_error(parser, ValueError(f"out cannot be created: {exc}"))
    if not os.access(out, os.W_OK):
        _value_error(parser, ValueError(f"out is not writable: {str(out)!r}"))
    src = Path(args.source).expanduser() if args.source else out / "claims.json"
    if args.run:
        if not (REPO / "claims" / "plugin.py").is_file():
            _value_error(parser, ValueError("run needs a checkout of the repository (claims/ is not "
                                            "installed with the package)"))
        cmd = [sys.executable, "-m", "pytest", "claims", "-n", "auto", "-q", "--profile", args.profile,
               "--claims-report", str(out.resolve())]
        print("running: " + " ".join(cmd), file=sys.stderr)
        rc = subprocess.call(cmd, cwd=REPO)
        if rc not in (0, 1):                                  # 1: some test failed, still a report
            print(f"ldsicl report: error: the claims run exited with status {rc}", file=sys.stderr)
            return 1
        src = out / "claims.json"
    from claims.compare import BadInput, load_report
    from claims.report import render_report

    try:
        payload = load_report(str(src))
    except BadInput as exc:
        _value_error(parser, ValueError(f"from: {exc}"))
    paths = render_report(payload, out)
    if src.resolve() != (out / "claims.json").resolve():
        if payload.get("schema") == json.loads(src.read_text(encoding="utf-8")).get("schema"):
            shutil.copyfile(src, out / "claims.json")
        else:                             # a schema 3 report, as mapped to check ids (claims/legacy.py)
            (out / "claims.json").write_text(json.dumps(payload, indent=2, allow_nan=False) + "\n",
                                             encoding="utf-8")
    print(f"report: {paths['html']}")
    print(f"        {paths['md']}" + (f" ({len(paths['figures'])} figures in {out / 'figures'})"
                                       if paths["figures"] else " (no figures)"))
    return 0


def _format_matrix(W) -> str:
    return "\n".join("  [" + "  ".join(f"{x: .8f}" for x in row) + "]" for row in W)


def _check_out(path: str) -> Path:
    """An output file that can be written, checked before any work: ValueError naming ``out``."""
    import tempfile

    p = Path(path).expanduser()
    if p.is_dir():
        raise ValueError(f"out must be a file path, got the directory {path!r}")
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise ValueError(f"out: the folder {str(parent)!r} does not exist")
    try:
        with tempfile.NamedTemporaryFile(dir=parent, prefix=".ldsicl-probe-"):
            pass
    except OSError as exc:
        raise ValueError(f"out: cannot write in {str(parent)!r} ({exc.strerror or exc})") from None
    return p


def _kappa_line(config, coefficient):
    """kappa of the run's family (auto route; 2e4 systems in setting d) and the coefficient's
    relative error, for s = 1."""
    from theory.kappa import kappa

    res = kappa(config.family(), m=20_000, seed=0)
    return {"kappa": res.kappa, "kappa_stderr": res.stderr, "kappa_method": res.method,
            "coefficient": coefficient, "coefficient_rel_error": coefficient / res.kappa - 1.0}


def run_train(args, parser) -> int:
    from .cache import cache_path, load_cached, train_cached
    from .runtime import resolve_device
    from .trainer import TrainConfig, check_resources, train

    kw = dict(setting=args.setting, s=args.s, d=args.d, T=args.T, steps=args.steps,
              batch=args.batch, seed=args.seed)
    for name in ("lr", "lr_min", "warmup_steps", "weight_decay", "grad_clip", "init_scale",
                 "dtype", "forward"):
        v = getattr(args, name)
        if v is not None:
            kw[name] = v
    max_memory = None if args.max_memory is None else args.max_memory * 2 ** 30
    try:
        family = _family(args)
        kw.update(sigma_w=family.sigma_w, sigma_v=family.sigma_v, sigma_0=family.sigma_0)
        config = TrainConfig(**kw)
        check_resources(config, max_memory)
        resolve_device(args.device)
        out = _check_out(args.out) if args.out else None
        cached = None
        if not args.no_cache:
            cached = load_cached(config, args.cache_dir, device=args.device)
    except ValueError as exc:
        _value_error(parser, exc)
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
    c = result.config
    if c.s == 1:
        record["kappa"] = _kappa_line(c, result.ar1_coefficient())
    text = json.dumps(_plain(record), allow_nan=False)
    if out is not None:
        from .files import atomic_write_text
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
    print(f"setting {c.setting}, s={c.s}, T={c.T}, d={c.d}, steps={c.steps}, batch={c.batch}, "
          f"seed={c.seed}, lr={c.lr}, device={result.device}")
    print("W_V =")
    print(_format_matrix(result.W_V))
    print("W_QK =")
    print(_format_matrix(result.W_QK))
    if c.s == 1:
        k = record["kappa"]
        se = f" +- {k['kappa_stderr']:.2g}" if k["kappa_stderr"] else ""
        print(f"AR(1) coefficient b_2 W[1,1] + b_1 W[2,1] = {k['coefficient']!r}; kappa (eq. 15) = "
              f"{k['kappa']!r}{se} ({k['kappa_method']}); relative error {100 * k['coefficient_rel_error']:+.3g} %")
    print(f"final loss = {result.final_loss:.6g} +- {result.final_loss_stderr:.2g} "
          f"(last {result.final_window} steps); held-out loss (full forward pass) = {result.eval_loss:.6g}")
    print(f"wall time = {result.wall_seconds:.2f} s")
    return 0


def _format_entry(e: dict) -> str:
    import datetime

    created = "-"
    if e["created"] is not None:
        created = datetime.datetime.fromtimestamp(e["created"], datetime.timezone.utc)
        created = created.strftime("%Y-%m-%dT%H:%M:%SZ")
    show = lambda v: "-" if v is None else str(v)  # noqa: E731
    return (f"{e['key'][:12]}  setting={show(e['setting'])} s={show(e['s'])} steps={show(e['steps'])} "
            f"batch={show(e['batch'])} seed={show(e['seed'])} created={created} size={e['size']} "
            f"{e['status']}")


def run_cache(args, parser) -> int:
    from .cache import clear, list_entries, resolve_cache_dir

    try:
        folder = resolve_cache_dir(args.cache_dir)
        if args.action == "list":
            entries = list_entries(args.cache_dir)
        else:
            removed = clear(args.cache_dir, stale_only=args.stale_only)
    except ValueError as exc:
        _value_error(parser, exc)
    except OSError as exc:
        print(f"ldsicl cache: error: {exc}", file=sys.stderr)
        return 1
    if args.action == "clear":
        what = "stale " if args.stale_only else ""
        print(f"removed {removed} {what}entr{'y' if removed == 1 else 'ies'} from {folder}")
        return 0
    if args.json:
        print(json.dumps(entries))
        return 0
    for e in entries:
        print(_format_entry(e))
    counts = {k: sum(e["status"] == k for e in entries) for k in ("current", "stale", "corrupt")}
    print(f"{len(entries)} entr{'y' if len(entries) == 1 else 'ies'} in {folder} ("
          + ", ".join(f"{n} {k}" for k, n in counts.items()) + ")", file=sys.stderr)
    return 0
