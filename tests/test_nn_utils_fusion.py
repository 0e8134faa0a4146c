"""nn.utils' BatchNorm folding (``fuse_conv_bn_eval`` / ``fuse_conv_bn_weights`` /
``fuse_linear_bn_eval`` / ``fuse_linear_bn_weights``), ``skip_init`` and the deprecated
``stateless.functional_call`` against PyTorch: fused parameters, outputs and gradients of the
fused layers on the same float64 values, the parameters' flags and dtypes, warnings and
errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import numbagrad as ng

torch = pytest.importorskip("torch")

rng = np.random.default_rng(3)


def _pair(make, dtype="float64"):
    """The module ``make(L)`` of each library, numbagrad's with PyTorch's values; BatchNorm's
    running statistics random (the variance positive)."""
    theirs = make(torch).to(getattr(torch, dtype))
    with torch.no_grad():
        for name, b in theirs.named_buffers():
            if name.endswith("running_mean"):
                b.copy_(torch.tensor(rng.standard_normal(tuple(b.shape))))
            elif name.endswith("running_var"):
                b.copy_(torch.tensor(rng.uniform(0.5, 2.0, tuple(b.shape))))
        for p in theirs.parameters():
            p.copy_(torch.tensor(rng.standard_normal(tuple(p.shape))))
    ours = make(ng).to(getattr(ng, dtype))
    ours.load_state_dict({k: ng.tensor(v.detach().numpy()) for k, v in
                          theirs.state_dict().items()})
    return theirs.eval(), ours.eval()


CONV = {
    "conv1d": (lambda L: L.nn.Conv1d(3, 4, 3), lambda L: L.nn.BatchNorm1d(4), (2, 3, 7), False),
    "conv2d": (lambda L: L.nn.Conv2d(3, 4, 3, padding=1), lambda L: L.nn.BatchNorm2d(4),
               (2, 3, 5, 5), False),
    "conv2d_no_bias": (lambda L: L.nn.Conv2d(3, 4, 2, bias=False), lambda L: L.nn.BatchNorm2d(4),
                       (2, 3, 5, 5), False),
    "conv2d_groups": (lambda L: L.nn.Conv2d(4, 6, 3, groups=2), lambda L: L.nn.BatchNorm2d(6),
                      (1, 4, 5, 5), False),
    "conv2d_bn_not_affine": (lambda L: L.nn.Conv2d(3, 4, 3),
                             lambda L: L.nn.BatchNorm2d(4, affine=False), (2, 3, 5, 5), False),
    "conv3d": (lambda L: L.nn.Conv3d(2, 3, 2), lambda L: L.nn.BatchNorm3d(3), (1, 2, 4, 4, 4),
               False),
    "conv_transpose2d": (lambda L: L.nn.ConvTranspose2d(3, 4, 3, stride=2),
                         lambda L: L.nn.BatchNorm2d(4), (2, 3, 4, 4), True),
    "conv_transpose1d_no_bias": (lambda L: L.nn.ConvTranspose1d(4, 6, 3, bias=False),
                                 lambda L: L.nn.BatchNorm1d(6), (2, 4, 5), True),
}
LINEAR = {
    "linear": (lambda L: L.nn.Linear(5, 4), lambda L: L.nn.BatchNorm1d(4)),
    "linear_no_bias": (lambda L: L.nn.Linear(5, 4, bias=False), lambda L: L.nn.BatchNorm1d(4)),
    "linear_one_feature": (lambda L: L.nn.Linear(5, 4), lambda L: L.nn.BatchNorm1d(1)),
    "linear_no_bias_one_feature": (lambda L: L.nn.Linear(5, 4, bias=False),
                                   lambda L: L.nn.BatchNorm1d(1)),
}


def _compare_fused(theirs, ours, x, tol):
    """The fused layers' parameters, their flags, outputs and gradients, in both libraries."""
    assert type(ours).__name__ == type(theirs).__name__
    for (name, t), (name2, o) in zip(theirs.named_parameters(), ours.named_parameters()):
        assert name == name2 and type(o) is ng.nn.Parameter and o.is_leaf
        assert o.requires_grad == t.requires_grad and o.dtype.name == str(t.dtype)[6:]
        assert tuple(o.shape) == tuple(t.shape)
        np.testing.assert_allclose(o.detach().numpy(), t.detach().numpy(), rtol=tol, atol=tol)
    xt = torch.tensor(x, requires_grad=True)
    xn = ng.tensor(x, requires_grad=True)
    yt, yn = theirs(xt), ours(xn)
    np.testing.assert_allclose(yn.detach().numpy(), yt.detach().numpy(), rtol=tol, atol=tol)
    w = rng.standard_normal(tuple(yt.shape))
    (yt * torch.tensor(w)).sum().backward()
    (yn * ng.tensor(w)).sum().backward()
    np.testing.assert_allclose(xn.grad.numpy(), xt.grad.numpy(), rtol=tol, atol=tol)
    for t, o in zip(theirs.parameters(), ours.parameters()):
        if t.requires_grad:
            np.testing.assert_allclose(o.grad.numpy(), t.grad.numpy(), rtol=tol, atol=tol)
        else:
            assert o.grad is None and t.grad is None
    return yt, yn


@pytest.mark.parametrize("case", list(CONV))
def test_fuse_conv_bn_eval_matches_pytorch(case):
    make_conv, make_bn, shape, transpose = CONV[case]
    conv_t, conv_n = _pair(make_conv)
    bn_t, bn_n = _pair(make_bn)
    fused_t = torch.nn.utils.fuse_conv_bn_eval(conv_t, bn_t, transpose=transpose)
    fused_n = ng.nn.utils.fuse_conv_bn_eval(conv_n, bn_n, transpose=transpose)
    assert fused_n is not conv_n and fused_n.weight is not conv_n.weight
    x = rng.standard_normal(shape)
    _, yn = _compare_fused(fused_t, fused_n, x, 1e-10)
    # the fused layer's output is the pair's
    np.testing.assert_allclose(yn.detach().numpy(), bn_n(conv_n(ng.tensor(x))).detach().numpy(),
                               rtol=1e-10, atol=1e-10)
    # (the originals are left as they were)
    np.testing.assert_array_equal(conv_n.weight.detach().numpy(), conv_t.weight.detach().numpy())


@pytest.mark.parametrize("case", list(LINEAR))
def test_fuse_linear_bn_eval_matches_pytorch(case):
    make_linear, make_bn = LINEAR[case]
    lin_t, lin_n = _pair(make_linear)
    bn_t, bn_n = _pair(make_bn)
    fused_t = torch.nn.utils.fuse_linear_bn_eval(lin_t, bn_t)
    fused_n = ng.nn.utils.fuse_linear_bn_eval(lin_n, bn_n)
    x = rng.standard_normal((6, 5))
    _, yn = _compare_fused(fused_t, fused_n, x, 1e-10)
    if bn_n.num_features == 4:
        np.testing.assert_allclose(yn.detach().numpy(), bn_n(lin_n(ng.tensor(x))).detach().numpy(),
                                   rtol=1e-10, atol=1e-10)


def test_fuse_in_float32_rounds_as_pytorch():
    conv_t, conv_n = _pair(CONV["conv2d"][0], "float32")
    bn_t, bn_n = _pair(CONV["conv2d"][1], "float32")
    fused_t = torch.nn.utils.fuse_conv_bn_eval(conv_t, bn_t)
    fused_n = ng.nn.utils.fuse_conv_bn_eval(conv_n, bn_n)
    for t, o in zip(fused_t.parameters(), fused_n.parameters()):
        assert o.dtype is ng.float32
        np.testing.assert_array_equal(o.detach().numpy(), t.detach().numpy())
    lin_t, lin_n = _pair(LINEAR["linear"][0], "float32")
    bn_t, bn_n = _pair(LINEAR["linear"][1], "float32")
    fused_t = torch.nn.utils.fuse_linear_bn_eval(lin_t, bn_t)
    fused_n = ng.nn.utils.fuse_linear_bn_eval(lin_n, bn_n)
    for t, o in zip(fused_t.parameters(), fused_n.parameters()):
        np.testing.assert_array_equal(o.detach().numpy(), t.detach().numpy())


def _weights_args(L, n_out, conv_shape, bias, dtypes, grads):
    """Arguments of ``fuse_*_weights``: the layer's weight (and bias) in ``dtypes[0]``,
    requiring grad as ``grads`` says, BatchNorm's tensors in ``dtypes[1]``."""
    rs = np.random.default_rng(11)
    w_dt, bn_dt = (getattr(L, d) for d in dtypes)
    w = L.tensor(rs.standard_normal(conv_shape), dtype=w_dt, requires_grad=grads[0])
    b = L.tensor(rs.standard_normal(n_out), dtype=w_dt, requires_grad=grads[1]) if bias else None
    stats = [L.tensor(rs.standard_normal(n_out), dtype=bn_dt),
             L.tensor(rs.uniform(0.5, 2, n_out), dtype=bn_dt)]
    affine = [L.tensor(rs.standard_normal(n_out), dtype=bn_dt, requires_grad=True)
              for _ in range(2)]
    return w, b, stats, affine


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("dtypes", [("float64", "float64"), ("float32", "float64"),
                                    ("float64", "float32")])
@pytest.mark.parametrize("grads", [(True, True), (False, True), (True, False)])
def test_fuse_weights_give_new_leaf_parameters(bias, dtypes, grads):
    out = []
    for L in (torch, ng):
        w, b, (rm, rv), (bw, bb) = _weights_args(L, 4, (4, 3, 2, 2), bias, dtypes, grads)
        conv = L.nn.utils.fuse_conv_bn_weights(w, b, rm, rv, 1e-3, bw, bb)
        conv_none = L.nn.utils.fuse_conv_bn_weights(w, b, rm, rv, 1e-3, None, None)
        conv_t = L.nn.utils.fuse_conv_bn_weights(w.transpose(0, 1), b, rm, rv, 1e-5, bw, bb,
                                                 transpose=True)
        lw = w.flatten(1)
        linear = L.nn.utils.fuse_linear_bn_weights(lw, b, rm, rv, 1e-5, bw, bb)
        out.append([*conv, *conv_none, *conv_t, *linear])
    for t, o in zip(*out):
        assert type(o) is ng.nn.Parameter and o.is_leaf and o.grad_fn is None
        assert o.requires_grad == t.requires_grad, (o.requires_grad, t.requires_grad)
        assert o.dtype.name == str(t.dtype)[6:] and tuple(o.shape) == tuple(t.shape)
        tol = 1e-12 if o.dtype is ng.float64 and dtypes[1] == "float64" else 1e-6
        np.testing.assert_allclose(o.detach().numpy(), t.detach().numpy(), rtol=tol, atol=tol)


def test_fuse_linear_bn_weights_without_affine_batchnorm():
    # (PyTorch's fails on None; numbagrad reads it as fuse_conv_bn_weights does)
    lin_t, lin_n = _pair(LINEAR["linear"][0])
    bn_t, bn_n = _pair(lambda L: L.nn.BatchNorm1d(4, affine=False))
    fused = ng.nn.utils.fuse_linear_bn_eval(lin_n, bn_n)
    x = ng.tensor(rng.standard_normal((3, 5)))
    np.testing.assert_allclose(fused(x).detach().numpy(), bn_n(lin_n(x)).detach().numpy(),
                               rtol=1e-12, atol=1e-12)


ERRORS = {
    "conv_training": lambda L: L.nn.utils.fuse_conv_bn_eval(L.nn.Conv2d(2, 3, 1),
                                                            L.nn.BatchNorm2d(3).eval()),
    "bn_training": lambda L: L.nn.utils.fuse_conv_bn_eval(L.nn.Conv2d(2, 3, 1).eval(),
                                                          L.nn.BatchNorm2d(3)),
    "conv_no_running_stats": lambda L: L.nn.utils.fuse_conv_bn_eval(
        L.nn.Conv2d(2, 3, 1).eval(), L.nn.BatchNorm2d(3, track_running_stats=False).eval()),
    "linear_training": lambda L: L.nn.utils.fuse_linear_bn_eval(L.nn.Linear(2, 3),
                                                                L.nn.BatchNorm1d(3).eval()),
    "linear_features": lambda L: L.nn.utils.fuse_linear_bn_eval(L.nn.Linear(2, 3).eval(),
                                                                L.nn.BatchNorm1d(2).eval()),
    "linear_no_running_stats": lambda L: L.nn.utils.fuse_linear_bn_eval(
        L.nn.Linear(2, 3).eval(), L.nn.BatchNorm1d(3, track_running_stats=False).eval()),
    "skip_init_not_a_module": lambda L: L.nn.utils.skip_init(int),
    "skip_init_no_device": lambda L: L.nn.utils.skip_init(L.nn.ReLU),
    "skip_init_not_a_class": lambda L: L.nn.utils.skip_init(L.nn.Linear(2, 2)),
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_errors_match_pytorch(case):
    out = []
    for L in (torch, ng):
        with pytest.raises(Exception) as info:
            ERRORS[case](L)
        out.append(info.value)
    theirs, ours = out
    assert type(ours) is type(theirs)
    assert str(ours) == str(theirs)


@pytest.mark.parametrize("make", [
    lambda L, **kw: L.nn.utils.skip_init(L.nn.Linear, 5, 3, **kw),
    lambda L, **kw: L.nn.utils.skip_init(L.nn.Conv2d, 2, 4, kernel_size=3, bias=False, **kw),
    lambda L, **kw: L.nn.utils.skip_init(L.nn.BatchNorm1d, 4, **kw),
    lambda L, **kw: L.nn.utils.skip_init(L.nn.Embedding, 6, 3, **kw),
], ids=["linear", "conv2d", "batchnorm", "embedding"])
@pytest.mark.parametrize("kw", [{}, {"dtype": "float64"}, {"device": "cpu"}])
def test_skip_init_makes_the_module_without_values(make, kw):
    made = []
    for L in (torch, ng):
        args = {k: getattr(L, v) if k == "dtype" else v for k, v in kw.items()}
        made.append(make(L, **args))
    theirs, ours = made
    assert type(ours).__name__ == type(theirs).__name__
    t_state, o_state = theirs.state_dict(), ours.state_dict()
    assert list(o_state) == list(t_state)
    for name, t in t_state.items():
        o = o_state[name]
        assert tuple(o.shape) == tuple(t.shape) and o.dtype.name == str(t.dtype)[6:]
        assert o.device.type == t.device.type == "cpu"
    for (name, t), (name2, o) in zip(theirs.named_parameters(), ours.named_parameters()):
        assert name == name2 and type(o) is ng.nn.Parameter and o.requires_grad
    # it is a working module: with PyTorch's values, the same outputs and gradients
    ours.load_state_dict({k: ng.tensor(v.detach().numpy()) for k, v in t_state.items()
                          if v.dtype.is_floating_point}, strict=False)
    if isinstance(theirs, torch.nn.Linear):
        x = rng.standard_normal((2, 5)).astype(str(t_state["weight"].dtype)[6:])
        _compare_fused(theirs, ours, x, 1e-6)


def test_stateless_functional_call_warns_and_matches_torch_func():
    text = ("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 and "
            "will be removed in a future version of PyTorch. Please use "
            "`torch.func.functional_call` instead which is a drop-in replacement.")
    lin_t, lin_n = _pair(lambda L: L.nn.Linear(4, 3))
    params = {"weight": rng.standard_normal((3, 4)), "bias": rng.standard_normal(3)}
    x = rng.standard_normal((2, 4))
    results = []
    for L, module in ((torch, lin_t), (ng, lin_n)):
        given = {k: L.tensor(v, requires_grad=True) for k, v in params.items()}
        with pytest.warns(FutureWarning) as record:
            y = L.nn.utils.stateless.functional_call(module, given, (L.tensor(x),))
        assert [str(w.message) for w in record] == [text]
        assert record[0].filename == __file__
        y.pow(2).sum().backward()
        # (the module keeps its own parameters, which got no gradient)
        assert module.weight.grad is None
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            z = L.func.functional_call(module, given, L.tensor(x))
        results.append([y.detach().numpy(), z.detach().numpy(), given["weight"].grad.numpy(),
                        given["bias"].grad.numpy()])
    for t, o in zip(*results):
        np.testing.assert_allclose(o, t, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(results[1][0], results[1][1])


def test_stateless_functional_call_keyword_arguments_and_strict():
    lin_t, lin_n = _pair(lambda L: L.nn.Linear(4, 3))
    for L, module in ((torch, lin_t), (ng, lin_n)):
        with pytest.warns(FutureWarning):
            y = L.nn.utils.stateless.functional_call(
                module, {"bias": L.zeros(3, dtype=L.float64)}, kwargs={"input": L.ones(1, 4,
                                                                       dtype=L.float64)})
        np.testing.assert_allclose(y.detach().numpy(),
                                   module.weight.detach().numpy().sum(1)[None], rtol=1e-12)
