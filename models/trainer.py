r"""Training the linear self-attention layer with the paper's protocol: the threaded training loop and train().

Protocol (paper, section "training"; the numbers the summaries give are the defaults)::

    every step: a fresh batch of ``batch`` new systems (new A, new noise) from the setting,
                one trajectory y_1..y_T each;
    loss      = mean over the batch of 1/2 (y_hat_T - y_T)^2,  y_hat_T from the LSA layer;
    optimiser = AdamW, global-norm gradient clipping, linear warm-up then cosine annealing;
    8000 steps, batch 3000 (AR(1)), T = 30, d = 5, sigma_w = sigma_v = 0.1.

The choices the paper leaves open (lr, warm-up, clipping threshold, weight decay,
initialisation) are the defaults of :class:`models.config.TrainConfig`, part of its key;
the data come from models/sampler.py, the features and loss from models/features.py.

Loss (``forward="effective"``, the default): 1/2 mean (beta . F - y_T)^2 with the features
F[r,l,m] = C[r,l] z_q[m] and beta[r,l,m] = b_r W_QK[l,m] built from the layer's own
weights -- exactly the layer's function, since y_hat_T = b^T C W_QK z_q for every theta;
``TrainResult.eval_loss`` re-checks it by the full forward pass, in float64, on a held-out
batch.  ``forward="model"`` trains through ``LinearSelfAttention.forward`` literally.

Random streams (models/batches.py): each step's batch is cut into shards of at most ``SHARD_SIZE`` systems,
each drawn from ``stream_seed(seed, purpose, step, shard)``; where the systems carry an
eigenbasis (``Setting.draws_basis``) the bases of ``BASES_BLOCK`` consecutive steps come
from ``stream_seed(seed, purpose + 3, block)``.  With k torch threads, k - 1 helper threads
draw the next shards' random inputs while the main thread simulates, builds the features
and steps (torch's intra-op threads set to 1 meanwhile); the streams depend only on the
configuration, so a seed gives bitwise the same weights on a given CPU, whatever the
threads.  Timings and the history of these choices: docs/notes.md, "Training speed".

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
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import torch
from tqdm import tqdm

from theory.validation import check_real, check_type

from .attention import LinearSelfAttention, StackedAttention, build_tokens
from .batches import BASES_BLOCK, Batches, shard_sizes
from .config import DTYPES, TrainConfig, lr_schedule, stream_seed
from .features import effective_features, effective_loss, stack_effective_loss, stack_features
from .result import TrainResult
from .runtime import resolve_device, torch_threads
from .sampler import TorchLDSSampler

__all__ = [
    "train",
    "check_resources",
    "data_scale",
    "memory_estimate",
]

#: How many steps ahead the CPU thread pool prepares batches.
_PREFETCH = 3

# purposes of the random streams (second word of stream_seed, after the seed)
_STREAM_TRAIN, _STREAM_INIT, _STREAM_EVAL = 0, 1, 2


# ----------------------------------------------------------------------------- training
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
        workers = min(len(shard_sizes(config.batch)), torch.get_num_threads() - 1)
        with torch_threads(1):
            return _train(config, dev, show, workers)
    return _train(config, dev, show, 0)


def _train(config: TrainConfig, dev: torch.device, show: bool, workers: int) -> TrainResult:
    dtype = DTYPES[config.dtype]
    s = config.s
    family = config.family()
    sampler = TorchLDSSampler(family, device=dev, dtype=dtype)
    effective = config.forward == "effective"
    batches = Batches(config, sampler, _STREAM_TRAIN, config.batch, effective, config.steps)
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
    bases_ahead = []            # the helpers also draw the next block of eigenbases (Batches)

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
    batches = Batches(config, sampler, _STREAM_EVAL, config.batch, False, 1)
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
