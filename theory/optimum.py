r"""The population optimum of the attention layer over (b, W_QK), and its best in-class twins (docs/math.md section 5.6).

The loss is the exact quadratic in beta of theory.population (docs/math.md section 2.2),

    L(theta) = 1/2 beta^T M beta - c^T beta + v/2,    beta_(r,l,m) = b_r W[l, m],

over theta = (b, W) with b = W_V[s, :] and W = W_QK[:, :s], the only entries that reach the
prediction.  It is a quartic polynomial in theta with a one-dimensional gauge
(b, W) -> (b / g, g W).  Chain rule through beta, with G = (M beta - c) reshaped to
(s+1, s+1, s)::

    dL/db_r   = sum_(l,m) W[l, m] G[r, l, m],        dL/dW[l, m] = sum_r b_r G[r, l, m],
    d2L       = J^T M J + [[0, G2], [G2^T, 0]],      G2[r, (l, m)] = G[r, l, m],

J = d beta / d theta (both checked against finite differences in the tests).

The optimiser is deterministic given ``seed``.  For fixed b the loss is quadratic in W,
so each run works on b alone ("variable projection"): W*(b) by least squares, the
gradient in b by the envelope theorem (dL/db at W*), b held near the unit sphere by the
term (|b|^2 - 1)^2 / 4 (L itself does not depend on |b|), BFGS.  Each of the ``starts``
runs (rng ``numpy.random.default_rng((seed, k))``, k = 0 unconstrained, 1 and 2 for the
classes) starts from the best of :data:`SCREEN` random Gaussian b directions.  Then
Newton steps with the exact Hessian in the gauge that pins the largest |b_r| to 1, until
the gradient stops decreasing (at most 50).  A run is converged when
max |grad L| <= ``gtol`` max |c| (default 1e-10).  L* is the lowest converged loss;
``n_at_optimum`` counts the starts within :data:`REL_TIE` = 1e-9 relative of it.

The constrained twin (``in_class``) runs the same optimiser over the entries a class
keeps (theory.parity.class_masks) and reports its loss relative to L*; by docs/math.md
section 5.3 (invariance) its point is a stationary point of the unconstrained L too.
Monte Carlo moments (setting d) carry their standard error into L* through the batch
means of theory.population.PopulationMoments: stderr(L*) = the spread of the batch losses
at the optimum (first order, envelope theorem; the downward bias of a minimum over noisy
moments is O(1/m) and not corrected).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import minimize

from .mc_moments import trajectory_moments
from .parity import CLASSES, canonical_gauge, class_masks, classify, feature_is_even, odd_share
from .population import PopulationMoments, beta_from_weights, moments_route, population_moments
from .systems import LDSFamily
from .validation import check_finite_array, check_positive_int, check_real, check_type

__all__ = ["loss_grad", "loss_hessian", "ClassOptimum", "PopulationOptimum", "population_optimum",
           "optimum_for", "StationaryPoint", "nearest_stationary_point", "match_point", "REL_TIE",
           "POINT_LOSS_REL", "POINT_BETA_REL", "D_TRAJECTORIES"]

#: starts whose loss is within this relative distance of L* count as reaching it.
REL_TIE = 1e-9
#: two stationary points are the same point when their losses agree to POINT_LOSS_REL
#: (relative; the basins issue's 1e-7) and their coefficients beta = b (x) W to POINT_BETA_REL
#: of the largest |beta| (ours: points converged to a gradient of 1e-10 max|c| are located to
#: about grad / (smallest Hessian eigenvalue) ~ 1e-7 in beta; distinct points found so far
#: differ by 1e-2 or more).  beta is the weights in every gauge at once (docs/math.md 2.1).
POINT_LOSS_REL = 1e-7
POINT_BETA_REL = 1e-4
#: random b directions screened (by the profiled loss) for the start of each run.
SCREEN = 64
#: raw trajectories (antithetic) behind the moments of setting d in :func:`optimum_for`.
D_TRAJECTORIES = 1_000_000
#: bounds of a request (a run of 4096 starts takes about a minute at s = 4; 1e8 trajectories
#: about half an hour): beyond them a call is refused before any work.
MAX_STARTS = 4096
MAX_TRAJECTORIES = 100_000_000


def _unpack(theta, s):
    return theta[:s + 1], theta[s + 1:].reshape(s + 1, s)


def loss_grad(theta, M, c, v, s: int) -> tuple[float, np.ndarray]:
    """(L, dL/dtheta) at theta = (b (s+1), W (s+1, s) row-major)."""
    b, W = _unpack(np.asarray(theta, dtype=float), s)
    beta = (b[:, None, None] * W[None]).ravel()
    Mb = M @ beta
    L = 0.5 * beta @ Mb - c @ beta + 0.5 * v
    G = (Mb - c).reshape(s + 1, s + 1, s)
    return float(L), np.concatenate([np.einsum("rlm,lm->r", G, W), np.einsum("rlm,r->lm", G, b).ravel()])


def loss_hessian(theta, M, c, s: int) -> np.ndarray:
    """d2L/dtheta2 = J^T M J + (the bilinear term of beta) (module doc)."""
    b, W = _unpack(np.asarray(theta, dtype=float), s)
    beta = (b[:, None, None] * W[None]).ravel()
    J = np.concatenate([np.kron(np.eye(s + 1), W.reshape(-1, 1)), np.kron(b.reshape(-1, 1), np.eye(W.size))],
                       axis=1)
    H = J.T @ M @ J
    G2 = (M @ beta - c).reshape(s + 1, -1)
    H[:s + 1, s + 1:] += G2
    H[s + 1:, :s + 1] += G2.T
    return 0.5 * (H + H.T)


@dataclass(frozen=True)
class _Run:
    loss: float
    theta: np.ndarray
    grad: float
    converged: bool


def _gauge(theta, s):
    b, W = _unpack(theta, s)
    g = b[np.argmax(np.abs(b))]
    return np.concatenate([b / g, (W * g).ravel()])


def _profile(b, M4, c2, v, wfree):
    """min over the free W of L(b, W) at fixed b (a least-squares problem): (L, W*)."""
    A = np.einsum("r,rpuq,u->pq", b, M4, b)[np.ix_(wfree, wfree)]
    y = (b @ c2)[wfree]
    w = np.linalg.lstsq(A, y, rcond=1e-13)[0]
    W = np.zeros(wfree.size)
    W[wfree] = w
    return 0.5 * v - 0.5 * (y @ w), W


def _solve(M, c, v, s, free, theta0, gtol, newton_steps=50):
    """Variable projection over b (W solved exactly for each b), then gauge-fixed Newton polish."""
    P = (s + 1) * s
    M4 = M.reshape(s + 1, P, s + 1, P)
    c2 = c.reshape(s + 1, P)
    bfree, wfree = free[:s + 1], free[s + 1:]

    def fg(x):                     # L(x / |x|, W*) + (|x|^2 - 1)^2 / 4 (keeps |x| near 1)
        nb = np.linalg.norm(x)
        b = np.zeros(s + 1)
        b[bfree] = x / nb
        L, W = _profile(b, M4, c2, v, wfree)
        g = loss_grad(np.concatenate([b, W]), M, c, v, s)[1][:s + 1][bfree]   # envelope theorem
        g = (g - (g @ x / nb) * x / nb) / nb
        return L + 0.25 * (nb * nb - 1) ** 2, g + (nb * nb - 1) * x
    x0 = theta0[:s + 1][bfree]
    res = minimize(fg, x0, jac=True, method="BFGS", options={"gtol": 1e-12, "maxiter": 2000})
    b = np.zeros(s + 1)
    b[bfree] = res.x / np.linalg.norm(res.x)
    theta = np.concatenate([b, _profile(b, M4, c2, v, wfree)[1]])
    scale = gtol * max(np.abs(c).max(), 1e-300)
    theta = _gauge(theta, s)
    pin = int(np.argmax(np.abs(theta[:s + 1])))
    move = free.copy()
    move[pin] = False
    L, g = loss_grad(theta, M, c, v, s)
    gn = np.abs(g[free]).max()
    for _ in range(newton_steps):                    # until the gradient stops decreasing
        H = loss_hessian(theta, M, c, s)[np.ix_(move, move)]
        step = np.linalg.lstsq(H, -g[move], rcond=1e-14)[0]
        trial = theta.copy()
        trial[move] += step
        Lt, gt = loss_grad(trial, M, c, v, s)
        gt_n = np.abs(gt[free]).max()
        if not gt_n < gn:
            if gn <= scale:
                break
            t = 0.5                                  # damped step, away from the optimum
            while t > 1e-6 and not gt_n < gn:
                trial = theta.copy()
                trial[move] += t * step
                Lt, gt = loss_grad(trial, M, c, v, s)
                gt_n = np.abs(gt[free]).max()
                t *= 0.5
            if not gt_n < gn:
                break
        theta, L, g, gn = trial, Lt, gt, gt_n
    gn = float(np.abs(g[free]).max())
    return _Run(L, theta, gn, gn <= scale)


def _weights(theta, s):
    """(W_V, W_QK) in the canonical gauge; the entries that never act are zero."""
    b, W = _unpack(theta, s)
    W_V = np.zeros((s + 1, s + 1))
    W_QK = np.zeros((s + 1, s + 1))
    W_V[s] = b
    W_QK[:, :s] = W
    return canonical_gauge(W_V, W_QK)


def _multistart(mom, free, rng, starts, gtol, screen=SCREEN):
    """``starts`` runs of :func:`_solve`; each starts from the best of ``screen`` random b directions."""
    s, M, c, v = mom.s, mom.M, mom.c, mom.v
    P = (s + 1) * s
    M4, c2 = M.reshape(s + 1, P, s + 1, P), c.reshape(s + 1, P)
    runs = []
    for _ in range(starts):
        cand = rng.standard_normal((screen, s + 1)) * free[:s + 1]
        losses = [_profile(b / np.linalg.norm(b), M4, c2, v, free[s + 1:])[0] for b in cand]
        theta0 = np.zeros(free.size)
        theta0[:s + 1] = cand[int(np.argmin(losses))]
        runs.append(_solve(M, c, v, s, free, theta0, gtol))
    ok = [r for r in runs if r.converged] or runs
    best = min(ok, key=lambda r: r.loss)
    at = sum(1 for r in ok if r.loss - best.loss <= REL_TIE * abs(best.loss))
    return best, at, sum(r.converged for r in runs), ok


@dataclass(frozen=True)
class ClassOptimum:
    """The best point inside one class (only the entries the class keeps are optimised)."""

    cls: str
    loss: float
    W_V: np.ndarray
    W_QK: np.ndarray
    grad_norm: float
    n_at_optimum: int
    n_converged: int
    rel_excess: float = float("nan")     # (loss - L*) / L*, filled in by population_optimum
    excess_stderr: float = 0.0           # Monte Carlo standard error of loss - L* (paired)
    full_hessian_min_eig: float = float("nan")   # of the unconstrained, gauge-fixed Hessian


@dataclass(frozen=True)
class PopulationOptimum:
    """L* and the optimal weights of the attention layer for one set of moments."""

    s: int
    loss: float
    stderr: float
    W_V: np.ndarray
    W_QK: np.ndarray
    cls: str | None
    out_of_class_share: float
    shares: dict
    odd_share: float
    grad_norm: float
    n_starts: int
    n_converged: int
    n_at_optimum: int
    gtol: float
    seed: int
    method: str
    hessian_eigs: tuple = (float("nan"), float("nan"))   # (min, max) of the gauge-fixed Hessian at theta*
    in_class: dict = field(default_factory=dict)
    #: distinct stationary points the unconstrained starts converged to (see population_optimum)
    stationary_points: tuple = ()
    #: True when a class's best point was lower than every unconstrained start (it is then theta*)
    found_in_class: bool = False


@dataclass(frozen=True)
class StationaryPoint:
    """A stationary point of L reached by a local search (:func:`nearest_stationary_point`)."""

    loss: float
    W_V: np.ndarray
    W_QK: np.ndarray
    cls: str | None
    out_of_class_share: float
    odd_share: float
    grad_norm: float
    hessian_min_eig: float
    converged: bool

    @property
    def kind(self) -> str:
        """"local min" when the gauge-fixed Hessian is positive definite, else "saddle"."""
        return "local min" if self.hessian_min_eig > 0 else "saddle"


def _hess_eigs(mom, theta):
    """(min, max) eigenvalue of the Hessian over every counted entry but the pinned largest b_r."""
    s = mom.s
    pin = int(np.argmax(np.abs(theta[:s + 1])))
    keep = np.ones(theta.size, dtype=bool)
    keep[pin] = False
    H = loss_hessian(theta, mom.M, mom.c, s)[np.ix_(keep, keep)]
    e = np.linalg.eigvalsh(0.5 * (H + H.T))
    return float(e[0]), float(e[-1])


def _stationary(mom, run) -> StationaryPoint:
    s = mom.s
    W_V, W_QK = _weights(run.theta, s)
    cls, shares = classify(W_V, W_QK)
    return StationaryPoint(
        loss=run.loss, W_V=W_V, W_QK=W_QK, cls=cls,
        out_of_class_share=shares[cls] if cls else min(shares.values()),
        odd_share=odd_share(beta_from_weights(W_V, W_QK), mom.M, s), grad_norm=run.grad,
        hessian_min_eig=_hess_eigs(mom, np.concatenate([W_V[s], W_QK[:, :s].ravel()]))[0],
        converged=run.converged)


def nearest_stationary_point(moments: PopulationMoments, W_V, W_QK, *, gtol: float = 1e-10) -> StationaryPoint:
    """The stationary point that the optimiser of this module reaches from (W_V, W_QK).

    The same local search as each start of :func:`population_optimum` (variable projection
    from the given b, then Newton), over every counted entry: where a trained layer is
    headed, with the kind of point (local minimum or saddle) and its class.
    """
    mom = check_type("moments", moments, PopulationMoments, "PopulationMoments")
    s = mom.s
    W_V = check_finite_array("W_V", W_V, ndim=2)
    W_QK = check_finite_array("W_QK", W_QK, ndim=2)
    if W_V.shape != (s + 1, s + 1) or W_QK.shape != (s + 1, s + 1):
        raise ValueError(f"W_V and W_QK must have shape {(s + 1, s + 1)} for s = {s}")
    theta0 = np.concatenate([W_V[s], W_QK[:, :s].ravel()])
    if not np.any(theta0[:s + 1]):
        raise ValueError("W_V[s, :] is zero: no direction to start from")
    run = _solve(mom.M, mom.c, mom.v, s, np.ones(theta0.size, dtype=bool), theta0,
                 check_real("gtol", gtol, minimum=0.0, strict_min=True))
    return _stationary(mom, run)


def match_point(loss_a: float, W_V_a, W_QK_a, loss_b: float, W_V_b, W_QK_b, *, mirror: bool = False,
                loss_rel: float = POINT_LOSS_REL, beta_rel: float = POINT_BETA_REL) -> str | None:
    """``"same"`` when two stationary points (their losses and weights) are one point: losses
    within ``loss_rel`` relative and beta = b (x) W within ``beta_rel`` of the larger max
    |beta| (gauge-invariant: (b / g, g W) is the same point for every g != 0).  With
    ``mirror``, ``"mirror"`` when b's beta is a's with its odd features negated: the image
    under y_t -> (-1)^t y_t, which maps A to -A and so leaves L unchanged when the law of A
    is centrally symmetric (the parity zeros of docs/math.md section 5.2: M_oe = 0, c_o = 0;
    an out-of-class point and its mirror are two points of equal loss, in-class points are
    their own mirrors).  ``None`` otherwise.

    >>> W_V = np.zeros((3, 3)); W_V[2] = [1.0, 0.0, 0.5]
    >>> W_QK = np.eye(3)
    >>> match_point(0.1, W_V, W_QK, 0.1 * (1 + 1e-9), -2 * W_V, -W_QK / 2)
    'same'
    >>> match_point(0.1, W_V, W_QK, 0.1, W_V, 1.01 * W_QK) is None
    True
    """
    if abs(loss_a - loss_b) > loss_rel * max(abs(loss_a), abs(loss_b)):
        return None
    a, b = beta_from_weights(W_V_a, W_QK_a), beta_from_weights(W_V_b, W_QK_b)
    if a.shape != b.shape:
        return None
    scale = beta_rel * max(np.max(np.abs(a)), np.max(np.abs(b)))
    if np.max(np.abs(a - b)) <= scale:
        return "same"
    if mirror:
        odd = ~feature_is_even(np.asarray(W_V_a).shape[0] - 1)
        b = b.copy()
        b[odd] *= -1
        if np.max(np.abs(a - b)) <= scale:
            return "mirror"
    return None


def _distinct(mom, runs, rel=1e-7):
    """The distinct stationary points among converged runs (losses apart by more than ``rel``),
    lowest first, each with the number of runs that reached it."""
    out = []
    for r in sorted(runs, key=lambda r: r.loss):
        if out and r.loss - out[-1][0].loss <= rel * abs(out[-1][0].loss):
            out[-1][1] += 1
        else:
            out.append([r, 1])
    return tuple((_stationary(mom, r), n) for r, n in out)


def population_optimum(moments: PopulationMoments, seed: int, *, starts: int = 32,
                       gtol: float = 1e-10, in_class: bool = True) -> PopulationOptimum:
    """Multi-start optimum of L over (b, W_QK[:, :s]) and, with ``in_class``, over each class.

    theta* is the lowest point found: the best unconstrained start, unless a class's best
    point is lower by more than :data:`REL_TIE` (the unconstrained starts missed it;
    ``found_in_class`` says so).  ``stationary_points`` lists the distinct points the
    unconstrained starts converged to, with how many reached each.
    """
    mom = check_type("moments", moments, PopulationMoments, "PopulationMoments")
    starts = check_positive_int("starts", starts)
    if starts > MAX_STARTS:
        raise ValueError(f"starts must be <= {MAX_STARTS}, got {starts}")
    gtol = check_real("gtol", gtol, minimum=0.0, strict_min=True)
    seed = check_positive_int("seed", seed, minimum=0)
    s = mom.s
    n_theta = (s + 1) + (s + 1) * s
    best, at, n_conv, runs = _multistart(mom, np.ones(n_theta, dtype=bool), np.random.default_rng((seed, 0)),
                                         starts, gtol)
    class_runs = {}
    if in_class:
        for k, name in enumerate(CLASSES):
            bm, Wm = class_masks(s, name)
            free = np.concatenate([bm, Wm.ravel()])
            class_runs[name] = _multistart(mom, free, np.random.default_rng((seed, 1 + k)), starts, gtol)
    found_in_class = False
    if class_runs:
        low = min(class_runs, key=lambda k: class_runs[k][0].loss)
        if best.loss - class_runs[low][0].loss > REL_TIE * abs(best.loss):
            best, at, found_in_class = class_runs[low][0], 0, True
    W_V, W_QK = _weights(best.theta, s)
    beta = beta_from_weights(W_V, W_QK)
    cls, shares = classify(W_V, W_QK)
    L_star = best.loss
    twins = {}
    for name, (cb, cat, cconv, _) in class_runs.items():
        cV, cQ = _weights(cb.theta, s)
        ex_se = 0.0
        if mom.batches is not None:
            lb = [mom.batch_losses(x) for x in (beta_from_weights(cV, cQ), beta)]
            ex_se = float((lb[0] - lb[1]).std(ddof=1) / np.sqrt(lb[0].size))
        twins[name] = ClassOptimum(
            cls=name, loss=cb.loss, W_V=cV, W_QK=cQ, grad_norm=cb.grad, n_at_optimum=cat,
            n_converged=cconv, rel_excess=(cb.loss - L_star) / L_star, excess_stderr=ex_se,
            full_hessian_min_eig=_hess_eigs(mom, np.concatenate([cV[s], cQ[:, :s].ravel()]))[0])
    return PopulationOptimum(
        s=s, loss=L_star, stderr=mom.loss_stderr(beta), W_V=W_V, W_QK=W_QK, cls=cls,
        out_of_class_share=shares[cls] if cls else min(shares.values()), shares=shares,
        odd_share=odd_share(beta, mom.M, s), grad_norm=best.grad, n_starts=starts,
        n_converged=n_conv, n_at_optimum=at, gtol=gtol, seed=seed, method=mom.method,
        hessian_eigs=_hess_eigs(mom, np.concatenate([W_V[s], W_QK[:, :s].ravel()])), in_class=twins,
        stationary_points=_distinct(mom, runs), found_in_class=found_in_class)


def optimum_for(family: LDSFamily, s: int, seed: int, *, starts: int = 32, gtol: float = 1e-10,
                in_class: bool = True, trajectories: int = D_TRAJECTORIES) -> PopulationOptimum:
    """:func:`population_optimum` on the moments of ``family`` by its route
    (theory.population.moments_route): exact quadrature (a, b, c, asym), or, on the Monte
    Carlo route (setting d), ``trajectories`` antithetic raw trajectories (rng seeded by
    (seed, 99)) -- the cheap estimator that serves an optimum.

    The antithetic moments of setting d have the parity zeros by construction (valid since
    A ~ -A there; theory.mc_moments), so they cannot be used to check those zeros.
    """
    family = check_type("family", family, LDSFamily, "an LDSFamily")
    starts = check_positive_int("starts", starts)
    if starts > MAX_STARTS:                          # before the moments, which cost more
        raise ValueError(f"starts must be <= {MAX_STARTS}, got {starts}")
    if moments_route(family) == "monte-carlo":
        trajectories = check_positive_int("trajectories", trajectories, minimum=2)
        if trajectories > MAX_TRAJECTORIES:
            raise ValueError(f"trajectories must be <= {MAX_TRAJECTORIES:.0e} (about 20 us each), "
                             f"got {trajectories}")
        moments = trajectory_moments(family, s, trajectories, np.random.default_rng((seed, 99)),
                                     antithetic=True)
    else:
        moments = population_moments(family, s)
    return population_optimum(moments, seed, starts=starts, gtol=gtol, in_class=in_class)
