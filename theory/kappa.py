r"""kappa of Theorem 4.1 (paper eq. 15) for any family: result type, Monte Carlo, and the dispatcher.

Definition (docs/math.md section 4; 1-based times, window s = 1, n = T - 2)::

    kappa = (T-2) E[y_{T-1} y_T S] / E[y_{T-1}^2 S^2],     S = sum_{i=1..T-2} y_i y_{i+1},

the expectation taken over the random system A of the family *and* the Gaussian noise.

Where each piece lives:

- :mod:`theory.kappa_forms`  the two Gaussian moments as multilinear forms M2, M3 in the
  covariance K (Isserlis and Magnus), O(T^2) per system;
- :mod:`theory.kappa_exact`  setting (a): the exact rational route (Kronecker
  substitution, :func:`kappa_exact_a`) and float64 Gauss-Legendre
  (:func:`kappa_quadrature_a`), both over the one-coordinate covariance G(lambda) of
  :mod:`theory.coordinate`;
- this module: :class:`KappaResult`, the Monte Carlo estimators (any setting) and
  :func:`kappa`, which picks a route for a family;
- :mod:`theory.reference`  the independent sympy route :func:`theory.reference.kappa_symbolic`
  (explicit Wick sums, integrated over each lambda_k), used only as a check.

Monte Carlo (any setting)
-------------------------
:func:`kappa_mc_moments` draws systems, computes each one's exact covariance K(A_j) and the
exact conditional moments N_j = M2(K_j, K_j), D_j = M3(K_j, K_j, K_j) (only the average
over A is random), then kappa = (T-2) mean(N) / mean(D) with a delta-method standard
error (T-2) sd(N_j - R D_j) / (sqrt(m) mean(D)), R = mean(N)/mean(D), which accounts for
the N-D covariance.  :func:`kappa_mc_trajectories` is the independent raw-trajectory
estimator of the same ratio.

Reference (setting (a), d = 5, T = 30, sigma_w = sigma_v = 0.1, Sigma_0 = I):
kappa = 0.2052454015138651...
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from fractions import Fraction

import numpy as np

from .kappa_exact import (
    QUADRATURE_SETTINGS,
    kappa_exact_a,
    kappa_moments_exact_a,
    kappa_moments_quadrature,
    kappa_moments_quadrature_a,
    kappa_quadrature_a,
)
from .kappa_forms import moment_forms
from .systems import LDSFamily, covariance
from .validation import check_generator, check_positive_int

__all__ = [
    "KappaResult",
    "METHODS",
    "kappa",
    "kappa_exact_a",
    "kappa_moments_exact_a",
    "kappa_quadrature_a",
    "kappa_moments_quadrature_a",
    "kappa_moments_quadrature",
    "kappa_mc_moments",
    "kappa_mc_trajectories",
    "family_variances",
    "moment_forms",
]

#: method names accepted by :func:`kappa` (plus "auto", and the aliases in _ALIASES).
METHODS = ("exact-rational", "gauss-legendre", "mc-moments", "mc-trajectories")
_ALIASES = {"exact": "exact-rational", "quadrature": "gauss-legendre"}


@dataclass(frozen=True)
class KappaResult:
    """One kappa estimate.

    ``kappa`` (float), ``exact`` (Fraction or None), ``stderr`` (0.0 for exact and
    quadrature), ``method``, ``numerator`` = E[y_{T-1} y_T S] and ``denominator`` =
    E[y_{T-1}^2 S^2] (estimates; kappa = (T-2) numerator / denominator), and ``details``
    (plain ints / floats / strs only: T, d, m, seed, ...).
    """

    kappa: float
    exact: Fraction | None
    stderr: float
    method: str
    numerator: float
    denominator: float
    details: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        """JSON-ready dict; ``exact`` as the string "p/q" (or None)."""
        return {
            "kappa": float(self.kappa),
            "exact": None if self.exact is None else f"{self.exact.numerator}/{self.exact.denominator}",
            "stderr": float(self.stderr),
            "method": self.method,
            "numerator": float(self.numerator),
            "denominator": float(self.denominator),
            "details": dict(self.details),
        }


# --------------------------------------------------------------------------- Monte Carlo

def _ratio(Nv: np.ndarray, Dv: np.ndarray, T: int):
    """kappa = (T-2) mean N / mean D, delta-method stderr (with the N-D covariance)."""
    m = Nv.shape[0]
    Nm, Dm = float(Nv.mean()), float(Dv.mean())
    R = Nm / Dm
    if m > 1:
        resid = Nv - R * Dv
        se = (T - 2) * float(resid.std(ddof=1)) / (math.sqrt(m) * Dm)
        se_n = float(Nv.std(ddof=1)) / math.sqrt(m)
        se_d = float(Dv.std(ddof=1)) / math.sqrt(m)
    else:
        se = se_n = se_d = math.inf
    return (T - 2) * R, se, Nm, Dm, se_n, se_d


def _family_details(family: LDSFamily) -> dict:
    return {"setting": family.setting, "T": int(family.T), "d": int(family.d),
            "sigma_w": float(family.sigma_w), "sigma_v": float(family.sigma_v),
            "sigma_0": float(family.sigma_0)}


def _check_family(family):
    if not isinstance(family, LDSFamily):
        raise ValueError(f"family must be an LDSFamily, got {type(family).__name__}")
    return family


def _mc_result(family: LDSFamily, m: int, chunk: int, draw, method: str) -> KappaResult:
    """Ratio estimate from ``draw(c) -> (N_c, D_c)`` called in chunks of <= chunk, m in all."""
    Nv = np.empty(m)
    Dv = np.empty(m)
    done = 0
    while done < m:
        c = min(chunk, m - done)
        Nv[done:done + c], Dv[done:done + c] = draw(c)
        done += c
    k, se, Nm, Dm, se_n, se_d = _ratio(Nv, Dv, family.T)
    det = _family_details(family) | {"m": m, "chunk": chunk, "numerator_stderr": se_n,
                                     "denominator_stderr": se_d}
    return KappaResult(kappa=k, exact=None, stderr=se, method=method,
                       numerator=Nm, denominator=Dm, details=det)


def kappa_mc_moments(family: LDSFamily, m: int, rng: np.random.Generator, *,
                     chunk: int = 4096) -> KappaResult:
    """Monte Carlo over systems only: exact per-system Gaussian moments, any setting.

    Draws ``m`` systems in chunks of ``chunk``, computes K(A_j) exactly and
    N_j = E[y_{T-1} y_T S | A_j], D_j = E[y_{T-1}^2 S^2 | A_j] in closed form (O(T^2)
    each), returns (T-2) mean(N)/mean(D) with a delta-method stderr.
    """
    family = _check_family(family)
    m = check_positive_int("m", m)
    chunk = check_positive_int("chunk", chunk)
    rng = check_generator("rng", rng)
    T = family.T

    def draw(c):
        return moment_forms(covariance(family.sample_systems(rng, c), T), T)

    return _mc_result(family, m, chunk, draw, "mc-moments")


def kappa_mc_trajectories(family: LDSFamily, m: int, rng: np.random.Generator,
                          chunk: int = 100_000) -> KappaResult:
    """Monte Carlo from raw simulated trajectories (systems and noise both sampled).

    Ratio of the sample means of f = y_{T-1} y_T S and g = y_{T-1}^2 S^2 over ``m``
    trajectories (one per fresh system), times T-2, with a delta-method stderr.
    """
    family = _check_family(family)
    m = check_positive_int("m", m)
    chunk = check_positive_int("chunk", chunk)
    rng = check_generator("rng", rng)
    T = family.T

    def draw(c):
        _, y = family.sample(rng, c)
        S = np.einsum("mi,mi->m", y[:, :T - 2], y[:, 1:T - 1])
        ya = y[:, T - 2]
        return ya * y[:, T - 1] * S, (ya * S) ** 2

    return _mc_result(family, m, chunk, draw, "mc-trajectories")


# --------------------------------------------------------------------------- dispatcher

def family_variances(family: LDSFamily):
    """(sigma_w2, sigma_v2, sigma_02) as exact Fractions from the family's std devs,
    each read by its decimal repr (0.1 -> 1/10, squared 1/100)."""
    return tuple(Fraction(repr(float(getattr(family, n)))) ** 2
                 for n in ("sigma_w", "sigma_v", "sigma_0"))


def kappa(family: LDSFamily, *, method: str = "auto", m: int = 200_000, seed: int = 0) -> KappaResult:
    """kappa for a family.

    ``method``: "auto" (setting "a" -> "exact-rational", others -> "mc-moments"),
    "exact-rational" (alias "exact"), "gauss-legendre" (alias "quadrature"),
    "mc-moments", "mc-trajectories".  ``m`` and ``seed`` are used by the Monte Carlo
    methods only (``np.random.default_rng(seed)``).
    """
    family = _check_family(family)
    if not isinstance(method, str):
        raise ValueError(f"method must be a string, got {method!r}")
    meth = _ALIASES.get(method, method)
    if meth == "auto":
        meth = "exact-rational" if family.setting == "a" else "mc-moments"
    if meth not in METHODS:
        raise ValueError(f"method must be 'auto' or one of {METHODS} (aliases {tuple(_ALIASES)}), "
                         f"got {method!r}")
    if meth == "exact-rational" and family.setting != "a":
        raise ValueError(f"method {method!r} is only available for setting 'a', "
                         f"got setting {family.setting!r}; use 'gauss-legendre' or 'mc-moments'")
    if meth == "gauss-legendre" and family.setting not in QUADRATURE_SETTINGS:
        raise ValueError(f"method {method!r} is only available for settings "
                         f"{QUADRATURE_SETTINGS}, got setting {family.setting!r}; use 'mc-moments'")
    base = _family_details(family)
    if meth == "exact-rational":
        sw2, sv2, s02 = family_variances(family)
        num, den = kappa_moments_exact_a(family.T, family.d, sw2, sv2, s02)
        ex = (family.T - 2) * num / den
        det = base | {"sigma_w2": str(sw2), "sigma_v2": str(sv2), "sigma_02": str(s02)}
        return KappaResult(kappa=float(ex), exact=ex, stderr=0.0, method=meth,
                           numerator=float(num), denominator=float(den), details=det)
    if meth == "gauss-legendre":
        num, den = kappa_moments_quadrature(family)
        det = base | {"nodes": 3 * family.T + 1}
        return KappaResult(kappa=(family.T - 2) * num / den, exact=None, stderr=0.0, method=meth,
                           numerator=num, denominator=den, details=det)
    m = check_positive_int("m", m)
    seed = check_positive_int("seed", seed, minimum=0)
    rng = np.random.default_rng(seed)
    fn = kappa_mc_moments if meth == "mc-moments" else kappa_mc_trajectories
    res = fn(family, m, rng)
    return replace(res, details=res.details | {"seed": seed})
