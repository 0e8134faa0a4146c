"""Printing, creation, dtype promotion and error texts, as PyTorch 2.13 gives them."""

from __future__ import annotations

import warnings

import pytest

import numbagrad as T  # (the expressions name it T)
from parity_cases import ERRORS, OPERAND_ERRORS, VALUES


@pytest.mark.parametrize("expr,expected", VALUES, ids=[e for e, _ in VALUES])
def test_value_and_repr(expr, expected):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert repr(eval(expr)) == expected


@pytest.mark.parametrize("expr,expected", ERRORS + OPERAND_ERRORS,
                         ids=[e for e, _ in ERRORS + OPERAND_ERRORS])
def test_error(expr, expected):
    kind, message = expected
    with pytest.raises(Exception) as info:
        eval(expr)
    assert type(info.value).__name__ == kind
    assert str(info.value) == message


@pytest.mark.parametrize("expr,expected", VALUES[:40], ids=[e for e, _ in VALUES[:40]])
def test_recorded_values_still_match_torch(expr, expected):
    """When PyTorch is installed, the recorded expectations are checked against it live."""
    torch = pytest.importorskip("torch")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = repr(eval(expr, {"T": torch})).replace("torch.", "numbagrad.")
    assert got == expected


@pytest.mark.parametrize("expr,expected", OPERAND_ERRORS, ids=[e for e, _ in OPERAND_ERRORS])
def test_recorded_operand_errors_still_match_torch(expr, expected):
    torch = pytest.importorskip("torch")
    with pytest.raises(Exception) as info:
        eval(expr, {"T": torch})
    assert (type(info.value).__name__, str(info.value)) == expected


def test_an_operand_that_is_no_tensor_or_number():
    x = T.tensor([1.0, 2.0])
    # == and != with such an operand compare identities, as for PyTorch's tensors
    assert (x == None) is False and (x != None) is True and (x == "a") is False
    assert (x == [1.0, 2.0]) is False
    # numbers of every kind still work, on either side
    np = pytest.importorskip("numpy")
    assert (x + True).tolist() == [2.0, 3.0] and (2 ** x).tolist() == [2.0, 4.0]
    y = np.float64(2) * x
    assert type(y) is T.Tensor and y.tolist() == [2.0, 4.0]
    assert (x - np.int64(1)).tolist() == [0.0, 1.0]
    assert (1 - x).tolist() == [0.0, -1.0] and (2 / x).tolist() == [2.0, 1.0]
