"""Former home of the Gaussian-moment references, now :mod:`theory.reference`; the old names stay importable.

Isserlis sums, symbolic moments and the exact setting-(a) moments are reference routes
(they check the production engines, which never call them), so they live in
:mod:`theory.reference`.  Import them from there; this alias module only keeps older
imports working.
"""
from __future__ import annotations

from .reference import (
    coordinate_covariance_poly,
    exact_moments_a,
    gaussian_moments,
    mixture_moments,
    pairings,
    set_partitions,
    symbolic_moment,
    uniform_moment,
)

__all__ = [
    "pairings",
    "gaussian_moments",
    "symbolic_moment",
    "mixture_moments",
    "set_partitions",
    "coordinate_covariance_poly",
    "uniform_moment",
    "exact_moments_a",
]
