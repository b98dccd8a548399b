"""What four figures of the report show, read from their drawn artists (tests/_artists.py),
each drawn once from the published records of docs/results/paper.json (only the figure
under test): ``depth.png``, ``training-loss.png``, ``banding-a.png`` and ``kappa.png``.

Each is checked for no text outside the canvas, no overlapping texts, a distinct colour per
labelled series (or one colour per setting where the colour is the setting's), the legend
off the data, the tolerance line where the figure has one, and the defect a reviewer found
in it: the depth legend in numeric order, its title and legend saying the same true thing
(the mean over seeds of each seed's median) and a y label on both panels; the stationary
points of the training-loss panels labelled beside their lines without overprinting; index
ticks on every banding matrix, no title into the matrix above and no blank band below; the
kappa legend off the curves and the trained markers' horizontal shift said.  The negative
controls show each helper finds the defect it guards against when it is drawn back in.
"""
from __future__ import annotations

import functools
import json
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as _plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from claims.figures import ar1_optimum, banding, depth, training_basins  # noqa: E402
from claims.harness.records import ClaimRecord  # noqa: E402
from _artists import (blank_margins, horizontal_lines, overlapping_texts, points_under_legend,  # noqa: E402
                      repeated_colours, texts_outside)
from _figkeep import Keep as _Keep  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


@functools.lru_cache(maxsize=None)
def _published(name: str = "paper") -> tuple[ClaimRecord, ...]:
    data = json.loads((ROOT / "docs" / "results" / f"{name}.json").read_text(encoding="utf-8"))
    return tuple(ClaimRecord.from_dict(r) for r in data["records"])


def _drawn(draw, data, path):
    keep = _Keep()
    draw(keep, data, path)
    return keep.figs[0]


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    return tmp_path_factory.mktemp("shown")


@pytest.fixture(scope="module")
def depth_fig(out):
    fig = _drawn(depth.depth_figure, depth.depth_data(_published())[""], out / "depth.png")
    yield fig
    _plt.close(fig)


@pytest.fixture(scope="module")
def loss_fig(out):
    panels = training_basins.loss_data(_published())[""]
    fig = _drawn(training_basins.loss_figure, panels, out / "training-loss.png")
    yield fig, panels
    _plt.close(fig)


@pytest.fixture(scope="module")
def banding_fig(out):
    data = banding.banding_data(_published())["a"]
    assert data.gallery
    fig = _drawn(banding.banding_figure, data, out / "banding-a.png")
    yield fig, data
    _plt.close(fig)


@pytest.fixture(scope="module")
def kappa_fig(out):
    data = ar1_optimum.kappa_data(_published())[""]
    fig = _drawn(ar1_optimum.kappa_figure, data, out / "kappa.png")
    yield fig, data
    _plt.close(fig)


def _in_order(labels) -> bool:
    """The depth legend's order: trained stacks, then the construction, each by depth
    (numerically), then the rest."""
    def key(label):
        m = re.match(r"(trained|construction) L=(\d+)", label)
        return (0 if m.group(1) == "trained" else 1, int(m.group(2))) if m else (2, 0)
    return [key(t) for t in labels] == sorted(key(t) for t in labels)


def _legend(ax) -> list[str]:
    return [t.get_text() for t in ax.get_legend().get_texts()]


# --------------------------------------------------------------------------- depth.png

def test_depth_figure_legend_in_numeric_order_in_distinct_colours_off_the_data(depth_fig):
    a1, a2 = depth_fig.axes
    labels = _legend(a1)
    assert _in_order(labels)
    assert [t.split(" (")[0] for t in labels[:7]] == [
        "trained L=1", "trained L=2", "trained L=4", "construction L=1", "construction L=2", "construction L=4",
        "construction at L(T)"]
    assert "(L = 17, 21, 26, 31)" in labels[6]                  # one series over T, its depths named
    assert _legend(a2) == ["T = 10", "T = 20", "T = 40", "T = 80"]
    assert repeated_colours(a1) == [] and repeated_colours(a2) == []
    assert points_under_legend(a1) == 0 and points_under_legend(a2) == 0
    assert 1.0 in horizontal_lines(a1)                          # the filter's error


def test_depth_figure_texts_fit_and_both_panels_have_a_y_label(depth_fig):
    assert texts_outside(depth_fig) == []
    assert overlapping_texts(depth_fig) == []
    for ax in depth_fig.axes:
        assert "median squared error / the filter's median" in ax.get_ylabel()


def test_depth_figure_title_and_legend_say_what_is_drawn(depth_fig):
    """The trained points are the mean over seeds of each seed's median ratio (their
    records' measured values are the mean of their per-seed values): the title and the
    legend say so, with the number of seeds the records hold."""
    trained = [r for r in _published() if r.claim == "depth" and r.check == "trained-median-error"]
    assert trained and {r.n_seeds for r in trained} == {3}
    for r in trained:
        assert r.measured == pytest.approx(float(np.mean(r.values)))
    a1, _ = depth_fig.axes
    title = depth_fig._suptitle.get_text()
    assert "median over held-out sequences" in title and "mean over seeds of each seed's median" in title
    assert all(t.endswith("(mean of 3 seeds)") for t in _legend(a1) if t.startswith("trained"))
    assert "mean of 3 seeds" in a1.get_ylabel()
    by = {c.get_label(): c.lines[0] for c in a1.containers}
    r2 = sorted((r for r in trained if r.coords.layers == 2), key=lambda r: r.coords.T)
    assert list(by["trained L=2 (mean of 3 seeds)"].get_ydata()) == pytest.approx([r.measured for r in r2])


def test_depth_legend_order_check_finds_the_old_order():
    """Negative control: the order the reviewer found (lexicographic: 1, 17, 2, 21, ...)."""
    old = sorted(["construction L=1", "construction L=2", "construction L=17", "construction L=21", "least squares"])
    assert old[:3] == ["construction L=1", "construction L=17", "construction L=2"] and not _in_order(old)


# --------------------------------------------------------------------------- training-loss.png

def test_training_loss_labels_beside_their_lines_without_overlap(loss_fig):
    fig, panels = loss_fig
    assert texts_outside(fig) == []
    assert overlapping_texts(fig) == []
    assert points_under_legend(fig.axes[0]) == 0
    for ax, p in zip(fig.axes, panels):
        assert 1.0 in horizontal_lines(ax)                      # L*
        assert repeated_colours(ax) == []
        names = [n for _, n in p.basin_losses if not n.startswith("optimum")]
        labels = {t.get_text(): t for t in ax.texts}
        assert set(labels) == {"L* (optimum)", *names}
        # every label in the margin right of its panel, ordered as its lines are
        ax_box = ax.get_window_extent()
        boxes = {n: t.get_window_extent() for n, t in labels.items()}
        assert all(b.x0 > ax_box.x1 for b in boxes.values())
        by_line = sorted(["L* (optimum)", *names], key=lambda n: ([1.0] + [loss / p.L_star for loss, m in
                                                                            p.basin_losses if m == n])[-1])
        assert by_line == sorted(boxes, key=lambda n: boxes[n].y0)


def test_overlapping_texts_finds_a_label_drawn_over_another(loss_fig):
    """Negative control: a label drawn where the reviewer found them (over a neighbour's)."""
    fig, _ = loss_fig
    ax = next(ax for ax in fig.axes if len(ax.texts) > 2)
    first = ax.texts[1]
    extra = ax.text(*first.get_position(), "local-min b-odd +9.99 %", transform=first.get_transform(),
                    fontsize=first.get_fontsize(), va="center")
    try:
        assert ("local-min b-odd +9.99 %" in {t for pair in overlapping_texts(fig) for t in pair})
    finally:
        extra.remove()


def test_spread_keeps_the_order_and_the_gap():
    ys = [0.30, 0.31, 0.305, 0.9, 0.95]
    at = training_basins.spread(ys, 0.05, 0.0, 0.96)
    order = sorted(range(5), key=lambda i: ys[i])
    placed = [at[i] for i in order]
    assert all(b - a >= 0.05 - 1e-12 for a, b in zip(placed, placed[1:])) and placed[-1] <= 0.96


# --------------------------------------------------------------------------- banding-a.png

def test_banding_gallery_has_index_ticks_titles_clear_of_the_row_above_and_no_blank_band(banding_fig):
    fig, data = banding_fig
    assert texts_outside(fig) == []
    assert overlapping_texts(fig) == []
    mats = [ax for ax in fig.axes if ax.images and ax.get_label() != "<colorbar>"]
    assert len(mats) == 2 * sum(1 + len(w.runs) for w in data.windows.values())
    for ax in mats:
        rows, cols = ax.images[0].get_array().shape
        assert [t.get_text() for t in ax.get_xticklabels()] == [str(k + 1) for k in range(cols)]
        if rows > 1:                                        # W_QK: rows 1..s+1 (a b strip has one)
            assert [t.get_text() for t in ax.get_yticklabels()] == [str(k + 1) for k in range(rows)]
    r = fig.canvas.get_renderer()
    for ax in mats:
        if ax.get_title():
            t = ax.title.get_window_extent(r)
            for other in mats:
                if other is not ax:
                    assert not t.overlaps(other.get_window_extent(r)), ax.get_title()
    assert max(blank_margins(fig).values()) < 0.05


def test_blank_margins_find_the_old_blank_band():
    """Negative control: the gallery's old layout (subplots' default margins, no layout
    engine) left an eighth of the canvas blank below the last row."""
    fig, axes = _plt.subplots(4, 3, figsize=(6, 6))
    for ax in axes.flat:
        ax.imshow(np.eye(3))
    fig.subplots_adjust(bottom=0.125 + 0.05)
    try:
        assert blank_margins(fig)["bottom"] > 0.1
    finally:
        _plt.close(fig)


# --------------------------------------------------------------------------- kappa.png

def test_kappa_legend_off_the_curves_and_the_markers_shift_said(kappa_fig):
    fig, data = kappa_fig
    (ax,) = fig.axes
    assert texts_outside(fig) == []
    assert overlapping_texts(fig) == []
    assert points_under_legend(ax) == 0
    assert not ax.get_legend().get_window_extent().overlaps(ax.get_window_extent())
    # one colour per setting: a repeated colour is the same setting's curve and trained runs
    setting = re.compile(r"setting (\w+)")
    assert all(setting.search(a).group(1) == setting.search(b).group(1) for a, b in repeated_colours(ax))
    title = ax.get_legend().get_title().get_text()
    assert f"all at T = {ar1_optimum.TRAINED_T}" in title and f"shifted horizontally by {ar1_optimum.JITTER:g}" in title
    runs = [line for line in ax.lines if line.get_marker() == "x"]
    assert len(runs) == len(data.trained)
    drawn_at = [float(re.search(r"drawn at T = ([\d.]+)", t).group(1)) for t in _legend(ax) if t.startswith("trained")]
    xs = [float(line.get_xdata()[0]) for line in runs]
    assert xs == pytest.approx(drawn_at) and np.diff(xs) == pytest.approx([ar1_optimum.JITTER] * (len(xs) - 1))
    assert np.mean(xs) == pytest.approx(ar1_optimum.TRAINED_T)


def test_points_under_legend_finds_the_old_legend_over_the_curves(kappa_fig):
    """Negative control: the legend where it was (matplotlib's best place inside the axes,
    over the curves for T = 8-25)."""
    fig, _ = kappa_fig
    (ax,) = fig.axes
    old = ax.get_legend()
    ax.legend(fontsize=6, loc="upper left")
    try:
        assert points_under_legend(ax) > 0
    finally:
        ax.get_legend().remove()
        ax.legend_ = old
