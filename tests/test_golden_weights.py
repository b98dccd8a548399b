"""Refactors of the training code keep its weights bit for bit: short runs against stored digests.

The weight cache is keyed by a fingerprint of the training code's source
(models/fingerprint.py), so any edit to it -- a docstring, an import moved -- makes every
cached run stale, and the published runs say which commit trained them.  Whether such an
edit also *moved the weights* is what this test answers: a few short runs that between
them reach every branch of the training closure that the claims use (the paper's AR(1)
protocol, AR(s) lr and betas, settings b and d whose systems torch draws, the asymmetric
control, a stack at radius 0.9, the full forward pass, float64) are trained and the
sha256 of their weights and loss history compared with ``tests/data/golden_weights.json``,
written by the code that trained the published runs (``python tests/test_golden_weights.py
--write``, with the commit it was run at).

Digests of float32 training are reproducible on one CPU, its vector instruction set and
one torch version only (docs/settings.md, "Training"): on another machine the test skips,
naming both.  Control: a run with one hyper-parameter changed in its last digit has
another digest (so the digests see the weights at all).
"""
from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from claims.reports.report import environment
from models.config import TrainConfig
from models.trainer import train

DATA = Path(__file__).resolve().parent / "data" / "golden_weights.json"

#: short runs through every branch the claims' runs take (name -> TrainConfig fields)
RUNS = {
    "ar1-a": dict(setting="a", s=1),
    "ars-b-s4": dict(setting="b", s=4, lr=3e-2, betas=(0.9, 0.99)),
    "ars-d-s2": dict(setting="d", s=2, lr=3e-2, betas=(0.9, 0.99)),
    "ars-asym-s3": dict(setting="asym", s=3, lr=3e-2, betas=(0.9, 0.99)),
    "c-weight-decay": dict(setting="c", s=1, weight_decay=0.01, grad_clip=1.0),
    "stack-L2-radius": dict(setting="a", s=2, layers=2, T=10, radius=0.9, lr=3e-3, betas=(0.9, 0.99)),
    "model-forward": dict(setting="a", s=2, forward="model"),
    "float64": dict(setting="b", s=1, dtype="float64"),
}
STEPS, BATCH, SEED = 30, 64, 7


def _config(fields: dict) -> TrainConfig:
    return TrainConfig(steps=STEPS, batch=BATCH, seed=SEED, **fields)


def digest(result) -> str:
    """sha256 of the weights and the loss history (float64 bytes)."""
    h = hashlib.sha256()
    for a in (result.W_V, result.W_QK, result.loss_history):
        h.update(np.ascontiguousarray(a, dtype=np.float64).tobytes())
    return h.hexdigest()


def run_digests() -> dict:
    """The digest of every run of :data:`RUNS`, trained here (what ``--write`` stores)."""
    return {name: digest(train(_config(f), device="cpu", progress=False)) for name, f in RUNS.items()}


def _machine() -> dict:
    env = environment()
    return {"cpu": env.get("cpu"), "torch_cpu_capability": env.get("torch_cpu_capability"),
            "torch": torch.__version__, "numpy": np.__version__}


def _stored() -> dict:
    return json.loads(DATA.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def stored():
    data = _stored()
    here = _machine()
    if data["machine"] != here:
        pytest.skip(f"golden digests were written on {data['machine']}; this machine is {here}")
    return data


@pytest.mark.parametrize("name", list(RUNS))
def test_weights_are_those_of_the_stored_training_code(stored, name):
    result = train(_config(RUNS[name]), device="cpu", progress=False)
    assert digest(result) == stored["digests"][name], (
        f"{name}: the training code now learns other weights than at commit {stored['commit']}")


def test_control_a_changed_hyper_parameter_changes_the_digest(stored):
    cfg = _config(RUNS["ar1-a"]).replace(lr=1e-3 * (1 + 1e-6))
    assert digest(train(cfg, device="cpu", progress=False)) != stored["digests"]["ar1-a"]


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        raise SystemExit("usage: python tests/test_golden_weights.py --write")
    commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                            cwd=DATA.parent).stdout.strip()
    digests = run_digests()
    DATA.write_text(json.dumps({"commit": commit, "machine": _machine(), "steps": STEPS, "batch": BATCH,
                                "seed": SEED, "digests": digests}, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {DATA}")
