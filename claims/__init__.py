"""Executable checks of the paper's claims, one test file per claim, and their harness.

Claims (``test_<claim>.py``; shared pieces of the AR(1) claims in ``_ar1.py``, of the AR(s)
claims in ``_ars.py`` -- their runs, moments, optimum and the basin each run is headed for --
and of the Kalman, depth and shift claims in ``_lds.py``):

- ``test_ar1_kappa.py``          ar1-optimum, part 1: kappa of eq. 15, exact against quadrature
  and an independent Monte Carlo.
- ``test_ar1_optimum.py``        ar1-optimum: Theorem 4.1's global optimum, and trained AR(1) layers.
- ``test_gd_equivalence.py``     gd-equivalence: theta* is one gradient step on L_AR(1).
- ``test_banding.py``            banding: Lemma 4.1's parity structure for s >= 2, exact and trained.
- ``test_pcg_alignment.py``      pcg-alignment: eq. 17-18, the layer against two PCG steps.
- ``test_training_basins.py``    training-basins (ours): where training takes the AR(s) layers;
  noise-free twins.
- ``test_kalman_parity.py``      kalman-parity: trained layers and baselines against the filter.
- ``test_improper_learning.py``  improper-learning: AR(s) predictors approach the filter in s.
- ``test_depth.py``              depth: the second source's construction, optima, closed forms.
- ``test_spectral_shift.py``     spectral-shift: trained at radius 0.9, tested up to 1.05.
- ``test_sensitivity.py``        training-sensitivity (ours, paper profile): the AR(1) verdicts
  under choices the paper leaves open.

The harness:

- :mod:`claims.harness.records`   how a check records what it measured, its interval and verdict
  (``claim.record(...).check()``): the record type ``ClaimRecord``.
- :mod:`claims.harness.identity`  a check's ``check_id`` and coordinates (``Coords``), the runs
  behind it (``RunRef``, ``RunEntry``).
- :mod:`claims.harness.runs`      the run store: every trained run a claim uses -- its id, its
  configuration (the only definition; the command line reads it too), its weights
  (``trained``) -- and the runs of each claim.
- :mod:`claims.harness.headlines` the headline checks of each claim (the paper's statements).
- :mod:`claims.reports.legacy`    reports of the previous schema (3) mapped to check ids.
- :mod:`claims.harness.display`   how values, criteria and intervals are shown in the reports.
- :mod:`claims.harness.stats`     95 % intervals (Student-t over seeds, Monte Carlo +- 1.96 SE,
  percentile bootstrap) and what would decide an inconclusive check.
- :mod:`claims.harness.shares`    verdicts by run: each trained layer holds or fails, a check is the
  share of runs that hold (Clopper-Pearson) against 1/2, per basin beside it.
- :mod:`claims.harness.basins`    which basin a run is in, reported rows per basin, Clopper-Pearson
  shares.
- :mod:`claims.reports.rejudge`   a published report re-judged by today's rules from its stored
  per-run values, without training.
- :mod:`claims.harness.collect`   records gathered from pytest's reports, each test's outcome.
- :mod:`claims.reports.report`    the report: table, ``reports/claims.json``, ``reports/claims.md``.
- :mod:`claims.reports.html`      the HTML report (``index.html``): findings, then one section per claim.
- :mod:`claims.reports.figures`   the report's figures, drawn from the records alone.
- :mod:`claims.reports.fig_training` the trained runs' own figures: AR(1) weights beside theta*
  (the paper's Fig. 1b, c) and training-loss curves over L*.
- :mod:`claims.reports.findings`  what the published runs conclude per statement, in plain words.
- :mod:`claims.reports.readme`    ``python -m claims.reports.readme``: the README's findings block and
  ``docs/results/verdicts.md``, rendered from the published runs (``--check`` in the tests).
- :mod:`claims.harness.known`     known non-reproductions as strict xfails, per profile.
- :mod:`claims.harness.memo`      deterministic results shared on disk between processes (optima,
  Monte Carlo moments, noise-free twins), keyed by their inputs and code.
- :mod:`claims.harness.seeds`     ``seed_for`` / ``rng_for`` and ``claim_settings`` for hypothesis.
- :mod:`claims.harness.profiles`  the ``quick`` (CI) and ``paper`` compute profiles.
- :mod:`claims.harness.plugin`    the pytest plugin (loaded by the root conftest.py):
  ``--profile``, ``--claims-report``, ``--claims-random``, ``--retrain``, the ``claim`` and
  ``profile`` fixtures.
- :mod:`claims.harness.runopts`   the options of the current run (random draws, retraining).
- :mod:`claims.reports.compare`   ``python -m claims.reports.compare BEFORE.json AFTER.json``: do two
  reports agree (timings and node ids aside)?

The command line, on top of everything it calls (nothing in theory/ or models/ imports
claims/; tests/test_layers.py):

- :mod:`claims.cli.main`       ``ldsicl``: the parser, its help and ``main``.
- :mod:`claims.cli.commands`  what kappa, train (with ``--claim`` a claim's own run), optimum
  and report do.
- :mod:`claims.cli.cache_commands` what runs and cache list / clear / export do.

Run ``pytest claims`` (or ``pytest claims -n auto``, ``pytest --profile paper claims``)
from the repository root.
"""
