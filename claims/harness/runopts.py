"""Options of the current claims run that are not compute budgets: random draws, retraining, the point.

Built by the plugin (claims/harness/plugin.py) in every process of a run -- the controller from
its command line, each pytest-xdist worker from what the controller hands it -- and
carried by the ``profile`` fixture's value (``profile.run``), so that
:func:`claims.harness.seeds.claim_settings` and :func:`claims.harness.runs.trained` read it from the
profile they are given; there is no module-level state.  A profile built outside a
pytest run has the defaults: derandomised hypothesis draws, weights from the cache.

``random_draws``
    ``--claims-random``: hypothesis draws fresh examples (not seeded from the test).
``retrain_before``
    ``--retrain``: the session's start time (epoch seconds, taken once by the
    controller); cached weights stored before it are retrained, those stored after it
    (by another worker of the same session) are reused.

``untrained``
    ``--claims-untrained``: every check that reads a trained run is skipped, and nothing is
    trained (claims/harness/runs.py ``trained``); what stays is the claims' theory side --
    exact moments, optima, constructions, noise-free twins -- at the session's point: the
    cheap measures a sweep maps over a grid.
``params``
    ``--claims-params``: the point of the family's parameters every claim runs at
    (claims/harness/params.py; the plugin also makes it the session's point).

>>> RunOptions()
RunOptions(random_draws=False, retrain_before=None, params=Point(T=30, d=5, sigma_w=0.1, sigma_v=0.1, sigma_0=1.0), untrained=False)
>>> RunOptions().as_dict()["params"]
{'T': 30, 'd': 5, 'sigma_w': 0.1, 'sigma_v': 0.1, 'sigma_0': 1.0}
"""
from __future__ import annotations

from dataclasses import dataclass, field

from claims.harness.params import DEFAULT, Point

__all__ = ["RunOptions"]


@dataclass(frozen=True)
class RunOptions:
    random_draws: bool = False
    retrain_before: float | None = None
    params: Point = field(default=DEFAULT)
    untrained: bool = False

    def as_dict(self) -> dict:
        """What the report records about the run (no timestamp: reports stay comparable);
        away from the default point, ``params_note`` says what the paper's numbers and the
        tuned learning rates become there."""
        out = {"hypothesis_draws": "random" if self.random_draws else "derandomized",
               "retrain": self.retrain_before is not None, "params": self.params.as_dict()}
        if not self.params.is_default:
            out["params_note"] = AWAY_NOTE
        if self.untrained:
            out["trained_runs"] = "skipped (--claims-untrained)"
        return out


#: what the report says of a run away from the default point (claims/harness/params.py)
AWAY_NOTE = ("away from the default point (T = 30, d = 5, sigma_w = sigma_v = 0.1, Sigma_0 = I): the "
             "paper's numbers are reported beside the measured values, not used as tolerances; the "
             "learning rates and betas were tuned at the default point (claims/harness/runs.py)")

