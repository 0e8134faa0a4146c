"""numbagrad.special against torch.special: values, nodes and gradients, the edge values
(0, negatives, NaN) included."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import numbagrad as ng  # noqa: E402

V = np.array([0.0, 0.3, 1.5, -0.2, 2.0, np.nan])


def _same(a, b):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("name, call", [
    ("entr", lambda L, x: L.special.entr(x)),
    ("xlog1py", lambda L, x: L.special.xlog1py(x, x + 0.5)),
    ("xlog1py_at_minus_one", lambda L, x: L.special.xlog1py(x * 0, x * 0 - 1)),
    ("ndtr", lambda L, x: L.special.ndtr(x)),
    ("expit", lambda L, x: L.special.expit(x)),
    ("gammaln", lambda L, x: L.special.gammaln(x + 3)),
    ("psi", lambda L, x: L.special.psi(x + 3)),
    ("logit", lambda L, x: L.special.logit(x.abs() / 3, eps=1e-6)),
    ("log1p", lambda L, x: L.special.log1p(x.abs())),
    ("softmax", lambda L, x: L.special.softmax(x, 0)),
    ("logsumexp", lambda L, x: L.special.logsumexp(x, 0)),
    ("sinc", lambda L, x: L.special.sinc(x)),
    ("round", lambda L, x: L.special.round(x, decimals=1)),
    ("i0", lambda L, x: L.special.i0(x)),
    # (PyTorch's i1 gradient at NaN is a number: left out)
    ("i1", lambda L, x: L.special.i1(x.nan_to_num(0.25))),
    ("multigammaln", lambda L, x: L.special.multigammaln(x.abs() + 2, 2)),
])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_special_matches_pytorch(name, call, dtype):
    values = V if name != "softmax" and name != "logsumexp" else V[:-1]
    out = {}
    for L in (ng, torch):
        x = L.tensor(values, dtype=getattr(L, dtype), requires_grad=True)
        y = call(L, x)
        w = L.arange(y.numel(), dtype=y.dtype).reshape(y.shape) + 1
        g, = L.autograd.grad((y * w).sum(), x, allow_unused=True)
        out[L.__name__] = (y, type(y.grad_fn).__name__, g)
    (y1, n1, g1), (y2, n2, g2) = out["numbagrad"], out["torch"]
    assert n1 == n2 and y1.dtype.itemsize == y2.dtype.itemsize
    # (digamma's float64 series agrees with PyTorch's to 1e-9)
    rtol = 1e-5 if dtype == "float32" else 1e-9 if name == "psi" else 1e-12
    np.testing.assert_allclose(y1.detach().numpy(), y2.detach().numpy(), rtol=rtol, atol=rtol)
    if g2 is None:
        assert g1 is None
    else:
        np.testing.assert_allclose(g1.numpy(), g2.numpy(), rtol=rtol, atol=rtol)


def test_ndtr_of_integers_is_a_float(lib):
    assert lib.special.ndtr(lib.tensor([0, 1])).dtype == lib.float32
    np.testing.assert_allclose(lib.special.ndtr(lib.tensor([0, 1])).numpy(),
                               [0.5, 0.8413447], rtol=1e-6)


def test_the_names_are_pytorchs():
    assert set(ng.special.__all__) <= set(dir(torch.special))


@pytest.mark.parametrize("call, node", [
    (lambda L, x: L.xlogy(x, 2.0), "XlogyBackward2"),
    (lambda L, x: L.xlogy(2.0, x), "XlogyBackward1"),
    (lambda L, x: L.xlogy(x, x), "XlogyBackward0"),
    (lambda L, x: x.copysign(-1.0), "CopysignBackward1"),
    (lambda L, x: L.special.xlog1py(x, 2.0), "SpecialXlog1PyBackward2"),
    (lambda L, x: L.special.xlog1py(3.0, x), "SpecialXlog1PyBackward1"),
    # (a large result: the general path's node)
    (lambda L, x: L.xlogy(x[:1].expand(40000), 2.0), "XlogyBackward2"),
])
def test_a_number_operand_records_pytorchs_scalar_overload_node(lib, call, node):
    x = lib.tensor([0.5, 1.5], requires_grad=True)
    assert type(call(lib, x).grad_fn).__name__ == node


def test_heaviside_records_a_node_whose_backward_raises(lib):
    x = lib.tensor([0.5, -1.0, 0.0], requires_grad=True)
    y = lib.heaviside(x, lib.tensor(0.5))
    assert y.tolist() == [1.0, 0.0, 0.5] and type(y.grad_fn).__name__ == "NotImplemented"
    with pytest.raises(RuntimeError, match="derivative for aten::heaviside is not implemented"):
        y.sum().backward()


def test_floor_divide_records_a_node_whose_backward_raises(lib):
    x = lib.tensor([2.5, -1.5], requires_grad=True)
    for y in (lib.floor_divide(x, 2.0), x // 2.0, x // lib.tensor([2.0, 2.0])):
        assert y.tolist() == [1.0, -1.0] and type(y.grad_fn).__name__ == "NotImplemented"
        with pytest.raises(RuntimeError, match="derivative for aten::floor_divide is not "
                                               "implemented"):
            y.sum().backward()
