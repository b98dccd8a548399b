"""Fuzz: malformed values at every public constructor and at ``ldsicl`` (in-process ``main(argv)``).

What must hold for every case (hypothesis draws them; each case at most 5 s, the
hypothesis deadline):

- constructors: they either build the object or raise one ``ValueError`` -- never
  another exception type (TypeError, OverflowError, NotImplementedError, ...); an object
  they build holds only valid values of the documented types (finite, within bounds, ints
  that are not bools, float64 arrays of the documented shapes): a bad value silently
  accepted fails;
- the command line: the exit status is 0, 1 or 2, nothing escapes ``main`` and stderr
  holds no traceback; output asked for as JSON parses as strict JSON (no NaN, no
  Infinity).  ``train`` runs only with steps <= 5 and batch <= 8; ``train`` and ``cache``
  only on a temporary cache (``--cache-dir`` and ``LDSICL_CACHE_DIR``: ``cache clear``
  must never reach the real one); ``report`` never with ``--run``.

The value pools mix malformed text (``nan``, ``inf``, ``-1``, ``1e400``, ``1/0``, 30
nines, ``""``, ``abc``, ...) with a few small valid values, so that both the refusals and
the paths past them are exercised; valid values stay small enough for the 5 s bound.
"""
from __future__ import annotations

import contextlib
import io
import json
import math
import tempfile
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings, strategies as st

from claims.harness.profiles import Profile
from models.attention import LinearSelfAttention
from claims.cli.main import main
from models.config import TrainConfig
from models.fingerprint import Fingerprint
from models.sampler import TorchLDSSampler
from theory.systems import LDSFamily, Systems

FUZZ = settings(max_examples=int(__import__("os").environ.get("FUZZ_EXAMPLES", "60")), deadline=5000, suppress_health_check=[HealthCheck.too_slow])

#: Python values that no constructor should choke on (beyond a ValueError).
BAD_VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(-10 ** 30, 10 ** 30), st.just(10 ** 400),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=4),
    st.lists(st.floats(allow_nan=True), max_size=3), st.dictionaries(st.text(max_size=2), st.integers(), max_size=2),
    st.complex_numbers(max_magnitude=10), st.just(np.array([np.nan, 1.0])), st.just(np.zeros((2, 3))),
    st.just(object()), st.just(torch.ones(2)), st.just("a"), st.just(-1), st.just(0), st.just(1e308))


def _ok_or_value_error(build):
    """The built object, or None when the constructor refused with a ValueError."""
    try:
        return build()
    except ValueError:
        return None


def _is_int(x, minimum) -> bool:
    return type(x) is int and x >= minimum


def _is_real(x, minimum, maximum=math.inf) -> bool:
    return type(x) is float and math.isfinite(x) and minimum <= x <= maximum


def _valid_family(f: LDSFamily) -> None:
    from theory.systems import MAX_RADIUS, SETTINGS
    assert f.setting in SETTINGS and _is_int(f.d, 1) and _is_int(f.T, 3), f
    assert all(_is_real(getattr(f, k), 0.0) for k in ("sigma_w", "sigma_v", "sigma_0")), f
    assert _is_real(f.cond_max, 1.0) and _is_real(f.radius, 0.0, MAX_RADIUS), f


def _valid_systems(sy: Systems) -> None:
    m, d = sy.c.shape
    shapes = {"A": (m, d, d), "c": (m, d), "Sigma_w": (d, d), "Sigma_0": (d, d)}
    for name, shape in shapes.items():
        a = getattr(sy, name)
        assert a.dtype == np.float64 and a.shape == shape and np.isfinite(a).all(), name
    assert _is_real(sy.sigma_v, 0.0) and (sy.T is None or _is_int(sy.T, 1))
    assert sy.lam is None or (sy.lam.shape == (m, d) and np.array_equal(sy.lam, np.diagonal(sy.A, axis1=1, axis2=2)))


def _valid_config(c: TrainConfig) -> None:
    assert all(_is_int(getattr(c, k), lo) for k, lo in
               (("s", 1), ("d", 1), ("T", c.s + 2), ("layers", 1), ("steps", 1), ("batch", 1), ("seed", 0))), c
    assert c.warmup_steps is None or (_is_int(c.warmup_steps, 0) and c.warmup_steps <= c.steps), c
    assert _is_real(c.lr, 0.0) and c.lr > 0 and _is_real(c.lr_min, 0.0, c.lr) and _is_real(c.eps, 0.0) and c.eps > 0
    assert _is_real(c.weight_decay, 0.0) and _is_real(c.init_scale, 0.0), c
    assert type(c.betas) is tuple and len(c.betas) == 2 and all(_is_real(b, 0.0, 1.0) and b < 1 for b in c.betas)
    assert c.grad_clip is None or (_is_real(c.grad_clip, 0.0) and c.grad_clip > 0), c
    _valid_family(c.family())
    assert TrainConfig.from_dict(json.loads(json.dumps(c.to_dict()))) == c      # strict JSON round trip


def _one_bad(valid: dict, draw_key, draw_value):
    kw = dict(valid)
    kw[draw_key] = draw_value
    return kw


FAMILY = dict(setting="a", d=3, T=8, sigma_w=0.1, sigma_v=0.1, sigma_0=1.0, cond_max=3.0)


@FUZZ
@given(key=st.sampled_from(sorted(FAMILY)), value=BAD_VALUES, key2=st.sampled_from(sorted(FAMILY)),
       value2=BAD_VALUES)
def test_family_constructor(key, value, key2, value2):
    f = _ok_or_value_error(lambda: LDSFamily(**_one_bad(_one_bad(FAMILY, key, value), key2, value2)))
    if f is not None:
        _valid_family(f)


@FUZZ
@given(key=st.sampled_from(["A", "c", "Sigma_w", "Sigma_0", "sigma_v", "lam", "T"]), value=BAD_VALUES)
def test_systems_constructor(key, value):
    good = dict(A=np.eye(2)[None] * 0.5, c=np.ones((1, 2)), Sigma_w=np.eye(2), Sigma_0=np.eye(2),
                sigma_v=0.1, lam=None, T=5)
    sy = _ok_or_value_error(lambda: Systems(**_one_bad(good, key, value)))
    if sy is not None:
        _valid_systems(sy)


TRAIN_FIELDS = ["setting", "s", "d", "T", "sigma_w", "sigma_v", "sigma_0", "cond_max", "steps", "batch",
                "lr", "lr_min", "warmup_steps", "weight_decay", "betas", "eps", "grad_clip", "init",
                "init_scale", "seed", "dtype", "forward"]


@FUZZ
@given(key=st.sampled_from(TRAIN_FIELDS), value=BAD_VALUES)
def test_train_config_constructor(key, value):
    c = _ok_or_value_error(lambda: TrainConfig(**{key: value}))
    if c is not None:
        _valid_config(c)


@FUZZ
@given(key=st.sampled_from(["s", "init", "init_scale", "dtype", "generator"]), value=BAD_VALUES,
       w=BAD_VALUES, dtype=st.sampled_from([torch.float64, torch.float32, torch.int32, torch.float16, "x"]))
def test_layer_constructors(key, value, w, dtype):
    for layer in (_ok_or_value_error(lambda: LinearSelfAttention(**_one_bad({"s": 1}, key, value))),
                  _ok_or_value_error(lambda: LinearSelfAttention.from_weights(w, np.eye(2), dtype=dtype)),
                  _ok_or_value_error(lambda: LinearSelfAttention.from_weights(np.eye(2), w))):
        if layer is not None:
            assert _is_int(layer.s, 1)
            for W in (layer.W_V, layer.W_QK):
                assert W.shape == (layer.s + 1, layer.s + 1) and W.dtype in (torch.float32, torch.float64)
                assert torch.isfinite(W).all()


@FUZZ
@given(family=st.one_of(BAD_VALUES, st.just(LDSFamily("b", d=2, T=5))), device=BAD_VALUES,
       dtype=st.sampled_from([torch.float32, torch.float64, torch.int64, None, "float32"]))
def test_sampler_constructor(family, device, dtype):
    sampler = _ok_or_value_error(lambda: TorchLDSSampler(family, device=device, dtype=dtype))
    if sampler is not None:
        assert sampler.family is family and sampler.dtype in (torch.float32, torch.float64)
        assert isinstance(sampler.device, torch.device)


@FUZZ
@given(key=st.sampled_from(["sources", "torch", "numpy", "device", "dtype", "kernels"]), value=BAD_VALUES,
       pkey=st.sampled_from(["name", "train_steps", "stack_batch", "n_seeds", "mc_systems", "coef_rel_tol",
                            "multistart", "depth_stacks", "trained_windows", "shift_depths"]),
       pvalue=BAD_VALUES)
def test_fingerprint_and_profile_constructors(key, value, pkey, pvalue):
    good = dict(sources="0" * 64, torch="2.13.0", numpy="2.0", device="cpu", dtype="float32",
                kernels="AVX2/mkl:COMPATIBLE")
    fp = _ok_or_value_error(lambda: Fingerprint(**_one_bad(good, key, value)))
    if fp is not None:
        assert all(type(getattr(fp, k)) is str and getattr(fp, k) for k in good), fp
    prof = dict(name="x", description="d", train_steps=1, train_batch=1, stack_batch=1, n_seeds=2,
                mc_trajectories=2, mc_systems=2, heldout_sequences=2, hypothesis_examples=1, multistart=1, twins=1,
                coef_rel_tol=0.01, trained_windows=(2, 4), shift_depths=(1,), depth_stacks=False)
    p = _ok_or_value_error(lambda: Profile(**_one_bad(prof, pkey, pvalue)))
    if p is not None:
        assert type(p.name) is str and p.name and type(p.depth_stacks) is bool
        assert 4 in p.trained_windows and set(p.trained_windows) <= {2, 3, 4} and set(p.shift_depths) <= {1, 4}
        assert all(_is_int(getattr(p, k), 1) for k in ("train_steps", "stack_batch", "n_seeds", "mc_systems",
                                                       "multistart")), p
        assert _is_real(p.coef_rel_tol, 0.0) and p.coef_rel_tol > 0, p


# --------------------------------------------------------------------------- the command line

MALFORMED = ["nan", "inf", "-inf", "-1", "0", "", " ", "abc", "1e400", "1/0", "1.5", "-0", "1e-400",
             "9" * 30, "0x10", "1/3", "2", "3", "5", "0.1", "--json"]
VALUES = st.sampled_from(MALFORMED)
FAMILY_FLAGS = ["--setting", "--T", "--d", "--sigma-w", "--sigma-v", "--sigma-0"]
FLAGS = {
    "kappa": FAMILY_FLAGS + ["--method", "--mc-systems", "--seed"],
    "train": FAMILY_FLAGS + ["--s", "--seed", "--lr", "--lr-min", "--warmup-steps", "--weight-decay",
                             "--grad-clip", "--init-scale", "--dtype", "--forward", "--device", "--max-memory",
                             "--out", "--claim", "--profile", "--layers", "--radius", "--betas"],
    "runs": ["--claim", "--profile", "--cache-dir"],
    "optimum": FAMILY_FLAGS + ["--s", "--starts", "--seed", "--trajectories", "--max-memory"],
    "report": ["--from", "--out", "--profile"],
    "cache list": ["--cache-dir"],
    "cache clear": ["--cache-dir"],
    "cache export": ["KEY", "--out", "--profile", "--cache-dir"],
}
#: small valid values where a malformed one is not drawn, to keep every case fast
SMALL = {"--T": "7", "--d": "2", "--mc-systems": "200", "--s": "2", "--starts": "2",
         "--trajectories": "400", "--method": "auto"}
PATHS = ["/proc/x.json", "", "/", "/nonexistent/dir/x", "{tmp}/out.json", "{tmp}", "{tmp}/notjson.json"]
CHOICES = {"--setting": ["a", "b", "c", "d", "asym", "e", ""], "--dtype": ["float32", "float64", "int8"],
           "--forward": ["effective", "model", "x"], "--device": ["cpu", "cuda", "tpu", "", "auto"],
           "--method": ["auto", "exact", "quadrature", "mc-moments", "mc-trajectories", "magic"],
           "--profile": ["quick", "paper", "x"],
           # run ids (valid, of the other profile, a depth group, malformed) and claims
           "--claim": ["ar1/a/seed=0", "ars/asym/s=3/seed=1", "depth/L=2/T=10/batch=1000/seed=0",
                       "depth/L=2/T=10/batch=1500/seed=0", "depth/L=1/T=10+80/batch=1000/seed=0",
                       "shift/L=4/r=1/batch=1000/seed=2", "shift/L=1/r=0.7/batch=1000/seed=0",
                       "shift/L=1/r=1/batch=1000/seed=0", "ars/a/s=3/seed=0", "sensitivity/a/lr=5e-4/seed=0", "sensitivity/a/lr=9/seed=0",
                       "ars/a/s=40/seed=0", "ar1/e/seed=0", "ar1/a/seed=01", "banding", "pcg-alignment", "nope"],
           "KEY": ["ar1/a/seed=0", "0123456789ab", "deadbeef", "zz", "ars/b/s=2/seed=0"],
           "--betas": ["0.9,0.99", "0.9", "0.9,1.0", "a,b", "-0.1,0.5", "0.5,0.5,0.5"]}


def _strict(text):
    def bad(c):
        raise ValueError(f"non-finite JSON constant {c}")
    return json.loads(text, parse_constant=bad)


@st.composite
def command_lines(draw):
    cmd = draw(st.sampled_from(sorted(FLAGS)))
    argv = cmd.split()
    chosen = draw(st.lists(st.sampled_from(FLAGS[cmd]), max_size=4, unique=True))
    for flag in FLAGS[cmd]:
        if flag == "KEY":                                      # the positional argument of cache export
            if flag in chosen:
                argv.append(draw(st.sampled_from(CHOICES[flag] + MALFORMED[:6])))
            continue
        if flag in chosen:
            if flag in CHOICES:
                value = draw(st.sampled_from(CHOICES[flag] + MALFORMED[:6]))
            elif flag in ("--out", "--from", "--cache-dir"):
                value = draw(st.sampled_from(PATHS))
            else:
                value = draw(VALUES)
            argv += [flag, value]
        elif flag in SMALL:
            argv += [flag, SMALL[flag]]
    if cmd == "train":
        argv += ["--steps", str(draw(st.integers(1, 5))), "--batch", str(draw(st.integers(1, 8))),
                 "--no-progress"]
    if cmd in ("kappa", "train", "optimum", "runs") and draw(st.booleans()):
        argv.append("--json")
    return argv


@FUZZ
@given(argv=command_lines())
def test_command_line(argv):
    import os
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "notjson.json").write_text("{ not json")
        argv = [a.replace("{tmp}", tmp) for a in argv]
        if argv[0] in ("train", "cache", "runs") and "--cache-dir" not in argv:
            argv += ["--cache-dir", str(Path(tmp) / "cache")]      # never the real cache
        if argv[0] == "report" and "--out" not in argv:
            argv += ["--out", str(Path(tmp) / "report")]
        out, err = io.StringIO(), io.StringIO()
        old = os.environ.get("LDSICL_CACHE_DIR")
        os.environ["LDSICL_CACHE_DIR"] = str(Path(tmp) / "env-cache")
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                rc = main(argv)
        finally:
            if old is None:
                os.environ.pop("LDSICL_CACHE_DIR", None)
            else:
                os.environ["LDSICL_CACHE_DIR"] = old
    assert rc in (0, 1, 2), (argv, rc, err.getvalue())
    assert "Traceback" not in err.getvalue(), (argv, err.getvalue())
    if rc == 0 and "--json" in argv and "--help" not in argv and argv[0] != "report":
        for line in out.getvalue().splitlines():
            _strict(line)


def test_the_fuzzers_own_strict_parser_rejects_nan():
    with pytest.raises(ValueError):
        _strict('{"x": NaN}')
    assert _strict('{"x": null}') == {"x": None} and not math.isnan(_strict("1.5"))
