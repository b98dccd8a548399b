"""models/runtime.py: device resolution and the thread helpers."""
from __future__ import annotations


import pytest
import torch

from models.runtime import cap_threads, resolve_device, torch_threads


# ----------------------------------------------------------------------------- runtime
def test_resolve_device():
    assert resolve_device("cpu") == torch.device("cpu")
    assert resolve_device(torch.device("cpu")) == torch.device("cpu")
    assert resolve_device("auto").type == ("cuda" if torch.cuda.is_available() else "cpu")
    for bad in ("tpu", "", "cuda:x", 3):
        with pytest.raises(ValueError, match="^device"):
            resolve_device(bad)
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="CUDA is not available"):
            resolve_device("cuda")


def test_thread_helpers():
    before = torch.get_num_threads()
    with torch_threads(1) as prev:
        assert prev == before and torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
    assert cap_threads(before) == before
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="^n must"):
            cap_threads(bad)
