"""The floors of the project: theory/ below models/ below claims/ (the claims, their harness and
the command line), and every name imported from where it is defined.

Oracle: the source files themselves, read with ``ast`` (every ``import`` and ``from ...
import`` statement, function-local ones included; relative imports resolved), not the
modules' own idea of their dependencies.  Controls: a planted upward import and a planted
re-export detour in a scratch tree are found.
"""
from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: lower floors first; a module may import its own floor and the floors below it.
FLOORS = ("theory", "models", "claims")


def _module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(root: Path, path: Path):
    """(line, imported module, names) for every import statement of ``path`` (names: the
    ``from`` list, or () for ``import x``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    here = _module_name(root, path)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, ()
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            yield node.lineno, mod, tuple(a.name for a in node.names)


def _files(root: Path):
    for floor in FLOORS:
        yield from sorted((root / floor).rglob("*.py"))


def upward_edges(root: Path) -> list[str]:
    """'file:line imports module' for every import of a higher floor by a lower one."""
    out = []
    for path in _files(root):
        mine = FLOORS.index(path.relative_to(root).parts[0])
        for line, mod, _ in _imports(root, path):
            top = mod.split(".")[0]
            if top in FLOORS and FLOORS.index(top) > mine:
                out.append(f"{path.relative_to(root)}:{line} imports {mod}")
    return out


@functools.lru_cache(maxsize=None)
def _defined(path: Path) -> frozenset[str]:
    """Names a module defines at its top level (def, class, assignment), not those it imports."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                names.update(n.id for n in ast.walk(t) if isinstance(n, ast.Name))
        elif isinstance(node, (ast.If, ast.Try)):
            for sub in ast.walk(node):
                if isinstance(sub, (ast.FunctionDef, ast.ClassDef)):
                    names.add(sub.name)
                elif isinstance(sub, ast.Assign):
                    names.update(n.id for t in sub.targets for n in ast.walk(t) if isinstance(n, ast.Name))
    return frozenset(names)


def detours(root: Path, scan=("theory", "models", "claims", "tests")) -> list[str]:
    """'file:line from A import n' where A is a project module (not a package) that does not
    define n itself but imports it from elsewhere (a re-export)."""
    out = []
    files = [p for d in scan if (root / d).is_dir() for p in sorted((root / d).rglob("*.py"))]
    for path in files:
        for line, mod, names in _imports(root, path):
            if mod.split(".")[0] not in FLOORS or not names:
                continue
            target = root.joinpath(*mod.split(".")).with_suffix(".py")
            if not target.is_file():          # a package (its __init__ may gather names) or a submodule
                continue
            defined = _defined(target)
            for n in names:
                sub = root.joinpath(*mod.split("."), n)
                if n != "*" and n not in defined and not sub.with_suffix(".py").is_file():
                    out.append(f"{path.relative_to(root)}:{line} from {mod} import {n}")
    return out


@pytest.mark.reads_source
def test_no_module_imports_a_floor_above_its_own():
    edges = upward_edges(ROOT)
    assert not edges, "upward imports:\n" + "\n".join(edges)


@pytest.mark.reads_source
def test_every_name_is_imported_from_where_it_is_defined():
    found = detours(ROOT)
    assert not found, "re-export detours:\n" + "\n".join(found)


def _scratch(tmp_path: Path, files: dict) -> Path:
    for rel, text in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    for floor in FLOORS:
        (tmp_path / floor).mkdir(exist_ok=True)
        (tmp_path / floor / "__init__.py").touch()
    return tmp_path


@pytest.mark.parametrize("source, found", [
    ("def f():\n    from claims import runs\n", True),        # function-local import upward
    ("from ..claims import runs\n", True),                     # relative import upward
    ("import claims.cli.main\n", True),
    ("from theory import systems\nfrom . import other\n", False),
])
def test_control_an_upward_import_is_found(tmp_path, source, found):
    root = _scratch(tmp_path, {"models/mod.py": source, "models/other.py": "", "claims/harness/runs.py": "X = 1\n"})
    assert bool(upward_edges(root)) is found, upward_edges(root)


def test_control_a_re_export_detour_is_found(tmp_path):
    root = _scratch(tmp_path, {
        "models/config.py": "class TrainConfig:\n    pass\n",
        "models/trainer.py": "from models.config import TrainConfig\n\ndef train():\n    pass\n",
        "claims/a.py": "from models.trainer import TrainConfig, train\n",
        "claims/b.py": "from models.config import TrainConfig\nfrom models.trainer import train\n",
    })
    assert detours(root, scan=("claims",)) == ["claims/a.py:1 from models.trainer import TrainConfig"]
