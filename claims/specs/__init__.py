"""The claims, one :class:`~claims.harness.spec.ClaimSpec` each, and the registries built from them.

:data:`CLAIMS` lists every claim once, in the order the README and the reports show them;
every other registry of the suite is a loop over it:

* :func:`claim_runs` -- the trained runs a claim reads in a profile;
* :func:`all_headlines`, :func:`headline_ids` -- the sources' statements and their checks;
* :func:`known_failures` -- ``check_id -> {profile: why}``, the known non-reproductions;
* :func:`get_spec` -- one claim by name; :func:`register` -- a temporary claim (tests).

(Being filled in: one module per claim, ``claims/specs/<claim>.py``, each defining ``SPEC``.)
"""
from __future__ import annotations

import contextlib

from claims.harness.spec import ClaimSpec, Headline

__all__ = ["CLAIMS", "get_spec", "claim_runs", "all_headlines", "headline_ids", "known_failures", "register"]

#: every claim, in the order of the README's findings and the reports
CLAIMS: list[ClaimSpec] = []


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
