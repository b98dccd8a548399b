"""The claims, one :class:`~claims.harness.spec.ClaimSpec` each, and the registries built from them.

:data:`CLAIMS` lists every claim once, in the order the README and the reports show them;
every other registry of the suite is a loop over it:

* :func:`claim_runs` -- the trained runs a claim reads in a profile;
* :func:`all_headlines`, :func:`headline_ids` -- the sources' statements and their checks;
* :func:`known_failures` -- ``check_id -> {profile: why}``, the known non-reproductions;
* :func:`get_spec` -- one claim by name; :func:`register` -- a temporary claim (tests).

One module per claim, ``claims/specs/<claim>.py``, defines its ``SPEC`` and the claim's
constants that more than its test file reads (the paper's numbers as ``PAPER_*`` tables),
in :data:`CLAIMS` order:

- :mod:`claims.specs.ar1_optimum`          Theorem 4.1's optimum and the trained AR(1) layers;
- :mod:`claims.specs.gd_equivalence`       theta* as one gradient step (the same AR(1) runs);
- :mod:`claims.specs.banding`              Lemma 4.1's checkerboard, exact and trained;
- :mod:`claims.specs.pcg_alignment`        eqs. 17-18 and the paper's AR(4) cosines (``PAPER_COS1``);
- :mod:`claims.specs.kalman_parity`        trained single layers against the Kalman filter;
- :mod:`claims.specs.improper_learning`    AR(s) predictors approach the filter in s;
- :mod:`claims.specs.depth`                Cole et al.'s construction and optima;
- :mod:`claims.specs.spectral_shift`       stacks trained at three radii, tested outside;
- :mod:`claims.specs.training_sensitivity` ours: the AR(1) metrics under other training choices;
- :mod:`claims.specs.training_basins`      ours: where training takes the AR(s) layers.

>>> [s.name for s in CLAIMS][:3], get_spec("banding").test_file
(['ar1-optimum', 'gd-equivalence', 'banding'], 'test_banding.py')
>>> len(all_headlines()), "banding/optimum-in-a-class/d/s=4" in headline_ids()
(13, True)
>>> from claims.harness.profiles import QUICK
>>> len(claim_runs("pcg-alignment", QUICK)), claim_runs("pcg-alignment", QUICK)[0].run
(12, 'ars/a/s=4/seed=0')
"""
from __future__ import annotations

import contextlib

from claims.harness.spec import ClaimSpec, Headline
from claims.specs import (ar1_optimum, banding, depth, gd_equivalence, improper_learning, kalman_parity,
                          pcg_alignment, spectral_shift, training_basins, training_sensitivity)

__all__ = ["CLAIMS", "get_spec", "claim_runs", "all_headlines", "headline_ids", "known_failures", "register"]

#: every claim, in the order of the README's findings and the reports: the claims with a
#: headline, then ours
CLAIMS: list[ClaimSpec] = [ar1_optimum.SPEC, gd_equivalence.SPEC, banding.SPEC, pcg_alignment.SPEC,
                           kalman_parity.SPEC, improper_learning.SPEC, depth.SPEC, spectral_shift.SPEC,
                           training_sensitivity.SPEC, training_basins.SPEC]


def get_spec(name: str) -> ClaimSpec:
    """The claim called ``name`` (ValueError naming ``claim`` otherwise)."""
    for spec in CLAIMS:
        if spec.name == name:
            return spec
    raise ValueError(f"claim must be one of {[s.name for s in CLAIMS]}, got {name!r}")


def claim_runs(name: str, profile) -> list:
    """The runs claim ``name`` trains in ``profile`` (``[]`` for a claim that trains nothing)."""
    return list(get_spec(name).runs(profile))


def all_headlines() -> tuple[Headline, ...]:
    """Every headline statement, claim by claim in :data:`CLAIMS` order."""
    return tuple(h for spec in CLAIMS for h in spec.headlines)


def headline_ids() -> frozenset[str]:
    """Every headline ``check_id``."""
    return frozenset(i for spec in CLAIMS for i in spec.headline_ids())


def known_failures() -> dict[str, dict[str, str]]:
    """``check_id -> {profile: why}`` over every claim."""
    return {cid: dict(why) for spec in CLAIMS for cid, why in spec.known.items()}


@contextlib.contextmanager
def register(spec: ClaimSpec):
    """Add ``spec`` to :data:`CLAIMS` for the duration of a ``with`` block (a test's synthetic claim)."""
    if any(s.name == spec.name for s in CLAIMS):
        raise ValueError(f"claim {spec.name!r} is already registered")
    CLAIMS.append(spec)
    try:
        yield spec
    finally:
        CLAIMS.remove(spec)
