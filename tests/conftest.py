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
