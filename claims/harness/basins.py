r"""Rows by basin: trained runs that end near different stationary points are summarised per point (docs/settings.md, "Verdicts by basin").

Runs are outcomes, not samples of one number: when the runs of a row are headed for
different stationary points of the population loss (their *basins*), a mean over all of
them describes no run.  Every *check* over trained runs is judged by run
(:mod:`claims.harness.shares`, with the share per basin beside it); this module serves the
*reported* rows over runs in several basins (each basin's mean with its interval), and
its rule for a check over basins -- kept for the rows and the tests that pin it -- reads:

* a basin of two or more runs: the mean of its runs and the Student-t interval over them
  (the rule every seed interval follows, claims.harness.stats.seed_fields), judged against the
  tolerance with :func:`claims.harness.stats.interval_verdict`;
* a basin of one run: that run's value with its own standard error where it has one (the
  Monte Carlo error of a value estimated on held-out sequences: value +- 1.96 SE), judged
  the same way; without one, exactly (the value against the tolerance);
* the check: ``holds`` if every basin holds, ``fails`` if every basin fails, ``mixed`` if
  some basins hold and some fail, and ``inconclusive`` otherwise (no basin fails and not
  all hold, or no basin holds, some fail and some are undecided).  A mixed check states
  the share of runs in holding basins with its Clopper-Pearson 95 % interval.

With every run in one basin this is exactly the seed rule.  Nothing here decides which
basin a run is in: the caller passes one label per run (the stationary point it is headed
for, matched by the point, never by a rounded name; claims/_ars.py, ``basins``).

Where every run is scored on the same held-out sequences, their common sampling error is
not in the spread over runs; ``shared_stderr`` (per basin) adds it to a basin's seed
interval in quadrature, as :func:`claims.harness.stats.widen_for_reference` does for one basin.

A record over runs in several basins headlines one basin (:func:`headline_basin`: the
basin with the most runs, ties to the lower point) and carries every basin's verdict in
its ``basins`` field (:func:`record_fields`); the mean over all runs stays in that field
as ``all_runs_mean``, never in the headline.

Worked example: seven runs in one basin at -0.10 ... -0.14 against |x| <= 0.01 and one run
elsewhere at -1.42 fail in both basins, so the check fails (a mean over all eight, with its
wide interval, would have read "inconclusive"):

>>> v = [-0.10, -0.11, -0.12, -0.13, -0.14, -0.12, -0.11, -1.42]
>>> judge_by_basin(v, ["p"] * 7 + ["q"], "abs<=", 0.01)["verdict"]
'fails'
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from scipy import stats as _st

from .stats import interval_verdict, mc_interval, t_interval, widen_for_reference

__all__ = ["basin_verdicts", "judge_by_basin", "clopper_pearson", "BasinSplit", "headline_basin",
           "record_fields"]


@dataclass(frozen=True)
class BasinSplit:
    """Which basin each run of a record is in (``labels``, one per run, in run order), the
    basins' names from the lowest point up (``order``), and per basin the standard error its
    runs share (``shared_stderr``: the held-out sampling error of a value every run is
    scored on, added to a seed interval in quadrature; absent: none)."""

    labels: tuple
    order: tuple
    shared_stderr: Mapping = field(default_factory=dict)

    def __post_init__(self):
        labels, order = tuple(self.labels), tuple(self.order)
        if not labels or not all(isinstance(x, str) and x for x in labels):
            raise ValueError(f"labels must be non-empty basin names, got {self.labels!r}")
        if len(set(order)) != len(order) or not set(labels) <= set(order):
            raise ValueError(f"order must name every basin of labels once, got {self.order!r} for {labels!r}")
        for k, v in dict(self.shared_stderr).items():
            if k not in order or not (isinstance(v, (int, float)) and math.isfinite(v) and v >= 0):
                raise ValueError(f"shared_stderr must map basin names to finite errors >= 0, got {k!r}: {v!r}")
        object.__setattr__(self, "labels", labels)
        object.__setattr__(self, "order", tuple(b for b in order if b in labels))
        object.__setattr__(self, "shared_stderr", dict(self.shared_stderr))


def clopper_pearson(k: int, n: int) -> tuple[float, float]:
    """The exact (Clopper-Pearson) 95 % interval of a share k / n.

    >>> [round(x, 4) for x in clopper_pearson(7, 8)]
    [0.4735, 0.9968]
    """
    if not (isinstance(k, int) and isinstance(n, int) and 0 <= k <= n and n >= 1):
        raise ValueError(f"k and n must be integers with 0 <= k <= n, n >= 1, got {k!r}, {n!r}")
    ci = _st.binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
    return float(ci.low), float(ci.high)


def basin_verdicts(values: Sequence[float], basins: Sequence, comparator: str | None, tolerance: float | None,
                   stderr: Sequence | None = None, shared_stderr: Mapping | None = None) -> list[dict]:
    """One entry per basin, in order of first appearance: ``basin``, ``runs`` (indices),
    ``measured``, ``interval`` (None when judged exactly), ``interval_kind`` and ``verdict``
    (module doc; None without a comparator: a reported row).  ``stderr``: per-run standard
    errors (None entries where a run has none); ``shared_stderr``: per basin, an error its
    runs share, added to its seed interval in quadrature (module doc)."""
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
            lo, hi = widen_for_reference({"measured": mean, "interval": (lo, hi)},
                                         float((shared_stderr or {}).get(b, 0.0)))["interval"]
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
                    "verdict": None if comparator is None else interval_verdict(lo, hi, comparator, tolerance)})
    return out


def judge_by_basin(values: Sequence[float], basins: Sequence, comparator: str, tolerance: float,
                   stderr: Sequence | None = None, shared_stderr: Mapping | None = None) -> dict:
    """The check's verdict from its basins (module doc): ``verdict``, ``basins`` (the
    entries of :func:`basin_verdicts`) and, for a mixed check, ``holding_share`` with its
    ``holding_share_interval``."""
    per = basin_verdicts(values, basins, comparator, tolerance, stderr, shared_stderr)
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


def headline_basin(per: Sequence[Mapping], order: Sequence) -> Mapping:
    """The basin a record headlines: the one with the most runs, ties to the one first in
    ``order`` (the lower stationary point)."""
    rank = {b: i for i, b in enumerate(order)}
    return min(per, key=lambda p: (-len(p["runs"]), rank.get(p["basin"], len(rank))))


def record_fields(values: Sequence[float], split: BasinSplit, run_ids: Sequence[str], comparator: str | None,
                  tolerance, stderr: Sequence | None = None) -> dict:
    """What a record over runs in basins shows (claims/harness/records.py, ``make_record(basins=...)``):
    the headline basin's ``measured``, ``interval``, ``interval_kind`` and ``n_seeds``, the
    per-seed ``values`` when every run is in one basin (else None: the runs carry them),
    the check's ``verdict`` (None for a reported row) and the ``basins`` field -- per basin
    its name, runs (ids), value, interval and verdict, the headline's name, the mean over
    all runs, and for a mixed check the share of runs in holding basins with its interval."""
    values = [float(v) for v in values]
    if len(split.labels) != len(values) or len(run_ids) != len(values):
        raise ValueError(f"{len(values)} values, {len(split.labels)} basin labels and {len(run_ids)} runs")
    if comparator is None:
        per = basin_verdicts(values, split.labels, None, None, stderr, split.shared_stderr)
        judged = {"verdict": None, "basins": per}
    else:
        judged = judge_by_basin(values, split.labels, comparator, tolerance, stderr, split.shared_stderr)
        per = judged["basins"]
    rank = {b: i for i, b in enumerate(split.order)}
    per = sorted(per, key=lambda p: rank[p["basin"]])
    head = headline_basin(per, split.order)
    field_ = {"headline": head["basin"], "all_runs_mean": sum(values) / len(values),
              "verdicts": [{"basin": p["basin"], "runs": [run_ids[i] for i in p["runs"]], "n": len(p["runs"]),
                            "measured": p["measured"],
                            "interval": None if p["interval"] is None else list(p["interval"]),
                            "interval_kind": p["interval_kind"], "verdict": p["verdict"]} for p in per],
              "holding_share": judged.get("holding_share"),
              "holding_share_interval": (list(judged["holding_share_interval"])
                                         if "holding_share_interval" in judged else None)}
    return {"measured": head["measured"], "interval": head["interval"], "interval_kind": head["interval_kind"],
            "n_seeds": len(head["runs"]) if head["interval_kind"] == "t95-seeds" else None,
            "values": values if len(per) == 1 and head["interval_kind"] == "t95-seeds" else None,
            "verdict": judged["verdict"], "basins": field_}
