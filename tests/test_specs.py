"""The claim specs (claims/specs/) and the registries built from them (claims.specs).

Oracles: the claim files on disk (each names its claim, and each claim its files); the two
published runs, docs/results/quick.json and paper.json (every headline and known failure is
a check they record, and the runs each claim reads are the runs their records name, counted
here by hand from those files); the README's findings block (the order of the claims).
"""
from __future__ import annotations

import ast
import dataclasses
import importlib
import json
import re
from pathlib import Path

import pytest

import claims.specs
from claims.harness.profiles import PAPER, PROFILES, QUICK, Profile
from claims.harness.spec import ClaimSpec, Headline
from claims.specs import CLAIMS, all_headlines, claim_runs, get_spec, headline_ids, known_failures, register

REPO = Path(__file__).resolve().parents[1]


def _published(name: str) -> dict:
    return json.loads((REPO / "docs" / "results" / f"{name}.json").read_text(encoding="utf-8"))


# ---------------------------------------------------------------------------- the claims and their files

def test_names_are_unique_and_get_spec_finds_each():
    names = [s.name for s in CLAIMS]
    assert len(names) == len(set(names)) == 10
    assert all(get_spec(n).name == n for n in names)
    with pytest.raises(ValueError, match="^claim must be one of"):
        get_spec("depth-construction")


def test_every_claim_file_names_a_registered_spec_that_lists_it():
    files = sorted(p.name for p in (REPO / "claims").glob("test_*.py"))
    owner = {f: s.name for s in CLAIMS for f in s.test_files()}
    assert sorted(owner) == files                         # each file is one claim's, each listed file exists
    assert sum(len(s.test_files()) for s in CLAIMS) == len(files)
    for f in files:
        module = importlib.import_module(f"claims.{f[:-3]}")
        assert module.CLAIM == owner[f], f


def test_a_claim_of_ours_says_why_it_has_no_headline():
    for s in CLAIMS:
        assert s.summary.strip() and s.test_file.startswith("test_"), s.name
        assert bool(s.headlines) != s.ours, s.name
        assert bool(s.without_headline.strip()) == s.ours, s.name
        assert all(h.statement.strip() and h.check_ids and h.reason.strip() for h in s.headlines), s.name


def test_the_order_is_the_readmes():
    """Within each kind's table of the README's findings, the claims come in the order of
    CLAIMS; every claim with a headline has a row; ours (no statement) follow in CLAIMS order
    (rendered from the published runs by claims/reports/readme.py)."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    block = text[text.index("<!-- findings:start -->"):text.index("<!-- findings:end -->")]
    order = [s.name for s in CLAIMS]
    seen = []
    for table in re.split(r"^\*\*", block, flags=re.M)[1:]:
        rows = list(dict.fromkeys(re.findall(r"^\| \[([a-z0-9-]+)\]\(docs/results/verdicts\.md#", table, re.M)))
        assert rows == sorted(rows, key=order.index)
        seen += rows
    ours = re.findall(r"^- \[([a-z0-9-]+)\]\(docs/results/verdicts\.md#[a-z0-9-]+\) \(a claim that states nothing", block, re.M)
    assert sorted(set(seen), key=order.index) == [s.name for s in CLAIMS if s.headlines]
    assert ours == [s.name for s in CLAIMS if s.ours]


# ---------------------------------------------------------------------------- headlines

@pytest.mark.parametrize("name", ["quick", "paper"])
def test_every_headline_is_a_positive_check_of_both_published_runs(name):
    by = {r["check_id"]: r for r in _published(name)["records"]}
    missing = sorted(i for i in headline_ids() if i not in by)
    assert not missing
    assert all(by[i]["kind"] == "check" and by[i]["expect"] == "holds" for i in headline_ids())
    assert all(i.split("/")[0] == h.claim for h in all_headlines() for i in h.check_ids)
    # every claim a published run records is a claim with a headline, or one of ours
    assert {r["claim"] for r in by.values()} <= {h.claim for h in all_headlines()} | {s.name for s in CLAIMS if s.ours}


def test_the_registries_are_loops_over_the_claims():
    assert all_headlines() == tuple(h for s in CLAIMS for h in s.headlines)
    assert len(all_headlines()) == 13 and len(headline_ids()) == len(set(headline_ids()))
    assert known_failures() == {cid: dict(why) for s in CLAIMS for cid, why in s.known.items()}


# ---------------------------------------------------------------------------- known failures

@pytest.mark.parametrize("spec", CLAIMS, ids=lambda s: s.name)
def test_every_known_failure_is_a_check_of_its_claim(spec):
    checks = {name: {r["check"] for r in _published(name)["records"] if r["claim"] == spec.name}
              for name in ("quick", "paper")}
    for cid, by in spec.known.items():
        claim, check = cid.split("/")[:2]
        assert claim == spec.name and by and set(by) <= set(PROFILES), cid
        assert all(check in checks[p] for p in by), cid
        assert all(why.strip() for why in by.values()), cid


# ---------------------------------------------------------------------------- runs

#: distinct trained runs each claim's records name in the published runs (depth groups and
#: pairs aside), counted from docs/results/quick.json and paper.json (2026-12-06)
PUBLISHED_RUNS = {
    "quick": {"ar1-optimum": 12, "gd-equivalence": 12, "banding": 30, "pcg-alignment": 12, "kalman-parity": 36,
              "spectral-shift": 12, "training-basins": 24},
    "paper": {"ar1-optimum": 32, "gd-equivalence": 32, "banding": 120, "pcg-alignment": 32, "kalman-parity": 128,
              "depth": 36, "spectral-shift": 21, "training-sensitivity": 24, "training-basins": 96},
}
#: runs a claim reads beyond what its published records name: the sensitivity table's baseline
#: (the first 3 AR(1) seeds of its 2 settings) and the spectral shift's 4-layer null-control
#: stacks, which its records name only inside pair ids (``...r=0.9+0.9-rerun...``; the one-layer
#: ones are named by the premise check too)
EXTRA_RUNS = {"quick": {}, "paper": {"training-sensitivity": 6, "spectral-shift": 3}}


@pytest.mark.parametrize("profile", ["quick", "paper"])
def test_claim_runs_counts_are_the_published_ones(profile):
    counts = {s.name: len(claim_runs(s.name, PROFILES[profile])) for s in CLAIMS}
    expected = {s.name: PUBLISHED_RUNS[profile].get(s.name, 0) + EXTRA_RUNS[profile].get(s.name, 0) for s in CLAIMS}
    assert counts == expected
    published = {}
    for rec in _published(profile)["records"]:
        for e in rec.get("runs") or []:
            if "+" not in e["run"]:
                published.setdefault(rec["claim"], set()).add(e["run"])
    assert {c: len(v) for c, v in published.items()} == PUBLISHED_RUNS[profile]
    for s in CLAIMS:                                   # no run listed twice by one claim
        ids = [r.run for r in claim_runs(s.name, PROFILES[profile])]
        assert len(ids) == len(set(ids)), s.name


def test_the_ar1_claims_share_their_runs_and_the_quick_profile_trains_less():
    assert claim_runs("ar1-optimum", PAPER) == claim_runs("gd-equivalence", PAPER)
    for s in CLAIMS:       # the paper profile's first seeds are the quick one's (stacks: another batch)
        quick, paper = ({r.run for r in claim_runs(s.name, p) if "/batch=" not in r.run} for p in (QUICK, PAPER))
        assert quick <= paper, s.name


# ---------------------------------------------------------------------------- register

def test_register_adds_a_claim_for_a_with_block_only():
    demo = ClaimSpec("demo", "a demo claim", "test_demo.py",
                     headlines=(Headline("demo", "x is zero.", "eq. 1", ("demo/x/a",), reason="its only check"),),
                     known={"demo/y/a": {"quick": "fails"}})
    before = list(CLAIMS)
    with register(demo) as spec:
        assert spec is demo and get_spec("demo") is demo and CLAIMS[-1] is demo
        assert "demo/x/a" in headline_ids() and known_failures()["demo/y/a"] == {"quick": "fails"}
        assert claim_runs("demo", QUICK) == []
        with pytest.raises(ValueError, match="already registered"):
            with register(ClaimSpec("demo", "again", "test_demo.py")):
                pass
    assert claims.specs.CLAIMS == before and "demo/x/a" not in headline_ids()


# ---------------------------------------------------------------------------- constants defined once

def _float_constants(path: Path) -> list[float]:
    return [n.value for n in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(n, ast.Constant) and isinstance(n.value, float)]


@pytest.mark.reads_source
def test_the_papers_cosines_are_written_once():
    """The AR(4) cosines of Sec. 5 (0.88 +- 0.05 in setting a, 0.93 +- 0.01 in b) appear as
    numbers in claims/specs/pcg_alignment.py only."""
    paper = {0.88, 0.93}
    holders = sorted(str(p.relative_to(REPO)) for p in (REPO / "claims").rglob("*.py")
                     if paper & set(_float_constants(p)))
    assert holders == ["claims/specs/pcg_alignment.py"]


# ---------------------------------------------------------------------------- profile knobs

def _reads(path: Path, field: str) -> bool:
    return re.search(rf"\.{field}\b", path.read_text(encoding="utf-8")) is not None


@pytest.mark.reads_source
def test_a_claims_knobs_are_profile_fields_only_it_reads():
    """A knob a spec names is a Profile field that its own files read and no other claim
    file, shared claim module or spec does (oracle: the source text of claims/)."""
    fields = {f.name for f in dataclasses.fields(Profile)}
    claim_dir = REPO / "claims"
    for spec in claims.specs.CLAIMS:
        own = {claim_dir / f for f in spec.test_files()} | {claim_dir / "specs" / f"{spec.name.replace('-', '_')}.py"}
        others = [p for p in sorted(claim_dir.glob("*.py")) + sorted((claim_dir / "specs").glob("*.py"))
                  if p not in own]
        for knob in spec.knobs:
            assert knob in fields, (spec.name, knob)
            assert any(_reads(p, knob) for p in own if p.is_file()), (spec.name, knob)
            assert not [p.name for p in others if _reads(p, knob)], (spec.name, knob)
    assert {k for s in claims.specs.CLAIMS for k in s.knobs} == {"twins", "shift_depths", "depth_stacks",
                                                                  "improper_systems"}


def test_a_headline_says_whose_tolerance_and_whose_statement():
    from claims.harness.spec import KINDS, ClaimSpec, Headline
    assert {h.kind for h in all_headlines()} == set(KINDS)
    with pytest.raises(ValueError, match="tolerance"):
        Headline("c", "x.", "eq. 1", ("c/x",), tolerance="theirs")
    with pytest.raises(ValueError, match="tolerance"):
        Headline("c", "x.", "eq. 1", ("c/x",), tolerance="paper", ours=True)
    with pytest.raises(ValueError, match="no_control"):
        ClaimSpec("c", "a claim", "test_c.py", no_control={"x": " "})
