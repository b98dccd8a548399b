"""The setting objects (theory/settings.py): each attribute against what the setting's
systems and routes actually do -- sampled systems, the samplers, the kappa and moment
routes -- never against the attribute's own definition."""
from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest
import torch

from models.sampler import TorchLDSSampler
from theory.kappa import choose_method, kappa
from theory.population import population_moments
from theory.settings import SETTING_SPECS, Setting, get_setting
from theory.stationary import stationary_moments
from theory.systems import SETTINGS, LDSFamily

ROOT = Path(__file__).resolve().parents[1]


def test_the_specs_are_the_families_settings():
    assert tuple(SETTING_SPECS) == SETTINGS
    for name in SETTINGS:
        assert LDSFamily(name).spec is SETTING_SPECS[name] and get_setting(name).name == name
    with pytest.raises(ValueError, match="setting"):
        get_setting("e")
    with pytest.raises(ValueError, match="basis"):
        Setting("x", "law", basis="circulant", eigenvalues="centred", noise="isotropic")


@pytest.mark.parametrize("setting", SETTINGS)
def test_the_law_attributes_are_what_the_sampled_systems_show(setting):
    spec = SETTING_SPECS[setting]
    fam = LDSFamily(setting, d=4, radius=0.8)
    sy = fam.sample_systems(np.random.default_rng(3), 4000)
    off = sy.A - np.einsum("mii->mi", sy.A)[:, :, None] * np.eye(4)
    assert spec.diagonal == bool(np.all(off == 0))
    lam = np.linalg.eigvals(sy.A).real
    lo, hi = fam.eigenvalue_range
    assert lo <= lam.min() and lam.max() <= hi and hi == 0.8
    assert spec.symmetric == (lam.mean() ** 2 < 1e-3)          # E lambda = 0 iff centred (0.4 otherwise)
    graded = not np.allclose(np.diag(sy.Sigma_w), sy.Sigma_w[0, 0])
    assert graded == (spec.noise == "graded")
    if spec.basis == "conditioned":                             # P^-1 diag P with cond(P) <= cond_max
        assert not np.allclose(sy.A, np.swapaxes(sy.A, 1, 2))
    elif spec.basis == "haar":                                  # orthogonally similar: symmetric, not diagonal
        assert np.allclose(sy.A, np.swapaxes(sy.A, 1, 2)) and not spec.diagonal


@pytest.mark.parametrize("setting", SETTINGS)
def test_draws_basis_is_what_the_torch_sampler_draws(setting):
    fam = LDSFamily(setting, d=3, T=5)
    sampler = TorchLDSSampler(fam)
    drawn = sampler.draw_bases(7, torch.Generator().manual_seed(1))
    assert (drawn is not None) == fam.spec.draws_basis(fam.isotropic_noise) == sampler.needs_bases
    # an orthogonal basis with noise that is not isotropic would need its basis drawn
    assert SETTING_SPECS["b"].draws_basis(isotropic_noise=False) and not SETTING_SPECS["a"].draws_basis(False)


@pytest.mark.parametrize("setting", SETTINGS)
def test_the_kappa_routes_listed_are_the_ones_that_run(setting):
    fam = LDSFamily(setting, T=5, d=2)
    listed = fam.spec.kappa_routes
    for method in ("exact-rational", "gauss-legendre"):
        if method in listed:
            assert np.isfinite(kappa(fam, method=method).kappa)
        else:
            with pytest.raises(ValueError, match="only available"):
                kappa(fam, method=method)
    auto, _ = choose_method(fam)
    assert auto == (listed[0] if listed else "mc-moments")
    if len(listed) == 2:                       # both exact routes: the same number
        assert kappa(fam, method=listed[0]).kappa == pytest.approx(kappa(fam, method=listed[1]).kappa, rel=1e-11)


@pytest.mark.parametrize("setting", SETTINGS)
def test_quadrature_is_what_population_moments_can_do(setting):
    fam = LDSFamily(setting, T=6, d=2)
    if fam.spec.quadrature:
        assert population_moments(fam, 1).method == "quadrature"
    else:
        with pytest.raises(ValueError, match="not available"):
            population_moments(fam, 1, method="quadrature")
        assert population_moments(fam, 1, m=50, rng=np.random.default_rng(0)).method == "mc-systems"


@pytest.mark.parametrize("setting", SETTINGS)
def test_the_stationary_route_exists_where_its_premises_hold(setting):
    fam = LDSFamily(setting, T=5, d=2, radius=0.9)
    if fam.spec.stationary_quadrature:
        assert np.all(np.isfinite(stationary_moments(1, fam).M))
    else:
        with pytest.raises(ValueError, match="family must be"):
            stationary_moments(1, fam)


def test_variance_amplification_bounds_the_conditioned_basis():
    """Var(c^T x) of setting d stays within cond_max^2 times setting a's bound (d sigma_0^2
    at t = 0): the factor models/trainer.py's data_scale uses."""
    spec = SETTING_SPECS["d"]
    fam = LDSFamily("d", d=5, T=3, sigma_w=0.0, sigma_v=0.0)
    sy = fam.sample_systems(np.random.default_rng(0), 3000)
    P_c = np.linalg.norm(sy.c, axis=1) ** 2                      # c = 1: |c|^2 = d
    var_y1 = fam.covariance(sy)[:, 0, 0]
    assert np.all(var_y1 <= spec.variance_amplification(fam.cond_max) * P_c * fam.sigma_0 ** 2 + 1e-12)
    assert SETTING_SPECS["a"].variance_amplification(3.0) == 1.0 and spec.variance_amplification(3.0) == 9.0


#: the claim files' comparisons with a letter that stay, each with why, keyed by (file,
#: enclosing function) as line numbers drift: none since the claims ask for named sets
#: (claims/harness/coverage.py; the independent kappa route of the stationarity check reads
#: ``Setting.exact_rational``); tests/test_coverage.py scans claims/ for any letter at all.
KEPT_IN_CLAIM_FILES: dict[tuple[str, str], str] = {}
CONTROL_FAMILY = "asym"


def _letter_branches(tree) -> list[tuple[int, str, str | None]]:
    """(line, letter(s), enclosing top-level function) of every comparison of a name or
    attribute called ``setting`` with a setting's letter (or a tuple/list holding one)."""
    out = []
    for top in tree.body:
        func = top.name if isinstance(top, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
        for node in ast.walk(top):
            if isinstance(node, ast.Compare):
                operands = [node.left, *node.comparators]
                names = [n for n in operands
                         if isinstance(n, ast.Attribute) and n.attr == "setting"
                         or isinstance(n, ast.Name) and n.id == "setting"]
                letters = [n.value for n in operands if isinstance(n, ast.Constant) and n.value in SETTINGS]
                letters += [e.value for n in operands if isinstance(n, (ast.Tuple, ast.List))
                            for e in n.elts if isinstance(e, ast.Constant) and e.value in SETTINGS]
                if names and letters:
                    out.append((node.lineno, ",".join(letters), func))
    return out


@pytest.mark.reads_source
def test_no_module_branches_on_a_settings_letter():
    """Outside theory/settings.py nothing in theory/, models/ or claims/ compares a setting
    with a letter, the claim files included, except what :data:`KEPT_IN_CLAIM_FILES` names
    and a claim's choice of its control family (``setting == "asym"``: claim text);
    planted: a module that does is found, and so is a claim file's branch on a symmetric
    family's letter."""
    found = {}
    for pkg in ("theory", "models", "claims"):
        for path in sorted((ROOT / pkg).rglob("*.py")):
            if path.name == "settings.py" and path.parent.name == "theory":
                continue
            rel = path.relative_to(ROOT).as_posix()
            hits = [(line, letters) for line, letters, func in _letter_branches(ast.parse(path.read_text(encoding="utf-8")))
                    if not (path.name.startswith("test_") and (letters == CONTROL_FAMILY
                                                               or (rel, func) in KEPT_IN_CLAIM_FILES))]
            if hits:
                found[rel] = hits
    assert found == {}
    planted = "if family.setting == 'd':\n    pass\nx = setting in ('b', 'd')\ndef f(setting):\n    return setting == 'asym'\n"
    assert [(line, letters) for line, letters, _ in _letter_branches(ast.parse(planted))] == [(1, "d"), (3, "b,d"), (5, "asym")]


@pytest.mark.reads_source
def test_the_kept_claim_file_branches_exist():
    """Every entry of :data:`KEPT_IN_CLAIM_FILES` still branches (a stale entry would hide
    a new branch in the same function)."""
    for (rel, func), why in KEPT_IN_CLAIM_FILES.items():
        funcs = {f for _, _, f in _letter_branches(ast.parse((ROOT / rel).read_text(encoding="utf-8")))}
        assert func in funcs, f"{rel}:{func} ({why}) no longer branches on a letter: drop the entry"


def test_the_routes_follow_the_radius():
    """At radius r < 1 the quadrature maps its nodes to [-r, r] (against Monte Carlo over
    systems with exact per-system moments) and the exact rational route, which integrates
    over [-1, 1], is refused (it used to answer for radius 1 silently)."""
    fam = LDSFamily("a", T=6, d=2, radius=0.9)
    assert fam.spec.kappa_routes == ("exact-rational", "gauss-legendre")
    with pytest.raises(ValueError, match="at radius 1"):
        kappa(fam, method="exact-rational")
    assert choose_method(fam)[0] == "gauss-legendre"
    quad = kappa(fam, method="gauss-legendre")
    mc = kappa(fam, method="mc-moments", m=100_000, seed=3)
    assert abs(quad.kappa - mc.kappa) < 4 * mc.stderr
    assert abs(quad.kappa - kappa(LDSFamily("a", T=6, d=2)).kappa) > 20 * mc.stderr   # the radius matters
    mom = population_moments(fam, 2)
    mc_mom = population_moments(fam, 2, method="mc-systems", m=20_000, rng=np.random.default_rng(4))
    z = np.abs(mom.M - mc_mom.M) / np.maximum(mc_mom.M_se, 1e-300)
    assert mom.method == "quadrature" and float(np.max(z[mc_mom.M_se > 0])) < 5
