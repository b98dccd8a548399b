"""The trained runs behind a record: their entries, values and per-run verdicts, and clipped intervals.

A check on trained runs names them as :class:`~claims.harness.identity.RunRef` s
(claims/harness/runs.py); :func:`run_entries` turns them into
:class:`~claims.harness.identity.RunEntry` s with one value each -- ``run_values[i]``, else
the per-seed ``values[i]`` of a seed interval, else ``measured`` for a single run.  A record
judged by run (``per_run=True``, claims/harness/shares.py) keeps the counts in its
``per_run`` field (:func:`per_run_field`).  :func:`clip_intervals` clips a record's
intervals to its quantity's range.

>>> from claims.harness.identity import RunRef
>>> [e.value for e in run_entries([RunRef("ar1/a/seed=0", 0), RunRef("ar1/a/seed=1", 1)], [0.1, 0.2], 0.15, {})]
[0.1, 0.2]
"""
from __future__ import annotations

import math

from claims.harness import stats
from claims.harness.basins import BasinSplit
from claims.harness.identity import RunEntry, RunRef, per_run_extras
from claims.harness.plain import to_builtin
from claims.harness.runform import seed_index
from claims.harness.shares import TARGET_SHARE

__all__ = ["run_inputs", "finite_list", "per_run_field", "clip_intervals", "run_entries"]


def run_inputs(what: str, why: str, runs, run_values, basins, given) -> list:
    """The validated run values of a record judged by run or by basin (``what``, its option)."""
    if basins is not None and not isinstance(basins, BasinSplit):
        raise ValueError(f"basins must be a claims.harness.basins.BasinSplit, got {type(basins).__name__}")
    if (runs is None or run_values is None or not isinstance(runs, (list, tuple))
            or not all(isinstance(r, RunRef) for r in runs)):
        raise ValueError(f"{what} need runs (RunRef s) and their run_values")
    if any(x is not None for x in given):
        raise ValueError(f"{why}: give run_values, not measured, interval, interval_kind, n_seeds or values")
    return finite_list(run_values, len(runs), "run_values")


def finite_list(values, n: int, name: str) -> list:
    """``values`` as ``n`` finite numbers (ValueError naming ``name`` otherwise)."""
    v = to_builtin(values, _path=name)
    if (not isinstance(v, list) or len(v) != n
            or not all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in v)):
        raise ValueError(f"{name} must be {n} finite numbers, got {values!r}")
    return v


def per_run_field(share, comparator, tolerance, source, shared_stderr, run_ids, split) -> dict:
    """The ``per_run`` field of a record judged by run (:func:`make_record`, ``per_run=True``)."""
    def counts(sv):
        return {"n": sv.n, "held": sv.held, "undecided": sv.undecided, "failed": sv.failed,
                "share": sv.share, "interval": list(sv.interval), "verdict": sv.verdict}
    ends = [stats.holds_at(r.value, comparator, r.interval) for r in share.runs]
    every = (None if comparator == "==" else max(ends) if comparator in ("<=", "<", "abs<=") else min(ends))
    return {"comparator": comparator, "tolerance": tolerance, "tolerance_source": source, "rule": share.rule,
            "target": TARGET_SHARE, "shared_stderr": shared_stderr or None, **counts(share),
            "every_run_holds_at": every,
            "basins": None if split is None else [
                {"basin": b.basin, "runs": [i for i, lab in zip(run_ids, split.labels) if lab == b.basin], **counts(b)}
                for b in share.basins]}


def clip_intervals(iv, basin_field, bounds):
    """(interval, basins field, clipped): every interval of a record -- its own and its
    basins' -- clipped to ``bounds`` (``(lo, hi)``, None for an open end), and whether any moved.

    >>> clip_intervals([-0.1, 0.2], None, (0.0, 1.0))
    ([0.0, 0.2], None, True)
    """
    lo_b, hi_b = bounds
    hit = False

    def clip(pair):
        nonlocal hit
        if pair is None:
            return None
        a, b = pair
        a2 = a if lo_b is None else max(a, lo_b)
        b2 = b if hi_b is None else min(b, hi_b)
        hit = hit or (a2, b2) != (a, b)
        return [a2, b2]
    iv = clip(iv)
    if basin_field is not None:
        basin_field = {**basin_field, "verdicts": [{**v, "interval": clip(v["interval"])}
                                                   for v in basin_field["verdicts"]]}
    return iv, basin_field, hit


def run_entries(runs, values, measured, details, run_values=None, run_stderr=None) -> list | None:
    """Validated run entries (see :func:`make_record`).

    ``runs``: :class:`RunEntry` s, or :class:`RunRef` s (claims/harness/runs.py) that take their
    values from ``run_values``, else from the per-seed ``values`` of a seed interval, else
    (a single run) ``measured``; their standard errors from ``run_stderr`` (or None); and
    the per-run scalars of ``details`` (:func:`per_run_extras`).
    """
    if runs is None:
        if run_values is not None or run_stderr is not None:
            raise ValueError("run_values and run_stderr need runs")
        return None
    if isinstance(runs, (str, RunRef, RunEntry)) or not isinstance(runs, (list, tuple)) or not runs:
        raise ValueError(f"runs must be a non-empty list of RunRef or RunEntry, got {runs!r}")
    if all(isinstance(r, RunEntry) for r in runs):
        if run_values is not None or run_stderr is not None:
            raise ValueError("RunEntry runs carry their own values and standard errors")
        entries = []
        for r in runs:
            extra = to_builtin(r.extra, _path="extra")
            if not isinstance(extra, dict) or not all(x is None or isinstance(x, (bool, int, float, str))
                                                      for x in extra.values()):
                raise ValueError(f"a run's extra must map names to scalars, got {r.extra!r} ({r.run})")
            entries.append(RunEntry(run=r.run, seed=to_builtin(r.seed, _path="seed"),
                                    value=to_builtin(r.value, _path="value"),
                                    stderr=to_builtin(r.stderr, _path="stderr"), extra=extra))
    elif all(isinstance(r, RunRef) for r in runs):
        if run_values is not None:
            if values is not None or len(runs) == 1:
                raise ValueError("run_values are for several runs without a seed interval: a seed "
                                 "interval's runs take its values, a single run takes measured")
            vals = to_builtin(run_values, _path="run_values")
        elif values is not None:
            vals = values
        elif len(runs) == 1:
            vals = [measured]
        else:
            raise ValueError("runs need their per-run values: run_values, or the per-seed values "
                             "of a 't95-seeds' interval (a single run takes measured)")
        if not isinstance(vals, list) or len(vals) != len(runs):
            raise ValueError(f"{len(runs)} runs for {len(vals) if isinstance(vals, list) else vals!r} "
                             "per-run values")
        errs = [None] * len(runs) if run_stderr is None else to_builtin(run_stderr, _path="run_stderr")
        if not isinstance(errs, list) or len(errs) != len(runs):
            raise ValueError(f"run_stderr must give one standard error (or None) per run, got {run_stderr!r}")
        extras = per_run_extras(details, len(runs))
        entries = [RunEntry(run=r.run, seed=r.seed, value=v, stderr=e, extra=x)
                   for r, v, e, x in zip(runs, vals, errs, extras)]
    else:
        raise ValueError(f"runs must be all RunRef or all RunEntry, got {runs!r}")
    for e in entries:
        if not isinstance(e.run, str) or not e.run or (e.seed is not None and (isinstance(e.seed, bool)
                                                                             or not isinstance(e.seed, int))):
            raise ValueError(f"a run needs a non-empty id and an int seed index (or None), got {e!r}")
        for name, v in (("value", e.value), ("stderr", e.stderr)):
            if (v is not None or name == "value") and (isinstance(v, bool) or not isinstance(v, (int, float))):
                raise ValueError(f"a run's {name} must be a number, got {v!r} ({e.run})")
        if e.stderr is not None and not (math.isfinite(e.stderr) and e.stderr >= 0):
            raise ValueError(f"a run's stderr must be finite and >= 0, got {e.stderr!r} ({e.run})")
        if e.seed is not None and seed_index(e.run) != e.seed:
            raise ValueError(f"run {e.run!r} does not name its seed index {e.seed}")
    if len({e.run for e in entries}) != len(entries):
        raise ValueError(f"runs must name each run once, got {[e.run for e in entries]}")
    if values is not None and [e.value for e in entries] != list(values):
        raise ValueError("the runs' values must be the per-seed values, in order")
    return entries
