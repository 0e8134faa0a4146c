"""What tutorial programs (tests/programs/) needed and numbagrad lacked, each checked against
PyTorch: torch.accelerator, torch.backends, torch.cuda.manual_seed(_all), torch.normal with
requires_grad, float() of a tensor that requires grad warning once, set_printoptions(profile=),
isnan / isinf / isfinite, torch.is_floating_point."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import numbagrad as ng
from numbagrad import _tensor

torch = pytest.importorskip("torch")


def _error(fn):
    with pytest.raises(Exception) as info:
        fn()
    return type(info.value), str(info.value)


def test_accelerator_is_cuda():
    if ng.cuda.is_available():
        assert ng.accelerator.is_available()
        assert ng.accelerator.current_accelerator() == ng.device("cuda")
        assert ng.accelerator.current_device_index() == 0
        return
    # on a machine without CUDA, as a PyTorch CPU build
    assert ng.accelerator.is_available() is torch.accelerator.is_available() is False
    assert ng.accelerator.current_accelerator() is torch.accelerator.current_accelerator()
    assert ng.accelerator.device_count() == torch.accelerator.device_count() == 0
    for name in ("current_device_index", "synchronize"):
        assert (_error(getattr(ng.accelerator, name))
                == _error(getattr(torch.accelerator, name)))


def test_backends_flags():
    import numbagrad.backends.cudnn as cudnn  # the spelling of CIFAR training scripts

    assert ng.backends.mps.is_available() is torch.backends.mps.is_available() is False
    assert ng.backends.mps.is_built() is False
    assert cudnn.is_available() is False
    for name in ("enabled", "benchmark", "deterministic"):
        assert getattr(cudnn, name) == getattr(torch.backends.cudnn, name)
    cudnn.deterministic = True
    try:
        assert ng.backends.cudnn.deterministic is True
    finally:
        cudnn.deterministic = False


def test_cuda_manual_seed_leaves_the_default_stream():
    ng.manual_seed(3)
    a = ng.rand(4)
    ng.manual_seed(3)
    ng.cuda.manual_seed(7)
    ng.cuda.manual_seed_all(8)
    assert ng.equal(ng.rand(4), a)
    assert _error(lambda: ng.cuda.manual_seed("x")) == _error(lambda: torch.cuda.manual_seed("x"))


def test_normal_requires_grad():
    for lib in (ng, torch):
        w = lib.normal(0, 0.01, size=(2, 1), requires_grad=True)
        assert w.requires_grad and w.is_leaf and w.grad_fn is None
        assert tuple(w.shape) == (2, 1) and str(w.dtype).endswith("float32")
        (w * 2).sum().backward()
        assert w.grad.tolist() == [[2.0], [2.0]]
    assert not ng.normal(0, 1, (3,)).requires_grad


def test_float_of_a_tensor_requiring_grad_warns_once(monkeypatch):
    monkeypatch.setattr(_tensor, "_WARNED_ONCE", set())
    x = ng.ones(3, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert float(x.sum()) == 3.0
        float(x.sum() * 2)  # PyTorch warns once a process
        float(x.detach().sum())
        assert int(x.sum()) == 3 and x.sum().item() == 3.0  # no warning from these
    with warnings.catch_warnings(record=True) as want:
        warnings.simplefilter("always")
        float(torch.ones(3, requires_grad=True).sum())
    assert [w.category for w in caught] == [UserWarning]
    want_text = str(want[0].message) if want else (
        "Converting a tensor with requires_grad=True to a scalar may lead to unexpected "
        "behavior.\nConsider using tensor.detach() first.")  # torch already warned, earlier
    assert want_text.startswith(str(caught[0].message))
    assert caught[0].filename == __file__  # points at the caller's line


@pytest.mark.parametrize("profile", ["short", "full", "default"])
def test_set_printoptions_profile(profile):
    values = np.linspace(-1.123456, 2000, 1200, dtype=np.float32)
    try:
        for lib in (ng, torch):
            lib.set_printoptions(precision=6, edgeitems=5, linewidth=60)
            lib.set_printoptions(profile=profile)
        assert repr(ng.tensor(values)) == repr(torch.tensor(values))
        assert repr(ng.tensor(values[:5])) == repr(torch.tensor(values[:5]))
    finally:
        ng.set_printoptions(profile="default")
        torch.set_printoptions(profile="default")


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
@pytest.mark.parametrize("name", ["isnan", "isinf", "isfinite"])
def test_nan_inf_predicates(name, dtype):
    values = [1.0, float("nan"), float("inf"), -float("inf"), 0.0, -2.5, 3e38]
    if dtype == "int64":
        values = [1, 0, -7, 2**62]
    a, t = ng.tensor(values, dtype=getattr(ng, dtype)), torch.tensor(values,
                                                                     dtype=getattr(torch, dtype))
    got, want = getattr(ng, name)(a), getattr(torch, name)(t)
    assert got.dtype == ng.bool
    assert got.tolist() == want.tolist()
    assert getattr(a.reshape(1, -1).t(), name)().tolist() == getattr(t.reshape(1, -1).t(),
                                                                      name)().tolist()


def test_is_floating_point_function():
    for lib in (ng, torch):
        assert lib.is_floating_point(lib.ones(2)) and not lib.is_floating_point(lib.arange(2))
