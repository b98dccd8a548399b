"""On-disk cache of trained weights, keyed by :meth:`TrainConfig.key`.

Layout: ``<cache_dir>/<key>.json`` holds ``TrainResult.to_dict()`` (weights as JSON
lists of floats, which round-trip exactly, the full configuration and the run's
metadata); ``<cache_dir>/<key>.lock`` is the per-key lock file.

``cache_dir`` defaults to the environment variable ``LDSICL_CACHE_DIR`` when set, else
``<repository root>/.cache/ldsicl`` (``.cache/`` is git-ignored).

Concurrency: :func:`train_cached` takes a ``filelock.FileLock`` per key around
"load, else train and store", so concurrent pytest-xdist workers (or any processes)
asking for the same configuration train it exactly once: the others wait on the lock
and then load.  Writes are atomic (temporary file in the same directory, fsync, then
``os.replace``), so a reader never sees half a file.

A record that cannot be read, is malformed, or holds a different configuration than
the one requested (a key collision or a hand-edited file) is not trusted: it is
logged (logger ``models.cache``, level WARNING; not a Python warning, because the
test suite turns warnings into errors) and the configuration is trained again, which
overwrites it.
"""
from __future__ import annotations

import json
import logging
import os
from pathlib import Path

from filelock import FileLock

from theory.validation import check_type

from .files import atomic_write_text
from .trainer import TrainConfig, TrainResult, train

__all__ = ["default_cache_dir", "cache_path", "load_cached", "store", "train_cached", "ENV_VAR"]

ENV_VAR = "LDSICL_CACHE_DIR"
_log = logging.getLogger("models.cache")
_REPO_ROOT = Path(__file__).resolve().parents[1]


def default_cache_dir() -> Path:
    """``$LDSICL_CACHE_DIR`` if set (and non-empty), else ``<repo root>/.cache/ldsicl``."""
    env = os.environ.get(ENV_VAR, "").strip()
    if env:
        return Path(env).expanduser()
    return _REPO_ROOT / ".cache" / "ldsicl"


def _dir(cache_dir) -> Path:
    if cache_dir is None:
        return default_cache_dir()
    if not isinstance(cache_dir, (str, os.PathLike)) or str(cache_dir) == "":
        raise ValueError(f"cache_dir must be a path, got {cache_dir!r}")
    return Path(cache_dir).expanduser()


def _check_config(config):
    return check_type("config", config, TrainConfig, "a TrainConfig")


def cache_path(config: TrainConfig, cache_dir=None) -> Path:
    """Where the result of ``config`` is (or would be) stored."""
    return _dir(cache_dir) / f"{_check_config(config).key()}.json"


def load_cached(config: TrainConfig, cache_dir=None) -> TrainResult | None:
    """The stored result for ``config``, or None if absent or not trustworthy (logged)."""
    path = cache_path(config, cache_dir)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        _log.warning("cannot read cached weights %s (%s); will retrain", path, exc)
        return None
    try:
        data = json.loads(text)
        result = TrainResult.from_dict(data)
    except (ValueError, TypeError) as exc:  # json.JSONDecodeError is a ValueError
        _log.warning("corrupt cached weights %s (%s); will retrain", path, exc)
        return None
    if result.config != config or data.get("key") != config.key():
        _log.warning("cached weights %s hold a different configuration; will retrain", path)
        return None
    return result


def store(result: TrainResult, cache_dir=None) -> Path:
    """Write ``result`` under its configuration's key (atomically); returns the path."""
    check_type("result", result, TrainResult, "a TrainResult")
    path = cache_path(result.config, cache_dir)
    atomic_write_text(path, json.dumps(result.to_dict(), allow_nan=True) + "\n")
    return path


def train_cached(config: TrainConfig, *, cache_dir=None, device="auto", progress=None) -> TrainResult:
    """``train(config)``, computed at most once per configuration and cache directory.

    Loads ``<cache_dir>/<key>.json`` when present and valid; otherwise takes the per-key
    file lock, checks again (another process may have just finished), trains, stores
    atomically and releases the lock.  ``device`` and ``progress`` only matter when it
    trains (the device is not part of the key; the stored record says where it ran).
    """
    _check_config(config)
    path = cache_path(config, cache_dir)
    hit = load_cached(config, cache_dir)
    if hit is not None:
        return hit
    path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(path.with_suffix(".lock"))):
        hit = load_cached(config, cache_dir)
        if hit is not None:
            return hit
        _log.info("training %s (key %s) into %s", config, config.key()[:12], path)
        result = train(config, device=device, progress=progress)
        store(result, cache_dir)
    return result
