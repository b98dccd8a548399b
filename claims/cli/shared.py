"""What the ``ldsicl`` commands share (claims/cli/commands.py, claims/cli/cache_commands.py): a
bad argument as an error that carries the parameter it names, its report as one usage line,
the checks of an output file and of an output folder, and the checkout's root.

A bad argument is a :class:`ParameterError`: a ``ValueError`` whose ``param`` is the
parameter's library name (``sigma_w``, ``cache_dir``; :data:`FLAGS` maps it to its flag).
The commands raise it for what they check themselves; a library call is wrapped in
:func:`naming` with the parameters it validates, so that its ``ValueError`` leaves the call
carrying one of them.  :func:`usage_error` reports it through ``parser.error`` as
``argument --flag: <message>`` (exit status 2), or as the message alone for an error that
names no option:

>>> try:
...     with naming("T"):
...         raise ValueError("T must exceed s + 1 = 3, got T=3")
... except ParameterError as exc:
...     print(exc.param, FLAGS[exc.param])
T --T

Nothing here imports torch (tests/test_startup.py).
"""
from __future__ import annotations

import os
import re
import tempfile
from contextlib import contextmanager
from pathlib import Path

__all__ = ["ParameterError", "naming", "usage_error", "check_out", "check_out_dir", "FLAGS", "REPO"]

#: library parameter name -> command-line flag (the option a ParameterError's ``param`` names)
FLAGS = {
    "setting": "--setting", "T": "--T", "d": "--d", "s": "--s", "sigma_w": "--sigma-w",
    "sigma_v": "--sigma-v", "sigma_0": "--sigma-0", "method": "--method", "m": "--mc-systems",
    "seed": "--seed", "steps": "--steps", "batch": "--batch", "lr": "--lr", "lr_min": "--lr-min",
    "warmup_steps": "--warmup-steps", "weight_decay": "--weight-decay",
    "grad_clip": "--grad-clip", "init_scale": "--init-scale", "dtype": "--dtype",
    "forward": "--forward", "device": "--device", "cache_dir": "--cache-dir",
    "cond_max": "--cond-max", "starts": "--starts", "trajectories": "--trajectories",
    "max_memory": "--max-memory", "out": "--out", "from": "--from", "run": "--run",
    "layers": "--layers", "betas": "--betas", "radius": "--radius", "claim": "--claim",
    "profile": "--profile", "key": "KEY",
}
#: the repository checkout this package sits in (the claims live there, not in the package).
REPO = Path(__file__).resolve().parents[2]


class ParameterError(ValueError):
    """A bad argument: ``ValueError(message)`` with ``param``, the parameter it names (a key of
    :data:`FLAGS`), or None when it names no single option (a combination of them)."""

    def __init__(self, param: str | None, message: str):
        super().__init__(message)
        self.param = param


@contextmanager
def naming(*params: str):
    """Turn a ``ValueError`` raised inside into a :class:`ParameterError` naming one of
    ``params``, the parameters the wrapped call validates.  One parameter: that one.
    Several (a constructor that checks every field): the one the library's error names --
    every library error starts with the name of its parameter (theory/validation.py), so
    the first of ``params`` that the message opens with as a whole word; none if no one
    does.  A ParameterError passes unchanged."""
    try:
        yield
    except ParameterError:
        raise
    except ValueError as exc:
        message = str(exc)
        if len(params) == 1:
            param = params[0]
        else:
            param = next((p for p in params if re.match(rf"{re.escape(p)}(?![A-Za-z0-9_])", message)), None)
        raise ParameterError(param, message) from None


def usage_error(parser, exc: ValueError):
    """Report a bad argument as one line naming its option (``parser.error``: exit status 2)."""
    flag = FLAGS.get(getattr(exc, "param", None))
    parser.error(f"argument {flag}: {exc}" if flag else str(exc))


def check_out(path: str) -> Path:
    """An output file that can be written, checked before any work; ParameterError naming ``out``."""
    p = Path(path).expanduser()
    if p.is_dir():
        raise ParameterError("out", f"out must be a file path, got the directory {path!r}")
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise ParameterError("out", f"out: the folder {str(parent)!r} does not exist")
    try:
        with tempfile.NamedTemporaryFile(dir=parent, prefix=".ldsicl-probe-"):
            pass
    except OSError as exc:
        raise ParameterError("out", f"out: cannot write in {str(parent)!r} ({exc.strerror or exc})") from None
    return p


def check_out_dir(path: str) -> Path:
    """An output folder, created if need be and writable, checked before any work;
    ParameterError naming ``out``."""
    out = Path(path).expanduser()
    if out.exists() and not out.is_dir():
        raise ParameterError("out", f"out must be a directory, got the file {str(out)!r}")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ParameterError("out", f"out cannot be created: {exc}") from None
    if not os.access(out, os.W_OK):
        raise ParameterError("out", f"out is not writable: {str(out)!r}")
    return out
