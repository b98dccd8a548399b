"""theory.alignment: eq. 17's terms and the candidate cosines.

Oracles: the layer's own forward pass (models.attention, float64) for eq. 17; the
gauge (b, W) -> (g b, W / g) for the invariance of the cosines; s = 1, where every
direction is a multiple of g; for each candidate cosine, a hand computation of a small
s = 2 case (loops over the context, two PCG steps written out) where the candidates and
the one- and two-step PCG iterates differ.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

from models.attention import LinearSelfAttention
from theory.alignment import (
    COSINES,
    alignment_cosines,
    eq17_terms,
    fix_sign,
    layer_parts,
)
from theory.ar import attention_ar_weights, query_features
from theory.systems import LDSFamily


def _weights(rng, s, scale=1.0):
    return rng.standard_normal((s + 1, s + 1)) * scale, rng.standard_normal((s + 1, s + 1)) * scale


def _sequences(rng, s, m=20, T=None):
    return LDSFamily("a", T=T or s + 20).sample(rng, m)[1]


@settings(max_examples=25, deadline=None)
@given(s=st.integers(1, 5), seed=st.integers(0, 2 ** 32 - 1))
def test_eq17_terms_sum_to_the_forward_pass(s, seed):
    rng = np.random.default_rng(seed)
    W_V, W_QK = _weights(rng, s)
    y = _sequences(rng, s)
    t = eq17_terms(W_V, W_QK, y, s)
    w = t["first"] + t["second"] + t["third"]
    np.testing.assert_allclose(w, attention_ar_weights(W_V, W_QK, y, s), rtol=1e-12, atol=1e-12)
    layer = LinearSelfAttention.from_weights(W_V, W_QK, dtype=torch.float64)
    with torch.no_grad():
        ref = layer.predict(torch.from_numpy(y)).numpy()
    pred = np.einsum("ni,ni->n", w, query_features(y, s))
    np.testing.assert_allclose(pred, ref, rtol=1e-11, atol=1e-12 * np.abs(ref).max())


@settings(max_examples=25, deadline=None)
@given(s=st.integers(2, 5), gauge=st.floats(0.1, 10.0), negative=st.booleans(),
       seed=st.integers(0, 2 ** 32 - 1))
def test_cosines_are_gauge_invariant(s, gauge, negative, seed):
    rng = np.random.default_rng(seed)
    W_V, W_QK = _weights(rng, s)
    y = _sequences(rng, s)
    g = -gauge if negative else gauge
    a = alignment_cosines(W_V, W_QK, y, s)
    b = alignment_cosines(W_V * g, W_QK / g, y, s)
    for name in COSINES:
        np.testing.assert_allclose(a[name], b[name], rtol=1e-9, atol=1e-9)


def test_cos3_changes_sign_without_the_gauge_fix():
    rng = np.random.default_rng(3)
    s = 3
    W_V, W_QK = _weights(rng, s)
    y = _sequences(rng, s)
    V1, Q1 = fix_sign(W_V, W_QK, s)
    assert np.trace(Q1[:s, :s]) >= 0
    t1 = eq17_terms(V1, Q1, y, s)
    t2 = eq17_terms(-V1, -Q1, y, s)
    r1 = t1["g"] - np.einsum("nij,nj->ni", t1["H"], t1["first"] + t1["second"])
    c1 = np.einsum("ni,ni->n", t1["third"], r1 @ t1["P"].T)
    c2 = np.einsum("ni,ni->n", t2["third"], r1 @ t2["P"].T)
    np.testing.assert_allclose(c1, -c2, rtol=1e-12)


def test_ar1_directions_are_parallel():
    rng = np.random.default_rng(1)
    W_V, W_QK = _weights(rng, 1)
    y = _sequences(rng, 1)
    c = alignment_cosines(W_V, W_QK, y, 1)
    np.testing.assert_allclose(np.abs(c["cos_1"]), 1.0, rtol=1e-12)
    np.testing.assert_allclose(np.abs(c["cos_2"]), 1.0, rtol=1e-12)


def test_layer_parts_and_validation():
    W_V = np.arange(9.0).reshape(3, 3)
    W_QK = np.arange(9.0, 18.0).reshape(3, 3)
    q, by, P, p = layer_parts(W_V, W_QK, 2)
    assert q.tolist() == [6.0, 7.0] and by == 8.0
    assert P.tolist() == [[9.0, 12.0], [10.0, 13.0]] and p.tolist() == [15.0, 16.0]
    with pytest.raises(ValueError, match="^W_V must have shape"):
        layer_parts(np.zeros((2, 2)), W_QK, 2)
    with pytest.raises(ValueError, match="^W_QK must be finite"):
        layer_parts(W_V, np.full((3, 3), np.nan), 2)


# ------------------------------------------------------------- a hand computation, s = 2
def _hand_cosines(y, W_V, W_QK):
    """docs/math.md section 6, written out for s = 2 with loops and 2-vectors only: the
    context tokens x_t = (y_t, y_{t+1}) -> y_{t+2}, t = 1..n, n = T - 3; two PCG steps from
    0 in the Hestenes-Stiefel form of the paper's eq. 18."""
    n = len(y) - 3
    H, g, gamma = np.zeros((2, 2)), np.zeros(2), 0.0
    for t in range(n):
        x, target = np.array([y[t], y[t + 1]]), y[t + 2]
        H += np.outer(x, x) / n
        g += x * target / n
        gamma += target * target / n
    q, b_y = W_V[2, :2], W_V[2, 2]
    P, p = W_QK[:2, :2].T, W_QK[2, :2]

    def cos(u, v):
        return float(u @ v / np.sqrt((u @ u) * (v @ v)))

    first = P @ H @ q
    xi_2 = q @ g + b_y * gamma
    w_attn = first + b_y * (P @ g) + xi_2 * p
    r0 = g
    u0 = P @ r0
    d0 = u0
    a0 = (r0 @ u0) / (d0 @ H @ d0)
    w1 = a0 * d0
    r1 = r0 - a0 * (H @ d0)
    u1 = P @ r1
    d1 = u1 + (r1 @ u1) / (r0 @ u0) * d0
    w2 = w1 + (r1 @ u1) / (d1 @ H @ d1) * d1
    residual = g - H @ (first + b_y * (P @ g))
    return {"cos_1": cos(first, P @ H @ P @ g), "cos_2": cos(w_attn, w2),
            "cos_3": cos(xi_2 * p, P @ residual), "cos_2_one_step": cos(w_attn, w1)}


def test_cosines_against_a_hand_computation_where_one_and_two_steps_differ():
    y = np.array([1.0, 2.0, -1.0, 0.5, 1.5, -2.0, 0.75, 0.25])
    W_V = np.array([[9.0, 9.0, 9.0], [9.0, 9.0, 9.0], [0.3, -0.2, 0.7]])   # rows 0, 1 unused
    W_QK = np.array([[3.0, 0.5, 9.0], [0.25, 0.5, 9.0], [0.4, -0.3, 9.0]])  # column 2 meets z_q's 0
    hand = _hand_cosines(y, W_V, W_QK)
    got = alignment_cosines(W_V, W_QK, y, 2)
    for name in COSINES:
        assert float(got[name]) == pytest.approx(hand[name], rel=1e-12, abs=1e-12), name
    # the case separates the candidates and the PCG step count (a one-step slip shows)
    assert abs(hand["cos_2"] - hand["cos_2_one_step"]) > 0.05
    assert len({round(hand[name], 3) for name in COSINES}) == 3
    assert all(abs(hand[name]) < 0.999 for name in COSINES)
