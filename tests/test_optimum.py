"""theory.optimum and theory.mc_moments: the population optimum and its Monte Carlo moments.

Oracles: central finite differences (gradient, Hessian), population_loss on beta,
planted problems whose optimum is known by construction (c = M beta0 with beta0 of rank
one, so L* = v/2 - beta0^T M beta0 / 2 at beta0), least squares in beta (a lower bound
for every theta), eq. 15's kappa (s = 1), the exact quadrature (against Monte Carlo
within 5 standard errors) and per-system losses computed one by one (standard errors).
"""
from __future__ import annotations

import numpy as np
import pytest

from theory.ar import ar1_optimal_weights
from theory.mc_moments import trajectory_moments, trajectory_moments_windows
from theory.optimum import (
    loss_grad,
    loss_hessian,
    nearest_stationary_point,
    optimum_for,
    population_optimum,
)
from theory.parity import CLASSES, class_masks, feature_is_even, out_of_class_share
from theory.population import (
    PopulationMoments,
    beta_from_weights,
    feature_list,
    gaussian_feature_moments,
    population_loss,
    population_moments,
)
from theory.systems import LDSFamily, covariance

REFERENCE_KAPPA = 0.2052454015138651  # docs/math.md section 4.4, setting a


def _moments(M, c, v, s):
    f = c.size
    return PopulationMoments(s=s, M=M, c=c, v=v, M_se=np.zeros((f, f)), c_se=np.zeros(f), v_se=0.0,
                             method="planted")


def _theta(W_V, W_QK):
    s = W_V.shape[0] - 1
    return np.concatenate([W_V[s], W_QK[:, :s].ravel()])


# ----------------------------------------------------------------- derivatives


@pytest.mark.parametrize("s", [1, 2, 3])
def test_gradient_and_hessian_against_finite_differences(s):
    rng = np.random.default_rng(s)
    f = len(feature_list(s))
    A = rng.standard_normal((f, f))
    M, c, v = A @ A.T / f, rng.standard_normal(f), 2.0
    theta = rng.standard_normal((s + 1) ** 2)
    L, g = loss_grad(theta, M, c, v, s)
    W_V = np.zeros((s + 1, s + 1))
    W_QK = np.zeros((s + 1, s + 1))
    W_V[s], W_QK[:, :s] = theta[:s + 1], theta[s + 1:].reshape(s + 1, s)
    assert L == pytest.approx(float(population_loss(beta_from_weights(W_V, W_QK), M, c, v)), rel=1e-13)
    h = 1e-6
    E = np.eye(theta.size)
    g_fd = np.array([(loss_grad(theta + h * e, M, c, v, s)[0] - loss_grad(theta - h * e, M, c, v, s)[0]) / (2 * h)
                     for e in E])
    assert np.abs(g - g_fd).max() <= 1e-7 * np.abs(g).max()
    H = loss_hessian(theta, M, c, s)
    H_fd = np.array([(loss_grad(theta + h * e, M, c, v, s)[1] - loss_grad(theta - h * e, M, c, v, s)[1]) / (2 * h)
                     for e in E])
    assert np.abs(H - H_fd).max() <= 1e-7 * np.abs(H).max()
    assert np.array_equal(H, H.T)


# ----------------------------------------------------------------- planted optima


def _planted(s, cls=None, seed=0, pattern=False):
    """M PD (with the parity zeros if ``pattern``), beta0 = b0 (x) W0 (in ``cls`` if given), c = M beta0."""
    rng = np.random.default_rng(seed)
    f = len(feature_list(s))
    A = rng.standard_normal((f, f + 5))
    M = A @ A.T / f + 0.05 * np.eye(f)
    if pattern:
        even = feature_is_even(s)
        M = np.where(even[:, None] == even[None, :], M, 0.0)
    b0 = rng.uniform(0.5, 1.5, s + 1) * rng.choice([-1, 1], s + 1)
    W0 = rng.uniform(0.5, 1.5, (s + 1, s)) * rng.choice([-1, 1], (s + 1, s))
    if cls is not None:
        bm, Wm = class_masks(s, cls)
        b0, W0 = b0 * bm, W0 * Wm
    beta0 = (b0[:, None, None] * W0[None]).ravel()
    c = M @ beta0
    v = 2 * (beta0 @ M @ beta0)
    return _moments(M, c, v, s), beta0, 0.5 * v - 0.5 * beta0 @ M @ beta0


@pytest.mark.parametrize("s", [1, 2, 3])
def test_planted_rank_one_optimum_is_found(s):
    mom, beta0, L_star = _planted(s, seed=s)
    opt = population_optimum(mom, seed=3, starts=8, in_class=False)
    assert opt.loss == pytest.approx(L_star, rel=1e-12)
    assert np.abs(beta_from_weights(opt.W_V, opt.W_QK) - beta0).max() <= 1e-8 * np.abs(beta0).max()
    assert opt.n_converged == 8 and 1 <= opt.n_at_optimum <= 8
    assert opt.grad_norm <= opt.gtol * np.abs(mom.c).max()
    b = opt.W_V[s]
    assert b.max() == 1.0 and np.abs(b).max() == 1.0                 # canonical gauge
    assert not opt.W_V[:s].any() and not opt.W_QK[:, s].any()        # entries that never act


@pytest.mark.parametrize("cls", CLASSES)
def test_planted_in_class_optimum_and_its_twins(cls):
    s = 3
    mom, beta0, L_star = _planted(s, cls=cls, seed=7, pattern=True)
    opt = population_optimum(mom, seed=4, starts=8)
    other = CLASSES[1 - CLASSES.index(cls)]
    assert opt.loss == pytest.approx(L_star, rel=1e-12)
    assert opt.cls == cls and opt.out_of_class_share <= 1e-8 and opt.odd_share <= 1e-8
    assert opt.in_class[cls].rel_excess == pytest.approx(0.0, abs=1e-12)
    assert opt.in_class[other].rel_excess > 1e-3
    assert out_of_class_share(opt.in_class[other].W_V, opt.in_class[other].W_QK, other) == 0.0
    # the twins are stationary points of the unconstrained loss (invariance, section 5.3)
    for name in CLASSES:
        tw = opt.in_class[name]
        _, g = loss_grad(_theta(tw.W_V, tw.W_QK), mom.M, mom.c, mom.v, s)
        assert np.abs(g).max() <= 1e-10 * np.abs(mom.c).max()


def test_twin_is_not_stationary_without_the_parity_zeros():
    """Control for the previous test: the same planted problem with the odd-even block kept."""
    s = 3
    mom, _, _ = _planted(s, cls="b-odd", seed=7, pattern=False)
    opt = population_optimum(mom, seed=4, starts=4)
    tw = opt.in_class["b-even"]
    _, g = loss_grad(_theta(tw.W_V, tw.W_QK), mom.M, mom.c, mom.v, s)
    assert np.abs(g).max() > 1e-4 * np.abs(mom.c).max()


def test_deterministic_given_the_seed():
    mom, _, _ = _planted(2, seed=1)
    a = population_optimum(mom, seed=5, starts=6)
    b = population_optimum(mom, seed=5, starts=6)
    assert a.loss == b.loss and np.array_equal(a.W_QK, b.W_QK) and a.n_at_optimum == b.n_at_optimum
    assert a.in_class["b-odd"].loss == b.in_class["b-odd"].loss
    c = population_optimum(mom, seed=6, starts=6)
    assert c.loss == pytest.approx(a.loss, rel=1e-9)


# ----------------------------------------------------------------- the population


def test_s1_optimum_is_theorem_4_1():
    """s = 1, setting a: L* = L(theta*) with eq. 15's kappa, and both classes reach it."""
    mom = population_moments(LDSFamily("a"), 1)
    opt = population_optimum(mom, seed=1, starts=8)
    L_kappa = float(population_loss(beta_from_weights(*ar1_optimal_weights(REFERENCE_KAPPA)), mom.M, mom.c, mom.v))
    assert opt.loss == pytest.approx(L_kappa, rel=1e-12)
    for cls in CLASSES:
        assert opt.in_class[cls].rel_excess == pytest.approx(0.0, abs=1e-12)
    beta = beta_from_weights(opt.W_V, opt.W_QK)
    assert beta[2] + beta[1] == pytest.approx(REFERENCE_KAPPA, rel=1e-10)   # b_2 W11 + b_1 W21


@pytest.mark.parametrize("setting", ["a", "asym"])
def test_s2_optimum_structure_and_control(setting):
    """docs/math.md section 5.6: in setting a the optimum lies in a class and no start beats
    the best in-class point; in the control it lies in neither class (odd share O(1))."""
    mom = population_moments(LDSFamily(setting, d=3, T=12), 2)
    opt = population_optimum(mom, seed=2, starts=8)
    best_in = min(t.loss for t in opt.in_class.values())
    lsq = float(population_loss(np.linalg.lstsq(mom.M, mom.c, rcond=None)[0], mom.M, mom.c, mom.v))
    assert opt.loss >= lsq * (1 - 1e-12)                       # no theta beats the best beta
    if setting == "a":
        assert opt.cls in CLASSES and opt.out_of_class_share <= 1e-8 and opt.odd_share <= 1e-8
        assert opt.loss >= best_in * (1 - 1e-9)
        assert opt.in_class[opt.cls].rel_excess == pytest.approx(0.0, abs=1e-9)
    else:
        assert opt.out_of_class_share > 0.1 and opt.odd_share > 0.1
        assert opt.loss < best_in * (1 - 1e-3)


def test_optimum_for_d_uses_antithetic_trajectories():
    fam = LDSFamily("d", d=3, T=10)
    opt = optimum_for(fam, 2, seed=3, starts=16, trajectories=20000)
    assert opt.method == "mc-trajectories-antithetic"
    assert opt.stderr > 0 and opt.out_of_class_share <= 1e-8
    assert all(t.excess_stderr > 0 for name, t in opt.in_class.items() if name != opt.cls)


def test_bad_input_named():
    mom, _, _ = _planted(1)
    with pytest.raises(ValueError, match="moments"):
        population_optimum(np.eye(2), seed=1)
    with pytest.raises(ValueError, match="starts"):
        population_optimum(mom, seed=1, starts=0)
    with pytest.raises(ValueError, match="seed"):
        population_optimum(mom, seed=-1)
    with pytest.raises(ValueError, match="gtol"):
        population_optimum(mom, seed=1, gtol=0.0)
    with pytest.raises(ValueError, match="family"):
        optimum_for("a", 2, seed=1)


# ----------------------------------------------------------------- Monte Carlo moments


@pytest.mark.parametrize("antithetic", [False, True])
def test_trajectory_moments_agree_with_quadrature(antithetic):
    fam = LDSFamily("a", d=3, T=8)
    s = 2
    P = population_moments(fam, s)
    Q = trajectory_moments(fam, s, 100_000, np.random.default_rng(1), antithetic=antithetic)
    ok = Q.M_se > 0
    assert (np.abs(Q.M - P.M)[ok] / Q.M_se[ok]).max() < 5.0
    okc = Q.c_se > 0
    assert (np.abs(Q.c - P.c)[okc] / Q.c_se[okc]).max() < 5.0
    assert abs(Q.v - P.v) < 5 * Q.v_se
    even = feature_is_even(s)
    odd_block = Q.M[np.ix_(~even, even)]
    if antithetic:          # the parity projection: zeros by construction (never a check of them)
        assert not odd_block.any() and not Q.c[~even].any()
    else:
        assert np.abs(odd_block).max() > 0


def test_trajectory_moments_show_the_control_asymmetry():
    """Without the projection the control's odd moments are visible far above their error."""
    fam = LDSFamily("asym", d=3, T=8)
    Q = trajectory_moments(fam, 1, 50_000, np.random.default_rng(2))
    odd = ~feature_is_even(1)
    assert (np.abs(Q.c[odd]) / Q.c_se[odd]).max() > 10


def test_batch_standard_error_of_the_loss():
    """loss_stderr (32 batch means) against the sd of per-system losses computed one by one."""
    fam = LDSFamily("d", d=3, T=8)
    s, m = 2, 640
    P = population_moments(fam, s, method="mc-systems", m=m, rng=np.random.default_rng(9))
    beta = np.random.default_rng(0).standard_normal(len(feature_list(s))) * 0.1
    K = covariance(fam.sample_systems(np.random.default_rng(9), m), fam.T)
    M, c, v = gaussian_feature_moments(K, s)
    per = 0.5 * np.einsum("i,kij,j->k", beta, M, beta) - c @ beta + 0.5 * v
    assert per.mean() == pytest.approx(float(P.loss(beta)), rel=1e-12)
    se = per.std(ddof=1) / np.sqrt(m)
    assert 0.6 * se < P.loss_stderr(beta) < 1.5 * se          # 31 d.o.f.: sd of the ratio ~13 %
    assert population_moments(LDSFamily("a", d=2, T=6), 1).loss_stderr(np.ones(4)) == 0.0


# ----------------------------------------------------------------- the landscape


def test_stationary_points_list_the_optimum_first_with_counts():
    mom = population_moments(LDSFamily("a", d=3, T=10), 2)
    opt = population_optimum(mom, seed=2, starts=12)
    pts = opt.stationary_points
    assert sum(n for _, n in pts) == opt.n_converged
    assert pts[0][0].loss == pytest.approx(opt.loss, rel=1e-9)
    assert [p.loss for p, _ in pts] == sorted(p.loss for p, _ in pts)
    for p, _ in pts:                         # each is stationary, and its kind follows the Hessian
        _, g = loss_grad(_theta(p.W_V, p.W_QK), mom.M, mom.c, mom.v, 2)
        assert np.abs(g).max() <= 1e-8 * np.abs(mom.c).max()
        assert p.kind == ("local min" if p.hessian_min_eig > 0 else "saddle")


def test_nearest_stationary_point_from_the_optimum_and_from_nearby():
    mom = population_moments(LDSFamily("a", d=3, T=10), 2)
    opt = population_optimum(mom, seed=2, starts=8, in_class=False)
    here = nearest_stationary_point(mom, opt.W_V, opt.W_QK)
    assert here.loss == pytest.approx(opt.loss, rel=1e-12) and here.converged
    rng = np.random.default_rng(0)
    near = nearest_stationary_point(mom, opt.W_V + 1e-3 * rng.standard_normal(opt.W_V.shape),
                                    opt.W_QK + 1e-3 * rng.standard_normal(opt.W_QK.shape))
    assert near.loss == pytest.approx(opt.loss, rel=1e-9) and near.kind == "local min"
    assert np.abs(beta_from_weights(near.W_V, near.W_QK) - beta_from_weights(opt.W_V, opt.W_QK)).max() \
        <= 1e-6 * np.abs(beta_from_weights(opt.W_V, opt.W_QK)).max()
    with pytest.raises(ValueError, match="^W_V and W_QK must have shape"):
        nearest_stationary_point(mom, np.zeros((2, 2)), np.zeros((2, 2)))
    with pytest.raises(ValueError, match="^W_V\\[s, :\\] is zero"):
        nearest_stationary_point(mom, np.zeros((3, 3)), np.ones((3, 3)))


def test_a_class_point_lower_than_every_start_becomes_the_optimum(monkeypatch):
    """If the unconstrained starts miss a lower in-class point, theta* is that point."""
    import theory.optimum as opt_mod
    mom, _, L_star = _planted(2, cls="b-odd", seed=7, pattern=True)
    real = opt_mod._multistart

    def starved(mom_, free, rng, starts, gtol, screen=opt_mod.SCREEN):
        if free.all():                       # the unconstrained search: one poor start
            run = opt_mod._Run(loss=L_star + 1.0, theta=np.ones(free.size), grad=1.0, converged=False)
            return run, 0, 0, [run]
        return real(mom_, free, rng, starts, gtol, screen)
    monkeypatch.setattr(opt_mod, "_multistart", starved)
    opt = population_optimum(mom, seed=1, starts=4)
    assert opt.found_in_class and opt.loss == pytest.approx(L_star, rel=1e-12) and opt.cls == "b-odd"
    assert opt.in_class["b-odd"].rel_excess == 0.0


def test_trajectory_moments_for_several_windows_share_the_draws():
    fam = LDSFamily("d", d=3, T=9)
    both = trajectory_moments_windows(fam, (2, 3), 4000, np.random.default_rng(5))
    for s in (2, 3):
        one = trajectory_moments(fam, s, 4000, np.random.default_rng(5))
        assert np.array_equal(one.M, both[s].M) and np.array_equal(one.c, both[s].c)
        assert np.array_equal(one.batches[0], both[s].batches[0])
    with pytest.raises(ValueError, match="^windows"):
        trajectory_moments_windows(fam, 2, 100, np.random.default_rng(0))
    with pytest.raises(ValueError, match="^T must exceed"):
        trajectory_moments_windows(fam, (8,), 100, np.random.default_rng(0))


def test_match_point_knows_the_gauge_and_the_mirror_of_the_forward_pass():
    """The mirror of match_point (odd features of beta negated) is the image of the weights
    under y_t -> (-1)^t y_t: checked through the model's forward pass, not the feature
    parity it is coded from.  Weights with b'_r = (-1)^r b_r and W'[l, m] = (-1)^(l+m) W[l, m]
    predict on y what the originals predict on the flipped sequences, up to the sign
    (-1)^T of the target; match_point calls them "mirror" (with ``mirror``), a rescaled
    copy "same", and a perturbed copy nothing."""
    import torch
    from models.attention import LinearSelfAttention
    from theory.optimum import match_point

    s, T = 2, 9
    rng = np.random.default_rng(5)
    W_V, W_QK = rng.standard_normal((s + 1, s + 1)), rng.standard_normal((s + 1, s + 1))
    sign_b = (-1.0) ** np.arange(s + 1)
    sign_W = (-1.0) ** np.add.outer(np.arange(s + 1), np.arange(s + 1))
    V2, Q2 = W_V * sign_b[None, :], W_QK * sign_W
    y = rng.standard_normal((50, T))
    flip = y * (-1.0) ** np.arange(T)

    def pred(V, Q, seqs):
        layer = LinearSelfAttention.from_weights(V, Q, dtype=torch.float64)
        with torch.no_grad():
            return layer.predict(torch.tensor(seqs)).numpy()
    a, b = pred(V2, Q2, y), pred(W_V, W_QK, flip)
    assert min(np.abs(a - b).max(), np.abs(a + b).max()) <= 1e-12 * np.abs(a).max()
    assert match_point(1.0, W_V, W_QK, 1.0, V2, Q2, mirror=True) == "mirror"
    assert match_point(1.0, W_V, W_QK, 1.0, V2, Q2) is None
    assert match_point(1.0, W_V, W_QK, 1.0 + 1e-9, 3 * W_V, W_QK / 3) == "same"
    assert match_point(1.0, W_V, W_QK, 1.0 + 1e-6, W_V, W_QK) is None          # loss apart
    assert match_point(1.0, W_V, W_QK, 1.0, W_V, W_QK * 1.001, mirror=True) is None


def test_the_mirror_leaves_the_loss_of_a_symmetric_family_unchanged():
    """L(mirror of beta) = L(beta) on the exact moments of setting a (parity zeros), not on
    the asymmetric control's."""
    s = 2
    rng = np.random.default_rng(6)
    beta = rng.standard_normal(len(feature_list(s)))
    odd = ~feature_is_even(s)
    mirrored = np.where(odd, -beta, beta)
    sym = population_moments(LDSFamily("a", d=3, T=10), s)
    asym = population_moments(LDSFamily("asym", d=3, T=10), s)
    assert sym.loss(mirrored) == pytest.approx(sym.loss(beta), rel=1e-12)
    assert abs(asym.loss(mirrored) - asym.loss(beta)) > 1e-6 * abs(asym.loss(beta))
