r"""Subspace identification (N4SID) fitted in context: a classical baseline of docs/math.md section 7.

For each sequence, the ``nfoursid`` package (a maintained N4SID implementation) identifies a
state-space model of order ``order`` from the context y_1..y_{T-1} alone, with
``block_rows`` block rows in its Hankel matrices, then runs the identified model's own
Kalman filter over the context and predicts y_T.  Nothing of the true system is used: it is
an in-context learner like the attention layer and in-context least squares, but of a
state-space model instead of an AR model.

Defaults [ours]: order 2 and 3 block rows, chosen by a scan on setting a (T = 30, 200
sequences of a seed of its own): held-out MSE 0.0864 at (3, 2) against 0.0905 at (3, 1),
0.0905 at (5, 2), 0.0915 at (5, 3) and 0.0987 at (6, 4), the Kalman filter with the true
system 0.0806.  A 29-sample context cannot resolve the true order d = 5; a higher order
only adds variance.  About 5 ms a sequence (the package works on pandas frames, one
sequence at a time).

Worked example: a long AR(1)-like sequence (d = 1, lambda = 0.8) gives an identified
state matrix near 0.8 (tests/test_n4sid.py).
"""
from __future__ import annotations

import warnings

import numpy as np

from .validation import check_finite_array, check_positive_int

__all__ = ["N4SIDResult", "n4sid_predict", "ORDER", "BLOCK_ROWS"]

ORDER = 2
BLOCK_ROWS = 3


class N4SIDResult:
    """``prediction`` (m,) of y_T per sequence (NaN where identification failed),
    ``failed`` the number of such sequences, ``poles`` (m, order) of the identified models."""

    def __init__(self, prediction, failed, poles):
        self.prediction, self.failed, self.poles = prediction, failed, poles


def _one(y, order, block_rows):
    import pandas as pd                 # pandas and nfoursid: about 2.3 s of start-up, only N4SID needs them
    from nfoursid.kalman import Kalman
    from nfoursid.nfoursid import NFourSID

    ctx = y[:-1]
    n4 = NFourSID(pd.DataFrame({"y": ctx}), output_columns=["y"], num_block_rows=block_rows)
    n4.subspace_identification()
    ss, cov = n4.system_identification(rank=order)
    kf = Kalman(ss, cov)
    u = np.zeros((0, 1))
    for v in ctx:
        kf.step(np.array([[v]]), u)
    return float(kf.y_predicteds[-1][0, 0]), np.linalg.eigvals(ss.a)


def n4sid_predict(y, *, order: int = ORDER, block_rows: int = BLOCK_ROWS) -> N4SIDResult:
    """N4SID fitted on each sequence's context, then its one-step prediction of y_T.

    ``y`` (m, T); needs T - 1 >= 2 * block_rows + order samples of context.
    """
    y = check_finite_array("y", y, ndim=2)
    order = check_positive_int("order", order)
    block_rows = check_positive_int("block_rows", block_rows)
    if order > block_rows:
        raise ValueError(f"order must be <= block_rows = {block_rows}, got {order}")
    m, T = y.shape
    if T - 1 < 2 * block_rows + order:
        raise ValueError(f"T must be >= {2 * block_rows + order + 1} for block_rows = {block_rows} "
                         f"and order = {order}, got {T}")
    pred = np.full(m, np.nan)
    poles = np.full((m, order), np.nan, dtype=complex)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")              # the package's pandas / numpy notices
        for k in range(m):
            try:
                pred[k], p = _one(y[k], order, block_rows)
                poles[k, :len(p)] = p
            except (np.linalg.LinAlgError, ValueError, ZeroDivisionError):
                pass                                 # counted as failed (NaN) below
    pred[~np.isfinite(pred)] = np.nan
    return N4SIDResult(pred, int(np.isnan(pred).sum()), poles)
