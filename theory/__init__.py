"""Exact and symbolic theory for single-layer linear attention on LDS data.

Modules, one per paper object:

- :mod:`theory.systems`  system families (settings a-d, asymmetric control), exact covariance.
- :mod:`theory.moments`  Gaussian moments (Isserlis), symbolic moments, exact setting-(a) moments.
- :mod:`theory.ar`       AR(s) tokens, L_AR(s), H, g, gamma, GD, PCG, in-context OLS.
- :mod:`theory.kappa`    kappa of Theorem 4.1 (eq. 15): exact, quadrature, symbolic, Monte Carlo.
"""
