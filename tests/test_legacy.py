"""``python -m claims.reports.legacy``: schema 3 reports rewritten in place as schema 4.

Oracle: the schema 3 records kept in tests/data/schema3_records.json, each beside the
``check_id`` the current claims record for it (tests/test_identity.py checks the mapping
record by record; here the command: that it writes what it read, upgraded, to the same
file, and leaves other files alone).
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from claims.reports.legacy import LEGACY_SCHEMA, main, upgrade_record
from claims.reports.report import SCHEMA

SCHEMA3 = json.loads((Path(__file__).parent / "data" / "schema3_records.json").read_text(encoding="utf-8"))


def test_main_rewrites_a_schema3_report_in_place(tmp_path, capsys):
    picked = SCHEMA3[:5]
    old = {"schema": LEGACY_SCHEMA, "profile": {"name": "quick", "stack_batch": 1500},
           "records": [e["record"] for e in picked]}
    path = tmp_path / "claims.json"
    path.write_text(json.dumps(old), encoding="utf-8")
    assert main([str(path)]) == 0
    new = json.loads(path.read_text(encoding="utf-8"))
    assert new["schema"] == SCHEMA != LEGACY_SCHEMA
    assert [r["check_id"] for r in new["records"]] == [e["check_id"] for e in picked]
    assert [r["measured"] for r in new["records"]] == [e["record"]["measured"] for e in picked]
    assert f"schema {LEGACY_SCHEMA} -> {SCHEMA}, {len(picked)} records" in capsys.readouterr().out
    # a second pass finds schema 4 and leaves the file as it is
    before = path.read_bytes()
    assert main([str(path)]) == 0
    assert path.read_bytes() == before
    assert f"schema {SCHEMA}, left as it is" in capsys.readouterr().out


def test_main_reports_an_unreadable_file_and_keeps_it(tmp_path, capsys):
    path = tmp_path / "broken.json"
    path.write_text("{not json", encoding="utf-8")
    assert main([str(path)]) == 2
    assert path.read_text(encoding="utf-8") == "{not json"
    err = capsys.readouterr().err
    assert err.startswith(f"claims.reports.legacy: {path}:") and err.count("\n") == 1


def test_a_record_no_rule_knows_is_refused_naming_claim_test_and_label():
    old = dict(SCHEMA3[0]["record"], claim="no-such-claim", test="claims/test_x.py::test_gone[a]",
               metric="some label")
    with pytest.raises(ValueError, match=r"^no schema-3 mapping for 'no-such-claim' / 'test_gone' \('some label'\)$"):
        upgrade_record(old)


def test_a_record_whose_check_name_is_its_label_needs_the_label():
    """The reported AR(4) cosines take their check name from the label ("cos 1: ..." ->
    cos-1): without a label there is no name, and the record is refused, not given one."""
    entry = next(e for e in SCHEMA3 if e["record"]["test"].split("::")[-1].startswith("test_ar4_cosines_reported"))
    assert upgrade_record(entry["record"], 1500)["check_id"] == entry["check_id"]
    old = {k: v for k, v in entry["record"].items() if k != "metric"}
    with pytest.raises(ValueError):
        upgrade_record(old, 1500)
