r"""System families ("settings") of noisy linear dynamical systems (docs/math.md section 1).

Model, times t = 1..T (the observations are y_1..y_T; x_0 is never observed)::

    x_0 ~ N(0, Sigma_0),   x_t = A x_{t-1} + w_t,  w_t ~ N(0, Sigma_w),
    y_t = c^T x_t + v_t,   v_t ~ N(0, sigma_v^2).

Given a system, y = (y_1..y_T) is Gaussian with mean 0 and covariance (exact, float64)::

    K[i, j] = c^T A^(i-j) Pi_j c + sigma_v^2 [i = j]     (i >= j, 1-based times),
    Pi_t = A Pi_{t-1} A^T + Sigma_w,   Pi_0 = Sigma_0,

so Pi_1 = A Sigma_0 A^T + Sigma_w is the covariance of x_1 (not Sigma_0).

Settings: ``"a"``, ``"b"``, ``"c"``, ``"d"`` and the control ``"asym"``, each a
:class:`~theory.settings.Setting` that states its law (basis, eigenvalue law, noise shape;
the table in theory/settings.py, the mathematics in docs/math.md section 1, and why setting
d is mildly non-normal in docs/notes.md, "Setting d: why a mild non-normality").  Every one
but the control draws A from a centrally symmetric law, A ~ -A.

Defaults (paper): d = 5, T = 30, sigma_w = sigma_v = 0.1, Sigma_0 = sigma_0^2 I with
sigma_0 = 1.  Each family states its law in one place for every sampler:
:attr:`LDSFamily.eigenvalue_range` (lambda_i ~ U[lo, hi)) and
:attr:`LDSFamily.noise_weights` (Sigma_w = sigma_w^2 diag(omega)); :func:`psd_factor`
is the one square root of a noise covariance.

Example
-------
>>> import numpy as np
>>> fam = LDSFamily("a", d=2, T=4)
>>> sys_ = fam.sample_systems(np.random.default_rng(0), 3)
>>> sys_.A.shape, sys_.c.shape
((3, 2, 2), (3, 2))
>>> y = sys_.simulate(np.random.default_rng(1))
>>> y.shape
(3, 4)
>>> fam.covariance(sys_).shape
(3, 4, 4)
>>> LDSFamily("asym").eigenvalue_range, LDSFamily("c", d=3).noise_weights
((0.0, 1.0), array([0.5, 1. , 1.5]))
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np

from .bases import conditioned_gaussian, haar_orthogonal
from .settings import SETTING_SPECS, Setting
from .validation import (
    check_choice,
    check_finite_array,
    check_generator,
    check_nonneg_real,
    check_positive_int,
    check_real,
    check_type,
)

__all__ = ["SETTINGS", "LDSFamily", "Systems", "covariance", "get_family", "SYMMETRIC_SETTINGS",
           "psd_factor", "MAX_SIGMA", "MAX_D", "MAX_RADIUS"]

SETTINGS = tuple(SETTING_SPECS)
#: settings whose law of A is centrally symmetric (A ~ -A): the theory's premise.
SYMMETRIC_SETTINGS = tuple(name for name, spec in SETTING_SPECS.items() if spec.symmetric)


@dataclass(frozen=True, eq=False)
class Systems:
    """A batch of ``m`` linear dynamical systems sharing the noise model.

    Attributes: ``A`` (m, d, d), ``c`` (m, d), ``Sigma_w`` (d, d), ``Sigma_0`` (d, d),
    ``sigma_v`` (float), ``lam`` (m, d) eigenvalues when A is diagonal (else None), and
    ``T`` the default horizon for :meth:`simulate` / :meth:`covariance` (may be None).

    Arrays are validated and stored as float64 arrays; ``lam``, when given, must be
    exactly the diagonal of a diagonal ``A`` (simulate() uses lam, covariance() uses A).
    Batches compare and hash by identity.
    """

    A: np.ndarray
    c: np.ndarray
    Sigma_w: np.ndarray
    Sigma_0: np.ndarray
    sigma_v: float
    lam: np.ndarray | None = None
    T: int | None = None

    def __post_init__(self):
        A = check_finite_array("A", self.A, ndim=3)
        if A.shape[1] != A.shape[2]:
            raise ValueError(f"A must be a batch of square matrices (m, d, d), got shape {A.shape}")
        m, d, _ = A.shape
        if m < 1 or d < 1:
            raise ValueError(f"A must hold at least one system of dimension >= 1, got shape {A.shape}")
        c = check_finite_array("c", self.c, ndim=2)
        if c.shape != (m, d):
            raise ValueError(f"c must have shape {(m, d)}, got {c.shape}")
        object.__setattr__(self, "A", A)
        object.__setattr__(self, "c", c)
        for name in ("Sigma_w", "Sigma_0"):
            S = check_finite_array(name, getattr(self, name), ndim=2)
            if S.shape != (d, d):
                raise ValueError(f"{name} must have shape {(d, d)}, got {S.shape}")
            if np.abs(S - S.T).max() > 1e-10 * np.abs(S).max():
                raise ValueError(f"{name} must be symmetric")
            if np.linalg.eigvalsh(S).min() < -1e-12 * max(1.0, np.abs(S).max()):
                raise ValueError(f"{name} must be positive semi-definite")
            object.__setattr__(self, name, S)
        object.__setattr__(self, "sigma_v", check_nonneg_real("sigma_v", self.sigma_v))
        if self.lam is not None:
            lam = check_finite_array("lam", self.lam, ndim=2)
            if lam.shape != (m, d):
                raise ValueError(f"lam must have shape {(m, d)}, got {lam.shape}")
            # simulate() uses lam, covariance() uses A: they must describe the same systems.
            diag = np.zeros_like(A)
            diag[:, np.arange(d), np.arange(d)] = lam
            if not np.array_equal(A, diag):
                raise ValueError("lam must be the diagonal of A, and A must then be diagonal")
            object.__setattr__(self, "lam", lam)
        if self.T is not None:
            object.__setattr__(self, "T", check_positive_int("T", self.T))

    @property
    def m(self) -> int:
        return self.A.shape[0]

    @property
    def d(self) -> int:
        return self.A.shape[1]

    def _horizon(self, T):
        if T is None:
            if self.T is None:
                raise ValueError("T must be given for a Systems batch without a default T")
            return self.T
        return check_positive_int("T", T)

    def covariance(self, T: int | None = None) -> np.ndarray:
        """Exact covariance K (m, T, T) of (y_1..y_T); see :func:`covariance`."""
        return covariance(self, self._horizon(T))

    def simulate(self, rng: np.random.Generator, T: int | None = None, *,
                 dtype=np.float64) -> np.ndarray:
        """One trajectory per system: array (m, T) of y_1..y_T.

        Vectorised over systems (the only Python loop runs over the T time steps, in
        place).  ``T`` defaults to the value the batch was drawn for (see
        LDSFamily.sample).  ``dtype`` is float64 (default) or float32 (faster normals,
        same law up to rounding).  Draws, in this order, (T+1, m, d) then (T, m)
        standard normals from ``rng`` (the caller's generator, advanced in place).
        """
        T = self._horizon(T)
        check_generator("rng", rng)
        dt = _float_dtype(dtype)
        m, d = self.m, self.d
        z = rng.standard_normal((T + 1, m, d), dtype=dt)   # z[0] -> x_0, z[t] -> w_t -> x_t
        v = rng.standard_normal((T, m), dtype=dt)
        _scale_in_place(z[:1], self.Sigma_0, dt)
        _scale_in_place(z[1:], self.Sigma_w, dt)
        if self.lam is not None:
            lam = self.lam.astype(dt, copy=False)
            tmp = np.empty((m, d), dtype=dt)
            for t in range(1, T + 1):
                np.multiply(lam, z[t - 1], out=tmp)
                z[t] += tmp
        else:
            A = self.A.astype(dt, copy=False)
            for t in range(1, T + 1):
                z[t] += np.matmul(A, z[t - 1][:, :, None])[:, :, 0]
        c = self.c.astype(dt, copy=False)
        y = np.einsum("tmd,md->mt", z[1:], c)
        y += dt.type(self.sigma_v) * v.T
        return np.ascontiguousarray(y)


def _float_dtype(dtype) -> np.dtype:
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise ValueError(f"dtype must be float32 or float64, got {dtype!r}") from None
    if dt not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise ValueError(f"dtype must be float32 or float64, got {dtype!r}")
    return dt


def _scale_in_place(z: np.ndarray, S: np.ndarray, dt: np.dtype) -> None:
    """z[..., :] <- L z (L L^T = S, :func:`psd_factor`) for standard normals z of shape (k, m, d)."""
    kind, L = psd_factor(S)
    if kind == "scalar":
        z *= dt.type(L)
    elif kind == "diag":
        z *= L.astype(dt)
    else:
        np.matmul(z, L.astype(dt).T, out=z)


def _is_diagonal(S: np.ndarray) -> bool:
    return bool(np.all(S == np.diag(np.diag(S))))


def _is_scaled_identity(S: np.ndarray) -> bool:
    return bool(np.all(S == S[0, 0] * np.eye(S.shape[0])))


def psd_factor(S: np.ndarray):
    """A factor L with L L^T = S (S symmetric PSD), in its cheapest form.

    ``("scalar", c)``: S = c^2 I, L = c I (a float);  ``("diag", v)``: S diagonal and
    positive definite, L = diag(v), v = sqrt(diag S) (which is its Cholesky factor);
    ``("full", L)``: Cholesky when S > 0, else the eigen-square-root V sqrt(w).  The
    numpy and torch samplers both scale their normals by it.

    >>> psd_factor(np.diag([4.0, 9.0]))
    ('diag', array([2., 3.]))
    """
    if _is_scaled_identity(S):
        return "scalar", float(np.sqrt(S[0, 0]))
    if _is_diagonal(S) and np.all(np.diag(S) > 0):
        return "diag", np.sqrt(np.diag(S))
    try:
        return "full", np.linalg.cholesky(S)
    except np.linalg.LinAlgError:
        w, V = np.linalg.eigh(S)
        return "full", V * np.sqrt(np.clip(w, 0.0, None))


def covariance(systems: Systems, T: int) -> np.ndarray:
    r"""Exact covariance of (y_1..y_T) for each system, shape (m, T, T), float64.

    ``K[i, j] = c^T A^(i-j) Pi_j c + sigma_v^2 [i = j]`` for i >= j (1-based), with
    ``Pi_t = A Pi_{t-1} A^T + Sigma_w`` and ``Pi_0 = Sigma_0``.  Array index ``k`` holds
    time ``k + 1``.

    Worked example (d = 1, A = a, c = 1, Sigma_0 = 1, Sigma_w = q, sigma_v = r)::

        Pi_1 = a^2 + q,  K[0, 0] = a^2 + q + r^2,  K[1, 0] = a (a^2 + q).
    """
    check_type("systems", systems, Systems, "a Systems batch")
    T = check_positive_int("T", T)
    A = systems.A
    c = systems.c
    m, d, _ = A.shape
    Sw = systems.Sigma_w
    u = np.empty((m, T, d))           # u[:, j] = Pi_{j+1} c
    r = np.empty((m, T, d))           # r[:, k] = c^T A^k
    rk = c.copy()
    diag_noise = _is_diagonal(systems.Sigma_0) and _is_diagonal(Sw)
    if systems.lam is not None and diag_noise:
        # diagonal A and diagonal noise: Pi_t stays diagonal, p_t = lam^2 p_{t-1} + diag(Sigma_w)
        lam = systems.lam
        lam2 = lam * lam
        p = np.broadcast_to(np.diag(systems.Sigma_0), (m, d)).copy()
        sw = np.diag(Sw)
        for t in range(T):
            np.multiply(lam2, p, out=p)
            p += sw
            np.multiply(p, c, out=u[:, t])
            r[:, t] = rk
            rk = rk * lam
    elif systems.lam is not None:     # diagonal A: Pi_t = (lam lam^T) * Pi_{t-1} + Sigma_w
        lam = systems.lam
        LL = lam[:, :, None] * lam[:, None, :]
        Pi = np.broadcast_to(systems.Sigma_0, (m, d, d)).copy()
        for t in range(T):
            np.multiply(LL, Pi, out=Pi)
            Pi += Sw
            u[:, t] = np.einsum("mij,mj->mi", Pi, c)
            r[:, t] = rk
            rk = rk * lam
    else:
        Pi = np.broadcast_to(systems.Sigma_0, (m, d, d))
        AT = np.swapaxes(A, 1, 2)
        for t in range(T):
            Pi = A @ Pi @ AT
            Pi += Sw
            u[:, t] = np.einsum("mij,mj->mi", Pi, c)
            r[:, t] = rk
            rk = np.matmul(rk[:, None, :], A)[:, 0, :]
    RU = r @ np.swapaxes(u, 1, 2)     # RU[:, k, j] = c^T A^k Pi_{j+1} c = K[j + k, j]
    K = np.take(RU.reshape(m, T * T), _band_gather(T), axis=1).reshape(m, T, T)
    K.reshape(m, T * T)[:, ::T + 1] += float(systems.sigma_v) ** 2
    return K


@functools.lru_cache(maxsize=64)
def _band_gather(T: int) -> np.ndarray:
    """Flat indices into RU (T, T) so that K[i, j] = RU[|i - j|, min(i, j)]."""
    i, j = np.indices((T, T))
    idx = (np.abs(i - j) * T + np.minimum(i, j)).ravel()
    idx.setflags(write=False)
    return idx


#: largest standard deviation a family accepts: sums of y^12 over 1e6 trajectories (the
#: standard errors of order-6 moments) stay within float64 for T d up to 1e4.
MAX_SIGMA = 1e20
#: largest state dimension a family accepts: sampling m systems holds m d^2 numbers.
MAX_D = 1000
#: largest eigenvalue radius a family accepts (|lambda|^T stays within float64 for T <= 1e4).
MAX_RADIUS = 1.5


@dataclass(frozen=True)
class LDSFamily:
    """A named distribution over systems, with its noise model and horizon.

    Parameters
    ----------
    setting : one of ``SETTINGS`` ("a", "b", "c", "d", "asym"), see the module doc.
    d : state dimension (1 to :data:`MAX_D`).        T : number of observations (>= 3).
    sigma_w, sigma_v, sigma_0 : standard deviations (0 to :data:`MAX_SIGMA`, not all 0);
        Sigma_0 = sigma_0^2 I.
    cond_max : for setting "d", the bound on cond_2(P) used by the rejection sampler.
    radius : r, the eigenvalues' range is scaled to U[-r, r) (U[0, r) for asym); 1 in the
        paper's settings, other values for the spectral-shift claim (0 < r <= :data:`MAX_RADIUS`).
    """

    setting: str
    d: int = 5
    T: int = 30
    sigma_w: float = 0.1
    sigma_v: float = 0.1
    sigma_0: float = 1.0
    cond_max: float = 3.0
    radius: float = 1.0
    description: str = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        check_choice("setting", self.setting, SETTINGS)
        object.__setattr__(self, "d", check_positive_int("d", self.d))
        if self.d > MAX_D:
            raise ValueError(f"d must be <= {MAX_D} (a batch of systems holds m d^2 numbers), got {self.d}")
        object.__setattr__(self, "T", check_positive_int("T", self.T, minimum=3))
        for name in ("sigma_w", "sigma_v", "sigma_0"):
            # moments up to order 12 (standard errors of order-6 moments) must stay finite
            object.__setattr__(self, name, check_real(name, getattr(self, name), minimum=0,
                                                      maximum=MAX_SIGMA))
        if self.sigma_w == 0 and self.sigma_v == 0 and self.sigma_0 == 0:
            raise ValueError("sigma_w, sigma_v and sigma_0 must not all be 0 (y would be "
                             "identically 0)")
        object.__setattr__(self, "cond_max", check_real("cond_max", self.cond_max, minimum=1))
        object.__setattr__(self, "radius", check_real("radius", self.radius, minimum=0.0, maximum=MAX_RADIUS,
                                                      strict_min=True))
        object.__setattr__(self, "description", self.spec.description)

    @property
    def spec(self) -> Setting:
        """The setting's law and routes (theory/settings.py): what depends on the letter."""
        return SETTING_SPECS[self.setting]

    @property
    def symmetric(self) -> bool:
        """Whether the law of A is centrally symmetric (the theory's premise)."""
        return self.spec.symmetric

    @property
    def diagonal(self) -> bool:
        return self.spec.diagonal

    @property
    def isotropic_noise(self) -> bool:
        """Whether Sigma_w and Sigma_0 are both multiples of I (an orthogonal basis then
        leaves the noise unchanged in law)."""
        return _is_scaled_identity(self.process_noise_cov()) and _is_scaled_identity(self.initial_cov())

    @property
    def eigenvalue_range(self) -> tuple[float, float]:
        """(lo, hi): the eigenvalues lambda_i of A are iid U[lo, hi): 0 to r for asym, else
        -r to r, r = :attr:`radius` (1 in every setting of the paper)."""
        return self.spec.eigenvalue_range(self.radius)

    @property
    def noise_weights(self) -> np.ndarray:
        """omega (d,) with Sigma_w = sigma_w^2 diag(omega): 2k/(d+1), k = 1..d, in setting c; else ones."""
        return self.spec.noise_weights(self.d)

    def process_noise_cov(self) -> np.ndarray:
        """Sigma_w = sigma_w^2 diag(:attr:`noise_weights`) (d, d)."""
        return self.sigma_w ** 2 * np.diag(self.noise_weights)

    def initial_cov(self) -> np.ndarray:
        """Sigma_0 = sigma_0^2 I (d, d)."""
        return self.sigma_0 ** 2 * np.eye(self.d)

    def sample_systems(self, rng: np.random.Generator, m: int) -> Systems:
        """Draw ``m`` systems (vectorised)."""
        check_generator("rng", rng)
        m = check_positive_int("m", m)
        d = self.d
        lo, hi = self.eigenvalue_range
        lam = rng.uniform(lo, hi, size=(m, d))
        c = np.ones((m, d))
        basis = self.spec.basis
        if basis == "identity":
            A = np.zeros((m, d, d))
            A[:, np.arange(d), np.arange(d)] = lam
            keep_lam = lam
        elif basis == "haar":
            Q = haar_orthogonal(rng, m, d)
            A = np.swapaxes(Q, 1, 2) @ (lam[:, :, None] * Q)
            keep_lam = None
        else:  # "conditioned"
            P = conditioned_gaussian(rng, m, d, self.cond_max)
            A = np.linalg.solve(P, lam[:, :, None] * P)
            keep_lam = None
        return Systems(A=A, c=c, Sigma_w=self.process_noise_cov(), Sigma_0=self.initial_cov(),
                       sigma_v=self.sigma_v, lam=keep_lam, T=self.T)

    def sample(self, rng: np.random.Generator, m: int, *, dtype=np.float64):
        """Draw ``m`` fresh systems and one trajectory each: ``(systems, y)`` with y (m, T)."""
        systems = self.sample_systems(rng, m)
        return systems, systems.simulate(rng, self.T, dtype=dtype)

    def covariance(self, systems: Systems) -> np.ndarray:
        """Exact covariance (m, T, T) of the batch ``systems`` over this family's T."""
        return covariance(systems, self.T)

    def replace(self, **changes) -> "LDSFamily":
        """A copy with some parameters changed (validated again)."""
        kw = {k: getattr(self, k) for k in ("setting", "d", "T", "sigma_w", "sigma_v",
                                            "sigma_0", "cond_max", "radius")}
        kw.update(changes)
        return LDSFamily(**kw)


def get_family(setting: str, **params) -> LDSFamily:
    """``LDSFamily(setting, **params)`` with a clear error for an unknown setting."""
    return LDSFamily(setting, **params)
