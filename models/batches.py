"""The step batches of a training run: shards of systems on their own random streams (models/trainer.py).

Each step's batch of ``batch`` systems is cut into shards of at most :data:`SHARD_SIZE`;
shard j of step t is drawn from the generator seeded by ``stream_seed(seed, purpose, t, j)``
(models/config.py), so the data depend only on the configuration, never on which thread
draws first.  Where the systems carry an eigenbasis (``Setting.draws_basis``) the bases of
:data:`BASES_BLOCK` consecutive steps are drawn in one call from
``stream_seed(seed, purpose + BASES_OFFSET, block)`` and cut into the shards' columns.

>>> shard_sizes(3000), shard_sizes(1536), shard_sizes(1537)
([1500, 1500], [1536], [769, 768])
"""
from __future__ import annotations

import threading

import torch

from .config import TrainConfig, stream_seed
from .features import effective_features, stack_features
from .sampler import TorchLDSSampler

__all__ = ["SHARD_SIZE", "BASES_BLOCK", "BASES_OFFSET", "Batches", "shard_sizes", "thread_generator"]

#: Largest number of systems one generator stream draws in a step (module doc).
SHARD_SIZE = 1536


#: the eigenbases of purpose p come from purpose p + BASES_OFFSET (3: training, 5: held-out batch)
BASES_OFFSET = 3
_TLS = threading.local()


def thread_generator(device: torch.device) -> torch.Generator:
    gens = getattr(_TLS, "gens", None)
    if gens is None:
        gens = _TLS.gens = {}
    key = str(device)
    g = gens.get(key)
    if g is None:
        g = gens[key] = torch.Generator(device=device)
    return g


def shard_sizes(batch: int) -> list[int]:
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


class Batches:
    """Produces step batches: shard j of step t from stream (seed, purpose, t, j).

    Where the systems carry an eigenbasis (``sampler.needs_bases``), the bases of the
    ``BASES_BLOCK`` steps kB .. kB + B - 1 are drawn in one call from stream (seed,
    purpose + 3, k) (:data:`BASES_OFFSET`), and shard j of step t takes its columns,
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
        self.sizes = shard_sizes(batch)
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
        gen.manual_seed(stream_seed(self.config.seed, self.purpose + BASES_OFFSET, k))
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
        gen = thread_generator(self.sampler.device)
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
