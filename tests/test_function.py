"""Custom ``autograd.Function``, ``once_differentiable`` and anomaly detection (behaviour and
messages as PyTorch 2.13 has them)."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import numbagrad as ng
from numbagrad.autograd import Function, gradcheck, gradgradcheck, once_differentiable

from devices import cpu_only, on_each_device  # noqa: E402

# every test runs on the CPU and (under -m cuda) on CUDA: factories default to that device
pytestmark = on_each_device


def vals(t):
    return t.detach().cpu().numpy().tolist()


class Mul(Function):
    @staticmethod
    def forward(ctx, w, x, b, x_requires_grad=True):
        ctx.x_requires_grad = x_requires_grad
        ctx.save_for_backward(w, x)
        return w * x + b

    @staticmethod
    def backward(ctx, grad_output):
        w, x = ctx.saved_tensors
        grad_x = grad_output * w if ctx.x_requires_grad else None
        return grad_output * x, grad_x, grad_output, None


@cpu_only  # asserts CPU printing; test_device.py checks CUDA printing
def test_apply_builds_a_named_node_with_edges_per_tensor_argument():
    w = ng.tensor([2.0, 3.0], requires_grad=True)
    x = ng.tensor([4.0, 5.0], requires_grad=True)
    b = ng.tensor([1.0, 1.0], requires_grad=True)
    z = Mul.apply(w, x, b, False)
    assert str(z) == "tensor([ 9., 16.], grad_fn=<MulBackward>)"
    node = z.grad_fn
    assert node.name() == "MulBackward" and type(node).__name__ == "MulBackward"
    assert re.fullmatch(r"<numbagrad\.autograd\.function\.MulBackward object at 0x[0-9a-f]+>",
                        repr(node))
    assert [n.variable for n, _ in node.next_functions] == [w, x, b]
    assert node.needs_input_grad == (True, True, True, False)
    z.sum().backward()
    assert vals(w.grad) == [4.0, 5.0] and x.grad is None and vals(b.grad) == [1.0, 1.0]
    with pytest.raises(RuntimeError, match=r"^Trying to backward through the graph a second time"):
        node.saved_tensors


def test_gradcheck_and_gradgradcheck_of_a_custom_function():
    class Cube(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x**2 * g  # differentiable ops: works under create_graph

    x = ng.tensor([0.5, -1.5, 2.0], dtype=ng.float64, requires_grad=True)
    assert gradcheck(Cube.apply, (x,))
    assert gradgradcheck(Cube.apply, (x,))
    (g,) = ng.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
    (gg,) = ng.autograd.grad(g.sum(), x)
    assert vals(gg) == [3.0, -9.0, 12.0]  # 6x


def test_no_record_without_grad():
    x = ng.ones(2)
    assert not Mul.apply(x, x, x).requires_grad
    w = ng.ones(2, requires_grad=True)
    with ng.no_grad():
        out = Mul.apply(w, x, x)
    assert not out.requires_grad and out.grad_fn is None


def test_wrong_gradient_count_and_shape():
    class Bad(Function):
        @staticmethod
        def forward(ctx, a, k):
            return a * k

        @staticmethod
        def backward(ctx, g):
            return g

    a = ng.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError) as e:
        Bad.apply(a, 2).sum().backward()
    assert str(e.value) == "function BadBackward returned an incorrect number of gradients (expected 2, got 1)"

    class BadShape(Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return ng.ones(2)

    with pytest.raises(RuntimeError) as e:
        BadShape.apply(a).sum().backward()
    assert str(e.value) == (
        "Function BadShapeBackward returned an invalid gradient at index 0 - got [2] but "
        "expected shape compatible with [3]"
    )

    class Broadcast(Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return ng.ones(2, 3)  # summed back to the input's shape, as in PyTorch

    Broadcast.apply(a).sum().backward()
    assert vals(a.grad) == [2.0, 2.0, 2.0]


def test_returning_an_input_gives_a_new_tensor():
    class Id(Function):
        @staticmethod
        def forward(ctx, a):
            return a

        @staticmethod
        def backward(ctx, g):
            return g * 3

    a = ng.ones(3, requires_grad=True)
    o = Id.apply(a)
    assert o is not a and not o.is_leaf and a.is_leaf
    o.sum().backward()
    assert vals(a.grad) == [3.0, 3.0, 3.0]


def test_mark_dirty():
    class Double_(Function):
        @staticmethod
        def forward(ctx, a):
            a.mul_(2)
            ctx.mark_dirty(a)
            return a

        @staticmethod
        def backward(ctx, g):
            return g * 2

    a = ng.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError) as e:
        Double_.apply(a)
    assert str(e.value) == "a leaf Variable that requires grad has been used in an in-place operation."
    y = a * 1
    o = Double_.apply(y)
    assert o is y and y.grad_fn.name() == "Double_Backward" and y._version == 2
    o.sum().backward()
    assert vals(a.grad) == [2.0, 2.0, 2.0]


def test_several_outputs_non_differentiable_and_materialized_grads():
    seen = []

    class Two(Function):
        @staticmethod
        def forward(ctx, a):
            idx = ng.tensor([0, 1])
            ctx.mark_non_differentiable(idx)
            return a * 2, a * 3, idx

        @staticmethod
        def backward(ctx, g1, g2, g3):
            seen.append((vals(g1), vals(g2), vals(g3)))
            return g1 * 2 + g2 * 3

    a = ng.ones(3, requires_grad=True)
    p, q, r = Two.apply(a)
    assert p.grad_fn is q.grad_fn and q.output_nr == 1
    assert not r.requires_grad and r.grad_fn is None
    p.sum().backward()
    assert seen == [([1.0] * 3, [0.0] * 3, [0, 0])]  # missing gradients arrive as zeros
    assert vals(a.grad) == [2.0, 2.0, 2.0]

    class NoMaterialize(Function):
        @staticmethod
        def forward(ctx, a):
            ctx.set_materialize_grads(False)
            return a * 2, a * 2

        @staticmethod
        def backward(ctx, g1, g2):
            seen.append((g1 is None, g2 is None))
            return g1

    o1, _ = NoMaterialize.apply(a)
    o1.sum().backward()
    assert seen[-1] == (False, True)


def test_saved_tensors_are_version_checked():
    class Sq(Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * a

        @staticmethod
        def backward(ctx, g):
            (a,) = ctx.saved_tensors
            return 2 * a * g

    b = ng.tensor([3.0], requires_grad=True)
    y = b * 1
    out = Sq.apply(y)
    y.add_(1)
    with pytest.raises(RuntimeError) as e:
        out.backward()
    assert "[numbagrad.FloatTensor [1]], which is output 0 of AddBackward0, is at version 1; expected version 0" in str(e.value)


def test_saved_output_is_not_a_cycle_and_works():
    class Exp(Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * y

    x = ng.tensor([0.0, 1.0], dtype=ng.float64, requires_grad=True)
    assert gradcheck(Exp.apply, (x,))
    assert gradgradcheck(Exp.apply, (x,))


def test_setup_context_style():
    class Scale(Function):
        @staticmethod
        def forward(a, k):
            return a * k

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.k = inputs[1]

        @staticmethod
        def backward(ctx, g):
            return g * ctx.k, None

    a = ng.tensor([3.0], requires_grad=True)
    Scale.apply(a, 5).backward()
    assert vals(a.grad) == [5.0]


def test_once_differentiable():
    class Sq(Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * a

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            (a,) = ctx.saved_tensors
            assert not ng.is_grad_enabled()
            return 2 * a * g

    a = ng.tensor([3.0], requires_grad=True)
    (g,) = ng.autograd.grad(Sq.apply(a), a, create_graph=True)
    assert vals(g) == [6.0] and not g.requires_grad
    # an upstream gradient that requires grad: differentiating again is an error
    y = Sq.apply(a)
    up = ng.tensor([1.0], requires_grad=True)
    (g,) = ng.autograd.grad(y, a, up, create_graph=True)
    assert g.requires_grad
    with pytest.raises(RuntimeError) as e:
        g.backward()
    assert str(e.value) == (
        "trying to differentiate twice a function that was marked with @once_differentiable"
    )


def test_legacy_instance_use_is_refused():
    with pytest.raises(RuntimeError, match="Legacy autograd function with non-static forward"):
        Mul()


# ---------------------------------------------------------------- anomaly detection


class NanBackward(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * float("nan")


def test_detect_anomaly_checks_nan_and_reports_the_forward_stack():
    x = ng.ones(2, requires_grad=True)
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        mode = ng.autograd.detect_anomaly()
    with mode:
        assert ng.autograd.is_anomaly_enabled()
        y = NanBackward.apply(x)
        with pytest.raises(RuntimeError) as e:
            y.sum().backward()
        assert str(e.value) == "Function 'NanBackwardBackward' returned nan values in its 0th output."
    assert not ng.autograd.is_anomaly_enabled()
    # without anomaly mode the NaN goes through
    NanBackward.apply(x).sum().backward()
    assert np.isnan(x.grad.cpu().numpy()).all()


def test_anomaly_warning_names_the_forward_line():
    class Boom(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            raise ValueError("boom")

    x = ng.ones(2, requires_grad=True)
    with ng.autograd.set_detect_anomaly(True, check_nan=False):
        y = Boom.apply(x)  # THIS LINE
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            with pytest.raises(ValueError, match="boom"):
                y.sum().backward()
    msg = str(rec[0].message)
    assert msg.startswith("Error detected in BoomBackward. Traceback of forward call that caused the error:")
    assert "y = Boom.apply(x)  # THIS LINE" in msg
    assert not ng.autograd.is_anomaly_enabled()
