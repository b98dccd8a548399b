"""One executor interface for training many runs: a local process pool, or a dask.distributed cluster.

Contract: :func:`open_executor` is a context manager that yields a standard-library
:class:`concurrent.futures.Executor` (``submit``, ``map``, futures with ``result()``), so the
code that trains runs (claims/cluster/training.py) is the same wherever they train:

* ``scheduler=None`` (the default): a :class:`~concurrent.futures.ProcessPoolExecutor` of
  ``workers`` processes (default: ``os.cpu_count()``), started with ``spawn`` (torch is not
  fork-safe once its thread pools exist); each process runs :func:`worker_setup` first.
  No dask needed.
* ``scheduler="local"``: a ``dask.distributed.LocalCluster`` on this machine -- ``workers``
  worker processes of one thread each, listening on 127.0.0.1 only, no dashboard (the
  scheduler's HTTP server, which dask starts anyway, on a free port of 127.0.0.1) -- and
  its client's executor.  The workers' environment (:func:`worker_env`) carries the CPU
  kernel pins (models/kernels.py) *as this process has them* and one OpenMP/BLAS thread;
  the Nanny sets it in each worker process before anything imports torch.
* ``scheduler=ADDRESS`` (``tcp://host:port``, any ``protocol://...``, or ``host:port``): a
  running dask cluster's client executor.  The cluster's own environment is its owner's
  business (docs/running.md, "Training on a cluster"); the task still calls
  :func:`worker_setup`, which pins what is unpinned (effective when the worker has not
  loaded torch yet), caps torch to one thread and *reads back* the kernels that took
  effect, and every task reports them with the worker's CPU (:class:`WorkerInfo`): a
  worker on other kernels or other code reports another fingerprint, and the client
  refuses its weights (claims/cluster/training.py).

dask is imported only inside :func:`open_executor` (this module imports without it); a
bad ``scheduler`` or ``workers`` is one ValueError naming ``--scheduler`` / ``--workers``,
raised before anything starts, and so is a missing dask (``pip install -e ".[cluster]"``).
The dask executor submits with ``pure=False``: a resubmitted call (a retry) is a new task,
never the failed one again.  dask reschedules a task whose worker died (up to its
``distributed.scheduler.allowed-failures``); the local pool does not survive a dead worker
(its futures fail with ``BrokenProcessPool``; rerun the command: what was stored is kept).

>>> check_scheduler(None), check_scheduler("local"), check_scheduler("tcp://10.0.0.5:8786")
(None, 'local', 'tcp://10.0.0.5:8786')
>>> check_scheduler("locale")
Traceback (most recent call last):
ValueError: --scheduler must be 'local' or the address of a dask scheduler such as 'tcp://10.0.0.5:8786', got 'locale'
>>> check_workers("local", 2), check_workers(None, None)
(2, None)
>>> sorted(worker_env({"MKL_CBWR": "AVX2"}).items())[:3]   # the user's MKL branch is kept
[('ATEN_CPU_CAPABILITY', 'avx2'), ('MKL_CBWR', 'AVX2'), ('MKL_NUM_THREADS', '1')]
"""
from __future__ import annotations

import concurrent.futures as cf
import contextlib
import logging
import multiprocessing
import os
import platform
import re
import socket
from dataclasses import dataclass

__all__ = ["open_executor", "check_scheduler", "check_workers", "worker_env", "worker_setup", "cpu_name",
           "WorkerInfo", "THREAD_VARS", "INSTALL_HINT"]

#: the thread-count variables set to 1 in a LocalCluster's workers (one task per worker process)
THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMEXPR_NUM_THREADS",
               "VECLIB_MAXIMUM_THREADS")
#: what a user without dask is told
INSTALL_HINT = 'pip install -e ".[cluster]"'
_ADDRESS = re.compile(r"[a-z][a-z0-9+.-]*://[^\s/]+|[A-Za-z0-9_.\-\[\]:]+:[0-9]{1,5}")


def check_scheduler(scheduler):
    """None (the local process pool), ``"local"`` (a LocalCluster) or a scheduler address;
    ValueError naming ``--scheduler`` otherwise."""
    if scheduler is None or scheduler == "local":
        return scheduler
    if isinstance(scheduler, str) and _ADDRESS.fullmatch(scheduler):
        return scheduler
    raise ValueError("--scheduler must be 'local' or the address of a dask scheduler such as "
                     f"'tcp://10.0.0.5:8786', got {scheduler!r}")


def check_workers(scheduler, workers):
    """``workers`` (None: one per CPU) for a local pool or LocalCluster; ValueError naming
    ``--workers`` for a non-integer, one below 1, or any number with a cluster's address
    (that cluster has its own workers)."""
    if workers is None:
        return None
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"--workers must be an integer >= 1, got {workers!r}")
    if check_scheduler(scheduler) not in (None, "local"):
        raise ValueError("--workers sets the size of the local pool or of --scheduler local; the cluster at "
                         f"{scheduler} has its own workers (scale it there)")
    return workers


def worker_env(environ=None) -> dict:
    """The environment a LocalCluster's workers get: the CPU kernel pins as ``environ``
    (``os.environ``) has them, a pin it leaves unset at its pinned value (so the workers
    train on the kernels the client's fingerprint names), and one thread per library."""
    from models.kernels import KERNEL_PINS, pin_cpu_kernels   # models/kernels.py imports no torch

    env = {k: str(v) for k, v in dict(os.environ if environ is None else environ).items() if k in KERNEL_PINS}
    pin_cpu_kernels(env)
    env.update({k: "1" for k in THREAD_VARS})
    return dict(sorted(env.items()))


def cpu_name() -> str:
    """This machine's CPU model: /proc/cpuinfo's ``model name`` where there is one, else
    ``platform.processor()``, else the architecture."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                key, sep, value = line.partition(":")
                if sep and key.strip() == "model name" and value.strip():
                    return value.strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


@dataclass(frozen=True)
class WorkerInfo:
    """Where a task ran: host, process, CPU model, the CPU kernels in effect (models.kernels.cpu_kernels),
    whether they are the pinned ones, and torch's thread count."""

    host: str
    pid: int
    cpu: str
    kernels: str
    pinned: bool
    threads: int


def worker_setup() -> WorkerInfo:
    """Prepare this (worker) process to train and say what it is: pin the CPU kernels where
    the environment leaves them unset (before torch loads: ``models`` is imported here
    first), cap torch to one thread, read back the kernels in effect."""
    from models.kernels import PINNED, cpu_kernels, pin_cpu_kernels   # importing ``models`` pins too
    pin_cpu_kernels()
    from models.runtime import cap_threads                            # torch

    cap_threads(1)
    import torch

    kernels = cpu_kernels()
    return WorkerInfo(host=socket.gethostname(), pid=os.getpid(), cpu=cpu_name(), kernels=kernels,
                      pinned=kernels == PINNED, threads=torch.get_num_threads())


def _pool_initializer():
    worker_setup()


def _dask():
    try:
        import distributed
    except ImportError:
        raise ValueError(f"--scheduler needs dask.distributed, which is not installed: {INSTALL_HINT}") from None
    return distributed


def open_executor(scheduler: str | None = None, workers: int | None = None):
    """A context manager that yields a ``concurrent.futures.Executor`` (module doc).  The
    arguments (and dask's presence) are checked now, ValueError naming ``--scheduler`` or
    ``--workers``; nothing starts before the ``with`` block is entered, and everything that
    started is shut down when it is left (after the submitted work finished, unless the
    block raised)."""
    scheduler = check_scheduler(scheduler)
    workers = check_workers(scheduler, workers)
    return _opened(scheduler, workers or os.cpu_count() or 1, None if scheduler is None else _dask())


@contextlib.contextmanager
def _opened(scheduler, n: int, distributed):
    if scheduler is None:
        pool = cf.ProcessPoolExecutor(max_workers=n, mp_context=multiprocessing.get_context("spawn"),
                                      initializer=_pool_initializer)
        try:
            yield pool
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown(wait=True)
        return
    with contextlib.ExitStack() as stack:
        if scheduler == "local":
            cluster = stack.enter_context(distributed.LocalCluster(
                n_workers=n, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address="127.0.0.1:0",
                scheduler_kwargs={"dashboard": False},
                scheduler_port=0, env=worker_env(), silence_logs=logging.ERROR))
            client = stack.enter_context(distributed.Client(cluster))
        else:
            try:
                client = distributed.Client(scheduler)
            except (OSError, TimeoutError) as exc:
                raise ValueError(f"--scheduler {scheduler}: cannot reach a dask scheduler there ({exc})") from None
            stack.enter_context(client)
        executor = client.get_executor(pure=False)
        try:
            yield executor
        except BaseException:
            executor.shutdown(wait=False)
            raise
        executor.shutdown(wait=True)
