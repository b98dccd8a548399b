"""Command line ``ldsicl`` (also ``python -m claims.cli.main``): the parser, its help, and ``main``.

The top floor of the project: it calls theory/, models/ and the claims' run store, and no
module below imports it (tests/test_layers.py).  Subcommands (what each does:
claims/cli/commands.py, claims/cli/cache_commands.py): ``kappa`` (Theorem 4.1's kappa), ``train`` (one run of the paper's
protocol, with ``--claim`` exactly a run a claim trains, with ``--profile`` alone every run of a
profile, on a process pool or a dask cluster), ``runs`` (the run ids each
claim trains), ``optimum`` (the population optimum of a window s), ``report`` (the
reproducibility report of a claims run), ``sweep`` (the claims at every cell of a grid of points,
claims/cli/sweep_command.py), ``cache list|clear|export`` (the weight cache).
``ldsicl --help`` defines the settings; every subcommand's help ends with examples; every
option shows its default once.

Standard deviations are read as exact decimals ("0.1" is 1/10, its variance 1/100;
"1/10" is accepted too), so the exact method computes kappa for exactly the numbers
typed.  Exit status: 0 done, 1 a run failed (a diverging training run, an unwritable
output after the work), 2 a bad argument (one line on stderr naming it, before any
expensive work) or work past the budget.  Every command that can do expensive work (kappa,
optimum, train, sweep, report --run) estimates its time and memory from its arguments first
(claims/cli/costs.py): it says so on stderr when the work takes more than 10 s or 1 GiB,
refuses in one line work estimated past 1 h or 8 GiB unless ``--yes`` is given, and always
refuses work that needs more memory than the machine has available.  ``ldsicl --version``
prints the version, the checkout's git commit and the sha256 of the training code that keys
the weight cache (claims/cli/sources.py).  A closed output pipe (``ldsicl ... | head``) ends the command quietly.
``main(argv)`` returns the exit status instead of raising ``SystemExit``.

``ldsicl --version``, ``kappa`` and ``optimum`` start without importing torch
(tests/test_startup.py): nothing here imports models/ at import time.  The training
options' defaults, models.config.TrainConfig's (the only definition; it imports torch), are
read when ``ldsicl train --help`` is shown (:class:`_Formatter`).
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from fractions import Fraction

from claims.cli import cache_commands, commands, compute_commands, costs, sources, sweep_command
from claims.cli.arguments import int_arg, pair_arg, rational_arg, real_arg
from claims.cli.shared import MAX_WORKERS, REPO, UsageExit, shorten_values
from claims.harness.coverage import REFERENCE
from claims.harness.profiles import PROFILES
from theory.systems import SETTINGS, LDSFamily

__all__ = ["main", "build_parser", "DEFAULT_SETTING"]


class _Formatter(argparse.RawDescriptionHelpFormatter, argparse.ArgumentDefaultsHelpFormatter):
    """Keeps the epilogs' line breaks and shows every option's default once: argparse's
    "(default: X)" for a real default; a training option left None in the parser (its
    ``train_field``, see :func:`_train_arg`) TrainConfig's default, read only here; any other
    option whose default is None or a switch says its own default in its help, or has none."""

    def _get_help_string(self, action):
        field = getattr(action, "train_field", None)
        if field is not None:
            return action.help + _said(field)
        if action.default is None or action.default is False or "(default:" in (action.help or ""):
            return action.help
        return super()._get_help_string(action)


class _ArgumentParser(argparse.ArgumentParser):
    """argparse, but ``error`` raises instead of exiting, so ``main`` returns 2."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message):
        self.print_usage(sys.stderr)
        print(f"{self.prog}: error: {shorten_values(message)}", file=sys.stderr)
        raise UsageExit(message)


class _VersionAction(argparse.Action):
    """``--version``: the version, the checkout's commit and the training code's digest
    (claims/cli/sources.py), computed only when asked for; no torch."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        print(sources.version_text())
        parser.exit()


SETTINGS_HELP = "settings (system families; docs/settings.md):\n" + "\n".join(
    f"  {s:<5} {LDSFamily(s).description}" for s in SETTINGS)


def _examples(*lines) -> str:
    return "examples:\n" + "\n".join(f"  {line}" for line in lines)


_LDS_DEFAULTS = {f.name: f.default for f in dataclasses.fields(LDSFamily)}
#: the setting of kappa and optimum when none is given: the paper's main setting, which is
#: also models.config.TrainConfig's default (tests/test_cli_contract.py checks that they agree;
#: TrainConfig is not imported here, it imports torch)
DEFAULT_SETTING = REFERENCE
#: the family options and their defaults: LDSFamily's (docs/settings.md, Defaults), the noise
#: levels as the exact fractions of their decimal values
_FAMILY_DEFAULTS = {"setting": DEFAULT_SETTING, "T": _LDS_DEFAULTS["T"], "d": _LDS_DEFAULTS["d"],
                    **{k: Fraction(str(_LDS_DEFAULTS[k])) for k in ("sigma_w", "sigma_v", "sigma_0")}}


#: the family's sizes: option name (LDSFamily's field), its least value, its help
_SIZES = (("T", 3, "sequence length"), ("d", 1, "state dimension"))


def _said(name: str) -> str:
    """`` (default: X)`` for a training option left None in the parser: TrainConfig's default
    (docs/settings.md, Training), read when the help is shown."""
    from models.config import TrainConfig                  # torch: only for ``ldsicl train --help``

    value = {f.name: f.default for f in dataclasses.fields(TrainConfig)}[name]
    return f" (default: {','.join(map(str, value)) if isinstance(value, tuple) else value})"


def _train_arg(p, flag, *, field, **kwargs):
    """A training option, None unless given, whose help ends with TrainConfig's default for
    ``field`` (added by :class:`_Formatter` when the help is shown)."""
    action = p.add_argument(flag, default=None, **kwargs)
    action.train_field = field
    return action


def _add_family_args(p, *, defaults=True):
    """The family options; ``defaults=False`` (train): None when not given, so that only a
    given option changes a claim's run (--claim), and the help says the default."""
    def default(name):
        return _FAMILY_DEFAULTS[name] if defaults else None

    def said(name):
        return "" if defaults else f" (default: {_FAMILY_DEFAULTS[name]})"

    p.add_argument("--setting", choices=SETTINGS, default=default("setting"),
                   help="system family: a, b, c, d or the asymmetric control asym (see ldsicl --help)"
                        + said("setting"))
    for name, least, what in _SIZES:
        p.add_argument(f"--{name}", type=int_arg(name, least), default=default(name), help=what + said(name))
    p.add_argument("--sigma-w", type=rational_arg("sigma_w"), default=default("sigma_w"),
                   help="process noise standard deviation (an exact decimal or p/q)" + said("sigma_w"))
    p.add_argument("--sigma-v", type=rational_arg("sigma_v"), default=default("sigma_v"),
                   help="observation noise standard deviation" + said("sigma_v"))
    p.add_argument("--sigma-0", type=rational_arg("sigma_0"), default=default("sigma_0"),
                   help="initial state standard deviation" + said("sigma_0"))


def _cache_dir_arg(p):
    p.add_argument("--cache-dir", default=None,
                   help="weight cache directory (default: $LDSICL_CACHE_DIR, else the checkout's "
                        ".cache/ldsicl, else the user cache directory; models/cache.py)")


def build_parser() -> argparse.ArgumentParser:
    parser = _ArgumentParser(
        prog="ldsicl",
        description="Executable checks of 'On learning linear dynamical systems in context with "
                    "attention layers' (ICLR 2026): kappa of Theorem 4.1, training runs of the "
                    "paper's protocol (and every run a claim trains), population optima, the claims "
                    "report and the weight cache.",
        epilog=SETTINGS_HELP + "\n\n" + _examples(
            "ldsicl kappa --setting a --json", "ldsicl train --setting b --s 1 --steps 8000",
            "ldsicl runs --claim pcg-alignment", "ldsicl train --claim ars/a/s=4/seed=0",
            "ldsicl optimum --setting a --s 4", "ldsicl report --from docs/results/paper.json --out /tmp/r",
            "ldsicl cache list") + "\n\nexit status: 0 done, 1 a run failed, 2 a bad argument or work past the budget (see --yes)")
    parser.add_argument("--version", action=_VersionAction,
                        help="print the installed version, the git commit of the checkout (and whether it is "
                             "dirty) and the sha256 of the training code that keys the weight cache, and exit")
    sub = parser.add_subparsers(dest="command", metavar="{kappa,train,runs,optimum,report,sweep,cache}",
                                parser_class=_ArgumentParser)
    sub.required = True

    pk = sub.add_parser(
        "kappa", help="kappa of Theorem 4.1 (the AR(1) optimum, eq. 15)",
        description="kappa = (T-2) E[y_{T-1} y_T S] / E[y_{T-1}^2 S^2], S = sum y_i y_{i+1}, for a family.",
        epilog=_examples("ldsicl kappa                                   # setting a, exact rational",
                         "ldsicl kappa --setting b --json                 # quadrature, exact up to rounding",
                         "ldsicl kappa --setting d --mc-systems 200000    # Monte Carlo (the only route for d)",
                         "ldsicl kappa --T 300                            # auto: quadrature (exact would take hours)"))
    _add_family_args(pk)
    pk.add_argument("--method", default="auto",
                    choices=("auto", "exact-rational", "exact", "gauss-legendre", "quadrature",
                             "mc-moments", "mc-trajectories"),
                    help="auto: exact rational in setting a while it takes a few seconds, quadrature "
                         "(exact up to rounding) in a, b, c and asym, Monte Carlo over systems in d; "
                         "the choice is printed")
    pk.add_argument("--mc-systems", type=int_arg("mc-systems", 2), default=200_000,
                    help="systems (or trajectories) of the Monte Carlo methods")
    pk.add_argument("--seed", type=int_arg("seed", 0), default=0, help="Monte Carlo seed")
    pk.add_argument("--json", action="store_true", help="print one strict-JSON object")
    _yes_arg(pk, "the computation")

    pt = sub.add_parser(
        "train", help="one training run of the attention layer (the paper's protocol, or a claim's run)",
        description="Train the linear self-attention layer (or a stack of them) with the paper's protocol "
                    "(fresh systems every step, AdamW, clipping, warm-up + cosine).  Without --claim, "
                    "models.config.TrainConfig's defaults (docs/settings.md, Training), changed by the "
                    "options given (the defaults below); with --claim RUN, exactly the configuration the "
                    "claims train for RUN (claims/harness/runs.py; `ldsicl runs` lists them), changed by the "
                    "options given (e.g. --steps 20 for a shortened copy, which the record then calls a "
                    "copy).  The run is cached under the configuration and the code's fingerprint, so a "
                    "claims run reuses it.  With --profile and no --claim: every run the claims train in "
                    "that profile (at --claims-params) and the cache lacks, on a local process pool or a dask "
                    "cluster (--scheduler; claims/cluster/); exit status 1 if a run failed or was refused.",
        epilog=_examples("ldsicl train --setting a --s 1                 # 8000 x 3000, cached",
                         "ldsicl train --claim ars/b/s=4/seed=2          # exactly the run banding uses",
                         "ldsicl train --claim depth/L=4/T=80/batch=1500/seed=0 --profile paper",
                         "ldsicl train --claim ar1/a/seed=0 --steps 20 --batch 64 --no-cache --json",
                         "ldsicl train --profile paper --scheduler local  # every run of the profile",
                         "ldsicl train --profile quick --claims-params T=60,d=3 --scheduler tcp://10.0.0.5:8786",
                         "ldsicl train --setting d --steps 200 --batch 256 --no-cache --json",
                         "ldsicl train --s 4 --lr 0.03 --betas 0.9,0.99 --out run.json"))
    pt.add_argument("--claim", default=None, metavar="RUN",
                    help="train the configuration of this claim run id (`ldsicl runs` lists them)")
    pt.add_argument("--profile", choices=tuple(PROFILES), default=None,
                    help="with --claim: the profile of its run (the stacks' batch differs; default: quick); "
                         "alone: train every run of this profile not yet cached, on --scheduler's workers")
    pt.add_argument("--claims-params", default=None, metavar="T=60,d=3",
                    help="the point of the family's parameters (T, d, sigma_w, sigma_v, sigma_0) that --claim's "
                         "run or --profile's runs are at (claims/harness/params.py; default: the paper's)")
    pt.add_argument("--scheduler", default=None, metavar="ADDRESS|local",
                    help="with --profile alone: local (a dask cluster on this machine) or a dask scheduler's "
                         "address, both needing pip install -e \".[cluster]\" (default: a local process pool)")
    pt.add_argument("--workers", type=int_arg("workers", 1, MAX_WORKERS), default=None, metavar="N",
                    help="with --profile alone: processes of the local pool or cluster (default: one per CPU)")
    _add_family_args(pt, defaults=False)
    _train_arg(pt, "--s", type=int_arg("s", 1), field="s", help="AR window s")
    _train_arg(pt, "--layers", type=int_arg("layers", 1), field="layers", help="attention layers in the stack")
    _train_arg(pt, "--radius", type=real_arg("radius", positive=True), field="radius",
               help="largest eigenvalue modulus of the systems")
    _train_arg(pt, "--steps", type=int_arg("steps", 1), field="steps", help="optimiser steps")
    _train_arg(pt, "--batch", type=int_arg("batch", 1), field="batch", help="fresh systems per step")
    _train_arg(pt, "--seed", type=int_arg("seed", 0), field="seed", help="seed of every random stream")
    _train_arg(pt, "--lr", type=real_arg("lr", positive=True), field="lr", help="peak learning rate")
    _train_arg(pt, "--lr-min", type=real_arg("lr_min"), field="lr_min", help="learning rate at the end")
    pt.add_argument("--warmup-steps", type=int_arg("warmup_steps", 0), default=None,
                    help="linear warm-up steps (default: 5 %% of steps)")
    _train_arg(pt, "--weight-decay", type=real_arg("weight_decay"), field="weight_decay", help="AdamW decay")
    _train_arg(pt, "--betas", type=pair_arg("betas"), field="betas", metavar="B1,B2", help="AdamW betas")
    _train_arg(pt, "--grad-clip", type=real_arg("grad_clip", positive=True), field="grad_clip",
               help="global gradient-norm clipping")
    _train_arg(pt, "--init-scale", type=real_arg("init_scale"), field="init_scale", help="std of the initial weights")
    _train_arg(pt, "--dtype", choices=("float32", "float64"), field="dtype", help="training precision")
    _train_arg(pt, "--forward", choices=("effective", "model"), field="forward",
               help="loss through the effective form or the full forward pass")
    pt.add_argument("--device", default="auto", help="auto (CUDA if available), cpu, cuda, cuda:N")
    pt.add_argument("--max-memory", type=real_arg("max_memory", positive=True), default=None,
                    help="GiB the run may plan to use (default: half this machine's memory)")
    g = pt.add_mutually_exclusive_group()
    _cache_dir_arg(g)
    g.add_argument("--no-cache", action="store_true", help="always train, store nothing")
    pt.add_argument("--json", action="store_true", help="print the run's record as strict JSON")
    pt.add_argument("--out", default=None, help="also write the record to this file (checked before training)")
    _yes_arg(pt, "the training (one run, or the runs of --profile the cache lacks)")
    pr = pt.add_mutually_exclusive_group()
    pr.add_argument("--progress", dest="progress", action="store_const", const=True, default=None,
                    help="show a progress bar (default: when stderr is a terminal)")
    pr.add_argument("--no-progress", dest="progress", action="store_const", const=False,
                    help="no progress bar")

    pn = sub.add_parser(
        "runs", help="the run ids each claim trains (for ldsicl train --claim)",
        description="List the trained runs each claim uses in a profile (its spec's runs, claims/specs/, the "
                    "definitions the claims read), one line each: claim, run id, and whether this code's weights are "
                    "in the cache.",
        epilog=_examples("ldsicl runs                                    # every claim, quick profile",
                         "ldsicl runs --claim banding --profile paper",
                         "ldsicl runs --claims-params T=60,d=3 --json"))
    pn.add_argument("--claim", default=None,
                    help="only this claim (ar1-optimum, banding, pcg-alignment, depth, ...; default: every "
                         "claim, one that trains nothing saying so)")
    pn.add_argument("--profile", choices=tuple(PROFILES), default="quick", help="the profile")
    pn.add_argument("--claims-params", default=None, metavar="T=60,d=3",
                    help="the point of the family's parameters (claims/harness/params.py; default: the paper's)")
    _cache_dir_arg(pn)
    pn.add_argument("--json", action="store_true", help="print one JSON object")

    po = sub.add_parser(
        "optimum", help="population optimum of the layer for window s (Lemma 4.1)",
        description="Multi-start minimum of the exact population loss over (b, W_QK) for window s, "
                    "in the canonical gauge (largest |b_r| = 1), with the best point inside each "
                    "parity class b-even / b-odd and the stationary points the starts reached.",
        epilog=_examples("ldsicl optimum --setting a --s 4 --json",
                         "ldsicl optimum --setting d --s 2 --trajectories 200000",
                         "ldsicl optimum --setting asym --s 3 --starts 64"))
    _add_family_args(po)
    po.add_argument("--s", type=int_arg("s", 1), default=2, help="AR window s")
    po.add_argument("--starts", type=int_arg("starts", 1), default=32, help="random starts")
    po.add_argument("--seed", type=int_arg("seed", 0), default=0, help="seed of the starts")
    po.add_argument("--trajectories", type=int_arg("trajectories", 2), default=1_000_000,
                    help="setting d only: antithetic raw trajectories behind the moments")
    po.add_argument("--no-classes", action="store_true", help="skip the in-class optimisations")
    po.add_argument("--max-memory", type=real_arg("max_memory", positive=True), default=4.0,
                    help="GiB the moment tables may use")
    po.add_argument("--json", action="store_true", help="print one strict-JSON object")
    _yes_arg(po, "the minimisation")

    prep = sub.add_parser(
        "report", help="render the reproducibility report of a claims run",
        description="Write a one-page report (index.html, claims.md, figures/) from a finished "
                    "claims.json; prints where it is and opens nothing.",
        epilog=_examples("ldsicl report                                  # reports/claims.json -> reports/",
                         "ldsicl report --from docs/results/paper.json --out /tmp/paper",
                         "ldsicl report --run                            # run the quick claims first"))
    prep.add_argument("--from", dest="source", default=None, metavar="FILE",
                      help="the claims.json to render (default: DIR/claims.json)")
    prep.add_argument("--out", default=str(REPO / "reports"), metavar="DIR",
                      help="where the report goes")
    prep.add_argument("--run", action="store_true",
                      help="run `pytest claims -n auto` first (needs the checkout), then render")
    prep.add_argument("--profile", choices=("quick", "paper"), default="quick", help="the profile of --run")
    _yes_arg(prep, "the claims run of --run")

    _yes_arg(sweep_command.add_parser(sub, _Formatter), "the sweep")

    pc = sub.add_parser("cache", help="list, remove or export cached trained weights",
                        description="The weight cache: entries keyed by the configuration and a "
                                    "fingerprint of the training code, torch version, device type "
                                    "and dtype.",
                        epilog=_examples("ldsicl cache list", "ldsicl cache list --json",
                                         "ldsicl cache clear --stale-only",
                                         "ldsicl cache export ars/a/s=4/seed=0 --out w.npz"))
    csub = pc.add_subparsers(dest="action", metavar="{list,clear,export}", parser_class=_ArgumentParser)
    csub.required = True
    pl = csub.add_parser("list", help="one line per entry",
                         description="One line per entry: key, setting, s, steps, batch, seed, "
                                     "created (UTC), size in bytes, and whether it was trained by "
                                     "the current code (current), other code or torch (stale), "
                                     "or cannot be read (corrupt).",
                         epilog=_examples("ldsicl cache list --cache-dir /tmp/cache"))
    _cache_dir_arg(pl)
    pl.add_argument("--json", action="store_true", help="print one JSON list of entries")
    pcl = csub.add_parser("clear", help="remove entries",
                          description="Remove cache entries; lock files and other files in the "
                                      "folder are left alone.",
                          epilog=_examples("ldsicl cache clear --stale-only", "ldsicl cache clear"))
    _cache_dir_arg(pcl)
    pcl.add_argument("--stale-only", action="store_true",
                     help="remove only entries that are not current (stale or corrupt)")
    pe = csub.add_parser("export", help="write one entry's weights to a .npz file",
                         description="Write the weights of one cache entry -- W_V and W_QK per layer, "
                                     "arrays of shape (layers, s + 1, s + 1) -- with its configuration and "
                                     "code fingerprint (JSON strings) to a numpy .npz file.  KEY is a cache "
                                     "key (8 or more of its hex digits) or a claim run id, whose entry for "
                                     "this code is read.",
                         epilog=_examples("ldsicl cache export ars/a/s=4/seed=0 --out ars-a-4.npz",
                                          "ldsicl cache export 3f2a9c01 --out run.npz"))
    pe.add_argument("key", metavar="KEY", help="a cache key (or its first 8+ hex digits) or a run id")
    pe.add_argument("--out", required=True, metavar="FILE", help="the .npz file to write (checked first)")
    pe.add_argument("--profile", choices=tuple(PROFILES), default="quick",
                    help="the profile a run id belongs to")
    _cache_dir_arg(pe)
    return parser


_RUN = {"sweep": sweep_command.run_sweep, "kappa": compute_commands.run_kappa, "train": commands.run_train,
        "optimum": compute_commands.run_optimum, "report": compute_commands.run_report,
        "runs": cache_commands.run_runs}


def _yes_arg(p, what: str):
    """``--yes``: run work estimated past the budget (claims/cli/costs.py)."""
    p.add_argument("--yes", action="store_true",
                   help=f"run {what} even when its estimate is past the budget ({costs.BUDGET_TEXT})")


def _quiet_stdout():
    """After a closed pipe: send what is left to /dev/null so that exit does not complain."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # pragma: no cover - no real file descriptor
        pass


def main(argv=None) -> int:
    """Entry point of ``ldsicl``; returns the exit status (2 for a bad argument)."""
    parser = build_parser()
    try:
        args, extra = parser.parse_known_args(argv)
        sub = parser._subparsers._group_actions[0].choices[args.command]
        leaf = sub._subparsers._group_actions[0].choices[args.action] if args.command == "cache" else sub
        if extra:          # in the words of the subcommand that was given them, not the top level's
            leaf.error(f"unrecognized arguments: {' '.join(extra)}")
        if args.command == "cache":
            return cache_commands.run_cache(args, leaf)
        return _RUN[args.command](args, sub)
    except UsageExit:
        return 2
    except BrokenPipeError:
        _quiet_stdout()
        return 0
    except SystemExit as exc:  # --help
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)


if __name__ == "__main__":
    raise SystemExit(main())
