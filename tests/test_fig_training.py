"""The training figures: the loss histories the claims store (claims/reports/fig_training.py), the
AR(1) weight figure (the paper's Fig. 1, claims/figures/ar1_optimum.py) and the training-loss
figure (claims/figures/training_basins.py), checked on synthetic records by their artists'
contents, and the pieces they use against independent computations (the layer's own forward
pass for the gauge)."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as _plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from claims.figures.ar1_optimum import ar1_gauge, ar1_weight_data, ar1_weight_figure  # noqa: E402
from claims.figures.training_basins import loss_data, loss_figure  # noqa: E402
from claims.harness.records import make_record  # noqa: E402
from claims.reports import fig_training as ft  # noqa: E402
from claims.reports.figures import claim_of, render_figures  # noqa: E402
from models.attention import LinearSelfAttention  # noqa: E402
from theory.ar import ar1_optimal_weights  # noqa: E402
from _figkeep import Keep as _Keep  # noqa: E402


class _Run:
    def __init__(self, history, every, steps):
        self.loss_history, self.history_every = np.asarray(history, dtype=float), every
        self.config = type("C", (), {"steps": steps})()


def test_loss_curves_are_block_means_with_the_last_block_short():
    h = np.arange(1.0, 11.0)                                     # 10 points of 16 steps
    d = ft.loss_curves([_Run(h, 16, 160), _Run(2 * h, 16, 160)], points=4)
    # blocks of ceil(10 / 4) = 3 points: [1,2,3], [4,5,6], [7,8,9], [10]
    assert d["loss_history_per_seed"][0] == [2.0, 5.0, 8.0, 10.0]
    assert d["loss_history_per_seed"][1] == [4.0, 10.0, 16.0, 20.0]
    assert d["loss_history_steps"] == [48, 96, 144, 160]


def test_loss_curves_refuse_runs_of_different_spacing_and_no_runs():
    with pytest.raises(ValueError, match="share"):
        ft.loss_curves([_Run(np.ones(10), 16, 160), _Run(np.ones(10), 8, 80)])
    with pytest.raises(ValueError, match="runs"):
        ft.loss_curves([])


def test_ar1_gauge_keeps_the_layers_function_and_makes_b_a_unit_vector():
    rng = np.random.default_rng(3)
    W_V, W_QK = rng.standard_normal((2, 2)), rng.standard_normal((2, 2))
    V, Q = ar1_gauge(W_V, W_QK)
    assert np.abs(V[1]).max() == pytest.approx(1.0) and V[1][np.argmax(np.abs(V[1]))] == 1.0
    y = torch.tensor(rng.standard_normal((64, 12)), dtype=torch.float64)
    with torch.no_grad():
        before = LinearSelfAttention.from_weights(W_V, W_QK, dtype=torch.float64).predict(y).numpy()
        after = LinearSelfAttention.from_weights(V, Q, dtype=torch.float64).predict(y).numpy()
    np.testing.assert_allclose(after, before, rtol=1e-12, atol=1e-14)
    with pytest.raises(ValueError, match="last row"):
        ar1_gauge([[1.0, 0.0], [0.0, 0.0]], W_QK)


def _reported(claim, check, details, **coords):
    return make_record(claim=claim, check=check, paper_ref="ref", label="m", measured=0.0, kind="reported",
                       details=details, **coords)


def _ar1_record(setting, kappa, runs, families, L_star, curves, steps):
    return _reported("ar1-optimum", "trained-coefficient",
                     {"kappa": kappa, "kappa_stderr": None, "family_per_seed": families,
                      "coefficient_per_seed": [kappa] * len(runs),
                      "W_V_per_seed": [np.asarray(V).tolist() for V, _ in runs],
                      "W_QK_per_seed": [np.asarray(Q).tolist() for _, Q in runs],
                      "population_loss_theta_star": L_star,
                      "loss_history_per_seed": curves, "loss_history_steps": steps}, setting=setting)


def test_ar1_weight_figure_shows_theta_star_of_each_family_beside_every_seed_in_its_gauge(tmp_path):
    kappa = 0.2
    V1, Q1 = ar1_optimal_weights(kappa, "value")
    V2, Q2 = ar1_optimal_weights(kappa, "key")
    runs = [(V1 * 3.0, Q1 / 3.0), (V2 * -0.5, Q2 / -0.5)]      # theta* of each family, rescaled
    data = ar1_weight_data([_ar1_record("a", kappa, runs, ["value", "key"], 0.1, [[1.0]], [10])])[""]
    keep = _Keep()
    limits = ar1_weight_figure(keep, data, tmp_path / "w.png")
    fig = keep.figs[0]
    panels = {ax.get_title(): ax.images[0].get_array() for ax in fig.axes if ax.images}
    wv = {t.split("\n")[0]: a for t, a in panels.items() if t.endswith("W_V")}
    assert set(wv) == {"a: theta* (value family)", "a: theta* (key family)", "a: seed 0 (value)", "a: seed 1 (key)"}
    np.testing.assert_allclose(wv["a: seed 0 (value)"], V1)     # the gauge undoes the rescaling
    np.testing.assert_allclose(wv["a: seed 1 (key)"], V2)
    qk = [ax.images[0].get_array() for ax in fig.axes if ax.images and ax.get_title() == "W_QK"]
    assert len(qk) == 4
    assert any(np.allclose(a, Q1) for a in qk) and any(np.allclose(a, Q2) for a in qk)
    assert limits["a"] == (pytest.approx(1.0), pytest.approx(kappa))
    texts = {t.get_text() for ax in fig.axes for t in ax.texts}
    assert "0.2" in texts                                       # the entries printed in the cells
    assert sum(1 for ax in fig.axes if ax.get_label() == "<colorbar>") == 2
    assert "Fig. 1" in fig._suptitle.get_text()
    _plt.close(fig)


def test_loss_figure_draws_every_run_over_l_star_with_the_basin_lines(tmp_path):
    steps = [100, 200, 300]
    ar1 = _ar1_record("b", 0.2, [ar1_optimal_weights(0.2)], ["value"], 0.5, [[2.0, 1.0, 0.55]], steps)
    details = {"population_loss_optimum": 0.25, "loss_history_per_seed": [[1.0, 0.3, 0.26], [1.0, 0.3, 0.27]],
               "loss_history_steps": steps, "basin_loss_per_seed": [0.25, 0.275],
               "basin_per_seed": ["optimum", "local-min b-odd +10.00 %"]}
    ars = _reported("banding", "trained-out-of-class-share", details, setting="a", s=2)
    control = make_record(claim="banding", check="trained-out-of-class-share", paper_ref="ref", label="m",
                          measured=1.0, tolerance=0.5, comparator="<=", tolerance_source="project",
                          expect="fails", details={}, setting="asym", s=2)   # no loss history: not read
    panels = loss_data([ars, control, ar1])[""]
    assert [p.title for p in panels] == ["AR(1), setting b", "AR(2), setting a"]
    keep = _Keep()
    loss_figure(keep, panels, tmp_path / "l.png")
    fig = keep.figs[0]
    ax1, ax2 = fig.axes[0], fig.axes[1]
    runs = [line for line in ax1.lines if line.get_label().startswith("seed")]
    np.testing.assert_allclose(runs[0].get_ydata(), [4.0, 2.0, 1.1])           # loss / L*
    np.testing.assert_allclose(runs[0].get_xdata(), steps)
    hlines = sorted(float(line.get_ydata()[0]) for line in ax2.lines if line.get_label() == "L* (optimum)"
                    or line.get_linestyle() == "--")
    assert hlines == pytest.approx([1.0, 1.1])                  # L* and the local minimum, not the optimum twice
    assert ax2.get_yscale() == "log" and "local-min b-odd +10.00 %" in {t.get_text() for t in ax2.texts}
    _plt.close(fig)


def test_render_figures_places_both_in_their_claims(tmp_path):
    steps = [100, 200]
    rec = _ar1_record("a", 0.2, [ar1_optimal_weights(0.2)], ["value"], 0.5, [[1.0, 0.6]], steps)
    made = render_figures([rec], tmp_path / "fig")
    names = sorted(p.name for _, p in made)
    assert names == ["ar1-weights.png", "kappa.png", "training-loss.png"]
    assert all(p.stat().st_size > 0 for _, p in made)
    assert claim_of("ar1-weights.png") == "ar1-optimum" and claim_of("training-loss.png") == "training-basins"
