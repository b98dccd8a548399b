"""The gd-equivalence claim: theta* predicts what one gradient-descent step with eta = kappa predicts.

Its checks: claims/test_gd_equivalence.py.  It reads the AR(1) layers of ar1-optimum (the same
runs, :func:`claims.specs.ar1_optimum.runs`).

>>> SPEC.headline_ids()[:2]
('gd-equivalence/theta-star-is-one-gd-step/a-d', 'gd-equivalence/trained-gd-gap/a')
"""
from __future__ import annotations

from claims.figures.gd_equivalence import FIGURES
from claims.harness.coverage import SYMMETRIC, span
from claims.harness.runs import AR1_SETTINGS
from claims.harness.spec import ClaimSpec, Headline, check_ids
from claims.specs.ar1_optimum import runs

__all__ = ["SPEC"]

_CLAIM = "gd-equivalence"

SPEC = ClaimSpec(
    name=_CLAIM,
    summary=("Theorem 4.1: theta* is one gradient step with eta = kappa on the in-context AR(1) "
             "least-squares loss; trained AR(1) layers against that step"),
    test_file="test_gd_equivalence.py",
    runs=runs,
    headlines=(
        Headline(_CLAIM,
                 "theta* predicts exactly what one gradient-descent step with eta = kappa on the "
                 "in-context AR(1) least-squares loss predicts.",
                 "Thm 4.1",
                 check_ids(_CLAIM, "theta-star-is-one-gd-step", {"setting": span(SYMMETRIC)}),
                 reason=("The statement is an identity between two predictors; the one check measures their "
                         "largest difference over drawn contexts of every symmetric setting, with controls "
                         "(eta = 1.1 kappa, kappa of T + 1) that must fail.")),
        Headline(_CLAIM,
                 "Trained AR(1) layers predict like one GD step with eta = kappa.",
                 "Thm 4.1 with Fig. 1",
                 check_ids(_CLAIM, "trained-gd-gap", *({"setting": st} for st in AR1_SETTINGS)),
                 trained=True,
                 reason=("The gap between a trained layer's predictions and the GD step's is the statement, "
                         "run by run in every trained setting.  The trained step size (the eta a layer "
                         "implies, against kappa) supports it: it reads one number off the weights, not the "
                         "predictions the statement is about.")),
    ),
    no_control={"trained-step-size": (
        "the step a layer implies is read off the same predictions as the gap, whose control (the gap "
        "to the step eta = 1.1 kappa, failing in every run) is the same wrong step")},
    figures=FIGURES,
)
