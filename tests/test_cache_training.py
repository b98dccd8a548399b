"""models/cache.py, ``train_cached``: trains once then loads, distrusts corrupt or foreign
records, its directory default and environment variable, concurrent processes training
one configuration once, and what it logs.  (Keys and fingerprints: tests/test_cache.py.)"""
from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from models import cache as cache_mod
from models.config import TrainConfig

REPO = Path(__file__).resolve().parents[1]
TINY = dict(steps=60, batch=64)


# ----------------------------------------------------------------------------- cache
def test_cache_trains_once_then_loads(tmp_path, monkeypatch):
    calls = []
    real = cache_mod.train

    def counting(config, **kw):
        calls.append(config)
        return real(config, **kw)

    monkeypatch.setattr(cache_mod, "train", counting)
    cfg = TrainConfig(seed=7, **TINY)
    first = cache_mod.train_cached(cfg, cache_dir=tmp_path, device="cpu", progress=False)
    second = cache_mod.train_cached(cfg, cache_dir=tmp_path, device="cpu", progress=False)
    assert len(calls) == 1
    assert np.array_equal(first.W_V, second.W_V) and np.array_equal(first.W_QK, second.W_QK)
    path = cache_mod.cache_path(cfg, tmp_path, device="cpu")
    assert path == tmp_path / f"{cache_mod.cache_key(cfg, 'cpu')}.json" and path.exists()
    assert not list(tmp_path.glob("*.tmp"))
    stored = json.loads(path.read_text())
    assert stored["config"] == cfg.to_dict() and stored["key"] == cfg.key()
    # a different configuration is a different entry
    cache_mod.train_cached(cfg.replace(seed=8), cache_dir=tmp_path, device="cpu", progress=False)
    assert len(calls) == 2


def test_cache_distrusts_corrupt_or_foreign_records(tmp_path, monkeypatch, caplog):
    calls = []
    real = cache_mod.train
    monkeypatch.setattr(cache_mod, "train", lambda c, **kw: calls.append(c) or real(c, **kw))
    cfg = TrainConfig(seed=9, **TINY)
    path = cache_mod.cache_path(cfg, tmp_path, device="cpu")
    tmp_path.mkdir(exist_ok=True)
    path.write_text("{ not json")
    with caplog.at_level(logging.WARNING, logger="models.cache"):
        res = cache_mod.train_cached(cfg, cache_dir=tmp_path, device="cpu", progress=False)
    assert len(calls) == 1 and "corrupt" in caplog.text
    assert cache_mod.load_cached(cfg, tmp_path, device="cpu") is not None
    # a record holding another configuration under this key is not trusted
    other = json.loads(path.read_text())
    other["config"] = cfg.replace(seed=10).to_dict()
    path.write_text(json.dumps(other))
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="models.cache"):
        again = cache_mod.train_cached(cfg, cache_dir=tmp_path, device="cpu", progress=False)
    assert len(calls) == 2 and "different configuration" in caplog.text
    assert np.array_equal(again.W_V, res.W_V)


def test_cache_dir_default_and_env(monkeypatch, tmp_path):
    monkeypatch.delenv(cache_mod.ENV_VAR, raising=False)
    assert cache_mod.default_cache_dir() == REPO / ".cache" / "ldsicl"
    monkeypatch.setenv(cache_mod.ENV_VAR, str(tmp_path / "c"))
    assert cache_mod.default_cache_dir() == tmp_path / "c"
    assert cache_mod.cache_path(TrainConfig()).parent == tmp_path / "c"
    with pytest.raises(ValueError, match="^cache_dir"):
        cache_mod.cache_path(TrainConfig(), cache_dir=3)
    with pytest.raises(ValueError, match="^config"):
        cache_mod.train_cached("a", cache_dir=tmp_path)


_CHILD = textwrap.dedent("""
    import json, os, sys, time
    from pathlib import Path
    import models.cache as cm
    from models.config import TrainConfig
    tmp = Path(sys.argv[1]); me = sys.argv[2]
    real = cm.train
    def counting(config, **kw):
        with open(tmp / "trained.log", "a") as fh:
            fh.write(me + "\\n")
        return real(config, **kw)
    cm.train = counting
    (tmp / ("ready-" + me)).touch()
    while not (tmp / "go").exists():
        time.sleep(0.01)
    res = cm.train_cached(TrainConfig(seed=11, steps=300, batch=128), cache_dir=tmp / "cache",
                          device="cpu", progress=False)
    print(json.dumps({"W_V": res.W_V.tolist(), "W_QK": res.W_QK.tolist()}))
""")


def test_concurrent_processes_train_once(tmp_path):
    """Two processes asking for the same configuration at the same moment: one trains,
    the other waits on the per-key file lock and loads; both get the same weights."""
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""),
           "OMP_NUM_THREADS": "1"}
    procs = [subprocess.Popen([sys.executable, "-c", _CHILD, str(tmp_path), name], cwd=REPO, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for name in ("p1", "p2")]
    import time
    deadline = time.monotonic() + 120
    while not all((tmp_path / f"ready-{n}").exists() for n in ("p1", "p2")):
        assert time.monotonic() < deadline, "children did not start"
        assert all(p.poll() is None for p in procs), [p.communicate() for p in procs]
        time.sleep(0.02)
    (tmp_path / "go").touch()
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    trained = (tmp_path / "trained.log").read_text().split()
    assert len(trained) == 1, trained
    w1, w2 = (json.loads(o[0].strip().splitlines()[-1]) for o in outs)
    assert w1 == w2


def test_cache_logs_what_it_trains(tmp_path, caplog):
    cfg = TrainConfig(seed=11, **TINY)
    with caplog.at_level(logging.INFO, logger="models.cache"):
        cache_mod.train_cached(cfg, cache_dir=tmp_path, device="cpu", progress=False)
    msgs = [r.getMessage() for r in caplog.records if r.name == "models.cache"]
    assert any(m.startswith("training ") and cache_mod.cache_key(cfg, "cpu") in m for m in msgs), msgs
