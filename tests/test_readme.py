"""README.md's front page and docs/results/verdicts.md are what the published runs render to
(claims/reports/readme.py), and the front page keeps its order: the two install-and-run commands,
the 20-second path, then the findings."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from claims.reports.findings import anchor
from claims.reports.readme import END, START, main, replace_block

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
VERDICTS = (ROOT / "docs" / "results" / "verdicts.md").read_text(encoding="utf-8")


def test_committed_findings_and_verdict_tables_are_the_rendering_of_docs_results(capsys):
    assert main(["--check"]) == 0, capsys.readouterr().out


def test_check_reports_a_stale_verdicts_file(tmp_path, capsys):
    stale = tmp_path / "verdicts.md"
    stale.write_text(VERDICTS.replace("## banding", "## banding (edited)"), encoding="utf-8")
    assert main(["--check", "--verdicts", str(stale)]) == 1
    assert "banding (edited)" in capsys.readouterr().out


def test_block_replacement_and_missing_markers():
    text = f"a\n{START}\nold\n{END}\nb\n"
    assert replace_block(text, "new\n") == f"a\n{START}\nnew\n{END}\nb\n"
    with pytest.raises(ValueError, match=re.escape(START)):
        replace_block("no markers", "x")


def test_front_page_order_and_length():
    """The two commands first (claims, then tests), then the 20-second path, then the
    findings; about 200 lines at most."""
    blocks = re.findall(r"```bash\n(.*?)\n```", README, flags=re.S)
    assert blocks[0].endswith("pytest claims -n auto") and "pip install" in blocks[0]
    assert blocks[1].endswith("pytest tests -n auto") and "pip install" in blocks[1]
    assert "ldsicl report --from docs/results/paper.json" in blocks[2]
    assert README.index(blocks[2]) < README.index("## Findings") < README.index(START)
    assert len(README.splitlines()) <= 200


def test_front_page_speaks_no_pytest_in_its_findings():
    block = README[README.index(START):README.index(END)]
    for word in ("xfail", "XPASS", "passed", "outcome"):
        assert word not in block, word


def test_every_link_of_the_findings_reaches_a_section_of_the_verdict_tables():
    block = README[README.index(START):README.index(END)]
    links = re.findall(r"\]\(docs/results/verdicts\.md#([^)]+)\)", block)
    headings = {anchor(h) for h in re.findall(r"^## (.+)$", VERDICTS, flags=re.M)}
    assert links and set(links) <= headings, set(links) - headings


def test_every_relative_link_of_the_front_page_and_the_docs_resolves():
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        text = page.read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
            if re.match(r"[a-z]+://", target):
                continue
            assert (page.parent / target).exists(), f"{page.relative_to(ROOT)} links to missing {target}"
