"""Every module is named in its package's docstring (subpackages included), and every
document in docs/README.md (the index a reader starts from).  Oracle: the files on disk."""
from __future__ import annotations

import importlib

import pytest

from tests._modules import ROOT, modules_of, packages


@pytest.mark.parametrize("package", packages())
def test_every_module_is_named_in_its_package_docstring(package):
    doc = importlib.import_module(package).__doc__ or ""
    missing = [m for m in modules_of(package) if m not in doc]
    assert not missing, f"{package.replace('.', '/')}/__init__.py does not name {missing}"


def test_every_subpackage_is_checked():
    """The parametrisation above reaches every folder with an __init__.py (none skipped)."""
    folders = sorted(".".join(p.parent.relative_to(ROOT).parts) for pkg in ("theory", "models", "claims")
                     for p in (ROOT / pkg).rglob("__init__.py"))
    assert packages() == folders and "claims.harness" in folders


def test_every_document_is_named_in_the_docs_index():
    index = (ROOT / "docs" / "README.md").read_text(encoding="utf-8")
    docs = sorted(p.name for p in (ROOT / "docs").glob("*.md") if p.name != "README.md")
    missing = [d for d in docs if d not in index]
    assert not missing and "results/" in index, missing
