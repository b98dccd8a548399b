"""The negative controls of a run, family by family, against the registry's list of families without one.

A *check family* is a claim's check name (``banding/trained-out-of-class-share``) over all its
coordinates; a family *has a control* when the run holds at least one record of it with
``coords.control`` set, which is expected to fail.  Every family of checks (``kind ==
"check"``) must either have controls that all fail as they must, or be named in its claim's
``ClaimSpec.no_control`` with the reason it has none.  :func:`controls` reads a report and
returns a typed :class:`Controls`; its :attr:`~Controls.problems` are what the README and the
page could not truthfully say:

* a family without a control that the registry does not name (``unlisted``);
* a registry entry for a family that has a control in the run (``stale``; an entry for a
  family the run lacks is not a problem of the run: a selection, ``-k``, lacks families);
* a control that does not fail (``not_failing``: its ``check_id``), unless it is
  inconclusive, its claim's ``known`` lists it for the record's profile with the reason it
  cannot tell there, and its test was that strict xfail (``known_not_failing``:
  ``(check_id, verdict, reason)``, named wherever the counts are).  A control that holds
  shows the effect it should not: broken, never "cannot tell".

>>> from claims.harness.records import make_record
>>> r = lambda **k: make_record(claim="banding", check="parity-zeros-exact", setting="a", s=2, label="x",
...                             paper_ref="Lemma 4.1", tolerance=1e-12, comparator="<=", tolerance_source="project", **k)
>>> c = controls([r(measured=0.0), r(measured=1.0, variant="asym", expect="fails")])
>>> c.families, c.with_control, c.problems
(1, 1, [])
>>> print(control_sentence(c))
Negative controls: 1 of 1 check family has a negative control; every control check (1) fails as it must in this run.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Iterable, Sequence

from claims.harness.known import cannot_tell
from claims.harness.records import ClaimRecord
from claims.specs import CLAIMS

__all__ = ["Controls", "controls", "control_sentence", "short_sentence", "render_without_controls", "ANCHOR"]

#: the heading (and its anchor) of the list of families without a control in docs/results/verdicts.md
HEADING = "Check families without a negative control"
ANCHOR = "check-families-without-a-negative-control"


@dataclass(frozen=True)
class Controls:
    """The negative controls of one run (module doc).  ``without``: ``(claim, check, reason)``
    of every family without a control, in registry order; ``controlled``: the families with one."""

    families: int
    with_control: int
    control_checks: int
    without: tuple[tuple[str, str, str], ...]
    unlisted: tuple[str, ...]
    stale: tuple[str, ...]
    not_failing: tuple[str, ...]
    controlled: tuple[str, ...] = ()
    known_not_failing: tuple[tuple[str, str, str], ...] = ()

    @property
    def problems(self) -> list[str]:
        """One line per thing the run and the registry disagree on (empty: every sentence holds)."""
        return ([f"{f}: no negative control and not in its claim's no_control" for f in self.unlisted]
                + [f"{f}: in no_control but it has a control" for f in self.stale]
                + [f"{c}: a negative control that does not fail" for c in self.not_failing])


def controls(records: Iterable[ClaimRecord]) -> Controls:
    """The :class:`Controls` of ``records`` (one run) against :data:`claims.specs.CLAIMS`' ``no_control``."""
    plain, ctl, not_failing, known = set(), defaultdict(int), [], []
    for r in records:
        if r.kind != "check":
            continue
        fam = f"{r.claim}/{r.check}"
        if r.coords.control:
            ctl[fam] += 1
            why = cannot_tell(r)
            if why:
                known.append((r.check_id, r.verdict, why))
            elif r.verdict != "fails":
                not_failing.append(r.check_id)
        else:
            plain.add(fam)
    families = plain | set(ctl)
    listed = {f"{s.name}/{c}": why for s in CLAIMS for c, why in s.no_control.items()}
    bare = families - set(ctl)
    without = tuple((s.name, c, why) for s in CLAIMS for c, why in s.no_control.items()
                    if f"{s.name}/{c}" in bare)
    return Controls(families=len(families), with_control=len(ctl), control_checks=sum(ctl.values()),
                    without=without, unlisted=tuple(sorted(bare - set(listed))),
                    stale=tuple(sorted(set(listed) & set(ctl))), not_failing=tuple(not_failing),
                    controlled=tuple(sorted(ctl)), known_not_failing=tuple(known))


def _failing_clause(c: Controls) -> str:
    """What the run's control checks do, in a clause: all fail, or how many do not (and of
    those, how many are known outcomes named with their reason)."""
    k, bad = len(c.known_not_failing), len(c.not_failing)
    if not k and not bad:
        return f"every control check ({c.control_checks}) fails as it must"
    s = f"{c.control_checks - k - bad} of the {c.control_checks} control checks fail as they must"
    if k:
        s += (f"; {k} cannot tell in this run, named with {'its' if k == 1 else 'their'} reason: "
              + ", ".join(f"`{cid}` ({verdict})" for cid, verdict, _ in c.known_not_failing))
    if bad:
        s += f"; {bad} {'does' if bad == 1 else 'do'} not fail, with no stated reason"
    return s


def control_sentence(c: Controls, link: str = "") -> str:
    """The one sentence the README and the page say about negative controls, true of ``c`` or
    saying what is wrong."""
    n = len(c.without)
    fam = ("check family" if c.families == 1 else "check families") + (" has" if c.with_control == 1 else " have")
    every = not c.known_not_failing and not c.not_failing
    s = (f"Negative controls: {c.with_control} of {c.families} {fam} a negative control; {_failing_clause(c)}"
         + (" in this run." if every else "."))
    if n:
        where = f" ({link})" if link else ""
        s += (f"  The other {n} {'has' if n == 1 else 'have'} none, each named with its reason{where}: "
              + ", ".join(f"`{cl}/{ch}`" for cl, ch, _ in c.without) + ".")
    if c.unlisted:
        s += f"  {len(c.unlisted)} more have none and no stated reason: " + ", ".join(c.unlisted) + "."
    return s


def short_sentence(c: Controls) -> str:
    """The same counts in a clause, for a second run beside the first's :func:`control_sentence`:
    ``"36 of 45 families with a control, every control check (67) fails as it must."``"""
    return (f"{c.with_control} of {c.families} families with a control, {_failing_clause(c)}"
            + (f", {len(c.unlisted)} without one and no stated reason" if c.unlisted else "") + ".")


def render_without_controls(runs: Sequence[tuple[str, Controls]]) -> list[str]:
    """Markdown lines: the heading, what each run's controls do, and the families without a
    control -- with the registry's reason, or, where a run has a family with neither a control
    nor a reason, saying so (``runs``: ``(name, Controls)`` pairs)."""
    out = [f"## {HEADING}", ""]
    for name, c in runs:
        out.append(f"- {name} run: " + control_sentence(c).removeprefix("Negative controls: "))
    out += ["", "The families that have no negative control, for the reason given (each claim's spec, "
            "`no_control`):", ""]
    seen = []
    for _, c in runs:
        seen += [w for w in c.without if w not in seen]
    out += [f"- `{cl}/{ch}`: {why}." for cl, ch, why in seen]
    cannot = [(name, k) for name, c in runs for k in c.known_not_failing]
    if cannot:
        out += ["", "The controls that cannot tell in a run, for the reason given (each claim's spec, `known`):", ""]
        out += [f"- {name} run, `{cid}` ({verdict}): {why}." for name, (cid, verdict, why) in cannot]
    for name, c in runs:
        for f in c.unlisted:
            has = [n for n, o in runs if f in o.controlled]
            out.append(f"- `{f}`: **no control in the {name} run and no stated reason**"
                       + (f" (the {' and '.join(has)} run{'s' if len(has) > 1 else ''} "
                          f"{'have' if len(has) > 1 else 'has'} one)." if has else "."))
    return out + [""]
