"""The pcg-alignment claim: eqs. 17-18, the layer's prediction against two PCG steps.

Its checks: claims/test_pcg_alignment.py.  It reads the AR(:data:`PCG_S`) layers of
banding's runs in the symmetric settings.  The paper's numbers (Sec. 5): the mean cosine
between a trained AR(4) layer's weights and the first PCG direction, per setting
(:data:`PAPER_COS1`, mean and half-width), and the cosine of the extra vector with the
preconditioned residual (:data:`PAPER_COS3`, about).

>>> PAPER_COS1["b"], SPEC.headlines[1].statement[-51:]
((0.93, 0.01), 'mean cos_1 = 0.88 +- 0.05 (a) and 0.93 +- 0.01 (b).')
"""
from __future__ import annotations

from claims.figures.pcg_alignment import FIGURES
from claims.harness.coverage import CONTROLS, SYMMETRIC, span
from claims.harness.identity import RunRef
from claims.harness.runs import ars_run
from claims.harness.spec import ClaimSpec, Headline, check_ids

__all__ = ["SPEC", "runs", "PCG_S", "PCG_SETTINGS", "PAPER_COS1", "PAPER_COS3"]

_CLAIM = "pcg-alignment"

#: the window of the paper's alignment experiment (AR(4), Sec. 5) and the settings it is read in
PCG_S = 4
PCG_SETTINGS = SYMMETRIC
#: the paper's mean cos_1 of trained AR(4) layers and its +- (Sec. 5), by setting
PAPER_COS1 = {"a": (0.88, 0.05), "b": (0.93, 0.01)}
#: the paper's cosine of the extra vector with the preconditioned residual (about; Sec. 5)
PAPER_COS3 = -0.99


#: the trained cells whose cos_1 fails with the paper profile's 8 seeds (measured: the published paper run)
_TRAINED_COS1_FAILS = ("pcg-alignment/trained-cos1/b/s=4",)


def _cos(st: str) -> str:
    return "{:g} +- {:g}".format(*PAPER_COS1[st])


def runs(profile) -> list[RunRef]:
    """The AR(PCG_S) layers of :data:`PCG_SETTINGS`, ``profile.n_seeds`` seeds each."""
    return [ars_run(st, PCG_S, i) for st in PCG_SETTINGS for i in range(profile.n_seeds)]


SPEC = ClaimSpec(
    name=_CLAIM,
    summary=("eqs. 17-18: the layer's prediction is w^T ybar_q and two PCG steps span {Pg, PHPg}; trained "
             f"AR({PCG_S}) layers against the paper's cosines"),
    test_file="test_pcg_alignment.py",
    runs=runs,
    headlines=(
        Headline(_CLAIM,
                 "The layer's prediction is w^T ybar_q with w of eq. 17, and two PCG steps span "
                 "{Pg, PHPg} (eq. 18).",
                 "eqs. 17-18",
                 check_ids(_CLAIM, "eq17-is-the-forward-pass", {"setting": f"{span(SYMMETRIC)}+{span(CONTROLS)}", "s": "1-5"})
                 + check_ids(_CLAIM, "eq18-two-steps-in-span", {"setting": "drawn", "s": "2-6"}),
                 reason=("Each equation is an identity with one check: eq. 17 against the layer's forward "
                         "pass over every setting and window 1-5, eq. 18's span over drawn systems.  The "
                         "population loss against the forward pass supports the route the optimum's "
                         "cosines are computed by; the three-step span is reported beside eq. 18.")),
        Headline(_CLAIM,
                 f"Trained AR({PCG_S}) layers align with two PCG steps: mean cos_1 = "
                 + " and ".join(f"{_cos(st)} ({st})" for st in PAPER_COS1) + ".",
                 f"Sec. 5, AR({PCG_S}) cosines",
                 check_ids(_CLAIM, "trained-cos1", *({"setting": st, "s": PCG_S} for st in PAPER_COS1)),
                 trained=True, tolerance="paper",
                 reason=("The paper gives numbers only for the settings of PAPER_COS1, with their +-: each "
                         "trained layer's mean cos_1 is judged against them.  The population optimum's cos_1 "
                         "(optimum-cos1) asks whether the numbers belong to the optimum rather than to "
                         "training, a different statement, so it supports; the other cosines, their medians "
                         "and the held-out errors are reported.")),
    ),
    known={
        **{cid: {"paper": ("not reproduced: no trained AR(4) layer has a mean cos_1 inside the paper's "
                           f"{_cos(cid.split('/')[2])} (every run fails)")} for cid in _TRAINED_COS1_FAILS},
        **{f"{_CLAIM}/optimum-cos1/{st}/s={PCG_S}": {p: (
            "not reproduced: at the population optimum the mean cos_1 lies, with its whole interval, outside "
            f"the paper's {_cos(st)}") for p in ("quick", "paper")} for st in PAPER_COS1},
    },
    no_control={"optimum-cos1": (
        "a number of the exact optimum against the paper's band, which it misses in both settings (a known "
        "failure): a control that must fail would show nothing a failing check does not; the band's own "
        "control is trained-cos1's random layers")},
    figures=FIGURES,
)
