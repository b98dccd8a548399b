"""theory.construction: Richardson iteration loaded as the weights of the stacks' own forward pass.

Oracles: the model's forward pass (models.attention.StackedAttention, the module the
trained stacks use), theory.ar.gd (plain gradient descent, another loop), preconditioned CG
(theory.ar.pcg), whose first iterate is one Richardson step with the CG step size
g^T P g / (Pg)^T H (Pg), and in-context least squares (the limit of many contracting
steps).  Controls: a slipped step size, and the trained stacks' readout sign.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from models.attention import StackedAttention
from models.construction import construction_prediction
from theory.ar import context_stats, gd, pcg, predict_ar, query_features
from theory.construction import (READOUT_SIGN, richardson_iterates, richardson_prediction,
                                 richardson_weights)


def _stack_prediction(y, s, steps, eta, P=None) -> np.ndarray:
    return construction_prediction(y, s, steps, eta, P)


def _draw(seed, s, T, m=16):
    rng = np.random.default_rng(seed)
    y = rng.standard_normal((m, T)) * rng.choice([0.1, 1.0, 3.0])
    P = rng.standard_normal((s, s))                         # any square P: the identity holds for all
    return rng, y, P


def _rel(a, b) -> float:
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2 ** 32 - 1), s=st.integers(1, 4), extra=st.integers(2, 30),
       steps=st.integers(1, 6), scale=st.floats(0.05, 1.5))
def test_the_stack_loaded_with_the_construction_runs_richardson(seed, s, extra, steps, scale):
    """The forward pass equals k preconditioned Richardson steps computed directly (float64,
    1e-10 relative), per-step step sizes and a non-symmetric P included."""
    rng, y, P = _draw(seed, s, s + 1 + extra)
    H, _, _ = context_stats(y, s)
    lam = float(np.max(np.linalg.eigvalsh(H)))
    etas = scale / lam * rng.uniform(0.5, 1.0, steps)
    direct = richardson_prediction(y, s, steps, etas, P)
    assume(np.max(np.abs(direct)) > 1e-8)
    assert _rel(_stack_prediction(y, s, steps, etas, P), direct) < 1e-10
    # control on the same draw: the direct route with a 10 % slip in one step size is told apart
    slipped = etas.copy()
    slipped[-1] *= 1.1
    assert _rel(_stack_prediction(y, s, steps, etas, P), richardson_prediction(y, s, steps, slipped, P)) > 1e-6


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2 ** 32 - 1), s=st.integers(1, 4), extra=st.integers(2, 30), steps=st.integers(1, 8))
def test_without_a_preconditioner_it_is_gradient_descent(seed, s, extra, steps):
    _, y, _ = _draw(seed, s, s + 1 + extra)
    eta = 0.7 / float(np.max(np.linalg.eigvalsh(context_stats(y, s)[0])))
    w = richardson_iterates(y, s, steps, eta)
    assert np.allclose(w, gd(y, s, eta, steps), rtol=1e-12, atol=1e-14)
    assert np.allclose(richardson_prediction(y, s, steps, eta), predict_ar(w, y, s), rtol=1e-12, atol=1e-14)


def test_one_step_with_the_cg_step_size_is_the_first_pcg_iterate():
    """PCG's first iterate from 0 is alpha_0 P g with alpha_0 = g^T P g / (Pg)^T H (Pg): one
    Richardson step with that (per-sequence) step size (theory.ar.pcg, a third route)."""
    rng = np.random.default_rng(7)
    y = rng.standard_normal(40)
    s = 3
    H, g, _ = context_stats(y, s)
    P = rng.standard_normal((s, s))
    Pg = P @ g
    alpha = (g @ Pg) / (Pg @ H @ Pg)
    assert np.allclose(richardson_iterates(y, s, 1, alpha, P), pcg(H, g, P, k=1)[1], rtol=1e-12)
    assert np.allclose(_stack_prediction(y[None], s, 1, alpha, P), pcg(H, g, P, k=1)[1] @ query_features(y, s),
                       rtol=1e-10)


def test_many_steps_converge_to_least_squares_on_a_well_conditioned_context():
    """With a step below 2 / lambda_max(H) the iteration contracts to the in-context least
    squares solution H^-1 g (the depth construction's limit), here within 1e-9 in 400 steps."""
    rng = np.random.default_rng(3)
    y = rng.standard_normal((8, 200))
    s = 2
    H, g, _ = context_stats(y, s)
    eta = 1.0 / np.max(np.linalg.eigvalsh(H))
    ls = np.linalg.solve(H, g[..., None])[..., 0]
    assert np.allclose(richardson_iterates(y, s, 400, eta), ls, rtol=1e-9, atol=1e-12)
    assert _rel(_stack_prediction(y, s, 400, eta), predict_ar(ls, y, s)) < 1e-8


def test_the_readout_sign_is_needed():
    """Control: read out as the trained stacks do (+[Y_L]), the construction predicts the negative."""
    rng = np.random.default_rng(11)
    y = rng.standard_normal((4, 25))
    direct = richardson_prediction(y, 2, 3, 0.3)
    raw = READOUT_SIGN * _stack_prediction(y, 2, 3, 0.3)          # +[Y_L]_(s, n), the trained readout
    assert np.allclose(raw, -direct, rtol=1e-10) and _rel(raw, direct) > 1.0


def test_the_sign_moves_into_W_V_for_one_step_but_not_for_two():
    """One step: W_V = +eta e_s e_s^T read out as +[Y_1] is the one-step prediction.  Two steps:
    no signs of the two W_V entries give the two-step prediction with the trained readout."""
    rng = np.random.default_rng(5)
    y = rng.standard_normal((6, 30))
    s, eta = 2, 0.4
    W_V, W_QK = richardson_weights(s, 1, -eta)                  # W_V[0, s, s] = +eta
    plus = StackedAttention.from_weights(W_V, W_QK, dtype=torch.float64)
    with torch.no_grad():
        assert _rel(plus.predict(torch.tensor(y)).numpy(), richardson_prediction(y, s, 1, eta)) < 1e-12
    target = richardson_prediction(y, s, 2, eta)
    for signs in ((1, 1), (1, -1), (-1, 1), (-1, -1)):
        W_V, W_QK = richardson_weights(s, 2, [signs[0] * eta, signs[1] * eta])
        stack = StackedAttention.from_weights(W_V, W_QK, dtype=torch.float64)
        with torch.no_grad():
            assert _rel(stack.predict(torch.tensor(y)).numpy(), target) > 1e-3, signs


@pytest.mark.parametrize("kwargs, name", [
    ({"s": 0, "steps": 1, "eta": 0.1}, "s"), ({"s": 2, "steps": 0, "eta": 0.1}, "steps"),
    ({"s": 2, "steps": 2, "eta": [0.1, 0.2, 0.3]}, "eta"), ({"s": 2, "steps": 1, "eta": float("nan")}, "eta"),
    ({"s": 2, "steps": 1, "eta": 0.1, "P": np.eye(3)}, "P"),
])
def test_bad_input_names_the_parameter(kwargs, name):
    with pytest.raises(ValueError, match=name):
        richardson_weights(**kwargs)
