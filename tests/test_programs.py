"""Tutorial programs (tests/programs/) print the same under numbagrad as under PyTorch.

Each program runs twice in this process, once with ``torch`` bound to numbagrad and once to
PyTorch (its first argument picks), in a temporary directory (they save checkpoints). The two
outputs are compared: the text with the numbers taken out, exactly (runs of whitespace as one
space; ``numbagrad.`` read as ``torch.``, as in ``torch.Size``; object addresses dropped), and
the numbers, closely (to the printed precision). The programs start both libraries from the same
weights (tests/programs/common.py), but a program that shuffles its data or drops units out
draws from each library's own generator: from its line ``-- shuffled from here --`` on,
whitespace is ignored, the numbers need only be finite, and those of the last line (the results
the program ends with) to agree loosely: both runs learn about as much.
The warnings the two runs raise must be the same (their kinds and first lines).
"""

from __future__ import annotations

import contextlib
import io
import re
import runpy
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

PROGRAMS = Path(__file__).resolve().parent / "programs"
NAMES = sorted(p.stem for p in PROGRAMS.glob("*.py") if p.stem != "common")
SHUFFLED = "-- shuffled from here --"
NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")


def _run(name: str, backend: str, where: Path, monkeypatch):
    """(what the program printed, the warnings it raised: their kinds and first lines)."""
    monkeypatch.chdir(where)
    monkeypatch.setattr(sys, "argv", [f"{name}.py", backend])
    monkeypatch.syspath_prepend(str(PROGRAMS))
    sys.modules.pop("common", None)  # it reads the backend from sys.argv when imported
    out = io.StringIO()
    with contextlib.redirect_stdout(out), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        runpy.run_path(str(PROGRAMS / f"{name}.py"), run_name="__main__")
    warned = {(w.category.__name__, str(w.message).split("\n")[0]) for w in caught}
    return out.getvalue(), warned - ONCE_PER_PROCESS


# warnings PyTorch gives once per process: whether its run shows them depends on the tests that
# ran before in the same process (numbagrad's are reset for each test, tests/conftest.py)
ONCE_PER_PROCESS = {("UserWarning", "Converting a tensor with requires_grad=True to a scalar may "
                     "lead to unexpected behavior.")}


def _split(text: str, tight: bool):
    """(the text with each number replaced by #, the numbers)."""
    text = text.replace("numbagrad.", "torch.")
    text = re.sub(r" at 0x[0-9a-fA-F]+", "", text)
    numbers = [float(m) for m in NUMBER.findall(text)]
    skeleton = NUMBER.sub("#", text)
    skeleton = " ".join(skeleton.split()) if tight else "".join(skeleton.split())
    return skeleton, np.array(numbers)


def _compare(got: str, want: str, tight: bool) -> None:
    got_text, got_numbers = _split(got, tight)
    want_text, want_numbers = _split(want, tight)
    assert got_text == want_text
    if tight:
        # printed to 4 decimals (tensors) or 6 (f"{x:f}"): a last digit may round the other way
        np.testing.assert_allclose(got_numbers, want_numbers, rtol=1e-4, atol=2e-4)
    elif got.strip():
        assert np.isfinite(got_numbers).all()
        got_last, want_last = (_split(s.strip().splitlines()[-1], False)[1] for s in (got, want))
        np.testing.assert_allclose(got_last, want_last, rtol=0.25, atol=0.05)


@pytest.mark.parametrize("name", NAMES)
def test_program(name, tmp_path, monkeypatch):
    (tmp_path / "torch").mkdir()
    (tmp_path / "numbagrad").mkdir()
    want, want_warnings = _run(name, "torch", tmp_path / "torch", monkeypatch)
    got, got_warnings = _run(name, "numbagrad", tmp_path / "numbagrad", monkeypatch)
    assert got_warnings == want_warnings
    got_head, _, got_tail = got.partition(SHUFFLED)
    want_head, _, want_tail = want.partition(SHUFFLED)
    _compare(got_head, want_head, tight=True)
    assert (SHUFFLED in got) == (SHUFFLED in want)
    _compare(got_tail, want_tail, tight=False)
