r"""Parity of the features and the checkerboard classes b-even / b-odd (docs/math.md sections 5.2-5.6).

Only the entries that reach the prediction count (docs/math.md section 2.1): b = W_V[s, :]
(the last row, 0-based index s) and W_QK[:, :s] (the last column of W_QK meets the 0 in
the query's last slot).  Indices below are 1-based in the text and 0-based in arrays.

Parity of a feature, derived here from the positions of its four factors.  Under the
sign flip y_k -> (-1)^k y_k (array positions k; docs/math.md section 5.1) the product
F_(r,l,m) y_T = (1/n) sum_t y_(t+r) y_(t+l) y_(q0+m) y_(T-1) (0-based, q0 = T - s - 1)
picks up (-1)^((t+r) + (t+l) + (q0+m) + (T-1)) = (-1)^(r+l+m+s) (0-based), whatever t
and T; the feature is *even* if that sign is +1, *odd* otherwise.  (:func:`feature_is_even`
counts the positions literally; theory.population.feature_parity states the closed form.)

The classes, derived from the parity rule: for p in {0, 1} ("b-even": p = 0, "b-odd":
p = 1) the class keeps b_r (1-based r) only where r = p (mod 2), and keeps W_QK[l, m]
exactly where every beta_(r,l,m) = b_r W_QK[l, m] with r in that support is an even
feature (:func:`class_masks`).  The result is the checkerboard of docs/math.md section 5.3,
l + m = p + s + 1 (mod 2), which the tests check against this derivation for s = 1..6.

Worked example, s = 2 (b = (b_1, b_2, b_3); W_QK[:, :2] is 3 x 2, rows l = 1..3,
columns m = 1..2; 1 = kept, 0 = zero)::

    b-even:  b mask (0, 1, 0)      W mask [[0, 1],        b-odd:  b mask (1, 0, 1)   [[1, 0],
                                           [1, 0],                                    [0, 1],
                                           [0, 1]]                                    [1, 0]]

(b-even: r = 2 and l + m odd, e.g. beta_(2,1,2) is F_(2,1,2) with r+l+m+s+1 = 8, even.)

Metrics (all in the canonical gauge, largest |b_r| = +1, W_QK rescaled to keep b W_QK):

- out-of-class share: |x_out| / |x| over the counted entries x = (b, W_QK[:, :s]), with
  x_out the entries the class sets to zero -- the primary, threshold-free metric;
- Jaccard distance: 1 - |S intersect S_cls| / |S union S_cls|, S the counted entries whose
  magnitude exceeds ``rel_threshold`` times the largest magnitude in the same matrix (b
  or W_QK[:, :s]), S_cls the class's kept entries (docs/settings.md, Definitions for the
  banding and PCG checks, for the threshold);
- odd share: sqrt(beta_o^T M beta_o / beta_e^T M beta_e) with the population moments M.
"""
from __future__ import annotations

import numpy as np

from .population import feature_list
from .validation import check_finite_array, check_positive_int, check_real

__all__ = [
    "CLASSES",
    "class_parity",
    "feature_is_even",
    "class_masks",
    "class_feature_mask",
    "counted_entries",
    "canonical_gauge",
    "out_of_class_share",
    "classify",
    "jaccard_support_distance",
    "parity_projection",
    "odd_share",
]

#: the two classes, labelled by the parity of the support of b (1-based r).
CLASSES = ("b-even", "b-odd")


def class_parity(cls: str) -> int:
    """p of a class: 0 for "b-even" (b on r = 2, 4, ...), 1 for "b-odd" (r = 1, 3, ...)."""
    if cls not in CLASSES:
        raise ValueError(f"cls must be one of {CLASSES}, got {cls!r}")
    return CLASSES.index(cls)


def feature_is_even(s: int, T: int | None = None) -> np.ndarray:
    """True where F_(r,l,m) y_T keeps its sign under y_k -> (-1)^k y_k (order of feature_list).

    Counts the array positions of the four factors, t + r, t + l, q0 + m, T - 1 (t = 0,
    q0 = T - s - 1); the parity does not depend on t or T (``T`` defaults to s + 2).
    """
    s = check_positive_int("s", s)
    T = s + 2 if T is None else check_positive_int("T", T, minimum=s + 2)
    q0 = T - s - 1
    return np.array([((0 + r) + (0 + l) + (q0 + m) + (T - 1)) % 2 == 0 for r, l, m in feature_list(s)])


def class_masks(s: int, cls: str) -> tuple[np.ndarray, np.ndarray]:
    """(b mask (s+1,), W_QK[:, :s] mask (s+1, s)) of a class, derived from the feature parity.

    b keeps 0-based r with (r + 1) = p (mod 2); W_QK keeps (l, m) iff every feature
    (r, l, m) with r kept is even.

    >>> b, W = class_masks(2, "b-odd")
    >>> b.astype(int).tolist(), W.astype(int).tolist()
    ([1, 0, 1], [[1, 0], [0, 1], [1, 0]])
    """
    s = check_positive_int("s", s)
    p = class_parity(cls)
    b = np.array([(r + 1) % 2 == p for r in range(s + 1)])
    even = feature_is_even(s).reshape(s + 1, s + 1, s)
    W = np.all(even[b], axis=0)
    return b, W


def class_feature_mask(s: int, cls: str) -> np.ndarray:
    """Features (order of feature_list) that an in-class theta can put weight on: b_r W[l, m] kept."""
    b, W = class_masks(s, cls)
    return (b[:, None, None] & W[None, :, :]).ravel()


def _weights(W_V, W_QK):
    W_V = check_finite_array("W_V", W_V, ndim=2)
    W_QK = check_finite_array("W_QK", W_QK, ndim=2)
    k = W_V.shape[0]
    if k < 2 or W_V.shape != (k, k) or W_QK.shape != (k, k):
        raise ValueError(f"W_V and W_QK must be (s+1, s+1) with s >= 1, got {W_V.shape} and {W_QK.shape}")
    return W_V, W_QK, k - 1


def counted_entries(W_V, W_QK) -> tuple[np.ndarray, np.ndarray]:
    """(b, W) = (W_V[s, :], W_QK[:, :s]): the only entries that reach the prediction."""
    W_V, W_QK, s = _weights(W_V, W_QK)
    return W_V[s, :].copy(), W_QK[:, :s].copy()


def canonical_gauge(W_V, W_QK) -> tuple[np.ndarray, np.ndarray]:
    """(W_V / g, W_QK * g), g = the b entry of largest magnitude (first on ties): max |b| = b_r = 1.

    The gauge (W_V, W_QK) -> (W_V / g, g W_QK) leaves every prediction unchanged
    (docs/math.md section 2.1).  Raises ValueError when b = 0 (no gauge to fix).
    """
    W_V, W_QK, s = _weights(W_V, W_QK)
    b = W_V[s, :]
    i = int(np.argmax(np.abs(b)))
    g = b[i]
    if g == 0.0:
        raise ValueError("b = W_V[s, :] is zero: the canonical gauge is undefined")
    return W_V / g, W_QK * g


def _split(W_V, W_QK, cls):
    W_V, W_QK = canonical_gauge(W_V, W_QK)
    b, W = counted_entries(W_V, W_QK)
    bm, Wm = class_masks(b.size - 1, cls)
    return b, W, bm, Wm


def out_of_class_share(W_V, W_QK, cls: str) -> float:
    """|counted entries outside the class| / |all counted entries|, in the canonical gauge."""
    b, W, bm, Wm = _split(W_V, W_QK, cls)
    out = np.concatenate([b[~bm], W[~Wm]])
    return float(np.linalg.norm(out) / np.linalg.norm(np.concatenate([b, W.ravel()])))


def classify(W_V, W_QK) -> tuple[str | None, dict[str, float]]:
    """(the class with the smaller out-of-class share, {class: share}); None on an exact tie."""
    shares = {cls: out_of_class_share(W_V, W_QK, cls) for cls in CLASSES}
    if shares["b-even"] == shares["b-odd"]:
        return None, shares
    return min(shares, key=shares.get), shares


def jaccard_support_distance(W_V, W_QK, cls: str, rel_threshold: float) -> float:
    """1 - |S & S_cls| / |S | S_cls| (module doc); S relative to the largest |entry| per matrix."""
    tau = check_real("rel_threshold", rel_threshold, minimum=0.0, maximum=1.0)
    W_V, W_QK, _ = _weights(W_V, W_QK)
    b, W = counted_entries(W_V, W_QK)
    bm, Wm = class_masks(b.size - 1, cls)

    def support(x):
        top = np.abs(x).max()
        return np.abs(x) > tau * top if top > 0 else np.zeros(x.shape, dtype=bool)
    S = np.concatenate([support(b), support(W).ravel()])
    C = np.concatenate([bm, Wm.ravel()])
    return float(1.0 - (S & C).sum() / (S | C).sum())


def parity_projection(M, c, s: int):
    """(M, c) with the parity zeros imposed: the odd-even blocks of M and the odd part of c
    set to 0 (what a centrally symmetric law of A gives, docs/math.md section 5.2).

    >>> M, c = parity_projection(np.ones((4, 4)), np.ones(4), 1)
    >>> c.tolist(), M[0].tolist()
    ([0.0, 1.0, 1.0, 0.0], [1.0, 0.0, 0.0, 1.0])
    """
    even = feature_is_even(check_positive_int("s", s))
    M = check_finite_array("M", M, ndim=2)
    c = check_finite_array("c", c, ndim=1)
    if M.shape != (even.size, even.size) or c.shape != even.shape:
        raise ValueError(f"M and c must be ({even.size}, {even.size}) and ({even.size},) for s = {s}, "
                         f"got {M.shape} and {c.shape}")
    return np.where(even[:, None] == even[None, :], M, 0.0), np.where(even, c, 0.0)


def odd_share(beta, M, s: int) -> float:
    """sqrt(beta_o^T M beta_o / beta_e^T M beta_e): RMS of the prediction on odd over even features."""
    beta = check_finite_array("beta", beta, ndim=1)
    even = feature_is_even(check_positive_int("s", s))
    if beta.shape != even.shape:
        raise ValueError(f"beta must have {even.size} entries for s = {s}, got {beta.shape}")
    M = np.asarray(M, dtype=float)
    bo = np.where(even, 0.0, beta)
    be = np.where(even, beta, 0.0)
    den = be @ M @ be
    if den <= 0:
        raise ValueError("the even part of beta carries no prediction: odd share undefined")
    return float(np.sqrt(max(bo @ M @ bo, 0.0) / den))
