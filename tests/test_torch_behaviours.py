"""Corners where numbagrad behaves as PyTorch 2.13: grad-mode decorators (bare, and on
generators), ``del t.grad``, requires_grad on integer tensors, ``numpy()`` under grad modes,
inference tensors' version counter, ``format`` of tensors, ``_is_view()``, and the saved values
nodes expose under PyTorch's names (``grad_fn._saved_self``, ...).

Each test runs on numbagrad and, when it is installed, on PyTorch itself, against the same
literals (PyTorch's values and messages, measured on 2.13): the literals are PyTorch's
behaviour, and numbagrad is held to them."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import numbagrad as ng

try:
    import torch
except ImportError:  # the PyTorch runs are skipped; numbagrad's still check the literals
    torch = None


ERR_FREED = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you "
    "call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward "
    "through the graph a second time or if you need to access saved tensors after calling "
    "backward."
)


def raises(exc, fn):
    """The message of the ``exc`` that ``fn()`` raises."""
    with pytest.raises(exc) as e:
        fn()
    return str(e.value)


# ---------------------------------------------------------------- 1. grad-mode decorators


def test_grad_mode_decorators_without_parentheses(lib):
    @lib.no_grad
    def off(a, b=2):
        """doc"""
        return lib.is_grad_enabled(), a + b

    @lib.enable_grad
    def on():
        return lib.is_grad_enabled()

    @lib.inference_mode
    def inference():
        return lib.is_grad_enabled(), lib.ones(1).is_inference()

    assert off(1) == (False, 3) and lib.is_grad_enabled()
    assert (off.__name__, off.__doc__) == ("off", "doc")
    with lib.no_grad():
        assert on() is True
        assert not lib.is_grad_enabled()
    assert inference() == (False, True) and lib.is_grad_enabled()


def test_grad_mode_decorators_with_parentheses(lib):
    @lib.no_grad()
    def off():
        return lib.is_grad_enabled()

    @lib.enable_grad()
    def on():
        return lib.is_grad_enabled()

    @lib.inference_mode()
    def inference():
        return lib.is_grad_enabled(), lib.ones(1).is_inference()

    @lib.inference_mode(False)
    def not_inference():
        return lib.is_grad_enabled(), lib.ones(1).is_inference()

    assert off() is False
    with lib.no_grad():
        assert on() is True
        # inference_mode(False) turns grad mode on, as it turns inference mode off
        assert not_inference() == (True, False)
        assert not lib.is_grad_enabled()
    assert inference() == (False, True)
    with lib.inference_mode():
        assert not_inference() == (True, False)
    assert lib.is_grad_enabled()


def test_decorated_generator_has_the_mode_inside_and_the_caller_keeps_its_own(lib):
    seen = []

    @lib.no_grad()
    def steps():
        got = yield lib.is_grad_enabled()
        seen.append((got, lib.is_grad_enabled()))
        got = yield lib.is_grad_enabled()
        seen.append((got, lib.is_grad_enabled()))
        return "done"

    it = steps()
    assert lib.is_grad_enabled()
    assert next(it) is False
    assert lib.is_grad_enabled()  # the caller's mode between steps
    assert it.send("a") is False
    assert lib.is_grad_enabled()
    with pytest.raises(StopIteration) as e:
        it.send("b")
    assert e.value.value == "done"
    assert seen == [("a", False), ("b", False)]
    assert lib.is_grad_enabled()


def test_decorated_generator_follows_a_caller_that_changes_mode_between_steps(lib):
    @lib.enable_grad
    def steps():
        for _ in range(2):
            yield lib.is_grad_enabled()

    it = steps()
    with lib.no_grad():
        assert next(it) is True
        assert not lib.is_grad_enabled()
    assert next(it) is True and lib.is_grad_enabled()
    assert list(steps()) == [True, True]


def test_decorated_generator_throw_and_close_run_in_the_mode(lib):
    inside = []

    @lib.no_grad
    def steps():
        try:
            yield 1
        except ValueError:
            inside.append(("caught", lib.is_grad_enabled()))
            yield 2
        finally:
            inside.append(("finally", lib.is_grad_enabled()))

    it = steps()
    assert next(it) == 1
    assert it.throw(ValueError()) == 2
    assert lib.is_grad_enabled()
    it.close()
    assert lib.is_grad_enabled()
    assert inside == [("caught", False), ("finally", False)]


def test_set_grad_enabled_as_function_context_and_decorator(lib):
    try:
        lib.set_grad_enabled(False)  # a plain call switches at once
        assert not lib.is_grad_enabled()
    finally:
        lib.set_grad_enabled(True)

    @lib.set_grad_enabled(False)
    def off():
        return lib.is_grad_enabled()

    assert lib.is_grad_enabled()  # decorating does not switch the mode
    assert off() is False and lib.is_grad_enabled()
    with lib.set_grad_enabled(False):
        assert not lib.is_grad_enabled()
    assert lib.is_grad_enabled()


@pytest.mark.parametrize("mode, name", [(1, "int"), (None, "NoneType"),
                                        (lambda: 0, "function")])
def test_set_grad_enabled_takes_only_a_bool(lib, mode, name):
    # (so it cannot be a bare decorator: the function lands in ``mode``)
    assert raises(TypeError, lambda: lib.set_grad_enabled(mode)) == (
        f"set_grad_enabled(): argument 'enabled' (position 1) must be bool, not {name}"
    )
    assert lib.is_grad_enabled()


def test_decorating_a_class_warns_and_wraps_its_constructor(lib):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")

        @lib.no_grad
        class Made:
            def __init__(self):
                self.grad = lib.is_grad_enabled()

    assert [w.category for w in caught] == [FutureWarning]
    assert str(caught[0].message) == (
        "Decorating classes is deprecated and will be disabled in future versions. You should "
        "only decorate functions or methods. To preserve the current behavior of class "
        "decoration, you can directly decorate the `__init__` method and nothing else."
    )
    assert Made().grad is False


# ---------------------------------------------------------------- 2. del t.grad


def test_del_grad_sets_it_to_none(lib):
    x = lib.ones(3, requires_grad=True)
    x.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0, 1.0]
    del x.grad
    assert x.grad is None
    del x.grad  # again: still None, no error
    assert x.grad is None
    x.sum().backward()  # and backward fills it afresh
    assert x.grad.tolist() == [1.0, 1.0, 1.0]


# ---------------------------------------------------------------- 3. requires_grad on ints


def test_integer_tensor_cannot_require_grad_with_each_form_s_wording(lib):
    i = lib.tensor([1, 2])

    def set_flag():
        i.requires_grad = True

    # three spellings, three messages (PyTorch's, letter for letter)
    assert raises(RuntimeError, set_flag) == (
        "only Tensors of floating point and complex dtype can require gradients")
    assert raises(RuntimeError, i.requires_grad_) == (
        "only Tensors of floating point dtype can require gradients")
    assert raises(RuntimeError, lambda: lib.tensor([1, 2], requires_grad=True)) == (
        "Only Tensors of floating point and complex dtype can require gradients")
    assert raises(RuntimeError, lambda: lib.tensor([True], requires_grad=True)) == (
        "Only Tensors of floating point and complex dtype can require gradients")
    assert raises(RuntimeError,
                  lambda: lib.zeros(2, dtype=lib.int64, requires_grad=True)) == (
        "Only Tensors of floating point and complex dtype can require gradients")
    # turning it off is allowed
    i.requires_grad = False
    assert i.requires_grad_(False) is i and i.requires_grad is False


def test_requires_grad_of_a_non_leaf(lib):
    y = lib.ones(2, requires_grad=True) * 2

    def set_flag(value):
        y.requires_grad = value

    assert raises(RuntimeError, lambda: set_flag(True)) == (
        "you can only change requires_grad flags of leaf variables.")
    off = (
        "you can only change requires_grad flags of leaf variables. If you want to use a "
        "computed variable in a subgraph that doesn't require differentiation use "
        "var_no_grad = var.detach()."
    )
    assert raises(RuntimeError, lambda: set_flag(False)) == off
    assert raises(RuntimeError, lambda: y.requires_grad_(False)) == off
    assert y.requires_grad_(True) is y and y.requires_grad


# ---------------------------------------------------------------- 4. numpy()

ERR_NUMPY = ("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
             "instead.")


def test_numpy_is_refused_only_while_grad_mode_is_on(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    assert raises(RuntimeError, x.numpy) == ERR_NUMPY
    assert raises(RuntimeError, (x * 2).numpy) == ERR_NUMPY
    with lib.no_grad():
        a = x.numpy()
    assert a.tolist() == [1.0, 2.0]
    a[0] = 5.0  # the tensor's own memory, as in PyTorch
    assert x.tolist() == [5.0, 2.0]
    with lib.inference_mode():
        assert x.numpy().tolist() == [5.0, 2.0]
    assert x.detach().numpy().tolist() == [5.0, 2.0]
    assert x.numpy(force=True).tolist() == [5.0, 2.0]


def test_numpy_works_on_an_input_inside_a_custom_function_forward(lib):
    seen = {}

    class Double(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            # forward runs with grad mode off: the input requires grad, numpy() is allowed
            seen["forward"] = (a.requires_grad, lib.is_grad_enabled(), a.numpy().tolist())
            return a * 2

        @staticmethod
        def backward(ctx, g):
            seen["backward"] = g.numpy().tolist()
            return g * 2

    x = lib.tensor([1.0, 3.0], requires_grad=True)
    Double.apply(x).sum().backward()
    assert seen == {"forward": (True, False, [1.0, 3.0]), "backward": [1.0, 1.0]}
    assert x.grad.tolist() == [2.0, 2.0]


# ---------------------------------------------------------------- 5. inference tensors

ERR_VERSION = "Inference tensors do not track version counter."


def test_inference_tensor_has_no_version_counter(lib):
    x = lib.ones(3, requires_grad=True)
    normal = lib.ones(3)
    with lib.inference_mode():
        made = lib.ones(3)
        result = normal * 2
        computed_from_grad = x * x
        view_of_normal = normal[1:]
        assert raises(RuntimeError, lambda: made._version) == ERR_VERSION
        assert normal._version == 0
        assert view_of_normal._version == 0  # a view of a normal tensor stays normal
    for t in (made, result, computed_from_grad, made[1:], made.view(3)):
        assert t.is_inference()
        assert raises(RuntimeError, lambda: t._version) == ERR_VERSION
    for t in (x, normal, view_of_normal, made * 2):
        assert not t.is_inference()
        assert t._version == 0
    assert not made.clone().is_inference()
    assert not computed_from_grad.requires_grad


def test_no_grad_and_inference_mode_false_make_normal_tensors(lib):
    with lib.no_grad():
        a = lib.ones(1)
    with lib.inference_mode(False):
        b = lib.ones(1)
    assert (a.is_inference(), b.is_inference(), a._version, b._version) == (False, False, 0, 0)


# ---------------------------------------------------------------- 6. format


@pytest.mark.parametrize("make, spec, want", [
    # a 0-d tensor formats as its Python number, the empty spec included
    (lambda lib: lib.tensor(3.14159), "", "3.141590118408203"),
    (lambda lib: lib.tensor(3.14159), ".2f", "3.14"),
    (lambda lib: lib.tensor(3.14159), "e", "3.141590e+00"),
    (lambda lib: lib.tensor(7), "", "7"),
    (lambda lib: lib.tensor(7), ">4", "   7"),
    (lambda lib: lib.tensor(True), "", "True"),
    (lambda lib: lib.tensor(True), "d", "1"),
    (lambda lib: lib.tensor(2.5, requires_grad=True), "", "2.5"),
    (lambda lib: lib.tensor(2.5, requires_grad=True) * 2, ".1f", "5.0"),
    # any other tensor: str() for the empty spec
    (lambda lib: lib.tensor([1.5, 2.25]), "", "tensor([1.5000, 2.2500])"),
    (lambda lib: lib.tensor([1.5]), "", "tensor([1.5000])"),
])
def test_format(lib, make, spec, want):
    t = make(lib)
    assert format(t, spec) == want
    assert f"{t:{spec}}" == want


@pytest.mark.parametrize("spec", [".2f", "10", "s"])
def test_format_spec_on_a_tensor_with_dims_is_a_type_error(lib, spec):
    t = lib.tensor([1.5, 2.25])
    assert raises(TypeError, lambda: format(t, spec)) == (
        "unsupported format string passed to Tensor.__format__")


def test_format_spec_a_number_refuses_is_python_s_error(lib):
    assert raises(ValueError, lambda: format(lib.tensor(1.5), "d")) == (
        "Unknown format code 'd' for object of type 'float'")


# ---------------------------------------------------------------- 7. _is_view


@pytest.mark.parametrize("make, want", [
    (lambda x: x, False),
    (lambda x: x[0], True),
    (lambda x: x[:, 1:], True),
    (lambda x: x[0][1:], True),
    (lambda x: x.view(6), True),
    (lambda x: x.reshape(6), True),  # contiguous: a view
    (lambda x: x.t().reshape(6), False),  # not contiguous: a copy
    (lambda x: x.t(), True),
    (lambda x: x.transpose(0, 1), True),
    (lambda x: x.permute(1, 0), True),
    (lambda x: x.unsqueeze(0), True),
    (lambda x: x.expand(2, 2, 3), True),
    (lambda x: x.split(1)[0], True),
    (lambda x: x.detach(), False),
    (lambda x: x.data, False),
    (lambda x: x[[0]], False),  # advanced indexing copies
    (lambda x: x.clone(), False),
    (lambda x: x * 2, False),
    (lambda x: x.contiguous(), False),  # x itself
])
def test_is_view(lib, make, want):
    x = lib.ones(2, 3, requires_grad=True)
    assert make(x)._is_view() is want
    with lib.no_grad():
        assert make(x)._is_view() is want


# ---------------------------------------------------------------- 8. saved values on nodes


def describe(fn):
    """Every ``_saved_`` attribute of node ``fn`` (what torchviz reads): a tensor as its
    shape, anything else as its type's name and value."""
    out = {}
    for name in dir(fn):
        if name.startswith("_saved_"):
            v = getattr(fn, name)
            out[name[len("_saved_"):]] = (
                ("tensor", tuple(v.shape)) if isinstance(v, (ng.Tensor,) + (
                    (torch.Tensor,) if torch is not None else ())) else (type(v).__name__, v)
            )
    return out


T34 = ("tensor", (3, 4))
SIZES = ("tuple", (3, 4))
MINUS_1 = 2**64 - 1  # PyTorch hands a negative dim back through an unsigned conversion

SAVED = [
    ("x * y", {"other": T34, "self": T34}),
    ("x * c", {"other": T34, "self": ("NoneType", None)}),
    ("x * 2", {"other": ("tensor", ()), "self": ("NoneType", None)}),
    ("x / y", {"other": T34, "self": T34}),
    ("c / y", {"other": T34, "self": T34}),
    ("x + y", {"alpha": ("int", 1)}),
    ("x - 2", {"alpha": ("int", 1)}),
    ("2 - x", {"alpha": ("int", 1)}),
    ("-x", {}),
    ("x.exp()", {"result": T34}),
    ("x.log()", {"self": T34}),
    ("x.sin()", {"self": T34}),
    ("x.tanh()", {"result": T34}),
    ("x.sigmoid()", {"result": T34}),
    ("x.relu()", {"result": T34}),
    ("x.sqrt()", {"result": T34}),
    ("x.abs()", {"self": T34}),
    ("x ** 2", {"exponent": ("int", 2), "self": T34}),
    ("x ** 0.5", {"exponent": ("float", 0.5), "self": T34}),
    ("x ** y", {"exponent": T34, "result": T34, "self": T34}),
    ("x.clamp(-1, 1)", {"max": ("int", 1), "min": ("int", -1), "self": T34}),
    ("x.clamp(min=0.5)", {"max": ("NoneType", None), "min": ("float", 0.5), "self": T34}),
    ("lib.where(c > 0, x, y)", {"condition": T34}),
    ("lib.maximum(x, y)", {"other": T34, "self": T34}),
    ("x.sum()", {"self_sym_sizes": SIZES}),
    ("x.sum(1)", {"dim": ("tuple", (1,)), "keepdim": ("bool", False), "self_sym_sizes": SIZES}),
    ("x.sum(-1)", {"dim": ("tuple", (MINUS_1,)), "keepdim": ("bool", False),
                   "self_sym_sizes": SIZES}),
    ("x.sum(dim=[1, 0])", {"dim": ("tuple", (1, 0)), "keepdim": ("bool", False),
                           "self_sym_sizes": SIZES}),
    ("x.mean()", {"self_sym_numel": ("int", 12), "self_sym_sizes": SIZES}),
    ("x.mean(1, keepdim=True)", {"dim": ("tuple", (1,)), "keepdim": ("bool", True),
                                 "self_sym_numel": ("int", 12), "self_sym_sizes": SIZES}),
    ("x.prod()", {"result": ("tensor", ()), "self": T34}),
    ("x.prod(1)", {"dim": ("int", 1), "keepdim": ("bool", False), "result": ("tensor", (3,)),
                   "self": T34}),
    ("x.max()", {"result": ("tensor", ()), "self": T34}),
    ("x.max(1)[0]", {"dim": ("int", 1), "indices": ("tensor", (3,)), "keepdim": ("bool", False),
                     "self_sym_sizes": SIZES}),
    ("x.min(-1)[0]", {"dim": ("int", MINUS_1), "indices": ("tensor", (3,)),
                      "keepdim": ("bool", False), "self_sym_sizes": SIZES}),
    ("x.amax()", {"dim": ("tuple", ()), "keepdim": ("bool", False), "result": ("tensor", ()),
                  "self": T34}),
    ("x.var()", {"correction": ("NoneType", None), "dim": ("NoneType", None),
                 "keepdim": ("bool", False), "self": T34}),
    ("x.var(1, correction=0)", {"correction": ("int", 0), "dim": ("tuple", (1,)),
                                "keepdim": ("bool", False), "self": T34}),
    ("x.std(0, keepdim=True)", {"correction": ("int", 1), "dim": ("tuple", (0,)),
                                "keepdim": ("bool", True), "result": ("tensor", (1, 4)),
                                "self": T34}),
    ("x.norm()", {"dim": ("NoneType", None), "keepdim": ("bool", False), "ord": ("int", 2),
                  "result": ("tensor", ()), "self": T34}),
    ("x.logsumexp(1)", {"dim": ("tuple", (1,)), "keepdim": ("bool", False),
                        "result": ("tensor", (3,)), "self": T34}),
    ("x.softmax(1)", {"dim": ("int", 1), "result": T34}),
    ("x.log_softmax(0)", {"dim": ("int", 0), "result": T34}),
    ("x.mv(v)", {"self": ("NoneType", None), "vec": ("tensor", (4,))}),
    ("c.mv(vr)", {"self": T34, "vec": ("NoneType", None)}),
    ("vr.dot(v)", {"self": ("NoneType", None), "tensor": ("tensor", (4,))}),
    ("x.view(12)", {"self_sym_sizes": SIZES}),
    ("x.t().reshape(12)", {"self_sym_sizes": ("tuple", (4, 3))}),
    ("vr.expand(3, 4)", {"self_sym_sizes": ("tuple", (4,))}),
    ("x.transpose(1, 0)", {"dim0": ("int", 1), "dim1": ("int", 0)}),
    ("x.permute(1, 0)", {"dims": ("tuple", (1, 0))}),
    ("lib.cat([x, y], 1)", {"dim": ("int", 1)}),
    ("lib.stack([x, y], 1)", {"dim": ("int", 1)}),
    ("x.split(3, 1)[0]", {"dim": ("int", 1), "self_sym_sizes": SIZES,
                          "split_size": ("int", 3)}),
    ("x.split([1, 2], 0)[0]", {"dim": ("int", 0), "self_sym_sizes": SIZES,
                               "split_sizes": ("tuple", (1, 2))}),
    ("x.angle()", {"self": T34}),
    ("x.sgn()", {"result": T34, "self": T34}),
    ("x.t()", {}),
    ("x.clone()", {}),
    ("x.double()", {}),
]


@pytest.mark.parametrize("expr, want", SAVED, ids=[e for e, _ in SAVED])
def test_saved_names_types_and_shapes(lib, expr, want):
    x = lib.randn(3, 4, requires_grad=True)
    y = lib.randn(3, 4, requires_grad=True)
    c = lib.randn(3, 4)
    v = lib.randn(4)
    vr = lib.randn(4, requires_grad=True)
    out = eval(expr, {"lib": lib, "x": x, "y": y, "c": c, "v": v, "vr": vr})
    assert describe(out.grad_fn) == want


def test_saved_inputs_are_the_inputs_and_saved_results_are_on_the_node(lib):
    x = lib.randn(3, requires_grad=True)
    y = x * 2
    z = x * y
    assert z.grad_fn._saved_self is x and z.grad_fn._saved_other is y
    e = x.exp()
    for mode in (lib.enable_grad, lib.no_grad):
        with mode():
            r = e.grad_fn._saved_result
        # a new tensor on the output's values, whose node is the one that saved it
        assert r is not e and r.tolist() == e.tolist()
        assert r.grad_fn is e.grad_fn and r.requires_grad
        assert r.data_ptr() == e.data_ptr()
    assert (x * 2).grad_fn._saved_other.item() == 2  # a number is saved as a 0-d tensor
    cond = lib.tensor([True, False, True])
    w = lib.where(cond, x, y).grad_fn._saved_condition
    assert w.dtype == lib.bool and w.tolist() == [True, False, True]
    values, indices = lib.tensor([[1.0, 5.0], [7.0, 2.0]], requires_grad=True).max(1)
    saved = values.grad_fn._saved_indices
    assert saved.tolist() == [1, 0] and saved.dtype == lib.int64
    assert not saved.requires_grad and saved.grad_fn is None  # (indices get no gradient)


def test_saved_tensors_are_freed_by_backward_and_parameters_stay(lib):
    x = lib.randn(3, 4, requires_grad=True)
    y = lib.randn(3, 4, requires_grad=True)
    z = x * y
    s = x.sum(1)
    e = x.exp()
    p = (x ** 2)
    scaled = x * 2
    mm = x.mm(lib.randn(4, 2))
    (z.sum() + s.sum() + e.sum() + p.sum() + scaled.sum() + mm.sum()).backward()
    for read in (lambda: z.grad_fn._saved_self, lambda: z.grad_fn._saved_other,
                 lambda: e.grad_fn._saved_result, lambda: p.grad_fn._saved_self,
                 lambda: scaled.grad_fn._saved_other, lambda: mm.grad_fn._saved_mat2):
        assert raises(RuntimeError, read) == ERR_FREED
    # what was never saved is still None, and the parameters stay readable
    assert scaled.grad_fn._saved_self is None
    assert mm.grad_fn._saved_self is None
    assert mm.grad_fn._saved_mat2_sym_sizes == (4, 2)
    assert s.grad_fn._saved_dim == (1,) and s.grad_fn._saved_self_sym_sizes == (3, 4)
    assert p.grad_fn._saved_exponent == 2


def test_retain_graph_keeps_the_saved_tensors(lib):
    x = lib.randn(5, requires_grad=True)
    e = x.exp()
    e.sum().backward(retain_graph=True)
    assert e.grad_fn._saved_result.tolist() == e.tolist()


def test_reading_a_tensor_modified_in_place_raises_the_version_error(lib):
    x = lib.randn(3, requires_grad=True)
    a = x * 1
    b = a * x
    a.add_(1)
    message = raises(RuntimeError, lambda: b.grad_fn._saved_self)
    assert message.startswith(
        "one of the variables needed for gradient computation has been modified by an inplace "
        "operation: [")
    assert "is at version 1; expected version 0 instead." in message


def test_saved_values_over_a_graph_as_torchviz_reads_them(lib):
    # torchviz walks next_functions and reads every _saved_ attribute of every node
    lib.manual_seed(0)
    x = lib.randn(4, 3, requires_grad=True)
    w = lib.randn(3, 2, requires_grad=True)
    loss = ((x @ w).relu().sum(1) ** 2).mean()
    seen, stack, found = set(), [loss.grad_fn], []
    while stack:
        fn = stack.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        for name, (kind, value) in sorted(describe(fn).items()):
            # (PyTorch's mm also saves strides, which numbagrad does not keep)
            if not name.endswith("_sym_strides"):
                found.append((fn.name(), name, kind, value))
        stack.extend(f for f, _ in fn.next_functions)
    assert sorted(found) == [
        ("MeanBackward0", "self_sym_numel", "int", 4),
        ("MeanBackward0", "self_sym_sizes", "tuple", (4,)),
        ("MmBackward0", "mat2", "tensor", (3, 2)),
        ("MmBackward0", "mat2_sym_sizes", "tuple", (3, 2)),
        ("MmBackward0", "self", "tensor", (4, 3)),
        ("MmBackward0", "self_sym_sizes", "tuple", (4, 3)),
        ("PowBackward0", "exponent", "int", 2),
        ("PowBackward0", "self", "tensor", (4,)),
        ("ReluBackward0", "result", "tensor", (4, 2)),
        ("SumBackward1", "dim", "tuple", (1,)),
        ("SumBackward1", "keepdim", "bool", False),
        ("SumBackward1", "self_sym_sizes", "tuple", (4, 2)),
    ]


def test_node_internals_do_not_look_like_saved_values():
    # numbagrad's own bookkeeping on nodes is not named _saved_*: dir() shows PyTorch's only
    class Identity(ng.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a.clone()

        @staticmethod
        def backward(ctx, g):
            return g

    x = ng.randn(10, requires_grad=True)
    nodes = {
        "MulBackward0": (x * x).grad_fn,
        "NegBackward0": (-x).grad_fn,
        "AccumulateGrad": ng.autograd.graph.grad_accumulator(x),
        "IdentityBackward": Identity.apply(x).grad_fn,
    }
    saved = {k: [n for n in dir(fn) if n.startswith("_saved_")] for k, fn in nodes.items()}
    assert saved == {"MulBackward0": ["_saved_other", "_saved_self"], "NegBackward0": [],
                     "AccumulateGrad": [], "IdentityBackward": []}


def test_reading_a_lean_node_keeps_it_lean():
    # a small elementwise node records a lean tuple, not a ctx: reading its saved values must
    # not turn it into a general node (the backward's fast path)
    x = ng.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = ng.tensor([4.0, 5.0, 6.0], requires_grad=True)
    z = x * y
    fn = z.grad_fn
    assert fn._lean is not None
    assert fn._saved_self is x and fn._saved_other is y
    e = x.exp()
    assert e.grad_fn._saved_result.tolist() == e.tolist()
    assert fn._lean is not None and e.grad_fn._lean is not None
    (z.sum() + e.sum()).backward()
    assert x.grad.tolist() == pytest.approx([4 + 2.718281828, 5 + 7.389056099, 6 + 20.08553692])
    assert raises(RuntimeError, lambda: fn._saved_self) == ERR_FREED


@pytest.mark.parametrize("dim", [0, -1, 1])
def test_size_of_a_0d_tensor_with_a_dim_raises_pytorchs_error(dim):
    with pytest.raises(IndexError, match=rf"^Dimension specified as {dim} but tensor has no "
                                         r"dimensions$"):
        ng.tensor(1.0).size(dim)
    assert ng.ones(2, 3).size(-1) == 3 and type(ng.ones(2, 3).size(0)) is int


# ---------------------------------------------------------------- 9. random fills of ints
# (issue 25, fuzzer seeds 511, 2659, 40934: randn_like of an empty bool tensor)


@pytest.mark.parametrize("make", [
    lambda lib: lib.randn_like(lib.zeros(1, 0, dtype=lib.bool)),
    lambda lib: lib.randn_like(lib.zeros(0, dtype=lib.int64), dtype=lib.bool),
    lambda lib: lib.randn(0, 2, dtype=lib.int64),
    lambda lib: lib.zeros(0, dtype=lib.int64).normal_(),
    lambda lib: lib.zeros(0, dtype=lib.int32).log_normal_(),
    lambda lib: lib.zeros(0, dtype=lib.bool).exponential_(),
], ids=["randn_like", "randn_like_dtype", "randn", "normal_", "log_normal_", "exponential_"])
def test_normal_draws_of_an_empty_integer_tensor_run(lib, make):
    # the dtype check is the sampling kernel's, which an empty tensor never enters
    assert make(lib).numel() == 0


@pytest.mark.parametrize("make, exc, msg", [
    (lambda lib: lib.randn_like(lib.zeros(2, dtype=lib.bool)), NotImplementedError,
     "\"normal_kernel_cpu\" not implemented for 'Bool'"),
    (lambda lib: lib.randn_like(lib.zeros(2), dtype=lib.int64), NotImplementedError,
     "\"normal_kernel_cpu\" not implemented for 'Long'"),
    (lambda lib: lib.rand_like(lib.zeros(0, dtype=lib.bool)), NotImplementedError,
     "\"check_uniform_bounds\" not implemented for 'Bool'"),
    (lambda lib: lib.rand(0, dtype=lib.int64), NotImplementedError,
     "\"check_uniform_bounds\" not implemented for 'Long'"),
    (lambda lib: lib.zeros(2, dtype=lib.int64).log_normal_(), NotImplementedError,
     "\"log_normal_cpu\" not implemented for 'Long'"),
    (lambda lib: lib.zeros(2, dtype=lib.int32).exponential_(), RuntimeError,
     "Exponential distribution is a continuous probability distribution. dtype must be a "
     "floating point but you specified Int"),
    (lambda lib: lib.zeros(0, dtype=lib.int64).normal_(0, -1), RuntimeError,
     "normal expects std >= 0.0, but found std -1"),
])
def test_random_float_draws_refuse_integers(lib, make, exc, msg):
    assert raises(exc, lambda: make(lib)) == msg


# ---------------------------------------------------------------- 10. empty bmm of two dtypes
# (fuzzer seeds 540, 16270, 33769, 36578)


@pytest.mark.parametrize("xs, ys, want", [
    ((0, 2, 3), (0, 3, 1), (0, 2, 1)),
    ((2, 2, 3), (2, 3, 0), (2, 2, 0)),
    ((2, 1, 0), (2, 0, 2), (2, 1, 2)),  # an empty sum: zeros
])
@pytest.mark.parametrize("xd, yd", [("float32", "float64"), ("float64", "float32"),
                                    ("float32", "int64"), ("bool", "float32")])
def test_empty_bmm_of_two_dtypes_has_batch2_s_dtype(lib, xs, ys, want, xd, yd):
    x, y = lib.zeros(xs, dtype=getattr(lib, xd)), lib.zeros(ys, dtype=getattr(lib, yd))
    for out in (lib.bmm(x, y), x @ y, x[None] @ y):
        assert out.dtype == getattr(lib, yd) and out.shape[-3:] == want
        assert not out.any()


def test_empty_bmm_gradients_take_each_operand_s_dtype(lib):
    x = lib.zeros(2, 1, 0, requires_grad=True)
    y = lib.zeros(2, 0, 2, dtype=lib.float64, requires_grad=True)
    out = lib.bmm(x, y)
    assert type(out.grad_fn).__name__ == "BmmBackward0" and out.dtype == lib.float64
    out.sum().backward()
    assert (x.grad.dtype, x.grad.shape) == (lib.float32, (2, 1, 0))
    assert (y.grad.dtype, y.grad.shape) == (lib.float64, (2, 0, 2))


def test_bmm_of_two_dtypes_with_work_to_do_refuses(lib):
    msg = raises(RuntimeError, lambda: lib.bmm(lib.zeros(2, 2, 3), lib.zeros(2, 3, 2,
                                                                           dtype=lib.float64)))
    assert msg == "expected scalar type Float but found Double"


# ---------------------------------------------------------------- 11. which error comes first
# (fuzzer seed 12417)

ERR_SPLIT_REBASE = (
    "Output 0 of Split is a view and its base or another view of its base has been modified "
    "inplace. This view is the output of a function that returns multiple views. Such "
    "functions do not allow the output views to be modified inplace. You should replace the "
    "inplace operation by an out-of-place one."
)


def _stale_split_view(lib):
    """Output 0 of a split whose base was then written in place."""
    base = lib.zeros(1, 4, 2, requires_grad=True) * 2
    view = base.split(1, 2)[0]
    base[0, 0, 0] = -0.25
    return view


@pytest.mark.parametrize("call", [lambda v: v.amax(5), lambda v: v.sum(),
                                  lambda v: v @ v.new_ones(5, 5)],
                         ids=["amax_bad_dim", "sum", "matmul_bad_shape"])
def test_a_stale_multi_output_view_raises_before_the_op_s_own_check(lib, call):
    # PyTorch collects the inputs' edges (re-deriving the view's node) before the kernel runs
    assert raises(RuntimeError, lambda: call(_stale_split_view(lib))) == ERR_SPLIT_REBASE


def test_a_stale_multi_output_view_runs_ops_that_record_nothing(lib):
    v = _stale_split_view(lib)
    assert v.long().dtype == lib.int64 and not (v > 0).requires_grad
    assert raises(IndexError, lambda: v[7]) == "index 7 is out of bounds for dimension 0 with size 1"


# ---------------------------------------------------------------- 12. retain_grad on a view
# A retain_grad hook sits on the tensor's node and moves to its new node when the tensor gets
# one: at once for an in-place op on the tensor (or through it, when a view), and lazily for
# a view whose base was written some other way, when its node is next asked for (issue 25,
# retain_grad_view_base_write).


def _write_other_view(b, a):
    b[1:].mul_(2)


def _write_base(b, a):
    b.mul_(2)


def _write_self(b, a):
    a.mul_(2)


def _write_view_of_self(b, a):
    a[:].mul_(2)


@pytest.mark.parametrize("write, through, want", [
    (_write_other_view, "base", None),  # a's node never re-derived: the hook stays behind
    (_write_other_view, "view", [3.0]),  # a * 3 re-derives it: the hook moves
    (_write_base, "view", [3.0]),
    (_write_self, "base", None),  # moved to a's new node, which b's backward does not pass
    (_write_self, "view", [3.0]),  # the gradient of a's new value, not of its old one too
    (_write_view_of_self, "base", None),  # a's old node is left off the path (CopySlices)
    (_write_view_of_self, "view", [3.0]),
])
def test_retain_grad_on_a_view_follows_its_node(lib, write, through, want):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    b = x * 1
    a = b[:1]
    a.retain_grad()
    write(b, a)
    ((a if through == "view" else b) * 3).sum().backward()
    assert (a.grad.tolist() if a.grad is not None else None) == want


def test_retain_grad_on_a_view_written_under_no_grad(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    b = x * 1
    a = b[:1]
    a.retain_grad()
    with lib.no_grad():
        b[1:].mul_(2)
    (a * 3).sum().backward()
    assert a.grad.tolist() == [3.0]


def test_retain_grad_on_a_base_written_through_its_view(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    b = x * 1
    b.retain_grad()
    b[:1].mul_(2)
    (b * 3).sum().backward()
    assert b.grad.tolist() == [3.0, 3.0] and x.grad.tolist() == [6.0, 3.0]


# ---------------------------------------------------------------- 13. relu's second derivative
# (fuzzer seeds 4200, 43487: None where PyTorch gives zeros)


@pytest.mark.parametrize("shape", [(1, 2), (0, 2)], ids=["nonempty", "empty"])
@pytest.mark.parametrize("inplace", [False, True], ids=["relu", "relu_"])
def test_relu_second_derivative_reaches_x_when_the_gradient_requires_grad(lib, shape, inplace):
    # PyTorch's rule, threshold_backward(grad, result, 0), is a function of result: the
    # second derivative is zeros, even when grad (here w's) requires grad by itself
    x = lib.tensor(np.full(shape, -2.0, dtype=np.float32), requires_grad=True)
    w = lib.full(shape, 3.0, requires_grad=True)
    y = x.clone().relu_() if inplace else x.relu()
    g, = lib.autograd.grad((y * w).sum(), x, create_graph=True)
    gx, gw = lib.autograd.grad(g.sum(), [x, w], allow_unused=True)
    assert gx is not None and gx.shape == shape and not gx.any()
    assert gw is not None and gw.shape == shape and not gw.any()


# ---------------------------------------------------------------- 14. writes into shared memory
# (fuzzer seeds 4658, 22492, 45857)


@pytest.mark.parametrize("base_requires_grad", [False, True])
def test_backward_of_a_write_into_an_expanded_view(lib, base_requires_grad):
    # CopySlices copies the written tensor's gradient into the base's, which PyTorch refuses
    # where the written tensor's elements share memory; with no base gradient to compute, it
    # computes only the value's and runs
    b = lib.tensor([2.5, -1.75, 1.25], requires_grad=base_requires_grad) * 1
    e = b.expand(2, 3)
    v = lib.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (PyTorch: index_put_ on expanded tensors deprecated)
        e[lib.tensor([1])] = v * 2
    assert type(b.grad_fn).__name__ == "CopySlices"
    loss = (e * lib.tensor([[1.0, 1.0, 1.0], [3.0, 4.0, 5.0]])).sum()
    if base_requires_grad:
        msg = raises(RuntimeError, loss.backward)
        assert msg.startswith("unsupported operation: more than one element of the written-to "
                              "tensor refers to a single memory location.")
    else:
        loss.backward()
        assert v.grad.tolist() == [[8.0, 10.0, 12.0]]


# ---------------------------------------------------------------- 15. a value with extra dims
# (fuzzer seed 42537)


@pytest.mark.parametrize("shape, index, vshape", [
    ((0,), slice(0, 1), (3, 0)),  # an empty value into an empty region is still checked
    ((2, 3), slice(None), (2, 2, 3)),  # an index that selects all of x
    ((2,), slice(0, 1), (3, 1)),
])
@pytest.mark.parametrize("requires_grad", [False, True])
def test_setitem_value_with_extra_leading_dims_is_refused(lib, shape, index, vshape,
                                                          requires_grad):
    x = lib.zeros(shape) * 1
    v = lib.zeros(vshape, requires_grad=requires_grad)
    msg = raises(RuntimeError, lambda: x.__setitem__(index, v))
    target = list(x[index].shape)
    assert msg == (f"expand({lib.__name__}.FloatTensor{{{list(vshape)}}}, size={target}): the "
                   f"number of sizes provided ({len(target)}) must be greater or equal to the "
                   f"number of dimensions in the tensor ({len(vshape)})")


def test_setitem_value_with_leading_ones_is_taken(lib):
    x = lib.zeros(2, 3) * 1
    x[:] = lib.ones(1, 1, 3, requires_grad=True) * 2
    assert x.tolist() == [[2.0] * 3] * 2 and type(x.grad_fn).__name__ == "CopyBackwards"
    y = lib.zeros(0) * 1
    y[0:1] = lib.zeros(1, 0, requires_grad=True) * 1
    assert y.requires_grad and y.shape == (0,)


def test_writes_through_views_of_a_base_laid_out_as_a_transpose(lib):
    # x.T ** 2 keeps x.T's layout (not C order): the nodes that route a view's gradient into
    # its base count offsets in memory (fuzzer seeds 30385, 31439, 32532, 34421)
    x = lib.tensor(np.arange(1.0, 21.0).reshape(4, 5) / 8, requires_grad=True)
    y = x.T ** 2
    y[2].sin_()
    r = y[1]
    y[3, 1:] = 0.5
    assert type(r.grad_fn).__name__ == "AsStridedBackward0"
    (y * lib.tensor(np.arange(20.0).reshape(5, 4))).sum().backward()
    col2 = [5.940771530220642, 9.725441505626517, -28.506342580806866, 16.978603659894443]
    assert x.grad[:, 2].tolist() == pytest.approx(col2, rel=1e-12)
    assert x.grad[:, 3].tolist() == [12.0, 0.0, 0.0, 0.0]
    assert x.grad[:, 0].tolist() == [0.0, 1.5, 5.5, 12.0]


def test_casting_inf_and_nan_to_an_integer_gives_its_minimum_without_a_warning(lib):
    # (x86's conversion, as PyTorch's CPU kernels give it; NumPy's cast gives the same value
    # but warns "invalid value encountered in cast", an error under this suite's filters)
    x = lib.tensor([float("inf"), float("nan"), -float("inf"), 1e10, 2.5])
    low = -2147483648
    assert x.int().tolist() == [low, low, low, low, 2]
    assert x[None].t().int()[:, 0].tolist() == [low, low, low, low, 2]  # (a strided copy)
    assert lib.zeros(5, dtype=lib.int32).copy_(x).tolist() == [low, low, low, low, 2]
    assert x.long().tolist() == [-2**63, -2**63, -2**63, 10**10, 2]


@pytest.mark.parametrize("index", [0, slice(None), Ellipsis])
@pytest.mark.parametrize("dtypes", [("float64", "float64"), ("float64", "float32"),
                                    ("float32", "float64"), ("int64", "float32")])
def test_setitem_expand_error_names_the_value_s_type(lib, index, dtypes):
    x = lib.zeros(2, 3, dtype=getattr(lib, dtypes[0]))
    v = lib.ones(2, 2, 3, dtype=getattr(lib, dtypes[1]))
    name = {"float64": "DoubleTensor", "float32": "FloatTensor"}[dtypes[1]]
    size = [3] if index == 0 else [2, 3]
    with pytest.raises(RuntimeError) as e:
        x[index] = v
    assert str(e.value) == (f"expand({lib.__name__}.{name}{{[2, 2, 3]}}, size={size}): the "
                            f"number of sizes provided ({len(size)}) must be greater or equal "
                            "to the number of dimensions in the tensor (3)")


def test_split_output_written_under_no_grad_refuses_its_node_after_its_base_stops_requiring_grad(
        lib):
    # (PyTorch re-derives a view's node when its version moved, unless the view has no node
    # and its base needs none; an output of split/chunk then refuses: fuzzer seed 60006)
    x = lib.tensor([0.5, 2.0, -2.0], requires_grad=True)
    v = x.chunk(1, -1)
    with lib.no_grad():
        v[0][0] = 1.0
    x.requires_grad_(False)
    with pytest.raises(RuntimeError, match="Output 0 of Split is a view and its base"):
        v[0].is_leaf  # noqa: B018
    # a base detached in place (its version unchanged) leaves its views their history
    h = lib.tensor([1.0, 2.0], requires_grad=True) * 2
    w = h[1:]
    h.detach_()
    assert type(w.grad_fn).__name__ == "SliceBackward0"


def test_a_one_line_repr_wraps_its_suffixes_where_pytorchs_does(lib):
    # (the line is measured with its "tensor(" prefix, and numbagrad's dtype names as
    # PyTorch's: numbagrad wrapped these one line later)
    w = lib.tensor([[0.1225, -0.2059, -0.4106, -0.4324, 0.2802]], requires_grad=True)
    assert repr(w.view(1, 5)) == (
        "tensor([[ 0.1225, -0.2059, -0.4106, -0.4324,  0.2802]],\n"
        "       grad_fn=<ViewBackward0>)")
    ints = repr(lib.arange(13, dtype=lib.int32)).replace(lib.__name__ + ".", "torch.")
    assert ints == ("tensor([ 0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12], "
                    "dtype=torch.int32)")
    x = lib.tensor([-1.0, -0.5, 0.0, 0.5, 1.0], dtype=lib.float64, requires_grad=True) * 2
    assert repr(x).replace(lib.__name__ + ".", "torch.") == (
        "tensor([-2., -1.,  0.,  1.,  2.], dtype=torch.float64, grad_fn=<MulBackward0>)")
