"""claims._ars.BasinBook: the book of stationary points an AR(s) cell's runs are headed for.

Oracle: the definition of a basin's excess, (L(point) - L*) / L*, on points whose loss is
set by hand (a quarter and a tenth above the optimum of setting a at s = 2), and the
optimum's own weights, which must be named "optimum" with no excess.
"""
from __future__ import annotations

import numpy as np
import pytest

from claims._ars import BasinBook
from claims.harness.profiles import QUICK
from theory.optimum import StationaryPoint


@pytest.fixture(scope="module")
def book():
    return BasinBook("a", 2, QUICK)


def _point(loss, seed, *, cls="b-odd", hess=1.0):
    rng = np.random.default_rng(seed)
    return StationaryPoint(loss=loss, W_V=rng.normal(size=(3, 3)), W_QK=rng.normal(size=(3, 3)), cls=cls,
                           out_of_class_share=0.0, odd_share=0.5, grad_norm=0.0, hessian_min_eig=hess,
                           converged=True)


def test_place_names_each_new_point_by_its_excess_and_finds_it_again(book):
    L = book.L_star
    assert L > 0
    high = _point(1.25 * L, 1)
    b, mirrored = book.place(high)
    assert not mirrored and b.rel_excess == pytest.approx(0.25, rel=1e-12)
    assert b.name == "local-min b-odd +25.00 %"
    assert book.place(high) == (b, False) and len(book.basins) == 1       # the same point: the same basin
    other, _ = book.place(_point(1.25 * L, 2))                             # same excess, other weights
    assert other is not b and other.name == "local-min b-odd +25.00 % #2"
    saddle, _ = book.place(_point(1.1 * L, 3, hess=-1.0))
    assert saddle.rel_excess == pytest.approx(0.1, rel=1e-12) and saddle.name == "saddle b-odd +10.00 %"
    opt_V, opt_QK = book._opt[1], book._opt[2]
    at_opt = StationaryPoint(loss=L, W_V=opt_V, W_QK=opt_QK, cls="b-even", out_of_class_share=0.0,
                             odd_share=0.0, grad_norm=0.0, hessian_min_eig=1.0, converged=True)
    opt, _ = book.place(at_opt)
    assert opt.name == "optimum" and opt.rel_excess == 0.0
