"""models.sampler: the torch sampler of settings b and d against the theory's numpy sampler.

Also (moved from tests/test_trainer.py): the torch simulation of given systems against the
exact covariance in every setting (and a correlated-noise family), the sampler against
the exact setting-a moments (theory.reference.exact_moments_a), the asymmetric control,
and the marginal covariance against the theory's sampler.

Oracles: ``numpy.linalg.cond`` for the rejection decision of setting d; the theory's
numpy sampler (theory.systems.LDSFamily.sample_systems) for the law of the systems,
compared through moments of P (setting d) and fourth moments of y averaged over its
systems by Isserlis' theorem; the exact weight moments of setting b
(theory.coordinate.setting_weight_moments, d * Dirichlet(1/2)); and, conditionally on the
systems of a draw (TorchLDSSampler.systems), the theory's exact covariance
theory.systems.covariance.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import assume, given, settings, strategies as st

from models.sampler import TorchLDSSampler, accept_conditioned
from theory.coordinate import setting_weight_moments
from theory.reference import exact_moments_a
from theory.bases import conditioned_gaussian
from theory.systems import SETTINGS, LDSFamily, Systems, covariance


def _zscores(samples_a, mean_b, se_b=0.0):
    """(mean(samples_a) - mean_b) / combined standard error, per column."""
    n = samples_a.shape[0]
    se = np.sqrt(samples_a.var(axis=0, ddof=1) / n + np.asarray(se_b) ** 2)
    return (samples_a.mean(axis=0) - mean_b) / se


def _batch_last(P):
    return torch.as_tensor(P).permute(1, 2, 0).contiguous()


# ----------------------------------------------------------------------------- rejection
@settings(max_examples=30, deadline=None)
@given(scale=st.floats(0.05, 3.0), cond_max=st.floats(1.05, 20.0), d=st.integers(1, 6),
       seed=st.integers(0, 2 ** 32 - 1), dtype=st.sampled_from([torch.float32, torch.float64]))
def test_accept_conditioned_is_numpys_decision(scale, cond_max, d, seed, dtype):
    rng = np.random.default_rng(seed)
    P = np.eye(d) + scale / math.sqrt(d) * rng.standard_normal((400, d, d))
    Pt = _batch_last(P).to(dtype)
    acc = accept_conditioned(Pt, cond_max).numpy()
    ref = np.linalg.cond(Pt.permute(2, 0, 1).double().numpy()) <= cond_max
    assert np.array_equal(acc, ref)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_accept_conditioned_at_the_threshold(dtype):
    """Matrices built with cond_2 = 3 (1 +- 1e-7) and 3 (1 +- 1e-3): decided exactly (in
    float32 the cheap test runs in float32; the reference is numpy's cond of the same
    float32 matrices, in float64)."""
    rng = np.random.default_rng(0)
    d, m = 5, 600
    U = np.linalg.qr(rng.standard_normal((m, d, d)))[0]
    V = np.linalg.qr(rng.standard_normal((m, d, d)))[0]
    rel = np.concatenate([np.full(m // 4, 1e-7), np.full(m // 4, -1e-7),
                          np.full(m // 4, 1e-3), np.full(m // 4, -1e-3)])
    sig = np.sort(rng.uniform(1.0, 3.0, (m, d)), axis=1)[:, ::-1].copy()
    sig[:, 0] = 3.0 * (1.0 + rel)
    sig[:, -1] = 1.0
    P = U @ (sig[:, :, None] * V)
    Pt = _batch_last(P).to(dtype)
    acc = accept_conditioned(Pt, 3.0).numpy()
    assert np.array_equal(acc, np.linalg.cond(Pt.permute(2, 0, 1).double().numpy()) <= 3.0)
    if dtype == torch.float64:
        assert np.array_equal(acc, rel < 0)
    else:                                   # float32 rounding moves cond by ~1e-7, not 1e-3
        far = np.abs(rel) > 1e-4
        assert np.array_equal(acc[far], rel[far] < 0)


@settings(max_examples=30, deadline=None)
@given(d=st.integers(1, 6), scale=st.floats(0.0, 0.6), seed=st.integers(0, 2 ** 32 - 1),
       dtype=st.sampled_from([torch.float32, torch.float64]))
def test_observation_vector_solves_the_transposed_system(d, scale, seed, dtype):
    """c' = P^-T 1 by elimination on P^T P (models.sampler._observation_vector) against
    numpy.linalg.solve, for P = I + scale G (cond_2 up to about 10)."""
    from models.sampler import _observation_vector
    rng = np.random.default_rng(seed)
    P = np.eye(d) + scale * rng.standard_normal((300, d, d))
    cond = np.linalg.cond(P)
    keep = cond < 10.0
    assume(keep.sum() >= 10)
    Pt = _batch_last(P[keep]).to(dtype)
    got = _observation_vector(Pt).double().numpy().T
    ref = np.linalg.solve(np.swapaxes(Pt.permute(2, 0, 1).double().numpy(), 1, 2), np.ones((int(keep.sum()), d, 1)))[..., 0]
    tol = 1e-11 if dtype == torch.float64 else 3e-5
    np.testing.assert_allclose(got, ref, rtol=0, atol=tol * np.abs(ref).max(initial=1.0))


def test_draw_takes_given_bases_and_refuses_wrong_ones():
    """draw(m, g, bases=(R, cvec)) uses those bases; wrong shapes, and bases for a setting
    without an eigenbasis, are refused naming ``bases``."""
    fam = LDSFamily("d", d=3, T=4)
    sampler = TorchLDSSampler(fam, dtype=torch.float64)
    assert sampler.needs_bases and not TorchLDSSampler(LDSFamily("a", d=3, T=4)).needs_bases
    assert TorchLDSSampler(LDSFamily("b", d=3, T=4)).draw_bases(5, torch.Generator()) is None
    bases = sampler.draw_bases(7, torch.Generator().manual_seed(0))
    _, (lamT, R, cvec), z = sampler.draw(7, torch.Generator().manual_seed(1), bases=bases)
    assert R is bases[0] and cvec is bases[1] and lamT.shape == (3, 7)
    own = sampler.draw(7, torch.Generator().manual_seed(1))               # draws its own after lambda
    assert torch.equal(own[1][0], lamT) and not torch.equal(own[1][1], R)
    with pytest.raises(ValueError, match="^bases must be"):
        sampler.draw(6, torch.Generator(), bases=bases)
    with pytest.raises(ValueError, match="^bases must be None"):
        TorchLDSSampler(LDSFamily("a", d=3, T=4)).draw(7, torch.Generator(), bases=bases)


def test_setting_d_P_has_the_numpy_samplers_law():
    """Entries of P: means and second moments; and cond_2(P) quantiles, torch vs numpy."""
    fam = LDSFamily("d", d=4)
    m = 60_000
    drawn = TorchLDSSampler(fam, dtype=torch.float64)._conditioned(m, torch.Generator().manual_seed(1))
    Pt = drawn[0].permute(2, 0, 1).numpy()
    Pn = conditioned_gaussian(np.random.default_rng(2), m, fam.d, fam.cond_max)
    np.testing.assert_allclose(np.einsum("mji,jm->mi", Pt, drawn[1].numpy()), 1.0, atol=1e-10)  # P^T c' = 1
    assert np.linalg.cond(Pt).max() <= fam.cond_max
    feats = lambda P: np.concatenate([P.reshape(m, -1), (P.reshape(m, -1) ** 2),  # noqa: E731
                                      np.linalg.cond(P)[:, None], np.trace(P @ P, axis1=1, axis2=2)[:, None]],
                                     axis=1)
    Ft, Fn = feats(Pt), feats(Pn)
    z = _zscores(Ft, Fn.mean(0), Fn.std(0, ddof=1) / math.sqrt(m))
    assert np.abs(z).max() < 5.0, z
    qt, qn = np.quantile(Ft[:, -2], [0.5, 0.9, 0.99]), np.quantile(Fn[:, -2], [0.5, 0.9, 0.99])
    np.testing.assert_allclose(qt, qn, rtol=0.02)


def test_setting_b_observation_vector_has_the_dirichlet_weights():
    """w = c'^2 (c' = Q 1) sums to d, with E[w1^2] and E[w1 w2] of d * Dirichlet(1/2)."""
    d, m = 5, 200_000
    for fam in (LDSFamily("b", d=d), _Anisotropic("b", d=d)):
        sampler = TorchLDSSampler(fam, dtype=torch.float64)
        _, (lamT, R, cvec), _ = sampler.draw(m, torch.Generator().manual_seed(3))
        assert (R is None) == (fam.setting == "b" and type(fam) is LDSFamily)
        w = cvec.numpy().T ** 2
        np.testing.assert_allclose(w.sum(1), d, rtol=1e-12)
        exact = setting_weight_moments("b", d)
        z = _zscores(np.stack([w[:, 0] ** 2, w[:, 0] * w[:, 1]], 1), np.array([exact["2"], exact["11"]]))
        assert np.abs(z).max() < 5.0, z
        if R is not None:
            Q = R.permute(2, 0, 1).numpy()
            np.testing.assert_allclose(Q @ np.swapaxes(Q, 1, 2), np.broadcast_to(np.eye(d), Q.shape), atol=1e-12)


# ----------------------------------------------------------------------------- simulation
class _Anisotropic(LDSFamily):
    """A non-isotropic process noise (setting b keeps the orthogonal factor then)."""

    def process_noise_cov(self):
        return self.sigma_w ** 2 * np.diag(np.linspace(0.5, 1.5, self.d))


@pytest.mark.parametrize("setting, family", [("b", LDSFamily), ("d", LDSFamily), ("b", _Anisotropic),
                                             ("a", LDSFamily)])
def test_eigenbasis_simulation_has_the_exact_covariance_of_its_systems(setting, family):
    """Given the systems of a draw (A = R^-1 diag(lambda) R, or a Householder Q for b), many
    trajectories through the eigenbasis recursion have the theory's exact K(A)."""
    fam = family(setting, T=7, d=3, sigma_w=0.3, sigma_v=0.2, sigma_0=0.8)
    sampler = TorchLDSSampler(fam, dtype=torch.float64)
    kind, (lamT, R, cvec), _ = sampler.draw(3, torch.Generator().manual_seed(4))
    K = covariance(sampler.systems((kind, (lamT, R, cvec), None)), fam.T)
    reps = 20_000
    rep = lambda x: None if x is None else x.repeat_interleave(reps, dim=-1)  # noqa: E731
    z = torch.randn(sampler._n_noise(3 * reps), generator=torch.Generator().manual_seed(5), dtype=torch.float64)
    y = sampler.finish(("eigen", (rep(lamT), rep(R), rep(cvec)), z)).T.numpy().reshape(3, reps, fam.T)
    i, j = np.triu_indices(fam.T)
    zs = np.concatenate([_zscores(y[k][:, i] * y[k][:, j], K[k][i, j]) for k in range(3)])
    assert np.abs(zs).max() < 5.0, zs


def _isserlis4(K, q):
    a, b, c, e = q
    return K[:, a, b] * K[:, c, e] + K[:, a, c] * K[:, b, e] + K[:, a, e] * K[:, b, c]


@pytest.mark.parametrize("setting", ["b", "d"])
def test_fourth_moments_match_the_numpy_sampler(setting):
    """Over random systems: E[y_a y_b y_c y_e] from the torch sampler vs the exact per-system
    fourth moments (Isserlis on K) averaged over the numpy sampler's systems."""
    fam = LDSFamily(setting, T=6, d=4)
    m = 200_000
    sampler = TorchLDSSampler(fam, dtype=torch.float64)
    y = sampler.finish(sampler.draw(m, torch.Generator().manual_seed(6))).T.numpy()
    K = covariance(fam.sample_systems(np.random.default_rng(7), 40_000), fam.T)
    quads = [(4, 4, 5, 5), (0, 1, 4, 5), (3, 4, 4, 5), (5, 5, 5, 5), (0, 0, 5, 5)]
    emp = np.stack([np.prod(y[:, list(q)], axis=1) for q in quads], 1)
    ex = np.stack([_isserlis4(K, q) for q in quads], 1)
    z = _zscores(emp, ex.mean(0), ex.std(0, ddof=1) / math.sqrt(len(K)))
    assert np.abs(z).max() < 5.0, z


def test_systems_needs_a_draw():
    sampler = TorchLDSSampler(LDSFamily("a", T=5))
    with pytest.raises(ValueError, match="^drawn"):
        sampler.systems(("full", None, None))


# ----------------------------------------------------------------------------- the law of the training draws
def sample(sampler, m, generator):
    """m fresh systems, one trajectory each, (m, T): the training path draw -> finish."""
    return sampler.finish(sampler.draw(m, generator)).T


def simulate(sampler, systems, generator):
    """One torch trajectory per given system, (m, T): the sampler's simulation on the
    systems' own A, fed through ``finish`` with freshly drawn normals."""
    fam = sampler.family
    if (systems.d != fam.d or not np.array_equal(systems.Sigma_w, fam.process_noise_cov())
            or not np.array_equal(systems.Sigma_0, fam.initial_cov())
            or float(systems.sigma_v) != fam.sigma_v or not np.all(systems.c == 1.0)):
        raise ValueError("systems must share the sampler family's d, c and noise model")
    m, T, d = systems.m, fam.T, fam.d
    z = torch.randn((T + 1) * d * m + T * m, generator=generator, dtype=sampler.dtype)
    if systems.lam is not None:
        drawn = ("diag", torch.as_tensor(systems.lam.T.copy(), dtype=sampler.dtype), z)
    else:
        drawn = ("full", torch.as_tensor(systems.A, dtype=sampler.dtype).permute(1, 2, 0).contiguous(), z)
    return sampler.finish(drawn).T


class _CorrelatedNoise(LDSFamily):
    """Setting a with full (correlated) Sigma_w and Sigma_0: exercises the samplers'
    "full" noise factor, which no named setting reaches."""

    def process_noise_cov(self):
        return self.sigma_w ** 2 * (0.6 * np.eye(self.d) + 0.4 * np.ones((self.d, self.d)))

    def initial_cov(self):
        return self.sigma_0 ** 2 * (0.5 * np.eye(self.d) + 0.5 * np.ones((self.d, self.d)))


@pytest.mark.parametrize("setting", SETTINGS + ("correlated",))
def test_torch_simulation_given_systems_matches_exact_covariance(setting):
    """Conditionally on the systems, y ~ N(0, K(A)): compare the empirical second
    moments of many torch trajectories per system with the theory's exact covariance."""
    kw = dict(T=7, d=3, sigma_w=0.3, sigma_v=0.2, sigma_0=0.8)
    fam = _CorrelatedNoise("a", **kw) if setting == "correlated" else LDSFamily(setting, **kw)
    systems = fam.sample_systems(np.random.default_rng(1), 3)
    K = covariance(systems, fam.T)
    reps = 20000
    rep_systems = Systems(A=np.repeat(systems.A, reps, 0), c=np.repeat(systems.c, reps, 0),
                                Sigma_w=systems.Sigma_w, Sigma_0=systems.Sigma_0,
                                sigma_v=systems.sigma_v,
                                lam=None if systems.lam is None else np.repeat(systems.lam, reps, 0),
                                T=fam.T)
    sampler = TorchLDSSampler(fam, device="cpu", dtype=torch.float64)
    y = simulate(sampler, rep_systems, torch.Generator().manual_seed(2)).numpy().reshape(3, reps, fam.T)
    i, j = np.triu_indices(fam.T)
    z = []
    for k in range(3):
        prods = y[k][:, i] * y[k][:, j]
        z.append(_zscores(prods, K[k][i, j]))
    z = np.abs(np.concatenate(z))
    assert z.max() < 5.0, z.max()
    assert np.abs(y.mean(axis=1)).max() < 5 * np.sqrt(K.diagonal(axis1=1, axis2=2).max() / reps)


def test_torch_sampler_matches_exact_setting_a_moments():
    """Over random systems (setting a), E[y_i y_j] and two 4th moments equal the exact
    rational moments of theory.reference.exact_moments_a."""
    T, d = 6, 5
    fam = LDSFamily("a", T=T, d=d, sigma_w=0.1, sigma_v=0.1)
    sampler = TorchLDSSampler(fam, device="cpu", dtype=torch.float32)
    m = 400_000
    y = sample(sampler, m, torch.Generator().manual_seed(3)).double().numpy()
    assert y.shape == (m, T)
    pairs = [(a, b) for a in range(T) for b in range(a, T)]
    exact2 = exact_moments_a(pairs, T, d, "1/100", "1/100")
    prods = np.stack([y[:, a] * y[:, b] for a, b in pairs], axis=1)
    z2 = _zscores(prods, np.array([float(e) for e in exact2]))
    quads = [(T - 2, T - 2, T - 1, T - 1), (0, 1, T - 2, T - 1)]
    exact4 = exact_moments_a(quads, T, d, "1/100", "1/100")
    prods4 = np.stack([np.prod(y[:, list(q)], axis=1) for q in quads], axis=1)
    z4 = _zscores(prods4, np.array([float(e) for e in exact4]))
    assert np.abs(z2).max() < 5.0 and np.abs(z4).max() < 5.0, (z2, z4)


def test_torch_sampler_asym_control_is_not_symmetric():
    """The asymmetric control has E[y_1 y_2] > 0 well beyond noise; setting a has ~0."""
    gen = torch.Generator().manual_seed(4)
    ya = sample(TorchLDSSampler(LDSFamily("a", T=4)), 100_000, gen).double().numpy()
    yc = sample(TorchLDSSampler(LDSFamily("asym", T=4)), 100_000, gen).double().numpy()
    za = _zscores((ya[:, 0] * ya[:, 1])[:, None], np.zeros(1))[0]
    zc = _zscores((yc[:, 0] * yc[:, 1])[:, None], np.zeros(1))[0]
    assert abs(za) < 5 and zc > 50


@pytest.mark.parametrize("setting", ["b", "c", "d"])
def test_torch_sampler_marginal_covariance_matches_theory_sampler(setting):
    """Over random systems: E[y_i y_j] from the torch sampler vs the theory's exact
    covariance averaged over systems from the theory's own numpy sampler."""
    fam = LDSFamily(setting, T=6, d=4)
    m = 100_000
    y = sample(TorchLDSSampler(fam, dtype=torch.float64), m, torch.Generator().manual_seed(5)).numpy()
    K = covariance(fam.sample_systems(np.random.default_rng(6), 40_000), fam.T)
    i, j = np.triu_indices(fam.T)
    Kij = K[:, i, j]
    z = _zscores(y[:, i] * y[:, j], Kij.mean(axis=0), Kij.std(axis=0, ddof=1) / math.sqrt(len(K)))
    assert np.abs(z).max() < 5.0, z


def test_sampler_validation():
    fam = LDSFamily("a", T=5)
    with pytest.raises(ValueError, match="^family"):
        TorchLDSSampler("a")
    with pytest.raises(ValueError, match="^dtype"):
        TorchLDSSampler(fam, dtype=torch.float16)
    s = TorchLDSSampler(fam)
    with pytest.raises(ValueError, match="^m must"):
        s.draw(0, torch.Generator())
    with pytest.raises(ValueError, match="^generator"):
        s.draw(3, np.random.default_rng(0))
    with pytest.raises(ValueError, match="^systems must share"):
        simulate(s, LDSFamily("a", T=5, d=2).sample_systems(np.random.default_rng(0), 2), torch.Generator())
