"""Top-level names PyTorch scripts reach for: dtype limits, aliases and small helpers, against
PyTorch."""

import numpy as np
import pytest

import numbagrad as ng

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("name", ["float32", "float64"])
def test_finfo_matches_pytorch(name):
    got, want = ng.finfo(getattr(ng, name)), torch.finfo(getattr(torch, name))
    for attr in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
        assert getattr(got, attr) == getattr(want, attr), attr
    assert repr(got) == repr(want)
    assert ng.finfo().dtype == torch.finfo().dtype == "float32"


@pytest.mark.parametrize("name", ["uint8", "int8", "int16", "int32", "int64"])
def test_iinfo_matches_pytorch(name):
    got, want = ng.iinfo(getattr(ng, name)), torch.iinfo(getattr(torch, name))
    assert (got.bits, got.max, got.min, got.dtype) == (want.bits, want.max, want.min, want.dtype)
    assert repr(got) == repr(want)


def test_finfo_and_iinfo_refuse_the_other_kind():
    for lib in (ng, torch):
        with pytest.raises(TypeError, match=r"torch.finfo\(\) requires a floating point input "
                                            r"type. Use torch.iinfo to handle 'torch.finfo'"):
            lib.finfo(lib.int32)
        with pytest.raises(TypeError, match=r"torch.iinfo\(\) requires an integer input type. "
                                            r"Use torch.finfo to handle 'torch.iinfo'"):
            lib.iinfo(lib.float32)


@pytest.mark.parametrize("args,kw", [
    (([1, 2, 3], [2, 5]), {}), (([1.0, 2.0], 2.0), {}), ((2, [2, 3]), {}),
    (([[1, 2], [3, 4]], [4, 1]), {"invert": True}), (([], [1]), {}),
])
def test_isin_matches_pytorch(device, args, kw):
    def make(lib, a, dev):
        return lib.tensor(a, device=dev) if isinstance(a, list) else a
    got = ng.isin(*[make(ng, a, device) for a in args], **kw)
    want = torch.isin(*[make(torch, a, "cpu") for a in args], **kw)
    assert got.dtype == ng.bool and got.device.type == device
    assert got.tolist() == want.tolist() and tuple(got.shape) == tuple(want.shape)


def test_aliases_and_helpers():
    parts = [np.ones((1, 2), np.float32), np.zeros((2, 2), np.float32)]
    for name in ("concat", "concatenate"):
        got = getattr(ng, name)([ng.tensor(p) for p in parts])
        assert got.tolist() == getattr(torch, name)([torch.tensor(p) for p in parts]).tolist()
    x = ng.ones(3, 2, requires_grad=True)
    assert ng.vmap(lambda r: r * 2)(x).tolist() == [[2.0, 2.0]] * 3
    d = ng.detach(x)
    assert not d.requires_grad and d.tolist() == x.tolist()
    assert ng.is_complex(x) is torch.is_complex(torch.ones(1)) is False
    assert ng.get_device(x) == torch.get_device(torch.ones(1)) == -1
    assert ng.typename(x) == "numbagrad.FloatTensor" and ng.typename(3) == torch.typename(3)
    assert ng.typename(ng.nn.Linear(1, 1)) == "numbagrad.nn.modules.linear.Linear"
    assert ng.is_inference_mode_enabled() is torch.is_inference_mode_enabled() is False
    with ng.inference_mode():
        assert ng.is_inference_mode_enabled() is True


def test_randint_like():
    ng.manual_seed(0)
    r = ng.randint_like(ng.ones(20, 30), 5)
    assert r.dtype == ng.float32 and tuple(r.shape) == (20, 30)
    assert 0 <= float(r.min()) and float(r.max()) < 5 and (r == r.round()).all()
    r = ng.randint_like(ng.ones(20, 30, dtype=ng.int64), 2, 5)
    assert r.dtype == ng.int64 and int(r.min()) >= 2 and int(r.max()) < 5
    assert ng.randint_like(ng.ones(4), 3, dtype=ng.int32).dtype == ng.int32


def test_backward_with_create_graph_warns_once_as_pytorch():
    # (autograd.grad does not warn; backward does, once a process: here once a test)
    message = ("Using backward() with create_graph=True will create a reference cycle between the "
               "parameter and its gradient which can cause a memory leak. We recommend using "
               "autograd.grad when creating the graph to avoid this. If you have to use this "
               "function, make sure to reset the .grad fields of your parameters to None after "
               "use to break the cycle and avoid the leak.")
    x = ng.ones(2, requires_grad=True)
    ng.autograd.grad((x * x).sum(), x, create_graph=True)
    with pytest.warns(UserWarning) as record:
        (x * x).sum().backward(create_graph=True)
        (x * x).sum().backward(create_graph=True)
    assert [str(w.message) for w in record] == [message]
