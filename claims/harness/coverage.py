"""Which settings a claim covers, by named sets derived from the settings objects.

A claim never lists setting letters: it asks for the settings with a property, read from
:data:`theory.settings.SETTING_SPECS` when this module is imported (so that a setting
registered before the claims load -- tests/test_coverage.py -- is covered by every claim
whose property it has).  Every set keeps the registry's order.

* :data:`SYMMETRIC`   centrally symmetric laws of A: Lemma 4.1 and Theorem 4.1 apply;
* :data:`CONTROLS`    the others: every symmetric claim's negative control;
* :data:`QUADRATURE`  settings whose moments take the exact-up-to-rounding quadrature route
  (theory/coordinate.py), as theory.population.moments_route decides;
  :data:`SYMMETRIC_QUADRATURE` the symmetric ones among them;
* :data:`MONTE_CARLO` symmetric settings whose moments take the Monte Carlo route;
* :data:`EXACT_RATIONAL` settings with the exact rational route of kappa (theory/kappa_exact.py);
* :data:`REFERENCE` the law the stacks of the depth and spectral-shift claims train on:
  the first setting with A diagonal (identity basis), centred eigenvalues and isotropic
  noise -- the law the depth construction and the exact rational route are written for.

How a setting's population moments are computed (quadrature or Monte Carlo) is decided in
one place, theory.population.moments_route, which the claims call.  A check that covers a
run of settings names them in its records by :func:`span` (first-last).

>>> SYMMETRIC, CONTROLS, SYMMETRIC_QUADRATURE, MONTE_CARLO, REFERENCE
(('a', 'b', 'c', 'd'), ('asym',), ('a', 'b', 'c'), ('d',), 'a')
>>> with_property("quadrature") == QUADRATURE
True
>>> span(SYMMETRIC_QUADRATURE), span(SYMMETRIC)
('a-c', 'a-d')
"""
from __future__ import annotations

from theory.population import moments_route
from theory.settings import SETTING_SPECS
from theory.systems import LDSFamily

__all__ = ["ALL", "SYMMETRIC", "CONTROLS", "QUADRATURE", "SYMMETRIC_QUADRATURE", "MONTE_CARLO",
           "EXACT_RATIONAL", "REFERENCE", "with_property", "span"]


def with_property(name: str, value: bool = True, among=None) -> tuple[str, ...]:
    """The settings (of ``among``, default every registered one) whose ``Setting.<name>`` is ``value``."""
    names = tuple(SETTING_SPECS) if among is None else tuple(among)
    return tuple(n for n in names if bool(getattr(SETTING_SPECS[n], name)) is value)


ALL: tuple[str, ...] = tuple(SETTING_SPECS)
SYMMETRIC = with_property("symmetric")
CONTROLS = with_property("symmetric", False)
QUADRATURE = tuple(n for n in ALL if moments_route(LDSFamily(n)) == "quadrature")
SYMMETRIC_QUADRATURE = tuple(n for n in SYMMETRIC if n in QUADRATURE)
MONTE_CARLO = tuple(n for n in SYMMETRIC if n not in QUADRATURE)
EXACT_RATIONAL = with_property("exact_rational")
REFERENCE: str = next(n for n, s in SETTING_SPECS.items()
                      if (s.basis, s.eigenvalues, s.noise) == ("identity", "centred", "isotropic"))


def span(names) -> str:
    """The settings ``names`` as a check's records name them together: ``"first-last"``
    (the settings in registry order; one name alone is itself).  ValueError naming
    ``names`` when it is empty.

    >>> span(("a", "b", "c")), span(("d",))
    ('a-c', 'd')
    """
    names = tuple(names)
    if not names:
        raise ValueError("names must hold at least one setting, got none")
    return names[0] if len(names) == 1 else f"{names[0]}-{names[-1]}"
