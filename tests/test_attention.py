"""models.attention: the linear self-attention layer, its tokens and its effective form.

Oracles: an explicit-sum implementation of T_theta(Y) = Y + (1/n) W_V Y M Y^T W_QK Y
(no matmul), the effective form b^T C W_QK z_q, the AR weights of paper eq. 17
(theory.ar.attention_ar_weights, numpy), and numpy's token matrix.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from _oracles import loop_lsa_forward, loop_tokens
from models.attention import LinearSelfAttention, build_tokens
from theory.ar import ar1_optimal_weights, attention_ar_weights, predict_ar, token_matrix

finite = st.floats(-3, 3, allow_nan=False, allow_infinity=False)


def effective_prediction(b: torch.Tensor, C: torch.Tensor, W_QK: torch.Tensor,
                         zq: torch.Tensor) -> torch.Tensor:
    """Oracle: b^T C W_QK z_q for a batch: C (B, s+1, s+1), zq (B, s+1) -> (B,) (one einsum)."""
    for name, t in (("b", b), ("C", C), ("W_QK", W_QK), ("zq", zq)):
        if not isinstance(t, torch.Tensor):
            raise ValueError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
    k = b.shape[0] if b.ndim == 1 else -1
    if b.ndim != 1 or k < 2:
        raise ValueError(f"b must have shape (s+1,) with s >= 1, got {tuple(b.shape)}")
    if W_QK.shape != (k, k):
        raise ValueError(f"W_QK must have shape {(k, k)}, got {tuple(W_QK.shape)}")
    if C.ndim != 3 or C.shape[1:] != (k, k):
        raise ValueError(f"C must have shape (B, {k}, {k}), got {tuple(C.shape)}")
    if zq.shape != (C.shape[0], k):
        raise ValueError(f"zq must have shape {(C.shape[0], k)}, got {tuple(zq.shape)}")
    return torch.einsum("i,bij,jk,bk->b", b, C, W_QK, zq)


@pytest.mark.parametrize("call, param", [
    (lambda: effective_prediction(torch.ones(2, 3), torch.ones(1, 3, 3), torch.eye(3), torch.ones(1, 3)), "b"),
    (lambda: effective_prediction(torch.ones(3), torch.ones(1, 2, 2), torch.eye(3), torch.ones(1, 3)), "C"),
    (lambda: effective_prediction(torch.ones(3), torch.ones(1, 3, 3), torch.eye(2), torch.ones(1, 3)), "W_QK"),
    (lambda: effective_prediction(torch.ones(3), torch.ones(2, 3, 3), torch.eye(3), torch.ones(1, 3)), "zq"),
    (lambda: effective_prediction(np.ones(3), torch.ones(1, 3, 3), torch.eye(3), torch.ones(1, 3)), "b"),
], ids=["b", "C", "W_QK", "zq", "numpy"])
def test_effective_prediction_oracle_rejects_bad_shapes(call, param):
    """The oracle refuses inputs it would silently broadcast."""
    with pytest.raises(ValueError, match=rf"^{param}\b"):
        call()


@st.composite
def layer_case(draw, s_max=5, T_max=20, B_max=3):
    s = draw(st.integers(1, s_max))
    T = draw(st.integers(s + 2, T_max))
    B = draw(st.integers(1, B_max))
    y = draw(hnp.arrays(np.float64, (B, T), elements=finite))
    W_V = draw(hnp.arrays(np.float64, (s + 1, s + 1), elements=finite))
    W_QK = draw(hnp.arrays(np.float64, (s + 1, s + 1), elements=finite))
    return s, y, W_V, W_QK


def tol(bound):
    """Rounding tolerance: 1e-12 relative to the sum of |terms| (computed by the loop)."""
    return 1e-12 * (bound + 1e-300)


# -------------------------------------------------------------------------- tokens


def test_worked_example_tokens_numpy_and_torch():
    expect = [[1, 2, 3, 4], [2, 3, 4, 5], [3, 4, 5, 0]]
    y = np.arange(1.0, 7.0)
    np.testing.assert_array_equal(token_matrix(y, 2), expect)
    Y0 = build_tokens(torch.tensor(y)[None], 2)
    assert Y0.shape == (1, 3, 4) and Y0.dtype == torch.float64
    np.testing.assert_array_equal(Y0[0].numpy(), expect)
    np.testing.assert_array_equal(loop_tokens(y, 2), expect)


@given(case=layer_case())
def test_build_tokens_equals_numpy_token_matrix(case):
    s, y, _, _ = case
    np.testing.assert_array_equal(build_tokens(torch.from_numpy(y), s).numpy(), token_matrix(y, s))


# ------------------------------------------------------------ forward pass, float64


@given(case=layer_case())
def test_forward_equals_loop_and_effective_form(case):
    s, y, W_V, W_QK = case
    layer = LinearSelfAttention.from_weights(W_V, W_QK)
    Y0 = build_tokens(torch.from_numpy(y), s)
    with torch.no_grad():
        out, pred = layer(Y0)
    assert out.shape == Y0.shape and pred.shape == (y.shape[0],)
    assert out.dtype == pred.dtype == torch.float64
    n = y.shape[1] - s - 1
    for b in range(y.shape[0]):
        Yl = loop_tokens(y[b], s)
        ref = loop_lsa_forward(Yl, W_V.tolist(), W_QK.tolist())
        bound = loop_lsa_forward(Yl, W_V.tolist(), W_QK.tolist(), absolute=True)
        assert np.all(np.abs(out[b].numpy() - ref) <= tol(bound))           # full output matrix
        assert abs(pred[b].item() - ref[s, n]) <= tol(bound[s, n])         # [T(Y0)]_{s+1, n+1}
    # effective form b^T C W_QK z_q
    Z = Y0[:, :, :n]
    C = Z @ Z.transpose(1, 2) / n
    eff = effective_prediction(torch.from_numpy(W_V[s]), C, torch.from_numpy(W_QK), Y0[:, :, n])
    for b in range(y.shape[0]):
        bound = loop_lsa_forward(loop_tokens(y[b], s), W_V.tolist(), W_QK.tolist(), absolute=True)[s, n]
        assert abs(eff[b].item() - pred[b].item()) <= tol(bound)
    # predict() is forward() on build_tokens()
    with torch.no_grad():
        np.testing.assert_array_equal(layer.predict(torch.from_numpy(y)).numpy(), pred.numpy())


@settings(max_examples=25)
@given(case=layer_case())
def test_eq17_ar_weights_reproduce_the_layer(case):
    """theory.ar.attention_ar_weights (paper eq. 17) gives the same y_hat_T, in numpy."""
    s, y, W_V, W_QK = case
    layer = LinearSelfAttention.from_weights(W_V, W_QK)
    with torch.no_grad():
        pred = layer.predict(torch.from_numpy(y)).numpy()
    w = attention_ar_weights(W_V, W_QK, y, s)
    assert w.shape == (y.shape[0], s)
    via_ar = predict_ar(w, y, s)
    for b in range(y.shape[0]):
        bound = loop_lsa_forward(loop_tokens(y[b], s), W_V.tolist(), W_QK.tolist(), absolute=True)[s, -1]
        assert abs(via_ar[b] - pred[b]) <= 1e-11 * (bound + 1e-300)


def test_only_last_row_of_WV_and_first_s_columns_of_WQK_act():
    rng = np.random.default_rng(0)
    s, y = 3, rng.standard_normal((4, 15))
    W_V, W_QK = rng.standard_normal((2, s + 1, s + 1))
    base = LinearSelfAttention.from_weights(W_V, W_QK).predict(torch.from_numpy(y)).detach()
    W_V2, W_QK2 = W_V.copy(), W_QK.copy()
    W_V2[:s] = rng.standard_normal((s, s + 1))
    W_QK2[:, s] = rng.standard_normal(s + 1)
    other = LinearSelfAttention.from_weights(W_V2, W_QK2).predict(torch.from_numpy(y)).detach()
    torch.testing.assert_close(other, base, rtol=1e-12, atol=1e-12)
    # gauge: (lambda b, W_QK / lambda) changes nothing
    W_V3, W_QK3 = W_V.copy(), W_QK / 2.5
    W_V3[s] *= 2.5
    gauge = LinearSelfAttention.from_weights(W_V3, W_QK3).predict(torch.from_numpy(y)).detach()
    torch.testing.assert_close(gauge, base, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("family", ["value", "key"])
def test_ar1_optimum_predicts_kappa_over_n_y_S(family):
    y = np.random.default_rng(1).standard_normal((3, 30))
    kappa, n = 0.2052454015138651, 28
    W_V, W_QK = ar1_optimal_weights(kappa, family)
    pred = LinearSelfAttention.from_weights(W_V, W_QK).predict(torch.from_numpy(y)).detach().numpy()
    for b in range(3):
        S = sum(y[b, t] * y[b, t + 1] for t in range(n))
        assert pred[b] == pytest.approx(kappa / n * y[b, -2] * S, rel=1e-12)


def test_gradients_match_finite_differences():
    """torch.autograd.gradcheck of the layer itself (float64): its analytic gradients, in
    the weights and in the tokens, against central finite differences of its own forward."""
    torch.manual_seed(0)
    layer = LinearSelfAttention(2, init_scale=0.5, dtype=torch.float64)
    Y0 = build_tokens(torch.randn(4, 9, dtype=torch.float64), 2)

    def through_layer(W_V, W_QK, Y):
        out, pred = torch.func.functional_call(layer, {"W_V": W_V, "W_QK": W_QK}, (Y,))
        return out, pred

    W_V = layer.W_V.detach().clone().requires_grad_()
    W_QK = layer.W_QK.detach().clone().requires_grad_()
    Y = Y0.clone().requires_grad_()
    assert torch.autograd.gradcheck(through_layer, (W_V, W_QK, Y))
    assert torch.autograd.gradgradcheck(lambda a, b: through_layer(a, b, Y0)[1], (W_V, W_QK))
    # the layer's own backward (its registered parameters) gives the same gradients as
    # the functional call, and both equal the closed form of the effective prediction:
    # y_hat = b^T C W_QK z_q  =>  d y_hat / d W_V[s, :] = C W_QK z_q,
    #                             d y_hat / d W_QK = (C b) z_q^T, other rows of W_V: 0.
    layer(Y0)[1].sum().backward()
    n = Y0.shape[2] - 1
    Z, zq = Y0[:, :, :n], Y0[:, :, n]
    C = Z @ Z.transpose(1, 2) / n
    b = layer.W_V.detach()[2]
    g_wv = torch.zeros(3, 3, dtype=torch.float64)
    g_wv[2] = torch.einsum("bij,jk,bk->i", C, layer.W_QK.detach(), zq)
    g_wqk = torch.einsum("bij,i,bk->jk", C, b, zq)
    torch.testing.assert_close(layer.W_V.grad, g_wv, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(layer.W_QK.grad, g_wqk, rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------- float32, device


def test_float32_runs_and_is_close():
    rng = np.random.default_rng(2)
    s, y = 3, rng.standard_normal((8, 20))
    W_V, W_QK = rng.standard_normal((2, s + 1, s + 1))
    l64 = LinearSelfAttention.from_weights(W_V, W_QK)
    l32 = LinearSelfAttention.from_weights(W_V, W_QK, dtype=torch.float32, device="cpu")
    assert l32.W_V.dtype == torch.float32 and l32.W_V.device.type == "cpu"
    with torch.no_grad():
        p64 = l64.predict(torch.from_numpy(y))
        out32, p32 = l32(build_tokens(torch.from_numpy(y).float(), s))
    assert p32.dtype == torch.float32
    torch.testing.assert_close(p32.double(), p64, rtol=1e-4, atol=1e-4 * p64.abs().max().item())
    w64, wqk64 = l32.weights()
    assert w64.dtype == np.float64
    np.testing.assert_allclose(w64, W_V, rtol=1e-6)


def test_constructor_init_and_device():
    g = torch.Generator().manual_seed(0)
    layer = LinearSelfAttention(2, init_scale=0.1, generator=g, device="cpu")
    assert layer.W_V.shape == layer.W_QK.shape == (3, 3)
    assert layer.W_V.dtype == torch.float32 and layer.W_V.requires_grad
    assert 0 < layer.W_V.detach().abs().max() < 1
    g2 = torch.Generator().manual_seed(0)
    again = LinearSelfAttention(2, init_scale=0.1, generator=g2, device=torch.device("cpu"))
    torch.testing.assert_close(again.W_V, layer.W_V)
    z = LinearSelfAttention(4, init="zeros", dtype=torch.float64)
    assert z.s == 4 and torch.count_nonzero(z.W_V) == 0 and torch.count_nonzero(z.W_QK) == 0
    # zero weights: T_theta is the identity and the prediction is the 0 of z_q
    Y0 = build_tokens(torch.randn(2, 10, dtype=torch.float64), 4)
    out, pred = z(Y0)
    torch.testing.assert_close(out, Y0)
    assert torch.all(pred == 0)
    assert [n for n, _ in layer.named_parameters()] == ["W_V", "W_QK"]


def test_from_weights_round_trip():
    rng = np.random.default_rng(3)
    W_V, W_QK = rng.standard_normal((2, 3, 3))
    layer = LinearSelfAttention.from_weights(torch.from_numpy(W_V), W_QK.tolist())
    a, b = layer.weights()
    np.testing.assert_array_equal(a, W_V)
    np.testing.assert_array_equal(b, W_QK)
    assert layer.s == 2 and layer.W_V.dtype == torch.float64


def test_from_weights_checks_finiteness_in_the_target_dtype():
    """1e300 is finite in float64 but not in float32: a float32 layer must refuse it."""
    with pytest.raises(ValueError, match="^W_V must be finite"):
        LinearSelfAttention.from_weights(np.full((2, 2), 1e300), np.eye(2), dtype=torch.float32)
    with pytest.raises(ValueError, match="^W_QK must be finite"):
        LinearSelfAttention.from_weights(np.eye(2), np.full((2, 2), 1e300), dtype=torch.float32)
    with pytest.raises(ValueError, match="^y must be a torch.Tensor, got ndarray$"):
        build_tokens(np.ones((2, 5)), 1)


@settings(max_examples=20, deadline=None)
@given(s=st.integers(1, 4), scale=st.floats(0.25, 4.0), seed=st.integers(0, 2 ** 31 - 1))
def test_prediction_is_linear_in_W_V(s, scale, seed):
    """The query token's y_T slot is 0, so y_hat(c W_V, W_QK) = c y_hat(W_V, W_QK): the
    run-vs-population control (claims/test_training_basins.py) scales the prediction instead
    of running the forward pass again.  Against the forward pass of the scaled weights."""
    rng = np.random.default_rng(seed)
    W_V, W_QK = rng.standard_normal((2, s + 1, s + 1))
    y = torch.tensor(rng.standard_normal((64, s + 8)))
    base = LinearSelfAttention.from_weights(W_V, W_QK, dtype=torch.float64).predict(y)
    scaled = LinearSelfAttention.from_weights(scale * W_V, W_QK, dtype=torch.float64).predict(y)
    np.testing.assert_allclose(scale * base.detach().numpy(), scaled.detach().numpy(), rtol=1e-12, atol=1e-12)
    assert float(build_tokens(y, s)[:, s, -1].abs().max()) == 0.0


def test_an_init_scale_that_can_overflow_the_dtype_is_refused():
    """Found by the fuzz tests' check of accepted values: init_scale = 1e308 gave non-finite
    initial weights for some draws.  Refused for every draw, by the bound (the dtype's
    largest value over 16, above any torch.randn draw), in the layer and in TrainConfig."""
    from models.attention import init_scale_limit
    from models.config import TrainConfig

    for dtype, name in ((torch.float64, "float64"), (torch.float32, "float32")):
        limit = init_scale_limit(dtype)
        assert torch.finfo(dtype).max / 17 < limit < torch.finfo(dtype).max / 15
        for init in ("normal", "zeros"):
            with pytest.raises(ValueError, match="^init_scale must be <= "):
                LinearSelfAttention(1, init=init, init_scale=limit * 1.01, dtype=dtype)
        with pytest.raises(ValueError, match="^init_scale must be <= "):
            TrainConfig(init_scale=limit * 1.01, dtype=name)
        gen = torch.Generator().manual_seed(0)
        big = LinearSelfAttention(4, init_scale=limit, dtype=dtype, generator=gen)
        assert torch.isfinite(big.W_V).all() and torch.isfinite(big.W_QK).all()
    # the largest normal draw torch can make in float64 times the bound stays finite
    assert 8.6 * init_scale_limit(torch.float64) < torch.finfo(torch.float64).max
