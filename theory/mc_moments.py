r"""Monte Carlo moments from raw trajectories (docs/math.md section 5.6): the cheap route of setting d.

The exact per-system route (theory.population, method "mc-systems") removes the noise
of each trajectory but costs O((s+1)^6 n^2) per system (about 0.6 ms at s = 4, T = 30);
in setting d the spread of the loss *between* systems dominates anyway (at the s = 4
optimum of setting a: sd about 0.10 between systems against about 0.32 for a single
trajectory), so a trajectory (about 20 us, mostly the sampler) gives more precision per
second.  Both carry batch means, from which theory.optimum takes the standard error of L*.
"""
from __future__ import annotations

import numpy as np

from .population import PopulationMoments, context_pairs, expand_reduced
from .systems import LDSFamily
from .validation import check_generator, check_positive_int, check_type, check_window

__all__ = ["trajectory_moments", "trajectory_moments_windows"]


def trajectory_moments(family: LDSFamily, s: int, m: int, rng: np.random.Generator, *,
                       antithetic: bool = False, batches: int = 32, chunk: int = 20000) -> PopulationMoments:
    """Monte Carlo over raw trajectories: sample means of F F^T, F y_T, y_T^2 (docs/math.md section 5.6).

    One trajectory per fresh system, m in all, split into ``batches`` equal blocks (each
    drawn in pieces of at most ``chunk``).  No exact moment is used, so it works for
    every setting.  ``antithetic``: pair each y with y'_k = (-1)^k y_k, a draw of the
    system -A (docs/math.md section 5.1).  F(y') = +-F(y) by parity, so the pair mean
    keeps the even-even and odd-odd blocks of M, the even part of c and v *unchanged*
    and sets the odd-even block of M and the odd part of c to exactly zero: it is the
    parity projection, valid only for a symmetric law, it does not reduce the variance
    of the blocks it keeps, and it makes the parity zeros hold by construction -- never
    use it to check them.  (Flipping y -> -y instead changes nothing: every moment here
    is of even degree.)
    """
    return trajectory_moments_windows(family, (s,), m, rng, antithetic=antithetic, batches=batches,
                                      chunk=chunk)[s]


def trajectory_moments_windows(family: LDSFamily, windows, m: int, rng: np.random.Generator, *,
                               antithetic: bool = False, batches: int = 32,
                               chunk: int = 20000) -> dict:
    """:func:`trajectory_moments` for several windows s on the same trajectories: {s: moments}.

    The trajectories (and so the random stream) do not depend on ``windows``: one window
    gives exactly :func:`trajectory_moments`.
    """
    family = check_type("family", family, LDSFamily, "an LDSFamily")
    check_generator("rng", rng)
    if isinstance(windows, (int, np.integer)) or not len(windows):
        raise ValueError(f"windows must be a non-empty sequence of windows s, got {windows!r}")
    windows = tuple(check_window(s, family.T)[0] for s in windows)
    T = family.T
    m = check_positive_int("m", m, minimum=2)
    chunk = check_positive_int("chunk", chunk)
    B = min(check_positive_int("batches", batches), m)
    edges = (np.arange(B + 1) * m) // B
    acc = {s: _Accumulator(s, T, B, antithetic) for s in windows}
    for j in range(B):
        left = int(edges[j + 1] - edges[j])
        while left > 0:
            k = min(chunk, left)
            _, y = family.sample(rng, k)
            for a in acc.values():
                a.add(j, y)
            left -= k
    return {s: a.moments(m, edges) for s, a in acc.items()}


class _Accumulator:
    """Running sums of F F^T, F y_T, y_T^2 (and their squares) for one window, per batch."""

    def __init__(self, s, T, B, antithetic):
        self.s, self.T, self.antithetic = s, T, antithetic
        self.n = T - s - 1
        self.ri, self.li = context_pairs(s)
        f_r = self.f_r = self.ri.size * s
        self.keep = np.ones((f_r, f_r), dtype=bool)
        self.keep_c = np.ones(f_r, dtype=bool)
        if antithetic:
            par = ((self.ri[:, None] + self.li[:, None] + np.arange(s)[None, :] + s) % 2).ravel()
            self.keep = par[:, None] == par[None, :]
            self.keep_c = par == 0
        self.acc = np.zeros((B, f_r * f_r + f_r + 1))
        self.acc_sq = np.zeros(f_r * f_r + f_r + 1)
        self.cols = np.arange(s + 1)[:, None] + np.arange(self.n)[None, :]

    def add(self, j, y):
        s, T, n = self.s, self.T, self.n
        q0 = n
        k = y.shape[0]
        Z = y[:, self.cols]                                          # (k, s+1, n)
        C = np.einsum("kat,kbt->kab", Z, Z) / n
        F = (C[:, self.ri, self.li][:, :, None] * y[:, None, q0:q0 + s]).reshape(k, self.f_r)
        yT = y[:, T - 1]
        F2 = F * F
        self.acc[j] += np.concatenate([(F.T @ F).ravel(), F.T @ yT, [yT @ yT]])
        self.acc_sq += np.concatenate([(F2.T @ F2).ravel(), F2.T @ (yT * yT), [(yT ** 2) @ (yT ** 2)]])

    def moments(self, m, edges) -> PopulationMoments:
        s, f_r = self.s, self.f_r
        B = self.acc.shape[0]
        mean = self.acc.sum(0) / m
        var = np.maximum(self.acc_sq / m - mean ** 2, 0.0) * m / (m - 1)
        bmean = self.acc / np.diff(edges)[:, None]

        def split(x):
            lead = x.shape[:-1]
            M = np.where(self.keep, x[..., :f_r * f_r].reshape(lead + (f_r, f_r)), 0.0)
            c = np.where(self.keep_c, x[..., f_r * f_r:-1], 0.0)
            return (*expand_reduced(s, M, c), x[..., -1])
        M, c, v = split(mean)
        M_se, c_se, v_se = split(np.sqrt(var / m))
        return PopulationMoments(s=s, M=M, c=c, v=float(v), M_se=M_se, c_se=c_se, v_se=float(v_se),
                                 method="mc-trajectories" + ("-antithetic" if self.antithetic else ""),
                                 m=m, batches=split(bmean) if B >= 2 else None)
