"""Executable checks of the paper's claims, one test file per claim, and their harness.

Claims (``test_<claim>.py``; shared pieces of the AR(1) claims in ``_ar1.py``) and the
harness:

- :mod:`claims.records`   how a check records what it measured (``claim.record(...).check()``).
- :mod:`claims.collect`   records gathered from pytest's reports, each test's outcome.
- :mod:`claims.report`    the report: table, ``reports/claims.json``, ``reports/claims.md``.
- :mod:`claims.seeds`     ``seed_for`` / ``rng_for`` and ``claim_settings`` for hypothesis.
- :mod:`claims.profiles`  the ``quick`` (CI) and ``paper`` compute profiles.
- :mod:`claims.plugin`    the pytest plugin (loaded by the root conftest.py):
  ``--profile``, ``--claims-report``, the ``claim`` and ``profile`` fixtures.
- :mod:`claims.compare`   ``python -m claims.compare BEFORE.json AFTER.json``: do two
  reports agree (timings and node ids aside)?
- :mod:`claims.harness`   all public names of the harness in one import.

Run ``pytest claims`` (or ``pytest claims -n auto``, ``pytest --profile paper claims``)
from the repository root.
"""
