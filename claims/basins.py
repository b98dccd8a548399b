r"""Verdicts by basin: trained runs that end near different stationary points are judged per point (docs/settings.md, "Verdicts by basin").

Runs are outcomes, not samples of one number: when the runs of a check are headed for
different stationary points of the population loss (their *basins*), a mean over all of
them describes no run.  So each basin is judged on its own runs, and the check's verdict
is read off the basins' verdicts:

* a basin of two or more runs: the mean of its runs and the Student-t interval over them
  (the rule every seed interval follows, claims.stats.seed_fields), judged against the
  tolerance with :func:`claims.stats.interval_verdict`;
* a basin of one run: that run's value with its own standard error where it has one (the
  Monte Carlo error of a value estimated on held-out sequences: value +- 1.96 SE), judged
  the same way; without one, exactly (the value against the tolerance);
* the check: ``holds`` if every basin holds, ``fails`` if every basin fails, ``mixed`` if
  some basins hold and some fail, and ``inconclusive`` otherwise (no basin fails and not
  all hold, or no basin holds, some fail and some are undecided).  A mixed check states
  the share of runs in holding basins with its Clopper-Pearson 95 % interval.

With every run in one basin this is exactly the seed rule.  Nothing here decides which
basin a run is in: the caller passes one label per run (the stationary point it is headed
for, matched by the point, never by a rounded name).

Worked example: seven runs in one basin at -0.10 ... -0.14 against |x| <= 0.01 and one run
elsewhere at -1.42 fail in both basins, so the check fails (a mean over all eight, with its
wide interval, would have read "inconclusive"):

>>> v = [-0.10, -0.11, -0.12, -0.13, -0.14, -0.12, -0.11, -1.42]
>>> judge_by_basin(v, ["p"] * 7 + ["q"], "abs<=", 0.01)["verdict"]
'fails'
"""
from __future__ import annotations

from collections.abc import Sequence

from scipy import stats as _st

from .stats import interval_verdict, mc_interval, t_interval

__all__ = ["basin_verdicts", "judge_by_basin", "clopper_pearson"]


def clopper_pearson(k: int, n: int) -> tuple[float, float]:
    """The exact (Clopper-Pearson) 95 % interval of a share k / n.

    >>> [round(x, 4) for x in clopper_pearson(7, 8)]
    [0.4735, 0.9968]
    """
    if not (isinstance(k, int) and isinstance(n, int) and 0 <= k <= n and n >= 1):
        raise ValueError(f"k and n must be integers with 0 <= k <= n, n >= 1, got {k!r}, {n!r}")
    ci = _st.binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
    return float(ci.low), float(ci.high)


def basin_verdicts(values: Sequence[float], basins: Sequence, comparator: str, tolerance: float,
                   stderr: Sequence | None = None) -> list[dict]:
    """One entry per basin, in order of first appearance: ``basin``, ``runs`` (indices),
    ``measured``, ``interval`` (None when judged exactly), ``interval_kind`` and ``verdict``
    (module doc).  ``stderr``: per-run standard errors (None entries where a run has none)."""
    values = [float(v) for v in values]
    basins = list(basins)
    if len(values) != len(basins) or not values:
        raise ValueError(f"values and basins must be non-empty and of one length, got {len(values)} and {len(basins)}")
    if stderr is not None and len(stderr) != len(values):
        raise ValueError(f"stderr must have one entry per run ({len(values)}), got {len(stderr)}")
    out = []
    for b in dict.fromkeys(basins):
        idx = [i for i, x in enumerate(basins) if x == b]
        if len(idx) >= 2:
            mean, lo, hi = t_interval(values[i] for i in idx)
            kind = "t95-seeds"
        else:
            i = idx[0]
            se = None if stderr is None else stderr[i]
            mean = values[i]
            if se is None:
                lo = hi = mean
                kind = None
            else:
                lo, hi = mc_interval(mean, se)
                kind = "mc95"
        out.append({"basin": b, "runs": idx, "measured": mean,
                    "interval": None if kind is None else (lo, hi), "interval_kind": kind,
                    "verdict": interval_verdict(lo, hi, comparator, tolerance)})
    return out


def judge_by_basin(values: Sequence[float], basins: Sequence, comparator: str, tolerance: float,
                   stderr: Sequence | None = None) -> dict:
    """The check's verdict from its basins (module doc): ``verdict``, ``basins`` (the
    entries of :func:`basin_verdicts`) and, for a mixed check, ``holding_share`` with its
    ``holding_share_interval``."""
    per = basin_verdicts(values, basins, comparator, tolerance, stderr)
    verdicts = {p["verdict"] for p in per}
    if verdicts == {"holds"}:
        verdict = "holds"
    elif verdicts == {"fails"}:
        verdict = "fails"
    elif {"holds", "fails"} <= verdicts:
        verdict = "mixed"
    else:
        verdict = "inconclusive"
    out = {"verdict": verdict, "basins": per}
    if verdict == "mixed":
        k = sum(len(p["runs"]) for p in per if p["verdict"] == "holds")
        out["holding_share"] = k / len(values)
        out["holding_share_interval"] = clopper_pearson(k, len(values))
    return out
