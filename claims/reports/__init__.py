"""The reports, drawn from typed records (:class:`~claims.harness.reportfile.Report`).

- :mod:`claims.reports.report`       the report: terminal table, ``reports/claims.json``,
  ``reports/claims.md``, and the HTML page with its figures.
- :mod:`claims.reports.summary`      the counts and the lines on undecided checks.
- :mod:`claims.reports.html`         the HTML report (``index.html``): findings, then one
  section per claim in the registry's order.
- :mod:`claims.reports.figures`      the figure registry: each claim's figures
  (claims/figures/), then the per-run figure of each claim.
- :mod:`claims.reports.fig_training` the loss histories the trained claims store for the
  training-loss figure.
- :mod:`claims.reports.findings`     what the published runs conclude per statement, in plain words,
  the three kinds of statement counted apart.
- :mod:`claims.reports.controls`     the negative controls of a run, family by family, against the
  registry's families without one (``ClaimSpec.no_control``).
- :mod:`claims.reports.readme`       ``python -m claims.reports.readme``: the README's findings
  block and ``docs/results/verdicts.md`` (``--check`` in the tests).
- :mod:`claims.reports.compare`      ``python -m claims.reports.compare BEFORE.json AFTER.json``:
  do two reports agree (timings and node ids aside)?
- :mod:`claims.reports.sweep`        the report of a sweep file: the verdict map (headline check x
  cell), the reported measures drawn over the grid's axes, ``sweep.md`` and ``index.html``.
- :mod:`claims.reports.rejudge`      a published report re-judged by today's rules from its
  stored per-run values, without training.
"""
