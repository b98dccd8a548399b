"""Input validation for every layer (theory, models, claims, the CLI): one ValueError naming the parameter.

Each helper raises one ``ValueError`` whose message starts with the name of the
offending parameter, so that a bad call says exactly what is wrong, and returns the
value normalised (ints as ``int``, reals as ``float``):

>>> check_positive_int("d", 0)
Traceback (most recent call last):
...
ValueError: d must be a positive integer, got 0
>>> check_real("betas[1]", 1.0, minimum=0.0, maximum=1.0, strict_max=True)
Traceback (most recent call last):
...
ValueError: betas[1] must be < 1.0, got 1.0
>>> check_choice("init", "xavier", ("normal", "zeros"))
Traceback (most recent call last):
...
ValueError: init must be one of ('normal', 'zeros'), got 'xavier'

Nothing here imports torch: the torch layer passes its own types to :func:`check_type`.
"""
from __future__ import annotations

import numbers
from fractions import Fraction

import numpy as np

__all__ = [
    "check_int",
    "check_positive_int",
    "check_real",
    "check_nonneg_real",
    "check_positive_real",
    "check_choice",
    "check_type",
    "check_finite_array",
    "check_window",
    "check_rational",
    "check_generator",
]


def check_int(name: str, value, minimum: int | None = None) -> int:
    """Return ``value`` as an ``int`` if it is an integer (and >= ``minimum`` when given)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def check_positive_int(name: str, value, minimum: int = 1) -> int:
    """Return ``value`` as an ``int`` if it is an integer >= ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or (minimum == 1 and value < 1):
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return check_int(name, value, minimum)


def check_real(name: str, value, *, minimum=None, maximum=None, strict_min: bool = False,
               strict_max: bool = False) -> float:
    """Return ``float(value)`` if it is a finite real number within the given bounds.

    ``minimum``/``maximum`` are inclusive unless ``strict_min``/``strict_max``; the
    message prints the bound as given (``>= 0`` for ``minimum=0``, ``>= 0.0`` for 0.0).
    """
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, np.floating, np.integer)):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    try:
        v = float(value)
    except OverflowError:                      # an int beyond the float range, 10**400 say
        raise ValueError(f"{name} must be finite, got {value!r}") from None
    if not np.isfinite(v):
        raise ValueError(f"{name} must be finite, got {value!r}")
    if minimum is not None and (v < minimum or (strict_min and v == minimum)):
        raise ValueError(f"{name} must be {'>' if strict_min else '>='} {minimum}, got {value!r}")
    if maximum is not None and (v > maximum or (strict_max and v == maximum)):
        raise ValueError(f"{name} must be {'<' if strict_max else '<='} {maximum}, got {value!r}")
    return v


def check_nonneg_real(name: str, value) -> float:
    """Return ``float(value)`` if it is finite and >= 0 (a standard deviation, say)."""
    return check_real(name, value, minimum=0)


def check_positive_real(name: str, value) -> float:
    """Return ``float(value)`` if it is finite and > 0."""
    return check_real(name, value, minimum=0, strict_min=True)


def check_choice(name: str, value, choices: tuple):
    """Return ``value`` if it is one of ``choices`` (compared with ``==``)."""
    try:
        ok = not isinstance(value, bool) and any(value is c or bool(value == c) for c in choices)
    except (TypeError, ValueError):  # e.g. an array, whose == is elementwise
        ok = False
    if not ok:
        raise ValueError(f"{name} must be one of {tuple(choices)}, got {value!r}")
    return value


def check_type(name: str, value, types, what: str):
    """Return ``value`` if it is an instance of ``types``; ``what`` names them ("a dict")."""
    if not isinstance(value, types):
        raise ValueError(f"{name} must be {what}, got {type(value).__name__}")
    return value


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
    except OverflowError:                      # Python ints beyond the float range
        raise ValueError(f"{name} must be finite (no NaN or inf)") from None
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
    return check_type(name, rng, np.random.Generator, "a numpy.random.Generator")


def check_window(s, T) -> tuple[int, int]:
    """Validate an AR(s) window against a sequence length: need n = T - s - 1 >= 1."""
    s = check_positive_int("s", s)
    T = check_positive_int("T", T)
    if T <= s + 1:
        raise ValueError(f"T must exceed s + 1 = {s + 1} (n = T - s - 1 context tokens), got T={T}")
    return s, T
