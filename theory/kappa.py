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

from .coordinate import QUADRATURE_SETTINGS
from .kappa_exact import kappa_moments_exact_a, kappa_moments_quadrature, kappa_ratio
from .kappa_forms import moment_forms
from .jsonvalues import json_float, to_json
from .settings import SETTING_SPECS
from .systems import LDSFamily, covariance
from .validation import check_generator, check_positive_int

__all__ = [
    "KappaResult",
    "METHODS",
    "kappa",
    "kappa_mc_moments",
    "kappa_mc_trajectories",
    "family_variances",
    "choose_method",
    "exact_seconds",
    "route_bytes",
]

#: method names accepted by :func:`kappa` (plus "auto", and the aliases in _ALIASES).
METHODS = ("exact-rational", "gauss-legendre", "mc-moments", "mc-trajectories")
_ALIASES = {"exact": "exact-rational", "quadrature": "gauss-legendre"}


@dataclass(frozen=True)
class KappaResult:
    """One kappa estimate.

    ``kappa`` (float), ``exact`` (Fraction or None), ``stderr`` (0.0 for exact and
    quadrature), ``method``, ``numerator`` = E[y_{T-1} y_T S] and ``denominator`` =
    E[y_{T-1}^2 S^2] (kappa = (T-2) numerator / denominator, :func:`kappa_ratio`):
    Fractions on the exact route, float estimates otherwise; and ``details`` (plain ints /
    floats / strs only: T, d, m, seed, ...).
    """

    kappa: float
    exact: Fraction | None
    stderr: float
    method: str
    numerator: float | Fraction
    denominator: float | Fraction
    details: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        """Strict-JSON dict.  Exact values only as exact strings "p/q": ``exact`` (kappa, or
        None), and on the exact route ``numerator`` and ``denominator`` (the moments, whose
        ratio times T - 2 is ``exact``); numbers are floats.  A non-finite number (a
        standard error from a single sample, an overflow) is written as ``"NaN"`` or
        ``"Infinity"`` (theory/jsonvalues.py, the project's one policy), so the output is
        strict JSON.

        >>> r = KappaResult(0.5, Fraction(1, 2), 0.0, "exact-rational", Fraction(1, 12), Fraction(1, 3))
        >>> {k: r.to_json()[k] for k in ("kappa", "exact", "numerator", "denominator")}
        {'kappa': 0.5, 'exact': '1/2', 'numerator': '1/12', 'denominator': '1/3'}
        """
        def number(x):
            return f"{x.numerator}/{x.denominator}" if isinstance(x, Fraction) else json_float(x)

        out = {
            "kappa": json_float(self.kappa),
            "exact": None if self.exact is None else number(self.exact),
            "stderr": json_float(self.stderr),
            "method": self.method,
            "numerator": number(self.numerator),
            "denominator": number(self.denominator),
            "details": to_json(dict(self.details)),
        }
        return out


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
    return kappa_ratio(T, Nm, Dm), se, Nm, Dm, se_n, se_d


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


#: seconds of the exact rational route at T = 30, d = 5 on one core, and its growth in T
#: (measured: 0.13 s, 2.1 s, 13.5 s, 51 s at T = 30, 60, 90, 120; about T^4.7).
EXACT_SECONDS_AT_30 = 0.13
EXACT_GROWTH = 4.7
#: "auto" uses the exact rational route while it is expected to take at most this long.
AUTO_EXACT_SECONDS = 5.0
#: settings with an exact rational route (theory/settings.py, ``Setting.exact_rational``).
EXACT_SETTINGS = tuple(name for name, spec in SETTING_SPECS.items() if spec.exact_rational)
#: bytes a kappa route may plan to hold (the guard against a T that cannot fit).
MAX_BYTES = 4 * 2 ** 30


def exact_seconds(T: int, d: int) -> float:
    """Expected seconds of the exact rational route (:data:`EXACT_SECONDS_AT_30` scaled by
    (T/30)^:data:`EXACT_GROWTH` and, mildly, by d)."""
    return EXACT_SECONDS_AT_30 * (T / 30.0) ** EXACT_GROWTH * max(1.0, d / 5.0)


def route_bytes(family: LDSFamily, method: str, chunk: int | None = None) -> int:
    """Bytes the route holds at its peak: the quadrature's (3T+1) node covariances of size
    T x T and their forms, a Monte Carlo chunk of covariances (mc-moments) or trajectories
    (mc-trajectories); the exact route's integers are small (0)."""
    T = family.T
    if method == "gauss-legendre":
        return 8 * 6 * (3 * T + 1) * T * T
    d = family.d
    if method == "mc-moments":
        return 8 * 6 * (chunk or 4096) * (T * T + d * d)
    if method == "mc-trajectories":
        return 8 * 6 * (chunk or 100_000) * (T + d + d * d)
    return 0


def exact_routes(family: LDSFamily) -> tuple[str, ...]:
    """The setting's exact kappa routes (``Setting.kappa_routes``) that apply to this family:
    the exact rational route integrates lambda over [-1, 1] exactly, so only at radius 1;
    the quadrature maps its nodes to [-r, r] (theory.coordinate.family_quadrature).

    >>> exact_routes(LDSFamily("a")), exact_routes(LDSFamily("a", radius=0.9))
    (('exact-rational', 'gauss-legendre'), ('gauss-legendre',))
    """
    routes = family.spec.kappa_routes
    return routes if family.radius == 1 else tuple(r for r in routes if r != "exact-rational")


def choose_method(family: LDSFamily) -> tuple[str, str]:
    """(method, why) of ``method="auto"``: the fastest route that is exact where one exists --
    exact rational in setting a while :func:`exact_seconds` <= :data:`AUTO_EXACT_SECONDS`,
    quadrature (exact up to rounding) in settings a, b, c and the control, Monte Carlo over
    systems only in setting d."""
    family = _check_family(family)
    routes = exact_routes(family)
    if "exact-rational" in routes:
        sec = exact_seconds(family.T, family.d)
        if sec <= AUTO_EXACT_SECONDS:
            return "exact-rational", f"exact rational (setting {family.setting}, T = {family.T}: about {sec:.2g} s)"
        return "gauss-legendre", (f"quadrature, exact up to rounding (the exact rational route would take "
                                  f"about {sec:.2g} s at T = {family.T})")
    if "gauss-legendre" in routes:
        return "gauss-legendre", f"quadrature, exact up to rounding (setting {family.setting})"
    return "mc-moments", f"Monte Carlo over systems (setting {family.setting} has no exact route)"


def _check_variances(family: LDSFamily, variances):
    """The exact variances (sigma_w^2, sigma_v^2, sigma_0^2) of the exact route: the
    family's decimal ones (:func:`family_variances`) by default, or three Fractions that
    are the squares of the family's standard deviations to 1e-12, relative (e.g. 1/9 for
    sigma_w = 1/3, whose float is 0.333...), compared in exact arithmetic.

    >>> _check_variances(LDSFamily("a", sigma_w=1 / 3), (Fraction(1, 9), Fraction(1, 100), 1))[0]
    Fraction(1, 9)
    """
    if variances is None:
        return family_variances(family)
    if not isinstance(variances, (tuple, list)) or len(variances) != 3:
        raise ValueError(f"variances must be three Fractions (sigma_w^2, sigma_v^2, sigma_0^2), got {variances!r}")
    out = []
    for name, v in zip(("sigma_w", "sigma_v", "sigma_0"), variances):
        if isinstance(v, bool) or not isinstance(v, (int, Fraction)) or v < 0:
            raise ValueError(f"variances: {name}^2 must be a Fraction >= 0, got {v!r}")
        square = Fraction(getattr(family, name)) ** 2           # the float's exact value, squared
        if abs(square - v) > Fraction(1, 10 ** 12) * max(square, Fraction(v)):
            raise ValueError(f"variances: {name}^2 = {v} is not the family's {name} = "
                             f"{getattr(family, name)!r} squared")
        out.append(Fraction(v))
    return tuple(out)


def kappa(family: LDSFamily, *, method: str = "auto", m: int = 200_000, seed: int = 0,
          variances=None) -> KappaResult:
    """kappa for a family: the one place that picks a route (the command line and the claims
    call it).

    ``method``: "auto" (:func:`choose_method`; the choice and its reason go into
    ``details["auto"]``), "exact-rational" (alias "exact"), "gauss-legendre" (alias
    "quadrature"), "mc-moments", "mc-trajectories".  ``m`` (>= 2, for a standard error) and
    ``seed`` are used by the Monte Carlo methods only (``np.random.default_rng(seed)``).
    ``variances``: exact variances for the exact route when the standard deviations are
    not decimals (sigma_w = 1/3: pass Fraction(1, 9); :func:`_check_variances`).  A route
    that would hold more than :data:`MAX_BYTES` is refused before any work (ValueError
    naming T).

    >>> kappa(LDSFamily("a", T=6, d=2)).exact
    Fraction(...)
    """
    family = _check_family(family)
    exact_variances = _check_variances(family, variances)
    if not isinstance(method, str):
        raise ValueError(f"method must be a string, got {method!r}")
    meth = _ALIASES.get(method, method)
    why = None
    if meth == "auto":
        meth, why = choose_method(family)
    if meth not in METHODS:
        raise ValueError(f"method must be 'auto' or one of {METHODS} (aliases {tuple(_ALIASES)}), "
                         f"got {method!r}")
    if meth == "exact-rational" and "exact-rational" not in exact_routes(family):
        raise ValueError(f"method {method!r} is only available for settings {EXACT_SETTINGS} at radius 1, "
                         f"got setting {family.setting!r}, radius {family.radius:g}; use 'gauss-legendre' or "
                         f"'mc-moments'")
    if meth == "gauss-legendre" and "gauss-legendre" not in exact_routes(family):
        raise ValueError(f"method {method!r} is only available for settings "
                         f"{QUADRATURE_SETTINGS}, got setting {family.setting!r}; use 'mc-moments'")
    need = route_bytes(family, meth)
    if meth == "mc-moments":                      # a chunk that fits, if any does
        chunk = max(1, min(4096, MAX_BYTES // max(1, route_bytes(family, meth, 1))))
        need = route_bytes(family, meth, chunk)
    if need > MAX_BYTES:
        raise ValueError(f"T = {family.T} needs about {need / 2 ** 30:.3g} GiB for method {meth!r}, "
                         f"more than the {MAX_BYTES / 2 ** 30:g} GiB allowed; use a smaller T")
    base = _family_details(family) | ({"auto": why} if why else {})
    if meth == "exact-rational":
        sw2, sv2, s02 = exact_variances
        num, den = kappa_moments_exact_a(family.T, family.d, sw2, sv2, s02)
        ex = kappa_ratio(family.T, num, den)
        det = base | {"sigma_w2": str(sw2), "sigma_v2": str(sv2), "sigma_02": str(s02)}
        return KappaResult(kappa=float(ex), exact=ex, stderr=0.0, method=meth,
                           numerator=num, denominator=den, details=det)
    if meth == "gauss-legendre":
        num, den = kappa_moments_quadrature(family)
        det = base | {"nodes": 3 * family.T + 1}
        return KappaResult(kappa=kappa_ratio(family.T, num, den), exact=None, stderr=0.0, method=meth,
                           numerator=num, denominator=den, details=det)
    m = check_positive_int("m", m, minimum=2)
    if 16 * m > MAX_BYTES:                        # the per-sample N_j, D_j arrays
        raise ValueError(f"m = {m} needs about {16 * m / 2 ** 30:.3g} GiB for its samples, more than "
                         f"the {MAX_BYTES / 2 ** 30:g} GiB allowed; use fewer systems")
    seed = check_positive_int("seed", seed, minimum=0)
    rng = np.random.default_rng(seed)
    if meth == "mc-moments":
        res = kappa_mc_moments(family, m, rng, chunk=chunk)
    else:
        res = kappa_mc_trajectories(family, m, rng)
    return replace(res, details=res.details | base | {"seed": seed})
