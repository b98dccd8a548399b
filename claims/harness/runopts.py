"""Options of the current claims run that are not compute budgets: random draws, retraining.

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

>>> RunOptions()
RunOptions(random_draws=False, retrain_before=None)
"""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["RunOptions"]


@dataclass(frozen=True)
class RunOptions:
    random_draws: bool = False
    retrain_before: float | None = None

    def as_dict(self) -> dict:
        """What the report records about the run (no timestamp: reports stay comparable)."""
        return {"hypothesis_draws": "random" if self.random_draws else "derandomized",
                "retrain": self.retrain_before is not None}

