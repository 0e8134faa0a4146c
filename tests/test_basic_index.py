"""Basic indexing (ints, slices, None, one Ellipsis) of a CPU tensor on the lean path: the
view, its node, its strides, its gradient and its errors as PyTorch's."""

import numpy as np
import pytest
import torch

import numbagrad as ng

INDICES = ["[1:3]", "[:, None]", "[..., :2]", "[None, ..., 0]", "[0, ..., None]", "[:, 1:]",
           "[-3:]", "[::2]", "[:, 1:3, 2]", "[..., 1]", "[1, ...]", "[None]", "[...]",
           "[:, None, 1:, None]", "[2, 1, 0]", "[..., 2, 1, 0]", "[0:0]", "[:, :, None]"]


@pytest.mark.parametrize("index", INDICES)
def test_views_nodes_and_gradients_as_pytorchs(index):
    a = np.random.default_rng(0).standard_normal((4, 3, 5))
    got = []
    for lib in (ng, torch):
        x = lib.tensor(a, requires_grad=True)
        y = eval("x" + index)
        seen = (y.grad_fn.name(), tuple(y.shape), y.stride(), y._base is x)
        with lib.no_grad():
            plain = eval("x.detach()" + index)
        (y * y).sum().backward()
        got.append((seen, y.detach().numpy().copy(), x.grad.numpy(), tuple(plain.shape),
                    plain.stride()))
    assert got[0][0] == got[1][0] and got[0][3:] == got[1][3:]
    np.testing.assert_array_equal(got[0][1], got[1][1])
    np.testing.assert_array_equal(got[0][2], got[1][2])


@pytest.mark.parametrize("index, error", [
    ("[5:2:-1]", ValueError), ("[0, 0, 0, 0]", IndexError), ("[:, 3]", IndexError),
    ("[None, 4]", IndexError), ("[:, None, 3]", IndexError), ("[..., 7]", IndexError),
    ("[0, ..., 9]", IndexError), ("[0, 5]", IndexError)])
def test_errors_as_pytorchs(index, error):
    messages = []
    for lib in (ng, torch):
        x = lib.zeros(4, 3, 5)
        with pytest.raises(error) as e:
            eval("x" + index)
        messages.append(str(e.value))
    assert messages[0] == messages[1]


def test_a_zero_dim_tensor():
    for lib in (ng, torch):
        x = lib.tensor(2.0, requires_grad=True)
        y = x[None]
        assert tuple(y.shape) == (1,) and y.grad_fn.name() == "UnsqueezeBackward0"
        assert tuple(x[...].shape) == ()
        with pytest.raises(IndexError):
            x[1:2]


@pytest.mark.parametrize("index", ["[..., ...]", "[..., 0, ...]", "[None, ..., None, ...]",
                                   "[..., None, ...]", "[1, ..., ...]"])
def test_later_ellipses_followed_by_no_dims_index_nothing_as_pytorchs(index):
    got = []
    for lib in (ng, torch):
        x = lib.arange(60.0).reshape(4, 3, 5)
        y = x.clone()
        exec("y" + index + " = -1.0")
        got.append((tuple(eval("x" + index).shape), y.numpy().copy()))
    assert got[0][0] == got[1][0]
    np.testing.assert_array_equal(got[0][1], got[1][1])
