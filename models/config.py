"""Training configuration: TrainConfig, its cache key, the learning-rate schedule and the random-stream seeds.

A :class:`TrainConfig` is everything in a run's *settings* that determines it (not the
device); :meth:`TrainConfig.key` is the configuration part of the weight-cache key, so
its layout is part of the cache format (``KEY_FORMAT``).  The cache key adds a
fingerprint of the training code, torch version, device type and dtype
(models/fingerprint.py, models/cache.py).

Choices the paper leaves open, fixed here (defaults of :class:`TrainConfig`, all part
of the key):

* ``lr = 1e-3`` peak (from a scan on setting (a), AR(1), the paper protocol; see
  docs/notes.md, section "Learning rate").
* ``warmup_steps = None`` -> 5 % of ``steps`` (400 of 8000), linear from lr/warmup to lr.
* cosine annealing from ``lr`` to ``lr_min = 0`` over the remaining steps.
* ``betas = (0.9, 0.999)``, ``eps = 1e-8`` (AdamW defaults).
* ``grad_clip = 1000`` (max global gradient norm): a guard against divergence that does
  not bind near the optimum.  The paper states clipping but not its threshold.  A
  threshold that binds re-weights the batches, so its fixed point is not a minimiser of
  L (measurements: docs/notes.md, section "Gradient clipping").
* ``weight_decay = 0``.  The paper uses AdamW but does not state its decay.  AdamW's
  decoupled decay multiplies every weight by (1 - lr * weight_decay) each step,
  whatever the gradient, so its fixed point is not a minimiser of L: it shrinks the
  learned product b W, biasing the learned kappa towards 0.  Set it explicitly to
  study that.
* initial weights iid N(0, 0.01^2) (``init_scale``); ``seed`` drives everything.

>>> c = TrainConfig("a", steps=1000)
>>> c.warmup, c.n, len(c.key())
(50, 28, 64)
>>> stream_seed(c.seed, 0, 7, 1) == stream_seed(0, 0, 7, 1)
True
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass

import numpy as np
import torch

from models.attention import init_scale_limit
from theory.systems import SETTINGS, LDSFamily
from theory.validation import check_choice, check_int, check_real, check_type, check_window

__all__ = ["TrainConfig", "lr_schedule", "stream_seed", "KEY_FORMAT", "DTYPES", "MAX_LAYERS"]

#: Version of the training algorithm + key layout; bump when results would change.
KEY_FORMAT = "ldsicl-train-1"
#: ``TrainConfig.dtype`` -> the torch dtype the run trains in.
DTYPES = {"float32": torch.float32, "float64": torch.float64}
_FORWARDS = ("effective", "model")
#: the deepest stack of attention layers a configuration accepts.
MAX_LAYERS = 8
_INITS = ("normal", "zeros")
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
    for i, w in enumerate(words):
        w = check_int(f"words[{i}]", w, minimum=0)
        while True:  # fold arbitrarily large words 64 bits at a time
            h = _splitmix64(h ^ (w & _MASK64))
            w >>= 64
            if not w:
                break
    return h >> 1


# ----------------------------------------------------------------------------- config
#: the system family's defaults (theory.systems.LDSFamily is their one source).
_FAMILY_DEFAULTS = {f.name: f.default for f in dataclasses.fields(LDSFamily) if f.init}


@dataclass(frozen=True)
class TrainConfig:
    """Everything that determines a training run (and nothing else: not the device).

    Data (as :class:`theory.systems.LDSFamily`): ``setting`` in a, b, c, d, asym; ``d``,
    ``T``, ``sigma_w``, ``sigma_v``, ``sigma_0``, ``cond_max`` (setting d only), ``radius``
    (the eigenvalues' range, 1 in the paper).
    Model: window ``s`` (need T > s + 1), ``layers`` (a stack of that many attention
    layers on one residual stream, models/attention.py ``StackedAttention``; its effective
    form is models/features.py ``stack_effective_loss``), ``init`` ("normal"/"zeros"),
    ``init_scale``.
    Protocol: ``steps``, ``batch`` (fresh systems per step), AdamW with ``lr`` (peak),
    ``betas``, ``eps``, ``weight_decay``; ``grad_clip`` (max global gradient norm, None =
    off); ``warmup_steps`` (linear warm-up; None = 5 % of steps, rounded); cosine
    annealing from lr to ``lr_min`` afterwards; ``seed``; ``dtype`` ("float32", the usual
    training precision (the paper does not say), or "float64"); ``forward``
    ("effective" or "model", see models/trainer.py).

    Default ``lr = 1e-3``: as accurate as 3e-4 on the paper protocol while leaving more
    room to travel; short runs need a larger lr (the scan: docs/notes.md, section
    "Learning rate").  Every bad field raises a ``ValueError`` whose message starts
    with its name.
    """

    setting: str = "a"
    s: int = 1
    d: int = _FAMILY_DEFAULTS["d"]
    T: int = _FAMILY_DEFAULTS["T"]
    sigma_w: float = _FAMILY_DEFAULTS["sigma_w"]
    sigma_v: float = _FAMILY_DEFAULTS["sigma_v"]
    sigma_0: float = _FAMILY_DEFAULTS["sigma_0"]
    cond_max: float = _FAMILY_DEFAULTS["cond_max"]
    radius: float = _FAMILY_DEFAULTS["radius"]
    layers: int = 1
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
        check_choice("setting", self.setting, SETTINGS)
        put("s", check_int("s", self.s, 1))
        put("d", check_int("d", self.d, 1))
        put("T", check_int("T", self.T, 3))
        check_window(self.s, self.T)
        for name in ("sigma_w", "sigma_v", "sigma_0"):
            put(name, check_real(name, getattr(self, name), minimum=0.0))
        put("cond_max", check_real("cond_max", self.cond_max, minimum=1.0))
        put("layers", check_int("layers", self.layers, 1))
        if self.layers > MAX_LAYERS:
            raise ValueError(f"layers must be <= {MAX_LAYERS}, got {self.layers}")
        put("steps", check_int("steps", self.steps, 1))
        put("batch", check_int("batch", self.batch, 1))
        put("lr", check_real("lr", self.lr, minimum=0.0, strict_min=True))
        put("lr_min", check_real("lr_min", self.lr_min, minimum=0.0, maximum=self.lr))
        if self.warmup_steps is not None:
            put("warmup_steps", check_int("warmup_steps", self.warmup_steps, 0))
            if self.warmup_steps > self.steps:
                raise ValueError(f"warmup_steps must be <= steps = {self.steps}, "
                                 f"got {self.warmup_steps}")
        put("weight_decay", check_real("weight_decay", self.weight_decay, minimum=0.0))
        betas = self.betas
        if isinstance(betas, (str, bytes)) or not hasattr(betas, "__len__") or len(betas) != 2:
            raise ValueError(f"betas must be a pair (beta1, beta2), got {betas!r}")
        put("betas", tuple(check_real(f"betas[{i}]", b, minimum=0.0, maximum=1.0, strict_max=True)
                           for i, b in enumerate(betas)))
        put("eps", check_real("eps", self.eps, minimum=0.0, strict_min=True))
        if self.grad_clip is not None:
            put("grad_clip", check_real("grad_clip", self.grad_clip, minimum=0.0, strict_min=True))
        check_choice("init", self.init, _INITS)
        check_choice("dtype", self.dtype, tuple(DTYPES))
        put("init_scale", check_real("init_scale", self.init_scale, minimum=0.0,
                                     maximum=init_scale_limit(DTYPES[self.dtype])))
        seed = check_int("seed", self.seed, 0)
        if seed >= 2 ** 63:
            raise ValueError(f"seed must be < 2**63, got {seed}")
        put("seed", seed)
        check_choice("forward", self.forward, _FORWARDS)
        self.family()  # the data parameters (radius included) are validated by the theory's own class

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
                         sigma_v=self.sigma_v, sigma_0=self.sigma_0, cond_max=self.cond_max,
                         radius=self.radius)

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
        check_type("config", data, dict, "a dict")
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

    >>> lr_schedule(TrainConfig(steps=4, warmup_steps=2, lr=0.5)).tolist()
    [0.25, 0.5, 0.5, 0.25]
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
