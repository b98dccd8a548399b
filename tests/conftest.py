"""Shared test setup for the core-module tests.

Makes ``tests/_oracles.py`` (independent, loop-based reference implementations and
deliberately wrong variants) and ``tests/_figkeep.py`` (a ``plt`` that keeps the figures
for the figure tests) importable as ``_oracles`` and ``_figkeep`` from every test folder,
including ``tests/benchmarks/`` (there is no ``__init__.py`` under ``tests/``).
"""
from __future__ import annotations

import os
import sys

import pytest

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

# pyplot (and the matplotlib modules it loads) imported once, before any test: an in-process
# pytest run (``pytester.runpytest``, tests/test_identity.py, tests/test_plugin.py) restores
# sys.modules when it ends, and when the claims plugin inside it was the first to load pyplot
# for its report's figures, the modules it dropped came back as second copies, whose classes
# the first ones' isinstance checks refuse ("Single argument to subplot must be a three-digit
# integer, not GridSpec" in every later figure of that worker, so the HTML report lost its
# figures).  The Agg backend first, as claims/reports/figures.py chooses it.
import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot  # noqa: E402,F401


#: mutmut runs the unit tests in its copy of the repository (``mutants/``, docs/mutation.md)
#: with ``MUTANT_UNDER_TEST`` set: ``stats`` for the instrumented first run, a mutant's name
#: after it.
IN_MUTMUT = "MUTANT_UNDER_TEST" in os.environ
# The instrumented run records which test calls which function in this process only; a child
# process (a test's ``pytest`` or ``ldsicl`` in a scratch directory) that inherited ``stats``
# would look for mutmut's configuration in its own directory and stop.  mutmut keeps its own
# copy of the value for this process, so the children run the plain code; a mutant's name is
# left for them (a child that runs the mutant can kill it).
if os.environ.get("MUTANT_UNDER_TEST") == "stats":
    del os.environ["MUTANT_UNDER_TEST"]


def pytest_collection_modifyitems(config, items):
    """Inside mutmut's copy the modules' text is mutmut's rewrite -- every function beside
    its mutated copies and a trampoline -- so the tests that read the source text
    (``reads_source``: the import-layer, JSON-writer, settings-letter and label-parsing
    guards) would report mutmut's names, not ours; there they are skipped."""
    if not IN_MUTMUT:
        return
    skip = pytest.mark.skip(reason="reads the source text, which in mutmut's copy is mutmut's rewrite")
    for item in items:
        if item.get_closest_marker("reads_source"):
            item.add_marker(skip)
