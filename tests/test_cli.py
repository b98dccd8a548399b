"""claims.cli.main: ``ldsicl kappa`` / ``ldsicl train`` / ``ldsicl cache`` in-process (main(argv)) and as a process."""
from __future__ import annotations

import json
import re
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from claims.cli.main import main
from models.config import TrainConfig
from models.result import TrainResult

REPO = Path(__file__).resolve().parents[1]
REFERENCE_KAPPA = 0.2052454015138651  # docs/math.md section 4, setting (a) defaults

KAPPA_ARGS = ["kappa", "--setting", "a", "--T", "30", "--d", "5", "--sigma-w", "0.1",
              "--sigma-v", "0.1", "--json"]


def _run(*args, timeout=120):
    """``python -m claims.cli.main ARGS`` in a process group killed if it runs over ``timeout``."""
    from _procs import clean_env, run_bounded
    return run_bounded([sys.executable, "-m", "claims.cli.main", *args], timeout=timeout, cwd=REPO,
                       env=clean_env(REPO, OMP_NUM_THREADS="1"))


def _check_kappa_json(text):
    out = json.loads(text)
    assert out["kappa"] == pytest.approx(REFERENCE_KAPPA, rel=1e-12)
    assert re.fullmatch(r"\d+/\d+", out["exact"])
    assert float(Fraction(out["exact"])) == pytest.approx(out["kappa"], rel=1e-15)
    assert out["method"] == "exact-rational" and out["stderr"] == 0.0
    return out


def test_kappa_json_in_process(capsys):
    assert main(KAPPA_ARGS) == 0
    captured = capsys.readouterr()
    _check_kappa_json(captured.out)
    assert captured.err == ""


def test_kappa_json_subprocess():
    proc = _run(*KAPPA_ARGS)
    assert proc.returncode == 0, proc.stderr
    _check_kappa_json(proc.stdout)


def test_kappa_text_output_and_exact_decimals(capsys):
    assert main(["kappa"]) == 0  # defaults are the paper's
    out = capsys.readouterr().out
    m = re.search(r"kappa = (\S+)\s+\(method exact-rational; auto: exact rational", out)
    assert m and float(m.group(1)) == pytest.approx(REFERENCE_KAPPA, rel=1e-12)
    assert re.search(r"^exact = \d+/\d+$", out, re.M)
    # "0.1" and "1/10" are the same exact number
    assert main(KAPPA_ARGS[:-1] + ["--sigma-w", "1/10", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["exact"] is not None


def test_kappa_non_decimal_rational_is_exact(capsys):
    """--sigma-w 1/3 goes to the exact engine as 1/3, not as the float 0.333..."""
    from theory.kappa_exact import kappa_exact_a
    assert main(["kappa", "--T", "6", "--sigma-w", "1/3", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert Fraction(out["exact"]) == kappa_exact_a(6, 5, Fraction(1, 9), Fraction(1, 100), 1)


def test_kappa_monte_carlo_reports_stderr(capsys):
    assert main(["kappa", "--setting", "b", "--T", "8", "--d", "2", "--mc-systems", "2000",
                 "--method", "mc-moments", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["exact"] is None and out["stderr"] > 0 and out["method"].startswith("mc")
    assert np.isfinite(out["kappa"])


@pytest.mark.parametrize("argv, name", [
    (["kappa", "--setting", "z"], "--setting"),
    (["kappa", "--sigma-w", "-0.1"], "sigma_w"),
    (["kappa", "--sigma-v", "nan"], "sigma_v"),
    (["kappa", "--sigma-0", "inf"], "sigma_0"),
    (["kappa", "--sigma-w", "abc"], "sigma_w"),
    (["kappa", "--T", "2"], "--T"),
    (["kappa", "--d", "0"], "--d"),
    (["kappa", "--method", "magic"], "--method"),
    (["kappa", "--mc-systems", "0"], "--mc-systems"),
    (["kappa", "--setting", "b", "--method", "exact"], "--method"),
    (["frobnicate"], "frobnicate"),
    ([], "required"),
    (["train", "--device", "tpu", "--no-cache"], "--device"),
    (["train", "--T", "3", "--s", "2", "--no-cache"], "--T"),
    (["train", "--steps", "0"], "--steps"),
    (["train", "--batch", "-5"], "--batch"),
    (["train", "--lr", "nan"], "--lr"),
    (["train", "--lr", "-1"], "--lr"),
    (["train", "--setting", "e"], "--setting"),
    (["train", "--sigma-w", "-1"], "sigma_w"),
    (["train", "--warmup-steps", "9000"], "--warmup-steps"),
    (["train", "--cache-dir", "x", "--no-cache"], "--no-cache"),
    (["cache"], "{list,clear,export}"),
    (["cache", "purge"], "purge"),
    (["cache", "list", "--cache-dir", ""], "--cache-dir"),
    (["cache", "clear", "--cache-dir", ""], "--cache-dir"),
    (["cache", "list", "--stale-only"], "--stale-only"),
    (["cache", "clear", "--json"], "--json"),
    (["optimum", "--s", "0"], "--s"),
    (["optimum", "--s", "28", "--T", "30"], "--T"),
    (["optimum", "--s", "12"], "--max-memory"),
    (["optimum", "--starts", "0"], "--starts"),
    (["optimum", "--setting", "e"], "--setting"),
    (["optimum", "--sigma-w", "1e400"], "sigma_w"),
    (["optimum", "--sigma-w", "0", "--sigma-v", "0", "--sigma-0", "0"], "sigma_w"),
    (["optimum", "--trajectories", "1"], "--trajectories"),
    (["train", "--batch", "1000000000", "--no-cache"], "--batch"),
    (["train", "--sigma-w", "100000", "--no-cache"], "sigma_w"),
])
def test_bad_arguments_exit_2_naming_the_parameter(argv, name, capsys):
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert name in captured.err, captured.err
    assert "Traceback" not in captured.err and captured.out == ""


def test_bad_argument_exit_status_as_a_process():
    proc = _run("kappa", "--sigma-v", "-1")
    assert proc.returncode == 2
    assert "--sigma-v" in proc.stderr and "sigma_v must be >= 0" in proc.stderr


def test_diverging_run_exits_1(capsys):
    assert main(["train", "--steps", "30", "--batch", "16", "--lr", "1e30", "--init-scale", "1",
                 "--warmup-steps", "0", "--no-cache", "--device", "cpu"]) == 1
    assert "lower lr" in capsys.readouterr().err


def test_help_exits_0(capsys):
    assert main(["--help"]) == 0
    assert "kappa" in capsys.readouterr().out


TRAIN_ARGS = ["train", "--setting", "a", "--s", "1", "--steps", "40", "--batch", "64",
              "--seed", "1", "--device", "cpu", "--no-progress"]


def test_train_json_no_cache_and_out_file(tmp_path, capsys):
    out_file = tmp_path / "run.json"
    assert main(TRAIN_ARGS + ["--no-cache", "--json", "--out", str(out_file)]) == 0
    record = json.loads(capsys.readouterr().out)
    res = TrainResult.from_dict(record)
    assert res.config == TrainConfig(setting="a", s=1, steps=40, batch=64, seed=1)
    assert res.device == "cpu" and np.array(record["W_V"]).shape == (2, 2)
    assert json.loads(out_file.read_text()) == record


def test_train_text_output_and_cache(tmp_path, capsys):
    cache = tmp_path / "cache"
    assert main(TRAIN_ARGS + ["--cache-dir", str(cache), "--lr", "0.02"]) == 0
    first = capsys.readouterr()
    for needle in ("W_V =", "W_QK =", "AR(1) coefficient", "final loss", "wall time"):
        assert needle in first.out
    assert len(list(cache.glob("*.json"))) == 1
    assert main(TRAIN_ARGS + ["--cache-dir", str(cache), "--lr", "0.02", "--json"]) == 0
    second = capsys.readouterr()
    assert "loaded from cache" in second.err
    rec = json.loads(second.out)
    assert rec["config"]["lr"] == 0.02
    coef = re.search(r"AR\(1\) coefficient b_2 W\[1,1\] \+ b_1 W\[2,1\] = (\S+);", first.out).group(1)
    assert float(coef) == pytest.approx(TrainResult.from_dict(rec).ar1_coefficient(), rel=1e-12)
    # kappa and the relative error beside the coefficient (setting a: exact rational)
    k = re.search(r"kappa \(eq\. 15\) = (\S+) \(exact-rational\); relative error (\S+) %", first.out)
    assert float(k.group(1)) == pytest.approx(REFERENCE_KAPPA, rel=1e-12)
    assert float(k.group(2)) == pytest.approx(100 * (float(coef) / REFERENCE_KAPPA - 1), rel=5e-3)  # 3 digits
    assert rec["kappa"]["kappa"] == pytest.approx(REFERENCE_KAPPA, rel=1e-12)


def test_train_subprocess_json(tmp_path):
    proc = _run(*TRAIN_ARGS, "--steps", "20", "--no-cache", "--json")
    assert proc.returncode == 0, proc.stderr
    rec = json.loads(proc.stdout)
    assert rec["config"]["steps"] == 20 and rec["device"] == "cpu"


# ----------------------------------------------------------------------------- cache list / clear
CACHE_TRAIN = ["train", "--steps", "5", "--batch", "8", "--device", "cpu", "--no-progress"]


def _cache_lines(argv, capsys):
    assert main(argv) == 0
    return capsys.readouterr().out.splitlines()


def _populate(cache, capsys):
    """Two current entries (seeds 0 and 1), one of other code, one corrupt, two foreign files."""
    from models import cache as cache_mod
    from models.fingerprint import current_fingerprint

    for seed in ("0", "1"):
        assert main(CACHE_TRAIN + ["--seed", seed, "--cache-dir", str(cache)]) == 0
    capsys.readouterr()
    res = cache_mod.load_cached(TrainConfig(steps=5, batch=8, seed=1), cache, device="cpu")
    other_code = current_fingerprint("cpu").replace(sources="0" * 64)
    stale = cache_mod.store(res, cache, fingerprint=other_code)
    (cache / ("b" * 64 + ".json")).write_text("{ truncated")
    (cache / "notes.txt").write_text("not an entry")
    (cache / "c.json").write_text("{}")  # not named like an entry
    return stale


def test_cache_list_and_clear(tmp_path, capsys):
    cache = tmp_path / "cache"
    stale = _populate(cache, capsys)
    lines = _cache_lines(["cache", "list", "--cache-dir", str(cache)], capsys)
    assert len(lines) == 4
    by_status = {}
    for line in lines:
        by_status.setdefault(line.split()[-1], []).append(line)
    assert {k: len(v) for k, v in by_status.items()} == {"current": 2, "stale": 1, "corrupt": 1}
    assert by_status["stale"][0].startswith(stale.stem[:12])
    for line in by_status["current"]:
        assert re.search(r"setting=a s=1 steps=5 batch=8 seed=[01] created=\d{4}-\d\d-\d\dT\S+Z "
                         r"size=\d+ current$", line), line
    # --json: the same entries, with full keys and epoch seconds
    assert main(["cache", "list", "--cache-dir", str(cache), "--json"]) == 0
    entries = json.loads(capsys.readouterr().out)
    assert sorted(e["status"] for e in entries) == ["corrupt", "current", "current", "stale"]
    assert all(e["size"] == Path(e["path"]).stat().st_size for e in entries)
    assert {e["seed"] for e in entries if e["status"] == "current"} == {0, 1}
    # clear --stale-only keeps the current entries and every file that is not an entry
    # (lock files included: one may be held by a process waiting to train that key)
    had_lock = stale.with_suffix(".lock").exists()
    assert _cache_lines(["cache", "clear", "--stale-only", "--cache-dir", str(cache)], capsys) == [
        f"removed 2 stale entries from {cache}"]
    assert [line.split()[-1] for line in _cache_lines(["cache", "list", "--cache-dir", str(cache)], capsys)] \
        == ["current", "current"]
    assert not stale.exists() and stale.with_suffix(".lock").exists() == had_lock
    assert _cache_lines(["cache", "clear", "--cache-dir", str(cache)], capsys) == [
        f"removed 2 entries from {cache}"]
    assert sorted(p.name for p in cache.iterdir() if p.suffix != ".lock") == ["c.json", "notes.txt"]
    assert _cache_lines(["cache", "list", "--cache-dir", str(cache)], capsys) == []


def test_cache_commands_honour_the_environment(tmp_path, monkeypatch, capsys):
    cache = tmp_path / "env-cache"
    monkeypatch.setenv("LDSICL_CACHE_DIR", str(cache))
    assert main(CACHE_TRAIN) == 0  # train uses $LDSICL_CACHE_DIR too
    capsys.readouterr()
    assert len(_cache_lines(["cache", "list"], capsys)) == 1
    assert _cache_lines(["cache", "clear"], capsys) == [f"removed 1 entry from {cache}"]
    # a missing folder is an empty cache, not an error
    assert _cache_lines(["cache", "list", "--cache-dir", str(tmp_path / "none")], capsys) == []
    assert _cache_lines(["cache", "clear", "--cache-dir", str(tmp_path / "none")], capsys) == [
        f"removed 0 entries from {tmp_path / 'none'}"]
    assert not (tmp_path / "none").exists()


def test_cache_dir_that_is_a_file_exits_2(tmp_path, capsys):
    f = tmp_path / "file"
    f.write_text("x")
    for action in ("list", "clear"):
        assert main(["cache", action, "--cache-dir", str(f)]) == 2
        err = capsys.readouterr().err
        assert "--cache-dir" in err and "must be a directory" in err and "Traceback" not in err
    assert f.read_text() == "x"


def test_cache_list_subprocess(tmp_path):
    proc = _run("cache", "list", "--cache-dir", str(tmp_path), "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == []


def test_optimum_json(capsys):
    """``ldsicl optimum --json``: one strict-JSON object with the documented keys; for s = 1
    its coefficient is Theorem 4.1's kappa (the population optimum is theta*)."""
    assert main(["optimum", "--setting", "a", "--s", "1", "--starts", "4", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    for key in ("loss", "W_V", "W_QK", "class", "odd_share", "stderr", "method", "in_class",
                "stationary_points", "out_of_class_share", "out_of_class_share_by_class"):
        assert key in out
    assert 0.0 <= out["out_of_class_share"] <= 1e-8                  # theta* lies in a class
    W_V, W_QK = np.array(out["W_V"]), np.array(out["W_QK"])
    coef = W_V[1, 1] * W_QK[0, 0] + W_V[1, 0] * W_QK[1, 0]
    assert coef == pytest.approx(REFERENCE_KAPPA, rel=1e-8)
    assert out["class"] in ("b-even", "b-odd") and out["stderr"] == 0.0 and out["method"] == "quadrature"
    assert np.abs(W_V[1]).max() == 1.0


def test_optimum_text_and_setting_d(capsys):
    assert main(["optimum", "--setting", "d", "--s", "2", "--d", "3", "--T", "10", "--starts", "4",
                 "--trajectories", "4000"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^L\* = \S+ \+- \S+\s+\(moments: mc-trajectories-antithetic\)", out, re.M)
    assert "best point in class b-even" in out and "W_QK[:, :s] =" in out
    # b = W_V[s, :] printed in the canonical gauge: one row of s + 1 numbers, the largest 1 in size
    b_row = out.split("(canonical gauge, largest |b_r| = 1) =\n", 1)[1].split("\n", 1)[0]
    b = [float(x) for x in b_row.replace("[", " ").replace("]", " ").split()]
    assert len(b) == 3 and max(abs(x) for x in b) == 1.0


def test_a_closed_pipe_ends_quietly():
    """``ldsicl ... | head -c 1``: no BrokenPipeError traceback, exit status 0."""
    from _procs import clean_env, run_bounded
    proc = run_bounded(["bash", "-c", f"set -o pipefail; '{sys.executable}' -m claims.cli.main --help | head -c 1"],
                       timeout=60, cwd=REPO, env=clean_env(REPO))
    assert proc.returncode == 0 and "Traceback" not in proc.stderr and proc.stderr == ""


def test_train_out_is_checked_before_training(tmp_path, capsys):
    for bad, why in (("/proc/x.json", "cannot write"), (str(tmp_path), "directory"),
                     (str(tmp_path / "no" / "x.json"), "does not exist")):
        assert main(["train", "--steps", "2", "--batch", "4", "--no-cache", "--out", bad]) == 2
        err = capsys.readouterr().err
        assert "argument --out" in err and why in err and "Traceback" not in err


def test_a_non_utf8_cache_entry_is_retrained_not_reported_as_a_bad_argument(tmp_path, capsys):
    from models.cache import cache_path
    cfg = TrainConfig("a", steps=3, batch=4, seed=1)
    path = cache_path(cfg, tmp_path, device="cpu")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\xff\xfe\x00 not utf-8")
    args = ["train", "--steps", "3", "--batch", "4", "--seed", "1", "--device", "cpu",
            "--cache-dir", str(tmp_path), "--json"]
    assert main(args) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["config"]["steps"] == 3 and "argument" not in captured.err
    assert main(args) == 0 and "loaded from cache" in capsys.readouterr().err
