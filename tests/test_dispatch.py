"""The fast path of ops/dispatch.py against the general path, op by op: the same values,
dtypes, node names and gradients, for every rank, Python-number operands and parameters."""

import numpy as np
import pytest

import numbagrad as ng
from numbagrad.ops import elementwise as E
from numbagrad.ops.registry import Elementwise

# (spelling, op name, the general call of the same op)
CASES = [
    (lambda x, y: x * y, "mul", lambda x, y: E.mul._call((x, y))),
    (lambda x, y: x + y, "add", lambda x, y: E.add._call((x, y))),
    (lambda x, y: x - y, "sub", lambda x, y: E.sub._call((x, y))),
    (lambda x, y: x / y, "div", lambda x, y: E.div._call((x, y))),
    (lambda x, y: x * 1.5, "mul", lambda x, y: E.mul._call((x, 1.5))),
    (lambda x, y: 2 * x, "mul", lambda x, y: E.mul._call((x, 2))),
    (lambda x, y: x - 0.25, "sub", lambda x, y: E.sub._call((x, 0.25))),
    (lambda x, y: x / 4, "div", lambda x, y: E.div._call((x, 4))),
    (lambda x, y: ng.sin(x), "sin", lambda x, y: E.sin._call((x,))),
    (lambda x, y: x.exp(), "exp", lambda x, y: E.exp._call((x,))),
    (lambda x, y: x ** 2, "pow", lambda x, y: E.pow._call((x, 2))),
    (lambda x, y: x ** 0.5, "pow", lambda x, y: E.pow._call((x, 0.5))),
    (lambda x, y: 1 - x, "rsub", lambda x, y: E.rsub._call((x, 1))),
    (lambda x, y: x.clamp(-0.5, 0.5), "clamp", lambda x, y: E.clamp._call((x, -0.5, 0.5))),
    (lambda x, y: x * x, "mul", lambda x, y: E.mul._call((x, x))),
]


@pytest.fixture
def general(monkeypatch):
    """The names of the ops that took the general path."""
    calls = []
    real = Elementwise._call
    monkeypatch.setattr(Elementwise, "_call", lambda self, a: calls.append(self.name) or real(self, a))
    return calls


@pytest.mark.parametrize("shape", [(5,), (2, 3), (2, 1, 3)], ids=str)
@pytest.mark.parametrize("dtype", [ng.float32, ng.float64], ids=str)
@pytest.mark.parametrize("case", range(len(CASES)))
def test_the_fast_path_gives_the_general_paths_values_and_gradients(general, case, dtype, shape):
    fast, name, slow = CASES[case]
    rng = np.random.default_rng(case)
    xv, yv = rng.uniform(0.2, 1.5, shape), rng.uniform(0.2, 1.5, shape)
    results = []
    for f in (fast, slow):
        x = ng.tensor(xv, dtype=dtype, requires_grad=True)
        y = ng.tensor(yv, dtype=dtype, requires_grad=True)
        out = f(x, y)
        (out * out).sum().backward()
        results.append((out, x.grad, y.grad))
        if f is fast:
            assert name not in general  # (the general fixture sees the slow call only)
    (o1, gx1, gy1), (o2, gx2, gy2) = results
    assert o1.dtype is o2.dtype is dtype and o1.shape == o2.shape == shape
    assert o1.grad_fn.name() == o2.grad_fn.name()
    np.testing.assert_array_equal(o1.detach().numpy(), o2.detach().numpy())
    np.testing.assert_array_equal(gx1.numpy(), gx2.numpy())
    assert (gy1 is None) == (gy2 is None)
    if gy1 is not None:
        np.testing.assert_array_equal(gy1.numpy(), gy2.numpy())


def test_a_number_operand_is_saved_as_a_0d_tensor_and_not_as_an_input():
    x = ng.ones(2, 3, requires_grad=True)
    y = x * 2.5
    other = y.grad_fn._saved_other
    assert other.shape == () and other.item() == 2.5 and y.grad_fn._saved_self is None
    assert y.grad_fn.next_functions[1] == (None, 0)
    y.sum().backward()
    assert x.grad.tolist() == [[2.5] * 3] * 2


def test_a_saved_nd_input_written_in_place_raises_pytorchs_error():
    x = ng.ones(2, 3, requires_grad=True)
    a = x * 1.0
    y = ng.sin(a)  # saves a
    a.add_(1)
    with pytest.raises(RuntimeError, match=r"modified by an inplace operation: "
                                           r"\[numbagrad.FloatTensor \[2, 3\]\]"):
        y.sum().backward()


def test_a_saved_nd_result_reads_back_in_its_shape():
    x = ng.full((2, 3), 0.5, requires_grad=True)
    y = x.exp()
    assert y.grad_fn._saved_result.shape == (2, 3)
    y.backward(ng.ones(2, 3), retain_graph=True)
    y.backward(ng.ones(2, 3))
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp(0.5) * np.ones((2, 3)), rtol=1e-6)


def test_contiguous_views_and_nd_inputs_take_the_fast_path(general):
    base = ng.arange(24.0).reshape(2, 3, 4).requires_grad_(True)
    row = base[1]  # a C-contiguous view: its flags come through the view
    out = row * 2.0 + row
    out.sum().backward()
    assert general == [] and base.grad[1].tolist() == [[3.0] * 4] * 3
    assert base.grad[0].tolist() == [[0.0] * 4] * 3
    base.grad = None
    (base.transpose(0, 1) * 2.0).sum().backward()  # strided: the general path
    assert general == ["mul"] and base.grad.tolist() == np.full((2, 3, 4), 2.0).tolist()


def test_what_the_fast_path_leaves_to_the_general_one(general):
    x = ng.ones(3)
    assert (x * True).tolist() == [1.0] * 3  # a bool number
    assert (ng.tensor([1, 2]) * 2).tolist() == [2, 4]  # an int tensor and a number
    assert (x * ng.ones(3, dtype=ng.float64)).dtype is ng.float64  # a cast
    assert (x[::2] + 1).tolist() == [2.0, 2.0]  # a strided view
    assert (x * ng.tensor(2.0, dtype=ng.float64)).dtype is ng.float32  # a 0-d operand, another dtype
    assert (x * ng.ones(1)[::1].expand(3)).shape == (3,)  # an expanded (not C-contiguous) view
    big = ng.ones(1 << 20, 1)
    assert (big + ng.ones(2)).shape == (1 << 20, 2)  # a broadcast result of threads' size
    assert general == ["mul", "mul", "mul", "add", "mul", "mul", "add"]
    with pytest.raises(TypeError, match=r"sin\(\) takes 1 positional argument but 2 were given"):
        E.sin(x, 2)


@pytest.mark.parametrize("shape", [(), (2, 3)], ids=str)
def test_an_inplace_result_kept_by_a_lean_node_is_checked_under_the_tensors_version(shape):
    # relu_ keeps its result, which is now v itself: writing v again must fail the backward
    v = ng.full(shape, 3.0, requires_grad=True).clone()
    v.relu_()
    v *= 0
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        (v * -1.5).sum().backward()


def test_linear_folds_only_a_contiguous_input_into_one_addmm():
    w, b = ng.ones(4, 5), ng.ones(4)
    x = ng.ones(3, 5, requires_grad=True)
    assert ng.nn.functional.linear(x.expand(2, 3, 5), w, b).grad_fn.name() == "AddBackward0"
    assert ng.nn.functional.linear(x.reshape(1, 3, 5), w, b).grad_fn.name() == "ViewBackward0"
    empty = ng.nn.functional.linear(ng.zeros(0, requires_grad=True), ng.zeros(2, 0), b[:2])
    assert empty.tolist() == [1.0, 1.0] and empty.grad_fn.name() == "ViewBackward0"


def test_the_public_names_are_the_declared_ones():
    from numbagrad import ops

    for name, fn in ops.FUNCTIONS.items():
        assert getattr(ng, name) is fn and getattr(ops, name) is fn
    for name, method in ops.METHODS.items():
        assert getattr(ng.Tensor, name) is method
    for name in ops.INPLACE:
        assert getattr(ng.Tensor, name + "_").__name__ == name + "_"
    for name, fn in ops.FUNCTIONAL.items():
        assert getattr(ng.nn.functional, name) is fn
    # an elementwise op's method is its plain function's method variant (the fast path)
    assert ng.Tensor.sin is ng.sin.method and ng.Tensor.multiply is ng.mul.method
    x = ng.tensor([0.25, 4.0])
    assert x.sqrt_() is x and x.tolist() == [0.5, 2.0] and ng.Tensor.clip_.__name__ == "clip_"


def test_a_name_declared_twice_is_refused(monkeypatch):
    from numbagrad import ops
    from numbagrad.ops.registry import PUBLIC

    monkeypatch.setattr(ops, "PUBLIC", PUBLIC + [b for b in PUBLIC if b.name == "sin"])
    with pytest.raises(ValueError, match="'sin' is declared twice as a"):
        ops._tables()


def test_matmul_propagates_nan_through_a_zero():
    # (a BLAS call through ndarray.dot returns 0 for 0 * NaN on some shapes; PyTorch gives NaN)
    x = ng.tensor([[0.0]])
    y = ng.tensor([[float("nan"), 1.0, 2.0]])
    out = (x @ y).tolist()[0]
    assert out[0] != out[0] and out[1:] == [0.0, 0.0]
    out = ng.matmul(ng.tensor([0.0]), y).tolist()
    assert out[0] != out[0]


@pytest.mark.parametrize("op", [
    lambda x, y: x @ y,
    lambda x, y: ng.mm(x, y),
    lambda x, y: ng.bmm(x[None], y[None])[0],
    lambda x, y: ng.nn.functional.linear(x, y.t()),
    lambda x, y: ng.nn.functional.conv1d(x[None].transpose(1, 2), y.t()[:, :, None])[0].t(),
])
def test_matmul_of_inf_and_zero_is_nan_without_a_warning(op):
    # PyTorch's matmul never warns; NumPy's reports FE_INVALID (inf * 0, or set spuriously by
    # OpenBLAS on finite input) as a RuntimeWarning, an error under this suite's filters
    x = ng.tensor([[float("inf"), 1.0]], requires_grad=True)
    y = ng.tensor([[0.0, 1.0], [1.0, 1.0]])
    out = op(x, y)
    assert out.isnan().tolist() == [[True, False]]
    out.sum().backward()
    assert x.grad.tolist() == [[1.0, 2.0]]


# whole-tensor reductions of small contiguous float tensors take the ops' lean hook
# (reduce.whole); a strided view of the same values takes the general path
WHOLE = [
    (lambda x: x.sum(), "SumBackward0"),
    (lambda x: x.mean(), "MeanBackward0"),
    (lambda x: x.max(), "MaxBackward1"),
    (lambda x: ng.min(x), "MinBackward1"),
    (lambda x: x.amax(), "AmaxBackward0"),
    (lambda x: ng.amin(x), "AminBackward0"),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("spell, node", WHOLE, ids=[n for _, n in WHOLE])
def test_whole_reduction_lean_as_general(spell, node, dtype):
    values = np.array([[0.5, -1.0, 2.0], [2.0, 0.25, -3.0]])  # (a tie for max: 2.0 twice)
    x = ng.tensor(values, dtype=getattr(ng, dtype), requires_grad=True)
    wide = ng.tensor(np.stack([values, values], -1), dtype=getattr(ng, dtype),
                     requires_grad=True)
    y = wide[..., 0]  # (a strided view: the general path)
    lean, general = spell(x), spell(y)
    assert type(lean.grad_fn).__name__ == node == type(general.grad_fn).__name__
    assert lean.dtype is general.dtype and lean.shape == general.shape == ()
    np.testing.assert_array_equal(lean.detach().numpy(), general.detach().numpy())
    (gx,) = ng.autograd.grad(lean * lean, x, create_graph=True)
    (gy,) = ng.autograd.grad(general * general, y, create_graph=True)
    np.testing.assert_array_equal(gx.detach().numpy(), gy.detach().numpy())
    (ggx,) = ng.autograd.grad(gx.sum(), x)  # (create_graph: a gradient of the gradient)
    (ggy,) = ng.autograd.grad(gy.sum(), y)
    np.testing.assert_array_equal(ggx.numpy(), ggy.numpy())
    with ng.no_grad():
        assert spell(x).grad_fn is None


def test_whole_reduction_lean_version_check():
    x = ng.tensor([1.0, 3.0, 2.0], requires_grad=True)
    h = x * 1
    m = h.max()  # saves h and its result
    h.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        m.backward()
    s = h.sum()  # saves nothing: an in-place change after it is fine
    h.mul_(2)
    s.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 1.0, 1.0])


@pytest.mark.parametrize("shapes", [((4, 3), (3,)), ((3,), (4, 3)), ((4, 1), (1,)), ((2, 1, 3), (4, 1)),
                                    ((4, 3), ()), ((), (2,)), ((1,), (2, 3)), ((1, 1), (3,)),
                                    ((2, 1), (1, 1))], ids=str)
def test_broadcasting_operands_take_the_broadcast_path_with_the_general_gradients(general, shapes):
    """Two C-contiguous tensors of one dtype and different shapes (a bias added to rows): the
    op's loops over the broadcast shape, and the general node, whose backward sums each
    gradient back to its operand's shape, as PyTorch's."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    va, vb = (rng.standard_normal(s).astype(np.float32) for s in shapes)
    for name in ("add", "sub", "mul", "div", "maximum", "atan2"):
        a, b = ng.tensor(va, requires_grad=True), ng.tensor(vb, requires_grad=True)
        ta, tb = torch.tensor(va, requires_grad=True), torch.tensor(vb, requires_grad=True)
        out, tout = getattr(ng, name)(a, b), getattr(torch, name)(ta, tb)
        assert out.shape == tout.shape and out.dtype is ng.float32
        assert type(out.grad_fn).__name__ == type(tout.grad_fn).__name__
        (out * out).sum().backward()
        (tout * tout).sum().backward()
        np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=1e-6)
        np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(b.grad.numpy(), tb.grad.numpy(), rtol=1e-5, atol=1e-6)
    assert general == []
    assert (ng.tensor(va) < ng.tensor(vb)).tolist() == (torch.tensor(va) < torch.tensor(vb)).tolist()


def test_a_single_value_operand_of_an_integer_tensor(lib):
    # (the flat loop that takes the value as a number: integer arithmetic stays integer)
    x = lib.tensor([[7, -7], [5, 2]])
    cases = [(x + lib.tensor([3]), [[10, -4], [8, 5]], lib.int64),
             (lib.tensor(3) * x, [[21, -21], [15, 6]], lib.int64),
             (x // lib.tensor([[2]]), [[3, -4], [2, 1]], lib.int64),
             (lib.tensor([-9]) - x, [[-16, -2], [-14, -11]], lib.int64),
             (x > lib.tensor(4), [[True, False], [True, False]], lib.bool)]
    for out, want, dtype in cases:
        assert out.tolist() == want and out.dtype == dtype


def test_the_broadcast_error_names_the_first_mismatch_from_the_right(lib):
    with pytest.raises(RuntimeError, match=r"The size of tensor a \(3\) must match the size of "
                                           r"tensor b \(2\) at non-singleton dimension 1"):
        lib.ones(2, 3) * lib.ones(3, 2)
    with pytest.raises(RuntimeError, match=r"The size of tensor a \(2\) must match the size of "
                                           r"tensor b \(5\) at non-singleton dimension 1"):
        lib.ones(4, 2, 3) + lib.ones(5, 3)


def test_shapes_that_do_not_broadcast_raise_pytorchs_error():
    with pytest.raises(RuntimeError, match=r"The size of tensor a \(3\) must match the size of "
                                           r"tensor b \(2\) at non-singleton dimension 1"):
        ng.ones(4, 3) + ng.ones(2)


@pytest.mark.parametrize("shapes", [((4, 3), (3,)), ((4, 1), (1,)), ((), (2, 3)), ((2, 1, 3), (4, 1))],
                         ids=str)
def test_a_broadcast_node_is_lean_and_its_second_derivative_is_pytorchs(shapes):
    """A broadcast call records a lean node (its gradients summed back to each operand's
    shape by array code); under create_graph the same node takes the general backward, from
    the operands' own shapes."""
    torch = pytest.importorskip("torch")
    from numbagrad.ops.record import _general_only
    rng = np.random.default_rng(1)
    va, vb = (rng.uniform(0.5, 1.5, s) for s in shapes)
    for name in ("add", "sub", "mul", "div"):
        grads = []
        for lib in (ng, torch):
            a = lib.tensor(va, requires_grad=True)
            b = lib.tensor(vb, requires_grad=True)
            out = getattr(lib, name)(a, b)
            if lib is ng:
                assert out.grad_fn._lean.gradients is not _general_only
            loss = (out * out).sum()
            ga, gb = lib.autograd.grad(loss, (a, b), create_graph=True)
            (ga.sum() + (gb * gb).sum()).backward()
            grads.append([t.detach().numpy() for t in (ga, gb, a.grad, b.grad)])
        for mine, theirs in zip(*grads):
            assert mine.shape == theirs.shape
            np.testing.assert_allclose(mine, theirs, rtol=1e-10, atol=1e-12)


def test_a_broadcast_operand_written_in_place_raises_and_a_retained_graph_runs_twice():
    x = ng.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    s = ng.tensor([2.0], requires_grad=True)
    out = x * s
    out.sum().backward(retain_graph=True)
    out.sum().backward(retain_graph=True)
    np.testing.assert_array_equal(s.grad.numpy(), [20.0])
    np.testing.assert_array_equal(x.grad.numpy(), [[4.0, 4.0], [4.0, 4.0]])
    with ng.no_grad():
        s.mul_(3)
    with pytest.raises(RuntimeError, match=r"modified by an inplace operation: "
                                           r"\[numbagrad.FloatTensor \[1\]\] is at version 1"):
        out.sum().backward()


def test_an_empty_broadcast_sums_its_gradient_over_no_values():
    """(fuzz seeds 200071, 200286, 200387: the lean node's column sum reshaped an empty
    gradient to (-1, 0))"""
    torch = pytest.importorskip("torch")
    for sa, sb in (((3, 0), (1, 0)), ((0, 3), (1, 3)), ((0, 2), (2,))):
        grads = []
        for lib in (ng, torch):
            a = lib.zeros(*sa, requires_grad=True)
            b = lib.ones(*sb, requires_grad=True)
            (lib.pow(a, b) * 2).sum().backward()
            grads.append((a.grad.numpy(), b.grad.numpy()))
        for mine, theirs in zip(*grads):
            assert mine.shape == theirs.shape
            np.testing.assert_array_equal(mine, theirs)
