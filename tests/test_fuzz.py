"""The differential fuzzer (``tests/fuzz.py``) on a fixed list of seeds, against PyTorch.

Each seed is a random program over the public API; every statement's outcome (values, dtype,
shape, requires_grad, is_leaf, grad_fn name, or the exception type) and the gradients at the end
must agree with PyTorch's. The mismatch classes still open are excluded by ``KNOWN_OPEN`` in
``fuzz.py``; the last tests keep that list honest: an open class must still differ (else it
was fixed, and belongs in ``FIXED`` so the generator produces it again), a fixed one must agree.

``python tests/fuzz.py --seeds 0:10000`` (``make fuzz N=10000``) runs many more seeds.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch", reason="the fuzzer compares numbagrad with PyTorch (not installed)")

import fuzz  # noqa: E402  (tests/ is on sys.path: conftest.py)

# 200 programs (about 4,000 statements): on the 2-core CI machine this file takes about 15 s
# with numbagrad's kernel cache warm, and about 140 s with an empty one (NUMBAGRAD_CACHE_DIR
# pointing at a new folder: the programs meet a few hundred kernels, each compiled once). The
# generator's activations, losses, newer tensor API and small integer dtypes made each program
# meet more kernels: 300 seeds took about 225 s cold, so the list was cut to stay in budget.
SEEDS = range(200)


@pytest.mark.parametrize("seed", SEEDS)
def test_program_agrees_with_pytorch(seed):
    prog, mismatch = fuzz.check_seed(seed)
    if mismatch is not None:
        # shrink it for the report (a few hundred reruns at most)
        small, m = fuzz.minimize(prog, mismatch.key, budget=150)
        if m is None:
            small, m = prog, mismatch
        pytest.fail(f"seed {seed}: {m.key}: {m.detail}\n\n{fuzz.render(small, m)}",
                    pytrace=False)


# ------------------------------------------------------------------------- the known classes


def test_known_open_classes_still_differ():
    """A class listed as open whose repro now agrees was fixed: move it to FIXED, so that the
    generator produces such programs again. (One test over the list, which may be empty.)"""
    for key, mismatch in fuzz.check_known(fuzz.KNOWN_OPEN).items():
        assert mismatch is not None, f"{key} agrees with PyTorch now: move it to FIXED"
        assert mismatch.check != "invalid", mismatch.detail


@pytest.mark.parametrize("key", sorted(fuzz.FIXED))
def test_fixed_class_agrees(key):
    mismatch = fuzz.check_known({key: fuzz.FIXED[key]})[key]
    assert mismatch is None, f"{key}: {mismatch.check}: {mismatch.detail}"


def test_every_class_has_a_switch_in_the_generator():
    """Each KNOWN_OPEN key is named in the generator (``avoid("key")``, or the key a saved
    tensor or a layout is marked with, later passed to ``avoid``): a typo would leave the class
    unguarded. And every ``avoid("key")`` names a listed class."""
    source = Path(fuzz.__file__).read_text()
    generator = source[source.index("class Gen:"):]
    unnamed = [key for key in fuzz.KNOWN_OPEN if f'"{key}"' not in generator]
    assert not unnamed, f"KNOWN_OPEN classes the generator never consults: {unnamed}"
    consulted = set(re.findall(r'avoid\("([a-z0-9_]+)"\)', generator))
    assert consulted <= set(fuzz.KNOWN_OPEN) | set(fuzz.FIXED)


# ------------------------------------------------------------------------- the fuzzer itself


def test_comparer_tells_values_apart():
    cmp = fuzz.compare_arrays
    assert cmp(np.float32([1, np.nan, np.inf]), np.float32([1, np.nan, np.inf])) is None
    assert cmp(np.float32([1.0]), np.float32([1.00001])) is None  # within float32's rtol
    assert cmp(np.float32([1.0]), np.float32([1.01]))[0] == "value"
    assert cmp(np.float32([np.nan]), np.float32([0.0]))[0] == "value"
    assert cmp(np.float32([np.inf]), np.float32([-np.inf]))[0] == "value"
    assert cmp(np.int64([1, 2]), np.int64([1, 3]))[0] == "value"
    assert cmp(np.float64(0.0), np.float64(1e-3))[0] == "value"  # 0-d


def test_comparer_tells_tensors_apart():
    import torch

    import numbagrad

    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = numbagrad.tensor([1.0, 2.0], requires_grad=True)
    assert fuzz.compare(x * 2, y * 2) is None
    assert fuzz.compare(x * 2, y + 2)[0] == "grad_fn"
    assert fuzz.compare(x * 2, y * 3)[0] == "value"
    assert fuzz.compare(x.double(), y)[0] == "dtype"
    assert fuzz.compare(x[None], y)[0] == "shape"
    assert fuzz.compare(x * 2, (y * 2).detach())[0] == "requires_grad"
    assert fuzz.compare(x * 2, y * 2 + 0.5)[0] == "grad_fn"
    assert fuzz.compare((x * 2, x), (y * 2, y)) is None
    assert fuzz.compare((x * 2, x), (y * 2,))[0] == "type"


def test_a_program_prints_as_python_and_runs_in_pytorch():
    """The repro a mismatch prints is a program PyTorch runs as printed."""
    import torch

    for seed in range(5):
        prog = fuzz.generate(seed)
        text = fuzz.render(prog)
        assert text.startswith("import numpy as np\nimport torch\n")
        compile(text, f"<seed {seed}>", "exec")
        ns = fuzz.namespace(torch)
        with warnings.catch_warnings():  # (PyTorch warns on some, as the fuzzer's runs allow)
            warnings.simplefilter("ignore")
            for st in prog:  # statements PyTorch refuses are kept on purpose (error parity)
                try:
                    exec(st.code, ns)
                except (RuntimeError, TypeError, IndexError, ValueError):
                    pass


def test_a_difference_is_caught_and_shrunk():
    """A program with a planted difference (a statement numbagrad runs differently) fails, and
    the minimizer drops the statements that do not matter."""
    stmts = fuzz.parse_repro("""
        a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        b = a * 2
        c = b.sum()
        d = torch.tensor([1.0, 2.0]) if torch.__name__ == 'torch' else torch.tensor([1.0, 5.0])
        """)
    m = fuzz.run_program(stmts)
    assert m is not None and m.check == "value" and m.index == 3
    small, m2 = fuzz.minimize(stmts, m.key)
    assert [s.code for s in small] == [stmts[3].code]
