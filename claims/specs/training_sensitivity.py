"""The training-sensitivity claim (ours, paper profile): the AR(1) verdicts under choices the paper leaves open.

Its checks: claims/test_sensitivity.py (reported rows, no verdict).  In the paper profile it
trains the AR(1) runs of :data:`~claims.harness.runs.SENSITIVITY_SETTINGS` with one choice of
:data:`~claims.harness.runs.SENSITIVITY_VARIANTS` changed, then reads their baseline, the
AR(1) runs of the same seeds; the quick profile trains none.

>>> from claims.harness.profiles import PAPER, QUICK
>>> len(SPEC.runs(PAPER)), SPEC.runs(QUICK), SPEC.ours
(30, [], True)
"""
from __future__ import annotations

from claims.figures.training_sensitivity import FIGURES
from claims.harness.identity import RunRef
from claims.harness.runs import (SENSITIVITY_SEEDS, SENSITIVITY_SETTINGS, SENSITIVITY_VARIANTS, ar1_run,
                                 sensitivity_run)
from claims.harness.spec import ClaimSpec

__all__ = ["SPEC", "runs"]

_CLAIM = "training-sensitivity"


def runs(profile) -> list[RunRef]:
    """The variants, then the AR(1) runs they are compared with (the baseline, read too); paper profile only."""
    if profile.name != "paper":
        return []
    return ([sensitivity_run(st, v, i) for st in SENSITIVITY_SETTINGS for v in SENSITIVITY_VARIANTS
             for i in range(SENSITIVITY_SEEDS)]
            + [ar1_run(st, i) for st in SENSITIVITY_SETTINGS for i in range(SENSITIVITY_SEEDS)])


SPEC = ClaimSpec(
    name=_CLAIM,
    reported_table=True,
    summary=("ours (paper profile): how the trained AR(1) metrics move with one training choice the paper "
             "leaves open (weight decay, clipping, learning rate)"),
    test_file="test_sensitivity.py",
    runs=runs,
    figures=FIGURES,
    ours=True,
    without_headline=("ours, not a statement of a source: how the trained AR(1) metrics move with a training "
                      "choice the paper leaves open; its rows are reported, with no verdict"),
)
