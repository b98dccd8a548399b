"""theory.construction: Richardson iteration loaded as the weights of the stacks' own forward pass.

Oracles: the model's forward pass (models.attention.StackedAttention, the module the
trained stacks use), theory.ar.gd (plain gradient descent, another loop), preconditioned CG
(theory.ar.pcg), whose first iterate is one Richardson step with the CG step size
g^T P g / (Pg)^T H (Pg), and in-context least squares (the limit of many contracting
steps).  Controls: a slipped step size, and the trained stacks' readout sign.  The readout
sign's statements (docs/math.md section 7.2: which step sizes let it move into W_V) are
checked through the stack and against exact (sympy, Sturm) real-root counts.
"""
from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
import torch
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from models.attention import StackedAttention
from models.construction import construction_prediction
from theory.ar import context_stats, gd, pcg, predict_ar, query_features
from theory.construction import (READOUT_SIGN, plus_readout_steps, richardson_iterates,
                                 richardson_prediction, richardson_weights)


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


def test_the_sign_moves_into_W_V_for_one_step_but_not_by_flipping_two_equal_steps():
    """One step: W_V = +eta e_s e_s^T read out as +[Y_1] is the one-step prediction.  Two equal
    steps: no signs of the W_V entries +-eta give the two-step prediction with the trained
    readout (other step sizes do: the next test)."""
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


def _plus_readout(y, s, b, P=None) -> np.ndarray:
    """+[Y_L]_(s, n), the trained stacks' readout, of the construction with steps b (W_V^j = -b_j e_s e_s^T)."""
    W_V, W_QK = richardson_weights(s, len(b), b, P)
    stack = StackedAttention.from_weights(W_V, W_QK, dtype=torch.float64)
    with torch.no_grad():
        return stack.predict(torch.tensor(y)).numpy()


def _real_root_count(eta) -> int:
    """Real roots (with multiplicity, exact: Sturm) of 2 z^L - prod_j (z - eta_j) for rational eta."""
    z = sp.Symbol("z")
    return len(sp.real_roots(sp.Poly(2 * z ** len(eta) - sp.prod([z - e for e in eta]), z)))


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2 ** 32 - 1), s=st.integers(1, 4), extra=st.integers(2, 30),
       e1=st.floats(0.01, 1.5), e2=st.floats(0.01, 1.5),
       signs=st.sampled_from([(1, 1), (-1, -1), (1, -1)]))
@example(seed=5, s=2, extra=27, e1=0.4, e2=0.4, signs=(1, 1))    # equal steps: b = (-(1 + sqrt 2), sqrt 2 - 1) eta
@example(seed=1, s=1, extra=5, e1=1.0, e2=0.01, signs=(1, 1))
@example(seed=2, s=3, extra=9, e1=0.5, e2=0.05, signs=(1, -1))    # opposite signs outside the forbidden band
def test_two_steps_move_the_sign_into_W_V_with_the_roots_of_the_quadratic(seed, s, extra, e1, e2, signs):
    """Two steps eta_1, eta_2 are the stack read out as +[Y_2] with the steps
    b = (-(eta_1 + eta_2) -+ sqrt(eta_1^2 + 6 eta_1 eta_2 + eta_2^2)) / 2, the roots of
    z^2 + (eta_1 + eta_2) z - eta_1 eta_2 (theory/construction.py, (*)), i.e. W_V entries
    c_j = -b_j; 1e-12 relative (float64), non-symmetric P.  Control: the same steps with the
    construction's own readout -[Y_2] give the negative."""
    rng, y, P = _draw(seed, s, s + 1 + extra)
    lam = float(np.max(np.linalg.eigvalsh(context_stats(y, s)[0])))
    eta = np.array([signs[0] * e1, signs[1] * e2]) / lam
    disc = eta[0] ** 2 + 6 * eta[0] * eta[1] + eta[1] ** 2
    assume(disc > 1e-6 / lam ** 2)                           # always for steps of one sign
    b = np.array([-(eta[0] + eta[1]) - np.sqrt(disc), -(eta[0] + eta[1]) + np.sqrt(disc)]) / 2
    target = richardson_prediction(y, s, 2, eta, P)
    assume(np.max(np.abs(target)) > 1e-8)
    assert _rel(_plus_readout(y, s, b, P), target) < 1e-12
    assert np.allclose(plus_readout_steps(eta), b, rtol=1e-9, atol=1e-12 * np.max(np.abs(b)))
    if eta[0] * eta[1] > 0:                                  # steps of one sign: b of opposite signs
        assert b[0] < 0 < b[1]
    assert _rel(READOUT_SIGN * _plus_readout(y, s, b, P), -target) < 1e-12


def test_two_steps_in_the_forbidden_band_have_no_real_weights():
    """eta_2 / eta_1 strictly between -3 - 2 sqrt 2 and -3 + 2 sqrt 2: the quadratic's roots are
    non-real (its discriminant eta_1^2 + 6 eta_1 eta_2 + eta_2^2 < 0), exact and in float."""
    assert sp.solve(sp.Symbol("r") ** 2 + 6 * sp.Symbol("r") + 1) == [-3 - 2 * sp.sqrt(2), -3 + 2 * sp.sqrt(2)]
    for eta in ([1, -1], [1, sp.Rational(-1, 5)], [1, -5]):
        assert _real_root_count(eta) == 0
        with pytest.raises(ValueError, match="non-real"):
            plus_readout_steps([float(e) for e in eta])


def test_equal_steps_cannot_move_the_sign_from_three_steps_on():
    """Equal steps: 2 z^L - (z - eta)^L has 1 (L odd) or 2 (L even) real roots out of L (exact
    Sturm count, eta = 1 without loss: z -> eta z), so the readout sign moves into real W_V
    for L = 1, 2 only; the L - 1 or L - 2 others are eta / (1 - 2^(1/L) omega) at the non-real
    L-th roots of unity omega."""
    for L in range(1, 9):
        assert _real_root_count([1] * L) == (1 if L % 2 else 2), L
        roots = np.roots(np.poly1d([2] + [0] * L) - np.poly1d(np.poly(np.ones(L))))
        omegas = np.exp(2j * np.pi * np.arange(L) / L)
        formula = 1 / (1 - 2 ** (1 / L) * omegas)
        assert np.max(np.min(np.abs(roots[:, None] - formula[None, :]), axis=1)) < 1e-9
        assert np.max(np.min(np.abs(formula[:, None] - roots[None, :]), axis=1)) < 1e-9
        assert np.sum(np.abs(formula.imag) > 1e-9) == L - (1 if L % 2 else 2)
        if L >= 3:
            with pytest.raises(ValueError, match="non-real"):
                plus_readout_steps(np.full(L, 0.3))
        else:
            plus_readout_steps(np.full(L, 0.3))


@settings(max_examples=40, deadline=None)
@given(L=st.integers(3, 8), sign=st.sampled_from([-1, 1]),
       data=st.data())
def test_steps_within_a_factor_two_cannot_move_the_sign_from_three_steps_on(L, sign, data):
    """Steps of one sign with max / min <= 2 (the depth claim's [0.8, 1] x eta included): fewer
    than L real roots of (*), exact (rational steps, Sturm count): the module doc's argument."""
    k = data.draw(st.lists(st.integers(500, 1000), min_size=L, max_size=L))
    eta = [sign * sp.Rational(kj, 1000) for kj in k]
    assert _real_root_count(eta) < L
    with pytest.raises(ValueError, match="non-real"):
        plus_readout_steps([float(e) for e in eta])


@pytest.mark.parametrize("shape", [(1, 0.1, 0.01), (1, 1, 0.1), (1, 0.1, 0.01, 0.001)])
def test_widely_spread_steps_can_move_the_sign_at_three_steps_and_more(shape):
    """Control for the two tests above: depth alone is not the obstruction.  Steps spread wide
    enough give L real roots of (*), and the stack read out as +[Y_L] with them is L steps."""
    rng = np.random.default_rng(13)
    y = rng.standard_normal((6, 30))
    s = 2
    P = rng.standard_normal((s, s))
    eta = 0.5 / float(np.max(np.linalg.eigvalsh(context_stats(y, s)[0]))) * np.array(shape)
    assert _real_root_count([sp.Rational(str(v)) for v in shape]) == len(shape)
    b = plus_readout_steps(eta)
    assert _rel(_plus_readout(y, s, b, P), richardson_prediction(y, s, len(shape), eta, P)) < 1e-12


@pytest.mark.parametrize("kwargs, name", [
    ({"s": 0, "steps": 1, "eta": 0.1}, "s"), ({"s": 2, "steps": 0, "eta": 0.1}, "steps"),
    ({"s": 2, "steps": 2, "eta": [0.1, 0.2, 0.3]}, "eta"), ({"s": 2, "steps": 1, "eta": float("nan")}, "eta"),
    ({"s": 2, "steps": 1, "eta": 0.1, "P": np.eye(3)}, "P"),
])
def test_bad_input_names_the_parameter(kwargs, name):
    with pytest.raises(ValueError, match=name):
        richardson_weights(**kwargs)


@pytest.mark.parametrize("eta", [[], [0.1, float("nan")], [[0.1, 0.2]]])
def test_plus_readout_steps_rejects_bad_step_sizes(eta):
    with pytest.raises(ValueError, match="eta"):
        plus_readout_steps(eta)
