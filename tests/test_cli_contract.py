"""claims.cli.main: the documented contract of ``ldsicl`` beyond tests/test_cli.py, in process.

Added for mutants that survived tests/test_cli.py (docs/mutation.md): the defaults and
help texts of the parser, the exact route taken by the aliases, the JSON fields of the
exact route, the messages of the number parsers, and the text output of ``train``.
Oracles: the documented defaults (docs/settings.md, Defaults), theory.kappa called
directly with exact Fractions, and TrainConfig.
"""
from __future__ import annotations

import argparse

import json
import re
from fractions import Fraction
from pathlib import Path

import pytest

from claims.cli.main import build_parser, main
from models.config import TrainConfig
from theory.kappa_exact import kappa_moments_exact_a


def test_parser_defaults_are_the_documented_ones():
    k = build_parser().parse_args(["kappa"])
    assert (k.setting, k.T, k.d, k.sigma_w, k.sigma_v, k.sigma_0) == ("a", 30, 5, Fraction(1, 10), Fraction(1, 10), 1)
    assert (k.method, k.mc_systems, k.seed, k.json) == ("auto", 200_000, 0, False)
    t = build_parser().parse_args(["train"])
    assert (t.device, t.out, t.progress, t.claim, t.profile) == ("auto", None, None, None, None)
    # every field option of train is None unless given (so that only a given option changes
    # a claim's run); the defaults are TrainConfig's (test_train_help_states_trainconfigs_defaults)
    assert all(getattr(t, name) is None for name in ("setting", "s", "T", "d", "sigma_w", "layers", "radius",
                                                     "steps", "batch", "seed", "lr", "betas"))
    assert build_parser().parse_args(["train", "--progress"]).progress is True
    assert build_parser().parse_args(["train", "--no-progress"]).progress is False


def test_help_texts(capsys):
    assert main(["kappa", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "kappa = (T-2) E[y_{T-1} y_T S] / E[y_{T-1}^2 S^2]" in out
    assert "Monte Carlo seed (default: 0)" in out
    assert main(["train", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "AR window s (default: 1)" in out
    assert "also write the record to this file" in out


def _subparser(argv):
    parser = build_parser()
    for name in argv:
        parser = _subcommands(parser)[name]
    return parser


def test_train_help_states_trainconfigs_defaults():
    """Each train option that is None unless given says its default in its help; the
    oracle is TrainConfig's own field defaults (and LDSFamily's for the family)."""
    import dataclasses
    defaults = {f.name: f.default for f in dataclasses.fields(TrainConfig)}
    shown = {"sigma_w": "1/10", "sigma_v": "1/10", "sigma_0": "1", "betas": "0.9,0.999",
             "warmup_steps": "5 %% of steps"}
    train = _subparser(["train"])
    formatter = train._get_formatter()
    for action in train._actions:
        if action.dest in defaults and action.default is None:
            expected = shown.get(action.dest, str(defaults[action.dest]))
            text = formatter._get_help_string(action)      # the help as shown (the defaults are read then)
            assert f"(default: {expected})" in text, (action.dest, text)
            if action.dest not in shown:
                assert str(defaults[action.dest]) == expected
    assert tuple(float(x) for x in shown["betas"].split(",")) == defaults["betas"]
    assert (Fraction(shown["sigma_w"]), Fraction(shown["sigma_0"])) == (
        Fraction(repr(defaults["sigma_w"])), Fraction(repr(defaults["sigma_0"])))


def test_the_default_setting_is_trainconfigs():
    """kappa's and optimum's default setting (claims.cli.main.DEFAULT_SETTING, written there so
    that the parser needs no torch) is TrainConfig's."""
    from claims.cli.main import DEFAULT_SETTING
    assert DEFAULT_SETTING == TrainConfig().setting
    assert build_parser().parse_args(["optimum"]).setting == DEFAULT_SETTING


@pytest.mark.parametrize("argv", [[], ["kappa"], ["train"], ["runs"], ["optimum"], ["report"], ["cache", "list"],
                                  ["cache", "clear"], ["cache", "export"]])
def test_every_option_shows_its_default_once(argv, capsys):
    """The issue's complaint was "(1e-3) (default: None)": no help says "default" twice, and
    none shows a None default."""
    assert main(argv + ["--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "(default: None)" not in out and "(default: False)" not in out
    for action in _subparser(argv)._actions:
        text = action.help or ""
        assert text.count("default") <= 1 and "(None:" not in text, (action.dest, text)


def test_version(capsys):
    """The first of --version's three lines (tests/test_cli_version.py checks the others)."""
    from importlib import metadata
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == f"ldsicl {metadata.version('ldsicl')}"


@pytest.mark.parametrize("argv", [[], ["kappa"], ["train"], ["runs"], ["optimum"], ["report"], ["cache"],
                                  ["cache", "list"], ["cache", "clear"], ["cache", "export"]])
def test_every_option_has_help_with_its_default_and_every_command_examples(argv, capsys):
    """The issue's contract: --help defines settings a-d and the control (top level), every
    option has a help text with its default, every subcommand ends with examples."""
    parser = _subparser(argv)
    for action in parser._actions:
        if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
            continue
        assert action.help, f"{argv} {action.option_strings} has no help"
    assert main(argv + ["--help"]) == 0
    out = capsys.readouterr().out
    assert "examples:" in out
    if not argv:
        for setting in ("a", "b", "c", "d", "asym"):
            assert re.search(rf"^  {setting}\s+\S", out, re.M), setting
    else:
        assert "(default:" in out or argv[-1] == "cache"


@pytest.mark.parametrize("alias", ["exact", "exact-rational"])
def test_exact_alias_keeps_non_decimal_inputs_exact(alias, capsys):
    """--method exact with --sigma-w 1/3 computes kappa for sigma_w^2 = 1/9 exactly (not for
    the float 0.333...), and reports the exact inputs in its details."""
    assert main(["kappa", "--T", "6", "--d", "2", "--sigma-w", "1/3", "--method", alias, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    num, den = kappa_moments_exact_a(6, 2, Fraction(1, 9), Fraction(1, 100), 1)
    assert Fraction(out["exact"]) == 4 * num / den
    assert out["method"] == "exact-rational"
    assert {k: out["details"][k] for k in ("setting", "T", "d", "sigma_w2", "sigma_v2", "sigma_02")} == \
        {"setting": "a", "T": 6, "d": 2, "sigma_w2": "1/9", "sigma_v2": "1/100", "sigma_02": "1"}
    assert Fraction(out["numerator"]) == num and Fraction(out["denominator"]) == den
    assert (out["setting"], out["T"], out["d"], out["sigma_w"], out["sigma_v"], out["sigma_0"]) == \
        ("a", 6, 2, "1/3", "1/10", "1")


def test_quadrature_alias(capsys):
    assert main(["kappa", "--T", "6", "--d", "2", "--method", "quadrature", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["method"] == "gauss-legendre" and out["exact"] is None


@pytest.mark.parametrize("argv, warned", [(["--method", "exact"], True),
                                           (["--method", "quadrature"], False)])
def test_a_long_exact_computation_is_announced_before_it_starts(argv, warned, monkeypatch, capsys):
    """Where the exact rational route would take long (theory.kappa.exact_seconds, within the
    budget of claims/cli/costs.py), its estimate goes to stderr before the work starts (the
    work itself is stubbed out here); the quadrature at the same T is not announced."""
    import claims.cli.compute_commands as commands

    def stop(*a, **k):
        raise ValueError("stopped before the work")
    monkeypatch.setattr(commands.kappa_mod, "exact_seconds", lambda T, d: 3600.0)
    monkeypatch.setattr(commands.kappa_mod, "kappa", stop)
    assert main(["kappa", "--T", "40", "--d", "1", *argv]) == 2
    err = capsys.readouterr().err
    assert ("estimate: kappa by exact rational arithmetic at --T 40: about 1 h" in err) == warned, err
    assert "stopped before the work" in err


@pytest.mark.parametrize("argv, message", [
    (["kappa", "--T", "abc"], "argument --T: T must be an integer, got 'abc'"),
    (["kappa", "--seed", "-1"], "argument --seed: seed must be an integer >= 0"),
    (["train", "--seed", "-1"], "argument --seed: seed must be an integer >= 0"),
    (["train", "--lr", "abc"], "argument --lr: lr must be a real number, got 'abc'"),
    (["kappa", "--sigma-0", "abc"], "argument --sigma-0: sigma_0 must be"),
    (["train", "--radius", "0"], "argument --radius: radius must be > 0"),
    (["train", "--forward", "nope"], "argument --forward: invalid choice: 'nope'"),
    (["train", "--dtype", "float16"], "argument --dtype: invalid choice: 'float16'"),
])
def test_number_parsers_name_the_parameter(argv, message, capsys):
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_train_passes_every_family_field_and_prints_the_weights(tmp_path, capsys):
    argv = ["train", "--steps", "2", "--batch", "8", "--sigma-w", "0.2", "--sigma-v", "0.3",
            "--sigma-0", "0.5", "--T", "7", "--d", "2", "--radius", "0.9", "--device", "cpu", "--no-progress",
            "--no-cache"]
    assert main(argv + ["--json"]) == 0
    rec = json.loads(capsys.readouterr().out)
    assert TrainConfig.from_dict(rec["config"]) == TrainConfig(
        steps=2, batch=8, sigma_w=0.2, sigma_v=0.3, sigma_0=0.5, T=7, d=2, radius=0.9)
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert re.search(r"^W_V =$", out, re.M) and re.search(r"^W_QK =$", out, re.M)


def _subcommands(parser) -> dict:
    """A parser's subcommands by name ({} when it has none)."""
    acts = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(acts[0].choices) if acts else {}


def test_every_example_in_the_help_is_a_command_the_parser_takes():
    """The ``examples:`` of ``ldsicl --help`` and of every subcommand's help parse (no
    execution): each line starts with ``ldsicl`` and its arguments are accepted."""
    import shlex
    parser = build_parser()
    subs = _subcommands(parser)
    seen = 0
    for p in [parser, *subs.values()]:
        epilog = p.epilog or ""
        assert "examples:" in epilog, p.prog
        for line in epilog.split("examples:\n", 1)[1].split("\n\n", 1)[0].splitlines():
            words = shlex.split(line.split("#", 1)[0])
            assert words[0] == "ldsicl", (p.prog, line)
            try:
                parser.parse_args(words[1:])
            except SystemExit as exc:
                raise AssertionError(f"{p.prog}: example {line.strip()!r} does not parse") from exc
            seen += 1
    assert seen >= 2 * len(subs)


def test_train_takes_both_dtypes_and_both_forward_passes():
    parser = build_parser()
    for dtype in ("float32", "float64"):
        assert parser.parse_args(["train", "--dtype", dtype]).dtype == dtype
    for forward in ("effective", "model"):
        assert parser.parse_args(["train", "--forward", forward]).forward == forward


#: every help screen of ``ldsicl`` as a user sees it at 100 columns (tests/data/cli_help.txt);
#: after a deliberate change to the interface, rewrite it with
#: ``python -c "import sys; sys.path.insert(0, 'tests'); import test_cli_contract as t; t.write_help()"``
HELP_FILE = Path(__file__).parent / "data" / "cli_help.txt"


def help_screens() -> str:
    import os
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "100"
    try:
        parser = build_parser()
        screens = [("ldsicl --help", parser.format_help())]
        for name, sub in _subcommands(parser).items():
            screens.append((f"ldsicl {name} --help", sub.format_help()))
            screens += [(f"ldsicl {name} {n} --help", p.format_help()) for n, p in _subcommands(sub).items()]
    finally:
        if old is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = old
    text = "".join(f"$ {cmd}\n{text}\n" for cmd, text in screens)
    return text.replace(str(Path(__file__).resolve().parents[1]), "<repo>")    # the checkout's own path


def write_help() -> None:
    HELP_FILE.write_text(help_screens(), encoding="utf-8")


def test_the_help_screens_are_the_reviewed_ones():
    """The help a user reads (options, defaults, texts, examples) changes only on purpose:
    each screen equals its reviewed copy in tests/data/cli_help.txt (rewrite it with
    :func:`write_help` after a deliberate change and review the diff)."""
    got, want = help_screens(), HELP_FILE.read_text(encoding="utf-8")
    if got != want:
        import difflib
        diff = "".join(list(difflib.unified_diff(want.splitlines(True), got.splitlines(True), "reviewed", "now"))[:60])
        raise AssertionError("the help screens changed; review and rewrite tests/data/cli_help.txt:\n" + diff)


def test_errors_carry_the_parameter_they_name():
    """claims.cli.shared: a library call's ValueError leaves ``naming`` as a ParameterError
    carrying one of the call's parameters (the one its message names as a whole word, never
    a longer name that starts the same); a ParameterError passes unchanged; none matches: None."""
    from claims.cli.shared import ParameterError, naming

    def raised(params, error):
        try:
            with naming(*params):
                raise error
        except ParameterError as exc:
            return exc.param, str(exc)
    assert raised(("s", "sigma_w", "T"), ValueError("sigma_w must be >= 0")) == ("sigma_w", "sigma_w must be >= 0")
    assert raised(("s", "T"), ValueError("T = 30 needs about 9 GiB")) == ("T", "T = 30 needs about 9 GiB")
    assert raised(("betas", "lr"), ValueError("betas[1] must be < 1.0, got 1.5"))[0] == "betas"
    assert raised(("s", "T"), ValueError("seed must be an integer"))[0] is None
    assert raised(("out",), ValueError("anything"))[0] == "out"
    assert raised(("T",), ParameterError("key", "k"))[0] == "key"
    assert isinstance(ParameterError("out", "x"), ValueError)


@pytest.mark.parametrize("argv, line", [
    (["train", "--claim", "nope", "--no-cache"], "argument --claim: claim must be a run id"),
    (["train", "--betas", "0.9,1.5", "--no-cache"], "argument --betas: betas[1] must be < 1.0"),
    (["train", "--T", "3", "--s", "2", "--no-cache"], "argument --T: T must exceed s + 1 = 3"),
    (["train", "--profile", "paper", "--no-cache"], "argument --profile: profile alone trains the runs"),
    (["optimum", "--starts", "100000"], "argument --starts: starts must be <= "),
    (["kappa", "--setting", "b", "--method", "exact"], "argument --method: method 'exact-rational' is only"),
    (["cache", "export", "zzz", "--out", "x.npz"], "argument KEY: key must be a run id"),
])
def test_a_bad_argument_is_one_line_naming_its_option(argv, line, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[-1].split("error: ", 1)[1].startswith(line), err[-1]
