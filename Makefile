# Two commands: `make demo` and `make test`. Each creates .venv and installs what it needs.
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp
PTX_STAMP := $(VENV)/.ptx-stamp
BENCH_STAMP := $(VENV)/.bench-stamp

.PHONY: demo test test-cpu test-cuda test-ptx bench clean

$(STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,demo,cudasim]'
	touch $(STAMP)

demo: $(STAMP)
	$(PY) examples/demo.py

# The CPU suite, then the CUDA tests a second time in their own process in Numba's CUDA
# simulator (on a GPU machine, `pytest -m cuda` without the variable runs them for real).
test: test-cpu test-cuda

test-cpu: $(STAMP)
	$(PY) -m pytest -q -m "not cuda and not ptx"

test-cuda: $(STAMP)
	NUMBA_ENABLE_CUDASIM=1 $(PY) -m pytest -q -m cuda

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

clean:
	rm -rf $(VENV) .pytest_cache
