"""Plain values and criteria of a record: conversion to built-ins, the comparators, the interval's checks.

A record holds only plain built-in types (None, bool, int, float, str, lists, dicts with
str keys), so that it survives pytest-xdist and JSON; :func:`to_builtin` converts numpy,
torch and other real numbers.  A criterion is ``measured <comparator> tolerance``
(:data:`COMPARATORS`); :func:`compare` evaluates it, ``False`` for a NaN measurement.

>>> to_builtin((np.float64(0.5), np.int64(2))), compare(0.5, "<=", 1)
([0.5, 2], True)
"""
from __future__ import annotations

import math
import numbers
import operator
from typing import Any, Mapping

import numpy as np

__all__ = ["COMPARATORS", "EXPECTS", "KINDS", "TOLERANCE_SOURCES", "INTERVAL_KINDS", "checked_criterion", "to_builtin", "scalar", "is_nan", "compare", "checked_interval"]

COMPARATORS = {
    "<=": operator.le,
    "<": operator.lt,
    ">=": operator.ge,
    ">": operator.gt,
    "==": operator.eq,
    "abs<=": lambda m, t: abs(m) <= t,
}
#: what a check may expect: "holds", or "fails" for a negative control.
EXPECTS = ("holds", "fails")
KINDS = ("check", "reported")
TOLERANCE_SOURCES = ("paper", "project")
INTERVAL_KINDS = ("t95-seeds", "mc95", "bootstrap95", "t95-fit", "t95-fit+mc", "clopper-pearson95")


def to_builtin(obj: Any, *, _path: str = "value") -> Any:
    """``obj`` as plain built-ins (None/bool/int/float/str/list/dict with str keys).

    numpy scalars -> int/float/bool, numpy arrays and torch tensors -> nested lists,
    tuples -> lists, other ``numbers.Real`` (Fraction, mpmath, sympy numbers) -> float.
    Anything else (complex, sets, arbitrary objects) raises ``TypeError``.

    >>> to_builtin({"x": np.float64(1.5), "v": np.arange(2), "t": (1, "a")})
    {'x': 1.5, 'v': [0, 1], 't': [1, 'a']}
    """
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, int):
        return int(obj)
    if isinstance(obj, float):
        return float(obj)
    if isinstance(obj, np.generic):
        return to_builtin(obj.item(), _path=_path)
    if isinstance(obj, np.ndarray):
        return to_builtin(obj.tolist(), _path=_path)
    if hasattr(obj, "detach") and hasattr(obj, "tolist"):  # torch.Tensor, without importing torch
        return to_builtin(obj.detach().cpu().tolist(), _path=_path)
    if isinstance(obj, Mapping):
        out = {}
        for k, v in obj.items():
            key = to_builtin(k, _path=f"{_path} key")
            if isinstance(key, (bool, int, float)):
                key = str(key)
            if not isinstance(key, str):
                raise TypeError(f"{_path}: dict keys must be str or numbers, got {k!r}")
            out[key] = to_builtin(v, _path=f"{_path}[{key!r}]")
        return out
    if isinstance(obj, (list, tuple)):
        return [to_builtin(v, _path=f"{_path}[{i}]") for i, v in enumerate(obj)]
    if isinstance(obj, numbers.Integral):
        return int(obj)
    if isinstance(obj, numbers.Real):
        return float(obj)
    if not isinstance(obj, complex) and hasattr(obj, "__float__"):
        try:
            return float(obj)
        except (TypeError, ValueError):
            pass
    raise TypeError(f"{_path}: cannot record {type(obj).__name__} {obj!r} as a plain "
                    "built-in (use numbers, str, lists, dicts, numpy or torch values)")


def scalar(value: Any, name: str, comparator: str):
    """``value`` as a built-in scalar fit for ``comparator`` (a real number; also a bool or str for ``==``)."""
    v = to_builtin(value, _path=name)
    if comparator == "==":
        ok = isinstance(v, (bool, int, float, str))
    else:
        ok = isinstance(v, (int, float)) and not isinstance(v, bool)
    if not ok:
        kinds = "a number, bool or str" if comparator == "==" else "a real number"
        raise TypeError(f"{name} must be {kinds} for comparator {comparator!r}, "
                        f"got {type(value).__name__} {value!r}")
    return v


def is_nan(v) -> bool:
    """Whether ``v`` is a float NaN."""
    return isinstance(v, float) and math.isnan(v)


def compare(measured, comparator: str, tolerance) -> bool:
    """``measured <comparator> tolerance``; ``False`` for a NaN measurement.

    >>> compare(3, "<=", 4), compare(-5e-12, "abs<=", 1e-10), compare(float("nan"), ">", 0)
    (True, True, False)
    """
    if comparator not in COMPARATORS:
        raise ValueError(f"comparator must be one of {sorted(COMPARATORS)}, got {comparator!r}")
    if is_nan(measured):
        return False
    if comparator == "==" and type(measured) is not type(tolerance) and (
            isinstance(measured, (bool, str)) or isinstance(tolerance, (bool, str))):
        return False  # no True == 1 or "1" == 1 surprises
    return bool(COMPARATORS[comparator](measured, tolerance))


def checked_interval(interval, interval_kind, n_seeds, comparator, m):
    """Validated ``(interval, interval_kind, n_seeds)`` of a record measuring ``m``
    (claims/harness/records.py, "Intervals"); ValueError naming what is wrong."""
    if interval is None:
        if interval_kind is not None or n_seeds is not None:
            raise ValueError("interval_kind and n_seeds need an interval")
        return None, None, None
    iv = to_builtin(interval, _path="interval")
    if (not isinstance(iv, list) or len(iv) != 2
            or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in iv)):
        raise ValueError(f"interval must be a (lo, hi) pair of numbers, got {interval!r}")
    lo, hi = float(iv[0]), float(iv[1])
    if math.isnan(lo) or math.isnan(hi) or lo > hi:
        raise ValueError(f"interval must satisfy lo <= hi (no NaN), got {interval!r}")
    if comparator == "==":
        raise ValueError("comparator '==' is exact: it takes no interval")
    if isinstance(m, (int, float)) and not isinstance(m, bool) and not (isinstance(m, float) and math.isnan(m)) \
            and not lo <= m <= hi:
        raise ValueError(f"the interval [{lo!r}, {hi!r}] must contain measured = {m!r}")
    if interval_kind is None:
        interval_kind = "t95-seeds" if n_seeds is not None else "mc95"
    if interval_kind not in INTERVAL_KINDS:
        raise ValueError(f"interval_kind must be one of {INTERVAL_KINDS}, got {interval_kind!r}")
    if interval_kind == "t95-seeds":
        if isinstance(n_seeds, bool) or not isinstance(n_seeds, int) or n_seeds < 2:
            raise ValueError(f"a 't95-seeds' interval needs n_seeds >= 2, got {n_seeds!r}")
    elif n_seeds is not None:
        raise ValueError("n_seeds belongs to 't95-seeds' intervals only")
    return [lo, hi], interval_kind, n_seeds


def checked_criterion(kind: str, measured, tolerance, comparator, tolerance_source, expect,
                      judged_by_runs: bool = False) -> tuple:
    """``(measured, tolerance, expect)`` of a record of ``kind`` validated: a check needs a
    comparator, a tolerance and whose it is (``expect`` defaults to ``"holds"``), a reported
    row none of them; ``measured`` is None when the runs give it (``judged_by_runs``).

    >>> checked_criterion("check", np.float64(0.5), 1, "<=", "paper", None)
    (0.5, 1, 'holds')
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    if kind == "reported":
        given = [n for n, v in (("tolerance", tolerance), ("comparator", comparator),
                                ("tolerance_source", tolerance_source), ("expect", expect))
                 if v is not None]
        if given:
            raise ValueError(f"a reported row has no verdict: drop {', '.join(given)}")
        m = None if judged_by_runs else scalar(measured, "measured", "==")
        t = None
    else:
        if comparator not in COMPARATORS:
            raise ValueError(f"comparator must be one of {sorted(COMPARATORS)}, "
                             f"got {comparator!r}")
        if tolerance_source not in TOLERANCE_SOURCES:
            raise ValueError("tolerance_source is required: 'paper' (the paper states the "
                             "number) or 'project' (ours; reason in docs/settings.md, "
                             f"Tolerances), got {tolerance_source!r}")
        expect = "holds" if expect is None else expect
        if expect not in EXPECTS:
            raise ValueError(f"expect must be 'holds' or 'fails' (negative control), "
                             f"got {expect!r}")
        if tolerance is None:
            raise ValueError("a check needs a tolerance")
        m = None if (judged_by_runs) else scalar(measured, "measured", comparator)
        t = scalar(tolerance, "tolerance", comparator)
        if is_nan(t):
            raise ValueError("tolerance is NaN")
        if comparator == "abs<=" and t < 0:
            raise ValueError(f"tolerance of 'abs<=' must be >= 0, got {t!r}")
    return m, t, expect
