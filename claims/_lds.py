"""Shared pieces of the Kalman, depth and spectral-shift claims (docs/math.md section 7).

- the trained stacks of attention layers (models/attention.py ``StackedAttention``) come
  from the run store (claims/runs.py: ``depth_config``, ``shift_config``, ``trained``, with
  their protocol and the reasons for its learning rate).
- :func:`heldout_systems` -- held-out systems *and* their sequences, so that the Kalman
  filter, which knows the system, can be run beside every in-context predictor.
- :func:`predict`, :func:`paired_ratio` -- a trained model's predictions; a ratio of MSEs
  with its paired bootstrap interval; :func:`error_summary` -- a heavy-tailed row of errors
  by its median, 90 % quantile and tail share, over the filter's.
"""
from __future__ import annotations

import functools

import numpy as np
import torch

from claims.seeds import rng_for
from models.attention import LinearSelfAttention
from theory.systems import LDSFamily

#: the spectral-shift claim: stacks trained at radius claims.runs.TRAIN_RADIUS, tested at these radii
TEST_RADII = (0.9, 0.95, 1.0, 1.05)


def layer_prediction(W_V, W_QK, y, chunk: int = 50_000) -> np.ndarray:
    """The prediction of y_T by one layer with weights (W_V, W_QK): the model's own forward
    pass (``LinearSelfAttention.from_weights``) in float64 on sequences y (m, T), in chunks."""
    layer = LinearSelfAttention.from_weights(W_V, W_QK, dtype=torch.float64)
    with torch.no_grad():
        return np.concatenate([layer.predict(torch.tensor(y[i:i + chunk], dtype=torch.float64)).numpy()
                               for i in range(0, len(y), chunk)])


def predict(run, y) -> np.ndarray:
    """A trained layer or stack's prediction of y_T for sequences y (m, T), through its own
    forward pass in float64 (``TrainResult.model``)."""
    model = run.model(dtype=torch.float64)
    with torch.no_grad():
        return model.predict(torch.tensor(y, dtype=torch.float64)).numpy()


@functools.lru_cache(maxsize=None)
def heldout_systems(setting: str, m: int, T: int = 30, radius: float = 1.0):
    """``m`` held-out systems of a setting and one sequence each: (Systems, y (m, T))."""
    systems, y = LDSFamily(setting, T=T, radius=radius).sample(rng_for("lds-heldout", setting, m, T, radius), m)
    y.setflags(write=False)
    return systems, y


#: a sequence's squared error beyond this multiple of the filter's MSE counts as a tail event (ours)
TAIL_MULTIPLE = 10.0


def error_summary(err, kf) -> dict:
    """A heavy-tailed row of squared errors ``err`` against the filter's ``kf`` on the same
    sequences (the depth and spectral-shift claims): its median, 90 % quantile and the share
    of sequences beyond :data:`TAIL_MULTIPLE` times the filter's MSE, the first two over the
    filter's; a non-finite error (an overflowing deep stack) counts as +inf.

    >>> s = error_summary(np.array([1.0, 2.0, np.nan, 400.0]), np.ones(4))
    >>> s["median"], s["q90"], s["tail_share"], s["non_finite"]
    (201.0, inf, 0.5, 1)
    """
    err, kf = np.asarray(err, dtype=float), np.asarray(kf, dtype=float)
    non_finite = int((~np.isfinite(err)).sum())
    err = np.where(np.isfinite(err), err, np.inf)
    # the 90 % quantile interpolates linearly (numpy's default); where it would reach an
    # infinite error it is infinite (numpy would answer NaN: inf - inf)
    top = np.sort(err)[int(np.ceil(0.9 * (err.size - 1)))]
    q90 = float(np.quantile(err, 0.9)) if np.isfinite(top) else np.inf
    return {"median": float(np.median(err)) / float(np.median(kf)),
            "q90": q90 / float(np.quantile(kf, 0.9)),
            "tail_share": float(np.mean(err > TAIL_MULTIPLE * float(kf.mean()))),
            "median_error": float(np.median(err)), "non_finite": non_finite}


def paired_ratio(err_a, err_b, rng, resamples: int = 2000):
    """mean(err_a) / mean(err_b) over paired per-sequence squared errors, with its 95 %
    percentile-bootstrap interval (the pairs resampled together): (ratio, lo, hi)."""
    err_a, err_b = np.asarray(err_a, dtype=float), np.asarray(err_b, dtype=float)
    idx = rng.integers(0, err_a.size, size=(resamples, err_a.size))
    boot = err_a[idx].mean(1) / err_b[idx].mean(1)
    lo, hi = np.quantile(boot, [0.025, 0.975])
    return float(err_a.mean() / err_b.mean()), float(lo), float(hi)
