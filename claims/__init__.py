"""Executable checks of the paper's claims, one test file per claim, and their harness.

Claims (``test_<claim>.py``; shared pieces of the AR(1) claims in ``_ar1.py``, of the AR(s)
claims in ``_ars.py`` -- their runs, moments, optimum and the basin each run is headed for --
and of the Kalman, depth and shift claims in ``_lds.py``) and the harness:

- :mod:`claims.records`   how a check records what it measured, its interval and verdict
  (``claim.record(...).check()``): the record type ``ClaimRecord`` with its ``check_id``,
  coordinates and per-run entries.
- :mod:`claims.runs`      run ids: the name of each trained run, from its configuration.
- :mod:`claims.headlines` the headline checks of each claim (the paper's statements).
- :mod:`claims.legacy`    reports of the previous schema (3) mapped to check ids.
- :mod:`claims.display`   how values, criteria and intervals are shown in the reports.
- :mod:`claims.stats`     95 % intervals (Student-t over seeds, Monte Carlo +- 1.96 SE,
  percentile bootstrap) and what would decide an inconclusive check.
- :mod:`claims.basins`    verdicts by basin: runs headed for different stationary points
  judged per point (holds / fails / mixed / inconclusive), Clopper-Pearson shares.
- :mod:`claims.collect`   records gathered from pytest's reports, each test's outcome.
- :mod:`claims.report`    the report: table, ``reports/claims.json``, ``reports/claims.md``.
- :mod:`claims.html`      the HTML report (``index.html``): findings, then one section per claim.
- :mod:`claims.figures`   the report's figures, drawn from the records alone.
- :mod:`claims.fig_training` the trained runs' own figures: AR(1) weights beside theta*
  (the paper's Fig. 1b, c) and training-loss curves over L*.
- :mod:`claims.findings`  what the published runs conclude per statement, in plain words.
- :mod:`claims.readme`    ``python -m claims.readme``: the README's findings block and
  ``docs/results/verdicts.md``, rendered from the published runs (``--check`` in the tests).
- :mod:`claims.known`     known non-reproductions as strict xfails, per profile.
- :mod:`claims.memo`      deterministic results shared on disk between processes (optima,
  Monte Carlo moments, noise-free twins), keyed by their inputs and code.
- :mod:`claims.seeds`     ``seed_for`` / ``rng_for`` and ``claim_settings`` for hypothesis.
- :mod:`claims.profiles`  the ``quick`` (CI) and ``paper`` compute profiles.
- :mod:`claims.plugin`    the pytest plugin (loaded by the root conftest.py):
  ``--profile``, ``--claims-report``, ``--claims-random``, ``--retrain``, the ``claim`` and
  ``profile`` fixtures.
- :mod:`claims.runopts`   the options of the current run (random draws, retraining).
- :mod:`claims.compare`   ``python -m claims.compare BEFORE.json AFTER.json``: do two
  reports agree (timings and node ids aside)?

Run ``pytest claims`` (or ``pytest claims -n auto``, ``pytest --profile paper claims``)
from the repository root.
"""
