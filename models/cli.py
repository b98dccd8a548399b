"""Command line: ``ldsicl kappa``, ``ldsicl train``, ``ldsicl optimum`` and ``ldsicl cache list|clear`` (also ``python -m models.cli``).

Examples::

    ldsicl kappa --setting a --T 30 --d 5 --sigma-w 0.1 --sigma-v 0.1 --json
    ldsicl kappa --setting b --mc-systems 200000 --seed 0
    ldsicl train --setting a --s 1 --steps 8000 --batch 3000 --seed 0 --device auto
    ldsicl train --setting a --steps 200 --batch 256 --no-cache --json --out run.json
    ldsicl optimum --setting a --s 4 --json   # population optimum, its class and in-class twins
    ldsicl cache list                 # one line per cached run; "current" or "stale" code
    ldsicl cache list --json
    ldsicl cache clear --stale-only   # remove entries trained by other code (or another torch)

``cache`` and ``train`` use ``--cache-dir``, else ``$LDSICL_CACHE_DIR``, else
``<repo>/.cache/ldsicl`` (models/cache.py explains the key and what "stale" means).

Standard deviations are read as exact decimals ("0.1" is 1/10, its variance 1/100;
"1/10" is accepted too), so the exact method computes kappa for exactly the numbers
typed.  A bad argument prints one message naming it on stderr and exits with status 2;
a training run that diverges exits with status 1.  ``main(argv)`` returns the exit
status instead of raising ``SystemExit``.
"""
from __future__ import annotations

import argparse
import json
import sys
from fractions import Fraction

from theory.systems import SETTINGS
from theory.validation import check_int, check_rational, check_real

__all__ = ["main", "build_parser"]

# library field name -> command-line flag, to turn a ValueError into "argument --flag: ..."
_FLAGS = {
    "setting": "--setting", "T": "--T", "d": "--d", "s": "--s", "sigma_w": "--sigma-w",
    "sigma_v": "--sigma-v", "sigma_0": "--sigma-0", "method": "--method", "m": "--mc-systems",
    "seed": "--seed", "steps": "--steps", "batch": "--batch", "lr": "--lr", "lr_min": "--lr-min",
    "warmup_steps": "--warmup-steps", "weight_decay": "--weight-decay",
    "grad_clip": "--grad-clip", "init_scale": "--init-scale", "dtype": "--dtype",
    "forward": "--forward", "device": "--device", "cache_dir": "--cache-dir",
    "cond_max": "--cond-max", "starts": "--starts", "trajectories": "--trajectories",
    "max_memory": "--max-memory",
}


class _ArgumentParser(argparse.ArgumentParser):
    """argparse, but ``error`` raises instead of exiting, so ``main`` returns 2."""

    def error(self, message):
        self.print_usage(sys.stderr)
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise _UsageError(message)


class _UsageError(Exception):
    pass


def _argument(name, check):
    """An argparse ``type``: ``check(text)``, its ValueError (which names ``name``) as a usage error."""
    def parse(text):
        try:
            return check(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    parse.__name__ = name
    return parse


def _number(name, convert, what, text):
    """``convert(text)``, or a ValueError in theory.validation's words."""
    try:
        return convert(text.strip())
    except ValueError:
        raise ValueError(f"{name} must be {what}, got {text!r}") from None


def _rational(name):
    return _argument(name, lambda text: check_rational(name, text))


def _int(name, minimum):
    return _argument(name, lambda text: check_int(name, _number(name, int, "an integer", text), minimum))


def _real(name, *, positive=False):
    return _argument(name, lambda text: check_real(name, _number(name, float, "a real number", text),
                                                   minimum=0, strict_min=positive))


def _add_family_args(p):
    p.add_argument("--setting", choices=SETTINGS, default="a", help="system family (default a)")
    p.add_argument("--T", type=_int("T", 3), default=30, help="sequence length (default 30)")
    p.add_argument("--d", type=_int("d", 1), default=5, help="state dimension (default 5)")
    p.add_argument("--sigma-w", type=_rational("sigma_w"), default=Fraction(1, 10),
                   help="process noise std (default 0.1)")
    p.add_argument("--sigma-v", type=_rational("sigma_v"), default=Fraction(1, 10),
                   help="observation noise std (default 0.1)")
    p.add_argument("--sigma-0", type=_rational("sigma_0"), default=Fraction(1),
                   help="initial state std (default 1)")


def build_parser() -> argparse.ArgumentParser:
    parser = _ArgumentParser(prog="ldsicl", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", metavar="{kappa,train,optimum,cache}", parser_class=_ArgumentParser)
    sub.required = True

    pk = sub.add_parser("kappa", help="kappa of Theorem 4.1 (AR(1) optimum)",
                        description="kappa = (T-2) E[y_{T-1} y_T S] / E[y_{T-1}^2 S^2] for a family.")
    _add_family_args(pk)
    pk.add_argument("--method", default="auto",
                    choices=("auto", "exact-rational", "exact", "gauss-legendre", "quadrature",
                             "mc-moments", "mc-trajectories"),
                    help="auto: exact rational for setting a, Monte Carlo (mc-moments) otherwise")
    pk.add_argument("--mc-systems", type=_int("mc-systems", 1), default=200_000,
                    help="systems for the Monte Carlo methods (default 200000)")
    pk.add_argument("--seed", type=_int("seed", 0), default=0, help="Monte Carlo seed (default 0)")
    pk.add_argument("--json", action="store_true", help="print one JSON object")

    pt = sub.add_parser("train", help="one training run of the attention layer",
                        description="Train the linear self-attention layer with the paper's protocol "
                                    "(fresh systems every step, AdamW, clipping, warm-up + cosine).")
    _add_family_args(pt)
    pt.add_argument("--s", type=_int("s", 1), default=1, help="AR window s (default 1)")
    pt.add_argument("--steps", type=_int("steps", 1), default=8000)
    pt.add_argument("--batch", type=_int("batch", 1), default=3000)
    pt.add_argument("--seed", type=_int("seed", 0), default=0)
    pt.add_argument("--lr", type=_real("lr", positive=True), default=None, help="peak learning rate")
    pt.add_argument("--lr-min", type=_real("lr_min"), default=None)
    pt.add_argument("--warmup-steps", type=_int("warmup_steps", 0), default=None)
    pt.add_argument("--weight-decay", type=_real("weight_decay"), default=None)
    pt.add_argument("--grad-clip", type=_real("grad_clip", positive=True), default=None)
    pt.add_argument("--init-scale", type=_real("init_scale"), default=None)
    pt.add_argument("--dtype", choices=("float32", "float64"), default=None)
    pt.add_argument("--forward", choices=("effective", "model"), default=None)
    pt.add_argument("--device", default="auto", help="auto (CUDA if available), cpu, cuda, cuda:N")
    pt.add_argument("--max-memory", type=_real("max_memory", positive=True), default=None,
                    help="GiB a run may plan to use (default: half this machine's memory)")
    g = pt.add_mutually_exclusive_group()
    g.add_argument("--cache-dir", default=None,
                   help="weight cache directory (default $LDSICL_CACHE_DIR or <repo>/.cache/ldsicl)")
    g.add_argument("--no-cache", action="store_true", help="always train, store nothing")
    pt.add_argument("--json", action="store_true", help="print TrainResult.to_dict() as JSON")
    pt.add_argument("--out", default=None, help="also write the JSON record to this file")
    pr = pt.add_mutually_exclusive_group()
    pr.add_argument("--progress", dest="progress", action="store_const", const=True, default=None)
    pr.add_argument("--no-progress", dest="progress", action="store_const", const=False)

    po = sub.add_parser("optimum", help="population optimum of the layer for window s (Lemma 4.1)",
                        description="Multi-start minimum of the exact population loss over (b, W_QK) for "
                                    "window s, in the canonical gauge (largest |b_r| = 1), with the best "
                                    "point inside each parity class b-even / b-odd.")
    _add_family_args(po)
    po.add_argument("--s", type=_int("s", 1), default=2, help="AR window s (default 2)")
    po.add_argument("--starts", type=_int("starts", 1), default=32, help="random starts (default 32)")
    po.add_argument("--seed", type=_int("seed", 0), default=0, help="seed of the starts (default 0)")
    po.add_argument("--trajectories", type=_int("trajectories", 2), default=1_000_000,
                    help="setting d only: antithetic raw trajectories behind the moments (default 1000000)")
    po.add_argument("--no-classes", action="store_true", help="skip the in-class optimisations")
    po.add_argument("--max-memory", type=_real("max_memory", positive=True), default=4.0,
                    help="GiB the moment tables may use (default 4)")
    po.add_argument("--json", action="store_true", help="print one JSON object")

    pc = sub.add_parser("cache", help="list or remove cached trained weights",
                        description="The weight cache: entries keyed by the configuration and a "
                                    "fingerprint of the training code, torch version, device type "
                                    "and dtype.")
    csub = pc.add_subparsers(dest="action", metavar="{list,clear}", parser_class=_ArgumentParser)
    csub.required = True
    cache_dir_help = "weight cache directory (default $LDSICL_CACHE_DIR or <repo>/.cache/ldsicl)"
    pl = csub.add_parser("list", help="one line per entry",
                         description="One line per entry: key, setting, s, steps, batch, seed, "
                                     "created (UTC), size in bytes, and whether it was trained by "
                                     "the current code (current), other code or torch (stale), "
                                     "or cannot be read (corrupt).")
    pl.add_argument("--cache-dir", default=None, help=cache_dir_help)
    pl.add_argument("--json", action="store_true", help="print one JSON list of entries")
    pcl = csub.add_parser("clear", help="remove entries",
                          description="Remove cache entries (and their free lock files); "
                                      "other files in the folder are left alone.")
    pcl.add_argument("--cache-dir", default=None, help=cache_dir_help)
    pcl.add_argument("--stale-only", action="store_true",
                     help="remove only entries that are not current (stale or corrupt)")
    return parser


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
    name = msg.split(" ", 1)[0]
    flag = _FLAGS.get(name)
    parser.error(f"argument {flag}: {msg}" if flag else msg)


def _exact_for_decimal(q: Fraction) -> bool:
    return Fraction(repr(float(q))) == q


def _run_kappa(args, parser) -> int:
    from theory import kappa as kappa_mod

    try:
        family = _family(args)
        exact_inputs = all(_exact_for_decimal(q) for q in (args.sigma_w, args.sigma_v, args.sigma_0))
        method = {"exact": "exact-rational", "quadrature": "gauss-legendre"}.get(args.method, args.method)
        if method == "auto" and args.setting == "a":
            method = "exact-rational"
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
        out.update({"setting": args.setting, "T": args.T, "d": args.d,
                    "sigma_w": str(args.sigma_w), "sigma_v": str(args.sigma_v),
                    "sigma_0": str(args.sigma_0)})
        print(json.dumps(out))
        return 0
    print(f"kappa = {res.kappa!r}  (method {res.method})")
    if res.exact is not None:
        print(f"exact = {res.exact.numerator}/{res.exact.denominator}")
    elif res.stderr:
        print(f"stderr = {res.stderr!r}")
    print(f"setting {args.setting}, T={args.T}, d={args.d}, sigma_w={args.sigma_w}, "
          f"sigma_v={args.sigma_v}, sigma_0={args.sigma_0}")
    return 0


def _run_optimum(args, parser) -> int:
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


def _format_matrix(W) -> str:
    return "\n".join("  [" + "  ".join(f"{x: .8f}" for x in row) + "]" for row in W)


def _run_train(args, parser) -> int:
    from .cache import cache_path, load_cached, train_cached
    from .runtime import resolve_device
    from .trainer import TrainConfig, check_resources, train

    kw = dict(setting=args.setting, s=args.s, d=args.d, T=args.T, sigma_w=float(args.sigma_w),
              sigma_v=float(args.sigma_v), sigma_0=float(args.sigma_0), steps=args.steps,
              batch=args.batch, seed=args.seed)
    for name in ("lr", "lr_min", "warmup_steps", "weight_decay", "grad_clip", "init_scale",
                 "dtype", "forward"):
        v = getattr(args, name)
        if v is not None:
            kw[name] = v
    max_memory = None if args.max_memory is None else args.max_memory * 2 ** 30
    try:
        config = TrainConfig(**kw)
        check_resources(config, max_memory)
        resolve_device(args.device)
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
    if args.out:
        from .files import atomic_write_text
        from pathlib import Path
        atomic_write_text(Path(args.out), json.dumps(record) + "\n")
    if args.json:
        print(json.dumps(record))
        return 0
    c = result.config
    print(f"setting {c.setting}, s={c.s}, T={c.T}, d={c.d}, steps={c.steps}, batch={c.batch}, "
          f"seed={c.seed}, lr={c.lr}, device={result.device}")
    print("W_V =")
    print(_format_matrix(result.W_V))
    print("W_QK =")
    print(_format_matrix(result.W_QK))
    if c.s == 1:
        print(f"AR(1) coefficient b_2 W[1,1] + b_1 W[2,1] = {result.ar1_coefficient()!r}")
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


def _run_cache(args, parser) -> int:
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


def main(argv=None) -> int:
    """Entry point of ``ldsicl``; returns the exit status (2 for a bad argument)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        sub = parser._subparsers._group_actions[0].choices[args.command]
        if args.command == "kappa":
            return _run_kappa(args, sub)
        if args.command == "optimum":
            return _run_optimum(args, sub)
        if args.command == "cache":
            return _run_cache(args, sub._subparsers._group_actions[0].choices[args.action])
        return _run_train(args, sub)
    except _UsageError:
        return 2
    except SystemExit as exc:  # --help
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)


if __name__ == "__main__":
    raise SystemExit(main())
