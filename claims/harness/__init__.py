"""The claims' harness: how a check records, judges and identifies what it measured; the run store; the plugin.

- :mod:`claims.harness.spec`       the claim object: ``ClaimSpec``, ``Headline``, ``FigureSpec``.
- :mod:`claims.harness.coverage`   named sets of settings derived from the settings objects
  (symmetric, controls, with quadrature, with the exact rational route, the reference law).
- :mod:`claims.harness.records`    how a check records what it measured, its interval and
  verdict (``claim.record(...).check()``): the record type ``ClaimRecord``.
- :mod:`claims.harness.plain`      the record's plain values: JSON conversion, comparators,
  kinds, interval and criterion checks.
- :mod:`claims.harness.runentries` the runs behind a record and their per-run values, intervals
  clipped to a quantity's range.
- :mod:`claims.harness.reportfile` a report file as a typed ``Report``: ``load_report``, the schema.
- :mod:`claims.harness.identity`   a check's ``check_id`` and coordinates (``Coords``), the runs
  behind it (``RunRef``, ``RunEntry``).
- :mod:`claims.harness.params`     the point of the family's parameters the claims run at
  (``--claims-params``): ``Point``, the session's point, ``family``.
- :mod:`claims.harness.runform`    the grammar of run ids: one ``FORM`` per kind gives the id and
  its parser; the point's prefix; the seed suffix.
- :mod:`claims.harness.runs`       the run store: one type per kind of trained run -- its id, its
  parser, its configuration for a profile -- and its weights (``trained``).
- :mod:`claims.harness.stats`      95 % intervals (Student-t over seeds, Monte Carlo +- 1.96 SE,
  percentile bootstrap) and what would decide an inconclusive check.
- :mod:`claims.harness.shares`     verdicts by run: each trained layer holds or fails, a check is
  the share of runs that hold (Clopper-Pearson) against 1/2, per basin beside it.
- :mod:`claims.harness.basins`     which basin a run is in, reported rows per basin.
- :mod:`claims.harness.display`    how values, criteria and intervals are shown.
- :mod:`claims.harness.known`      known non-reproductions (the specs' ``known``) as strict xfails.
- :mod:`claims.harness.collect`    records gathered from pytest's reports, each test's outcome.
- :mod:`claims.harness.memo`       deterministic results shared on disk between processes.
- :mod:`claims.harness.seeds`      ``seed_for`` / ``rng_for`` and ``claim_settings`` for hypothesis.
- :mod:`claims.harness.profiles`   the ``quick`` (CI) and ``paper`` compute profiles.
- :mod:`claims.harness.runopts`    the options of the current run (random draws, retraining, the point).
- :mod:`claims.harness.plugin`     the pytest plugin: ``--profile``, ``--claims-report``,
  ``--claims-random``, ``--claims-params``, ``--retrain``, the ``claim`` and ``profile`` fixtures.
"""
