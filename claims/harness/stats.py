r"""Intervals behind the verdicts: Student-t over seeds, normal over Monte Carlo, and what
would decide an inconclusive check (docs/settings.md, "Verdicts and intervals").

Trained-model checks over n seeds report the mean of the per-seed values and the 95 %
two-sided Student-t interval with n - 1 degrees of freedom,

    mean +- t_{0.975, n-1} * sd / sqrt(n),    sd = sample standard deviation (ddof = 1);

Monte Carlo checks report ``estimate +- 1.96 SE`` (1.96 = the normal 97.5 % quantile,
:data:`Z95`).  Exact checks have no interval.

Worked example (3 seeds; t_{0.975, 2} = 4.3027):

>>> mean, lo, hi = t_interval([0.0125, -0.0072, 0.0004])
>>> round(mean, 4), round(lo, 4), round(hi, 4)
(0.0019, -0.0228, 0.0266)
>>> [round(x, 3) for x in mc_interval(0.5, 0.1)]
[0.304, 0.696]

The interval straddles the tolerance 0.01 of ``|x| <= 0.01``: with the per-seed
standard deviation 0.0099 the mean 0.0019 is 0.0081 from the nearest decision boundary,
and the half-width t_{0.975, N-1} * 0.0099 / sqrt(N) drops below 0.0081 at N = 9 seeds
(2.306 * 0.0099 / 3 = 0.0076; at N = 8, 2.365 * 0.0099 / 2.83 = 0.0083):

>>> seeds_to_decide(0.0019, 0.0099, "abs<=", 0.01)
9
"""
from __future__ import annotations

import math
from typing import Iterable

import numpy as np
from scipy import stats as _st

from claims.harness.display import format_value as fv

__all__ = ["Z95", "LEVEL", "t_interval", "mc_interval", "seed_fields", "mc_fields",
           "bootstrap_fields", "widen_for_reference", "ratio_stderr",
           "interval_verdict", "holds_at", "distance_to_decision", "seeds_to_decide",
           "sd_from_t_interval", "decide_text", "MAX_SEEDS", "AFFORDABLE_SEEDS"]

#: confidence level of every interval in the reports.
LEVEL = 0.95
#: the normal 97.5 % quantile ("1.96").
Z95 = float(_st.norm.ppf(0.975))
#: :func:`seeds_to_decide` gives up (returns None) beyond this many seeds.
MAX_SEEDS = 100_000
#: beyond this many seeds, :func:`decide_text` says that seeds will not decide a check at
#: its tolerance (the basins issue: more seeds are not a plan beyond it).
AFFORDABLE_SEEDS = 64


def _t_quantile(n: int, level: float = LEVEL) -> float:
    return float(_st.t.ppf(0.5 + level / 2, n - 1))


def t_interval(values: Iterable[float], level: float = LEVEL) -> tuple[float, float, float]:
    """``(mean, lo, hi)``: the two-sided Student-t interval (n - 1 dof) of the mean.

    Needs at least 2 finite values (one seed has no spread, hence no interval).
    """
    v = np.asarray(list(values), dtype=float)
    if v.ndim != 1 or v.size < 2:
        raise ValueError(f"t_interval needs at least 2 values, got {v.size}")
    if not np.all(np.isfinite(v)):
        raise ValueError(f"t_interval needs finite values, got {v.tolist()}")
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    mean = float(v.mean())
    hw = _t_quantile(v.size, level) * float(v.std(ddof=1)) / math.sqrt(v.size)
    return mean, mean - hw, mean + hw


def mc_interval(estimate: float, stderr: float) -> tuple[float, float]:
    """``(estimate - 1.96 SE, estimate + 1.96 SE)``."""
    estimate, stderr = float(estimate), float(stderr)
    if not (math.isfinite(estimate) and math.isfinite(stderr) and stderr >= 0):
        raise ValueError(f"mc_interval needs a finite estimate and stderr >= 0, "
                         f"got {estimate!r}, {stderr!r}")
    return estimate - Z95 * stderr, estimate + Z95 * stderr


def seed_fields(values: Iterable[float]) -> dict:
    """The record fields of a check over seeds: ``claim.record(..., **seed_fields(v))``.

    ``measured`` = mean of the per-seed values, ``interval`` = its t interval,
    ``interval_kind = "t95-seeds"``, ``n_seeds`` = len(values), ``values`` = the values.
    """
    v = [float(x) for x in values]
    mean, lo, hi = t_interval(v)
    return {"measured": mean, "interval": (lo, hi), "interval_kind": "t95-seeds",
            "n_seeds": len(v), "values": v}


def mc_fields(estimate: float, stderr: float) -> dict:
    """The record fields of a Monte Carlo check: ``claim.record(..., **mc_fields(x, se))``."""
    lo, hi = mc_interval(estimate, stderr)
    return {"measured": float(estimate), "interval": (lo, hi), "interval_kind": "mc95"}


def bootstrap_fields(values: Iterable[float], statistic, rng: np.random.Generator,
                     resamples: int = 4000) -> dict:
    """The record fields of a statistic over >= 10 independent units (systems, say):
    ``measured`` = statistic(values), ``interval`` = the 95 % percentile bootstrap
    interval over ``resamples`` resamples with replacement (``rng`` from the claim id),
    ``interval_kind = "bootstrap95"``.  Unlike a normal-theory interval it needs no
    assumption on the tails of the units, which for raw-trajectory Monte Carlo are heavy.

    >>> f = bootstrap_fields(np.arange(20.0), np.mean, np.random.default_rng(0))
    >>> f["measured"], f["interval_kind"], f["interval"][0] < 9.5 < f["interval"][1]
    (9.5, 'bootstrap95', True)
    """
    v = np.asarray(list(values), dtype=float)
    if v.ndim != 1 or v.size < 10 or not np.all(np.isfinite(v)):
        raise ValueError(f"bootstrap_fields needs at least 10 finite values, got {v.size}")
    idx = rng.integers(0, v.size, size=(resamples, v.size))
    boot = np.array([statistic(v[i]) for i in idx])
    lo, hi = np.quantile(boot, [(1 - LEVEL) / 2, (1 + LEVEL) / 2])
    return {"measured": float(statistic(v)), "interval": (float(lo), float(hi)),
            "interval_kind": "bootstrap95"}


def widen_for_reference(fields: dict, rel_stderr: float) -> dict:
    """A seed interval of relative errors against a reference that is itself a Monte
    Carlo estimate (setting d's kappa, say): the reference's error is shared by every
    seed, so it is not in the seed spread; add it in quadrature to the half-width,

        hw' = sqrt(hw^2 + (1.96 * rel_stderr)^2)   around the same mean.

    An exact reference (``rel_stderr = 0``) leaves the fields as they are.

    >>> f = widen_for_reference({"measured": 0.0, "interval": (-0.03, 0.03),
    ...                          "interval_kind": "t95-seeds", "n_seeds": 3}, 0.02 / Z95)
    >>> [round(x, 4) for x in f["interval"]]
    [-0.0361, 0.0361]
    """
    rel_stderr = float(rel_stderr)
    if not (math.isfinite(rel_stderr) and rel_stderr >= 0):
        raise ValueError(f"rel_stderr must be finite and >= 0, got {rel_stderr!r}")
    if rel_stderr == 0:
        return dict(fields)
    m = fields["measured"]
    lo, hi = fields["interval"]
    hw = math.hypot(max(m - lo, hi - m), Z95 * rel_stderr)
    return {**fields, "interval": (m - hw, m + hw)}


def ratio_stderr(a, b, paired: bool = True) -> float:
    """Delta-method standard error of mean(a) / mean(b) over per-unit values (e.g. squared
    errors on held-out sequences): with R = mean(a) / mean(b),

        paired (a_i, b_i on the same unit):  se = |R| sd(a_i / mean(a) - b_i / mean(b)) / sqrt(n)
        independent samples:                 se = |R| sqrt(cv(a)^2 / n_a + cv(b)^2 / n_b),

    cv = sd / mean.  It is the held-out sampling error that every seed shares when the
    seeds are scored on the same sequences; :func:`widen_for_reference` adds it to a seed
    interval.  a = (1, 2, 3, 4) against b = (1, 1, 1, 1): R = 2.5, a_i / 2.5 - 1 =
    (-0.6, -0.2, 0.2, 0.6), sd 0.5164, se = 2.5 x 0.5164 / 2:

    >>> round(ratio_stderr([1, 2, 3, 4], [1, 1, 1, 1]), 4), round(ratio_stderr([1, 2, 3, 4], [1, 1], paired=False), 4)
    (0.6455, 0.6455)
    """
    a, b = np.asarray(a, dtype=float).ravel(), np.asarray(b, dtype=float).ravel()
    if a.size < 2 or b.size < 2:
        raise ValueError(f"a and b need at least 2 values each, got {a.size} and {b.size}")
    ma, mb = a.mean(), b.mean()
    if ma == 0 or mb == 0 or not (np.isfinite(ma) and np.isfinite(mb)):
        raise ValueError(f"mean(a) and mean(b) must be finite and non-zero, got {ma!r} and {mb!r}")
    r = abs(ma / mb)
    if paired:
        if a.size != b.size:
            raise ValueError(f"paired a and b need the same length, got {a.size} and {b.size}")
        return float(r * np.std(a / ma - b / mb, ddof=1) / math.sqrt(a.size))
    return float(r * math.hypot(np.std(a, ddof=1) / (ma * math.sqrt(a.size)),
                                np.std(b, ddof=1) / (mb * math.sqrt(b.size))))


# --------------------------------------------------------------------------- verdicts

def interval_verdict(lo: float, hi: float, comparator: str, tolerance: float) -> str:
    """``"holds"`` / ``"fails"`` / ``"inconclusive"`` of an interval against a tolerance.

    ``<=``: holds iff hi <= tol, fails iff lo > tol (``<``: hi < tol, lo >= tol);
    ``>=``: holds iff lo >= tol, fails iff hi < tol (``>``: lo > tol, hi <= tol);
    ``abs<=`` (a signed metric, |x| <= tol): holds iff [lo, hi] lies inside [-tol, tol],
    fails iff it lies entirely outside (lo > tol or hi < -tol); otherwise inconclusive.

    >>> interval_verdict(0.2, 0.9, "<=", 1), interval_verdict(-0.3, 1.2, "abs<=", 1)
    ('holds', 'inconclusive')
    """
    if comparator == "<=":
        return "holds" if hi <= tolerance else "fails" if lo > tolerance else "inconclusive"
    if comparator == "<":
        return "holds" if hi < tolerance else "fails" if lo >= tolerance else "inconclusive"
    if comparator == ">=":
        return "holds" if lo >= tolerance else "fails" if hi < tolerance else "inconclusive"
    if comparator == ">":
        return "holds" if lo > tolerance else "fails" if hi <= tolerance else "inconclusive"
    if comparator == "abs<=":
        if -tolerance <= lo and hi <= tolerance:
            return "holds"
        return "fails" if (lo > tolerance or hi < -tolerance) else "inconclusive"
    raise ValueError(f"no interval verdict for comparator {comparator!r}")


def holds_at(measured, comparator: str, interval=None):
    """The tightest tolerance at which the verdict would be ``"holds"``.

    With an interval: its far end (hi for ``<=``/``<``, lo for ``>=``/``>``,
    max(|lo|, |hi|) for ``abs<=``); without one: the measured value (|measured| for
    ``abs<=``).  ``None`` for ``==`` (no tolerance to tighten) and non-numbers.

    >>> holds_at(0.002, "abs<=", (-0.023, 0.027)), holds_at(-3e-13, "abs<=")
    (0.027, 3e-13)
    """
    if comparator == "==" or isinstance(measured, (bool, str)) or measured is None:
        return None
    if interval is None:
        return abs(measured) if comparator == "abs<=" else measured
    lo, hi = interval
    if comparator in ("<=", "<"):
        return hi
    if comparator in (">=", ">"):
        return lo
    return max(abs(lo), abs(hi))


def distance_to_decision(measured: float, comparator: str, tolerance: float) -> float:
    """How far the point estimate lies from the boundary an interval must clear.

    ``|tol - measured|`` for the one-sided comparators, ``|tol - |measured||`` for
    ``abs<=``: an interval of half-width below this distance decides the check.
    """
    if comparator == "abs<=":
        return abs(tolerance - abs(measured))
    return abs(tolerance - measured)


def sd_from_t_interval(lo: float, hi: float, n: int, level: float = LEVEL) -> float:
    """The per-seed standard deviation behind a t interval of ``n`` values."""
    return (hi - lo) / 2 * math.sqrt(n) / _t_quantile(n, level)


def seeds_to_decide(mean: float, sd: float, comparator: str, tolerance: float,
                    level: float = LEVEL) -> int | None:
    """Smallest n >= 2 with t_{n-1} sd / sqrt(n) < distance, if mean and sd stay as
    measured; ``None`` if the mean sits on the boundary or more than :data:`MAX_SEEDS`
    would be needed."""
    dist = distance_to_decision(mean, comparator, tolerance)
    if dist <= 0 or not math.isfinite(sd):
        return None
    if sd == 0:
        return 2
    n = max(2, int((Z95 * sd / dist) ** 2))      # normal approximation, a lower bound
    while n <= MAX_SEEDS:
        if _t_quantile(n, level) * sd / math.sqrt(n) < dist:
            return n
        n += 1
    return None


def decide_text(record: dict) -> str:
    """What would decide an inconclusive check (shown in the reports).

    Seeds (``t95-seeds``): the half-width, the distance of the mean from the boundary and
    the estimated number of seeds (:func:`seeds_to_decide`, from the per-seed standard
    deviation recovered from the interval); beyond :data:`AFFORDABLE_SEEDS`, that seeds will
    not decide it at this tolerance.  Monte Carlo (``mc95``): the factor of samples that
    would shrink the half-width (as 1/sqrt(samples)) below that distance.  One-sided and
    negative tolerances alike: the distance is to the tolerance itself, which the
    interval's far end must clear (its upper end for ``<= -0.1``).

    A record judged by basin (its ``basins`` field, claims/harness/basins.py): a ``mixed`` check is
    a finding that seeds do not change (runs end at different stationary points; more
    seeds only narrow the share of runs in holding basins); an inconclusive one names each
    undecided basin with what would decide it.
    """
    bf = record.get("basins")
    if bf and len(bf["verdicts"]) > 1:
        if record.get("verdict") == "mixed":
            n = sum(b["n"] for b in bf["verdicts"])
            k = sum(b["n"] for b in bf["verdicts"] if b["verdict"] == "holds")
            lo, hi = bf["holding_share_interval"]
            return (f"seeds will not decide it: the runs end at different stationary points, {k} of {n} in "
                    f"basins that hold (Clopper-Pearson [{lo:.2f}, {hi:.2f}]) and the others in basins that "
                    "fail; more seeds only narrow that share")
        parts = []
        for b in bf["verdicts"]:
            if b["verdict"] != "inconclusive":
                continue
            sub = {**record, "basins": None, "measured": b["measured"], "interval": b["interval"],
                   "interval_kind": b["interval_kind"],
                   "n_seeds": b["n"] if b["interval_kind"] == "t95-seeds" else None}
            parts.append(f"basin {b['basin']} ({b['n']} run{'s' if b['n'] != 1 else ''}): {decide_text(sub)}")
        return "; ".join(parts)

    lo, hi = record["interval"]
    m, tol, cmp_ = record["measured"], record["tolerance"], record["comparator"]
    hw = (hi - lo) / 2
    dist = distance_to_decision(m, cmp_, tol)
    side = "holds" if interval_verdict(m, m, cmp_, tol) == "holds" else "fails"
    head = (f"the interval half-width is {fv(hw)} against a tolerance of {fv(tol)}; the "
            f"estimate {fv(m)} is {fv(dist)} from the decision boundary")
    if record.get("interval_kind") == "t95-seeds" and record.get("n_seeds"):
        n = record["n_seeds"]
        sd = sd_from_t_interval(lo, hi, n)
        need = seeds_to_decide(m, sd, cmp_, tol)
        if need is None or need > AFFORDABLE_SEEDS:
            return (f"seeds will not decide it at this tolerance: {head}; with the per-seed sd "
                    f"{fv(sd)} it would take " + ("more than 100000" if need is None else f"about {need}")
                    + f" seeds (n = {n} now)")
        return (f"more seeds: {head}; with the per-seed sd {fv(sd)} about {need} seeds "
                f"would resolve it (towards {side}, if the mean stays; n = {n} now)")
    if dist <= 0:
        return f"{head}: the estimate sits on the boundary"
    factor = (hw / dist) ** 2
    what = {"bootstrap95": "independent units", "t95-fit": "fitted points"}.get(record.get("interval_kind"))
    if what:
        return (f"more {what}: {head}; about {factor:.2g}x the {what} would resolve it (towards "
                f"{side}) if the interval shrinks as 1/sqrt(their number)")
    return (f"more Monte Carlo samples: {head}; about {factor:.2g}x the samples would "
            f"resolve it (towards {side}) if the standard error shrinks as 1/sqrt(samples)")
