"""Exact and symbolic theory for single-layer linear attention on LDS data.

Modules, one per paper object (production engines first, then the references):

- :mod:`theory.validation`   input checks shared by every layer.
- :mod:`theory.jsonvalues`   the one JSON policy for numbers (non-finite ones as "NaN" / "Infinity").
- :mod:`theory.settings`     the settings as objects: their laws, and the routes that exist for each.
- :mod:`theory.systems`      system families (settings a-d, asymmetric control), exact covariance.
- :mod:`theory.bases`        the settings' random eigenbases: Haar-orthogonal Q, conditioned P.
- :mod:`theory.coordinate`   the one-coordinate covariance G(lambda) and its mean over lambda:
  the float (Gauss-Legendre) and the exact (integer, Kronecker substitution) engine.
- :mod:`theory.ar`           AR(s) tokens, L_AR(s), H, g, gamma, GD, PCG, in-context OLS.
- :mod:`theory.population`   population loss of the layer: feature moments M, c, v.
- :mod:`theory.kappa_forms`  the two Gaussian moments of kappa as forms in the covariance.
- :mod:`theory.kappa_exact`  kappa in setting (a): exact rational and Gauss-Legendre routes.
- :mod:`theory.kappa`        kappa of Theorem 4.1 (eq. 15) for any family: result, Monte Carlo, dispatcher.
- :mod:`theory.parity`       parity of the features, the checkerboard classes b-even / b-odd (Lemma 4.1).
- :mod:`theory.optimum`      the population optimum over (b, W_QK), its in-class twins, stationary points.
- :mod:`theory.mc_moments`   Monte Carlo moments from raw trajectories (the cheap route of setting d).
- :mod:`theory.alignment`    eq. 17's terms, eq. 18's PCG span and the candidate cosines.
- :mod:`theory.kalman`       the Kalman filter with known parameters and the exact optimal MSE.
- :mod:`theory.n4sid`        subspace identification fitted in context (a classical baseline).
- :mod:`theory.stationary`   stationary systems, the depth claim's setting.
- :mod:`theory.construction` k preconditioned Richardson steps as the weights of a stack (depth).
- :mod:`theory.iid`          in-context linear regression with i.i.d. tokens (the depth contrast).
- :mod:`theory.reference`    reference routes kept apart from production (brute-force Isserlis,
  exact Fraction polynomials, sympy); they check the engines above.
"""
