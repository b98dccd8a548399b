"""The outcome of a training run: TrainResult (learned weights, loss curve, metadata) and its JSON record.

The record (:meth:`TrainResult.to_dict`) is what the weight cache stores under
:meth:`TrainConfig.key`; floats round-trip exactly through ``json``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from theory.jsonvalues import float_from_json, json_float
from theory.validation import check_type

from .attention import LinearSelfAttention, StackedAttention
from .config import KEY_FORMAT, TrainConfig

__all__ = ["TrainResult"]


@dataclass(frozen=True, eq=False)
class TrainResult:
    """Outcome of :func:`models.trainer.train`.

    ``W_V``, ``W_QK``: learned (s+1) x (s+1) weights (float64 numpy); (L, s+1, s+1), one
    pair a layer, for a stack of L = ``config.layers`` > 1 layers.
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

    def model(self, dtype: torch.dtype = torch.float64, device=None):
        """A LinearSelfAttention (a StackedAttention for layers > 1) holding the learned weights."""
        cls = LinearSelfAttention if self.config.layers == 1 else StackedAttention
        return cls.from_weights(self.W_V, self.W_QK, dtype=dtype, device=device)

    def ar1_coefficient(self) -> float:
        """For s = 1: b_2 W[1,1] + b_1 W[2,1] (1-based), which Theorem 4.1 says is kappa."""
        if self.config.s != 1 or self.config.layers != 1:
            raise ValueError(f"ar1_coefficient needs s = 1 and one layer, got s = {self.config.s}, "
                             f"layers = {self.config.layers}")
        return float(self.W_V[1, 1] * self.W_QK[0, 0] + self.W_V[1, 0] * self.W_QK[1, 0])

    def to_dict(self) -> dict:
        """Plain JSON types; floats round-trip exactly through ``json``, non-finite ones as
        ``"NaN"`` / ``"Infinity"`` (theory/jsonvalues.py, the project's one policy)."""
        return {
            "format": KEY_FORMAT,
            "key": self.config.key(),
            "config": self.config.to_dict(),
            "W_V": np.asarray(self.W_V, dtype=np.float64).tolist(),
            "W_QK": np.asarray(self.W_QK, dtype=np.float64).tolist(),
            "loss_history": [json_float(x) for x in self.loss_history],
            "history_every": int(self.history_every),
            "final_loss": json_float(self.final_loss),
            "final_loss_stderr": json_float(self.final_loss_stderr),
            "final_window": int(self.final_window),
            "eval_loss": json_float(self.eval_loss),
            "wall_seconds": float(self.wall_seconds),
            "device": str(self.device),
            "torch_version": str(self.torch_version),
        }

    @classmethod
    def from_dict(cls, data: dict) -> "TrainResult":
        """Inverse of :meth:`to_dict`; ``ValueError`` on a malformed or foreign record."""
        check_type("data", data, dict, "a dict")
        if data.get("format") != KEY_FORMAT:
            raise ValueError(f"format must be {KEY_FORMAT!r}, got {data.get('format')!r}")
        try:
            config = TrainConfig.from_dict(data["config"])
            k = config.s + 1
            shape = (k, k) if config.layers == 1 else (config.layers, k, k)
            W_V = np.asarray(data["W_V"], dtype=np.float64)
            W_QK = np.asarray(data["W_QK"], dtype=np.float64)
            if W_V.shape != shape or W_QK.shape != shape:
                raise ValueError(f"W_V and W_QK must have shape {shape}")
            if not (np.isfinite(W_V).all() and np.isfinite(W_QK).all()):
                raise ValueError("W_V and W_QK must be finite")
            return cls(
                config=config, W_V=W_V, W_QK=W_QK,
                loss_history=np.asarray([float_from_json(x) for x in data["loss_history"]], dtype=np.float64),
                history_every=int(data["history_every"]),
                final_loss=float_from_json(data["final_loss"]),
                final_loss_stderr=(float("nan") if data["final_loss_stderr"] is None     # written so before the policy
                                   else float_from_json(data["final_loss_stderr"])),
                final_window=int(data["final_window"]),
                eval_loss=float_from_json(data["eval_loss"]),
                wall_seconds=float(data["wall_seconds"]),
                device=str(data["device"]),
                torch_version=str(data.get("torch_version", "")),
            )
        except (KeyError, TypeError) as exc:
            raise ValueError(f"malformed TrainResult record: {exc!r}") from None
