"""Seeds and hypothesis settings of the claims: derived from names, never from workers.

Seeds derive from names, never from worker ids or test order, so a result does not
depend on which pytest-xdist worker ran the test::

    >>> seed_for("ar1-optimum", "a", 0) == seed_for("ar1-optimum", "a", 0)
    True
    >>> 0 <= seed_for("gd-equivalence") < 2**63
    True
    >>> rng_for("ar1-optimum", "a").standard_normal(2).shape
    (2,)
"""
from __future__ import annotations

import hashlib

import numpy as np

__all__ = ["seed_for", "rng_for", "claim_settings"]


def seed_for(*parts) -> int:
    """A 63-bit non-negative seed from names: sha256 of ``"/".join(map(str, parts))``.

    Parts are joined as strings, so ``seed_for("a", 1) == seed_for("a", "1")``.
    """
    if not parts:
        raise ValueError("seed_for needs at least one part (e.g. the claim id)")
    digest = hashlib.sha256("/".join(map(str, parts)).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") & (2**63 - 1)


def rng_for(*parts) -> np.random.Generator:
    """``np.random.default_rng(seed_for(*parts))``."""
    return np.random.default_rng(seed_for(*parts))


def claim_settings(profile):
    """``hypothesis.settings`` for a property-based claim, sized by the profile.

    ``max_examples = profile.hypothesis_examples``, ``deadline=None`` and, always,
    ``derandomize=True``: the draws are seeded from the test function itself (its name
    and source), not from the clock, and the example database is not used, so two runs
    of a claim draw the same examples and write the same records.  With
    ``pytest claims --claims-random`` (``profile.run``, claims/runopts.py) the draws are fresh instead.
    Nothing depends on the environment variable CI.  Other settings inherit from the
    loaded hypothesis profile.  The profile comes from the ``profile`` fixture::

        def test_x(profile):
            @claim_settings(profile)
            @given(...)
            def inner(...): ...
            inner()
    """
    from hypothesis import settings    # about 0.6 s of start-up: only the property checks need it

    return settings(max_examples=profile.hypothesis_examples, deadline=None,
                    derandomize=not profile.run.random_draws)
