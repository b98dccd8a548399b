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

import functools
import hashlib
import importlib
from pathlib import Path

import numpy as np

__all__ = ["seed_for", "rng_for", "claim_settings", "import_every_module"]

_ROOT = Path(__file__).resolve().parents[2]


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
    ``pytest claims --claims-random`` (``profile.run``, claims/harness/runopts.py) the draws are fresh instead.
    Nothing depends on the environment variable CI.  Other settings inherit from the
    loaded hypothesis profile.  The profile comes from the ``profile`` fixture::

        def test_x(profile):
            @claim_settings(profile)
            @given(...)
            def inner(...): ...
            inner()

    The first call in a process imports every module of the project
    (:func:`import_every_module`): hypothesis also draws, now and then, literals from the
    source of the project's modules imported so far, and which those are would otherwise
    depend on the tests that ran before in the same process.
    """
    from hypothesis import settings    # about 0.6 s of start-up: only the property checks need it

    import_every_module()

    return settings(max_examples=profile.hypothesis_examples, deadline=None,
                    derandomize=not profile.run.random_draws)



@functools.lru_cache(maxsize=None)
def import_every_module() -> tuple[str, ...]:
    """Import every module of theory/, models/ and claims/ (the claim files aside) once per
    process; the names imported, in order.

    Why: hypothesis (6.13x and later) mixes into its draws, with a small probability per
    choice, constants found in the source of the *local* modules imported so far (test
    files excepted; ``hypothesis.internal.conjecture.providers``).  Which of the project's
    modules a pytest-xdist worker has imported when a property claim draws depends on the
    tests it ran before, so one derandomised claim drew different systems in different runs
    (improper-learning's fifth draw: seed 512 in one run, 500 and 1000 in others).  With
    every module imported first the constants are a function of the code alone, the same in
    every process and order.  About 4 s once per process that runs a property claim.
    """
    names = []
    for pkg in ("theory", "models", "claims"):
        for path in sorted((_ROOT / pkg).rglob("*.py")):
            if path.stem.startswith("test_") or path.stem == "__main__" or "__pycache__" in path.parts:
                continue
            parts = path.relative_to(_ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            importlib.import_module(name)
            names.append(name)
    return tuple(names)
