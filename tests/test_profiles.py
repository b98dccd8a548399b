"""claims/harness/profiles.py, claims/harness/seeds.py and claims/harness/runopts.py: the two profiles' knobs,
seeds that are names (not workers), hypothesis settings that are always derandomised
unless asked, and ``--retrain``'s start time reaching the weight cache."""
from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from claims.harness import runopts
from claims.harness.profiles import PAPER, PROFILES, QUICK, Profile, get_profile
from claims.harness.seeds import claim_settings, rng_for, seed_for


def test_the_run_store_passes_stale_before_only_under_retrain(monkeypatch):
    """claims/harness/runs.py hands the --retrain start time to train_cached, and nothing else."""
    pytest.importorskip("torch")
    import models.cache
    from claims.harness import runs

    calls = []
    monkeypatch.setattr(models.cache, "train_cached", lambda config, **kw: calls.append((config, kw)))
    runs.trained("ar1/a/seed=0", QUICK)
    runs.trained(runs.ar1_run("a", 0), dataclasses.replace(QUICK, run=runopts.RunOptions(retrain_before=1234.5)))
    config = runs.Ar1Layer("a", 0).config(QUICK)
    assert calls == [(config, {"device": "auto", "progress": False, "stale_before": None}),
                     (config, {"device": "auto", "progress": False, "stale_before": 1234.5})]


def test_seeds_are_stable_names_not_workers():
    assert seed_for("ar1-optimum", "a", 0) == seed_for("ar1-optimum", "a", 0)
    assert seed_for("ar1-optimum", "a", 0) != seed_for("ar1-optimum", "a", 1)
    assert seed_for("a", 1) == seed_for("a", "1")
    # pinned: sha256("gd-equivalence") first 8 bytes, big endian, top bit cleared
    assert seed_for("gd-equivalence") == int.from_bytes(
        __import__("hashlib").sha256(b"gd-equivalence").digest()[:8], "big") & (2**63 - 1)
    assert all(0 <= seed_for(i) < 2**63 for i in range(200))
    np.testing.assert_array_equal(rng_for("x", 1).random(3), rng_for("x", 1).random(3))
    with pytest.raises(ValueError):
        seed_for()


def test_profiles():
    assert get_profile("quick") is QUICK and get_profile("paper") is PAPER
    assert set(PROFILES) == {"quick", "paper"}
    assert PAPER.train_steps == 8000 and PAPER.train_batch == 3000
    assert QUICK.n_seeds == 3 and PAPER.n_seeds == 8        # the paper's 3; our 8, labelled
    assert "project's choice" in PAPER.description and "paper's 3" in QUICK.description
    assert "paper's tolerance" not in QUICK.description + PAPER.description
    assert QUICK.coef_rel_tol == PAPER.coef_rel_tol == 0.01
    assert (QUICK.stack_batch, PAPER.stack_batch) == (1000, 1500)    # ours: docs/settings.md, Profiles
    knobs = ("train_steps", "train_batch", "stack_batch", "n_seeds", "mc_trajectories", "mc_systems",
             "heldout_sequences", "hypothesis_examples", "multistart", "twins", "improper_systems")
    for f in knobs:
        assert getattr(QUICK, f) <= getattr(PAPER, f), f
    # every knob is read by a claim: no advertised knob that nothing uses
    assert {f.name for f in dataclasses.fields(Profile)} == \
        {"name", "description", "coef_rel_tol", "depth_stacks", "trained_windows", "shift_depths", "run", *knobs}
    assert (QUICK.depth_stacks, PAPER.depth_stacks) == (False, True)       # reported rows: paper only
    assert (QUICK.trained_windows, PAPER.trained_windows) == ((2, 4), (2, 3, 4))     # AR(3): paper only
    assert (QUICK.shift_depths, PAPER.shift_depths) == ((1,), (1, 4))
    for bad in ((2,), (4, 2), (2, 2, 4), (2, 5), [2, 4], ()):
        with pytest.raises(ValueError, match="trained_windows"):
            dataclasses.replace(QUICK, trained_windows=bad)
    with pytest.raises(ValueError, match="shift_depths"):
        dataclasses.replace(QUICK, shift_depths=(2,))
    with pytest.raises(ValueError, match="depth_stacks"):
        dataclasses.replace(QUICK, depth_stacks=1)
    with pytest.raises(ValueError, match="unknown claims profile 'bogus'"):
        get_profile("bogus")
    with pytest.raises(ValueError):
        dataclasses.replace(QUICK, n_seeds=0)
    with pytest.raises(ValueError):
        dataclasses.replace(QUICK, multistart=True)
    with pytest.raises(ValueError):
        dataclasses.replace(QUICK, coef_rel_tol=2.0)
    assert dataclasses.replace(QUICK, multistart=2).multistart == 2
    with pytest.raises(Exception):  # frozen
        QUICK.n_seeds = 5  # type: ignore[misc]
    assert json.dumps(PAPER.as_dict())
    assert PAPER.as_dict() == {k: v for k, v in dataclasses.asdict(PAPER).items() if k != "run"}


@pytest.mark.parametrize("ci", [None, "1"])
def test_claim_settings_always_derandomised(monkeypatch, ci):
    """Claims draw the same examples whether or not CI is set; --claims-random opts out."""
    if ci is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", ci)
    s = claim_settings(PAPER)
    assert s.max_examples == 200 and s.deadline is None and s.derandomize is True
    assert s.database is None
    random = dataclasses.replace(QUICK, run=runopts.RunOptions(random_draws=True))
    assert claim_settings(random).derandomize is False
    assert random == QUICK and hash(random) == hash(QUICK)   # run options: not the identity
    assert "run" not in random.as_dict()
    assert claim_settings(QUICK).derandomize is True
    with pytest.raises(TypeError):
        claim_settings()   # the profile is always passed in
