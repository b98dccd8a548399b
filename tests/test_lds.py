"""claims._lds beyond its error rows (tests/test_lds_errors.py): a trained run's prediction.

Oracle: the layer's forward pass by explicit sums (``_oracles.loop_lsa_forward`` on
``_oracles.loop_tokens``: T(Y) = Y + (1/n) W_V (Y M Y^T) W_QK Y, the prediction is entry
(s+1, n+1)), not the torch forward that :func:`claims._lds.predict` calls.
"""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

from _oracles import loop_lsa_forward, loop_tokens
from claims._lds import predict
from models.attention import LinearSelfAttention


class _Run:
    """What predict reads of a TrainResult: ``model(dtype=...)``."""

    def __init__(self, W_V, W_QK):
        self.W_V, self.W_QK = W_V, W_QK

    def model(self, dtype):
        return LinearSelfAttention.from_weights(self.W_V, self.W_QK, dtype=dtype)


@settings(max_examples=20, deadline=None)
@given(s=st.integers(1, 3), T=st.integers(6, 12), m=st.integers(1, 4), seed=st.integers(0, 2**32 - 1))
def test_predict_is_the_layers_last_entry_in_float64(s, T, m, seed):
    rng = np.random.default_rng(seed)
    W_V, W_QK = rng.normal(size=(s + 1, s + 1)), rng.normal(size=(s + 1, s + 1))
    y = rng.normal(size=(m, T))
    got = predict(_Run(W_V, W_QK), y)
    assert got.shape == (m,) and got.dtype == np.float64
    n = T - s - 1
    for i in range(m):
        Y = loop_tokens(y[i], s)
        ref = loop_lsa_forward(Y, W_V.tolist(), W_QK.tolist())[s, n]
        bound = loop_lsa_forward(Y, W_V.tolist(), W_QK.tolist(), absolute=True)[s, n]
        assert abs(got[i] - ref) <= 1e-12 * (1.0 + bound)
