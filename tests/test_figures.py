"""claims.figures and the report writer: figures drawn from records alone, linked from claims.md."""
from __future__ import annotations

import json

import numpy as np

from claims.figures import render_figures
from claims.records import make_record
from claims.report import write_reports
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
