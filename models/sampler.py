r"""The torch sampler of training data: TorchLDSSampler, a port of theory.systems.LDSFamily's law.

Why a port: drawing the systems and the noise ((T+1) d + T = 185 normals per system at
the defaults) is the dominant cost of a training step, and torch on the chosen device
draws them faster than numpy (timings: docs/notes.md, section "Training speed").  The
law is the theory's, read from the family: lambda_i ~ U[lo, hi) iid with (lo, hi) =
``LDSFamily.eigenvalue_range``, the noise factors ``theory.systems.psd_factor`` of the
family's ``process_noise_cov()`` and ``initial_cov()``, and for settings b and d the
eigenbasis of A drawn in torch as the theory draws it.

Every setting is simulated in the eigenbasis of A (docs/math.md section 1.2).  With
A = R^-1 diag(lambda) R and x' = R x::

    x'_0 = R x_0,   x'_t = lambda * x'_{t-1} + R w_t,   y_t = c'^T x'_t + v_t,   c' = R^-T c,

a diagonal recursion (one fused multiply-add per step) after one mixing of the noise by R.

=========  ==============================================================================
a, c, asym R = I, c' = 1.
b          A = Q^T diag(lambda) Q, Q Haar: R = Q, c' = Q 1.  With isotropic Sigma_0 and
           Sigma_w (the setting's law) R w_t and R x_0 have the law of w_t and x_0, so R
           is dropped and only c' = Q 1 is needed: uniform on the sphere of radius
           sqrt(d), drawn as sqrt(d) u / |u|, u ~ N(0, I) (the reduction of
           theory.coordinate.setting_weight_moments).  Otherwise Q is drawn (QR of a
           Gaussian, signs fixed, as theory.systems.haar_orthogonal) and kept.
d          A = P^-1 diag(lambda) P: R = P = I + 0.3 G / sqrt(d), G iid N(0, 1),
           conditioned on cond_2(P) <= cond_max by rejection (:func:`accept_conditioned`,
           the same decision as theory.systems.conditioned_gaussian), c' = P^-T 1.
=========  ==============================================================================

``tests/test_trainer.py`` checks the simulation against the theory's exact covariance
given the systems (:meth:`TorchLDSSampler.systems` turns a draw into
``theory.systems.Systems``), the law of the systems against the numpy sampler, and the
marginal moments against the exact setting-(a) moments.

>>> from theory.systems import LDSFamily
>>> sampler = TorchLDSSampler(LDSFamily("a", d=2, T=5))
>>> sampler.finish(sampler.draw(3, torch.Generator().manual_seed(0))).shape
torch.Size([5, 3])
"""
from __future__ import annotations

import math

import numpy as np
import torch

from theory.systems import P_SCALE, LDSFamily, Systems, psd_factor
from theory.validation import check_choice, check_positive_int, check_type

from .runtime import resolve_device

__all__ = ["TorchLDSSampler", "accept_conditioned"]

#: squarings behind the cheap condition-number bounds of :func:`accept_conditioned` (k = 2^j).
_SQUARINGS = 3
#: rejection rounds before giving up (as theory.systems.conditioned_gaussian).
_MAX_ROUNDS = 1000


def _mm(A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
    """Batched product of (d, d, m) matrices (batch last): faster than bmm for d = 5."""
    return (A[:, :, None, :] * B[None, :, :, :]).sum(1)


def accept_conditioned(P: torch.Tensor, Pinv: torch.Tensor, cond_max: float) -> torch.Tensor:
    """cond_2(P) <= cond_max for each of the (d, d, m) matrices P (batch last), exactly.

    cond_2(P)^2 = lambda_max(S) lambda_max(S^-1), S = P^T P, and for k = 2^j (j =
    ``_SQUARINGS`` squarings) lambda_max(S)^k <= |S^k|_F <= sqrt(d) lambda_max(S)^k, so
    with U = (|S^k|_F |S^-k|_F)^(1/k)

        U / d^(1/k)  <=  cond_2(P)^2  <=  U.

    U <= cond_max^2 accepts, U / d^(1/k) > cond_max^2 rejects (each with a relative
    margin of 1e-4 for the float32 arithmetic); only the matrices in between (about 2 %
    at the defaults), and any whose bound is not finite, get their singular values in
    float64, so the decision is that of ``numpy.linalg.cond(P) <= cond_max`` up to
    float64 rounding.  P is first scaled to max |P_ij| = 1 (cond is scale-free), so that
    lambda_max(S) >= 1 and nothing underflows; a bound that overflows is decided exactly too.
    """
    d = P.shape[0]
    top_entry = P.abs().amax((0, 1))                     # cond is scale-free: max |P_ij| = 1
    Pn, Pinv = P / top_entry, Pinv * top_entry           # so lambda_max(S) >= 1, no underflow
    S = _mm(Pn.transpose(0, 1), Pn)
    Si = _mm(Pinv, Pinv.transpose(0, 1))
    for _ in range(_SQUARINGS):
        S, Si = _mm(S, S), _mm(Si, Si)
    k = 2 ** _SQUARINGS
    prod = S.double().square().sum((0, 1)) * Si.double().square().sum((0, 1))   # U^(2k)
    top = float(cond_max) ** (4 * k)                                          # (cond_max^2)^(2k)
    finite = torch.isfinite(prod)
    accept = finite & (prod <= top * (1.0 - 1e-4))
    reject = finite & (prod > top * float(d * d) * (1.0 + 1e-4))            # U^(2k) <= d^2 cond^(4k)
    unsure = torch.nonzero(~(accept | reject)).flatten()                    # includes NaN
    if unsure.numel():
        sv = torch.linalg.svdvals(P[:, :, unsure].permute(2, 0, 1).double())
        accept[unsure] = (sv[:, -1] > 0) & (sv[:, 0] <= cond_max * sv[:, -1])
    return accept


class TorchLDSSampler:
    """A torch port of :class:`theory.systems.LDSFamily` sampling and simulation.

    ``finish(draw(m, generator))`` returns y of ``m`` fresh systems, one trajectory each,
    in time-major layout (T, m) (row t is time t+1; the theory's (m, T) is its ``.T``).
    The law is the family's (module doc): x_0 ~ N(0, Sigma_0), x_t = A x_{t-1} + w_t,
    y_t = c^T x_t + v_t (c = 1).

    Random streams: everything comes from ``generator`` on the sampler's device, in this
    order: lambda (``torch.rand``, (d, m)); for b the vector u ((d, m), or the Gaussian
    matrices of Q when the noise is not isotropic); for d the matrices G of P ((d, d, m)
    per rejection round, each round redrawing only the rejected systems); then the
    (T+1) d m + T m standard normals of x_0, w_1..w_T, v_1..v_T.  The same generator
    state gives the same y on the same device; CPU and CUDA streams differ.
    """

    def __init__(self, family: LDSFamily, *, device="cpu", dtype=torch.float32):
        check_type("family", family, LDSFamily, "an LDSFamily")
        check_choice("dtype", dtype, (torch.float32, torch.float64))
        self.family = family
        self.device = resolve_device(device)
        self.dtype = dtype
        self._w = self._prep(psd_factor(family.process_noise_cov()))
        self._x0 = self._prep(psd_factor(family.initial_cov()))
        # setting b: the orthogonal R leaves isotropic noise unchanged in law (module doc)
        self._isotropic = self._w[0] == "scalar" and self._x0[0] == "scalar"

    def _prep(self, fac):
        kind, val = fac
        if kind == "scalar":
            return kind, val
        t = torch.as_tensor(val, dtype=self.dtype, device=self.device)
        return kind, (t[:, None] if kind == "diag" else t)

    # -- helpers --------------------------------------------------------------------------
    @staticmethod
    def _scale(kind, val, z):
        """Apply the noise factor to z of shape (..., d, m) in place where possible."""
        if kind == "scalar":
            return z if val == 1.0 else z.mul_(val)
        if kind == "diag":
            return z.mul_(val)
        return torch.matmul(val, z)

    def _check_gen(self, generator):
        check_type("generator", generator, torch.Generator, "a torch.Generator")
        if generator.device.type != self.device.type:
            raise ValueError(f"generator is on {generator.device}, the sampler on {self.device}")

    def _n_noise(self, m):
        T, d = self.family.T, self.family.d
        return (T + 1) * d * m + T * m

    def _noise(self, m, generator):
        """(T+1) d m + T m standard normals: x_0, w_1..w_T, v_1..v_T (before scaling)."""
        return torch.randn(self._n_noise(m), generator=generator, device=self.device,
                           dtype=self.dtype)

    def _randn(self, shape, generator):
        return torch.randn(shape, generator=generator, device=self.device, dtype=self.dtype)

    def _haar(self, m, generator):
        """Q (d, d, m), Haar: QR of a Gaussian with the signs of diag(R) fixed."""
        d = self.family.d
        Q, Rf = torch.linalg.qr(self._randn((m, d, d), generator))
        sgn = torch.sign(torch.diagonal(Rf, dim1=1, dim2=2))
        sgn[sgn == 0] = 1.0
        return (Q * sgn[:, None, :]).permute(1, 2, 0).contiguous()

    def _conditioned(self, m, generator):
        """(P, P^-1), each (d, d, m): P = I + scale G / sqrt(d) conditioned on cond_2(P) <= cond_max.

        Rejection in rounds: the first round draws all m matrices, each later one redraws
        only the rejected systems (in order), as theory.systems.conditioned_gaussian.
        """
        fam = self.family
        d = fam.d
        eye = torch.eye(d, dtype=self.dtype, device=self.device)[:, :, None]

        def candidates(k):
            cand = eye + (P_SCALE / math.sqrt(d)) * self._randn((d, d, k), generator)
            inv, info = torch.linalg.inv_ex(cand.permute(2, 0, 1))
            inv = inv.permute(1, 2, 0).contiguous()
            return cand, inv, accept_conditioned(cand, inv, fam.cond_max) & (info == 0)

        P, Pinv, ok = candidates(m)
        todo = torch.nonzero(~ok).flatten()
        for _ in range(_MAX_ROUNDS):
            if todo.numel() == 0:
                return P, Pinv
            cand, inv, ok = candidates(todo.numel())
            P[:, :, todo[ok]] = cand[:, :, ok]
            Pinv[:, :, todo[ok]] = inv[:, :, ok]
            todo = todo[~ok]
        raise ValueError(f"cond_max={fam.cond_max} is too small: rejection sampling did not finish")

    def _simulate_tm(self, m, z, lamT=None, A=None, R=None, cvec=None):
        """y (T, m) from standard normals z ((T+1) d m + T m: x_0, w_1..w_T, v_1..v_T) and
        either lamT (d, m) [the eigenbasis: mixing R (d, d, m) or None = I, observation
        vector cvec (d, m) or None = 1] or A (d, d, m) [any given system].  Overwrites z."""
        fam = self.family
        T, d = fam.T, fam.d
        nx = (T + 1) * d * m
        xs = z[:nx].view(T + 1, d, m)
        v = z[nx:].view(T, m)
        kind0, val0 = self._x0
        if kind0 == "full":
            xs[0] = val0 @ xs[0]
        else:
            self._scale(kind0, val0, xs[0])
        kindw, valw = self._w
        if kindw == "full":
            xs[1:] = torch.matmul(valw, xs[1:])
        else:
            self._scale(kindw, valw, xs[1:])
        if R is not None:                                    # x'_0 = R x_0, w'_t = R w_t
            mixed = xs[:, 0:1, :] * R[None, :, 0, :]
            for j in range(1, d):
                mixed.addcmul_(xs[:, j:j + 1, :], R[None, :, j, :])
            xs = mixed
        rows = xs.unbind(0)                                  # x_t = A x_{t-1} + w_t, in place
        if lamT is not None:
            for t in range(T):
                rows[t + 1].addcmul_(lamT, rows[t])
        else:
            for t in range(T):                               # A is (d, d, m)
                rows[t + 1].add_((A * rows[t][None, :, :]).sum(1))
        y = xs[1:].sum(1) if cvec is None else (xs[1:] * cvec[None]).sum(1)
        y.add_(v, alpha=float(fam.sigma_v))
        return y

    # -- public -----------------------------------------------------------------------------
    def draw(self, m: int, generator: torch.Generator):
        """The random inputs of ``m`` fresh systems: ``(kind, args, z)``.

        ``kind`` is "eigen" with ``args = (lamT, R, cvec)`` (module doc; lamT (d, m), R
        (d, d, m) or None for the identity, cvec (d, m) or None for all ones), or, for
        given systems (:meth:`finish` only), "full" with ``args = A`` (d, d, m) or "diag"
        with ``args = lamT``; z holds the (T+1) d m + T m standard normals of x_0,
        w_1..w_T, v_1..v_T.  Split from :meth:`finish` so that the expensive part (the
        normals, and the matrices of setting d) can run on a helper thread.
        """
        m = check_positive_int("m", m)
        self._check_gen(generator)
        fam = self.family
        d = fam.d
        lo, hi = fam.eigenvalue_range
        with torch.no_grad():
            lamT = torch.rand(d, m, generator=generator, device=self.device, dtype=self.dtype)
            lamT.mul_(hi - lo).add_(lo)                      # lambda_i ~ U[lo, hi), shape (d, m)
            R = cvec = None
            if fam.setting == "b":
                if self._isotropic:
                    u = self._randn((d, m), generator)
                    cvec = u * (math.sqrt(d) / torch.linalg.vector_norm(u, dim=0))
                else:
                    R = self._haar(m, generator)
                    cvec = R.sum(1)                          # Q 1
            elif fam.setting == "d":
                R, Rinv = self._conditioned(m, generator)
                cvec = Rinv.sum(0)                           # P^-T 1
            return "eigen", (lamT, R, cvec), self._noise(m, generator)

    def finish(self, drawn) -> torch.Tensor:
        """y (T, m) from the output of :meth:`draw` (deterministic; overwrites its z)."""
        kind, arg, z = drawn
        with torch.no_grad():
            if kind == "eigen":
                lamT, R, cvec = arg
                return self._simulate_tm(lamT.shape[-1], z, lamT=lamT, R=R, cvec=cvec)
            if kind == "diag":
                return self._simulate_tm(arg.shape[-1], z, lamT=arg)
            return self._simulate_tm(arg.shape[-1], z, A=arg)

    def systems(self, drawn) -> Systems:
        """The systems of a draw as a :class:`theory.systems.Systems` batch (float64), for checks.

        A = R^-1 diag(lambda) R.  Where R was dropped (setting b, isotropic noise) any
        orthogonal Q with Q 1 = c' gives the same law of y (module doc): the Householder
        reflection that maps 1 to c'.
        """
        kind, arg, _ = drawn
        if kind != "eigen":
            raise ValueError(f"drawn must come from draw() (kind 'eigen'), got kind {kind!r}")
        fam = self.family
        d = fam.d
        lam = arg[0].double().cpu().numpy().T                # (m, d)
        m = lam.shape[0]
        R, cvec = arg[1], arg[2]
        if R is not None:
            Rn = R.double().cpu().permute(2, 0, 1).numpy()
        elif cvec is not None:                               # Householder: H 1 = c'
            c = cvec.double().cpu().numpy().T
            u = np.ones(d)[None, :] - c
            nu = np.einsum("md,md->m", u, u)
            Rn = np.broadcast_to(np.eye(d), (m, d, d)).copy()
            ok = nu > 1e-30
            Rn[ok] -= 2.0 * u[ok, :, None] * u[ok, None, :] / nu[ok, None, None]
        else:
            Rn = None
        if Rn is None:
            A = np.zeros((m, d, d))
            A[:, np.arange(d), np.arange(d)] = lam
            keep = lam
        else:
            A = np.linalg.solve(Rn, lam[:, :, None] * Rn)
            keep = None
        return Systems(A=A, c=np.ones((m, d)), Sigma_w=fam.process_noise_cov(),
                       Sigma_0=fam.initial_cov(), sigma_v=fam.sigma_v, lam=keep, T=fam.T)
