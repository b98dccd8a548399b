"""Coverage by named sets (claims/harness/coverage.py): no setting letters in claims/, and a
registered setting is covered by every claim whose property it has.

1. An AST scan of every module under claims/ fails on a string constant that names a
   registered setting (theory.settings.SETTING_SPECS) or strings several together
   (``"abc"``, ``"a-c"``), outside what is not a setting's name: docstrings, the fragments of
   an f-string, module-level ``PAPER_*`` tables (the paper's numbers per its setting
   names), a parameter's name in ``pytest.mark.parametrize``, and the field names of a
   record's dicts (a dict display with a key that names no setting or a ``**`` --
   ``{"b": ..., "W_QK": ...}`` -- and a subscript by such a field name in the same module;
   a tuple or list of names that holds one naming no setting, ``("setting", "T", "d")``;
   a record's detail read by name, ``detail(record, "b", ...)``).  A planted letter
   in a scratch file is caught (the negative control).
2. ``pytest claims --collect-only`` with a temporary setting registered (tests/data/
   extra_setting.py: a copy of an existing setting's law under a new name, registered
   before theory.systems is imported) gains, for every test node whose parameters name
   the copied setting, the node with the new name in its place (computed from the two
   collections).
"""
from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from theory.settings import SETTING_SPECS

REPO = Path(__file__).resolve().parents[1]
SEPARATORS = "-/,+ "


def _names_settings(text: str) -> bool:
    """Whether ``text`` names a setting or strings settings together ("abc", "a-c", "a/b")."""
    if text in SETTING_SPECS:
        return True
    letters = {n for n in SETTING_SPECS if len(n) == 1}
    if len(text) > 1 and set(text) <= letters:
        return True
    pieces = text
    for sep in SEPARATORS:
        pieces = pieces.replace(sep, "\0")
    parts = [p for p in pieces.split("\0")]
    return len(parts) > 1 and all(p in SETTING_SPECS for p in parts)


def _exempt_nodes(tree: ast.Module) -> set[int]:
    """ids of the constants of ``tree`` that are not a setting's name (module doc)."""
    out: set[int] = set()
    fields: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
        elif isinstance(node, ast.JoinedStr):
            out.update(id(v) for v in node.values)
        elif isinstance(node, ast.Dict):
            keys = [k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]
            if len(keys) < len(node.keys) or any(not _names_settings(k) for k in keys):   # ** or a field
                fields.update(keys)
                out.update(id(k) for k in node.keys if k is not None)
        elif isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            items = [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
            if items and any(not _names_settings(e) for e in items):            # a tuple of field names
                out.update(id(e) for e in node.elts)
        elif isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Attribute) and f.attr == "parametrize" and node.args:
                out.add(id(node.args[0]))
            if isinstance(f, ast.Name) and f.id == "detail" and len(node.args) > 1:   # a record's field by name
                out.add(id(node.args[1]))
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        if any(isinstance(t, ast.Name) and t.id.startswith("PAPER_") for t in targets):
            out.update(id(n) for n in ast.walk(node))
    for node in ast.walk(tree):
        if (isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant)
                and node.slice.value in fields):
            out.add(id(node.slice))
    return out


def setting_letters(path: Path) -> list[str]:
    """``"file:line: 'x'"`` for every string constant of ``path`` that names a setting."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    exempt = _exempt_nodes(tree)
    return [f"{path}:{node.lineno}: {node.value!r}"
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in exempt
            and _names_settings(node.value)]


@pytest.mark.reads_source
def test_no_setting_letters_in_claims():
    hits = [h for p in sorted((REPO / "claims").rglob("*.py")) if "__pycache__" not in p.parts
            for h in setting_letters(p)]
    assert not hits, ("setting names in claims/ (use claims.harness.coverage's named sets):\n"
                      + "\n".join(hits))


@pytest.mark.reads_source
def test_the_scan_catches_a_planted_letter(tmp_path):
    """Negative control: letters the scan must catch, beside what it must let pass."""
    some = next(iter(SETTING_SPECS))
    scratch = tmp_path / "scratch.py"
    scratch.write_text(
        f'"""Docstring naming {some!r} (allowed)."""\n'
        f'PAPER_TABLE = {{{some!r}: 0.5}}\n'                      # the paper's numbers: allowed
        f'row = {{"b": 1.0, "W_QK": 2.0}}\n'                      # a record's fields: allowed
        f'params = ("setting", "T", "d")\n'
        f'value = row["b"]\n'
        f'label = f"{{row}}b"\n'
        f'@pytest.mark.parametrize("d", [1, 2])\n'
        f'def test_x(d):\n    pass\n'
        f'planted = {some!r}\n'                                   # caught
        f'together = "{"".join(n for n in SETTING_SPECS if len(n) == 1)}"\n'   # caught
        f'compared = planted == {list(SETTING_SPECS)[-1]!r}\n'    # caught
        f'table = {{{some!r}: 1, {list(SETTING_SPECS)[1]!r}: 2}}\n',         # caught (a per-setting table)
        encoding="utf-8")
    hits = setting_letters(scratch)
    lines = sorted(int(h.split(":")[-2]) for h in hits)
    assert lines == [10, 11, 12, 13, 13], hits


def _collect(*extra, env_extra=None) -> set[str]:
    from _procs import clean_env, run_bounded
    env = clean_env(REPO, **(env_extra or {}))
    env["PYTHONPATH"] = str(REPO / "tests" / "data") + ":" + env["PYTHONPATH"]
    proc = run_bounded([sys.executable, "-m", "pytest", "claims", "--collect-only", "-q", "-p", "no:cacheprovider",
                        *extra], timeout=300, cwd=REPO, env=env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return {line.strip() for line in proc.stdout.splitlines() if "::" in line}


def _renamed(node: str, old: str, new: str) -> str | None:
    """The node id with the parameter ``old`` replaced by ``new`` (None when no parameter is ``old``)."""
    if "[" not in node:
        return None
    head, params = node[:-1].split("[", 1)
    parts = params.split("-")
    if old not in parts:
        return None
    return f"{head}[{'-'.join(new if p == old else p for p in parts)}]"


@pytest.mark.parametrize("source", ["c"])
def test_a_registered_setting_is_covered_by_every_claim(source):
    """A copy of ``source``'s law under a new name (tests/data/extra_setting.py) gains every
    node that ``source`` has, and the collection loses nothing."""
    new = "extra"
    assert source in SETTING_SPECS and new not in SETTING_SPECS
    plain = _collect()
    extra = _collect("-p", "extra_setting",
                     env_extra={"LDSICL_EXTRA_SETTING_FROM": source, "LDSICL_EXTRA_SETTING": new})
    expected = {r for r in (_renamed(n, source, new) for n in plain) if r is not None}
    assert expected, f"no test node is parametrised over {source!r}"
    assert plain <= extra, sorted(plain - extra)[:20]
    missing = sorted(expected - extra)
    assert not missing, f"{len(missing)} of {len(expected)} nodes not covering {new!r}:\n" + "\n".join(missing)
