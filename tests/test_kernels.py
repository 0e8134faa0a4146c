"""Kernel properties: one compile per op and dtype (never per shape), disk cache, float32 purity."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np

import numbagrad as ng
from numbagrad import dtypes as D
from numbagrad.ops import elementwise as E


def test_one_compiled_kernel_serves_every_shape_and_layout():
    kernel = E.tanh.kernel(D.float64)
    x = ng.tensor(np.random.rand(4, 5, 6))
    for t in (ng.tensor(1.0, dtype=ng.float64), x, x[0], x.transpose(0, 2), x[:, ::2, 1:],
              x[:, :1].expand(4, 3, 6), ng.zeros(0, 3, dtype=ng.float64)):
        np.testing.assert_allclose(t.tanh().numpy(), np.tanh(t.numpy()))
    assert len(kernel.signatures) == 1


def test_broadcast_binary_matches_numpy_on_strided_operands():
    a = ng.tensor(np.random.rand(3, 8))[:, ::3]
    b = ng.tensor(np.random.rand(4, 3)).t()  # (3, 4), not contiguous
    c = ng.tensor(np.random.rand(3, 1))
    np.testing.assert_allclose((a * c + b[:, :3]).numpy(), a.numpy() * c.numpy() + b.numpy()[:, :3])


F64_CHECK = textwrap.dedent(
    """
    import numbagrad as ng
    from numbagrad import dtypes as D
    from numbagrad.ops import elementwise as E
    x = ng.tensor([0.5, -1.5, 2.0], requires_grad=True)
    y = (x.sigmoid() + x.tanh() * 0.5 + (1 - x).rsqrt().exp()).sum()
    y.backward()
    kernels = [op.kernel(D.float32) for op in (E.sigmoid, E.tanh, E.rsqrt, E.exp, E.mul, E.add)]
    kernels += [op.vjp_kernel(0, D.float32) for op in (E.sigmoid, E.tanh, E.rsqrt)]
    for k in kernels:
        ir = "".join(k.inspect_llvm().values())
        bad = [w for w in ("fpext float", "fadd double", "fmul double", "fdiv double") if w in ir]
        print(k.py_func.__module__, bad)
    """
)


def test_float32_kernels_do_no_float64_arithmetic(tmp_path):
    # compiled fresh in a clean cache: Numba cannot show the IR of cache-loaded code
    env = dict(os.environ, NUMBAGRAD_CACHE_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", F64_CHECK], env=env, capture_output=True,
                         text=True, check=True).stdout.splitlines()
    assert len(out) == 9
    for line in out:
        assert line.endswith("[]"), line


def test_second_process_loads_kernels_from_the_disk_cache(tmp_path):
    script = textwrap.dedent(
        """
        import numbagrad as ng
        from numbagrad import dtypes as D
        from numbagrad.ops import elementwise as E
        x = ng.tensor([1.0, 2.0], requires_grad=True)
        (x.exp() * 3).sum().backward()
        k = E.exp.kernel(D.float32)
        print(sum(k.stats.cache_hits.values()), sum(k.stats.cache_misses.values()))
        """
    )
    env = dict(os.environ, NUMBAGRAD_CACHE_DIR=str(tmp_path))
    runs = [
        subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                       check=True).stdout.split()
        for _ in range(2)
    ]
    assert runs[0] == ["0", "1"]  # cold: compiled
    assert runs[1] == ["1", "0"]  # warm: loaded from disk
    assert any(p.suffix == ".nbi" for p in tmp_path.rglob("*"))


def test_generated_kernel_source_is_readable_python():
    kernel = E.sigmoid.kernel(D.float32)
    source = Path(kernel.py_func.__code__.co_filename).read_text()
    assert "_c = np.float32" in source
    assert "def sigmoid(x):" in source
    assert "_c(1) / (_c(1) + math.exp(-x))" in source
