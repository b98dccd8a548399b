"""A claim as one object: :class:`ClaimSpec`, with its :class:`Headline` s and :class:`FigureSpec` s.

One spec per claim lives in ``claims/specs/<claim>.py`` and is listed once in
:data:`claims.specs.CLAIMS`; every registry of the suite (the runs a profile trains, the
headline checks, the known non-reproductions, the figures, the order of the reports) is a
loop over that list, and the claim's test file imports its spec.

* ``name``: the claim's key in every record (``"banding"``); ``test_file``: its checks,
  relative to ``claims/`` (``other_test_files``: more files of its checks, if any;
  ``test_files()``: all of them).
* ``reported_table``: its reported rows (descriptive, no verdict) get a table of their own
  in docs/results/verdicts.md.
* ``knobs``: the :class:`~claims.harness.profiles.Profile` fields only this claim reads (its
  share of a profile's budget; the shared ones -- steps, seeds, samples -- belong to no claim).
* ``runs(profile)``: the trained runs (:class:`~claims.harness.identity.RunRef`) the
  claim reads in a profile; ``[]`` for a claim that trains nothing.
* ``headlines``: the source's statements, each with the checks that carry it and the
  reason those checks (and not others of the claim) are the ones that answer it; ``ours``
  marks a claim that tests no statement of a source (``without_headline`` says why).
* ``params``: the parameters of the session's point (``--claims-params``,
  claims/harness/params.py) the claim follows; the others it sets itself where its statement
  is a grid over them (``params_note`` says so), e.g. the depth claim's horizons.
* ``known``: ``check_id -> {profile: why}``, the known non-reproductions (strict xfails).
* ``no_control``: ``check -> why``, the claim's check families that have no negative
  control, each with the reason (every other family has one that must fail; the
  verdict tables list these, tests/test_published_runs.py holds the list to the records).
* ``figures``: what the report draws for the claim, each a data function over the
  claim's typed records returning typed objects (one figure per key) and a drawing function.

>>> h = Headline("demo", "x is zero.", "eq. 1", ("demo/x/a",), reason="the only check of x")
>>> spec = ClaimSpec("demo", "a demo claim", "test_demo.py", headlines=(h,))
>>> spec.headline_ids(), spec.runs(None)
(('demo/x/a',), [])
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from claims.harness.identity import Coords, check_id
from claims.harness.params import PARAMS

__all__ = ["ClaimSpec", "Headline", "KINDS", "FigureSpec", "no_runs", "check_ids"]


def check_ids(claim: str, check: str, *coords: Mapping) -> tuple[str, ...]:
    """The ``check_id`` of ``check`` at each of ``coords`` (keyword arguments of
    :class:`~claims.harness.identity.Coords`), for a headline to name its checks.

    >>> check_ids("banding", "optimum-in-a-class", {"setting": "a", "s": 2}, {"setting": "b", "s": 2})
    ('banding/optimum-in-a-class/a/s=2', 'banding/optimum-in-a-class/b/s=2')
    """
    return tuple(check_id(claim, check, Coords(**c)) for c in coords)


def no_runs(profile) -> list:
    """The runs of a claim that trains nothing."""
    return []


@dataclass(frozen=True)
class Headline:
    """One statement of a source, in one line, and the checks that test it.

    ``trained``: the statement is about what training finds (the paper's experiments),
    not about the construction or the exact optimum (its theorems).  ``reason``: why these
    checks carry the statement (and the claim's other checks support or report).
    ``tolerance``: whose tolerance decides its checks -- ``"paper"`` only where every one of
    them is judged at a tolerance the source states (for a check judged by run, the
    criterion each run is held to), else ``"ours"`` (tests/test_published_runs.py holds it to the
    published records).  ``ours``: the statement is our operationalisation, not one the
    sources make (e.g. a summary's reading of a paper).  :attr:`kind` is one of
    :data:`KINDS`.

    >>> Headline("c", "x.", "eq. 1", ("c/x",)).kind, Headline("c", "x.", "Fig. 2", ("c/x",), tolerance="paper").kind
    ('ours-tolerance', 'paper-tolerance')
    """

    claim: str
    statement: str
    source: str
    check_ids: tuple[str, ...]
    trained: bool = False
    reason: str = ""
    tolerance: str = "ours"
    ours: bool = False

    def __post_init__(self):
        if self.tolerance not in ("paper", "ours"):
            raise ValueError(f"Headline.tolerance must be 'paper' or 'ours', got {self.tolerance!r}")
        if self.ours and self.tolerance == "paper":
            raise ValueError("Headline.tolerance cannot be 'paper' for a statement of ours")

    @property
    def kind(self) -> str:
        """``"paper-tolerance"``, ``"ours-tolerance"`` or ``"ours-statement"`` (:data:`KINDS`)."""
        if self.ours:
            return "ours-statement"
        return "paper-tolerance" if self.tolerance == "paper" else "ours-tolerance"


#: the three kinds of statement the findings count apart, in their order, with their headings
KINDS = {
    "paper-tolerance": "The sources' statements at the sources' own tolerance",
    "ours-tolerance": "The sources' statements at our tolerance (ours shown in each row)",
    "ours-statement": "Statements we test that the sources do not make",
}


@dataclass(frozen=True)
class FigureSpec:
    """A figure of the report.

    ``data(records)`` reads the claim's :class:`~claims.harness.records.ClaimRecord` s (and
    those of the claims named in ``reads``, for a figure that sets its claim beside others)
    and returns ``{key: typed data}`` (empty when the records support no such figure); each
    item is drawn by ``draw(plt, data, path)`` into ``<stem>.png`` (key ``""``) or
    ``<stem>-<key>.png``, titled :meth:`title_for` (``title.format(key=key, data=data)``).

    >>> f = FigureSpec("demo", "demo, setting {key}: {data}", dict, print)
    >>> f.path_for("figs", "a").as_posix(), f.title_for("a", 3)
    ('figs/demo-a.png', 'demo, setting a: 3')
    """

    stem: str
    title: str
    data: Callable[[list], Mapping[str, Any]]
    draw: Callable[[Any, Any, Any], Any]
    reads: tuple[str, ...] = ()

    def title_for(self, key: str, data) -> str:
        """The figure's title in the report: ``title`` with ``{key}`` and ``{data...}`` filled in."""
        return self.title.format(key=key, data=data)

    def path_for(self, directory, key: str):
        """The file of the figure drawn for ``key``: ``<stem>.png`` (key ``""``) or ``<stem>-<key>.png``."""
        from pathlib import Path
        return Path(directory) / (f"{self.stem}.png" if not key else f"{self.stem}-{key}.png")


@dataclass(frozen=True)
class ClaimSpec:
    """One claim of the suite (module doc)."""

    name: str
    summary: str
    test_file: str
    runs: Callable[[Any], list] = no_runs
    headlines: tuple[Headline, ...] = ()
    known: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    figures: tuple[FigureSpec, ...] = ()
    ours: bool = False
    without_headline: str = ""
    other_test_files: tuple[str, ...] = ()
    knobs: tuple[str, ...] = ()
    reported_table: bool = False
    params: tuple[str, ...] = PARAMS
    params_note: str = ""
    no_control: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self):
        empty = [c for c, why in self.no_control.items() if not isinstance(why, str) or not why.strip()]
        if empty:
            raise ValueError(f"ClaimSpec {self.name!r}: no_control needs a reason for each check, got none for {empty}")
        bad = [p for p in self.params if p not in PARAMS]
        if bad or not isinstance(self.params, tuple):
            raise ValueError(f"ClaimSpec {self.name!r}: params must be a tuple of {PARAMS}, got {self.params!r}")
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"ClaimSpec.name must be a non-empty str, got {self.name!r}")
        wrong = [h.claim for h in self.headlines if h.claim != self.name]
        if wrong:
            raise ValueError(f"ClaimSpec {self.name!r}: its headlines must name it, got {wrong}")
        if self.ours and self.headlines:
            raise ValueError(f"ClaimSpec {self.name!r}: a claim of ours has no headline of a source")

    def test_files(self) -> tuple[str, ...]:
        """Every file of the claim's checks, relative to ``claims/``, the main one first."""
        return (self.test_file, *self.other_test_files)

    def headline_ids(self) -> tuple[str, ...]:
        """Every headline ``check_id`` of the claim, in order."""
        return tuple(i for h in self.headlines for i in h.check_ids)
