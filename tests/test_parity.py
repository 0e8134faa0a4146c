"""Printing, creation, dtype promotion and error texts, as PyTorch 2.13 gives them."""

from __future__ import annotations

import warnings

import pytest

import numbagrad as T  # noqa: F401  (the expressions name it T)
from parity_cases import ERRORS, VALUES


@pytest.mark.parametrize("expr,expected", VALUES, ids=[e for e, _ in VALUES])
def test_value_and_repr(expr, expected):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert repr(eval(expr)) == expected


@pytest.mark.parametrize("expr,expected", ERRORS, ids=[e for e, _ in ERRORS])
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
