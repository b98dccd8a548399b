"""The report's figures, one module per claim, each exporting ``FIGURES`` (its spec's figures).

A figure is a :class:`~claims.harness.spec.FigureSpec`: a data function that reads the
claim's typed records into small frozen objects (every ``details`` key through
:func:`claims.figures.common.detail`, so a renamed key fails naming itself), and a drawing
function.  Modules: :mod:`~claims.figures.ar1_optimum` (kappa against T, the AR(1)
weights), :mod:`~claims.figures.gd_equivalence`, :mod:`~claims.figures.banding` (optimum
and trained weights), :mod:`~claims.figures.pcg_alignment` (the cosines),
:mod:`~claims.figures.kalman_parity`, :mod:`~claims.figures.improper_learning`,
:mod:`~claims.figures.depth`, :mod:`~claims.figures.spectral_shift`,
:mod:`~claims.figures.training_basins` (twins, training loss),
:mod:`~claims.figures.training_sensitivity`; shared helpers in :mod:`~claims.figures.common`.
"""
