"""The figures of the improper-learning claim (claims/specs/improper_learning.py): none of its own.

Whatever checks of the claim carry a value per trained run are drawn by the report's
generic per-run figure, ``seeds-improper-learning.png`` (claims/reports/figures.py); its records
carry no curve or weights beyond them.

>>> FIGURES
()
"""
from __future__ import annotations

__all__ = ["FIGURES"]

FIGURES: tuple = ()
