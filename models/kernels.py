"""CPU kernels pinned for training, so that float32 runs give the same bits on Intel and AMD CPUs.

Why: a trained AR(s) run (s >= 2) can end at one of several stationary points of the
population loss, and which one it reaches can turn on rounding.  Unpinned, torch picks
its vectorised kernels by the CPU's instruction set (AVX-512 on the Intel Xeon that
published the runs of 2026-12-03, AVX2 on an AMD EPYC) and MKL, which torch's CPU build
uses for matrix products and LAPACK, picks its code path by CPU model and vendor: the
same configuration then trained to other weights on the two kinds of machine CI runs on,
and three trained verdicts of the quick profile moved with the machine
(docs/results/README.md, "Changes to the published runs", 2026-12-04).

The pins (:data:`KERNEL_PINS`, environment variables read by the libraries themselves):

* ``ATEN_CPU_CAPABILITY=avx2``: torch's own kernels (elementwise, reductions, the
  random number generators) use their AVX2 code on any CPU that has AVX2, the same
  instructions in the same order on both vendors; ``torch.backends.cpu.get_cpu_capability()``
  then reads ``AVX2``.
* ``MKL_CBWR=COMPATIBLE``: MKL's Conditional Numerical Reproducibility in the one branch
  its documentation supports on Intel *and* non-Intel CPUs (SSE2 without the approximate
  ``rcpps``/``rsqrtps``; fixed cache sizes, deterministic reductions).  On this project's
  batched products it costs nothing measurable (docs/notes.md, "Training speed").

Both are read once per process, torch's at its first kernel dispatch and MKL's at its
first call, so :func:`pin_cpu_kernels` must run before the process's first torch
operation: importing the ``models`` package runs it (models/__init__.py), and so does the
root conftest.py before pytest imports torch.  It sets a variable only where the
environment leaves it unset (a user's own choice wins) and, through the environment,
reaches child processes too.  Whatever happened, :func:`cpu_kernels` reads what this
process actually uses; the weight cache keys every run by it (models/fingerprint.py,
``kernels``), so weights trained under other kernels are never served for pinned ones,
and the published runs record it in their ``environment``.

>>> sorted(KERNEL_PINS)
['ATEN_CPU_CAPABILITY', 'MKL_CBWR']
>>> env = {"MKL_CBWR": "AVX2"}
>>> pin_cpu_kernels(env)                 # sets what is unset, keeps the user's MKL branch
{'ATEN_CPU_CAPABILITY': 'avx2'}
>>> env["MKL_CBWR"]
'AVX2'
"""
from __future__ import annotations

import ctypes
import functools
import os
from pathlib import Path

__all__ = ["KERNEL_PINS", "PINNED", "pin_cpu_kernels", "mkl_branch", "cpu_kernels"]

#: environment variable -> value (module docstring)
KERNEL_PINS = {"ATEN_CPU_CAPABILITY": "avx2", "MKL_CBWR": "COMPATIBLE"}
#: what :func:`cpu_kernels` reads when both pins took effect
PINNED = "AVX2/mkl:COMPATIBLE"

#: MKL's branch numbers (mkl_cbwr.h: MKL_CBWR_BRANCH_OFF = 1, MKL_CBWR_AUTO = 2, ...)
_MKL_BRANCHES = {1: "OFF", 2: "AUTO", 3: "COMPATIBLE", 4: "SSE2", 6: "SSSE3", 7: "SSE4_1",
                 8: "SSE4_2", 9: "AVX", 10: "AVX2", 11: "AVX512_MIC", 12: "AVX512",
                 13: "AVX512_MIC_E1", 14: "AVX512_E1"}


def pin_cpu_kernels(environ=None) -> dict:
    """Set each of :data:`KERNEL_PINS` in ``environ`` (``os.environ`` by default) where it
    is unset or empty; returns the variables it set.  Effective only before the process's
    first torch operation (module docstring)."""
    env = os.environ if environ is None else environ
    done = {}
    for name, value in KERNEL_PINS.items():
        if not str(env.get(name, "")).strip():
            env[name] = value
            done[name] = value
    return done


@functools.lru_cache(maxsize=None)
def mkl_branch() -> str:
    """The MKL code branch this process uses: ``COMPATIBLE`` when pinned, ``OFF`` when MKL
    runs unpinned (its default dispatch), ``none`` for a torch build without MKL.  Read
    from MKL itself (``mkl_serv_cbwr_get``, exported by torch's CPU library); reading it
    initialises MKL, so call it only after :func:`pin_cpu_kernels`; the branch is then
    fixed for the life of the process, so it is read once."""
    import torch

    if not torch.backends.mkl.is_available():
        return "none"
    lib_dir = Path(torch.__file__).resolve().parent / "lib"
    for name in ("libtorch_cpu.so", "libtorch_cpu.dylib", "torch_cpu.dll"):
        if (lib_dir / name).is_file():
            try:
                get = ctypes.CDLL(str(lib_dir / name)).mkl_serv_cbwr_get
            except (OSError, AttributeError):
                break
            get.restype = ctypes.c_int
            code = get(ctypes.c_int(1))                   # MKL_CBWR_BRANCH
            return _MKL_BRANCHES.get(code, f"code {code}")
    return "unknown"                                      # pragma: no cover - another build of torch


def cpu_kernels() -> str:
    """``"<torch CPU capability>/mkl:<branch>"``, e.g. ``"AVX2/mkl:COMPATIBLE"`` (:data:`PINNED`)
    when both pins took effect; part of a CPU run's cache key."""
    import torch

    return f"{torch.backends.cpu.get_cpu_capability()}/mkl:{mkl_branch()}"
