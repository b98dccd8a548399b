"""``ldsicl sweep``: the claims' own pytest run at each cell of a grid, gathered into one sweep file.

Contract.  :func:`run_sweep` runs, for each cell (a :class:`~claims.harness.params.Point`) of
a :class:`~claims.cluster.grid.Grid`, the suite's own command in the repository root (the
parent of the ``claims`` package, found on the worker)::

    python -m pytest <the claims' test files> -p no:cacheprovider -q -n 0 --profile P
                     --claims-params <cell tag> --claims-report <a temporary folder> [-k EXPR]

as one task on an executor (:func:`claims.cluster.executor.open_executor`).  The task
(:func:`run_cell`) runs on the worker and returns a :class:`CellRun`: the cell's claims.json
text, pytest's exit status, the wall seconds, the subprocess's CPU seconds and the worker's
host and processor; the client writes ``OUT/cells/<tag>/claims.json`` and
``OUT/cells/<tag>/cell.json`` (``default`` is the default point's folder), so no shared file
system is needed, and gathers every cell into ``OUT/sweep.json`` (:class:`SweepResult`; the
format: docs/results/README.md, "Sweep files").

Status of a cell.  pytest's exit status 0 is ``ok``; 1 (a check failed or a test errored)
is ``checks-failed``, a normal outcome recorded with its records; anything else (a usage
error, an internal error, no test selected, a crash), a missing or unreadable claims.json,
or a claims.json whose ``run.params`` or profile is not the cell's (a stale or foreign
report) is ``failed``, with the reason and the tail of pytest's output.

Resumable.  A cell whose ``cell.json`` names the same profile, params and selection, with
status ``ok`` or ``checks-failed``, and whose claims.json still loads and names the same
params and profile is not redone (``reused``); any other cell is (re)run.  The trained runs
a cell needs come from the weight cache anyway (models/cache.py).

>>> sel = Selection.parse("ar1-optimum", "kappa_exact")
>>> sel.test_files(), sel.describe()
(('claims/test_ar1_optimum.py', 'claims/test_ar1_kappa.py'), "ar1-optimum -k 'kappa_exact'")
>>> " ".join(CellTask(Point(T=60), "quick", sel).argv("/r")[5:])
'-p no:cacheprovider -q -n 0 --profile quick --claims-params T=60 --claims-report /r -k kappa_exact'
>>> Selection.parse("banding,nope")
Traceback (most recent call last):
ValueError: --claims nope: claim must be one of ['ar1-optimum', ..., 'training-basins'], got 'nope'
"""
from __future__ import annotations

import datetime
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from concurrent.futures import Executor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from claims.cluster.executor import THREAD_VARS, cpu_name
from claims.cluster.grid import Grid, cell_dir_name
from claims.cluster.sweepfile import (CELL_META, CELL_REPORT, SWEEP_FILE, CellSummary, Selection, SweepCell,
                                      SweepRecord, SweepResult)
from claims.harness.params import Point
from claims.harness.reportfile import Report, load_report
from claims.reports.summary import summarize
from models.files import atomic_write_text
from theory.jsonvalues import dumps

__all__ = ["CellTask", "CellRun", "run_cell", "run_sweep"]

#: variables of a surrounding pytest run that the cell's own run must not inherit
_PYTEST_VARS = ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID",
                "PYTEST_ADDOPTS", "PYTEST_PLUGINS", "PYTEST_CURRENT_TEST")
#: characters of pytest's output kept with a failed cell
TAIL = 2000


@dataclass(frozen=True)
class CellTask:
    """What one cell runs: the point, the profile, the selection; ``threads`` (None: as the
    worker has them) sets the thread variables (claims.cluster.executor.THREAD_VARS) of the
    cell's process."""

    point: Point
    profile: str
    selection: Selection
    threads: int | None = None

    @property
    def tag(self) -> str:
        """The cell's folder under ``cells/`` (its tag, ``default`` at the default point)."""
        return cell_dir_name(self.point)

    def argv(self, report_dir) -> list[str]:
        """The suite's own command for the cell (module doc), writing its report to ``report_dir``."""
        cmd = [sys.executable, "-m", "pytest", *self.selection.test_files(), "-p", "no:cacheprovider", "-q",
               "-n", "0", "--profile", self.profile, "--claims-params", self.point.tag(),
               "--claims-report", str(report_dir)]
        return (cmd + (["-k", self.selection.select] if self.selection.select else [])
                + (["--claims-untrained"] if self.selection.untrained else []))


@dataclass(frozen=True)
class CellRun:
    """What the worker returns for a cell: pytest's exit status, wall and CPU seconds (CPU:
    user + system of the pytest process; None where the platform has no ``wait4``), the
    worker's host and processor, the claims.json text (None if none was written) and the tail
    of pytest's output (stdout and stderr)."""

    exit_status: int
    seconds: float
    cpu_seconds: float | None
    host: str
    cpu: str
    report: str | None
    output_tail: str


def _cell_env(root: Path, threads: int | None) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in _PYTEST_VARS}
    env["PYTHONPATH"] = os.pathsep.join([str(root)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    if threads is not None:
        env.update({var: str(threads) for var in THREAD_VARS})
    return env


def _wait(proc: subprocess.Popen) -> tuple[int, float | None]:
    """Wait for ``proc``: (exit status, its CPU seconds) -- ``os.wait4`` gives this child's own
    resource use, whatever else the worker runs at the same time."""
    if not hasattr(os, "wait4"):                                      # pragma: no cover - not POSIX
        return proc.wait(), None
    try:
        _, status, usage = os.wait4(proc.pid, 0)
    except ChildProcessError:                                         # pragma: no cover - reaped elsewhere
        return proc.wait(), None
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, usage.ru_utime + usage.ru_stime


def run_cell(task: CellTask) -> CellRun:
    """Run one cell on this machine (the executor's task; module doc)."""
    import claims

    root = Path(claims.__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory(prefix="ldsicl-cell-") as tmp:
        report_dir, log = Path(tmp) / "report", Path(tmp) / "output.txt"
        start = time.perf_counter()
        with open(log, "wb") as out:
            proc = subprocess.Popen(task.argv(report_dir), cwd=root, env=_cell_env(root, task.threads),
                                    stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
            status, cpu_seconds = _wait(proc)
        seconds = time.perf_counter() - start
        report = report_dir / CELL_REPORT
        text = report.read_text(encoding="utf-8") if report.is_file() else None
        tail = log.read_text(encoding="utf-8", errors="replace")[-TAIL:]
    return CellRun(exit_status=status, seconds=seconds, cpu_seconds=cpu_seconds, host=socket.gethostname(),
                   cpu=f"{cpu_name()} ({os.cpu_count() or '?'} CPUs)", report=text, output_tail=tail)


def _check_report(path: Path, task: CellTask) -> Report:
    """The cell's report, or ValueError saying why it is not the cell's (unreadable, foreign)."""
    report = load_report(path)
    params = (report.run or {}).get("params")
    if not isinstance(params, dict):
        raise ValueError(f"{path}: the report records no run.params (a claims run without --claims-params?)")
    try:
        point = Point(**params)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{path}: its run.params are not a point ({exc})") from None
    if point != task.point:
        raise ValueError(f"{path}: the report is of the point {point.tag() or 'default'!r}, not of this cell "
                         f"(a stale or foreign report)")
    if report.profile_name != task.profile:
        raise ValueError(f"{path}: the report is of the profile {report.profile_name!r}, not {task.profile!r}")
    return report


def _records(report: Report) -> tuple[tuple[SweepRecord, ...], CellSummary]:
    records = tuple(SweepRecord.of(r) for r in report.records)
    total = summarize(report.records)["total"]
    line = (report.summary or {}).get("line") or f"{total['checks']} checks"
    return records, CellSummary.of(total, line)


def _meta(task: CellTask) -> dict:
    return {"profile": task.profile, "params": task.point.as_dict(), "selection": task.selection.as_dict()}


def _reusable(task: CellTask, folder: Path) -> SweepCell | str | None:
    """The cell as done before (module doc, "Resumable"), or why it is redone (None: never run)."""
    meta_path, report_path = folder / CELL_META, folder / CELL_REPORT
    if not meta_path.is_file():
        return None
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        if not isinstance(meta, dict):
            raise ValueError("not an object")
    except (OSError, ValueError) as exc:
        return f"{meta_path} is unreadable ({exc})"
    if {k: meta.get(k) for k in _meta(task)} != json.loads(dumps(_meta(task))):
        return "its profile, params or selection differ"
    if meta.get("status") not in ("ok", "checks-failed"):
        return f"it {meta.get('status') or 'did not finish'} before"
    try:
        report = _check_report(report_path, task)
    except ValueError as exc:
        return str(exc)
    records, summary = _records(report)
    return SweepCell(tag=task.tag, params=task.point, status=meta["status"], exit_status=meta.get("exit_status"),
                     seconds=meta.get("seconds"), cpu_seconds=meta.get("cpu_seconds"), cpu=meta.get("cpu"),
                     host=meta.get("host"), reused=True, error=None, summary=summary, records=records)


_EXIT = {2: "pytest was interrupted", 3: "pytest had an internal error", 4: "pytest usage error",
         5: "no test collected: the selection selects no test of these files"}


def _finish(task: CellTask, run: CellRun | None, error: str | None, folder: Path) -> SweepCell:
    """Write what a cell's run returned under ``folder`` and judge it (module doc, "Status")."""
    records, summary, status = (), None, "failed"
    if run is not None:
        if run.report is not None:
            atomic_write_text(folder / CELL_REPORT, run.report)
        else:
            (folder / CELL_REPORT).unlink(missing_ok=True)
        if run.exit_status not in (0, 1):
            why = _EXIT.get(run.exit_status) or (f"killed by signal {-run.exit_status}" if run.exit_status < 0
                                                 else "unexpected exit status")
            error = f"pytest exit status {run.exit_status} ({why}): {run.output_tail.strip()}"
        elif run.report is None:
            error = f"pytest wrote no claims.json (exit status {run.exit_status}): {run.output_tail.strip()}"
        else:
            try:
                records, summary = _records(_check_report(folder / CELL_REPORT, task))
                status = "ok" if run.exit_status == 0 else "checks-failed"
            except ValueError as exc:
                error = str(exc)
    cell = SweepCell(tag=task.tag, params=task.point, status=status,
                     exit_status=None if run is None else run.exit_status,
                     seconds=None if run is None else round(run.seconds, 3),
                     cpu_seconds=None if run is None or run.cpu_seconds is None else round(run.cpu_seconds, 3),
                     cpu=None if run is None else run.cpu, host=None if run is None else run.host,
                     reused=False, error=error, summary=summary, records=records)
    meta = {**_meta(task), **{k: v for k, v in cell.to_dict().items() if k not in ("params", "records", "summary")}}
    atomic_write_text(folder / CELL_META, dumps(meta, indent=2) + "\n")
    return cell


def run_sweep(grid: Grid, selection: Selection, profile: str, out_dir, executor: Executor, *,
              threads: int | None = None, on_cell: Callable[[SweepCell], None] | None = None,
              log: Callable[[str], None] | None = None) -> SweepResult:
    """Run ``selection`` of the claims in ``profile`` at every cell of ``grid`` on ``executor``
    (module doc), writing ``out_dir/cells/`` and ``out_dir/sweep.json``; returns the sweep.

    ``on_cell(cell)`` is called as each cell is known (reused ones first, then as they
    finish); ``log(line)`` hears why a cell found on disk is redone.  The cells of the result
    are in the grid's order.
    """
    if not isinstance(grid, Grid) or not isinstance(selection, Selection):
        raise ValueError(f"run_sweep needs a Grid and a Selection, got {type(grid).__name__}, "
                         f"{type(selection).__name__}")
    from claims.harness.profiles import PROFILES
    if profile not in PROFILES:
        raise ValueError(f"profile must be one of {list(PROFILES)}, got {profile!r}")
    out = Path(out_dir)
    tasks = [CellTask(p, profile, selection, threads) for p in grid.cells()]
    done: dict[str, SweepCell] = {}
    todo = []
    for task in tasks:
        found = _reusable(task, out / "cells" / task.tag)
        if isinstance(found, SweepCell):
            done[task.tag] = found
            if on_cell:
                on_cell(found)
        else:
            if found and log:
                log(f"cell {task.tag}: redone: {found}")
            todo.append(task)
    futures = {executor.submit(run_cell, task): task for task in todo}
    try:
        for future in as_completed(futures):
            task = futures[future]
            try:
                run, error = future.result(), None
            except Exception as exc:                   # the worker or the task died: the cell failed
                run, error = None, f"the task failed on its worker: {type(exc).__name__}: {exc}"
            done[task.tag] = _finish(task, run, error, out / "cells" / task.tag)
            if on_cell:
                on_cell(done[task.tag])
    except BaseException:
        for future in futures:
            future.cancel()
        raise
    result = SweepResult(grid=grid, profile=profile, selection=selection,
                         cells=tuple(done[t.tag] for t in tasks),
                         generated=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"))
    atomic_write_text(out / SWEEP_FILE, dumps(result.to_dict(), indent=2) + "\n")
    return result
