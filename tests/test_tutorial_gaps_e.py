"""Gaps the second round of tutorial programs (tests/programs_d, stn.py on) found, each
against PyTorch: ``nn.grad``'s convolution gradients, gradcheck's forward-mode and forward-over-reverse checks,
``make_dual``'s copy of a tangent laid out unlike its primal, einsum over one operand, and a
custom Function's ``jvp`` in forward mode."""

import numpy as np
import pytest

import numbagrad as ng
import numbagrad.autograd.forward_ad as fwAD
from devices import on_cuda

torch = pytest.importorskip("torch")
TG = torch.nn.grad

# (PyTorch's forward AD scripts a helper when first used, and warns that scripting is deprecated)
pytestmark = pytest.mark.filterwarnings(
    "ignore:`torch.jit.script` is deprecated:DeprecationWarning")

# (rank, input shape, weight shape, stride, padding, dilation, groups)
CONV = [
    (1, (2, 4, 9), (6, 2, 3), 2, 1, 1, 2),
    (2, (2, 3, 7, 6), (4, 3, 3, 2), (2, 1), (1, 0), (1, 2), 1),
    (2, (1, 4, 5, 5), (4, 1, 3, 3), 1, 1, 1, 4),
    (3, (1, 2, 4, 5, 3), (3, 2, 2, 3, 2), 1, 0, 1, 1),
]


def _conv_case(case, dtype, device="cpu"):
    n, xs, ws, stride, padding, dilation, groups = CONV[case]
    rng = np.random.default_rng(case)
    x, w = rng.normal(size=xs).astype(dtype), rng.normal(size=ws).astype(dtype)
    kw = dict(stride=stride, padding=padding, dilation=dilation, groups=groups)
    out_shape = getattr(torch.nn.functional, f"conv{n}d")(torch.tensor(x), torch.tensor(w),
                                                           **kw).shape
    g = rng.normal(size=tuple(out_shape)).astype(dtype)
    return n, x, w, g, kw


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("case", range(len(CONV)))
def test_nn_grad_conv_input_and_weight_match_torch(case, dtype):
    n, x, w, g, kw = _conv_case(case, dtype)
    tol = dict(rtol=1e-4, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-12)
    gi = getattr(ng.nn.grad, f"conv{n}d_input")(x.shape, ng.tensor(w), ng.tensor(g), **kw)
    want = getattr(TG, f"conv{n}d_input")(x.shape, torch.tensor(w), torch.tensor(g), **kw)
    assert gi.dtype.name == want.dtype.__str__().split(".")[1]
    np.testing.assert_allclose(gi.numpy(), want.numpy(), **tol)
    gw = getattr(ng.nn.grad, f"conv{n}d_weight")(ng.tensor(x), w.shape, ng.tensor(g), **kw)
    want = getattr(TG, f"conv{n}d_weight")(torch.tensor(x), torch.Size(w.shape),
                                            torch.tensor(g), **kw)
    np.testing.assert_allclose(gw.numpy(), want.numpy(), **tol)


def test_nn_grad_is_f_grad_and_its_results_are_differentiable_twice():
    assert ng.nn.functional.grad is ng.nn.grad
    n, x, w, g, kw = _conv_case(1, np.float64)
    xs = [ng.tensor(a, requires_grad=True) for a in (x, w, g)]
    ts = [torch.tensor(a, requires_grad=True) for a in (x, w, g)]
    for lib, (xt, wt, gt), G in ((ng, xs, ng.nn.grad), (torch, ts, TG)):
        gi = G.conv2d_input(xt.shape, wt, gt, **kw)
        gw = G.conv2d_weight(xt, wt.shape, gt, **kw)
        for out in (gi, gw):
            assert type(out.grad_fn).__name__ == "ConvolutionBackwardBackward0"
        (gi.pow(2).sum() + gw.sin().sum()).backward()
    for a, b in zip(xs, ts):
        assert (a.grad is None) == (b.grad is None)
        if b.grad is not None:
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-9, atol=1e-11)
    assert ng.autograd.gradcheck(
        lambda w, g: ng.nn.grad.conv2d_input((1, 3, 5, 4), w, g, padding=1),
        (ng.tensor(w[:2, :, :2, :2], requires_grad=True),
         ng.tensor(np.ones((1, 2, 6, 5)), requires_grad=True)))


def test_nn_grad_without_grad_gives_no_graph():
    n, x, w, g, kw = _conv_case(1, np.float32)
    out = ng.nn.grad.conv2d_weight(ng.tensor(x), w.shape, ng.tensor(g), **kw)
    assert out.grad_fn is None and not out.requires_grad


def _raises(fn_ng, fn_torch):
    with pytest.raises(RuntimeError) as want:
        fn_torch()
    with pytest.raises(RuntimeError) as got:
        fn_ng()
    return str(got.value), str(want.value)


def test_nn_grad_errors_are_pytorchs():
    n, x, w, g, kw = _conv_case(1, np.float32)
    X, W, Gr = ng.tensor(x), ng.tensor(w), ng.tensor(g)
    tX, tW, tG = torch.tensor(x), torch.tensor(w), torch.tensor(g)
    # an unbatched shape
    got, want = _raises(lambda: ng.nn.grad.conv2d_input(x.shape[1:], W, Gr[0], **kw),
                        lambda: TG.conv2d_input(x.shape[1:], tW, tG[0], **kw))
    assert got == want
    got, want = _raises(lambda: ng.nn.grad.conv2d_weight(X[0], w.shape, Gr[0], **kw),
                        lambda: TG.conv2d_weight(tX[0], w.shape, tG[0], **kw))
    assert got == want
    # channels that do not match the weight
    bad = (2, 5) + x.shape[2:]
    got, want = _raises(lambda: ng.nn.grad.conv2d_input(bad, W, Gr, **kw),
                        lambda: TG.conv2d_input(bad, tW, tG, **kw))
    assert got == want
    # a stride of the wrong length
    got, want = _raises(lambda: ng.nn.grad.conv2d_input(x.shape, W, Gr, stride=(1, 1, 1)),
                        lambda: TG.conv2d_input(x.shape, tW, tG, stride=(1, 1, 1)))
    assert got == want
    # a grad_output of the wrong size (PyTorch's words on its float64 path without dilation;
    # its other paths give backend messages)
    n, x, w, g, kw = _conv_case(2, np.float64)
    bad = g[:, :, :, :-1]
    got, want = _raises(
        lambda: ng.nn.grad.conv2d_weight(ng.tensor(x), w.shape, ng.tensor(bad), **kw),
        lambda: TG.conv2d_weight(torch.tensor(x), w.shape, torch.tensor(bad), **kw))
    assert got == want
    got, want = _raises(
        lambda: ng.nn.grad.conv2d_input(x.shape, ng.tensor(w), ng.tensor(bad), **kw),
        lambda: TG.conv2d_input(x.shape, torch.tensor(w), torch.tensor(bad), **kw))
    assert got == want
    # a padding string: PyTorch's nn.grad takes numbers only
    for G, W_, Gr_ in ((ng.nn.grad, ng.tensor(w), ng.tensor(g)),
                       (TG, torch.tensor(w), torch.tensor(g))):
        with pytest.raises(RuntimeError):
            G.conv2d_input(x.shape, W_, Gr_, padding="same")


@on_cuda
def test_nn_grad_on_cuda():
    n, x, w, g, kw = _conv_case(0, np.float64)
    gi = ng.nn.grad.conv1d_input(x.shape, ng.tensor(w, device="cuda"),
                                 ng.tensor(g, device="cuda"), **kw)
    gw = ng.nn.grad.conv1d_weight(ng.tensor(x, device="cuda"), w.shape,
                                  ng.tensor(g, device="cuda"), **kw)
    assert gi.device.type == gw.device.type == "cuda"
    np.testing.assert_allclose(gi.cpu().numpy(), TG.conv1d_input(
        x.shape, torch.tensor(w), torch.tensor(g), **kw).numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(gw.cpu().numpy(), TG.conv1d_weight(
        torch.tensor(x), w.shape, torch.tensor(g), **kw).numpy(), rtol=1e-10, atol=1e-12)


# ---------------------------------------------------------------- gradcheck's modes


class _ExpJvp:
    """A custom Function with a forward-mode rule only (the forward-AD tutorial's)."""

    @staticmethod
    def make(lib, wrong=False):
        class Fn(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                result = lib.exp(x)
                ctx.result = result
                return result

            @staticmethod
            def jvp(ctx, gI):
                return gI * ctx.result * (1.5 if wrong else 1.0)

        return Fn


@pytest.mark.parametrize("name", ["numbagrad", "torch"])
def test_gradcheck_checks_forward_mode_only(name):
    lib = ng if name == "numbagrad" else torch
    x = lib.tensor(np.random.default_rng(0).normal(size=(2, 3)), requires_grad=True)
    kw = dict(check_forward_ad=True, check_backward_ad=False, check_undefined_grad=False,
              check_batched_grad=False)
    assert lib.autograd.gradcheck(_ExpJvp.make(lib).apply, (x,), **kw)
    assert not lib.autograd.gradcheck(_ExpJvp.make(lib, wrong=True).apply, (x,),
                                      raise_exception=False, **kw)
    with pytest.raises(RuntimeError, match="Jacobian computed with forward mode mismatch for "
                                           "output 0 with respect to input 0,\nnumerical:"):
        lib.autograd.gradcheck(_ExpJvp.make(lib, wrong=True).apply, (x,), **kw)


@pytest.mark.parametrize("name", ["numbagrad", "torch"])
def test_gradcheck_forward_and_backward_and_fwd_over_rev(name):
    lib = ng if name == "numbagrad" else torch
    rng = np.random.default_rng(1)
    x = lib.tensor(rng.normal(size=(2, 3)), requires_grad=True)
    y = lib.tensor(rng.normal(size=(3,)), requires_grad=True)
    f = lambda x, y: ((x * y).tanh().log_softmax(1), x.sum(0) * y)  # noqa: E731
    assert lib.autograd.gradcheck(f, (x, y), check_forward_ad=True)
    assert lib.autograd.gradgradcheck(f, (x, y), check_fwd_over_rev=True)
    assert lib.autograd.gradgradcheck(lambda x: x.sin() * x, (x,), check_fwd_over_rev=True,
                                      check_rev_over_rev=False, check_undefined_grad=False)


@pytest.mark.parametrize("name", ["numbagrad", "torch"])
def test_gradcheck_argument_errors_are_pytorchs(name):
    lib = ng if name == "numbagrad" else torch
    x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
    cases = [
        (dict(check_backward_ad=False),
         "Expected at least one of check_forward_ad or check_backward_ad to be True"),
        (dict(check_batched_grad=True, check_backward_ad=False, check_forward_ad=True),
         "Setting check_batched_grad=True requires check_backward_ad to be True"),
        (dict(check_batched_forward_grad=True),
         "Setting check_batched_forward_grad=True requires check_forward_ad to be True"),
    ]
    for kw, msg in cases:
        with pytest.raises(AssertionError, match=msg):
            lib.autograd.gradcheck(lib.sin, (x,), **kw)
    cases = [
        (dict(check_rev_over_rev=False),
         "Expected at least one of check_fwd_over_rev or check_rev_over_rev to be True"),
        (dict(check_rev_over_rev=False, check_fwd_over_rev=True),
         "Setting check_undefined_grad=True requires check_rev_over_rev to be True"),
    ]
    for kw, msg in cases:
        with pytest.raises(AssertionError, match=msg):
            lib.autograd.gradgradcheck(lib.sin, (x,), **kw)


def test_gradcheck_batched_checks_say_they_are_not_implemented():
    x = ng.tensor([1.0, 2.0], dtype=ng.float64, requires_grad=True)
    with pytest.raises(NotImplementedError, match="check_batched_grad"):
        ng.autograd.gradcheck(ng.sin, (x,), check_batched_grad=True)


# ---------------------------------------------------------------- make_dual's tangent layout


def _tangent_cases(lib):
    big = lib.tensor(np.arange(20.0, dtype=np.float32).reshape(5, 4))
    return {"same": lib.tensor(np.ones((3, 4), np.float32)),
            "transposed": lib.tensor(np.arange(12.0, dtype=np.float32).reshape(4, 3)).T,
            "offset": big[1:4], "prefix": big[:3],
            "expanded": lib.tensor(np.arange(4.0, dtype=np.float32)).expand(3, 4)}


@pytest.mark.parametrize("case", ["same", "transposed", "offset", "prefix", "expanded"])
def test_make_dual_copies_a_tangent_laid_out_unlike_its_primal(case):
    results = []
    for lib, fw in ((ng, fwAD), (torch, torch.autograd.forward_ad)):
        primal = lib.tensor(np.ones((3, 4), np.float32))
        tangent = _tangent_cases(lib)[case]
        with fw.dual_level():
            got = fw.unpack_dual(fw.make_dual(primal, tangent)).tangent
            results.append((got is tangent, got.stride(), got.storage_offset(),
                            got.tolist()))
    assert results[0] == results[1]


def test_make_dual_keeps_a_transposed_primals_strides():
    for lib, fw in ((ng, fwAD), (torch, torch.autograd.forward_ad)):
        primal = lib.tensor(np.ones((4, 3), np.float64)).T
        with fw.dual_level():
            t = lib.tensor(np.arange(12.0).reshape(3, 4))
            got = fw.unpack_dual(fw.make_dual(primal, t)).tangent
            assert got.stride() == (1, 3) and got.tolist() == t.tolist()
            out = fw.unpack_dual(primal * 2 if False else fw.make_dual(primal, t) * 2).tangent
            assert out.tolist() == (t * 2).tolist()


# ---------------------------------------------------------------- einsum of one operand

EINSUM = [("ij->i", [(3, 4)]), ("ijk->k", [(2, 3, 4)]), ("ijk->", [(2, 3, 4)]),
          ("ijk->ki", [(2, 3, 4)]), ("ii->", [(3, 3)]), ("NMKK->NM", [(2, 3, 4, 4)]),
          ("NMKK->NMK", [(2, 3, 4, 4)]), ("iji->j", [(3, 2, 3)]), ("ij,k->ik", [(3, 2), (4,)]),
          ("ijk,lm->", [(2, 3, 4), (2, 2)]), ("...ij->...", [(2, 3, 4)])]


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("case", range(len(EINSUM)))
def test_einsum_sums_over_dropped_letters_as_torch(case, dtype):
    eq, shapes = EINSUM[case]
    rng = np.random.default_rng(case)
    arrays = [rng.normal(size=s).astype(dtype) for s in shapes]
    xs = [ng.tensor(a, requires_grad=True) for a in arrays]
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    got, want = ng.einsum(eq, *xs), torch.einsum(eq, *ts)
    assert tuple(got.shape) == tuple(want.shape)
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), **tol)
    (got * got).sum().backward()
    (want * want).sum().backward()
    for a, b in zip(xs, ts):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), **tol)


def test_einsum_repeated_subscript_of_two_sizes_raises_pytorchs_error():
    a = np.zeros((2, 3, 4))
    got, want = _raises(lambda: ng.einsum("iij->j", ng.tensor(a)),
                        lambda: torch.einsum("iij->j", torch.tensor(a)))
    assert got == want


# ---------------------------------------------------------------- a custom Function's jvp


def _two_output_function(lib):
    class Fn(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, y, k):
            fw = ng.autograd.forward_ad if lib is ng else torch.autograd.forward_ad
            assert fw.unpack_dual(x).tangent is None  # (forward sees no tangents)
            ctx.y = y
            ctx.save_for_forward(x, y)
            return x * y * k, x + 1

        @staticmethod
        def jvp(ctx, gx, gy, gk):
            assert gk is None and len(ctx.saved_tensors) == 2
            # deliberately not the true derivative, so that the test sees this rule is used
            return gx * ctx.y * 3 + gy, gx

        @staticmethod
        def backward(ctx, ga, gb):
            return ga * ctx.y * 2 + gb, None, None

    return Fn


@pytest.mark.parametrize("requires_grad", [False, True])
def test_a_custom_functions_jvp_gives_its_outputs_tangents(requires_grad):
    rng = np.random.default_rng(0)
    x, y, tx = (rng.normal(size=3) for _ in range(3))
    results = []
    for lib, fw in ((ng, fwAD), (torch, torch.autograd.forward_ad)):
        Fn = _two_output_function(lib)
        xt = lib.tensor(x, requires_grad=requires_grad)
        with fw.dual_level():
            a, b = Fn.apply(fw.make_dual(xt, lib.tensor(tx)), lib.tensor(y), 2.0)
            results.append([fw.unpack_dual(a).tangent.tolist(),
                            fw.unpack_dual(b).tangent.tolist(), a.requires_grad])
            # a tangent only on y: x's is zeros
            a, _ = Fn.apply(xt, fw.make_dual(lib.tensor(y), lib.tensor(tx)), 2.0)
            results[-1].append(fw.unpack_dual(a).tangent.tolist())
    assert results[0] == results[1]
    np.testing.assert_allclose(results[0][0], tx * y * 3)


def test_custom_function_jvp_errors_are_pytorchs():
    x = np.array([1.0, 2.0])
    for lib, fw in ((ng, fwAD), (torch, torch.autograd.forward_ad)):
        class NoJvp(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2

        class TwoTangents(NoJvp):
            @staticmethod
            def jvp(ctx, g):
                return g * 2, g

        class WrongShape(NoJvp):
            @staticmethod
            def jvp(ctx, g):
                return g[:1]

        with fw.dual_level():
            d = fw.make_dual(lib.tensor(x), lib.ones(2, dtype=lib.float64))
            with pytest.raises(NotImplementedError, match="You must implement the jvp function "
                               "for custom autograd.Function to use it with forward mode AD."):
                NoJvp.apply(d)
            # (no tangent in: no jvp needed)
            assert fw.unpack_dual(NoJvp.apply(lib.tensor(x))).tangent is None
            with pytest.raises(RuntimeError, match=r"Function's jvp returned an invalid number "
                               r"of forward gradients \(expected 1 but got 2\)"):
                TwoTangents.apply(d)
            with pytest.raises(RuntimeError, match=r"Tensor is of size \[2\] while the given "
                               r"forward gradient is of size \[1\]"):
                WrongShape.apply(d)


def test_an_input_returned_as_is_keeps_its_own_tangent():
    class Ident(ng.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def jvp(ctx, g):
            return g * 5

    with fwAD.dual_level():
        d = fwAD.make_dual(ng.tensor([1.0, 2.0]), ng.tensor([1.0, 1.0]))
        out = Ident.apply(d)
        assert fwAD.unpack_dual(out).tangent.tolist() == [5.0, 5.0]
        assert fwAD.unpack_dual(d).tangent.tolist() == [1.0, 1.0]
