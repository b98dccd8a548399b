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
           Gaussian, signs fixed, as theory.bases.haar_orthogonal) and kept.
d          A = P^-1 diag(lambda) P: R = P = I + 0.3 G / sqrt(d), G iid N(0, 1),
           conditioned on cond_2(P) <= cond_max by rejection (:func:`accept_conditioned`,
           the same decision as theory.bases.conditioned_gaussian), c' = P^-T 1
           (:func:`_observation_vector`).
=========  ==============================================================================

``tests/test_sampler.py`` checks the simulation against the theory's exact covariance
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

from theory.bases import P_SCALE
from theory.systems import LDSFamily, Systems, psd_factor
from theory.validation import check_choice, check_positive_int, check_type

from .runtime import resolve_device

__all__ = ["TorchLDSSampler", "accept_conditioned"]

#: rejection rounds before giving up (as theory.bases.conditioned_gaussian).
_MAX_ROUNDS = 1000


def _round_size(need: int, drawn: int, kept: int) -> int:
    """Candidates to draw when ``need`` more are wanted and ``kept`` of ``drawn`` were accepted.

    need / rate * 1.02 + 8 with the acceptance rate seen so far (1 before any round, at
    least 1/64, which bounds a round's size): at the defaults (about 0.4 % rejected) a
    round of need + 2 % + 8 candidates fails to give need accepted ones with
    probability below 1e-6.

    >>> _round_size(1500, 0, 0), _round_size(10, 1538, 1528), _round_size(10, 100, 0)
    (1538, 19, 661)
    """
    rate = 1.0 if drawn == 0 else max(kept / drawn, 1.0 / 64)
    return int(math.ceil(need / rate * 1.02)) + 8


def _gram(P: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
    """S = P^T P for the (d, d, m) matrices P (batch last), as a sum of d outer products of
    rows, written into ``out`` (a (d, d, m) tensor or view) when given."""
    S = torch.mul(P[0, :, None, :], P[0, None, :, :], out=out)
    for k in range(1, P.shape[0]):
        S.addcmul_(P[k, :, None, :], P[k, None, :, :])
    return S


def _eliminate_(A: torch.Tensor, n: int) -> torch.Tensor:
    """Symmetric Gaussian elimination (no pivoting) of the leading n x n block of the
    (n, n + r, m) matrices A (batch last, r right-hand-side columns), in place: afterwards
    A is upper triangular in its first n columns, with the pivots of A = L D L^T on the
    diagonal and the right-hand sides transformed alike.  Returns whether every pivot is
    positive (Sylvester's criterion: A positive definite; a NaN pivot counts as not).
    Without pivoting this is backward stable for positive definite A.

    >>> A = torch.tensor([[[2.0, 2.0], [1.0, 3.0]], [[1.0, 3.0], [2.0, 4.0]]])  # batch last
    >>> _eliminate_(A, 2).tolist()            # [[2, 1], [1, 2]] yes, [[2, 3], [3, 4]] no
    [True, False]
    """
    ok = A[0, 0] > 0
    for j in range(1, n):
        col = A[j:, j - 1] / A[j - 1, j - 1]
        A[j:, j:].addcmul_(col[:, None, :], A[None, j - 1, j:, :], value=-1.0)
        ok &= A[j, j] > 0
    return ok


def _observation_vector(P: torch.Tensor) -> torch.Tensor:
    """c' = P^-T 1 (d, m) for the well-conditioned (d, d, m) matrices P (batch last).

    P^-T = P (P^T P)^-1, so c' = P y with S y = 1, S = P^T P positive definite (cond_2(S)
    = cond_2(P)^2 <= cond_max^2): elimination without pivoting (:func:`_eliminate_`) and
    back substitution, a few operations on length-m rows instead of m small LAPACK calls.

    >>> P = torch.tensor([[2.0, 1.0], [0.0, 1.0]])[:, :, None]     # P^T c' = 1: c' = (1/2, 1/2)
    >>> _observation_vector(P)[:, 0].tolist()
    [0.5, 0.5]
    """
    d, m = P.shape[0], P.shape[-1]
    A = torch.empty((d, d + 1, m), dtype=P.dtype, device=P.device)
    _gram(P, out=A[:, :d])
    A[:, d] = 1.0
    _eliminate_(A, d)
    y = torch.empty((d, m), dtype=P.dtype, device=P.device)
    for i in reversed(range(d)):
        r = A[i, d].clone()
        for j in range(i + 1, d):
            r.addcmul_(A[i, j], y[j], value=-1.0)
        y[i] = r.div_(A[i, i])
    c = P[:, 0] * y[0]
    for j in range(1, d):
        c.addcmul_(P[:, j], y[j])
    return c


#: relative rounding budget of the cheap test of :func:`accept_conditioned`, in units of
#: d^2 eps cond_max^2 (eight times a first-order bound, see there).
_ROUNDING_FACTOR = 16.0
#: range of U (below) inside which the cheap test of :func:`accept_conditioned` is trusted.
_U_RANGE = (2.0 ** -40, 2.0 ** 40)


def accept_conditioned(P: torch.Tensor, cond_max: float) -> torch.Tensor:
    """cond_2(P) <= cond_max for each of the (d, d, m) matrices P (batch last), exactly.

    With S = P^T P, cond_2(P)^2 = lambda_max(S) / lambda_min(S), and the largest absolute
    row sum U of S bounds lambda_max(S) from above (Gershgorin; about 1.2 lambda_max(S)
    at the defaults).  If S - mu I, mu = U (1 + delta) / cond_max^2, is positive definite
    (:func:`_eliminate_`), then lambda_min(S) > mu >= lambda_max(S) / cond_max^2: accept.
    Every other matrix (about 2 % at the defaults: the rejected 0.4 %, those close to
    the bound, any that is not finite or whose U lies outside ``_U_RANGE``) gets its
    singular values in float64, so the decision is that of
    ``numpy.linalg.cond(P) <= cond_max`` up to float64 rounding.

    The cheap test runs in P's dtype.  Forming S and eliminating perturb it by at most
    about 2 d^2 eps lambda_max(S) (eps of the dtype; Higham, Accuracy and Stability of
    Numerical Algorithms, eq. 3.5 and Thm 10.3, to first order; nothing under- or
    overflows while 2^-40 <= U <= 2^40), and the margin delta = 16 d^2 eps cond_max^2
    (4.3e-4 in float32 at d = 5, cond_max = 3) makes mu exceed lambda_max(S) /
    cond_max^2 by eight times that: a matrix the rounded test accepts is accepted by the
    exact one.  Where delta would exceed 1e-2 (a large cond_max or d in float32) the
    test runs in float64.

    >>> P = torch.tensor([[1.0, 0.0], [0.0, 2.9]])[:, :, None].repeat(1, 1, 2)
    >>> P[1, 1, 1] = 3.1
    >>> accept_conditioned(P, 3.0).tolist()
    [True, False]
    """
    d = P.shape[0]
    kappa2 = float(cond_max) ** 2
    dtype = P.dtype
    delta = _ROUNDING_FACTOR * d * d * torch.finfo(dtype).eps * kappa2
    if delta > 1e-2:
        dtype = torch.float64
        delta = _ROUNDING_FACTOR * d * d * torch.finfo(dtype).eps * kappa2
    S = _gram(P.to(dtype))
    rows = S[0].abs()                                    # S symmetric: row i = column i
    for i in range(1, d):
        rows.add_(S[i].abs())
    U = rows.amax(0)                                     # >= lambda_max(S) (Gershgorin)
    trusted = (U >= _U_RANGE[0]) & (U <= _U_RANGE[1])    # False for NaN and inf too
    S.diagonal(0, 0, 1).sub_((U * ((1.0 + delta) / kappa2))[:, None])    # S - mu I
    accept = trusted & _eliminate_(S, d)
    unsure = torch.nonzero(~accept).flatten()
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
    matrices of Q when the noise is not isotropic); for d the candidate matrices G of P
    ((d, d, k) per rejection round, :meth:`_conditioned`); then the (T+1) d m + T m
    standard normals of x_0, w_1..w_T, v_1..v_T.  The eigenbases (d; b when not
    isotropic) can instead be drawn beforehand by :meth:`draw_bases`, from a generator
    of their own, and passed to :meth:`draw` (the trainer does so).  The same generator
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
        self._isotropic = family.isotropic_noise

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
        """(P, c'): P (d, d, m) = I + scale G / sqrt(d) conditioned on cond_2(P) <= cond_max,
        and c' = P^-T 1 (d, m).

        Rejection in rounds, as theory.bases.conditioned_gaussian: the first round
        draws the m matrices ((d, d, m) standard normals, batch last); each later round
        draws, for the k systems still rejected, k divided by the acceptance rate seen so
        far plus a margin (:func:`_round_size`), and gives its accepted candidates, in
        order, to the rejected systems, in order (so that one extra round nearly always
        suffices; unused candidates are dropped).  Every system ends with a candidate
        drawn iid from the conditioned law, whatever the others: the law of the theory's
        sampler, another stream.
        """
        fam = self.family
        d = fam.d

        def candidates(k):
            cand = self._randn((d, d, k), generator).mul_(P_SCALE / math.sqrt(d))
            cand.diagonal(0, 0, 1).add_(1.0)                 # I + scale G / sqrt(d)
            return cand, accept_conditioned(cand, fam.cond_max)

        P, ok = candidates(m)
        drawn, kept = m, int(ok.sum())
        todo = torch.nonzero(~ok).flatten()                  # rejected systems, in order
        for _ in range(_MAX_ROUNDS):
            if todo.numel() == 0:
                return P, _observation_vector(P)
            k = _round_size(todo.numel(), drawn, kept)
            cand, ok = candidates(k)
            good = torch.nonzero(ok).flatten()[:todo.numel()]
            drawn, kept = drawn + k, kept + int(ok.sum())
            P[:, :, todo[:good.numel()]] = cand[:, :, good]
            todo = todo[good.numel():]
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
    @property
    def needs_bases(self) -> bool:
        """Whether a system carries an eigenbasis R to draw (setting d; setting b when its
        noise is not isotropic): the part of a draw :meth:`draw_bases` makes separately."""
        return self.family.spec.draws_basis(self._isotropic)

    def draw_bases(self, m: int, generator: torch.Generator):
        """``(R, cvec)`` of ``m`` fresh systems (R (d, d, m), cvec = R^-T 1 (d, m)), or None
        when the family has no basis to draw (:attr:`needs_bases`).

        Setting d: P conditioned on cond_2(P) <= cond_max and c' = P^-T 1
        (:meth:`_conditioned`); setting b with non-isotropic noise: Q Haar and c' = Q 1.
        The trainer draws the bases of many steps in one call from a stream of their own
        (models/trainer.py) and hands each shard its columns (``draw(..., bases=)``).
        """
        m = check_positive_int("m", m)
        self._check_gen(generator)
        if not self.needs_bases:
            return None
        with torch.no_grad():
            if self.family.spec.basis == "conditioned":
                return self._conditioned(m, generator)
            Q = self._haar(m, generator)
            return Q, Q.sum(1)                               # c' = Q 1 = Q^-T 1

    def draw(self, m: int, generator: torch.Generator, bases=None):
        """The random inputs of ``m`` fresh systems: ``(kind, args, z)``.

        ``kind`` is "eigen" with ``args = (lamT, R, cvec)`` (module doc; lamT (d, m), R
        (d, d, m) or None for the identity, cvec (d, m) or None for all ones), or, for
        given systems (:meth:`finish` only), "full" with ``args = A`` (d, d, m) or "diag"
        with ``args = lamT``; z holds the (T+1) d m + T m standard normals of x_0,
        w_1..w_T, v_1..v_T.  Split from :meth:`finish` so that the expensive part (the
        normals) can run on a helper thread.

        ``bases``: where :attr:`needs_bases`, the ``(R, cvec)`` of the m systems, drawn
        beforehand by :meth:`draw_bases` (the trainer's route); None draws them here,
        from ``generator`` right after lambda (order of the streams: class doc).
        """
        m = check_positive_int("m", m)
        self._check_gen(generator)
        fam = self.family
        d = fam.d
        lo, hi = fam.eigenvalue_range
        if bases is not None:
            if not self.needs_bases:
                raise ValueError(f"bases must be None for setting {fam.setting!r} "
                                 "(it draws no eigenbasis)")
            if (not isinstance(bases, tuple) or len(bases) != 2
                    or tuple(bases[0].shape) != (d, d, m) or tuple(bases[1].shape) != (d, m)):
                raise ValueError(f"bases must be (R, cvec) of shapes ({d}, {d}, {m}) and ({d}, {m})")
        with torch.no_grad():
            lamT = torch.rand(d, m, generator=generator, device=self.device, dtype=self.dtype)
            lamT.mul_(hi - lo).add_(lo)                      # lambda_i ~ U[lo, hi), shape (d, m)
            R = cvec = None
            if self.needs_bases:
                R, cvec = bases if bases is not None else self.draw_bases(m, generator)
            elif fam.spec.basis == "haar":                   # isotropic: only c' = Q 1
                u = self._randn((d, m), generator)
                cvec = u * (math.sqrt(d) / torch.linalg.vector_norm(u, dim=0))
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
