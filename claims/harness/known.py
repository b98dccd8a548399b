"""Known non-reproductions: checks expected to fail, by ``check_id``, as strict xfails per profile.

Each claim's spec lists its own (``ClaimSpec.known``, claims/specs/<claim>.py: ``check_id ->
{profile: why, in words}``); :func:`claims.specs.known_failures` gathers them, and this
module turns them into pytest marks.  A check whose whole 95 % interval lies outside its
tolerance (verdict ``"fails"``; for a check judged by run, the share of runs that hold has
its whole interval below 1/2) is listed with the profiles it fails in and why; its
parametrize value then carries ``xfail(strict=True)`` (:func:`known_params`).  An
inconclusive or mixed check passes, so listing it turns into a strict XPASS.  A negative
control that is inconclusive (``expect == "fails"``: the control cannot tell there; one that
holds is broken, and listing it fixes nothing) is listed the same way, under its own ``check_id``: a listed id marks the
test whose check it is or whose check it extends (``<check_id>/<variant>/control``).  Never
widen a tolerance instead.

The numbers are not written in the specs: the xfail reason is rendered from the last
published run of the profile (docs/results/<profile>.json, read when pytest collects) --
the record with this ``check_id``: its measured value, interval, criterion and verdict --
so regenerating the published runs changes the reasons without touching a spec (only a
check that changes between reproducing and not does).  A check decided with the paper
profile's 8 seeds is inconclusive with the quick profile's 3 (no share of 3 runs decides),
so each entry names its profiles.

>>> reason("banding/trained-odd-share/b/s=3", "paper")[:55]
'paper profile: not reproduced: no trained AR(3) layer h'
>>> [getattr(p, "values", p) for p in known_params(lambda st: f"gd-equivalence/trained-gd-gap/{st}", ["a"])]
['a']
"""
from __future__ import annotations

import functools
from pathlib import Path
from typing import Callable

import pytest

from claims.harness.display import format_criterion, format_interval, format_value
from claims.harness.params import current
from claims.harness.reportfile import load_report

__all__ = ["cannot_tell", "known_params", "published_numbers", "reason"]

ROOT = Path(__file__).resolve().parents[2]


def _known() -> dict[str, dict[str, str]]:
    """Every claim's known failures, read when asked (a claim registered by a test counts)."""
    from claims.specs import known_failures    # on call: the specs (and their figures) import the harness
    return known_failures()


@functools.lru_cache(maxsize=None)
def _published(profile: str) -> dict:
    """The published run of ``profile``, its typed records by ``check_id`` ({} without a file)."""
    path = ROOT / "docs" / "results" / f"{profile}.json"
    if not path.is_file():
        return {}
    return {r.check_id: r for r in load_report(path).records}


def published_numbers(check_id: str, profile: str) -> str | None:
    """What the published run of ``profile`` measured for a check: value, interval,
    criterion and verdict, in one phrase (None when it has no such record)."""
    r = _published(profile).get(check_id)
    if r is None:
        return None
    crit = format_criterion(r.comparator, r.tolerance)
    who = f" ({r.tolerance_source}'s)" if r.tolerance_source else ""
    return (f"last published {profile} run: {format_value(r.measured)}"
            + (f" {format_interval(r.interval)}" if r.interval else "") + f" against {crit}{who}"
            + (f", {r.per_run_text}" if r.per_run else "") + f", verdict {r.verdict}")


def reason(check_id: str, profile: str) -> str | None:
    """The xfail reason of a check in a profile: the registry's words and the published numbers."""
    why = _known().get(check_id, {}).get(profile)
    if why is None:
        return None
    nums = published_numbers(check_id, profile)
    return f"{profile} profile: {why} ({nums or 'not in the last published run'})"


def _listed(check_id: str, known: dict) -> list[str]:
    """The listed ids a test of ``check_id`` records: the check itself, or one of its
    variants and controls (``check_id/...``)."""
    return [k for k in known if k == check_id or k.startswith(check_id + "/")]


def cannot_tell(r) -> str | None:
    """The registry's reason when record ``r`` is a negative control that cannot tell in its
    run -- inconclusive, listed for the record's profile, its test that strict xfail -- else
    None.  The one rule the summary's ``cannot_tell`` count and the controls' sentences share."""
    if r.expect != "fails" or r.verdict != "inconclusive" or r.outcome != "xfailed":
        return None
    return _known().get(r.check_id, {}).get(r.profile)


def _marks(check_id: str, known: dict) -> list:
    return [pytest.mark.xfail(condition=f"config.getoption('claims_profile') == {p!r}", strict=True,
                              reason=reason(k, p)) for k in _listed(check_id, known) for p in known[k]]


def known_params(check_id_of: Callable[..., str], values, unpack: bool = True) -> list:
    """``values`` for ``pytest.mark.parametrize``, each whose ``check_id_of(*value)`` (or a
    variant or control of it, :func:`_listed`) is in the claims' known failures
    (:func:`claims.specs.known_failures`) wrapped in ``pytest.param``
    with one strict xfail mark per listed profile.  A tuple value fills several argument
    names unless ``unpack`` is false.  Away from the default point (``--claims-params``,
    claims/harness/params.py) nothing is marked: the failures were measured at the default."""
    if not current().is_default:         # the known failures were measured at the default point
        return list(values)
    known, out = _known(), []
    for v in values:
        args = v if (unpack and isinstance(v, tuple)) else (v,)
        cid = check_id_of(*args)
        out.append(pytest.param(*args, marks=_marks(cid, known)) if _listed(cid, known) else v)
    return out
