"""Shared pieces of the depth claim's two files (claims/test_depth.py: the theorem's
construction, optima and closed forms; claims/test_depth_trained.py: the trained stacks).

The systems of the construction (the source's kind): the reference setting
(claims.harness.coverage.REFERENCE: diagonal, centred, isotropic) with eigenvalues on
U[-:data:`RADIUS`, :data:`RADIUS`], window :data:`S` = 2, x_0 from the stationary law
(theory.stationary.stationary_family).  The construction runs L(T) = ceil(C_DEPTH ln T)
steps of Richardson iteration with the step eta = 1 / lambda_+ (:data:`ETA`), lambda_+ =
sigma_v^2 + d sigma_w^2 / (1 - r), the supremum over the family of lambda_max(Gamma_2)
(docs/math.md section 7.2):

>>> round(lambda_plus(), 6), depth_for(20), depth_for(640)
(0.51, 21, 46)

Beside them, what the theorem's checks measure, computed once per profile: the excesses of
the construction's rate (:func:`rate_data`, :func:`boot_medians`, :func:`scaled_slope`,
:func:`diverging`), the one-layer plateau's optima and limits (:func:`plateau`,
:func:`baseline`, :func:`limit`, :func:`one_system`), and the fit a + b/T
(:func:`fit_intercept`).
"""
from __future__ import annotations

import math

import numpy as np
from scipy import stats as scistats

from claims.harness.params import current, point_cached
from claims.harness.runs import STACK_S, TRAIN_RADIUS
from claims.harness.seeds import rng_for, seed_for
from theory.ar import context_stats, ols_ar, predict_ar, query_features
from theory.construction import richardson_prediction
from theory.optimum import population_optimum
from theory.population import PopulationMoments, beta_from_weights, gaussian_feature_moments
from theory.stationary import (autocovariances, best_ar, limit_excess, limit_moments, simulate_with_filter,
                               stationary_family, stationary_moments, toeplitz_covariance, window2_eigen_bounds)

__all__ = ["S", "RADIUS", "C_DEPTH", "RATE_T", "FIXED_DEPTH", "PLATEAU_T", "BOOT", "family", "lambda_plus", "ETA",
           "depth_for", "fit_intercept", "rate_data", "diverging", "boot_medians", "scaled_slope", "limit",
           "baseline", "plateau", "one_system"]

#: the claim whose named seeds the draws here take (claims.harness.seeds)
CLAIM = "depth"

S = STACK_S                 # the window (2)
RADIUS = TRAIN_RADIUS            # eigenvalues on U[-0.9, 0.9] (ours, the source's stable systems; the stacks' law)
C_DEPTH = 7                      # L(T) = ceil(7 ln T) (ours; reason in claims/test_depth.py's doc)
RATE_T = (20, 40, 80, 160, 320, 640)
FIXED_DEPTH = 4                  # the control's depth: the trained stacks' deepest
PLATEAU_T = (10, 20, 40, 80, 160)
BOOT = 1000                      # bootstrap resamples of the rate's medians


def family(T: int):
    """The construction's family at horizon T (theory.stationary.stationary_family, radius
    :data:`RADIUS`)."""
    return stationary_family(T, RADIUS, **{k: v for k, v in current().family_fields().items() if k != "T"})


def lambda_plus() -> float:
    """sup over the family of lambda_max(Gamma_2), reached with every eigenvalue at r:
    sigma_v^2 + d sigma_w^2 / (1 - r) (theory.stationary.window2_eigen_bounds)."""
    return window2_eigen_bounds(family(30))[1]


ETA = 1.0 / lambda_plus()


def depth_for(T: int) -> int:
    """L(T) = ceil(C_DEPTH ln T)."""
    return math.ceil(C_DEPTH * math.log(T))


def fit_intercept(T, values) -> tuple[float, float]:
    """(a, t95 half-width) of the least-squares fit values ~ a + b / T."""
    X = np.stack([np.ones(len(T)), 1.0 / np.asarray(T, dtype=float)], 1)
    coef, *_ = np.linalg.lstsq(X, np.asarray(values, dtype=float), rcond=None)
    r = np.asarray(values) - X @ coef
    dof = len(T) - 2
    cov = (r @ r / dof) * np.linalg.inv(X.T @ X)
    return float(coef[0]), float(scistats.t.ppf(0.975, dof) * math.sqrt(cov[0, 0]))


@point_cached
def rate_data(profile) -> dict:
    """Per T (the profile's held-out count of systems, one sequence each): the
    per-sequence conditional excesses over the per-system AR(2) optimum,
    (f - m)^2 - (f* - m)^2, of the construction (depth L(T)), of the fixed-depth control and
    of least squares, every sequence kept (a NaN from an overflowing iteration counts as
    +inf: the worst error, never a dropped one); lambda_max(H) per sequence (the step eta
    diverges where eta lambda_max(H) >= 2) and lambda_max(Gamma_2) per system."""
    out = {}
    for T in RATE_T:
        rng = rng_for(CLAIM, "rate", T)
        systems = family(T).sample_systems(rng, profile.heldout_sequences)
        y, m, _ = simulate_with_filter(systems, rng, T)
        w, _ = best_ar(systems, S)
        f_star = np.einsum("ms,ms->m", w, query_features(y, S))
        H, _, _ = context_stats(y, S)
        g = autocovariances(systems, 1)

        def excess(f):
            e = (f - m) ** 2 - (f_star - m) ** 2
            return np.where(np.isnan(e), np.inf, e)
        with np.errstate(over="ignore", invalid="ignore"):
            out[T] = {"construction": excess(richardson_prediction(y, S, depth_for(T), ETA)),
                      "fixed-depth": excess(richardson_prediction(y, S, FIXED_DEPTH, ETA)),
                      "least-squares": excess(predict_ar(ols_ar(y, S, ridge=1e-8), y, S)),
                      "lambda_max_H": np.linalg.eigvalsh(H)[:, -1],
                      "lambda_max_gamma2": g[:, 0] + np.abs(g[:, 1])}
    return out


def diverging(data_T: dict, eta: float) -> np.ndarray:
    """Which sequences the fixed step ``eta`` does not contract: eta lambda_max(H) >= 2."""
    return eta * data_T["lambda_max_H"] >= 2.0


def boot_medians(profile, key) -> tuple[np.ndarray, np.ndarray]:
    """(medians (len(RATE_T),), bootstrap medians (BOOT, len(RATE_T))) of one predictor's
    excess over every sequence, the diverging ones included; the resamples of each T are
    independent and shared by every predictor (paired)."""
    data = rate_data(profile)
    meds, boots = [], []
    for T in RATE_T:
        e = data[T][key]
        idx = rng_for(CLAIM, "rate-bootstrap", T).integers(0, e.size, (BOOT, e.size))
        meds.append(np.median(e))
        boots.append(np.concatenate([np.median(e[chunk], 1) for chunk in np.array_split(idx, 10)]))
    return np.array(meds), np.stack(boots, 1)


def scaled_slope(values) -> np.ndarray:
    """Slope of log(excess T / ln T) against log T (over the last axis)."""
    T = np.array(RATE_T, dtype=float)
    z = np.log(np.maximum(values, 1e-300) * T / np.log(T))
    x = np.log(T) - np.log(T).mean()
    return (z - z.mean(-1, keepdims=True)) @ x / (x @ x)


def limit(systems, seed: int, starts: int) -> dict:
    """The one layer's T = infinity limit on ``systems`` (claims/test_depth.py, check 3; theory.stationary.
    limit_moments): its optimum over the limit moments, and per system the limit
    predictor's excess over the best AR(2), (u - w*)^T Gamma_2 (u - w*), and the best AR(2)
    error variance."""
    opt = population_optimum(limit_moments(systems, S), seed, starts=starts, in_class=False)
    beta = beta_from_weights(opt.W_V, opt.W_QK)
    return {"two_L": 2 * opt.loss, "excess": limit_excess(systems, S, beta), "var": best_ar(systems, S)[1]}


@point_cached
def baseline(profile) -> dict:
    """The limit over 10 x mc_systems stationary systems (the best AR(2) errors of the same
    systems are the plateau's baseline)."""
    systems = family(30).sample_systems(rng_for(CLAIM, "ar2-baseline"), 10 * profile.mc_systems)
    return limit(systems, seed_for(CLAIM, "limit"), max(32, profile.multistart))


@point_cached
def plateau(profile) -> dict:
    """2 L*(T) of one layer on the stationary systems (exact quadrature moments)."""
    out = {}
    for T in PLATEAU_T:
        opt = population_optimum(stationary_moments(S, family(T)), seed_for(CLAIM, "plateau", T),
                                 starts=max(32, profile.multistart), in_class=False)
        out[T] = 2 * opt.loss
    return out


def one_system(profile) -> dict:
    """The control's family of one system: its limit excess and its exact excess at T = 10
    (per-system moments, theory.population.gaussian_feature_moments)."""
    systems = family(30).sample_systems(rng_for(CLAIM, "one-system"), 1)
    lim = limit(systems, seed_for(CLAIM, "one-system-limit"), max(32, profile.multistart))
    M, c, v = gaussian_feature_moments(toeplitz_covariance(systems, PLATEAU_T[0]), S)
    f = c.shape[-1]
    mom = PopulationMoments(s=S, M=M[0], c=c[0], v=float(v[0]), M_se=np.zeros((f, f)), c_se=np.zeros(f),
                            v_se=0.0, method="one-system")
    opt = population_optimum(mom, seed_for(CLAIM, "one-system", PLATEAU_T[0]), starts=max(32, profile.multistart),
                             in_class=False)
    return {"limit": float(lim["excess"][0]), "excess_T0": 2 * opt.loss - float(lim["var"][0])}
