"""Project-wide pytest configuration: threads per worker, hypothesis profiles, the claim plugin.

- Loads the claim-harness plugin (claims/harness/plugin.py: ``--profile``, ``--claims-report``,
  the ``claim`` and ``profile`` fixtures, the claims report) for every run, so that
  ``pytest --profile paper claims`` and ``pytest claims --profile paper`` both work from
  the repository root, and ``pytest tests`` is unaffected (no report without records).
- Pins torch's and MKL's CPU kernels (models/kernels.py) before anything imports torch,
  in the controller and so in every worker: trained runs give the same bits on Intel and
  AMD CPUs (``ldsicl`` and ``import models`` pin them the same way).
- Caps BLAS/OpenMP/torch threads to one per pytest-xdist worker, so that ``-n auto`` on a
  2-core machine runs two single-threaded workers instead of oversubscribing the cores;
  imports torch before any test in every process (a late first import of torch, after
  matplotlib and scipy, crashes).
- Registers the hypothesis profiles for the unit tests under tests/: ``ci`` (derandomised,
  chosen automatically when the environment variable CI is set) and ``dev`` (random, the
  default); pick one explicitly with ``--hypothesis-profile``.  The claims do not depend
  on them or on CI: ``claims.harness.seeds.claim_settings`` always derandomises (seeded from the
  test) unless ``--claims-random`` is given, so two runs of ``pytest claims`` write the
  same records.
"""
from __future__ import annotations

import os

import models  # noqa: F401 - importing the package pins the CPU kernels (models/kernels.py)

_WORKER = os.environ.get("PYTEST_XDIST_WORKER")
if _WORKER is not None:
    for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                 "NUMEXPR_NUM_THREADS", "VECLIB_MAXIMUM_THREADS"):
        os.environ[_var] = "1"

from hypothesis import HealthCheck, settings  # noqa: E402

pytest_plugins = ["claims.harness.plugin"]

settings.register_profile(
    "ci", derandomize=True, deadline=None, max_examples=30, print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "dev", deadline=None, max_examples=30, print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("ci" if os.environ.get("CI") else "dev")


def pytest_configure(config):
    # torch first, in every process: imported for the first time after matplotlib, PIL and
    # scipy have loaded their native libraries (a serial `pytest tests` reaches a test that
    # imports torch late), it fails with "SystemError: ... bad call flags" or a segfault.
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is a hard dependency
        return
    if _WORKER is not None:
        torch.set_num_threads(1)
        try:
            torch.set_num_interop_threads(1)
        except RuntimeError:  # already set in this process
            pass
