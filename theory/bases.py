"""The random eigenbases of the settings (theory/settings.py, ``Setting.basis``): Haar-orthogonal
Q (setting b) and the conditioned perturbation of the identity P (setting d).

* :func:`haar_orthogonal`: Q from the QR decomposition of a Gaussian matrix, the signs of
  R's diagonal moved into Q, so that Q is Haar-distributed;
* :func:`conditioned_gaussian`: P = I + :data:`P_SCALE` G / sqrt(d), G iid N(0, 1),
  conditioned on cond_2(P) <= cond_max by rejection.

>>> import numpy as np
>>> Q = haar_orthogonal(np.random.default_rng(0), 2, 3)
>>> Q.shape, bool(np.allclose(Q @ Q.transpose(0, 2, 1), np.eye(3)))
((2, 3, 3), True)
>>> P = conditioned_gaussian(np.random.default_rng(0), 4, 5, 3.0)
>>> bool((np.linalg.cond(P) <= 3.0).all())
True
"""
from __future__ import annotations

import numpy as np

__all__ = ["haar_orthogonal", "conditioned_gaussian", "P_SCALE"]


def haar_orthogonal(rng: np.random.Generator, m: int, d: int) -> np.ndarray:
    """``m`` Haar-distributed orthogonal d x d matrices (QR of a Gaussian, signs fixed)."""
    Z = rng.standard_normal((m, d, d))
    Q, R = np.linalg.qr(Z)
    sgn = np.sign(np.diagonal(R, axis1=1, axis2=2))
    sgn[sgn == 0] = 1.0
    return Q * sgn[:, None, :]


#: size of the random perturbation of the identity in setting d's eigenbasis P.
P_SCALE = 0.3


def conditioned_gaussian(rng: np.random.Generator, m: int, d: int, cond_max: float,
                         max_rounds: int = 1000, scale: float = P_SCALE) -> np.ndarray:
    """``m`` matrices P = I + scale * G / sqrt(d), G iid N(0, 1), conditioned on cond_2(P) <= cond_max.

    Rejection sampling in vectorised rounds (the loop runs over rounds, not systems).
    """
    out = np.empty((m, d, d))
    todo = np.arange(m)
    eye = np.eye(d)
    for _ in range(max_rounds):
        if todo.size == 0:
            return out
        P = eye + (scale / np.sqrt(d)) * rng.standard_normal((todo.size, d, d))
        ok = np.linalg.cond(P) <= cond_max
        out[todo[ok]] = P[ok]
        todo = todo[~ok]
    raise ValueError(f"cond_max={cond_max} is too small: rejection sampling did not finish")
