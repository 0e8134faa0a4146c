"""Course and tutorial programs (tests/programs_b/) run unchanged under numbagrad and PyTorch.

Each program picks its library from ``sys.argv[1]`` and ends by printing lines ``name v1 v2 ...``.
Lines whose name starts with ``~`` come after random draws that differ between the libraries
(dropout, sampling): under numbagrad they must be finite, and a list of losses must end lower
than it starts. All other lines must agree with PyTorch's.
"""

import contextlib
import io
import math
import os
import runpy
import sys

import numpy as np
import pytest

import numbagrad as ng

torch = pytest.importorskip("torch")

HERE = os.path.join(os.path.dirname(__file__), "programs_b")
PROGRAMS = ["bigram", "mlp", "backprop_ninja", "char_rnn", "gpt", "micrograd_check", "mnist",
            "gan_vae", "polynomial", "idioms"]


def _numbers(text):
    """{name: [floats]} from the lines whose every word after the first is a number (the
    idioms program's ``name dtype shape | values`` lines keep their dtype and shape in the
    name)."""
    out = {}
    for line in text.splitlines():
        if " | " in line:
            head, _, vals = line.partition(" | ")
            words = [head.replace(" ", ":")] + vals.split()
        else:
            words = line.split()
        if len(words) < 2:
            continue
        try:
            out[words[0]] = [float(w) for w in words[1:]]
        except ValueError:
            continue
    return out


def _run(name, backend, here=HERE):
    buf = io.StringIO()
    argv, path = sys.argv, list(sys.path)
    sys.argv = [name + ".py", backend]
    sys.path.insert(0, here)
    lib = torch if backend == "torch" else ng
    dtype = lib.get_default_dtype()
    try:
        with contextlib.redirect_stdout(buf):
            runpy.run_path(os.path.join(here, name + ".py"), run_name="__main__")
    finally:
        sys.argv, sys.path[:] = argv, path
        # (a program's process-wide settings end with it: style transfer sets the default
        # device, which in PyTorch stays a function mode that later tests would run under)
        lib.set_default_device(None)
        lib.set_default_dtype(dtype)
    return _numbers(buf.getvalue())


@pytest.mark.parametrize("name", PROGRAMS)
def test_program_matches_torch(name):
    _assert_matches(_run(name, "numbagrad"), _run(name, "torch"))


def _assert_matches(mine, ref, rtol=2e-4):
    """The printed numbers agree with PyTorch's (``~`` lines: finite, and decreasing)."""
    assert mine.keys() == ref.keys()
    assert len(ref) >= 2
    for key, want in ref.items():
        got = mine[key]
        assert len(got) == len(want), key
        if key.startswith("~"):
            assert all(math.isfinite(v) for v in got), (key, got)
            if len(got) > 1:
                assert got[-1] < got[0], (key, got)
        else:
            np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-6, err_msg=key)
