"""claims/harness/memo.py: a value is computed once per key and served from disk after; the key
moves with every input and with the code; a corrupt file or an unwritable folder never
serves a wrong value."""
from __future__ import annotations

import numpy as np
import pytest

from claims.harness import memo


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.setenv("LDSICL_CACHE_DIR", str(tmp_path))
    return tmp_path / "memo"


def test_computed_once_then_served_equal(folder):
    calls = []

    def compute():
        calls.append(1)
        return {"x": np.arange(4.0) / 3}

    a = memo.memoized("t", [np.ones(3), 2], (), compute)
    b = memo.memoized("t", [np.ones(3), 2], (), compute)
    assert len(calls) == 1 and np.array_equal(a["x"], b["x"]) and a["x"].tobytes() == b["x"].tobytes()
    assert len(list(folder.glob("t-*.pkl"))) == 1


def test_key_moves_with_inputs_dtype_shape_and_code(monkeypatch):
    base = memo.key_of("t", [np.zeros((2, 3))], ())
    assert memo.key_of("t", [np.zeros((3, 2))], ()) != base
    assert memo.key_of("t", [np.zeros((2, 3), dtype=np.float32)], ()) != base
    assert memo.key_of("u", [np.zeros((2, 3))], ()) != base
    assert memo.key_of("t", [np.zeros((2, 3)), None], ()) != base
    real = memo.key_of("t", [1], ("theory.optimum",))
    monkeypatch.setattr(memo, "source_digest", lambda root=None, entry="": "edited")
    assert memo.key_of("t", [1], ("theory.optimum",)) != real
    with pytest.raises(TypeError, match="memo inputs"):
        memo.key_of("t", [object()], ())


def test_corrupt_file_is_computed_again(folder):
    memo.memoized("t", [1], (), lambda: 1.0)
    (path,) = folder.glob("t-*.pkl")
    path.write_bytes(b"not a pickle")
    assert memo.memoized("t", [1], (), lambda: 2.0) == 2.0
    assert memo.memoized("t", [1], (), lambda: 3.0) == 2.0                # stored again


def test_unwritable_folder_computes_without_storing(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache folder should be")       # mkdir fails, even as root
    monkeypatch.setenv("LDSICL_CACHE_DIR", str(blocker))
    assert memo.memoized("t", [1], (), lambda: 5) == 5
    assert blocker.read_text().startswith("a file")
