"""Differences from PyTorch that the differential fuzzer (``tests/fuzz.py``) found in the
activations, losses, tensor API and small integer dtypes, each kept as the minimal program that
showed it. ``fuzz.run_program`` runs a program in both libraries and compares every statement's
outcome (values, dtype, shape, requires_grad, grad_fn name, or the exception's type) and the
tensors a ``# compare:`` comment names."""

from __future__ import annotations

import pytest

pytest.importorskip("torch", reason="the programs are compared with PyTorch (not installed)")

import fuzz  # noqa: E402  (tests/ is on sys.path: conftest.py)

PROGRAMS = {
    # the float-only activations refuse integer and bool tensors as PyTorch has no kernel
    "gelu_silu_softplus_refuse_integers": """
        a = torch.nn.functional.gelu(torch.tensor([1, 2]))
        b = torch.nn.functional.silu(torch.tensor([True]))
        c = torch.nn.functional.softplus(torch.tensor([1, 2], dtype=torch.int16), 2.0)
        d = torch.nn.functional.silu(torch.tensor([1, 2]), inplace=True)
        """,
    "softplus_params": """
        x = torch.tensor([1.0, 30.0, -2.0], requires_grad=True)
        y = torch.nn.functional.softplus(x, 2.0, threshold=10)
        y.sum().backward()  # compare: x.grad
        """,
    # hardtanh of uint8 with a negative bound: PyTorch's error
    "hardtanh_uint8_negative_limits": """
        a = torch.nn.functional.hardtanh(torch.tensor([1, 2], dtype=torch.uint8))
        b = torch.tensor([1, 2], dtype=torch.uint8)
        torch.nn.functional.hardtanh_(b, -1.0, 1.0)
        c = torch.nn.functional.hardtanh(torch.tensor([1, 2], dtype=torch.uint8), 0.0, 1.0)
        """,
    # pairwise_distance is ATen's norm(x, p, dim): NormBackward1, not LinalgVectorNormBackward0
    "pairwise_distance_node": """
        x = torch.tensor([[1.0, -2.0, 0.5], [0.0, 1.0, 2.0]], requires_grad=True)
        y = torch.tensor([[0.5, 1.0, -1.0], [2.0, -0.25, 1.0]], requires_grad=True)
        d = torch.nn.functional.pairwise_distance(x, y, p=1.0, keepdim=True)
        e = torch.nn.functional.pairwise_distance(x, y)
        f = torch.nn.functional.triplet_margin_loss(x, y, y * 2)
        (d.sum() + e.sum() + f).backward()  # compare: x.grad, y.grad
        """,
    # binary_cross_entropy_with_logits: the loss in the target's dtype (PyTorch writes it into
    # 1 - target in place), and weights that require grad refused
    "bce_with_logits_target_dtype": """
        x = torch.tensor([[1.0, -2.0], [0.0, 3.0]], dtype=torch.float64, requires_grad=True)
        t = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
        l1 = torch.nn.functional.binary_cross_entropy_with_logits(x, t, reduction='none')
        l2 = torch.nn.functional.binary_cross_entropy_with_logits(x.float(), t.double(), pos_weight=torch.ones(2, dtype=torch.float64))
        (l1.sum() + l2).backward()  # compare: x.grad
        """,
    "bce_weights_requiring_grad": """
        x = torch.tensor([1.0, -2.0], requires_grad=True)
        t = torch.tensor([1.0, 0.0])
        w = torch.ones(2, requires_grad=True)
        a = torch.nn.functional.binary_cross_entropy_with_logits(x, t, pos_weight=w)
        b = torch.nn.functional.binary_cross_entropy_with_logits(x, t, weight=w)
        c = torch.nn.functional.binary_cross_entropy(x.sigmoid(), t, weight=w)
        with torch.no_grad(): d = torch.nn.functional.binary_cross_entropy_with_logits(x, t, weight=w)
        """,
    # elu's backward sends NaN to the positive side (PyTorch's x <= 0 test): scale, not NaN
    "elu_backward_nan": """
        x = torch.tensor([np.nan, -1.0, 2.0], requires_grad=True)
        y = torch.nn.functional.selu(x) + torch.nn.functional.celu(x, 2.0) + torch.nn.functional.elu(x * 1, inplace=True)
        y.sum().backward()  # compare: x.grad
        """,
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_agrees_with_pytorch(name):
    mismatch = fuzz.run_program(fuzz.parse_repro(PROGRAMS[name]))
    assert mismatch is None, f"{name}: {mismatch.key}: {mismatch.detail}"
