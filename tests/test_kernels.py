"""models/kernels.py: the CPU kernels pinned for training reach torch and MKL, and the cache key sees them.

Independent of the module: each child process reads what torch (``get_cpu_capability``)
and MKL (its own ``mkl_serv_cbwr_get``) use, and trains a few steps, so a pin that does
not reach the libraries, or arrives after the first torch operation, shows as another
capability, another MKL branch or other weights.  Whether two CPUs then give the same
bits cannot be tested on one machine: the published runs record the kernels they were
trained with (``environment``), and docs/settings.md ("Training") says what was measured
across machines.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from _procs import clean_env, run_bounded

from models.kernels import KERNEL_PINS, PINNED, cpu_kernels, mkl_branch, pin_cpu_kernels

REPO = Path(__file__).resolve().parents[1]

#: a child that trains 20 steps and prints its kernels, its fingerprint's and the weights' digest;
#: ``EARLY`` runs one torch operation before ``models`` is imported
CHILD = r"""
import hashlib, json, os, sys
import torch
if os.environ.get("EARLY"):
    torch.ones(64, 64) @ torch.ones(64, 64)       # initialises MKL (and fixes the capability)
from models.config import TrainConfig
from models.fingerprint import current_fingerprint
from models.kernels import cpu_kernels
from models.trainer import train
r = train(TrainConfig("b", s=2, steps=20, batch=256, seed=3, lr=3e-2), device="cpu", progress=False)
print(json.dumps({"kernels": cpu_kernels(), "fingerprint": current_fingerprint("cpu").kernels,
                  "capability": torch.backends.cpu.get_cpu_capability(),
                  "weights": hashlib.sha256(r.W_V.tobytes() + r.W_QK.tobytes()).hexdigest()}))
"""


def _has_avx2() -> bool:
    try:
        flags = Path("/proc/cpuinfo").read_text(encoding="utf-8")
    except OSError:
        return False
    return " avx2" in flags


needs_avx2 = pytest.mark.skipif(not _has_avx2(), reason="the pins name AVX2; this CPU has none (or no /proc/cpuinfo)")


def _child(**env) -> dict:
    unset = {k: None for k in (*KERNEL_PINS, "EARLY")}
    out = run_bounded([sys.executable, "-c", CHILD], cwd=REPO, timeout=300,
                      env=clean_env(REPO, **{**unset, **env}))
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def children():
    return {"pinned": _child(), "early": _child(EARLY="1"),
            "user": _child(MKL_CBWR="AUTO", ATEN_CPU_CAPABILITY="default")}


def test_pin_sets_only_what_the_environment_leaves_unset():
    env = {"MKL_CBWR": "  ", "OTHER": "x"}
    assert pin_cpu_kernels(env) == KERNEL_PINS and env == {**KERNEL_PINS, "OTHER": "x"}
    assert pin_cpu_kernels(env) == {} and env["MKL_CBWR"] == "COMPATIBLE"
    mine = {"ATEN_CPU_CAPABILITY": "avx512", "MKL_CBWR": "AVX2"}
    assert pin_cpu_kernels(mine) == {} and mine == {"ATEN_CPU_CAPABILITY": "avx512", "MKL_CBWR": "AVX2"}


@needs_avx2
def test_this_pytest_process_trains_with_the_pinned_kernels():
    """The root conftest.py pins before pytest imports torch: the claims train pinned."""
    assert cpu_kernels() == PINNED and mkl_branch() == "COMPATIBLE"
    assert all(os.environ[k] == v for k, v in KERNEL_PINS.items())


@needs_avx2
def test_importing_models_pins_a_fresh_process(children):
    pinned = children["pinned"]
    assert pinned["kernels"] == PINNED == pinned["fingerprint"]


def test_a_pin_after_the_first_torch_operation_is_seen_not_hidden(children):
    """A process that ran torch before importing ``models`` trains unpinned MKL; its key
    names other kernels, so the cache never serves its weights for pinned ones."""
    early, pinned = children["early"], children["pinned"]
    assert early["kernels"].endswith("/mkl:OFF") and early["fingerprint"] == early["kernels"]
    assert early["fingerprint"] != pinned["fingerprint"]
    assert early["weights"] != pinned["weights"]        # the MKL branch moves the weights


def test_a_users_own_kernels_win_and_are_recorded(children):
    user = children["user"]
    assert user["kernels"] == "DEFAULT/mkl:AUTO" == user["fingerprint"]
    assert user["weights"] not in (children["pinned"]["weights"], children["early"]["weights"])


def test_the_account_of_the_cross_machine_scan_is_the_scans():
    """docs/settings.md's words on the golden runs on another CPU are those of the scan it
    links (docs/results/kernels/): how many stored digests each variant gave again, and that
    the two machines differ."""
    import json
    from pathlib import Path
    root = Path(__file__).resolve().parents[1]
    scan = json.loads((root / "docs/results/kernels/golden-amd-epyc-family26.json").read_text(encoding="utf-8"))
    text = " ".join((root / "docs/settings.md").read_text(encoding="utf-8").split())
    v, runs = scan["variants"], scan["runs"]
    assert scan["machine"]["cpu"] != scan["stored_machine"]["cpu"]
    assert v["pinned"]["n_equal"] == v["torch unpinned"]["n_equal"] == runs and v["pinned"]["kernels"] == PINNED
    words = {4: "four"}
    assert f"only {words[v['MKL unpinned']['n_equal']]} of the eight with MKL's left to its own dispatch" in text
    assert runs == 8 and "eight short runs" in text
