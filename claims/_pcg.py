"""Cosine summaries of the PCG-alignment claim (claims/test_pcg_alignment.py): per held-out
sequence cosines reduced to a few numbers, the paper's band as a shift, run notes per basin.

:func:`summary` of a cosine over sequences (mean, sd, median, shares beyond +-0.9, the median
of |cos|, a histogram on :data:`HIST_BINS`); :func:`cosine_stderr` of a run's mean cosine,
sd / sqrt(n); :func:`paper_fields` shifts a mean cosine's record fields by the paper's value
(judged ``abs<=`` its half-width); :func:`basin_values_note` lists a check's values per basin.

>>> import numpy as np
>>> s = summary(np.array([0.95, 0.5, np.nan, -0.99]))
>>> round(s["mean"], 4), s["n"], s["share_above_0.9"], round(cosine_stderr(s), 4)
(0.1533, 3, 0.3333333333333333, 0.5862)
>>> paper_fields({"measured": 0.9, "interval": (0.85, 0.95)}, (0.88, 0.05))["measured"]
0.020000000000000018
"""
from __future__ import annotations

import numpy as np

__all__ = ["HIST_BINS", "summary", "cosine_stderr", "paper_fields", "basin_values_note"]

HIST_BINS = np.linspace(-1.0, 1.0, 21)


def summary(c):
    """mean, sd, median, share above 0.9 and histogram counts of one cosine over sequences."""
    c = c[np.isfinite(c)]
    return {"mean": float(c.mean()), "sd": float(c.std(ddof=1)), "median": float(np.median(c)),
            "share_above_0.9": float((c > 0.9).mean()), "share_below_-0.9": float((c < -0.9).mean()),
            "median_abs": float(np.median(np.abs(c))),
            "n": int(c.size), "hist": np.histogram(c, bins=HIST_BINS)[0].tolist()}


def cosine_stderr(summary) -> float:
    """The standard error of one run's mean cosine over the held-out sequences: sd / sqrt(n)."""
    return float(summary["sd"] / np.sqrt(summary["n"]))


def paper_fields(fields, paper):
    """Seed or MC fields of a mean cosine, shifted by the paper's value ``paper = (value, +-)``
    (judged abs <= +-),
    with a note giving the cosine itself."""
    ref, tol = paper
    lo, hi = fields["interval"]
    out = {**fields, "measured": fields["measured"] - ref, "interval": (lo - ref, hi - ref),
           "note": f"cos_1 = {fields['measured']:.3f} [{lo:.3f}, {hi:.3f}]; paper {ref:g} +- {tol:g}"}
    if fields.get("values") is not None:
        out["values"] = [v - ref for v in fields["values"]]
    return out


def basin_values_note(values, rb, name) -> str:
    """Per basin, its runs' values (the check's quantity before any shift)."""
    by = {}
    for v, b in zip(values, rb.labels):
        by.setdefault(b, []).append(v)
    return "; ".join(f"{b}: {name} = {', '.join(f'{v:.3f}' for v in vs)}" for b, vs in by.items())
