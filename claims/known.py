"""Known non-reproductions: parametrize values with ``xfail(strict=True)`` where a check
does not reproduce, per profile.

Only a check whose whole 95 % interval lies outside its tolerance (verdict ``"fails"``;
for runs judged by basin, in every basin) may be listed, with a reason that says what does
not reproduce (the record carries the numbers); an inconclusive or mixed check passes, so
listing it turns into a strict XPASS.  Never widen a tolerance instead.

A reason is either one string (the check fails in every profile) or a mapping
``{profile name: reason}``: a check decided with the paper profile's 8 seeds may still be
inconclusive with the quick profile's 3 (and a different set of seeds may land elsewhere),
so each profile lists what it measured.  The profile is read from the ``--profile``
option when pytest evaluates the mark.  A trained check lists what its profile measured on
the machine that publishes it (the CPU in the published run's environment): float32
rounding differs between instruction sets and can send a run to another basin.

>>> known = {"b": "fails: 0.82 [0.76, 0.87] against 0.93 +- 0.01",
...          ("a", 4): {"paper": "fails: 12 % [11, 13] against 1 %"}}
>>> [getattr(p, "values", p) for p in known_params(known, ["a", "b"])]
['a', ('b',)]
>>> p = known_params(known, [("a", 4), ("a", 2)])
>>> p[0].values, p[0].marks[0].kwargs["condition"], p[1]
(('a', 4), "config.getoption('claims_profile') == 'paper'", ('a', 2))
"""
from __future__ import annotations

import pytest

__all__ = ["known_params"]


def _marks(reason) -> list:
    if isinstance(reason, str):
        return [pytest.mark.xfail(strict=True, reason=reason)]
    return [pytest.mark.xfail(condition=f"config.getoption('claims_profile') == {name!r}", strict=True,
                              reason=f"{name} profile: {why}") for name, why in reason.items()]


def known_params(known: dict, values, unpack: bool = True) -> list:
    """``values`` for ``pytest.mark.parametrize``, each listed in ``known`` wrapped in
    ``pytest.param`` with its strict xfail mark(s).  A tuple value fills several argument
    names unless ``unpack`` is false (one argument that is itself a tuple)."""
    out = []
    for v in values:
        if v not in known:
            out.append(v)
            continue
        args = v if (unpack and isinstance(v, tuple)) else (v,)
        out.append(pytest.param(*args, marks=_marks(known[v])))
    return out
