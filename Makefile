# Two commands: `make demo` and `make test`. Each creates .venv and installs what it needs.
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp
PTX_STAMP := $(VENV)/.ptx-stamp
BENCH_STAMP := $(VENV)/.bench-stamp
WHEEL_STAMP := $(VENV)/.wheel-stamp
WHEEL_DIR := build/wheel-check

.PHONY: demo test test-cpu test-cuda test-mpi test-ptx wheel-check bench fuzz clean

# The package is byte-compiled after its editable install, as pip compiles a package it
# installs: where PYTHONDONTWRITEBYTECODE is set, its modules would otherwise be compiled from
# source in every new process (about 0.2 s of each import).
$(STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,demo,cudasim,mpi]'
	$(PY) -m compileall -q src
	touch $(STAMP)

demo: $(STAMP)
	$(PY) examples/demo.py

# Tests run on every core (pytest-xdist), a test file per worker at a time: most kernels a file
# compiles are its own, so workers seldom compile the same one (the kernel cache on disk is
# shared; its writes are atomic). `make test XDIST=` runs them in one process.
XDIST := -n auto --dist loadfile

# The CPU suite, then the CUDA tests a second time in their own process in Numba's CUDA
# simulator (on a GPU machine, `pytest -m cuda` without the variable runs them for real),
# then the package as a user gets it (wheel-check).
test: test-cpu test-cuda wheel-check

test-cpu: $(STAMP)
	$(PY) -m pytest -q -m "not cuda and not ptx" $(XDIST)

test-cuda: $(STAMP)
	NUMBA_ENABLE_CUDASIM=1 $(PY) -m pytest -q -m cuda $(XDIST)

# The multi-rank tests alone: tests/mpi/ scripts on 2 ranks under mpiexec (mpi4py and MPICH's
# wheel, which brings mpiexec into the venv); test-cpu runs them too.
test-mpi: $(STAMP)
	$(PY) -m pytest -q -m mpi tests/test_distributed.py

# Build the sdist and, from it, the wheel; install the wheel with its dependencies (numpy, numba:
# from pip's cache after the first time) into a new venv, then import and use it there, with an
# empty kernel cache. About 15 s.
$(WHEEL_STAMP): $(STAMP)
	$(PY) -m pip install --quiet 'build>=1'
	touch $(WHEEL_STAMP)

wheel-check: $(WHEEL_STAMP)
	rm -rf $(WHEEL_DIR)
	$(PY) -m build --quiet --outdir $(WHEEL_DIR)/dist .
	$(PY) -m venv $(WHEEL_DIR)/venv
	$(WHEEL_DIR)/venv/bin/python -m pip install --quiet $(WHEEL_DIR)/dist/*.whl
	cd $(WHEEL_DIR) && NUMBAGRAD_CACHE_DIR=$$PWD/kernels \
	    venv/bin/python -c 'import importlib.metadata as md, numbagrad as ng; \
	    assert md.version("numbagrad") == ng.__version__; \
	    assert md.distribution("numbagrad").locate_file("numbagrad/py.typed").is_file(); \
	    assert "/$(WHEEL_DIR)/venv/" in ng.__file__, ng.__file__; \
	    x = ng.tensor([1.0], requires_grad=True); y = (x * 3 + 1).sum(); y.backward(); \
	    assert y.item() == 4.0 and x.grad.tolist() == [3.0], (y, x.grad); \
	    print("wheel-check: numbagrad", ng.__version__, "from its wheel, new venv: x.grad =", x.grad)'

# Compile every CUDA kernel to PTX for sm_90 and check float32 kernels for float64
# instructions (the simulator does no type checking). Needs ~700 MB of NVVM/NVRTC wheels.
$(PTX_STAMP): $(STAMP)
	$(PY) -m pip install --quiet -e '.[ptx]'
	touch $(PTX_STAMP)

test-ptx: $(PTX_STAMP)
	$(PY) -m pytest -q -m ptx

# A quick smoke run of the asv suite (each benchmark once), then W1-W6 side by side with
# PyTorch (when it is installed in .venv: `.venv/bin/pip install torch`) at 1 and 2 threads.
$(BENCH_STAMP): $(STAMP)
	$(PY) -m pip install --quiet -e '.[bench]'
	touch $(BENCH_STAMP)

bench: $(BENCH_STAMP)
	$(VENV)/bin/asv machine --yes > /dev/null
	$(VENV)/bin/asv check --python=same
	$(VENV)/bin/asv run --python=same --quick --show-stderr
	$(PY) benchmarks/compare.py --quick

# The differential fuzzer against PyTorch (needs torch in .venv: the test extra installs it):
# N seeded random programs, each statement compared; a summary of mismatches by class with the
# smallest repro of each. `make fuzz N=10000` runs more.
N ?= 1000

fuzz: $(STAMP)
	$(PY) tests/fuzz.py --seeds 0:$(N)

clean:
	rm -rf $(VENV) .pytest_cache $(WHEEL_DIR)
