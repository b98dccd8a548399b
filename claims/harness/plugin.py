"""The claim-harness pytest plugin: options, the ``claim`` and ``profile`` fixtures, the report.

The root conftest.py loads it (``pytest_plugins = ["claims.harness.plugin"]``), so it is active
in every run from the repository: ``pytest claims`` (serial), ``pytest claims -n auto``
(pytest-xdist), ``pytest claims --profile paper`` and ``pytest --profile paper claims``
alike.  A project without that conftest loads it with ``-p claims.harness.plugin``.  It adds:

Options (always registered; ``pytest tests`` accepts them and ignores them)

    ``--profile {quick,paper}``  compute budget of the checks (default ``quick``, what CI
                                 runs; see claims/harness/profiles.py).  Any other name is a usage
                                 error (exit code 4).
    ``--claims-report DIR``      where ``claims.json`` and ``claims.md`` go.  Default:
                                 ``<rootdir>/reports`` (the rootdir is the folder of
                                 pyproject.toml, whatever the working directory); a relative
                                 DIR is taken relative to the invocation directory.
    ``--claims-random``          fresh hypothesis draws.  Without it claims are always
                                 derandomised (seeded from the test), so two runs write the
                                 same records (claims/harness/seeds.py, ``claim_settings``).
    ``--claims-params T=60,d=3`` every claim at this point of the family's parameters, trained
                                 runs included (claims/harness/params.py: validated before any
                                 work, a bad one is a usage error naming it; the session's
                                 point, recorded as ``run.params`` in claims.json).
    ``--claims-untrained``       skip the checks that read trained runs and train nothing
                                 (claims/harness/runopts.py): the theory side only.
    ``--retrain``                ignore cached weights stored before this session: the
                                 controller takes the session's start time and hands it to
                                 every xdist worker (``workerinput``); claims/_ar1.py passes
                                 it to ``models.cache.train_cached(stale_before=...)``, so
                                 each run is retrained once per session and then shared.

Fixtures

    ``profile``  the :class:`claims.harness.profiles.Profile` of this run (session scope).
    ``claim``    a :class:`claims.harness.records.ClaimRecorder` bound to the current test;
                 ``claim.record(...)`` returns a ``Record`` whose ``.check()`` asserts the
                 expected verdict.  A test that passes without calling ``.check()`` on
                 every record it made gets an error at teardown.

Report
    At the end of the session the controller process (never an xdist worker) prints a
    table grouped by claim, with a summary line per claim, and writes the two report
    files atomically -- only if at least one record was collected (so a run of
    ``pytest tests`` writes nothing).  The outcome of each record's test is read from
    the report attributes (claims/harness/collect.py).  Two records of one ``check_id`` (two
    tests claiming the same identity) fail the session: the ids are named after the
    table and the exit status is 1.

Scheduling (``-n auto``)
    Every ``test_training_run`` (one training run each, cached on disk) is moved to the
    front of the collection, and xdist's load scheduler hands out tests one at a time
    (``--maxschedchunk 1`` unless given).  xdist's default sends each worker a block of
    consecutive tests, so one worker trained every AR(1) run in turn while the other
    reached checks that need those runs and waited on the cache's lock; now the two
    workers train side by side first and the checks find the cache warm (docs/running.md,
    "Where the time goes").

Example claim file::

    from claims.harness.seeds import rng_for

    def test_mean_is_zero(claim, profile):
        x = rng_for("demo", "mean").standard_normal(profile.mc_trajectories)
        claim.record(claim="demo", check="mean-is-zero", setting="a", paper_ref="eq. 1",
                     label="|mean| * sqrt(n)", measured=abs(x.mean()) * len(x) ** 0.5,
                     tolerance=4.0, comparator="<=", tolerance_source="project").check()

The table shows each record's interval and ``holds at``; after it, the number of
interval checks with the chance disagreements expected at 95 %, and the inconclusive
checks by name with what would decide them (claims/reports/report.py).
"""
from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import pytest

from claims.harness.collect import RecordCollector, mark_strict_xpass
from claims.harness.profiles import DEFAULT_PROFILE, PROFILES, Profile, get_profile
from claims.harness import params, runopts
from claims.harness.records import ClaimRecorder, duplicate_ids
from claims.reports.report import environment, provenance, render_terminal, write_reports

_PLUGIN_NAME = "claims-harness"
_PLUGIN_KEY = pytest.StashKey["ClaimsPlugin"]()
#: the name of the tests that train one run each (collected first, module doc "Scheduling")
TRAINING_TEST = "test_training_run"
#: ``workerinput`` key carrying the controller's ``--retrain`` start time to xdist workers.
RETRAIN_KEY = "claims_retrain_before"


def pytest_addoption(parser):
    group = parser.getgroup("claims", "claim harness (claims/harness/plugin.py)")
    group.addoption(
        "--profile", dest="claims_profile", default=DEFAULT_PROFILE,
        choices=list(PROFILES), metavar="{" + ",".join(PROFILES) + "}",
        help=f"compute profile of the claim checks (default: {DEFAULT_PROFILE}; "
             "'paper' follows the paper's protocol, docs/math.md section 2)")
    group.addoption(
        "--claims-report", dest="claims_report", default=None, metavar="DIR",
        help="folder for claims.json and claims.md (default: <rootdir>/reports; a relative "
             "DIR is relative to the invocation directory)")
    group.addoption(
        "--claims-random", dest="claims_random", action="store_true", default=False,
        help="fresh hypothesis draws in the claims (default: derandomised, seeded from "
             "each test, so two runs give the same records)")
    group.addoption(
        "--claims-params", dest="claims_params", default="", metavar="NAME=VALUE,...",
        help="run every claim at this point of the family's parameters, e.g. T=60,d=3,sigma_w=0.2 "
             "(T, d, sigma_w, sigma_v, sigma_0; default: T=30,d=5,sigma_w=0.1,sigma_v=0.1,sigma_0=1; "
             "claims/harness/params.py)")
    group.addoption(
        "--claims-untrained", dest="claims_untrained", action="store_true", default=False,
        help="skip every check that reads a trained run and train nothing: the claims' theory side "
             "(exact moments, optima, constructions, noise-free twins), e.g. for a sweep of cheap measures")
    group.addoption(
        "--retrain", dest="claims_retrain", action="store_true", default=False,
        help="retrain the claims' models: cached weights stored before this session "
             "are ignored (each run is trained once per session)")


class ClaimsPlugin:
    """Per-run state: the profile, the records seen by the controller, the report paths."""

    def __init__(self, config: pytest.Config):
        self.config = config
        try:
            self.profile: Profile = get_profile(config.getoption("claims_profile"))
        except ValueError as exc:  # only reachable if the option was set programmatically
            raise pytest.UsageError(f"--profile: {exc}") from None
        self.is_worker = hasattr(config, "workerinput")
        if self.is_worker:
            retrain_before = config.workerinput.get(RETRAIN_KEY)
        elif config.getoption("claims_retrain"):
            retrain_before = time.time()
        else:
            retrain_before = None
        try:
            point = params.Point.parse(config.getoption("claims_params") or "")
        except ValueError as exc:
            raise pytest.UsageError(str(exc)) from None
        self.run_options = runopts.RunOptions(
            random_draws=bool(config.getoption("claims_random")),
            retrain_before=retrain_before, params=point,
            untrained=bool(config.getoption("claims_untrained")))
        self._point = params.activate(point)
        self._point.__enter__()       # the session's point (claims/harness/params.py); left in unconfigure
        self.profile = dataclasses.replace(self.profile, run=self.run_options)
        self.started = time.time()
        self.collector = RecordCollector()
        self.call_passed: dict[str, bool] = {}
        self.records: list[dict] = []
        self.written: tuple[Path, ...] = ()
        self.write_error: str | None = None
        self.duplicates: list[str] = []

    def report_dir(self) -> Path:
        opt = self.config.getoption("claims_report")
        if opt:
            return (Path(self.config.invocation_params.dir) / opt).resolve()
        return Path(self.config.rootpath) / "reports"

    # -- hooks ---------------------------------------------------------------------------
    def pytest_report_header(self, config):
        lines = [f"claims profile: {self.profile.name} ({self.profile.description})"]
        opts = self.run_options
        if not opts.params.is_default:
            lines.append(f"claims params: {opts.params.tag()} ({runopts.AWAY_NOTE})")
        if opts.untrained:
            lines.append("claims run: trained runs skipped (--claims-untrained)")
        if opts.random_draws or opts.retrain_before is not None:
            lines.append("claims run: " + ", ".join(f"{k} = {v}"
                                                      for k, v in opts.as_dict().items()))
        return lines

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node):
        """xdist controller: hand the ``--retrain`` start time to each worker."""
        if self.run_options.retrain_before is not None:
            node.workerinput[RETRAIN_KEY] = self.run_options.retrain_before

    def pytest_collection_modifyitems(self, config, items):
        """The training runs (every ``test_training_run``) first, then the rest, each part
        in collection order (the same on every xdist worker, as xdist requires); see
        "Scheduling" in the module doc."""
        first = [item for item in items if getattr(item, "originalname", None) == TRAINING_TEST]
        if first:
            rest = [item for item in items if getattr(item, "originalname", None) != TRAINING_TEST]
            items[:] = first + rest

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_makereport(self, item, call):
        # outermost wrapper: runs after pytest's xfail handling has settled the report
        outcome = yield
        mark_strict_xpass(item, call, outcome.get_result())

    def pytest_runtest_logreport(self, report):
        if report.when == "call":
            self.call_passed[report.nodeid] = bool(report.passed)
        if not self.is_worker:
            self.collector.add(report)

    def pytest_sessionfinish(self, session):
        if self.is_worker:
            return
        self.records = self.collector.records()
        if not self.records:
            return
        self.duplicates = duplicate_ids(self.records)
        if self.duplicates:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        try:
            self.written = write_reports(self.records, self.report_dir(),
                                         self.profile.as_dict(),
                                         run=self.run_options.as_dict(),
                                         environment=environment(time.time() - self.started),
                                         provenance=provenance(self.profile.name, self.run_options.as_dict()))
        except OSError as exc:
            self.write_error = f"could not write the claims report: {exc}"

    def pytest_terminal_summary(self, terminalreporter):
        if self.is_worker or not self.records:
            return
        tr = terminalreporter
        tr.write_sep("=", f"claims (profile {self.profile.name})")
        for line in render_terminal(self.records):
            tr.write_line(line)
        for p in self.written:
            tr.write_line(f"report: {p}")
        if self.write_error:
            tr.write_line(self.write_error, red=True)
        if self.duplicates:
            tr.write_line(f"DUPLICATE check_id (each must name one check): {', '.join(self.duplicates)}",
                          red=True)


def pytest_configure(config):
    if not hasattr(config, "workerinput") and getattr(config.option, "maxschedchunk", "absent") is None:
        config.option.maxschedchunk = 1       # xdist's load scheduling, one test at a time (module doc)
    plugin = ClaimsPlugin(config)
    config.stash[_PLUGIN_KEY] = plugin
    config.pluginmanager.register(plugin, _PLUGIN_NAME)


def pytest_unconfigure(config):
    plugin = config.stash.get(_PLUGIN_KEY, None)
    if plugin is not None:
        plugin._point.__exit__(None, None, None)
        if config.pluginmanager.is_registered(plugin):
            config.pluginmanager.unregister(plugin)


@pytest.fixture(scope="session")
def profile(pytestconfig) -> Profile:
    """The :class:`~claims.harness.profiles.Profile` selected with ``--profile``."""
    return pytestconfig.stash[_PLUGIN_KEY].profile


@pytest.fixture
def claim(request, profile):
    """A :class:`~claims.harness.records.ClaimRecorder` bound to this test (see module doc)."""
    recorder = ClaimRecorder(request.node, profile.name)
    yield recorder
    plugin = request.config.stash[_PLUGIN_KEY]
    if plugin.call_passed.pop(request.node.nodeid, False) and recorder.unchecked():
        names = "; ".join(repr(r) for r in recorder.unchecked())
        pytest.fail(f"claim record(s) never checked -- call .check() on what "
                    f"claim.record(...) returns: {names}", pytrace=False)
