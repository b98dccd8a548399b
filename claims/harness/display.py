"""How records are displayed in the reports: numbers, criteria, intervals, their basis.

>>> format_value(0.123456), format_criterion("abs<=", 0.01), format_interval([-0.02, 0.03])
('0.1235', 'abs<= 0.01', '[-0.02, 0.03]')
"""
from __future__ import annotations

import math
from typing import Mapping

__all__ = ["format_value", "format_criterion", "format_interval", "format_basis", "format_per_run"]


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
    """What the interval rests on: ``"t, 3 seeds"``, ``"MC 1.96 SE"``, ``"bootstrap"``, ``"t, fit"``, ``"exact"``;
    for a record judged by run, its counts (``"Clopper-Pearson, 8 of 8 runs hold"``)."""
    pr = r.get("per_run")
    if pr:
        counts = f"{pr['held']} of {pr['n']} runs hold" + (f", {pr['undecided']} undecided" if pr.get("undecided") else "")
        rule = pr.get("rule") or ("control" if r.get("expect") == "fails" else "share")
        return {"share": f"Clopper-Pearson, {counts}",
                "control": f"control, fails only if every run fails: {counts}",
                "every": f"every run must hold: {counts}"}[rule]
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


def format_per_run(r: Mapping) -> str:
    """The criterion each run of a record judged by run is held to, and the counts
    (``"per run abs<= 0.01 (project's): 8 of 8 hold"``); ``""`` for any other record.

    >>> format_per_run({"per_run": {"comparator": "abs<=", "tolerance": 0.01, "tolerance_source": "paper",
    ...                             "held": 2, "undecided": 1, "n": 3}})
    "per run abs<= 0.01 (paper's): 2 of 3 hold, 1 undecided"
    """
    pr = r.get("per_run")
    if not pr:
        return ""
    basins = pr.get("basins") or []
    by = ("; per basin: " + ", ".join(f"{b['basin']} {b['held']} of {b['n']}" for b in basins)) if len(basins) > 1 else ""
    return (f"per run {format_criterion(pr['comparator'], pr['tolerance'])} ({pr['tolerance_source']}'s): "
            f"{pr['held']} of {pr['n']} hold" + (f", {pr['undecided']} undecided" if pr.get("undecided") else "") + by)
