"""Gaps the third round of tutorial programs (tests/programs_d, distillation.py on) found, each
against PyTorch: ``F.interpolate(antialias=True)`` (bilinear, bicubic, lanczos) and the error
for an empty input or output size; ``torch.geqrf``, ``linalg.householder_product`` /
``torch.orgqr``; and ``nn.utils.parametrizations.orthogonal``."""

import numpy as np
import pytest

import numbagrad as ng
from devices import on_cuda

torch = pytest.importorskip("torch")
TP = torch.nn.utils.parametrizations
NP = ng.nn.utils.parametrizations

DTYPES = pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])


def _tol(dtype):
    return dict(rtol=1e-5, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-12)


def _raises_like(fn_ng, fn_torch):
    """Both calls raise the same exception type with the same message (a shape in it printed
    as each library prints its Size)."""
    with pytest.raises(Exception) as want:
        fn_torch()
    with pytest.raises(type(want.value)) as got:
        fn_ng()
    assert str(got.value) == str(want.value).replace("torch.Size", "numbagrad.Size")


# ---------------------------------------------------------------- interpolate, antialias

# (input shape, keyword arguments); every output width is at least 2: for a width of 1
# PyTorch's CPU forward repeats the first output row's value down the column (its backward
# uses the right weights), which numbagrad does not copy
AA = [
    ((2, 3, 12, 10), dict(size=(5, 4), mode="bilinear")),
    ((1, 2, 9, 13), dict(size=(4, 6), mode="bicubic")),
    ((1, 2, 11, 8), dict(size=(5, 3), mode="lanczos")),
    ((2, 1, 7, 9), dict(scale_factor=0.45, mode="bilinear")),
    ((1, 1, 8, 8), dict(scale_factor=(0.6, 1.7), mode="bicubic")),
    ((1, 2, 5, 6), dict(size=(9, 11), mode="lanczos")),
    ((1, 1, 10, 7), dict(size=(4, 3), mode="bilinear", align_corners=True)),
    ((1, 1, 10, 7), dict(size=(3, 5), mode="bicubic", align_corners=True)),
    ((1, 3, 10, 12), dict(scale_factor=0.3, mode="bicubic", recompute_scale_factor=True)),
    # (a dim whose size does not change is copied even when the scale says otherwise)
    ((1, 1, 6, 5), dict(scale_factor=(1.08, 0.5), mode="bilinear")),
    ((0, 2, 6, 5), dict(size=(3, 2), mode="bilinear")),
]


@DTYPES
@pytest.mark.parametrize("case", range(len(AA)), ids=[f"{s}-{k['mode']}" for s, k in AA])
def test_antialiased_interpolate_values_and_gradients_match_torch(case, dtype):
    shape, kw = AA[case]
    rng = np.random.default_rng(case)
    x = rng.normal(size=shape).astype(dtype)
    a = torch.tensor(x, requires_grad=True)
    b = ng.tensor(x, requires_grad=True)
    want = torch.nn.functional.interpolate(a, antialias=True, **kw)
    got = ng.nn.functional.interpolate(b, antialias=True, **kw)
    assert tuple(got.shape) == tuple(want.shape) and got.dtype.name == str(want.dtype)[6:]
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), **_tol(dtype))
    g = rng.normal(size=tuple(want.shape)).astype(dtype)
    want.backward(torch.tensor(g))
    got.backward(ng.tensor(g))
    if kw.get("scale_factor") == (1.08, 0.5):
        # (PyTorch's backward interpolates the dim its forward copied; ours is the copy's)
        return
    np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), **_tol(dtype))


def test_antialiased_interpolate_is_differentiable_twice_and_batches_like_one_image():
    x = ng.tensor(np.random.default_rng(0).normal(size=(2, 1, 7, 6)), requires_grad=True)
    resize = lambda t: ng.nn.functional.interpolate(t, size=(3, 4), mode="bicubic",  # noqa: E731
                                                     antialias=True).pow(2)
    assert ng.autograd.gradcheck(resize, (x,)) and ng.autograd.gradgradcheck(resize, (x,))
    both = ng.nn.functional.interpolate(x, size=(3, 4), mode="bilinear", antialias=True)
    one = ng.nn.functional.interpolate(x[1:], size=(3, 4), mode="bilinear", antialias=True)
    np.testing.assert_allclose(both[1:].detach().numpy(), one.detach().numpy(), rtol=1e-12)


@pytest.mark.parametrize("call", [
    lambda F, x: F.interpolate(x[0], size=(3,), mode="linear", antialias=True),
    lambda F, x: F.interpolate(x, size=(3, 4), mode="lanczos"),
    lambda F, x: F.interpolate(x, size=(3, 4), mode="lanczos", antialias=True,
                               align_corners=True),
    lambda F, x: F.interpolate(x, size=(3, 4), mode="nearest", antialias=True),
    lambda F, x: F.interpolate(x, size=(0, 2), mode="bilinear"),
    lambda F, x: F.interpolate(x, size=(3, 0), mode="bicubic", antialias=True),
    lambda F, x: F.interpolate(x, size=(0, 2), mode="nearest"),
    lambda F, x: F.interpolate(x[:, :, :, :0], size=(2, 2), mode="nearest-exact"),
    lambda F, x: F.interpolate(x[0], size=(0,), mode="linear"),
    lambda F, x: F.interpolate(x[0], size=(0,), mode="nearest"),
    lambda F, x: F.interpolate(x[None], size=(1, 0, 2), mode="trilinear"),
    lambda F, x: F.interpolate(x, scale_factor=0.1, mode="bilinear"),
])
def test_interpolate_errors_match_torch(call):
    x = np.ones((1, 1, 5, 4), np.float32)
    _raises_like(lambda: call(ng.nn.functional, ng.tensor(x)),
                 lambda: call(torch.nn.functional, torch.tensor(x)))


def test_area_interpolate_to_an_empty_size_is_empty_as_in_torch():
    out = ng.nn.functional.interpolate(ng.ones(1, 1, 5, 4), size=(0, 2), mode="area")
    assert tuple(out.shape) == tuple(torch.nn.functional.interpolate(
        torch.ones(1, 1, 5, 4), size=(0, 2), mode="area").shape)


@on_cuda
def test_antialiased_interpolate_on_cuda():
    x = np.random.default_rng(1).normal(size=(1, 2, 9, 7))
    t = ng.tensor(x, device="cuda", requires_grad=True)
    out = ng.nn.functional.interpolate(t, size=(4, 3), mode="bicubic", antialias=True)
    out.sum().backward()
    assert out.device.type == t.grad.device.type == "cuda"
    a = torch.tensor(x, requires_grad=True)
    want = torch.nn.functional.interpolate(a, size=(4, 3), mode="bicubic", antialias=True)
    want.sum().backward()
    np.testing.assert_allclose(out.detach().cpu().numpy(), want.detach().numpy(), rtol=1e-10)
    np.testing.assert_allclose(t.grad.cpu().numpy(), a.grad.numpy(), rtol=1e-10, atol=1e-12)


# ---------------------------------------------------------------- geqrf, householder_product

@DTYPES
@pytest.mark.parametrize("shape", [(5, 3), (4, 4), (3, 5), (2, 4, 3), (0, 3)])
def test_geqrf_matches_torch(shape, dtype):
    x = np.random.default_rng(0).normal(size=shape).astype(dtype)
    got, want = ng.geqrf(ng.tensor(x)), torch.geqrf(torch.tensor(x))
    assert type(got).__name__ == "geqrf" and got._fields == ("a", "tau")
    for g, w in zip(got, want):
        assert tuple(g.shape) == tuple(w.shape) and g.dtype.name == str(w.dtype)[6:]
        np.testing.assert_allclose(g.numpy(), w.numpy(), **_tol(dtype))
    assert ng.Tensor.geqrf(ng.tensor(x)).tau.shape == want.tau.shape


def test_geqrf_is_recorded_but_not_differentiable_as_in_torch():
    for lib in (ng, torch):
        a, tau = lib.geqrf(lib.ones(3, 2, requires_grad=True) + lib.eye(3, 2))
        assert a.requires_grad and tau.requires_grad
        assert a.grad_fn.name() == "GeqrfBackward0"
    _raises_like(lambda: ng.geqrf(ng.ones(3, 2, requires_grad=True)).a.sum().backward(),
                 lambda: torch.geqrf(torch.ones(3, 2, requires_grad=True)).a.sum().backward())


# (input shape, number of reflectors)
HOUSEHOLDER = [((5, 3), 3), ((5, 3), 2), ((4, 4), 4), ((2, 6, 3), 1), ((2, 3, 4, 2), 2)]


@DTYPES
@pytest.mark.parametrize("shape,k", HOUSEHOLDER)
def test_householder_product_values_and_gradients_match_torch(shape, k, dtype):
    rng = np.random.default_rng(k)
    x = rng.normal(size=shape).astype(dtype)
    tau = rng.uniform(0, 2, shape[:-2] + (k,)).astype(dtype)
    a, t = torch.tensor(x, requires_grad=True), torch.tensor(tau, requires_grad=True)
    b, u = ng.tensor(x, requires_grad=True), ng.tensor(tau, requires_grad=True)
    want = torch.linalg.householder_product(a, t)
    got = ng.linalg.householder_product(b, u)
    assert got.grad_fn.name() == "LinalgHouseholderProductBackward0"
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), **_tol(dtype))
    np.testing.assert_allclose(ng.orgqr(b, u).detach().numpy(), want.detach().numpy(),
                               **_tol(dtype))
    g = rng.normal(size=tuple(want.shape)).astype(dtype)
    want.backward(torch.tensor(g))
    got.backward(ng.tensor(g))
    tol = dict(rtol=1e-4, atol=1e-5) if dtype == np.float32 else _tol(dtype)
    np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), **tol)
    np.testing.assert_allclose(u.grad.numpy(), t.grad.numpy(), **tol)


def test_householder_product_is_differentiable_twice():
    rng = np.random.default_rng(3)
    x = ng.tensor(rng.normal(size=(2, 4, 3)), requires_grad=True)
    t = ng.tensor(rng.uniform(0, 2, (2, 2)), requires_grad=True)
    assert ng.autograd.gradgradcheck(ng.linalg.householder_product, (x, t))
    q = ng.Tensor.orgqr(x, t)
    assert tuple(q.shape) == (2, 4, 3)


@pytest.mark.parametrize("args", [
    lambda L: (L.ones(3), L.ones(1)),
    lambda L: (L.ones(3, 4), L.ones(2)),
    lambda L: (L.ones(4, 3), L.ones(4)),
    lambda L: (L.ones(4, 3), L.ones(2, 2)),
    lambda L: (L.ones(2, 4, 3), L.ones(3, 2)),
    lambda L: (L.ones(4, 3), L.ones(2, dtype=L.float64)),
    lambda L: (L.ones(3, 3, dtype=L.int64), L.ones(2, dtype=L.int64)),
])
def test_householder_product_errors_match_torch(args):
    _raises_like(lambda: ng.linalg.householder_product(*args(ng)),
                 lambda: torch.linalg.householder_product(*args(torch)))


@pytest.mark.parametrize("arg", [lambda L: L.ones(3), lambda L: L.ones(3, 3, dtype=L.int64)])
def test_geqrf_errors_match_torch(arg):
    _raises_like(lambda: ng.geqrf(arg(ng)), lambda: torch.geqrf(arg(torch)))


@on_cuda
def test_geqrf_and_householder_product_on_cuda():
    x = np.random.default_rng(2).normal(size=(5, 3))
    a, tau = ng.geqrf(ng.tensor(x, device="cuda"))
    assert a.device.type == tau.device.type == "cuda"
    a = a.requires_grad_()
    q = ng.linalg.householder_product(a, tau)
    q.sum().backward()
    want_a, want_tau = torch.geqrf(torch.tensor(x))
    ta = want_a.requires_grad_()
    want = torch.linalg.householder_product(ta, want_tau)
    want.sum().backward()
    np.testing.assert_allclose(q.detach().cpu().numpy(), want.detach().numpy(), atol=1e-12)
    np.testing.assert_allclose(a.grad.cpu().numpy(), ta.grad.numpy(), atol=1e-10)


# ---------------------------------------------------------------- parametrizations.orthogonal

def _linear_pair(shape, seed):
    """The same Linear (weight of ``shape``, a batch of matrices when 3-d) in both libraries."""
    rng = np.random.default_rng(seed)
    w, b = rng.normal(size=shape), rng.normal(size=shape[-2])
    lt = torch.nn.Linear(shape[-1], shape[-2]).double()
    ln = ng.nn.Linear(shape[-1], shape[-2]).double()
    lt.weight, lt.bias = torch.nn.Parameter(torch.tensor(w)), torch.nn.Parameter(torch.tensor(b))
    ln.weight, ln.bias = ng.nn.Parameter(ng.tensor(w)), ng.nn.Parameter(ng.tensor(b))
    return lt, ln


MAPS = [None, "matrix_exp", "cayley", "householder"]


@pytest.mark.parametrize("use_trivialization", [True, False], ids=["triv", "plain"])
@pytest.mark.parametrize("orthogonal_map", MAPS)
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 4, 3)])
def test_orthogonal_weight_matches_torch(shape, orthogonal_map, use_trivialization):
    lt, ln = _linear_pair(shape, 0)
    TP.orthogonal(lt, orthogonal_map=orthogonal_map, use_trivialization=use_trivialization)
    NP.orthogonal(ln, orthogonal_map=orthogonal_map, use_trivialization=use_trivialization)
    want, got = lt.weight, ln.weight
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), atol=1e-12)
    wide = shape[-2] < shape[-1]
    gram = got @ got.mT if wide else got.mT @ got
    np.testing.assert_allclose(gram.detach().numpy(), np.broadcast_to(
        np.eye(min(shape[-2:])), gram.shape), atol=1e-12)
    if use_trivialization and shape[-2] != shape[-1]:
        # (the base is completed with random columns, drawn by each library's generator)
        return
    g = np.random.default_rng(1).normal(size=shape)
    (want * torch.tensor(g)).sum().backward()
    (got * ng.tensor(g)).sum().backward()
    np.testing.assert_allclose(ln.parametrizations.weight.original.grad.numpy(),
                               lt.parametrizations.weight.original.grad.numpy(), atol=1e-10)


@pytest.mark.parametrize("orthogonal_map", MAPS)
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5)])
def test_assigning_an_orthogonal_weight_matches_torch(shape, orthogonal_map):
    for use_trivialization in (True, False):
        lt, ln = _linear_pair(shape, 2)
        TP.orthogonal(lt, orthogonal_map=orthogonal_map, use_trivialization=use_trivialization)
        NP.orthogonal(ln, orthogonal_map=orthogonal_map, use_trivialization=use_trivialization)
        q = np.linalg.qr(np.random.default_rng(3).normal(size=(max(shape), min(shape))))[0]
        q = q.T if shape[0] < shape[1] else q

        def assign_t():
            lt.weight = torch.tensor(q)

        def assign_n():
            ln.weight = ng.tensor(q)

        if not use_trivialization and orthogonal_map in ("matrix_exp", "cayley", None) \
                and (orthogonal_map is not None or shape[0] == shape[1]):
            _raises_like(assign_n, assign_t)
            continue
        assign_t()
        assign_n()
        np.testing.assert_allclose(ln.weight.detach().numpy(), q, atol=1e-12)
        np.testing.assert_allclose(ln.weight.detach().numpy(), lt.weight.detach().numpy(),
                                   atol=1e-12)


def test_orthogonal_module_repr_buffers_and_errors_match_torch():
    lt, ln = torch.nn.Linear(3, 4), ng.nn.Linear(3, 4)
    assert repr(NP.orthogonal(ln)) == repr(TP.orthogonal(lt))
    assert [n for n, _ in ln.named_buffers()] == [n for n, _ in lt.named_buffers()] == [
        "parametrizations.weight.0.base"]
    assert NP.__all__ == TP.__all__
    for call in (lambda P, L: P.orthogonal(L.Linear(3, 4), "bias"),
                 lambda P, L: P.orthogonal(L.Linear(3, 4), "nope"),
                 lambda P, L: P.orthogonal(L.Linear(3, 4), orthogonal_map="svd")):
        _raises_like(lambda: call(NP, ng.nn), lambda: call(TP, torch.nn))
    lt, ln = _linear_pair((4, 3), 4)
    TP.orthogonal(lt)
    NP.orthogonal(ln)

    def assign(layer, lib):
        layer.weight = lib.ones(3, 3, dtype=lib.float64)

    _raises_like(lambda: assign(ln, ng), lambda: assign(lt, torch))


def test_an_orthogonal_layer_trains_and_stays_orthogonal():
    lt, ln = _linear_pair((4, 4), 5)
    TP.orthogonal(lt, orthogonal_map="cayley")
    NP.orthogonal(ln, orthogonal_map="cayley")
    x = np.random.default_rng(6).normal(size=(8, 4))
    for layer, lib in ((lt, torch), (ln, ng)):
        opt = lib.optim.SGD(layer.parameters(), lr=0.2)
        for _ in range(3):
            opt.zero_grad()
            layer(lib.tensor(x)).tanh().sum().backward()
            opt.step()
    np.testing.assert_allclose(ln.weight.detach().numpy(), lt.weight.detach().numpy(),
                               atol=1e-10)
    w = ln.weight.detach().numpy()
    np.testing.assert_allclose(w.T @ w, np.eye(4), atol=1e-12)
