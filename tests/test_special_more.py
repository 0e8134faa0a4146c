"""The torch.special functions added with elementwise.py's "torch.special: more functions"
section (and igamma/igammac), against torch: values on grids with the edge values (0, -0,
negatives, tiny, huge, inf, NaN), dtypes, nodes, gradients and PyTorch's errors. Where
PyTorch's own values are less accurate than numbagrad's (Bessel J and Y between 3 and 25, Airy
Ai below 0, the incomplete gamma functions at tiny a, _standard_gamma_grad), the comparison
with torch takes PyTorch's error as its tolerance, and mpmath (a dependency of torch's sympy)
checks numbagrad's values to 1e-13."""

from __future__ import annotations

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import numbagrad as ng  # noqa: E402

INF, NAN = math.inf, math.nan
EDGES = [0.0, -0.0, 1e-300, 1e-10, 0.5, -0.5, 1.0, -1.0, 2.0, -2.0, 2.9, 3.1, 5.0, -5.0, 7.3,
         -7.3, 19.9, 20.1, 24.9, 25.1, 30.0, -30.0, 100.0, 709.0, 800.0, -800.0, 1e300,
         -1e300, INF, -INF, NAN]


def _close(got, want, rtol, atol=0.0):
    """Equal NaNs and infinities, finite values close."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    assert got.shape == want.shape
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.isposinf(got), np.isposinf(want))
    np.testing.assert_array_equal(np.isneginf(got), np.isneginf(want))
    ok = np.isfinite(want)
    np.testing.assert_allclose(got[ok], want[ok], rtol=rtol, atol=atol)


def _both(values, dtype="float64"):
    return (ng.tensor(values, dtype=getattr(ng, dtype)),
            torch.tensor(values, dtype=getattr(torch, dtype)))


# ---------------------------------------------------------------- one-argument functions

# name: (rtol, atol) of the float64 comparison with torch over EDGES
UNARY = {
    "i0": (1e-13, 0.0),  # (numbagrad.special.i0 is numbagrad.i0, now modified_bessel's)
    "erfcx": (1e-13, 0.0),
    "log_ndtr": (1e-13, 0.0),
    "i0e": (1e-13, 0.0),
    "i1": (1e-13, 0.0),
    "i1e": (1e-13, 0.0),
    "modified_bessel_i0": (1e-13, 0.0),
    "modified_bessel_i1": (1e-13, 0.0),
    "modified_bessel_k0": (1e-13, 0.0),
    "modified_bessel_k1": (1e-13, 0.0),
    "scaled_modified_bessel_k0": (1e-13, 0.0),
    "scaled_modified_bessel_k1": (1e-13, 0.0),
    "spherical_bessel_j0": (1e-13, 0.0),
    # (PyTorch's J and Y are off by up to 1e-6 of their amplitude between 3 and 25, and by
    # 1e-11 below 3; beyond 25 both compute the same expansion)
    "bessel_j0": (1e-10, 3e-6),
    "bessel_j1": (1e-10, 3e-6),
    "bessel_y0": (1e-10, 3e-6),
    "bessel_y1": (1e-10, 3e-6),
    # (PyTorch's Ai is off by up to 6e-6 between -3 and -2)
    "airy_ai": (1e-10, 1e-5),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_float64_values_match_pytorch_on_the_edges(name):
    rtol, atol = UNARY[name]
    x, tx = _both(EDGES)
    _close(getattr(ng.special, name)(x).numpy(), getattr(torch.special, name)(tx).numpy(),
           rtol, atol)


def test_float64_values_match_pytorch_where_it_is_accurate():
    """Beyond 25 PyTorch's Bessel J and Y (Hankel's expansion) are as accurate as ours."""
    v = np.linspace(25.5, 400, 97)
    x, tx = _both(v)
    for name in ("bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1"):
        _close(getattr(ng.special, name)(x).numpy(), getattr(torch.special, name)(tx).numpy(),
               1e-11, 1e-15)
    v = np.concatenate([np.linspace(0.0, 103.0, 103), np.linspace(-60, -10.5, 50)])
    x, tx = _both(v)
    _close(ng.special.airy_ai(x).numpy(), torch.special.airy_ai(tx).numpy(), 1e-10, 1e-15)


def test_ndtri_matches_pytorch_down_to_subnormal_probabilities():
    p = np.concatenate([np.linspace(0, 1, 401), 10.0 ** -np.arange(1, 324, 7),
                        [5e-324, 1e-310, 0.25, 0.75, 0.5 + 1e-12, 1 - 1e-16, -0.1, 1.1, NAN]])
    x, tx = _both(p)
    _close(ng.special.ndtri(x).numpy(), torch.special.ndtri(tx).numpy(), 1e-14, 1e-300)


def test_log_ndtr_and_erfcx_far_out():
    v = [-1e300, -1e10, -40.0, -38.0, -26.6, -26.7, -1.0001, -0.9999, 8.0, 26.0, 27.0, 1e10,
         1e155, 1e200]
    x, tx = _both(v)
    _close(ng.special.log_ndtr(x).numpy(), torch.special.log_ndtr(tx).numpy(), 1e-13)
    _close(ng.special.erfcx(x).numpy(), torch.special.erfcx(tx).numpy(), 1e-13)


FLOAT32 = ["erfcx", "log_ndtr", "ndtri", "i0e", "i1e", "bessel_j0", "bessel_y1",
           "modified_bessel_i1", "modified_bessel_k0", "scaled_modified_bessel_k1",
           "spherical_bessel_j0", "airy_ai"]


@pytest.mark.parametrize("name", FLOAT32)
def test_float32_values_match_pytorch(name):
    v = [0.0, 1e-3, 0.3, -0.3, 0.9, -1.5, 2.5, 4.0, -6.0, 12.0, 30.0, -30.0, 90.0, INF, -INF,
         NAN]
    if name == "ndtri":
        v = [0.0, 1e-30, 1e-5, 0.1, 0.3, 0.5, 0.7, 0.999, 1.0, 1.5, NAN]
    x, tx = _both(v, "float32")
    got, want = getattr(ng.special, name)(x), getattr(torch.special, name)(tx)
    assert got.dtype is ng.float32
    _close(got.numpy(), want.numpy(), 2e-5, 1e-6 if name != "airy_ai" else 2e-5)


def test_integers_and_bools_compute_in_the_default_float():
    for name in ("bessel_j0", "airy_ai", "i1e", "ndtri", "modified_bessel_k0"):
        for values in ([0, 1, 2], [True, False]):
            got = getattr(ng.special, name)(ng.tensor(values))
            want = getattr(torch.special, name)(torch.tensor(values))
            assert got.dtype is ng.float32
            _close(got.numpy(), want.numpy(), 2e-6)


@pytest.mark.parametrize("name", ["bessel_j0", "bessel_y1", "modified_bessel_i0",
                                  "scaled_modified_bessel_k1", "spherical_bessel_j0",
                                  "airy_ai"])
def test_the_functions_pytorch_does_not_differentiate_give_no_graph(lib, name):
    x = lib.tensor([0.5, 1.5], dtype=lib.float64, requires_grad=True)
    y = getattr(lib.special, name)(x)
    assert not y.requires_grad and y.grad_fn is None


@pytest.mark.parametrize("name, arg", [("ndtri", "input"), ("bessel_j0", "input"),
                                       ("airy_ai", "x"), ("spherical_bessel_j0", "x"),
                                       ("scaled_modified_bessel_k0", "x")])
def test_a_number_is_refused_with_pytorchs_message(lib, name, arg):
    with pytest.raises(TypeError, match=rf"^special_{name}\(\): argument '{arg}' \(position 1\) "
                                        r"must be Tensor, not float$"):
        getattr(lib.special, name)(0.5)
    assert getattr(lib.special, name)(**{arg: lib.tensor([0.5])}).shape == (1,)


def test_out_is_written():
    for lib in (ng, torch):
        out = lib.empty(2, dtype=lib.float64)
        r = lib.special.ndtri(lib.tensor([0.5, 0.975], dtype=lib.float64), out=out)
        assert r is out
        np.testing.assert_allclose(out.numpy(), [0.0, 1.959963984540054], rtol=1e-14)


# ---------------------------------------------------------------- gradients

GRAD = ["erfcx", "log_ndtr", "ndtri", "i0e", "i1e"]


@pytest.mark.parametrize("name", GRAD)
def test_gradients_match_pytorch(name):
    v = [0.0, 0.3, -0.7, 1.5, -2.5, 4.0, 12.0, -12.0, 30.0]
    if name == "ndtri":
        v = [0.5, 1e-8, 0.02, 0.3, 0.8, 0.999]
    out = {}
    for lib in (ng, torch):
        x = lib.tensor(v, dtype=lib.float64, requires_grad=True)
        y = getattr(lib.special, name)(x)
        w = lib.arange(len(v), dtype=lib.float64) + 1
        g, = lib.autograd.grad((y * w).sum(), x, create_graph=True)
        gg, = lib.autograd.grad((g * g).sum(), x)
        out[lib.__name__] = type(y.grad_fn).__name__, g.detach().numpy(), gg.numpy()
    (n1, g1, gg1), (n2, g2, gg2) = out["numbagrad"], out["torch"]
    assert n1 == n2
    _close(g1, g2, 1e-12, 1e-300)
    # (erfcx's second derivative cancels to 1e-4 of its terms at x = 30)
    _close(gg1, gg2, 1e-8, 1e-300)


def test_i1e_gradient_at_zero_is_one_half(lib):
    x = lib.tensor([0.0, -0.0], dtype=lib.float64, requires_grad=True)
    lib.special.i1e(x).sum().backward()
    assert x.grad.tolist() == [0.5, 0.5]


def test_float32_gradients_match_pytorch():
    for name in GRAD:
        v = [0.2, 0.6, 0.9] if name == "ndtri" else [0.3, -0.7, 1.5, 6.0]
        grads = []
        for lib in (ng, torch):
            x = lib.tensor(v, requires_grad=True)
            getattr(lib.special, name)(x).sum().backward()
            grads.append(x.grad.numpy())
        # (i1e's derivative cancels to 1/150 of its terms at 1.5)
        np.testing.assert_allclose(grads[0], grads[1], rtol=1e-5, atol=1e-7)


# ---------------------------------------------------------------- orthogonal polynomials

POLYNOMIALS = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
               "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
               "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
               "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
               "laguerre_polynomial_l", "legendre_polynomial_p"]
# (where PyTorch's recurrences stop at a NaN x before their first step, they return an
# uninitialized value: NaN x is left out for those)
NAN_X_UNDEFINED = {"chebyshev_polynomial_u", "chebyshev_polynomial_w", "laguerre_polynomial_l",
                   "legendre_polynomial_p", "shifted_chebyshev_polynomial_u",
                   "shifted_chebyshev_polynomial_w"}


@pytest.mark.parametrize("name", POLYNOMIALS)
def test_polynomials_match_pytorch(name):
    xs = [-1.5, -1.0, -0.95, -0.5, -1e-3, 0.0, 0.25, 0.5, 0.75, 0.999, 1.0, 1.3, 3.0, INF, -INF]
    if name not in NAN_X_UNDEFINED:
        xs.append(NAN)
    ns = [-3.0, -1.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 13.0, 2.5, 7.9,
          NAN, INF, 1e30]
    x, n = [a.ravel() for a in np.meshgrid(xs, ns)]
    got = getattr(ng.special, name)(ng.tensor(x), ng.tensor(n)).numpy()
    want = getattr(torch.special, name)(torch.tensor(x), torch.tensor(n)).numpy()
    # (relative to the value, or to 1 near the polynomials' zeros)
    finite = np.isfinite(want)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(got[~finite & ~np.isnan(want)], want[~finite & ~np.isnan(want)])
    np.testing.assert_allclose(got[finite], want[finite], rtol=1e-12, atol=1e-12)


def test_polynomial_dtypes_and_number_operands_follow_pytorch():
    cases = [
        lambda L: L.special.chebyshev_polynomial_t(L.tensor([1, 2]), 3),
        lambda L: L.special.hermite_polynomial_h(L.tensor([1, 2]), L.tensor([3, 2])),
        lambda L: L.special.legendre_polynomial_p(L.tensor([0.5, 0.25]),
                                                  L.tensor([3.0, 2.0], dtype=L.float64)),
        lambda L: L.special.laguerre_polynomial_l(0.5, L.tensor([3, 2])),
        lambda L: L.special.chebyshev_polynomial_u(L.tensor([True]), 2),
        lambda L: L.special.hermite_polynomial_he(L.tensor([0.5]), 2.5),
        lambda L: L.special.shifted_chebyshev_polynomial_w(x=L.tensor([0.5]), n=4),
    ]
    for case in cases:
        got, want = case(ng), case(torch)
        assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    x = ng.tensor([0.5], requires_grad=True)
    assert not ng.special.chebyshev_polynomial_t(x, 3).requires_grad


def test_polynomials_refuse_two_numbers(lib):
    message = ("special_chebyshev_polynomial_t() received an invalid combination of arguments "
               "- got (float, int), but expected one of:\n"
               " * (Tensor x, Tensor n, *, Tensor out = None)\n"
               " * (Number x, Tensor n, *, Tensor out = None)\n"
               " * (Tensor x, Number n, *, Tensor out = None)\n")
    with pytest.raises(TypeError) as e:
        lib.special.chebyshev_polynomial_t(0.5, 2)
    assert str(e.value) == message


# ---------------------------------------------------------------- Hurwitz zeta

ZX = [1.0, 0.5, 2.0, 3.0, 1.0001, 2.5, 4.0, 7.3, 10.0, 50.0, INF, NAN, -1.0]
ZQ = [1.0, 0.5, 2.0, 1e-3, 1e-10, 0.1, 3.7, 25.0, 1e5, 1e8, 1e10, 0.0, -0.0, -1.0, -1.5, -2.5,
      INF, -INF, NAN]


def test_zeta_matches_pytorch():
    x, q = [a.ravel() for a in np.meshgrid(ZX, ZQ)]
    got = ng.special.zeta(ng.tensor(x), ng.tensor(q)).numpy()
    want = torch.special.zeta(torch.tensor(x), torch.tensor(q)).numpy()
    _close(got, want, 1e-13)


def test_zeta_dtypes_and_number_operands(lib):
    assert lib.special.zeta(lib.tensor([2, 3]), lib.tensor([1, 2])).dtype == lib.float32
    assert lib.special.zeta(lib.tensor([True]), lib.tensor([True])).tolist() == [INF]
    assert lib.special.zeta(lib.tensor([2.0]), lib.tensor([1.0], dtype=lib.float64)).dtype \
        == lib.float64
    np.testing.assert_allclose(lib.special.zeta(2.0, lib.tensor([1.0, 2.0])).numpy(),
                               [1.644934, 0.644934], rtol=1e-6)
    np.testing.assert_allclose(lib.special.zeta(lib.tensor([2.0, 3.0]), 1.0).numpy(),
                               [1.644934, 1.2020569], rtol=1e-6)
    with pytest.raises(TypeError) as e:
        lib.special.zeta(2.0, 1.0)
    assert str(e.value) == (
        "special_zeta() received an invalid combination of arguments - got (float, float), "
        "but expected one of:\n * (Tensor input, Tensor other, *, Tensor out = None)\n"
        " * (Number self, Tensor other, *, Tensor out = None)\n"
        " * (Tensor input, Number other, *, Tensor out = None)\n")


def test_zeta_is_differentiable_in_q_only(lib):
    x = lib.tensor([2.0, 3.0], dtype=lib.float64, requires_grad=True)
    for y, node in ((lib.special.zeta(x, 1.5), "SpecialZetaBackward2"),
                    (lib.special.zeta(x, lib.tensor([1.0, 2.0], dtype=lib.float64)),
                     "SpecialZetaBackward0")):
        assert type(y.grad_fn).__name__ == node
        with pytest.raises(NotImplementedError,
                           match=r"^the derivative for 'zeta' is not implemented\.$"):
            y.sum().backward()
    q = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
    y = lib.special.zeta(2.0, q)
    assert type(y.grad_fn).__name__ == "SpecialZetaBackward1"
    g, = lib.autograd.grad(y.sum(), q)
    # (d zeta(x, q) / dq = -x zeta(x + 1, q): zeta(3) and zeta(3) - 1)
    np.testing.assert_allclose(g.numpy(), [-2 * 1.2020569031595942, -2 * 0.2020569031595942],
                               rtol=1e-13)


def test_zeta_gradients_match_pytorch():
    out = []
    for lib in (ng, torch):
        q = lib.tensor([[0.2, 1.0, 4.5, -1.5]], dtype=lib.float64, requires_grad=True)
        x = lib.tensor([[2.0], [3.0], [4.0]], dtype=lib.float64)
        # (broadcast: the gradient summed over x's rows; and a second derivative)
        g, = lib.autograd.grad(lib.special.zeta(x, q).sum(), q, create_graph=True)
        gg, = lib.autograd.grad((g * g).sum(), q)
        out.append((g.detach().numpy(), gg.numpy()))
    for mine, theirs in zip(*out):
        np.testing.assert_allclose(mine, theirs, rtol=1e-13)


# ---------------------------------------------------------------- incomplete gamma

GA = [0.0, 1e-10, 1e-3, 0.1, 0.5, 1.0, 1.5, 3.7, 19.0, 21.0, 100.0, 1e4, INF, NAN, -1.0]
GX = [0.0, 1e-10, 1e-3, 0.3, 0.6, 1.0, 1.1, 2.0, 20.0, 90.0, 1e4, 1.01e4, INF, NAN, -1.0]


@pytest.mark.parametrize("upper", [False, True])
def test_incomplete_gamma_matches_pytorch(upper):
    a, x = [v.ravel() for v in np.meshgrid(GA, GX)]
    name = "gammaincc" if upper else "gammainc"
    got = getattr(ng.special, name)(ng.tensor(a), ng.tensor(x)).numpy()
    want = getattr(torch.special, name)(torch.tensor(a), torch.tensor(x)).numpy()
    # (PyTorch's Q at a = 1e-10 is off by up to 3e-7 (mpmath agrees with ours, below), its
    # asymptotic series for a > 20 by up to 1e-9; elsewhere on this grid the two agree to 1e-12)
    tiny, large = a == 1e-10, a > 20
    rest = ~tiny & ~large
    _close(got[rest], want[rest], 1e-11, 1e-300)
    _close(got[large], want[large], 1e-8, 1e-300)
    _close(got[tiny], want[tiny], 1e-6, 1e-300)


def test_incomplete_gamma_names_and_dtypes(lib):
    a = lib.tensor([0.5, 2.0, 7.5], dtype=lib.float64)
    x = lib.tensor([0.3, 2.5, 6.0], dtype=lib.float64)
    p, q = lib.igamma(a, x), lib.igammac(a, x)
    for other in (lib.special.gammainc(a, x), a.igamma(x), a.clone().igamma_(x)):
        assert other.tolist() == p.tolist()
    for other in (lib.special.gammaincc(a, x), a.igammac(x), a.clone().igammac_(x)):
        assert other.tolist() == q.tolist()
    np.testing.assert_allclose((p + q).numpy(), 1, rtol=1e-15)
    # (an integer operand promotes; two do not, PyTorch has no integer kernel)
    assert lib.igammac(a.long(), a.float()).dtype == lib.float32
    with pytest.raises(NotImplementedError, match='^"igamma_cpu" not implemented for \'Long\''):
        lib.igamma(lib.tensor([1, 2]), lib.tensor([1, 2]))
    with pytest.raises(NotImplementedError, match='^"igammac_cpu" not implemented for \'Bool\''):
        lib.special.gammaincc(lib.tensor([True]), lib.tensor([True]))
    # in place: the result is cast to the written tensor's dtype
    y = lib.tensor([1.0]).igamma_(lib.tensor([1.0], dtype=lib.float64))
    assert y.dtype == lib.float32 and y.tolist() == [pytest.approx(0.6321205588285577, 1e-7)]
    with pytest.raises(RuntimeError, match=r"output with shape \[1\] doesn't match the "
                                           r"broadcast shape \[2\]"):
        lib.tensor([1.0]).igamma_(lib.tensor([1.0, 2.0]))


@pytest.mark.parametrize("call, message", [
    (lambda L: L.igamma(L.tensor([1.0]), 2.0),
     "igamma(): argument 'other' (position 2) must be Tensor, not float"),
    (lambda L: L.igammac(2.0, L.tensor([1.0])),
     "igammac(): argument 'input' (position 1) must be Tensor, not float"),
    (lambda L: L.tensor([1.0]).igamma(2.0),
     "igamma(): argument 'other' (position 1) must be Tensor, not float"),
    (lambda L: L.special.gammainc(L.tensor([1.0]), 2.0),
     "special_gammainc(): argument 'other' (position 2) must be Tensor, not float"),
    (lambda L: L.special.gammaincc(L.tensor([1.0]), 2),
     "special_gammaincc(): argument 'other' (position 2) must be Tensor, not int"),
])
def test_incomplete_gamma_refuses_numbers(lib, call, message):
    with pytest.raises(TypeError) as e:
        call(lib)
    assert str(e.value) == message


def test_incomplete_gamma_is_differentiable_in_x_only(lib):
    for f, name in ((lib.igamma, "igamma"), (lib.special.gammaincc, "igammac")):
        a = lib.tensor([1.5, 2.0], requires_grad=True)
        y = f(a, lib.tensor([0.5, 3.0], requires_grad=True))
        assert type(y.grad_fn).__name__ == name.capitalize() + "Backward0"
        with pytest.raises(NotImplementedError, match=rf"^the derivative for '{name}: input' is "
                                                      r"not implemented\.$"):
            y.sum().backward()


def test_incomplete_gamma_gradients_match_pytorch():
    out = []
    for lib in (ng, torch):
        a = lib.tensor([[0.5], [2.0], [30.0]], dtype=lib.float64, requires_grad=True)
        x = lib.tensor([0.2, 1.7, 33.0], dtype=lib.float64, requires_grad=True)
        # (a requires grad, but only x's gradient is asked for: no error, as in PyTorch)
        g, = lib.autograd.grad((lib.igamma(a, x) * 2 + lib.igammac(a, x)).sum(), x)
        # (the gradient in x, differentiated in a: through lgamma, as PyTorch's formula is)
        gx, = lib.autograd.grad(lib.igammac(a, x).sum(), x, create_graph=True)
        ga, = lib.autograd.grad((gx * x).sum(), a)
        out.append((g.numpy(), gx.detach().numpy(), ga.numpy()))
    for mine, theirs in zip(*out):
        np.testing.assert_allclose(mine, theirs, rtol=1e-11, atol=1e-300)


def test_no_forward_mode():
    """PyTorch has no forward-mode formula for igamma, igammac and zeta: its error."""
    fw = ng.autograd.forward_ad
    for call, name in ((lambda d: ng.igamma(ng.tensor([1.5]), d), "igamma"),
                       (lambda d: ng.special.gammaincc(d, ng.tensor([1.5])), "igammac"),
                       (lambda d: ng.special.zeta(2.0, d), "special_zeta")):
        with fw.dual_level():
            d = fw.make_dual(ng.tensor([0.5]), ng.tensor([1.0]))
            with pytest.raises(NotImplementedError) as e:
                call(d)
        assert str(e.value).startswith(
            f"Trying to use forward AD with {name} that does not support it because it has not "
            "been implemented yet.\nPlease file an issue to PyTorch at")


# ---------------------------------------------------------------- accuracy (mpmath)


def test_accuracy_against_mpmath():
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 40

    def check(name, fn, points, ref, rtol=1e-13):
        got = fn(*[ng.tensor(np.asarray(p, np.float64)) for p in zip(*points)]).numpy()
        want = np.array([float(ref(*[mpmath.mpf(v) for v in p])) for p in points])
        np.testing.assert_allclose(got, want, rtol=rtol, atol=0, err_msg=name)

    one = [(v,) for v in (0.7, 3.3, 4.9, 5.1, 8.4, 12.0, 18.2, 24.6)]
    check("j0", ng.special.bessel_j0, one, lambda x: mpmath.besselj(0, x))
    check("j1", ng.special.bessel_j1, one, lambda x: mpmath.besselj(1, x))
    check("y0", ng.special.bessel_y0, one, lambda x: mpmath.bessely(0, x))
    check("y1", ng.special.bessel_y1, one, lambda x: mpmath.bessely(1, x))
    check("k1", ng.special.modified_bessel_k1, one, lambda x: mpmath.besselk(1, x))
    check("ai", ng.special.airy_ai, [(v,) for v in (-9.7, -6.2, -2.5, -2.1, -0.4, 0.8, 1.6, 7.5,
                                                    30.0)], mpmath.airyai, 1e-12)
    check("zeta", ng.special.zeta, [(2.0, 0.3), (1.5, 7.0), (3.0, -2.5), (7.3, 0.1)],
          mpmath.zeta)
    pairs = [(1e-10, 1.1), (1e-10, 1e-10), (21.0, 16.8), (21.0, 2.1e-9), (0.5, 0.3),
             (250.0, 255.0), (1e4, 1.01e4)]
    check("igammac", ng.special.gammaincc, pairs,
          lambda a, x: mpmath.gammainc(a, x, mpmath.inf, regularized=True))
    with mpmath.workdps(300):  # (P = 1 - Q down to 1e-202)
        check("igamma", ng.special.gammainc, pairs,
              lambda a, x: 1 - mpmath.gammainc(a, x, mpmath.inf, regularized=True))
