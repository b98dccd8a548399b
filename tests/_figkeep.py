"""A ``plt`` for figure tests: the figure functions close their figures; this one keeps them
(``figs``) so that a test can read what was drawn (importable as ``_figkeep``, see
tests/conftest.py)."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as _plt  # noqa: E402


class Keep:
    """``plt`` whose ``close`` records the figure instead of closing it."""

    def __init__(self):
        self.figs = []

    def __getattr__(self, name):
        return getattr(_plt, name)

    def close(self, fig=None):
        self.figs.append(fig)
