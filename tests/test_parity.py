"""theory.parity: feature parity, the classes b-even / b-odd and the banding metrics.

Oracles: the sign flip applied to actual sequences (features computed from the token
matrix of theory.ar, not from feature_list), the closed-form checkerboard of
docs/math.md section 5.3, hand-written masks for s = 2, the two AR(1) families of
docs/math.md section 4.2, and claims/_ar1.py's odd share for s = 1.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from theory.ar import ar1_optimal_weights, query_features, token_matrix
from theory.optimum import loss_grad
from theory.parity import (
    CLASSES,
    canonical_gauge,
    class_feature_mask,
    class_masks,
    class_parity,
    classify,
    counted_entries,
    feature_is_even,
    jaccard_support_distance,
    odd_share,
    out_of_class_share,
    parity_projection,
)
from theory.population import beta_from_weights, feature_list, feature_parity


def _features_from_tokens(y, s):
    """F_(r,l,m) = C[r, l] z_q[m] from the token matrix (independent of feature_list's code)."""
    Y0 = token_matrix(y, s)
    Z = Y0[..., :-1]
    C = Z @ np.swapaxes(Z, -1, -2) / Z.shape[-1]
    q = query_features(y, s)
    return (C[..., :, :, None] * q[..., None, None, :]).reshape(y.shape[:-1] + (-1,))


# ----------------------------------------------------------------- parity of the features


@pytest.mark.parametrize("s", range(1, 7))
def test_feature_parity_from_the_sign_flip_on_sequences(s):
    """F(y') y'_T = +-F(y) y_T with y'_k = (-1)^k y_k; the sign is the feature's parity."""
    rng = np.random.default_rng(s)
    for T in (s + 2, s + 5):
        y = rng.standard_normal((3, T))
        flip = (-1.0) ** np.arange(T)
        a = _features_from_tokens(y, s) * y[:, -1:]
        b = _features_from_tokens(y * flip, s) * (y * flip)[:, -1:]
        sign = np.sign(b / a)
        assert np.all(sign == sign[0])
        assert np.array_equal(sign[0] > 0, feature_is_even(s, T))
        assert np.array_equal(feature_is_even(s, T), feature_parity(s) > 0)


# ----------------------------------------------------------------- the classes


def test_masks_for_s2_written_out():
    """docs/math.md section 5.3 and the module doc: s = 2, 1 = kept."""
    b, W = class_masks(2, "b-even")
    assert b.astype(int).tolist() == [0, 1, 0]
    assert W.astype(int).tolist() == [[0, 1], [1, 0], [0, 1]]
    b, W = class_masks(2, "b-odd")
    assert b.astype(int).tolist() == [1, 0, 1]
    assert W.astype(int).tolist() == [[1, 0], [0, 1], [1, 0]]


@pytest.mark.parametrize("s", range(1, 7))
def test_masks_are_the_checkerboard_of_section_5_3(s):
    l, m = np.indices((s + 1, s))           # 0-based; 1-based l + m = l + m + 2
    for cls in CLASSES:
        p = class_parity(cls)
        b, W = class_masks(s, cls)
        assert np.array_equal(b, (np.arange(s + 1) + 1) % 2 == p)
        assert np.array_equal(W, (l + m + 2) % 2 == (p + s + 1) % 2)
    b0, W0 = class_masks(s, "b-even")
    b1, W1 = class_masks(s, "b-odd")
    assert not (b0 & b1).any() and (b0 | b1).all() and not (W0 & W1).any() and (W0 | W1).all()


@settings(max_examples=30, deadline=None)
@given(s=st.integers(1, 6), cls=st.sampled_from(CLASSES), seed=st.integers(0, 2 ** 32 - 1))
def test_in_class_weights_put_no_weight_on_odd_features(s, cls, seed):
    """Every beta = b_r W[l, m] of an in-class theta is zero on the odd features, for any
    values of the free entries (the last column of W_QK, the other rows of W_V)."""
    rng = np.random.default_rng(seed)
    bm, Wm = class_masks(s, cls)
    W_V = rng.standard_normal((s + 1, s + 1))
    W_QK = rng.standard_normal((s + 1, s + 1))
    W_V[s, ~bm] = 0.0
    W_QK[:, :s][~Wm] = 0.0
    beta = beta_from_weights(W_V, W_QK)
    odd = ~feature_is_even(s)
    assert np.all(beta[odd] == 0.0)
    assert np.all(beta[~class_feature_mask(s, cls)] == 0.0)
    assert np.count_nonzero(beta) == np.count_nonzero(class_feature_mask(s, cls))


@pytest.mark.parametrize("s", range(1, 7))
def test_classes_are_maximal(s):
    """Switching on any one out-of-class entry of b or W puts weight on an odd feature."""
    rng = np.random.default_rng(10 + s)
    odd = ~feature_is_even(s)
    for cls in CLASSES:
        bm, Wm = class_masks(s, cls)
        b = np.where(bm, rng.uniform(1, 2, s + 1), 0.0)
        W = np.where(Wm, rng.uniform(1, 2, (s + 1, s)), 0.0)
        for r in np.flatnonzero(~bm):
            b2 = b.copy()
            b2[r] = 1.0
            assert np.any((b2[:, None, None] * W[None]).ravel()[odd] != 0)
        for l, m in zip(*np.nonzero(~Wm)):
            W2 = W.copy()
            W2[l, m] = 1.0
            assert np.any((b[:, None, None] * W2[None]).ravel()[odd] != 0)


def _parity_moments(rng, s, pattern=True):
    """A random PSD M and c with (pattern=True) the parity zeros of docs/math.md section 5.2."""
    f = len(feature_list(s))
    A = rng.standard_normal((f, f + 3))
    M, c = A @ A.T / f, rng.standard_normal(f)
    return parity_projection(M, c, s) if pattern else (M, c)


@pytest.mark.parametrize("s", range(1, 7))
def test_gradient_leaving_the_class_vanishes_with_the_parity_zeros(s):
    """docs/math.md section 5.3, invariance; control: the same without the parity zeros."""
    rng = np.random.default_rng(20 + s)
    for pattern in (True, False):
        M, c = _parity_moments(rng, s, pattern)
        for cls in CLASSES:
            bm, Wm = class_masks(s, cls)
            keep = np.concatenate([bm, Wm.ravel()])
            theta = rng.standard_normal(keep.size) * keep
            _, g = loss_grad(theta, M, c, 1.0, s)
            leave = np.abs(g[~keep]).max()
            if pattern:
                assert leave <= 1e-13 * np.abs(g).max()
            else:
                assert leave > 1e-3 * np.abs(g).max()


def test_s1_classes_are_the_two_optimal_families():
    """docs/math.md section 5.3: b-even = the value family, b-odd = the key family."""
    for family, cls in (("value", "b-even"), ("key", "b-odd")):
        W_V, W_QK = ar1_optimal_weights(0.2, family)
        assert classify(W_V, W_QK) == (cls, {cls: 0.0, CLASSES[1 - CLASSES.index(cls)]: 1.0})


# ----------------------------------------------------------------- gauge and metrics


def _in_class(rng, s, cls, scale=1.0):
    bm, Wm = class_masks(s, cls)
    W_V = rng.standard_normal((s + 1, s + 1))
    W_QK = rng.standard_normal((s + 1, s + 1))
    W_V[s, ~bm] = 0.0
    W_QK[:, :s][~Wm] = 0.0
    return W_V * scale, W_QK / scale


def test_canonical_gauge():
    rng = np.random.default_rng(1)
    W_V, W_QK = rng.standard_normal((2, 4, 4))
    W_V[3] = [0.5, -3.0, 1.0, 2.0]
    V, Q = canonical_gauge(W_V, W_QK)
    assert V[3].tolist() == [0.5 / -3.0, 1.0, 1.0 / -3.0, 2.0 / -3.0]
    assert np.allclose(beta_from_weights(V, Q), beta_from_weights(W_V, W_QK), rtol=1e-15, atol=0)
    V2, Q2 = canonical_gauge(V, Q)
    assert np.array_equal(V2, V) and np.array_equal(Q2, Q)
    W_V[3] = 0.0
    with pytest.raises(ValueError, match="zero"):
        canonical_gauge(W_V, W_QK)


@pytest.mark.parametrize("s", [1, 2, 4])
def test_out_of_class_share(s):
    rng = np.random.default_rng(s)
    for cls in CLASSES:
        other = CLASSES[1 - CLASSES.index(cls)]
        W_V, W_QK = _in_class(rng, s, cls, scale=7.0)
        assert out_of_class_share(W_V, W_QK, cls) == 0.0
        assert out_of_class_share(W_V, W_QK, other) == pytest.approx(1.0, abs=1e-15)
        assert classify(W_V, W_QK)[0] == cls
        # gauge-invariant, and blind to the entries that never act
        W_V2, W_QK2 = W_V * -0.3, W_QK / -0.3
        W_V2[:s] = 99.0
        W_QK2[:, s] = -99.0
        assert classify(W_V2, W_QK2)[0] == cls and out_of_class_share(W_V2, W_QK2, cls) == 0.0


def test_out_of_class_share_worked_example():
    """s = 1, b = (0.1, 1) (gauge already canonical), W[:, 0] = (0.2, 0.05): b-even keeps
    b_2 and W[1, 1]; out = (0.1, 0.05); share = |(0.1, 0.05)| / |(0.1, 1, 0.2, 0.05)|."""
    W_V = np.array([[0.0, 0.0], [0.1, 1.0]])
    W_QK = np.array([[0.2, 0.0], [0.05, 0.0]])
    expect = np.hypot(0.1, 0.05) / np.sqrt(0.01 + 1 + 0.04 + 0.0025)
    assert out_of_class_share(W_V, W_QK, "b-even") == pytest.approx(expect, rel=1e-14)
    cls, shares = classify(W_V, W_QK)
    assert cls == "b-even" and shares["b-odd"] > shares["b-even"]
    assert classify(np.array([[0.0, 0.0], [1.0, 1.0]]), np.array([[1.0, 0.0], [1.0, 0.0]]))[0] is None


def test_jaccard_worked_example():
    """s = 2, b-odd (5 kept entries: b_1, b_3, W[1,1], W[2,2], W[3,1]).  Weights: the class
    filled with 1, W[2,2] = 0.004, and an out-of-class W[1,2] = 0.02.  At tau = 0.01 the
    support is 4 kept + 1 out: 1 - 4/6.  At tau = 0.001: 5 kept + 1 out: 1 - 5/6.  At
    tau = 0.03: 4 kept, nothing out: 1 - 4/5."""
    W_V = np.zeros((3, 3))
    W_V[2] = [1.0, 0.0, 1.0]
    W_QK = np.zeros((3, 3))
    W_QK[0, 0] = W_QK[2, 0] = 1.0
    W_QK[1, 1] = 0.004
    W_QK[0, 1] = 0.02
    assert jaccard_support_distance(W_V, W_QK, "b-odd", 0.01) == pytest.approx(1 - 4 / 6)
    assert jaccard_support_distance(W_V, W_QK, "b-odd", 0.001) == pytest.approx(1 - 5 / 6)
    assert jaccard_support_distance(W_V, W_QK, "b-odd", 0.03) == pytest.approx(1 - 4 / 5)
    assert jaccard_support_distance(W_V * 5, W_QK / 5, "b-odd", 0.01) == pytest.approx(1 - 4 / 6)
    # b-even keeps b_2, W[1,2], W[2,1], W[3,2]: it shares only W[1,2] with the 5-entry support
    assert jaccard_support_distance(W_V, W_QK, "b-even", 0.01) == pytest.approx(1 - 1 / 8)


def test_odd_share_matches_the_ar1_claims_definition():
    from claims._ar1 import coefficients
    from theory.population import population_moments
    from theory.systems import LDSFamily
    mom = population_moments(LDSFamily("a", d=2, T=8), 1)
    rng = np.random.default_rng(0)
    W_V, W_QK = rng.standard_normal((2, 2, 2))
    beta = beta_from_weights(W_V, W_QK)
    assert odd_share(beta, mom.M, 1) == pytest.approx(coefficients(W_V, W_QK, mom)["odd_share"], rel=1e-13)
    W_V, W_QK = ar1_optimal_weights(0.3)
    assert odd_share(beta_from_weights(W_V, W_QK), mom.M, 1) == 0.0


def test_bad_input_named():
    with pytest.raises(ValueError, match="cls"):
        class_masks(2, "even")
    with pytest.raises(ValueError, match="W_V"):
        counted_entries(np.zeros((2, 3)), np.zeros((2, 2)))
    with pytest.raises(ValueError, match="W_QK"):
        out_of_class_share(np.eye(3), np.full((3, 3), np.nan), "b-odd")
    with pytest.raises(ValueError, match="rel_threshold"):
        jaccard_support_distance(np.eye(3), np.eye(3), "b-odd", 1.5)
    with pytest.raises(ValueError, match="beta"):
        odd_share(np.ones(5), np.eye(5), 1)
    with pytest.raises(ValueError, match="T"):
        feature_is_even(3, 4)


def test_parity_projection_zeroes_exactly_the_mixed_blocks():
    rng = np.random.default_rng(0)
    s = 3
    f = len(feature_list(s))
    M, c = rng.standard_normal((f, f)), rng.standard_normal(f)
    Mp, cp = parity_projection(M, c, s)
    even = feature_is_even(s)
    mixed = even[:, None] != even[None, :]
    assert not Mp[mixed].any() and np.array_equal(Mp[~mixed], M[~mixed])
    assert not cp[~even].any() and np.array_equal(cp[even], c[even])
    with pytest.raises(ValueError, match="^M and c must be"):
        parity_projection(M[:-1, :-1], c, s)


def test_coefficients_name_the_optimal_family_the_weights_sit_in():
    """claims._ar1.coefficients on the two optimal families of Theorem 4.1 (theory.ar's
    weights): the even coefficient is kappa in both, the family is named after the weights."""
    from claims._ar1 import coefficients
    for family in ("value", "key"):
        W_V, W_QK = ar1_optimal_weights(0.3, family)
        c = coefficients(W_V, W_QK)
        assert c["family"] == family and c["even"] == pytest.approx(0.3, rel=1e-15)
