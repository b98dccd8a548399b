r"""The attention layer against two steps of preconditioned CG: eq. 17's terms, eq. 18's span, the cosines (docs/math.md section 6).

For weights (W_V, W_QK) of window s write (docs/math.md section 6.1) b = (b_x, b_y) the
last row of W_V (b_x = q its first s entries), P = W_QK[:s, :s]^T and p = W_QK[s, :s]^T.
For a sequence with context statistics (H, g, gamma) (theory.ar.context_stats;
g = -grad L_AR(s)(0)) the layer predicts y_hat_T = w_attn^T ybar_q with (eq. 17)

    w_attn = P H q  +  b_y P g  +  xi_2 p,      xi_2 = q^T g + b_y gamma
           = P grad^2 L q + xi_1 P grad L(0) + xi_2 p,     xi_1 = -b_y,

and two PCG steps from 0 with preconditioner P give (eq. 18)

    w_PCG2 = tau_1 P H P g + tau_2 P g     (in span{P g, P H P g}).

The candidate cosines of docs/math.md section 6.3, per sequence:

    cos_1 = cos(P H q, P H P g)                   (primary: the two first terms)
    cos_2 = cos(w_attn, w_PCG2)                   (the whole predictors)
    cos_3 = cos(xi_2 p, P (g - H w_12)),  w_12 = P H q + b_y P g
                                                  (the extra vector against the
                                                   preconditioned residual)

cos_1 and cos_2 are gauge-invariant; cos_3 changes sign with the gauge (W_V, W_QK) ->
(-W_V, -W_QK), which is fixed first by tr(P) >= 0 (:func:`fix_sign`).

Worked example (s = 1): every direction is a multiple of g, so |cos_1| = |cos_2| = 1.

>>> import numpy as np
>>> W_V = np.array([[0.0, 0.0], [0.0, 1.0]]); W_QK = np.array([[0.2, 0.0], [0.0, 0.0]])
>>> y = np.array([1.0, 2.0, -1.0, 0.5, 1.5])
>>> c = alignment_cosines(W_V, W_QK, y, 1)
>>> float(c["cos_2"])
1.0
"""
from __future__ import annotations

import numpy as np

from .ar import attention_ar_weights, context_stats, pcg
from .validation import check_finite_array, check_positive_int

__all__ = ["layer_parts", "fix_sign", "eq17_terms", "alignment_cosines", "COSINES"]

#: the candidate cosines, primary first (docs/math.md section 6.3).
COSINES = ("cos_1", "cos_2", "cos_3")


def _mv(M, v):
    return np.einsum("...ij,...j->...i", M, v)


def _cos(u, v):
    nu = np.linalg.norm(u, axis=-1)
    nv = np.linalg.norm(v, axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.einsum("...i,...i->...", u, v) / (nu * nv)


def layer_parts(W_V, W_QK, s: int):
    """(q, b_y, P, p) of docs/math.md section 6.1: q = W_V[s, :s], b_y = W_V[s, s],
    P = W_QK[:s, :s]^T, p = W_QK[s, :s]."""
    s = check_positive_int("s", s)
    W_V = check_finite_array("W_V", W_V, ndim=2)
    W_QK = check_finite_array("W_QK", W_QK, ndim=2)
    for name, W in (("W_V", W_V), ("W_QK", W_QK)):
        if W.shape != (s + 1, s + 1):
            raise ValueError(f"{name} must have shape {(s + 1, s + 1)}, got {W.shape}")
    return W_V[s, :s].copy(), float(W_V[s, s]), W_QK[:s, :s].T.copy(), W_QK[s, :s].copy()


def fix_sign(W_V, W_QK, s: int):
    """(W_V, W_QK), or (-W_V, -W_QK) when tr(W_QK[:s, :s]) < 0: the gauge of cos_3."""
    W_V = check_finite_array("W_V", W_V, ndim=2)
    W_QK = check_finite_array("W_QK", W_QK, ndim=2)
    if np.trace(W_QK[:s, :s]) < 0:
        return -W_V, -W_QK
    return W_V, W_QK


def eq17_terms(W_V, W_QK, y, s: int) -> dict:
    """The three terms of eq. 17 for sequences y (..., T): ``first`` = P H q, ``second`` =
    b_y P g, ``third`` = xi_2 p, each (..., s), plus ``xi_2`` (...) and the statistics."""
    q, by, P, p = layer_parts(W_V, W_QK, s)
    H, g, gamma = context_stats(y, s)
    xi2 = g @ q + by * gamma
    PH = np.einsum("ij,...jk->...ik", P, H)
    return {"first": _mv(PH, q), "second": by * (g @ P.T), "third": xi2[..., None] * p,
            "xi_2": xi2, "H": H, "g": g, "gamma": gamma, "P": P, "PH": PH}


def alignment_cosines(W_V, W_QK, y, s: int) -> dict:
    """cos_1, cos_2, cos_3 of the module doc for each sequence of y (..., T), each (...).

    The sign gauge of cos_3 is fixed by :func:`fix_sign` (cos_1, cos_2 do not depend on
    it); the residual convention is r = g - H w (theory.ar.pcg's).
    """
    W_V, W_QK = fix_sign(W_V, W_QK, s)
    t = eq17_terms(W_V, W_QK, y, s)
    P, H, g = t["P"], t["H"], t["g"]
    Pg = g @ P.T
    cos_1 = _cos(t["first"], _mv(t["PH"], Pg))
    w_attn = attention_ar_weights(W_V, W_QK, y, s)
    cos_2 = _cos(w_attn, pcg(H, g, P, k=2)[2])
    w12 = t["first"] + t["second"]
    resid = g - _mv(H, w12)
    cos_3 = _cos(t["third"], resid @ P.T)
    return {"cos_1": cos_1, "cos_2": cos_2, "cos_3": cos_3}
