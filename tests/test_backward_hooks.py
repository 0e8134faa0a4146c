"""Module backward hooks (full, pre and the deprecated non-full kind) against PyTorch: call
order, the gradients the hooks see, replaced gradients, removal and errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import numbagrad as ng

torch = pytest.importorskip("torch")

X = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], dtype=np.float32)
W = np.array([[0.1, -0.2, 0.3], [0.4, 0.5, -0.6]], dtype=np.float32)
B = np.array([0.05, -0.05], dtype=np.float32)


def _np(g):
    return None if g is None else g.detach().numpy().copy()


def _record(log, name):
    """A full backward hook that logs what it saw."""
    def hook(module, grad_input, grad_output):
        log.append((name, "bw", [_np(g) for g in grad_input], [_np(g) for g in grad_output]))
    return hook


def _record_pre(log, name):
    def hook(module, grad_output):
        log.append((name, "pre", [_np(g) for g in grad_output]))
    return hook


def _linear(lib, out=2):
    lin = lib.nn.Linear(3, out)
    with lib.no_grad():
        lin.weight.copy_(lib.tensor(W[:out]))
        lin.bias.copy_(lib.tensor(B[:out]))
    return lin


def _assert_same(ours, theirs):
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        if isinstance(a, (list, tuple)):
            _assert_same(a, b)
        elif isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
            assert a is not None and b is not None, (a, b)
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
        else:
            assert a == b


def _both(scenario):
    _assert_same(scenario(ng), scenario(torch))


def test_linear_full_hook_and_pre_hook_values_and_order():
    def scenario(lib):
        log = []
        lin = _linear(lib)
        lin.register_full_backward_hook(_record(log, "a"))
        lin.register_full_backward_pre_hook(_record_pre(log, "p"))
        lin.register_full_backward_hook(_record(log, "first"), prepend=True)
        lin.register_full_backward_pre_hook(_record_pre(log, "p0"), prepend=True)
        x = lib.tensor(X, requires_grad=True)
        (lin(x) * lib.tensor([[1.0, 2.0]])).sum().backward()
        log.append(("x.grad", _np(x.grad), _np(lin.weight.grad)))
        return log
    _both(scenario)


def test_sequential_hooks_run_from_last_module_to_first():
    def scenario(lib):
        log = []
        seq = lib.nn.Sequential(_linear(lib), lib.nn.Tanh(), lib.nn.Linear(2, 2))
        with lib.no_grad():
            seq[2].weight.copy_(lib.tensor([[1.0, -1.0], [0.5, 2.0]]))
            seq[2].bias.zero_()
        seq.register_full_backward_hook(_record(log, "seq"))
        for k, m in enumerate(seq):
            m.register_full_backward_hook(_record(log, f"m{k}"))
            m.register_full_backward_pre_hook(_record_pre(log, f"pre{k}"))
        x = lib.tensor(X, requires_grad=True)
        seq(x).pow(2).sum().backward()
        log.append(("x.grad", _np(x.grad)))
        return log
    _both(scenario)


def _two_inputs(lib):
    class Mul(lib.nn.Module):
        def forward(self, a, scale, b):
            return a * b * scale, a - b
    return Mul()


def test_two_inputs_two_outputs_and_non_tensor_argument():
    def scenario(lib):
        log = []
        m = _two_inputs(lib)
        m.register_full_backward_hook(_record(log, "m"))
        a = lib.tensor(X, requires_grad=True)
        b = lib.tensor(X[::-1].copy(), requires_grad=True)
        p, q = m(a, 3.0, b)
        (p.sum() + (q * q).sum()).backward()
        log.append(("grads", _np(a.grad), _np(b.grad)))
        return log
    _both(scenario)


def test_unused_output_and_input_without_grad():
    def scenario(lib):
        log = []
        m = _two_inputs(lib)
        m.register_full_backward_hook(_record(log, "m"))
        a = lib.tensor(X, requires_grad=True)
        b = lib.tensor(X[::-1].copy())
        p, _ = m(a, 2.0, b)
        p.sum().backward()
        log.append(("grads", _np(a.grad)))
        return log
    _both(scenario)


def test_returned_tuples_replace_the_gradients():
    def scenario(lib):
        log = []
        m = _two_inputs(lib)

        def double_grad_output(module, grad_output):
            return tuple(None if g is None else g * 2 for g in grad_output)

        def zero_b(module, grad_input, grad_output):
            return grad_input[0] * 10, None, None

        m.register_full_backward_pre_hook(double_grad_output)
        m.register_full_backward_hook(_record(log, "sees doubled"))
        m.register_full_backward_hook(zero_b)
        m.register_full_backward_hook(_record(log, "sees replaced"))
        a = lib.tensor(X, requires_grad=True)
        b = lib.tensor(X[::-1].copy(), requires_grad=True)
        p, q = m(a, 1.0, b)
        (p.sum() + q.sum()).backward()
        log.append(("grads", _np(a.grad), b.grad is None))
        return log
    _both(scenario)


def test_handle_remove_and_context_manager():
    def scenario(lib):
        log = []
        lin = _linear(lib)
        h1 = lin.register_full_backward_hook(_record(log, "h1"))
        h2 = lin.register_full_backward_pre_hook(_record_pre(log, "h2"))
        x = lib.tensor(X, requires_grad=True)
        lin(x).sum().backward()
        h1.remove()
        h2.remove()
        lin(x).sum().backward()
        with lin.register_full_backward_hook(_record(log, "ctx")):
            lin(x).sum().backward()
        lin(x).sum().backward()
        log.append(("n", len(lin._backward_hooks), len(lin._backward_pre_hooks)))
        return log
    _both(scenario)


def test_no_input_requires_grad_calls_hook_with_none_and_warns():
    def scenario(lib):
        log = []
        lin = _linear(lib)
        lin.register_full_backward_hook(_record(log, "lin"))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lin(lib.tensor(X)).sum().backward()
        log.append(("warned", any("no inputs require gradients" in str(w.message)
                                  for w in caught)))
        return log
    _both(scenario)


def test_wrong_number_of_gradients_from_hooks():
    for lib in (ng, torch):
        lin = _linear(lib)
        lin.register_full_backward_hook(lambda m, gi, go: (gi[0], gi[0]))
        with pytest.raises(RuntimeError, match=r"^Backward hook returned an invalid number of "
                           r"grad_input, got 2, but expected 1$"):
            lin(lib.tensor(X, requires_grad=True)).sum().backward()
        lin = _linear(lib)
        lin.register_full_backward_pre_hook(lambda m, go: ())
        with pytest.raises(RuntimeError, match=r"^Backward pre hook returned an invalid number "
                           r"of grad_output, got 0, but expected 1$"):
            lin(lib.tensor(X, requires_grad=True)).sum().backward()


def test_full_and_regular_hooks_do_not_mix():
    msg = ("^Cannot use both regular backward hooks and full backward hooks on a single Module. "
           "Please use only one of them.$")
    for lib in (ng, torch):
        lin = _linear(lib)
        lin.register_full_backward_hook(lambda *a: None)
        with pytest.raises(RuntimeError, match=msg):
            lin.register_backward_hook(lambda *a: None)
        lin = _linear(lib)
        lin.register_backward_hook(lambda *a: None)
        with pytest.raises(RuntimeError, match=msg):
            lin.register_full_backward_hook(lambda *a: None)


def test_regular_backward_hook_on_a_single_op_module():
    def scenario(lib):
        log = []

        class Mul(lib.nn.Module):
            def forward(self, a, b):
                return a * b

        m = Mul()
        m.register_backward_hook(_record(log, "m"))
        m.register_backward_hook(lambda mod, gi, go: (gi[0] + 1, gi[1]))
        a = lib.tensor(X, requires_grad=True)
        b = lib.tensor(X[::-1].copy(), requires_grad=True)
        a2, b2 = a * 1, b * 1
        for inputs in ((a, b), (a2, b2)):
            # leaves' nodes are not the inputs' grad_fn (None): PyTorch warns for those
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                out = m(*inputs)
            log.append(("warnings", [str(w.message) for w in caught]))
            out.sum().backward()
        log.append(("grads", _np(a.grad), _np(b.grad)))
        return log
    _both(scenario)


def test_regular_backward_hook_warns_for_several_nodes():
    for lib in (ng, torch):
        m = lib.nn.Sequential(_linear(lib), lib.nn.Tanh())
        m.register_backward_hook(lambda *a: None)
        x = lib.tensor(X, requires_grad=True)
        with pytest.warns(FutureWarning, match="^Using a non-full backward hook when the "
                          "forward contains multiple autograd Nodes is deprecated"):
            m(x)
