"""``utils.benchmark``: ``Measurement``'s statistics and printed summary against PyTorch's on the
same times, and ``Timer``'s runs (numbers of runs and blocks, globals, threads, setup)."""

import numpy as np
import pytest

import numbagrad as ng
import numbagrad.utils.benchmark as nb

tb = pytest.importorskip("torch.utils.benchmark")

CASES = [
    (100, [0.00045], dict(stmt="f(x)", setup="pass")),
    (10, [0.001, 0.0012, 0.0011, 0.0013, 0.00105], dict(stmt="f(x)", setup="y = 1",
                                                       label="lbl", sub_label="sub",
                                                       description="desc")),
    (1000, [2.0, 2.9, 2.1, 2.2, 3.5, 2.05], dict(stmt="a = 1\nb = a + 1", setup="pass",
                                              num_threads=2)),
    (3, [3e-8, 3.1e-8], dict(stmt="x * y", setup="import math\nz = 2", sub_label="s")),
]


@pytest.mark.parametrize("number, raw, spec", CASES)
def test_measurement_reads_as_pytorchs(number, raw, spec):
    ours = nb.Measurement(number, raw, nb.TaskSpec(**spec))
    theirs = tb.Measurement(number, raw, tb.utils.common.TaskSpec(**spec))
    assert ours.median == pytest.approx(theirs.median, rel=1e-12)
    assert ours.mean == pytest.approx(theirs.mean, rel=1e-12)
    assert ours.iqr == pytest.approx(theirs.iqr, rel=1e-12, abs=1e-20)
    assert ours.times == pytest.approx(theirs.times)
    assert ours.title == theirs.title and ours.has_warnings == theirs.has_warnings
    # (the first line names the object and its address)
    assert repr(ours).splitlines()[1:] == repr(theirs).splitlines()[1:]


def test_timer_runs_the_statement_with_its_globals_and_threads():
    calls = []

    def f(x):
        calls.append(ng.get_num_threads())
        return x * 2

    x = ng.ones(3)
    m = nb.Timer("f(x)", globals={"f": f, "x": x}, num_threads=1).timeit(5)
    assert m.number_per_run == 5 and len(m.raw_times) == 1 and m.stmt == "f(x)"
    assert len(calls) == 7 and set(calls) == {1}  # (two warm-up runs, as PyTorch, then the five)
    # ``torch`` is in the statement's globals, as PyTorch puts itself there
    m = nb.Timer("torch.ones(2) + k", setup="k = 3").blocked_autorange(min_run_time=0.01)
    assert sum(m.raw_times) >= 0.01 and m.number_per_run >= 1 and m.median > 0
    assert repr(m).splitlines()[1:3] == ["torch.ones(2) + k", "setup: k = 3"]
    m = nb.Timer("x.sum()", globals={"x": x}).adaptive_autorange(max_run_time=0.05)
    assert len(m.raw_times) >= 1 and m.mean > 0
    with pytest.raises(NameError):
        nb.Timer("undefined_name").timeit(1)
