"""autograd.functional and numbagrad.func: values, shapes and tuple structure against
PyTorch's (torch.autograd.functional, torch.func) when installed, and against finite
differences always; PyTorch's errors."""

from __future__ import annotations

import numpy as np
import pytest

import numbagrad as ng
import numbagrad.autograd.functional as AF
import numbagrad.func as NF

pytestmark = pytest.mark.filterwarnings(
    "ignore:`torch.jit.script` is deprecated:DeprecationWarning")  # (torch.func's import)

RNG = np.random.default_rng(0)
A, B = RNG.standard_normal((2, 3)), RNG.standard_normal(3)


def f(x, y):  # two inputs, two outputs
    return (x * y).sin().sum(0) * y.exp(), (x ** 2).sum()


def s(x, y):  # scalar
    return (x.sin() * y).sum() + (y ** 3).sum()


def _same(ours, ref, path="out"):
    """Same nesting (tuple/list/dict), shapes, values and requires_grad."""
    if isinstance(ref, (tuple, list)):
        assert type(ours) is type(ref) and len(ours) == len(ref), path
        for k, (a, b) in enumerate(zip(ours, ref)):
            _same(a, b, f"{path}[{k}]")
    elif isinstance(ref, dict):
        assert ours.keys() == ref.keys(), path
        for k in ref:
            _same(ours[k], ref[k], f"{path}[{k!r}]")
    else:
        assert tuple(ours.shape) == tuple(ref.shape), path
        assert ours.requires_grad == ref.requires_grad, path
        np.testing.assert_allclose(ours.detach().numpy(), ref.detach().numpy(), rtol=1e-10,
                                   atol=1e-12, err_msg=path)


def _fd_jacobian(fn, arrays, j, eps=1e-6):
    """d fn(*arrays) / d arrays[j] by central differences, as out.shape + in.shape."""
    base = arrays[j]
    cols = []
    for k in range(base.size):
        d = np.zeros(base.size)
        d[k] = eps
        plus = [a if i != j else a + d.reshape(a.shape) for i, a in enumerate(arrays)]
        minus = [a if i != j else a - d.reshape(a.shape) for i, a in enumerate(arrays)]
        hi = fn(*[ng.tensor(a) for a in plus]).numpy()
        lo = fn(*[ng.tensor(a) for a in minus]).numpy()
        cols.append((hi - lo).reshape(-1) / (2 * eps))
    out_shape = fn(*[ng.tensor(a) for a in arrays]).shape
    return np.stack(cols, 1).reshape(*out_shape, *base.shape)


def _tensors(lib):
    return lib.tensor(A), lib.tensor(B)


# ---------------------------------------------------------------- finite differences (always)


def test_jacobian_and_hessian_match_finite_differences():
    x, y = _tensors(ng)
    jac = AF.jacobian(f, (x, y))
    for i in range(2):
        for j in range(2):
            ref = _fd_jacobian(lambda a, b: f(a, b)[i], [A, B], j)
            np.testing.assert_allclose(jac[i][j].numpy(), ref, rtol=1e-6, atol=1e-8)
    hes = AF.hessian(s, (x, y))
    for i in range(2):
        for j in range(2):
            ref = _fd_jacobian(lambda a, b: AF.jacobian(s, (a, b))[i], [A, B], j)
            np.testing.assert_allclose(hes[i][j].numpy(), ref, rtol=1e-6, atol=1e-8)
    for transform in (NF.jacrev, NF.jacfwd):
        got = transform(lambda b: f(ng.tensor(A), b)[0])(y)
        ref = _fd_jacobian(lambda b: f(ng.tensor(A), b)[0], [B], 0)
        np.testing.assert_allclose(got.numpy(), ref, rtol=1e-6, atol=1e-8)
    got = NF.hessian(lambda b: s(ng.tensor(A), b))(y)
    ref = _fd_jacobian(lambda b: NF.grad(lambda b: s(ng.tensor(A), b))(b), [B], 0)
    np.testing.assert_allclose(got.numpy(), ref, rtol=1e-6, atol=1e-8)


def test_grad_of_grad_matches_finite_differences():
    y = ng.tensor(B)
    g2 = NF.grad(lambda b: NF.grad(lambda b: (b.sin() * b).sum())(b).sum())(y)
    ref = _fd_jacobian(lambda b: NF.grad(lambda b: (b.sin() * b).sum())(b).sum(), [B], 0)
    np.testing.assert_allclose(g2.numpy(), ref, rtol=1e-6, atol=1e-8)


# ---------------------------------------------------------------- against PyTorch

AUTOGRAD_FUNCTIONAL = {
    "vjp": lambda L, F, x, y: F.vjp(f, (x, y), tuple(L.ones_like(o) for o in f(x, y))),
    "vjp_single": lambda L, F, x, y: F.vjp(lambda y: y.exp(), y, L.ones_like(y)),
    "jvp": lambda L, F, x, y: F.jvp(f, (x, y), (L.ones_like(x), L.ones_like(y))),
    "jacobian": lambda L, F, x, y: F.jacobian(f, (x, y)),
    "jacobian_single": lambda L, F, x, y: F.jacobian(lambda y: y.exp() * y.sum(), y),
    "jacobian_vectorize": lambda L, F, x, y: F.jacobian(f, (x, y), vectorize=True),
    "jacobian_forward": lambda L, F, x, y: F.jacobian(f, (x, y), vectorize=True,
                                                      strategy="forward-mode"),
    "jacobian_create_graph": lambda L, F, x, y: F.jacobian(
        lambda y: y.exp(), y.requires_grad_(), create_graph=True),
    "hessian": lambda L, F, x, y: F.hessian(s, (x, y)),
    "hessian_single": lambda L, F, x, y: F.hessian(lambda y: (y ** 3).sum(), y),
    "hessian_forward": lambda L, F, x, y: F.hessian(s, (x, y), vectorize=True,
                                                    outer_jacobian_strategy="forward-mode"),
    "hvp": lambda L, F, x, y: F.hvp(s, (x, y), (L.ones_like(x), L.ones_like(y))),
    "vhp": lambda L, F, x, y: F.vhp(s, (x, y), (L.ones_like(x), L.ones_like(y))),
}

FUNC = {
    "grad": lambda L, F, x, y: F.grad(s)(x, y),
    "grad_argnums": lambda L, F, x, y: F.grad(s, argnums=(0, 1))(x, y),
    "grad_has_aux": lambda L, F, x, y: F.grad(lambda x, y: (s(x, y), x * 2), has_aux=True)(x, y),
    "grad_and_value": lambda L, F, x, y: F.grad_and_value(s, argnums=1)(x, y),
    "grad_of_grad": lambda L, F, x, y: F.grad(
        lambda y: F.grad(lambda y: (y ** 3).sum())(y).sum())(y),
    "grad_dict": lambda L, F, x, y: F.grad(lambda d: (d["a"].sin() * d["b"]).sum())(
        {"a": x, "b": y}),
    "grad_closure": lambda L, F, x, y: F.grad(lambda a: (a * y).sum())(x[0]),
    "vjp": lambda L, F, x, y: (lambda o, fn: (o, fn((L.ones_like(o[0]), L.ones_like(o[1])))))(
        *F.vjp(f, x, y)),
    "jvp": lambda L, F, x, y: F.jvp(f, (x, y), (L.ones_like(x), L.ones_like(y))),
    "jacrev": lambda L, F, x, y: F.jacrev(f, argnums=(0, 1))(x, y),
    "jacfwd": lambda L, F, x, y: F.jacfwd(f, argnums=(0, 1))(x, y),
    "jacfwd_single": lambda L, F, x, y: F.jacfwd(lambda y: y.exp() * y.sum())(y),
    "hessian": lambda L, F, x, y: F.hessian(s, argnums=(0, 1))(x, y),
    "jacrev_of_jacrev": lambda L, F, x, y: F.jacrev(F.jacrev(lambda y: (y.sin() * y).sum()))(y),
    "vmap": lambda L, F, x, y: F.vmap(lambda r, y: (r * y).sum())(x, y.expand(2, 3)),
    "vmap_dims": lambda L, F, x, y: F.vmap(lambda c, y: (c * y, c.sum()), in_dims=(1, None),
                                           out_dims=(1, 0))(x, y[:2]),
    "vmap_of_grad": lambda L, F, x, y: F.vmap(F.grad(lambda r: (r.sin() * r).sum()))(x),
}


@pytest.mark.parametrize("name", sorted(AUTOGRAD_FUNCTIONAL))
def test_autograd_functional_matches_torch(name):
    torch = pytest.importorskip("torch")
    fn = AUTOGRAD_FUNCTIONAL[name]
    _same(fn(ng, AF, *_tensors(ng)), fn(torch, torch.autograd.functional, *_tensors(torch)))


@pytest.mark.parametrize("name", sorted(FUNC))
def test_func_matches_torch(name):
    torch = pytest.importorskip("torch")
    import torch.func  # noqa: F401 (a submodule: not imported by ``import torch`` itself)

    fn = FUNC[name]
    _same(fn(ng, NF, *_tensors(ng)), fn(torch, torch.func, *_tensors(torch)))


def test_grad_keeps_the_graph_of_a_closure():
    w = ng.tensor(B, requires_grad=True)
    g = NF.grad(lambda x: (x * w).sin().sum())(ng.tensor(B))
    assert g.requires_grad
    gw, = ng.autograd.grad(g.sum(), w)
    np.testing.assert_allclose(gw.numpy(), -np.sin(B * B) * B * B + np.cos(B * B), rtol=1e-12)


ERRORS = [
    lambda L, F, FN: F.vjp(lambda x: x * 2, L.ones(3)),
    lambda L, F, FN: F.jvp(lambda x: x, L.ones(2), L.ones(3)),
    lambda L, F, FN: F.jvp(lambda x, y: x, (L.ones(2), L.ones(2)), (L.ones(2),)),
    lambda L, F, FN: F.jacobian(lambda x: L.ones(2), L.ones(2), strict=True),
    lambda L, F, FN: F.jacobian(lambda x: x, [L.ones(2)]),
    lambda L, F, FN: F.jacobian(lambda x: x, L.ones(2), strategy="forward"),
    lambda L, F, FN: F.jacobian(lambda x: x, L.ones(2), strategy="forward-mode"),
    lambda L, F, FN: F.jacobian(lambda x: x, L.ones(2), strict=True, vectorize=True),
    lambda L, F, FN: F.hessian(lambda x: x, L.ones(2)),
    lambda L, F, FN: F.hvp(lambda x: x, L.ones(2), L.ones(2)),
    lambda L, F, FN: F.vhp(lambda x: (x * 0).sum().detach(), L.ones(2), L.ones(2), strict=True),
    lambda L, F, FN: FN.grad(lambda x: x)(L.ones(2)),
    lambda L, F, FN: FN.grad(lambda x: 1.0)(L.ones(2)),
    lambda L, F, FN: FN.grad(lambda x: x.sum(), has_aux=True)(L.ones(2)),
    lambda L, F, FN: FN.grad(lambda x: x.sum(), argnums=2)(L.ones(2)),
    lambda L, F, FN: FN.grad(lambda x: x.sum(), argnums=(0, 0))(L.ones(2)),
    lambda L, F, FN: FN.vmap(lambda x, y: x + y)(L.ones(2, 3), L.ones(3, 3)),
]


@pytest.mark.parametrize("k", range(len(ERRORS)))
def test_errors_match_torch(k):
    torch = pytest.importorskip("torch")
    import torch.func  # noqa: F401

    def outcome(L, F, FN):
        try:
            ERRORS[k](L, F, FN)
        except Exception as e:  # noqa: BLE001 (the type and text are what is compared)
            return type(e).__name__, str(e).replace("torch.", "numbagrad.")
        return None

    ours = outcome(ng, AF, NF)
    assert ours is not None
    assert ours == outcome(torch, torch.autograd.functional, torch.func)


def test_functional_call_swaps_parameters_and_buffers():
    """Against the registries a PyTorch Module keeps (``_parameters``, ``_buffers``), duck
    typed: the call sees the given tensors, the module gets its own back."""

    class Linear:
        def __init__(self):
            self._parameters = {"weight": ng.ones(3, 2, dtype=ng.float64)}
            self._buffers = {"shift": ng.zeros(2, dtype=ng.float64)}

        def __getattr__(self, name):
            for table in ("_parameters", "_buffers"):
                if name in self.__dict__.get(table, {}):
                    return self.__dict__[table][name]
            raise AttributeError(name)

        def __call__(self, x):
            return x @ self.weight + self.shift

    class Net:
        def __init__(self):
            self.layer = Linear()

        def __call__(self, x):
            return self.layer(x).sum()

    net, x = Net(), ng.tensor(A)
    w = ng.tensor(RNG.standard_normal((3, 2)))
    out = NF.functional_call(net, ({"layer.weight": w}, {"layer.shift": ng.ones(2)}), (x,))
    assert float(out) == pytest.approx(float((A @ w.numpy() + 1).sum()))
    assert float(net(x)) == pytest.approx(float(A.sum() * 2))  # its own parameters are back
    g = NF.grad(lambda p: NF.functional_call(net, p, x))({"layer.weight": w})
    np.testing.assert_allclose(g["layer.weight"].numpy(), np.repeat(A.sum(0)[:, None], 2, 1))


def test_vmap_randomness_as_pytorch():
    """vmap's ``randomness``: "error" (the default) refuses a draw from the default generator,
    "same" gives every index the same draws, "different" its own; anything else is
    PyTorch's RuntimeError."""
    f = lambda x: x + ng.rand(())  # noqa: E731
    with pytest.raises(RuntimeError, match="^vmap: called random operation while in "
                                           "randomness error mode"):
        ng.func.vmap(f)(ng.ones(3))
    with pytest.raises(RuntimeError, match="^Only allowed values for randomness are 'error', "
                                           "'different', or 'same'. Got bad$"):
        ng.func.vmap(f, randomness="bad")(ng.ones(3))
    same = ng.func.vmap(f, randomness="same")(ng.zeros(4))
    assert len(set(same.tolist())) == 1
    different = ng.func.vmap(f, randomness="different")(ng.zeros(4))
    assert len(set(different.tolist())) == 4
    assert ng.func.vmap(lambda x: x * 2)(ng.ones(3)).tolist() == [2.0, 2.0, 2.0]


def test_grad_with_batched_grad_outputs_is_the_jacobian_as_pytorch():
    """``autograd.grad(..., is_grads_batched=True)``: one vector-Jacobian product per row of
    the grad_outputs, stacked (the Jacobian from the identity); and materialize_grads' zeros
    require grad under create_graph, as PyTorch's."""
    torch = pytest.importorskip("torch")
    v = np.random.default_rng(4).random(3)
    out = []
    for lib in (ng, torch):
        x = lib.tensor(v, requires_grad=True)
        y = x ** 2 + x.sum() * x[0]
        jac, = lib.autograd.grad(y, x, lib.eye(3, dtype=lib.float64), is_grads_batched=True)
        z = lib.ones(2, requires_grad=True)
        _, zero = lib.autograd.grad((x * x).sum(), [x, z], create_graph=True,
                                    materialize_grads=True)
        out.append((jac.numpy(), zero.requires_grad))
    np.testing.assert_allclose(out[0][0], out[1][0], rtol=1e-12)
    assert out[0][1] is out[1][1] is True


# (PyTorch's linearize traces f with torch.fx, which warns about a constant it folds)
@pytest.mark.filterwarnings("ignore:Attempted to insert a get_attr Node:UserWarning")
def test_linearize_as_pytorch():
    torch = pytest.importorskip("torch")
    v = np.random.default_rng(6).random(3)

    def f(a, b):
        return (a * b).sin(), a.exp() + b

    out = []
    for lib in (ng, torch):
        x = lib.tensor(v)
        primal, jvp_fn = lib.func.linearize(f, x, x * 2)
        t1, t2 = jvp_fn(lib.ones(3, dtype=lib.float64), lib.tensor(v))
        with pytest.raises(RuntimeError, match="^tangent:0 with shape"):
            jvp_fn(lib.ones(4, dtype=lib.float64), lib.ones(3, dtype=lib.float64))
        out.append([t.numpy() for t in (*primal, t1, t2)])
    for a, b in zip(*out):
        np.testing.assert_allclose(a, b, rtol=1e-12)
