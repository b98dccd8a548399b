"""The banding claim: Lemma 4.1's parity (checkerboard) structure for s >= 2, exact and trained.

Its checks: claims/test_banding.py (exact) and claims/test_banding_trained.py (the trained
layers).  It trains the AR(s) layers of every setting (the
asymmetric controls included) at the profile's windows, ``profile.n_seeds`` seeds each.

>>> len(SPEC.headlines[0].check_ids), SPEC.headlines[1].check_ids[:2]
(24, ('banding/trained-out-of-class-share/a/s=2', 'banding/trained-out-of-class-share/a/s=4'))
>>> sorted(SPEC.known)[0], list(SPEC.known["banding/trained-odd-share/b/s=3"])
('banding/trained-odd-share/b/s=3', ['paper'])
"""
from __future__ import annotations

from claims.figures.banding import FIGURES
from claims.harness.coverage import MONTE_CARLO, SYMMETRIC, SYMMETRIC_QUADRATURE
from claims.harness.identity import RunRef
from claims.harness.profiles import COMMON_TRAINED_WINDOWS
from claims.harness.runs import ARS_SETTINGS, WINDOWS, ars_run
from claims.harness.spec import ClaimSpec, Headline, check_ids

__all__ = ["SPEC", "runs"]

_CLAIM = "banding"

def runs(profile) -> list[RunRef]:
    """The AR(s) layers of :data:`~claims.harness.runs.ARS_SETTINGS` at ``profile.trained_windows``."""
    return [ars_run(st, s, i) for st in ARS_SETTINGS for s in profile.trained_windows for i in range(profile.n_seeds)]


def _odd(s: int) -> str:
    return (f"not reproduced: no trained AR({s}) layer has an odd share within the 1 % tolerance (every run "
            "fails, so the share of runs that hold is below 1/2)")


#: the trained cells whose odd share fails with the paper profile's 8 seeds (measured: the
#: published paper run; the quick profile's 3 seeds decide no share)
_ODD_SHARE_FAILS = {"banding/trained-odd-share/b/s=3": 3, "banding/trained-odd-share/c/s=3": 3}

SPEC = ClaimSpec(
    name=_CLAIM,
    summary=("Lemma 4.1: with a centrally symmetric law of A the odd moments vanish and the "
             "checkerboard classes hold the optimum (exact); trained AR(s) layers against the pattern"),
    test_file="test_banding.py",
    other_test_files=("test_banding_trained.py",),
    runs=runs,
    headlines=(
        Headline(_CLAIM,
                 "With a centrally symmetric law of A the odd moments vanish, the checkerboard classes "
                 "are invariant under the gradient, and the optimum lies in a class.",
                 "Lemma 4.1, eq. 12",
                 check_ids(_CLAIM, "parity-zeros-exact",
                           *({"setting": st, "s": s} for st in SYMMETRIC_QUADRATURE for s in WINDOWS))
                 + check_ids(_CLAIM, "parity-zeros-monte-carlo", *({"setting": st, "s": "2-4"} for st in MONTE_CARLO))
                 + check_ids(_CLAIM, "class-invariance-symbolic", *({"setting": "symbolic", "s": s} for s in (1, 2)))
                 + check_ids(_CLAIM, "optimum-in-a-class",
                             *({"setting": st, "s": s} for st in SYMMETRIC for s in WINDOWS)),
                 reason=("The lemma's three parts, each where it can be decided: the parity zeros on exact "
                         "moments (within Monte Carlo error where no quadrature exists), the invariance "
                         "symbolically, the optimum in a class in every symmetric setting and window.  The "
                         "autograd invariance on drawn moment tensors and the in-class gap support them; the "
                         "optimum's share over drawn configurations is reported (the paper claims nothing "
                         "there).")),
        Headline(_CLAIM,
                 "Trained AR(2) and AR(4) layers show the banded (checkerboard) pattern.",
                 "Fig. 1, appendix Figs. 3-5",
                 check_ids(_CLAIM, "trained-out-of-class-share",
                           *({"setting": st, "s": s} for st in SYMMETRIC for s in COMMON_TRAINED_WINDOWS)),
                 trained=True,
                 reason=("The paper's figures show weight matrices, and the statement is that their support "
                         "is banded: the out-of-class share measures exactly that, the weight outside the "
                         "nearer checkerboard class, run by run, with the asymmetric family as its negative "
                         "control.  The trained odd share measures another thing -- the odd features' part of "
                         "the prediction, a loss-side consequence of the lemma the paper does not state for "
                         "trained layers -- has no control (it measures nothing on the asymmetric family) and "
                         "is supporting, its failures listed as known.  AR(3) is left out because only the "
                         "paper profile trains it; the Jaccard distances and excess losses are reported.")),
    ),
    known={cid: {"paper": _odd(s)} for cid, s in _ODD_SHARE_FAILS.items()},
    no_control={"trained-odd-share": (
        "on the asymmetric family the odd features are correlated with the even ones, so the odd share "
        "measures nothing there; the out-of-class share, which carries the statement, is the one with a "
        "control")},
    figures=FIGURES,
)
