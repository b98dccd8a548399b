"""Every trained run of a profile, trained on an executor (claims/cluster/executor.py) into the weight cache.

Contract.  The client (:func:`train_runs`) builds each run id's configuration
(claims/harness/runs.py ``config_for``; an id carries its point of the family's parameters,
``@T=60,d=3/ar1/a/seed=0``, so the configuration follows it), skips every run whose weights
this code already has in the cache (models/cache.py ``load_cached``, device "cpu"), and
submits the rest, one :func:`train_task` each.  A worker trains (``models.trainer.train`` on
its CPU, one torch thread, the kernels pinned: executor.worker_setup) and sends back a
:class:`TrainedPayload`: the result's ``to_dict()`` (weights as JSON floats, which round-trip
exactly), *its own* code fingerprint (models/fingerprint.py ``current_fingerprint``: the
source of its training closure, torch, numpy, dtype, CPU kernels), its CPU, the kernels in
effect and the wall time.  Workers never touch the cache and need no shared file system.

The rule the client applies to each payload, in order:

* the worker's fingerprint digest differs from the client's for that configuration (other
  code, another torch or numpy, other kernels): **refused** -- nothing is written; the
  summary says which fields differ (:func:`fingerprint_difference`);
* the payload holds another configuration, or cannot be read: **refused**;
* otherwise **trained**: stored by ``models.cache.store_result`` under the key's file lock
  (re-checked there, written atomically), so half an entry never reaches the cache and two
  clients storing the same run write it once.

A task whose worker died is moved to a live worker by dask itself (the local pool cannot:
its futures fail with ``BrokenProcessPool``); a task that raises (the training's error, dask's
``KilledWorker`` after repeated deaths, a lost connection) is submitted again, at most
``retries`` more times, then the run is **failed** with the last error.  The client's
progress bar (tqdm, on stderr) counts the runs back, in flight (queued or training), refused
and failed, and the time left.  :class:`TrainingSummary` lists the runs by outcome (cached,
trained, refused, failed) with each trained run's CPU and seconds; the CLI (``ldsicl train
--profile paper --scheduler local``) exits 1 unless every run is cached or trained.

>>> fp = dict(sources="0" * 64, torch="2.3.0", device="cpu", dtype="float32", numpy="2.0.0",
...           kernels="AVX2/mkl:COMPATIBLE")
>>> from models.fingerprint import Fingerprint
>>> fingerprint_difference(Fingerprint(**fp), Fingerprint(**{**fp, "kernels": "AVX512/mkl:OFF"}))
"the worker's kernels 'AVX512/mkl:OFF' are not the client's 'AVX2/mkl:COMPATIBLE'"
>>> s = TrainingSummary("quick", "", (RunOutcome("ar1/a/seed=0", "cached"),
...                                   RunOutcome("ar1/b/seed=0", "refused", reason="other code")))
>>> s.cached, s.refused, s.ok
(('ar1/a/seed=0',), ('ar1/b/seed=0',), False)
"""
from __future__ import annotations

import concurrent.futures as cf
import contextlib
import dataclasses
import sys
import time
from dataclasses import dataclass

from claims.cluster.executor import WorkerInfo, worker_setup

__all__ = ["TrainedPayload", "RunOutcome", "TrainingSummary", "train_task", "train_runs", "claim_run_table",
           "profile_runs", "fingerprint_difference", "RETRIES", "STATUSES"]

#: how many times a task that raised is submitted again before its run is failed
RETRIES = 2
#: a run's outcomes, in the order the summary lists them
STATUSES = ("cached", "trained", "refused", "failed")


@dataclass(frozen=True)
class TrainedPayload:
    """What a worker sends back: plain data (module doc), read by the client into typed objects."""

    result: dict          # models.result.TrainResult.to_dict()
    fingerprint: dict     # the worker's models.fingerprint.Fingerprint.to_dict()
    worker: WorkerInfo
    seconds: float        # wall time of the task's training


def train_task(config: dict) -> TrainedPayload:
    """The worker's task: train ``TrainConfig.from_dict(config)`` on this CPU; never touches the cache."""
    worker = worker_setup()                      # kernels pinned, one thread: before torch loads
    from models.config import TrainConfig
    from models.fingerprint import current_fingerprint
    from models.trainer import train

    cfg = TrainConfig.from_dict(config)
    fingerprint = current_fingerprint("cpu", cfg.dtype)     # the code this process imported
    start = time.perf_counter()
    result = train(cfg, device="cpu", progress=False)
    return TrainedPayload(result=result.to_dict(), fingerprint=fingerprint.to_dict(), worker=worker,
                          seconds=time.perf_counter() - start)


@dataclass(frozen=True)
class RunOutcome:
    """One run's outcome: ``status`` one of :data:`STATUSES`; ``cpu``, ``kernels``, ``seconds``
    of the worker that trained it (None when no worker answered); ``attempts`` submitted;
    ``reason`` why it was refused or failed; ``path`` of its cache entry."""

    run: str
    status: str
    cpu: str | None = None
    kernels: str | None = None
    seconds: float | None = None
    attempts: int = 0
    reason: str | None = None
    path: str | None = None

    def __post_init__(self):
        if self.status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, got {self.status!r}")

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    def line(self) -> str:
        """``trained  ar1/a/seed=0  (AMD EPYC, 12.3 s)``, or the reason it was refused or failed."""
        where = f"  ({self.cpu}, {self.seconds:.1f} s)" if self.seconds is not None else ""
        return f"{self.status:<8} {self.run}{where}" + (f": {self.reason}" if self.reason else "")


@dataclass(frozen=True)
class TrainingSummary:
    """Every run of one :func:`train_runs` call (its ``runs``, in the order given), of
    ``profile`` at the point ``point`` (its tag; "" the default)."""

    profile: str
    point: str
    runs: tuple

    def ids(self, status: str) -> tuple:
        if status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, got {status!r}")
        return tuple(r.run for r in self.runs if r.status == status)

    cached = property(lambda self: self.ids("cached"))
    trained = property(lambda self: self.ids("trained"))
    refused = property(lambda self: self.ids("refused"))
    failed = property(lambda self: self.ids("failed"))

    @property
    def ok(self) -> bool:
        """Every run is cached or trained (the CLI's exit status 0)."""
        return not (self.refused or self.failed)

    def to_dict(self) -> dict:
        return {"profile": self.profile, "point": self.point, **{s: list(self.ids(s)) for s in STATUSES},
                "runs": [r.to_dict() for r in self.runs]}

    def text(self) -> str:
        counts = ", ".join(f"{len(self.ids(s))} {s}" for s in STATUSES)
        at = f" at {self.point}" if self.point else ""
        return "\n".join([r.line() for r in self.runs]
                         + [f"{len(self.runs)} runs of the {self.profile} profile{at}: {counts}"])


def claim_run_table(profile, claims=None) -> dict:
    """claim name -> the run ids it trains in ``profile`` at the session's point
    (claims.specs.claim_runs; ``ldsicl runs``); ``claims``: names (default: every claim)."""
    from claims.specs import CLAIMS, claim_runs

    names = [spec.name for spec in CLAIMS] if claims is None else list(claims)
    return {c: [r.run for r in claim_runs(c, profile)] for c in names}


def profile_runs(profile) -> tuple:
    """Every distinct run id some claim trains in ``profile`` at the session's point, in claim order."""
    return tuple(dict.fromkeys(r for ids in claim_run_table(profile).values() for r in ids))


def fingerprint_difference(client, worker) -> str:
    """Which fields of two :class:`~models.fingerprint.Fingerprint` differ, in words."""
    what = {"sources": "training code (theory/, models/)", "torch": "torch", "numpy": "numpy",
            "device": "device type", "dtype": "dtype", "kernels": "kernels"}
    parts = []
    for name, words in what.items():
        a, b = getattr(client, name), getattr(worker, name)
        if a != b:
            shown = (f" '{b[:12]}...' is not the client's '{a[:12]}...'" if name == "sources"
                     else f" {b!r} are not the client's {a!r}" if name == "kernels"
                     else f" {b!r} is not the client's {a!r}")
            parts.append(f"the worker's {words}{shown}")
    return "; ".join(parts) or "none"


def _judge(payload, config, fingerprint, cache_dir) -> tuple:
    """(status, reason, path) of one payload (module doc's rule)."""
    from models.cache import store_result
    from models.fingerprint import Fingerprint
    from models.result import TrainResult

    if not isinstance(payload, TrainedPayload):
        return "refused", f"the worker sent {type(payload).__name__}, not a TrainedPayload", None
    try:
        theirs = Fingerprint.from_dict(payload.fingerprint)
        result = TrainResult.from_dict(payload.result)
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        return "refused", f"the worker's payload cannot be read ({type(exc).__name__}: {exc})", None
    if theirs.digest() != fingerprint.digest():
        return "refused", fingerprint_difference(fingerprint, theirs), None
    if result.config != config:
        return "refused", "the worker's weights are of another configuration", None
    try:
        path = store_result(result, fingerprint, cache_dir)
    except OSError as exc:
        return "failed", f"cannot store the weights ({exc})", None
    if path is None:
        return "refused", "this client's training code changed on disk while it ran", None
    return "trained", None, str(path)


def _check(run_ids, profile, executor, retries, progress):
    from claims.harness.profiles import Profile, get_profile

    try:
        ids = tuple(run_ids)
    except TypeError:
        ids = None
    if isinstance(run_ids, str) or ids is None or not all(isinstance(r, str) for r in ids):
        raise ValueError(f"run_ids must be a list of run ids (str), got {run_ids!r}")
    profile = get_profile(profile) if isinstance(profile, str) else profile
    if not isinstance(profile, Profile):
        raise ValueError(f"profile must be a Profile or its name, got {profile!r}")
    opened = hasattr(executor, "__enter__") and hasattr(executor, "__exit__")
    if not isinstance(executor, cf.Executor) and not opened:
        raise ValueError(f"executor must be a concurrent.futures.Executor or a context manager that yields "
                         f"one, got {executor!r}")
    if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
        raise ValueError(f"retries must be an integer >= 0, got {retries!r}")
    if not isinstance(progress, bool):
        raise ValueError(f"progress must be True or False, got {progress!r}")
    return ids, profile


def train_runs(run_ids, profile, executor, *, cache_dir=None, progress: bool = True,
               retries: int = RETRIES) -> TrainingSummary:
    """Train every run of ``run_ids`` (of ``profile``) that this code has not cached (module doc).

    ``executor``: a ``concurrent.futures.Executor``, or a context manager that yields one
    (``open_executor(...)``), entered only when some run needs training.  ``progress``: a
    tqdm bar on stderr (runs back, in flight, refused, failed, time left).  Arguments are
    checked, and every configuration built, before anything is submitted (ValueError
    naming the argument or the run).
    """
    from tqdm import tqdm

    from claims.harness.params import current
    from claims.harness.runs import config_for
    from models.cache import cache_path, load_cached, resolve_cache_dir
    from models.fingerprint import current_fingerprint

    run_ids, profile = _check(run_ids, profile, executor, retries, progress)
    cache_dir = resolve_cache_dir(cache_dir)
    configs = {rid: config_for(rid, profile) for rid in dict.fromkeys(run_ids)}
    outcomes: dict = {}
    todo: dict = {}                                   # config key -> (config, its run ids)
    for rid, config in configs.items():
        if load_cached(config, cache_dir, device="cpu") is not None:
            outcomes[rid] = RunOutcome(rid, "cached", path=str(cache_path(config, cache_dir, device="cpu")))
        else:
            todo.setdefault(config.key(), (config, []))[1].append(rid)

    def finish(key, status, attempts, payload=None, reason=None, path=None):
        worker = getattr(payload, "worker", None)
        for rid in todo[key][1]:
            outcomes[rid] = RunOutcome(rid, status, cpu=getattr(worker, "cpu", None),
                                       kernels=getattr(worker, "kernels", None),
                                       seconds=getattr(payload, "seconds", None), attempts=attempts,
                                       reason=reason, path=path)
        bar.update(1)

    if todo:
        with (contextlib.nullcontext(executor) if isinstance(executor, cf.Executor) else executor) as pool, \
                tqdm(total=len(todo), unit="run", desc="training", disable=not progress, file=sys.stderr) as bar:
            pending: dict = {}

            def submit(key, attempt, why=None):
                try:
                    pending[pool.submit(train_task, todo[key][0].to_dict())] = (key, attempt)
                except RuntimeError as exc:          # a broken or shut-down pool
                    failed = f"{type(exc).__name__}: {exc}"
                    finish(key, "failed", attempt - 1, reason=f"{why}; then {failed}" if why else failed)

            def show():
                states = [o.status for o in outcomes.values()]
                bar.set_postfix(in_flight=len(pending), refused=states.count("refused"),
                                failed=states.count("failed"), refresh=True)

            for key in todo:
                submit(key, 1)
            show()
            while pending:
                done, _ = cf.wait(pending, return_when=cf.FIRST_COMPLETED)
                for future in done:
                    key, attempt = pending.pop(future)
                    config = todo[key][0]
                    try:
                        payload = future.result()
                    except Exception as exc:          # noqa: BLE001 - any error of the task or its worker
                        why = f"{type(exc).__name__}: {exc}"
                        if attempt <= retries:
                            submit(key, attempt + 1, why)
                        else:
                            finish(key, "failed", attempt, reason=why)
                        continue
                    fp = current_fingerprint("cpu", config.dtype)
                    status, reason, path = _judge(payload, config, fp, cache_dir)
                    finish(key, status, attempt, payload, reason, path)
                show()
    return TrainingSummary(profile.name, current().tag(), tuple(outcomes[rid] for rid in configs))

