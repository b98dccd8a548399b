"""The torch sampler of training data: TorchLDSSampler, a port of theory.systems.LDSFamily's law.

Why a port: the noise ((T+1) d + T = 185 normals per system at the defaults) is the
dominant cost of a training step, and ``torch.randn`` on the chosen device draws it
faster than numpy (timings: docs/notes.md, section "Training speed").  The law is the
theory's, read from the family: for the diagonal settings (a, c, asym) lambda_i ~
U[lo, hi) iid with (lo, hi) = ``LDSFamily.eigenvalue_range``, drawn in torch; for b and
d the matrices A come from the theory's own numpy sampler ``LDSFamily.sample_systems``
and are simulated in torch.  The noise factors are ``theory.systems.psd_factor`` of the
family's ``process_noise_cov()`` (sigma_w^2 diag(``noise_weights``)) and
``initial_cov()``.  ``tests/test_trainer.py`` compares the moments with the theory's
exact covariance and exact setting-(a) moments.

>>> from theory.systems import LDSFamily
>>> sampler = TorchLDSSampler(LDSFamily("a", d=2, T=5))
>>> sampler.finish(sampler.draw(3, torch.Generator().manual_seed(0))).shape
torch.Size([5, 3])
"""
from __future__ import annotations

import numpy as np
import torch

from theory.systems import LDSFamily, psd_factor
from theory.validation import check_choice, check_positive_int, check_type

from .runtime import resolve_device

__all__ = ["TorchLDSSampler"]


def _seed_from(generator: torch.Generator) -> int:
    """A 62-bit seed drawn from a torch generator (on its device)."""
    return int(torch.randint(0, 2 ** 62, (1,), generator=generator, device=generator.device).item())


class TorchLDSSampler:
    """A torch port of :class:`theory.systems.LDSFamily` sampling and simulation.

    ``finish(draw(m, generator))`` returns y of ``m`` fresh systems, one trajectory each,
    in time-major layout (T, m) (row t is time t+1; the theory's (m, T) is its ``.T``).
    The law is the family's: x_0 ~ N(0, Sigma_0), x_t = A x_{t-1} + w_t,
    y_t = c^T x_t + v_t (c = 1), A = diag(lambda) with lambda_i ~ U[lo, hi) for a, c,
    asym, A from ``LDSFamily.sample_systems`` for b and d.

    Random streams: lambda (``torch.rand``) and every normal (``torch.randn``) come from
    ``generator`` on the sampler's device; for b and d one 62-bit integer drawn from it
    seeds the numpy generator of ``LDSFamily.sample_systems``.  The same generator state
    gives the same y on the same device; CPU and CUDA streams differ.
    """

    def __init__(self, family: LDSFamily, *, device="cpu", dtype=torch.float32):
        check_type("family", family, LDSFamily, "an LDSFamily")
        check_choice("dtype", dtype, (torch.float32, torch.float64))
        self.family = family
        self.device = resolve_device(device)
        self.dtype = dtype
        self._w = self._prep(psd_factor(family.process_noise_cov()))
        self._x0 = self._prep(psd_factor(family.initial_cov()))

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

    def _simulate_tm(self, m, z, lamT=None, A=None):
        """y (T, m) from standard normals z ((T+1) d m + T m: x_0, w_1..w_T, v_1..v_T) and
        lamT (d, m) [diagonal A] or A (d, d, m).  Overwrites z."""
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
        rows = xs.unbind(0)                                  # x_t = A x_{t-1} + w_t, in place
        if lamT is not None:
            for t in range(T):
                rows[t + 1].addcmul_(lamT, rows[t])
        else:
            for t in range(T):                               # A is (d, d, m)
                rows[t + 1].add_((A * rows[t][None, :, :]).sum(1))
        y = xs[1:].sum(1)                                    # c = 1
        y.add_(v, alpha=float(fam.sigma_v))
        return y

    # -- public -----------------------------------------------------------------------------
    def draw(self, m: int, generator: torch.Generator):
        """The random inputs of ``m`` fresh systems: ``(kind, A_or_lam, z)``.

        ``kind`` is "diag" with lambda of shape (d, m), or "full" with A of shape
        (d, d, m); z holds the (T+1) d m + T m standard normals of x_0, w_1..w_T, v_1..v_T.  Split from
        :meth:`finish` so that the expensive part (the normals) can run on a helper
        thread.
        """
        m = check_positive_int("m", m)
        self._check_gen(generator)
        fam = self.family
        lo, hi = fam.eigenvalue_range
        with torch.no_grad():
            if fam.diagonal:
                lamT = torch.rand(fam.d, m, generator=generator, device=self.device, dtype=self.dtype)
                lamT.mul_(hi - lo).add_(lo)                  # lambda_i ~ U[lo, hi), shape (d, m)
                return "diag", lamT, self._noise(m, generator)
            A = self._matrices(np.random.default_rng(_seed_from(generator)), m)
            return "full", A, self._noise(m, generator)

    def _matrices(self, rng, m):
        """A (d, d, m) from the theory's own sampler (settings b, d)."""
        systems = self.family.sample_systems(rng, m)
        A = torch.as_tensor(systems.A, dtype=self.dtype).permute(1, 2, 0).contiguous()
        return A.to(self.device)

    def finish(self, drawn) -> torch.Tensor:
        """y (T, m) from the output of :meth:`draw` (deterministic; overwrites its z)."""
        kind, arg, z = drawn
        m = arg.shape[-1]
        with torch.no_grad():
            if kind == "diag":
                return self._simulate_tm(m, z, lamT=arg)
            return self._simulate_tm(m, z, A=arg)
