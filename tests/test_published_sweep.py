"""The published sweeps (docs/results/sweep/, docs/results/sweep-trained/) read as their schema
says, cover what docs/results/sweep.md claims, and agree with the published quick run.

Oracles: the schema's own reader (claims.cluster.sweepfile.load_sweep, claims.harness.reportfile
load_report); the grid's definition (its cells are the axes' product); the published quick run
(docs/results/quick.json), computed by a plain ``pytest claims`` run, not by the sweep: at the
default point the sweep's cell must measure exactly what the quick run measured.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from claims.cluster.sweepfile import load_sweep
from claims.harness.params import DEFAULT, Point
from claims.harness.reportfile import load_report

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "results"
SWEEP, TRAINED = RESULTS / "sweep", RESULTS / "sweep-trained"


@pytest.fixture(scope="module")
def sweep():
    return load_sweep(SWEEP / "sweep.json")


def test_the_published_sweep_covers_a_grid_of_at_least_27_cells(sweep):
    axes = {a.name: a.values for a in sweep.grid.axes}
    assert {"T", "d"} <= set(axes) and ({"sigma_w", "sigma_v", "sigma_0"} & set(axes))
    assert all(len(v) >= 3 for v in axes.values()) and len(sweep.cells) >= 27
    assert len(sweep.cells) == len(sweep.grid.cells())
    assert sweep.selection.untrained and sweep.profile == "quick"
    assert all(c.status in ("ok", "checks-failed") for c in sweep.cells), [c.tag for c in sweep.cells]


def test_each_cell_report_ran_at_its_own_point(sweep):
    for cell in sweep.cells:
        report = load_report(SWEEP / "cells" / cell.tag / "claims.json")
        assert Point(**report.run["params"]) == cell.params
        assert report.provenance["dirty"] is False, cell.tag          # published from a clean checkout


def test_the_default_cell_measures_what_the_quick_run_measured(sweep):
    """The sweep runs the suite's own checks: where the quick run has the same check, the
    default cell's value is the same number (nothing trained is read by either)."""
    cell = next(c for c in sweep.cells if c.params == DEFAULT)
    quick = {r.check_id: r for r in load_report(RESULTS / "quick.json").records}
    shared = [r for r in load_report(SWEEP / "cells" / cell.tag / "claims.json").records if r.check_id in quick]
    assert len(shared) >= 58                          # 38 before the optimum-only measures joined the quick run
    assert [r.check_id for r in shared if r.measured != quick[r.check_id].measured] == []
    assert [r.check_id for r in shared if r.verdict != quick[r.check_id].verdict] == []


def test_the_trained_cell_is_away_from_the_default_and_read_trained_runs():
    trained = load_sweep(TRAINED / "sweep.json")
    assert not trained.selection.untrained and len(trained.cells) >= 1
    for cell in trained.cells:
        point = cell.params
        assert point != DEFAULT and cell.status in ("ok", "checks-failed")
        report = load_report(TRAINED / "cells" / cell.tag / "claims.json")
        runs = [e.run for r in report.records for e in (r.runs or ())]
        assert runs and all(run.startswith(point.prefix()) for run in runs)
        assert cell.cpu and cell.seconds > 0                       # the worker recorded its CPU
