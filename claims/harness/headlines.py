"""Headline checks: for each claim, the checks that carry the paper's (or the source's) statement.

A claim records many checks: the statement itself, the routes that support it (a second
oracle, a calibration), negative controls and reported tables.  The **headline** checks
are the ones whose verdicts answer "does the statement reproduce?"; everything else is
supporting or reported.  Each :class:`Headline` is one statement in one line, where it
stands in the source, and the ``check_id`` s that test it (claims/harness/records.py), built from
coordinates here -- never from label text -- for the README's findings and the report to
be built from.  tests/test_identity.py checks that every id listed is recorded by both
published runs and names a positive check (no control, no reported row).

>>> [h.statement[:36] for h in HEADLINES if h.claim == "gd-equivalence"][:1]
['theta* predicts exactly what one gra']
>>> "banding/optimum-in-a-class/d/s=4" in headline_ids()
True
"""
from __future__ import annotations

from dataclasses import dataclass

from claims.harness.identity import Coords, check_id
from theory.systems import SYMMETRIC_SETTINGS

__all__ = ["Headline", "HEADLINES", "headline_ids", "headlines_of", "WITHOUT_HEADLINE"]

#: claims of ours that test no statement of a source, so have no headline: how the trained
#: AR(1) metrics move with a training choice, and where the protocol takes the AR(s) layers.
WITHOUT_HEADLINE = ("training-sensitivity", "training-basins")

#: the families with Lemma 4.1's symmetry (the asymmetric one is every claim's control)
_SYMMETRIC = SYMMETRIC_SETTINGS
_WINDOWS = (2, 3, 4)
#: the windows whose trained layers both profiles have (Profile.trained_windows): a headline
#: names checks that every profile records
_TRAINED_WINDOWS = (2, 4)


@dataclass(frozen=True)
class Headline:
    """One statement of the source, in one line, and the checks that test it.

    ``trained``: the statement is about what training finds (the paper's experiments),
    not about the construction or the exact optimum (its theorems).
    """

    claim: str
    statement: str
    source: str
    check_ids: tuple[str, ...]
    trained: bool = False


def _ids(claim: str, check: str, *coords: dict) -> tuple[str, ...]:
    return tuple(check_id(claim, check, Coords(**c)) for c in coords)


HEADLINES: tuple[Headline, ...] = (
    Headline("ar1-optimum",
             "For the AR(1) window the population loss has its global minimum at theta* of eq. 15 "
             "(two optimal families).",
             "Thm 4.1, eq. 15",
             _ids("ar1-optimum", "stationary-symbolic", {"setting": "symbolic"})
             + _ids("ar1-optimum", "stationary", *({"setting": st} for st in "abc"))
             + _ids("ar1-optimum", "global-min-over-beta", *({"setting": st} for st in "abc"))
             + _ids("ar1-optimum", "global-min-multistart", *({"setting": st} for st in "abc"))),
    Headline("ar1-optimum",
             "Trained AR(1) layers reach theta*: the learned coefficient equals kappa (Fig. 1).",
             "Thm 4.1 with Fig. 1",
             _ids("ar1-optimum", "trained-coefficient", *({"setting": st} for st in _SYMMETRIC)),
             trained=True),
    Headline("gd-equivalence",
             "theta* predicts exactly what one gradient-descent step with eta = kappa on the "
             "in-context AR(1) least-squares loss predicts.",
             "Thm 4.1",
             _ids("gd-equivalence", "theta-star-is-one-gd-step", {"setting": "a-d"})),
    Headline("gd-equivalence",
             "Trained AR(1) layers predict like one GD step with eta = kappa.",
             "Thm 4.1 with Fig. 1",
             _ids("gd-equivalence", "trained-gd-gap", *({"setting": st} for st in _SYMMETRIC)),
             trained=True),
    Headline("banding",
             "With a centrally symmetric law of A the odd moments vanish, the checkerboard classes "
             "are invariant under the gradient, and the optimum lies in a class.",
             "Lemma 4.1, eq. 12",
             _ids("banding", "parity-zeros-exact", *({"setting": st, "s": s} for st in "abc" for s in _WINDOWS))
             + _ids("banding", "parity-zeros-monte-carlo", {"setting": "d", "s": "2-4"})
             + _ids("banding", "class-invariance-symbolic", *({"setting": "symbolic", "s": s} for s in (1, 2)))
             + _ids("banding", "optimum-in-a-class",
                    *({"setting": st, "s": s} for st in _SYMMETRIC for s in _WINDOWS))),
    Headline("banding",
             "Trained AR(2) and AR(4) layers show the banded (checkerboard) pattern.",
             "Fig. 1, appendix Figs. 3-5",
             _ids("banding", "trained-out-of-class-share",
                  *({"setting": st, "s": s} for st in _SYMMETRIC for s in _TRAINED_WINDOWS)),
             trained=True),
    Headline("pcg-alignment",
             "The layer's prediction is w^T ybar_q with w of eq. 17, and two PCG steps span "
             "{Pg, PHPg} (eq. 18).",
             "eqs. 17-18",
             _ids("pcg-alignment", "eq17-is-the-forward-pass", {"setting": "a-d+asym", "s": "1-5"})
             + _ids("pcg-alignment", "eq18-two-steps-in-span", {"setting": "drawn", "s": "2-6"})),
    Headline("pcg-alignment",
             "Trained AR(4) layers align with two PCG steps: mean cos_1 = 0.88 +- 0.05 (a) and "
             "0.93 +- 0.01 (b).",
             "Sec. 5, AR(4) cosines",
             _ids("pcg-alignment", "trained-cos1", *({"setting": st, "s": 4} for st in "ab")),
             trained=True),
    Headline("kalman-parity",
             "Trained single layers predict on par with the Kalman filter (the paper's motivation).",
             "Sec. 1",
             _ids("kalman-parity", "trained-mse-ratio",
                  *({"setting": st, "s": s} for st in _SYMMETRIC for s in (1, *_TRAINED_WINDOWS))),
             trained=True),
    Headline("improper-learning",
             "The best AR(s) predictor's excess over the filter decays like rho(L)^(2s).",
             "paper, Sec. 3 (after Tsiamis-Pappas and Kozdoba et al.)",
             _ids("improper-learning", "rate-share", *({"setting": "a-d", "variant": f"d={d}"} for d in (2, 3, 5)))),
    Headline("depth",
             "A linear transformer of depth O(log T) built to run gradient descent on the in-context "
             "least squares reaches least squares' error, O(log T / T).",
             "second source (Cole et al., NeurIPS 2025): the construction",
             _ids("depth", "construction-identity", {"setting": "a", "s": 2})
             + _ids("depth", "construction-median-rate-slope", {"setting": "a", "s": 2, "radius": 0.9})
             + _ids("depth", "construction-median-over-least-squares", {"setting": "a", "s": 2, "radius": 0.9})
             + _ids("depth", "construction-divergence-vanishes", {"setting": "a", "s": 2, "T": 640, "radius": 0.9})),
    Headline("depth",
             "One linear-attention layer keeps a non-vanishing error on LDS data, while on i.i.d. "
             "regression its error vanishes like 1/T.",
             "second source (Cole et al., NeurIPS 2025): the optima",
             _ids("depth", "one-layer-limit-excess", {"setting": "a", "s": 2, "layers": 1, "radius": 0.9})
             + _ids("depth", "iid-optimum-closed-form", {"setting": "iid", "s": 2, "layers": 1})
             + _ids("depth", "iid-limit-excess", {"setting": "iid", "s": 2, "layers": 1})
             + _ids("depth", "iid-excess-vanishes", {"setting": "iid", "s": 2, "layers": 1})),
    Headline("spectral-shift",
             "Widening the training range (radius 0.9 to 1.0) lowers a layer's typical error outside "
             "it and costs little inside it (our operationalisation; 5 % is our factor).",
             "the second seed's advice (its summary of Cole et al.), not a theorem",
             _ids("spectral-shift", "gain-outside", *({"setting": "a", "layers": 1, "radius": r} for r in (1.0, 1.05)))
             + _ids("spectral-shift", "cost-inside", {"setting": "a", "layers": 1, "radius": 0.9}),
             trained=True),
)


def headline_ids() -> frozenset[str]:
    """Every headline ``check_id``."""
    return frozenset(i for h in HEADLINES for i in h.check_ids)


def headlines_of(claim: str) -> list[Headline]:
    """The headline statements of one claim, in registry order."""
    return [h for h in HEADLINES if h.claim == claim]
