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
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

__all__ = ["ParameterError", "UsageExit", "naming", "usage_error", "refuse", "short", "shorten_values",
           "check_out", "check_out_dir", "cache_folder", "sigmas", "family", "window", "format_matrix", "FAMILY_PARAMS",
           "FLAGS", "REPO", "MAX_WORKERS"]

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
#: the most processes ``--workers`` may start on this machine (a pool of more is a typo)
MAX_WORKERS = 512
#: the repository checkout this package sits in (the claims live there, not in the package).
REPO = Path(__file__).resolve().parents[2]


class UsageExit(Exception):
    """Raised once a bad argument or a refusal has been reported: ``main`` returns 2."""


#: an echoed value longer than this many characters is shortened (:func:`short`)
SHORT = 40


def short(text) -> str:
    """``repr`` of what the user typed, cut to about :data:`SHORT` characters with an ellipsis,
    so that an error never echoes a 400-digit number or a pasted page.

    >>> short("1e400"), short("9" * 100)
    ("'1e400'", "'9999999999999999999999999999999999999999...' (100 characters)")
    """
    text = str(text)
    if len(text) <= SHORT:
        return repr(text)
    return f"{text[:SHORT]!r}"[:-1] + f"...' ({len(text)} characters)"


def shorten_values(message: str) -> str:
    """``message`` with every word of more than 50 characters (a value echoed by argparse or a
    library, quoted or not) cut to its first 32 and last 8 characters.

    >>> shorten_values("got T=" + "1" * 100 + " here")
    'got T=111111111111111111111111111111...11111111 here'
    """
    return re.sub(r"\S{51,}", lambda m: m[0][:32] + "..." + m[0][-8:], message)


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
    """Report a bad argument as one line naming its option once (``parser.error``: exit status
    2): ``argument --flag: <message>``, a message that opens with ``<param>: `` losing that
    prefix (``argument --from: x.json: not JSON``, not ``argument --from: from: x.json: ...``)."""
    param = getattr(exc, "param", None)
    flag = FLAGS.get(param)
    message = " ".join(str(exc).split())           # one line
    if flag and message.startswith(f"{param}: "):
        message = message[len(param) + 2:]
    parser.error(f"argument {flag}: {message}" if flag else message)


def refuse(parser, message: str):
    """One line ``<prog>: error: <message>`` on stderr (no usage: the arguments are right, the
    work is too large), then :class:`UsageExit` (exit status 2)."""
    print(f"{parser.prog}: error: {shorten_values(' '.join(message.split()))}", file=sys.stderr)
    raise UsageExit(message)


def check_out(path: str) -> Path:
    """An output file that can be written, checked before any work; ParameterError naming ``out``."""
    if not str(path).strip():
        raise ParameterError("out", "out must be a file path, got ''")
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


def cache_folder(text):
    """The weight cache folder ``--cache-dir`` names (models.cache.resolve_cache_dir; None:
    the default), refused when it is a file: ParameterError naming ``cache_dir``."""
    from models.cache import resolve_cache_dir               # torch: only the commands that use the cache

    with naming("cache_dir"):
        folder = resolve_cache_dir(text)
    if folder.exists() and not folder.is_dir():
        raise ParameterError("cache_dir", f"cache_dir must be a directory, got the file {str(folder)!r}")
    return folder


def check_out_dir(path: str) -> Path:
    """An output folder, created if need be and writable, checked before any work;
    ParameterError naming ``out``."""
    if not str(path).strip():
        raise ParameterError("out", "out must be a folder path, got ''")
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


#: the parameters of a family (theory.systems.LDSFamily), named by its errors
FAMILY_PARAMS = ("setting", "T", "d", "sigma_w", "sigma_v", "sigma_0")


def sigmas(args) -> dict:
    """The standard deviations given (exact Fractions) as floats; ParameterError naming the
    field of one beyond the float range (the parser refuses those already)."""
    out = {}
    for name in ("sigma_w", "sigma_v", "sigma_0"):
        v = getattr(args, name)
        if v is not None:
            try:
                out[name] = float(v)
            except OverflowError:
                raise ParameterError(name, f"{name} must be finite, got {short(v)}") from None
    return out


def family(args):
    """The LDSFamily of the family arguments; ParameterError naming its field."""
    from theory.systems import LDSFamily

    given = sigmas(args)
    with naming(*FAMILY_PARAMS):
        return LDSFamily(args.setting, d=args.d, T=args.T, **given)


def window(s: int, T: int, *, blame: str) -> None:
    """The window s must leave context: T > s + 1 (n = T - s - 1 >= 1 tokens).  Otherwise a
    ParameterError naming ``blame`` (``"s"`` or ``"T"``: the option the user set, so that
    ``--s 1000`` at the default T is blamed on --s, not on --T).

    >>> try:
    ...     window(29, 30, blame="s")
    ... except ParameterError as exc:
    ...     print(exc.param, "|", exc)
    s | s must be at most T - 2 = 28 (T = 30: n = T - s - 1 >= 1 context tokens), got 29
    """
    if T > s + 1:
        return
    if blame == "s":
        raise ParameterError("s", f"s must be at most T - 2 = {T - 2} (T = {T}: n = T - s - 1 >= 1 context "
                                  f"tokens), got {s}")
    raise ParameterError("T", f"T must exceed s + 1 = {s + 1} (n = T - s - 1 context tokens), got T={T}")


def format_matrix(W) -> str:
    return "\n".join("  [" + "  ".join(f"{x: .8f}" for x in row) + "]" for row in W)
