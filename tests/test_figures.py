"""claims.reports.figures (the loop over the claims' figure specs) and the figures of each
claim (claims/figures/<claim>.py): drawn from typed records alone, linked from claims.md;
every figure the published runs support is drawn from both; a figure whose record lacks a
key it reads fails naming the key, never disappears."""
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

from claims.figures import banding, depth, kalman_parity, pcg_alignment, spectral_shift, training_basins  # noqa: E402
from claims.figures.ar1_optimum import KappaCurve, KappaFigure, TrainedCoefficients, kappa_figure, overlaps  # noqa: E402
from claims.figures.common import CLIP, matrix, vector  # noqa: E402
from claims.harness.records import ClaimRecord, make_record  # noqa: E402
from claims.reports import figures  # noqa: E402
from claims.reports.figures import claim_of, render_figures  # noqa: E402
from claims.reports.report import write_reports  # noqa: E402
from claims.specs import CLAIMS, get_spec  # noqa: E402
from theory.parity import class_masks  # noqa: E402
from _figkeep import Keep as _Keep  # noqa: E402

PNG = b"\x89PNG\r\n\x1a\n"
ROOT = Path(__file__).resolve().parents[1]


def _rec(check, setting, s, details, claim="banding"):
    """A reported record of ``claim``/``check`` at (setting, s), as the plugin stores it; the
    figures find it by these fields alone (its label is the same meaningless text for all)."""
    r = make_record(claim=claim, check=check, paper_ref="ref", label="m", measured=0.0,
                    kind="reported", setting=setting, s=s, details=details)
    return dataclasses.replace(r, test="claims/test_x.py::test_any", outcome="passed", order=0, profile="quick")


def _banded(s, cls, rng):
    bm, Wm = class_masks(s, cls)
    b = rng.standard_normal(s + 1) * bm
    b /= np.abs(b).max()
    return b.tolist(), (rng.standard_normal((s + 1, s)) * Wm).tolist()


def _trained_details(s, rng):
    """What claims/test_banding_trained.py stores of two runs (the second headed for the
    mirror image of its basin's point)."""
    runs = [_banded(s, "b-even", rng), _banded(s, "b-odd", rng)]
    return {"seed0_b": runs[0][0], "seed0_W_QK": runs[0][1],
            "b_per_run": [b for b, _ in runs], "W_QK_per_run": [W for _, W in runs],
            "basin_per_seed": ["local-min b-even +2.00 %", "optimum"], "basin_mirror_per_seed": [False, True],
            "basin_loss_per_seed": [0.255, 0.25], "population_loss_optimum": 0.25,
            "loss_history_per_seed": [[1.0, 0.3, 0.26], [1.0, 0.3, 0.25]], "loss_history_steps": [10, 20, 30]}


def _records():
    rng = np.random.default_rng(0)
    recs = []
    for s in (2, 3):
        b, W = _banded(s, "b-odd", rng)
        recs.append(_rec("optimum-in-a-class", "a", s, {"b": b, "W_QK": W}))
        recs.append(_rec("trained-out-of-class-share", "a", s, _trained_details(s, rng)))
    hist = {"mean": 0.5, "hist": [1] * 20}
    cos = {"cos_1": hist, "cos_2": hist, "cos_3": hist}
    recs.append(_rec("cos_1-mean", "b", 4, {"per_seed": [cos, cos], "optimum": cos,
                                            "basin_per_seed": ["optimum", "optimum"]}, claim="pcg-alignment"))
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
    assert names == ["banding-a.png", "basins-c.png", "cosines-b.png", "training-loss.png"]
    for _, p in made:
        assert p.read_bytes()[:8] == PNG


def test_no_records_no_figures(tmp_path):
    assert render_figures([], tmp_path / "fig") == []
    assert not (tmp_path / "fig").exists()
    for spec in CLAIMS:                          # no record of a figure's check: no such figure
        for fig in spec.figures:
            assert fig.data([]) == {}, fig.stem


def test_records_must_be_typed(tmp_path):
    with pytest.raises(ValueError, match="records must be ClaimRecord"):
        render_figures([r.to_dict() for r in _records()], tmp_path / "fig")


def test_report_links_the_figures(tmp_path):
    j, m = write_reports(_records(), tmp_path, {"name": "quick"})
    md = m.read_text()
    assert "## Figures" in md and "(figures/banding-a.png)" in md and "(figures/cosines-b.png)" in md
    assert (tmp_path / "figures" / "banding-a.png").is_file()
    assert json.loads(j.read_text())["records"]


def test_claim_of_follows_the_specs_stems():
    assert claim_of("figures/seeds-banding.png") == "banding" and claim_of("x.png") is None
    for spec in CLAIMS:
        for fig in spec.figures:
            assert claim_of(fig.path_for("figures", "")) == spec.name
            assert claim_of(fig.path_for("figures", "asym")) == spec.name


# --------------------------------------------------------------------------- the published runs

@functools.lru_cache(maxsize=None)
def _published(name: str) -> tuple[ClaimRecord, ...]:
    data = json.loads((ROOT / "docs" / "results" / f"{name}.json").read_text(encoding="utf-8"))
    return tuple(ClaimRecord.from_dict(r) for r in data["records"])


#: the figures each published run supports (a figure that stops being drawn is a regression)
_SETTINGS = ("a", "b", "c", "d")
_COMMON = ({"kappa", "ar1-weights", "kalman-parity", "per-position", "spectral-shift", "training-loss",
            "improper-learning"}
           | {f"banding-{s}" for s in (*_SETTINGS, "asym")} | {f"cosines-{s}" for s in _SETTINGS}
           | {f"basins-{s}" for s in _SETTINGS}
           | {f"seeds-{c}" for c in ("ar1-optimum", "banding", "gd-equivalence", "kalman-parity", "pcg-alignment",
                                     "spectral-shift")})
EXPECTED = {"quick": _COMMON, "paper": _COMMON | {"depth", "seeds-depth"}}


@pytest.fixture(scope="module", params=sorted(EXPECTED))
def published(request, tmp_path_factory):
    """One published run drawn: ``(name, [(title, path), ...])`` -- one run per parameter, so
    that xdist's workers each draw only the run their test reads."""
    return request.param, render_figures(_published(request.param), tmp_path_factory.mktemp(request.param))


def test_published_runs_draw_every_figure_they_support(published):
    name, made = published
    assert {p.stem for _, p in made} == EXPECTED[name]
    assert len({p for _, p in made}) == len(made)
    for title, p in made:
        assert p.read_bytes()[:8] == PNG and title
        assert claim_of(p) in {s.name for s in CLAIMS}
    # the claims' own figures in the registry's order, then the generic per-run ones
    owners = [claim_of(p) for _, p in made if not p.stem.startswith("seeds-")]
    order = [s.name for s in CLAIMS]
    assert owners == sorted(owners, key=order.index)
    assert all(p.stem.startswith("seeds-") for _, p in made[len(owners):])
    titles = dict((p.name, t) for t, p in made)
    assert titles["banding-asym.png"] == "banding, setting asym: optimum vs trained seed 0"
    assert titles["banding-a.png"] == "banding, setting a: every run's weights beside the optimum"
    assert titles["per-position.png"] == "per-position MSE curves, setting a"


#: (figure stem, claim of the record, check, a details key the figure reads) -- one renamed
#: key per record the figure reads; the figures of kalman-parity, spectral-shift and depth
#: read coordinates and measured values only, no details
RENAMED = [("kappa", "ar1-optimum", "kappa-vs-T", "kappa"),
           ("kappa", "ar1-optimum", "trained-coefficient", "coefficient_per_seed"),
           ("ar1-weights", "ar1-optimum", "trained-coefficient", "W_V_per_seed"),
           ("banding", "banding", "optimum-in-a-class", "W_QK"),
           ("banding", "banding", "trained-out-of-class-share", "seed0_b"),
           ("banding", "banding", "trained-out-of-class-share", "b_per_run"),
           ("banding", "banding", "trained-out-of-class-share", "basin_mirror_per_seed"),
           ("cosines", "pcg-alignment", "cos_1-mean", "per_seed"),
           ("cosines", "pcg-alignment", "cos_1-mean", "basin_per_seed"),
           ("per-position", "kalman-parity", "per-position-mse", "mse"),
           ("basins", "training-basins", "twin-optimum-share", "points"),
           ("training-loss", "ar1-optimum", "trained-coefficient", "population_loss_theta_star"),
           ("training-loss", "banding", "trained-out-of-class-share", "loss_history_per_seed"),
           ("improper-learning", "improper-learning", "rate-share", "ratios"),
           ("improper-learning", "improper-learning", "rate-pm-lambda", "cases"),
           ("improper-learning", "improper-learning", "estimation-tradeoff", "best_ar_mse_over_filter")]
NO_DETAILS = {"kalman-parity", "spectral-shift", "depth"}


def _figure(stem):
    """(owning claim, FigureSpec) of the figure called ``stem``."""
    (found,) = [(spec.name, f) for spec in CLAIMS for f in spec.figures if f.stem == stem]
    return found


def test_every_figure_that_reads_details_is_checked_for_a_renamed_key():
    assert {f.stem for spec in CLAIMS for f in spec.figures} == {s for s, *_ in RENAMED} | NO_DETAILS


@pytest.mark.parametrize("stem,claim,check,key", RENAMED, ids=[f"{s}-{k}" for s, _, _, k in RENAMED])
def test_a_renamed_details_key_fails_naming_it(stem, claim, check, key):
    owner, fig = _figure(stem)
    records = [r for r in _published("quick") if r.claim in (owner, *fig.reads)]
    assert fig.data(records)                                      # as published: the figure's data
    k = next(i for i, r in enumerate(records) if r.claim == claim and r.check == check and key in r.details
             and not r.coords.control)
    d = copy.deepcopy(records[k].to_dict())            # to_dict shares the record's details
    d["details"][f"{key}_renamed"] = d["details"].pop(key)
    changed = list(records)
    changed[k] = ClaimRecord.from_dict(d)
    with pytest.raises(ValueError, match=re.escape(f"record {records[k].check_id!r} has no details[{key!r}]")):
        fig.data(changed)


def test_spec_title_reads_the_figures_data():
    _, fig = _figure("banding")
    assert get_spec("banding").figures == banding.FIGURES
    data = banding.banding_data(_records())
    assert fig.title_for("a", data["a"]) == "banding, setting a: every run's weights beside the optimum"
    control = dataclasses.replace(data["a"], windows={s: dataclasses.replace(w, runs=None)
                                                      for s, w in data["a"].windows.items()})
    assert fig.title_for("a", control) == "banding, setting a: optimum vs trained seed 0"


# --------------------------------------------------------------------------- what the figures draw

def _trained(check, setting, values, tol, comparator, verdict=None, basins=None):
    """A trained check as claims.harness.records builds it: per-seed values, or runs judged by basin."""
    from claims.harness.basins import BasinSplit
    from claims.harness.identity import RunRef
    runs = [RunRef(f"ars/{setting}/s=2/seed={i}", i) for i in range(len(values))]
    kw = dict(claim="demo", check=check, paper_ref="ref", label="a long label of what was measured",
              setting=setting, s=2, tolerance=tol, comparator=comparator, tolerance_source="project")
    if basins:
        return make_record(**kw, runs=runs, run_values=values,
                           basins=BasinSplit(basins, tuple(dict.fromkeys(basins))))
    from claims.harness.stats import seed_fields
    return make_record(**kw, runs=runs, **seed_fields(values))


def _vlines(ax):
    return sorted(float(line.get_xdata()[0]) for line in ax.lines
                  if len(line.get_xdata()) == 2 and line.get_xdata()[0] == line.get_xdata()[1]
                  and line.get_linestyle() == "--")


def test_seed_panel_draws_native_units_and_a_negative_one_sided_tolerance_on_its_allowed_side():
    fig, ax = _plt.subplots()
    r = _trained("excess", "a", [-0.30, -0.25, -0.28], -0.1, "<=")
    assert r.verdict == "holds"
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
    assert legend == ["far", "opt"]                 # the optimum first, the others by name
    colours = {float(line.get_xdata()[0]): line.get_color() for line in ax.lines
               if line.get_marker() == "o" and len(line.get_xdata())}
    assert colours[0.002] == colours[0.003] != colours[0.02] == colours[0.021]
    _plt.close(fig)


def test_a_basin_keeps_its_colour_in_every_panel():
    """One colour per basin over the figure: a panel without the optimum does not hand its
    colour to another basin.  Control: each panel alone colours its first basin C0."""
    both = _trained("odd", "a", [0.002, 0.02], 0.01, "<=", basins=["optimum", "far"])
    far_only = _trained("odd", "b", [0.02, 0.021], 0.01, "<=", basins=["far", "far"])
    shared = figures.basin_colours([both, far_only])
    assert shared == {"optimum": "C0", "far": "C1"}
    assert figures.basin_colours([far_only]) == {"far": "C0"}
    from matplotlib.colors import to_hex
    fig, ax = _plt.subplots()
    figures._seed_panel(ax, far_only, shared)
    assert {to_hex(line.get_color()) for line in ax.lines if line.get_marker() == "o"} == {to_hex("C1")}
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
                          comparator="abs<=", tolerance_source="paper")
    data = pcg_alignment.cosine_data([cos, trained])
    assert data["a"].paper == pytest.approx((0.88, 0.05))
    keep = _Keep()
    pcg_alignment.cosine_figure(keep, data["a"], tmp_path / "c.png")
    fig = keep.figs[0]
    hist, strip = fig.axes[0], fig.axes[3]          # cos_1: per-sequence histograms; each run's mean
    assert _vlines(strip) == [pytest.approx(0.88)] and _vlines(hist) == []     # the band is for the means
    assert sum(1 for line in hist.lines if line.get_drawstyle() == "steps-post") == 4     # 3 seeds + optimum
    assert sorted(float(line.get_xdata()[0]) for line in strip.lines if line.get_marker() == "o") == \
        pytest.approx([0.5, 0.6, 0.7])
    legend = [t.get_text().replace("\n", " ") for t in fig.legends[0].get_texts()]
    assert any("MEAN cos_1 = 0.88 +- 0.05" in t for t in legend) and "runs headed for far" in legend
    _plt.close(fig)


def test_kappa_figure_names_overlapping_curves_and_draws_setting_d_with_its_error_bar(tmp_path):
    curve = KappaCurve(T=(10, 20, 30), kappa={"a": (0.1, 0.2, 0.3), "c": (0.1001, 0.2002, 0.3003),
                                              "b": (0.05, 0.06, 0.07)},
                       methods={"a": "exact-rational", "b": "quadrature", "c": "quadrature"})
    assert overlaps(curve) == [("a", "c", pytest.approx(1e-3, rel=1e-2))]
    trained = (TrainedCoefficients("d", 0.12, (0.121, 0.119, 0.122), 0.0004),)
    keep = _Keep()
    kappa_figure(keep, KappaFigure(curve, trained), tmp_path / "k.png")
    ax = keep.figs[0].axes[0]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any("setting c" in t and "on top of a" in t for t in legend)
    assert any("setting d (Monte Carlo, T = 30 only" in t for t in legend)
    bars = [c for c in ax.containers if hasattr(c, "lines")]
    seg = bars[0].lines[2][0].get_segments()[0]              # setting d's kappa: 0.12 +- 1.96 SE
    assert seg[0][1] == pytest.approx(0.12 - 1.96 * 0.0004) and seg[1][1] == pytest.approx(0.12 + 1.96 * 0.0004)
    _plt.close(keep.figs[0])


def _shift(rows):
    return spectral_shift.ShiftFigure("a", tuple(spectral_shift.ShiftPoint(*row) for row in rows))


def test_spectral_shift_axis_is_clipped_and_says_so(tmp_path):
    rows = [("L=4, trained at r = 0.9", 0.9, 1.2, (1.1, 1.3), True), ("L=4, trained at r = 0.9", 1.05, 50.0, (2.0, 90.0), True),
            ("N4SID (median)", 0.9, 1.05, None, False), ("N4SID (median)", 1.05, 1.5, None, False)]
    keep = _Keep()
    clipped = spectral_shift.shift_figure(keep, _shift(rows), tmp_path / "s.png")
    ax = keep.figs[0].axes[0]
    assert clipped == 1 and ax.get_ylim()[1] <= 1.1 * CLIP        # the 50 is clipped
    assert f"clipped at {CLIP:g}" in ax.get_title() and "1 point(s) above" in ax.get_title()
    assert "medians" in ax.get_title() and ax.get_yscale() == "linear"
    assert any(line.get_marker() == "^" for line in ax.lines)
    assert "L=4, trained at r = 0.9" in [t.get_text() for t in ax.get_legend().get_texts()]
    _plt.close(keep.figs[0])
    # nothing above the clip: the axis ends just above the highest interval, not at the clip
    keep = _Keep()
    assert spectral_shift.shift_figure(keep, _shift(rows[:1] + rows[2:]), tmp_path / "s2.png") == 0
    top = keep.figs[0].axes[0].get_ylim()[1]
    assert 1.5 <= top <= 1.5 * 1.1
    _plt.close(keep.figs[0])


def _row(claim, check, measured, interval=None, **coords):
    """A reported row of ``claim``/``check`` with a measured value, its interval and coordinates."""
    return make_record(claim=claim, check=check, paper_ref="ref", label="m", measured=measured,
                       interval=interval, kind="reported", **coords)


def test_spectral_shift_rows_come_from_the_median_records():
    rec = _row("spectral-shift", "median-error-ratio", 1.3, (1.2, 1.4), setting="a", layers=1, radius=1.05,
               variant="trained-at-r=1")
    base = _row("spectral-shift", "median-error-ratio", 1.1, setting="a", radius=0.9, variant="n4sid")
    other = _row("spectral-shift", "gain-outside", 1.3, (1.2, 1.4), setting="a", layers=1, radius=1.05,
                 variant="trained-at-r=1")
    P = spectral_shift.ShiftPoint
    assert spectral_shift.shift_data([rec, base, other])[""] == spectral_shift.ShiftFigure(
        "a", (P("L=1, trained at r = 1", 1.05, 1.3, (1.2, 1.4), True, 1.0), P("N4SID (median)", 0.9, 1.1, None, False)))


def test_banding_gallery_shows_every_run_on_one_colour_scale_per_row(tmp_path):
    rng = np.random.default_rng(1)
    windows = {}
    for s in (2, 3):
        opt = banding.Weights(*(f(x) for f, x in zip((vector, matrix), _banded(s, "b-odd", rng))))
        runs = [banding.RunWeights(vector(b), matrix(W), name) for b, W, name in
                ((*_banded(s, cls, rng), name) for cls, name in (("b-odd", "optimum"), ("b-even", "local-min x")))]
        runs[1] = dataclasses.replace(runs[1], W=matrix(np.asarray(runs[1].W) * 7))        # a larger W
        windows[s] = banding.BandingWindow(s, optimum=opt, runs=tuple(runs))
    keep = _Keep()
    limits = banding.gallery_figure(keep, banding.BandingFigure("a", windows), tmp_path / "g.png")
    fig = keep.figs[0]
    for s, row in zip((2, 3), (0, 1)):
        ims = [ax.images[0] for ax in fig.axes[:6 * 2 * 3] if ax.images]
        w_ims = [im for im in ims if im.get_array().shape[0] == s + 1 and im.get_array().shape[1] == s]
        assert w_ims and {im.get_clim() for im in w_ims} == {(-limits[s][1], limits[s][1])}
        assert limits[s][1] == pytest.approx(np.abs(windows[s].runs[1].W).max())
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
    b2, W2 = banding.mirror_image(b, W)
    V[s], Q[:, :s] = b2, W2
    np.testing.assert_allclose(beta_from_weights(V, Q), target, rtol=1e-13, atol=1e-14)
    assert b2.max() == 1.0
    b3, W3 = banding.mirror_image(b2, W2)                       # an involution, in the gauge
    g = b[np.argmax(np.abs(b))]
    np.testing.assert_allclose(b3, b / g, atol=1e-14)


def test_banding_data_pairs_each_optimum_with_the_first_seeds_run_at_its_own_s():
    recs = _records()
    by = {(r.check, r.coords.s): r.details for r in recs if r.claim == "banding"}
    data = banding.banding_data(recs)
    assert set(data) == {"a"} and set(data["a"].windows) == {2, 3} and data["a"].gallery
    for s in (2, 3):
        opt, run = by["optimum-in-a-class", s], by["trained-out-of-class-share", s]
        mirrored = banding.mirror_image(run["b_per_run"][1], run["W_QK_per_run"][1])
        assert data["a"].windows[s] == banding.BandingWindow(
            s, optimum=banding.Weights(vector(opt["b"]), matrix(opt["W_QK"])),
            seed0=banding.Weights(vector(run["seed0_b"]), matrix(run["seed0_W_QK"])),
            runs=(banding.RunWeights(vector(run["b_per_run"][0]), matrix(run["W_QK_per_run"][0]),
                                     "local-min b-even +2.00 %"),
                  banding.RunWeights(vector(mirrored[0]), matrix(mirrored[1]), "optimum (mirror image shown)")))


def test_ratio_rows_name_each_series_and_keep_its_interval_or_none():
    def rec(check, measured, iv, variant=None, layers=None, claim="kalman-parity"):
        return _row(claim, check, measured, iv, setting="a", s=2, variant=variant, layers=layers)
    recs = [rec("trained-mse-ratio", 1.1, (1.0, 1.2)), rec("baseline-mse-ratio", 1.3, None, "n4sid"),
            rec("baseline-mse-ratio", 9.0, None, "not-a-series"), rec("trained-mse-ratio", 1.05, (1.0, 1.1), layers=2),
            rec("trained-mse-ratio", 7.0, None, claim="other")]
    rows = kalman_parity.parity_data(recs)[""]
    assert [(p.series, p.value, p.interval) for p in rows] == [
        ("trained layer (runs: mean and range)", 1.1, (1.0, 1.2)), ("N4SID (in context)", 1.3, None),
        ("L=2", 1.05, (1.0, 1.1))]
    assert (rows[0].setting, rows[0].s) == ("a", 2)


def test_ratio_rows_of_a_check_judged_by_run_show_its_runs_not_the_share():
    from claims.harness.identity import RunRef
    rec = make_record(claim="kalman-parity", check="trained-mse-ratio", paper_ref="ref", label="m", setting="a", s=1,
                      runs=[RunRef(f"ars/a/s=1/seed={k}", k) for k in range(3)], run_values=[2.0, 2.2, 2.6],
                      per_run=True, tolerance=1.05, comparator="<=", tolerance_source="project", expect="fails")
    assert rec.per_run and rec.measured == 0.0
    (p,) = kalman_parity.parity_data([rec])[""]
    assert (p.value, p.interval) == (np.mean([2.0, 2.2, 2.6]), (2.0, 2.6))


def test_basin_figure_bars_are_the_shares_with_the_tail_pooled(tmp_path):
    data = training_basins.basin_data(_records())["c"]
    d = data.windows[4]
    keep = _Keep()
    training_basins.basin_figure(keep, training_basins.Basins("c", {4: d}), tmp_path / "b.png", top=3)
    ax = keep.figs[0].axes[0]
    twins, runs = ax.patches[:4], ax.patches[4:]              # 3 points + "other", twins then runs
    expect_tw = [p.share for p in d.points[:3]] + [sum(p.share for p in d.points[3:])]
    assert [b.get_height() for b in twins] == pytest.approx(expect_tw)
    assert [b.get_height() for b in runs] == pytest.approx([2 / 3, 1 / 3, 0.0, 0.0])
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels[0] == "optimum" and labels[-1] == f"other ({len(d.points) - 3})"
    assert ax.get_ylim() == (0.0, 1.0)
    _plt.close(keep.figs[0])


def test_parity_figure_draws_each_method_with_its_interval_and_the_filter_at_one(tmp_path):
    P = kalman_parity.RatioPoint
    rows = [P("a", s, None, "trained layer", 1.0 + 0.1 * s, (0.95 + 0.1 * s, 1.1 + 0.1 * s)) for s in (1, 2, 4)]
    rows += [P("a", s, None, "least squares AR(s)", 1.5, None) for s in (1, 2, 4)]
    rows += [P("a", None, "n4sid", "N4SID (in context)", 1.3, None)]
    keep = _Keep()
    kalman_parity.parity_figure(keep, tuple(rows), tmp_path / "p.png")
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
    return _row("depth", check, value, iv, setting="a", T=T, layers=layers, variant=variant)


def test_depth_figure_has_error_bars_per_depth_and_says_so(tmp_path):
    recs = [_mse(L, T, 1.1 / L + 1 / T, (1.1 / L + 1 / T - 0.01, 1.1 / L + 1 / T + 0.02))
            for L in (1, 2, 4) for T in (10, 20, 40)]
    recs += [_mse(None, T, 1.2, None, variant="least-squares") for T in (10, 20, 40)]
    recs += [_mse(None, T, 1e9 if T == 40 else 3.0, None, variant="construction-L=4") for T in (10, 20, 40)]
    recs += [_mse(None, T, 2.0, None, variant=f"construction-L={depth.depth_for(T)}") for T in (10, 20, 40)]
    keep = _Keep()
    depth.depth_figure(keep, depth.depth_data(recs)[""], tmp_path / "d.png")
    a1, a2 = keep.figs[0].axes
    by = {c.get_label(): c.lines for c in a1.containers}
    seeds = "(mean of the seeds)"                        # the synthetic records hold no per-seed values
    assert list(by) == [f"trained L=1 {seeds}", f"trained L=2 {seeds}", f"trained L=4 {seeds}", "construction L=4",
                        "construction at L(T) (L = 17, 21, 26)", "least squares"]
    line, _, (bars,) = by[f"trained L=2 {seeds}"]
    assert list(line.get_ydata()) == pytest.approx([0.65, 0.6, 0.575])
    assert [float(b[1] - a[1]) for a, b in bars.get_segments()] == pytest.approx([0.03] * 3)
    assert "bars: 95 % t intervals" in a1.get_ylabel() and a1.get_xscale() == "log"
    assert [t.get_text() for t in a1.get_xticklabels()] == ["10", "20", "40"]
    assert list(by["construction L=4"][0].get_ydata()) == pytest.approx([3.0, 3.0, CLIP])
    assert list(by["construction at L(T) (L = 17, 21, 26)"][0].get_xdata()) == [10, 20, 40]
    assert "1 point(s) above" in a1.get_title() and "heavy-tailed" in keep.figs[0]._suptitle.get_text()
    by2 = {line.get_label(): line for line in a2.lines}
    assert list(by2["T = 20"].get_xdata()) == [1, 2, 4]
    assert list(by2["T = 20"].get_ydata()) == pytest.approx([1.15, 0.6, 0.325])
    assert a2.get_ylabel()
    _plt.close(keep.figs[0])


def test_position_figure_clips_a_spike_and_counts_it(tmp_path):
    t = list(range(2, 31))
    flat = [1.0 + 0.01 * k for k in range(len(t))]
    spiky = list(flat)
    spiky[0] = 1e6
    rec = _rec("per-position-mse", "a", None, {"t": t, "mse": {"trained": spiky, "Kalman filter": flat},
                                               "sequences": 100}, claim="kalman-parity")
    keep = _Keep()
    kalman_parity.position_figure(keep, kalman_parity.position_data([rec])[""], tmp_path / "pp.png")
    ax = keep.figs[0].axes[0]
    top = float(np.quantile(np.array(spiky + flat), 0.95)) * 3.0
    trained = next(line for line in ax.lines if line.get_label() == "trained")
    assert max(trained.get_ydata()) == pytest.approx(top) and top < 10
    marks = [line for line in ax.lines if line.get_marker() == "^"]
    assert len(marks) == 1 and list(marks[0].get_xdata()) == [2]
    assert "(1 point(s) above, triangles)" in ax.get_title() and ax.get_yscale() == "log"
    _plt.close(keep.figs[0])
