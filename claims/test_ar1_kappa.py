r"""Claim ``ar1-optimum``, part 1: kappa of eq. 15 against an independent Monte Carlo.

Paper (Theorem 4.1, eq. 15; docs/math.md section 4):

    kappa = (T-2) E[y_{T-1} y_T S] / E[y_{T-1}^2 S^2],   S = sum_{i=1..T-2} y_i y_{i+1}.

Left side: kappa by exact rational arithmetic (theory.kappa_exact, the integer engine of
the coordinate covariance G(lambda), docs/math.md section 4.6).  Right side: the
ratio of the two sample means over raw simulated trajectories, one fresh system each
(theory.kappa.kappa_mc_trajectories: no covariance, no moment formula), with its
delta-method standard error SE.

Checks
1. For hypothesis-drawn (T, d, sigma_w, sigma_v) of setting a, |kappa_exact - kappa_mc| / SE
   stays below 4 (the project's tolerance, docs/settings.md, Tolerances).  The record
   also states, for each drawn T, how many standard errors an off-by-one 1/n slip (the
   prefactor T-1 instead of T-2) would have been: kappa / (T-2) / SE.  That is the power
   of the draws: about 10 SE at T = 6 but 3 at T = 12, so the draws are kept short.
   Control (same draws): kappa with the prefactor T-1 is rejected.
2. The standard errors are calibrated: over many systems the signed
   z_i = (kappa_mc,i - kappa_exact,i) / SE_i have standard deviation 1 (within 25 %,
   the project's tolerance: a 25 % error in SE turns the 4-SE criterion into 3.2 or 5
   SE).  95 % interval from the chi-square law of the sample variance.  Control: the
   same z with SE / 2 (an estimator that over-states its precision) is rejected.
3. The reference value at the paper's defaults (d = 5, T = 30, sigma_w = sigma_v = 0.1)
   is 0.2052454015138651 (docs/math.md section 4.4), from the exact Fraction.

Worked example of the power: at T = 6 with SE = 0.0051 and kappa = 0.1636, the slip
moves kappa by 0.1636 / 4 = 0.0409, i.e. 8.0 SE; at T = 12, by 0.1829 / 10 = 0.0183 with
SE = 0.0048, i.e. 3.8 SE -- below the 4-SE criterion on its own.
"""
from __future__ import annotations

import functools
from fractions import Fraction

import numpy as np
from hypothesis import given, strategies as st
from scipy import stats as _st

from claims._ar1 import kappa_for
from claims.seeds import claim_settings, rng_for, seed_for
from claims.stats import Z95
from theory.kappa import kappa_exact_a, kappa_mc_trajectories
from theory.systems import LDSFamily

CLAIM = "ar1-optimum"
REF = "Thm 4.1, eq. 15"
Z_TOL = 4.0            # standard errors of the Monte Carlo estimate (project's)
EXACT_REL_TOL = 1e-12  # float64 round-off for quantities computed exactly (project's)
SD_TOL = 0.25          # |sd(z) - 1|: standard errors right within 25 % (project's)
#: systems behind the calibration check, per profile name (chi-square interval of sd(z)
#: about +-18 % at 60, +-9 % at 240); trajectories per system: CALIBRATION_TRAJECTORIES.
CALIBRATION_SYSTEMS = {"quick": 60, "paper": 240}
#: the raw-trajectory size whose standard errors are calibrated: the quick profile's
#: (the paper profile's 2e6 per system would cost 240 x 9 s).
CALIBRATION_TRAJECTORIES = 200_000
SIGMAS = ("0.05", "0.1", "0.2", "0.5")
#: What decides an inconclusive z check (its interval does not narrow with more samples).
Z_DECIDE = ("the interval z +- 1.96 is in units of the estimate's own standard error, so "
            "more samples do not narrow it; it holds for z <= 4 - 1.96 = 2.04 and fails for "
            "z > 4 + 1.96 = 5.96.  A z between says the drawn systems are consistent with "
            "kappa_exact but do not resolve a discrepancy below 4 standard errors")


def _z_fields(z: float) -> dict:
    """The z metric with its Monte Carlo interval [max(0, z - 1.96), z + 1.96].

    z = |kappa_ref - kappa_mc| / SE; the 95 % interval of kappa_mc, kappa_mc +- 1.96 SE,
    is in these units an interval for the true discrepancy |kappa_ref - E kappa_mc| / SE,
    which is >= 0 (docs/settings.md, "Verdicts and intervals").
    """
    return {"measured": z, "interval": (max(0.0, z - Z95), z + Z95), "interval_kind": "mc95",
            "decide": Z_DECIDE}


def _exact_and_mc(T, d, sw, sv, m, seed):
    """(exact kappa as float, Monte Carlo result) for setting a with sigma strings sw, sv."""
    exact = float(kappa_exact_a(T, d, Fraction(sw) ** 2, Fraction(sv) ** 2))
    fam = LDSFamily("a", T=T, d=d, sigma_w=float(sw), sigma_v=float(sv))
    return exact, kappa_mc_trajectories(fam, m, np.random.default_rng(seed))


@functools.lru_cache(maxsize=None)
def _draws(profile) -> tuple:
    """The hypothesis draws shared by check 1 and its control (same systems, same MC)."""
    out = []

    @claim_settings(profile)
    @given(T=st.integers(4, 12), d=st.integers(1, 5),
           sw=st.sampled_from(SIGMAS), sv=st.sampled_from(SIGMAS))
    def run(T, d, sw, sv):
        seed = seed_for(CLAIM, "kappa-mc", T, d, sw, sv)
        exact, mc = _exact_and_mc(T, d, sw, sv, profile.mc_trajectories, seed)
        out.append({"T": T, "d": d, "sigma_w": sw, "sigma_v": sv, "seed": seed,
                    "kappa": exact, "kappa_mc": mc.kappa, "stderr": mc.stderr})

    run()
    return tuple(out)


def _worst(draws, prefactor):
    """max over draws of |prefactor * kappa - kappa_mc| / SE, and the draw attaining it."""
    zs = [abs(prefactor(r["T"]) * r["kappa"] - r["kappa_mc"]) / r["stderr"] for r in draws]
    i = int(np.argmax(zs))
    return float(zs[i]), draws[i]


def _power_by_T(draws) -> dict:
    """Per drawn T: number of draws and the smallest slip size kappa / (T-2) / SE."""
    out = {}
    for r in draws:
        p = r["kappa"] / (r["T"] - 2) / r["stderr"]
        row = out.setdefault(str(r["T"]), {"draws": 0, "min_slip_z": np.inf})
        row["draws"] += 1
        row["min_slip_z"] = float(min(row["min_slip_z"], p))
    return dict(sorted(out.items(), key=lambda kv: int(kv[0])))


def test_exact_kappa_equals_monte_carlo(claim, profile):
    """Exact rational kappa vs raw-trajectory Monte Carlo, hypothesis-drawn systems."""
    draws = _draws(profile)
    z, at = _worst(draws, lambda T: 1.0)
    claim.record(
        claim=CLAIM, paper_ref=REF, setting="a",
        metric="max |kappa_exact - kappa_mc| / stderr over drawn (T, d, sigma_w, sigma_v)",
        **_z_fields(z), tolerance=Z_TOL, comparator="<=", tolerance_source="project",
        details={"worst": at, "m": profile.mc_trajectories, "draws": len(draws),
                 "power_by_T": _power_by_T(draws),
                 "power_note": "min_slip_z: how many SE a (T-1)/(T-2) prefactor slip moves "
                               "kappa at that T (detected alone only where > 4)"},
    ).check()


def test_control_kappa_with_wrong_prefactor_is_rejected(claim, profile):
    """Negative control on the same draws: (T-1) instead of n = T-2 in eq. 15."""
    draws = _draws(profile)
    z, at = _worst(draws, lambda T: (T - 1) / (T - 2))
    claim.record(
        claim=CLAIM, paper_ref=REF, setting="a",
        metric="max |(T-1)/(T-2) kappa_exact - kappa_mc| / stderr over the same draws",
        **_z_fields(z), tolerance=Z_TOL, comparator="<=", tolerance_source="project",
        expect="fails", details={"worst": at, "draws": len(draws)},
    ).check()


@functools.lru_cache(maxsize=None)
def _calibration_z(profile_name: str) -> np.ndarray:
    """Signed z_i = (kappa_mc - kappa_exact) / SE over systems drawn from the claim's seed."""
    n = CALIBRATION_SYSTEMS[profile_name]
    rng = rng_for(CLAIM, "se-calibration")
    z = np.empty(n)
    for i in range(n):
        T, d = int(rng.integers(4, 13)), int(rng.integers(1, 6))
        sw, sv = SIGMAS[int(rng.integers(4))], SIGMAS[int(rng.integers(4))]
        exact, mc = _exact_and_mc(T, d, sw, sv, CALIBRATION_TRAJECTORIES,
                                  seed_for(CLAIM, "se-calibration", i))
        z[i] = (mc.kappa - exact) / mc.stderr
    return z


def _sd_fields(z: np.ndarray) -> dict:
    """sd(z) - 1 with the chi-square 95 % interval of the standard deviation."""
    n = z.size
    sd = float(z.std(ddof=1))
    lo = sd * np.sqrt((n - 1) / _st.chi2.ppf(0.975, n - 1))
    hi = sd * np.sqrt((n - 1) / _st.chi2.ppf(0.025, n - 1))
    return {"measured": sd - 1.0, "interval": (float(lo) - 1.0, float(hi) - 1.0),
            "interval_kind": "mc95",
            "decide": f"more systems: the interval of sd(z) narrows as 1/sqrt(2 n), n = {n}"}


def _calibration_record(claim, profile, scale: float, expect: str):
    z = _calibration_z(profile.name) / scale
    claim.record(
        claim=CLAIM, paper_ref=REF + " (Monte Carlo standard errors)", setting="a",
        metric=("sd over systems of (kappa_mc - kappa_exact) / stderr, minus 1"
                + ("" if scale == 1.0 else f"  [stderr x {scale}]")),
        **_sd_fields(z), tolerance=SD_TOL, comparator="abs<=", tolerance_source="project",
        expect=expect,
        details={"systems": int(z.size), "trajectories": CALIBRATION_TRAJECTORIES,
                 "mean_z": float(z.mean()),
                 "mean_z_interval": [float(z.mean() - Z95 * z.std(ddof=1) / np.sqrt(z.size)),
                                     float(z.mean() + Z95 * z.std(ddof=1) / np.sqrt(z.size))],
                 "max_abs_z": float(np.abs(z).max())},
    ).check()


def test_monte_carlo_standard_errors_are_calibrated(claim, profile):
    """The delta-method SE of the raw-trajectory kappa matches its actual spread."""
    _calibration_record(claim, profile, 1.0, "holds")


def test_control_understated_standard_errors_are_rejected(claim, profile):
    """Negative control: the same z-scores with the standard error halved."""
    _calibration_record(claim, profile, 0.5, "fails")


def test_reference_kappa(claim):
    """kappa at the paper's defaults equals the reference of docs/math.md section 4 (exact)."""
    ref = 0.2052454015138651
    k = kappa_for("a")["kappa"]
    claim.record(
        claim=CLAIM, paper_ref=REF, setting="a", metric="|kappa - 0.2052454015138651| / kappa",
        measured=abs(k - ref) / ref, tolerance=EXACT_REL_TOL, comparator="<=",
        tolerance_source="project", details={"kappa": k, "exact": kappa_for("a")["exact"]},
    ).check()
