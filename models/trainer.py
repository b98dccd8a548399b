r"""Training the linear self-attention layer with the paper's protocol (MATH.md section 2).

Protocol (paper, section "training"; the numbers the summaries give are the defaults)::

    every step: a fresh batch of ``batch`` new systems (new A, new noise) from the setting,
                one trajectory y_1..y_T each;
    loss      = mean over the batch of 1/2 (y_hat_T - y_T)^2,  y_hat_T from the LSA layer;
    optimiser = AdamW, global-norm gradient clipping, linear warm-up then cosine annealing;
    8000 steps, batch 3000 (AR(1)), T = 30, d = 5, sigma_w = sigma_v = 0.1.

Choices the paper leaves open, fixed here (and part of :meth:`TrainConfig.key`):

* ``lr = 1e-3`` peak.  Scanned on setting (a), AR(1), the paper protocol, 3 seeds:
  see the table in :class:`TrainConfig`.
* ``warmup_steps = None`` -> 5 % of ``steps`` (400 of 8000), linear from lr/warmup to lr.
* cosine annealing from ``lr`` to ``lr_min = 0`` over the remaining steps.
* ``betas = (0.9, 0.999)``, ``eps = 1e-8`` (AdamW defaults).
* ``grad_clip = 1000`` (max global gradient norm): a guard against divergence that does
  not bind near the optimum.  Measured at theta* with batches of 3000: 99th percentiles
  of the batch-gradient norm 0.46 (a), 2.1 (b), 0.50 (c), 1.5 (d), largest seen 5.9
  (2 % of the batches of settings b and d exceed 1).  The paper states clipping but not its threshold.  A threshold that
  binds re-weights the batches, so its fixed point is not a minimiser of L: with
  ``grad_clip = 1`` the paper protocol learned kappa +1.3 % off in setting b (3 seeds),
  and +72 % off in a heavier-tailed variant of setting d (P iid N(0, 1), cond <= 10,
  where every batch was clipped), while without clipping that variant landed at +1.6 %.
* ``weight_decay = 0``.  The paper uses AdamW but does not state its decay.  AdamW's
  decoupled decay multiplies every weight by (1 - lr * weight_decay) each step,
  whatever the gradient, so its fixed point is not a minimiser of L: it shrinks the
  learned product b W, biasing the learned kappa towards 0.  Set it explicitly to
  study that.
* initial weights iid N(0, 0.01^2) (``init_scale``); ``seed`` drives everything.

How the loss is computed (``forward="effective"``, the default).  The layer's
prediction is, exactly and for every theta (models/attention.py, MATH.md section 2)::

    y_hat_T = [T_theta(Y_0)]_{s+1, n+1} = b^T C W_QK z_q = sum_{r,l,m} b_r W_QK[l,m] C[r,l] z_q[m],

so each step computes the features F[r,l,m] = C[r,l] z_q[m] of the batch (the lagged
second moments of the context, by one small matrix product), and the loss
1/2 mean (beta . F - y_T)^2 with beta[r,l,m] = b_r W_QK[l,m] built *from the layer's own
parameters* ``W_V`` and ``W_QK``; autograd differentiates through beta to them.  This is
the same function of (W_V, W_QK) as the full forward pass, not an approximation:
``tests/test_trainer.py`` checks loss and gradients against
``LinearSelfAttention.forward`` to 1e-12 in float64, and every run re-checks it on the
final weights (``TrainResult.eval_loss`` is computed by the full forward pass, in float64,
on a held-out batch, and must agree with the effective form).  ``forward="model"``
trains through ``LinearSelfAttention.forward`` literally (about 2x slower on 2 CPU cores:
that forward pass alone costs ~1.4 ms per batch of 3000 there, torch's broadcast
matmuls of (s+1) x (s+1) matrices over a batch being slow on a CPU).

Data.  :class:`TorchLDSSampler` is a torch port of :class:`theory.systems.LDSFamily`'s
sampler, so that the noise ((T+1) d + T = 185 normals per system, the dominant cost)
comes from ``torch.randn`` (about 3.5-4 ns/sample on the 2-core box; numpy's about 9) on
the chosen device.  Settings a, c, asym draw lambda ~ U[lo, 1) in torch; settings b and d
draw A with the theory's own numpy sampler (``LDSFamily.sample_systems``) and simulate
in torch.  ``tests/test_trainer.py`` compares its moments with the theory's exact
covariance and exact setting-(a) moments.

Speed (CPU).  Each step's batch is cut into shards of at most ``SHARD_SIZE`` systems,
each drawn from its own generator seeded by ``(seed, step, shard)``.  With k torch
threads available, k - 1 helper threads draw the random inputs of the next steps'
shards (``torch.rand`` + ``torch.randn``: ~70 % of the work, long kernels that release
the GIL) while the main thread simulates the trajectories, builds the features and
takes the optimiser step; a shard no helper has started yet the main thread draws
itself.  The streams depend only on the configuration, never on the thread count or
the scheduling, so the same seed gives bitwise the same weights on a given CPU.  During
training the process's torch intra-op thread count is set to 1 (the parallelism is the
helpers') and restored afterwards.  Measured on the 2-core CI box: one paper-protocol
AR(1) run (8000 x 3000) takes about 15 s (a straightforward loop: about 25 s); see
tests/benchmarks/test_bench_train.py.  On CUDA everything runs on the device, in order.

Example
-------
>>> cfg = TrainConfig("a", steps=50, batch=64, seed=1)
>>> res = train(cfg, device="cpu", progress=False)
>>> res.W_V.shape, res.W_QK.shape
((2, 2), (2, 2))
"""
from __future__ import annotations

import collections
import dataclasses
import hashlib
import json
import math
import numbers
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np
import torch

from theory.systems import SETTINGS, LDSFamily, Systems

from .attention import LinearSelfAttention, build_tokens
from .runtime import resolve_device, torch_threads

__all__ = [
    "TrainConfig",
    "TrainResult",
    "TorchLDSSampler",
    "train",
    "lr_schedule",
    "effective_features",
    "effective_loss",
    "stream_seed",
    "KEY_FORMAT",
    "SHARD_SIZE",
]

#: Version of the training algorithm + key layout; bump when results would change.
KEY_FORMAT = "ldsicl-train-1"
#: Largest number of systems one generator stream draws in a step (see module doc).
SHARD_SIZE = 1536
#: How many steps ahead the CPU thread pool prepares batches.
_PREFETCH = 3

_DTYPES = {"float32": torch.float32, "float64": torch.float64}
_FORWARDS = ("effective", "model")
_INITS = ("normal", "zeros")

# purposes of the random streams (first word after the seed)
_STREAM_TRAIN, _STREAM_INIT, _STREAM_EVAL = 0, 1, 2
_MASK64 = (1 << 64) - 1


# ----------------------------------------------------------------------------- seeds
def _splitmix64(x: int) -> int:
    x = (x + 0x9E3779B97F4A7C15) & _MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK64
    return x ^ (x >> 31)


def stream_seed(*words: int) -> int:
    """A 63-bit seed from a tuple of non-negative integers (splitmix64 chain).

    Used as ``stream_seed(config.seed, purpose, step, shard)``: every (step, shard) has its
    own independent-looking stream, reproducible in any order and from any thread.
    """
    h = 0x6A09E667F3BCC909
    for w in words:
        if isinstance(w, bool) or not isinstance(w, numbers.Integral) or w < 0:
            raise ValueError(f"stream_seed words must be non-negative integers, got {w!r}")
        w = int(w)
        while True:  # fold arbitrarily large words 64 bits at a time
            h = _splitmix64(h ^ (w & _MASK64))
            w >>= 64
            if not w:
                break
    return h >> 1


# ----------------------------------------------------------------------------- config
def _check_int(name, value, minimum):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def _check_real(name, value, *, minimum=None, strict=False, maximum=None, strict_max=False):
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, np.floating, np.integer)):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(f"{name} must be finite, got {value!r}")
    if minimum is not None and (v < minimum or (strict and v == minimum)):
        raise ValueError(f"{name} must be {'>' if strict else '>='} {minimum}, got {value!r}")
    if maximum is not None and (v > maximum or (strict_max and v == maximum)):
        raise ValueError(f"{name} must be {'<' if strict_max else '<='} {maximum}, got {value!r}")
    return v


#: the system family's defaults (theory.systems.LDSFamily is their one source).
_FAMILY_DEFAULTS = {f.name: f.default for f in dataclasses.fields(LDSFamily) if f.init}


@dataclass(frozen=True)
class TrainConfig:
    """Everything that determines a training run (and nothing else: not the device).

    Data (as :class:`theory.systems.LDSFamily`): ``setting`` in a, b, c, d, asym; ``d``,
    ``T``, ``sigma_w``, ``sigma_v``, ``sigma_0``, ``cond_max`` (setting d only).
    Model: window ``s`` (need T > s + 1), ``init`` ("normal"/"zeros"), ``init_scale``.
    Protocol: ``steps``, ``batch`` (fresh systems per step), AdamW with ``lr`` (peak),
    ``betas``, ``eps``, ``weight_decay``; ``grad_clip`` (max global gradient norm, None =
    off); ``warmup_steps`` (linear warm-up; None = 5 % of steps, rounded); cosine
    annealing from lr to ``lr_min`` afterwards; ``seed``; ``dtype`` ("float32", the usual
    training precision (the paper does not say), or "float64"); ``forward``
    ("effective" or "model", module doc).

    Default ``lr = 1e-3``, from a scan on setting (a), AR(1), the full paper protocol
    (8000 x 3000, warm-up 400, cosine to 0): relative error of the learned
    gauge-invariant coefficient b_2 W[1,1] + b_1 W[2,1] against the exact kappa
    0.2052454..., and excess population loss L(theta) - L* (exact, from
    theory.population; L* = 0.0841650), per seed 0, 1, 2, (3, 4)::

        lr     relative error of the coefficient            excess loss (1e-6)
        3e-4   +0.40%  -0.22%  -0.24%                       0.47 0.28 0.49
        1e-3   -0.03%  -0.45%  -0.35%  +0.39%  -0.56%       1.3  0.61 1.5  0.45 3.6
        2e-3   -0.31%  +0.16%  -0.15%  +1.01%  -0.55%       6.0  0.19 1.2  3.1  4.3
        3e-3   -0.48%  +0.54%  -0.08%                       9.3  0.94 1.3
        1e-2   -0.83%  +1.21%  -0.99%                       5.5  4.2  4.5
        3e-2   -1.50%  +2.00%  -2.00%                       8.7  16.7 18.6

    Above 3e-3 the final iterate carries visible gradient noise; 1e-3 is as accurate as
    3e-4 while leaving about 3x more room to travel (with Adam a weight moves at most
    about sum(lr_t) ~ 4.2 over the schedule) for larger windows and other settings.
    Short runs need a larger lr: at 1500 steps x 1000, lr 1e-3 left one seed in six far
    from the optimum (coefficient -53 %), lr 2e-3 to 1e-2 reached all six (errors 0.1-6 %,
    the sampling noise of so short a run).  Every bad field raises a ``ValueError`` whose
    message starts with its name.
    """

    setting: str = "a"
    s: int = 1
    d: int = _FAMILY_DEFAULTS["d"]
    T: int = _FAMILY_DEFAULTS["T"]
    sigma_w: float = _FAMILY_DEFAULTS["sigma_w"]
    sigma_v: float = _FAMILY_DEFAULTS["sigma_v"]
    sigma_0: float = _FAMILY_DEFAULTS["sigma_0"]
    cond_max: float = _FAMILY_DEFAULTS["cond_max"]
    steps: int = 8000
    batch: int = 3000
    lr: float = 1e-3
    lr_min: float = 0.0
    warmup_steps: int | None = None
    weight_decay: float = 0.0
    betas: tuple = (0.9, 0.999)
    eps: float = 1e-8
    grad_clip: float | None = 1000.0
    init: str = "normal"
    init_scale: float = 0.01
    seed: int = 0
    dtype: str = "float32"
    forward: str = "effective"

    def __post_init__(self):
        put = lambda k, v: object.__setattr__(self, k, v)  # noqa: E731 - frozen dataclass
        if not isinstance(self.setting, str) or self.setting not in SETTINGS:
            raise ValueError(f"setting must be one of {SETTINGS}, got {self.setting!r}")
        put("s", _check_int("s", self.s, 1))
        put("d", _check_int("d", self.d, 1))
        put("T", _check_int("T", self.T, 3))
        if self.T <= self.s + 1:
            raise ValueError(f"T must exceed s + 1 = {self.s + 1} (n = T - s - 1 context tokens), "
                             f"got T={self.T}")
        for name in ("sigma_w", "sigma_v", "sigma_0"):
            put(name, _check_real(name, getattr(self, name), minimum=0.0))
        put("cond_max", _check_real("cond_max", self.cond_max, minimum=1.0))
        put("steps", _check_int("steps", self.steps, 1))
        put("batch", _check_int("batch", self.batch, 1))
        put("lr", _check_real("lr", self.lr, minimum=0.0, strict=True))
        put("lr_min", _check_real("lr_min", self.lr_min, minimum=0.0, maximum=self.lr))
        if self.warmup_steps is not None:
            put("warmup_steps", _check_int("warmup_steps", self.warmup_steps, 0))
            if self.warmup_steps > self.steps:
                raise ValueError(f"warmup_steps must be <= steps = {self.steps}, "
                                 f"got {self.warmup_steps}")
        put("weight_decay", _check_real("weight_decay", self.weight_decay, minimum=0.0))
        betas = self.betas
        if isinstance(betas, (str, bytes)) or not hasattr(betas, "__len__") or len(betas) != 2:
            raise ValueError(f"betas must be a pair (beta1, beta2), got {betas!r}")
        put("betas", tuple(_check_real(f"betas[{i}]", b, minimum=0.0, maximum=1.0, strict_max=True)
                           for i, b in enumerate(betas)))
        put("eps", _check_real("eps", self.eps, minimum=0.0, strict=True))
        if self.grad_clip is not None:
            put("grad_clip", _check_real("grad_clip", self.grad_clip, minimum=0.0, strict=True))
        if self.init not in _INITS:
            raise ValueError(f"init must be one of {_INITS}, got {self.init!r}")
        put("init_scale", _check_real("init_scale", self.init_scale, minimum=0.0))
        seed = _check_int("seed", self.seed, 0)
        if seed >= 2 ** 63:
            raise ValueError(f"seed must be < 2**63, got {seed}")
        put("seed", seed)
        if self.dtype not in _DTYPES:
            raise ValueError(f"dtype must be one of {tuple(_DTYPES)}, got {self.dtype!r}")
        if self.forward not in _FORWARDS:
            raise ValueError(f"forward must be one of {_FORWARDS}, got {self.forward!r}")
        self.family()  # the data parameters are validated again by the theory's own class

    # -- derived ------------------------------------------------------------------------
    @property
    def warmup(self) -> int:
        """The warm-up length actually used (``warmup_steps`` or 5 % of ``steps``)."""
        if self.warmup_steps is not None:
            return self.warmup_steps
        return int(round(0.05 * self.steps))

    @property
    def n(self) -> int:
        """Number of context tokens n = T - s - 1."""
        return self.T - self.s - 1

    def family(self) -> LDSFamily:
        """The data distribution, as the theory defines it."""
        return LDSFamily(self.setting, d=self.d, T=self.T, sigma_w=self.sigma_w,
                         sigma_v=self.sigma_v, sigma_0=self.sigma_0, cond_max=self.cond_max)

    def replace(self, **changes) -> "TrainConfig":
        """A copy with some fields changed (validated again)."""
        return dataclasses.replace(self, **changes)

    # -- serialisation ------------------------------------------------------------------
    def to_dict(self) -> dict:
        """Plain JSON types (betas as a list)."""
        out = dataclasses.asdict(self)
        out["betas"] = list(self.betas)
        return out

    @classmethod
    def from_dict(cls, data: dict) -> "TrainConfig":
        if not isinstance(data, dict):
            raise ValueError(f"config must be a dict, got {type(data).__name__}")
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - names)
        if unknown:
            raise ValueError(f"config has unknown fields {unknown}")
        kw = dict(data)
        if "betas" in kw and isinstance(kw["betas"], list):
            kw["betas"] = tuple(kw["betas"])
        return cls(**kw)

    def key(self) -> str:
        """Stable hex digest (sha256) of the full configuration and ``KEY_FORMAT``.

        Fields are normalised first (ints as ints, reals as floats), so
        ``TrainConfig(sigma_w=1)`` and ``TrainConfig(sigma_w=1.0)`` share a key.
        """
        blob = json.dumps({"format": KEY_FORMAT, "config": self.to_dict()},
                          sort_keys=True, separators=(",", ":"), allow_nan=False)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def lr_schedule(config: TrainConfig) -> np.ndarray:
    """Learning rate of every step (length ``steps``), float64.

    Linear warm-up ``lr * (t + 1) / warmup`` for t < warmup, then cosine annealing
    ``lr_min + (lr - lr_min) (1 + cos(pi (t - warmup) / (steps - warmup))) / 2``, which
    starts at lr and ends one step short of lr_min.
    """
    t = np.arange(config.steps, dtype=np.float64)
    w = config.warmup
    out = np.empty(config.steps)
    warm = t < w
    out[warm] = config.lr * (t[warm] + 1.0) / w
    rest = config.steps - w
    if rest > 0:
        frac = (t[~warm] - w) / rest
        out[~warm] = config.lr_min + (config.lr - config.lr_min) * 0.5 * (1.0 + np.cos(np.pi * frac))
    return out


# ----------------------------------------------------------------------------- sampler
def _seed_from(generator: torch.Generator) -> int:
    """A 62-bit seed drawn from a torch generator (on its device)."""
    return int(torch.randint(0, 2 ** 62, (1,), generator=generator, device=generator.device).item())


def _factor(S: np.ndarray):
    """('scalar', c) | ('diag', vec) | ('full', L) with L L^T = S."""
    if np.all(S == S[0, 0] * np.eye(S.shape[0])):
        return "scalar", float(np.sqrt(S[0, 0]))
    if np.all(S == np.diag(np.diag(S))):
        return "diag", np.sqrt(np.diag(S))
    try:
        return "full", np.linalg.cholesky(S)
    except np.linalg.LinAlgError:
        w, V = np.linalg.eigh(S)
        return "full", V * np.sqrt(np.clip(w, 0.0, None))


class TorchLDSSampler:
    """A torch port of :class:`theory.systems.LDSFamily` sampling and simulation.

    ``sample_tm(m, generator)`` returns y in time-major layout (T, m) (row t is time t+1);
    ``sample(m, generator)`` the (m, T) view the theory uses.  The law is the theory's:
    for the diagonal settings (a, c, asym) lambda_i ~ U[lo, 1) iid with lo = -1 (0 for
    asym); for b and d the matrices A come from the theory's own
    ``LDSFamily.sample_systems``.  x_0 ~ N(0, Sigma_0), x_t = A x_{t-1} + w_t,
    y_t = c^T x_t + v_t.

    Random streams: lambda (``torch.rand``) and every normal (``torch.randn``) come from
    ``generator`` on the sampler's device; for b and d one 62-bit integer drawn from it
    seeds the numpy generator of ``LDSFamily.sample_systems``.  The same generator state
    gives the same y on the same device; CPU and CUDA streams differ.
    """

    def __init__(self, family: LDSFamily, *, device="cpu", dtype=torch.float32):
        if not isinstance(family, LDSFamily):
            raise ValueError(f"family must be an LDSFamily, got {type(family).__name__}")
        if dtype not in (torch.float32, torch.float64):
            raise ValueError(f"dtype must be torch.float32 or torch.float64, got {dtype!r}")
        self.family = family
        self.device = resolve_device(device)
        self.dtype = dtype
        self._w = self._prep(_factor(family.process_noise_cov()))
        self._x0 = self._prep(_factor(family.initial_cov()))

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
        if not isinstance(generator, torch.Generator):
            raise ValueError(f"generator must be a torch.Generator, got {type(generator).__name__}")
        if generator.device.type != self.device.type:
            raise ValueError(f"generator is on {generator.device}, the sampler on {self.device}")

    def _n_noise(self, m):
        T, d = self.family.T, self.family.d
        return (T + 1) * d * m + T * m

    def _noise(self, m, generator):
        """(T+1) d m + T m standard normals: x_0, w_1..w_T, v_1..v_T (before scaling)."""
        return torch.randn(self._n_noise(m), generator=generator, device=self.device,
                           dtype=self.dtype)

    def _simulate_tm(self, m, z, lamT=None, A=None, c=None):
        """y (T, m) from standard normals z ((T+1) d m + T m: x_0, w_1..w_T, v_1..v_T) and
        lamT (d, m) [diagonal A] or A (d, d, m); c (d, m) or None (= all ones).  Overwrites z."""
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
        if c is None:
            y = xs[1:].sum(1)
        else:
            y = (xs[1:] * c[None]).sum(1)
        y.add_(v, alpha=float(fam.sigma_v))
        return y

    # -- public -----------------------------------------------------------------------------
    def draw(self, m: int, generator: torch.Generator):
        """The random inputs of ``m`` fresh systems: ``(kind, A_or_lam, z)``.

        Split from :meth:`finish` so that the expensive part (the normals) can run on a
        helper thread; ``finish(draw(m, g))`` is :meth:`sample_tm`.
        """
        if isinstance(m, bool) or not isinstance(m, numbers.Integral) or m < 1:
            raise ValueError(f"m must be a positive integer, got {m!r}")
        self._check_gen(generator)
        m = int(m)
        fam = self.family
        lo = 0.0 if fam.setting == "asym" else -1.0
        with torch.no_grad():
            if fam.diagonal:
                lamT = torch.rand(fam.d, m, generator=generator, device=self.device, dtype=self.dtype)
                lamT.mul_(1.0 - lo).add_(lo)                 # lambda_i ~ U[lo, 1), shape (d, m)
                return "diag", lamT, self._noise(m, generator)
            A = self._matrices(np.random.default_rng(_seed_from(generator)), m)
            return "full", A, self._noise(m, generator)

    def _matrices(self, rng, m):
        """A (d, d, m) from the theory's own sampler (settings b, d)."""
        systems = self.family.sample_systems(rng, m)
        A = torch.as_tensor(systems.A, dtype=self.dtype).permute(1, 2, 0).contiguous()
        return A.to(self.device)

    def finish(self, drawn) -> torch.Tensor:
        """y (T, m) from the output of :meth:`draw` (deterministic)."""
        kind, arg, z = drawn
        m = arg.shape[-1]
        with torch.no_grad():
            if kind == "diag":
                return self._simulate_tm(m, z, lamT=arg)
            return self._simulate_tm(m, z, A=arg)

    def sample_tm(self, m: int, generator: torch.Generator) -> torch.Tensor:
        """Fresh systems and one trajectory each: y of shape (T, m) (time-major)."""
        return self.finish(self.draw(m, generator))

    def sample(self, m: int, generator: torch.Generator) -> torch.Tensor:
        """Fresh systems and one trajectory each: y of shape (m, T) (as the theory's)."""
        return self.sample_tm(m, generator).T

    def simulate(self, systems: Systems, generator: torch.Generator, T: int | None = None) -> torch.Tensor:
        """One trajectory per given system, (m, T): the torch twin of ``Systems.simulate``.

        The noise model (Sigma_0, Sigma_w, sigma_v) is this sampler's family's; the
        systems' must match it.
        """
        if not isinstance(systems, Systems):
            raise ValueError(f"systems must be a theory.systems.Systems, got {type(systems).__name__}")
        self._check_gen(generator)
        fam = self.family
        T = fam.T if T is None else T
        if T != fam.T:
            fam = fam.replace(T=T)
            return TorchLDSSampler(fam, device=self.device, dtype=self.dtype).simulate(systems, generator)
        if (systems.d != fam.d or not np.array_equal(systems.Sigma_w, fam.process_noise_cov())
                or not np.array_equal(systems.Sigma_0, fam.initial_cov())
                or float(systems.sigma_v) != fam.sigma_v):
            raise ValueError("systems must share the sampler family's d and noise model")
        m = systems.m
        c = None if np.all(systems.c == 1.0) else \
            torch.as_tensor(systems.c.T.copy(), dtype=self.dtype, device=self.device)
        with torch.no_grad():
            z = self._noise(m, generator)
            if systems.lam is not None:
                lamT = torch.as_tensor(systems.lam.T.copy(), dtype=self.dtype, device=self.device)
                y = self._simulate_tm(m, z, lamT=lamT, c=c)
            else:
                A = torch.as_tensor(systems.A, dtype=self.dtype).permute(1, 2, 0).contiguous()
                y = self._simulate_tm(m, z, A=A.to(self.device), c=c)
        return y.T


# ----------------------------------------------------------------------------- features
_MASKS: dict = {}
_MASKS_LOCK = threading.Lock()


def _lag_tables(s: int, T: int, device, dtype):
    """(M, index): C_flat = M @ P stacks the lag-k sums; C[r, l] = C_flat[index[r, l]]."""
    key = (s, T, str(device), dtype)
    with _MASKS_LOCK:
        hit = _MASKS.get(key)
    if hit is not None:
        return hit
    n = T - s - 1
    rows = sum(s + 1 - k for k in range(s + 1))
    cols = sum(T - k for k in range(s + 1))
    M = torch.zeros(rows, cols, dtype=dtype)
    index = np.empty((s + 1, s + 1), dtype=np.int64)
    row = col = 0
    for k in range(s + 1):
        for r in range(s + 1 - k):
            M[row, col + r: col + r + n] = 1.0 / n
            index[r, r + k] = index[r + k, r] = row
            row += 1
        col += T - k
    out = (M.to(device), torch.as_tensor(index.reshape(-1), device=device))
    with _MASKS_LOCK:
        _MASKS[key] = out
    return out


def effective_features(y_tm: torch.Tensor, s: int):
    r"""Features of a batch for the effective form of the layer; returns ``(F, target)``.

    ``y_tm`` is time-major (T, B).  ``F`` has shape ((s+1)^2 s, B) with
    ``F[(r, l, m)] = C[r, l] z_q[m]`` flattened in (r, l, m) order, where
    ``C = (1/n) sum_t z_t z_t^T`` and ``z_q = (y_{T-s}..y_{T-1})``; ``target = y_T`` (B,).
    Then ``y_hat_T = beta . F`` with ``beta[r, l, m] = W_V[s, r] W_QK[l, m]``.
    """
    if not isinstance(y_tm, torch.Tensor) or y_tm.ndim != 2:
        raise ValueError(f"y_tm must be a (T, B) torch.Tensor, got {type(y_tm).__name__}")
    if isinstance(s, bool) or not isinstance(s, numbers.Integral) or s < 1:
        raise ValueError(f"s must be a positive integer, got {s!r}")
    T, B = y_tm.shape
    if T - s - 1 < 1:
        raise ValueError(f"T must exceed s + 1 = {s + 1}, got T={T}")
    M, index = _lag_tables(s, T, y_tm.device, y_tm.dtype)
    P = torch.cat([y_tm[:T - k] * y_tm[k:] for k in range(s + 1)], dim=0)   # lag-k products
    C = (M @ P).index_select(0, index)                     # ((s+1)^2, B)
    zq = y_tm[T - s - 1:T - 1]                             # (s, B)
    F = (C[:, None, :] * zq[None, :, :]).reshape(-1, B)
    return F, y_tm[T - 1]


def _beta(W_V: torch.Tensor, W_QK: torch.Tensor, s: int) -> torch.Tensor:
    """beta[r, l, m] = W_V[s, r] W_QK[l, m] (m < s), flattened in (r, l, m) order."""
    return torch.outer(W_V[s], W_QK[:, :s].reshape(-1)).reshape(-1)


def effective_loss(W_V: torch.Tensor, W_QK: torch.Tensor, F: torch.Tensor, target: torch.Tensor):
    """1/2 mean (y_hat - y_T)^2 with y_hat = beta(W_V, W_QK) . F (differentiable)."""
    s = W_V.shape[0] - 1
    r = _beta(W_V, W_QK, s) @ F - target
    return torch.dot(r, r) * (0.5 / r.shape[0])


# ----------------------------------------------------------------------------- result
def _json_float(x):
    """float, or None for NaN/inf (strict JSON has no NaN)."""
    x = float(x)
    return x if math.isfinite(x) else None


@dataclass(frozen=True, eq=False)
class TrainResult:
    """Outcome of :func:`train`.

    ``W_V``, ``W_QK``: learned (s+1) x (s+1) weights (float64 numpy).
    ``loss_history``: mean training loss over consecutive windows of ``history_every``
    steps (each step on its own fresh batch).  ``final_loss``: mean training loss over the
    last ``final_window`` steps (fresh batches; an estimate of the final population
    loss), with ``final_loss_stderr``.  ``eval_loss``: loss of the final weights through
    the full ``LinearSelfAttention.forward`` pass in float64 on a held-out fresh batch of
    ``batch`` systems.  ``wall_seconds``: training wall time; ``device``: where it ran.
    ``final_loss_stderr`` is NaN (None in :meth:`to_dict`) when the window is one step.
    """

    config: TrainConfig
    W_V: np.ndarray
    W_QK: np.ndarray
    loss_history: np.ndarray
    history_every: int
    final_loss: float
    final_loss_stderr: float
    final_window: int
    eval_loss: float
    wall_seconds: float
    device: str
    torch_version: str = field(default_factory=lambda: torch.__version__)

    def model(self, dtype: torch.dtype = torch.float64, device=None) -> LinearSelfAttention:
        """A LinearSelfAttention holding the learned weights."""
        return LinearSelfAttention.from_weights(self.W_V, self.W_QK, dtype=dtype, device=device)

    def beta(self) -> np.ndarray:
        """Gauge-invariant coefficients beta[r, l, m] = W_V[s, r] W_QK[l, m], shape (s+1, s+1, s)."""
        s = self.config.s
        return self.W_V[s][:, None, None] * self.W_QK[None, :, :s]

    def ar1_coefficient(self) -> float:
        """For s = 1: b_2 W[1,1] + b_1 W[2,1] (1-based), which Theorem 4.1 says is kappa."""
        if self.config.s != 1:
            raise ValueError(f"ar1_coefficient needs s = 1, got s = {self.config.s}")
        return float(self.W_V[1, 1] * self.W_QK[0, 0] + self.W_V[1, 0] * self.W_QK[1, 0])

    def to_dict(self) -> dict:
        """Plain JSON types; floats round-trip exactly through ``json``."""
        return {
            "format": KEY_FORMAT,
            "key": self.config.key(),
            "config": self.config.to_dict(),
            "W_V": np.asarray(self.W_V, dtype=np.float64).tolist(),
            "W_QK": np.asarray(self.W_QK, dtype=np.float64).tolist(),
            "loss_history": [float(x) for x in self.loss_history],
            "history_every": int(self.history_every),
            "final_loss": float(self.final_loss),
            "final_loss_stderr": _json_float(self.final_loss_stderr),
            "final_window": int(self.final_window),
            "eval_loss": float(self.eval_loss),
            "wall_seconds": float(self.wall_seconds),
            "device": str(self.device),
            "torch_version": str(self.torch_version),
        }

    @classmethod
    def from_dict(cls, data: dict) -> "TrainResult":
        """Inverse of :meth:`to_dict`; ``ValueError`` on a malformed or foreign record."""
        if not isinstance(data, dict):
            raise ValueError(f"data must be a dict, got {type(data).__name__}")
        if data.get("format") != KEY_FORMAT:
            raise ValueError(f"format must be {KEY_FORMAT!r}, got {data.get('format')!r}")
        try:
            config = TrainConfig.from_dict(data["config"])
            k = config.s + 1
            W_V = np.asarray(data["W_V"], dtype=np.float64)
            W_QK = np.asarray(data["W_QK"], dtype=np.float64)
            if W_V.shape != (k, k) or W_QK.shape != (k, k):
                raise ValueError(f"W_V and W_QK must have shape {(k, k)}")
            if not (np.isfinite(W_V).all() and np.isfinite(W_QK).all()):
                raise ValueError("W_V and W_QK must be finite")
            return cls(
                config=config, W_V=W_V, W_QK=W_QK,
                loss_history=np.asarray(data["loss_history"], dtype=np.float64),
                history_every=int(data["history_every"]),
                final_loss=float(data["final_loss"]),
                final_loss_stderr=(float("nan") if data["final_loss_stderr"] is None
                                   else float(data["final_loss_stderr"])),
                final_window=int(data["final_window"]),
                eval_loss=float(data["eval_loss"]),
                wall_seconds=float(data["wall_seconds"]),
                device=str(data["device"]),
                torch_version=str(data.get("torch_version", "")),
            )
        except (KeyError, TypeError) as exc:
            raise ValueError(f"malformed TrainResult record: {exc!r}") from None


# ----------------------------------------------------------------------------- training
_TLS = threading.local()


def _thread_generator(device: torch.device) -> torch.Generator:
    gens = getattr(_TLS, "gens", None)
    if gens is None:
        gens = _TLS.gens = {}
    key = str(device)
    g = gens.get(key)
    if g is None:
        g = gens[key] = torch.Generator(device=device)
    return g


def _shard_sizes(batch: int) -> list[int]:
    k = -(-batch // SHARD_SIZE)
    base, extra = divmod(batch, k)
    return [base + (1 if j < extra else 0) for j in range(k)]


class _Batches:
    """Produces step batches: shard j of step t from stream (seed, purpose, t, j)."""

    def __init__(self, config: TrainConfig, sampler: TorchLDSSampler, purpose: int, batch: int,
                 want_features: bool):
        self.config = config
        self.sampler = sampler
        self.purpose = purpose
        self.sizes = _shard_sizes(batch)
        self.want_features = want_features

    def draw(self, step: int, j: int):
        """Random inputs of shard j of ``step`` (thread-safe: per-thread generator)."""
        gen = _thread_generator(self.sampler.device)
        gen.manual_seed(stream_seed(self.config.seed, self.purpose, step, j))
        return self.sampler.draw(self.sizes[j], gen)

    def finish(self, drawn):
        with torch.no_grad():
            y_tm = self.sampler.finish(drawn)
            if self.want_features:
                return effective_features(y_tm, self.config.s)
            return y_tm

    def shard(self, step: int, j: int):
        return self.finish(self.draw(step, j))

    @staticmethod
    def join(parts):
        if len(parts) == 1:
            return parts[0]
        if isinstance(parts[0], tuple):
            return tuple(torch.cat(p, dim=-1) for p in zip(*parts))
        return torch.cat(parts, dim=-1)


def _resolve_progress(progress, steps):
    if progress is None:
        try:
            tty = sys.stderr.isatty()
        except (AttributeError, ValueError):
            tty = False
        return bool(tty and steps >= 1000)
    return bool(progress)


def train(config: TrainConfig, *, device="auto", progress=None) -> TrainResult:
    """Train a fresh LinearSelfAttention layer with the paper's protocol (module doc).

    ``device``: "auto" (CUDA if available), "cpu", "cuda", "cuda:N".  ``progress``: a tqdm
    bar on stderr; None = on when stderr is a terminal and steps >= 1000.  The same
    ``config`` on the same CPU (and torch version) gives bitwise the same weights,
    whatever the thread count; CUDA runs use other random streams.
    Raises ``RuntimeError`` if the loss becomes non-finite (lower ``lr``).
    """
    if not isinstance(config, TrainConfig):
        raise ValueError(f"config must be a TrainConfig, got {type(config).__name__}")
    dev = resolve_device(device)
    show = _resolve_progress(progress, config.steps)
    if dev.type == "cpu":
        # helpers draw shards; the main thread is busy too (see _train): one helper fewer
        workers = min(len(_shard_sizes(config.batch)), torch.get_num_threads() - 1)
        with torch_threads(1):
            return _train(config, dev, show, workers)
    return _train(config, dev, show, 0)


def _train(config: TrainConfig, dev: torch.device, show: bool, workers: int) -> TrainResult:
    dtype = _DTYPES[config.dtype]
    s = config.s
    family = config.family()
    sampler = TorchLDSSampler(family, device=dev, dtype=dtype)
    effective = config.forward == "effective"
    batches = _Batches(config, sampler, _STREAM_TRAIN, config.batch, effective)
    n_shards = len(batches.sizes)

    init_gen = torch.Generator().manual_seed(stream_seed(config.seed, _STREAM_INIT))
    model = LinearSelfAttention(s, init=config.init, init_scale=config.init_scale, dtype=dtype,
                                generator=init_gen).to(dev)
    params = [model.W_V, model.W_QK]
    opt_kw = {}
    if dev.type in ("cpu", "cuda"):
        opt_kw["fused"] = True
    optimizer = torch.optim.AdamW(params, lr=config.lr, betas=config.betas, eps=config.eps,
                                  weight_decay=config.weight_decay, **opt_kw)
    lrs = lr_schedule(config).tolist()
    losses = torch.empty(config.steps, dtype=torch.float64, device=dev)

    bar = None
    if show:
        from tqdm import tqdm
        bar = tqdm(total=config.steps, desc=f"train {config.setting} s={s}", unit="step",
                   file=sys.stderr, mininterval=0.5, dynamic_ncols=True)
    update_every = max(1, config.steps // 200)
    check_every = 500

    # CPU: ``workers`` helper threads draw the random inputs (uniforms and normals, most
    # of the data cost, each one long GIL-free torch call) of the shards of the next
    # _PREFETCH steps, in order.  The main thread simulates and takes the optimiser
    # step; a shard of the current step that no helper has started yet (Future.cancel
    # succeeds) it draws itself.  So helpers + main thread = the available cores, and
    # the main thread's many small ops never wait for the GIL behind a helper's.
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="ldsicl-data") if workers > 0 else None
    pending = collections.deque()

    def submit(step):
        return [pool.submit(batches.draw, step, j) for j in range(n_shards)]

    def step_data(step):
        if pool is None:
            return batches.join([batches.shard(step, j) for j in range(n_shards)])
        futs = pending.popleft()
        if step + _PREFETCH < config.steps:
            pending.append(submit(step + _PREFETCH))
        drawn = [None] * n_shards
        for j in reversed(range(n_shards)):  # the last shards are the least likely started
            if futs[j].cancel():
                drawn[j] = batches.draw(step, j)
        return batches.join([batches.finish(d if d is not None else f.result())
                             for d, f in zip(drawn, futs)])

    t0 = time.perf_counter()
    try:
        if pool is not None:
            for step in range(min(_PREFETCH, config.steps)):
                pending.append(submit(step))
        for step in range(config.steps):
            data = step_data(step)
            if effective:
                F, target = data
                loss = effective_loss(model.W_V, model.W_QK, F, target)
            else:
                y = data.T.contiguous()
                y_hat = model(build_tokens(y, s))[1]
                loss = 0.5 * (y_hat - y[:, -1]).square().mean()
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            if config.grad_clip is not None:
                torch.nn.utils.clip_grad_norm_(params, config.grad_clip, foreach=True)
            optimizer.param_groups[0]["lr"] = lrs[step]
            optimizer.step()
            losses[step] = loss.detach()
            done = step + 1
            if (done % check_every == 0 or done == config.steps) and not math.isfinite(float(losses[step])):
                raise RuntimeError(f"training diverged at step {done} (loss {float(losses[step])}); "
                                   f"lower lr (now {config.lr})")
            if bar is not None and (done % update_every == 0 or done == config.steps):
                bar.update(done - bar.n)
                bar.set_postfix(loss=f"{float(losses[step]):.4g}", refresh=False)
    finally:
        if pool is not None:
            for futs in pending:
                for f in futs:
                    f.cancel()
            pool.shutdown(wait=True)
        if bar is not None:
            bar.close()
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)
    wall = time.perf_counter() - t0

    hist = losses.cpu().numpy()
    if not np.all(np.isfinite(hist)):
        raise RuntimeError(f"training diverged (non-finite loss); lower lr (now {config.lr})")
    every = max(1, -(-config.steps // 500))
    n_full = len(hist) // every
    history = hist[: n_full * every].reshape(n_full, every).mean(axis=1)
    if len(hist) > n_full * every:
        history = np.append(history, hist[n_full * every:].mean())
    window = max(1, min(200, config.steps // 10))
    tail = hist[-window:]
    final_loss = float(tail.mean())
    final_se = float(tail.std(ddof=1) / math.sqrt(window)) if window > 1 else float("nan")

    W_V, W_QK = model.weights()
    eval_loss = _eval_loss(config, family, dev, W_V, W_QK)
    return TrainResult(config=config, W_V=W_V, W_QK=W_QK, loss_history=history,
                       history_every=every, final_loss=final_loss, final_loss_stderr=final_se,
                       final_window=window, eval_loss=eval_loss, wall_seconds=wall, device=str(dev))


def _eval_loss(config, family, dev, W_V, W_QK) -> float:
    """Held-out loss of the final weights via the full forward pass, float64.

    Also re-checks on that batch that the effective form used in training equals the
    layer's forward pass (a RuntimeError if not: the trainer would be training
    something else).
    """
    sampler = TorchLDSSampler(family, device=dev, dtype=torch.float64)
    batches = _Batches(config, sampler, _STREAM_EVAL, config.batch, False)
    y_tm = batches.join([batches.shard(0, j) for j in range(len(batches.sizes))])
    model = LinearSelfAttention.from_weights(W_V, W_QK, dtype=torch.float64, device=dev)
    with torch.no_grad():
        y = y_tm.T.contiguous()
        y_hat = model(build_tokens(y, config.s))[1]
        full = 0.5 * (y_hat - y[:, -1]).square().mean()
        F, target = effective_features(y_tm, config.s)
        eff = effective_loss(model.W_V, model.W_QK, F, target)
    full, eff = float(full), float(eff)
    if not abs(full - eff) <= 1e-9 * max(1.0, abs(full)):
        raise RuntimeError(f"effective loss {eff!r} != forward-pass loss {full!r}")
    return full
