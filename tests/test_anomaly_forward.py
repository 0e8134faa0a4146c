"""The anomaly mode's forward check (``check_forward=True``): the first NaN or infinity an op
produces is an error naming the op and the caller's line; off, nothing is checked."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import numbagrad as ng
from numbagrad.ops import dispatch, observe

pytestmark = pytest.mark.filterwarnings("ignore:Anomaly Detection has been enabled")


def _line(offset):
    return f"{__file__}:{sys._getframe(1).f_lineno + offset}"


def test_detect_anomaly_check_forward_names_op_and_line():
    x = ng.tensor([1.0, 0.0, 2.0], requires_grad=True)
    with ng.autograd.detect_anomaly(check_forward=True):
        assert (x * 2).sum().item() == 6.0
        where = _line(2)
        with pytest.raises(RuntimeError) as e:
            x.log()
        assert str(e.value) == (f"Function 'log' returned inf values in its 0th output in the "
                                f"forward pass, called at {where}.")
        where = _line(2)
        with pytest.raises(RuntimeError) as e:
            (x / x).sum()
        assert str(e.value) == (f"Function 'div' returned nan values in its 0th output in the "
                                f"forward pass, called at {where}.")
    assert dispatch.FAST_PATH and not observe.OBSERVERS
    assert np.isinf(x.log().detach().numpy()).any()  # off again: no check


def test_set_detect_anomaly_check_forward_and_default_off():
    with ng.autograd.detect_anomaly():  # (check_forward is off by default)
        assert np.isnan(ng.tensor([-1.0]).sqrt().numpy()).all()
    ng.autograd.set_detect_anomaly(True, check_forward=True)
    try:
        assert ng.autograd.anomaly_mode.is_anomaly_check_forward_enabled()
        with pytest.raises(RuntimeError, match="^Function 'sqrt' returned nan values"):
            ng.tensor([-1.0, 4.0]).sqrt()
        with pytest.raises(RuntimeError, match="^Function 'sum' returned inf values"):
            ng.tensor([3e38, 3e38]).sum()
    finally:
        ng.autograd.set_detect_anomaly(False)
    assert not ng.autograd.anomaly_mode.is_anomaly_check_forward_enabled()
    assert dispatch.FAST_PATH and not observe.OBSERVERS


def test_anomaly_mode_is_one_switch_for_every_thread():
    # (PyTorch's anomaly mode is process-wide, unlike grad mode: a thread started inside
    # detect_anomaly records nodes with their forward stack)
    import threading

    seen = []

    def work():
        x = ng.tensor([1.0, 2.0], requires_grad=True)
        y = x * 3.0
        seen.append((ng.is_anomaly_enabled(), ng.is_grad_enabled(),
                     hasattr(y.grad_fn, "_anomaly_stack")))

    with ng.autograd.detect_anomaly(), ng.no_grad():
        t = threading.Thread(target=work)
        t.start()
        t.join()
    assert seen == [(True, True, True)]
    assert not ng.is_anomaly_enabled()
