"""claims/harness/plugin.py, "Scheduling": the training runs are collected first, and xdist's load
scheduler hands out one test at a time, so that two workers train side by side.

Checked on a throwaway project (``pytester``) that loads the real plugin as the root
conftest.py does: the collection order, and -- with ``-n 2`` -- that two training tests
placed after a slow check still run at the same time on the two workers (each writes when
it started and ended; with xdist's default blocks of 64 / 2 / 4 = 8 consecutive tests,
all four would have gone to one worker, one after another).
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

REPO = Path(__file__).resolve().parents[1]

DEMO = '''
import json, os, time
import pytest

def _log(name, t0):
    with open(os.environ["SCHED_LOG"], "a") as f:
        f.write(json.dumps([name, os.environ.get("PYTEST_XDIST_WORKER"), t0, time.time()]) + "\\n")

@pytest.mark.parametrize("i", range(60))
def test_a_check(i):
    pass

@pytest.mark.parametrize("i", range(4))
def test_training_run(i):
    t0 = time.time(); time.sleep(1.0); _log(f"train{i}", t0)
'''


@pytest.fixture
def project(pytester, monkeypatch, tmp_path):
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [str(REPO)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    monkeypatch.setenv("SCHED_LOG", str(tmp_path / "log.jsonl"))
    pytester.makeini("[pytest]\naddopts = -p no:cacheprovider\n")
    pytester.makeconftest('pytest_plugins = ["claims.harness.plugin"]\n')
    pytester.makepyfile(test_demo=DEMO)
    return pytester


def test_training_runs_are_collected_first_in_their_own_order(project):
    result = project.runpytest("--collect-only", "-q")
    ids = [line for line in result.stdout.lines if "::" in line]
    assert [i.split("::")[1] for i in ids] == ([f"test_training_run[{i}]" for i in range(4)]
                                               + [f"test_a_check[{i}]" for i in range(60)])


def test_two_workers_train_side_by_side(project, tmp_path):
    pytest.importorskip("xdist")
    result = project.runpytest_subprocess("-n", "2")
    result.assert_outcomes(passed=64)
    rows = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert len({worker for _, worker, _, _ in rows}) == 2           # both workers trained
    overlaps = [(a, b) for a in rows for b in rows if a[1] != b[1] and max(a[2], b[2]) < min(a[3], b[3])]
    assert overlaps                                                 # two runs at the same time


def test_an_explicit_maxschedchunk_is_kept(project):
    pytest.importorskip("xdist")
    project.makeconftest('pytest_plugins = ["claims.harness.plugin"]\n'
                         "def pytest_sessionstart(session):\n"
                         "    import os\n"
                         "    if hasattr(session.config, 'workerinput'):\n"
                         "        return                  # the controller schedules\n"
                         "    open(os.environ['SCHED_LOG'] + '.chunk', 'w').write("
                         "str(session.config.option.maxschedchunk))\n")
    project.runpytest_subprocess("-n", "1", "--maxschedchunk", "3")
    assert Path(os.environ["SCHED_LOG"] + ".chunk").read_text() == "3"
    project.runpytest_subprocess("-n", "1")
    assert Path(os.environ["SCHED_LOG"] + ".chunk").read_text() == "1"
