"""claims.reports.figures and the report writer: figures drawn from records alone, linked from claims.md."""
from __future__ import annotations

import json

import numpy as np

from claims.reports.figures import render_figures
from claims.harness.records import make_record
from claims.reports.report import write_reports
from theory.parity import class_masks

PNG = b"\x89PNG\r\n\x1a\n"


def _rec(check, setting, s, details, claim="banding"):
    """A reported record of ``claim``/``check`` at (setting, s), as the plugin stores it; the
    figures find it by these fields alone (its label is the same meaningless text for all)."""
    r = make_record(claim=claim, check=check, paper_ref="ref", label="m", measured=0.0,
                    kind="reported", setting=setting, s=s, details=details).to_dict()
    r.update(test="claims/test_x.py::test_any", outcome="passed", order=0, profile="quick")
    return r


def _banded(s, cls, rng):
    bm, Wm = class_masks(s, cls)
    b = rng.standard_normal(s + 1) * bm
    b /= np.abs(b).max()
    return b.tolist(), (rng.standard_normal((s + 1, s)) * Wm).tolist()


def _records():
    rng = np.random.default_rng(0)
    recs = []
    for s in (2, 3):
        b, W = _banded(s, "b-odd", rng)
        recs.append(_rec("optimum-in-a-class", "a", s, {"b": b, "W_QK": W}))
        b, W = _banded(s, "b-even", rng)
        recs.append(_rec("trained-out-of-class-share", "a", s, {"seed0_b": b, "seed0_W_QK": W}))
    hist = {"mean": 0.5, "hist": [1] * 20}
    cos = {"cos_1": hist, "cos_2": hist, "cos_3": hist}
    recs.append(_rec("cos_1-mean", "b", 4, {"per_seed": [cos, cos], "optimum": cos}, claim="pcg-alignment"))
    for s in (2, 3, 4):
        points = [{"basin": "optimum", "twins": 0, "share": 0.0, "runs": 2},
                  {"basin": "local-min b-odd +3.30 %", "twins": 60, "share": 60 / 64, "runs": 1}]
        points += [{"basin": f"saddle out-of-class +{k}.00 %", "twins": 1, "share": 1 / 64, "runs": 0}
                   for k in range(4 + s)]                 # more points than bars: the rest pooled
        recs.append(_rec("twin-optimum-share", "c", s, {"points": points, "twins": 64,
                                                        "trained_runs": {"optimum": 2, "local-min b-odd +3.30 %": 1}},
                         claim="training-basins"))
    return recs


def test_figures_from_records(tmp_path):
    made = render_figures(_records(), tmp_path / "fig")
    names = sorted(p.name for _, p in made)
    assert names == ["banding-a.png", "basins-c.png", "cosines-b.png"]
    for _, p in made:
        assert p.read_bytes()[:8] == PNG


def test_no_records_no_figures(tmp_path):
    assert render_figures([], tmp_path / "fig") == []
    assert not (tmp_path / "fig").exists()


def test_report_links_the_figures(tmp_path):
    j, m = write_reports(_records(), tmp_path, {"name": "quick"})
    md = m.read_text()
    assert "## Figures" in md and "(figures/banding-a.png)" in md and "(figures/cosines-b.png)" in md
    assert (tmp_path / "figures" / "banding-a.png").is_file()
    assert json.loads(j.read_text())["records"]


# --------------------------------------------------------------------------- what the figures draw

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as _plt  # noqa: E402
import pytest  # noqa: E402

from claims.reports import figures  # noqa: E402
from _figkeep import Keep as _Keep  # noqa: E402


def _trained(check, setting, values, tol, comparator, verdict=None, basins=None):
    """A trained check as claims.harness.records builds it: per-seed values, or runs judged by basin."""
    from claims.harness.basins import BasinSplit
    from claims.harness.identity import RunRef
    runs = [RunRef(f"ars/{setting}/s=2/seed={i}", i) for i in range(len(values))]
    kw = dict(claim="demo", check=check, paper_ref="ref", label="a long label of what was measured",
              setting=setting, s=2, tolerance=tol, comparator=comparator, tolerance_source="project")
    if basins:
        return make_record(**kw, runs=runs, run_values=values,
                           basins=BasinSplit(basins, tuple(dict.fromkeys(basins)))).to_dict()
    from claims.harness.stats import seed_fields
    return make_record(**kw, runs=runs, **seed_fields(values)).to_dict()


def _vlines(ax):
    return sorted(float(line.get_xdata()[0]) for line in ax.lines
                  if len(line.get_xdata()) == 2 and line.get_xdata()[0] == line.get_xdata()[1]
                  and line.get_linestyle() == "--")


def test_seed_panel_draws_native_units_and_a_negative_one_sided_tolerance_on_its_allowed_side():
    fig, ax = _plt.subplots()
    r = _trained("excess", "a", [-0.30, -0.25, -0.28], -0.1, "<=")
    assert r["verdict"] == "holds"
    drawn = figures._seed_panel(ax, r)
    assert _vlines(ax) == [-0.1] and drawn["tolerance_lines"] == [-0.1]
    (span,) = ax.patches                                    # the allowed side, shaded
    x0, x1 = sorted((span.get_x(), span.get_x() + span.get_width()))
    assert x1 == pytest.approx(-0.1) and x0 < -0.3
    dots = [float(line.get_xdata()[0]) for line in ax.lines if line.get_marker() == "o" and len(line.get_xdata())]
    assert sorted(dots) == pytest.approx([-0.30, -0.28, -0.25])          # native units, not / tolerance
    assert "a, s=2" in ax.get_title() and "excess" in ax.get_title() and "holds" in ax.get_title()
    _plt.close(fig)


def test_seed_panel_two_sided_tolerance_and_clipped_runs_are_marked():
    fig, ax = _plt.subplots()
    r = _trained("coef", "b", [0.001, -0.002, 0.003, 0.0, 5.0], 0.01, "abs<=",
                 basins=["opt", "opt", "opt", "opt", "far"])     # the far run is outside the headline's window
    drawn = figures._seed_panel(ax, r)
    assert _vlines(ax) == [-0.01, 0.01]
    assert drawn["clipped"] == 1 and drawn["window"][1] < 5.0
    assert any(line.get_marker() == ">" for line in ax.lines)
    assert "1 run(s) beyond the axis" in ax.get_xaxis().get_label().get_text()
    _plt.close(fig)


def test_seed_panel_colours_runs_by_basin():
    fig, ax = _plt.subplots()
    r = _trained("odd", "a", [0.002, 0.02, 0.003, 0.021], 0.01, "<=", basins=["opt", "far", "opt", "far"])
    figures._seed_panel(ax, r)
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["opt", "far"]
    colours = {float(line.get_xdata()[0]): line.get_color() for line in ax.lines
               if line.get_marker() == "o" and len(line.get_xdata())}
    assert colours[0.002] == colours[0.003] != colours[0.02] == colours[0.021]
    _plt.close(fig)


def test_cosine_figure_draws_each_seed_and_the_papers_number_read_from_the_records(tmp_path):
    hist = lambda k: {"mean": 0.5 + 0.1 * k, "hist": [1 + k] * 20}
    per_seed = [{"cos_1": hist(k), "cos_2": hist(k), "cos_3": hist(k)} for k in range(3)]
    d = {"per_seed": per_seed, "optimum": per_seed[0], "basin_per_seed": ["opt", "far", "opt"]}
    cos = _rec("cos_1-mean", "a", 4, d, claim="pcg-alignment")
    from claims.harness.basins import BasinSplit
    from claims.harness.identity import RunRef
    trained = make_record(claim="pcg-alignment", check="trained-cos1", paper_ref="r", label="m", setting="a", s=4,
                          runs=[RunRef(f"ars/a/s=4/seed={k}", k) for k in range(3)],
                          run_values=[0.5 + 0.1 * k - 0.88 for k in range(3)], tolerance=0.05,
                          basins=BasinSplit(["opt", "far", "opt"], ("opt", "far")),
                          comparator="abs<=", tolerance_source="paper").to_dict()
    data = figures._cosine_data([cos, trained])
    assert data["a"]["paper"] == pytest.approx((0.88, 0.05))
    keep = _Keep()
    figures._cosine_figure(keep, "a", data["a"], tmp_path / "c.png")
    ax = keep.figs[0].axes[0]
    assert _vlines(ax) == [pytest.approx(0.88)]
    assert sum(1 for line in ax.lines if line.get_drawstyle() == "steps-post") == 4     # 3 seeds + optimum
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "paper: cos_1 = 0.88 +- 0.05" in legend and "seeds headed for far" in legend
    _plt.close(keep.figs[0])


def test_kappa_figure_names_overlapping_curves_and_draws_setting_d_with_its_error_bar(tmp_path):
    curve = {"T": [10, 20, 30], "kappa": {"a": [0.1, 0.2, 0.3], "c": [0.1001, 0.2002, 0.3003], "b": [0.05, 0.06, 0.07]},
             "methods": {"a": "exact-rational", "b": "quadrature", "c": "quadrature"}}
    assert figures._overlaps(curve) == [("a", "c", pytest.approx(1e-3, rel=1e-2))]
    trained = {"d": (0.12, [0.121, 0.119, 0.122], (0.118, 0.123), 0.0004)}
    keep = _Keep()
    figures._kappa_figure(keep, curve, trained, tmp_path / "k.png")
    ax = keep.figs[0].axes[0]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any("setting c" in t and "on top of a" in t for t in legend)
    assert any("setting d (Monte Carlo, T = 30 only" in t for t in legend)
    bars = [c for c in ax.containers if hasattr(c, "lines")]
    seg = bars[0].lines[2][0].get_segments()[0]              # setting d's kappa: 0.12 +- 1.96 SE
    assert seg[0][1] == pytest.approx(0.12 - 1.96 * 0.0004) and seg[1][1] == pytest.approx(0.12 + 1.96 * 0.0004)
    _plt.close(keep.figs[0])


def test_spectral_shift_axis_is_clipped_and_says_so(tmp_path):
    rows = [("L=4, trained at r = 0.9", 0.9, 1.2, (1.1, 1.3), True), ("L=4, trained at r = 0.9", 1.05, 50.0, (2.0, 90.0), True),
            ("N4SID (median)", 0.9, 1.05, None, False), ("N4SID (median)", 1.05, 1.5, None, False)]
    keep = _Keep()
    clipped = figures._shift_figure(keep, rows, tmp_path / "s.png")
    ax = keep.figs[0].axes[0]
    assert clipped == 1 and ax.get_ylim()[1] <= 1.1 * figures.SHIFT_CLIP        # the 50 is clipped
    assert f"clipped at {figures.SHIFT_CLIP:g}" in ax.get_title() and "1 point(s) above" in ax.get_title()
    assert "medians" in ax.get_title() and ax.get_yscale() == "linear"
    assert any(line.get_marker() == "^" for line in ax.lines)
    assert "L=4, trained at r = 0.9" in [t.get_text() for t in ax.get_legend().get_texts()]
    _plt.close(keep.figs[0])
    # nothing above the clip: the axis ends just above the highest interval, not at the clip
    keep = _Keep()
    assert figures._shift_figure(keep, rows[:1] + rows[2:], tmp_path / "s2.png") == 0
    top = keep.figs[0].axes[0].get_ylim()[1]
    assert 1.5 <= top <= 1.5 * 1.1
    _plt.close(keep.figs[0])


def test_spectral_shift_rows_come_from_the_median_records():
    rec = {"claim": "spectral-shift", "check": "median-error-ratio", "measured": 1.3, "interval": [1.2, 1.4],
           "coords": {"setting": "a", "layers": 1, "radius": 1.05, "variant": "trained-at-r=1"}}
    base = {"claim": "spectral-shift", "check": "median-error-ratio", "measured": 1.1,
            "coords": {"setting": "a", "radius": 0.9, "variant": "n4sid"}}
    other = {**rec, "check": "gain-outside"}
    assert figures._shift_rows([rec, base, other]) == [("L=1, trained at r = 1", 1.05, 1.3, (1.2, 1.4), True),
                                                       ("N4SID (median)", 0.9, 1.1, None, False)]


def test_banding_gallery_shows_every_run_on_one_colour_scale_per_row(tmp_path):
    rng = np.random.default_rng(1)
    per_s = {}
    for s in (2, 3):
        opt = _banded(s, "b-odd", rng)
        runs = [(*_banded(s, cls, rng), name) for cls, name in (("b-odd", "optimum"), ("b-even", "local-min x"))]
        runs[1] = (runs[1][0], (np.asarray(runs[1][1]) * 7).tolist(), runs[1][2])       # a larger W
        per_s[s] = {"optimum": opt, "runs": runs}
    keep = _Keep()
    limits = figures._gallery_figure(keep, "a", per_s, tmp_path / "g.png")
    fig = keep.figs[0]
    for s, row in zip((2, 3), (0, 1)):
        ims = [ax.images[0] for ax in fig.axes[:6 * 2 * 3] if ax.images]
        w_ims = [im for im in ims if im.get_array().shape[0] == s + 1 and im.get_array().shape[1] == s]
        assert w_ims and {im.get_clim() for im in w_ims} == {(-limits[s][1], limits[s][1])}
        assert limits[s][1] == pytest.approx(np.abs(per_s[s]["runs"][1][1]).max())
    titles = [ax.get_title().replace("\n", " ") for ax in fig.axes]
    assert any("local-min x" in t for t in titles) and any("optimum" in t for t in titles)
    assert sum(1 for ax in fig.axes if ax.get_label() == "<colorbar>") == 4          # b and W per row
    _plt.close(fig)


@pytest.mark.parametrize("s", [1, 2, 3, 4])
def test_mirror_image_negates_exactly_the_odd_features(s):
    """Against theory.parity's rule: beta of the mirrored weights is beta with its odd
    features negated (up to the canonical gauge, which leaves beta unchanged)."""
    from theory.parity import feature_is_even
    from theory.population import beta_from_weights
    rng = np.random.default_rng(s)
    b, W = rng.standard_normal(s + 1), rng.standard_normal((s + 1, s))
    V, Q = np.zeros((s + 1, s + 1)), np.zeros((s + 1, s + 1))
    V[s], Q[:, :s] = b, W
    target = beta_from_weights(V, Q)
    target[~feature_is_even(s)] *= -1
    b2, W2 = figures.mirror_image(b, W)
    V[s], Q[:, :s] = b2, W2
    np.testing.assert_allclose(beta_from_weights(V, Q), target, rtol=1e-13, atol=1e-14)
    assert b2.max() == 1.0
    b3, W3 = figures.mirror_image(b2, W2)                       # an involution, in the gauge
    g = b[np.argmax(np.abs(b))]
    np.testing.assert_allclose(b3, b / g, atol=1e-14)


def test_banding_data_pairs_each_optimum_with_the_first_seeds_run_at_its_own_s():
    recs = _records()
    by = {(r["check"], r["coords"]["s"]): r["details"] for r in recs if r["claim"] == "banding"}
    data = figures._banding_data(recs)
    assert set(data) == {"a"} and set(data["a"]) == {2, 3}
    for s in (2, 3):
        opt, run = by["optimum-in-a-class", s], by["trained-out-of-class-share", s]
        assert data["a"][s] == {"optimum": (opt["b"], opt["W_QK"]),
                                "trained": (run["seed0_b"], run["seed0_W_QK"])}


def test_ratio_rows_name_each_series_and_keep_its_interval_or_none():
    def rec(check, measured, iv, variant=None, layers=None):
        return {"claim": "kalman-parity", "check": check, "measured": measured, "interval": iv,
                "coords": {"setting": "a", "s": 2, "variant": variant, "layers": layers}}
    recs = [rec("trained-mse-ratio", 1.1, [1.0, 1.2]), rec("baseline-mse-ratio", 1.3, None, "n4sid"),
            rec("baseline-mse-ratio", 9.0, None, "not-a-series"), rec("trained-mse-ratio", 1.05, [1.0, 1.1], layers=2),
            dict(rec("trained-mse-ratio", 7.0, None), claim="other")]
    rows = figures._ratio_rows(recs, "kalman-parity")
    assert [(name, value, iv) for _, name, value, iv in rows] == [
        ("trained layer (runs: mean and range)", 1.1, (1.0, 1.2)), ("N4SID (in context)", 1.3, None),
        ("L=2", 1.05, (1.0, 1.1))]
    assert rows[0][0] == recs[0]["coords"]


def test_ratio_rows_of_a_check_judged_by_run_show_its_runs_not_the_share():
    rec = {"claim": "kalman-parity", "check": "trained-mse-ratio", "measured": 0.0, "interval": [0.0, 0.37],
           "coords": {"setting": "a", "s": 1}, "per_run": {"comparator": "<=", "tolerance": 1.05},
           "runs": [{"value": v} for v in (2.0, 2.2, 2.6)]}
    (_, name, value, iv), = figures._ratio_rows([rec], "kalman-parity")
    assert (value, iv) == (np.mean([2.0, 2.2, 2.6]), (2.0, 2.6))


def test_basin_figure_bars_are_the_shares_with_the_tail_pooled(tmp_path):
    per_s = {s: r["details"] for r in _records() if r["check"] == "twin-optimum-share"
             for s in [r["coords"]["s"]] if s == 4}
    keep = _Keep()
    figures._basin_figure(keep, "c", per_s, tmp_path / "b.png", top=3)
    ax = keep.figs[0].axes[0]
    twins, runs = ax.patches[:4], ax.patches[4:]              # 3 points + "other", twins then runs
    d = per_s[4]
    expect_tw = [p["share"] for p in d["points"][:3]] + [sum(p["share"] for p in d["points"][3:])]
    assert [b.get_height() for b in twins] == pytest.approx(expect_tw)
    assert [b.get_height() for b in runs] == pytest.approx([2 / 3, 1 / 3, 0.0, 0.0])
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels[0] == "optimum" and labels[-1] == f"other ({len(d['points']) - 3})"
    assert ax.get_ylim() == (0.0, 1.0)
    _plt.close(keep.figs[0])


def test_parity_figure_draws_each_method_with_its_interval_and_the_filter_at_one(tmp_path):
    rows = [({"setting": "a", "s": s}, "trained layer", 1.0 + 0.1 * s, (0.95 + 0.1 * s, 1.1 + 0.1 * s))
            for s in (1, 2, 4)]
    rows += [({"setting": "a", "s": s}, "least squares AR(s)", 1.5, None) for s in (1, 2, 4)]
    rows += [({"setting": "a", "s": None, "variant": "n4sid"}, "N4SID (in context)", 1.3, None)]
    keep = _Keep()
    figures._parity_figure(keep, rows, tmp_path / "p.png")
    ax = keep.figs[0].axes[0]
    data = {c.get_label(): c for c in ax.containers}            # one errorbar container per method
    line, _, (bars,) = data["trained layer"].lines
    assert list(line.get_xdata()) == [1, 2, 4]
    assert list(line.get_ydata()) == pytest.approx([1.1, 1.2, 1.4])
    ends = [float(x) for a, b in bars.get_segments() for x in (a[1], b[1])]
    assert ends == pytest.approx([1.05, 1.2, 1.15, 1.3, 1.35, 1.5])      # the intervals, as drawn
    _, _, (none,) = data["least squares AR(s)"].lines
    assert all(a[1] == b[1] for a, b in none.get_segments())    # no interval: no bar
    flat = sorted(float(line.get_ydata()[0]) for line in ax.lines
                  if len(set(np.atleast_1d(line.get_ydata()))) == 1 and len(line.get_ydata()) == 2)
    assert 1.0 in flat and 1.3 in flat                         # the filter and N4SID as reference lines
    _plt.close(keep.figs[0])


def _mse(layers, T, value, iv, variant=None):
    check = "trained-median-error" if variant is None else "reference-median-error"
    return {"claim": "depth", "check": check, "measured": value, "interval": iv,
            "coords": {"layers": layers, "T": T, "variant": variant}}


def test_depth_figure_has_error_bars_per_depth_and_says_so(tmp_path):
    recs = [_mse(L, T, 1.1 / L + 1 / T, [1.1 / L + 1 / T - 0.01, 1.1 / L + 1 / T + 0.02])
            for L in (1, 2, 4) for T in (10, 20, 40)]
    recs += [_mse(None, T, 1.2, None, variant="least-squares") for T in (10, 20, 40)]
    recs += [_mse(None, T, 1e9 if T == 40 else 3.0, None, variant="construction-L=4") for T in (10, 20, 40)]
    keep = _Keep()
    assert figures._depth_figure(keep, recs, tmp_path / "d.png")
    a1, a2 = keep.figs[0].axes
    by = {c.get_label(): c.lines for c in a1.containers}
    assert set(by) == {"trained L=1 (mean over seeds)", "trained L=2 (mean over seeds)",
                       "trained L=4 (mean over seeds)", "least squares", "construction L=4"}
    line, _, (bars,) = by["trained L=2 (mean over seeds)"]
    assert list(line.get_ydata()) == pytest.approx([0.65, 0.6, 0.575])
    assert [float(b[1] - a[1]) for a, b in bars.get_segments()] == pytest.approx([0.03] * 3)
    assert "bars: 95 % t intervals" in a1.get_ylabel() and a1.get_xscale() == "log"
    assert list(by["construction L=4"][0].get_ydata()) == pytest.approx([3.0, 3.0, figures.SHIFT_CLIP])
    assert "1 point(s) above" in a1.get_title() and "heavy-tailed" in keep.figs[0]._suptitle.get_text()
    by2 = {line.get_label(): line for line in a2.lines}
    assert list(by2["T = 20"].get_xdata()) == [1, 2, 4]
    assert list(by2["T = 20"].get_ydata()) == pytest.approx([1.15, 0.6, 0.325])
    _plt.close(keep.figs[0])


def test_position_figure_clips_a_spike_and_counts_it(tmp_path):
    t = list(range(2, 31))
    flat = [1.0 + 0.01 * k for k in range(len(t))]
    spiky = list(flat)
    spiky[0] = 1e6
    rec = {"claim": "kalman-parity", "check": "per-position-mse",
           "details": {"t": t, "mse": {"trained": spiky, "Kalman filter": flat}, "sequences": 100}}
    keep = _Keep()
    assert figures._position_figure(keep, [rec], tmp_path / "pp.png")
    ax = keep.figs[0].axes[0]
    top = float(np.quantile(np.array(spiky + flat), 0.95)) * 3.0
    trained = next(line for line in ax.lines if line.get_label() == "trained")
    assert max(trained.get_ydata()) == pytest.approx(top) and top < 10
    marks = [line for line in ax.lines if line.get_marker() == "^"]
    assert len(marks) == 1 and list(marks[0].get_xdata()) == [2]
    assert "(1 point(s) above, triangles)" in ax.get_title() and ax.get_yscale() == "log"
    _plt.close(keep.figs[0])
