"""The activations beyond relu/elu/gelu (hardtanh, relu6, logsigmoid, selu, celu, mish, softsign,
hardswish, hardsigmoid, threshold, glu, softmin, tanhshrink, softshrink, hardshrink, prelu,
rrelu and their in-place spellings), run side by side with PyTorch: values, gradients (first
and second order, the kinks included), grad_fn names, dtype refusals and errors, module reprs
and parameters."""

import warnings

import numpy as np
import pytest

import numbagrad as ng

torch = pytest.importorskip("torch")

# the kinks of every activation here among the samples: hardswish's and hardsigmoid's +-3,
# hardtanh's +-1, the shrinks' +-0.5, threshold's 0.5, relu6's 0 and 6, elu's 0
POINTS = np.array([-4, -3, -2.5, -1, -0.5, 0, 0.25, 0.5, 1, 2.5, 3, 6.0]).reshape(2, 6)
SEED = np.linspace(-1.5, 2.0, 12).reshape(2, 6)  # the incoming gradient
SEED2 = np.linspace(0.5, -1.0, 12).reshape(2, 6)  # the second one (create_graph)
TOL = {"float32": 1e-5, "float64": 1e-12}


def _w(lib, x):
    """One slope per channel (dim 1)."""
    return lib.tensor(np.linspace(-0.5, 0.75, x.shape[1]), dtype=x.dtype)


# name: the call on either library (``x`` a non-leaf tensor, so in-place calls are allowed)
CASES = {
    "hardtanh": lambda lib, x: lib.nn.functional.hardtanh(x),
    "hardtanh_bounds": lambda lib, x: lib.nn.functional.hardtanh(x, -2.5, 3.0),
    "hardtanh_inplace": lambda lib, x: lib.nn.functional.hardtanh(x, inplace=True),
    "hardtanh_": lambda lib, x: lib.nn.functional.hardtanh_(x, -0.5, 0.5),
    "relu6": lambda lib, x: lib.nn.functional.relu6(x),
    "relu6_inplace": lambda lib, x: lib.nn.functional.relu6(x, inplace=True),
    "logsigmoid": lambda lib, x: lib.nn.functional.logsigmoid(x),
    "selu": lambda lib, x: lib.nn.functional.selu(x),
    "selu_inplace": lambda lib, x: lib.nn.functional.selu(x, inplace=True),
    "selu_": lambda lib, x: lib.nn.functional.selu_(x),
    "celu": lambda lib, x: lib.nn.functional.celu(x, 2.0),
    "celu_inplace": lambda lib, x: lib.nn.functional.celu(x, 0.5, inplace=True),
    "celu_": lambda lib, x: lib.nn.functional.celu_(x),
    "mish": lambda lib, x: lib.nn.functional.mish(x),
    "mish_inplace": lambda lib, x: lib.nn.functional.mish(x, inplace=True),
    "softsign": lambda lib, x: lib.nn.functional.softsign(x),
    "hardswish": lambda lib, x: lib.nn.functional.hardswish(x),
    "hardswish_inplace": lambda lib, x: lib.nn.functional.hardswish(x, inplace=True),
    "hardsigmoid": lambda lib, x: lib.nn.functional.hardsigmoid(x),
    "hardsigmoid_inplace": lambda lib, x: lib.nn.functional.hardsigmoid(x, inplace=True),
    "threshold": lambda lib, x: lib.nn.functional.threshold(x, 0.5, 20.0),
    "threshold_inplace": lambda lib, x: lib.nn.functional.threshold(x, 0.5, 20.0, True),
    "threshold_": lambda lib, x: lib.nn.functional.threshold_(x, -1.0, -7.0),
    "glu": lambda lib, x: lib.nn.functional.glu(x),
    "glu_dim0": lambda lib, x: lib.nn.functional.glu(x, 0),
    "softmin": lambda lib, x: lib.nn.functional.softmin(x, 1),
    "softmin_dtype": lambda lib, x: lib.nn.functional.softmin(x, 0, dtype=lib.float64),
    "tanhshrink": lambda lib, x: lib.nn.functional.tanhshrink(x),
    "softshrink": lambda lib, x: lib.nn.functional.softshrink(x),
    "softshrink_1": lambda lib, x: lib.nn.functional.softshrink(x, 1.0),
    "hardshrink": lambda lib, x: lib.nn.functional.hardshrink(x),
    "hardshrink_1": lambda lib, x: lib.nn.functional.hardshrink(x, 1.0),
    "prelu_channels": lambda lib, x: lib.nn.functional.prelu(x, _w(lib, x)),
    "prelu_one": lambda lib, x: lib.nn.functional.prelu(x, lib.tensor([0.25], dtype=x.dtype)),
    "rrelu_eval": lambda lib, x: lib.nn.functional.rrelu(x, 0.1, 0.3),
    "rrelu_eval_inplace": lambda lib, x: lib.nn.functional.rrelu(x, inplace=True),
    "rrelu_": lambda lib, x: lib.nn.functional.rrelu_(x, 0.2, 0.4),
    "relu_": lambda lib, x: lib.nn.functional.relu_(x),
    "elu_inplace": lambda lib, x: lib.nn.functional.elu(x, 1.5, inplace=True),
    "elu_": lambda lib, x: lib.nn.functional.elu_(x),
    "leaky_relu_inplace": lambda lib, x: lib.nn.functional.leaky_relu(x, 0.2, inplace=True),
    "leaky_relu_": lambda lib, x: lib.nn.functional.leaky_relu_(x),
    # the spellings of the torch namespace and Tensor methods
    "torch.selu": lambda lib, x: lib.selu(x),
    "torch.selu_": lambda lib, x: lib.selu_(x),
    "torch.celu": lambda lib, x: lib.celu(x, alpha=1.5),
    "torch.celu_": lambda lib, x: lib.celu_(x, 0.75),
    "torch.threshold": lambda lib, x: lib.threshold(x, 1.0, -1.0),
    "torch.threshold_": lambda lib, x: lib.threshold_(x, 1.0, -1.0),
    "torch.hardshrink": lambda lib, x: lib.hardshrink(x, lambd=1.0),
    "Tensor.hardshrink": lambda lib, x: x.hardshrink(),
    "torch.prelu": lambda lib, x: lib.prelu(x, _w(lib, x)),
    "Tensor.prelu": lambda lib, x: x.prelu(lib.tensor([0.5], dtype=x.dtype)),
    "torch.rrelu": lambda lib, x: lib.rrelu(x),
    "torch.rrelu_": lambda lib, x: lib.rrelu_(x, 0.0, 0.5),
    "torch.relu_": lambda lib, x: lib.relu_(x),
}
# PyTorch has no second derivative of hardsigmoid (it raises): tested apart below
NO_SECOND = {"hardsigmoid", "hardsigmoid_inplace"}


def _run(lib, name, dtype, second):
    x = lib.tensor(POINTS, dtype=getattr(lib, dtype), requires_grad=True)
    y = CASES[name](lib, x * 1)
    seed = lib.tensor(SEED[tuple(slice(n) for n in y.shape)], dtype=y.dtype)
    (g,) = lib.autograd.grad(y, x, seed, create_graph=second)
    out = {"y": y.detach().numpy(), "g": g.detach().numpy(), "node": type(y.grad_fn).__name__,
           "dtype": str(y.dtype).split(".")[-1]}
    if second:
        (gg,) = lib.autograd.grad(g, x, lib.tensor(SEED2, dtype=g.dtype))
        out["gg"] = gg.numpy()
    return out


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", list(CASES))
def test_values_gradients_and_nodes_match_torch(name, dtype):
    second = name not in NO_SECOND
    ours, theirs = _run(ng, name, dtype, second), _run(torch, name, dtype, second)
    assert ours["node"] == theirs["node"]
    assert ours["dtype"] == theirs["dtype"]
    tol = TOL[dtype]
    for key in ("y", "g", "gg") if second else ("y", "g"):
        assert ours[key].dtype == theirs[key].dtype, key
        np.testing.assert_allclose(ours[key], theirs[key], rtol=tol, atol=tol, err_msg=key)


# the gradients recorded under create_graph by a composition of ops rather than PyTorch's
# backward node (GluBackwardBackward0, RreluWithNoiseBackwardBackward0; hardsigmoid's PyTorch
# cannot differentiate)
SECOND_NODE_DIFFERS = {"glu", "glu_dim0", "rrelu_eval", "torch.rrelu", "hardsigmoid"}


@pytest.mark.parametrize("name", [n for n in CASES if not ("inplace" in n or n.endswith("_"))
                                  and n not in SECOND_NODE_DIFFERS])
def test_the_gradient_under_create_graph_has_torchs_node(name):
    names = []
    for lib in (ng, torch):
        x = lib.tensor(POINTS, requires_grad=True) * 1
        (g,) = lib.autograd.grad(CASES[name](lib, x).sum(), x, create_graph=True)
        names.append(type(g.grad_fn).__name__)
    assert names[0] == names[1]


@pytest.mark.parametrize("fn, points, grads", [
    # the gradient at each kink, as PyTorch's (the value and the test above agree with torch;
    # here the literal values, so a change of either shows)
    (lambda F, x: F.hardtanh(x), [-1.0, 1.0, -0.999, 0.999], [0, 0, 1, 1]),
    (lambda F, x: F.relu6(x), [0.0, 6.0, 5.999], [0, 0, 1]),
    (lambda F, x: F.hardswish(x), [-3.0, 3.0, -2.5, 2.5], [0, 1, -1 / 3, 4 / 3]),
    # (PyTorch's 1/6 is a float constant, in float64 too)
    (lambda F, x: F.hardsigmoid(x), [-3.0, 3.0, 0.0], [0, 0, float(np.float32(1 / 6))]),
    (lambda F, x: F.threshold(x, 0.5, 2.0), [0.5, 0.5001], [0, 1]),
    (lambda F, x: F.softshrink(x), [-0.5, 0.5, 0.5001], [0, 0, 1]),
    (lambda F, x: F.hardshrink(x), [-0.5, 0.5, -0.5001], [0, 0, 1]),
    (lambda F, x: F.celu(x, 2.0), [0.0], [1]),
    (lambda F, x: F.prelu(x, x.new_tensor([0.25])), [0.0], [0.25]),
    (lambda F, x: F.rrelu(x), [0.0], [(1 / 8 + 1 / 3) / 2]),
])
def test_gradients_at_the_kinks(lib, fn, points, grads):
    x = lib.tensor(points, dtype=lib.float64, requires_grad=True)
    fn(lib.nn.functional, x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), grads, rtol=1e-12, atol=1e-12)


def test_nan_propagates_as_in_torch():
    a = np.array([np.nan, -1.0, 2.0])
    names = ["hardtanh", "relu6", "hardswish", "hardsigmoid", "softshrink", "hardshrink",
             "logsigmoid", "mish", "selu", "softsign", "tanhshrink"]
    for name in names:
        ours = getattr(ng.nn.functional, name)(ng.tensor(a)).numpy()
        theirs = getattr(torch.nn.functional, name)(torch.tensor(a)).numpy()
        np.testing.assert_array_equal(ours, theirs, err_msg=name)
    for lib in (ng, torch):
        assert np.isnan(lib.nn.functional.threshold(lib.tensor(a), 0.0, 5.0)[0].item())


def test_hardsigmoid_has_no_second_derivative():
    # PyTorch's hardsigmoid_backward has no derivative: under create_graph the gradient's node
    # is NotImplemented, and differentiating it raises
    for lib in (ng, torch):
        x = lib.tensor(POINTS, requires_grad=True)
        (g,) = lib.autograd.grad(lib.nn.functional.hardsigmoid(x).sum(), x, create_graph=True)
        assert type(g.grad_fn).__name__ == "NotImplemented" and g.requires_grad
        with pytest.raises(RuntimeError, match="hardsigmoid_backward is not implemented"):
            lib.autograd.grad(g.sum(), x)


def test_inplace_spellings_write_into_their_input():
    for name, call in CASES.items():
        if not ("inplace" in name or name.endswith("_")):
            continue
        x = ng.tensor(POINTS, requires_grad=True) * 1
        y = call(ng, x)
        assert y is x and x._version == 1, name


@pytest.mark.parametrize("in_place, node", [
    (lambda F, x: F.leaky_relu_(x, -0.2), "LeakyReluBackward1"),
    (lambda F, x: F.leaky_relu(x, -0.2, inplace=True), "LeakyReluBackward1"),
    (lambda F, x: F.elu(x, -0.5, inplace=True), "EluBackward1"),
    (lambda F, x: F.celu_(x, -0.5), "CeluBackward1"),
    (lambda F, x: F.rrelu_(x, -0.3, -0.1), "RreluWithNoiseBackward1"),
])
def test_in_place_with_a_negative_slope_refuses_backward(in_place, node):
    # PyTorch's in-place nodes read the result, whose sign a negative slope flips: their
    # backward raises ("In-place leakyReLu backward calculation is triggered with a negative
    # slope which is not supported"); the forward's values are the out-of-place ones
    values = []
    for lib in (ng, torch):
        x = lib.tensor(POINTS, requires_grad=True)
        y = in_place(lib.nn.functional, x * 1)
        assert type(y.grad_fn).__name__ == node
        values.append(y.detach().numpy().copy())
        with pytest.raises(RuntimeError, match="negative slope"):
            y.backward(lib.tensor(SEED))
    np.testing.assert_allclose(values[0], values[1], rtol=1e-12)


# ---------------------------------------------------------------- dtypes and errors


@pytest.mark.parametrize("name, kernel", [
    ("logsigmoid", "log_sigmoid_cpu"), ("selu", "elu_cpu"), ("celu", "elu_cpu"),
    ("mish", "mish_cpu"), ("hardswish", "hardswish_cpu"), ("hardsigmoid", "hardsigmoid_cpu"),
    ("softshrink", "softshrink_check"), ("hardshrink", "hardshrink_cpu"),
    ("rrelu", "leaky_relu_cpu"), ("elu", "elu_cpu"), ("leaky_relu", "leaky_relu_cpu"),
])
def test_integer_and_bool_inputs_are_refused(lib, name, kernel):
    for values, type_name in (([-2, 0, 3], "Long"), ([True, False], "Bool")):
        x = lib.tensor(values)
        with pytest.raises(NotImplementedError, match=f'^"{kernel}" not implemented for '
                                                      f"'{type_name}'$"):
            getattr(lib.nn.functional, name)(x)


def test_refusals_leave_the_tensor_unchanged(lib):
    x = lib.tensor([-2, 0, 3])
    with pytest.raises(NotImplementedError, match="\"hardswish_cpu\" not implemented for 'Long'"):
        lib.nn.functional.hardswish(x, inplace=True)
    with pytest.raises(NotImplementedError,
                       match="\"rrelu_with_noise_out_cpu\" not implemented for 'Long'"):
        lib.nn.functional.rrelu(x, training=True, inplace=True)
    y = lib.tensor([-1.0, 2.0])
    with pytest.raises(RuntimeError, match="^ZeroDivisionError: alpha cannot be 0 for CELU$"):
        lib.celu_(y, 0.0)
    with pytest.raises(RuntimeError, match="^ZeroDivisionError: alpha cannot be 0 for CELU$"):
        lib.nn.functional.celu(y, 0.0, inplace=True)
    assert x.tolist() == [-2, 0, 3] and y.tolist() == [-1.0, 2.0]
    assert x._version == 0 and y._version == 0


def test_integer_inputs_that_torch_computes(lib):
    x = lib.tensor([-2, 0, 3, 7])
    assert lib.nn.functional.hardtanh(x).tolist() == [-1, 0, 1, 1]
    assert lib.nn.functional.relu6(x).tolist() == [0, 0, 3, 6]
    assert lib.nn.functional.threshold(x, 0, 5).tolist() == [5, 5, 3, 7]
    assert lib.nn.functional.hardtanh(x).dtype == lib.int64
    assert lib.nn.functional.softsign(x).dtype == lib.float32
    np.testing.assert_allclose(lib.nn.functional.softsign(x).numpy(), [-2 / 3, 0, 0.75, 0.875],
                               rtol=1e-6)
    assert lib.nn.functional.tanhshrink(x).dtype == lib.float32
    with pytest.raises(RuntimeError, match="^Bool inputs not supported for hardtanh$"):
        lib.nn.functional.relu6(lib.tensor([True]))
    with pytest.raises(NotImplementedError, match="\"threshold_cpu\" not implemented for 'Bool'"):
        lib.threshold(lib.tensor([True]), 0, 1)


def test_argument_errors(lib):
    F = lib.nn.functional
    x = lib.zeros(2, 3)
    with pytest.raises(ValueError, match="^min_val cannot be greater than max_val$"):
        F.hardtanh(x, 2.0, 1.0)
    with pytest.raises(ValueError, match="^min_val cannot be greater than max_val$"):
        F.hardtanh(x, 2.0, 1.0, inplace=True)
    y = lib.tensor([0.0, 3.0, float("nan")])
    assert F.hardtanh_(y, 2.0, 1.0) is y  # (unchecked: clamp's result, max_val)
    assert y[:2].tolist() == [1.0, 1.0] and y[2].isnan().item()
    with pytest.raises(RuntimeError, match=r"^lambda must be in range \[0, 3.40282e\+38\] for "
                                           "input dtype Float, but found -1$"):
        F.softshrink(x, -1.0)
    with pytest.raises(RuntimeError, match=r"^lambda must be in range \[0, 1.79769e\+308\] for "
                                           "input dtype Double, but found -1.5$"):
        F.softshrink(x.double(), -1.5)
    assert F.hardshrink(x, -1.0).tolist() == [[0.0] * 3] * 2  # (no check: all kept)
    with pytest.raises(RuntimeError, match="^Lower bound should be less than or equal to the "
                                           "upper bound$"):
        F.rrelu(x, 0.5, 0.1)
    with pytest.raises(RuntimeError, match="^Halving dimension must be even, but dimension 1 is "
                                           "size 3$"):
        F.glu(x)
    with pytest.raises(RuntimeError, match="^glu does not support scalars because halving size "
                                           "must be even$"):
        F.glu(lib.tensor(1.0))
    with pytest.raises(IndexError, match=r"^Dimension out of range \(expected to be in range of "
                                         r"\[-2, 1\], but got 2\)$"):
        F.glu(x, 2)
    with pytest.raises(NotImplementedError, match="^\"glu_cpu\" not implemented for 'Long'$"):
        F.glu(lib.tensor([1, 2]))


def test_prelu_errors(lib):
    F = lib.nn.functional
    with pytest.raises(RuntimeError, match="^Mismatch of parameter numbers and input channel "
                                           "size. Found parameter numbers = 3 and channel size "
                                           "= 4.$"):
        F.prelu(lib.zeros(2, 4), lib.zeros(3))
    with pytest.raises(RuntimeError, match="^Mismatch of parameter numbers and input channel "
                                           "size. Found parameter numbers = 3 and channel size "
                                           "= 1.$"):
        F.prelu(lib.zeros(3), lib.zeros(3))
    with pytest.raises(RuntimeError, match="^Not allow zero-dim input tensor.$"):
        F.prelu(lib.tensor(1.0), lib.zeros(3))
    with pytest.raises(RuntimeError, match="^prelu: Expected `weight` to be a scalar or 1D "
                                           "tensor, but got: ndim = 2$"):
        F.prelu(lib.zeros(2, 3), lib.zeros(3, 1))
    with pytest.raises(RuntimeError, match="^prelu: Type promoting not supported. Got Float and "
                                           "Double$"):
        F.prelu(lib.zeros(2), lib.zeros(1, dtype=lib.float64))
    with pytest.raises(RuntimeError, match="^prelu: Type promoting not supported. Got Long and "
                                           "Float$"):
        F.prelu(lib.tensor([1, 2]), lib.zeros(1))
    with pytest.raises(NotImplementedError, match="^\"prelu_cpu\" not implemented for 'Long'$"):
        F.prelu(lib.tensor([1, -2]), lib.tensor([2]))
    assert F.prelu(lib.tensor(-1.0), lib.tensor([0.5])).item() == -0.5
    assert F.prelu(lib.tensor([-1.0]), lib.tensor(0.5)).tolist() == [-0.5]


def test_prelu_views_its_weight_as_torch_does():
    for shape, wshape in (((2, 3), (3,)), ((2, 3, 4), (1,)), ((3,), (1,)), ((3,), ())):
        nodes = []
        for lib in (ng, torch):
            x = lib.ones(shape, requires_grad=True)
            w = lib.ones(wshape, requires_grad=True)
            y = lib.nn.functional.prelu(x, w)
            nodes.append([type(n).__name__ for n, _ in y.grad_fn.next_functions])
        assert nodes[0] == nodes[1], shape


# ---------------------------------------------------------------- modules


def _modules(nn):
    return [nn.ReLU6(), nn.ReLU6(True), nn.Hardtanh(), nn.Hardtanh(-2, 3, True),
            nn.Hardtanh(-0.5, 0.5), nn.LogSigmoid(), nn.SELU(), nn.SELU(True), nn.CELU(),
            nn.CELU(2.0, True), nn.Mish(), nn.Mish(True), nn.Softsign(), nn.Hardswish(),
            nn.Hardswish(True), nn.Hardsigmoid(), nn.Hardsigmoid(True), nn.Threshold(0.1, 20),
            nn.Threshold(0.1, 20.0, True), nn.GLU(), nn.GLU(0), nn.Softmin(), nn.Softmin(1),
            nn.Softmax2d(), nn.Tanhshrink(), nn.Softshrink(), nn.Softshrink(1), nn.Hardshrink(),
            nn.Hardshrink(2.0), nn.PReLU(), nn.PReLU(6, 0.1), nn.RReLU(),
            nn.RReLU(0.1, 0.3, True)]


def test_module_reprs_and_settings_match_torch():
    for ours, theirs in zip(_modules(ng.nn), _modules(torch.nn)):
        assert repr(ours) == repr(theirs)
        for key in ("inplace", "min_val", "max_val", "alpha", "threshold", "value", "dim",
                    "lambd", "num_parameters", "init", "lower", "upper"):
            assert getattr(ours, key, None) == getattr(theirs, key, None), (repr(ours), key)


def test_modules_compute_as_torch():
    # eval mode (RReLU's slope is then fixed); PReLU's weights set alike
    for ours, theirs in zip(_modules(ng.nn), _modules(torch.nn)):
        ours.eval()
        theirs.eval()
        a = POINTS.reshape(1, 2, 3, 2) if "Softmax2d" in repr(ours) else POINTS
        results = []
        for lib, m in ((ng, ours), (torch, theirs)):
            x = lib.tensor(a, dtype=lib.float32, requires_grad=True)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # (Softmin(): an implicit dim, tested below)
                y = m(x * 1)
            y.backward(lib.ones_like(y))
            results.append((y.detach().numpy(), x.grad.numpy(), type(y.grad_fn).__name__))
        np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-6, atol=1e-6,
                                   err_msg=repr(ours))
        np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-6, atol=1e-6,
                                   err_msg=repr(ours))
        assert results[0][2] == results[1][2], repr(ours)


def test_prelu_module_parameter_and_its_gradient():
    ours, theirs = ng.nn.PReLU(2, init=0.1), torch.nn.PReLU(2, init=0.1)
    assert list(ours.state_dict()) == ["weight"]
    assert isinstance(ours.weight, ng.nn.Parameter) and ours.weight.requires_grad
    assert ours.weight.tolist() == theirs.weight.tolist() and ours.weight.dtype == ng.float32
    with torch.no_grad():
        theirs.weight.copy_(torch.tensor([0.3, -0.2]))
    ours.load_state_dict({"weight": ng.tensor([0.3, -0.2])})
    a = POINTS.reshape(3, 2, 2)
    for lib, m in ((ng, ours), (torch, theirs)):
        m(lib.tensor(a, dtype=lib.float32)).backward(lib.arange(12.0).reshape(3, 2, 2))
    np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(), rtol=1e-6)
    m = ng.nn.PReLU(dtype=ng.float64)
    assert m.weight.dtype == ng.float64 and m.weight.shape == (1,)


def test_hardtanh_module_checks_and_deprecated_names(lib):
    with pytest.raises(AssertionError, match=r"^max_val \(1.0\) must be greater than min_val "
                                             r"\(2.0\)$"):
        lib.nn.Hardtanh(2.0, 1.0)
    with pytest.warns(FutureWarning, match="keyword argument `min_value` is deprecated"):
        m = lib.nn.Hardtanh(min_value=-2.0)
    assert repr(m) == "Hardtanh(min_val=-2.0, max_val=1.0)"


def test_softmax2d_and_softmin_dims(lib):
    with pytest.raises(ValueError, match="^Softmax2d: expected input to be 3D or 4D, got 2D "
                                         "instead$"):
        lib.nn.Softmax2d()(lib.zeros(2, 2))
    y = lib.nn.Softmax2d()(lib.tensor(POINTS.reshape(2, 3, 2)))
    np.testing.assert_allclose(y.sum(0).numpy(), np.ones((3, 2)), rtol=1e-6)
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmin"):
        y = lib.nn.functional.softmin(lib.tensor(POINTS))
    np.testing.assert_allclose(y.sum(1).numpy(), [1.0, 1.0], rtol=1e-6)  # (dim 1 of a 2-d)
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmin"):
        lib.nn.Softmin()(lib.tensor(POINTS))
    for name in ("softmax", "log_softmax"):  # (the functions softmin shares the choice with)
        with pytest.warns(UserWarning, match=f"Implicit dimension choice for {name} "):
            y = getattr(lib.nn.functional, name)(lib.tensor(POINTS[0]))
        assert y.shape == (6,)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lib.nn.Softmin(1)(lib.tensor(POINTS))


# ---------------------------------------------------------------- rrelu's randomness


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_rrelu_in_training_draws_a_slope_per_negative_element(dtype):
    lower, upper = 0.1, 0.3
    a = -np.linspace(0.5, 3.0, 400).reshape(20, 20)
    a[::2] *= -1  # (half positive: passed through)
    x = ng.tensor(a, dtype=getattr(ng, dtype), requires_grad=True)
    a = x.detach().numpy()
    y = ng.nn.functional.rrelu(x, lower, upper, training=True)
    assert y.grad_fn.name() == "RreluWithNoiseBackward0" and y.dtype == x.dtype
    y.sum().backward()
    slope = y.detach().numpy() / a
    neg = a < 0
    assert np.all(slope[~neg] == 1) and np.all(x.grad.numpy()[~neg] == 1)
    assert lower <= slope[neg].min() and slope[neg].max() < upper
    assert len(np.unique(slope[neg])) > 100  # (one draw per element)
    np.testing.assert_allclose(x.grad.numpy()[neg], slope[neg], rtol=TOL[dtype])


def test_rrelu_draws_from_the_seeded_generator():
    x = -ng.ones(50)

    def draw(**kw):
        return ng.rrelu(x, training=True, **kw).tolist()

    ng.manual_seed(3)
    first = draw()
    ng.manual_seed(3)
    assert draw() == first
    assert draw() != first
    g = ng.Generator().manual_seed(5)
    assert draw(generator=g) == draw(generator=ng.Generator().manual_seed(5))


def test_rrelu_module_is_random_in_training_and_the_mean_slope_in_eval():
    m = ng.nn.RReLU(0.1, 0.3)
    x = -ng.ones(100)
    assert len(set(m(x).tolist())) > 50
    m.eval()
    assert m(x).tolist() == ng.full((100,), -0.2).tolist()
    x = ng.tensor([-2.0, 1.0], requires_grad=True)
    y = ng.nn.RReLU(0.1, 0.3, inplace=True).train()(x * 1)
    assert y.grad_fn.name() == "RreluWithNoiseBackward1"
    y.sum().backward()
    assert x.grad[1].item() == 1.0 and 0.1 <= x.grad[0].item() < 0.3
    assert y[0].item() == pytest.approx(-2.0 * x.grad[0].item())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("fn", ["sigmoid", "silu", "logsigmoid"])
def test_exp_based_activations_at_their_extremes_match_torch(fn, dtype):
    # one formula, as PyTorch's kernels: where exp(-x) overflows sigmoid is 0.0 and silu -0.0
    # (a branch by sign would give their subnormal values instead)
    values = np.array([-1000.0, -110.0, -100.0, -90.0, -88.7, -50.0, -20.0, -0.0, 0.0, 1e-8,
                       5.0, 20.0, 40.0, 1000.0, np.inf, -np.inf, np.nan])

    def run(lib):
        f = getattr(lib.nn.functional, fn)
        return f(lib.tensor(values, dtype=getattr(lib, dtype))).numpy()

    ours, theirs = run(ng), run(torch)
    np.testing.assert_allclose(ours, theirs, rtol=TOL[dtype], atol=0)
    assert np.array_equal(np.signbit(ours[~np.isnan(ours)]), np.signbit(theirs[~np.isnan(theirs)]))
