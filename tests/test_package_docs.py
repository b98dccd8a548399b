"""Every module is named in its package's docstring, and every document in docs/README.md
(the index a reader starts from).  Oracle: the files on disk."""
from __future__ import annotations

import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("package", ["theory", "models", "claims"])
def test_every_module_is_named_in_its_package_docstring(package):
    doc = importlib.import_module(package).__doc__ or ""
    modules = sorted(p.stem for p in (ROOT / package).glob("*.py") if p.stem != "__init__")
    missing = [m for m in modules if m not in doc]
    assert not missing, f"{package}/__init__.py does not name {missing}"


def test_every_document_is_named_in_the_docs_index():
    index = (ROOT / "docs" / "README.md").read_text(encoding="utf-8")
    docs = sorted(p.name for p in (ROOT / "docs").glob("*.md") if p.name != "README.md")
    missing = [d for d in docs if d not in index]
    assert not missing and "results/" in index, missing
