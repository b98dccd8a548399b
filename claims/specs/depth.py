"""The depth claim: Cole et al.'s construction of depth O(log T), the optima, closed forms.

Its checks: claims/test_depth.py (the construction, the one-layer and i.i.d. optima) and
claims/test_depth_trained.py (the trained stacks, reported).  It trains the depth grid's
stacks -- :data:`~claims.harness.runs.DEPTHS` x :data:`~claims.harness.runs.DEPTH_T` x
:data:`~claims.harness.runs.STACK_SEEDS` -- where the profile does (``Profile.depth_stacks``).

>>> SPEC.headlines[0].check_ids[-1]
'depth/construction-divergence-vanishes/a/s=2/T=640/r=0.9'
"""
from __future__ import annotations

from claims.figures.depth import FIGURES
from claims.harness.coverage import REFERENCE
from claims.harness.identity import RunRef
from claims.harness.runs import DEPTH_T, DEPTHS, STACK_S, STACK_SEEDS, TRAIN_RADIUS, depth_run
from claims.harness.spec import ClaimSpec, Headline, check_ids
from claims.harness.params import PARAMS

__all__ = ["SPEC", "runs"]

_CLAIM = "depth"

#: the construction's law: the stacks' (the reference setting, window STACK_S, radius TRAIN_RADIUS)
_LAW = {"setting": REFERENCE, "s": STACK_S}
#: the largest horizon of the construction's rate (claims/_depth.py, RATE_T[-1])
_T_MAX = 640


def runs(profile) -> list[RunRef]:
    """The depth grid's stacks at the profile's stack batch, or none (``Profile.depth_stacks``)."""
    if not profile.depth_stacks:
        return []
    return [depth_run(L, T, profile.stack_batch, i) for L in DEPTHS for T in DEPTH_T for i in range(STACK_SEEDS)]


#: the source of the depth claim (and of the reading behind the spectral-shift claim)
COLE_ET_AL = ("Cole, Zhao, Lu, Zhang, \"In-context learning of linear dynamical systems with transformers: "
              "approximation bounds and depth-separation\" (NeurIPS 2025)")

SPEC = ClaimSpec(
    name=_CLAIM,
    knobs=("depth_stacks",),
    params=tuple(p for p in PARAMS if p != "T"),
    params_note="T is the claim's own axis (the rate over T = 20-640 and the stacks' T = 10-80); d and the noise follow the point",
    summary=(f"{COLE_ET_AL}: a linear transformer of depth O(log T) reaches "
             "least squares; one layer keeps an error on LDS data; trained stacks reported"),
    test_file="test_depth.py",
    other_test_files=("test_depth_trained.py",),
    runs=runs,
    headlines=(
        Headline(_CLAIM,
                 "A linear transformer of depth O(log T) built to run gradient descent on the in-context "
                 "least squares reaches least squares' error, O(log T / T).",
                 f"{COLE_ET_AL}: the construction",
                 check_ids(_CLAIM, "construction-identity", _LAW)
                 + check_ids(_CLAIM, "construction-median-rate-slope", {**_LAW, "radius": TRAIN_RADIUS})
                 + check_ids(_CLAIM, "construction-median-over-least-squares", {**_LAW, "radius": TRAIN_RADIUS})
                 + check_ids(_CLAIM, "construction-divergence-vanishes", {**_LAW, "T": _T_MAX, "radius": TRAIN_RADIUS}),
                 reason=("The construction's statement in its parts: the built stack computes the gradient "
                         "steps it is built for (identity), its typical excess falls at the rate O(log T / T) "
                         "(slope of the median), it stays within a factor of least squares' error, and the "
                         "share of contexts where it diverges vanishes at the largest T.  The mean over least "
                         "squares (heavy-tailed) and the divergent share per T are reported; the trained "
                         "stacks (test_depth_trained.py) answer no statement of the source.")),
        Headline(_CLAIM,
                 "One linear-attention layer keeps a non-vanishing error on LDS data, while on i.i.d. "
                 "regression its error vanishes like 1/T.",
                 f"{COLE_ET_AL}: the optima",
                 check_ids(_CLAIM, "one-layer-limit-excess", {**_LAW, "layers": 1, "radius": TRAIN_RADIUS})
                 + check_ids(_CLAIM, "iid-optimum-closed-form", {"setting": "iid", "s": STACK_S, "layers": 1})
                 + check_ids(_CLAIM, "iid-limit-excess", {"setting": "iid", "s": STACK_S, "layers": 1})
                 + check_ids(_CLAIM, "iid-excess-vanishes", {"setting": "iid", "s": STACK_S, "layers": 1}),
                 reason=("The contrast is carried by the two limits: the one-layer optimum's excess as "
                         "T -> infinity on LDS data (non-vanishing) and on i.i.d. data (vanishing like 1/T, "
                         "with its closed form checked first).  The finite-T optimum above the limit, the "
                         "plateau fit and the trained one-layer stacks against the optimum support or "
                         "report it.")),
    ),
    no_control={
        "iid-optimum-closed-form": (
            "the optimiser against a closed form: a second route to one number, which only a bug in either "
            "can separate; the statement it supports has its control (the weights optimal at T = 10 held "
            "fixed, whose excess does not vanish)"),
        "one-layer-optimum-above-limit": (
            "a second route (exact finite-T optima against the Monte Carlo limit) to the plateau that "
            "one-layer-limit-excess tests with its control (a family of one system, limit excess 0)"),
    },
    figures=FIGURES,
)
