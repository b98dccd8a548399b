"""claims.cluster: the executor interface, training a profile's runs on it, and the command line.

Oracles: ``models.trainer.train`` of the same configuration in this process (the root
conftest has pinned its CPU kernels) for the weights a cluster's worker sends back, bit for
bit; the weight cache's own reader (models.cache.load_cached, list_entries) for what was
stored.  Controls: a worker that imports a copy of the training code with one comment
edited is refused and leaves the cache empty; a run whose task keeps failing is retried a
bounded number of times and then reported failed (exit status 1).  Every run is tiny (20
steps of 64 systems at T = 10, d = 2: a "tiny" copy of the quick profile); the dask tests
start clusters of one or two worker processes on 127.0.0.1 (no dashboard).
"""
from __future__ import annotations

import concurrent.futures as cf
import dataclasses
import importlib.util
import json
import logging
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from claims.cli.main import main
from claims.cluster import training
from claims.cluster.executor import check_workers, cpu_name, open_executor, worker_env
from claims.cluster.training import train_runs
from claims.harness.profiles import QUICK
from claims.harness.runs import config_for
from models.cache import list_entries, load_cached, store_result
from models.fingerprint import current_fingerprint
from models.kernels import PINNED
from models.trainer import train

ROOT = Path(__file__).resolve().parents[1]
TINY = dataclasses.replace(QUICK, name="tiny", train_steps=20, train_batch=64)
RUNS = ("@T=10,d=2/ar1/a/seed=0", "@T=10,d=2/ars/b/s=2/seed=1")
needs_dask = pytest.mark.skipif(importlib.util.find_spec("distributed") is None,
                                reason="dask.distributed is not installed (pip install -e \".[cluster]\")")


def _same_weights(a, b) -> bool:
    return np.array_equal(a.W_V, b.W_V) and np.array_equal(a.W_QK, b.W_QK)


# --------------------------------------------------------------------------- dask clusters
@needs_dask
def test_a_local_dask_cluster_trains_the_runs_bit_for_bit(tmp_path):
    summary = train_runs(RUNS, TINY, open_executor("local", 2), cache_dir=tmp_path, progress=False)
    assert summary.trained == RUNS and summary.ok, summary.text()
    assert {(o.cpu, o.kernels) for o in summary.runs} == {(cpu_name(), PINNED)}
    results = [load_cached(config_for(r, TINY), tmp_path, device="cpu") for r in RUNS]
    for rid, stored in zip(RUNS, results):
        local = train(config_for(rid, TINY), device="cpu", progress=False)
        assert _same_weights(stored, local), rid
    assert not _same_weights(*results)             # two runs: the comparison can tell them apart


@needs_dask
def test_a_worker_with_other_training_code_is_refused_and_nothing_is_stored(tmp_path):
    """The worker imports a copy of theory/ and models/ with one comment of the trainer edited
    (a preload puts the copy first on its sys.path): its fingerprint differs, so its weights
    are refused -- the summary names the run and why, and the client's cache stays empty."""
    from distributed import Client, LocalCluster

    tree = tmp_path / "other-checkout"
    for pkg in ("theory", "models"):
        shutil.copytree(ROOT / pkg, tree / pkg, ignore=shutil.ignore_patterns("__pycache__"))
    trainer = tree / "models" / "trainer.py"
    trainer.write_text(trainer.read_text(encoding="utf-8") + "# one edited line\n", encoding="utf-8")
    cache = tmp_path / "cache"
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address="127.0.0.1:0", scheduler_kwargs={"dashboard": False}, scheduler_port=0, env=worker_env(), silence_logs=logging.ERROR,
                      preload=[f"import sys; sys.path.insert(0, {str(tree)!r})"]) as cluster, \
            Client(cluster) as client:
        where = client.run(lambda: __import__("models").__file__)
        assert all(Path(f).is_relative_to(tree) for f in where.values()), where
        summary = train_runs(RUNS[:1], TINY, client.get_executor(pure=False), cache_dir=cache, progress=False)
    assert summary.refused == RUNS[:1] and not summary.ok, summary.text()
    (outcome,) = summary.runs
    assert "training code" in outcome.reason and "kernels" not in outcome.reason, outcome.reason
    assert outcome.kernels == PINNED and outcome.path is None
    assert list_entries(cache) == [] and not list(cache.glob("*.json"))


# --------------------------------------------------------------------------- the local pool, the CLI
class _NoWork:
    """An executor context that must not be entered: nothing is left to train."""

    def __enter__(self):
        raise AssertionError("an executor was opened although every run is cached")

    def __exit__(self, *exc):
        return False


def test_the_command_trains_a_profile_on_the_local_pool_then_finds_it_cached(tmp_path, monkeypatch, capsys):
    """``ldsicl train --profile quick`` (made tiny: its first run, 20 x 64) on one process of the
    local pool: stored by the client; the second call finds it cached and opens no executor."""
    from claims.cli import commands

    monkeypatch.setattr(commands, "get_profile", lambda name: TINY)
    monkeypatch.setattr(training, "profile_runs", lambda profile: RUNS[:1])
    argv = ["train", "--profile", "quick", "--claims-params", "T=10,d=2", "--workers", "1",
            "--cache-dir", str(tmp_path), "--no-progress", "--json"]
    assert main(argv) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["trained"] == list(RUNS[:1]) and first["point"] == "T=10,d=2", first
    config = config_for(RUNS[0], TINY)
    stored = load_cached(config, tmp_path, device="cpu")
    assert _same_weights(stored, train(config, device="cpu", progress=False))
    entry = Path(first["runs"][0]["path"])
    created = json.loads(entry.read_text())["created"]
    path = store_result(stored, current_fingerprint("cpu", config.dtype), tmp_path)   # kept, not rewritten
    assert path == entry and json.loads(entry.read_text())["created"] == created

    monkeypatch.setattr("claims.cluster.executor.open_executor", lambda *a: _NoWork())
    assert main(argv) == 0
    second = json.loads(capsys.readouterr().out)
    assert second["cached"] == list(RUNS[:1]) and second["trained"] == []


class _Failing(cf.Executor):
    """Every task fails as if its worker were lost; counts the submissions."""

    def __init__(self):
        self.submitted = 0

    def submit(self, fn, /, *args, **kwargs):
        self.submitted += 1
        future = cf.Future()
        future.set_exception(OSError("worker lost"))
        return future


def test_a_task_that_keeps_failing_is_retried_a_bounded_number_of_times(tmp_path):
    pool = _Failing()
    summary = train_runs(RUNS[:1], TINY, pool, cache_dir=tmp_path, progress=False, retries=2)
    assert summary.failed == RUNS[:1] and pool.submitted == 3
    assert summary.runs[0].attempts == 3 and "worker lost" in summary.runs[0].reason
    assert not list(tmp_path.glob("*.json"))


def test_the_command_exits_1_when_a_run_failed(tmp_path, monkeypatch, capsys):
    from claims.cli import commands

    monkeypatch.setattr(commands, "get_profile", lambda name: TINY)
    monkeypatch.setattr(training, "profile_runs", lambda profile: RUNS[:1])
    monkeypatch.setattr("claims.cluster.executor.open_executor", lambda *a: _Failing())
    assert main(["train", "--profile", "quick", "--claims-params", "T=10,d=2", "--cache-dir", str(tmp_path),
                 "--no-progress"]) == 1
    out = capsys.readouterr().out
    assert f"failed   {RUNS[0]}" in out and "1 failed" in out


@pytest.mark.parametrize("argv, says", [
    (["train", "--profile", "quick", "--scheduler", "locale"], "--scheduler must be 'local' or the address"),
    (["train", "--profile", "quick", "--scheduler", ""], "--scheduler must be"),
    (["train", "--profile", "quick", "--workers", "0"], "argument --workers: workers must be an integer >= 1"),
    (["train", "--profile", "quick", "--workers", "two"], "argument --workers: workers must be an integer"),
    (["train", "--profile", "quick", "--scheduler", "tcp://10.0.0.5:8786", "--workers", "2"], "--workers sets"),
    (["train", "--profile", "quick", "--claims-params", "d=0"], "--claims-params d: must be an integer"),
    (["train", "--claim", "ar1/a/seed=0", "--claims-params", "T=1000"], "--claims-params T:"),
    (["train", "--claims-params", "T=60"], "--claims-params moves the runs of the claims"),
    (["train", "--claim", "ar1/a/seed=0", "--scheduler", "local"], "--scheduler and --workers train every run"),
    (["train", "--profile", "quick", "--steps", "20"], "argument --steps: with --profile alone"),
    (["runs", "--claims-params", "x=1"], "--claims-params x: unknown parameter"),
])
def test_a_bad_cluster_argument_exits_2_with_one_line(argv, says, capsys, tmp_path):
    assert main(argv + ["--cache-dir", str(tmp_path)]) == 2
    captured = capsys.readouterr()
    errors = [line for line in captured.err.splitlines() if "error:" in line]
    assert len(errors) == 1 and says in errors[0], captured.err
    assert "Traceback" not in captured.err and captured.out == ""
    assert not list(tmp_path.iterdir())                           # before any work


def test_runs_at_a_point_lists_the_ids_there(capsys, tmp_path):
    assert main(["runs", "--claims-params", "T=60", "--json", "--cache-dir", str(tmp_path)]) == 0
    out = json.loads(capsys.readouterr().out)
    ids = [e["run"] for runs in out["claims"].values() for e in runs]
    assert ids and all(r.startswith("@T=60/") for r in ids) and out["point"] == "T=60"
    assert main(["runs", "--json", "--cache-dir", str(tmp_path)]) == 0          # control: the default point
    assert not any(e["run"].startswith("@") for runs in json.loads(capsys.readouterr().out)["claims"].values()
                   for e in runs)


def test_a_claim_run_follows_the_point(capsys, tmp_path):
    assert main(["train", "--claim", "ar1/a/seed=0", "--claims-params", "T=10,d=2", "--steps", "2",
                 "--batch", "4", "--no-cache", "--json", "--device", "cpu", "--no-progress"]) == 0
    rec = json.loads(capsys.readouterr().out)
    assert rec["changed_from"]["run"] == "@T=10,d=2/ar1/a/seed=0"
    assert (rec["config"]["T"], rec["config"]["d"]) == (10, 2)


# --------------------------------------------------------------------------- validation
def test_open_executor_checks_its_arguments_before_starting_anything(monkeypatch):
    for scheduler in ("locale", "", "tcp://", 5):
        with pytest.raises(ValueError, match="^--scheduler must be"):
            open_executor(scheduler)
    for workers in (0, -1, 1.5, True, "2"):
        with pytest.raises(ValueError, match="^--workers must be an integer >= 1"):
            open_executor("local", workers)
    assert check_workers(None, 3) == 3
    monkeypatch.setitem(sys.modules, "distributed", None)           # dask not installed
    with pytest.raises(ValueError, match=r'pip install -e "\.\[cluster\]"'):
        open_executor("local")
    open_executor(None, 1)                                         # the local pool needs no dask (not entered)


def test_train_runs_checks_its_arguments(tmp_path):
    pool = _Failing()
    good = dict(run_ids=RUNS[:1], profile=TINY, executor=pool, retries=2, progress=False)
    for bad, match in ((dict(run_ids="ar1/a/seed=0"), "run_ids"), (dict(profile="tiny"), "unknown claims profile"),
                       (dict(executor=object()), "executor"), (dict(retries=-1), "retries"),
                       (dict(progress=None), "progress"), (dict(run_ids=["ar1/zz/seed=0"]), "^run")):
        kw = {**good, **bad}
        with pytest.raises(ValueError, match=match):
            train_runs(kw.pop("run_ids"), kw.pop("profile"), kw.pop("executor"), cache_dir=tmp_path, **kw)
    assert pool.submitted == 0 and not list(tmp_path.iterdir())


def test_the_workers_environment_pins_the_kernels_as_the_client_has_them():
    env = worker_env({"MKL_CBWR": "AVX2", "PATH": "/bin"})
    assert env["MKL_CBWR"] == "AVX2" and env["ATEN_CPU_CAPABILITY"] == "avx2" and "PATH" not in env
    assert env["OMP_NUM_THREADS"] == "1"
