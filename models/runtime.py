"""Device and thread helpers shared by the trainer, the cache and the CLI.

The project must run without a GPU (CI has none): every entry point takes
``device="auto"``, which picks CUDA when ``torch.cuda.is_available()`` and the CPU
otherwise.

>>> resolve_device("cpu")
device(type='cpu')
>>> resolve_device("tpu")
Traceback (most recent call last):
...
ValueError: device must be 'auto', 'cpu', 'cuda' or 'cuda:<index>', got 'tpu'
"""
from __future__ import annotations

import contextlib
import re

import torch

from theory.validation import check_positive_int, check_type

__all__ = ["resolve_device", "cap_threads", "torch_threads"]

_CUDA_RE = re.compile(r"^cuda(:\d+)?$")


def resolve_device(device="auto") -> torch.device:
    """``"auto" | "cpu" | "cuda" | "cuda:N"`` (or a ``torch.device``) -> ``torch.device``.

    ``"auto"`` is CUDA when available, else the CPU.  Asking for CUDA on a machine
    without it, or for a CUDA index that does not exist, is a ``ValueError`` naming
    ``device`` (not a crash deep inside torch).
    """
    if isinstance(device, torch.device):
        device = str(device)
    check_type("device", device, str, "a string such as 'auto', 'cpu' or 'cuda'")
    name = device.strip().lower()
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cpu":
        return torch.device("cpu")
    if _CUDA_RE.match(name):
        if not torch.cuda.is_available():
            raise ValueError(f"device {device!r} was requested but CUDA is not available "
                             "(use device='auto' or 'cpu')")
        dev = torch.device(name)
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            raise ValueError(f"device {device!r}: only {torch.cuda.device_count()} CUDA device(s)")
        return dev
    raise ValueError(f"device must be 'auto', 'cpu', 'cuda' or 'cuda:<index>', got {device!r}")


def cap_threads(n: int) -> int:
    """Use at most ``n`` torch threads in this process; returns the previous intra-op count.

    Sets the intra-op thread count and, where torch still allows it (only before the
    first inter-op parallel work), the inter-op count too.  The root ``conftest.py``
    already caps every pytest-xdist worker to one thread.
    """
    n = check_positive_int("n", n)
    previous = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        torch.set_num_interop_threads(n)
    except RuntimeError:  # inter-op pool already started: torch forbids changing it
        pass
    return previous


@contextlib.contextmanager
def torch_threads(n: int):
    """Context manager: intra-op threads set to ``n`` inside, restored on exit."""
    n = check_positive_int("n", n)
    previous = torch.get_num_threads()
    if previous != n:
        torch.set_num_threads(n)
    try:
        yield previous
    finally:
        if torch.get_num_threads() != previous:
            torch.set_num_threads(previous)
