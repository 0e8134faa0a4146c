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
