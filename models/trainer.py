r"""Training the linear self-attention layer with the paper's protocol: the threaded training loop and train().

Protocol (paper, section "training"; the numbers the summaries give are the defaults)::

    every step: a fresh batch of ``batch`` new systems (new A, new noise) from the setting,
                one trajectory y_1..y_T each;
    loss      = mean over the batch of 1/2 (y_hat_T - y_T)^2,  y_hat_T from the LSA layer;
    optimiser = AdamW, global-norm gradient clipping, linear warm-up then cosine annealing;
    8000 steps, batch 3000 (AR(1)), T = 30, d = 5, sigma_w = sigma_v = 0.1.

The choices the paper leaves open (lr, warm-up, clipping threshold, weight decay,
initialisation) are the defaults of :class:`models.config.TrainConfig`, documented
there and part of its key.  The pieces, one module each:

* models/config.py: :class:`TrainConfig`, its key, :func:`lr_schedule`, :func:`stream_seed`;
* models/sampler.py: :class:`TorchLDSSampler`, the data (the theory's law, in torch);
* models/features.py: :func:`effective_features`, :func:`effective_loss`;
* models/result.py: :class:`TrainResult`;
* here: the loop, :func:`train`.

How the loss is computed (``forward="effective"``, the default): each step computes
the features F[r,l,m] = C[r,l] z_q[m] of the batch and the loss
1/2 mean (beta . F - y_T)^2 with beta[r,l,m] = b_r W_QK[l,m] built from the layer's own
``W_V`` and ``W_QK`` (models/features.py): exactly the layer's function of its
weights, since y_hat_T = b^T C W_QK z_q for every theta.  Every run re-checks it on the
final weights: ``TrainResult.eval_loss`` is computed by the full forward pass, in
float64, on a held-out batch, and must agree with the effective form.
``forward="model"`` trains through ``LinearSelfAttention.forward`` literally (slower on
a CPU; timings: docs/notes.md, section "Training speed").

Random streams and threads.  Each step's batch is cut into shards of at most
``SHARD_SIZE`` systems, each drawn from its own generator seeded by
``stream_seed(seed, purpose, step, shard)``.  Where the systems carry an eigenbasis
(setting d; setting b with non-isotropic noise) the bases of ``BASES_BLOCK`` = 16
consecutive steps are drawn in one call from ``stream_seed(seed, purpose + 3, block)``
and handed to the shards (``_Batches``): drawing them per shard took more time than
the rest of a step (docs/notes.md, "Training speed").  With k torch threads available, k - 1
helper threads draw the random inputs of the next steps' shards (``torch.rand`` +
``torch.randn``: most of the work, long kernels that release the GIL) while the main
thread simulates the trajectories, builds the features and takes the optimiser step;
a shard no helper has started yet the main thread draws itself, and the helpers also
draw the next block of bases ahead.  The streams depend
only on the configuration, never on the thread count or the scheduling, so the same
seed gives bitwise the same weights on a given CPU.  During training the process's
torch intra-op thread count is set to 1 (the parallelism is the helpers') and restored
afterwards.  On CUDA everything runs on the device, in order.  How long a
paper-protocol run takes: docs/notes.md, section "Training speed", and
tests/benchmarks/test_bench_train.py.

Example
-------
>>> cfg = TrainConfig("a", steps=50, batch=64, seed=1)
>>> res = train(cfg, device="cpu", progress=False)
>>> res.W_V.shape, res.W_QK.shape
((2, 2), (2, 2))
"""
from __future__ import annotations

import collections
import math
import os
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import torch
from tqdm import tqdm

from theory.validation import check_real, check_type

from .attention import LinearSelfAttention, StackedAttention, build_tokens
from .config import DTYPES, TrainConfig, lr_schedule, stream_seed
from .features import effective_features, effective_loss, stack_effective_loss, stack_features
from .result import TrainResult
from .runtime import resolve_device, torch_threads
from .sampler import TorchLDSSampler

__all__ = [
    "train",
    "SHARD_SIZE",
    "check_resources",
    "data_scale",
    "memory_estimate",
]

#: Largest number of systems one generator stream draws in a step (see module doc).
SHARD_SIZE = 1536
#: How many steps ahead the CPU thread pool prepares batches.
_PREFETCH = 3

# purposes of the random streams (second word of stream_seed, after the seed)
_STREAM_TRAIN, _STREAM_INIT, _STREAM_EVAL = 0, 1, 2
#: the eigenbases of purpose p come from purpose p + 3 (3: training, 5: held-out batch)
_BASES_OFFSET = 3


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


#: Steps whose eigenbases (setting d; setting b with non-isotropic noise) are drawn in one
#: call: one long sequence of torch operations instead of many short ones per shard.
BASES_BLOCK = 16


class _Once:
    """A value computed at most once, by the first thread that asks (the others wait)."""

    def __init__(self, make):
        self._make, self._lock, self._value = make, threading.Lock(), None

    def get(self):
        with self._lock:
            if self._make is not None:
                self._value, self._make = self._make(), None
            return self._value


class _Batches:
    """Produces step batches: shard j of step t from stream (seed, purpose, t, j).

    Where the systems carry an eigenbasis (``sampler.needs_bases``), the bases of the
    ``BASES_BLOCK`` steps kB .. kB + B - 1 are drawn in one call from stream (seed,
    purpose + 3, k) (:data:`_BASES_OFFSET`), and shard j of step t takes its columns,
    in step-major and then shard order: with batch 3000 (shards of 1500), step t = 17
    of block k = 1 takes columns 3000 .. 4499 (shard 0) and 4500 .. 5999 (shard 1).
    The streams depend only on (seed, purpose, step, shard) and (seed, purpose, block),
    never on which thread draws first.
    """

    def __init__(self, config: TrainConfig, sampler: TorchLDSSampler, purpose: int, batch: int,
                 want_features: bool, steps: int):
        self.config = config
        self.sampler = sampler
        self.purpose = purpose
        self.batch = batch
        self.steps = steps
        self.sizes = _shard_sizes(batch)
        self.offsets = [sum(self.sizes[:j]) for j in range(len(self.sizes))]
        self.want_features = want_features
        # stack features are batch first (models/features.py: C (B, s+1, s+1), ...),
        # single-layer features and y batch last
        self.batch_dim = 0 if want_features and config.layers > 1 else -1
        self.block = BASES_BLOCK if sampler.needs_bases else 0
        self._blocks: dict[int, _Once] = {}
        self._blocks_lock = threading.Lock()

    def bases_block(self, k: int):
        """(R, cvec) of the steps of block k, columns step-major (class doc); computed once."""
        with self._blocks_lock:
            entry = self._blocks.get(k)
            if entry is None:
                entry = self._blocks[k] = _Once(lambda: self._draw_block(k))
                for old in [i for i in self._blocks if i < k - 1]:   # steps run in order
                    del self._blocks[old]                           # (recomputed if asked again)
        return entry.get()

    def _draw_block(self, k: int):
        n_steps = min(self.block, self.steps - k * self.block)
        gen = torch.Generator(device=self.sampler.device)
        gen.manual_seed(stream_seed(self.config.seed, self.purpose + _BASES_OFFSET, k))
        return self.sampler.draw_bases(n_steps * self.batch, gen)

    def bases(self, step: int, j: int):
        """The (R, cvec) columns of shard j of ``step``, or None (no eigenbasis to draw)."""
        if not self.block:
            return None
        k, i = divmod(step, self.block)
        lo = i * self.batch + self.offsets[j]
        R, cvec = self.bases_block(k)
        return (R[:, :, lo:lo + self.sizes[j]].contiguous(), cvec[:, lo:lo + self.sizes[j]].contiguous())

    def draw(self, step: int, j: int):
        """Random inputs of shard j of ``step`` (thread-safe: per-thread generator)."""
        bases = self.bases(step, j)
        gen = _thread_generator(self.sampler.device)
        gen.manual_seed(stream_seed(self.config.seed, self.purpose, step, j))
        return self.sampler.draw(self.sizes[j], gen, bases=bases)

    def finish(self, drawn):
        with torch.no_grad():
            y_tm = self.sampler.finish(drawn)
            if self.want_features:
                if self.config.layers > 1:
                    return stack_features(y_tm, self.config.s)
                return effective_features(y_tm, self.config.s)
            return y_tm

    def shard(self, step: int, j: int):
        return self.finish(self.draw(step, j))

    def join(self, parts):
        """One batch from the shards' parts, concatenated along the batch axis."""
        if len(parts) == 1:
            return parts[0]
        if isinstance(parts[0], tuple):
            return tuple(torch.cat(p, dim=self.batch_dim) for p in zip(*parts))
        return torch.cat(parts, dim=self.batch_dim)


def _resolve_progress(progress, steps):
    if progress is None:
        try:
            tty = sys.stderr.isatty()
        except (AttributeError, ValueError):
            tty = False
        return bool(tty and steps >= 1000)
    return bool(progress)


def data_scale(config: TrainConfig) -> tuple[float, str]:
    """(bound on std(y_t), the parameter that dominates it) for the configuration's family.

    With |lambda_i| <= 1 and c = 1, Var(c^T x_t) <= q d (sigma_0^2 + t max(omega) sigma_w^2),
    q = cond_max^2 for setting d (its eigenbasis P can amplify by cond(P)^2) and 1
    otherwise (times radius^(2T) when the radius exceeds 1), and Var(y_t) adds sigma_v^2.  The features are cubic in y and the loss is
    of degree 6.

    >>> scale, name = data_scale(TrainConfig("a"))
    >>> round(scale, 3), name                  # sqrt(5 (1 + 30 * 0.01) + 0.01)
    (2.551, 'sigma_0')
    """
    fam = config.family()
    q = fam.spec.variance_amplification(config.cond_max)
    grow = max(1.0, fam.radius) ** (2 * fam.T)          # |lambda| <= radius
    parts = {"sigma_0": q * fam.d * fam.sigma_0 ** 2 * grow,
             "sigma_w": q * fam.d * fam.T * float(np.max(fam.noise_weights)) * fam.sigma_w ** 2 * grow,
             "sigma_v": fam.sigma_v ** 2}
    return math.sqrt(sum(parts.values())), max(parts, key=parts.get)


#: largest data scale (std of y) a training dtype accepts: 10 sd cubed (a feature), times
#: 10 sd (the target) and squared (the loss) stays well inside the dtype's range.
MAX_DATA_SCALE = {"float32": 1e4, "float64": 1e30}
#: fraction of the machine's memory a run may plan to use unless told otherwise.
MEMORY_FRACTION = 0.5


def memory_estimate(config: TrainConfig) -> int:
    """Bytes a run holds at its peak: the prefetched random inputs and features of
    ``_PREFETCH`` + 1 steps, one step's trajectories and features (or, through the forward
    pass, the tokens of every layer) with their gradients, two blocks of eigenbases where
    the systems draw one apart (``Setting.draws_basis``, the sampler's rule, theory/settings.py), and the held-out batch in float64."""
    fam = config.family()
    item = 4 if config.dtype == "float32" else 8
    f = max((config.s + 1) ** 2 * config.s, 2 * config.layers * (config.s + 1) * (fam.T + 1))
    per = (fam.T + 1) * fam.d + fam.T + fam.d * fam.d + 2 * fam.d
    step = config.batch * (per + 2 * (f + fam.T)) * item
    held = config.batch * (per + f + (config.s + 1) * (fam.T + 1)) * 8
    bases = 2 * BASES_BLOCK * config.batch * (fam.d * fam.d + fam.d) * item if fam.spec.draws_basis(fam.isotropic_noise) else 0
    return int((_PREFETCH + 2) * step + held + bases)


def _machine_memory() -> int | None:
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):  # pragma: no cover - not POSIX
        return None


def check_resources(config: TrainConfig, max_memory: float | None = None) -> None:
    """Refuse, before any work, a run whose data overflow its dtype or that would not fit.

    ValueError naming the parameter: the dominant standard deviation when
    :func:`data_scale` exceeds :data:`MAX_DATA_SCALE` of the dtype (features of degree
    3 and a loss of degree 6 would overflow); ``batch`` when :func:`memory_estimate`
    exceeds ``max_memory`` bytes (default :data:`MEMORY_FRACTION` of this machine's
    memory; pass a larger ``max_memory`` to override).
    """
    check_type("config", config, TrainConfig, "a TrainConfig")
    scale, name = data_scale(config)
    if scale > MAX_DATA_SCALE[config.dtype]:
        raise ValueError(f"{name} = {getattr(config, name)!r} makes the data scale std(y) up to "
                         f"{scale:.3g}, beyond what {config.dtype} training holds "
                         f"({MAX_DATA_SCALE[config.dtype]:.0e}: the features are cubic in y, the "
                         f"loss of degree 6); use smaller standard deviations"
                         + (" or dtype='float64'" if config.dtype == "float32" else ""))
    need = memory_estimate(config)
    if max_memory is None:
        total = _machine_memory()
        limit = None if total is None else MEMORY_FRACTION * total
    else:
        limit = check_real("max_memory", max_memory, minimum=0.0, strict_min=True)
    if limit is not None and need > limit:
        raise ValueError(f"batch = {config.batch} needs about {need / 2 ** 30:.3g} GiB, more than "
                         f"the {limit / 2 ** 30:.3g} GiB allowed (half this machine's memory unless "
                         f"max_memory is given); use a smaller batch or raise max_memory")


def train(config: TrainConfig, *, device="auto", progress=None,
          max_memory: float | None = None) -> TrainResult:
    """Train a fresh LinearSelfAttention layer with the paper's protocol (module doc).

    ``device``: "auto" (CUDA if available), "cpu", "cuda", "cuda:N".  ``progress``: a tqdm
    bar on stderr; None = on when stderr is a terminal and steps >= 1000.  The same
    ``config`` on the same CPU (and torch version) gives bitwise the same weights,
    whatever the thread count; CUDA runs use other random streams.  Before any work,
    :func:`check_resources` refuses data that overflow the dtype and runs larger than
    ``max_memory`` bytes (ValueError naming the parameter).
    Raises ``RuntimeError`` if the loss becomes non-finite (lower ``lr``).
    """
    check_type("config", config, TrainConfig, "a TrainConfig")
    check_resources(config, max_memory)
    dev = resolve_device(device)
    show = _resolve_progress(progress, config.steps)
    if dev.type == "cpu":
        # helpers draw shards; the main thread is busy too (see _train): one helper fewer
        workers = min(len(_shard_sizes(config.batch)), torch.get_num_threads() - 1)
        with torch_threads(1):
            return _train(config, dev, show, workers)
    return _train(config, dev, show, 0)


def _train(config: TrainConfig, dev: torch.device, show: bool, workers: int) -> TrainResult:
    dtype = DTYPES[config.dtype]
    s = config.s
    family = config.family()
    sampler = TorchLDSSampler(family, device=dev, dtype=dtype)
    effective = config.forward == "effective"
    batches = _Batches(config, sampler, _STREAM_TRAIN, config.batch, effective, config.steps)
    n_shards = len(batches.sizes)

    init_gen = torch.Generator().manual_seed(stream_seed(config.seed, _STREAM_INIT))
    if config.layers == 1:
        model = LinearSelfAttention(s, init=config.init, init_scale=config.init_scale, dtype=dtype,
                                    generator=init_gen).to(dev)
    else:                                   # forward == "model" (TrainConfig checks it)
        model = StackedAttention(s, config.layers, init=config.init, init_scale=config.init_scale,
                                 dtype=dtype, generator=init_gen).to(dev)
    params = list(model.parameters())
    opt_kw = {}
    if dev.type in ("cpu", "cuda"):
        opt_kw["fused"] = True
    optimizer = torch.optim.AdamW(params, lr=config.lr, betas=config.betas, eps=config.eps,
                                  weight_decay=config.weight_decay, **opt_kw)
    lrs = lr_schedule(config).tolist()
    losses = torch.empty(config.steps, dtype=torch.float64, device=dev)

    bar = None
    if show:
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
    bases_ahead = []            # the helpers also draw the next block of eigenbases (_Batches)

    def prepare_bases(k):       # returns None: the future must not keep the block alive
        batches.bases_block(k)

    def submit(step):
        return [pool.submit(batches.draw, step, j) for j in range(n_shards)]

    def step_data(step):
        if pool is None:
            return batches.join([batches.shard(step, j) for j in range(n_shards)])
        futs = pending.popleft()
        if step + _PREFETCH < config.steps:
            pending.append(submit(step + _PREFETCH))
        if batches.block and step % batches.block == 0 and step + batches.block < config.steps:
            bases_ahead[:] = [pool.submit(prepare_bases, step // batches.block + 1)]
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
            if effective and config.layers > 1:
                loss = stack_effective_loss([b.W_V for b in model.blocks], [b.W_QK for b in model.blocks], *data)
            elif effective:
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
            for futs in [*pending, bases_ahead]:
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
    batches = _Batches(config, sampler, _STREAM_EVAL, config.batch, False, 1)
    y_tm = batches.join([batches.shard(0, j) for j in range(len(batches.sizes))])
    cls = LinearSelfAttention if config.layers == 1 else StackedAttention
    model = cls.from_weights(W_V, W_QK, dtype=torch.float64, device=dev)
    with torch.no_grad():
        y = y_tm.T.contiguous()
        y_hat = model(build_tokens(y, config.s))[1]
        full = float(0.5 * (y_hat - y[:, -1]).square().mean())
        if config.layers > 1:
            eff = float(stack_effective_loss([b.W_V for b in model.blocks], [b.W_QK for b in model.blocks],
                                             *stack_features(y_tm, config.s)))
        else:
            F, target = effective_features(y_tm, config.s)
            eff = float(effective_loss(model.W_V, model.W_QK, F, target))
    if not abs(full - eff) <= 1e-9 * max(1.0, abs(full)):
        raise RuntimeError(f"effective loss {eff!r} != forward-pass loss {full!r}")
    return full
