"""The worked examples in the docstrings of theory/, models/ and claims/ stay true.

Every module of the three packages and of their subpackages (the claim files themselves
excepted: they are collected by ``pytest claims``) is run through :func:`doctest.testmod`;
a module whose docstrings hold no example is skipped, so the count of examples run is
visible.  The modules come from the files on disk (tests/_modules.py), and a test checks
that importing the packages reaches each one, so a new subpackage cannot be left out.
"""
from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

from tests._modules import PACKAGES, module_names


@pytest.mark.parametrize("name", module_names())
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    if result.attempted == 0:
        pytest.skip(f"{name} holds no docstring example")
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"


def test_every_module_on_disk_is_reached_by_the_package_walk():
    """pkgutil's walk of the imported packages (what a doctest runner sees) reaches every file."""
    walked = set(PACKAGES)
    for pkg_name in PACKAGES:
        pkg = importlib.import_module(pkg_name)
        walked.update(i.name for i in pkgutil.walk_packages(pkg.__path__, prefix=f"{pkg_name}.")
                      if not i.name.rpartition(".")[2].startswith("test_"))
    assert walked == set(module_names())
