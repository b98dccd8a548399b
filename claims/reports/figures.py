"""Figures of the claims report (PNG, matplotlib), drawn from the records alone.

Every figure is drawn from data in the records (``claims.json``), never from a rerun, so
a report can be redrawn from a published ``claims.json``.  :func:`render_figures` is called
by the report renderer (claims/reports/report.py, ``render_report``), the one writer of
``claims.md`` and ``index.html``, which link the figures it returns.  Figures:

- ``kappa.png``: exact kappa (eq. 15) against T in settings a, b, c, with the trained
  AR(1) coefficients at T = 30 (per run, their mean and range);
- ``seeds-<claim>.png``: the per-run values of every trained check, in the units of the
  tolerance each run is held to, each run's own interval where it has one, the verdict
  and how many runs hold;
- ``banding-<setting>.png``: for s = 2, 3, 4, heatmaps of b = W_V[s, :] and W_QK[:, :s]
  of the population optimum beside those of every trained run, each titled with the basin
  it is headed for (canonical gauge, largest |b_r| = +1; one colour scale per row with its
  colour bars; outlined: the entries the optimum's class keeps) -- or, for a report
  without every run's weights, beside trained seed 0 (like the paper's Fig. 1);
- ``cosines-<setting>.png``: histograms of cos_1, cos_2, cos_3 over the held-out
  sequences (docs/math.md section 6.3), trained seeds and the population optimum;
- ``kalman-parity.png``: MSE / MSE(Kalman) against s per setting and method;
- ``spectral-shift.png``: the median error over the filter's against the test radius, per depth and training radius;
- ``depth.png``: median error over the filter's against T per trained depth and reference, and against depth;
- ``per-position.png``: the MSE of predicting y_t at every position t (setting a);
- ``ar1-weights.png``, ``training-loss.png``: the trained AR(1) weights beside theta* (the
  paper's Fig. 1b, c) and every run's training loss against L* (claims/reports/fig_training.py);
- ``basins-<setting>.png``: for s = 2, 3, 4, the share of noise-free twins (claims/
  test_training_basins.py) and of trained runs headed for each stationary point, the
  optimum first, then by loss.

A figure whose records are missing (a partial run, say) is skipped.
"""
from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Iterable, Mapping

import numpy as np
from matplotlib.patches import Rectangle

from claims.harness.display import format_value
from claims.reports.fig_training import render_training_figures
from claims.harness.identity import Coords
from theory.parity import class_masks, classify

__all__ = ["render_figures", "claim_of", "FIGURE_CLAIMS"]


def _records(records, claim, *checks):
    """The records of ``claim`` whose check is one of ``checks`` (by field, never by label)."""
    for r in records:
        if r.get("claim") == claim and r.get("check") in checks:
            yield r


def _coords(r) -> dict:
    return r.get("coords") or {}


def _setting_s(r):
    """(setting, s) from a record's coordinates."""
    c = _coords(r)
    return c.get("setting"), c.get("s")


def _criterion(r) -> tuple:
    """(comparator, tolerance) a record's values are held to: each run's for a record judged by
    run (its ``per_run`` field), else the record's own."""
    pr = r.get("per_run")
    return (pr["comparator"], pr["tolerance"]) if pr else (r.get("comparator"), r.get("tolerance"))


def _run_values(r) -> list:
    return r.get("values") or [e.get("value") for e in r.get("runs") or []]


def _banding_data(records):
    """{setting: {s: {"optimum": (b, W), "trained": (b, W)}}} from the banding records."""
    out: dict = {}
    for r in _records(records, "banding", "optimum-in-a-class"):
        d = r.get("details", {})
        if "b" in d and "W_QK" in d:
            st, s = _setting_s(r)
            out.setdefault(st, {}).setdefault(s, {})["optimum"] = (d["b"], d["W_QK"])
    for r in _records(records, "banding", "trained-out-of-class-share"):
        d = r.get("details", {})
        if "seed0_b" in d:
            st, s = _setting_s(r)
            out.setdefault(st, {}).setdefault(s, {})["trained"] = (d["seed0_b"], d["seed0_W_QK"])
    return out


def _outline(ax, mask, inset=0.1):
    """Outline the kept cells of a boolean mask (rows x cols) on an imshow axis, each inside
    its own cell (inset), so that a checkerboard does not outline every cell."""
    for (i, j), keep in np.ndenumerate(mask):
        if keep:
            ax.add_patch(Rectangle((j - 0.5 + inset, i - 0.5 + inset), 1 - 2 * inset, 1 - 2 * inset,
                                   fill=False, edgecolor="black", linewidth=1.8))


def _banding_figure(plt, setting, per_s, path):
    rows = sorted(s for s in per_s if s is not None)
    fig, axes = plt.subplots(len(rows), 4, figsize=(11, 2.6 * len(rows)), squeeze=False,
                             gridspec_kw={"width_ratios": [1, 4, 1, 4]})
    for i, s in enumerate(rows):
        for k, who in enumerate(("optimum", "trained")):
            ax_b, ax_w = axes[i, 2 * k], axes[i, 2 * k + 1]
            if who not in per_s[s]:
                ax_b.axis("off")
                ax_w.axis("off")
                continue
            b, W = (np.asarray(x, dtype=float) for x in per_s[s][who])
            W_V = np.zeros((s + 1, s + 1))
            W_QK = np.zeros((s + 1, s + 1))
            W_V[s], W_QK[:, :s] = b, W
            cls, _ = classify(W_V, W_QK)
            bm, Wm = class_masks(s, cls or "b-odd")
            lim_b, lim = max(np.abs(b).max(), 1e-12), max(np.abs(W).max(), 1e-12)
            ax_b.imshow(b[:, None], cmap="RdBu_r", vmin=-lim_b, vmax=lim_b)
            _outline(ax_b, bm[:, None])
            im = ax_w.imshow(W, cmap="RdBu_r", vmin=-lim, vmax=lim)
            _outline(ax_w, Wm)
            ax_b.set_xticks([])
            ax_b.set_yticks(range(s + 1), [str(r + 1) for r in range(s + 1)])
            ax_w.set_xticks(range(s), [str(m + 1) for m in range(s)])
            ax_w.set_yticks(range(s + 1), [str(l + 1) for l in range(s + 1)])
            ax_b.set_title(f"s={s} {who}: b", fontsize=9)
            ax_w.set_title(f"W_QK[:, 1..{s}] (outlined: class {cls})", fontsize=9)
            fig.colorbar(im, ax=ax_w, fraction=0.04)
    fig.suptitle(f"banding, setting {setting}: population optimum vs trained seed 0 (canonical gauge; "
                 f"outlined: the entries the nearer class keeps)")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def mirror_image(b, W) -> tuple[np.ndarray, np.ndarray]:
    """The weights of the mirror image y_t -> (-1)^t y_t of a point (theory.optimum.match_point:
    beta's odd features negated): b_r (-1)^r, W[l, m] (-1)^(l+m+s) (0-based indices), back in
    the canonical gauge (largest |b| = +1).  tests/test_figures.py checks it against the
    parity of theory.parity.

    >>> mirror_image([1.0, 0.0, -0.5], [[0.0, 2.0], [1.0, 0.0], [0.0, 3.0]])[0].tolist()
    [1.0, -0.0, -0.5]
    """
    b, W = np.asarray(b, dtype=float), np.asarray(W, dtype=float)
    s = b.size - 1
    b2 = b * (-1.0) ** np.arange(s + 1)
    W2 = W * (-1.0) ** (np.arange(s + 1)[:, None] + np.arange(s)[None, :] + s)
    g = b2[int(np.argmax(np.abs(b2)))]
    return b2 / g, W2 * g


def _gallery_data(records):
    """{setting: {s: {"optimum": (b, W), "runs": [(b, W, basin name), ...]}}}: every trained
    run's counted weights (claims/test_banding.py stores them in the canonical gauge)."""
    out: dict = {}
    for st, per_s in _banding_data(records).items():
        for s, d in per_s.items():
            if "optimum" in d:
                out.setdefault(st, {}).setdefault(s, {})["optimum"] = d["optimum"]
    for r in _records(records, "banding", "trained-out-of-class-share"):
        d = r.get("details", {})
        if "b_per_run" in d and "W_QK_per_run" in d and not (r.get("coords") or {}).get("control"):
            st, s = _setting_s(r)
            names = d.get("basin_per_seed") or [None] * len(d["b_per_run"])
            mirrored = d.get("basin_mirror_per_seed") or [False] * len(names)
            runs = []
            for b, W, name, mir in zip(d["b_per_run"], d["W_QK_per_run"], names, mirrored):
                # a run headed for the mirror image of its basin's point, shown as that point's image
                runs.append((*mirror_image(b, W), f"{name} (mirror image shown)") if mir else (b, W, name))
            out.setdefault(st, {}).setdefault(s, {})["runs"] = runs
    return {st: v for st, v in out.items() if any("runs" in x for x in v.values())}


def _gallery_figure(plt, setting, per_s, path):
    """Every run's b and W_QK beside the population optimum's, one row per window s, one
    colour scale for all b panels and one for all W_QK panels of a row (colour bars at the
    end of the row); the canonical gauge fixes scale and sign (the b entry of largest
    magnitude is +1); each run titled with the basin it is headed for.  Returns the colour
    limits per row."""
    rows = sorted(s for s in per_s if s is not None and "runs" in per_s[s])
    ncol = 1 + max(len(per_s[s]["runs"]) for s in rows)
    fig, axes = plt.subplots(2 * len(rows), ncol, figsize=(1.6 * ncol + 1.2, 2.8 * len(rows) + 0.8),
                             squeeze=False, gridspec_kw={"height_ratios": [1, 3] * len(rows)})
    limits = {}
    for i, s in enumerate(rows):
        masks = None
        if "optimum" in per_s[s]:
            ob, oW = (np.asarray(x, dtype=float) for x in per_s[s]["optimum"])
            V, Q = np.zeros((s + 1, s + 1)), np.zeros((s + 1, s + 1))
            V[s], Q[:, :s] = ob, oW
            cls, _ = classify(V, Q)
            masks = class_masks(s, cls) if cls else None
        panels = ([("optimum", *per_s[s]["optimum"])] if "optimum" in per_s[s] else [(None, None, None)])
        panels += [(f"seed {k}: {name or ''}", b, W) for k, (b, W, name) in enumerate(per_s[s]["runs"])]
        Ws = [np.abs(np.asarray(W, dtype=float)).max() for _, _, W in panels if W is not None]
        lim_w = max(max(Ws), 1e-12)
        limits[s] = (1.0, lim_w)
        for j in range(ncol):
            ax_b, ax_w = axes[2 * i, j], axes[2 * i + 1, j]
            if j >= len(panels) or panels[j][1] is None:
                ax_b.axis("off")
                ax_w.axis("off")
                continue
            title, b, W = panels[j]
            im_b = ax_b.imshow(np.asarray(b, dtype=float)[None, :], cmap="RdBu_r", vmin=-1.0, vmax=1.0)
            im_w = ax_w.imshow(np.asarray(W, dtype=float), cmap="RdBu_r", vmin=-lim_w, vmax=lim_w)
            if masks is not None:
                _outline(ax_b, masks[0][None, :])
                _outline(ax_w, masks[1])
            for ax in (ax_b, ax_w):
                ax.set_xticks([])
                ax.set_yticks([])
            ax_b.set_title(_wrap(f"s={s} {title}", 22), fontsize=6)
        fig.colorbar(im_b, ax=list(axes[2 * i]), fraction=0.02, pad=0.01).ax.tick_params(labelsize=6)
        fig.colorbar(im_w, ax=list(axes[2 * i + 1]), fraction=0.02, pad=0.01).ax.tick_params(labelsize=6)
    fig.suptitle(_wrap(f"banding, setting {setting}: b (top strip, transposed) and W_QK[:, 1..s] of every run "
                       "beside the optimum; canonical gauge (largest |b| = +1); one colour scale per row; outlined: "
                       "the entries the optimum's class keeps; a run headed for the mirror image y_t -> (-1)^t y_t "
                       "of its point is shown mirrored", 20 * ncol), fontsize=8)
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return limits


def _cosine_data(records):
    """{setting: details of the cos_1-mean record}, with ``paper``: (the paper's cos_1, its
    tolerance) read back from the trained-cos1 record where there is one (its run values are
    each seed's mean cos_1 minus the paper's number)."""
    out = {}
    for r in _records(records, "pcg-alignment", "cos_1-mean"):
        d = r.get("details", {})
        if "per_seed" in d and "optimum" in d and isinstance(d["per_seed"], list) \
                and d["per_seed"] and isinstance(d["per_seed"][0], dict) and "cos_1" in d["per_seed"][0]:
            st, _ = _setting_s(r)
            out[st] = dict(d)
    for r in _records(records, "pcg-alignment", "trained-cos1"):
        st, _ = _setting_s(r)
        if st in out and r.get("runs") and not (r.get("coords") or {}).get("control"):
            means = [sd["cos_1"]["mean"] for sd in out[st]["per_seed"]]
            refs = [m - e["value"] for m, e in zip(means, r["runs"])]
            out[st]["paper"] = (float(np.median(refs)), float(_criterion(r)[1]))
    return out


def _cosine_figure(plt, setting, d, path):
    """Per seed (coloured by the basin its run is headed for), the distribution of each
    candidate cosine over the held-out sequences, the population optimum's in black, and the
    paper's cos_1 with its tolerance as a line and band."""
    names = ("cos_1", "cos_2", "cos_3")
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
    edges = np.linspace(-1.0, 1.0, len(d["optimum"]["cos_1"]["hist"]) + 1)
    basins = d.get("basin_per_seed") or [None] * len(d["per_seed"])
    order = list(dict.fromkeys(b for b in basins if b is not None))
    for ax, name in zip(axes, names):
        for i, sd in enumerate(d["per_seed"]):
            h = np.asarray(sd[name]["hist"], dtype=float)
            h = h / max(h.sum(), 1.0)
            b = basins[i] if i < len(basins) else None
            color = f"C{order.index(b) % 10}" if b in order else "C0"
            ax.step(edges, np.append(h, h[-1]), where="post", color=color, lw=0.9, alpha=0.8)
        op = np.asarray(d["optimum"][name]["hist"], dtype=float)
        op = op / max(op.sum(), 1.0)
        ax.step(edges, np.append(op, op[-1]), where="post", color="black", lw=1.6)
        if name == "cos_1" and d.get("paper"):
            ref, tol = d["paper"]
            ax.axvspan(ref - tol, ref + tol, color="goldenrod", alpha=0.25)
            ax.axvline(ref, color="darkgoldenrod", lw=1.4, ls="--")
        means = [sd[name]["mean"] for sd in d["per_seed"]]
        ax.set_title(f"{name}: seeds' means {format_value(float(min(means)))} to {format_value(float(max(means)))}, "
                     f"optimum {format_value(d['optimum'][name]['mean'])}", fontsize=8)
        ax.set_xlabel(f"{name} over held-out sequences", fontsize=8)
        ax.set_ylabel("share of sequences", fontsize=8)
        ax.set_yscale("log")
    handles = [axes[0].plot([], [], color=f"C{i % 10}", label=f"seeds headed for {b}")[0] for i, b in enumerate(order)]
    handles.append(axes[0].plot([], [], color="black", lw=1.6, label="population optimum")[0])
    if d.get("paper"):
        handles.append(axes[0].plot([], [], color="darkgoldenrod", ls="--", label=f"paper: cos_1 = {d['paper'][0]:g} +- {d['paper'][1]:g}")[0])
    axes[0].legend(handles=handles, fontsize=6, loc="upper left")
    fig.suptitle(f"PCG alignment, AR(4), setting {setting}: one line per seed (docs/math.md section 6.3)", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def _kappa_data(records):
    """(kappa curve details, {setting: (kappa, coefficients per run, their range, kappa's own
    Monte Carlo standard error or None)}): each trained layer is judged by run, so the figure
    shows the runs and their range, not an interval of their mean."""
    curve = next((r["details"] for r in _records(records, "ar1-optimum", "kappa-vs-T")
                  if "kappa" in r.get("details", {})), None)
    trained = {}
    for r in _records(records, "ar1-optimum", "trained-coefficient"):
        d = r.get("details", {})
        if r.get("runs") and "kappa" in d:
            k = d["kappa"]
            per = [run["extra"]["coefficient"] for run in r["runs"]]
            trained[str(_coords(r)["setting"])] = (k, per, (min(per), max(per)), d.get("kappa_stderr") or None)
    return curve, trained


def _overlaps(curve, tol: float = 0.02) -> list[tuple[str, str, float]]:
    """Pairs of settings whose kappa curves lie within ``tol`` relative of each other at every
    T (about a line width at the figure's scale, so drawn on top of each other), with their
    largest relative difference."""
    out = []
    ks = curve["kappa"] if curve else {}
    names = sorted(ks)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            x, y = np.asarray(ks[a], dtype=float), np.asarray(ks[b], dtype=float)
            rel = float(np.max(np.abs(x - y) / np.abs(y)))
            if rel <= tol:
                out.append((a, b, rel))
    return out


def _kappa_figure(plt, curve, trained, path):
    """Exact kappa against T per setting (a, b, c); setting d's Monte Carlo kappa at T = 30
    with its 95 % error bar (its only route); the trained coefficients per run with their mean
    and range; curves that coincide are named in the legend."""
    fig, ax = plt.subplots(figsize=(7.5, 4.6))
    colors = {"a": "C0", "b": "C1", "c": "C2", "d": "C3"}
    same = {b: (a, rel) for a, b, rel in _overlaps(curve)}
    if curve:
        for st, vals in curve["kappa"].items():
            extra = (f"; dashed, on top of {same[st][0]}: at most {100 * same[st][1]:.2g} % apart"
                     if st in same else "")
            ax.plot(curve["T"], vals, "-o" if st not in same else "--", ms=3, color=colors.get(st),
                    label=f"kappa, setting {st} ({curve.get('methods', {}).get(st, '')}{extra})")
    for i, (st, (k, per, (lo, hi), k_se)) in enumerate(sorted(trained.items())):
        x = 30 + 0.6 * (i - 1.5)
        if k_se and not (curve and st in curve["kappa"]):
            ax.errorbar([30.0], [k], yerr=[[1.96 * k_se], [1.96 * k_se]], fmt="D", ms=4, mfc="none",
                        color=colors.get(st), capsize=4,
                        label=f"kappa, setting {st} (Monte Carlo, T = 30 only; 95 % error bar)")
        ax.plot([x] * len(per), per, "x", color=colors.get(st), ms=5)
        ax.errorbar([x], [float(np.mean(per))], yerr=[[float(np.mean(per)) - lo], [hi - float(np.mean(per))]],
                    fmt="s", ms=4, color=colors.get(st), capsize=3,
                    label=f"trained, setting {st}: runs (x), their mean and range")
    ax.set_xlabel("T (sequence length)")
    ax.set_ylabel("kappa (eq. 15) / learned b2 W11 + b1 W21")
    ax.set_title("Theorem 4.1: exact kappa against T, trained AR(1) coefficients at T = 30", fontsize=9)
    ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def _seed_rows(records):
    """{claim: [record, ...]} of the checks with a value per run (seeds) and a tolerance."""
    out: dict = {}
    for r in records:
        vals = _run_values(r)
        comparator, tolerance = _criterion(r)
        if (vals and all(v is not None for v in vals) and tolerance is not None
                and comparator in _ALLOWED and r.get("kind") != "reported"):
            out.setdefault(r["claim"], []).append(r)
    return out


#: the region a value must lie in, by comparator: (low, high) in units of the tolerance's sign
_ALLOWED = {"<=": lambda t: (-np.inf, t), "<": lambda t: (-np.inf, t), ">=": lambda t: (t, np.inf),
            ">": lambda t: (t, np.inf), "abs<=": lambda t: (-abs(t), abs(t))}
#: how far outside the interval-and-tolerance window a run may lie before it is clipped (in
#: widths of that window)
CLIP_WIDTHS = 3.0


def _seed_panel(ax, r) -> dict:
    """One check in its native units: each run a dot (coloured by the basin it is headed for
    where there are several) with its own interval (a check judged by run) or the 95 %
    interval over runs as a bar coloured by the verdict (any other),
    the tolerance as a line with the allowed side shaded (one-sided and negative tolerances
    as written), runs far outside the window clipped to its edge and drawn as triangles.
    Returns what was drawn: ``{"window", "clipped", "tolerance_lines"}``."""
    runs = r.get("runs") or []
    vals = np.asarray(_run_values(r), dtype=float)
    pr = r.get("per_run")
    by_basin = r.get("basins") or (pr and pr.get("basins"))
    basin = [(e.get("extra") or {}).get("basin") for e in runs] if by_basin else [None] * vals.size
    if len(basin) != vals.size:
        basin = [None] * vals.size
    comparator, tol = _criterion(r)
    tol = float(tol)
    lo_ok, hi_ok = _ALLOWED[comparator](tol)
    # judged by run: each run's own interval (value +- 1.96 SE) where it has one; no mean is drawn
    run_iv = [((e.get("extra") or {}).get("lo"), (e.get("extra") or {}).get("hi")) for e in runs] if pr else []
    ends = [x for pair in run_iv for x in pair if x is not None]
    iv = (r.get("interval") or (r["measured"], r["measured"])) if not pr else (
        (float(vals.min()), float(vals.max())) if vals.size else (tol, tol))
    centre = float(np.median(vals)) if pr and vals.size else r["measured"]
    core = np.array([*iv, *ends, centre, tol] + ([-tol] if comparator == "abs<=" else []), dtype=float)
    core = core[np.isfinite(core)]
    span = max(float(np.ptp(core)), abs(tol), 1e-12)
    window = (float(core.min()) - CLIP_WIDTHS * span, float(core.max()) + CLIP_WIDTHS * span)
    shown = np.concatenate([core, vals[(vals >= window[0]) & (vals <= window[1])]])
    pad = 0.08 * max(float(np.ptp(shown)), span)
    x0, x1 = float(shown.min()) - pad, float(shown.max()) + pad
    ax.axvspan(max(lo_ok, x0 - span * 10), min(hi_ok, x1 + span * 10), color="0.9", zorder=0)
    tol_lines = [tol] + ([-tol] if comparator == "abs<=" else [])
    for t in tol_lines:
        ax.axvline(t, color="0.3", lw=0.9, ls="--")
    names = list(dict.fromkeys(b for b in basin if b is not None))
    clipped = 0
    for k, v in enumerate(vals):
        y = 1 + (names.index(basin[k]) if basin[k] in names else 0) * 0.35
        color = f"C{names.index(basin[k]) % 10}" if basin[k] in names else "black"
        if v < x0 or v > x1:
            clipped += 1
            ax.plot([x0 if v < x0 else x1], [y], "<" if v < x0 else ">", ms=6, color=color, mfc="none")
        else:
            ax.plot([v], [y], "o", ms=3.5, color=color)
        if pr and k < len(run_iv) and run_iv[k][0] is not None:
            ax.plot(np.clip(run_iv[k], x0, x1), [y, y], "-", color=color, lw=1)
    vcol = {"holds": "C2", "fails": "C3", "inconclusive": "C1", "mixed": "C4"}.get(r["verdict"], "C7")
    if not pr:           # the interval of a value over runs; a check judged by run has none
        ax.plot(np.clip(iv, x0, x1), [0, 0], "-", color=vcol, lw=3, alpha=0.7)
        ax.plot([np.clip(r["measured"], x0, x1)], [0], "|", ms=10, color=vcol)
    ax.set_xlim(x0, x1)
    ax.set_ylim(-0.6, 1.6 + 0.35 * max(len(names) - 1, 0))
    ax.set_yticks([])
    ax.tick_params(labelsize=6)
    ctl = " [control]" if r.get("expect") == "fails" else ""
    share = (f" ({pr['held']} of {pr['n']} runs hold, share [{r['interval'][0]:.2f}, {r['interval'][1]:.2f}])"
             if pr else "")
    ax.set_title(_wrap(f"{_where(r)}: {r['check']}{ctl} -- {r['verdict']}{share}", 70), fontsize=7)
    ax.set_xlabel(_wrap(r["label"], 60) + (f"\n{clipped} run(s) beyond the axis (triangles)" if clipped else ""),
                  fontsize=6)
    if names:
        ax.legend(handles=[ax.plot([], [], "o", color=f"C{i % 10}", label=n)[0] for i, n in enumerate(names)],
                  fontsize=5, loc="upper right", frameon=False)
    return {"window": (x0, x1), "clipped": clipped, "tolerance_lines": tol_lines}


def _wrap(text: str, width: int) -> str:
    return "\n".join(textwrap.wrap(str(text), width))


def _seed_figure(plt, claim, rows, path, cols: int = 3):
    """Every trained check of a claim, one panel each (:func:`_seed_panel`)."""
    n = len(rows)
    nr = int(np.ceil(n / cols))
    fig, axes = plt.subplots(nr, cols, figsize=(4.2 * cols, 1.9 * nr + 0.8), squeeze=False)
    for ax, r in zip(axes.flat, rows):
        _seed_panel(ax, r)
    for ax in list(axes.flat)[n:]:
        ax.axis("off")
    fig.suptitle(_wrap(f"{claim}: each run's value (dots, coloured by the basin it is headed for where there are "
                       "several) with its own 95 % interval where it has a standard error (line), the tolerance "
                       "each run is held to (dashed; shaded: allowed), in the check's own units; the title gives "
                       "the verdict and how many runs hold (the share's Clopper-Pearson interval, against 1/2)",
                       150), fontsize=8)
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    fig.savefig(path, dpi=80)
    plt.close(fig)


def _where(r) -> str:
    return Coords.from_dict(_coords(r)).where()


#: the series of the ratio-to-Kalman figures, by check and variant (claims/test_kalman_parity.py,
#: claims/test_spectral_shift.py).
_SERIES = {("trained-mse-ratio", None): "trained layer (runs: mean and range)",
           ("baseline-mse-ratio", "least-squares"): "least squares AR(s)",
           ("baseline-mse-ratio", "best-ar-of-the-system"): "best AR(s) of the system",
           ("baseline-mse-ratio", "n4sid"): "N4SID (in context)",
           ("mse-ratio", "least-squares-ar2"): "in-context least squares AR(2) (median)",
           ("mse-ratio", "n4sid"): "N4SID (median)"}


def _ratio_rows(records, claim):
    """[(coords, series name, value, (lo, hi) or None)] of the ratio-to-Kalman rows of a claim."""
    out = []
    for r in _records(records, claim, "trained-mse-ratio", "baseline-mse-ratio", "mse-ratio"):
        c = _coords(r)
        name = f"L={c['layers']}" if c.get("layers") is not None else _SERIES.get((r["check"], c.get("variant")))
        if name is None:
            continue
        if r.get("per_run"):       # judged by run: the runs' mean and range, not the share
            vals = [float(v) for v in _run_values(r)]
            out.append((c, name, float(np.mean(vals)), (min(vals), max(vals))))
            continue
        iv = r.get("interval")
        out.append((c, name, float(r["measured"]), tuple(iv) if iv else None))
    return out


def _parity_figure(plt, rows, path):
    """MSE / MSE(Kalman) against s, per setting and method (kalman-parity)."""
    settings = sorted({c["setting"] for c, *_ in rows})
    fig, axes = plt.subplots(1, len(settings), figsize=(3.6 * len(settings), 3.4), squeeze=False, sharey=True)
    for ax, st in zip(axes[0], settings):
        series: dict = {}
        for c, name, v, iv in rows:
            if c["setting"] != st or c.get("s") is None:
                continue
            series.setdefault(name, []).append((c["s"], v, iv))
        for name, pts in sorted(series.items()):
            pts.sort()
            xs = [p[0] for p in pts]
            ys = [p[1] for p in pts]
            err = np.array([[p[1] - p[2][0], p[2][1] - p[1]] if p[2] else [0, 0] for p in pts]).T
            ax.errorbar(xs, ys, yerr=np.clip(err, 0, None), fmt="-o", ms=3, capsize=2, label=name)
        n4 = [v for c, name, v, _ in rows if c["setting"] == st and c.get("variant") == "n4sid"]
        if n4:
            ax.axhline(n4[0], color="C3", ls="--", lw=1, label="N4SID (in context)")
        ax.axhline(1.0, color="black", lw=0.8)
        ax.set_title(f"setting {st}", fontsize=9)
        ax.set_xlabel("window s")
    axes[0][0].set_ylabel("MSE / MSE(Kalman filter)")
    axes[0][-1].legend(fontsize=6)
    fig.suptitle("Kalman parity: every predictor against the filter, same held-out sequences", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


#: the spectral-shift figure's axis stops at this multiple of the filter's median error; rows
#: above are drawn as triangles on the edge
SHIFT_CLIP = 10.0


def _shift_rows(records) -> list:
    """[(series name, test radius, value, (lo, hi) or None, is a stack)] of the spectral-shift claim's
    median-error rows (claims/test_spectral_shift.py): one series per depth and training
    radius (the mean over seeds, its t interval), one per baseline."""
    out = []
    for r in _records(records, "spectral-shift", "median-error-ratio"):
        c = _coords(r)
        v = c.get("variant") or ""
        name = (f"L={c['layers']}, {v.replace('trained-at-r=', 'trained at r = ')}" if c.get("layers") is not None
                else _SERIES.get(("mse-ratio", v), v))
        iv = r.get("interval")
        out.append((name, float(c["radius"]), float(r["measured"]), tuple(iv) if iv else None,
                    c.get("layers") is not None))
    return out


def _shift_figure(plt, rows, path):
    """Median squared error / the filter's against the test radius, per depth and training
    radius (mean over seeds, t-interval bars) and per baseline; a linear axis clipped at
    :data:`SHIFT_CLIP` (said on the figure; rows beyond it as triangles on the edge).
    Medians, not means: a stack's error is heavy-tailed out of distribution
    (claims/test_spectral_shift.py).  Returns the number of clipped points."""
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    series: dict = {}
    stacks = set()
    for name, radius, v, iv, is_stack in rows:
        series.setdefault(name, []).append((radius, v, iv))
        if is_stack:
            stacks.add(name)
    clipped = 0
    for name, pts in sorted(series.items()):
        pts.sort()
        rs = np.array([p[0] for p in pts])
        ys = np.array([p[1] for p in pts])
        err = np.array([[p[1] - p[2][0], p[2][1] - p[1]] if p[2] else [0.0, 0.0] for p in pts]).T
        over = ys > SHIFT_CLIP
        clipped += int(over.sum())
        line = ax.errorbar(rs, np.minimum(ys, SHIFT_CLIP), yerr=np.clip(err, 0, None) * ~over,
                           fmt="-o" if name in stacks else "--o",
                           ms=3, capsize=2, label=name)
        if over.any():
            ax.plot(rs[over], [SHIFT_CLIP] * int(over.sum()), "^", ms=7, color=line[0].get_color())
    ax.axhline(1.0, color="black", lw=0.8)
    ax.axvline(0.9, color="0.6", ls=":", lw=1)
    # the axis ends just above the highest point or interval drawn, at most at the clip
    highs = [min(max(v, iv[1] if iv else v), SHIFT_CLIP) for _, _, v, iv, _ in rows]
    ax.set_ylim(0.9, max(1.2, max(highs, default=1.0) * 1.08) if not clipped else SHIFT_CLIP * 1.05)
    ax.set_xlabel("spectral radius r of the test systems (the stacks' own training radius 0.9: dotted)")
    ax.set_ylabel("median squared error / the filter's")
    ax.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.set_title(_wrap(f"spectral shift: setting a, lambda ~ U[-r, r]; medians (errors are heavy-tailed); axis "
                       f"clipped at {SHIFT_CLIP:g} ({clipped} point(s) above, triangles)", 70), fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return clipped


def _depth_figure(plt, records, path):
    """Median squared error over the filter's against T, per depth of trained stacks (mean
    over seeds, t-interval bars) and per reference (the construction at the stacks' depths
    and at L(T), the one-layer optimum, least squares, the best AR(2) of each system); and
    against depth per T (depth).  A linear axis clipped at :data:`SHIFT_CLIP` (triangles on
    the edge; a fixed-depth construction diverges on some sequences)."""
    pts: dict = {}
    depth_of = {}
    for r in _records(records, "depth", "trained-median-error", "reference-median-error"):
        c = _coords(r)
        if c.get("layers") is not None and r["check"] == "trained-median-error":
            name = f"trained L={c['layers']} (mean over seeds)"
            depth_of[name] = c["layers"]
        else:
            name = (c.get("variant") or "").replace("-", " ")
            depth_of[name] = None
        iv = r.get("interval")
        pts.setdefault(name, []).append((c["T"], float(r["measured"]), tuple(iv) if iv else None))
    if not pts:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(14, 4.2))
    clipped = 0
    for name, p in sorted(pts.items()):
        p.sort(key=lambda x: x[0])
        ys = np.array([x[1] for x in p])
        over = ys > SHIFT_CLIP
        clipped += int(over.sum())
        err = np.array([[x[1] - x[2][0], x[2][1] - x[1]] if x[2] else [0.0, 0.0] for x in p]).T
        line = a1.errorbar([x[0] for x in p], np.minimum(ys, SHIFT_CLIP), yerr=np.clip(err, 0, None) * ~over,
                           fmt="-o" if depth_of[name] is not None else "--.", ms=3, capsize=2, label=name)
        if over.any():
            a1.plot(np.array([x[0] for x in p])[over], [SHIFT_CLIP] * int(over.sum()), "^", ms=7,
                    color=line[0].get_color())
    a1.set_xscale("log")
    a1.set_xlabel("T")
    a1.axhline(1.0, color="black", lw=0.8)
    a1.set_ylabel("median squared error / the filter's (bars: 95 % t intervals over seeds)")
    a1.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    a1.set_title(f"against T (axis clipped at {SHIFT_CLIP:g}: {clipped} point(s) above, triangles)", fontsize=8)
    Ts = sorted({x[0] for p in pts.values() for x in p})
    for T in Ts:
        depth = sorted((depth_of[n], v) for n, p in pts.items() if depth_of[n] is not None
                       for t, v, _ in p if t == T)
        if depth:
            a2.plot([d for d, _ in depth], [v for _, v in depth], "-o", ms=3, label=f"T = {T}")
    a2.set_xlabel("depth L of the trained stack")
    a2.set_xticks([1, 2, 4])
    a2.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    a2.set_title("trained stacks against depth", fontsize=9)
    fig.suptitle("depth: trained stacks of linear attention layers (s = 2, setting a, lambda ~ U[-0.9, 0.9]); "
                 "medians -- the errors are heavy-tailed", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return True


def _position_figure(plt, records, path):
    d = next((r["details"] for r in _records(records, "kalman-parity", "per-position-mse")
              if "mse" in r.get("details", {})), None)
    if d is None:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    allv = np.concatenate([np.asarray(v, dtype=float) for v in d["mse"].values()])
    allv = allv[np.isfinite(allv) & (allv > 0)]
    top = float(np.quantile(allv, 0.95)) * 3.0        # one early-position spike must not squeeze the rest
    clipped = 0
    for name, v in d["mse"].items():
        v = np.asarray(v, dtype=float)
        over = v > top
        clipped += int(over.sum())
        line, = ax.plot(d["t"], np.minimum(v, top), "-", label=name)
        if over.any():
            ax.plot(np.asarray(d["t"])[over], [top] * int(over.sum()), "^", ms=6, color=line.get_color())
    ax.set_xlabel("position t (predicting y_t from y_1..y_(t-1))")
    ax.set_ylabel("MSE")
    ax.set_yscale("log")
    ax.set_ylim(top=top * 1.3)
    ax.legend(fontsize=7)
    ax.set_title(f"per-position MSE, setting a ({d.get('sequences')} held-out sequences); axis clipped at 3 x "
                 f"the 95th percentile ({clipped} point(s) above, triangles)", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return True


def _basin_data(records):
    """{setting: {s: details of the twin-optimum-share record}}."""
    out: dict = {}
    for r in _records(records, "training-basins", "twin-optimum-share"):
        st, s = _setting_s(r)
        if "points" in r.get("details", {}):
            out.setdefault(st, {})[s] = r["details"]
    return out


def _basin_figure(plt, setting, per_s, path, top: int = 7):
    """Per window, bars of the share of twins and of runs at each point (at most ``top``
    points, the rest pooled as "other")."""
    windows = sorted(per_s)
    fig, axes = plt.subplots(1, len(windows), figsize=(4.2 * len(windows), 3.8), squeeze=False)
    for ax, s in zip(axes[0], windows):
        d = per_s[s]
        pts = d["points"]
        n_runs = max(1, sum(d["trained_runs"].values()))
        names = [p["basin"] for p in pts[:top]]
        tw = [p["share"] for p in pts[:top]]
        rn = [p["runs"] / n_runs for p in pts[:top]]
        if len(pts) > top:
            names.append(f"other ({len(pts) - top})")
            tw.append(sum(p["share"] for p in pts[top:]))
            rn.append(sum(p["runs"] for p in pts[top:]) / n_runs)
        x = np.arange(len(names))
        ax.bar(x - 0.2, tw, 0.4, label=f"noise-free twins (n = {d['twins']})", color="C0")
        ax.bar(x + 0.2, rn, 0.4, label=f"trained runs (n = {n_runs})", color="C1")
        ax.set_xticks(x, names, rotation=60, ha="right", fontsize=6)
        ax.set_ylim(0, 1)
        ax.set_ylabel("share headed for the point", fontsize=7)
        ax.set_title(f"s = {s}", fontsize=9)
        ax.legend(fontsize=6)
    fig.suptitle(f"where the protocol goes, setting {setting}: stationary points of the population loss "
                 "(names: kind, class, excess over L*)", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


#: the claim each figure belongs to, by the figure's file name (``seeds-<claim>.png`` names
#: its own); the HTML report places a figure in its claim's section.
FIGURE_CLAIMS = {"kappa": "ar1-optimum", "banding": "banding", "cosines": "pcg-alignment",
                 "kalman-parity": "kalman-parity", "spectral-shift": "spectral-shift", "depth": "depth",
                 "basins": "training-basins", "per-position": "kalman-parity", "ar1-weights": "ar1-optimum",
                 "training-loss": "training-basins"}


def claim_of(path) -> str | None:
    """The claim of a figure file drawn by :func:`render_figures` (None for an unknown name).

    >>> claim_of("figures/seeds-banding.png"), claim_of("cosines-a.png"), claim_of("x.png")
    ('banding', 'pcg-alignment', None)
    """
    stem = Path(path).stem
    if stem.startswith("seeds-"):
        return stem[len("seeds-"):]
    for prefix in sorted(FIGURE_CLAIMS, key=len, reverse=True):
        if stem == prefix or stem.startswith(prefix + "-"):
            return FIGURE_CLAIMS[prefix]
    return None


def render_figures(records: Iterable[Mapping], directory) -> list[tuple[str, Path]]:
    """Draw every figure the records support into ``directory``; returns (title, path) pairs.

    Needs matplotlib (a declared dependency); the Agg backend, so no display is used.
    """
    records = list(records)
    directory = Path(directory)
    import matplotlib                   # the backend is chosen here, before pyplot loads, so that
    matplotlib.use("Agg")               # importing this module leaves the caller's backend alone
    import matplotlib.pyplot as plt

    made = []
    banding = _banding_data(records)
    cosines = _cosine_data(records)
    curve, trained = _kappa_data(records)
    seeds = _seed_rows(records)
    parity = _ratio_rows(records, "kalman-parity")
    shift = _shift_rows(records)
    if banding or cosines or curve or trained or seeds or parity or shift:
        directory.mkdir(parents=True, exist_ok=True)
    if curve or trained:
        path = directory / "kappa.png"
        _kappa_figure(plt, curve, trained, path)
        made.append(("Theorem 4.1: exact kappa against T with the trained AR(1) coefficients", path))
    for claim, rows in sorted(seeds.items()):
        path = directory / f"seeds-{claim}.png"
        _seed_figure(plt, claim, rows, path)
        made.append((f"{claim}: per-seed trained values against each tolerance", path))
    gallery = _gallery_data(records)
    for setting, per_s in sorted(banding.items()):
        path = directory / f"banding-{setting}.png"
        if setting in gallery:
            _gallery_figure(plt, setting, gallery[setting], path)
            made.append((f"banding, setting {setting}: every run's weights beside the optimum", path))
        else:                          # a report without every run's weights (or the control)
            _banding_figure(plt, setting, per_s, path)
            made.append((f"banding, setting {setting}: optimum vs trained seed 0", path))
    for setting, d in sorted(cosines.items()):
        path = directory / f"cosines-{setting}.png"
        _cosine_figure(plt, setting, d, path)
        made.append((f"PCG cosines, AR(4), setting {setting}", path))
    if parity:
        _parity_figure(plt, parity, directory / "kalman-parity.png")
        made.append(("Kalman parity: MSE ratio to the filter against s, per method", directory / "kalman-parity.png"))
    if shift:
        _shift_figure(plt, shift, directory / "spectral-shift.png")
        made.append(("spectral shift: median error over the filter's against the test radius", directory / "spectral-shift.png"))
    if _depth_figure(plt, records, directory / "depth.png"):
        made.append(("depth: median error of the trained stacks against T and against depth", directory / "depth.png"))
    for setting, per_s in sorted(_basin_data(records).items()):
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / f"basins-{setting}.png"
        _basin_figure(plt, setting, per_s, path)
        made.append((f"training basins, setting {setting}: noise-free twins beside the trained runs", path))
    if _position_figure(plt, records, directory / "per-position.png"):
        made.append(("per-position MSE curves, setting a", directory / "per-position.png"))
    made += render_training_figures(plt, records, directory)
    return made
