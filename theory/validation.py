"""Input validation for every layer (theory, models, claims, the CLI): one ValueError naming the parameter.

Each helper raises one ``ValueError`` whose message starts with the name of the
offending parameter, so that a bad call says exactly what is wrong:

>>> check_positive_int("d", 0)
Traceback (most recent call last):
...
ValueError: d must be a positive integer, got 0
"""
from __future__ import annotations

import numbers
from fractions import Fraction

import numpy as np

__all__ = [
    "check_positive_int",
    "check_nonneg_real",
    "check_positive_real",
    "check_finite_array",
    "check_window",
    "check_rational",
    "check_generator",
]


def check_positive_int(name: str, value, minimum: int = 1) -> int:
    """Return ``value`` as an ``int`` if it is an integer >= ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    if value < minimum:
        if minimum == 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def _as_real(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, np.floating, np.integer)):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    v = float(value)
    if not np.isfinite(v):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return v


def check_nonneg_real(name: str, value) -> float:
    """Return ``float(value)`` if it is finite and >= 0 (a standard deviation, say)."""
    v = _as_real(name, value)
    if v < 0:
        raise ValueError(f"{name} must be >= 0, got {value!r}")
    return v


def check_positive_real(name: str, value) -> float:
    """Return ``float(value)`` if it is finite and > 0."""
    v = _as_real(name, value)
    if v <= 0:
        raise ValueError(f"{name} must be > 0, got {value!r}")
    return v


def check_rational(name: str, value, *, nonneg: bool = True) -> Fraction:
    """Return ``value`` as an exact ``Fraction``.

    Accepts ints, Fractions, decimal strings ("0.01", "1/100") and floats; a float is
    taken by its *decimal* repr (0.1 -> 1/10), which is what a user typing 0.1 means.
    """
    if isinstance(value, bool):
        raise ValueError(f"{name} must be a rational number, got {value!r}")
    try:
        if isinstance(value, Fraction):
            q = value
        elif isinstance(value, numbers.Integral):
            q = Fraction(int(value))
        elif isinstance(value, (float, np.floating)):
            if not np.isfinite(value):
                raise ValueError
            q = Fraction(repr(float(value)))
        elif isinstance(value, str):
            q = Fraction(value.strip())
        else:
            raise ValueError
    except (ValueError, ZeroDivisionError):
        raise ValueError(f"{name} must be a finite rational number, got {value!r}") from None
    if nonneg and q < 0:
        raise ValueError(f"{name} must be >= 0, got {value!r}")
    return q


def check_finite_array(name: str, value, *, ndim: int | tuple[int, ...] | None = None,
                       dtype=np.float64) -> np.ndarray:
    """Return ``value`` as an array of ``dtype``; reject NaN/inf and wrong ``ndim``."""
    if np.iscomplexobj(value):
        raise ValueError(f"{name} must be real, got a complex array")
    try:
        arr = np.asarray(value, dtype=dtype)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a real array, got {type(value).__name__}") from None
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else ndim
        if arr.ndim not in allowed:
            raise ValueError(f"{name} must have ndim in {allowed}, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite (no NaN or inf)")
    return arr


def check_generator(name: str, rng) -> np.random.Generator:
    """``rng`` must be a ``numpy.random.Generator`` (used, and advanced, as given)."""
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"{name} must be a numpy.random.Generator, got {type(rng).__name__}")
    return rng


def check_window(s, T) -> tuple[int, int]:
    """Validate an AR(s) window against a sequence length: need n = T - s - 1 >= 1."""
    s = check_positive_int("s", s)
    T = check_positive_int("T", T)
    if T <= s + 1:
        raise ValueError(f"T must exceed s + 1 = {s + 1} (n = T - s - 1 context tokens), got T={T}")
    return s, T
