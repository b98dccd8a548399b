"""claims/harness/runs.py, the run store, and the command line that replays it.

Oracles: the published runs (every run id a claim's records name, in both profiles: the
claims' specs must list exactly those, and the store build a configuration for each); ids
that read back to themselves through their kind's parser; the documented
protocol of each family of runs (docs/settings.md, "Training"; claims/harness/runs.py module doc)
restated by hand; and, for ``ldsicl train --claim``, the configuration the claims' own
route hands to the weight cache (captured there) and the weights a shortened copy trains
through both routes (bit for bit).
"""
from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from claims.harness import runs
from claims.cli.main import main
from claims.harness.profiles import PAPER, PROFILES, QUICK
from claims.harness.seeds import seed_for
from claims.specs import CLAIMS, claim_runs
from models.cache import cache_key
from models.config import TrainConfig

ROOT = Path(__file__).resolve().parents[1]


def _published(profile: str) -> dict:
    return json.loads((ROOT / "docs" / "results" / f"{profile}.json").read_text(encoding="utf-8"))


def _published_runs(profile: str) -> dict[str, set]:
    """claim -> the trained run ids its records name, a group's (several runs read together:
    a depth group T=10+80, a spectral-shift pair) by its members (``runs.parse_run``)."""
    out: dict[str, set] = {}
    for rec in _published(profile)["records"]:
        for entry in rec.get("runs") or []:
            group = getattr(runs.parse_run(entry["run"]), "members", None)
            out.setdefault(rec["claim"], set()).update(
                [m.run for m in group] if group is not None else [entry["run"]])
    return out


@pytest.mark.parametrize("profile", list(PROFILES))
def test_the_store_lists_exactly_the_runs_the_published_records_name(profile):
    published = _published_runs(profile)
    listed = {s.name: {r.run for r in claim_runs(s.name, PROFILES[profile])} for s in CLAIMS}
    if profile == "paper":      # the sensitivity table also reads its baseline, the first AR(1) seeds
        baseline = {runs.ar1_run(st, i).run for st in runs.SENSITIVITY_SETTINGS for i in range(runs.SENSITIVITY_SEEDS)}
        assert baseline <= listed["training-sensitivity"]
        listed["training-sensitivity"] -= baseline
    assert {c: ids for c, ids in listed.items() if ids} == published
    for ids in listed.values():                      # and each id is a configuration
        for rid in ids:
            assert isinstance(runs.config_for(rid, PROFILES[profile]), TrainConfig)


#: the 4-layer stacks' learning rate, restated from docs/notes.md ("Stacks: learning rate per depth")
STACK_LR_4 = 1e-2


def test_each_family_of_runs_is_the_documented_protocol():
    """Restated by hand from docs/settings.md (Training) and the module doc of claims/harness/runs.py."""
    base = dict(steps=8000, batch=3000)
    assert runs.config_for("ar1/c/seed=2", QUICK) == TrainConfig(
        setting="c", s=1, seed=seed_for("ar1-train", "c", 2), **base)
    assert runs.config_for("ars/asym/s=3/seed=7", PAPER) == TrainConfig(
        setting="asym", s=3, lr=0.03, betas=(0.9, 0.99), seed=seed_for("ars-train", "asym", 3, 7), **base)
    assert runs.config_for("depth/L=4/T=80/batch=1500/seed=1", PAPER) == TrainConfig(
        setting="a", s=2, T=80, layers=4, radius=0.9, steps=8000, batch=1500, lr=STACK_LR_4, betas=(0.9, 0.99),
        seed=seed_for("depth-train", 4, 80, 1))
    assert runs.config_for("shift/L=1/r=0.9/batch=1000/seed=0", QUICK) == TrainConfig(
        setting="a", s=2, layers=1, radius=0.9, steps=8000, batch=1000, lr=1e-2, betas=(0.9, 0.99),
        seed=seed_for("shift-train", 1, 0))
    assert runs.config_for("shift/L=4/r=0.5/batch=1500/seed=2", PAPER) == TrainConfig(
        setting="a", s=2, layers=4, radius=0.5, steps=8000, batch=1500, lr=STACK_LR_4, betas=(0.9, 0.99),
        seed=seed_for("shift-train", 4, 0.5, 2))
    assert runs.config_for("sensitivity/b/grad_clip=1/seed=2", PAPER) == TrainConfig(
        setting="b", s=1, grad_clip=1.0, seed=seed_for("ar1-train", "b", 2), **base)
    # the single layers are the same runs in both profiles, the stacks carry their batch
    assert runs.config_for("ars/b/s=4/seed=1", QUICK) == runs.config_for("ars/b/s=4/seed=1", PAPER)


def test_the_published_sensitivity_runs_have_the_stores_cache_keys():
    """An independent oracle for the keys: the configuration keys the sensitivity table
    recorded for each of its runs in the published paper run."""
    for rec in _published("paper")["records"]:
        if rec["claim"] == "training-sensitivity":
            keys = [runs.config_for(e["run"], PAPER).key() for e in rec["runs"]]
            assert keys == rec["details"]["train_keys"], rec["check_id"]


@pytest.mark.parametrize("rid, words", [
    ("depth/L=1/T=10+80/batch=1000/seed=0", "run must be a run id"),          # a group, not a run
    ("depth/L=2/T=10/batch=1500/seed=0", "not a run of the quick profile"),  # the paper profile's batch
    ("ars/e/s=2/seed=0", "no claim trains an AR(s) layer of setting 'e'"),
    ("ars/a/s=1/seed=0", "no claim trains an AR(s) layer of window s = 1"),    # not the AR(1) run
    ("ars/a/s=40/seed=0", "run 'ars/a/s=40/seed=0'"),
    ("ar1/asym/seed=0", "no claim trains an AR(1) layer of setting 'asym'"),
    ("depth/L=3/T=10/batch=1000/seed=0", "L = 3"),
    ("depth/L=2/T=30/batch=1000/seed=0", "T = 30"),
    ("shift/L=2/r=0.9/batch=1000/seed=0", "L = 2"),
    ("shift/L=4/r=0.9/batch=1000/seed=0", "L = 4"),                         # the paper profile's depth
    ("shift/L=1/r=0.7/batch=1000/seed=0", "radius r = '0.7'"),
    ("ars/b/s=3/seed=0", "window s = 3 is not trained in the quick profile"),
    ("sensitivity/c/lr=5e-4/seed=0", "setting 'c'"),
    ("sensitivity/a/lr=9/seed=0", "variant"),
    ("ar1/a/seed=01", "run must be a run id"),
    ("", "run must be a run id"),
    (3, "run must be a run id"),
])
def test_a_bad_run_id_is_one_value_error_naming_run(rid, words):
    with pytest.raises(ValueError, match="run") as exc:
        runs.config_for(rid, QUICK)
    assert words in str(exc.value)


def test_an_unknown_claim_names_the_claim():
    with pytest.raises(ValueError, match="^claim must be one of"):
        claim_runs("depth-construction", QUICK)


#: one example of each kind of run id (groups included), written by hand from the module doc
EXAMPLES = {runs.Ar1Layer: "ar1/c/seed=2", runs.ArsLayer: "ars/asym/s=3/seed=7",
            runs.DepthStack: "depth/L=4/T=80/batch=1500/seed=1", runs.ShiftStack: "shift/L=1/r=1/batch=1000/seed=0",
            runs.SensitivityRun: "sensitivity/b/grad_clip=1/seed=2", runs.DepthGroup: "depth/L=1/T=10+80/batch=1000/seed=0",
            runs.ShiftPair: "shift/L=4/r=1+0.9/batch=1500/seed=2",
            runs.ShiftNullPair: "shift/L=1/r=0.9+0.9-rerun/batch=1000/seed=1"}


@pytest.mark.parametrize("kind", runs.KINDS, ids=lambda k: k.__name__)
def test_each_kind_reads_its_own_id_back(kind):
    rid = EXAMPLES[kind]
    run = kind.parse(rid)
    assert type(run) is kind and run.run == str(run) == rid and runs.parse_run(rid) == run
    assert run.ref == runs.RunRef(rid, run.seed)
    for other in runs.KINDS:                   # no id is two kinds'
        assert (other.PATTERN.fullmatch(rid) is not None) == (other is kind), (kind, other)
    with pytest.raises(ValueError, match="^run must be an id of the form"):
        kind.parse(rid + "/x")


_seed = st.integers(0, 10 ** 6)
_radius = st.sampled_from(runs.SHIFT_RADII + (0.25, 1.05, 2.0))
_RUNS = st.one_of(
    st.builds(runs.Ar1Layer, st.sampled_from(runs.ARS_SETTINGS), _seed),
    st.builds(runs.ArsLayer, st.sampled_from(runs.ARS_SETTINGS), st.integers(1, 40), _seed),
    st.builds(runs.DepthStack, st.integers(1, 64), st.integers(1, 10 ** 4), st.integers(1, 10 ** 4), _seed),
    st.builds(runs.ShiftStack, st.integers(1, 64), _radius, st.integers(1, 10 ** 4), _seed),
    st.builds(runs.SensitivityRun, st.sampled_from(runs.SENSITIVITY_SETTINGS),
              st.sampled_from(list(runs.SENSITIVITY_VARIANTS)), _seed),
    st.builds(runs.DepthGroup, st.integers(1, 64), st.lists(st.integers(1, 10 ** 4), min_size=2, max_size=4).map(tuple),
              st.integers(1, 10 ** 4), _seed),
    st.builds(runs.ShiftPair, st.integers(1, 64), st.tuples(_radius, _radius), st.integers(1, 10 ** 4), _seed),
    st.builds(runs.ShiftNullPair, st.integers(1, 64), st.integers(1, 10 ** 4), _seed))


@settings(max_examples=300, deadline=None, derandomize=True)
@given(_RUNS)
def test_id_parse_id_round_trip(run):
    """Every id of every kind reads back to the same run, and that run writes the same id."""
    assert type(run).parse(run.run) == run and runs.parse_run(run.run) == run
    assert type(run).parse(run.run).run == run.run


def test_a_group_is_its_members_and_no_run_of_its_own():
    group = runs.DepthGroup.parse("depth/L=1/T=10+80/batch=1000/seed=2")
    assert [m.run for m in group.members] == ["depth/L=1/T=10/batch=1000/seed=2", "depth/L=1/T=80/batch=1000/seed=2"]
    assert group.config(QUICK) == tuple(runs.config_for(m.run, QUICK) for m in group.members)
    null = runs.ShiftNullPair(4, 1500, 1)
    assert [m.seed for m in null.members] == [1, 1 + runs.STACK_SEEDS]
    assert {m.radius for m in null.members} == {runs.TRAIN_RADIUS}
    for rid in (group.run, null.run, runs.shift_pair(1, (1.0, 0.9), 1000, 0).run):
        with pytest.raises(ValueError, match="^run must be a run id"):
            runs.config_for(rid, QUICK)
    with pytest.raises(ValueError, match="radius must be written 1"):       # one spelling per radius
        runs.ShiftStack.parse("shift/L=1/r=1.0/batch=1000/seed=0")


def _cli(argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(argv)
    return rc, out.getvalue(), err.getvalue()


#: one AR(1) run, one AR(4) run and one stack (the issue's three), each with the profile whose
#: claims train it (``train --claim`` takes no other: tests/test_cli_errors.py)
REPLAYED = [("ar1/b/seed=1", "quick"), ("ars/d/s=4/seed=2", "quick"), ("depth/L=2/T=10/batch=1500/seed=0", "paper")]


@pytest.mark.parametrize("rid, profile", REPLAYED)
def test_train_claim_builds_the_configuration_the_claim_trains(rid, profile, monkeypatch, tmp_path):
    """The claims' route (runs.trained, as every claim file calls it) and ``ldsicl train
    --claim`` hand the weight cache the same configuration, hence the same cache key.
    Both are captured where they reach the cache; nothing trains."""
    import models.cache

    seen = {}

    def capture(route):
        def fake(config, **kw):
            seen[route] = config
            raise RuntimeError("captured")              # the CLI reports it and exits 1
        return fake

    monkeypatch.setattr(models.cache, "train_cached", capture("claim"))
    with pytest.raises(RuntimeError, match="captured"):
        runs.trained(rid, PROFILES[profile])
    monkeypatch.setattr(models.cache, "train_cached", capture("cli"))
    monkeypatch.setattr(models.cache, "load_cached", lambda *a, **k: None)
    rc, _, err = _cli(["train", "--claim", rid, "--profile", profile, "--cache-dir", str(tmp_path), "--device", "cpu"])
    assert rc == 1 and "captured" in err
    assert seen["cli"] == seen["claim"] == runs.config_for(rid, PROFILES[profile])
    assert cache_key(seen["cli"], "cpu") == cache_key(seen["claim"], "cpu")


@pytest.mark.parametrize("rid, profile", REPLAYED)
def test_a_shortened_copy_trains_the_same_weights_through_both_routes(rid, profile, monkeypatch, tmp_path):
    """``ldsicl train --claim RUN --steps 12 --batch 24`` and the claims' store on the same
    shortened configuration, each with its own temporary cache: bit-identical weights."""
    short = dict(steps=12, batch=24)
    rc, out, err = _cli(["train", "--claim", rid, "--profile", profile, "--steps", "12", "--batch", "24", "--cache-dir",
                         str(tmp_path / "cli"), "--device", "cpu", "--no-progress", "--json"])
    assert rc == 0, err
    rec = json.loads(out)
    assert rec["run"] is None and rec["changed_from"] == {"run": rid, "fields": ["batch", "steps"]}
    monkeypatch.setenv("LDSICL_CACHE_DIR", str(tmp_path / "claims"))
    config = runs.config_for(rid, PROFILES[profile]).replace(**short)
    result = runs.trained(config, PROFILES[profile])
    assert TrainConfig.from_dict(rec["config"]) == config
    assert np.array_equal(np.asarray(rec["W_V"]), result.W_V) and np.array_equal(np.asarray(rec["W_QK"]), result.W_QK)
    assert len(list((tmp_path / "cli").glob("*.json"))) == len(list((tmp_path / "claims").glob("*.json"))) == 1
    assert {p.name for p in (tmp_path / "cli").glob("*.json")} == {p.name for p in (tmp_path / "claims").glob("*.json")}


def test_runs_command_lists_the_store(tmp_path):
    rc, out, _ = _cli(["runs", "--profile", "paper", "--json", "--cache-dir", str(tmp_path)])
    assert rc == 0
    listed = json.loads(out)
    assert listed["profile"] == "paper"
    assert {c: [e["run"] for e in v] for c, v in listed["claims"].items()} == \
        {s.name: [r.run for r in claim_runs(s.name, PAPER)] for s in CLAIMS}
    assert {e["cache"] for v in listed["claims"].values() for e in v} == {"not cached"}
    rc, out, err = _cli(["runs", "--claim", "pcg-alignment", "--cache-dir", str(tmp_path)])
    ids = [r.run for r in claim_runs("pcg-alignment", QUICK)]
    assert rc == 0 and out.splitlines() == [f"pcg-alignment  {r}  (not cached)" for r in ids]
    assert err.strip() == (f"{len(set(ids))} distinct runs in the quick profile (0 cached); train one with "
                           "`ldsicl train --claim <run> --profile quick`, all with `ldsicl train --profile quick`")
    rc, out, _ = _cli(["runs", "--claim", "depth", "--cache-dir", str(tmp_path)])
    assert rc == 0 and out.strip() == "depth: no trained run in the quick profile"


def test_cache_export_writes_every_layer_with_its_configuration(tmp_path):
    rid = "depth/L=2/T=10/batch=1500/seed=0"                    # a stack of the paper profile
    cache = str(tmp_path / "cache")
    assert _cli(["train", "--claim", rid, "--profile", "paper", "--steps", "5", "--batch", "8", "--cache-dir", cache,
                 "--device", "cpu", "--no-progress", "--json"])[0] == 0
    entry = next((tmp_path / "cache").glob("*.json"))
    data = json.loads(entry.read_text())
    rc, out, err = _cli(["cache", "export", entry.stem[:10], "--out", str(tmp_path / "w.npz"), "--cache-dir", cache])
    assert rc == 0, err
    z = np.load(tmp_path / "w.npz")
    assert z["W_V"].shape == z["W_QK"].shape == (2, 3, 3)
    assert np.array_equal(z["W_V"], np.asarray(data["W_V"])) and np.array_equal(z["W_QK"], np.asarray(data["W_QK"]))
    assert json.loads(str(z["config"])) == data["config"] and json.loads(str(z["fingerprint"])) == data["fingerprint"]
    assert str(z["cache_key"]) == entry.stem
    # a run id is read from this code's entry of its configuration: the shortened copy is
    # another configuration, so the full run is not in this cache (exit 2, naming KEY)
    rc, _, err = _cli(["cache", "export", rid, "--profile", "paper", "--out", str(tmp_path / "x.npz"),
                       "--cache-dir", cache])
    assert rc == 2 and "argument KEY" in err and "ldsicl train --claim" in err
    assert not (tmp_path / "x.npz").exists()


def test_cache_export_of_a_run_id_reads_its_entry(tmp_path, monkeypatch):
    """A single layer exported by its run id has one layer (shape (1, s + 1, s + 1))."""
    import models.cache
    rid = "ar1/a/seed=0"
    config = runs.config_for(rid, QUICK).replace(steps=3, batch=4)
    result = models.cache.train_cached(config, cache_dir=str(tmp_path), device="cpu", progress=False)
    monkeypatch.setattr(runs, "config_for", lambda r, p, **kw: config)     # the full run, shortened
    rc, out, err = _cli(["cache", "export", rid, "--out", str(tmp_path / "a.npz"), "--cache-dir", str(tmp_path)])
    assert rc == 0, err
    z = np.load(tmp_path / "a.npz")
    assert z["W_V"].shape == (1, 2, 2) and np.array_equal(z["W_V"][0], result.W_V)
    assert json.loads(str(z["run"])) == rid


@pytest.mark.parametrize("argv, flag", [
    (["train", "--claim", "nope"], "argument --claim: claim must be a run id"),
    (["train", "--claim", "depth/L=2/T=10/batch=1500/seed=0"], "argument --claim: claim 'depth/L=2/T=10/batch=1500"),
    (["train", "--betas", "2,3"], "argument --betas: betas[0] must be < 1.0"),
    (["train", "--profile", "paper", "--steps", "20"], "argument --steps: with --profile alone"),
    (["cache", "export", "ar1/e/seed=0", "--out", "{tmp}/x.npz"], "argument KEY: key 'ar1/e/seed=0'"),
    (["cache", "export", "ABCDEF12", "--out", "{tmp}/x.npz"], "argument KEY: key 'ABCDEF12' matches 0"),
])
def test_bad_claim_options_name_their_flag(argv, flag, tmp_path):
    rc, out, err = _cli([a.replace("{tmp}", str(tmp_path)) for a in argv] + ["--cache-dir", str(tmp_path)])
    assert rc == 2 and flag in err and "Traceback" not in err, err
    assert err.strip().splitlines()[-1].startswith(f"ldsicl {argv[0]}")


def test_cache_export_of_an_unreadable_entry_or_cache_exits_1(tmp_path, monkeypatch):
    import models.cache
    (tmp_path / ("ab" * 32 + ".json")).write_text("{ not json")
    rc, _, err = _cli(["cache", "export", "abababab", "--out", str(tmp_path / "x.npz"), "--cache-dir", str(tmp_path)])
    assert rc == 1 and "cannot be read" in err and "Traceback" not in err and not (tmp_path / "x.npz").exists()

    def unreadable(cache_dir=None):
        raise PermissionError("no access")
    monkeypatch.setattr(models.cache, "list_entries", unreadable)
    rc, _, err = _cli(["cache", "export", "abababab", "--out", str(tmp_path / "x.npz"), "--cache-dir", str(tmp_path)])
    assert rc == 1 and "cannot read the cache" in err and "Traceback" not in err


def test_train_reports_a_kappa_no_route_can_compute_instead_of_failing(tmp_path):
    """An AR(1) run whose horizon no kappa route fits (T = 400): trained and reported, kappa null
    with the reason."""
    rc, out, err = _cli(["train", "--T", "400", "--d", "1", "--steps", "1", "--batch", "1", "--no-cache",
                         "--device", "cpu", "--no-progress", "--json"])
    assert rc == 0, err
    k = json.loads(out)["kappa"]
    assert k["kappa"] is None and "T = 400" in k["kappa_not_computed"] and np.isfinite(k["coefficient"])
    assert k["kappa_method"] is None and k["kappa_stderr"] is None and k["coefficient_rel_error"] is None


def test_the_shift_lr_table_reaches_the_configurations():
    """Each (layers, radius) the spectral shift's scan chose a learning rate for trains at it;
    every other cell at the depth grid's rate (docs/notes.md, the shift's lr scan)."""
    def lr(layers, radius):
        return runs.ShiftStack(layers, radius, PAPER.stack_batch, 0).config(PAPER).lr
    for layers in runs.SHIFT_DEPTHS:
        for radius in runs.SHIFT_RADII:
            assert lr(layers, radius) == runs.SHIFT_LR.get((layers, radius), runs.STACK_LR[layers]), (layers, radius)
    assert lr(1, 1.0) == 1e-1 != runs.STACK_LR[1]
    assert lr(4, 1.0) == 3e-3 != runs.STACK_LR[4]


@given(st.sampled_from(sorted(EXAMPLES.values())), st.integers(0, 50))
def test_a_records_run_names_its_seed_index_by_the_run_grammar(rid, other):
    """runentries checks a run's seed against the id through runs.seed_index, the kinds' own
    suffix: the seed every kind writes is read back, any other index is refused."""
    from claims.harness.identity import RunRef
    from claims.harness.runentries import run_entries
    kind = runs.parse_run(rid)
    assert runs.seed_index(rid) == kind.seed and rid.endswith(runs.SEED_SUFFIX.format(seed=kind.seed))
    run_entries([RunRef(rid, kind.seed)], None, 0.5, {})
    if other != kind.seed:
        with pytest.raises(ValueError, match="seed index"):
            run_entries([RunRef(rid, other)], None, 0.5, {})
