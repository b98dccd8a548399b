r"""Reading reports of the previous schema (3): their records mapped to check ids (one release).

Schema 3 records had no identity of their own: a free-text ``setting`` ("a, s=2, T=10"), a
``metric`` label and the test's node id.  :func:`upgrade_record` maps such a record to the
schema 4 record the current claims write for the same check -- its ``check``, coordinates,
``check_id``, ``label`` (the old metric text, unchanged) and per-run entries -- from the
test function, its parametrization, the record's order within the test and, where the
old schema kept the distinction nowhere else, the label text.  This module is the only
place that reads old labels, and it goes with the next schema: ``claims.reports.compare`` calls
:func:`upgrade_report` on a schema 3 input, so the published runs can be compared across
the change (``python -m claims.reports.compare old.json new.json``).

The mapping is checked in tests/test_identity.py on one schema 3 record of each rule (from
the published runs of schema 3), against the ids, coordinates, labels and per-run entries
that a fresh run of the current claims records for the same checks.  Converting the
published quick run of schema 3 and running the current claims from the cached weights
gave the same records, bit for bit apart from the per-run numbers below (2026-12-02).
Schema 3 did not keep every per-run
number that the current claims record: a converted record has no per-run entries where
its per-seed values were not stored (the depth claim's ``mse-over-var`` rows of the
stacks), and no per-run standard error where the old record kept none (kalman-parity's
``trained-mse-ratio``).

>>> old = {"claim": "banding", "setting": "a, s=2", "metric": "m", "test":
...        "claims/test_banding.py::test_exact_moments_have_parity_zeros[a-2]", "order": 0,
...        "kind": "check", "expect": "holds", "values": None, "details": {}}
>>> upgrade_record(old)["check_id"]
'banding/parity-zeros-exact/a/s=2'
"""
from __future__ import annotations

import argparse
import json
import math
import re
import sys
from pathlib import Path
from typing import Callable, Mapping

from claims.harness import runs as run_ids
from claims.harness.identity import Coords, check_id
from claims.harness.records import RECORD_FIELDS, run_entries
from claims.reports.report import SCHEMA, inconclusive_summary
from models.files import atomic_write_text
from theory.jsonvalues import dumps

__all__ = ["LEGACY_SCHEMA", "upgrade_record", "upgrade_report"]

#: the schema this module reads.
LEGACY_SCHEMA = 3


def _parts(nodeid: str) -> tuple[str, str | None]:
    """``claims/test_x.py::test_f[a-1]`` -> ``("test_f", "a-1")``."""
    name = str(nodeid).rsplit("::", 1)[-1]
    func, _, param = name.partition("[")
    return func, (param[:-1] if param else None)


def _setting_s(param: str) -> tuple[str, int]:
    setting, s = param.rsplit("-", 1)
    return setting, int(s)


def _radius(setting_text: str) -> float:
    return float(setting_text.split("r=", 1)[1])


# each rule: (old record, function parameter) -> (check, coordinates dict, run ids or None)
Rule = Callable[[Mapping, str | None], tuple]


def _ctl(r, variant):
    return None if r.get("expect") != "fails" else variant


def _seeds(r) -> int:
    return len(r["values"]) if r.get("values") else 0


_RULES: dict[tuple[str, str], Rule] = {
    # ar1-optimum
    ("ar1-optimum", "test_exact_kappa_equals_monte_carlo"):
        lambda r, p: ("kappa-vs-monte-carlo", {"setting": "a", "variant": _ctl(r, "prefactor-T-1")}, None),
    ("ar1-optimum", "test_monte_carlo_standard_errors_are_calibrated"):
        lambda r, p: ("mc-stderr-calibration", {"setting": "a", "variant": _ctl(r, "stderr-x0.5")}, None),
    ("ar1-optimum", "test_exact_kappa_equals_quadrature_at_the_defaults"):
        lambda r, p: ("kappa-exact-vs-quadrature", {"setting": "a"}, None),
    ("ar1-optimum", "test_kappa_versus_T"): lambda r, p: ("kappa-vs-T", {"setting": "a-c"}, None),
    ("ar1-optimum", "test_control_broken_population_moments_are_not_stationary"):
        lambda r, p: ("stationary", {"setting": "a", "variant": p.replace("/", "-over-")}, None),
    ("ar1-optimum", "test_theta_star_is_stationary_numerically"):
        lambda r, p: ("stationary", {"setting": p}, None),
    ("ar1-optimum", "test_theta_star_is_stationary_symbolically"):
        lambda r, p: ("stationary-symbolic", {"setting": "symbolic",
                                              "variant": None if p == "symmetric" else "no-parity-zeros"}, None),
    ("ar1-optimum", "test_theta_star_is_global_minimum"):
        lambda r, p: (("global-min-over-beta", "global-min-multistart")[r["order"]], {"setting": p}, None),
    ("ar1-optimum", "test_trained_layer_reaches_kappa"):
        lambda r, p: ("trained-coefficient", {"setting": p}, [run_ids.ar1_run(p, i) for i in range(_seeds(r))]),
    ("ar1-optimum", "test_trained_layer_has_no_odd_part"):
        lambda r, p: ("trained-odd-share", {"setting": p}, [run_ids.ar1_run(p, i) for i in range(_seeds(r))]),
    # gd-equivalence
    ("gd-equivalence", "test_theta_star_predicts_one_gd_step"):
        lambda r, p: ("theta-star-is-one-gd-step", {"setting": "a-d", "variant": {
            "eta=kappa": None, "control-eta=1.1kappa": "eta=1.1kappa", "control-kappa(T+1)": "kappa-of-T+1"}[p]},
            None),
    ("gd-equivalence", "test_trained_layer_predicts_like_one_gd_step"):
        lambda r, p: ("trained-gd-gap", {"setting": p, "variant": (None, "eta=1.1kappa")[r["order"]]},
                      [run_ids.ar1_run(p, i) for i in range(_seeds(r))]),
    ("gd-equivalence", "test_trained_layer_step_size_is_kappa"):
        lambda r, p: ("trained-step-size", {"setting": p}, [run_ids.ar1_run(p, i) for i in range(_seeds(r))]),
    # training-sensitivity
    ("training-sensitivity", "test_sensitivity_to_training_choices"):
        lambda r, p: (("coefficient-error", "odd-share")[r["order"]],
                      {"setting": p.split("-", 1)[0], "variant": p.split("-", 1)[1]},
                      [run_ids.sensitivity_run(p.split("-", 1)[0], p.split("-", 1)[1], i) for i in range(_seeds(r))]),
    # improper-learning
    ("improper-learning", "test_ar_excess_decays_like_rho_squared"):
        lambda r, p: (("rate-floor", "rate-median-deviation")[r["order"] % 2],
                      {"setting": "a-d", "variant": _ctl(r, "rate-rho-4s")}, None),
    # banding
    ("banding", "test_exact_moments_have_parity_zeros"):
        lambda r, p: ("parity-zeros-exact", dict(zip(("setting", "s"), _setting_s(p))), None),
    ("banding", "test_monte_carlo_moments_have_parity_zeros"):
        lambda r, p: ("parity-zeros-monte-carlo", {"setting": p, "s": "2-4"}, None),
    ("banding", "test_class_invariance_symbolically"):
        lambda r, p: ("class-invariance-symbolic", {"setting": "symbolic", "s": int(p.split("-", 1)[0]),
                                                    "variant": _ctl(r, "no-parity-zeros")}, None),
    ("banding", "test_class_invariance_numerically"):
        lambda r, p: ("class-invariance-autograd", {"setting": "drawn", "s": "1-6",
                                                    "variant": _ctl(r, "no-parity-zeros")}, None),
    ("banding", "test_population_optimum_lies_in_a_class"):
        lambda r, p: (("optimum-in-a-class", "optimum-in-class-gap")[r["order"]],
                      dict(zip(("setting", "s"), _setting_s(p))), None),
    ("banding", "test_population_optimum_over_drawn_configurations"):
        lambda r, p: ("optimum-in-a-class-share", {"setting": "a-c", "s": int(r["setting"].rsplit("s=", 1)[1])},
                      None),
    ("banding", "test_trained_layers_are_banded"):
        lambda r, p: (("trained-out-of-class-share", "trained-jaccard", "trained-excess-loss")[r["order"]],
                      dict(zip(("setting", "s"), _setting_s(p))),
                      *(([run_ids.ars_run(*_setting_s(p), i) for i in range(_seeds(r))], None) if r["order"] == 0
                        else _per_seed_runs(r, lambda i: run_ids.ars_run(*_setting_s(p), i),
                                            ("jaccard_per_seed", "per_seed")[r["order"] - 1]))),
    ("banding", "test_trained_layers_have_no_odd_part"):
        lambda r, p: ("trained-odd-share", dict(zip(("setting", "s"), _setting_s(p))),
                      [run_ids.ars_run(*_setting_s(p), i) for i in range(_seeds(r))]),
    # pcg-alignment
    ("pcg-alignment", "test_eq17_is_the_forward_pass"):
        lambda r, p: ("eq17-is-the-forward-pass", {"setting": "a-d+asym", "s": "1-5", "variant": _ctl(
            r, r["label_text"].rsplit("control: ", 1)[-1].rstrip(")"))}, None),
    ("pcg-alignment", "test_eq18_two_pcg_steps_span"):
        lambda r, p: ("eq18-two-steps-in-span", {"setting": "drawn", "s": ("2-6", "3-6")[r["order"]],
                                                 "variant": _ctl(r, "three-steps")}, None),
    ("pcg-alignment", "test_ar4_alignment_trained"):
        lambda r, p: ("trained-cos1", {"setting": p, "s": 4}, [run_ids.ars_run(p, 4, i) for i in range(_seeds(r))],
                      None, [float(sd["cos_1"]["sd"] / math.sqrt(sd["cos_1"]["n"])) for sd in r["details"]["per_seed"]]),
    ("pcg-alignment", "test_ar4_alignment_population_optimum"):
        lambda r, p: ("optimum-cos1", {"setting": p, "s": 4}, None),
    ("pcg-alignment", "test_ar4_alignment_control_random_layers"):
        lambda r, p: ("trained-cos1", {"setting": p, "s": 4, "variant": "random-layers"}, None),
    ("pcg-alignment", "test_ar4_cosines_reported"):
        lambda r, p: ("-".join(r["label_text"].split(":", 1)[0].split(" ", 1)), {"setting": p, "s": 4},
                      [run_ids.ars_run(p, 4, i) for i in range(len(r["details"]["per_seed"]))],
                      _cosine_values(r)),
    ("pcg-alignment", "test_ar4_prediction_quality"):
        lambda r, p: ("heldout-mse", {"setting": p, "s": 4, "variant": {
            "trained layer": "trained", "population optimum": "optimum", "two PCG steps": "pcg2-trained-P",
            "one GD step": "gd1-best-eta", "in-context least squares": "least-squares-ar4",
            "zero predictor": "zero"}[next(k for k in ("trained layer", "population optimum", "two PCG steps",
                                                      "one GD step", "in-context least squares", "zero predictor")
                                           if k in r["label_text"])]},
            *_per_seed_runs(r, lambda i: run_ids.ars_run(p, 4, i), "per_seed")),
    ("pcg-alignment", "test_population_loss_matches_the_forward_pass"):
        lambda r, p: ("population-loss-vs-forward-pass", {**dict(zip(("setting", "s"), _setting_s(p))),
                                                          "variant": _ctl(r, "no-1-over-n")}, None),
    # kalman-parity
    ("kalman-parity", "test_filter_error_by_the_recursion_is_the_cholesky_optimum"):
        lambda r, p: ("filter-error-is-cholesky-optimum", {"setting": "a-d", "variant": _ctl(r, "filter-of-minus-A")},
                      None),
    ("kalman-parity", "test_trained_layer_against_the_kalman_filter"):
        lambda r, p: (("trained-mse-ratio", "baseline-mse-ratio", "baseline-mse-ratio")[r["order"]],
                      {**dict(zip(("setting", "s"), _setting_s(p))),
                       "variant": (None, "least-squares", "best-ar-of-the-system")[r["order"]]},
                      [run_ids.trained_layer_run(*_setting_s(p), i) for i in range(_seeds(r))] if r["order"] == 0
                      else None),
    ("kalman-parity", "test_n4sid_and_the_filter"):
        lambda r, p: (("baseline-mse-ratio", "filter-calibration")[r["order"]],
                      {"setting": p, "variant": ("n4sid", None)[r["order"]]}, None),
    ("kalman-parity", "test_per_position_mse"): lambda r, p: ("per-position-mse", {"setting": "a"}, None),
    # depth
    ("depth", "test_training_loss_tails"):
        lambda r, p: ("training-loss-tails", {"setting": "a", "s": 2, "layers": int(p)},
                      [run_ids.depth_run(int(p), int(k.split(" ")[0][2:]), r["stack_batch"], int(k.rsplit(" ", 1)[1]))
                       for k in r["details"]["per_run"]], list(r["details"]["per_run"].values())),
    ("depth", "test_one_layer_keeps_its_error"):
        lambda r, p: ("excess-ratio", {"setting": "a", "s": 2, "layers": (1, 1, None)[r["order"]], "variant": (
            "T80-over-T10", "T80-over-T40", "least-squares-T80-over-T10")[r["order"]]},
            [run_ids.depth_group(1, ((10, 80), (40, 80))[r["order"]], r["stack_batch"], i) for i in range(_seeds(r))]
            if r["order"] < 2 else None),
    ("depth", "test_one_layer_optimum_keeps_its_error"):
        lambda r, p: ("optimum-excess-ratio", {"setting": "a", "s": 2, "layers": 1,
                                               "variant": "-over-".join(reversed(p.split("-")))}, None),
    ("depth", "test_the_deepest_stack_tracks_least_squares"):
        lambda r, p: ("distance-to-least-squares-slope",
                      {"setting": "a", "s": 2, "layers": (4, None)[r["order"]],
                       "variant": (None, "context-free-ar2")[r["order"]]},
                      [run_ids.depth_group(4, (10, 20, 40, 80), r["stack_batch"], i) for i in range(_seeds(r))]
                      if r["order"] == 0 else None),
    ("depth", "test_depth_trend"):
        lambda r, p: ("mse-over-var", {"setting": "a", "s": 2, "T": int(p), **_depth_row(r["label_text"])}, None),
    # spectral-shift
    ("spectral-shift", "test_the_filter_stays_optimal_out_of_distribution"):
        lambda r, p: _shift_row(r),
}


def _per_seed_runs(r: Mapping, ref, key) -> tuple:
    """(run refs, run values) of a reported row whose per-seed values sit in ``details[key]``."""
    vals = (r.get("details") or {}).get(key) if key else None
    if not vals:
        return None, None
    return [ref(i) for i in range(len(vals))], list(vals)


def _cosine_values(r: Mapping) -> list:
    """Per-seed values of a reported cosine row (the cos_1 mean row keeps the seeds' summaries)."""
    per = r["details"]["per_seed"]
    return [sd["cos_1"]["mean"] for sd in per] if per and isinstance(per[0], dict) else list(per)


def _depth_row(label: str) -> dict:
    m = re.search(r": L=(\d+) ", label)
    if m:
        return {"layers": int(m.group(1))}
    return {"variant": "least-squares" if "least squares" in label else "best-ar2-of-the-system"}


# The stacks of schema 3 runs (and of the schema 5 runs published before the stacks issue)
# trained at lr 3e-3, the depth grid at radius 1: their ids map to today's, which name the
# stacks' present protocol (lr 1e-2, radius 0.9; claims/harness/runs.py) -- the same run in the
# claims' words, another configuration (docs/results/README.md, "Changes to the published
# runs").
def _shift_row(r: Mapping) -> tuple:
    if r.get("kind") != "reported":
        return ("filter-lower-bound", {"setting": "a", "radius": "0.9-1.05",
                                       "variant": _ctl(r, "filter-of-the-training-law")}, None)
    name = r["label_text"].split("MSE(", 1)[1].rsplit(") / MSE(Kalman", 1)[0]
    coords = {"setting": "a", "radius": _radius(r["setting"])}
    m = re.fullmatch(r"L=(\d+) seed (\d+)", name)
    if m:
        L, i = int(m.group(1)), int(m.group(2))
        return "mse-ratio", {**coords, "layers": L, "seed": i}, [run_ids.shift_run(L, run_ids.TRAIN_RADIUS, r["stack_batch"], i)]
    variant = {"in-context least squares AR(2)": "least-squares-ar2", "N4SID": "n4sid",
               "Kalman filter (true system)": "kalman-true-system"}[name]
    return "mse-ratio", {**coords, "variant": variant}, None


def upgrade_record(old: Mapping, stack_batch: int | None = None) -> dict:
    """The schema 4 form of a schema 3 record (module doc); ValueError when no rule knows it.

    ``stack_batch``: the batch of the stacks in the run the record comes from (part of the
    stacks' run ids; the report's ``profile.stack_batch``).  It is never guessed: a record
    of the stacks without it is refused (reports from before the stacks' batch was a
    profile knob trained them at 1000 in both profiles)."""
    if "check_id" in old:
        return dict(old)
    func, param = _parts(old.get("test") or "")
    rule = _RULES.get((old.get("claim"), func))
    if rule is None:
        raise ValueError(f"no schema-3 mapping for {old.get('claim')!r} / {func!r} ({old.get('metric')!r})")
    check, coords, ids, *per_run = rule({**old, "label_text": old.get("metric", ""), "stack_batch": stack_batch},
                                        param)
    run_values, run_stderr = (per_run + [None, None])[:2]
    if stack_batch is None and any("batch=None" in ref.run for ref in ids or ()):
        raise ValueError(f"{old.get('test')}: the stacks' batch is not known (no profile.stack_batch): "
                         "pass stack_batch")
    c = Coords(**{k: v for k, v in coords.items() if v is not None}, control=old.get("expect") == "fails")
    details = dict(old.get("details") or {})
    runs = None
    if ids:                                   # the same rule as make_record's
        runs = [e.to_dict() for e in run_entries(ids, old.get("values"), old["measured"], details,
                                                  run_values, run_stderr)]
    new = {k: old.get(k) for k in RECORD_FIELDS if k in old}
    new.update(check_id=check_id(old["claim"], check, c), check=check, coords=c.to_dict(),
               label=old.get("metric"), runs=runs, details=details)
    return {k: new.get(k) for k in RECORD_FIELDS}


def upgrade_report(report: Mapping) -> dict:
    """A schema 3 report as schema 4: every record upgraded (:func:`upgrade_record`), the
    summary's list of inconclusive checks rebuilt from them; a schema 4 report unchanged."""
    if report.get("schema") != LEGACY_SCHEMA:
        return dict(report)
    out = dict(report)
    out["schema"] = SCHEMA
    batch = (report.get("profile") or {}).get("stack_batch")
    out["records"] = [upgrade_record(r, batch) for r in report.get("records", [])]
    if isinstance(out.get("summary"), dict):
        out["summary"] = dict(out["summary"], inconclusive=inconclusive_summary(out["records"]))
    return out


def main(argv=None) -> int:
    """``python -m claims.reports.legacy REPORT.json [...]``: rewrite schema 3 reports in place as
    schema 4 (how docs/results/*.json were converted); a schema 4 file is left as it is."""
    p = argparse.ArgumentParser(prog="python -m claims.reports.legacy",
                                description="Convert claims.json reports of schema 3 to schema 4 in place.")
    p.add_argument("reports", nargs="+", metavar="REPORT.json")
    args = p.parse_args(argv)
    for name in args.reports:
        path = Path(name)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            print(f"claims.reports.legacy: {name}: {exc}", file=sys.stderr)
            return 2
        if data.get("schema") != LEGACY_SCHEMA:
            print(f"{name}: schema {data.get('schema')}, left as it is")
            continue
        try:
            new = upgrade_report(data)
        except (KeyError, ValueError, TypeError, IndexError) as exc:
            print(f"claims.reports.legacy: {name}: {exc}", file=sys.stderr)
            return 2
        atomic_write_text(path, dumps(new, indent=2) + "\n")
        print(f"{name}: schema {LEGACY_SCHEMA} -> {new['schema']}, {len(new['records'])} records")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
