"""What five figures of the report show, read from the drawn artists (tests/_artists.py), each
drawn alone from the published records (docs/results/paper.json): ``kalman-parity.png`` (the
1.05 tolerance drawn, integer windows), ``seeds-<claim>.png`` (legends off the runs),
``cosines-<setting>.png`` (each run's mean cos_1 and the paper's band for those means, not
on the per-sequence histogram), ``spectral-shift.png`` (the x label names what x is and every
training radius) and ``improper-learning.png`` (the excess against s with its rho(L)^(2s)
slope, the rate's shares against the target).  Each figure: no text off the canvas, no two
texts overlapping, one colour per labelled series, no legend over data; negative controls
show the helpers catch the defects they guard."""
from __future__ import annotations

import copy
import dataclasses
import functools
import json
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as _plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

from _artists import (horizontal_lines, lowest_y, overlapping_texts, points_under_legend,  # noqa: E402
                      points_under_legends, repeated_colours, texts_outside)
from _figkeep import Keep  # noqa: E402
from claims.figures import improper_learning, kalman_parity, pcg_alignment, spectral_shift  # noqa: E402
from claims.harness.records import ClaimRecord, make_record  # noqa: E402
from claims.reports import figures  # noqa: E402
from claims.specs import get_spec  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


@functools.lru_cache(maxsize=None)
def _paper(claim: str) -> tuple[ClaimRecord, ...]:
    """The published paper run's records of ``claim``."""
    data = json.loads((ROOT / "docs" / "results" / "paper.json").read_text(encoding="utf-8"))
    return tuple(ClaimRecord.from_dict(r) for r in data["records"] if r["claim"] == claim)


def _drawn(draw, data, tmp_path):
    """The figure ``draw`` makes of ``data`` (saved under ``tmp_path``, kept open)."""
    keep = Keep()
    draw(keep, data, tmp_path / "f.png")
    (fig,) = keep.figs
    return fig


def _clean(fig) -> None:
    """Every figure: nothing off the canvas, no texts on top of each other, one colour per
    labelled series of an axes, no data point under a legend."""
    assert texts_outside(fig) == []
    assert overlapping_texts(fig) == []
    assert [repeated_colours(ax) for ax in fig.axes] == [[]] * len(fig.axes)
    assert points_under_legends(fig) == [0] * len(fig.axes)


def _fractional_ticks(ax) -> list[float]:
    """The x ticks in view that are not whole numbers."""
    lo, hi = sorted(ax.get_xlim())
    return [float(t) for t in ax.get_xticks() if lo <= t <= hi and not float(t).is_integer()]


def _legend_texts(holder) -> list[str]:
    return [t.get_text().replace("\n", " ") for t in holder.get_legend().get_texts()] if hasattr(
        holder, "get_legend") else [t.get_text().replace("\n", " ") for t in holder.get_texts()]


# --------------------------------------------------------------------------- kalman-parity.png

def test_parity_figure_draws_the_tolerance_and_integer_windows(tmp_path):
    recs = _paper("kalman-parity")
    rows = kalman_parity.parity_data(recs)[""]
    tol = {p.tolerance for p in rows if p.series.startswith("trained")}
    assert tol == {1.05}                                       # read from the records, not assumed
    fig = _drawn(kalman_parity.parity_figure, rows, tmp_path)
    _clean(fig)
    for ax in fig.axes:
        assert 1.05 in horizontal_lines(ax) and 1.0 in horizontal_lines(ax)
        assert _fractional_ticks(ax) == [] and [float(t) for t in ax.get_xticks()] == [1, 2, 3, 4]
    assert any("1.05" in t for t in _legend_texts(fig.axes[-1]))
    _plt.close(fig)


def test_fractional_ticks_are_caught_on_a_default_axis():
    """Negative control: matplotlib's own locator puts 1.5 between integer windows."""
    fig, ax = _plt.subplots(dpi=90)
    ax.plot([1, 2, 3, 4], [2.0, 1.4, 1.3, 1.2], "-o")
    fig.canvas.draw()
    assert 1.5 in _fractional_ticks(ax)
    _plt.close(fig)


# --------------------------------------------------------------------------- seeds-<claim>.png

def _seed_rows(claim: str, most: int) -> figures.SeedRows:
    """The ``most`` checks of ``claim`` with the most basins (the largest legends)."""
    rows = figures.seed_data(_paper(claim))[claim]
    width = {id(r): len({e.extra.get("basin") for e in r.runs or []}) for r in rows.records}
    return dataclasses.replace(rows, records=tuple(sorted(rows.records, key=lambda r: -width[id(r)])[:most]))


@pytest.mark.parametrize("claim,most", [("banding", 6), ("pcg-alignment", 9)])
def test_seed_figure_keeps_every_legend_off_the_runs(tmp_path, claim, most):
    """The panels with the most basins of banding (a legend of up to 5 entries; the full
    figure is drawn the same way panel by panel) and every panel of pcg-alignment."""
    data = _seed_rows(claim, most)
    fig = _drawn(figures.seed_figure, data, tmp_path)
    assert len(fig.axes) == len(data.records)                  # no empty frames left
    assert sum(ax.get_legend() is not None for ax in fig.axes) >= 2
    _clean(fig)
    for ax, r in zip(fig.axes, data.records):                  # each run's tolerance still drawn
        tol = (r.per_run or {}).get("tolerance", r.tolerance)
        assert any(np.isclose(line.get_xdata()[0], tol) for line in ax.lines if line.get_linestyle() == "--")
    _plt.close(fig)


def test_a_legend_over_the_runs_is_caught_and_the_panel_makes_room():
    """Negative control: a panel whose top row of runs spans the axis is covered by its legend
    until :func:`claims.reports.figures._room_for_legend` raises the axis."""
    from claims.harness.basins import BasinSplit
    from claims.harness.identity import RunRef
    basins = [f"local-min out-of-class +{k}.00 %" for k in range(5)]
    values = np.linspace(0.0, 0.2, 20)
    r = make_record(claim="demo", check="share", paper_ref="ref", label="m", setting="a", s=2,
                    runs=[RunRef(f"ars/a/s=2/seed={i}", i) for i in range(20)], run_values=list(values),
                    basins=BasinSplit([basins[i % 5] for i in range(20)], tuple(basins)),
                    tolerance=0.1, comparator="<=", tolerance_source="project")
    fig, ax = _plt.subplots(figsize=(4.2, 2.1), dpi=figures.DPI)
    drawn = figures._seed_panel(ax, r)
    fig.tight_layout()
    assert points_under_legend(ax) > 0 and points_under_legends(fig) == [points_under_legend(ax)]
    figures._room_for_legend(ax, drawn["top_row"])
    assert points_under_legend(ax) == 0
    _plt.close(fig)


# --------------------------------------------------------------------------- cosines-<setting>.png

def _vertical(ax, style="--") -> list[float]:
    return sorted(float(line.get_xdata()[0]) for line in ax.lines if len(line.get_xdata()) == 2
                  and line.get_xdata()[0] == line.get_xdata()[1] and line.get_linestyle() == style)


def _spans(ax) -> list[tuple[float, float]]:
    return [(p.get_x(), p.get_x() + p.get_width()) for p in ax.patches if isinstance(p, Rectangle)]


def test_cosine_figure_marks_each_runs_mean_and_holds_the_band_to_them(tmp_path):
    data = pcg_alignment.cosine_data(_paper("pcg-alignment"))
    assert data["a"].paper == pytest.approx((0.88, 0.05)) and data["b"].paper == pytest.approx((0.93, 0.01))
    d = data["a"]
    fig = _drawn(pcg_alignment.cosine_figure, d, tmp_path)
    _clean(fig)
    hist, strip = fig.axes[0], fig.axes[3]                     # cos_1: per-sequence histograms; the runs' means
    assert _spans(strip) == [pytest.approx((0.83, 0.93))] and _vertical(strip) == [pytest.approx(0.88)]
    assert _spans(hist) == [] and _vertical(hist) == []        # no band where single sequences are drawn
    means = sorted(float(line.get_xdata()[0]) for line in strip.lines if line.get_marker() == "o")
    assert means == pytest.approx(sorted(sd["cos_1"].mean for sd in d.per_seed))
    (opt,) = [line for line in strip.lines if line.get_marker() == "D"]
    assert float(opt.get_xdata()[0]) == pytest.approx(d.optimum["cos_1"].mean)
    assert "MEAN over its test sequences" in strip.get_title()
    assert "ONE test sequence" in hist.get_xlabel() and "one line per run" in hist.get_xlabel()
    steps = [line for line in hist.lines if line.get_drawstyle() == "steps-post"]
    assert len(steps) == len(d.per_seed) + 1 and min(float(np.min(s.get_ydata())) for s in steps) >= 0
    (legend,) = fig.legends                                    # right of every panel, none over data
    r = fig.canvas.get_renderer()
    box = legend.get_window_extent(r)
    assert all(box.x0 > ax.get_window_extent(r).x1 for ax in fig.axes)
    assert any("MEAN cos_1 = 0.88 +- 0.05" in t and "not single sequences" in t for t in _legend_texts(legend))
    _plt.close(fig)


# --------------------------------------------------------------------------- spectral-shift.png

def test_spectral_shift_names_the_test_radius_and_every_training_radius(tmp_path):
    data = spectral_shift.shift_data(_paper("spectral-shift"))[""]
    radii = sorted({p.trained_at for p in data.points if p.stack})
    assert radii == [0.5, 0.9, 1.0] and all(p.trained_at is None for p in data.points if not p.stack)
    fig = _drawn(spectral_shift.shift_figure, data, tmp_path)
    _clean(fig)
    (ax,) = fig.axes
    label = ax.get_xlabel()
    assert "test radius r" in label and "lambda ~ U[-r, r]" in label
    assert "training radii: r = 0.5, 0.9, 1" in label
    assert _vertical(ax, ":") == [0.9, 1.0]                    # the training radii in view, dotted
    assert 1.0 in horizontal_lines(ax) and lowest_y(ax) > 0
    _plt.close(fig)


def test_spectral_shift_names_no_training_radius_it_was_not_given(tmp_path):
    P = spectral_shift.ShiftPoint
    data = spectral_shift.ShiftFigure("a", (P("L=1", 0.9, 1.2, None, True), P("L=1", 1.0, 1.4, None, True)))
    fig = _drawn(spectral_shift.shift_figure, data, tmp_path)
    assert "training radii" not in fig.axes[0].get_xlabel() and _vertical(fig.axes[0], ":") == []
    _plt.close(fig)


# --------------------------------------------------------------------------- improper-learning.png

def test_improper_learning_is_a_figure_of_its_claim():
    assert get_spec("improper-learning").figures == improper_learning.FIGURES
    assert [f.stem for f in improper_learning.FIGURES] == ["improper-learning"]


def test_improper_learning_figure_draws_the_excess_its_rate_and_the_shares(tmp_path):
    data = improper_learning.improper_data(_paper("improper-learning"))[""]
    assert (data.per_system_tolerance, data.target_share, data.fit_range) == (0.1, 0.9, (1e-20, 1e-3))
    fig = _drawn(improper_learning.improper_figure, data, tmp_path)
    _clean(fig)
    fixed, tradeoff, ratios, shares = fig.axes
    assert fixed.get_yscale() == tradeoff.get_yscale() == "log"
    for c in data.fixed:                                        # the excess, and its rho(L)^(2s) slope
        (line,) = [ln for ln in fixed.lines if ln.get_label() == f"{c.label}: excess(s)"]
        assert list(line.get_ydata()) == pytest.approx(list(c.excess))
        (ref,) = [ln for ln in fixed.lines if ln.get_label() == f"rho(L)^(2s), rho(L) = {c.rho:.3g}"]
        assert np.diff(np.log(ref.get_ydata())) == pytest.approx(2 * np.log(c.rho) * np.ones(len(c.excess) - 1))
    assert sorted(horizontal_lines(ratios)) == pytest.approx([0.9, 1.0, 1.1])       # 1 +- the per-system tolerance
    assert 0.9 in horizontal_lines(shares) and lowest_y(shares) >= -1e-12           # target share; none below 0
    assert "<= 0.1" in shares.get_title() and "Clopper-Pearson" in shares.get_title()
    assert [float(t) for t in shares.get_xticks()] == [1, 2, 3, 5] and _fractional_ticks(ratios) == []
    drawn = {t for t in _legend_texts(shares)}
    assert {"rho(L)^(2s) (the claim)", "control: rho(L)^s", "control: rho(A)^(2s)"} <= drawn
    _plt.close(fig)


@pytest.mark.parametrize("check,key", [("rate-share", "ratios"), ("rate-share", "target_share"),
                                       ("rate-pm-lambda", "cases"), ("estimation-tradeoff", "sequences")])
def test_improper_learning_fails_naming_a_renamed_key(check, key):
    recs = list(_paper("improper-learning"))
    k = next(i for i, r in enumerate(recs) if r.check == check and key in r.details and not r.coords.control)
    d = copy.deepcopy(recs[k].to_dict())
    d["details"][f"{key}_renamed"] = d["details"].pop(key)
    recs[k] = ClaimRecord.from_dict(d)
    with pytest.raises(ValueError, match=re.escape(f"record {recs[k].check_id!r} has no details[{key!r}]")):
        improper_learning.improper_data(recs)


def test_improper_learning_fails_naming_a_renamed_key_of_a_case():
    recs = list(_paper("improper-learning"))
    k = next(i for i, r in enumerate(recs) if r.check == "rate-pm-lambda" and not r.coords.control)
    d = copy.deepcopy(recs[k].to_dict())
    d["details"]["cases"][1]["excess_renamed"] = d["details"]["cases"][1].pop("excess")
    recs[k] = ClaimRecord.from_dict(d)
    with pytest.raises(ValueError, match=re.escape("details['cases'][1] has no ['excess']")):
        improper_learning.improper_data(recs)
