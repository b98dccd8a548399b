r"""k steps of preconditioned Richardson iteration on the in-context AR(s) least squares, as the
weights of a stack of linear attention layers (docs/math.md section 7.2).

The in-context problem (theory/ar.py): min_w L_AR(w) = 1/(2n) sum_t (y_(t+s) - w^T ybar_t)^2,
gradient H w - g.  Richardson iteration from w_0 = 0 with preconditioner P and step sizes
eta_1..eta_k (gradient descent for P = I)::

    w_(j+1) = w_j + eta_(j+1) P (g - H w_j),          prediction  w_k^T ybar_q.

The construction (von Oswald et al.'s, for the paper's tokens z_t = (ybar_t, y_(t+s)) and
query z_q = (ybar_q, 0)): every layer j leaves the first s rows alone and updates the
label row only,

    W_V^j  = -eta_j e_s e_s^T            (only entry [s, s], 0-based),
    W_QK^j = [[P^T, 0], [0, 0]]          (P^T in the top-left s x s block).

With the stack's own forward pass (models/attention.py, ``StackedAttention``:
Y <- Y + (1/n) W_V Y M Y^T W_QK Y) the label slot l of a column with features x becomes
l - (eta_j / n) sum_t l_t x_t^T P^T x, which is exactly the update of the residual
y_(t+s) - w^T ybar_t of a context column and of -w^T ybar_q in the query column (whose
label starts at 0).  So after k layers the query's label slot holds **minus** the k-step
prediction: ``[Y_k]_(s, n) = -w_k^T ybar_q`` -- the readout convention of von Oswald et
al.'s and Ahn et al.'s constructions.  The trained stacks read out +[Y_L]_(s, n); the
construction is read out as -[Y_L]_(s, n) (:data:`READOUT_SIGN`), a stated departure from
the trained stacks' readout, not a different forward pass.

Worked example (s = 1, one step, eta = 1/2, P = 1; y = 1, 2, 3, 4): the context is
ybar = (1, 2), labels (2, 3), so n = 2, H = (1 + 4) / 2 = 2.5, g = (2 + 6) / 2 = 4,
w_1 = eta g = 2 and the prediction of y_4 is w_1 y_3 = 6:

>>> import numpy as np
>>> W_V, W_QK = richardson_weights(1, 1, 0.5)
>>> W_V[0].tolist(), W_QK[0].tolist()
([[0.0, 0.0], [0.0, -0.5]], [[1.0, 0.0], [0.0, 0.0]])
>>> float(richardson_prediction(np.array([1.0, 2.0, 3.0, 4.0]), 1, 1, 0.5))
6.0

When the sign can be moved into W_V instead (docs/math.md section 7.2).  With X = P H,
L steps eta_j give w_L = q_eta(X) P g, q_eta(x) = (1 - prod_j (1 - eta_j x)) / x.  Layers
W_V^j = c_j e_s e_s^T (W_QK as above) run the steps b_j = -c_j, so +[Y_L]_(s, n) =
-ybar_q^T q_b(X) P g.  That is the prediction of the steps eta for every context (P
invertible) iff -q_b = q_eta as polynomials, i.e. prod_j (1 - b_j x) = 2 - prod_j (1 - eta_j x),
i.e. (x = 1/z, times z^L)

    b_1, ..., b_L  are the roots of  2 z^L - prod_j (z - eta_j),                      (*)

which must all be real (:func:`plus_readout_steps`).  More layers do not help: a layer
with c_j = 0 does nothing and (*) fixes the non-zero ones.  So:

- L = 1: b_1 = -eta_1 (W_V = +eta e_s e_s^T), always.
- L = 2: b_(1,2) = (-(eta_1 + eta_2) -+ sqrt(eta_1^2 + 6 eta_1 eta_2 + eta_2^2)) / 2, the roots
  of z^2 + (eta_1 + eta_2) z - eta_1 eta_2: real whenever the steps have one sign (then
  b_1 b_2 = -eta_1 eta_2 < 0, steps of opposite signs); equal steps eta give
  b = (-(1 + sqrt 2) eta, (sqrt 2 - 1) eta).  Not for eta_2 / eta_1 strictly between
  -3 - 2 sqrt 2 and -3 + 2 sqrt 2 (the discriminant is negative there).
- L >= 3, steps of one sign within a factor 2 of each other (max / min <= 2), equal steps
  included: never.  Take eta_j > 0 (x -> -x swaps the signs) and p(x) = prod_j (1 - eta_j x);
  the roots of (*) are 1/x over the solutions of p(x) = 2.  p falls strictly from +inf to 1
  on x < 0 (one solution), p <= 1 on [0, 1/eta_max], |p| <= (eta_max / eta_min - 1)^L <= 1 on
  [1/eta_max, 1/eta_min], and |p| rises strictly beyond (one more solution for L even):
  1 or 2 real roots out of L.  For equal steps directly: z = eta / (1 - 2^(1/L) omega) over
  the L-th roots of unity omega, real only for omega = +-1.
- L >= 3, widely spread steps: sometimes, e.g. eta (1, 0.1, 0.01) at L = 3.

Worked example of (*) (s = 1, two equal steps eta = 1/2, P = 1; y = 1, 2, 3, 4 as above,
H = 2.5, g = 4): w_2 = eta g + (1 - eta H) eta g = 2 - 0.5 = 1.5, the prediction 4.5; the
roots of z^2 + z - 1/4 read out as +[Y_2] give the same:

>>> import torch
>>> from models.attention import StackedAttention
>>> y = np.array([[1.0, 2.0, 3.0, 4.0]])
>>> b = plus_readout_steps([0.5, 0.5]); np.round(b, 6).tolist()   # -(1 + sqrt 2)/2, (sqrt 2 - 1)/2
[-1.207107, 0.207107]
>>> stack = StackedAttention.from_weights(*richardson_weights(1, 2, b), dtype=torch.float64)
>>> plus_readout = float(stack.predict(torch.tensor(y)).detach()[0])
>>> round(plus_readout, 12), float(richardson_prediction(y, 1, 2, 0.5)[0])
(4.5, 4.5)
"""
from __future__ import annotations

import numpy as np

from .ar import context_stats, predict_ar
from .validation import check_finite_array, check_positive_int

__all__ = ["READOUT_SIGN", "richardson_weights", "richardson_iterates", "richardson_prediction",
           "plus_readout_steps"]

#: the construction's prediction is READOUT_SIGN * [Y_L]_(s, n) (module doc).
READOUT_SIGN = -1.0


def _steps(steps, eta) -> np.ndarray:
    """eta as one step size per step (a scalar is repeated)."""
    steps = check_positive_int("steps", steps)
    eta = np.asarray(check_finite_array("eta", eta, ndim=None), dtype=float)
    if eta.ndim == 0:
        return np.full(steps, float(eta))
    if eta.shape != (steps,):
        raise ValueError(f"eta must be a number or one step size per step ({steps}), got shape {eta.shape}")
    return eta


def _preconditioner(P, s: int) -> np.ndarray:
    if P is None:
        return np.eye(s)
    P = check_finite_array("P", P, ndim=2)
    if P.shape != (s, s):
        raise ValueError(f"P must be an s x s matrix ({s} x {s}), got shape {P.shape}")
    return P


def richardson_weights(s: int, steps: int, eta, P=None) -> tuple[np.ndarray, np.ndarray]:
    """(W_V, W_QK), each of shape (steps, s+1, s+1): the layers of the construction (module doc).

    ``eta``: one step size, or one per step; ``P``: the s x s preconditioner (default I).
    Load them with ``StackedAttention.from_weights(W_V, W_QK)`` and read the prediction as
    ``READOUT_SIGN * stack.predict(y)``.
    """
    s = check_positive_int("s", s)
    etas = _steps(steps, eta)
    P = _preconditioner(P, s)
    W_V = np.zeros((etas.size, s + 1, s + 1))
    W_QK = np.zeros((etas.size, s + 1, s + 1))
    W_V[:, s, s] = -etas
    W_QK[:, :s, :s] = P.T
    return W_V, W_QK


def richardson_iterates(y, s: int, steps: int, eta, P=None) -> np.ndarray:
    """w_k of k = ``steps`` Richardson steps from 0 on each sequence's L_AR(s), computed
    directly from (H, g) (theory.ar.context_stats); shape (..., s).  For P = I and one
    step size this is ``theory.ar.gd(y, s, eta, steps)``."""
    H, g, _ = context_stats(y, s)
    etas = _steps(steps, eta)
    P = _preconditioner(P, g.shape[-1])
    w = np.zeros_like(g)
    for e in etas:
        r = g - np.einsum("...ij,...j->...i", H, w)
        w = w + e * np.einsum("ij,...j->...i", P, r)
    return w


def richardson_prediction(y, s: int, steps: int, eta, P=None) -> np.ndarray:
    """The k-step Richardson prediction w_k^T ybar_q of y_T, shape (...)."""
    return predict_ar(richardson_iterates(y, s, steps, eta, P), y, s)


#: a root of (*) counts as non-real when its imaginary part exceeds this share of the largest |root|
#: (a double root, as at eta_1^2 + 6 eta_1 eta_2 + eta_2^2 = 0, comes out of np.roots with about 1e-8).
_REAL_ROOT_TOL = 1e-6


def plus_readout_steps(eta) -> np.ndarray:
    """The step sizes b_1..b_L (ascending) whose construction, read out as +[Y_L]_(s, n) (the
    trained stacks' readout), is L Richardson steps eta_1..eta_L, for every s, P and context:
    the roots of 2 z^L - prod_j (z - eta_j) (module doc, (*)).

    Load them as ``richardson_weights(s, L, b, P)`` (W_V^j = -b_j e_s e_s^T) and read out
    ``+stack.predict(y)``.  ValueError when a root is non-real: then no real weights
    W_V^j = c_j e_s e_s^T, W_QK^j = [[P^T, 0], [0, 0]], at any depth, do it.

    >>> plus_readout_steps([0.5]).tolist()
    [-0.5]
    >>> plus_readout_steps([1.0, 1.0, 1.0])
    Traceback (most recent call last):
    ...
    ValueError: ...
    """
    eta = check_finite_array("eta", eta, ndim=(0, 1)).reshape(-1)
    if eta.size == 0:
        raise ValueError("eta must hold at least one step size")
    coeffs = -np.poly(eta)                     # -prod_j (z - eta_j), highest power first
    coeffs[0] += 2.0                           # + 2 z^L: monic again
    roots = np.roots(coeffs)
    if roots.size and np.max(np.abs(roots.imag)) > _REAL_ROOT_TOL * np.max(np.abs(roots)):
        raise ValueError(f"eta = {eta.tolist()}: 2 z^L - prod_j (z - eta_j) has non-real roots "
                         f"{roots.tolist()}; the readout sign cannot be moved into W_V")
    return np.sort(np.concatenate([roots.real, np.zeros(eta.size - roots.size)]))
