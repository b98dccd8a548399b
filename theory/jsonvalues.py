"""One policy for numbers in JSON, everywhere the project writes it (the weight cache, the
command line's ``--json`` output, claims.json and the published runs).

Strict JSON has no NaN or infinity.  A non-finite float is written as the string
``"NaN"``, ``"Infinity"`` or ``"-Infinity"`` (the spelling of Python's ``json`` module and
of JavaScript), never as ``null`` (which would lose which of the three it was) and never
as a bare ``NaN`` token (which strict parsers reject); numpy scalars and arrays become
Python numbers and lists, tuples become lists.  :func:`float_from_json` reads such a value
back.

>>> dumps({"loss": float("inf"), "w": np.array([1.5, np.nan]), "n": np.int64(3)})
'{"loss": "Infinity", "w": [1.5, "NaN"], "n": 3}'
>>> float_from_json("-Infinity"), float_from_json(2)
(-inf, 2.0)
"""
from __future__ import annotations

import json
import math

import numpy as np

__all__ = ["to_json", "json_float", "float_from_json", "dumps", "NON_FINITE"]

#: how each non-finite float is written.
NON_FINITE = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}


def json_float(x) -> float | str:
    """``float(x)``, or its string (:data:`NON_FINITE`) when it is not finite."""
    x = float(x)
    if math.isfinite(x):
        return x
    return "NaN" if math.isnan(x) else ("Infinity" if x > 0 else "-Infinity")


def to_json(obj):
    """``obj`` in plain JSON types under this module's policy (dict keys become strings)."""
    if isinstance(obj, dict):
        return {str(k): to_json(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_json(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return to_json(obj.tolist())
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float):
        return json_float(obj)
    return obj


def float_from_json(value) -> float:
    """The float a JSON value written under this policy stands for (ValueError otherwise)."""
    if isinstance(value, str):
        if value not in NON_FINITE:
            raise ValueError(f"value must be a number or one of {list(NON_FINITE)}, got {value!r}")
        return NON_FINITE[value]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"value must be a number or one of {list(NON_FINITE)}, got {value!r}")
    return float(value)


def dumps(obj, **kwargs) -> str:
    """``json.dumps`` of :func:`to_json` (obj), strict (``allow_nan=False``)."""
    return json.dumps(to_json(obj), allow_nan=False, **kwargs)
