"""models.fingerprint and models.cache: the cache key sees the training code, and stale or broken entries are retrained.

The oracle for "which modules determine the weights" is written out by hand here
(the imports of models/trainer.py, read from its source), not derived from the
closure code; the key tests edit copies of the package tree, never the checkout.
"""
from __future__ import annotations

import json
import logging
import shutil
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from models import cache as cache_mod
from models.fingerprint import (Fingerprint, closure_files, current_fingerprint, module_closure,
                                source_digest)
from models.config import TrainConfig
from models.kernels import cpu_kernels

REPO = Path(__file__).resolve().parents[1]
TINY = dict(steps=5, batch=8)
#: modules the trainer imports, from reading models/trainer.py and its project imports
#: (trainer -> attention, config, features, result, runtime, sampler; config/sampler -> theory.systems;
#: all -> theory.validation), plus the two package __init__ files that importing them runs.
EXPECTED_CLOSURE = {
    "models/__init__.py", "models/attention.py", "models/batches.py", "models/config.py", "models/features.py",
    "models/kernels.py", "models/result.py", "models/runtime.py", "models/sampler.py", "models/trainer.py",
    "theory/__init__.py", "theory/bases.py", "theory/jsonvalues.py", "theory/settings.py", "theory/systems.py",
    "theory/validation.py",
}


def _copy_tree(dest: Path) -> Path:
    """A copy of the project's packages (theory, models, claims) under ``dest``."""
    for pkg in ("theory", "models", "claims"):
        shutil.copytree(REPO / pkg, dest / pkg, ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def _edit_line(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) >= 1, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def _key(root: Path, config=TrainConfig(**TINY)) -> str:
    fp = current_fingerprint("cpu", config.dtype, root=root)
    return cache_mod.cache_key(config, fingerprint=fp)


# ----------------------------------------------------------------------------- closure
def test_closure_of_the_trainer_is_the_training_code():
    files = set(closure_files())
    assert files == EXPECTED_CLOSURE
    for needed in ("models/trainer.py", "models/sampler.py", "theory/systems.py"):
        assert needed in files
    for outside in ("models/twins.py", "models/cache.py", "models/fingerprint.py", "models/files.py",
                    "theory/kappa.py"):
        assert outside not in files
    assert not any(f.startswith(("claims/", "tests/")) for f in files)
    assert module_closure()[0] == "models" and "models.trainer" in module_closure()


def test_closure_resolves_relative_local_and_submodule_imports(tmp_path):
    """A synthetic tree whose closure is known by construction."""
    files = {
        "models/__init__.py": "",
        "models/trainer.py": "import numpy\nfrom .a import x\nfrom . import b\n"
                             "def f():\n    from theory.deep import y\n",
        "models/a.py": "from ..theory import c\n",  # relative import crossing into theory
        "models/b.py": "",
        "models/unused.py": "import models.trainer\n",
        "theory/__init__.py": "",
        "theory/c.py": "",
        "theory/deep/__init__.py": "from .leaf import *\n",
        "theory/deep/leaf.py": "import os\nfrom ..sibling import z\n",   # two levels up, in theory
        "theory/sibling.py": "",
        "theory/other.py": "",
        "claims/x.py": "",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    # "from ..theory import c" from models/a.py goes above the top-level package: refused
    with pytest.raises(ValueError, match="relative import beyond"):
        closure_files(tmp_path)
    (tmp_path / "models/a.py").write_text("from theory import c\n")
    assert set(closure_files(tmp_path / ".")) == {
        "models/__init__.py", "models/trainer.py", "models/a.py", "models/b.py", "theory/__init__.py",
        "theory/c.py", "theory/deep/__init__.py", "theory/deep/leaf.py", "theory/sibling.py"}


def test_closure_arguments_are_checked(tmp_path):
    with pytest.raises(ValueError, match="^root"):
        closure_files(tmp_path / "missing")
    with pytest.raises(ValueError, match="^entry"):
        module_closure(entry="numpy")
    with pytest.raises(ValueError, match="^entry module"):
        module_closure(tmp_path)


# ----------------------------------------------------------------------------- the key
@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    return _copy_tree(tmp_path_factory.mktemp("pristine"))


def test_a_copy_of_the_checkout_has_the_checkouts_key(pristine):
    """Paths enter the hash relative to the root: where the tree lies does not matter."""
    assert source_digest(pristine) == source_digest()
    assert _key(pristine) == _key(REPO)


@pytest.mark.parametrize("rel, old, new", [
    # the regression that motivated the fingerprint: lambda ~ U[-0.5, 1] whatever the setting
    ("models/sampler.py", "lo, hi = fam.eigenvalue_range", "lo, hi = -0.5, 1.0"),
    ("models/trainer.py", "import math\n", "import math  # edited\n"),
    ("theory/systems.py", "import functools\n", "import functools\nUNUSED = 1\n"),
    ("theory/validation.py", "import numbers\n", "import numbers\n\n"),
])
def test_a_changed_line_in_the_closure_changes_the_key(tmp_path, pristine, rel, old, new):
    edited = _copy_tree(tmp_path)
    _edit_line(edited / rel, old, new)
    assert source_digest(edited) != source_digest(pristine)
    assert _key(edited) != _key(pristine)


def test_a_new_module_imported_by_the_trainer_changes_the_key(tmp_path, pristine):
    """(Two copies: the digest is computed once per process and root.)"""
    unused = _copy_tree(tmp_path / "unused")
    (unused / "models/extra.py").write_text("Z = 0\n")
    assert _key(unused) == _key(pristine)  # not imported: outside the closure
    edited = _copy_tree(tmp_path / "imported")
    (edited / "models/extra.py").write_text("Z = 0\n")
    _edit_line(edited / "models/trainer.py", "import math\n", "import math\nfrom . import extra\n")
    assert "models/extra.py" in closure_files(edited)
    assert _key(edited) != _key(pristine)


@pytest.mark.parametrize("rel", ["claims/cli/main.py", "models/cache.py", "claims/_ar1.py", "theory/kappa.py"])
def test_an_edit_outside_the_closure_keeps_the_key(tmp_path, pristine, rel):
    edited = _copy_tree(tmp_path)
    _edit_line(edited / rel, "from __future__ import annotations", "from __future__ import annotations\nX = 1")
    assert source_digest(edited) == source_digest(pristine)
    assert _key(edited) == _key(pristine)


@pytest.mark.parametrize("field, value", [
    ("torch", "0.0.1"), ("torch", torch.__version__ + "+other"), ("device", "cuda"),
    ("numpy", "0.0.1"),
    ("dtype", "float64"), ("sources", "f" * 64), ("kernels", "AVX512/mkl:OFF"),
])
def test_torch_version_device_and_dtype_enter_the_key(field, value):
    cfg = TrainConfig(**TINY)
    base = Fingerprint(sources="0" * 64, torch=torch.__version__, device="cpu", dtype="float32",
                       numpy="2.0.0", kernels="AVX2/mkl:COMPATIBLE")
    other = base.replace(**{field: value})
    assert other.digest() != base.digest()
    assert cache_mod.cache_key(cfg, fingerprint=other) != cache_mod.cache_key(cfg, fingerprint=base)
    assert cache_mod.cache_key(cfg, fingerprint=base) == cache_mod.cache_key(cfg, fingerprint=base.replace())


def test_current_fingerprint_resolves_the_device_and_reads_this_torch():
    fp = current_fingerprint("auto", "float64")
    assert fp.device == ("cuda" if torch.cuda.is_available() else "cpu")
    assert fp.torch == torch.__version__ and fp.dtype == "float64" and fp.sources == source_digest()
    assert fp.kernels == ("cuda" if fp.device == "cuda" else cpu_kernels())
    assert Fingerprint.from_dict(fp.to_dict()) == fp
    cfg = TrainConfig(**TINY)
    assert cache_mod.cache_key(cfg, "cpu") == cache_mod.cache_key(cfg, fingerprint=current_fingerprint("cpu"))
    assert cache_mod.cache_key(cfg, "cpu") != cache_mod.cache_key(cfg.replace(seed=1), "cpu")
    assert cache_mod.cache_path(cfg, "/x", device="cpu").name == cache_mod.cache_key(cfg, "cpu") + ".json"


@pytest.mark.parametrize("kw, name", [
    (dict(device="tpu"), "device"), (dict(torch=""), "torch"), (dict(sources=1), "sources"),
    (dict(numpy=""), "numpy"), (dict(kernels=""), "kernels"), (dict(kernels=None), "kernels"),
])
def test_fingerprint_fields_are_checked(kw, name):
    base = dict(sources="0" * 64, torch="2.3.0", device="cpu", dtype="float32", numpy="2.0.0",
                kernels="AVX2/mkl:COMPATIBLE")
    with pytest.raises(ValueError, match=f"^{name}"):
        Fingerprint(**{**base, **kw})
    with pytest.raises(ValueError, match="^fingerprint"):
        Fingerprint.from_dict({**base, "extra": 1})


def test_a_fingerprint_that_is_not_one_is_refused_by_name():
    cfg = TrainConfig(**TINY)
    for call in (lambda: cache_mod.cache_key(cfg, fingerprint={"sources": "0" * 64}),
                 lambda: cache_mod.cache_path(cfg, "/x", fingerprint="abc")):
        with pytest.raises(ValueError, match=r"^fingerprint must be a Fingerprint, got (dict|str)$"):
            call()


def test_a_dtype_that_is_not_a_string_is_refused_by_name():
    with pytest.raises(ValueError, match=r"^dtype must be a string such as 'float32', got int$"):
        current_fingerprint("cpu", 32)
    with pytest.raises(ValueError, match=r"^dtype must be a string such as 'float32', got dtype$"):
        current_fingerprint("cpu", torch.float32)


# ----------------------------------------------------------------------------- train_cached
@pytest.fixture
def calls(monkeypatch):
    """Configurations actually trained by models.cache (not loaded)."""
    trained = []
    real = cache_mod.train
    monkeypatch.setattr(cache_mod, "train", lambda c, **kw: trained.append(c) or real(c, **kw))
    return trained


def _train(cfg, tmp_path, **kw):
    return cache_mod.train_cached(cfg, cache_dir=tmp_path, device="cpu", progress=False, **kw)


@pytest.mark.parametrize("progress", [True, False, None])
def test_the_progress_choice_reaches_the_training_it_asks_for(tmp_path, monkeypatch, progress):
    """``ldsicl train --no-progress`` and the claims' quiet runs silence the bar by passing
    ``progress`` through the cache to the trainer, whatever the cache does first."""
    seen = []
    real = cache_mod.train
    monkeypatch.setattr(cache_mod, "train", lambda c, **kw: seen.append(kw["progress"]) or real(c, **kw))
    cache_mod.train_cached(TrainConfig(**TINY), cache_dir=tmp_path, device="cpu", progress=progress)
    assert seen == [progress]


def test_entry_holds_config_fingerprint_and_created_time(tmp_path, calls):
    cfg = TrainConfig(seed=3, **TINY)
    before = time.time()
    _train(cfg, tmp_path)
    path = cache_mod.cache_path(cfg, tmp_path, device="cpu")
    entry = json.loads(path.read_text())
    assert entry["config"] == cfg.to_dict() and entry["key"] == cfg.key()
    assert entry["cache_key"] == path.stem and entry["cache_format"] == cache_mod.CACHE_FORMAT
    assert entry["fingerprint"] == current_fingerprint("cpu", cfg.dtype).to_dict()
    assert before <= entry["created"] <= time.time()
    assert [p.name for p in tmp_path.glob("*.json")] == [path.name]


def test_stale_before_retrains_older_entries_and_shares_newer_ones(tmp_path, calls):
    cfg = TrainConfig(seed=4, **TINY)
    session = time.time()
    first = _train(cfg, tmp_path, stale_before=session)
    again = _train(cfg, tmp_path, stale_before=session)  # same session: shared, not retrained
    assert len(calls) == 1 and np.array_equal(first.W_V, again.W_V)
    created = json.loads(cache_mod.cache_path(cfg, tmp_path, device="cpu").read_text())["created"]
    _train(cfg, tmp_path, stale_before=created + 1e-3)  # a later session: retrained
    assert len(calls) == 2
    assert cache_mod.load_cached(cfg, tmp_path, device="cpu", stale_before=created + 1e-3) is not None
    assert cache_mod.load_cached(cfg, tmp_path, device="cpu", stale_before=time.time() + 60) is None
    _train(cfg, tmp_path)  # no stale_before: any age is fine
    assert len(calls) == 2
    with pytest.raises(ValueError, match="^stale_before"):
        _train(cfg, tmp_path, stale_before=float("nan"))


def test_an_entry_of_other_code_is_not_served(tmp_path, calls, monkeypatch):
    """Training under an edited sampler: the checkout's entry is not found, a new one is made."""
    cfg = TrainConfig(seed=5, **TINY)
    _train(cfg, tmp_path)
    edited = _copy_tree(tmp_path / "edited")
    _edit_line(edited / "models/sampler.py", "from __future__ import annotations", "# edited\nfrom __future__ import annotations")
    real = cache_mod.current_fingerprint
    monkeypatch.setattr(cache_mod, "current_fingerprint", lambda d, t: real(d, t, root=edited))
    _train(cfg, tmp_path)
    assert len(calls) == 2 and len(list(tmp_path.glob("*.json"))) == 2


def test_code_edited_while_the_process_runs_is_not_stored(tmp_path, calls, caplog):
    """The files of the training closure changed on disk after this process pinned its
    fingerprint: the weights (of the code in memory) are returned but never stored under
    a key; control: without the edit the same call stores its entry."""
    cfg = TrainConfig(seed=9, **TINY)
    with pytest.MonkeyPatch.context() as mp, caplog.at_level(logging.WARNING, logger="models.cache"):
        mp.setattr(cache_mod, "fresh_source_digest", lambda: "0" * 64)
        _train(cfg, tmp_path)
    assert len(calls) == 1 and list(tmp_path.glob("*.json")) == []
    assert any("changed on disk" in r.getMessage() for r in caplog.records)
    _train(cfg, tmp_path)
    assert len(calls) == 2 and len(list(tmp_path.glob("*.json"))) == 1


@pytest.mark.parametrize("content, why", [
    (b"{ not json", "corrupt"),
    (b"\xff\xfe\x00binary", "corrupt"),
    (b"[1, 2]", "corrupt"),
    (b"{}", "corrupt"),
])
def test_corrupt_or_unreadable_entry_is_retrained_with_one_warning(tmp_path, calls, caplog, content, why):
    cfg = TrainConfig(seed=6, **TINY)
    path = cache_mod.cache_path(cfg, tmp_path, device="cpu")
    path.write_bytes(content)
    with caplog.at_level(logging.WARNING, logger="models.cache"):
        _train(cfg, tmp_path)
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(calls) == 1 and len(warnings) == 1 and why in warnings[0].getMessage()
    assert cache_mod.load_cached(cfg, tmp_path, device="cpu") is not None  # overwritten by a good entry


def test_entry_missing_created_or_with_foreign_fingerprint_is_distrusted(tmp_path, calls, caplog):
    cfg = TrainConfig(seed=7, **TINY)
    _train(cfg, tmp_path)
    path = cache_mod.cache_path(cfg, tmp_path, device="cpu")
    good = json.loads(path.read_text())
    for change, why in [({"fingerprint": {**good["fingerprint"], "torch": "0.0"}}, "different code fingerprint"),
                        ({"created": None}, "corrupt"), ({"fingerprint": None}, "corrupt")]:
        path.write_text(json.dumps({**good, **change}))
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="models.cache"):
            assert cache_mod.load_cached(cfg, tmp_path, device="cpu") is None
        assert why in caplog.text
    n = len(calls)
    _train(cfg, tmp_path)
    assert len(calls) == n + 1


def test_a_directory_in_place_of_the_entry_trains_without_caching(tmp_path, calls, caplog):
    """Unreadable and unwritable: warned, trained, returned; the cache is not required to work."""
    cfg = TrainConfig(seed=8, **TINY)
    cache_mod.cache_path(cfg, tmp_path, device="cpu").mkdir(parents=True)
    with caplog.at_level(logging.WARNING, logger="models.cache"):
        res = _train(cfg, tmp_path)
    assert len(calls) == 1 and res.config == cfg
    assert "cannot read" in caplog.text and "cannot store" in caplog.text


def test_an_unwritable_cache_directory_trains_without_storing(tmp_path, calls, caplog):
    """/proc refuses new folders even to root: one warning, the run is trained and returned."""
    cfg = TrainConfig(seed=10, **TINY)
    with caplog.at_level(logging.WARNING, logger="models.cache"):
        res = _train(cfg, Path("/proc/ldsicl-no-such-cache"))
    assert len(calls) == 1 and res.config == cfg
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "training without storing" in warnings[0].getMessage()


def test_waiting_for_another_process_is_said(tmp_path, calls, caplog, monkeypatch):
    """Another process holds the key's lock: the waiting run says so, then goes on once it
    is released (and loads what the other process stored, here: nothing, so it trains)."""
    import subprocess
    import sys
    cfg = TrainConfig(seed=11, **TINY)
    lock = cache_mod.cache_path(cfg, tmp_path, device="cpu").with_suffix(".lock")
    holder = subprocess.Popen([sys.executable, "-c",
                               "import sys, time; from filelock import FileLock; l = FileLock(sys.argv[1]); "
                               "l.acquire(); print('held', flush=True); time.sleep(1.5)", str(lock)],
                              stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        monkeypatch.setattr(cache_mod, "LOCK_NOTICE_SECONDS", 0.2)
        with caplog.at_level(logging.WARNING, logger="models.cache"):
            _train(cfg, tmp_path)
    finally:
        from _procs import _kill_group
        _kill_group(holder)                  # the holder and anything it started
        holder.wait(timeout=10)
        holder.stdout.close()
    assert "waiting for another process" in caplog.text and len(calls) == 1


def test_default_cache_dir_of_an_installed_package_is_the_user_cache(monkeypatch, tmp_path):
    monkeypatch.delenv(cache_mod.ENV_VAR, raising=False)
    assert cache_mod._in_checkout() and cache_mod.default_cache_dir() == REPO / ".cache" / "ldsicl"
    monkeypatch.setattr(cache_mod, "_in_checkout", lambda: False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_mod.default_cache_dir() == tmp_path / "xdg" / "ldsicl"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert cache_mod.default_cache_dir() == Path.home() / ".cache" / "ldsicl"
    monkeypatch.setenv(cache_mod.ENV_VAR, str(tmp_path / "env"))
    assert cache_mod.default_cache_dir() == tmp_path / "env"
