r"""Verdicts by run: where a statement is about each trained layer, each run holds or fails, and the check is the share of runs that hold (docs/settings.md, "Verdicts by run").

"Trained AR(1) layers reach theta*", "trained layers are banded", "a trained layer
predicts on par with the filter" are statements about each layer the protocol produces.
Where a run's value is exact (computed from its weights against an exact reference) it
holds or fails by itself; what is uncertain is how often the protocol produces a layer
that holds -- a binomial share -- not the mean of the values.

* **A run** (:func:`run_verdict`): an exact value holds or fails against the tolerance; a
  value with a standard error (its own, from held-out sequences, and/or one every run
  shares, such as a Monte Carlo reference, combined in quadrature) holds when
  value +- 1.96 SE lies inside the tolerance, fails when it lies entirely outside, and is
  *undecided* otherwise (:func:`claims.harness.stats.interval_verdict`).
* **A check** (:func:`share_verdict`): with k of n runs holding and u undecided, the
  share's 95 % interval is [CP_lo(k, n), CP_hi(k + u, n)] (Clopper-Pearson; undecided runs
  count as failing for the lower end and as holding for the upper end).  Against the
  target share :data:`TARGET_SHARE` = 1/2 ("the protocol produces such a layer more often
  than not") the check **holds** when the lower end is at least the target, **fails** when
  the upper end is below it, and is **inconclusive** otherwise -- **mixed** when some runs
  hold and some fail (``rule="share"``).  A negative control **fails** only when every run
  fails (``rule="control"``), and a statement about *every* run the checks read -- a premise,
  a null twin -- holds only when every run holds and fails when any run fails
  (``rule="every"``): no share is needed where the statement quantifies over all runs.
* **Per basin**, beside it, the same rule on the basin's runs (runs that end at different
  stationary points are outcomes: the share per basin says which outcomes hold).

At n = 8 runs only "8 of 8 hold" holds (CP_lo(8, 8) = 0.631) and only "0 of 8" fails
(CP_hi(0, 8) = 0.369); at n = 3 (the paper's seed count) no share decides: 3 of 3 gives
CP_lo = 0.292, 0 of 3 gives CP_hi = 0.708, and :func:`runs_to_decide` says how many
runs would.

Worked example (the paper profile's ``banding/trained-odd-share/b/s=3``: all 8 runs above
the 1 % tolerance, two of them in one basin):

>>> j = judge_runs([0.0176, 0.02, 0.05, 0.1, 0.2, 0.256, 0.03, 0.04], "<=", 0.01,
...                labels=["p"] * 6 + ["q"] * 2)
>>> j.verdict, j.held, j.failed, [round(x, 3) for x in j.interval]
('fails', 0, 8, [0.0, 0.369])
>>> [(b.basin, b.held, b.n, b.verdict) for b in j.basins]
[('p', 0, 6, 'fails'), ('q', 0, 2, 'inconclusive')]
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from claims.harness.basins import clopper_pearson
from claims.harness.stats import Z95, interval_verdict

__all__ = ["TARGET_SHARE", "RULES", "RunVerdict", "ShareVerdict", "run_verdict", "share_interval",
           "share_verdict", "judge_runs", "runs_to_decide", "decide_text"]

#: the share of runs that must hold for a per-layer statement to hold (ours; docs/settings.md,
#: "Verdicts by run"): the protocol produces such a layer more often than not.
TARGET_SHARE = 0.5
#: :func:`runs_to_decide` gives up beyond this many runs.
MAX_RUNS = 64


@dataclass(frozen=True)
class RunVerdict:
    """One run judged alone: its value, the interval value +- 1.96 SE (None: exact) and
    ``verdict`` -- ``"holds"``, ``"fails"`` or ``"undecided"``."""

    value: float
    interval: tuple | None
    verdict: str


@dataclass(frozen=True)
class ShareVerdict:
    """The share of runs that hold: ``held``, ``undecided``, ``failed`` of ``n``, the share
    ``held / n``, its ``interval`` [CP_lo(k, n), CP_hi(k + u, n)] and ``verdict``; for a
    whole check also ``runs`` (one :class:`RunVerdict` each, in run order) and ``basins``
    (one ShareVerdict per basin, with ``basin`` its name)."""

    held: int
    undecided: int
    failed: int
    interval: tuple
    verdict: str
    basin: str | None = None
    runs: tuple = ()
    basins: tuple = ()
    rule: str = "share"

    @property
    def n(self) -> int:
        return self.held + self.undecided + self.failed

    @property
    def share(self) -> float:
        return self.held / self.n


def run_verdict(value: float, comparator: str, tolerance: float, stderr: float | None = None,
                shared_stderr: float = 0.0) -> RunVerdict:
    """One run against the tolerance (module doc): exact without a standard error, else
    value +- 1.96 sqrt(stderr^2 + shared_stderr^2).

    >>> run_verdict(0.004, "abs<=", 0.01).verdict, run_verdict(0.004, "abs<=", 0.01, 0.004).verdict
    ('holds', 'undecided')
    """
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"a run's value must be finite, got {value!r}")
    se = math.hypot(float(stderr or 0.0), float(shared_stderr))
    if not math.isfinite(se):
        raise ValueError(f"a run's standard error must be finite, got {stderr!r} and {shared_stderr!r}")
    if se == 0:
        v = interval_verdict(value, value, comparator, tolerance)
        return RunVerdict(value, None, v)
    lo, hi = value - Z95 * se, value + Z95 * se
    v = interval_verdict(lo, hi, comparator, tolerance)
    return RunVerdict(value, (lo, hi), "undecided" if v == "inconclusive" else v)


def share_interval(k: int, u: int, n: int) -> tuple[float, float]:
    """[CP_lo(k, n), CP_hi(k + u, n)]: the 95 % interval of the share of runs that hold when
    k hold and u are undecided.

    >>> [round(x, 3) for x in share_interval(8, 0, 8)], [round(x, 3) for x in share_interval(2, 1, 3)]
    ([0.631, 1.0], [0.094, 1.0])
    """
    if not (isinstance(k, int) and isinstance(u, int) and isinstance(n, int) and k >= 0 and u >= 0
            and k + u <= n and n >= 1):
        raise ValueError(f"k, u and n must be integers with 0 <= k, 0 <= u, k + u <= n, n >= 1, got {k!r}, {u!r}, {n!r}")
    return clopper_pearson(k, n)[0], clopper_pearson(k + u, n)[1]


#: the rules a check judged by run can follow (module doc)
RULES = ("share", "control", "every")


def share_verdict(k: int, u: int, n: int, target: float = TARGET_SHARE, rule: str = "share",
                  basin: str | None = None) -> ShareVerdict:
    """The verdict of k holding and u undecided runs of n (module doc): ``rule="share"``, the
    share against ``target``; ``"control"``, a negative control, ``"fails"`` only when every
    run fails; ``"every"``, ``"holds"`` only when every run holds, ``"fails"`` when any fails.

    >>> share_verdict(8, 0, 8).verdict, share_verdict(0, 0, 8).verdict, share_verdict(3, 0, 3).verdict
    ('holds', 'fails', 'inconclusive')
    >>> share_verdict(5, 0, 8).verdict, share_verdict(0, 1, 8, rule="control").verdict
    ('mixed', 'inconclusive')
    >>> share_verdict(3, 0, 3, rule="every").verdict, share_verdict(2, 0, 3, rule="every").verdict
    ('holds', 'fails')
    """
    if not 0 < target < 1:
        raise ValueError(f"target must be a share in (0, 1), got {target!r}")
    if rule not in RULES:
        raise ValueError(f"rule must be one of {RULES}, got {rule!r}")
    lo, hi = share_interval(k, u, n)
    f = n - k - u
    if rule == "every":
        v = "holds" if k == n else "fails" if f else "inconclusive"
    elif rule == "control" and f == n:
        v = "fails"
    elif lo >= target:
        v = "holds"
    elif hi < target and rule == "share":
        v = "fails"
    else:
        v = "mixed" if k > 0 and f > 0 else "inconclusive"
    return ShareVerdict(k, u, f, (lo, hi), v, basin, rule=rule)


def judge_runs(values: Sequence[float], comparator: str, tolerance: float, stderr: Sequence | None = None,
               shared_stderr: float = 0.0, labels: Sequence[str] | None = None, order: Sequence[str] | None = None,
               target: float = TARGET_SHARE, rule: str = "share") -> ShareVerdict:
    """Every run (:func:`run_verdict`), the check's share (:func:`share_verdict`) and, with
    ``labels`` (one basin name per run; ``order``: the basins' order, default first
    appearance), the same per basin."""
    values = list(values)
    if not values:
        raise ValueError("judge_runs needs at least one run")
    errs = [None] * len(values) if stderr is None else list(stderr)
    if len(errs) != len(values):
        raise ValueError(f"stderr must give one standard error (or None) per run ({len(values)}), got {len(errs)}")
    runs = tuple(run_verdict(v, comparator, tolerance, e, shared_stderr) for v, e in zip(values, errs))

    def count(idx):
        vs = [runs[i].verdict for i in idx]
        return vs.count("holds"), vs.count("undecided")

    k, u = count(range(len(runs)))
    basins = ()
    if labels is not None:
        labels = list(labels)
        if len(labels) != len(values):
            raise ValueError(f"labels must name one basin per run ({len(values)}), got {len(labels)}")
        names = list(order) if order is not None else list(dict.fromkeys(labels))
        basins = tuple(share_verdict(*count([i for i, b in enumerate(labels) if b == name]),
                                     labels.count(name), target, rule, basin=name)
                       for name in names if name in labels)
    whole = share_verdict(k, u, len(runs), target, rule)
    return ShareVerdict(whole.held, whole.undecided, whole.failed, whole.interval, whole.verdict,
                        runs=runs, basins=basins, rule=rule)


def runs_to_decide(k: int, u: int, n: int, target: float = TARGET_SHARE) -> int | None:
    """The smallest number of runs N > n at which the share's interval would clear the target
    if the shares of holding and undecided runs stayed as measured (k / n, u / n); None
    when the share sits too near the target to decide within :data:`MAX_RUNS` runs.

    >>> runs_to_decide(3, 0, 3), runs_to_decide(0, 0, 3), runs_to_decide(4, 0, 8)
    (6, 6, None)
    """
    for N in range(n + 1, MAX_RUNS + 1):
        kk, uu = round(k * N / n), round(u * N / n)
        kk, uu = min(kk, N), min(uu, N - min(kk, N))
        lo, hi = share_interval(kk, uu, N)
        if lo >= target or hi < target:
            return N
    return None


def decide_text(share: ShareVerdict, target: float = TARGET_SHARE) -> str:
    """What would decide an undecided share (shown in the reports).

    >>> print(decide_text(share_verdict(3, 0, 3)))
    3 of 3 runs hold: the share's interval [0.29, 1.00] straddles the target 0.5; 3 runs do not decide it, about 6 would if the shares stay
    """
    counts = (f"{share.held} of {share.n} runs hold" + (f", {share.undecided} undecided" if share.undecided else "")
              + (f", {share.failed} fail" if share.failed else ""))
    if share.rule == "control":
        if share.held:
            return (f"{counts}: a negative control fails only when every run fails, and these runs meet the "
                    "tolerance -- more runs cannot change that")
        return (f"{counts}: a negative control fails only when every run fails; the undecided runs' own "
                "intervals decide it (more held-out sequences), not more runs")
    if share.rule == "every":
        return (f"{counts}: the statement is about every run, so the undecided runs' own intervals decide it "
                "(more held-out sequences), not more runs")
    lo, hi = share.interval
    head = (f"{share.held} of {share.n} runs hold"
            + (f", {share.undecided} undecided" if share.undecided else "")
            + (f", {share.failed} fail" if share.failed and share.held else "")
            + f": the share's interval [{lo:.2f}, {hi:.2f}] straddles the target {target:g}")
    if share.verdict == "mixed":
        head += "; the runs differ (some layers hold, others fail): more runs narrow the share of those that hold"
    need = runs_to_decide(share.held, share.undecided, share.n, target)
    if need is None:
        return head + f"; the share is too near the target for up to {MAX_RUNS} runs to decide it"
    return head + f"; {share.n} runs do not decide it, about {need} would if the shares stay"
