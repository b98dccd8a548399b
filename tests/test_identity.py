"""Record identity (claims/harness/records.py ``check_id``, ``Coords``, ``RunEntry``) in the published
runs, and the rule that no reader parses label text (claims/reports/figures.py, compare.py, readme.py, report.py)."""
from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from claims.harness.identity import Coords, RunEntry, RunRef, check_id, per_run_extras
from claims.harness.records import ClaimRecord, ClaimRecorder, duplicate_ids, make_record
from claims.harness.profiles import PROFILES, QUICK
from claims.harness.runs import ar1_run
from claims.harness.stats import seed_fields
from claims.specs import all_headlines

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "docs" / "results"
P = dict(paper_ref="p", tolerance=1.0, comparator="<=", tolerance_source="project")

pytest_plugins = ["pytester"]


def _published(name: str) -> dict:
    return json.loads((RESULTS / f"{name}.json").read_text(encoding="utf-8"))


# ---------------------------------------------------------------------------- check ids

def test_check_id_is_built_from_claim_check_and_coordinates():
    r = make_record(claim="banding", check="odd-share", setting="a", s=2, label="any words at all",
                    measured=0.5, **P)
    assert r.check_id == "banding/odd-share/a/s=2" == check_id("banding", "odd-share", r.coords)
    # every coordinate has its place and prefix; a negative control is marked
    c = Coords(setting="a", s="2-4", T=80, layers=4, radius=1.05, seed=2, variant="n4sid", control=True)
    assert "/".join(c.id_parts()) == "a/s=2-4/T=80/L=4/r=1.05/seed=2/n4sid/control"
    assert c.where() == "a, s=2-4, T=80, L=4, r=1.05, seed=2, n4sid"
    ctl = make_record(claim="banding", check="odd-share", setting="asym", s=2, label="x", measured=2.0,
                      expect="fails", **P)
    assert ctl.check_id == "banding/odd-share/asym/s=2/control" and ctl.coords.control


def test_the_label_is_no_part_of_the_identity():
    a = make_record(claim="c", check="k", setting="b", label="one wording", measured=0.5, **P)
    b = make_record(claim="c", check="k", setting="b", label="quite another", measured=0.5, **P)
    assert a.check_id == b.check_id and a.label != b.label


@pytest.mark.parametrize("bad, name", [
    ({"check": "Has Space"}, "check"), ({"check": "a/b"}, "check"), ({"setting": "a/b"}, "setting"),
    ({"variant": "1/n-slip"}, "variant"), ({"variant": "two words"}, "variant"), ({"T": 2.5}, "T"),
    ({"layers": True}, "layers"), ({"s": [2]}, "s"), ({"s": 2.0}, "s"), ({"control": "yes"}, "control"),
    # two sets of coordinates must never make one id
    ({"setting": None, "variant": "a"}, "setting"), ({"variant": "s=2"}, "variant"),
    ({"variant": "control"}, "variant"), ({"radius": 0.1 + 0.2}, "radius"), ({"s": "3"}, "range"),
    ({"radius": "1.05"}, "range"), ({"radius": float("inf")}, "finite"), ({"setting": "control"}, "setting"),
    ({"setting": "T=10"}, "setting"), ({"setting": True}, "setting"), ({"measured": 5, "interval": (0.0, 1.0)}, "contain"),
    ({"control": True}, "control"),                       # a control is a check that expects "fails"
])
def test_bad_coordinates_are_refused_naming_the_parameter(bad, name):
    kw = dict(claim="c", check="k", setting="a", label="m", measured=0.5, **P)
    with pytest.raises(ValueError, match=name):
        make_record(**{**kw, **bad})
    assert make_record(**kw).check_id == "c/k/a"


def test_a_record_round_trips_through_its_json_form():
    r = make_record(claim="ar1-optimum", check="trained-coefficient", setting="d", label="m",
                    **seed_fields([0.01, -0.02, 0.005]), runs=[ar1_run("d", i) for i in range(3)],
                    run_stderr=[0.001, None, 0.002],
                    paper_ref="p", tolerance=0.05, comparator="abs<=", tolerance_source="project",
                    details={"family_per_seed": ["value", "key", "value"], "big_per_seed": [{"w": 1}] * 3})
    d = json.loads(json.dumps(r.to_dict()))
    back = ClaimRecord.from_dict(d)
    assert back == r and back.to_dict() == d
    with pytest.raises(ValueError, match="unknown fields"):
        ClaimRecord.from_dict({**d, "metric": "old"})
    with pytest.raises(ValueError, match="is not what its claim"):
        ClaimRecord.from_dict({**d, "check_id": "totally/else"})
    with pytest.raises(ValueError, match="control contradicts"):
        ClaimRecord.from_dict({**d, "expect": "fails"})
    with pytest.raises(ValueError, match="lacks the fields"):
        ClaimRecord.from_dict({k: v for k, v in d.items() if k != "check_id"})


# ---------------------------------------------------------------------------- per-run entries

def test_runs_carry_the_per_seed_values_and_scalars():
    details = {"family_per_seed": ["value", "key"], "rel_error_per_seed": [0.1, 0.2],
               "nearest_per_seed": [{"kind": "min"}, {"kind": "saddle"}], "per_seed": [1, 2], "n": 3}
    r = make_record(claim="c", check="k", setting="a", label="m", **seed_fields([0.1, 0.2]),
                    runs=[RunRef("r/seed=3", 3), RunRef("r/seed=5", 5)], details=details, **P)
    assert [e.run for e in r.runs] == ["r/seed=3", "r/seed=5"] and [e.seed for e in r.runs] == [3, 5]
    assert [e.value for e in r.runs] == r.values == [0.1, 0.2]
    # scalars of *_per_seed lists only; structures and the bare "per_seed" stay in the details
    assert r.runs[1].extra == {"family": "key", "rel_error": 0.2}
    assert per_run_extras(details, 3) == [{}, {}, {}]           # lengths must match the runs
    one = make_record(claim="c", check="k", setting="a", seed=2, label="m", kind="reported",
                      paper_ref="p", measured=1.5, runs=[RunRef("shift/L=1/batch=1000/seed=2", 2)])
    assert one.runs == [RunEntry(run="shift/L=1/batch=1000/seed=2", seed=2, value=1.5)]
    # a reported row gives its own per-run values (and standard errors)
    rows = make_record(claim="c", check="k", setting="a", label="m", kind="reported", paper_ref="p",
                       measured=0.2, runs=[RunRef("r/seed=0", 0), RunRef("r/seed=1", 1)], run_values=[0.1, 0.3],
                       run_stderr=[0.01, 0.02])
    assert [(e.value, e.stderr) for e in rows.runs] == [(0.1, 0.01), (0.3, 0.02)]


R0, R1 = RunRef("r/seed=0", 0), RunRef("r/seed=1", 1)


@pytest.mark.parametrize("runs, extra, match", [
    ([R0], {}, "per-run values"), ([R0] * 2, {}, "each run once"),
    (R0, {}, "list"), (["r/seed=0", "r/seed=1"], {}, "RunRef"),
    ([RunEntry("r/seed=0", 0, 9.0), RunEntry("r/seed=1", 1, 0.2)], {}, "per-seed values"), ([], {}, "non-empty"),
    ([R0, R1], {"run_stderr": [0.1]}, "one standard error"),
    ([R0, R1], {"run_stderr": [0.1, -0.1]}, "stderr"), ([R0, R1], {"run_stderr": [0.1, float("nan")]}, "stderr"),
    ([R0, R1], {"run_values": [0.1, 0.2]}, "run_values"),         # a seed interval's runs take its values
    ([RunRef("", 0), R1], {}, "non-empty id"), ([RunRef("ar1/a/seed=0", 3), R1], {}, "seed index"),
    ([RunEntry("r/seed=0", 0, 0.1, extra=[1, 2]), RunEntry("r/seed=1", 1, 0.2)], {}, "extra"),
    (None, {"run_values": [0.1, 0.2]}, "need runs"),
])
def test_runs_that_do_not_fit_the_values_are_refused(runs, extra, match):
    with pytest.raises(ValueError, match=match):
        make_record(claim="c", check="k", setting="a", label="m", **seed_fields([0.1, 0.2]), runs=runs,
                    **extra, **P)
    # reported rows: several runs give their own values; a single run's value is measured
    rows = dict(claim="c", check="k", setting="a", label="m", kind="reported", paper_ref="p", measured=0.5)
    with pytest.raises(ValueError, match="per-run values"):
        make_record(**rows, runs=[R0, R1])
    with pytest.raises(ValueError, match="single run takes measured"):
        make_record(**rows, runs=[R0], run_values=[9.0])


# ---------------------------------------------------------------------------- uniqueness

def test_one_test_cannot_record_one_check_id_twice():
    class Item:
        nodeid = "t.py::test"
        user_properties: list = []

    rec = ClaimRecorder(Item(), "quick")
    rec.record(claim="c", check="k", setting="a", label="first", measured=0.5, **P)
    rec.record(claim="c", check="k", setting="b", label="other coordinates", measured=0.5, **P)
    with pytest.raises(ValueError, match="recorded twice"):
        rec.record(claim="c", check="k", setting="a", label="reworded", measured=0.5, **P)
    x, y = (make_record(claim="c", check=k, label=k, measured=0.5, **P) for k in ("x", "y"))
    assert duplicate_ids([x, y, x]) == ["c/x"]


def test_two_tests_claiming_one_check_id_fail_the_session(pytester):
    pytester.makeconftest('pytest_plugins = ["claims.harness.plugin"]\n')
    pytester.makepyfile(test_dup='''
def _rec(claim, label):
    claim.record(claim="c", check="k", setting="a", paper_ref="p", label=label, measured=0.5,
                 tolerance=1.0, comparator="<=", tolerance_source="project").check()

def test_one(claim):
    _rec(claim, "one")

def test_two(claim):
    _rec(claim, "two")
''')
    result = pytester.runpytest("-p", "no:cacheprovider", "--claims-report", str(pytester.path / "rep"))
    result.assert_outcomes(passed=2)
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*DUPLICATE check_id*c/k/a*"])


@pytest.mark.parametrize("name", ["quick", "paper"])
def test_published_runs_have_unique_ids_of_schema_6(name):
    data = _published(name)
    assert data["schema"] == 6
    records = [ClaimRecord.from_dict(r) for r in data["records"]]
    assert duplicate_ids(records) == []
    for r in records:                      # the id is what claim, check and coordinates make
        assert r.check_id == check_id(r.claim, r.check, r.coords)
        if r.runs:
            assert len({e.run for e in r.runs}) == len(r.runs)
            if r.values is not None:
                assert [e.value for e in r.runs] == r.values
    by = {r.check_id: r for r in records}
    # every value read off trained runs names its runs: the trained headlines, and these
    for cid in set(TRAINED_ROWS[name]) | {i for h in all_headlines() if h.trained for i in h.check_ids}:
        assert by[cid].runs, cid
    assert all(r.runs for r in records if r.claim == "training-sensitivity")
    if name == "quick":                   # a fresh run: each trained layer's own held-out error
        ratios = [r for r in records if r.check == "trained-mse-ratio"]
        assert ratios and all(e.stderr is not None and e.stderr > 0 for r in ratios for e in r.runs)
    assert all(r.runs for r in records if r.claim == "spectral-shift" and r.coords.layers is not None)


#: records of values read off trained runs, beyond the trained headlines (a sample of each
#: kind; the converted paper run lacks the stacks' per-seed MSE rows, docs/results/README.md)
_COMMON_TRAINED = ("banding/trained-jaccard/a/s=2", "banding/trained-excess-loss/d/s=4",
                   "banding/trained-odd-share/b/s=2", "ar1-optimum/trained-odd-share/c",
                   "gd-equivalence/trained-gd-gap/a/eta=1.1kappa/control", "gd-equivalence/trained-step-size/d",
                   "pcg-alignment/cos_3-median/c/s=4", "pcg-alignment/heldout-mse/d/s=4/trained",
                   "pcg-alignment/heldout-mse/a/s=4/pcg2-trained-P",
                   "banding/trained-out-of-class-share/asym/s=4/control")
TRAINED_ROWS = {"quick": _COMMON_TRAINED,          # the AR(3) layers and the stacks below: paper only
                "paper": _COMMON_TRAINED + ("depth/training-loss-tails/a/s=2/L=4", "banding/trained-odd-share/b/s=3",
                                            "banding/trained-out-of-class-share/asym/s=3/control",
                                            "depth/trained-median-error/a/s=2/T=40/L=4/r=0.9")}


#: the trained AR(s) checks judged by basin (s >= 2; claims/_ars.py, docs/settings.md)
_BY_BASIN = ("banding/trained-out-of-class-share", "banding/trained-odd-share", "pcg-alignment/trained-cos1",
             "kalman-parity/trained-mse-ratio")


@pytest.mark.parametrize("name", ["quick", "paper"])
def test_every_trained_ars_record_names_each_runs_stationary_point(name):
    """In both published runs: every trained AR(s) check (s >= 2, the asymmetric control
    aside) is judged by run with the share per basin beside it, the basins' runs add up to
    the record's, and every run names the point it is headed for, that point's excess over
    L*, its own excess over the point and its own verdict."""
    recs = [ClaimRecord.from_dict(r) for r in _published(name)["records"]]
    judged = [r for r in recs if any(r.check_id.startswith(p + "/") for p in _BY_BASIN)
              and r.coords.s not in (None, 1) and not r.coords.control and r.coords.variant is None]
    windows = PROFILES[name].trained_windows                     # (2, 4) quick, (2, 3, 4) paper
    # banding's share and odd share, kalman-parity's ratio per symmetric setting and window; pcg's cos1 (a, b)
    assert len(judged) == 3 * 4 * len(windows) + 2
    for r in judged:
        pr = r.per_run
        assert pr is not None and pr["basins"], r.check_id
        assert sum(b["n"] for b in pr["basins"]) == pr["n"] == len(r.runs)
        assert sum(b["held"] for b in pr["basins"]) == pr["held"] and r.measured == pr["held"] / pr["n"]
        assert {e.run for b in pr["basins"] for e in r.runs if e.extra["basin"] == b["basin"]} == {
            x for b in pr["basins"] for x in b["runs"]}
        for e in r.runs:
            assert {"basin", "basin_rel_excess", "excess_over_basin", "basin_loss", "verdict"} <= set(e.extra), r.check_id
        assert r.values is None                       # no mean over runs


def _machine(payload) -> tuple:
    """What trained weights are reproducible on bit for bit: CPU, torch's vector ISA, torch."""
    env = payload.get("environment") or {}
    return env.get("cpu"), env.get("torch_cpu_capability"), env.get("torch")


def test_machine_reads_the_environment_and_tells_cpus_apart():
    quick = _published("quick")
    assert _machine(quick) == (quick["environment"]["cpu"], quick["environment"]["torch_cpu_capability"],
                               quick["environment"]["torch"]) and None not in _machine(quick)
    other = {"environment": dict(quick["environment"], torch_cpu_capability="DEFAULT")}
    assert _machine(other) != _machine(quick) and _machine({}) == (None, None, None)


def test_a_run_is_headed_for_the_same_point_in_both_profiles():
    """The runs both profiles train (the AR(s) seeds 0-2) are matched by the point: the same
    basin name and the same point's loss (1e-7, the matching's tolerance) in both files --
    when both were generated on one CPU with one torch build: elsewhere float32 rounding can
    send a run to another point (docs/settings.md, "Training"), and the test says so."""
    machines = {name: _machine(_published(name)) for name in ("quick", "paper")}
    if machines["quick"] != machines["paper"]:
        pytest.skip(f"the published runs come from different machines ({machines}); "
                    "regenerate paper.json on quick.json's machine")

    def points(name):
        out = {}
        for r in _published(name)["records"]:
            if r["check_id"].startswith("banding/trained-odd-share/"):
                for e in r["runs"]:
                    out[e["run"]] = (e["extra"]["basin"], e["extra"]["basin_loss"])
        return out
    quick, paper = points("quick"), points("paper")
    # banding's trained checks: settings a-d at every window the quick profile trains, its seeds
    assert len(quick) == 4 * len(QUICK.trained_windows) * QUICK.n_seeds and set(quick) <= set(paper)
    for run, (basin, loss) in quick.items():
        assert paper[run][0] == basin and paper[run][1] == pytest.approx(loss, rel=1e-7), run


# ---------------------------------------------------------------------------- no label parsing

READERS = ("claims/reports/figures.py", "claims/reports/compare.py", "claims/reports/readme.py", "claims/reports/report.py")
_STRING_METHODS = {"split", "rsplit", "partition", "rpartition", "startswith", "endswith", "find",
                   "rfind", "index", "rindex"}
#: string pieces that only a parse of label or coordinate text would look for
_PIECE = re.compile(r"^(, ?)?[A-Za-z_]{1,8}=$|MSE\(|Kalman|seed |s=|T=|L=|r=")


def label_parsing(source: str) -> list[str]:
    """Places in ``source`` that look for structure inside text: a string method called with a
    piece such as ``"T="`` or ``"/ MSE(Kalman"``, an ``in`` test of such a piece, or a read of
    the old ``metric`` / free-text ``setting`` fields, or a regular expression (``re.*``)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in _STRING_METHODS:
            for arg in node.args:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and _PIECE.search(arg.value):
                    found.append(f"line {node.lineno}: .{node.func.attr}({arg.value!r})")
        if isinstance(node, ast.Compare) and any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops) \
                and isinstance(node.left, ast.Constant) and isinstance(node.left.value, str) \
                and _PIECE.search(node.left.value):
            found.append(f"line {node.lineno}: {node.left.value!r} in ...")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "re":
            found.append(f"line {node.lineno}: re.{node.func.attr}(...) on text")
        if isinstance(node, ast.Constant) and node.value in ("metric",):
            found.append(f"line {node.lineno}: reads the schema 3 field {node.value!r}")
    return found


@pytest.mark.reads_source
@pytest.mark.parametrize("path", READERS)
def test_the_readers_never_parse_label_text(path):
    assert label_parsing((REPO / path).read_text(encoding="utf-8")) == []


def test_the_label_parsing_detector_finds_what_it_is_for():
    """Control: the parsing the readers used to do (schema 3) is found."""
    old = '''
T = int(str(r["setting"]).split("T=")[1])
if "/ MSE(Kalman" not in r.get("metric", ""):
    pass
head, _, tail = str(r.get("setting", "")).partition(", s=")
name = metric.split(") / MSE(Kalman", 1)[0]
m = re.search(r"L=(\\d+)", r["label"])
'''
    found = label_parsing(old)
    assert len(found) >= 6 and any("re.search" in f for f in found)
