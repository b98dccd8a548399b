"""theory.ar: tokens, AR(s) statistics, L_AR(s), GD, PCG, in-context OLS.

Oracles: plain-loop tokens and statistics, central finite differences, scipy's
``cg`` iterates (captured by callback), least squares on the explicit design matrix,
and the span property of two PCG steps (paper eq. 18).
"""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse.linalg as spla
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from _oracles import loop_context_stats, loop_tokens
from theory.ar import (
    ar1_optimal_weights,
    attention_ar_weights,
    ar_grad,
    ar_loss,
    context_stats,
    gd,
    ols_ar,
    pcg,
    predict_ar,
    query_features,
    token_matrix,
)

finite = st.floats(-5, 5, allow_nan=False, allow_infinity=False)


@st.composite
def window_and_y(draw, s_max=5, T_max=20):
    s = draw(st.integers(1, s_max))
    T = draw(st.integers(s + 2, T_max))
    y = draw(hnp.arrays(np.float64, T, elements=finite))
    return s, y


# -------------------------------------------------------------------------- tokens


def test_token_matrix_worked_example():
    Y0 = token_matrix(np.arange(1.0, 7.0), 2)
    np.testing.assert_array_equal(Y0, [[1, 2, 3, 4], [2, 3, 4, 5], [3, 4, 5, 0]])
    np.testing.assert_array_equal(query_features(np.arange(1.0, 7.0), 2), [4, 5])


@given(sy=window_and_y())
def test_token_matrix_equals_loop(sy):
    s, y = sy
    Y0 = token_matrix(y, s)
    np.testing.assert_array_equal(Y0, loop_tokens(y, s))
    assert Y0.shape == (s + 1, len(y) - s)
    y2 = y.copy()
    y2[-1] += 1.0                                   # the target y_T appears nowhere in Y_0
    np.testing.assert_array_equal(token_matrix(y2, s), Y0)


def test_token_matrix_batches():
    y = np.random.default_rng(0).standard_normal((2, 3, 9))
    Y0 = token_matrix(y, 3)
    assert Y0.shape == (2, 3, 4, 6)
    for a in range(2):
        for b in range(3):
            np.testing.assert_array_equal(Y0[a, b], loop_tokens(y[a, b], 3))


# -------------------------------------------------------------- statistics and loss


@given(sy=window_and_y())
def test_context_stats_equal_loops(sy):
    s, y = sy
    H, g, gamma = context_stats(y, s)
    H0, g0, gamma0 = loop_context_stats(y, s)
    scale = 1 + np.max(y ** 2)
    np.testing.assert_allclose(H, H0, rtol=0, atol=1e-12 * scale)
    np.testing.assert_allclose(g, g0, rtol=0, atol=1e-12 * scale)
    assert abs(gamma - gamma0) <= 1e-12 * scale
    np.testing.assert_array_equal(H, H.T)


@given(sy=window_and_y(), w=st.lists(finite, min_size=5, max_size=5))
def test_ar_loss_and_grad(sy, w):
    s, y = sy
    w = np.array(w[:s])
    n = len(y) - s - 1
    loop = sum((y[t + s] - sum(w[k] * y[t + k] for k in range(s))) ** 2 for t in range(n)) / (2 * n)
    scale = 1 + np.sum(y ** 2) * (1 + np.sum(w ** 2))
    assert abs(ar_loss(w, y, s) - loop) <= 1e-12 * scale
    H, g, gamma = context_stats(y, s)
    assert abs(ar_loss(w, y, s) - (0.5 * w @ H @ w - g @ w + 0.5 * gamma)) <= 1e-12 * scale
    grad = ar_grad(w, y, s)
    np.testing.assert_allclose(grad, H @ w - g, rtol=0, atol=1e-12 * scale)
    # central differences are exact for a quadratic up to rounding
    h = 1e-3
    fd = np.array([(ar_loss(w + h * e, y, s) - ar_loss(w - h * e, y, s)) / (2 * h) for e in np.eye(s)])
    np.testing.assert_allclose(grad, fd, rtol=0, atol=1e-12 * scale / h)
    np.testing.assert_allclose(-ar_grad(np.zeros(s), y, s), g, atol=1e-12 * scale)


def test_ar_loss_batched():
    y = np.random.default_rng(1).standard_normal((4, 12))
    w = np.random.default_rng(2).standard_normal((4, 3))
    out = ar_loss(w, y, 3)
    assert out.shape == (4,)
    for k in range(4):
        assert out[k] == pytest.approx(ar_loss(w[k], y[k], 3), rel=1e-13)
    g = ar_grad(w, y, 3)
    assert g.shape == (4, 3)


# ----------------------------------------------------------------------- GD and OLS


@given(sy=window_and_y(), eta=st.floats(-2, 2))
def test_gd_one_step_from_zero_is_eta_g(sy, eta):
    s, y = sy
    _, g, _ = context_stats(y, s)
    np.testing.assert_allclose(gd(y, s, eta), eta * g, rtol=1e-14, atol=1e-300)


def test_gd_several_steps_equal_loop():
    y = np.random.default_rng(3).standard_normal(15)
    s, eta = 3, 0.3
    H, g, _ = context_stats(y, s)
    w = np.full(s, 0.5)
    w0 = w.copy()
    for _ in range(4):
        w = w - eta * (H @ w - g)
    np.testing.assert_allclose(gd(y, s, eta, steps=4, w0=w0), w, rtol=1e-13)
    # eta broadcasts over a batch
    yb = np.stack([y, 2 * y])
    out = gd(yb, s, np.array([0.1, 0.2]))
    np.testing.assert_allclose(out[0], 0.1 * g)
    np.testing.assert_allclose(out[1], 0.2 * 4 * g)


def test_ar1_gd_prediction_formula():
    """One GD step with eta = kappa from 0 predicts (kappa/n) y_{T-1} sum_t y_t y_{t+1}."""
    y = np.random.default_rng(4).standard_normal(30)
    kappa, n = 0.2, 28
    S = sum(y[t] * y[t + 1] for t in range(n))
    assert predict_ar(gd(y, 1, kappa), y, 1) == pytest.approx(kappa / n * y[-2] * S, rel=1e-13)


@given(sy=window_and_y(s_max=4), ridge=st.sampled_from([0.0, 0.5]))
def test_ols_solves_normal_equations(sy, ridge):
    s, y = sy
    H, g, _ = context_stats(y, s)
    assume(np.linalg.cond(H + ridge * np.eye(s)) <= 1e8)   # degenerate context: draw another
    w = ols_ar(y, s, ridge=ridge)
    np.testing.assert_allclose((H + ridge * np.eye(s)) @ w, g, rtol=0,
                               atol=1e-8 * (1 + np.abs(g).max() + np.abs(H).max() * np.abs(w).max()))
    if ridge == 0:
        n = len(y) - s - 1
        X = np.array([[y[t + k] for k in range(s)] for t in range(n)])
        ref, *_ = np.linalg.lstsq(X, y[s:s + n], rcond=None)
        np.testing.assert_allclose(w, ref, rtol=1e-6, atol=1e-6 * (1 + np.abs(ref).max()))


def test_ols_recovers_a_noiseless_ar_process():
    coef = np.array([0.5, -0.3])                 # y_{t+2} = 0.5 y_t - 0.3 y_{t+1}
    y = [1.0, -0.7]
    rng = np.random.default_rng(0)
    for _ in range(20):
        y.append(coef[0] * y[-2] + coef[1] * y[-1] + 0 * rng.standard_normal())
    y = np.array(y)
    np.testing.assert_allclose(ols_ar(y, 2), coef, rtol=1e-8)
    assert predict_ar(ols_ar(y, 2), y, 2) == pytest.approx(y[-1], rel=1e-8)


# ---------------------------------------------------------------------------- PCG


def spd_from(rng, s, lo=0.5, hi=5.0):
    Q, _ = np.linalg.qr(rng.standard_normal((s, s)))
    return (Q * rng.uniform(lo, hi, s)) @ Q.T


def scipy_cg_iterates(H, g, k, M=None, x0=None):
    xs = []
    spla.cg(H, g, x0=x0, rtol=0.0, atol=0.0, maxiter=k, M=M, callback=lambda x: xs.append(x.copy()))
    return np.array(xs)


@settings(max_examples=30)
@given(s=st.integers(1, 6), seed=st.integers(0, 2**32 - 1))
def test_pcg_identity_preconditioner_equals_scipy_cg(s, seed):
    rng = np.random.default_rng(seed)
    H = spd_from(rng, s)
    g = rng.standard_normal(s)
    W = pcg(H, g, k=s)
    assert W.shape == (s + 1, s)
    np.testing.assert_array_equal(W[0], 0.0)
    ref = scipy_cg_iterates(H, g, s)
    np.testing.assert_allclose(W[1:], ref, rtol=1e-9, atol=1e-10 * np.abs(ref).max())
    # after s steps CG solves H w = g
    w = W[-1]
    assert np.linalg.norm(H @ w - g) <= 1e-10 * np.linalg.norm(g) * np.linalg.cond(H)
    np.testing.assert_allclose(w, np.linalg.solve(H, g), rtol=1e-8, atol=1e-10)


@settings(max_examples=20)
@given(s=st.integers(1, 6), seed=st.integers(0, 2**32 - 1))
def test_pcg_symmetric_preconditioner_equals_scipy_preconditioned_cg(s, seed):
    rng = np.random.default_rng(seed)
    H, P = spd_from(rng, s), spd_from(rng, s, 0.2, 2.0)
    g = rng.standard_normal(s)
    x0 = rng.standard_normal(s)
    W = pcg(H, g, P=P, k=s, w0=x0)
    np.testing.assert_array_equal(W[0], x0)
    ref = scipy_cg_iterates(H, g, s, M=P, x0=x0.copy())
    np.testing.assert_allclose(W[1:], ref, rtol=1e-8, atol=1e-9 * (1 + np.abs(ref).max()))
    np.testing.assert_allclose(W[-1], np.linalg.solve(H, g), rtol=1e-7, atol=1e-9)


@settings(max_examples=30)
@given(s=st.integers(3, 6), seed=st.integers(0, 2**32 - 1))
def test_two_pcg_steps_lie_in_span_Pg_PHPg(s, seed):
    """Paper eq. 18, for a non-symmetric preconditioner."""
    rng = np.random.default_rng(seed)
    H = spd_from(rng, s)
    P = rng.standard_normal((s, s)) + 2 * np.eye(s)
    assert not np.allclose(P, P.T)
    g = rng.standard_normal(s)
    w2 = pcg(H, g, P=P, k=2)[2]
    B = np.stack([P @ g, P @ H @ P @ g], axis=1)
    tau, *_ = np.linalg.lstsq(B, w2, rcond=None)
    assert np.linalg.norm(B @ tau - w2) <= 1e-9 * (1 + np.linalg.norm(w2))
    # and not trivially: a generic vector is not in that span
    assert np.linalg.norm(B @ np.linalg.lstsq(B, g, rcond=None)[0] - g) > 1e-6
    # one step is alpha P g
    w1 = pcg(H, g, P=P, k=1)[1]
    r0 = g
    alpha = (r0 @ P @ r0) / ((P @ g) @ H @ (P @ g))
    np.testing.assert_allclose(w1, alpha * P @ g, rtol=1e-12, atol=1e-14)


def test_pcg_batched_and_converged():
    rng = np.random.default_rng(5)
    Hs = np.stack([spd_from(rng, 3) for _ in range(4)])
    gs = rng.standard_normal((4, 3))
    W = pcg(Hs, gs, k=3)
    assert W.shape == (4, 4, 3)
    for b in range(4):
        np.testing.assert_allclose(W[:, b], pcg(Hs[b], gs[b], k=3), rtol=1e-12, atol=1e-14)
    # a zero right-hand side is already converged: every iterate stays at 0
    np.testing.assert_array_equal(pcg(Hs[0], np.zeros(3), k=3), 0.0)
    # extra steps after convergence keep w (no NaN)
    W = pcg(np.eye(2), np.array([1.0, 2.0]), k=4)
    np.testing.assert_allclose(W[1:], np.broadcast_to([1.0, 2.0], (4, 2)))


def test_pcg_on_ar_statistics_solves_ols():
    y = np.random.default_rng(6).standard_normal(40)
    s = 4
    H, g, _ = context_stats(y, s)
    np.testing.assert_allclose(pcg(H, g, k=s)[-1], ols_ar(y, s), rtol=1e-8)


# ------------------------------------------------------------------- AR(1) optimum


@pytest.mark.parametrize("family", ["value", "key"])
def test_ar1_optimal_weights_shapes(family):
    W_V, W_QK = ar1_optimal_weights(0.25, family)
    assert W_V.shape == W_QK.shape == (2, 2) and W_V.dtype == np.float64
    b = W_V[1]
    # beta_rl = b_r W[l, 0]: b1 W11 = 0, b2 W21 = 0, b2 W11 + b1 W21 = kappa
    assert b[0] * W_QK[0, 0] == 0 and b[1] * W_QK[1, 0] == 0
    assert b[1] * W_QK[0, 0] + b[0] * W_QK[1, 0] == 0.25


def test_shape_messages_state_the_expected_shape():
    """The messages name the parameter and the shape it must have (docs: every public
    function rejects bad input with one ValueError naming the parameter)."""
    y = np.arange(1.0, 9.0)
    with pytest.raises(ValueError, match=r"^W_V must have trailing shape \(3, 3\), got \(2, 2\)$"):
        attention_ar_weights(np.eye(2), np.eye(3), y, 2)
    with pytest.raises(ValueError, match=r"^W_QK must have trailing shape \(3, 3\), got \(3, 2\)$"):
        attention_ar_weights(np.eye(3), np.ones((3, 2)), y, 2)
    H = np.stack([np.eye(2), 2 * np.eye(2)])
    with pytest.raises(ValueError, match=r"^w0 must broadcast to \(2, 2\), got shape \(3, 2\)$"):
        pcg(H, np.ones((2, 2)), w0=np.zeros((3, 2)))


def test_eq17_weights_take_a_batch_of_layers_and_contexts():
    """attention_ar_weights on (k, s+1, s+1) weights and (k, T) sequences is the k single
    calls stacked (the claims evaluate many trained layers at once)."""
    from theory.ar import attention_ar_weights
    rng = np.random.default_rng(5)
    s, T, k = 2, 9, 4
    W_V, W_QK, y = rng.normal(size=(k, s + 1, s + 1)), rng.normal(size=(k, s + 1, s + 1)), rng.normal(size=(k, T))
    batched = attention_ar_weights(W_V, W_QK, y, s)
    assert batched.shape == (k, s)
    for i in range(k):
        np.testing.assert_allclose(batched[i], attention_ar_weights(W_V[i], W_QK[i], y[i], s), rtol=1e-13, atol=1e-15)
    with pytest.raises(ValueError, match="W_QK must have trailing shape"):
        attention_ar_weights(W_V, W_QK[:, :, :s], y, s)
