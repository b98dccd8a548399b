"""How records are displayed in the reports: numbers, criteria, intervals, their basis.

>>> format_value(0.123456), format_criterion("abs<=", 0.01), format_interval([-0.02, 0.03])
('0.1235', 'abs<= 0.01', '[-0.02, 0.03]')
"""
from __future__ import annotations

import math
from typing import Mapping

__all__ = ["format_value", "format_criterion", "format_interval", "format_basis"]


def format_value(v) -> str:
    """Compact display: ints as ints, floats with 4 significant digits (scientific when
    tiny or huge), ``None`` as ``-``.

    >>> [format_value(x) for x in (3, 0.123456, 1.5e-9, 123456.0, None, True)]
    ['3', '0.1235', '1.5e-09', '1.235e+05', '-', 'True']
    """
    if v is None:
        return "-"
    if isinstance(v, bool) or isinstance(v, str):
        return str(v)
    if isinstance(v, int):
        return str(v) if abs(v) < 10**7 else f"{v:.4g}"
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        return f"{v:.4g}"
    return str(v)


def format_criterion(comparator: str | None, tolerance) -> str:
    """``"<= 4"``, ``"abs<= 1e-10"``, ``"== 3"``; ``"-"`` for a reported row."""
    if comparator is None:
        return "-"
    return f"{comparator} {format_value(tolerance)}"


def format_interval(interval) -> str:
    """``"[-0.02278, 0.02658]"``; ``"-"`` without an interval."""
    if interval is None:
        return "-"
    return f"[{format_value(interval[0])}, {format_value(interval[1])}]"


def format_basis(r: Mapping) -> str:
    """What the interval rests on: ``"t, 3 seeds"``, ``"MC 1.96 SE"``, ``"bootstrap"``, ``"t, fit"``, ``"exact"``."""
    if r.get("interval_kind") == "t95-seeds":
        return f"t, {r.get('n_seeds')} seeds"
    if r.get("interval_kind") == "mc95":
        return "MC 1.96 SE"
    if r.get("interval_kind") == "bootstrap95":
        return "bootstrap"
    if r.get("interval_kind") == "t95-fit":
        return "t, fit"
    if r.get("interval_kind") == "t95-fit+mc":
        return "t, fit + MC"
    if r.get("interval_kind") == "clopper-pearson95":
        return "Clopper-Pearson"
    return "-" if r.get("kind") == "reported" else "exact"
