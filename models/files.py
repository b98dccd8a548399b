"""Atomic file writes, the one implementation shared by the weight cache, the CLI and the claim report
(text, or bytes such as the CLI's ``cache export``).

A reader never sees half a file: the text goes to a temporary file in the same folder,
is flushed and fsync'ed, then ``os.replace`` puts it in place (atomic on POSIX).  The
folder is created when missing; on any error the temporary file is removed and the
target is left as it was.

>>> import tempfile, pathlib
>>> p = atomic_write_text(pathlib.Path(tempfile.mkdtemp()) / "sub" / "x.txt", "hello\\n")
>>> p.read_text()
'hello\\n'
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["atomic_write_text", "atomic_write_bytes"]


def atomic_write_text(path: str | os.PathLike, text: str) -> Path:
    """Write ``text`` (UTF-8, ``\\n`` line ends) to ``path`` atomically; returns the path."""
    return atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically; returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)  # mkstemp creates 0600; these files are not secret
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    return path
