"""Every ``ldsicl`` subcommand refuses a bad value in one line that names the right option once,
echoes no long value, and exits 2 before any work (claims/cli/shared.py); ``train --claim``
takes only a run some claim trains in the chosen profile (claims/cli/commands.py).

In process (``main(argv)``), with every piece of real work stubbed to raise :class:`Reached`:
a bad value that got through to the work fails its case loudly instead of computing.
Oracles: the option each case sets (the one its error line must name), the profiles' own run
lists (``claims.cluster.training.profile_runs``).  Controls: good values of the same options
reach the stubbed work; a run of the quick profile, and a paper run asked for in the paper
profile, pass the claim check.
"""
from __future__ import annotations

import json
import re

import pytest

from claims.cli.main import main

H = "9" * 56                                               # a huge integer, echoed shortened
BEYOND = "1" + "0" * 400                                   # an integer beyond the float range
TINY = ["--steps", "2", "--batch", "4", "--no-cache", "--device", "cpu", "--no-progress"]


class Reached(Exception):
    """A stubbed piece of real work was called: the arguments got through."""


@pytest.fixture(autouse=True)
def no_work(monkeypatch):
    """Every computation a command could start raises :class:`Reached` (the validation in
    front of it still runs)."""
    import subprocess

    import claims.cli.sweep_command
    import claims.reports.report
    import models.cache
    import models.trainer
    import theory.kappa
    import theory.optimum

    def stub(*a, **k):
        raise Reached("the work started")
    for module, names in ((theory.kappa, ("kappa_moments_exact_a", "kappa_moments_quadrature", "kappa_mc_moments",
                                          "kappa_mc_trajectories")),
                          (theory.optimum, ("population_moments", "trajectory_moments")),
                          (models.trainer, ("train",)), (models.cache, ("train_cached",)),
                          (claims.reports.report, ("render_report",)), (subprocess, ("call",)),
                          (claims.cli.sweep_command, ("_sweep",))):
        for name in names:
            monkeypatch.setattr(module, name, stub)


@pytest.fixture
def paths(tmp_path, monkeypatch):
    """{tmp}: a folder, {file}: a text file, {json}: JSON without records, {missing}: a path
    under a folder that does not exist; the cache and the working folder are temporary."""
    monkeypatch.setenv("LDSICL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "file.txt").write_text("not json", encoding="utf-8")
    (tmp_path / "norecords.json").write_text(json.dumps({"schema": 6}), encoding="utf-8")
    return {"{tmp}": str(tmp_path), "{file}": str(tmp_path / "file.txt"), "{json}": str(tmp_path / "norecords.json"),
            "{missing}": str(tmp_path / "no" / "such" / "x.json")}


def _cases():
    """(argv, the flag its one error line must name)."""
    cases = []

    def bad(argv, flag, values):
        for v in values:
            i = argv.index(flag) if flag in argv else None
            full = argv[:i + 1] + [v] + argv[i + 2:] if i is not None else argv + [flag, v]
            cases.append((full, flag))
    numbers = ["-1", "1e400", "nan", "inf", "abc", "", BEYOND]
    bad(["kappa"], "--T", ["0", "2", H] + numbers)
    bad(["kappa"], "--d", ["0", H] + numbers)
    for flag in ("--sigma-w", "--sigma-v", "--sigma-0"):
        bad(["kappa"], flag, numbers)
    bad(["kappa", "--method", "mc-moments"], "--mc-systems", ["0", "1", H] + numbers)
    bad(["kappa"], "--seed", ["-1", "abc", ""])
    bad(["kappa"], "--setting", ["e", ""])
    bad(["kappa"], "--method", ["magic", ""])
    bad(["kappa", "--setting", "b"], "--method", ["exact"])
    bad(["optimum"], "--s", ["0", "1000", H] + numbers)
    bad(["optimum"], "--T", ["2", H, "nan"])
    bad(["optimum"], "--starts", ["0", "100000", "abc"])
    bad(["optimum", "--setting", "d"], "--trajectories", ["1", H, "abc"])
    bad(["optimum"], "--max-memory", ["0"] + numbers)
    bad(["optimum"], "--sigma-w", ["1e400", "-1"])
    bad(["train", *TINY], "--steps", ["0", H] + numbers)
    bad(["train", *TINY], "--batch", ["0", H] + numbers)
    bad(["train", *TINY], "--T", ["2", H] + numbers)
    bad(["train", *TINY], "--s", ["0", "1000", H])
    bad(["train", *TINY], "--layers", ["0", H])
    bad(["train", *TINY], "--d", ["0", H])
    bad(["train", *TINY], "--radius", ["0", H] + numbers)
    bad(["train", *TINY], "--lr", numbers)
    bad(["train", *TINY], "--lr-min", numbers)
    bad(["train", *TINY], "--warmup-steps", ["-1", H])
    bad(["train", *TINY], "--weight-decay", numbers)
    bad(["train", *TINY], "--betas", ["", "0.9", "1,2", "a,b", "nan,0.9"])
    bad(["train", *TINY], "--grad-clip", ["0"] + numbers)
    bad(["train", *TINY], "--init-scale", numbers)
    bad(["train", *TINY], "--dtype", ["float16", ""])
    bad(["train", *TINY], "--forward", ["zz"])
    bad(["train", *TINY], "--device", ["tpu", "", "cuda:x"])
    bad(["train", *TINY], "--max-memory", ["0"] + numbers)
    bad(["train", *TINY], "--out", ["", "{tmp}", "{missing}"])
    bad(["train", *TINY[:4]], "--cache-dir", ["", "{file}"])
    bad(["train", *TINY], "--claim", ["", "zz", "ar1/a/seed=99", "ars/a/s=3/seed=0", "ar1/z/seed=0"])
    bad(["train", "--claim", "ar1/a/seed=0", *TINY], "--claims-params", ["", "zz", "T=1e400", "T=5"])
    bad(["train", "--claim", "ar1/a/seed=0", *TINY], "--profile", ["zz", ""])
    bad(["train", "--profile", "quick"], "--workers", ["0", "-1", "abc", H])
    bad(["train", "--profile", "quick"], "--scheduler", ["", "zz"])
    bad(["runs"], "--claim", ["", "zz"])
    bad(["runs"], "--profile", ["zz"])
    bad(["runs"], "--claims-params", ["", "x=1", "T=nan"])
    bad(["runs"], "--cache-dir", ["", "{file}"])
    bad(["report", "--out", "{tmp}"], "--from", ["", "{tmp}", "{file}", "{json}", "{missing}"])
    bad(["report"], "--out", ["", "{file}"])
    bad(["report"], "--profile", ["zz"])
    sweep = ["sweep", "--grid", "T=10", "--claims", "ar1-optimum", "--untrained", "--out", "{tmp}/s"]
    bad(sweep, "--grid", ["", "zz", "T=1e400", "T=nan", "T=5"])
    bad(sweep, "--claims", ["", "zz"])
    bad(sweep, "--select", ["kappa and ("])
    bad(sweep, "--profile", ["zz"])
    bad(sweep, "--out", ["", "{file}"])
    bad(sweep, "--scheduler", ["", "zz"])
    bad(sweep, "--workers", ["0", "-1", "abc", H])
    for action in ("list", "clear"):
        bad(["cache", action], "--cache-dir", ["", "{file}"])
    bad(["cache", "export", "ar1/a/seed=0"], "--out", ["", "{tmp}", "{missing}"])
    bad(["cache", "export", "ar1/a/seed=0", "--out", "{tmp}/w.npz"], "--profile", ["zz"])
    cases += [(["cache", "export", k, "--out", "{tmp}/w.npz"], "KEY") for k in ("", "zz", "ar1/a/seed=99", "abcdef12")]
    return cases


def _problems(err: str, flag: str) -> list[str]:
    """What is wrong with a refusal's stderr for ``flag``: a traceback, not exactly one error
    line (the last), the flag not named exactly once, a doubled prefix (``argument --from:
    from: ...``), a word longer than 50 characters (a value echoed whole)."""
    lines = err.splitlines()
    errors = [line for line in lines if "error:" in line]
    if "Traceback" in err or len(errors) != 1 or errors[0] != lines[-1]:
        return ["not one error line, last, without a traceback"]
    line, found = errors[0], []
    if len(re.findall(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", line)) != 1:
        found.append(f"{flag} not named exactly once")
    param = flag.lstrip("-").replace("-", "_")
    if re.search(rf"argument {re.escape(flag)}: {re.escape(param)}: ", line):
        found.append("doubled prefix")
    if max(len(word) for word in line.split()) > 50:
        found.append("a long value echoed whole")
    return found


def _id(x) -> str:
    return " ".join(a if len(a) <= 20 else a[:12] + "..." for a in x) if isinstance(x, list) else x


@pytest.mark.parametrize("argv, flag", _cases(), ids=_id)
def test_a_bad_value_is_one_line_naming_its_option_once(argv, flag, paths, capsys):
    argv = [a.replace(a, paths[a]) if a in paths else a.replace("{tmp}", paths["{tmp}"]) for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert not _problems(err, flag), err


def test_control_the_judge_catches_the_issues_lines():
    """The lines the review found, as they were, each fail the battery's judge."""
    old = {"--from": "ldsicl report: error: argument --from: from: /nonexistent: cannot read: Is a directory",
           "--sigma-w": "ldsicl kappa: error: argument --sigma-w: sigma_w must be finite, got 1" + "0" * 400,
           "--s": "ldsicl optimum: error: argument --T: T must exceed s + 1 = 1001, got T=30",
           "--T": "ldsicl kappa: error: x\nTraceback (most recent call last):\nMemoryError"}
    for flag, err in old.items():
        assert _problems(err, flag), flag
    assert not _problems("usage: ...\nldsicl optimum: error: argument --s: s must be at most 28", "--s")


@pytest.mark.parametrize("argv", [
    ["kappa", "--T", "8", "--sigma-w", "1e-3"], ["optimum", "--s", "1", "--T", "6"],
    ["train", *TINY, "--lr", "0.01", "--betas", "0.8,0.9"], ["train", "--claim", "ar1/a/seed=2", *TINY],
    ["train", "--claim", "ar1/a/seed=7", "--profile", "paper", *TINY],
    ["train", "--claim", "ar1/a/seed=0", "--claims-params", "T=10,d=2", *TINY],
    ["report", "--from", "docs/results/quick.json", "--out", "{tmp}/r"],
    ["sweep", "--grid", "T=10", "--claims", "ar1-optimum", "--untrained", "--out", "{tmp}/s"],
])
def test_control_good_values_reach_the_work(argv, paths, monkeypatch):
    """The battery's control: the same options with good values get through to the (stubbed)
    work -- the refusals above are the values', not the stubs'."""
    from pathlib import Path
    monkeypatch.chdir(Path(__file__).resolve().parents[1])
    with pytest.raises(Reached):
        main([a.replace("{tmp}", paths["{tmp}"]) for a in argv])


# ----------------------------------------------------------------------------- the issue's cases
def _line(argv, capsys) -> str:
    assert main(argv) == 2
    return capsys.readouterr().err.splitlines()[-1]


def test_the_issues_messages(paths, capsys):
    assert _line(["optimum", "--s", "1000"], capsys).endswith(
        "argument --s: s must be at most T - 2 = 28 (T = 30: n = T - s - 1 >= 1 context tokens), got 1000")
    assert _line(["optimum", "--T", "3"], capsys).endswith("argument --T: T must exceed s + 1 = 3 "
                                                           "(n = T - s - 1 context tokens), got T=3")
    assert _line(["kappa", "--sigma-w", "1e400"], capsys).endswith(
        "argument --sigma-w: sigma_w must be finite (at most about 1.8e308), got '1e400'")     # as typed
    # --from's prefix once (it read "argument --from: from: ..."); the working folder is tmp
    assert _line(["report", "--from", "no/such.json", "--out", "."], capsys).endswith(
        "argument --from: no such file 'no/such.json'")
    assert _line(["report", "--from", "file.txt", "--out", "."], capsys).endswith(
        "argument --from: file.txt: not JSON: Expecting value: line 1 column 1 (char 0)")
    assert _line(["report", "--from", "norecords.json", "--out", "."], capsys).endswith(
        "argument --from: norecords.json: not a claims report (no list 'records' at the top level)")


@pytest.mark.parametrize("argv, says", [
    (["--claim", "ar1/a/seed=99"], "no claim trains ar1/a/seed=99 in the quick profile (seeds 0-2) or the paper "
                                   "profile (seeds 0-7); `ldsicl runs` lists the runs the claims train"),
    (["--claim", "ar1/a/seed=99", "--profile", "paper"], "in the paper profile (seeds 0-7) or the quick profile "
                                                         "(seeds 0-2)"),
    (["--claim", "ar1/a/seed=5"], "no claim trains ar1/a/seed=5 in the quick profile; the paper profile does: "
                                  "give --profile paper"),
    (["--claim", "ar1/a/seed=5", "--steps", "20"], "the paper profile does: give --profile paper"),
    (["--claim", "ars/b/s=3/seed=1"], "window s = 3 is not trained in the quick profile (it trains s in [2, 4]); "
                                      "the paper profile trains it: give --profile paper"),
    (["--claim", "depth/L=2/T=10/batch=1000/seed=0"], "in the quick profile (no run of this kind) or the paper "
                                                      "profile (no run of this kind)"),
    (["--claim", "ar1/a/seed=3", "--claims-params", "T=10"], "no claim trains @T=10/ar1/a/seed=3 in the quick "
                                                             "profile; the paper profile does"),
])
def test_train_claim_takes_only_a_run_a_claim_trains(argv, says, paths, capsys):
    """The issue's ``ar1/a/seed=99`` (no profile trains it: the seeds each does), a paper run
    asked for in the quick profile (``--profile paper``), a shortened copy of one, a kind no
    claim trains at that batch, and a run moved to a point."""
    line = _line(["train", *argv, "--no-cache"], capsys)
    assert line.startswith("ldsicl train: error: argument --claim: ") and says in line, line


def test_control_the_claim_check_passes_every_run_of_the_profile():
    from claims.cli.commands import check_claimed
    from claims.cluster.training import profile_runs
    from claims.harness.profiles import get_profile
    quick = get_profile("quick")
    for rid in profile_runs(quick):
        assert check_claimed(rid, quick, None) is None


@pytest.mark.parametrize("argv, prog", [(["kappa", "--bogus"], "ldsicl kappa"),
                                        (["cache", "clear", "--bogus"], "ldsicl cache clear"),
                                        (["runs", "--claim", "banding", "zz"], "ldsicl runs")])
def test_an_unknown_argument_is_refused_by_the_subcommand_it_was_given_to(argv, prog, capsys):
    """Not the top level's usage and "ldsicl: error" (as before): the subcommand's."""
    assert _line(argv, capsys) == f"{prog}: error: unrecognized arguments: {argv[-1]}"
