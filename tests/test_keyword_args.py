"""Sizes, dims and operands passed by PyTorch's keyword names (``torch.flip(x, dims=(0,))``,
``x.view(size=...)``, ``x.mm(mat2=...)``, ``torch.softmax(x, -1, dtype=...)``), as tutorials
write them: the same values, shapes, dtypes and nodes as PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

import numbagrad as ng

torch = pytest.importorskip("torch")

CALLS = {
    "flip": lambda L, x: L.flip(x, dims=(0,)),
    "Tensor.flip": lambda L, x: x.flip(dims=(1, 0)),
    "permute": lambda L, x: L.permute(x, dims=(1, 0)),
    "Tensor.permute": lambda L, x: x.permute(dims=(1, 0)),
    "expand": lambda L, x: x[:, :1].expand(size=(3, 4)),
    "repeat": lambda L, x: x.repeat(repeats=(2, 1)),
    "view": lambda L, x: x.view(size=(4, 3)),
    "reshape": lambda L, x: x.reshape(shape=(2, 6)),
    "broadcast_to": lambda L, x: L.broadcast_to(x[0], size=(2, 4)),
    "mm": lambda L, x: L.mm(x, mat2=x.T),
    "Tensor.mm": lambda L, x: x.mm(mat2=x.T),
    "bmm": lambda L, x: L.bmm(x[None], mat2=x.T[None]),
    "softmax": lambda L, x: L.softmax(x, -1, dtype=L.float64),
    "Tensor.softmax": lambda L, x: x.softmax(0, dtype=L.float64),
    "log_softmax": lambda L, x: L.log_softmax(x, -1, dtype=L.float64),
    "Tensor.log_softmax": lambda L, x: x.log_softmax(dim=1, dtype=L.float64),
}


@pytest.mark.parametrize("name", CALLS)
def test_keywords_as_pytorch(name):
    v = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    out = []
    for lib in (ng, torch):
        x = lib.tensor(v, requires_grad=True)
        y = CALLS[name](lib, x)
        y.sum().backward()
        out.append((y.detach().numpy(), str(y.dtype).split(".")[-1], y.grad_fn.name(),
                    x.grad.numpy()))
    (a, da, na, ga), (b, db, nb, gb) = out
    np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(ga, gb, rtol=1e-6, atol=1e-7)
    assert (da, na) == (db, nb)


@pytest.mark.parametrize("method", ["new_zeros", "new_ones", "new_empty"])
def test_new_tensors_take_size_by_keyword(method):
    for lib in (ng, torch):
        t = getattr(lib.ones(3, dtype=lib.float64), method)(size=(2, 5))
        assert tuple(t.shape) == (2, 5) and str(t.dtype).endswith("float64")


TWO = {
    "mm": lambda L, x, y: L.mm(x, mat2=y.T),
    "Tensor.matmul": lambda L, x, y: x.matmul(other=y.T),
    "dot": lambda L, x, y: L.dot(x[0], tensor=y[1]),
    "mv": lambda L, x, y: L.mv(x, vec=y[0]),
    "cat": lambda L, x, y: L.cat(tensors=[x, y], dim=0),
    "stack": lambda L, x, y: L.stack(tensors=(x, y), dim=1),
    "where": lambda L, x, y: L.where(condition=x > 0, input=x, other=y),
    "lerp": lambda L, x, y: L.lerp(x, end=y, weight=y.sigmoid()),
    "addcmul": lambda L, x, y: L.addcmul(x, tensor1=y, tensor2=x, value=2),
    "gather": lambda L, x, y: L.gather(x * y, dim=1, index=L.tensor([[0, 2]] * 3)),
}


@pytest.mark.parametrize("name", TWO)
def test_a_tensor_passed_by_keyword_is_an_input_with_its_gradient(name):
    """A tensor operand given by its keyword gets its edge and gradient, as one given by
    position (``x.mm(mat2=x.T)`` once dropped the keyword operand's gradient)."""
    rng = np.random.default_rng(1)
    u, v = rng.standard_normal((2, 3, 4))
    out = []
    for lib in (ng, torch):
        x, y = lib.tensor(u, requires_grad=True), lib.tensor(v, requires_grad=True)
        r = TWO[name](lib, x, y)
        (r * r).sum().backward()
        out.append((r.detach().numpy(), x.grad.numpy(), y.grad.numpy()))
    for a, b in zip(*out):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("fn", ["mse_loss", "l1_loss", "huber_loss"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_weighted_regression_losses_as_pytorch(fn, reduction):
    """``weight=`` of mse_loss and l1_loss: a mean divides by the weights' sum (huber_loss's
    by the count), as PyTorch 2.13's; values and the gradients of input, target and weight."""
    a, b, w = np.random.default_rng(0).random((3, 3, 4))
    out = []
    for lib in (ng, torch):
        x, y, ww = (lib.tensor(v, requires_grad=True) for v in (a, b, w))
        loss = getattr(lib.nn.functional, fn)(input=x, target=y, weight=ww, reduction=reduction)
        loss.sum().backward()
        out.append([loss.detach().numpy(), x.grad.numpy(), y.grad.numpy(), ww.grad.numpy()])
    for p, q in zip(*out):
        np.testing.assert_allclose(p, q, rtol=1e-12)
    with pytest.raises(ValueError, match="^Weights and input must have the same size.$"):
        getattr(ng.nn.functional, fn)(ng.ones(3), ng.ones(3), weight=ng.ones(2))


def test_prod_casts_to_its_dtype_inside_the_op():
    v = np.random.default_rng(2).random((2, 3))
    out = []
    for lib in (ng, torch):
        x = lib.tensor(v, requires_grad=True)
        y = lib.prod(x, dim=1, keepdim=True, dtype=lib.float32)
        y.sum().backward()
        out.append((y.detach().numpy(), str(y.dtype).split(".")[-1], y.grad_fn.name(),
                    x.grad.numpy(), str(x.prod(dtype=lib.float32).dtype).split(".")[-1]))
    np.testing.assert_allclose(out[0][0], out[1][0], rtol=1e-6)
    np.testing.assert_allclose(out[0][3], out[1][3], rtol=1e-6)
    assert out[0][1:3] == out[1][1:3] == ("float32", "ProdBackward1")
    assert out[0][4] == out[1][4] == "float32"


@pytest.mark.parametrize("op", ["cumsum_", "cumprod_"])
def test_inplace_running_ops_refuse_another_dtype_as_pytorch(op):
    for lib in (ng, torch):
        with pytest.raises(RuntimeError, match="^Bad in-place call: input tensor dtype double and "
                                               "output tensor dtype float should match$"):
            getattr(lib.ones(3, dtype=lib.float64), op)(0, dtype=lib.float32)
        assert getattr(lib.ones(3, dtype=lib.float64), op)(0, dtype=lib.float64).dtype \
            == lib.float64
