"""What ``ldsicl --version`` prints: the installed version, the git commit of the checkout, and
the training code's source digest -- all without importing torch.

* the version: the installed distribution's (``importlib.metadata``), or ``unknown (not
  installed)``;
* the commit: ``git rev-parse --short HEAD`` in the checkout, ``+ " (dirty)"`` when tracked
  files differ from it (``git status --porcelain --untracked-files=no``, with optional locks
  off: it writes nothing), each call bounded
  by :data:`GIT_TIMEOUT` seconds; ``unknown`` when git is missing, slow, or the package is
  not a git checkout.  It never fails;
* the digest: models/fingerprint.py's :func:`source_digest` -- the sha256 over the training
  closure that keys the weight cache -- from that one implementation.  Importing anything
  under ``models`` runs models/__init__.py, which imports torch, so the file is loaded by its
  path under a private name (:func:`fingerprint_module`): its top imports only the standard
  library and theory.validation (models/fingerprint.py module doc; tests/test_cli_version.py
  checks it).  A failure to load it prints ``unknown (<why>)``, never a traceback.

>>> lines = version_text().splitlines()
>>> lines[0].startswith("ldsicl "), lines[1].startswith("commit "), len(lines[2].split()[-1])
(True, True, 64)
"""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

__all__ = ["version_text", "package_version", "git_commit", "training_digest", "fingerprint_module",
           "GIT_TIMEOUT"]

#: seconds one git call may take before the commit is reported as unknown
GIT_TIMEOUT = 5.0
#: the private name models/fingerprint.py is loaded under (not ``models.fingerprint``: that
#: name is the real module's, imported with its package)
_PRIVATE = "_ldsicl_version_fingerprint"


def package_version() -> str:
    try:
        return metadata.version("ldsicl")
    except metadata.PackageNotFoundError:          # a checkout that was not pip-installed
        return "unknown (not installed)"


def _git(root: Path, *args: str) -> str | None:
    try:
        proc = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True,
                              timeout=GIT_TIMEOUT, stdin=subprocess.DEVNULL,
                              env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"})   # status writes nothing
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    return proc.stdout.strip() if proc.returncode == 0 else None


def git_commit(root: Path) -> str:
    """``<short hash>``, ``<short hash> (dirty)`` or ``unknown`` for the checkout at ``root``
    (``unknown`` too where ``root`` is not the top of a work tree: an installed copy inside
    some other repository)."""
    top = _git(root, "rev-parse", "--show-toplevel")
    if not top or Path(top).resolve() != Path(root).resolve():
        return "unknown"
    head = _git(root, "rev-parse", "--short", "HEAD")
    if not head:
        return "unknown"
    status = _git(root, "status", "--porcelain", "--untracked-files=no")
    if status is None:
        return f"{head} (dirty state unknown)"
    return f"{head} (dirty)" if status else head


def _models_folder() -> Path | None:
    """The folder of this project's ``models`` package, beside ``claims/`` (never another
    installed package that happens to be called ``models``), found without importing it."""
    folder = Path(__file__).resolve().parents[2] / "models"
    return folder if (folder / "fingerprint.py").is_file() else None


def fingerprint_module(path: Path | None = None):
    """models/fingerprint.py (or ``path``) executed as a private module, without its package's
    ``__init__``; ImportError (or what the file raises) when it cannot be loaded."""
    if path is None:
        folder = _models_folder()
        if folder is None:
            raise ImportError("the models package is not installed")
        path = folder / "fingerprint.py"
    spec = importlib.util.spec_from_file_location(_PRIVATE, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[_PRIVATE] = module                 # dataclasses look their module up by name
    try:
        spec.loader.exec_module(module)
    finally:
        sys.modules.pop(_PRIVATE, None)
    return module


def training_digest(path: Path | None = None) -> str:
    """models.fingerprint.source_digest() of this checkout, or ``unknown (<why>)``."""
    try:
        return fingerprint_module(path).source_digest()
    except Exception as exc:                       # noqa: BLE001 - --version never fails
        return f"unknown ({type(exc).__name__}: {str(exc)[:80]})"


def version_text() -> str:
    """The three lines of ``ldsicl --version``."""
    root = Path(__file__).resolve().parents[2]        # the folder that holds claims/ (and models/)
    return (f"ldsicl {package_version()}\ncommit {git_commit(root)}\n"
            f"training code sha256 {training_digest()}")
