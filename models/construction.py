"""The depth construction (theory/construction.py) run through the stacks' own forward pass.

von Oswald et al.'s way: the hand-set weights of k Richardson steps are loaded into
``models.attention.StackedAttention`` -- the module the trained stacks are -- and the
prediction is read out as ``READOUT_SIGN * [Y_L]`` (docs/math.md section 7.2).  Not part
of the trainer (nothing here changes what is trained or its cache key).

>>> import numpy as np
>>> float(construction_prediction(np.array([1.0, 2.0, 3.0, 4.0]), 1, 1, 0.5))
6.0
"""
from __future__ import annotations

import numpy as np
import torch

from theory.construction import READOUT_SIGN, richardson_weights

from .attention import StackedAttention

__all__ = ["construction_prediction"]


def construction_prediction(y, s: int, steps: int, eta, P=None) -> np.ndarray:
    """The prediction of y_T of the stack loaded with ``steps`` Richardson steps (step
    sizes ``eta``, preconditioner ``P``), float64, shape (...)."""
    W_V, W_QK = richardson_weights(s, steps, eta, P)
    stack = StackedAttention.from_weights(W_V, W_QK, dtype=torch.float64)
    y = np.array(y, dtype=np.float64)          # a copy: torch wants a writable array
    with torch.no_grad():
        out = stack.predict(torch.as_tensor(y.reshape(-1, y.shape[-1]), dtype=torch.float64))
    return READOUT_SIGN * out.numpy().reshape(y.shape[:-1])
