"""One JSON policy for non-finite numbers (theory/jsonvalues.py), checked where JSON is
written: the weight cache, a training result, kappa's ``--json``, the claims report.
The oracle is a strict parser (Python's ``json`` with NaN/Infinity tokens refused)."""
from __future__ import annotations

import ast
import json
import math
from pathlib import Path

import numpy as np
import pytest

from models.cache import load_cached, store
from models.config import TrainConfig
from models.result import TrainResult
from theory.jsonvalues import NON_FINITE, dumps, float_from_json, json_float, to_json

ROOT = Path(__file__).resolve().parents[1]


def strict_loads(text: str):
    def refuse(token):
        raise ValueError(f"non-strict JSON token {token}")
    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize("x", [float("nan"), float("inf"), float("-inf"), 0.0, -1.5e-300, 1e308])
def test_a_float_round_trips(x):
    back = float_from_json(strict_loads(dumps([x]))[0])
    assert (math.isnan(x) and math.isnan(back)) or back == x


def test_containers_and_numpy_values():
    obj = {1: (np.float32(np.inf), np.array([[np.nan, 2.0]])), "k": [np.int64(4), None, "NaN", True]}
    assert to_json(obj) == {"1": ["Infinity", [["NaN", 2.0]]], "k": [4, None, "NaN", True]}
    assert json_float(np.float64(-np.inf)) == "-Infinity" and set(NON_FINITE) == {"NaN", "Infinity", "-Infinity"}
    for bad in ("nan", "inf", None, True, [1.0]):
        with pytest.raises(ValueError, match="value must be"):
            float_from_json(bad)


def _result(**changes) -> TrainResult:
    k = 2
    base = dict(config=TrainConfig(steps=4, batch=4, warmup_steps=0), W_V=np.eye(k), W_QK=np.eye(k),
                loss_history=np.array([1.0, np.inf, np.nan, 0.5]), history_every=1, final_loss=np.inf,
                final_loss_stderr=np.nan, final_window=1, eval_loss=0.25, wall_seconds=0.1, device="cpu",
                torch_version="x")
    return TrainResult(**{**base, **changes})


def test_a_training_result_with_non_finite_losses_is_strict_json_and_reads_back():
    r = _result()
    data = strict_loads(dumps(r.to_dict()))
    assert data["loss_history"][1:3] == ["Infinity", "NaN"] and data["final_loss"] == "Infinity"
    back = TrainResult.from_dict(data)
    np.testing.assert_array_equal(back.loss_history, r.loss_history)
    assert back.final_loss == np.inf and math.isnan(back.final_loss_stderr)


def test_the_cache_writes_strict_json(tmp_path):
    r = _result()
    path = store(r, tmp_path)
    data = strict_loads(path.read_text(encoding="utf-8"))      # the old writer used bare NaN tokens
    assert data["final_loss_stderr"] == "NaN"
    back = load_cached(r.config, cache_dir=tmp_path, device="cpu")
    assert back is not None and back.final_loss == np.inf


def test_kappa_json_spells_non_finite_numbers_as_the_policy_says():
    from theory.kappa import KappaResult
    js = KappaResult(kappa=float("nan"), exact=None, stderr=float("inf"), method="mc-moments",
                     numerator=1.0, denominator=0.0, details={"x": float("-inf")}).to_json()
    assert (js["kappa"], js["stderr"], js["details"]["x"]) == ("NaN", "Infinity", "-Infinity")
    strict_loads(json.dumps(js, allow_nan=False))


@pytest.mark.reads_source
def test_no_writer_of_json_bypasses_the_policy():
    """Every json.dumps in theory/, models/, claims/ either goes through the policy (the
    module itself) or hashes/stores values that are finite by construction (a key, a
    fingerprint, strings); none writes bare NaN tokens (allow_nan=True).  Planted: such a
    call is found."""
    allowed = {("models/config.py", "key"), ("models/cache.py", "cache_key"),
               ("models/fingerprint.py", "digest")}

    def calls(tree, rel):
        out = []
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(fn):
                if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                        and node.func.attr == "dumps" and isinstance(node.func.value, ast.Name)
                        and node.func.value.id == "json"):
                    nan = [k for k in node.keywords if k.arg == "allow_nan"
                           and isinstance(k.value, ast.Constant) and k.value.value is True]
                    if nan or (rel, fn.name) not in allowed:
                        out.append((rel, fn.name, node.lineno))
        return out

    found = []
    for pkg in ("theory", "models", "claims"):
        for path in sorted((ROOT / pkg).glob("*.py")):
            if path.name == "jsonvalues.py":
                continue
            rel = f"{pkg}/{path.name}"
            found += calls(ast.parse(path.read_text(encoding="utf-8")), rel)
    assert found == []
    planted = "def write(x):\n    return json.dumps(x, allow_nan=True)\n"
    assert calls(ast.parse(planted), "claims/reports/report.py") == [("claims/reports/report.py", "write", 2)]
