"""The spectral-shift claim: stacks trained at radius 0.9, 1.0 (wider) and 0.5, tested up to 1.05.

Its checks: claims/test_spectral_shift.py.  It trains the stacks of ``profile.shift_depths``
at each of :data:`~claims.harness.runs.SHIFT_RADII`, :data:`~claims.harness.runs.STACK_SEEDS`
seeds each, and again at TRAIN_RADIUS with the seeds :data:`~claims.harness.runs.SHIFT_NULL_SEEDS`
(the null control).

>>> SPEC.headline_ids()
('spectral-shift/gain-outside/a/L=1/r=1', 'spectral-shift/gain-outside/a/L=1/r=1.05', 'spectral-shift/cost-inside/a/L=1/r=0.9')
"""
from __future__ import annotations

from claims.figures.spectral_shift import FIGURES
from claims.harness.coverage import REFERENCE
from claims.harness.identity import Coords, RunRef, check_id
from claims.harness.runs import SHIFT_NULL_SEEDS, SHIFT_RADII, STACK_S, STACK_SEEDS, TRAIN_RADIUS, shift_run
from claims.harness.spec import ClaimSpec, Headline, check_ids
from claims.specs.depth import COLE_ET_AL

__all__ = ["SPEC", "runs", "OUTSIDE"]

_CLAIM = "spectral-shift"

#: test radii beyond the stacks' training radius where the wider training should pay (ours)
OUTSIDE = (1.0, 1.05)


def runs(profile) -> list[RunRef]:
    """The stacks of ``profile.shift_depths`` at every training radius, then the null control's."""
    batch = profile.stack_batch
    return ([shift_run(L, r, batch, i) for L in profile.shift_depths for r in SHIFT_RADII for i in range(STACK_SEEDS)]
            + [shift_run(L, TRAIN_RADIUS, batch, i) for L in profile.shift_depths for i in SHIFT_NULL_SEEDS])


SPEC = ClaimSpec(
    name=_CLAIM,
    knobs=("shift_depths",),
    summary=(f"our test of a reading of {COLE_ET_AL} (advice a summary of it gives, not a statement of "
             "theirs): widening the training range lowers the "
             "error outside it at little cost inside; stacks trained at radii 0.5, 0.9, 1.0"),
    test_file="test_spectral_shift.py",
    runs=runs,
    headlines=(
        Headline(_CLAIM,
                 "Widening the training range (radius 0.9 to 1.0) lowers a layer's typical error outside "
                 "it and costs little inside it (our operationalisation; 5 % is our factor).",
                 f"a summary's reading of {COLE_ET_AL}, not a statement of theirs and not a theorem",
                 check_ids(_CLAIM, "gain-outside", *({"setting": REFERENCE, "layers": 1, "radius": r} for r in OUTSIDE))
                 + check_ids(_CLAIM, "cost-inside", {"setting": REFERENCE, "layers": 1, "radius": TRAIN_RADIUS}),
                 trained=True, ours=True,
                 reason=("The advice has two halves, each one check per test radius: the gain of the wider "
                         "training outside 0.9 and its cost inside, judged by run pair against the 5 % factor, "
                         "with the re-trained stacks and the zero predictor as controls.  Only the one-layer "
                         "stacks carry it, as every profile trains them (the 4-layer ones: the paper profile "
                         "only); the premise (each stack at its optimum) supports it, and the median-error "
                         "ratios per test radius are reported.")),
    ),
    known={
        # the premise of the gain and cost checks, every stack trained to its optimum, fails at r = 1.0
        # in the paper profile (the gain and cost themselves, judged by run pair over 3 stack seeds,
        # cannot be decided by any share: none is a known failure)
        check_id(_CLAIM, "one-layer-stack-over-its-optimum",
                 Coords(setting=REFERENCE, s=STACK_S, T=30, layers=1, radius=max(SHIFT_RADII))): {"paper": (
                     "premise not met: not every one-layer stack trained at r = 1.0 ends within 2 % of the "
                     "one-layer optimum of its law, so the paper profile's one-layer gain and cost compare "
                     "stacks that are not at their optimum")},
        # a negative control that cannot tell: the 4-layer stacks' seed-to-seed spread at r = 1.05
        check_id(_CLAIM, "gain-outside", Coords(setting=REFERENCE, layers=4, radius=max(OUTSIDE),
                                                variant="null-same-radius", control=True)): {"paper": (
                     "the null control cannot tell here: a pair of 4-layer stacks trained at 0.9 with "
                     "different seeds is undecided against the 5 % factor, so at L = 4 and r = 1.05 the "
                     "stacks' seed-to-seed spread is about as large as the gain the check asks for")},
    },
    figures=FIGURES,
)
