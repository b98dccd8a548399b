"""models/config.py: TrainConfig's validation, defaults (the paper's protocol), key and
round trip; the warm-up + cosine schedule; stream_seed and the splitmix64 mixer behind it
(Vigna's published outputs)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from models.config import KEY_FORMAT, TrainConfig, lr_schedule, stream_seed
from theory.systems import LDSFamily


# ----------------------------------------------------------------------------- config
@pytest.mark.parametrize("field, value", [
    ("setting", "z"), ("setting", None), ("s", 0), ("s", 1.5), ("s", True), ("d", 0),
    ("T", 2), ("T", 30.0), ("sigma_w", -0.1), ("sigma_v", float("nan")),
    ("sigma_0", float("inf")), ("sigma_w", "0.1"), ("cond_max", 0.5), ("steps", 0),
    ("batch", 0), ("batch", 2.0), ("lr", -1e-3), ("lr", 0.0), ("lr", float("nan")),
    ("lr_min", -1.0), ("lr_min", 1.0), ("warmup_steps", -1), ("warmup_steps", 10 ** 6),
    ("weight_decay", -0.1), ("weight_decay", float("nan")), ("betas", (1.0, 0.9)),
    ("betas", (0.9,)), ("betas", "ab"), ("eps", 0.0), ("grad_clip", 0.0),
    ("grad_clip", float("inf")), ("init", "xavier"), ("init_scale", -1.0), ("seed", -1),
    ("seed", 2 ** 63), ("seed", 1.0), ("dtype", "float16"), ("forward", "full"),
])
def test_config_rejects_bad_field_naming_it(field, value):
    with pytest.raises(ValueError, match=rf"^{field}"):
        TrainConfig(**{field: value})


def test_config_T_must_exceed_window():
    with pytest.raises(ValueError, match=r"^T must exceed s \+ 1"):
        TrainConfig(s=3, T=4)
    TrainConfig(s=3, T=5, steps=1, batch=1)  # n = 1 context token: allowed


def test_config_defaults_are_the_paper_protocol():
    c = TrainConfig()
    assert (c.setting, c.s, c.d, c.T, c.sigma_w, c.sigma_v, c.sigma_0) == ("a", 1, 5, 30, 0.1, 0.1, 1.0)
    assert (c.steps, c.batch, c.weight_decay, c.grad_clip, c.dtype) == (8000, 3000, 0.0, 1000.0, "float32")
    assert (c.lr, c.lr_min, c.betas, c.init_scale) == (1e-3, 0.0, (0.9, 0.999), 0.01)
    assert c.warmup == 400 and c.n == 28
    assert c.family() == LDSFamily("a")


def test_key_is_stable_normalised_and_sensitive_to_every_field():
    base = TrainConfig()
    assert base.key() == TrainConfig().key()
    assert len(base.key()) == 64 and int(base.key(), 16) >= 0
    # documented recipe
    import hashlib
    blob = json.dumps({"format": KEY_FORMAT, "config": base.to_dict()}, sort_keys=True,
                      separators=(",", ":"))
    assert base.key() == hashlib.sha256(blob.encode()).hexdigest()
    # ints and floats normalised
    assert TrainConfig(sigma_0=1).key() == base.key()
    assert TrainConfig(betas=[0.9, 0.999]).key() == base.key()
    changes = dict(setting="b", s=2, d=4, T=31, sigma_w=0.2, sigma_v=0.05, sigma_0=0.5,
                   cond_max=5.0, steps=7999, batch=2999, lr=2e-3, lr_min=1e-4, warmup_steps=100,
                   weight_decay=1e-4, betas=(0.8, 0.999), eps=1e-7, grad_clip=None, init="zeros",
                   init_scale=0.1, seed=1, dtype="float64", forward="model", radius=0.9, layers=2)
    from dataclasses import fields
    assert set(changes) == {f.name for f in fields(TrainConfig)}
    keys = {base.key()}
    for name, value in changes.items():
        keys.add(base.replace(**{name: value}).key())
    assert len(keys) == len(changes) + 1


def test_config_dict_round_trip():
    c = TrainConfig(setting="c", s=2, steps=10, batch=5, warmup_steps=2, grad_clip=None)
    d = json.loads(json.dumps(c.to_dict()))
    assert TrainConfig.from_dict(d) == c
    with pytest.raises(ValueError, match="unknown fields"):
        TrainConfig.from_dict({**d, "colour": "red"})


def test_lr_schedule_warmup_then_cosine():
    c = TrainConfig(steps=1000, lr=0.01, lr_min=0.001, warmup_steps=100)
    lr = lr_schedule(c)
    assert lr.shape == (1000,)
    np.testing.assert_allclose(lr[:100], 0.01 * np.arange(1, 101) / 100)
    assert lr[100] == pytest.approx(0.01)
    assert np.all(np.diff(lr[100:]) < 0)
    assert lr[-1] == pytest.approx(0.001, rel=1e-3) and lr[-1] > 0.001
    assert np.all(lr > 0)
    c0 = TrainConfig(steps=10, warmup_steps=0)
    assert lr_schedule(c0)[0] == c0.lr
    assert np.all(lr_schedule(TrainConfig(steps=5, warmup_steps=5)) == c0.lr * np.arange(1, 6) / 5)


def test_stream_seed():
    assert stream_seed(0, 0, 1, 0) != stream_seed(0, 0, 0, 1)
    assert 0 <= stream_seed(2 ** 70, 5) < 2 ** 63
    with pytest.raises(ValueError, match=r"^words\[0\] must be an integer >= 0"):
        stream_seed(-1)


def test_splitmix64_known_answers():
    """The mixer behind stream_seed is Vigna's splitmix64: its published first outputs
    from state 0 are e220a8397b1dcdaf, 6e789e6aa1b965f4, 06c45d188009454f."""
    from models.config import _splitmix64
    gamma, mask = 0x9E3779B97F4A7C15, 2 ** 64 - 1
    assert [_splitmix64((k * gamma) & mask) for k in range(3)] == \
        [0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F]


def test_numbers_given_as_integers_are_stored_as_floats_and_key_alike():
    """lr_min = 0 and lr_min = 0.0 are one configuration: one value, one type, one cache key."""
    a, b = TrainConfig(lr_min=0), TrainConfig(lr_min=0.0)
    assert type(a.lr_min) is float and a == b and a.key() == b.key()
