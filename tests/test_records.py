"""claims/harness/records.py and claims/harness/plain.py: comparators, ``make_record``'s conversions and
validation, a record's ``check()`` and its messages, ``to_builtin`` and ``format_value``, and the
typed record's serialised form (``ClaimRecord.from_dict`` fails naming a missing or renamed field;
the published runs round-trip); the intervals and verdict rules in tests/test_stats.py, the
plugin in tests/test_plugin.py."""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from claims.harness.collect import records_from_user_properties
from claims.harness.display import format_value
from claims.harness.plain import compare, to_builtin
from claims.harness.records import RECORD_FIELDS, ClaimRecord, ClaimRecorder, Record, make_record
from claims.harness.reportfile import load_report

RESULTS = Path(__file__).resolve().parents[1] / "docs" / "results"

RECORD_KEYS = {"check_id", "claim", "check", "coords", "label", "paper_ref", "kind", "measured",
               "interval", "interval_kind", "n_seeds", "values", "runs", "basins", "per_run", "clipped",
               "tolerance", "comparator",
               "tolerance_source", "verdict", "holds_at", "decide", "expect", "details", "note",
               "test", "order", "profile", "outcome", "xfail_reason"}
P = {"tolerance_source": "project"}


def _rec(**kw) -> dict:
    """A record as its serialised dict (what the reports and the plugin handle)."""
    return make_record(**kw).to_dict()


# ------------------------------------------------------------------------------ units

@pytest.mark.parametrize("m, op, t, expected", [
    (3, "<=", 3, True), (3, "<", 3, False), (3, ">=", 3, True), (3, ">", 3, False),
    (2, "==", 2, True), (2.0, "==", 2, True), (True, "==", 1, False), ("a", "==", "a", True),
    (-1e-12, "abs<=", 1e-10, True), (-1e-9, "abs<=", 1e-10, False),
    (math.inf, "<=", 1.0, False), (math.nan, "<=", 1.0, False), (math.nan, ">", 1.0, False),
])
def test_compare(m, op, t, expected):
    assert compare(m, op, t) is expected


def test_make_record_converts_and_validates():
    r = _rec(claim="ar1-optimum", paper_ref="Thm 4.1", check="k1", label="z",
                    measured=np.float32(0.25), tolerance=np.int64(1), comparator="<=", **P,
                    setting="a", details={"v": np.arange(2.0), np.int64(3): (1, 2)})
    assert type(r["measured"]) is float and type(r["tolerance"]) is int
    assert r["details"] == {"v": [0.0, 1.0], "3": [1, 2]} and r["verdict"] == "holds"
    assert set(r) == RECORD_KEYS
    r = _rec(claim="x", paper_ref="p", check="k2", label="m", measured=np.array(2.5),
                    tolerance=1, comparator="<=", **P)
    assert r["measured"] == 2.5 and r["verdict"] == "fails"
    bad = dict(claim="x", paper_ref="p", check="k3", label="m", measured=1.0, tolerance=1.0,
               comparator="<=", **P)
    for change, exc in [({"comparator": "~"}, ValueError), ({"expect": "maybe"}, ValueError),
                        ({"claim": "Bad Id"}, ValueError), ({"paper_ref": " "}, ValueError),
                        ({"measured": [1.0, 2.0]}, TypeError), ({"measured": True}, TypeError),
                        ({"measured": 1j}, TypeError), ({"tolerance": math.nan}, ValueError),
                        ({"details": {"f": object()}}, TypeError),
                        ({"tolerance_source": None}, ValueError),
                        ({"tolerance_source": "paper's"}, ValueError),
                        ({"tolerance": None}, ValueError), ({"kind": "table"}, ValueError),
                        ({"kind": "reported"}, ValueError),       # with a tolerance
                        ({"interval": (0.0, 2.0), "comparator": "=="}, ValueError),
                        ({"interval": (1.5, 2.0)}, ValueError),   # must contain measured
                        ({"interval": (2.0, 0.0)}, ValueError),
                        ({"interval": (0.0, math.nan)}, ValueError),
                        ({"interval": (0.0, 1.0, 2.0)}, ValueError),
                        ({"interval": (0.0, 2.0), "n_seeds": 1}, ValueError),
                        ({"interval": (0.0, 2.0), "n_seeds": 3, "interval_kind": "mc95"},
                         ValueError),
                        ({"interval": (0.0, 2.0), "interval_kind": "boot"}, ValueError),
                        ({"n_seeds": 3}, ValueError), ({"decide": 3}, ValueError)]:
        with pytest.raises(exc):
            make_record(**{**bad, **change})


def test_nan_measured_fails_and_check_raises_even_for_a_control():
    for expect in ("holds", "fails"):
        r = _rec(claim="x", paper_ref="p", check="k4", label="m", measured=np.float64("nan"),
                        tolerance=1.0, comparator="abs<=", expect=expect, **P)
        assert r["verdict"] == "fails" and "NaN" in r["note"]
        with pytest.raises(AssertionError, match="NaN"):
            Record(r).check()


def test_record_check_messages():
    class Item:
        nodeid = "t.py::test"
        user_properties: list = []

    item = Item()
    rec = ClaimRecorder(item, "quick")
    ok = rec.record(claim="c", paper_ref="eq. 1", check="k5", label="err", measured=0.5, tolerance=1,
                    comparator="<=", **P)
    assert ok.check() is ok and ok.holds and rec.unchecked() == []
    bad = rec.record(claim="c", paper_ref="eq. 1", setting="a", check="k6", label="err", measured=2.0,
                     tolerance=1, comparator="<=", **P)
    with pytest.raises(AssertionError, match=r"c/k6/a \[eq. 1\]: err = 2 violates <= 1"):
        bad.check()
    ctl = rec.record(claim="c", paper_ref="eq. 1", check="k7", label="err", measured=0.5, tolerance=1,
                     comparator="<=", expect="fails", **P)
    with pytest.raises(AssertionError, match="negative control unexpectedly holds"):
        ctl.check()
    assert rec.record(claim="c", paper_ref="eq. 1", check="k8", label="err", measured=5, tolerance=1,
                      comparator="<=", expect="fails", **P).check().verdict == "fails"
    props = records_from_user_properties(item.user_properties)
    assert all(isinstance(p, ClaimRecord) for p in props) and [p.order for p in props] == [0, 1, 2, 3]
    assert {p.test for p in props} == {"t.py::test"} and props[0].profile == "quick"
    assert [p.record for p in rec.records] == props


def test_to_builtin_torch_and_numbers():
    torch = pytest.importorskip("torch")
    from fractions import Fraction
    assert to_builtin(torch.tensor(1.5)) == 1.5
    assert to_builtin({"w": torch.ones(2, dtype=torch.float64)}) == {"w": [1.0, 1.0]}
    assert to_builtin(Fraction(1, 4)) == 0.25 and to_builtin(np.bool_(True)) is True
    with pytest.raises(TypeError):
        to_builtin({1, 2})


def test_format_value():
    assert [format_value(v) for v in (0.0, 1.23456e-7, 4.0, 12345678, math.nan, "x")] == \
        ["0", "1.235e-07", "4", "1.235e+07", "nan", "x"]


def test_check_all_judges_every_record_and_names_each_failure():
    class Item:
        nodeid = "t.py::test"
        user_properties: list = []

    rec = ClaimRecorder(Item(), "quick")
    for name, value in (("k1", 2.0), ("k2", 0.5), ("k3", 3.0)):
        rec.record(claim="c", paper_ref="eq. 1", check=name, label="err", measured=value, tolerance=1,
                   comparator="<=", **P)
    with pytest.raises(AssertionError) as info:
        rec.check_all()
    msg = str(info.value)
    assert msg.startswith("2 check(s) failed:\n")
    assert "c/k1 [eq. 1]: err = 2 violates <= 1" in msg and "c/k3 [eq. 1]: err = 3 violates <= 1" in msg
    assert "k2" not in msg and rec.unchecked() == []          # the one that holds was checked too
    rec.record(claim="c", paper_ref="eq. 1", check="k4", label="err", measured=0.1, tolerance=1,
               comparator="<=", **P)
    rec.check_all()                                           # nothing left that fails


def test_an_equality_check_takes_text_and_booleans():
    r = _rec(claim="c", paper_ref="eq. 1", check="k9", label="family", measured="value", tolerance="value",
             comparator="==", **P)
    assert r["measured"] == "value" and r["verdict"] == "holds"
    r = _rec(claim="c", paper_ref="eq. 1", check="k10", label="flag", measured=np.bool_(True), tolerance=True,
             comparator="==", **P)
    assert r["measured"] is True and r["verdict"] == "holds"


def test_to_builtin_names_where_in_an_array_a_value_cannot_be_recorded():
    with pytest.raises(TypeError, match=r"^details\[1\]: cannot record"):
        to_builtin(np.array([1.0, object()], dtype=object), _path="details")


# ------------------------------------------------------------------------------ the serialised form

def test_a_missing_renamed_or_unknown_field_fails_naming_it():
    d = _rec(claim="c", paper_ref="eq. 1", check="k1", setting="a", label="m", measured=0.5, tolerance=1,
             comparator="<=", **P)
    assert ClaimRecord.from_dict(d).to_dict() == d and tuple(d) == RECORD_FIELDS
    for name in RECORD_FIELDS:
        with pytest.raises(ValueError, match=rf"record '(c/k1/a|\?)' lacks the fields \['{name}'\]"):
            ClaimRecord.from_dict({k: v for k, v in d.items() if k != name})
    renamed = {("tol" if k == "tolerance" else k): v for k, v in d.items()}
    with pytest.raises(ValueError, match=r"lacks the fields \['tolerance'\]"):
        ClaimRecord.from_dict(renamed)
    with pytest.raises(ValueError, match=r"unknown fields \['extra'\]"):
        ClaimRecord.from_dict({**d, "extra": 1})
    with pytest.raises(ValueError, match="check_id is not what"):
        ClaimRecord.from_dict({**d, "check_id": "c/k1/b"})
    with pytest.raises(ValueError, match="coords: unknown fields"):
        ClaimRecord.from_dict({**d, "coords": {**d["coords"], "depth": 2}})
    with pytest.raises(ValueError, match="runs: unknown fields"):
        ClaimRecord.from_dict({**d, "runs": [{"run": "r/seed=0", "seed": 0, "value": 1.0, "err": 0.1}]})
    with pytest.raises(ValueError, match="verdict must be one of"):
        ClaimRecord.from_dict({**d, "verdict": "ok"})


@pytest.mark.parametrize("name", ["quick", "paper"])
def test_published_records_round_trip(name):
    """Every record of a published run parses, and ``from_dict(to_dict(r)) == r``; the report
    written back is the file's content (key order aside)."""
    path = RESULTS / f"{name}.json"
    report = load_report(path)
    assert report.records and all(ClaimRecord.from_dict(r.to_dict()) == r for r in report.records)
    assert report.to_dict() == json.loads(path.read_text(encoding="utf-8"))
