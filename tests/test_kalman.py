"""theory.kalman: the Kalman filter with known parameters and the exact optimal MSE.

Oracles: an established implementation (filterpy's ``KalmanFilter``, run step by step);
the Cholesky factor of the exact covariance K (theory.systems.covariance), which shares
nothing with the filter's recursion; a Monte Carlo of the prediction error; the
steady-state Riccati equation's own residual; least squares in the population (the
normal equations of the best AR(s) predictor).
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from theory.kalman import ar_population_predictor, kalman_predict, optimal_mse, steady_state
from theory.systems import LDSFamily, Systems, covariance


def _filterpy_prediction(A, c, Sw, S0, sv, y):
    """filterpy: prior x = 0, P = Sigma_0; for each observation predict, then update."""
    from filterpy.kalman import KalmanFilter
    d = A.shape[0]
    kf = KalmanFilter(dim_x=d, dim_z=1)
    kf.F, kf.H, kf.Q, kf.R = A, c[None, :], Sw, np.array([[sv ** 2]])
    kf.x, kf.P = np.zeros((d, 1)), S0.copy()
    for t in range(len(y) - 1):
        kf.predict()
        kf.update(np.array([[y[t]]]))
    kf.predict()
    return float((c @ kf.x)[0]), float(c @ kf.P @ c + sv ** 2)


@settings(max_examples=20, deadline=None)
@given(setting=st.sampled_from(["a", "b", "c", "d", "asym"]), d=st.integers(1, 4), T=st.integers(3, 25),
       sv=st.floats(0.05, 1.0), seed=st.integers(0, 2 ** 32 - 1))
def test_filter_equals_filterpy(setting, d, T, sv, seed):
    fam = LDSFamily(setting, d=d, T=T, sigma_v=sv)
    sy = fam.sample_systems(np.random.default_rng(seed), 3)
    y = sy.simulate(np.random.default_rng(seed + 1), T)
    kp = kalman_predict(sy, y)
    for k in range(3):
        pred, var = _filterpy_prediction(sy.A[k], sy.c[k], sy.Sigma_w, sy.Sigma_0, sy.sigma_v, y[k])
        assert kp.prediction[k] == pytest.approx(pred, rel=1e-9, abs=1e-12)
        assert kp.variance[k] == pytest.approx(var, rel=1e-9)


@settings(max_examples=20, deadline=None)
@given(setting=st.sampled_from(["a", "b", "c", "d"]), d=st.integers(1, 5), T=st.integers(3, 40),
       seed=st.integers(0, 2 ** 32 - 1))
def test_filter_variance_is_the_cholesky_optimum(setting, d, T, seed):
    """S_T of the recursion equals L[T, T]^2 of the exact covariance (two routes)."""
    fam = LDSFamily(setting, d=d, T=T)
    sy = fam.sample_systems(np.random.default_rng(seed), 8)
    y = sy.simulate(np.random.default_rng(seed), T)
    np.testing.assert_allclose(kalman_predict(sy, y).variance, optimal_mse(sy, T), rtol=1e-9)


def test_prediction_error_has_the_predicted_variance_and_beats_a_wrong_model():
    """Monte Carlo over many trajectories of one system: mean squared error = S_T; control:
    the filter of a different A is worse than the optimum by far more than the noise."""
    fam = LDSFamily("d", d=3, T=12)
    one = fam.sample_systems(np.random.default_rng(2), 1)
    reps = 40_000
    rep = Systems(A=np.repeat(one.A, reps, 0), c=np.repeat(one.c, reps, 0), Sigma_w=one.Sigma_w,
                  Sigma_0=one.Sigma_0, sigma_v=one.sigma_v, T=fam.T)
    y = rep.simulate(np.random.default_rng(3), fam.T)
    kp = kalman_predict(rep, y)
    err2 = (kp.prediction - y[:, -1]) ** 2
    se = err2.std(ddof=1) / np.sqrt(reps)
    assert abs(err2.mean() - kp.variance[0]) < 4 * se
    wrong = Systems(A=np.repeat(-one.A, reps, 0), c=rep.c, Sigma_w=rep.Sigma_w, Sigma_0=rep.Sigma_0,
                    sigma_v=rep.sigma_v, T=fam.T)
    err_wrong = (kalman_predict(wrong, y).prediction - y[:, -1]) ** 2
    assert err_wrong.mean() - err2.mean() > 10 * se


def test_steady_state_riccati_and_stability():
    fam = LDSFamily("b", d=4)
    sy = fam.sample_systems(np.random.default_rng(4), 20)
    ss = steady_state(sy)
    assert ss.residual.max() < 1e-10 and (ss.closed_loop_radius < 1).all()
    # the time-varying filter converges to it over a long horizon
    T = 400
    y = sy.simulate(np.random.default_rng(5), T)
    kp = kalman_predict(sy, y)
    np.testing.assert_allclose(kp.innovation_variances[:, -1], ss.innovation_variance, rtol=1e-6)
    np.testing.assert_allclose(kp.gains[:, -1], ss.gain, rtol=1e-5, atol=1e-9)
    with pytest.raises(ValueError, match="^sigma_v must be > 0"):
        steady_state(LDSFamily("a", sigma_v=0.0).sample_systems(np.random.default_rng(0), 1))


def test_population_ar_predictor_solves_the_normal_equations_and_approaches_the_filter():
    fam = LDSFamily("a", d=3, T=30)
    sy = fam.sample_systems(np.random.default_rng(6), 10)
    K = covariance(sy, fam.T)
    opt = optimal_mse(sy, fam.T)
    prev = None
    for s in (1, 2, 4, 8):
        w, v = ar_population_predictor(sy, fam.T, s)
        q = np.arange(fam.T - 1 - s, fam.T - 1)
        # normal equations: E[(y_T - w^T ybar) ybar] = 0
        grad = K[:, q, fam.T - 1] - np.einsum("mij,mj->mi", K[:, q[:, None], q[None, :]], w)
        assert np.abs(grad).max() < 1e-12 * np.abs(K).max()
        assert (v >= opt * (1 - 1e-12)).all()                   # never better than the filter
        if prev is not None:
            assert (v <= prev * (1 + 1e-12)).all()               # more lags never hurt
        prev = v
    with pytest.raises(ValueError, match="^s must be"):
        ar_population_predictor(sy, fam.T, 30)


def test_input_checks():
    sy = LDSFamily("a", d=2, T=5).sample_systems(np.random.default_rng(0), 2)
    with pytest.raises(ValueError, match="^y must have one row per system"):
        kalman_predict(sy, np.zeros((3, 5)))
    with pytest.raises(ValueError, match="^systems"):
        kalman_predict("x", np.zeros((2, 5)))
    with pytest.raises(ValueError, match="^y must be finite"):
        kalman_predict(sy, np.full((2, 5), np.nan))


def test_paired_ratio_interval_of_the_claims():
    """claims._lds.paired_ratio: a ratio of mean squared errors with a paired bootstrap interval."""
    from claims._lds import paired_ratio
    rng = np.random.default_rng(0)
    e = rng.chisquare(1, 4000)
    r, lo, hi = paired_ratio(e, e, np.random.default_rng(1))
    assert r == 1.0 and lo == pytest.approx(1.0) and hi == pytest.approx(1.0)
    r, lo, hi = paired_ratio(1.2 * e + 0.01 * rng.chisquare(1, 4000), e, np.random.default_rng(2))
    assert 1.19 < lo < r < hi < 1.23


@pytest.mark.parametrize("radius", [0.9, 1.05])
def test_the_filter_is_the_lower_bound_in_and_out_of_distribution(radius):
    """The MMSE property (formerly the spectral-shift claim's check, a theorem about the
    filter that only a filter bug could fail): on systems of radius 0.9 and 1.05 (|lambda|
    up to 1.05, growing modes), no predictor beats the filter of the true system on the
    same sequences -- in-context least squares AR(2), the best AR(2) of each system, and the
    filter given the training law (A scaled by 0.9 / r).  Control: that mis-specified
    filter is beaten by the true one at r = 1.05 (and equals it at r = 0.9)."""
    from claims._lds import paired_ratio
    from theory.ar import ols_ar, predict_ar, query_features
    fam = LDSFamily("a", T=30, radius=radius)
    systems, y = fam.sample(np.random.default_rng(7), 20_000)
    target = y[:, -1]
    kf = (kalman_predict(systems, y).prediction - target) ** 2
    w_pop, _ = ar_population_predictor(systems, 30, 2)
    wrong = Systems(A=systems.A * (0.9 / radius), c=systems.c, Sigma_w=systems.Sigma_w,
                    Sigma_0=systems.Sigma_0, sigma_v=systems.sigma_v, T=systems.T)
    others = {"least squares": (predict_ar(ols_ar(y, 2, ridge=1e-8), y, 2) - target) ** 2,
              "best AR(2)": (np.einsum("ms,ms->m", w_pop, query_features(y, 2)) - target) ** 2,
              "training-law filter": (kalman_predict(wrong, y).prediction - target) ** 2}
    for name, err in others.items():
        ratio, lo, hi = paired_ratio(err, kf, np.random.default_rng(1))
        assert hi >= 1.0, (name, ratio, lo, hi)
    ratio, lo, _ = paired_ratio(others["training-law filter"], kf, np.random.default_rng(2))
    if radius > 0.9:
        assert lo > 1.0, (ratio, lo)
    else:
        assert ratio == 1.0
