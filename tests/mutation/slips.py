"""Planted slips: hand-written, realistic mistakes in the objects of issue 21's item 2, each
planted alone in a scratch copy of the repository, where the tests named for it must fail.

Not a test module (pytest collects ``test_*.py`` only) and not run in CI (about 3 minutes on
2 cores).  Run from the repository root:

    python tests/mutation/slips.py                      # table; exit 1 if a slip is not caught
    python tests/mutation/slips.py --json out.json      # also the outcomes, for docs/results/

Where mutmut's mutants (docs/mutation.md) are a random sample of small syntactic changes,
these are the slips a person makes: the context that includes the target, the PCG step count
off by one, a hyper-parameter hard-wired to its default, a reported figure computed another
way.  Each slip replaces one exact piece of source text, which must occur exactly once (a
slip that no longer applies is an error: the list has fallen behind the code --
tests/test_mutation_setup.py checks that every slip still applies).  The named tests are
first run on the unplanted copy, where they must pass, so a failure is the slip's.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Slip:
    name: str
    object: str       # what breaks, as the issue names it
    path: str         # file, relative to the repository root
    old: str          # exact source text, once in the file
    new: str
    tests: tuple      # pytest node ids that must fail with the slip planted


SLIPS = (
    # --- the in-context N4SID fit (theory/n4sid.py)
    Slip("n4sid-context-includes-target", "N4SID fit", "theory/n4sid.py",
         "ctx = y[:-1]", "ctx = y",
         ("tests/test_n4sid.py::test_the_fit_never_sees_the_value_it_predicts",)),
    Slip("n4sid-predicts-previous-step", "N4SID fit", "theory/n4sid.py",
         "kf.y_predicteds[-1][0, 0]", "kf.y_predicteds[-2][0, 0]",
         ("tests/test_n4sid.py::test_predictions_match_the_true_systems_filter",)),
    Slip("n4sid-order-ignored", "N4SID fit", "theory/n4sid.py",
         "system_identification(rank=order)", "system_identification(rank=ORDER)",
         ("tests/test_n4sid.py::test_order_and_window_reach_the_identification",)),
    Slip("n4sid-window-ignored", "N4SID fit", "theory/n4sid.py",
         "num_block_rows=block_rows)", "num_block_rows=BLOCK_ROWS)",
         ("tests/test_n4sid.py::test_order_and_window_reach_the_identification",)),
    Slip("n4sid-failed-counts-any", "N4SIDResult.failed", "theory/n4sid.py",
         "int(np.isnan(pred).sum())", "int(np.isnan(pred).any())",
         ("tests/test_n4sid.py::test_failed_counts_the_sequences_without_a_prediction",)),
    # --- the candidate PCG cosines (theory/alignment.py)
    Slip("cos2-one-pcg-step", "cos_2", "theory/alignment.py",
         "pcg(H, g, P, k=2)[2]", "pcg(H, g, P, k=1)[1]",
         ("tests/test_alignment.py::test_cosines_against_a_hand_computation_where_one_and_two_steps_differ",)),
    Slip("cos1-without-preconditioner", "cos_1", "theory/alignment.py",
         'cos_1 = _cos(t["first"], _mv(t["PH"], Pg))', 'cos_1 = _cos(t["first"], _mv(t["PH"], g))',
         ("tests/test_alignment.py::test_cosines_against_a_hand_computation_where_one_and_two_steps_differ",)),
    Slip("cos3-residual-without-second-term", "cos_3", "theory/alignment.py",
         'w12 = t["first"] + t["second"]', 'w12 = t["first"]',
         ("tests/test_alignment.py::test_cosines_against_a_hand_computation_where_one_and_two_steps_differ",)),
    Slip("cos3-residual-unpreconditioned", "cos_3", "theory/alignment.py",
         "cos_3 = _cos(t[\"third\"], resid @ P.T)", "cos_3 = _cos(t[\"third\"], resid)",
         ("tests/test_alignment.py::test_cosines_against_a_hand_computation_where_one_and_two_steps_differ",)),
    # --- every training hyper-parameter (models/trainer.py, models/config.py, models/attention.py)
    Slip("adamw-eps-default", "eps", "models/trainer.py",
         "eps=config.eps,", "eps=1e-8,",
         ("tests/test_training_settings.py::test_each_setting_changes_what_is_learned[eps]",)),
    Slip("adamw-betas-default", "betas", "models/trainer.py",
         "betas=config.betas,", "betas=(0.9, 0.999),",
         ("tests/test_training_settings.py::test_each_setting_changes_what_is_learned[betas]",)),
    Slip("adamw-weight-decay-default", "weight_decay", "models/trainer.py",
         "weight_decay=config.weight_decay,", "weight_decay=0.0,",
         ("tests/test_training_settings.py::test_each_setting_changes_what_is_learned[weight_decay]",)),
    Slip("clip-threshold-fixed", "grad_clip", "models/trainer.py",
         "clip_grad_norm_(params, config.grad_clip,", "clip_grad_norm_(params, 1000.0,",
         ("tests/test_training_settings.py::test_each_setting_changes_what_is_learned[grad_clip]",)),
    Slip("schedule-not-applied", "lr schedule", "models/trainer.py",
         'optimizer.param_groups[0]["lr"] = lrs[step]', 'optimizer.param_groups[0]["lr"] = config.lr',
         ("tests/test_training_settings.py::test_each_setting_changes_what_is_learned[lr_min]",
          "tests/test_training_settings.py::test_each_setting_changes_what_is_learned[warmup_steps]")),
    Slip("cosine-ends-at-zero", "lr_min", "models/config.py",
         "out[~warm] = config.lr_min + (config.lr - config.lr_min) * 0.5",
         "out[~warm] = 0.0 + (config.lr - 0.0) * 0.5",
         ("tests/test_training_settings.py::test_each_setting_changes_what_is_learned[lr_min]",)),
    Slip("init-scale-ignored", "init_scale", "models/trainer.py",
         "model = LinearSelfAttention(s, init=config.init, init_scale=config.init_scale,",
         "model = LinearSelfAttention(s, init=config.init, init_scale=0.01,",
         ("tests/test_training_settings.py::test_each_setting_changes_what_is_learned[init_scale]",)),
    # --- the figures a result reports about itself (models/trainer.py -> TrainResult)
    Slip("eval-on-training-stream", "TrainResult.eval_loss", "models/trainer.py",
         "batches = Batches(config, sampler, _STREAM_EVAL, config.batch, False, 1)",
         "batches = Batches(config, sampler, _STREAM_TRAIN, config.batch, False, 1)",
         ("tests/test_trainer.py::test_eval_loss_is_the_held_out_loss_of_the_returned_weights",)),
    Slip("final-loss-last-step", "TrainResult.final_loss", "models/trainer.py",
         "final_loss = float(tail.mean())", "final_loss = float(tail[-1])",
         ("tests/test_trainer.py::test_result_fields_and_round_trip",)),
    Slip("final-stderr-ddof0", "TrainResult.final_loss_stderr", "models/trainer.py",
         "tail.std(ddof=1)", "tail.std()",
         ("tests/test_trainer.py::test_result_fields_and_round_trip",)),
    # --- KappaResult's Monte Carlo standard error (theory/kappa.py)
    Slip("kappa-stderr-without-covariance", "KappaResult.stderr", "theory/kappa.py",
         "resid = Nv - R * Dv", "resid = Nv",
         ("tests/test_kappa.py",)),
)


def _copy_tree(dest: Path) -> None:
    """The files git tracks, and the untracked ones it does not ignore, as in the work tree."""
    out = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT,
                         capture_output=True, check=True).stdout.decode()
    for rel in filter(None, out.split("\0")):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)


def check_applies(slip: Slip, root: Path = ROOT) -> None:
    """ValueError unless ``slip.old`` occurs exactly once in its file."""
    text = (root / slip.path).read_text()
    n = text.count(slip.old)
    if n != 1:
        raise ValueError(f"slip {slip.name}: {slip.old!r} occurs {n} times in {slip.path}, not once")


def _pytest(tree: Path, tests) -> tuple[int, str]:
    env = {**os.environ, "PYTHONPATH": str(tree), "CI": "1"}
    cmd = [sys.executable, "-m", "pytest", "-q", "-x", "-n", "0", "-p", "no:cacheprovider",
           "--hypothesis-profile=ci", *tests]
    p = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True)
    lines = [ln for ln in (p.stdout + p.stderr).splitlines() if ln.strip()]
    return p.returncode, (lines[-1] if lines else "")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", type=Path, help="write the outcomes here")
    ap.add_argument("--only", nargs="*", help="slip names to plant (default: all)")
    args = ap.parse_args(argv)
    slips = [s for s in SLIPS if not args.only or s.name in args.only]
    for s in slips:
        check_applies(s)
    rows = []
    with tempfile.TemporaryDirectory(prefix="slips-") as tmp:
        tree = Path(tmp)
        _copy_tree(tree)
        probe = subprocess.run([sys.executable, "-c", "import theory; print(theory.__file__)"],
                               cwd=tree, env={**os.environ, "PYTHONPATH": str(tree)},
                               capture_output=True, text=True, check=True).stdout.strip()
        if not Path(probe).resolve().is_relative_to(tree.resolve()):
            raise SystemExit(f"the scratch copy imports theory from {probe}, not from {tree}")
        every = sorted({t for s in slips for t in s.tests})
        rc, last = _pytest(tree, every)
        print(f"unplanted: rc {rc}  {last}")
        if rc != 0:
            raise SystemExit("the named tests fail without a slip: fix them first")
        for s in slips:
            f = tree / s.path
            original = f.read_text()
            f.write_text(original.replace(s.old, s.new, 1))
            t0 = time.perf_counter()
            try:
                rc, last = _pytest(tree, s.tests)
            finally:
                f.write_text(original)
            caught = rc == 1                 # tests failed (2-5: an error of pytest itself)
            rows.append({"slip": s.name, "object": s.object, "path": s.path, "old": s.old,
                         "new": s.new, "tests": list(s.tests), "pytest_rc": rc, "caught": caught,
                         "summary": last, "seconds": round(time.perf_counter() - t0, 1)})
            print(f"{'caught' if caught else 'MISSED':7s} {s.name:38s} rc {rc}  {last}")
    commit = subprocess.run(["git", "rev-parse", "--short=7", "HEAD"], cwd=ROOT,
                            capture_output=True, text=True).stdout.strip()
    missed = [r["slip"] for r in rows if not r["caught"]]
    print(f"{len(rows) - len(missed)} of {len(rows)} slips caught" + (f"; missed: {missed}" if missed else ""))
    if args.json:
        args.json.write_text(json.dumps({"commit": commit, "slips": rows,
                                         "caught": len(rows) - len(missed), "planted": len(rows)},
                                        indent=1) + "\n")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
