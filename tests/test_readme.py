"""README.md's verdict tables are what the published runs render to (claims/readme.py)."""
from __future__ import annotations

from claims.readme import END, START, main, replace_block


def test_committed_readme_block_is_the_rendering_of_docs_results(capsys):
    assert main(["--check"]) == 0, capsys.readouterr().out


def test_block_replacement_and_missing_markers():
    text = f"a\n{START}\nold\n{END}\nb\n"
    assert replace_block(text, "new\n") == f"a\n{START}\nnew\n{END}\nb\n"
    try:
        replace_block("no markers", "x")
    except ValueError as exc:
        assert START in str(exc)
    else:  # pragma: no cover
        raise AssertionError("missing markers must raise")
