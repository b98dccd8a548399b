"""The figures of the training-basins claim (claims/specs/training_basins.py): typed data read from its records, and the drawing.

(Being filled in: the drawing code moves here from claims/reports/figures.py.)
"""
from __future__ import annotations

__all__ = ["FIGURES"]

FIGURES: tuple = ()
