"""models/features.py: the effective loss the trainer minimises equals the layer's own
forward pass (LinearSelfAttention.forward + autograd), value and gradient, and is not
vacuous."""
from __future__ import annotations


import pytest
import torch

from models.attention import LinearSelfAttention, build_tokens
from models.features import effective_features, effective_loss


# ----------------------------------------------------------------------------- effective form
@pytest.mark.parametrize("s, T", [(1, 30), (2, 12), (3, 9), (1, 3)])
def test_effective_loss_equals_forward_pass_value_and_gradient(s, T):
    """The training loss is the layer's: same value and same gradients as autograd
    through LinearSelfAttention.forward, in float64, for random weights and data."""
    g = torch.Generator().manual_seed(10 * s + T)
    y = torch.randn(257, T, generator=g, dtype=torch.float64) * 1.5
    model = LinearSelfAttention(s, init_scale=0.7, dtype=torch.float64, generator=g)
    out, y_hat = model(build_tokens(y, s))
    loss_full = 0.5 * (y_hat - y[:, -1]).square().mean()
    gV_full, gQ_full = torch.autograd.grad(loss_full, [model.W_V, model.W_QK])

    F, target = effective_features(y.T.contiguous(), s)
    assert F.shape == ((s + 1) ** 2 * s, 257)
    assert torch.equal(target, y[:, -1])
    beta = (model.W_V[s][:, None, None] * model.W_QK[None, :, :s]).reshape(-1)
    torch.testing.assert_close(beta @ F, y_hat, rtol=1e-12, atol=1e-12)
    loss_eff = effective_loss(model.W_V, model.W_QK, F, target)
    gV, gQ = torch.autograd.grad(loss_eff, [model.W_V, model.W_QK])
    torch.testing.assert_close(loss_eff, loss_full, rtol=1e-12, atol=0)
    torch.testing.assert_close(gV, gV_full, rtol=1e-10, atol=1e-13)
    torch.testing.assert_close(gQ, gQ_full, rtol=1e-10, atol=1e-13)
    # the parameters the effective form ignores have zero gradient in the full model too
    assert torch.all(gV_full[:s] == 0) and torch.all(gQ_full[:, s] == 0)


def test_effective_loss_is_not_vacuous():
    """A deliberately wrong feature map (query shifted by one) gives a different loss."""
    g = torch.Generator().manual_seed(0)
    y = torch.randn(64, 10, generator=g, dtype=torch.float64)
    model = LinearSelfAttention(1, init_scale=0.5, dtype=torch.float64, generator=g)
    F, target = effective_features(y.T.contiguous(), 1)
    F_wrong, _ = effective_features(torch.roll(y, 1, dims=1).T.contiguous(), 1)
    right = effective_loss(model.W_V, model.W_QK, F, target)
    wrong = effective_loss(model.W_V, model.W_QK, F_wrong, target)
    assert abs((right - wrong).detach().item()) > 1e-6
