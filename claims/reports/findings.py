r"""The findings: for each statement of the sources (the headlines of claims.specs.CLAIMS), what the
published runs conclude, in plain words.

A statement is tested by its headline checks.  Its outcome in one profile is read from
their verdicts (claims/harness/records.py), never from their values:

=================  ============================================================
outcome            the headline checks' verdicts
=================  ============================================================
``reproduced``     every check holds
``not reproduced`` at least one fails, none holds or is mixed (undecided ones
                   are counted beside it)
``partly``         some runs or checks hold and others fail: a ``mixed`` check,
                   or checks that hold beside checks that fail
``undecided``      none fails or is mixed, and not all hold (an interval
                   straddles the tolerance)
=================  ============================================================

A check missing from a run (an older report), or recorded without a verdict, makes the
statement ``not run`` there.
The key number of a statement is its weakest check -- the first that fails, else mixed,
else undecided, else the first (for a statement at our tolerance, the first judged at ours
among those of that verdict, so that its row shows our tolerance) -- as measured value, interval and criterion, with whose
tolerance it is.  A check judged by run adds the criterion each run is held to and how
many runs hold (per basin where there are several).

>>> outcome(["holds", "holds"]), outcome(["holds", "inconclusive"]), outcome(["fails", "inconclusive"])
('reproduced', 'undecided', 'not reproduced')
>>> outcome(["holds", "fails"]), outcome(["mixed"]), outcome(["holds", None])
('partly', 'partly', 'not run')
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Sequence

from claims.harness.display import format_criterion, format_interval, format_value
from claims.harness.records import ClaimRecord
from claims.harness.reportfile import Report
from claims.harness.spec import KINDS, Headline
from claims.specs import CLAIMS, all_headlines

__all__ = ["OUTCOMES", "outcome", "outcome_counts", "count_line", "Finding", "findings", "summary_line", "render_findings", "anchor"]

#: the outcomes of a statement, in the order the summary counts them
OUTCOMES = ("reproduced", "partly", "not reproduced", "undecided", "not run")
#: weakest first: the verdict whose check gives a statement its key number
_WEAKEST = ("fails", "mixed", "inconclusive", "holds")


def outcome(verdicts: Sequence[str | None]) -> str:
    """The outcome of a statement from its headline checks' verdicts (module doc); ``None``
    for a check the run does not have."""
    if not verdicts or any(v is None for v in verdicts):
        return "not run"
    n = Counter(verdicts)
    unknown = set(n) - set(_WEAKEST)
    if unknown:
        raise ValueError(f"verdicts must be among {_WEAKEST}, got {sorted(unknown)}")
    if n["holds"] == len(verdicts):
        return "reproduced"
    if n["mixed"] or (n["holds"] and n["fails"]):
        return "partly"
    if n["fails"]:
        return "not reproduced"
    return "undecided"


def anchor(claim: str) -> str:
    """The anchor of a claim's section in docs/results/verdicts.md (GitHub's rule for a
    heading that is the claim's name: lower case, spaces to '-', other punctuation dropped)."""
    return "".join(ch for ch in claim.lower().replace(" ", "-") if ch.isalnum() or ch in "-_")


@dataclass(frozen=True)
class Finding:
    """One statement in one run: its outcome, the verdict counts of its checks and its
    key number (module doc)."""

    headline: Headline
    outcome: str
    counts: dict
    key: str

    @property
    def kind(self) -> str:
        """The statement's kind, one of :data:`KINDS` (its headline's)."""
        return self.headline.kind

    def counts_text(self) -> str:
        total = sum(self.counts.values())
        if total == 1:
            return "1 check"
        words = {"holds": "hold", "fails": "fail", "mixed": "mixed", "inconclusive": "undecided",
                 None: "not run"}
        order = ("holds", "mixed", "inconclusive", "fails", None)
        return f"{total} checks: " + ", ".join(f"{self.counts[v]} {words[v]}" for v in order if self.counts.get(v))


def _key(r: ClaimRecord) -> str:
    """The key number of one record: value, interval, criterion (whose), and for a mixed
    check the share of runs in holding basins."""
    iv = f" {format_interval(r.interval)}" if r.interval else ""
    out = (f"`{r.check}` ({r.where}): {format_value(r.measured)}{iv} against "
           f"{format_criterion(r.comparator, r.tolerance)} ({r.tolerance_source}'s)")
    if r.per_run:
        return out + f"; {r.per_run_text}"
    bf = r.basins or {}
    if r.verdict == "mixed" and bf.get("holding_share") is not None:
        lo, hi = bf["holding_share_interval"]
        out += f"; runs in basins that hold: {bf['holding_share']:.2f} [{lo:.2f}, {hi:.2f}]"
    return out


def findings(report: Report) -> list[Finding]:
    """The finding of every headline statement (claims.specs.all_headlines) in one report."""
    by_id = {r.check_id: r for r in report.records}
    out = []
    for h in all_headlines():
        # a record without a verdict of a check (a reported row under a headline id) counts as missing
        recs = [by_id[i] if i in by_id and by_id[i].verdict in _WEAKEST else None for i in h.check_ids]
        verdicts = [r.verdict if r else None for r in recs]
        present = [r for r in recs if r]
        # weakest first; within a verdict, a statement "at our tolerance" shows a check judged at ours
        ours_first = h.kind != "paper-tolerance"
        weakest = min(present, key=lambda r: (_WEAKEST.index(r.verdict),
                                              ours_first and r.criterion[2] != "project")) if present else None
        out.append(Finding(h, outcome(verdicts), dict(Counter(verdicts)), _key(weakest) if weakest else "-"))
    return out


def outcome_counts(found: Sequence[Finding]) -> str:
    """The outcomes that occur among ``found``, in :data:`OUTCOMES` order; ``"none"`` if empty.

    >>> outcome_counts([Finding(Headline("c", "x.", "eq. 1", ("c/x",)), o, {}, "-") for o in ("partly", "reproduced")])
    '1 reproduced, 1 partly'
    """
    n = Counter(f.outcome for f in found)
    return ", ".join(f"{n[o]} {o}" for o in OUTCOMES if n[o]) or "none"


def count_line(found: Sequence[Finding]) -> str:
    """``"3 statements: 2 reproduced, 1 partly"`` -- the count line of one kind's table."""
    return f"{len(found)} statement{'s' if len(found) != 1 else ''}: {outcome_counts(found)}"


def summary_line(found: Sequence[Finding], profile: str | None = None) -> str:
    """One sentence that cannot be read as "everything reproduced": how many statements, of
    how many claims, have each outcome, then the same for each kind of statement
    (:data:`KINDS`) apart.

    >>> hs = [Headline("c", "x is 0.", "eq. 1", ("c/x",)), Headline("c", "y is 0.", "Fig. 1", ("c/y",), trained=True)]
    >>> f = [Finding(h, o, {}, "-") for h, o in zip(hs, ("reproduced", "undecided"))]
    >>> summary_line(f, "paper")
    'Paper profile: 2 statements of 1 claims, by their headline checks: 1 reproduced, 0 partly, 0 not reproduced, 1 undecided (at our tolerance: 1 reproduced, 1 undecided of 2).'
    """
    claims = sorted({f.headline.claim for f in found})
    n = Counter(f.outcome for f in found)
    parts = [f"{n[o]} {o}" for o in OUTCOMES if n[o] or o != "not run"]
    kinds = []
    for kind, label in _SHORT.items():
        sub = [f for f in found if f.kind == kind]
        if sub:
            kinds.append(f"{label}: {outcome_counts(sub)} of {len(sub)}")
    lead = f"{profile.capitalize()} profile: " if profile else ""
    return (f"{lead}{len(found)} statements of {len(claims)} claims, by their headline checks: "
            + ", ".join(parts) + f" ({'; '.join(kinds)}).")


#: each kind's short name in the summary line
_SHORT = {"paper-tolerance": "at the sources' tolerance", "ours-tolerance": "at our tolerance",
          "ours-statement": "statements of ours"}


def _verdict_counts(report: Report, claim: str) -> str:
    """The verdicts of a claim's checks in words (controls apart), and its reported rows."""
    recs = [r for r in report.records if r.claim == claim]
    checks = [r for r in recs if r.kind == "check" and not r.coords.control]
    n = Counter(r.verdict for r in checks)
    words = {"holds": "hold", "mixed": "mixed", "inconclusive": "undecided", "fails": "fail"}
    parts = [f"{len(checks)} checks"] + [f"{n[v]} {w}" for v, w in words.items() if n[v]]
    ctl = [r for r in recs if r.kind == "check" and r.coords.control]
    if ctl:
        parts.append(f"{sum(r.verdict == 'fails' for r in ctl)} of {len(ctl)} negative controls fail as they must")
    rep = sum(r.kind == "reported" for r in recs)
    if rep:
        parts.append(f"{rep} reported rows")
    return ", ".join(parts)


def _md(s) -> str:
    return str(s).replace("|", "\\|").replace("\n", " ")


def render_findings(primary: Report, secondary: Report | None = None, *, names=("paper", "quick"),
                    verdicts_link: str = "docs/results/verdicts.md") -> str:
    """The findings (markdown): the summary line, then one table per kind of statement
    (:data:`KINDS`, each with its count), one row per statement -- its outcome in ``primary``
    (and ``secondary`` beside it when given), whether theory or training, its checks, its
    weakest check in ``primary`` with whose tolerance -- then the claims of ours that state
    nothing, and why each statement's headline checks are the ones that carry it."""
    main = findings(primary)
    other = findings(secondary) if secondary is not None else None
    head = ["statement (source)", "theory or training", f"{names[0]} profile"]
    if other is not None:
        head.append(f"{names[1]} profile")
    head += [f"checks ({names[0]})", f"weakest check ({names[0]})"]
    out = [summary_line(main, names[0]), ""]
    for kind, heading in KINDS.items():
        rows = [(i, f) for i, f in enumerate(main) if f.kind == kind]
        out += [f"**{heading}** -- {count_line([f for _, f in rows])}.", ""]
        if rows:
            out += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for i, f in rows:
            h = f.headline
            row = [f"[{h.claim}]({verdicts_link}#{anchor(h.claim)}): {h.statement} ({h.source})",
                   "training" if h.trained else "theory", f"**{f.outcome}**"]
            if other is not None:
                row.append(other[i].outcome)
            row += [f.counts_text(), f.key]
            out.append("| " + " | ".join(_md(c) for c in row) + " |")
        if kind == "ours-statement":
            ours = [spec for spec in CLAIMS if spec.ours]
            if rows:
                out.append("")
            out += [f"- [{spec.name}]({verdicts_link}#{anchor(spec.name)}) (a claim that states nothing of its "
                    f"own, so it is not counted above): {spec.without_headline}.  Its checks, in the verdict "
                    f"tables: {_verdict_counts(primary, spec.name)}." for spec in ours]
        out.append("")
    out += ["Why these checks carry each statement (each claim's spec, `claims/specs/<claim>.py`):", ""]
    out += [f"- {f.headline.claim} ({'training' if f.headline.trained else 'theory'}): {f.headline.reason}"
            for f in main]
    return "\n".join(out) + "\n"
