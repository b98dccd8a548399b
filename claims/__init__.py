"""Executable checks of the paper's claims, one test file per claim, and their harness.

- :mod:`claims.harness`   how a check records what it measured (``claim.record(...).check()``),
  the report (table, ``reports/claims.json``, ``reports/claims.md``), ``seed_for`` /
  ``rng_for`` and ``claim_settings`` for hypothesis.
- :mod:`claims.profiles`  the ``quick`` (CI) and ``paper`` compute profiles.
- ``claims/conftest.py``  the pytest plugin: ``--profile``, ``--claims-report``, the
  ``claim`` and ``profile`` fixtures.

Run ``pytest claims`` (or ``pytest claims -n auto``) from the repository root.
"""
