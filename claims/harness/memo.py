"""Results of deterministic computations shared on disk between processes (xdist workers and
later runs): the AR(s) population optima, setting d's Monte Carlo moments, the noise-free
twins of a cell.

Each of these is a pure function of its inputs and of the code that computes it, and each
is needed by several claims, which pytest-xdist spreads over workers that would otherwise
each compute it again (about a minute per worker in the quick profile).  :func:`memoized`
stores the value under a key that is a sha256 of

- the result's name and its inputs (arrays by their bytes, shape and dtype; scalars by repr),
- the source digest of the code that computes it (``models.fingerprint.source_digest`` of
  the entry modules: every project module they import, directly or not),
- the numpy, scipy and torch versions,

so a change to that code, or to an input, is never served an old value.  A process that
finds another one computing the same key waits for it (``filelock``); a file that cannot
be read is computed again; a cache directory that cannot be written computes without
storing.  Files live in ``<cache dir>/memo/`` (the weight cache's directory,
models/cache.py); deleting them is always safe.

>>> import numpy as np
>>> key_of("x", [np.arange(3.0), 2, "a"], ()) == key_of("x", [np.arange(3.0), 2, "a"], ())
True
>>> key_of("x", [np.arange(3.0)], ()) == key_of("x", [np.arange(3.0) + [0, 0, 1e-12]], ())
False
"""
from __future__ import annotations

import hashlib
import logging
import os
import pickle
import tempfile
from pathlib import Path
from typing import Callable, Iterable

import numpy as np
import scipy
import torch
from filelock import FileLock

from models.cache import default_cache_dir
from models.fingerprint import source_digest

__all__ = ["key_of", "memoized", "memo_dir"]

_log = logging.getLogger(__name__)


def _feed(h, x) -> None:
    if isinstance(x, np.ndarray):
        a = np.ascontiguousarray(x)
        h.update(f"nd{a.dtype.str}{a.shape}\0".encode())
        h.update(a.tobytes())
    elif isinstance(x, (list, tuple)):
        h.update(f"seq{len(x)}\0".encode())
        for y in x:
            _feed(h, y)
    elif isinstance(x, dict):
        h.update(f"map{len(x)}\0".encode())
        for k in sorted(x):
            _feed(h, k)
            _feed(h, x[k])
    elif x is None or isinstance(x, (bool, int, float, str)):
        h.update(f"{type(x).__name__}:{x!r}\0".encode())
    else:
        raise TypeError(f"memo inputs must be arrays, numbers, strings or containers of them, got {type(x).__name__}")


def key_of(name: str, inputs, code_entries: Iterable[str]) -> str:
    """sha256 (hex) of ``name``, ``inputs``, the source digest of each of ``code_entries``
    (module names) and the numeric packages' versions."""
    h = hashlib.sha256()
    _feed(h, [name, inputs, [(e, source_digest(entry=e)) for e in code_entries],
              [np.__version__, scipy.__version__, torch.__version__]])
    return h.hexdigest()


def memo_dir() -> Path:
    return default_cache_dir() / "memo"


def memoized(name: str, inputs, code_entries: Iterable[str], compute: Callable[[], object]):
    """``compute()``, or the value a process computed before for the same key (module doc)."""
    key = key_of(name, inputs, tuple(code_entries))
    folder = memo_dir()
    path = folder / f"{name}-{key[:32]}.pkl"

    def read():
        try:
            with open(path, "rb") as f:
                stored_key, value = pickle.load(f)
        except FileNotFoundError:
            return None
        except Exception as exc:                        # corrupt or foreign: computed again
            _log.warning("memo %s unreadable (%s): computing it again", path, exc)
            return None
        return (value,) if stored_key == key else None

    hit = read()
    if hit is not None:
        return hit[0]
    try:
        folder.mkdir(parents=True, exist_ok=True)
        lock = FileLock(str(path.with_suffix(".lock")))
        lock.acquire()
    except OSError as exc:
        _log.warning("memo folder %s not writable (%s): computing %s without storing", folder, exc, name)
        return compute()
    try:
        hit = read()                                    # another process may have just finished
        if hit is not None:
            return hit[0]
        value = compute()
        try:
            fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{name}-", suffix=".tmp")
            with os.fdopen(fd, "wb") as f:
                pickle.dump((key, value), f, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, path)
        except OSError as exc:
            _log.warning("memo %s not stored (%s)", path, exc)
        return value
    finally:
        lock.release()
