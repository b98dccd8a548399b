r"""The settings (families of systems) as objects that know their own law and routes (docs/math.md section 1).

Every decision that depends on *which* setting a family is -- how its A is built, its
eigenvalue law, its noise shape, whether its law is centrally symmetric, which exact
routes exist for its kappa and moments, whether its systems carry a drawn eigenbasis --
is an attribute of one :class:`Setting` here, read by the code that needs it
(theory/systems.py samples, models/sampler.py simulates, theory/kappa.py and
theory/population.py pick routes, the claims pick Monte Carlo where no quadrature
exists).  Nothing outside this module branches on a setting's letter.

===========  =========  ===========  =========  =========  ======================
setting      basis      eigenvalues  noise      symmetric  kappa routes (exact)
===========  =========  ===========  =========  =========  ======================
``"a"``      identity   U[-r, r)     isotropic  yes        exact rational, quadrature
``"b"``      Haar Q     U[-r, r)     isotropic  yes        quadrature
``"c"``      identity   U[-r, r)     graded     yes        quadrature
``"d"``      P, cond    U[-r, r)     isotropic  yes        none (Monte Carlo)
``"asym"``   identity   U[0, r)      isotropic  no         quadrature
===========  =========  ===========  =========  =========  ======================

*basis*: A = B^-1 diag(lambda) B with B = I (identity), a Haar-orthogonal Q, or P = I +
0.3 G / sqrt(d) conditioned on cond_2(P) <= cond_max ("conditioned"); *graded* noise is
Sigma_w = sigma_w^2 diag(2k/(d+1)), k = 1..d.  Derived from these, not stated twice:

* the coordinate quadrature (theory/coordinate.py) exists where A is orthogonally
  diagonalisable with a basis independent of lambda -- identity or Haar -- (the
  Haar basis with isotropic noise only): its mixture weights are 1 (identity) or
  d Dirichlet(1/2) (Haar);
* the exact rational route (theory/kappa_exact.py) is implemented for diagonal A with
  isotropic noise and centred eigenvalues (setting a);
* a system draws its eigenbasis apart (models/sampler.py) when the basis is
  conditioned, or Haar with noise that is not isotropic (an orthogonal basis leaves
  isotropic noise unchanged in law, so then only c' = Q 1 is drawn);
* the data's variance can be amplified by cond(P)^2 <= cond_max^2 in a conditioned
  basis (models/trainer.py, ``data_scale``).

>>> SETTING_SPECS["b"].kappa_routes, SETTING_SPECS["d"].kappa_routes
(('gauss-legendre',), ())
>>> SETTING_SPECS["asym"].eigenvalue_range(0.9), SETTING_SPECS["a"].eigenvalue_range(1.0)
((0.0, 0.9), (-1.0, 1.0))
>>> [s.name for s in SETTING_SPECS.values() if s.draws_basis(isotropic_noise=True)]
['d']
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .validation import check_choice

__all__ = ["Setting", "SETTING_SPECS", "get_setting", "BASES", "EIGENVALUE_LAWS", "NOISE_SHAPES"]

BASES = ("identity", "haar", "conditioned")
EIGENVALUE_LAWS = ("centred", "positive")
NOISE_SHAPES = ("isotropic", "graded")


@dataclass(frozen=True)
class Setting:
    """One setting's law and what follows from it (module doc).

    ``name``: the letter the paper uses (or "asym", the control); ``description``: the law
    in one line; ``basis``, ``eigenvalues``, ``noise``: one of :data:`BASES`,
    :data:`EIGENVALUE_LAWS`, :data:`NOISE_SHAPES`.
    """

    name: str
    description: str
    basis: str
    eigenvalues: str
    noise: str

    def __post_init__(self):
        check_choice("basis", self.basis, BASES)
        check_choice("eigenvalues", self.eigenvalues, EIGENVALUE_LAWS)
        check_choice("noise", self.noise, NOISE_SHAPES)

    # ---------------------------------------------------------------- the law
    @property
    def symmetric(self) -> bool:
        """Whether the law of A is centrally symmetric (A ~ -A, the theory's premise): the
        eigenvalues are centred and the basis is drawn independently of them."""
        return self.eigenvalues == "centred"

    @property
    def diagonal(self) -> bool:
        """Whether A = diag(lambda) (no basis to draw or store)."""
        return self.basis == "identity"

    def eigenvalue_range(self, radius: float) -> tuple[float, float]:
        """(lo, hi): lambda_i iid U[lo, hi) -- (-r, r) centred, (0, r) positive."""
        return (0.0, radius) if self.eigenvalues == "positive" else (-radius, radius)

    def noise_weights(self, d: int) -> np.ndarray:
        """omega (d,) with Sigma_w = sigma_w^2 diag(omega): 2k/(d+1), k = 1..d, when graded; else ones."""
        if self.noise == "graded":
            return 2.0 * np.arange(1, d + 1) / (d + 1)
        return np.ones(d)

    def draws_basis(self, isotropic_noise: bool) -> bool:
        """Whether each system carries an eigenbasis drawn apart (module doc)."""
        return self.basis == "conditioned" or (self.basis == "haar" and not isotropic_noise)

    def variance_amplification(self, cond_max: float) -> float:
        """The factor by which the basis can amplify Var(c^T x_t): cond(P)^2 <= cond_max^2
        for a conditioned basis, 1 for an orthogonal one."""
        return float(cond_max) ** 2 if self.basis == "conditioned" else 1.0

    # ---------------------------------------------------------------- its routes
    @property
    def quadrature(self) -> bool:
        """Whether the coordinate quadrature applies (theory/coordinate.py): A orthogonally
        diagonalisable in a basis independent of lambda, the noise isotropic where the
        basis is not the identity."""
        return self.basis == "identity" or (self.basis == "haar" and self.noise == "isotropic")

    @property
    def dirichlet_weights(self) -> bool:
        """Whether the quadrature's coordinate weights are d Dirichlet(1/2) (a Haar basis)
        rather than 1 (theory.coordinate.setting_weight_moments)."""
        return self.basis == "haar"

    @property
    def exact_rational(self) -> bool:
        """Whether the exact rational route of kappa is implemented (theory/kappa_exact.py:
        diagonal A, isotropic noise, centred eigenvalues)."""
        return self.basis == "identity" and self.noise == "isotropic" and self.eigenvalues == "centred"

    @property
    def stationary_quadrature(self) -> bool:
        """Whether theory/stationary.py's stationary moments apply (the same premises as
        the exact rational route: diagonal A, isotropic noise, centred eigenvalues)."""
        return self.exact_rational

    @property
    def kappa_routes(self) -> tuple[str, ...]:
        """The routes of kappa that are exact (or exact up to rounding), fastest first at
        small T; empty when only Monte Carlo exists (theory.kappa.choose_method)."""
        return (("exact-rational",) if self.exact_rational else ()) + (("gauss-legendre",) if self.quadrature else ())


_D = "A = P^-1 diag(lambda) P, P = I + 0.3 G/sqrt(d), G_ij ~ N(0,1), cond(P) <= cond_max, c = 1"
#: the settings by name (the order of theory.systems.SETTINGS).
SETTING_SPECS = {
    "a": Setting("a", "A = diag(lambda), lambda_i ~ U[-1,1] iid, c = 1, Sigma_w = sigma_w^2 I",
                 basis="identity", eigenvalues="centred", noise="isotropic"),
    "b": Setting("b", "A = Q^T diag(lambda) Q, Q Haar orthogonal, lambda_i ~ U[-1,1], c = 1",
                 basis="haar", eigenvalues="centred", noise="isotropic"),
    "c": Setting("c", "A = diag(lambda) as (a), Sigma_w = sigma_w^2 diag(2k/(d+1)), k=1..d",
                 basis="identity", eigenvalues="centred", noise="graded"),
    "d": Setting("d", _D, basis="conditioned", eigenvalues="centred", noise="isotropic"),
    "asym": Setting("asym", "negative control: A = diag(lambda), lambda_i ~ U[0,1] (not symmetric), c = 1",
                    basis="identity", eigenvalues="positive", noise="isotropic"),
}


def get_setting(name) -> Setting:
    """The :class:`Setting` called ``name`` (ValueError naming ``setting`` otherwise)."""
    check_choice("setting", name, tuple(SETTING_SPECS))
    return SETTING_SPECS[name]
