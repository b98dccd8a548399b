"""The training-basins claim (ours): where the paper's protocol takes the AR(s) layers; noise-free twins.

Its checks: claims/test_training_basins.py.  It reads banding's AR(s) layers of
:data:`BASIN_SETTINGS` at the profile's windows.  No statement of a source: no headline.

>>> SPEC.ours, SPEC.headlines, len(SPEC.known)
(True, (), 8)
>>> list(SPEC.known["training-basins/twin-stays-at-optimum/a/s=3"])
['paper']
"""
from __future__ import annotations

from claims.figures.training_basins import FIGURES
from claims.harness.coverage import SYMMETRIC
from claims.harness.identity import RunRef
from claims.harness.runs import ars_run
from claims.harness.spec import ClaimSpec

__all__ = ["SPEC", "runs", "BASIN_SETTINGS"]

_CLAIM = "training-basins"

#: the settings whose trained AR(s) layers the claim follows
BASIN_SETTINGS = SYMMETRIC


def runs(profile) -> list[RunRef]:
    """The AR(s) layers of :data:`BASIN_SETTINGS` at ``profile.trained_windows``."""
    return [ars_run(st, s, i) for st in BASIN_SETTINGS for s in profile.trained_windows for i in range(profile.n_seeds)]


def _stay(st: str, s: int) -> str:
    return (f"not at rest: the twin started at theta* (setting {st}, s = {s}) ends farther than 1e-8 from it "
            "under the protocol's AdamW")


SPEC = ClaimSpec(
    name=_CLAIM,
    knobs=("twins",),
    summary=("ours: which stationary point training takes each AR(s) layer to, against the population "
             "optimum, with noise-free twins of the runs"),
    test_file="test_training_basins.py",
    params_note="the twins' gradient check keeps its T = 8 (exact moments of a short window); everything else follows the point",
    runs=runs,
    known={
        # theta* is not a resting point of the protocol's AdamW at s = 3, 4 (docs/math.md section 5.8);
        # at s = 3 only the paper profile's twins decide it
        f"{_CLAIM}/twin-stays-at-optimum/{st}/s={s}": {p: _stay(st, s) for p in
                                                       (("paper",) if s == 3 else ("quick", "paper"))}
        for st in BASIN_SETTINGS for s in (3, 4)},
    figures=FIGURES,
    ours=True,
    without_headline=("ours, not a statement of a source: where the protocol takes the AR(s) layers "
                      "(the basin each run is headed for), which the paper does not discuss"),
)
