"""The point of the family's parameters (claims/harness/params.py) and what carries it: run ids,
training configurations, the session's point, the report's run line.

Oracles: the parser against the values typed (hypothesis over the whole valid box, and the
box's edges); the run ids against their own parser (round trip) and against the default ids
(unchanged at the default point); the configurations against ``TrainConfig``'s own fields;
the report against the option given.
"""
from __future__ import annotations

import math

import pytest
from hypothesis import example, given, strategies as st

from claims.harness import params
from claims.harness.params import DEFAULT, MAX_D, MAX_SIGMA, MAX_T, MIN_T, PARAMS, Point, activate, current, family
from claims.harness.profiles import QUICK
from claims.harness.runopts import RunOptions
from claims.harness.runform import seed_index
from claims.harness.runs import ArsLayer, DepthStack, ShiftPair, ar1_run, config_for, depth_run, parse_run
from claims.reports.report import provenance

sigmas = st.floats(0, MAX_SIGMA, allow_nan=False).map(lambda x: float(f"{x:.4g}"))
points = st.builds(Point, T=st.integers(MIN_T, MAX_T), d=st.integers(1, MAX_D), sigma_w=sigmas,
                   sigma_v=sigmas.filter(lambda v: v > 0), sigma_0=sigmas)


@given(points)
@example(DEFAULT)
@example(Point(T=MIN_T, d=1, sigma_w=0.0, sigma_v=1e-3, sigma_0=0.0))
@example(Point(T=MAX_T, d=MAX_D, sigma_w=MAX_SIGMA, sigma_v=MAX_SIGMA, sigma_0=MAX_SIGMA))
@example(Point(sigma_w=1e-5))                     # repr-style float in the tag
def test_a_points_tag_reads_back_as_the_same_point(p):
    assert Point.parse(p.tag()) == p
    assert (p.tag() == "") == p.is_default
    assert set(p.changed()) == {k for k in PARAMS if getattr(p, k) != getattr(DEFAULT, k)}


@pytest.mark.parametrize("text, names", [
    ("T=6", "T"), (f"T={MAX_T + 1}", "T"), ("T=30.5", "T"), ("d=0", "d"), (f"d={MAX_D + 1}", "d"),
    ("sigma_w=-0.1", "sigma_w"), ("sigma_v=nan", "sigma_v"), ("sigma_0=inf", "sigma_0"),
    ("sigma_w=1e400", "sigma_w"), ("sigma_w=0,sigma_v=0", "sigma_w, sigma_v"), ("radius=0.5", "radius"),
    ("T=30,T=40", "T"), ("T", None), ("=3", None), ("sigma_w=abc", "sigma_w"),
])
def test_a_bad_point_is_one_error_naming_the_parameter(text, names):
    with pytest.raises(ValueError) as info:
        Point.parse(text)
    msg = str(info.value)
    assert msg.startswith("--claims-params") and "\n" not in msg and len(msg) < 200
    if names:
        assert msg.startswith(f"--claims-params {names}")


def test_ids_at_the_default_point_are_todays_ids():
    assert ar1_run("a", 0).run == "ar1/a/seed=0"
    assert ArsLayer("b", 4, 2).run == "ars/b/s=4/seed=2"


@given(points, st.integers(0, 20))
@example(Point(T=60), 3)
def test_run_ids_carry_the_point_and_parse_back(p, i):
    with activate(p):
        layer = ArsLayer("b", 4, i)
        stack = DepthStack(2, 40, QUICK.stack_batch, i)
    assert layer.point == p and parse_run(layer.run) == layer and seed_index(layer.run) == i
    assert layer.run == p.prefix() + f"ars/b/s=4/seed={i}"
    # a depth stack keeps its own T: the prefix never names T, the configuration keeps the id's T
    assert "T=" not in stack.run.partition("depth/")[0] and parse_run(stack.run) == stack
    assert stack.config(QUICK).T == 40 and stack.config(QUICK).d == p.d


def test_the_configuration_follows_the_point_and_the_cache_key_moves():
    base = config_for("ar1/a/seed=0", QUICK)
    moved = config_for("@T=60,d=3,sigma_w=0.2/ar1/a/seed=0", QUICK)
    assert (moved.T, moved.d, moved.sigma_w, moved.sigma_v) == (60, 3, 0.2, base.sigma_v)
    assert moved.key() != base.key()
    assert moved.replace(T=base.T, d=base.d, sigma_w=base.sigma_w).key() == base.key()   # nothing else moved


@pytest.mark.parametrize("bad", ["@T=30/ar1/a/seed=0",           # the default written out
                                 "@d=3,T=60/ar1/a/seed=0",       # out of order
                                 "@T=60/depth/L=2/T=40/batch=1000/seed=0",   # T a depth stack does not follow
                                 "@T=5/ar1/a/seed=0", "@/ar1/a/seed=0", "@T=60"])
def test_a_malformed_prefix_is_refused(bad):
    with pytest.raises(ValueError):
        config_for(bad, QUICK)


def test_groups_pass_their_point_to_their_members():
    with activate(Point(d=3)):
        pair = ShiftPair(1, (1.0, 0.9), QUICK.stack_batch, 0)
    assert all(m.point == Point(d=3) for m in pair.members)
    assert all(m.config(QUICK).d == 3 for m in pair.members)


def test_the_session_point_is_scoped_and_families_follow_it():
    assert current() == DEFAULT
    with activate(Point.parse("T=40,sigma_v=0.3")):
        f = family("a")
        assert (f.T, f.d, f.sigma_v) == (40, 5, 0.3)
        assert family("a", T=12).T == 12                 # what a claim sets itself wins
        assert depth_run(1, 40, 1000, 0).run == "@sigma_v=0.3/depth/L=1/T=40/batch=1000/seed=0"
    assert current() == DEFAULT and family("a").T == 30
    with pytest.raises(ValueError):
        with activate({"T": 40}):
            pass


def test_the_report_records_the_point_and_the_command_reproduces_it(tmp_path):
    away = RunOptions(params=Point.parse("T=60,d=3"), untrained=True).as_dict()
    assert away["params"]["T"] == 60 and "tuned at the default point" in away["params_note"]
    assert "params_note" not in RunOptions().as_dict() and "trained_runs" not in RunOptions().as_dict()
    cmd = provenance("quick", away, argv=["x"], root=tmp_path)["command"]
    assert cmd == "pytest claims -n auto --claims-untrained --claims-params T=60,d=3"
    assert provenance("quick", RunOptions().as_dict(), argv=["x"], root=tmp_path)["command"] == "pytest claims -n auto"


def test_point_cached_values_do_not_leak_across_points():
    calls = []

    @params.point_cached
    def horizon(setting):
        calls.append(setting)
        return family(setting).T

    with activate(Point(T=50)):
        assert horizon("a") == 50
    assert horizon("a") == 30 and horizon("a") == 30 and len(calls) == 2
    # control: a plain lru_cache serves the first point's value at the second
    import functools

    @functools.lru_cache(maxsize=None)
    def plain(setting):
        return family(setting).T

    with activate(Point(T=50)):
        plain("a")
    assert plain("a") == 50


def test_the_format_of_values():
    assert params.format_value(0.1) == "0.1" and params.format_value(60) == "60"
    assert math.isclose(float(params.format_value(1 / 3)), 1 / 3, rel_tol=0, abs_tol=0)


def test_untrained_runs_skip_what_reads_a_trained_run_and_train_nothing(tmp_path, monkeypatch):
    """``--claims-untrained``: ``trained`` skips before it reaches the cache; the AR(s) basins
    are empty, so the twins stand alone.  Control: the same profile without the option
    reaches the cache (a stub that records the call)."""
    import dataclasses

    from claims import _ars
    from claims.harness import runs

    calls = []
    monkeypatch.setattr("models.cache.train_cached", lambda config, **kw: calls.append(config) or "weights")
    untrained = dataclasses.replace(QUICK, run=RunOptions(untrained=True))
    with pytest.raises(pytest.skip.Exception, match="--claims-untrained"):
        runs.trained("ar1/a/seed=0", untrained)
    assert calls == []
    assert _ars.basins.__wrapped__("a", 2, untrained).labels == ()      # uncached: Profile equality ignores run
    assert runs.trained("ar1/a/seed=0", QUICK) == "weights" and len(calls) == 1


def test_known_failures_are_expected_at_the_default_point_only():
    """The known non-reproductions (the specs' ``known``) were measured at the default point:
    there a listed check is a strict xfail, elsewhere a plain parameter (its outcome is news)."""
    from claims.harness.known import known_params
    from claims.specs import known_failures

    listed = sorted(known_failures())[0]
    at_default = known_params(lambda cid: cid, [listed, "not/a/listed/check"])
    assert getattr(at_default[0], "marks", ()) and at_default[1] == "not/a/listed/check"
    with activate(Point(T=40)):
        assert known_params(lambda cid: cid, [listed]) == [listed]


def test_a_bad_prefix_of_a_run_id_is_named_as_the_ids_not_as_an_option():
    from claims.harness.params import split_prefix
    with pytest.raises(ValueError) as err:
        split_prefix("@T=6/ar1/a/seed=0")
    msg = str(err.value)
    assert "'@T=6/'" in msg and "T" in msg and "--claims-params" not in msg and "claims-params" not in msg
