"""nn.init: PyTorch's bounds, moments, gains, fans and errors (the draws themselves come from
numbagrad's generator, so values are compared by distribution)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import numbagrad as ng
from numbagrad import nn
from numbagrad.nn import init

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("args", [("linear",), ("conv2d",), ("sigmoid",), ("tanh",), ("relu",),
                                  ("leaky_relu",), ("leaky_relu", 0.2), ("selu",)])
def test_calculate_gain_matches_pytorch(args):
    assert init.calculate_gain(*args) == torch.nn.init.calculate_gain(*args)


@pytest.mark.parametrize("call", [
    lambda lib, t: lib.nn.init.calculate_gain("foo"),
    lambda lib, t: lib.nn.init.calculate_gain("leaky_relu", True),
    lambda lib, t: lib.nn.init.kaiming_uniform_(t(3)),
    lambda lib, t: lib.nn.init.xavier_normal_(t(3)),
    lambda lib, t: lib.nn.init.kaiming_normal_(t(3, 3), mode="foo"),
    lambda lib, t: lib.nn.init.eye_(t(3)),
    lambda lib, t: lib.nn.init.orthogonal_(t(3)),
])
def test_errors_match_pytorch(call):
    with pytest.raises(ValueError) as theirs:
        call(torch, torch.zeros)
    with pytest.raises(ValueError) as ours:
        call(ng, ng.zeros)
    assert str(ours.value) == str(theirs.value)


def test_fans_match_pytorch():
    for shape in [(4, 3), (8, 3, 5, 5), (2, 6, 7)]:
        assert init._calculate_fan_in_and_fan_out(ng.zeros(*shape)) == \
            torch.nn.init._calculate_fan_in_and_fan_out(torch.zeros(*shape))


def _stats(t):
    a = t.detach().numpy().astype(np.float64)
    return a.min(), a.max(), a.mean(), a.std()


def test_uniform_family_bounds_and_moments():
    ng.manual_seed(0)
    t = ng.empty(200, 300)
    bound = math.sqrt(3.0) * math.sqrt(2.0 / (1 + 5)) / math.sqrt(300)  # kaiming, a=sqrt(5)
    for fill, b in [(lambda: init.uniform_(t, -0.3, 0.5), None),
                    (lambda: init.xavier_uniform_(t, gain=2.0), 2.0 * math.sqrt(6.0 / 500)),
                    (lambda: init.kaiming_uniform_(t, a=math.sqrt(5)), bound),
                    (lambda: init.kaiming_uniform_(t, mode="fan_out", nonlinearity="relu"),
                     math.sqrt(2.0) * math.sqrt(3.0 / 200))]:
        assert fill() is t
        lo, hi, mean, std = _stats(t)
        lo_exp, hi_exp = (-0.3, 0.5) if b is None else (-b, b)
        assert lo_exp <= lo and hi < hi_exp
        assert lo - lo_exp < 0.01 * (hi_exp - lo_exp) and hi_exp - hi < 0.01 * (hi_exp - lo_exp)
        assert mean == pytest.approx((lo_exp + hi_exp) / 2, abs=0.01 * (hi_exp - lo_exp))
        assert std == pytest.approx((hi_exp - lo_exp) / math.sqrt(12), rel=0.02)


def test_normal_family_moments():
    ng.manual_seed(1)
    t = ng.empty(300, 200, dtype=ng.float64)
    for fill, mean_exp, std_exp in [
        (lambda: init.normal_(t, 1.5, 0.2), 1.5, 0.2),
        (lambda: init.xavier_normal_(t), 0.0, math.sqrt(2.0 / 500)),
        (lambda: init.kaiming_normal_(t, nonlinearity="relu"), 0.0, math.sqrt(2.0 / 200)),
    ]:
        assert fill() is t
        _, _, mean, std = _stats(t)
        assert mean == pytest.approx(mean_exp, abs=0.01 * std_exp + 1e-12)
        assert std == pytest.approx(std_exp, rel=0.02)


def test_trunc_normal_stays_in_bounds_with_the_truncated_moments():
    ng.manual_seed(2)
    t = init.trunc_normal_(ng.empty(100, 400), mean=0.5, std=1.0, a=-0.5, b=1.0)
    lo, hi, mean, std = _stats(t)
    assert -0.5 <= lo and hi <= 1.0
    # moments of N(0.5, 1) truncated to [-0.5, 1] (alpha = -1, beta = 0.5)
    phi = lambda z: math.exp(-z * z / 2) / math.sqrt(2 * math.pi)  # noqa: E731
    cdf = lambda z: (1 + math.erf(z / math.sqrt(2))) / 2  # noqa: E731
    z = cdf(0.5) - cdf(-1.0)
    m = 0.5 + (phi(-1.0) - phi(0.5)) / z
    v = 1 + (-1.0 * phi(-1.0) - 0.5 * phi(0.5)) / z - ((phi(-1.0) - phi(0.5)) / z) ** 2
    assert mean == pytest.approx(m, abs=0.01)
    assert std == pytest.approx(math.sqrt(v), rel=0.02)


def test_constant_ones_zeros_eye_orthogonal():
    t = ng.empty(3, 5)
    assert init.constant_(t, 0.25).tolist() == [[0.25] * 5] * 3
    assert init.ones_(t).sum().item() == 15 and init.zeros_(t).sum().item() == 0
    assert init.eye_(t).tolist() == np.eye(3, 5).tolist()
    for shape in [(3, 5), (5, 3), (4, 2, 3)]:
        q = init.orthogonal_(ng.empty(*shape), gain=2.0).numpy().reshape(shape[0], -1)
        small = q @ q.T if shape[0] <= q.shape[1] else q.T @ q
        np.testing.assert_allclose(small, 4 * np.eye(len(small)), atol=1e-5)


def test_inits_run_under_no_grad_on_parameters_and_bump_the_version():
    p = nn.Parameter(ng.zeros(4, 3))
    for fill in (init.uniform_, init.normal_, init.xavier_uniform_, init.kaiming_normal_,
                 init.zeros_, init.orthogonal_, init.trunc_normal_):
        v = p._version
        assert fill(p) is p and p.grad_fn is None and p.requires_grad and p._version > v
    with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
        init.kaiming_uniform_(ng.empty(0, 3))


def test_random_fill_methods_and_their_errors_match_pytorch():
    x = ng.zeros(1000, dtype=ng.float64)
    assert x.uniform_(to=3.0) is x and 0 <= x.min().item() and x.max().item() < 3
    x.normal_(mean=-1.0, std=0.5)
    assert x.mean().item() == pytest.approx(-1.0, abs=0.06)
    for call in (lambda lib: lib.zeros(3).uniform_(2, 1), lambda lib: lib.zeros(3).normal_(0, -1),
                 lambda lib: lib.ones(3, requires_grad=True).uniform_()):
        with pytest.raises(RuntimeError) as theirs:
            call(torch)
        with pytest.raises(RuntimeError) as ours:
            call(ng)
        assert str(ours.value) == str(theirs.value)
    with pytest.raises(NotImplementedError, match="\"normal_kernel_cpu\" not implemented for "
                       "'Long'"):
        ng.zeros(3, dtype=ng.int64).normal_()


def test_linear_and_embedding_default_inits():
    ng.manual_seed(3)
    m = nn.Linear(400, 300)
    bound = 1 / math.sqrt(400)  # kaiming_uniform_(a=sqrt(5)) gives the same bound as the bias
    for p in (m.weight, m.bias):
        lo, hi, _, std = _stats(p)
        assert -bound <= lo and hi < bound and hi - lo > 1.9 * bound
    assert _stats(m.weight)[3] == pytest.approx(2 * bound / math.sqrt(12), rel=0.02)
    e = nn.Embedding(300, 200, padding_idx=0)
    _, _, mean, std = _stats(e.weight[1:])
    assert abs(mean) < 0.01 and std == pytest.approx(1.0, rel=0.02)
    assert e.weight[0].abs().sum().item() == 0
