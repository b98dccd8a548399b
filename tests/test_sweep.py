"""``ldsicl sweep``: the grid (claims/cluster/grid.py), the sweep and its file
(claims/cluster/sweep.py, sweepfile.py), its report (claims/reports/sweep.py), the command
(claims/cli/sweep_command.py).

Oracles: the grid's axes as drawn (hypothesis) and the cartesian product written out; each
bad grid's kind named in one usage line, before any work (no output folder appears); a real
two-cell sweep of the cheapest check (the exact-vs-quadrature kappa of
claims/test_ar1_kappa.py, about a second of test after pytest's start-up), whose cells' own
claims.json name their points; a rerun that submits nothing.  Controls: a cell whose report
is corrupt or missing is redone, one whose report names another point is failed, never
silently accepted (an in-process executor replays the stored reports, so no second real run).
"""
from __future__ import annotations

import itertools
import json
import math
from concurrent.futures import Executor, Future

import pytest
from hypothesis import example, given, strategies as st

from claims.cli.main import main
from claims.cluster.grid import MAX_CELLS, Grid
from claims.cluster.sweep import CellRun, run_sweep
from claims.cluster.sweepfile import Selection, SweepCell, SweepRecord, SweepResult, load_sweep
from claims.harness.params import DEFAULT, PARAMS, Point, format_value
from claims.reports.sweep import measures, render_sweep, verdict_map
from claims.specs import all_headlines

CHEAP = "test_exact_kappa_equals_quadrature_at_the_defaults"
CHEAP_ID = "ar1-optimum/kappa-exact-vs-quadrature/a"

_VALUES = {"T": st.integers(7, 160), "d": st.integers(1, 12),
           **{k: st.sampled_from((0.01, 0.05, 0.1, 0.2, 0.25, 0.3, 0.5, 1.0, 1.5, 2.0, 1e-05, 9.75))
              for k in ("sigma_w", "sigma_v", "sigma_0")}}


@st.composite
def grids(draw):
    names = draw(st.lists(st.sampled_from(PARAMS), min_size=1, max_size=3, unique=True))
    return {n: draw(st.lists(_VALUES[n], min_size=1, max_size=3, unique=True)) for n in names}


def _text(axes: dict, sep: str) -> str:
    return sep.join(f"{n}=" + ",".join(format_value(v) for v in vals) for n, vals in axes.items())


@given(axes=grids(), sep=st.sampled_from((" ", "  ", ";", " ; ", "\t")))
@example(axes={"T": [30]}, sep=" ")                          # one cell, the default point
@example(axes={"sigma_w": [1e-05, 9.75]}, sep=" ")          # small and large reals round-trip
@example(axes={"T": [7, 160], "d": [1, 12], "sigma_0": [0.01]}, sep=";")   # the premise's ends
def test_a_grid_is_its_axes_and_their_product(axes, sep):
    g = Grid.parse(_text(axes, sep))
    assert g.names == tuple(axes) and all(g.values(n) == tuple(v) for n, v in axes.items())
    assert Grid.parse(g.tag()) == g and str(g) == g.tag() and Grid.from_dict(g.as_dict()) == g
    want = [dict(zip(axes, combo)) for combo in itertools.product(*axes.values())]
    assert [c.as_dict() for c in g.cells()] == [{**DEFAULT.as_dict(), **w} for w in want]
    assert len({c.tag() for c in g.cells()}) == len(want) == math.prod(map(len, axes.values()))


def test_spaces_around_commas_and_the_cap():
    assert Grid.parse(" T = 10, 30  d=3 ").tag() == "T=10,30 d=3"
    assert len(Grid.parse("T=7,8,9,10,11,12,13,14 d=1,2,3,4,5,6,7,8 sigma_0=1,2,3,4,5,6,7,8").cells()) == MAX_CELLS


#: every kind of bad grid, and what its one line says
BAD_GRIDS = [
    ("x=1,2", "--grid x: unknown parameter"),
    ("T=", "--grid T: no values"),
    ("T=10 d=3 T=30", "--grid T: axis given twice"),
    ("T=10,30,10", "--grid T: value 10 given twice"),
    ("sigma_w=0.1,0.10", "--grid sigma_w: value 0.1 given twice"),
    ("T=ten", "--grid T: values must be integers"),
    ("T=10.5", "--grid T: values must be integers"),
    ("sigma_w=nan", "--grid sigma_w: values must be finite numbers"),
    ("sigma_v=0.1,inf", "--grid sigma_v: values must be finite numbers"),
    ("sigma_0=abc", "--grid sigma_0: values must be numbers"),
    ("T=5,10", "--grid cell T=5: T: must be an integer in [7, 160]"),
    ("sigma_w=0,0.1 sigma_v=0,0.1", "--grid cell sigma_w=0,sigma_v=0: sigma_w, sigma_v: must not both be 0"),
    ("T=7,8,9,10,11,12,13,14,15 d=1,2,3,4,5,6,7,8 sigma_0=1,2,3,4,5,6,7,8", "--grid: 576 cells"),
    ("T", "--grid: expected NAME=V1,V2,... items"),
    ("", "--grid: no axis"),
]


@pytest.mark.parametrize("text, line", BAD_GRIDS)
def test_a_bad_grid_is_one_value_error_naming_the_axis(text, line):
    with pytest.raises(ValueError) as info:
        Grid.parse(text)
    assert str(info.value).startswith(line) and "\n" not in str(info.value)


def _error_line(capsys) -> str:
    err = capsys.readouterr().err.splitlines()
    errors = [e for e in err if "error:" in e]
    assert len(errors) == 1 and errors[0] == err[-1], err
    return err[-1].split("error: ", 1)[1]


@pytest.mark.parametrize("text, line", BAD_GRIDS)
def test_the_command_refuses_a_bad_grid_in_one_line_before_any_work(text, line, tmp_path, capsys):
    out = tmp_path / "sweep"
    assert main(["sweep", "--grid", text, "--claims", "ar1-optimum", "--out", str(out)]) == 2
    assert _error_line(capsys).startswith(line)
    assert not out.exists()                                          # nothing was started or written


@pytest.mark.parametrize("argv, line", [
    (["--claims", "ar1-kappa"], "--claims ar1-kappa: claim must be one of"),
    (["--claims", "banding,banding"], "--claims banding: named twice"),
    (["--claims", "ar1-optimum", "-k", "kappa and ("], "--select: not a pytest -k expression"),
    (["--claims", "ar1-optimum", "--profile", "slow"], "argument --profile: invalid choice: 'slow'"),
    (["--claims", "ar1-optimum", "--workers", "0"], "argument --workers: workers must be an integer >= 1"),
    (["--claims", "ar1-optimum", "--scheduler", "locale"], "--scheduler must be 'local' or the address"),
    (["--claims", "ar1-optimum", "--scheduler", "tcp://h:1", "--workers", "2"], "--workers sets the size"),
    ([], "--claims is required (or --report-only)"),
    (["--claims", "ar1-optimum", "--report-only"], "--report-only runs nothing; it takes only --out"),
])
def test_the_command_refuses_other_bad_arguments_in_one_line(argv, line, tmp_path, capsys):
    out = tmp_path / "sweep"
    assert main(["sweep", "--grid", "T=10,30", "--out", str(out), *argv]) == 2
    assert _error_line(capsys).startswith(line)
    assert not out.exists()


def test_report_only_needs_a_sweep_file(tmp_path, capsys):
    assert main(["sweep", "--report-only", "--out", str(tmp_path / "none")]) == 2
    assert "out: " in _error_line(capsys) and not (tmp_path / "none").exists()


# -- the report, from sweep files written here ---------------------------------------------

def _cell(point: Point, status="ok", records=()) -> SweepCell:
    return SweepCell(tag=point.tag() or "default", params=point, status=status, exit_status=0, seconds=1.0,
                     cpu_seconds=0.5, cpu="cpu", host="h", reused=False, error="boom" if status == "failed" else None,
                     summary=None, records=tuple(records))


def _rec(check_id, kind, verdict, measured) -> SweepRecord:
    return SweepRecord(check_id, check_id.split("/")[0], kind, verdict, "holds" if kind == "check" else None,
                       measured, None, None, None)


@pytest.mark.parametrize("text", ["T=10,30,60", "T=10,30 d=1,3", "T=10,30 d=1,3 sigma_w=0.05,0.2"])
def test_the_report_draws_each_reported_measure_over_the_grid(text, tmp_path):
    g = Grid.parse(text)
    headline = all_headlines()[0].check_ids[0]
    cells = [_cell(p, "failed" if i == 1 else "ok",
                   [] if i == 1 else [_rec(headline, "check", "holds" if i else "fails", 0.1),
                                      _rec("demo/m", "reported", "reported", "NaN" if i == 2 else 0.5 + i),
                                      _rec("demo/text", "reported", "reported", "a word")])
             for i, p in enumerate(g.cells())]
    result = SweepResult(g, "quick", Selection(("ar1-optimum",)), tuple(cells), "2026-01-01T00:00:00+00:00")
    vm = verdict_map(result)
    assert vm.headline and vm.rows == (headline,) and vm.entries[0][:2] == ("fails", "not run")
    (m,) = measures(result)                                  # "a word" is no measure
    assert m.check_id == "demo/m" and m.values[:2] == (0.5, None) and math.isnan(m.values[2])
    paths = render_sweep(result, tmp_path)
    assert [p.name for p in paths["figures"]] == ["demo_m.png"]
    assert paths["figures"][0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    page, md = paths["html"].read_text(), paths["md"].read_text()
    assert 'name="viewport"' in page and 'class="scroll"' in page and '<a href="figures/demo_m.png">' in page
    assert "not run" in md and "boom" in md and "![demo/m](figures/demo_m.png)" in md
    assert SweepResult.from_dict(json.loads(json.dumps(result.to_dict()))) == result


def test_without_a_headline_the_map_has_every_check_and_a_one_cell_grid_draws_nothing(tmp_path):
    g = Grid.parse("d=3")
    result = SweepResult(g, "quick", Selection(("ar1-optimum",)),
                         (_cell(g.cells()[0], records=[_rec("demo/x", "check", "holds", 1.0),
                                                       _rec("demo/m", "reported", "reported", 2.0)]),))
    assert verdict_map(result).rows == ("demo/x",) and not verdict_map(result).headline
    paths = render_sweep(result, tmp_path)
    assert paths["figures"] == [] and "Not drawn (1)" in paths["md"].read_text()


# -- a real sweep -----------------------------------------------------------------------------

class _Replay(Executor):
    """An in-process executor for the controls: each cell "runs" by returning the report text
    ``reports[tag]`` (None: pytest wrote none); records what was submitted."""

    def __init__(self, reports: dict):
        self.reports, self.submitted = reports, []

    def submit(self, fn, task):
        self.submitted.append(task.tag)
        f = Future()
        text = self.reports[task.tag]
        f.set_result(CellRun(exit_status=0, seconds=0.1, cpu_seconds=0.1, host="replay", cpu="cpu",
                             report=text, output_tail="" if text else "no report written"))
        return f


def test_a_real_two_cell_sweep_is_gathered_reported_and_resumed(tmp_path, capsys):
    out = tmp_path / "sweep"
    argv = ["sweep", "--grid", "T=10,40", "--claims", "ar1-optimum", "-k", CHEAP, "--out", str(out), "--workers", "2"]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert printed.count(": ok in ") == 2 and "1 check: 1 held, 0 failed" in printed and "report: " in printed
    result = load_sweep(out / "sweep.json")
    assert [c.params for c in result.cells] == [Point(T=10), Point(T=40)]
    assert [c.status for c in result.cells] == ["ok", "ok"] and result.selection.select == CHEAP
    for cell in result.cells:                                 # each cell is its own run, at its own point
        report = json.loads((out / "cells" / cell.tag / "claims.json").read_text())
        assert Point(**report["run"]["params"]) == cell.params
        assert [r.check_id for r in cell.records] == [CHEAP_ID] and cell.summary.held == 1
    assert CHEAP_ID in (out / "sweep.md").read_text() and (out / "index.html").is_file()

    stamps = {p: p.stat().st_mtime_ns for p in (out / "cells").rglob("claims.json")}
    assert main(argv) == 0                                      # a rerun redoes nothing
    assert capsys.readouterr().out.count(": reused (ok, ") == 2
    assert stamps == {p: p.stat().st_mtime_ns for p in (out / "cells").rglob("claims.json")}
    assert all(c.reused for c in load_sweep(out / "sweep.json").cells)

    grid, sel = Grid.parse("T=10,40"), Selection(("ar1-optimum",), CHEAP)
    good = {c.tag: (out / "cells" / c.tag / "claims.json").read_text() for c in result.cells}
    (out / "cells" / "T=10" / "claims.json").write_text("{")   # corrupt: redone
    (out / "cells" / "T=40" / "claims.json").unlink()           # missing: redone
    lines = []
    replay = _Replay(good)
    again = run_sweep(grid, sel, "quick", out, replay, log=lines.append)
    assert sorted(replay.submitted) == ["T=10", "T=40"] and len(lines) == 2, lines
    assert [c.status for c in again.cells] == ["ok", "ok"] and not any(c.reused for c in again.cells)
    assert run_sweep(grid, sel, "quick", out, _Replay({})).cells[0].reused       # and now kept

    replay = _Replay({"T=40": good["T=10"]})                    # a foreign report: the cell failed
    (out / "cells" / "T=40" / "claims.json").unlink()
    foreign = run_sweep(grid, sel, "quick", out, replay)
    assert replay.submitted == ["T=40"] and foreign.cells[1].status == "failed"
    assert "not of this cell" in foreign.cells[1].error and foreign.cells[1].records == ()
    nothing = run_sweep(grid, sel, "quick", out, _Replay({"T=40": None}))
    assert nothing.cells[1].status == "failed" and "wrote no claims.json" in nothing.cells[1].error

    replay = _Replay(good)                                      # another selection: both redone
    run_sweep(grid, Selection(("ar1-optimum",), CHEAP + " or nothing"), "quick", out, replay)
    assert sorted(replay.submitted) == ["T=10", "T=40"]
    replay = _Replay(good)                                      # another profile: redone, and a quick
    paper = run_sweep(grid, sel, "paper", out, replay)          # report is no paper cell
    assert sorted(replay.submitted) == ["T=10", "T=40"] and {c.status for c in paper.cells} == {"failed"}
    assert "not 'paper'" in paper.cells[0].error
