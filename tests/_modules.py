"""The project's modules, read from the files on disk (the oracle of the doctest and
package-docs tests): every ``.py`` file under theory/, models/ and claims/, subpackages
included, the claim files (``test_*.py``, collected by ``pytest claims``) aside.

>>> "claims.harness.records" in module_names() and "claims.harness" in packages()
True
"""
from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("theory", "models", "claims")


def _name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def module_files() -> list[Path]:
    """Every module file of the three packages, at any depth (claim files aside)."""
    return sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py")
                  if not p.stem.startswith("test_") and "__pycache__" not in p.parts)


def module_names() -> list[str]:
    """Dotted names of :func:`module_files` (a package by its ``__init__``)."""
    return sorted(_name(p) for p in module_files())


def packages() -> list[str]:
    """Every package and subpackage (a folder with an ``__init__.py``)."""
    return sorted(_name(p) for p in module_files() if p.name == "__init__.py")


def modules_of(package: str) -> list[str]:
    """The modules and subpackages directly inside ``package`` (short names)."""
    folder = ROOT.joinpath(*package.split("."))
    mods = [p.stem for p in folder.glob("*.py") if p.stem != "__init__" and not p.stem.startswith("test_")]
    subs = [p.parent.name for p in folder.glob("*/__init__.py")]
    return sorted(mods + subs)
