"""PyTorch's keyword names, where numbagrad once took others or none (``torch.split(tensor=x,
...)``, ``x.split(split_size=2)``, ``torch.addmm(input=b, mat1=m1, mat2=m2)``,
``torch.linalg.cholesky(input=A)``, ``torch.arange(end=5)``, ``layout=torch.strided``, ...):
each call made the same way in both libraries, with the same values and, for the tensors
passed by keyword, the same gradients."""

from __future__ import annotations

import io
import pickle
import warnings

import numpy as np
import pytest

import numbagrad as ng

torch = pytest.importorskip("torch")


def F(L):
    return L.nn.functional


def spd(L, x):
    """A well-conditioned symmetric positive-definite matrix that is a function of ``x``."""
    return x @ x.mT + 4 * L.eye(4, dtype=L.float64)


def lu_solve(L, x, y):
    LU, pivots = L.linalg.lu_factor(spd(L, x))
    with warnings.catch_warnings():  # (deprecated in both, with its warning)
        warnings.simplefilter("ignore", UserWarning)
        return L.lu_solve(input=y, LU_data=LU, LU_pivots=pivots)


# calls of two float64 (4, 4) tensors ``x`` and ``y`` that require grad
CALLS = {
    "split": lambda L, x, y: L.split(tensor=x, split_size_or_sections=3, dim=0),
    "Tensor.split": lambda L, x, y: x.split(split_size=[1, 3], dim=1),
    "Tensor.split/int": lambda L, x, y: x.split(split_size=2),
    "tensor_split/sections": lambda L, x, y: L.tensor_split(x, sections=3),
    "tensor_split/indices": lambda L, x, y: L.tensor_split(input=x, indices=[1, 3], dim=1),
    "tensor_split/tensor": lambda L, x, y: L.tensor_split(
        x, tensor_indices_or_sections=L.tensor([1, 3])),
    "Tensor.tensor_split": lambda L, x, y: x.tensor_split(sections=2, dim=1),
    "hsplit": lambda L, x, y: L.hsplit(x, sections=2),
    "vsplit": lambda L, x, y: L.vsplit(input=x, indices=[1]),
    "dsplit": lambda L, x, y: L.dsplit(x.reshape(2, 2, 4), indices=[1, 3]),
    "Tensor.hsplit": lambda L, x, y: x.hsplit(indices=[3]),
    "swapdims": lambda L, x, y: L.swapdims(x.reshape(2, 2, 4), dim0=0, dim1=2),
    "Tensor.swapdims": lambda L, x, y: x.swapdims(dim0=0, dim1=1),
    "swapaxes": lambda L, x, y: L.swapaxes(x, axis0=1, axis1=0),
    "Tensor.swapaxes_": lambda L, x, y: x.clone().swapaxes_(axis0=0, axis1=1),
    "Tensor.swapdims_": lambda L, x, y: x.clone().swapdims_(dim0=0, dim1=1),
    "Tensor.transpose_": lambda L, x, y: x.clone().transpose_(dim0=1, dim1=0),
    "sum_to_size": lambda L, x, y: x.sum_to_size(size=(1, 4)),
    "copy_": lambda L, x, y: L.zeros(4, 4, dtype=L.float64).copy_(x, non_blocking=False),
    "norm/dtype": lambda L, x, y: L.norm(x.float(), p=2, dim=0, dtype=L.float64),
    "norm/p3": lambda L, x, y: L.norm(x.float(), p=3, dim=1, dtype=L.float64),
    "Tensor.norm": lambda L, x, y: x.float().norm(p="fro", dtype=L.float64),
    "addmm": lambda L, x, y: L.addmm(input=x, mat1=x, mat2=y, beta=0.5, alpha=2),
    "Tensor.addmm": lambda L, x, y: x.addmm(mat1=y, mat2=x),
    "Tensor.addmm_": lambda L, x, y: x.clone().addmm_(mat1=x, mat2=y, beta=2),
    "baddbmm": lambda L, x, y: L.baddbmm(input=x[None], batch1=x[None], batch2=y[None],
                                         beta=2, alpha=3),
    "addbmm": lambda L, x, y: L.addbmm(input=x, batch1=x[None], batch2=y[None]),
    "addmv": lambda L, x, y: L.addmv(input=x[0], mat=x, vec=y[1], beta=2),
    "addr": lambda L, x, y: L.addr(input=x, vec1=x[0], vec2=y[1], alpha=3),
    "vdot": lambda L, x, y: L.vdot(input=x[0], other=y[1]),
    "Tensor.vdot": lambda L, x, y: x[0].vdot(other=y[1]),
    "cholesky_solve": lambda L, x, y: L.cholesky_solve(
        input=y, input2=L.linalg.cholesky(spd(L, x))),
    "Tensor.cholesky_solve": lambda L, x, y: y.cholesky_solve(
        input2=L.linalg.cholesky(spd(L, x)).mT, upper=True),
    "lu_solve": lu_solve,
    "orgqr": lambda L, x, y: L.orgqr(x, input2=y[0] / 4),
    "Tensor.orgqr": lambda L, x, y: x.orgqr(input2=y[0, :2] / 4),
    "linalg.cholesky": lambda L, x, y: L.linalg.cholesky(input=spd(L, x)),
    "linalg.cholesky_ex": lambda L, x, y: L.linalg.cholesky_ex(input=spd(L, x), upper=True).L,
    "linalg.eigh": lambda L, x, y: L.linalg.eigh(input=spd(L, x)).eigenvalues,
    "linalg.eigvalsh": lambda L, x, y: L.linalg.eigvalsh(input=spd(L, x), UPLO="U"),
    "linalg.pinv/rcond": lambda L, x, y: L.linalg.pinv(input=x, rcond=1e-3),
    "linalg.pinv/hermitian": lambda L, x, y: L.linalg.pinv(input=spd(L, x), hermitian=True),
    "linalg.matrix_norm": lambda L, x, y: L.linalg.matrix_norm(input=x, ord=1),
    "linalg.norm": lambda L, x, y: L.linalg.norm(input=x, dim=1),
    "linalg.cond": lambda L, x, y: L.linalg.cond(input=spd(L, x), p=2),
    "linalg.vector_norm/input": lambda L, x, y: L.linalg.vector_norm(input=x, ord=3),
    "linalg.vector_norm/x": lambda L, x, y: L.linalg.vector_norm(x=x, dim=0),
    "linalg.vector_norm/dtype": lambda L, x, y: L.linalg.vector_norm(x.float(),
                                                                      dtype=L.float64),
    "linalg.householder_product": lambda L, x, y: L.linalg.householder_product(
        input=x, tau=y[0, :3] / 4),
    "linalg.tensorinv/input": lambda L, x, y: L.linalg.tensorinv(input=spd(L, x), ind=1),
    "linalg.tensorinv/a": lambda L, x, y: L.linalg.tensorinv(a=spd(L, x), ind=1),
    "linalg.tensorsolve": lambda L, x, y: L.linalg.tensorsolve(input=spd(L, x), other=y[0]),
    "linalg.solve_triangular": lambda L, x, y: L.linalg.solve_triangular(
        input=L.linalg.cholesky(spd(L, x)), B=y, upper=False),
    "linalg.lstsq": lambda L, x, y: L.linalg.lstsq(input=spd(L, x), b=y).solution,
    "linalg.matmul": lambda L, x, y: L.linalg.matmul(input=x, other=y),
    "F.pixel_shuffle": lambda L, x, y: F(L).pixel_shuffle(input=x.reshape(1, 4, 2, 2),
                                                          upscale_factor=2),
    "F.pixel_unshuffle": lambda L, x, y: F(L).pixel_unshuffle(input=x.reshape(1, 1, 4, 4),
                                                              downscale_factor=2),
    "pixel_shuffle": lambda L, x, y: L.pixel_shuffle(input=x.reshape(1, 4, 2, 2),
                                                     upscale_factor=2),
    "RMSNorm": lambda L, x, y: L.nn.RMSNorm(4, dtype=L.float64)(x=x),
}


@pytest.mark.parametrize("name", CALLS)
def test_keywords_as_pytorch(name):
    rng = np.random.default_rng(0)
    u, v = rng.standard_normal((2, 4, 4))
    out = []
    for L in (ng, torch):
        x, y = L.tensor(u, requires_grad=True), L.tensor(v, requires_grad=True)
        r = CALLS[name](L, x, y)
        parts = r if isinstance(r, tuple) else (r,)
        sum(((p * p).sum() for p in parts), L.tensor(0.0, dtype=L.float64)).backward()
        grads = [np.zeros((4, 4)) if t.grad is None else t.grad.numpy() for t in (x, y)]
        out.append(([p.detach().numpy() for p in parts], [str(p.dtype) for p in parts],
                    grads))
    (a, da, ga), (b, db, gb) = out
    assert len(a) == len(b) and [d.split(".")[-1] for d in da] == [d.split(".")[-1] for d in db]
    for p, q in zip(a, b):
        np.testing.assert_allclose(p, q, rtol=1e-6, atol=1e-9)
    for p, q in zip(ga, gb):
        np.testing.assert_allclose(p, q, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("name", ["norm/dtype", "norm/p3", "Tensor.norm",
                                  "linalg.vector_norm/dtype"])
def test_norm_casts_inside_its_node(name):
    """``norm(x, dtype=...)`` casts inside LinalgVectorNormBackward0, as PyTorch's: no node of
    its own between the norm and ``x.float()``'s."""
    chains = []
    for L in (ng, torch):
        x = L.ones(4, 4, dtype=L.float64, requires_grad=True)
        node, chain = CALLS[name](L, x, x).grad_fn, []
        while node is not None:
            chain.append(node.name())
            node = node.next_functions[0][0] if node.next_functions else None
        chains.append(chain[:-1])  # (AccumulateGrad: PyTorch names it with its namespace)
    assert chains[0] == chains[1] == ["LinalgVectorNormBackward0", "ToCopyBackward0"]


@pytest.mark.parametrize("call", [
    lambda L, x: L.norm(x, dtype=L.int64),
    lambda L, x: L.norm(x, dtype=L.float32),
    lambda L, x: L.linalg.vector_norm(x.long(), dtype=L.float64),
])
def test_norm_dtype_checks(call):
    messages = []
    for L in (ng, torch):
        with pytest.raises(RuntimeError) as e:
            call(L, L.ones(3, dtype=L.float64))
        messages.append(str(e.value))
    assert messages[0] == messages[1]


# calls whose results carry no gradient: compared by value and dtype
VALUES = {
    "view/dtype=": lambda L, x: x.view(dtype=L.int64),
    "view/float32": lambda L, x: x.view(L.float32),
    "view/int8": lambda L, x: x.view(L.int8),
    "view/bool": lambda L, x: x[:, :2].view(dtype=L.bool),
    "view/float64 of float32": lambda L, x: x.float().view(L.float64),
    "view/transposed, same size": lambda L, x: x.t().view(L.int64),
    "numel": lambda L, x: L.numel(input=x),
    "result_type": lambda L, x: L.result_type(tensor=x, other=x.float()),
    "result_type/scalar": lambda L, x: L.result_type(scalar=2.5, tensor=x.long()),
    "result_type/scalars": lambda L, x: L.result_type(scalar1=1, scalar2=2.5),
    "resize_": lambda L, x: x.clone().resize_(size=(2, 8)),
    "arange(end=)": lambda L, x: L.arange(end=5),
    "arange(start=, end=)": lambda L, x: L.arange(start=1, end=5),
    "arange(start, end=, step=)": lambda L, x: L.arange(1, end=7, step=2.5),
    "F.one_hot": lambda L, x: F(L).one_hot(input=L.tensor([0, 2, 1]), num_classes=4),
    "linalg.matrix_rank/tol": lambda L, x: L.linalg.matrix_rank(input=x, tol=0.5),
    "linalg.matrix_rank/hermitian": lambda L, x: L.linalg.matrix_rank(
        input=spd(L, x), tol=4.5, hermitian=True),
    "linalg.ldl_factor": lambda L, x: L.linalg.ldl_factor(input=spd(L, x)).LD,
    "linalg.ldl_factor_ex": lambda L, x: L.linalg.ldl_factor_ex(input=spd(L, x)).pivots,
}

FACTORIES = {
    "zeros": lambda L, kw: L.zeros(2, 3, **kw),
    "ones": lambda L, kw: L.ones((2, 3), **kw),
    "full": lambda L, kw: L.full((2,), 1.5, **kw),
    "eye": lambda L, kw: L.eye(3, **kw),
    "arange": lambda L, kw: L.arange(3, **kw),
    "linspace": lambda L, kw: L.linspace(0, 1, 5, **kw),
    "logspace": lambda L, kw: L.logspace(0, 1, 5, **kw),
    "zeros_like": lambda L, kw: L.zeros_like(L.ones(2, 2), **kw),
    "ones_like": lambda L, kw: L.ones_like(L.ones(2, 2), **kw),
    "full_like": lambda L, kw: L.full_like(L.ones(2, 2), 7, **kw),
    "new_zeros": lambda L, kw: L.ones(2).new_zeros((3,), **kw),
    "new_ones": lambda L, kw: L.ones(2).new_ones((3,), **kw),
    "new_full": lambda L, kw: L.ones(2).new_full((3,), 2.0, **kw),
    # (values not compared: their shapes and dtypes)
    "empty": lambda L, kw: L.empty(2, 3, **kw).zero_(),
    "empty_like": lambda L, kw: L.empty_like(L.ones(2, 2), **kw).zero_(),
    "empty_strided": lambda L, kw: L.empty_strided((2, 3), (1, 2), **kw).zero_(),
    "new_empty": lambda L, kw: L.ones(2).new_empty((3,), **kw).zero_(),
    "new_empty_strided": lambda L, kw: L.ones(2).new_empty_strided((3,), (1,), **kw).zero_(),
    "rand": lambda L, kw: L.rand(2, 3, **kw) * 0,
    "randn": lambda L, kw: L.randn(2, 3, **kw) * 0,
    "rand_like": lambda L, kw: L.rand_like(L.ones(2), **kw) * 0,
    "randn_like": lambda L, kw: L.randn_like(L.ones(2), **kw) * 0,
    "randint": lambda L, kw: L.randint(0, 1, (2,), **kw),
    "randint_like": lambda L, kw: L.randint_like(L.ones(2), 1, **kw),
    "randperm": lambda L, kw: L.randperm(1, **kw),
}
for _name, _make in FACTORIES.items():
    VALUES[f"{_name}(layout=strided, pin_memory=False)"] = (
        lambda m: lambda L, x: m(L, {"layout": L.strided, "pin_memory": False}))(_make)
del _name, _make


@pytest.mark.parametrize("name", VALUES)
def test_values_as_pytorch(name):
    u = np.random.default_rng(2).standard_normal((4, 4))
    out = [VALUES[name](L, L.tensor(u)) for L in (ng, torch)]
    if isinstance(out[1], torch.Tensor):
        assert tuple(out[0].shape) == tuple(out[1].shape)
        assert str(out[0].dtype).split(".")[-1] == str(out[1].dtype).split(".")[-1]
        assert not out[0].requires_grad
        np.testing.assert_allclose(out[0].numpy(), out[1].numpy(), rtol=1e-12, atol=1e-12)
    else:
        assert str(out[0]).split(".")[-1] == str(out[1]).split(".")[-1]


def test_view_dtype_is_an_alias_outside_the_graph():
    """``x.view(dtype)`` shares ``x``'s memory and version counter but not its graph, as
    PyTorch's (view.dtype is not differentiable, even to x's own dtype); its refusals are
    PyTorch's."""
    for L in (ng, torch):
        x = L.zeros(3, dtype=L.float32, requires_grad=True) * 1
        v, same = x.view(L.int32), x.view(dtype=L.float32)
        assert not v.requires_grad and v.grad_fn is None and not same.requires_grad
        with L.no_grad():
            x.add_(1)
        assert v.tolist() == [1065353216] * 3 and v._version == x._version == 1
    messages = []
    for L in (ng, torch):
        m = []
        for call in (lambda: L.zeros(2, 3).view(L.float64),
                     lambda: L.zeros(3, 2).t().view(L.float64),
                     lambda: L.zeros(2, 4)[:, 1:3].view(L.float64),
                     lambda: L.zeros(()).view(L.int16),
                     lambda: L.zeros(6, 4).t()[1:, :].view(L.float64),
                     lambda: L.zeros(5, 4).t()[:, 1:].view(L.float64),
                     lambda: L.zeros(3, 5)[:, :4].view(L.float64),
                     lambda: L.zeros(4, 4).t().view(L.int16)):
            with pytest.raises(RuntimeError) as e:
                call()
            m.append(str(e.value))
        messages.append(m)
    assert messages[0] == messages[1]


def test_split_keywords_are_each_spellings_own():
    """``x.split`` takes ``split_size``; ``torch.split`` ``split_size_or_sections`` (each
    refuses the other's)."""
    for L in (ng, torch):
        x = L.ones(4)
        with pytest.raises(TypeError):
            x.split(split_size_or_sections=2)
        with pytest.raises(TypeError):
            L.split(x, split_size=2)
        with pytest.raises(TypeError):
            L.tensor_split(x, sections=[1, 2])
        with pytest.raises(TypeError):
            L.swapaxes(x[None], dim0=0, dim1=1)
        with pytest.raises(TypeError):
            L.swapdims(x[None], axis0=0, axis1=1)


def test_layout_other_than_strided_is_refused():
    for L in (ng, torch):
        with pytest.raises(TypeError, match="argument 'layout' must be torch.layout, not str"):
            L.zeros(2, layout="strided")
    with pytest.raises(RuntimeError, match="no numbagrad.sparse_coo layout"):
        ng.ones(2, layout=ng.layout("sparse_coo"))
    if not ng.cuda.is_available():  # (PyTorch's refusal without an accelerator)
        for L in (ng, torch):
            with pytest.raises(RuntimeError, match="pin_memory=True requires"):
                L.zeros(2, pin_memory=True)


@pytest.mark.parametrize("name", ["LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d",
                                  "LazyInstanceNorm1d", "LazyInstanceNorm2d",
                                  "LazyInstanceNorm3d"])
def test_lazy_norm_without_bias(name):
    u = np.random.default_rng(3).standard_normal((2, 3) + (4,) * int(name[-2]))
    out = []
    for L in (ng, torch):
        m = getattr(L.nn, name)(bias=False, dtype=L.float64)
        x = L.tensor(u, requires_grad=True)
        y = m(x)
        y.pow(2).sum().backward()
        out.append(([n for n, _ in m.named_parameters()], m.bias, type(m).__name__,
                    y.detach().numpy(), m.weight.grad.numpy()))
    (na, ba, ta, ya, ga), (nb, bb, tb, yb, gb) = out
    assert na == nb == ["weight"] and ba is None and bb is None and ta == tb
    np.testing.assert_allclose(ya, yb, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ga, gb, rtol=1e-10, atol=1e-12)


def test_forward_hook_always_call():
    """A hook registered with ``always_call=True`` runs when forward raises (output None),
    and the call's exception goes on; one without it does not run."""
    seen = []
    for L in (ng, torch):
        calls = []
        lin = L.nn.Linear(4, 2)
        lin.register_forward_hook(hook=lambda m, a, o: calls.append(("always", o)),
                                  always_call=True)
        lin.register_forward_hook(lambda m, a, o: calls.append(("plain", o)))
        lin.register_forward_hook(lambda m, a, k, o: calls.append(("kwargs", o)),
                                  with_kwargs=True, always_call=True)
        with pytest.raises(RuntimeError):
            lin(L.ones(3, 5))
        lin(L.ones(3, 4))
        seen.append([(k, o if o is None else tuple(o.shape)) for k, o in calls])
    assert seen[0] == seen[1] == [("always", None), ("kwargs", None), ("always", (3, 2)),
                                  ("plain", (3, 2)), ("kwargs", (3, 2))]


def test_modules_remove_duplicate():
    counts = []
    for L in (ng, torch):
        shared = L.nn.ReLU()
        net = L.nn.Sequential(shared, L.nn.Linear(2, 2), shared)
        counts.append([len(list(net.modules(remove_duplicate=False))),
                       len(list(net.modules())),
                       len(list(net.named_modules(remove_duplicate=False)))])
    assert counts[0] == counts[1] == [4, 3, 4]


def test_group_norm_positional_order():
    """PyTorch's order: ``(num_groups, num_channels, eps, affine, device, dtype)``, ``bias``
    by keyword only."""
    for L in (ng, torch):
        m = L.nn.GroupNorm(2, 4, 1e-3, True, None, L.float64, bias=False)
        assert m.weight.dtype == L.float64 and m.bias is None and m.eps == 1e-3
        with pytest.raises(TypeError):
            L.nn.GroupNorm(2, 4, 1e-5, True, None, L.float64, False)


def test_save_load_and_module_keywords():
    buf = io.BytesIO()
    net = ng.nn.Linear(2, 3)
    ng.save({"net": net, "w": net.weight}, buf, pickle_module=pickle, pickle_protocol=2)
    buf.seek(0)
    back = ng.load(buf, weights_only=False)
    assert back["net"].weight is back["w"]
    np.testing.assert_array_equal(back["w"].detach().numpy(), net.weight.detach().numpy())
    a = np.arange(3.0)
    assert ng.from_dlpack(ext_tensor=a).tolist() == torch.from_dlpack(ext_tensor=a).tolist()
    try:
        ng.set_default_device(device="cpu")
        assert ng.zeros(1).device.type == "cpu"
    finally:
        ng.set_default_device(device=None)
