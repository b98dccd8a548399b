"""theory.iid: in-context linear regression with i.i.d. tokens, the depth claim's contrast.

Oracles: sampled tasks (Monte Carlo) for the exact Gauss-Hermite moments; the closed form
(one GD step, gamma* = n / (n + d + 1 + sigma^2)) for the optimiser; a direct Monte Carlo
of the one-step predictor's error.  Control: the closed form with the Wishart moment
E[(X^T X)^2] = n (n + d + 1) I replaced by n (n + d) I.
"""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from theory.iid import iid_moments, one_step_beta, one_step_gamma, optimal_half_mse, sample_features
from theory.optimum import population_optimum


def test_moments_against_sampled_tasks():
    """Every entry of M, c and v within 5 standard errors of 4e5 sampled tasks (in chunks)."""
    n, d, sigma = 5, 2, 0.5
    mom = iid_moments(n, d, sigma)
    rng = np.random.default_rng(0)
    f = mom.c.size
    sums = {k: [np.zeros(shape), np.zeros(shape)] for k, shape in (("M", (f, f)), ("c", (f,)), ("v", ()))}
    total = 0
    for _ in range(8):
        F, yq = sample_features(rng, 50_000, n, d, sigma)
        for key, x in (("M", F[:, :, None] * F[:, None, :]), ("c", F * yq[:, None]), ("v", yq ** 2)):
            sums[key][0] += x.sum(0)
            sums[key][1] += (x ** 2).sum(0)
        total += F.shape[0]
    for key, ref in (("M", mom.M), ("c", mom.c), ("v", mom.v)):
        mean = sums[key][0] / total
        se = np.sqrt(np.maximum(sums[key][1] / total - mean ** 2, 0) / total)
        assert np.max(np.abs(mean - ref) / np.maximum(se, 1e-12)) < 5


@settings(max_examples=12, deadline=None)
@given(n=st.integers(1, 200), d=st.integers(1, 3), sigma=st.floats(0.0, 2.0))
def test_the_optimiser_finds_the_closed_form(n, d, sigma):
    mom = iid_moments(n, d, sigma)
    opt = population_optimum(mom, 0, starts=8, in_class=False)
    L = optimal_half_mse(n, d, sigma)
    assert abs(opt.loss - L) <= 1e-8 * L
    assert abs(mom.loss(one_step_beta(d, one_step_gamma(n, d, sigma))) - L) <= 1e-12 * max(L, 1e-300)
    wrong = 0.5 * (sigma ** 2 + d * (d + sigma ** 2) / (n + d + sigma ** 2))     # control: E W^2 = n (n + d)
    assert abs(wrong - L) > 1e-6 * L


def test_one_step_error_by_simulation():
    """E (gamma h^T x_q - y_q)^2 by direct simulation equals 2 L* (within 5 standard errors)."""
    n, d, sigma = 9, 2, 0.5
    rng = np.random.default_rng(1)
    m = 200_000
    w = rng.standard_normal((m, d))
    X = rng.standard_normal((m, n, d))
    y = np.einsum("mnd,md->mn", X, w) + sigma * rng.standard_normal((m, n))
    h = np.einsum("mn,mnd->md", y, X) / n
    xq = rng.standard_normal((m, d))
    err = (one_step_gamma(n, d, sigma) * np.einsum("md,md->m", h, xq)
           - np.einsum("md,md->m", w, xq) - sigma * rng.standard_normal(m)) ** 2
    assert abs(err.mean() - 2 * optimal_half_mse(n, d, sigma)) < 5 * err.std() / np.sqrt(m)
