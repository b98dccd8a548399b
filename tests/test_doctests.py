"""The worked examples in the docstrings of theory/, models/ and claims/ stay true.

Every module of the three packages (the claim files themselves excepted: they are
collected by ``pytest claims``) is run through :func:`doctest.testmod`; a module whose
docstrings hold no example is skipped, so the count of examples run is visible.
"""
from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

PACKAGES = ("theory", "models", "claims")


def _modules() -> list[str]:
    names = []
    for pkg_name in PACKAGES:
        pkg = importlib.import_module(pkg_name)
        names.append(pkg_name)
        for info in pkgutil.iter_modules(pkg.__path__):
            if not info.name.startswith("test_"):
                names.append(f"{pkg_name}.{info.name}")
    return sorted(names)


@pytest.mark.parametrize("name", _modules())
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    if result.attempted == 0:
        pytest.skip(f"{name} holds no docstring example")
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"
