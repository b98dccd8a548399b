"""Subprocesses of the tests, bounded in time and killed with their whole process group.

A test that starts ``pytest`` (which may start pytest-xdist workers of its own) or the
``ldsicl`` command must not leave processes behind when the child runs over its bound:
:func:`run_bounded` starts the child as the leader of a new process group (session) and,
on a timeout or any other interruption, kills the group with SIGKILL before failing the
test with the tail of the child's output.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

__all__ = ["run_bounded", "clean_env"]


def clean_env(repo, **extra) -> dict:
    """``os.environ`` without pytest/xdist variables, with ``repo`` first on PYTHONPATH."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_TESTRUNUID", "PYTEST_ADDOPTS",
                        "PYTEST_PLUGINS", "PYTEST_CURRENT_TEST")}
    env["PYTHONPATH"] = os.pathsep.join([str(repo)] + [
        p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    for k, v in extra.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    return env


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def run_bounded(args, *, timeout: float, cwd=None, env=None) -> subprocess.CompletedProcess:
    """Run ``args`` (text output captured); fail the test if it runs over ``timeout`` s."""
    proc = subprocess.Popen(args, cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        out, err = proc.communicate()
        pytest.fail(f"{' '.join(map(str, args))} ran over {timeout} s and was killed with its "
                    f"process group\n--- stdout\n{out[-3000:]}\n--- stderr\n{err[-3000:]}",
                    pytrace=False)
    except BaseException:
        _kill_group(proc)
        proc.communicate()
        raise
    return subprocess.CompletedProcess(args, proc.returncode, out, err)


PYTHON = sys.executable
