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


#: the longest a module of theory/, models/ or claims/ may be (the project's: one object per
#: module, readable in one sitting; the claim files included)
MAX_LINES = 450


def test_no_module_is_longer_than_the_limit():
    """Every .py file of the three packages, subpackages and claim files included, has at most
    :data:`MAX_LINES` lines (control: the count is taken from the files, and the longest is shown)."""
    lengths = {p.relative_to(ROOT).as_posix(): len(p.read_text(encoding="utf-8").splitlines())
               for pkg in ("theory", "models", "claims") for p in (ROOT / pkg).rglob("*.py")}
    longest = max(lengths, key=lengths.get)
    assert lengths[longest] > 100, longest                 # the scan reads real files
    assert not {f: n for f, n in lengths.items() if n > MAX_LINES}
