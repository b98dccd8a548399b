"""theory.n4sid: subspace identification fitted in context.

Oracles: a long sequence of a known one-state system, whose identified pole must be near
the true one; the Kalman filter with the true system (theory.kalman), which N4SID may
approach but never beat in expectation by more than the noise.
"""
from __future__ import annotations

import numpy as np
import pytest

from theory.kalman import kalman_predict
from theory.n4sid import n4sid_predict
from theory.systems import LDSFamily, Systems


def test_identifies_the_pole_of_a_long_one_state_sequence():
    sy = Systems(A=np.full((1, 1, 1), 0.8), c=np.ones((1, 1)), Sigma_w=np.full((1, 1), 0.01),
                 Sigma_0=np.eye(1), sigma_v=0.01, T=600)
    y = sy.simulate(np.random.default_rng(0), 600)
    res = n4sid_predict(y, order=1, block_rows=5)
    assert res.failed == 0 and abs(res.poles[0, 0].real - 0.8) < 0.05


def test_predictions_are_finite_and_no_better_than_the_filter():
    fam = LDSFamily("a", d=3, T=30)
    sy = fam.sample_systems(np.random.default_rng(1), 300)
    y = sy.simulate(np.random.default_rng(2), fam.T)
    res = n4sid_predict(y)
    assert res.failed == 0 and np.isfinite(res.prediction).all()
    e_n4 = (res.prediction - y[:, -1]) ** 2
    e_kf = (kalman_predict(sy, y).prediction - y[:, -1]) ** 2
    diff = e_n4 - e_kf
    assert diff.mean() > -3 * diff.std(ddof=1) / np.sqrt(diff.size)


def test_arguments_are_checked():
    y = np.zeros((2, 30))
    with pytest.raises(ValueError, match="^order must be <="):
        n4sid_predict(y, order=4, block_rows=3)
    with pytest.raises(ValueError, match="^T must be >="):
        n4sid_predict(np.zeros((2, 6)), order=2, block_rows=3)
    with pytest.raises(ValueError, match="^y must be finite"):
        n4sid_predict(np.full((2, 30), np.nan))
