"""Fingerprint of the code that determines a training run's weights (part of the weight-cache key).

The weight cache (models/cache.py) must not serve weights trained by other code: the
key of an entry is the configuration (:meth:`TrainConfig.key`) *and* this fingerprint:

* ``sources``: sha256 over the source files of the *training closure*: every module of
  the project's packages (``theory``, ``models``) that the training entry point
  ``models.trainer`` imports, directly or through other project modules, found
  statically (``ast``: ``import`` and ``from ... import`` statements anywhere in a
  module, function-local ones included; relative imports resolved; imports of other
  packages ignored; importing ``a.b`` also runs ``a/__init__.py``, so package
  ``__init__`` files belong to the closure).  Each file enters the hash as its path
  relative to the root (POSIX form) and its bytes, in sorted path order, so a changed
  line, a renamed or an added module in the closure changes the key, while an edit to
  a module outside it (the CLI, the cache itself, the claims) does not.
* ``torch``: ``torch.__version__`` (kernels, random streams and fused AdamW change
  between versions);
* ``numpy``: ``numpy.__version__`` (the noise factors come from numpy's Cholesky,
  theory.systems.psd_factor, which a numpy or LAPACK upgrade may change);
* ``device``: the device *type* the run trains on, ``"cpu"`` or ``"cuda"`` (``"auto"``
  is resolved first; CUDA runs use other random streams than CPU runs);
* ``dtype``: the training dtype (``TrainConfig.dtype``);
* ``kernels``: for a CPU run the kernels this process trains with, torch's CPU
  capability and MKL's code branch (models/kernels.py: ``"AVX2/mkl:COMPATIBLE"`` when
  pinned), so that weights trained under other kernels are never served for pinned
  ones; ``"cuda"`` for a CUDA run.

Not seen (documented limits): imports made dynamically (``importlib``), data files
read at run time (training reads none), and third-party code beyond the torch and numpy
version strings (e.g. the BLAS numpy links, when it changes without numpy's version).

The source hash is computed once per process and root (``functools.lru_cache``), pinned
when models/cache.py is imported (right after it imports the trainer), and compared with
a fresh read of the files before an entry is stored; the rest is cheap.  Residual limit:
a process that imports the training code, then has the files edited, and only later
imports the cache, keys its runs by the edited files (the store-time check cannot see
what was imported before).

Imports: the closure and its digest need only the standard library and theory.validation;
torch, numpy and the kernels are imported inside :func:`current_fingerprint`.  So ``ldsicl
--version`` loads this file by its path, without running models/__init__.py (which imports
torch), and prints :func:`source_digest` from this one implementation
(claims/cli/sources.py; tests/test_cli_version.py keeps the top of this file torch-free).

>>> fp = Fingerprint(sources="0" * 64, torch="2.3.0", device="cpu", dtype="float32", numpy="2.0.0",
...                  kernels="AVX2/mkl:COMPATIBLE")
>>> len(fp.digest()), fp.digest() == fp.replace(torch="2.4.0").digest()
(64, False)
>>> fp.digest() == fp.replace(kernels="AVX512/mkl:OFF").digest()
False
"""
from __future__ import annotations

import ast
import dataclasses
import functools
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from theory.validation import check_choice, check_type

__all__ = ["Fingerprint", "PACKAGES", "ENTRY_POINT", "REPO_ROOT", "module_closure",
           "closure_files", "source_digest", "fresh_source_digest", "current_fingerprint"]

#: The project's packages; imports of anything else are not followed.
PACKAGES = ("theory", "models")
#: The module whose ``train`` produces the weights.
ENTRY_POINT = "models.trainer"
#: The directory that holds the ``theory`` and ``models`` packages of this checkout.
REPO_ROOT = Path(__file__).resolve().parents[1]
_DEVICE_TYPES = ("cpu", "cuda")


# ----------------------------------------------------------------------------- closure
def _root(root) -> Path:
    if root is None:
        return REPO_ROOT
    if not isinstance(root, (str, os.PathLike)) or str(root) == "":
        raise ValueError(f"root must be a directory path, got {root!r}")
    path = Path(root).expanduser().resolve()
    if not path.is_dir():
        raise ValueError(f"root must be a directory, got {str(root)!r}")
    return path


def _module_file(root: Path, module: str) -> Path | None:
    """``a.b`` -> ``root/a/b.py`` or ``root/a/b/__init__.py`` (None when neither exists)."""
    base = root.joinpath(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _in_project(module: str) -> bool:
    return module.split(".", 1)[0] in PACKAGES


def _imported_modules(path: Path, module: str) -> set[str]:
    """Dotted names a module's import statements may load (project or not)."""
    tree = ast.parse(path.read_bytes(), filename=str(path))
    is_package = path.name == "__init__.py"
    package = module if is_package else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".") if package else []
                if node.level > len(parts):
                    raise ValueError(f"{path}: relative import beyond the top-level package")
                parts = parts[:len(parts) - (node.level - 1)]
                base = ".".join(parts + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            if base:
                found.add(base)
            # ``from pkg import name``: name may be a submodule
            found.update(f"{base}.{alias.name}" if base else alias.name
                         for alias in node.names if alias.name != "*")
    return found


@functools.lru_cache(maxsize=None)
def _closure(root: Path, entry: str) -> tuple[str, ...]:
    if _module_file(root, entry) is None:
        raise ValueError(f"entry module {entry!r} not found under {root}")
    seen: set[str] = set()
    todo = [entry]
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        path = _module_file(root, module)
        if path is None:  # e.g. ``from models.config import TrainConfig``'s "models.config.TrainConfig"
            continue
        seen.add(module)
        parts = module.split(".")
        todo.extend(".".join(parts[:i]) for i in range(1, len(parts)))  # parent packages run first
        todo.extend(m for m in _imported_modules(path, module) if _in_project(m))
    return tuple(sorted(seen))


def module_closure(root=None, entry: str = ENTRY_POINT) -> tuple[str, ...]:
    """Dotted names of the project modules ``entry`` imports, transitively (itself included), sorted."""
    check_type("entry", entry, str, "a dotted module name")
    if not _in_project(entry):
        raise ValueError(f"entry must be a module of {PACKAGES}, got {entry!r}")
    return _closure(_root(root), entry)


def closure_files(root=None, entry: str = ENTRY_POINT) -> tuple[str, ...]:
    """The closure's files, relative to ``root`` in POSIX form (``models/trainer.py``), sorted."""
    r = _root(root)
    return tuple(sorted(_module_file(r, m).relative_to(r).as_posix() for m in module_closure(r, entry)))


@functools.lru_cache(maxsize=None)
def _digest(root: Path, entry: str) -> str:
    h = hashlib.sha256()
    for rel in closure_files(root, entry):
        data = (root / rel).read_bytes()
        h.update(f"{rel}\0{len(data)}\0".encode("utf-8"))
        h.update(data)
    return h.hexdigest()


def source_digest(root=None, entry: str = ENTRY_POINT) -> str:
    """sha256 (hex) over path and bytes of every file of the closure; once per process and root.

    The result is cached for the life of the process: an edit made while a process runs
    is seen by the next process (every pytest run is one).
    """
    module_closure(root, entry)  # validates
    return _digest(_root(root), entry)


def fresh_source_digest(root=None, entry: str = ENTRY_POINT) -> str:
    """:func:`source_digest` read from disk now, bypassing the per-process cache: the
    weight cache compares the two before storing, so weights trained by code that
    changed on disk meanwhile are never stored under the new code's key."""
    module_closure(root, entry)  # validates
    return _digest.__wrapped__(_root(root), entry)


# ----------------------------------------------------------------------------- fingerprint
@dataclass(frozen=True)
class Fingerprint:
    """What, besides the configuration, determines trained weights (module docstring)."""

    sources: str
    torch: str
    device: str
    dtype: str
    numpy: str
    kernels: str

    def __post_init__(self):
        for name in ("sources", "torch", "dtype", "numpy", "kernels"):
            value = check_type(name, getattr(self, name), str, "a string")
            if not value:
                raise ValueError(f"{name} must be a non-empty string")
        check_choice("device", self.device, _DEVICE_TYPES)

    def digest(self) -> str:
        """sha256 (hex) of the six fields."""
        blob = json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data) -> "Fingerprint":
        check_type("fingerprint", data, dict, "a dict")
        names = {f.name for f in dataclasses.fields(cls)}
        if set(data) != names:
            raise ValueError(f"fingerprint must have the fields {sorted(names)}, got {sorted(data)}")
        return cls(**data)

    def replace(self, **changes) -> "Fingerprint":
        return dataclasses.replace(self, **changes)


def current_fingerprint(device="auto", dtype: str = "float32", *, root=None) -> Fingerprint:
    """The fingerprint of this checkout (or of ``root``), this torch, ``device`` resolved,
    ``dtype``, and the CPU kernels of this process (``"cuda"`` on CUDA); torch, numpy and the
    kernels are imported here, not at the top (module doc)."""
    import numpy as np
    import torch

    from models.kernels import cpu_kernels
    from models.runtime import resolve_device

    check_type("dtype", dtype, str, "a string such as 'float32'")
    dev = resolve_device(device).type
    return Fingerprint(sources=source_digest(root), torch=str(torch.__version__),
                       numpy=str(np.__version__), device=dev, dtype=dtype,
                       kernels=cpu_kernels() if dev == "cpu" else "cuda")
