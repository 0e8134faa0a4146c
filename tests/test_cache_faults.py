"""The kernel cache is never the user's problem (backend/codegen.py).

A cache directory that cannot be written, a damaged cached kernel or Numba cache file, and
processes compiling into one cache at once all still give NumPy's result, with at most one
``KernelCacheWarning`` per process saying what went wrong and what numbagrad did instead.

Tests in this process load small kernels of their own (made unique by a comment, since a
process loads a module once); tests of whole ops run in subprocesses with fresh caches.
"""

import errno
import json
import os
import random
import subprocess
import sys
import textwrap
import time
import uuid

import numba.core.caching
import numpy as np
import pytest

from numbagrad.backend import codegen
from numbagrad.backend.codegen import KernelCacheWarning


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A fresh kernel cache directory, and a process that has not warned yet."""
    monkeypatch.setenv("NUMBAGRAD_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(codegen, "_warned", False)
    return tmp_path / "kernels"


def kernel_body(tag: str) -> str:
    return f"# {tag}\n" + codegen.jit_line() + textwrap.dedent(
        """
        def scale_add(out, a, b):
            for i in range(out.shape[0]):
                out[i] = a[i] * _c(3) + b[i]
        """
    )


def run_kernel(tag: str):
    """Load the kernel module of ``tag`` and check one call of it against NumPy."""
    mod = codegen.load_module("float64", kernel_body(tag))
    a, b = np.linspace(-1, 1, 7), np.arange(7.0)
    out = np.empty(7)
    mod.scale_add(out, a, b)
    np.testing.assert_array_equal(out, a * 3 + b)
    return mod


def forget(mod) -> None:
    """Unload ``mod``: loading it again reads the disk cache, as a new process would."""
    del codegen._modules[mod.__name__]
    sys.modules.pop(mod.__name__, None)


def cache_warnings(record) -> list[str]:
    return [str(w.message) for w in record if issubclass(w.category, KernelCacheWarning)]


# ---------------------------------------------------------------- unwritable directories


def regular_file(tmp_path, monkeypatch):
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("NUMBAGRAD_CACHE_DIR", str(tmp_path / "file"))
    return [str(tmp_path / "file" / "kernels"), "Not a directory"]


def failing_writes(monkeypatch, error, on_open):
    """codegen's own writes fail with ``error``, when opening the file or when writing it
    (Numba's writes are left alone)."""
    real_open = open

    class Unwritable:
        def __init__(self, f):
            self.f = f

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.f.close()

        def write(self, data):
            raise error

    def fake_open(path, mode="r", *args, **kwargs):
        if "r" in mode:
            return real_open(path, mode, *args, **kwargs)
        if on_open:
            raise error
        return Unwritable(real_open(path, mode, *args, **kwargs))

    monkeypatch.setattr(codegen, "open", fake_open, raising=False)


def read_only_simulated(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMBAGRAD_CACHE_DIR", str(tmp_path))
    failing_writes(monkeypatch, PermissionError(errno.EACCES, "Permission denied"), True)
    return [str(tmp_path / "kernels"), "Permission denied"]


def full_disk(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMBAGRAD_CACHE_DIR", str(tmp_path))
    failing_writes(monkeypatch, OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)), False)
    return [str(tmp_path / "kernels"), os.strerror(errno.ENOSPC)]


def no_home(tmp_path, monkeypatch):
    import pwd

    for name in ("NUMBAGRAD_CACHE_DIR", "XDG_CACHE_HOME", "HOME"):
        monkeypatch.delenv(name, raising=False)

    def no_entry(uid):
        raise KeyError(f"getpwuid(): uid not found: {uid}")

    monkeypatch.setattr(pwd, "getpwuid", no_entry)
    return ["home directory"]


@pytest.mark.parametrize("fault", [regular_file, read_only_simulated, full_disk,
                                   no_home])
def test_an_unusable_cache_directory_means_compiling_in_memory(fault, tmp_path, monkeypatch):
    monkeypatch.setattr(codegen, "_warned", False)
    expected = fault(tmp_path, monkeypatch)
    with pytest.warns(KernelCacheWarning) as record:
        mods = [run_kernel(uuid.uuid4().hex) for _ in range(2)]  # two kernels, one warning
    [message] = cache_warnings(record)
    for text in expected + ["compiling kernels in memory"]:
        assert text in message
    assert all(not hasattr(mod, "__file__") for mod in mods)
    # nothing was left behind: no kernel, no half-written temporary file
    assert [p for p in tmp_path.rglob("*") if p.name.startswith("k_")] == []


def test_numba_finding_nowhere_to_cache_means_compiling_in_memory(cache, monkeypatch):
    # a read-only directory holding the kernel file already, and Numba's own fallback
    # (~/.cache/numba) read-only too: Numba refuses cache=True when the module is executed
    def unwritable(self):
        raise PermissionError(errno.EACCES, "Permission denied", self.get_cache_path())

    monkeypatch.setattr(numba.core.caching._CacheLocator, "ensure_cache_path", unwritable)
    with pytest.warns(KernelCacheWarning) as record:
        mod = run_kernel(uuid.uuid4().hex)
    [message] = cache_warnings(record)
    assert str(cache) in message and "cannot cache function" in message
    assert not hasattr(mod, "__file__")


def test_a_full_disk_when_numba_saves_keeps_the_kernel_for_this_process(cache, monkeypatch):
    def full(self, filepath):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), filepath)

    monkeypatch.setattr(numba.core.caching.IndexDataCacheFile, "_open_for_write", full)
    with pytest.warns(KernelCacheWarning) as record:
        for _ in range(2):
            run_kernel(uuid.uuid4().hex)
    [message] = cache_warnings(record)
    assert "could not save Numba's cache" in message and str(cache) in message
    assert os.strerror(errno.ENOSPC) in message
    assert list(cache.glob("__pycache__/*.nb*")) == []


# ---------------------------------------------------------------- damaged files


def flip_bytes(data: bytes) -> bytes:
    # a few bytes in the middle: Numba unchecked can crash inside LLVM on this, or load it
    middle = len(data) // 2
    return data[:middle] + bytes(b ^ 0xFF for b in data[middle:middle + 8]) + data[middle + 8:]


DAMAGE = {
    "truncated": lambda data: data[: len(data) // 2],
    "empty": lambda data: b"",
    "garbage": lambda data: random.Random(0).randbytes(len(data)),
    "flipped bytes": flip_bytes,
    "not UTF-8": lambda data: b"\xff\xfe" + data,
    "not Python": lambda data: data.replace(b"def ", b"dfe ", 1),
}


@pytest.mark.parametrize("damage", ["truncated", "empty", "not UTF-8", "not Python"])
def test_a_damaged_kernel_file_is_rewritten(cache, damage):
    tag = uuid.uuid4().hex
    mod = run_kernel(tag)
    path = cache / os.path.basename(mod.__file__)
    source = path.read_bytes()
    forget(mod)
    path.write_bytes(DAMAGE[damage](source))
    with pytest.warns(KernelCacheWarning) as record:
        run_kernel(tag)
    [message] = cache_warnings(record)
    assert str(path) in message and "did not match its source" in message
    assert path.read_bytes() == source
    assert list(cache.glob("*.tmp")) == []


@pytest.mark.parametrize("suffix", [".nbi", ".nbc"])
@pytest.mark.parametrize("damage", ["truncated", "garbage", "flipped bytes"])
def test_a_damaged_numba_cache_file_is_removed_and_compiled_again(cache, monkeypatch, suffix,
                                                                  damage):
    tag = uuid.uuid4().hex
    forget(run_kernel(tag))
    files = list(cache.glob("__pycache__/*" + suffix))
    assert files
    for path in files:
        path.write_bytes(DAMAGE[damage](path.read_bytes()))
    with pytest.warns(KernelCacheWarning) as record:
        forget(run_kernel(tag))
    [message] = cache_warnings(record)
    assert "could not be read" in message and str(cache / "__pycache__") in message
    # repaired: the next load reads the cache, silently
    monkeypatch.setattr(codegen, "_warned", False)
    mod = run_kernel(tag)
    assert sum(mod.scale_add.stats.cache_hits.values()) == 1


def test_a_data_file_holding_another_signatures_code_is_not_loaded(cache):
    # Numba names data files by counting: two processes compiling two signatures of one
    # function at once can both write ``.1.nbc``, leaving the index naming the other's code
    body = f"# {uuid.uuid4().hex}\n{codegen.jit_line()}\ndef twice(x):\n    return x + x\n"
    mod = codegen.load_module("float64", body)
    assert mod.twice(1.5) == 3.0  # compiled for float64, cached as .1.nbc
    assert mod.twice(7) == 14  # for int64, as .2.nbc
    forget(mod)
    [floats] = cache.glob("__pycache__/*.1.nbc")
    [ints] = cache.glob("__pycache__/*.2.nbc")
    floats.write_bytes(ints.read_bytes())
    mod = codegen.load_module("float64", body)
    assert mod.twice(1.5) == 3.0  # compiled again, silently: a miss, not damage
    assert sum(mod.twice.stats.cache_misses.values()) == 1


# ---------------------------------------------------------------- whole processes

OPS = textwrap.dedent(
    """
    import json, os, sys, time, warnings
    import numpy as np
    import numbagrad as ng

    ready, go = sys.argv[1:3] if len(sys.argv) > 2 else (None, None)
    if ready:  # start compiling when every process is ready
        open(ready, "w").close()
        while not os.path.exists(go):
            time.sleep(0.005)
    a, b = np.linspace(-2, 2, 12), np.arange(12.0) + 0.5
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        x, y = ng.tensor(a), ng.tensor(b)
        got = {"add": (x + y).numpy(), "mul": (x * y).numpy()}
    print(json.dumps({"values": {k: v.tolist() for k, v in got.items()},
                      "warnings": [str(w.message) for w in caught]}))
    """
)


def check_ops(result: subprocess.CompletedProcess) -> list[str]:
    """The warnings of one run of ``OPS``, after checking its values against NumPy."""
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    a, b = np.linspace(-2, 2, 12), np.arange(12.0) + 0.5
    want = {"add": a + b, "mul": a * b}
    assert out["values"].keys() == want.keys()
    for name, values in out["values"].items():
        np.testing.assert_array_equal(values, want[name], err_msg=name)
    return out["warnings"]


def run_ops(cache_root) -> list[str]:
    env = dict(os.environ, NUMBAGRAD_CACHE_DIR=str(cache_root))
    return check_ops(subprocess.run([sys.executable, "-c", OPS], env=env,
                                    capture_output=True, text=True, timeout=120))


def test_a_process_with_a_regular_file_for_its_cache_directory(tmp_path):
    (tmp_path / "file").write_text("")
    [message] = run_ops(tmp_path / "file")
    assert str(tmp_path / "file" / "kernels") in message and "in memory" in message


def test_a_later_process_repairs_a_damaged_cache(tmp_path):
    assert run_ops(tmp_path) == []
    cache = tmp_path / "kernels"
    for pattern, damage in [("k_*.py", "truncated"), ("__pycache__/*.nbi", "garbage"),
                            ("__pycache__/*.nbc", "flipped bytes")]:
        files = list(cache.glob(pattern))
        assert files, pattern
        for path in files:
            path.write_bytes(DAMAGE[damage](path.read_bytes()))
    [message] = run_ops(tmp_path)
    assert "did not match its source" in message
    assert run_ops(tmp_path) == []


def test_processes_compiling_into_one_empty_cache_at_once(tmp_path):
    env = dict(os.environ, NUMBAGRAD_CACHE_DIR=str(tmp_path / "cache"))
    go = tmp_path / "go"
    procs = [subprocess.Popen([sys.executable, "-c", OPS, str(tmp_path / f"ready{k}"), str(go)],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for k in range(4)]
    try:
        deadline = time.monotonic() + 60
        while not all((tmp_path / f"ready{k}").exists() for k in range(4)):
            assert time.monotonic() < deadline and all(p.poll() is None for p in procs)
            time.sleep(0.01)
        go.touch()
        outputs = [p.communicate(timeout=60) for p in procs]
    finally:
        for p in procs:
            p.kill()
    for p, (out, err) in zip(procs, outputs):
        assert check_ops(subprocess.CompletedProcess(p.args, p.returncode, out, err)) == []
    # and what they left is a cache a later process reads without a fault
    assert run_ops(tmp_path / "cache") == []
