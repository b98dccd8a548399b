"""The figure of the improper-learning claim (claims/specs/improper_learning.py): ``improper-learning.png``.

The claim (paper, Sec. 3): the best AR(s) predictor's excess MSE over the Kalman filter,
excess(s) = MSE(best AR(s)) / MSE(filter) - 1, decays like rho(L)^(2s), L = A - K_g c^T.
Four panels, each from the records of claims/test_improper_learning.py:

* the excess against s, log y, of the fixed systems A = diag(+-lambda) (the
  ``rate-pm-lambda`` record's ``cases``: each case's ``excess`` at s = 1, 2, ... and
  ``rho``), each with its rho(L)^(2s) reference slope (dashed, through the mean of
  log excess - 2 s log rho over the points in the fit range, the ``rate-share`` records'
  ``fit_range``, shaded);
* the excess against s, log y, in the paper's own family (the ``estimation-tradeoff``
  record: its setting at T = 30, the mean over ``sequences`` drawn systems of the best AR(s)
  of each known system and of in-context least squares AR(s)) -- a mixture of systems, so
  no single rho(L) and no reference slope;
* per state dimension d, each drawn system's fitted slope over the predicted one,
  slope / (2 log rho(L)) (the non-control ``rate-share`` records' ``ratios``), with the
  per-system tolerance (``per_system_tolerance``) as lines at 1 -+ tol;
* per d, the share of systems that match the rate with its Clopper-Pearson interval, and
  the two control rates' (rho(L)^s, rho(A)^(2s)), against the target share
  (``target_share``, a horizontal line).

Each legend sits right of its panel, off the data.  A record of one of these checks that
lacks a key the figure reads is a ValueError naming the key.

>>> from claims.harness.records import make_record
>>> r = make_record(claim="improper-learning", check="rate-pm-lambda", label="m", paper_ref="Sec. 3",
...                 measured=0.0, kind="reported", setting="a",
...                 details={"cases": [{"lambda": [0.3, -0.3], "rho": 0.2, "excess": [1e-3, 1e-3, 4e-6]}]})
>>> improper_data([r])[""].fixed
(ExcessCurve(label='A = diag(0.3, -0.3)', rho=0.2, excess=(0.001, 0.001, 4e-06)),)
>>> rate_of("d=2,rate-rho-A-2s"), rate_of("d=2")
('control: rho(A)^(2s)', 'rho(L)^(2s) (the claim)')
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from claims.figures.common import detail, interval_of, of_check, vector, wrap
from claims.harness.spec import FigureSpec

__all__ = ["RATES", "ExcessCurve", "Tradeoff", "RateShare", "ImproperFigure", "rate_of", "improper_data",
           "improper_figure", "FIGURES"]

CLAIM = "improper-learning"
STEM = "improper-learning"
#: the resolution the figure is laid out and saved at (what a test reads from the canvas is the PNG)
DPI = 90
#: the rate a ``rate-share`` record's variant tests, by the part after ``d=<d>``
RATES = {"": "rho(L)^(2s) (the claim)", "rate-rho-L-s": "control: rho(L)^s",
         "rate-rho-A-2s": "control: rho(A)^(2s)"}
_LEGEND = dict(fontsize=6.5, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)


@dataclass(frozen=True)
class ExcessCurve:
    """One fixed system: its name, rho(L) and its excess at s = 1, 2, ..."""

    label: str
    rho: float
    excess: tuple[float, ...]


@dataclass(frozen=True)
class Tradeoff:
    """The paper's family at length ``T``: the mean over ``sequences`` systems of MSE / the
    filter's at each window s, of the best AR(s) of each known system and of in-context least
    squares AR(s)."""

    setting: str
    T: int | None
    sequences: int
    best: tuple[tuple[int, float], ...]
    least_squares: tuple[tuple[int, float], ...]


@dataclass(frozen=True)
class RateShare:
    """One ``rate-share`` record: the state dimension, the rate tested, the share of systems
    matching it and its interval, whether it is a control, whether it is only reported, and
    (the claim's own rate) each system's fitted / predicted slope, and how many systems were drawn."""

    d: int
    rate: str
    share: float
    interval: tuple[float, float] | None
    control: bool
    reported: bool
    ratios: tuple[float, ...] = ()
    systems: int = 0


@dataclass(frozen=True)
class ImproperFigure:
    """``improper-learning.png``: what each panel draws (an empty part: no such panel's data)
    and the check's per-system tolerance, target share and fit range (None if unrecorded)."""

    fixed: tuple[ExcessCurve, ...]
    tradeoff: Tradeoff | None
    shares: tuple[RateShare, ...]
    per_system_tolerance: float | None = None
    target_share: float | None = None
    fit_range: tuple[float, float] | None = None
    fixed_setting: str | None = None


def rate_of(variant: str | None) -> str:
    """The rate a ``rate-share`` variant (``d=2``, ``d=2,rate-rho-L-s``) tests (:data:`RATES`)."""
    rest = (variant or "").partition(",")[2]
    return RATES.get(rest, rest)


def _case(c, where: str) -> ExcessCurve:
    missing = [k for k in ("lambda", "rho", "excess") if k not in c]
    if missing:
        raise ValueError(f"figure {STEM}: {where} has no {missing}")
    lam = ", ".join(f"{float(x):g}" for x in np.atleast_1d(c["lambda"]))
    return ExcessCurve(f"A = diag({lam})", float(c["rho"]), vector(c["excess"]))


def _curve(d: dict) -> tuple[tuple[int, float], ...]:
    return tuple(sorted((int(s), float(v)) for s, v in d.items()))


def improper_data(records) -> dict[str, ImproperFigure]:
    """``{"": ImproperFigure}`` of the claim's ``rate-pm-lambda`` (not the control),
    ``estimation-tradeoff`` and ``rate-share`` records; ``{}`` without any of them."""
    pm = [r for r in of_check(records, CLAIM, "rate-pm-lambda") if not r.coords.control]
    fixed = tuple(_case(c, f"record {r.check_id!r} details['cases'][{i}]")
                  for r in pm for i, c in enumerate(detail(r, "cases", STEM)))
    tradeoff = None
    for r in of_check(records, CLAIM, "estimation-tradeoff")[:1]:
        tradeoff = Tradeoff(str(r.coords.setting), r.coords.T, int(detail(r, "sequences", STEM)),
                            _curve(detail(r, "best_ar_mse_over_filter", STEM)),
                            _curve(detail(r, "least_squares_mse_over_filter", STEM)))
    shares, tol, target, fit = [], None, None, None
    for r in of_check(records, CLAIM, "rate-share"):
        own = not r.coords.control
        reported = r.kind == "reported"
        if own and not reported:            # the judged check: its per-system tolerance, target, range
            tol = float(detail(r, "per_system_tolerance", STEM))
            target = float(detail(r, "target_share", STEM))
            fit = tuple(float(x) for x in detail(r, "fit_range", STEM))
        shares.append(RateShare(int(detail(r, "d", STEM)), rate_of(r.coords.variant), float(r.measured),
                                interval_of(r), bool(r.coords.control), reported,
                                vector(detail(r, "ratios", STEM)) if own else (),
                                int(r.details.get("systems", 0)) if own else 0))
    if not (fixed or tradeoff or shares):
        return {}
    return {"": ImproperFigure(fixed, tradeoff, tuple(sorted(shares, key=lambda x: (x.d, x.control, x.rate))),
                               tol, target, fit, str(pm[0].coords.setting) if pm else None)}


def _fixed_panel(ax, data: ImproperFigure) -> None:
    """The fixed systems' excess against s and each one's rho(L)^(2s) slope."""
    if data.fit_range:
        ax.axhspan(*data.fit_range, color="0.93", zorder=0, label="fit range of the paired slope")
    for k, c in enumerate(data.fixed):
        s = np.arange(1, len(c.excess) + 1)
        ex = np.asarray(c.excess, dtype=float)
        ok = ex > 0
        ax.plot(s[ok], ex[ok], "o-", ms=3.5, lw=1, color=f"C{k}", label=f"{c.label}: excess(s)")
        lo, hi = data.fit_range or (0.0, np.inf)
        use = ok & (ex >= lo) & (ex <= hi)
        use = use if use.any() else ok
        offset = float(np.mean(np.log(ex[use]) - 2 * s[use] * np.log(c.rho)))
        ax.plot(s, np.exp(offset + 2 * s * np.log(c.rho)), "--", lw=1.1, color=f"C{k + 5}",
                label=f"rho(L)^(2s), rho(L) = {c.rho:.3g}")
    ax.set_yscale("log")
    ax.set_xlabel("window s", fontsize=8)
    ax.set_ylabel("excess over the filter (log)", fontsize=8)
    noise = f" (setting {data.fixed_setting}'s noise)" if data.fixed_setting else ""
    ax.set_title(f"fixed systems A = diag(+-lambda){noise}: the excess falls in steps\n"
                 "of two windows, along rho(L)^(2s)", fontsize=8)
    ax.legend(**_LEGEND)


def _tradeoff_panel(ax, t: Tradeoff) -> None:
    """The paper's family: the mean excess of the best AR(s) and of least squares AR(s)."""
    for k, (name, curve) in enumerate((("best AR(s) of each known system", t.best),
                                       ("in-context least squares AR(s)", t.least_squares))):
        s = [p[0] for p in curve]
        ex = [p[1] - 1.0 for p in curve]
        ax.plot(s, ex, "os"[k] + "-", ms=3.5, lw=1, color=("C2", "C4")[k], label=name)
    ax.set_yscale("log")
    ax.set_xlabel("window s", fontsize=8)
    ax.set_ylabel("mean MSE / the filter's - 1 (log)", fontsize=8)
    T = f", T = {t.T}" if t.T is not None else ""
    ax.set_title(wrap(f"setting {t.setting}'s family{T}: mean over {t.sequences} drawn systems (a mixture: no "
                      "single rho(L), no reference slope)", 60), fontsize=8)
    ax.legend(**_LEGEND)


def _ratio_panel(ax, data: ImproperFigure) -> None:
    """Per d, each system's fitted slope over 2 log rho(L), and the per-system tolerance."""
    own = [r for r in data.shares if not r.control and r.ratios]
    for k, r in enumerate(own):
        v = np.asarray(r.ratios, dtype=float)
        jitter = ((np.arange(v.size) * 0.6180339887) % 1.0 - 0.5) * 0.5       # deterministic spread
        within = f", {int(np.sum(np.abs(v - 1) <= data.per_system_tolerance))} of {v.size} within" \
            if data.per_system_tolerance is not None else ""
        if r.systems > v.size:          # systems whose excess could not be fitted are not drawn: say so
            within += f" ({r.systems - v.size} of {r.systems} not fitted)"
        ax.scatter(r.d + jitter, v, s=5, alpha=0.35, lw=0, color=f"C{k}", label=f"d = {r.d}{within}")
    if data.per_system_tolerance is not None:
        for y in (1 - data.per_system_tolerance, 1 + data.per_system_tolerance):
            ax.axhline(y, color="darkred", ls="--", lw=0.9,
                       label=f"per-system tolerance 1 +- {data.per_system_tolerance:g}" if y > 1 else None)
    ax.axhline(1.0, color="black", lw=0.8, label="predicted: slope = 2 log rho(L)")
    ax.set_xticks(sorted({r.d for r in own}))
    ax.set_xlabel("state dimension d (systems of settings a-d pooled)", fontsize=8)
    ax.set_ylabel("fitted slope / 2 log rho(L)", fontsize=8)
    ax.set_title("each drawn system's fitted rate over the predicted rate", fontsize=8)
    ax.legend(markerscale=2.5, **_LEGEND)


def _share_panel(ax, data: ImproperFigure) -> None:
    """Per d, the share of systems matching each rate, its interval, and the target share."""
    rates = list(dict.fromkeys(r.rate for r in sorted(data.shares, key=lambda x: x.control)))
    for k, rate in enumerate(rates):
        rows = sorted((r for r in data.shares if r.rate == rate), key=lambda r: r.d)
        x = np.array([r.d for r in rows], dtype=float) + (k - (len(rates) - 1) / 2) * 0.15
        y = np.array([r.share for r in rows])
        err = np.array([[r.share - r.interval[0], r.interval[1] - r.share] if r.interval else [0, 0]
                        for r in rows]).T
        ax.errorbar(x, y, yerr=np.clip(err, 0, None), fmt="o" if k == 0 else "s", ms=4, capsize=2, lw=1,
                    color=("C0", "C3", "C1", "C4")[k % 4], label=rate)
        hollow = [i for i, r in enumerate(rows) if r.reported]
        if hollow:
            ax.plot(x[hollow], y[hollow], "o", ms=8, mfc="none", color="0.4", label="reported only (d = 1)")
    if data.target_share is not None:
        ax.axhline(data.target_share, color="darkred", ls="--", lw=0.9,
                   label=f"target share {data.target_share:g} (holds: interval's low end >= it)")
    ax.set_ylim(-0.04, 1.06)                 # a share of 0 drawn whole, not cut by the axis
    ax.set_xticks(sorted({r.d for r in data.shares}))
    ax.set_xlabel("state dimension d", fontsize=8)
    ax.set_ylabel("share of systems matching the rate", fontsize=8)
    tol = f"a system matches when |slope / log-rate - 1| <= {data.per_system_tolerance:g}; " \
        if data.per_system_tolerance else ""
    ax.set_title(f"check rate-share: share of systems whose excess decays at the rate\n({tol}95 % "
                 "Clopper-Pearson intervals)", fontsize=8)
    ax.legend(**_LEGEND)


def improper_figure(plt, data: ImproperFigure, path) -> None:
    """The panels the records support (module doc), two per row."""
    panels = [(f, a) for f, a, ok in ((_fixed_panel, data, data.fixed), (_tradeoff_panel, data.tradeoff,
                                                                           data.tradeoff),
                                      (_ratio_panel, data, any(r.ratios for r in data.shares)),
                                      (_share_panel, data, data.shares)) if ok]
    rows = (len(panels) + 1) // 2
    fig, axes = plt.subplots(rows, 2, figsize=(14, 3.9 * rows + 0.6), squeeze=False, dpi=DPI)
    for ax, (draw, arg) in zip(axes.flat, panels):
        draw(ax, arg)
    for ax in list(axes.flat)[len(panels):]:
        fig.delaxes(ax)
    fig.suptitle("improper learning (paper, Sec. 3): the best AR(s) predictor's excess MSE over the Kalman "
                 "filter decays like rho(L)^(2s)", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)


FIGURES = (FigureSpec(STEM, "improper learning: the AR(s) excess over the filter against s, and its rate",
                      improper_data, improper_figure),)
