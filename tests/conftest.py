"""Shared test setup for the core-module tests.

Makes ``tests/_oracles.py`` (independent, loop-based reference implementations and
deliberately wrong variants) and ``tests/_figkeep.py`` (a ``plt`` that keeps the figures
for the figure tests) importable as ``_oracles`` and ``_figkeep`` from every test folder,
including ``tests/benchmarks/`` (there is no ``__init__.py`` under ``tests/``).
"""
from __future__ import annotations

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

# pyplot (and the matplotlib modules it loads) imported once, before any test: an in-process
# pytest run (``pytester.runpytest``, tests/test_identity.py, tests/test_plugin.py) restores
# sys.modules when it ends, and when the claims plugin inside it was the first to load pyplot
# for its report's figures, the modules it dropped came back as second copies, whose classes
# the first ones' isinstance checks refuse ("Single argument to subplot must be a three-digit
# integer, not GridSpec" in every later figure of that worker, so the HTML report lost its
# figures).  The Agg backend first, as claims/figures.py chooses it.
import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot  # noqa: E402,F401
