"""Which kernel pins make this CPU train the golden runs' bits (docs/settings.md, "Training").

Run once, not by the suite:  python docs/scans/golden_kernels.py > docs/results/kernels/golden-NAME.json

tests/test_golden_weights.py trains eight short runs (its ``RUNS``, ``STEPS`` x ``BATCH``,
seed ``SEED``) and compares the sha256 of their weights and loss history (its ``digest``)
with tests/data/golden_weights.json, stored on one CPU; on another CPU model the test skips.
This script trains the same runs on this CPU under each combination of torch's CPU
capability and MKL's reproducibility branch below, each in a fresh process (both are read
once per process, before torch's first operation), and records how many of the stored
digests each reproduces:

* ``pinned``: the project's pins (models/kernels.py: ``ATEN_CPU_CAPABILITY=avx2``,
  ``MKL_CBWR=COMPATIBLE``), what every training run of the suite uses;
* ``torch unpinned``: torch's own choice for this CPU (``ATEN_CPU_CAPABILITY`` set to the
  highest it offers here), MKL pinned;
* ``MKL unpinned``: torch pinned, MKL's own dispatch (``MKL_CBWR=AUTO``);
* ``both unpinned``: both left to the libraries.

A user's value of either variable wins over the pin (models/kernels.py), which is how the
unpinned variants are made.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CHILD = r"""
import json, sys
sys.path.insert(0, "tests")
import test_golden_weights as g
from models.kernels import cpu_kernels
print(json.dumps({"kernels": cpu_kernels(), "digests": g.run_digests()}))
"""


def best_capability() -> str:
    """The highest CPU capability torch offers on this machine, unpinned."""
    env = {k: v for k, v in os.environ.items() if k != "ATEN_CPU_CAPABILITY"}
    out = subprocess.run([sys.executable, "-c", "import torch; print(torch.backends.cpu.get_cpu_capability())"],
                         capture_output=True, text=True, check=True, env=env, cwd=ROOT)
    return out.stdout.strip().lower()


def main() -> int:
    sys.path.insert(0, str(ROOT / "tests"))
    import test_golden_weights as g

    stored = g._stored()
    top = best_capability()
    variants = {"pinned": ("avx2", "COMPATIBLE"), "torch unpinned": (top, "COMPATIBLE"),
                "MKL unpinned": ("avx2", "AUTO"), "both unpinned": (top, "AUTO")}
    rows = {}
    for name, (cap, cbwr) in variants.items():
        env = dict(os.environ, ATEN_CPU_CAPABILITY=cap, MKL_CBWR=cbwr)
        out = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True,
                             check=True, env=env, cwd=ROOT)
        got = json.loads(out.stdout.strip().splitlines()[-1])
        equal = {n: got["digests"][n] == stored["digests"][n] for n in got["digests"]}
        rows[name] = {"ATEN_CPU_CAPABILITY": cap, "MKL_CBWR": cbwr, "kernels": got["kernels"],
                      "equal": equal, "n_equal": sum(equal.values()), "digests": got["digests"]}
    commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=ROOT).stdout.strip()
    print(json.dumps({"what": __doc__.splitlines()[0], "commit": commit, "machine": g._machine(),
                      "stored_machine": stored["machine"], "stored_commit": stored["commit"],
                      "runs": len(g.RUNS), "steps": g.STEPS, "batch": g.BATCH, "variants": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
