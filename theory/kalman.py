r"""The Kalman filter with known parameters, batched over systems, and the exact optimal MSE (docs/math.md section 7).

Model (docs/math.md section 1): x_0 ~ N(0, Sigma_0), x_t = A x_{t-1} + w_t, y_t = c^T x_t + v_t,
t = 1..T; x_0 itself is never observed.

*Time-varying filter*, exact from the prior (predictive form; 1-based t)::

    x_{1|0} = 0,                     P_{1|0} = A Sigma_0 A^T + Sigma_w  (= Pi_1)
    e_t = y_t - c^T x_{t|t-1},       S_t = c^T P_{t|t-1} c + sigma_v^2      (innovation, its variance)
    K_t = A P_{t|t-1} c / S_t                                                (predictive gain)
    x_{t+1|t} = A x_{t|t-1} + K_t e_t,   P_{t+1|t} = A P_{t|t-1} A^T + Sigma_w - K_t S_t K_t^T

so the optimal (minimum mean-squared error) prediction of y_T from y_1..y_{T-1} is
y_hat_T = c^T x_{T|T-1} and its error variance is S_T.

*The same number from K alone*: y = (y_1..y_T) ~ N(0, K) with the exact covariance K of
theory.systems.covariance; with K = L L^T (Cholesky), the error variance of the best
linear predictor of y_T given the rest is L[T, T]^2 (= K_TT - k^T K_p^-1 k).  The two
routes share nothing but the model, and :func:`optimal_mse` returns the second.

*Steady state*: the predictive Riccati equation
P = A P A^T + Sigma_w - A P c (c^T P c + sigma_v^2)^-1 c^T P A^T, solved by
``scipy.linalg.solve_discrete_are`` (with its residual), the steady-state gain
K_g = A P c / (c^T P c + sigma_v^2) and the closed-loop matrix L = A - K_g c^T, whose
spectral radius rho(L) < 1 sets how fast the filter forgets (docs/math.md section 3: the
best AR(s) predictor approaches the filter with excess error ~ rho(L)^(2s)).

Worked example (d = 1, A = a = 0.5, c = 1, Sigma_0 = 1, Sigma_w = q = 0.25, sigma_v = 0):
P_{1|0} = a^2 + q = 0.5, S_1 = 0.5, K_1 = a P / S = 0.5, P_{2|1} = a^2 P + q - K^2 S = 0.25:
with no observation noise y_1 = x_1 is seen exactly, so only w_2 is left to predict.

>>> import numpy as np
>>> from theory.systems import Systems
>>> sys_ = Systems(A=np.full((1, 1, 1), 0.5), c=np.ones((1, 1)), Sigma_w=np.full((1, 1), 0.25),
...                Sigma_0=np.eye(1), sigma_v=0.0, T=2)
>>> float(kalman_predict(sys_, np.array([[1.0, 0.0]])).variance[0])
0.25
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg

from .systems import Systems, covariance
from .validation import check_finite_array, check_type

__all__ = ["KalmanPrediction", "kalman_predict", "optimal_mse", "SteadyState", "steady_state",
           "ar_population_predictor"]


@dataclass(frozen=True)
class KalmanPrediction:
    """``prediction`` (m,) = c^T x_{T|T-1}; ``variance`` (m,) = S_T, its error variance;
    ``innovation_variances`` (m, T) = S_1..S_T; ``gains`` (m, T-1, d) = K_1..K_{T-1}."""

    prediction: np.ndarray
    variance: np.ndarray
    innovation_variances: np.ndarray
    gains: np.ndarray


def _mv(M, v):
    return np.einsum("...ij,...j->...i", M, v)


def kalman_predict(systems: Systems, y) -> KalmanPrediction:
    """The time-varying Kalman filter of each system on its sequence: y (m, T) -> the
    prediction of y_T from y_1..y_{T-1} and its error variance (module doc).

    The sequences' last column (y_T) is not used; T is the sequences' length.
    """
    check_type("systems", systems, Systems, "a Systems batch")
    y = check_finite_array("y", y, ndim=2)
    m, T = y.shape
    if m != systems.m:
        raise ValueError(f"y must have one row per system ({systems.m}), got {m}")
    if T < 1:
        raise ValueError("y must hold at least one observation")
    A, c = systems.A, systems.c
    Sw, r2 = systems.Sigma_w, float(systems.sigma_v) ** 2
    AT = np.swapaxes(A, 1, 2)
    P = A @ systems.Sigma_0 @ AT + Sw                          # P_{1|0}
    x = np.zeros((m, systems.d))
    S_all = np.empty((m, T))
    gains = np.empty((m, max(T - 1, 0), systems.d))
    for t in range(T):
        Pc = _mv(P, c)
        S = np.einsum("md,md->m", c, Pc) + r2
        S_all[:, t] = S
        if t == T - 1:
            break
        K = _mv(A, Pc) / S[:, None]
        gains[:, t] = K
        e = y[:, t] - np.einsum("md,md->m", c, x)
        x = _mv(A, x) + K * e[:, None]
        P = A @ P @ AT + Sw - S[:, None, None] * K[:, :, None] * K[:, None, :]
        P = 0.5 * (P + np.swapaxes(P, 1, 2))
    return KalmanPrediction(prediction=np.einsum("md,md->m", c, x), variance=S_all[:, T - 1],
                            innovation_variances=S_all, gains=gains)


#: systems per block when a function builds their T x T covariances (memory: block T^2 floats)
BLOCK = 2000


def _blocks(systems: Systems):
    """The batch in consecutive blocks of at most :data:`BLOCK` systems."""
    for i in range(0, systems.m, BLOCK):
        yield Systems(A=systems.A[i:i + BLOCK], c=systems.c[i:i + BLOCK], Sigma_w=systems.Sigma_w,
                      Sigma_0=systems.Sigma_0, sigma_v=systems.sigma_v,
                      lam=None if systems.lam is None else systems.lam[i:i + BLOCK], T=systems.T)


def optimal_mse(systems: Systems, T: int) -> np.ndarray:
    """Error variance of the best predictor of y_T from y_1..y_{T-1}, per system, from the
    Cholesky factor of the exact covariance K: L[T, T]^2 (module doc)."""
    check_type("systems", systems, Systems, "a Systems batch")
    return np.concatenate([np.linalg.cholesky(covariance(b, T))[:, T - 1, T - 1] ** 2 for b in _blocks(systems)])


@dataclass(frozen=True)
class SteadyState:
    """Steady-state filter of each system: ``P`` (m, d, d) predictive covariance, ``gain``
    (m, d), ``closed_loop_radius`` (m,) = rho(A - K_g c^T), ``innovation_variance`` (m,),
    ``residual`` (m,) = max |Riccati residual| / max |P|."""

    P: np.ndarray
    gain: np.ndarray
    closed_loop_radius: np.ndarray
    innovation_variance: np.ndarray
    residual: np.ndarray


def steady_state(systems: Systems) -> SteadyState:
    """The discrete Riccati equation of each system (scipy), with its residual and rho(L)."""
    check_type("systems", systems, Systems, "a Systems batch")
    r2 = float(systems.sigma_v) ** 2
    if r2 <= 0:
        raise ValueError("sigma_v must be > 0 for the steady-state filter (the Riccati equation "
                         "needs a positive innovation variance)")
    out = {k: [] for k in ("P", "gain", "rho", "S", "res")}
    for A, c in zip(systems.A, systems.c):
        cc = c[:, None]
        P = scipy.linalg.solve_discrete_are(A.T, cc, systems.Sigma_w, np.array([[r2]]))
        S = float(c @ P @ c) + r2
        K = A @ P @ c / S
        res = A @ P @ A.T + systems.Sigma_w - S * np.outer(K, K) - P
        out["P"].append(P)
        out["gain"].append(K)
        out["rho"].append(float(np.abs(np.linalg.eigvals(A - np.outer(K, c))).max()))
        out["S"].append(S)
        out["res"].append(float(np.abs(res).max() / max(np.abs(P).max(), 1e-300)))
    return SteadyState(P=np.array(out["P"]), gain=np.array(out["gain"]),
                       closed_loop_radius=np.array(out["rho"]), innovation_variance=np.array(out["S"]),
                       residual=np.array(out["res"]))


def ar_population_predictor(systems: Systems, T: int, s: int):
    """The best AR(s) predictor of y_T for each known system: w = K_qq^-1 K_qT over the s
    previous observations q = T-s..T-1 (exact, from K), and its error variance
    K_TT - K_qT^T w.  Returns (w (m, s) in the order y_{T-s}..y_{T-1}, variance (m,))."""
    check_type("systems", systems, Systems, "a Systems batch")
    if not 1 <= s < T:
        raise ValueError(f"s must be in 1..T-1 = {T - 1}, got {s}")
    q = np.arange(T - 1 - s, T - 1)
    ws, vs = [], []
    for b in _blocks(systems):
        K = covariance(b, T)
        Kqq = K[:, q[:, None], q[None, :]]
        KqT = K[:, q, T - 1]
        w = np.linalg.solve(Kqq, KqT[..., None])[..., 0]
        ws.append(w)
        vs.append(K[:, T - 1, T - 1] - np.einsum("ms,ms->m", KqT, w))
    return np.concatenate(ws), np.concatenate(vs)
