"""Devices, CUDA tensors and interop: PyTorch's API, words and printing.

Tests marked ``cuda`` run in the CUDA simulator (``make test``'s second pass) or on a GPU.
"""

from __future__ import annotations

import pickle
import subprocess
import sys
import threading

import numpy as np
import pytest

import numbagrad as ng

from devices import on_cuda


# ---------------------------------------------------------------- CPU side (always runs)


def test_device_objects():
    assert repr(ng.device("cuda")) == "device(type='cuda')"
    assert repr(ng.device("cuda:0")) == "device(type='cuda', index=0)"
    assert str(ng.device("cuda", 0)) == "cuda:0"
    assert ng.device("cpu") == "cpu" and ng.device("cuda:0") != ng.device("cpu")
    assert ng.ones(1).device == ng.device("cpu") and not ng.ones(1).is_cuda
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda device type at start of "
                                           "device string: gpu"):
        ng.device("gpu")


def test_import_does_not_load_cuda():
    code = "import sys, numbagrad; print('numba.cuda' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.skipif(ng.cuda.is_available(), reason="this machine has CUDA")
def test_without_cuda_the_device_is_refused():
    assert ng.cuda.device_count() == 0
    with pytest.raises(RuntimeError, match="Found no NVIDIA driver on your system"):
        ng.zeros(2, device="cuda")
    with pytest.raises(RuntimeError, match="Found no NVIDIA driver on your system"):
        ng.ones(2).cuda()


def test_dlpack_is_zero_copy_with_numpy():
    t = ng.arange(6.0).reshape(2, 3)
    a = np.from_dlpack(t)
    assert np.shares_memory(a, t.numpy())
    a[0, 0] = 42.0
    assert t[0, 0].item() == 42.0
    b = np.arange(4, dtype=np.float32)
    u = ng.from_dlpack(b)
    u.add_(1)
    assert b.tolist() == [1.0, 2.0, 3.0, 4.0] and u.dtype is ng.float32
    with pytest.raises(RuntimeError, match="Can't export tensors that require gradient"):
        ng.ones(2, requires_grad=True).__dlpack__()


def test_dlpack_with_torch():
    torch = pytest.importorskip("torch")
    tt = torch.arange(4.0)
    t = ng.from_dlpack(tt)
    t.mul_(2)
    assert tt.tolist() == [0.0, 2.0, 4.0, 6.0]
    back = torch.from_dlpack(ng.arange(3.0))
    assert back.tolist() == [0.0, 1.0, 2.0]


def test_cpu_tensor_has_no_cuda_array_interface():
    with pytest.raises(AttributeError, match="Can't get __cuda_array_interface__ on non-CUDA"):
        ng.ones(2).__cuda_array_interface__


# ---------------------------------------------------------------- CUDA tensors


@on_cuda
def test_factories_and_attributes():
    for t in (ng.zeros(2, 3, device="cuda"), ng.ones(2, device="cuda:0"),
              ng.full((2,), 1.5, device=ng.device("cuda")), ng.arange(4, device="cuda"),
              ng.eye(2, device="cuda"), ng.rand(3, device="cuda"), ng.randn(3, device="cuda"),
              ng.tensor([1, 2], device="cuda"), ng.empty(2, device="cuda"),
              ng.linspace(0, 1, 3, device="cuda"), ng.randint(0, 3, (2,), device="cuda"),
              ng.randperm(3, device="cuda")):
        assert t.device == ng.device("cuda:0") and t.is_cuda
    z = ng.zeros_like(ng.ones(2, device="cuda"))
    assert z.is_cuda and z.tolist() == [0.0, 0.0]
    x = ng.ones(2, device="cuda")
    assert x.new_zeros(3).is_cuda and x.new_tensor([1.0]).is_cuda
    assert ng.arange(5, device="cuda").tolist() == [0, 1, 2, 3, 4]
    assert ng.tensor(2.5, device="cuda").item() == 2.5 and float(ng.tensor([3.0], device="cuda")) == 3.0
    assert bool(ng.tensor([1], device="cuda"))
    assert ng.cuda.device_count() == 1 and ng.cuda.current_device() == 0
    assert isinstance(ng.cuda.get_device_name(), str)
    ng.cuda.synchronize()
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        ng.zeros(1, device="cuda:1")


@on_cuda
def test_printing_matches_pytorch():
    assert repr(ng.tensor([1.0, 2.0], device="cuda")) == "tensor([1., 2.], device='cuda:0')"
    assert repr(ng.tensor([1, 2], dtype=ng.int32, device="cuda")) == (
        "tensor([1, 2], device='cuda:0', dtype=numbagrad.int32)"
    )
    assert repr(ng.ones(2, device="cuda", requires_grad=True)) == (
        "tensor([1., 1.], device='cuda:0', requires_grad=True)"
    )
    assert repr(ng.ones(2, device="cuda", requires_grad=True) * 2) == (
        "tensor([2., 2.], device='cuda:0', grad_fn=<MulBackward0>)"
    )
    assert repr(ng.zeros(0, device="cuda")) == "tensor([], device='cuda:0')"


@on_cuda
def test_to_cuda_cpu_and_gradients_cross_devices():
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    g = x.cuda()
    assert g.is_cuda and g.grad_fn.name() == "ToCopyBackward0"
    assert x.to("cuda", ng.float64).dtype is ng.float64
    other = ng.zeros(1, dtype=ng.float64, device="cuda")
    y = x.to(other)
    assert y.is_cuda and y.dtype is ng.float64
    assert g.to("cuda") is g and g.cuda() is g and x.cpu() is x
    loss = (g * g).sum().cpu() + (y * 3).sum().cpu()
    assert not loss.is_cuda
    loss.backward()
    assert not x.grad.is_cuda and x.grad.tolist() == [5.0, 7.0]
    # a leaf on the device keeps its gradient there
    w = ng.tensor([1.0, -1.0], device="cuda", requires_grad=True)
    (w * w).sum().backward()
    assert w.grad.is_cuda and w.grad.tolist() == [2.0, -2.0]
    assert ng.autograd.gradcheck(lambda a: a.cuda().exp().cpu(),
                                 (ng.tensor([0.5, -0.3], dtype=ng.float64, requires_grad=True),))


@on_cuda
def test_mixing_devices_is_refused_in_pytorchs_words():
    c, h = ng.ones(2, device="cuda"), ng.ones(2)
    msg = "Expected all tensors to be on the same device, but found at least two devices, "
    with pytest.raises(RuntimeError) as e:
        c + h
    assert str(e.value) == msg + "cuda:0 and cpu!"
    with pytest.raises(RuntimeError) as e:
        h * c
    assert str(e.value) == msg + "cpu and cuda:0!"
    with pytest.raises(RuntimeError, match="found at least two devices"):
        ng.cat([c, h])
    with pytest.raises(RuntimeError, match="found at least two devices"):
        c.reshape(1, 2).mm(h.reshape(2, 1))
    w = ng.ones(2, device="cuda", requires_grad=True)
    with pytest.raises(RuntimeError, match="invalid gradient at index 0 - expected device cuda:0 "
                                           "but got cpu"):
        (w * 2).backward(ng.ones(2))


@on_cuda
def test_a_zero_dim_cpu_tensor_acts_as_a_scalar():
    s = ng.tensor(3.0, requires_grad=True)
    x = ng.tensor([1.0, 2.0], device="cuda", requires_grad=True)
    y = x * s
    assert y.is_cuda and y.tolist() == [3.0, 6.0]
    y.sum().backward()
    assert not s.grad.is_cuda and s.grad.item() == 3.0
    assert x.grad.is_cuda and x.grad.tolist() == [3.0, 3.0]


@on_cuda
def test_numpy_refusal_and_conversions():
    x = ng.tensor([1.0, 2.0], device="cuda")
    msg = ("can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the "
           "tensor to host memory first.")
    with pytest.raises(TypeError) as e:
        x.numpy()
    assert str(e.value) == msg
    with pytest.raises(TypeError):
        np.asarray(x)
    assert x.numpy(force=True).tolist() == [1.0, 2.0]
    assert x.cpu().numpy().tolist() == [1.0, 2.0] and x.tolist() == [1.0, 2.0]
    y = pickle.loads(pickle.dumps(x))
    assert y.is_cuda and y.tolist() == [1.0, 2.0]


@on_cuda
def test_cuda_array_interface_export_and_import():
    from numba import cuda

    t = ng.arange(6.0, device="cuda").reshape(2, 3)
    cai = t.__cuda_array_interface__
    assert cai["version"] == 3 and cai["shape"] == (2, 3) and cai["typestr"] == "<f4"
    assert cai["strides"] is None
    tt = t.t().__cuda_array_interface__
    assert tt["shape"] == (3, 2) and tt["strides"] == (4, 12)
    row = t[1].__cuda_array_interface__
    assert row["data"][0] == cai["data"][0] + 3 * 4
    with pytest.raises(RuntimeError, match="Can't get __cuda_array_interface__ on Variable"):
        ng.ones(1, device="cuda", requires_grad=True).__cuda_array_interface__
    # a Numba device array becomes a tensor without a copy: writes show through both ways
    d = cuda.to_device(np.arange(4, dtype=np.float64))
    u = ng.as_tensor(d)
    assert u.is_cuda and u.dtype is ng.float64 and u.tolist() == [0.0, 1.0, 2.0, 3.0]
    u.mul_(10)
    assert d.copy_to_host().tolist() == [0.0, 10.0, 20.0, 30.0]
    d[1:2].copy_to_device(np.array([-1.0]))
    assert u[1].item() == -1.0
    assert ng.as_tensor(d, dtype=ng.float32).dtype is ng.float32
    if hasattr(cuda, "as_cuda_array"):  # real GPU only: the simulator has no CAI import
        back = cuda.as_cuda_array(t.detach())
        assert back.copy_to_host().tolist() == [[0, 1, 2], [3, 4, 5]]


@on_cuda
def test_tree_reductions_nan_ties_and_two_passes():
    # long rows take the shared-memory tree (and a second pass over chunk results)
    a = np.arange(70, dtype=np.float64) % 7 - 3
    x = ng.tensor(a, device="cuda")
    assert x.sum().item() == a.sum() and x.amax().item() == 3.0 and x.amin().item() == -3.0
    assert x.argmax().item() == 6 and x.argmin().item() == 0  # first of the ties
    b = a.copy()
    b[40] = np.nan
    y = ng.tensor(b, device="cuda")
    assert np.isnan(y.max().item()) and y.argmax().item() == 40 and y.argmin().item() == 40
    rows = ng.tensor(np.stack([a, -a]), device="cuda")
    assert rows.max(1).indices.tolist() == [6, 0] and rows.sum(1).tolist() == [a.sum(), -a.sum()]
    assert ng.tensor(a, dtype=ng.int64, device="cuda").prod().item() == 0
    v = ng.tensor(a, device="cuda", requires_grad=True)
    v.softmax(0).mul(ng.arange(70.0, dtype=ng.float64, device="cuda")).sum().backward()
    ref = ng.tensor(a, requires_grad=True)
    ref.softmax(0).mul(ng.arange(70.0, dtype=ng.float64)).sum().backward()
    np.testing.assert_allclose(v.grad.cpu().numpy(), ref.grad.numpy(), rtol=1e-12, atol=1e-15)


@on_cuda
def test_tiled_matmul_with_ragged_tiles_and_batches():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 5, 7)), rng.standard_normal((2, 7, 3))
    x = ng.tensor(a, device="cuda", requires_grad=True)
    y = ng.tensor(b, device="cuda", requires_grad=True)
    out = x @ y
    np.testing.assert_allclose(out.detach().cpu().numpy(), a @ b, rtol=1e-12)
    out.sum().backward()
    np.testing.assert_allclose(x.grad.cpu().numpy(), np.ones((2, 5, 3)) @ b.transpose(0, 2, 1),
                               rtol=1e-12)
    v = ng.tensor(a[0, 0], device="cuda")
    np.testing.assert_allclose((v @ ng.tensor(b[0], device="cuda")).cpu().numpy(), a[0, 0] @ b[0],
                               rtol=1e-12)


@on_cuda
def test_indexing_with_cuda_index_tensors_and_setitem():
    x = ng.arange(6.0, device="cuda").reshape(2, 3)
    mask = x > 2
    assert x[mask].tolist() == [3.0, 4.0, 5.0]
    idx = ng.tensor([2, 0, 2], device="cuda")
    assert x[:, idx].tolist() == [[2.0, 0.0, 2.0], [5.0, 3.0, 5.0]]
    x[0, idx] = -1.0
    assert x.tolist() == [[-1.0, 1.0, -1.0], [3.0, 4.0, 5.0]]
    x[1] = ng.tensor([7.0, 8.0, 9.0], device="cuda")
    assert x[1].tolist() == [7.0, 8.0, 9.0]
    w = ng.ones(3, device="cuda", requires_grad=True)
    w[ng.tensor([0, 0, 2], device="cuda")].sum().backward()
    assert w.grad.tolist() == [2.0, 0.0, 1.0]


@on_cuda
def test_training_on_the_device():
    ng.manual_seed(0)
    xs = ng.randn(8, 4, device="cuda")
    target = ng.tensor([0, 1, 2, 0, 1, 2, 0, 1], device="cuda")
    w = ng.zeros(4, 3, device="cuda", requires_grad=True)
    opt = ng.optim.SGD([w], lr=0.5)
    losses = []
    for _ in range(5):
        opt.zero_grad()
        loss = ng.nn.functional.cross_entropy(xs @ w, target)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert w.is_cuda and w.grad.is_cuda
    assert losses[0] == pytest.approx(np.log(3), rel=1e-6) and losses[-1] < losses[0]


@on_cuda
@pytest.mark.parametrize("cls,kw", [
    ("Adam", dict(lr=0.1)),
    ("Adam", dict(lr=0.1, amsgrad=True, weight_decay=0.1, decoupled_weight_decay=True)),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True)),
    ("RMSprop", dict(lr=0.01, momentum=0.5, centered=True)),
    ("Adagrad", dict(lr=0.1)), ("Adadelta", dict(weight_decay=0.1)), ("Adamax", dict()),
    ("NAdam", dict(weight_decay=0.1)), ("RAdam", dict(lr=0.1)), ("ASGD", dict(t0=1)),
    ("Rprop", dict()),
])
def test_optimizer_steps_on_the_device_as_on_the_cpu(cls, kw):
    """The optimizers' update kernels (kernels_optim) run as CUDA threads: the same parameters
    and state as on the CPU, including a parameter laid out by columns."""
    v = np.random.default_rng(2).standard_normal((5, 3))
    out = []
    for device in ("cpu", "cuda"):
        w = ng.tensor(v, dtype=ng.float64, device=device, requires_grad=True)
        b = ng.tensor(v.T.copy(), dtype=ng.float64, device=device).t().detach().requires_grad_()
        opt = getattr(ng.optim, cls)([w, b], **kw)
        for _ in range(3):
            opt.zero_grad()
            ((w * w).sum() + (w * b).sum() * 0.5).backward()
            opt.step()
        out.append([t.detach().cpu().numpy() for t in (w, b, *opt.state[w].values())])
    for a, c in zip(*out):
        np.testing.assert_allclose(a, c, rtol=1e-12)


@on_cuda
def test_fills_are_made_on_the_device_in_each_dtype():
    assert ng.full((2, 3), 2.5, device="cuda").tolist() == [[2.5] * 3] * 2
    assert ng.ones(3, dtype=ng.int64, device="cuda").tolist() == [1, 1, 1]
    assert ng.zeros(2, dtype=ng.bool, device="cuda").tolist() == [False, False]
    assert ng.full((2,), True, device="cuda").dtype == ng.bool
    h = ng.full((3,), 7, dtype=ng.float64, device="cuda")
    assert h.dtype == ng.float64 and h.tolist() == [7.0, 7.0, 7.0]
    z = ng.zeros(0, 4, device="cuda")
    assert z.shape == (0, 4) and z.tolist() == []
    x = ng.arange(6.0, device="cuda").reshape(2, 3)
    x[:, 1] = 9.0  # a scalar written through a strided view
    assert x.tolist() == [[0.0, 9.0, 2.0], [3.0, 9.0, 5.0]]
    ng.cuda.empty_cache()  # a no-op in the simulator; on a GPU it frees the cached buffers
    assert ng.ones(2, device="cuda").tolist() == [1.0, 1.0]


@on_cuda
@pytest.mark.skipif(ng.cuda.is_simulator(), reason="the simulator has no allocator or driver "
                    "launch: runs on a GPU (pytest -m cuda there)")
def test_on_a_gpu_buffers_are_reused_and_kernels_launch_without_the_dispatcher():
    from numbagrad.backend import gpu

    x = ng.randn(1000, device="cuda")
    y = x * 2  # the first launch with these types goes through the dispatcher and is checked
    ptr = y.data_ptr()
    del y
    y = x * 2  # same size: the freed buffer comes back
    assert y.data_ptr() == ptr
    assert y.tolist() == (x.cpu() * 2).tolist()
    for _ in range(2):  # boolean and int64 buffers, a float parameter, a reduction
        m = (x > 0) & (x < 1)
        s = (x.clamp(-1.0, 1.0) * m).sum()
        i = x.argmax()
    assert m.tolist() == [0 < v < 1 for v in x.tolist()]
    assert s.item() == pytest.approx(sum(v for v in x.tolist() if 0 < v < 1), rel=1e-5)
    assert i.item() == int(np.argmax(x.tolist()))
    # numba-cuda's packing was matched for every kernel launched so far
    slow = [key for key, plan in gpu._launch.entries.items() if not plan]
    assert not slow and gpu._launch.entries, slow
    # a new thread has no CUDA context current until something makes it so
    out = {}
    thread = threading.Thread(target=lambda: out.update(y=(x * 2).tolist()))
    thread.start()
    thread.join()
    assert out["y"] == (x.cpu() * 2).tolist()
    pool = gpu._pool[0]
    assert pool.reserved_bytes >= pool.cached_bytes >= 0
    ng.cuda.empty_cache()
    assert pool.cached_bytes == 0 and not pool.free


@on_cuda
def test_scalar_operands_are_copied_to_the_device_once_per_value():
    from numbagrad.backend import gpu

    x = ng.tensor([1.0, -2.0, 4.0], device="cuda", requires_grad=True)
    y = x / 2
    y2 = x / 2  # the same constant buffer, read again
    key = (np.dtype(np.float32).str, np.float32(2).tobytes())
    assert key in gpu._constants
    assert y.tolist() == y2.tolist() == [0.5, -1.0, 2.0]
    x * 0.0
    z = x * -0.0  # -0.0 is its own key (its bytes are not 0.0's)
    assert [str(v) for v in z.tolist()] == ["-0.0", "0.0", "-0.0"]
    assert all(v != v for v in (x + float("nan")).tolist())
    (y.sum() + (x + 1.5).sum()).backward()
    assert x.grad.tolist() == [1.5, 1.5, 1.5]
    y.add_(1)  # an in-place write goes to y's own buffer, never to a cached constant
    assert (x / 2).tolist() == [0.5, -1.0, 2.0]
