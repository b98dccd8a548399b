"""What a command will cost, estimated from its arguments before any work, and the budget it must fit.

A :class:`Cost` is (seconds, bytes, what): the wall-clock seconds and the peak memory a piece
of work is expected to take on this machine, and the work in words that name the options
setting its size.  :func:`check_cost` holds it against the budget: past :data:`BUDGET_SECONDS`
or :data:`BUDGET_BYTES` it is refused unless ``--yes`` is given; past the memory this machine
has available now (:func:`available_memory`, /proc/meminfo's MemAvailable) it is refused
always, ``--yes`` or not, since it could only end in an allocation failure.  Work worth a
mention (over :data:`NOTE_SECONDS` or :data:`NOTE_BYTES`) is announced in one line on stderr
before it starts.  The commands (claims/cli/commands.py, compute_commands.py,
sweep_command.py) call :func:`enforce`, which prints that line or refuses in one line
(exit status 2).

Each estimator is the algorithm's complexity times a constant measured on this project's
machine (2 cores of an AMD EPYC, shared with a niced training job; torch 2.13 CPU): the
estimate is meant to be right within a factor of about 3, which is what a budget needs.
They are never asserted as timings (the tests check the model's shape and the refusals).

>>> c = Cost(6500.0, 3 * 2 ** 29, "kappa by exact rational arithmetic at --T 300")
>>> describe(c)
'about 1.8 h and 1.5 GiB'
>>> try:
...     check_cost(c, yes=False, budget_s=3600, budget_bytes=2 ** 33, available=2 ** 34)
... except CostRefused as exc:
...     print(exc)
kappa by exact rational arithmetic at --T 300 would take about 1.8 h and 1.5 GiB, past the budget of 1 h and 8 GiB; give --yes to run it anyway
>>> check_cost(c, yes=True, budget_s=3600, budget_bytes=2 ** 33, available=2 ** 34)
'kappa by exact rational arithmetic at --T 300: about 1.8 h and 1.5 GiB'
>>> try:
...     check_cost(c, yes=True, available=2 ** 30)
... except CostRefused as exc:
...     print(exc)
kappa by exact rational arithmetic at --T 300 needs about 1.5 GiB of memory, more than the 1 GiB this machine has available (--yes does not override this)
"""
from __future__ import annotations

import math
import os
import sys
from dataclasses import dataclass

__all__ = ["Cost", "CostRefused", "check_cost", "enforce", "available_memory", "describe", "duration",
           "size", "kappa_cost", "optimum_cost", "train_cost", "runs_cost", "BUDGET_SECONDS",
           "BUDGET_BYTES", "NOTE_SECONDS", "NOTE_BYTES", "BUDGET_TEXT"]

#: the work a command may start without ``--yes``: one hour of this machine's time ...
BUDGET_SECONDS = 3600.0
#: ... and 8 GiB of memory (beyond the memory available now nothing runs, ``--yes`` or not)
BUDGET_BYTES = 8 * 2 ** 30
#: work expected to take longer than this, or more memory than :data:`NOTE_BYTES`, is announced
NOTE_SECONDS = 10.0
NOTE_BYTES = 2 ** 30
#: the budget in words, for the help texts
BUDGET_TEXT = ("1 h and 8 GiB; the estimate is printed past 10 s or 1 GiB; more memory than this machine "
               "has available is refused even so")


@dataclass(frozen=True)
class Cost:
    """Expected wall-clock ``seconds`` and peak ``bytes`` of a piece of work, ``what`` it is (in
    words that name the options setting its size), and ``hint``: a cheaper way, or ""."""

    seconds: float
    bytes: int
    what: str
    hint: str = ""

    def __post_init__(self):
        if not (isinstance(self.seconds, (int, float)) and self.seconds >= 0):
            raise ValueError(f"seconds must be a number >= 0, got {self.seconds!r}")
        if isinstance(self.bytes, bool) or not isinstance(self.bytes, int) or self.bytes < 0:
            raise ValueError(f"bytes must be an integer >= 0, got {self.bytes!r}")
        if not isinstance(self.what, str) or not self.what:
            raise ValueError(f"what must be a non-empty string, got {self.what!r}")


class CostRefused(ValueError):
    """Work past the budget (without ``--yes``) or past the available memory; one line."""


def available_memory(meminfo: str = "/proc/meminfo") -> int | None:
    """Bytes of memory available to a new allocation now: ``meminfo``'s MemAvailable, else
    the free pages (``os.sysconf``), else None (unknown: no memory refusal)."""
    try:
        with open(meminfo, encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, ValueError, OSError):          # pragma: no cover - not POSIX
        return None


def duration(sec: float) -> str:
    """``42 s``, ``18 min``, ``2.0 h``, ``3.1e+05 h``."""
    if sec < 120:
        return f"{sec:.0f} s"
    if sec < 3600:
        return f"{sec / 60:.0f} min"
    return f"{sec / 3600:.2g} h"


def size(n: float) -> str:
    """``512 MiB``, ``1.0 GiB``, ``6.8e+10 GiB``."""
    return f"{n / 2 ** 20:.0f} MiB" if n < 2 ** 30 else f"{n / 2 ** 30:.2g} GiB"


def describe(cost: Cost) -> str:
    """``about 2 min and 150 MiB`` (``about 2 min`` where the memory is not this machine's: 0)."""
    return f"about {duration(cost.seconds)}" + (f" and {size(cost.bytes)}" if cost.bytes else "")


def check_cost(cost: Cost, *, yes: bool, budget_s: float | None = None, budget_bytes: int | None = None,
               available: int | None | str = "now") -> str | None:
    """The line announcing ``cost`` (None when it is not worth a mention), or :class:`CostRefused`.

    Refused always when ``cost.bytes`` exceeds ``available`` (default: :func:`available_memory`
    now; None: unknown, not checked); refused unless ``yes`` when it exceeds ``budget_s`` or
    ``budget_bytes`` (default: :data:`BUDGET_SECONDS`, :data:`BUDGET_BYTES`)."""
    budget_s = BUDGET_SECONDS if budget_s is None else budget_s
    budget_bytes = BUDGET_BYTES if budget_bytes is None else budget_bytes
    hint = f"; {cost.hint}" if cost.hint else ""
    free = available_memory() if available == "now" else available
    if free is not None and cost.bytes > free:
        raise CostRefused(f"{cost.what} needs about {size(cost.bytes)} of memory, more than the {size(free)} "
                          f"this machine has available (--yes does not override this){hint}")
    if not yes and (cost.seconds > budget_s or cost.bytes > budget_bytes):
        raise CostRefused(f"{cost.what} would take {describe(cost)}, past the budget of {duration(budget_s)} "
                          f"and {size(budget_bytes)}; give --yes to run it anyway{hint}")
    if cost.seconds > NOTE_SECONDS or cost.bytes > NOTE_BYTES:
        return f"{cost.what}: {describe(cost)}"
    return None


def enforce(parser, cost: Cost, *, yes: bool) -> None:
    """:func:`check_cost` for a command: the announcement on stderr (``<prog>: estimate: ...``),
    or the refusal as one line and exit status 2 (claims.cli.shared.refuse)."""
    from claims.cli.shared import refuse

    try:
        note = check_cost(cost, yes=yes)
    except CostRefused as exc:
        refuse(parser, str(exc))
    if note:
        print(f"{parser.prog}: estimate: {note}", file=sys.stderr, flush=True)


# ----------------------------------------------------------------------------- kappa
#: exact rational kappa: the integrands' T x T integer matrices hold entries of O(T^2) bits
#: (polynomials of degree O(T) packed at lam = 2^k, k = O(T) bits), so O(T^4) bytes: measured
#: peak resident 2.3, 10.4, 32, 148 MiB at T = 30, 45, 60, 90 (d = 5), i.e. 2.4-2.7 T^4 bytes.
#: Its time is theory.kappa.exact_seconds (O(T^4.7) Fraction work, measured there).
EXACT_BYTES_PER_T4 = 2.7
#: Gauss-Legendre kappa: 3T + 1 nodes, O(T^2) forms each, so O(T^3): measured 0.11, 0.99, 8.1 s
#: at T = 60, 120, 240 (about 6e-7 T^3 s); its memory is theory.kappa.route_bytes.
QUADRATURE_SECONDS_PER_T3 = 6e-7
#: Monte Carlo kappa over systems: O(T^2) exact moments per system (times d/5 for the
#: covariance): measured 0.58 s (T = 30) and 2.1 s (T = 60) for 2e4 systems, 0.78 s in
#: setting d, i.e. at most 4.5e-8 m T^2 s.
MC_MOMENTS_SECONDS = 4.5e-8
#: Monte Carlo kappa over raw trajectories: O(T d^2) per trajectory: measured 0.61 s (T = 30)
#: and 1.5 s (T = 60) for 2e5 trajectories at d = 5, i.e. about 1.3e-7 m T s.
MC_TRAJECTORY_SECONDS = 1.3e-7


def kappa_cost(family, method: str, m: int) -> Cost:
    """The cost of theory.kappa.kappa(family, method=method, m=m) (``method`` resolved: no "auto")."""
    from theory import kappa as kappa_mod

    T, d = family.T, family.d
    grow = max(1.0, d / 5.0)
    if method == "exact-rational":
        quick = "gauss-legendre" in kappa_mod.exact_routes(family)
        return Cost(kappa_mod.exact_seconds(T, d), int(EXACT_BYTES_PER_T4 * float(T) ** 4),
                    f"kappa by exact rational arithmetic at --T {T}",
                    "--method quadrature gives the same value to about 1e-13 far sooner" if quick else "")
    if method == "gauss-legendre":
        return Cost(QUADRATURE_SECONDS_PER_T3 * float(T) ** 3, kappa_mod.route_bytes(family, method),
                    f"kappa by quadrature at --T {T}")
    samples = 16 * m                                     # the per-sample N_j, D_j arrays
    if method == "mc-moments":
        chunk = max(1, min(4096, kappa_mod.MAX_BYTES // max(1, kappa_mod.route_bytes(family, method, 1))))
        return Cost(MC_MOMENTS_SECONDS * m * float(T) ** 2 * grow,
                    kappa_mod.route_bytes(family, method, chunk) + samples,
                    f"Monte Carlo kappa over --mc-systems {m} systems at --T {T}", "fewer systems")
    return Cost(MC_TRAJECTORY_SECONDS * m * T * grow ** 2, kappa_mod.route_bytes(family, method) + samples,
                f"Monte Carlo kappa over --mc-systems {m} trajectories at --T {T}", "fewer trajectories")


# ----------------------------------------------------------------------------- optimum
#: the exact moments of window s: work proportional to the tables they hold
#: (theory.population.moment_memory): measured 0.03-9.3 s for 7 MiB-617 MiB, at most 1.5e-8 s a
#: byte; the peak resident memory is up to 1.8 times the tables (1.1 GiB at s = 8).
MOMENT_SECONDS_PER_BYTE = 1.5e-8
MOMENT_PEAK = 2
#: one start of the multi-start minimisation, the in-class ones included (BFGS over the
#: f = (s+1)^2 s entries of W_QK and b, each loss O(f^2)): measured 0.049, 0.08, 0.19, 0.71 s
#: a start at s = 2, 4, 6, 8 (T = 30, 32 starts).
START_SECONDS = (0.02, 5e-4, 1e-6)                     # 0.02 + 5e-4 f + 1e-6 f^2
#: setting d's antithetic raw trajectories: O(T) each, about 2e-5 s a trajectory at T = 30
#: (theory.optimum.MAX_TRAJECTORIES's note; measured 0.7 s for 1e5 at s = 2).
TRAJECTORY_SECONDS_AT_30 = 2e-5


def optimum_cost(family, s: int, starts: int, trajectories: int, in_class: bool) -> Cost:
    """The cost of theory.optimum.optimum_for(family, s, ...) (``in_class`` False: a little
    less, not counted)."""
    from theory.population import moment_memory, moments_route

    need = moment_memory(s, family.T)
    f = (s + 1) ** 2 * s
    a, b, c = START_SECONDS
    seconds = starts * (a + b * f + c * f * f)
    if moments_route(family) == "monte-carlo":
        seconds += TRAJECTORY_SECONDS_AT_30 * trajectories * family.T / 30
        what = f"the optimum of --s {s} over --starts {starts} from --trajectories {trajectories} at --T {family.T}"
    else:
        seconds += MOMENT_SECONDS_PER_BYTE * need
        what = f"the optimum of --s {s} over --starts {starts} at --T {family.T}"
    return Cost(seconds, MOMENT_PEAK * need, what, "a smaller window or fewer starts")


# ----------------------------------------------------------------------------- training
#: one optimiser step per sequence and time step: drawing the system and its trajectory
#: (O(d^2), the constant A) and the layers' features and loss (O(L (s+1)^2 s), the constant B):
#: measured 6.2e-3 s a step at s = 1, T = 30, batch 3000 (8000 steps: about 50 s), 1.1e-2 s at
#: s = 4, 8e-3 s at s = 2, T = 80, batch 1500, and (docs/running.md) 1-2 min for a
#: single-threaded AR(s) run of the paper's protocol.
TRAIN_SECONDS = (7.5e-8, 4.5e-10)
#: a run's fixed part: building the model, the held-out evaluation (measured 0.1-0.2 s; torch's
#: import, about 1 s, is paid once per process)
TRAIN_FIXED_SECONDS = 2.0


def train_cost(config, memory: int, given=()) -> Cost:
    """The cost of one training run of ``config`` (a models.config.TrainConfig) on this
    machine; ``memory``: models.trainer.memory_estimate(config); ``given``: the size options
    set on the command line (``"steps"``, ``"T"``, ...), which the words name as flags.

    >>> from types import SimpleNamespace as C
    >>> c = train_cost(C(steps=8000, batch=3000, T=30, d=5, s=1, layers=1), 2 ** 20, given=("steps",))
    >>> c.what, 30 < c.seconds < 120
    ('training --steps 8000 x 3000 sequences of T = 30, s = 1', True)
    """
    a, b = TRAIN_SECONDS
    T, layers = float(config.T), config.layers
    per = config.batch * (T + 1) * (a * max(1.0, config.d / 5.0) ** 2 + b * layers * (config.s + 1) ** 2 * config.s)

    def shown(name, words, unit=""):               # a flag where the user set it, else the value in words
        return f"--{name} {getattr(config, name)}{unit}" if name in given else words.format(getattr(config, name))
    what = (f"training {shown('steps', '{} steps')} x {shown('batch', '{} sequences', ' sequences')} of "
            f"{shown('T', 'T = {}')}, {shown('s', 's = {}')}"
            + "".join(f", {shown(name, words)}" for name, words, always in
                      (("layers", "{} layers", layers > 1), ("d", "d = {}", False)) if always or name in given))
    return Cost(TRAIN_FIXED_SECONDS + config.steps * per, int(memory), what,
                "a shortened copy: fewer steps or a smaller batch")


def runs_cost(costs, workers: int, what: str, extra_seconds: float = 0.0) -> Cost:
    """Runs (their :class:`Cost` each) spread over ``workers`` processes, plus ``extra_seconds``:
    the total divided among the workers, but never less than the longest run; the memory of
    the ``workers`` largest runs at once."""
    costs = list(costs)
    workers = max(1, int(workers))
    if not costs:
        return Cost(extra_seconds, 0, what)
    total = math.fsum(c.seconds for c in costs)
    longest = max(c.seconds for c in costs)
    peak = sum(sorted((c.bytes for c in costs), reverse=True)[:workers])
    return Cost(max(total / workers, longest) + extra_seconds, peak, what)
