"""Executable checks of the paper's claims, one :class:`~claims.harness.spec.ClaimSpec` per claim, and their harness.

The package is arranged by job (each subpackage's docstring names its modules):

- ``claims/test_*.py``  the claim checks, collected by ``pytest claims``; each imports its spec.
  ``test_ar1_kappa.py`` and ``test_ar1_optimum.py`` (ar1-optimum: kappa of eq. 15 and
  Theorem 4.1's optimum, exact and trained), ``test_gd_equivalence.py`` (theta* is one GD
  step), ``test_banding.py`` and ``test_banding_trained.py`` (Lemma 4.1's parity structure,
  exact, then on trained layers), ``test_pcg_alignment.py`` (eq. 17-18 and the paper's PCG
  cosines), ``test_kalman_parity.py`` (trained layers and baselines against the filter),
  ``test_improper_learning.py`` (AR(s) predictors approach the filter in s),
  ``test_depth.py`` and ``test_depth_trained.py`` (Cole et al.'s construction, optima and
  closed forms, then the trained stacks), ``test_spectral_shift.py`` (trained at radius 0.9,
  tested up to 1.05), ``test_training_basins.py`` (ours: where training takes the AR(s)
  layers; noise-free twins), ``test_sensitivity.py`` (ours, paper profile: the AR(1)
  verdicts under choices the paper leaves open).
- ``_ar1.py``, ``_ars.py``, ``_depth.py``, ``_lds.py``, ``_pcg.py``  pieces the claim files
  share: the AR(1) claims' moments and coefficients; the AR(s) claims' runs, moments, optimum
  and the basin each run is headed for; the depth claim's systems, rate and plateau
  computations; the Kalman, depth and shift claims' held-out evaluation; the PCG claim's
  cosine summaries.
- :mod:`claims.specs`    one module per claim defining ``SPEC`` -- its runs per profile, its
  headline statements with the reason their checks carry them, its known non-reproductions,
  its figures, its paper constants -- and ``CLAIMS``, the one list every registry loops over.
- :mod:`claims.figures`  each claim's figures: typed data read from its records, and the drawing.
- :mod:`claims.harness`  how a check records, judges and identifies what it measured; the
  run store; named sets of settings; the pytest plugin (loaded by the root conftest.py).
- :mod:`claims.reports`  the reports drawn from typed records: terminal, JSON, Markdown,
  HTML, figures; the README's findings; compare and re-judge.
- :mod:`claims.cluster`  beyond one process: one executor interface (a local pool, or a
  ``dask.distributed`` cluster), the runs of a profile trained on it, sweeps of the suite over
  a grid of points of the family's parameters.
- :mod:`claims.cli`      the ``ldsicl`` command, on top of everything it calls (nothing in
  theory/ or models/ imports claims/; tests/test_layers.py).

Run ``pytest claims`` (or ``pytest claims -n auto``, ``pytest --profile paper claims``)
from the repository root.
"""
