"""The figures of the ar1-optimum claim (claims/specs/ar1_optimum.py): Theorem 4.1's kappa
(eq. 15) and the trained AR(1) layers.

- ``kappa.png`` (:func:`kappa_data`, :func:`kappa_figure`): exact kappa against T per
  setting (the ``kappa-vs-T`` record), with the trained AR(1) coefficients
  b_2 W_11 + b_1 W_21 at T = 30 (each ``trained-coefficient`` record: per run, their mean
  and range; a Monte Carlo kappa with its 95 % error bar where the setting has no curve);
- ``ar1-weights.png`` (:func:`ar1_weight_data`, :func:`ar1_weight_figure`): the paper's
  Fig. 1b, c for every seed: the trained W_V and W_QK beside theta* of eq. 15 in the family
  the run reached (docs/math.md section 4), each in the gauge of theta* (the scale that
  makes the largest entry of b = W_V[2, :] equal to +1; W_QK takes the inverse scale, so
  the layer's function is unchanged), the entries printed in the cells, one colour scale
  per matrix over the row.  Row 1 of W_V does not enter a single layer's prediction
  (y_hat_T = b^T C W_QK z_q), so it keeps its initial values.

>>> from claims.harness.records import make_record
>>> r = make_record(claim="ar1-optimum", check="kappa-vs-T", label="k", paper_ref="eq. 15",
...                 measured=0.0, kind="reported", setting="a-d",
...                 details={"T": [10, 30], "kappa": {"a": [0.1, 0.2]}, "methods": {"a": "exact"}})
>>> kappa_data([r])[""].curve.kappa
{'a': (0.1, 0.2)}
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np

from claims.figures.common import detail, matrix, of_check, setting_colour, vector
from claims.harness.spec import FigureSpec
from theory.ar import ar1_optimal_weights

__all__ = ["KappaCurve", "TrainedCoefficients", "KappaFigure", "kappa_data", "overlaps", "jittered", "kappa_figure",
           "Ar1Weights", "ar1_gauge", "ar1_weight_data", "ar1_weight_figure", "FIGURES"]

CLAIM = "ar1-optimum"


@dataclass(frozen=True)
class KappaCurve:
    """Exact kappa at each ``T``, per setting (``kappa[setting][i]`` at ``T[i]``), and the
    route each setting's kappa took (``methods``)."""

    T: tuple[int, ...]
    kappa: Mapping[str, tuple[float, ...]]
    methods: Mapping[str, str]


@dataclass(frozen=True)
class TrainedCoefficients:
    """A setting's trained AR(1) coefficient per run, the setting's kappa and its Monte
    Carlo standard error (None for an exact kappa)."""

    setting: str
    kappa: float
    per_run: tuple[float, ...]
    kappa_stderr: float | None

    @property
    def range(self) -> tuple[float, float]:
        return min(self.per_run), max(self.per_run)


@dataclass(frozen=True)
class KappaFigure:
    """``kappa.png``: the curve (None without a ``kappa-vs-T`` record) and the trained
    coefficients, by setting."""

    curve: KappaCurve | None
    trained: tuple[TrainedCoefficients, ...]


def kappa_data(records) -> dict[str, KappaFigure]:
    """``{"": KappaFigure}`` from the claim's ``kappa-vs-T`` and ``trained-coefficient``
    records (``{}`` without either): each trained layer is judged by run, so the figure
    shows the runs and their range, not an interval of their mean."""
    curves = of_check(records, CLAIM, "kappa-vs-T")
    curve = None
    if curves:
        r = curves[0]
        curve = KappaCurve(T=tuple(int(t) for t in detail(r, "T", "kappa")),
                           kappa={str(st): vector(v) for st, v in detail(r, "kappa", "kappa").items()},
                           methods={str(st): str(m) for st, m in detail(r, "methods", "kappa").items()})
    trained = [TrainedCoefficients(setting=str(r.coords.setting), kappa=float(detail(r, "kappa", "kappa")),
                                   per_run=vector(detail(r, "coefficient_per_seed", "kappa")),
                                   kappa_stderr=detail(r, "kappa_stderr", "kappa") or None)
               for r in of_check(records, CLAIM, "trained-coefficient")]
    if curve is None and not trained:
        return {}
    return {"": KappaFigure(curve, tuple(sorted(trained, key=lambda t: t.setting)))}


def overlaps(curve: KappaCurve | None, tol: float = 0.02) -> list[tuple[str, str, float]]:
    """Pairs of settings whose kappa curves lie within ``tol`` relative of each other at every
    T (about a line width at the figure's scale, so drawn on top of each other), with their
    largest relative difference."""
    out = []
    ks = curve.kappa if curve else {}
    names = sorted(ks)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            x, y = np.asarray(ks[a], dtype=float), np.asarray(ks[b], dtype=float)
            rel = float(np.max(np.abs(x - y) / np.abs(y)))
            if rel <= tol:
                out.append((a, b, rel))
    return out


#: the T of the trained AR(1) layers, and the horizontal spread of their markers (in T, from
#: one setting to the next, centred on it) that keeps settings of nearly one kappa apart
TRAINED_T, JITTER = 30, 0.6


def jittered(n: int, at: float = TRAINED_T, step: float = JITTER) -> list[float]:
    """Where the markers of ``n`` settings' trained layers are drawn: ``step`` apart, centred
    on ``at`` (for visibility only; every one is at ``at``).

    >>> jittered(4)
    [29.1, 29.7, 30.3, 30.9]
    """
    return [round(at + step * (i - (n - 1) / 2), 10) for i in range(n)]


def kappa_figure(plt, data: KappaFigure, path) -> None:
    """Exact kappa against T per setting; a Monte Carlo kappa at T = 30 with its 95 % error
    bar (its only route); the trained coefficients per run with their mean and range, each
    setting's markers shifted horizontally (:func:`jittered`, said in the legend's title
    and each entry); curves that coincide are named in the legend, which sits below the
    axes, off the data."""
    curve = data.curve
    fig, ax = plt.subplots(figsize=(7.5, 6.2))
    same = {b: (a, rel) for a, b, rel in overlaps(curve)}
    if curve:
        for st, vals in curve.kappa.items():
            extra = (f"; dashed, on top of {same[st][0]}: at most {100 * same[st][1]:.2g} % apart"
                     if st in same else "")
            ax.plot(curve.T, vals, "-o" if st not in same else "--", ms=3, color=setting_colour(st),
                    label=f"kappa, setting {st} ({curve.methods.get(st, '')}{extra})")
    xs = jittered(len(data.trained))
    for x, t in zip(xs, data.trained):
        st, k, per, (lo, hi), k_se = t.setting, t.kappa, t.per_run, t.range, t.kappa_stderr
        if k_se and not (curve and st in curve.kappa):
            ax.errorbar([float(TRAINED_T)], [k], yerr=[[1.96 * k_se], [1.96 * k_se]], fmt="D", ms=4, mfc="none",
                        color=setting_colour(st), capsize=4,
                        label=f"kappa, setting {st} (Monte Carlo, T = {TRAINED_T} only; 95 % error bar)")
        ax.plot([x] * len(per), per, "x", color=setting_colour(st), ms=5)
        mean = float(np.mean(per))
        ax.errorbar([x], [mean], yerr=[[mean - lo], [hi - mean]], fmt="s", ms=4, color=setting_colour(st), capsize=3,
                    label=f"trained, setting {st}: runs (x), their mean and range (drawn at T = {x:g})")
    ax.set_xlabel("T (sequence length)")
    ax.set_ylabel("kappa (eq. 15) / learned b2 W11 + b1 W21")
    ax.set_title(f"Theorem 4.1: exact kappa against T, trained AR(1) coefficients at T = {TRAINED_T}", fontsize=9)
    title = (f"trained layers: all at T = {TRAINED_T}, their markers shifted horizontally by {JITTER:g} per "
             "setting for visibility" if data.trained else None)
    ax.legend(fontsize=6, loc="upper center", bbox_to_anchor=(0.5, -0.12), title=title, title_fontsize=6)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


@dataclass(frozen=True)
class Ar1Weights:
    """One setting's row of ``ar1-weights.png``: its kappa, the family each run reached and
    every run's (W_V, W_QK) as trained."""

    setting: str
    kappa: float
    families: tuple[str, ...]
    runs: tuple[tuple[tuple[tuple[float, ...], ...], tuple[tuple[float, ...], ...]], ...]


def ar1_gauge(W_V, W_QK) -> tuple[np.ndarray, np.ndarray]:
    """(W_V / g, W_QK * g) with g the entry of b = W_V[1, :] (0-based) of largest magnitude:
    the gauge of theta*, whose b is a unit vector (e_2 in the paper's family, e_1 in the
    other).  The layer's function is unchanged (y_hat_T is bilinear in b and W_QK).

    >>> V, Q = ar1_gauge([[0.3, 0.1], [0.0, -2.0]], [[-0.1, 0.0], [0.0, 0.0]])
    >>> V.tolist(), Q.tolist()
    ([[-0.15, -0.05], [-0.0, 1.0]], [[0.2, -0.0], [-0.0, -0.0]])
    """
    V, Q = np.asarray(W_V, dtype=float), np.asarray(W_QK, dtype=float)
    b = V[1]
    g = float(b[int(np.argmax(np.abs(b)))])
    if g == 0.0:
        raise ValueError("W_V's last row is zero: the layer predicts 0 and has no gauge")
    return V / g, Q * g


def ar1_weight_data(records) -> dict[str, tuple[Ar1Weights, ...]]:
    """``{"": (Ar1Weights per setting, sorted)}`` from the ``trained-coefficient`` records
    (``{}`` without one)."""
    rows = []
    for r in of_check(records, CLAIM, "trained-coefficient"):
        V, Q = detail(r, "W_V_per_seed", "ar1-weights"), detail(r, "W_QK_per_seed", "ar1-weights")
        rows.append(Ar1Weights(setting=str(r.coords.setting), kappa=float(detail(r, "kappa", "ar1-weights")),
                               families=tuple(str(f) for f in detail(r, "family_per_seed", "ar1-weights")),
                               runs=tuple((matrix(v), matrix(q)) for v, q in zip(V, Q, strict=True))))
    return {"": tuple(sorted(rows, key=lambda w: w.setting))} if rows else {}


def _matrix(ax, M, lim, title):
    M = np.asarray(M, dtype=float)
    im = ax.imshow(M, cmap="RdBu_r", vmin=-lim, vmax=lim)
    for (i, j), x in np.ndenumerate(M):
        ax.text(j, i, f"{x:.3g}", ha="center", va="center", fontsize=6,
                color="white" if abs(x) > 0.6 * lim else "black")
    ax.set_xticks([])
    ax.set_yticks([])
    ax.set_title(title, fontsize=7)
    return im


def ar1_weight_figure(plt, rows: tuple[Ar1Weights, ...], path) -> dict:
    """The paper's Fig. 1b, c for every trained seed: one row per setting, W_V over W_QK;
    theta* first (one column per family reached).  Returns the colour limits per setting,
    (W_V's, W_QK's)."""
    cols = {w.setting: [f for f in ("value", "key") if f in w.families] or ["value"] for w in rows}
    ncol = max(len(cols[w.setting]) + len(w.runs) for w in rows)
    fig, axes = plt.subplots(2 * len(rows), ncol, figsize=(1.45 * ncol + 1.0, 3.0 * len(rows) + 1.0),
                             squeeze=False)
    fig.subplots_adjust(hspace=0.55, top=1 - 1.4 / (3.0 * len(rows) + 1.0), bottom=0.02)
    limits = {}
    for i, w in enumerate(rows):
        st = w.setting
        panels = [(f"theta* ({f} family)", *ar1_optimal_weights(w.kappa, f)) for f in cols[st]]
        fams = w.families or [None] * len(w.runs)
        panels += [(f"seed {k}" + (f" ({fam})" if fam else ""), *ar1_gauge(V, Q))
                   for k, ((V, Q), fam) in enumerate(zip(w.runs, fams))]
        lim_v = max(max(np.abs(V).max() for _, V, _ in panels), 1e-12)
        lim_q = max(max(np.abs(Q).max() for _, _, Q in panels), 1e-12)
        limits[st] = (float(lim_v), float(lim_q))
        for j in range(ncol):
            ax_v, ax_q = axes[2 * i, j], axes[2 * i + 1, j]
            if j >= len(panels):
                ax_v.axis("off")
                ax_q.axis("off")
                continue
            title, V, Q = panels[j]
            im_v = _matrix(ax_v, V, lim_v, f"{st}: {title}\nW_V")
            im_q = _matrix(ax_q, Q, lim_q, "W_QK")
        fig.colorbar(im_v, ax=list(axes[2 * i]), fraction=0.02, pad=0.01).ax.tick_params(labelsize=6)
        fig.colorbar(im_q, ax=list(axes[2 * i + 1]), fraction=0.02, pad=0.01).ax.tick_params(labelsize=6)
    fig.suptitle("Theorem 4.1 (the paper's Fig. 1b, c): trained AR(1) weights of every seed beside theta*\n"
                 "(eq. 15, kappa of the setting), in theta*'s gauge (largest |b| = +1, b = row 2 of W_V);\n"
                 "row 1 of W_V does not enter the prediction", fontsize=8)
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return limits


FIGURES = (
    FigureSpec("kappa", "Theorem 4.1: exact kappa against T with the trained AR(1) coefficients",
               kappa_data, kappa_figure),
    FigureSpec("ar1-weights", "Theorem 4.1 (Fig. 1b, c): trained AR(1) weights of every seed beside theta*",
               ar1_weight_data, ar1_weight_figure),
)
