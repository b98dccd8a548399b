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
al.'s and Ahn et al.'s constructions.  The trained stacks read out +[Y_L]_(s, n).  For
one step the sign can be moved into W_V (+eta e_s e_s^T, read out as +[Y_1]); from two
steps on it cannot within this family: the context labels keep y_(t+s) with coefficient
1, so the query holds minus the iterate of the step sizes -c_j, and the eta^2 P H P g term
of two steps keeps its sign whatever the signs of the c_j (tests/test_construction.py).
The construction is therefore read out as -[Y_L]_(s, n) (:data:`READOUT_SIGN`), a stated
departure from the trained stacks' readout, not a different forward pass.

Worked example (s = 1, one step, eta = 1/2, P = 1; y = 1, 2, 3, 4): the context is
ybar = (1, 2), labels (2, 3), so n = 2, H = (1 + 4) / 2 = 2.5, g = (2 + 6) / 2 = 4,
w_1 = eta g = 2 and the prediction of y_4 is w_1 y_3 = 6:

>>> import numpy as np
>>> W_V, W_QK = richardson_weights(1, 1, 0.5)
>>> W_V[0].tolist(), W_QK[0].tolist()
([[0.0, 0.0], [0.0, -0.5]], [[1.0, 0.0], [0.0, 0.0]])
>>> float(richardson_prediction(np.array([1.0, 2.0, 3.0, 4.0]), 1, 1, 0.5))
6.0
"""
from __future__ import annotations

import numpy as np

from .ar import context_stats, predict_ar
from .validation import check_finite_array, check_positive_int

__all__ = ["READOUT_SIGN", "richardson_weights", "richardson_iterates", "richardson_prediction"]

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
