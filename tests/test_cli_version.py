"""``ldsicl --version`` (claims/cli/sources.py): the version, the checkout's commit and the
training code's digest, printed without importing torch.

Oracles: models.fingerprint.source_digest() imported the ordinary way (with torch) for the
digest; ``git rev-parse`` for the commit.  Controls: the version path's digest follows an
edit of a closure file in a scratch copy of the packages; a folder that is no git checkout
reads ``unknown``; a fingerprint file that cannot load reads ``unknown (...)``, never a
traceback; a planted top-level ``import torch`` in a copy of models/fingerprint.py is caught
by the import scan.
"""
from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from claims.cli import sources
from claims.cli.main import main

REPO = Path(__file__).resolve().parents[1]

#: runs the CLI's --version path in a fresh interpreter, then reports what it printed and
#: whether torch (or models/__init__.py, which imports it) was imported
PROBE = """
import contextlib, io, json, sys
from claims.cli.main import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    status = main(["--version"])
print(json.dumps({"status": status, "out": out.getvalue(), "torch": "torch" in sys.modules,
                  "models": "models" in sys.modules}))
"""


def test_version_prints_the_digest_of_models_fingerprint_without_torch():
    """One subprocess: the three lines, torch never imported, and the digest equal to the
    one models.fingerprint computes here (this process has imported torch already)."""
    from _procs import clean_env, run_bounded
    from models.fingerprint import source_digest

    proc = run_bounded([sys.executable, "-c", PROBE], timeout=120, cwd=REPO, env=clean_env(REPO))
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["status"] == 0 and got["torch"] is False and got["models"] is False, got
    version, commit, digest = got["out"].splitlines()
    assert version.startswith("ldsicl ")
    assert re.fullmatch(r"commit ([0-9a-f]{7,40}( \(dirty\))?|unknown)", commit), commit
    assert digest == f"training code sha256 {source_digest()}"


def test_the_commit_is_gits(capsys):
    head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True, timeout=10)
    assert main(["--version"]) == 0
    line = capsys.readouterr().out.splitlines()[1]
    if head.returncode == 0:                       # a checkout: the hash, and whether it is dirty
        assert line.split()[1] == head.stdout.strip()
    else:                                          # pragma: no cover - an installed copy
        assert line == "commit unknown"


def test_a_folder_that_is_no_checkout_reads_unknown(tmp_path):
    assert sources.git_commit(tmp_path) == "unknown"
    assert sources.git_commit(tmp_path / "missing") == "unknown"


def test_the_version_paths_digest_follows_an_edit_of_the_closure(tmp_path):
    """Control: the digest the version path computes (models/fingerprint.py loaded by its path)
    over a scratch copy of theory/ and models/ equals models.fingerprint's over the same copy,
    and both change when one closure file gains a byte."""
    from models.fingerprint import fresh_source_digest

    for pkg in ("theory", "models"):
        shutil.copytree(REPO / pkg, tmp_path / pkg, ignore=shutil.ignore_patterns("__pycache__"))
    module = sources.fingerprint_module(tmp_path / "models" / "fingerprint.py")
    before = module.source_digest(tmp_path)
    assert before == fresh_source_digest(tmp_path) == fresh_source_digest()
    with open(tmp_path / "theory" / "validation.py", "a", encoding="utf-8") as f:
        f.write("\n")
    after = module.fresh_source_digest(tmp_path)
    assert after != before and after == fresh_source_digest(tmp_path)


def test_a_fingerprint_that_cannot_load_reads_unknown(tmp_path):
    broken = tmp_path / "fingerprint.py"
    broken.write_text("raise ImportError('no such thing')\n", encoding="utf-8")
    assert sources.training_digest(broken) == "unknown (ImportError: no such thing)"
    assert sources.training_digest(tmp_path / "missing.py").startswith("unknown (")


def _top_level_imports(path: Path) -> set[str]:
    """The modules a file imports when it is executed: statements at module level, not those
    inside functions."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            found.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            found.add("." if node.level else (node.module or "").split(".")[0])
    return found


#: what models/fingerprint.py may import at its top: the standard library and theory (which
#: imports numpy, not torch); no relative import (it is loaded without its package)
ALLOWED = {"__future__", "ast", "dataclasses", "functools", "hashlib", "json", "os", "pathlib", "theory"}


@pytest.mark.reads_source
def test_models_fingerprint_imports_nothing_heavy_at_its_top(tmp_path):
    assert _top_level_imports(REPO / "models" / "fingerprint.py") <= ALLOWED
    planted = tmp_path / "fingerprint.py"                     # control: a top-level torch import
    planted.write_text((REPO / "models" / "fingerprint.py").read_text(encoding="utf-8")
                       .replace("import hashlib\n", "import hashlib\nimport torch\nfrom .kernels import x\n"),
                       encoding="utf-8")
    assert _top_level_imports(planted) - ALLOWED == {"torch", "."}
