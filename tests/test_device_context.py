"""``with torch.device(...)`` as the default device of a block, and ``Module.to_empty``, as
PyTorch's (the recipes "Changing default device" and "Tips for loading an nn.Module")."""

from __future__ import annotations

import pytest

import numbagrad as ng
from devices import on_cuda

torch = pytest.importorskip("torch")


def test_a_device_is_the_default_device_inside_its_block():
    for lib in (ng, torch):
        before = lib.get_default_device()
        with lib.device("cpu") as d:
            assert d == lib.device("cpu")
            assert lib.get_default_device() == lib.device("cpu")
            layer = lib.nn.Linear(2, 3)
            with lib.device("cpu"):
                assert lib.zeros(2).device == lib.device("cpu")
            assert lib.get_default_device() == lib.device("cpu")
        assert layer.weight.device == lib.device("cpu")
        assert lib.get_default_device() == before


@on_cuda
def test_a_cuda_block_puts_new_tensors_on_the_gpu():
    with ng.device("cuda"):
        assert ng.zeros(2).device.type == "cuda"
        assert ng.nn.Linear(2, 3).weight.device.type == "cuda"
    assert ng.zeros(2).device.type == "cpu"


def test_to_empty_keeps_the_parameters_and_their_shapes():
    results = []
    for lib in (ng, torch):
        m = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.BatchNorm1d(3))
        w = m[0].weight
        assert m.to_empty(device="cpu") is m
        m.load_state_dict({k: lib.ones(v.shape, dtype=v.dtype) for k, v in
                           m.state_dict().items()})
        results.append((m[0].weight is w, m[0].weight.requires_grad, tuple(m[0].weight.shape),
                        m[1].running_mean.tolist(), sorted(m.state_dict())))
    assert results[0] == results[1]


def test_inference_tensors_are_written_in_place_only_inside_inference_mode():
    """PyTorch's rule: an inference tensor (or a view of one) written in place outside
    inference_mode raises, whatever the grad mode; its detach() and .data may be written."""
    calls = {
        "add_": lambda t, L: t.add_(1), "setitem": lambda t, L: t.__setitem__(0, 5.0),
        "zero_": lambda t, L: t.zero_(), "copy_": lambda t, L: t.copy_(L.zeros(2)),
        "sigmoid_": lambda t, L: t.sigmoid_(),
        "view": lambda t, L: t[0:1].mul_(2),
        "index_add_": lambda t, L: t.index_add_(0, L.tensor([0]), L.ones(1)),
    }
    for lib in (ng, torch):
        with lib.inference_mode():
            t = lib.ones(2)
        for name, call in calls.items():
            with pytest.raises(RuntimeError, match="^Inplace update to inference tensor outside "
                                                   "InferenceMode is not allowed"):
                call(t, lib)
            with lib.no_grad(), pytest.raises(RuntimeError, match="^Inplace update"):
                call(t, lib)
        # (PyTorch writes before it raises; numbagrad refuses first and leaves t as it was)
        with lib.inference_mode():
            t = lib.ones(2)
            t.add_(1)
            t[0] = 3.0
        t.detach().add_(1)
        t.data.mul_(2)
        assert t.tolist() == [8.0, 6.0]
