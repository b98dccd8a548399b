"""On-disk cache of trained weights, keyed by the configuration *and* the code that trains it.

Key: :func:`cache_key` = sha256 of ``CACHE_FORMAT``, :meth:`TrainConfig.key` (the
configuration) and :meth:`Fingerprint.digest` (models/fingerprint.py: the source of
every project module the trainer imports, torch's version, the device type and the
dtype).  Change a line of the sampler, the trainer or ``theory/systems.py`` and the
key changes, so the next run trains again; edit the CLI or a claim and it does not.

Layout: ``<cache_dir>/<key>.json`` is an *entry*: ``TrainResult.to_dict()`` (weights
as JSON lists of floats, which round-trip exactly, the full configuration and the
run's metadata) plus ``cache_format``, ``cache_key``, ``fingerprint`` (its four fields)
and ``created`` (epoch seconds when it was stored); ``<cache_dir>/<key>.lock`` is the
per-key lock file.  Entries of older code stay on disk until removed
(``ldsicl cache list`` shows them as stale, ``ldsicl cache clear --stale-only`` removes them).

``cache_dir`` defaults to the environment variable ``LDSICL_CACHE_DIR`` when set, else
``<repository root>/.cache/ldsicl`` in a checkout (``.cache/`` is git-ignored), else the
user cache directory ``$XDG_CACHE_HOME/ldsicl`` (``~/.cache/ldsicl``) for an installed
package.  A directory that cannot be written (read-only, say) does not stop a run: it
trains without storing, with one warning.  A process that waits for another one's lock
on the same key says so after :data:`LOCK_NOTICE_SECONDS`.

Concurrency: :func:`train_cached` takes a ``filelock.FileLock`` per key around
"load, else train and store", so concurrent pytest-xdist workers (or any processes)
asking for the same configuration train it exactly once: the others wait on the lock
and then load.  Writes are atomic (temporary file in the same directory, fsync, then
``os.replace``), so a reader never sees half a file.  Weights trained elsewhere (a
cluster's workers, claims/cluster/training.py) are stored by :func:`store_result` under
the same lock, after the caller has checked that they carry this code's fingerprint.

Distrust: an entry that cannot be read, is malformed, or holds a different
configuration or fingerprint than the one requested (a key collision or a
hand-edited file) is treated as absent: it is logged once (logger ``models.cache``,
level WARNING; not a Python warning, because the test suite turns warnings into
errors) and the configuration is trained again, which overwrites it.  An entry
created before ``stale_before`` (epoch seconds) is also treated as absent, silently:
that is how ``pytest claims --retrain`` ignores what earlier sessions stored while the
workers of one session still share what they train.
"""
from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import re
import time
from pathlib import Path

import numpy as np
import torch
from filelock import FileLock, Timeout

from theory.jsonvalues import dumps
from theory.validation import check_real, check_type

from .config import TrainConfig
from .files import atomic_write_text
from .fingerprint import Fingerprint, current_fingerprint, fresh_source_digest, source_digest
from .result import TrainResult
from .trainer import train

# Pin the fingerprint of the training code to what this process has just imported (through
# .trainer above): source_digest() is computed once per process, so every key this process
# computes describes the code it runs, even if the files change on disk later.
source_digest()

__all__ = ["default_cache_dir", "resolve_cache_dir", "cache_key", "cache_path", "load_cached", "store", "train_cached",
           "store_result", "list_entries", "clear",
           "ENV_VAR", "CACHE_FORMAT"]

ENV_VAR = "LDSICL_CACHE_DIR"
#: seconds to wait for another process's lock on a key before saying so.
LOCK_NOTICE_SECONDS = 2.0
#: Version of the entry layout and of :func:`cache_key`; bump when either changes.
CACHE_FORMAT = "ldsicl-cache-2"
_log = logging.getLogger("models.cache")
_REPO_ROOT = Path(__file__).resolve().parents[1]


def _in_checkout() -> bool:
    """Whether this module runs from a checkout of the project (an editable install or the
    source tree), not from site-packages: the checkout's pyproject.toml names the project."""
    try:
        return 'name = "ldsicl"' in (_REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False


def default_cache_dir() -> Path:
    """``$LDSICL_CACHE_DIR`` if set (and non-empty); else ``<repo root>/.cache/ldsicl`` in a
    checkout (editable install); else, for an installed package, the user cache directory
    ``$XDG_CACHE_HOME/ldsicl`` (``~/.cache/ldsicl``) -- never inside site-packages."""
    env = os.environ.get(ENV_VAR, "").strip()
    if env:
        return Path(env).expanduser()
    if _in_checkout():
        return _REPO_ROOT / ".cache" / "ldsicl"
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "ldsicl"


def resolve_cache_dir(cache_dir=None) -> Path:
    """``cache_dir`` as a Path, or :func:`default_cache_dir` when None; ValueError naming ``cache_dir``."""
    if cache_dir is None:
        return default_cache_dir()
    if not isinstance(cache_dir, (str, os.PathLike)) or str(cache_dir) == "":
        raise ValueError(f"cache_dir must be a path, got {cache_dir!r}")
    return Path(cache_dir).expanduser()


def _check_config(config):
    return check_type("config", config, TrainConfig, "a TrainConfig")


def _fingerprint(config: TrainConfig, device, fingerprint) -> Fingerprint:
    if fingerprint is None:
        return current_fingerprint(device, config.dtype)
    return check_type("fingerprint", fingerprint, Fingerprint, "a Fingerprint")


def _stale_before(value):
    if value is None:
        return None
    return check_real("stale_before", value)


def cache_key(config: TrainConfig, device="auto", *, fingerprint: Fingerprint | None = None) -> str:
    """sha256 (hex) of the configuration's key and the code fingerprint.

    ``fingerprint`` defaults to :func:`current_fingerprint` for ``device`` and
    ``config.dtype`` (this checkout's training closure, this torch).
    """
    _check_config(config)
    fp = _fingerprint(config, device, fingerprint)
    blob = json.dumps({"format": CACHE_FORMAT, "config": config.key(), "fingerprint": fp.digest()},
                      sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def cache_path(config: TrainConfig, cache_dir=None, *, device="auto",
               fingerprint: Fingerprint | None = None) -> Path:
    """Where the result of ``config`` trained by this code on ``device`` is (or would be) stored."""
    return resolve_cache_dir(cache_dir) / f"{cache_key(config, device, fingerprint=fingerprint)}.json"


def _read(path: Path, config: TrainConfig, fp: Fingerprint, stale_before, warn: bool):
    """(result or None, why not or None).  ``why`` is None for a plain miss or a stale entry."""
    def distrust(why):
        if warn:
            _log.warning("%s %s; will retrain", why, path)
        return None, why

    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        return distrust(f"cannot read cached weights ({exc})")
    try:
        data = json.loads(raw.decode("utf-8"))
        result = TrainResult.from_dict(data)
        created = float(data["created"])
        stored_fp = Fingerprint.from_dict(data["fingerprint"])
        if not math.isfinite(created):
            raise ValueError(f"created must be finite, got {created!r}")
    except (ValueError, TypeError, KeyError, AttributeError, RecursionError) as exc:
        return distrust(f"corrupt cached weights ({type(exc).__name__}: {exc})")
    if result.config != config or data.get("key") != config.key():
        return distrust("cached weights hold a different configuration:")
    if stored_fp != fp or data.get("cache_key") != path.stem:
        return distrust("cached weights hold a different code fingerprint:")
    if stale_before is not None and created < stale_before:
        _log.info("cached weights %s were created before %s; will retrain", path, stale_before)
        return None, None
    return result, None


def load_cached(config: TrainConfig, cache_dir=None, *, device="auto",
                stale_before: float | None = None) -> TrainResult | None:
    """The stored result for ``config`` under this code, or None if absent, stale or not trustworthy (logged)."""
    fp = _fingerprint(_check_config(config), device, None)
    path = cache_path(config, cache_dir, fingerprint=fp)
    return _read(path, config, fp, _stale_before(stale_before), warn=True)[0]


def store(result: TrainResult, cache_dir=None, *, device=None,
          fingerprint: Fingerprint | None = None) -> Path:
    """Write ``result`` as an entry (atomically) under its key; returns the path.

    The fingerprint defaults to this code's, for the device type the result records
    (``result.device``) unless ``device`` is given.
    """
    check_type("result", result, TrainResult, "a TrainResult")
    fp = _fingerprint(result.config, result.device if device is None else device, fingerprint)
    path = cache_path(result.config, cache_dir, fingerprint=fp)
    entry = result.to_dict()
    entry.update({"cache_format": CACHE_FORMAT, "cache_key": path.stem,
                  "fingerprint": fp.to_dict(), "created": time.time()})
    atomic_write_text(path, dumps(entry) + "\n")
    return path


def train_cached(config: TrainConfig, *, cache_dir=None, device="auto", progress=None,
                 stale_before: float | None = None, max_memory: float | None = None) -> TrainResult:
    """``train(config)``, computed at most once per configuration, code fingerprint and cache directory.

    Loads ``<cache_dir>/<key>.json`` when present, valid and created at or after
    ``stale_before`` (epoch seconds; None = any time); otherwise takes the per-key file
    lock, checks again (another process may have just finished), trains, stores
    atomically and releases the lock.  ``device`` ("auto" resolved first) enters the
    key through its type (cpu/cuda); ``progress`` and ``max_memory`` (bytes, see
    models.trainer.check_resources) only matter when it trains.
    """
    _check_config(config)
    stale_before = _stale_before(stale_before)
    fp = _fingerprint(config, device, None)
    path = cache_path(config, cache_dir, fingerprint=fp)
    hit, why = _read(path, config, fp, stale_before, warn=True)
    if hit is not None:
        return hit
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        lock = FileLock(str(path.with_suffix(".lock")))
        try:
            lock.acquire(timeout=LOCK_NOTICE_SECONDS)
        except Timeout:
            _log.warning("waiting for another process that is training %s (lock %s)",
                         config, path.with_suffix(".lock"))
            lock.acquire()
    except OSError as exc:                          # a read-only or foreign cache directory
        _log.warning("cannot use the weight cache at %s (%s); training without storing",
                     path.parent, exc)
        return train(config, device=device, progress=progress, max_memory=max_memory)
    try:
        # warned once already if the entry was distrusted; a fresh entry from another process is fine
        hit, _ = _read(path, config, fp, stale_before, warn=why is None)
        if hit is not None:
            return hit
        _log.info("training %s (key %s) into %s", config, path.stem[:12], path)
        result = train(config, device=device, progress=progress, max_memory=max_memory)
        if fresh_source_digest() != source_digest():
            _log.warning("the training code changed on disk while this process ran; the "
                         "weights of %s are returned but not stored under the new code's key",
                         config)
            return result
        try:
            store(result, cache_dir, fingerprint=fp)
        except OSError as exc:  # e.g. a directory in the entry's place, a read-only folder
            _log.warning("cannot store trained weights at %s (%s); returning them uncached", path, exc)
    finally:
        lock.release()
    return result


def store_result(result: TrainResult, fingerprint: Fingerprint, cache_dir=None) -> Path | None:
    """Store weights trained elsewhere (a cluster's worker, claims/cluster/training.py) under
    ``fingerprint``, which the caller has checked is this code's: under the per-key lock, an
    entry already there and valid is kept (another process stored the same run), else the
    entry is written atomically.  Returns its path, or None when this process's training code
    changed on disk since it was imported (nothing is stored under a key it no longer
    describes).  OSError when the directory cannot be written."""
    check_type("result", result, TrainResult, "a TrainResult")
    fp = check_type("fingerprint", fingerprint, Fingerprint, "a Fingerprint")
    path = cache_path(result.config, cache_dir, fingerprint=fp)
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(path.with_suffix(".lock")))
    try:
        lock.acquire(timeout=LOCK_NOTICE_SECONDS)
    except Timeout:
        _log.warning("waiting for another process that is storing %s (lock %s)", result.config,
                     path.with_suffix(".lock"))
        lock.acquire()
    try:
        if _read(path, result.config, fp, None, warn=False)[0] is not None:
            return path
        if fp.sources == source_digest() and fresh_source_digest() != source_digest():
            _log.warning("the training code changed on disk while this process ran; the weights of %s "
                         "are not stored", result.config)
            return None
        return store(result, cache_dir, fingerprint=fp)
    finally:
        lock.release()


# ----------------------------------------------------------------------------- list / clear
_ENTRY_NAME = re.compile(r"^[0-9a-f]{64}\.json$")


def _entry_files(cache_dir) -> list[Path]:
    """The entries in ``cache_dir`` (files named ``<64 hex digits>.json``), sorted by name.

    Anything else in the folder (lock files, temporary files, foreign files) is not an entry.
    """
    d = resolve_cache_dir(cache_dir)
    if d.exists() and not d.is_dir():
        raise ValueError(f"cache_dir must be a directory, got the file {str(d)!r}")
    if not d.is_dir():
        return []
    return sorted(p for p in d.iterdir() if _ENTRY_NAME.match(p.name) and p.is_file())


def _describe(path: Path, sources: str, torch_version: str, numpy_version: str) -> dict:
    """One entry as plain JSON types; ``status`` "current", "stale" or "corrupt"."""
    info = {"key": path.stem, "path": str(path), "size": path.stat().st_size, "setting": None,
            "s": None, "steps": None, "batch": None, "seed": None, "dtype": None, "device": None,
            "created": None, "status": "corrupt"}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        config = TrainResult.from_dict(data).config
    except (OSError, ValueError, TypeError, KeyError, AttributeError, RecursionError):
        return info
    info.update({name: getattr(config, name) for name in ("setting", "s", "steps", "batch", "seed", "dtype")})
    info["device"] = data.get("device")
    created = data.get("created")
    if isinstance(created, (int, float)) and not isinstance(created, bool) and math.isfinite(created):
        info["created"] = float(created)
    try:
        fp = Fingerprint.from_dict(data.get("fingerprint"))
    except (ValueError, TypeError):
        fp = None  # an entry of the configuration-only layout (before CACHE_FORMAT 2)
    current = (fp is not None and data.get("cache_format") == CACHE_FORMAT and fp.sources == sources
               and fp.torch == torch_version and fp.numpy == numpy_version
               and data.get("cache_key") == path.stem)
    info["status"] = "current" if current else "stale"
    return info


def list_entries(cache_dir=None) -> list[dict]:
    """Every entry in ``cache_dir``, described (:func:`_describe`), sorted by file name.

    "current": stored by this checkout's training closure, this torch and this numpy (any
    device type); "stale": other code, another torch or numpy, or an older entry layout; "corrupt":
    unreadable.
    """
    sources, version, np_version = source_digest(), str(torch.__version__), str(np.__version__)
    out = []
    for path in _entry_files(cache_dir):
        try:
            out.append(_describe(path, sources, version, np_version))
        except FileNotFoundError:  # removed meanwhile
            continue
    return out


def clear(cache_dir=None, *, stale_only: bool = False) -> int:
    """Remove entries (all, or only those not "current"); returns how many were removed.

    Only entries are removed; lock files and other files in the folder are left alone
    (removing a lock file that a waiting process has open would let a newcomer take a
    second lock on the same key).
    """
    check_type("stale_only", stale_only, bool, "True or False")
    removed = 0
    for info in list_entries(cache_dir):
        if stale_only and info["status"] == "current":
            continue
        path = Path(info["path"])
        try:
            path.unlink()
        except FileNotFoundError:
            continue
        removed += 1
    return removed
