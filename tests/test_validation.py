"""Every public constructor and function of the core rejects bad input with a ValueError
whose message names the offending parameter."""
from __future__ import annotations

import re
from fractions import Fraction

import numpy as np
import pytest
import sympy as sp
import torch
from hypothesis import given
from hypothesis import strategies as st

from models.attention import LinearSelfAttention, build_tokens
from models.runtime import resolve_device, torch_threads
from models.config import TrainConfig, stream_seed
from models.features import effective_features
from models.result import TrainResult
from models.sampler import TorchLDSSampler
from models.trainer import train
from theory import validation as V
from theory.ar import (
    ar1_optimal_weights,
    ar_grad,
    ar_loss,
    attention_ar_weights,
    context_stats,
    gd,
    ols_ar,
    pcg,
    predict_ar,
    query_features,
    token_matrix,
)
from theory.reference import (
    coordinate_covariance_poly,
    exact_moments_a,
    gaussian_moments,
    mixture_moments,
    pairings,
    symbolic_moment,
)
from theory.bases import conditioned_gaussian
from theory.systems import LDSFamily, Systems, covariance, get_family

NAN, INF = float("nan"), float("inf")
RNG = np.random.default_rng


def good_system(**over):
    kw = dict(A=np.full((2, 3, 3), 0.1), c=np.ones((2, 3)), Sigma_w=0.01 * np.eye(3),
              Sigma_0=np.eye(3), sigma_v=0.1)
    kw.update(over)
    return kw


def with_nan(a, where=(0,)):
    a = np.array(a, dtype=float)
    a[where] = NAN
    return a


Y = np.arange(1.0, 9.0)                  # T = 8
K2 = np.array([[2.0, 0.5], [0.5, 1.0]])
W2 = np.eye(2)
Yt = torch.arange(1.0, 9.0, dtype=torch.float64)[None]

CASES = [
    # ------------------------------------------------------------------ Systems
    ("Systems A nan", lambda: Systems(**good_system(A=with_nan(np.full((2, 3, 3), 0.1), (0, 0, 0)))), "A"),
    ("Systems A inf", lambda: Systems(**good_system(A=np.full((2, 3, 3), INF))), "A"),
    ("Systems A non-square", lambda: Systems(**good_system(A=np.zeros((2, 3, 2)))), "A"),
    ("Systems A 2-D", lambda: Systems(**good_system(A=np.zeros((3, 3)))), "A"),
    ("Systems A empty", lambda: Systems(**good_system(A=np.zeros((0, 3, 3)), c=np.zeros((0, 3)))), "A"),
    ("Systems A complex", lambda: Systems(**good_system(A=np.zeros((2, 3, 3), complex))), "A"),
    ("Systems A strings", lambda: Systems(**good_system(A="abc")), "A"),
    ("Systems c nan", lambda: Systems(**good_system(c=with_nan(np.ones((2, 3))))), "c"),
    ("Systems c shape", lambda: Systems(**good_system(c=np.ones((2, 4)))), "c"),
    ("Systems c 1-D", lambda: Systems(**good_system(c=np.ones(3))), "c"),
    ("Systems Sigma_w nan", lambda: Systems(**good_system(Sigma_w=with_nan(np.eye(3)))), "Sigma_w"),
    ("Systems Sigma_w shape", lambda: Systems(**good_system(Sigma_w=np.eye(2))), "Sigma_w"),
    ("Systems Sigma_w non-square", lambda: Systems(**good_system(Sigma_w=np.ones((3, 2)))), "Sigma_w"),
    ("Systems Sigma_w asym", lambda: Systems(**good_system(Sigma_w=np.triu(np.ones((3, 3))))), "Sigma_w"),
    ("Systems Sigma_w tiny asym", lambda: Systems(**good_system(Sigma_w=1e-12 * np.triu(np.ones((3, 3))))), "Sigma_w"),
    ("Systems Sigma_w negative", lambda: Systems(**good_system(Sigma_w=-np.eye(3))), "Sigma_w"),
    ("Systems Sigma_0 indefinite", lambda: Systems(**good_system(Sigma_0=np.diag([1.0, -1.0, 1.0]))), "Sigma_0"),
    ("Systems Sigma_0 inf", lambda: Systems(**good_system(Sigma_0=np.full((3, 3), INF))), "Sigma_0"),
    ("Systems sigma_v negative", lambda: Systems(**good_system(sigma_v=-0.1)), "sigma_v"),
    ("Systems sigma_v nan", lambda: Systems(**good_system(sigma_v=NAN)), "sigma_v"),
    ("Systems sigma_v str", lambda: Systems(**good_system(sigma_v="0.1")), "sigma_v"),
    ("Systems lam shape", lambda: Systems(**good_system(lam=np.ones((2, 2)))), "lam"),
    ("Systems lam not diag(A)", lambda: Systems(**good_system(lam=np.full((2, 3), 0.1))), "lam"),
    ("Systems lam nan", lambda: Systems(**good_system(lam=with_nan(np.ones((2, 3))))), "lam"),
    ("Systems T zero", lambda: Systems(**good_system(T=0)), "T"),
    ("Systems T float", lambda: Systems(**good_system(T=3.0)), "T"),
    ("simulate T", lambda: Systems(**good_system(T=4)).simulate(RNG(0), T=0), "T"),
    ("simulate rng", lambda: Systems(**good_system(T=4)).simulate(0), "rng"),
    ("simulate legacy rng", lambda: Systems(**good_system(T=4)).simulate(np.random.RandomState(0)), "rng"),
    ("simulate dtype", lambda: Systems(**good_system(T=4)).simulate(RNG(0), dtype=np.int64), "dtype"),
    ("simulate dtype junk", lambda: Systems(**good_system(T=4)).simulate(RNG(0), dtype="junk"), "dtype"),
    ("covariance T", lambda: covariance(Systems(**good_system()), 0), "T"),
    ("covariance T bool", lambda: covariance(Systems(**good_system()), True), "T"),
    ("covariance systems", lambda: covariance(np.eye(3), 4), "systems"),
    ("Systems.covariance no T", lambda: Systems(**good_system()).covariance(), "T"),
    # ---------------------------------------------------------------- LDSFamily
    ("family setting", lambda: LDSFamily("e"), "setting"),
    ("family setting case", lambda: LDSFamily("A"), "setting"),
    ("get_family setting", lambda: get_family("z"), "setting"),
    ("family d zero", lambda: LDSFamily("a", d=0), "d"),
    ("family d float", lambda: LDSFamily("a", d=2.5), "d"),
    ("family T small", lambda: LDSFamily("a", T=2), "T"),
    ("family sigma_w negative", lambda: LDSFamily("a", sigma_w=-0.1), "sigma_w"),
    ("family sigma_v negative", lambda: LDSFamily("a", sigma_v=-1), "sigma_v"),
    ("family sigma_0 negative", lambda: LDSFamily("a", sigma_0=-1.0), "sigma_0"),
    ("family sigma_w nan", lambda: LDSFamily("a", sigma_w=NAN), "sigma_w"),
    ("family sigma_v inf", lambda: LDSFamily("a", sigma_v=INF), "sigma_v"),
    ("family cond_max", lambda: LDSFamily("d", cond_max=0.5), "cond_max"),
    ("family cond_max nan", lambda: LDSFamily("d", cond_max=NAN), "cond_max"),
    ("family replace", lambda: LDSFamily("a").replace(d=-1), "d"),
    ("sample_systems m", lambda: LDSFamily("a").sample_systems(RNG(0), 0), "m"),
    ("sample_systems rng", lambda: LDSFamily("a").sample_systems(None, 3), "rng"),
    ("sample m", lambda: LDSFamily("b").sample(RNG(0), -2), "m"),
    ("conditioned_gaussian", lambda: conditioned_gaussian(RNG(0), 1, 3, 1.0, max_rounds=3), "cond_max"),
    # ------------------------------------------------------------------ moments
    ("pairings odd", lambda: pairings(3), "order"),
    ("pairings zero", lambda: pairings(0), "order"),
    ("gaussian_moments K nan", lambda: gaussian_moments(with_nan(K2), [[0, 1]]), "K"),
    ("gaussian_moments K inf", lambda: gaussian_moments(np.full((2, 2), INF), [[0, 1]]), "K"),
    ("gaussian_moments K non-square", lambda: gaussian_moments(np.ones((2, 3)), [[0, 1]]), "K"),
    ("gaussian_moments K 1-D", lambda: gaussian_moments(np.ones(3), [[0, 1]]), "K"),
    ("gaussian_moments K asym", lambda: gaussian_moments(np.array([[1.0, 0.5], [0.0, 1.0]]), [[0, 1]]), "K"),
    ("gaussian_moments idx range", lambda: gaussian_moments(K2, [[0, 2]]), "idx"),
    ("gaussian_moments idx negative", lambda: gaussian_moments(K2, [[0, -1]]), "idx"),
    ("gaussian_moments idx float", lambda: gaussian_moments(K2, [[0.0, 1.0]]), "idx"),
    ("gaussian_moments idx ragged", lambda: gaussian_moments(K2, [[0, 1], [0, 1, 1, 1]]), "idx"),
    ("gaussian_moments idx empty", lambda: gaussian_moments(K2, np.zeros((0, 2), int)), "idx"),
    ("gaussian_moments idx 3-D", lambda: gaussian_moments(K2, np.zeros((1, 1, 2), int)), "idx"),
    ("symbolic_moment idx negative", lambda: symbolic_moment((0, -1)), "idx"),
    ("symbolic_moment idx empty", lambda: symbolic_moment(()), "idx"),
    ("symbolic_moment idx range", lambda: symbolic_moment((0, 2), K=sp.eye(2)), "idx"),
    ("symbolic_moment K", lambda: symbolic_moment((0, 1), K=np.eye(2)), "K"),
    ("symbolic_moment K non-square", lambda: symbolic_moment((0, 1), K=sp.ones(2, 3)), "K"),
    ("mixture_moments 2-D K", lambda: mixture_moments(K2, [[0, 1]]), "K"),
    ("mixture_moments nan", lambda: mixture_moments(with_nan(np.stack([K2, K2]), (0, 0, 0)), [[0, 1]]), "K"),
    ("exact_moments_a sigma_w2", lambda: exact_moments_a([(0, 0)], T=2, d=1, sigma_w2=-0.1, sigma_v2=0), "sigma_w2"),
    ("exact_moments_a sigma_v2", lambda: exact_moments_a([(0, 0)], T=2, d=1, sigma_w2=0, sigma_v2="-1/3"), "sigma_v2"),
    ("exact_moments_a sigma_02", lambda: exact_moments_a([(0, 0)], T=2, d=1, sigma_w2=0, sigma_v2=0, sigma_02=Fraction(-1)), "sigma_02"),
    ("exact_moments_a sigma_w2 nan", lambda: exact_moments_a([(0, 0)], T=2, d=1, sigma_w2=NAN, sigma_v2=0), "sigma_w2"),
    ("exact_moments_a sigma_v2 junk", lambda: exact_moments_a([(0, 0)], T=2, d=1, sigma_w2=0, sigma_v2="x"), "sigma_v2"),
    ("exact_moments_a sigma_w2 bool", lambda: exact_moments_a([(0, 0)], T=2, d=1, sigma_w2=True, sigma_v2=0), "sigma_w2"),
    ("exact_moments_a sigma_w2 complex", lambda: exact_moments_a([(0, 0)], T=2, d=1, sigma_w2=1j, sigma_v2=0), "sigma_w2"),
    ("exact_moments_a idx", lambda: exact_moments_a([(0, 2)], T=2, d=1, sigma_w2=0, sigma_v2=0), "idx"),
    ("exact_moments_a T", lambda: exact_moments_a([(0, 0)], T=0, d=1, sigma_w2=0, sigma_v2=0), "T"),
    ("exact_moments_a d", lambda: exact_moments_a([(0, 0)], T=2, d=0, sigma_w2=0, sigma_v2=0), "d"),
    ("coordinate_covariance_poly d", lambda: coordinate_covariance_poly(3, -1, 0, 0), "d"),
    ("coordinate_covariance_poly index", lambda: coordinate_covariance_poly(3, 1, 0, 0)(0, 3), "i and j"),
    # ----------------------------------------------------------------------- AR
    ("token_matrix T", lambda: token_matrix(np.arange(3.0), 2), "T"),
    ("token_matrix s zero", lambda: token_matrix(Y, 0), "s"),
    ("token_matrix s float", lambda: token_matrix(Y, 1.5), "s"),
    ("token_matrix y nan", lambda: token_matrix(with_nan(Y), 2), "y"),
    ("token_matrix y inf", lambda: token_matrix(np.full(8, INF), 2), "y"),
    ("token_matrix y scalar", lambda: token_matrix(3.0, 1), "y"),
    ("context_stats T", lambda: context_stats(np.arange(4.0), 3), "T"),
    ("context_stats y", lambda: context_stats(with_nan(Y, (3,)), 2), "y"),
    ("query_features T", lambda: query_features(np.arange(2.0), 1), "T"),
    ("ar_loss w nan", lambda: ar_loss([NAN, 0.0], Y, 2), "w"),
    ("ar_loss w shape", lambda: ar_loss([1.0, 0.0, 0.0], Y, 2), "w"),
    ("ar_grad w", lambda: ar_grad([INF], Y, 1), "w"),
    ("ar_grad w shape", lambda: ar_grad(np.ones(3), Y, 2), "w"),
    ("gd eta", lambda: gd(Y, 2, NAN), "eta"),
    ("gd steps", lambda: gd(Y, 2, 0.1, steps=0), "steps"),
    ("gd w0", lambda: gd(Y, 2, 0.1, w0=[NAN, 0.0]), "w0"),
    ("gd w0 shape", lambda: gd(Y, 2, 0.1, w0=np.ones(3)), "w0"),
    ("pcg H nan", lambda: pcg(with_nan(W2), [1.0, 1.0]), "H"),
    ("pcg H shape", lambda: pcg(np.ones((2, 3)), [1.0, 1.0]), "H"),
    ("pcg g nan", lambda: pcg(W2, [NAN, 1.0]), "g"),
    ("pcg P nan", lambda: pcg(W2, [1.0, 1.0], P=with_nan(W2)), "P"),
    ("pcg P shape", lambda: pcg(W2, [1.0, 1.0], P=np.eye(3)), "P"),
    ("pcg k", lambda: pcg(W2, [1.0, 1.0], k=0), "k"),
    ("pcg w0", lambda: pcg(W2, [1.0, 1.0], w0=[INF, 0.0]), "w0"),
    ("pcg w0 shape", lambda: pcg(W2, [1.0, 1.0], w0=[0.0, 0.0, 0.0]), "w0"),
    ("ols_ar ridge", lambda: ols_ar(Y, 2, ridge=-1.0), "ridge"),
    ("ols_ar ridge nan", lambda: ols_ar(Y, 2, ridge=NAN), "ridge"),
    ("ols_ar T", lambda: ols_ar(Y, 7), "T"),
    ("predict_ar w", lambda: predict_ar([NAN], Y, 1), "w"),
    ("predict_ar w shape", lambda: predict_ar([1.0, 2.0], Y, 1), "w"),
    ("attention_ar_weights W_V", lambda: attention_ar_weights(np.eye(2), np.eye(3), Y, 2), "W_V"),
    ("attention_ar_weights W_QK", lambda: attention_ar_weights(np.eye(3), np.ones(3), Y, 2), "W_QK"),
    ("attention_ar_weights W_V nan", lambda: attention_ar_weights(with_nan(np.eye(3)), np.eye(3), Y, 2), "W_V"),
    ("attention_ar_weights W_QK nan", lambda: attention_ar_weights(np.eye(3), with_nan(np.eye(3)), Y, 2), "W_QK"),
    ("attention_ar_weights s", lambda: attention_ar_weights(np.eye(3), np.eye(3), Y, "2"), "s"),
    ("attention_ar_weights T", lambda: attention_ar_weights(np.eye(3), np.eye(3), Y[:3], 2), "T"),
    ("ar1_optimal_weights kappa", lambda: ar1_optimal_weights(NAN), "kappa"),
    ("ar1_optimal_weights family", lambda: ar1_optimal_weights(0.2, "other"), "family"),
    # ---------------------------------------------------------------- attention
    ("build_tokens T", lambda: build_tokens(Yt[:, :3], 2), "T"),
    ("build_tokens s", lambda: build_tokens(Yt, 0), "s"),
    ("build_tokens s bool", lambda: build_tokens(Yt, True), "s"),
    ("build_tokens y nan", lambda: build_tokens(torch.tensor([[1.0, NAN, 2.0, 3.0]]), 1), "y"),
    ("build_tokens y 1-D", lambda: build_tokens(Yt[0], 1), "y"),
    ("build_tokens y numpy", lambda: build_tokens(Y[None], 1), "y"),
    ("LSA s", lambda: LinearSelfAttention(0), "s"),
    ("LSA s float", lambda: LinearSelfAttention(2.0), "s"),
    ("LSA init", lambda: LinearSelfAttention(2, init="xavier"), "init"),
    ("LSA init_scale", lambda: LinearSelfAttention(2, init_scale=-1.0), "init_scale"),
    ("LSA init_scale nan", lambda: LinearSelfAttention(2, init_scale=NAN), "init_scale"),
    ("LSA init_scale str", lambda: LinearSelfAttention(2, init_scale="big"), "init_scale"),
    ("from_weights shape", lambda: LinearSelfAttention.from_weights(np.eye(3), np.eye(2)), "W_QK"),
    ("from_weights non-square", lambda: LinearSelfAttention.from_weights(np.ones((2, 3)), np.ones((2, 3))), "W_V"),
    ("from_weights 1x1", lambda: LinearSelfAttention.from_weights(np.eye(1), np.eye(1)), "W_V"),
    ("from_weights 3-D", lambda: LinearSelfAttention.from_weights(np.ones((1, 2, 2)), np.ones((1, 2, 2))), "W_V"),
    ("from_weights nan", lambda: LinearSelfAttention.from_weights(with_nan(W2), W2), "W_V"),
    ("from_weights W_QK inf", lambda: LinearSelfAttention.from_weights(W2, np.full((2, 2), INF)), "W_QK"),
    ("forward rows", lambda: LinearSelfAttention(2, dtype=torch.float64)(torch.zeros(1, 2, 5, dtype=torch.float64)), "Y0"),
    ("forward ndim", lambda: LinearSelfAttention(2, dtype=torch.float64)(torch.zeros(3, 5, dtype=torch.float64)), "Y0"),
    ("forward n", lambda: LinearSelfAttention(2, dtype=torch.float64)(torch.zeros(1, 3, 1, dtype=torch.float64)), "Y0"),
    ("forward dtype", lambda: LinearSelfAttention(2)(torch.zeros(1, 3, 5, dtype=torch.float64)), "Y0"),
    ("forward numpy", lambda: LinearSelfAttention(2)(np.zeros((1, 3, 5))), "Y0"),
    # ---------------------------------------------------------------- trainer pieces
    ("sampler family", lambda: TorchLDSSampler("a"), "family"),
    ("sampler dtype", lambda: TorchLDSSampler(LDSFamily("a"), dtype=torch.float16), "dtype"),
    ("sampler m", lambda: TorchLDSSampler(LDSFamily("a")).draw(0, torch.Generator()), "m"),
    ("sampler m float", lambda: TorchLDSSampler(LDSFamily("a")).draw(2.0, torch.Generator()), "m"),
    ("sampler generator", lambda: TorchLDSSampler(LDSFamily("a")).draw(2, RNG(0)), "generator"),
    ("features y_tm", lambda: effective_features(Y[:, None], 1), "y_tm"),
    ("features y_tm 1-D", lambda: effective_features(Yt[0], 1), "y_tm"),
    ("features s", lambda: effective_features(Yt.T, 0), "s"),
    ("features T", lambda: effective_features(Yt.T[:3], 2), "T"),
    ("config dict", lambda: TrainConfig.from_dict([("s", 1)]), "config"),
    ("result dict", lambda: TrainResult.from_dict("{}"), "data"),
    ("train config", lambda: train({"setting": "a"}), "config"),
    ("stream_seed word", lambda: stream_seed(1, -2), "words"),
    ("torch_threads n", lambda: torch_threads(0).__enter__(), "n"),
    ("device", lambda: resolve_device(3), "device"),
]


@pytest.mark.parametrize("call,param", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_raises_value_error_naming_the_parameter(call, param):
    with pytest.raises(ValueError, match=rf"^{re.escape(param)}\b"):   # the message starts with it
        call()


# ------------------------------------------------------------ the helpers themselves


@given(v=st.one_of(st.integers(max_value=0), st.booleans(), st.floats(), st.text(max_size=3)))
def test_check_positive_int_rejects(v):
    with pytest.raises(ValueError, match="^n "):
        V.check_positive_int("n", v)


@given(v=st.integers(1, 10**6))
def test_check_positive_int_accepts(v):
    assert V.check_positive_int("n", v) == v and type(V.check_positive_int("n", np.int64(v))) is int


@given(v=st.one_of(st.floats(max_value=-1e-300), st.just(NAN), st.just(INF), st.just(-INF)))
def test_check_nonneg_real_rejects(v):
    with pytest.raises(ValueError, match="^sigma "):
        V.check_nonneg_real("sigma", v)


def test_check_positive_real_and_rational():
    assert V.check_positive_real("x", 2) == 2.0
    with pytest.raises(ValueError, match="^x "):
        V.check_positive_real("x", 0.0)
    assert V.check_rational("q", 0.1) == Fraction(1, 10)
    assert V.check_rational("q", "1/3") == Fraction(1, 3)
    assert V.check_rational("q", np.float64(0.25)) == Fraction(1, 4)
    assert V.check_rational("q", np.int64(3)) == 3
    assert V.check_rational("q", -1, nonneg=False) == -1
    for bad in ("1/0", "abc", INF, NAN, None, True, [1]):
        with pytest.raises(ValueError, match="^q "):
            V.check_rational("q", bad)


def test_check_finite_array_and_window():
    np.testing.assert_array_equal(V.check_finite_array("a", [1, 2]), [1.0, 2.0])
    with pytest.raises(ValueError, match="^a "):
        V.check_finite_array("a", [[1.0]], ndim=1)
    with pytest.raises(ValueError, match="^a "):
        V.check_finite_array("a", [1 + 2j])
    with pytest.raises(ValueError, match="^a "):
        V.check_finite_array("a", {"x": 1})
    assert V.check_window(2, 4) == (2, 4)
    with pytest.raises(ValueError, match="^T "):
        V.check_window(2, 3)
    with pytest.raises(ValueError, match="^s "):
        V.check_window(0, 3)


@given(v=st.one_of(st.booleans(), st.floats(), st.text(max_size=3), st.none()))
def test_check_int_rejects_non_integers(v):
    with pytest.raises(ValueError, match="^k must be an integer, got"):
        V.check_int("k", v)


def test_check_int_bounds():
    assert V.check_int("k", -5) == -5 and type(V.check_int("k", np.int32(3), 0)) is int
    with pytest.raises(ValueError, match=r"^k must be an integer >= 0, got -1$"):
        V.check_int("k", -1, minimum=0)


def test_check_real_bounds_and_messages():
    assert V.check_real("x", np.float32(0.5), minimum=0, maximum=1) == 0.5
    assert V.check_real("x", 1, minimum=1) == 1.0 and type(V.check_real("x", 1)) is float
    cases = [
        (dict(value="1"), "x must be a real number, got '1'"),
        (dict(value=True), "x must be a real number, got True"),
        (dict(value=INF), "x must be finite, got inf"),
        (dict(value=-0.5, minimum=0.0), "x must be >= 0.0, got -0.5"),
        (dict(value=0, minimum=0, strict_min=True), "x must be > 0, got 0"),
        (dict(value=2.0, maximum=1.0), "x must be <= 1.0, got 2.0"),
        (dict(value=1.0, maximum=1.0, strict_max=True), "x must be < 1.0, got 1.0"),
    ]
    for kw, msg in cases:
        with pytest.raises(ValueError, match=f"^{re.escape(msg)}$"):
            V.check_real("x", **kw)


def test_check_choice_and_type():
    assert V.check_choice("mode", "b", ("a", "b")) == "b"
    assert V.check_choice("dtype", torch.float64, (torch.float32, torch.float64)) is torch.float64
    for bad in ("c", None, True, np.array(["a", "b"]), ["a"]):
        with pytest.raises(ValueError, match=r"^mode must be one of \('a', 'b'\), got"):
            V.check_choice("mode", bad, ("a", "b"))
    with pytest.raises(ValueError, match="^flag must be one of"):
        V.check_choice("flag", True, (1, 2))       # a bool is not the integer 1
    assert V.check_type("d", {}, dict, "a dict") == {}
    with pytest.raises(ValueError, match="^d must be a dict, got list$"):
        V.check_type("d", [], dict, "a dict")


def test_check_generator_message():
    rng = np.random.default_rng(0)
    assert V.check_generator("rng", rng) is rng
    with pytest.raises(ValueError, match="^rng must be a numpy.random.Generator, got int$"):
        V.check_generator("rng", 0)


def test_integers_beyond_the_float_range_are_named_not_overflowed():
    with pytest.raises(ValueError, match="^x must be finite"):
        V.check_real("x", 10 ** 400)
    with pytest.raises(ValueError, match="^arr must be finite"):
        V.check_finite_array("arr", [1.0, 10 ** 400])


def test_family_rejects_huge_or_all_zero_standard_deviations():
    from theory.systems import MAX_SIGMA
    with pytest.raises(ValueError, match="^sigma_w must be <="):
        LDSFamily("a", sigma_w=10 * MAX_SIGMA)
    with pytest.raises(ValueError, match="^sigma_w, sigma_v and sigma_0 must not all be 0"):
        LDSFamily("b", sigma_w=0.0, sigma_v=0.0, sigma_0=0.0)
    assert LDSFamily("a", sigma_w=0.0, sigma_0=0.0).sigma_v == 0.1
