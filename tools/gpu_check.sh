#!/usr/bin/env bash
# The checks a session runs when it is lent a GPU: the CUDA tests for real, W1 at 1e8 against
# the device's copy bandwidth, and the CUDA workloads side by side with torch.cuda. Written for
# an image whose python3 holds numba, numba-cuda, torch and pytest-xdist, with a NumPy < 2.5
# wheel in .whl/ (numba-cuda 0.30 compiles no kernel under NumPy 2.5). Logs go to $OUT.
set -u
OUT=${OUT:-/tmp/gpu-check}
mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD/src PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
python3 -c 'import sys, importlib.metadata as md
print("python", sys.version.split()[0], *(f"{p} {md.version(p)}" for p in
      ("numpy", "numba", "numba-cuda", "torch")))'
# The measurements first: the suite takes whatever time is left.
timeout "${BW_S:-100}" python3 benchmarks/gpu_bandwidth.py 2>&1 | tee "$OUT/bandwidth.log"
timeout "${CMP_S:-180}" python3 benchmarks/compare.py --device cuda 2>&1 | tee "$OUT/compare.log"
# The unrolled elementwise kernel against every element, before the suite reaches it.
timeout 120 python3 -m pytest -q -m cuda -p no:benchmark -p no:cacheprovider \
    tests/test_cuda_ops.py -k unrolled 2>&1 | tail -n 3
# On a GPU the suite is bound by compiling kernels (NVVM): --dist load spreads the tests of one
# file over the workers (test_cuda_ops.py alone kept one of 16 busy past 6 minutes under
# loadfile). SIGINT at the time limit makes pytest print what failed so far. (pytest-benchmark
# in such an image warns when xdist runs, and -W error makes that fatal.)
timeout -s INT -k 20 "${TEST_S:-300}" python3 -m pytest -v -m cuda -n 16 --dist load \
    -p no:benchmark -p no:cacheprovider --tb=short -r fE > "$OUT/pytest.log" 2>&1
echo "pytest rc $?"; grep -c PASSED "$OUT/pytest.log"; grep -v PASSED "$OUT/pytest.log" | tail -n 40
