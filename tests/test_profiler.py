"""numbagrad.profiler (and torch.autograd.profiler's names) against PyTorch's: which events a
profile holds, their nesting, counts and shapes, the table's layout, the schedule's steps, the
Chrome trace; timings themselves cannot match."""

import glob
import json
import re
import warnings

import numpy as np
import pytest

import numbagrad as ng
from numbagrad.ops import dispatch, observe

torch = pytest.importorskip("torch")

PROFILERS = {"ng": ng.profiler, "torch": torch.profiler}


def _model(lib):
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(8, 16), lib.nn.ReLU(), lib.nn.Linear(16, 4))
    x = lib.tensor(np.linspace(-1, 1, 40, dtype=np.float32).reshape(5, 8))
    return model, x


def _profile(lib, **kw):
    P = lib.profiler
    model, x = _model(lib)
    with P.profile(activities=[P.ProfilerActivity.CPU], **kw) as prof:
        with P.record_function("model_inference"):
            model(x)
    return prof


def _counts(prof, names):
    return {a.key: a.count for a in prof.key_averages() if a.key in names}


def _header(table):
    """The table's column names."""
    return re.split(r"\s{2,}", table.splitlines()[1].strip())


def _rows(table):
    """The table's rows, each its cells."""
    lines = table.splitlines()
    return [re.split(r"\s{2,}", ln.strip()) for ln in lines[3:] if not ln.startswith("-")
            and not ln.startswith("Self CPU")]


NAMES = {"model_inference", "aten::linear", "aten::addmm", "aten::t", "aten::relu"}


def test_events_names_counts_and_nesting_as_pytorch():
    got, want = _profile(ng, record_shapes=True), _profile(torch, record_shapes=True)
    assert _counts(got, NAMES) == _counts(want, NAMES) == {
        "model_inference": 1, "aten::linear": 2, "aten::addmm": 2, "aten::t": 2,
        "aten::relu": 1}
    for prof in (got, want):
        events = prof.events()
        top = [e for e in events if e.cpu_parent is None]
        assert [e.name for e in top] == ["model_inference"]
        linears = [e for e in events if e.name == "aten::linear"]
        assert [c.name for c in linears[0].cpu_children] == ["aten::t", "aten::addmm"]
        assert linears[0].cpu_parent.name == "model_inference"
        assert linears[0].input_shapes == [[5, 8], [16, 8], [16]]
        assert [e.input_shapes for e in events if e.name == "aten::relu"] == [[[5, 16]]]
        for e in events:
            children = sum(c.cpu_time_total for c in e.cpu_children)
            assert e.self_cpu_time_total == pytest.approx(e.cpu_time_total - children)
            assert e.cpu_time_total >= children - 1e-6
        assert [e.id for e in events] == sorted(e.id for e in events)
    starts = [e.time_range.start for e in got.events()]
    assert starts == sorted(starts)


def test_table_layout_as_pytorch():
    got, want = _profile(ng, record_shapes=True), _profile(torch, record_shapes=True)
    for by in ("cpu_time_total", "self_cpu_time_total", "count", None):
        tables = [p.key_averages().table(sort_by=by, row_limit=3) for p in (got, want)]
        assert _header(tables[0]) == _header(tables[1]) == [
            "Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg",
            "# of Calls"]
        for t in tables:
            lines = t.splitlines()
            assert lines[0] == lines[2] == lines[-2] and set(lines[0]) == {"-", " "}
            assert re.fullmatch(r"Self CPU time total: \d+\.\d{3}(us|ms|s)", lines[-1])
            assert t.endswith("\n") and len(_rows(t)) == 3
            # the other columns are 12 wide, each cell followed by two spaces
            assert lines[0].split("  ")[1:-1] == ["-" * 12] * 6
        averages = list(got.key_averages())
        if by is not None:
            averages.sort(key=lambda a: getattr(a, by), reverse=True)
        assert [r[0] for r in _rows(tables[0])] == [a.key for a in averages[:3]]
    # the name column: the longest name + 4
    t = got.key_averages().table()
    width = max(len(a.key) for a in got.key_averages()) + 4
    assert t.splitlines()[0].startswith("-" * width + "  ")


def test_table_grouped_by_input_shape_as_pytorch():
    got, want = _profile(ng, record_shapes=True), _profile(torch, record_shapes=True)
    tables = [p.key_averages(group_by_input_shape=True).table(sort_by="cpu_time_total")
              for p in (got, want)]
    assert _header(tables[0])[-2:] == _header(tables[1])[-2:] == ["# of Calls", "Input Shapes"]
    rows = [{(r[0], r[-1]) for r in _rows(t) if r[0] in NAMES} for t in tables]
    assert rows[0] == {
        ("model_inference", "[]"), ("aten::linear", "[[5, 8], [16, 8], [16]]"),
        ("aten::linear", "[[5, 16], [4, 16], [4]]"), ("aten::relu", "[[5, 16]]"),
        ("aten::t", "[[16, 8]]"), ("aten::t", "[[4, 16]]"),
        ("aten::addmm", "[[16], [5, 8], [8, 16]]"), ("aten::addmm", "[[4], [5, 16], [16, 4]]")}
    # (PyTorch's addmm also lists its beta and alpha)
    assert {r for r in rows[0] if r[0] != "aten::addmm"} <= rows[1]
    # without shapes recorded there is no column
    assert "Input Shapes" not in _profile(ng).key_averages(group_by_input_shape=True).table()


def test_memory_columns_as_pytorch():
    got = _profile(ng, profile_memory=True).key_averages()
    want = _profile(torch, profile_memory=True).key_averages()
    tables = [p.table(sort_by="self_cpu_memory_usage") for p in (got, want)]
    assert _header(tables[0]) == _header(tables[1]) == [
        "Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg", "CPU Mem",
        "Self CPU Mem", "# of Calls"]
    for name in ("aten::addmm", "aten::linear"):
        g = next(a for a in got if a.key == name)
        w = next(a for a in want if a.key == name)
        assert (g.cpu_memory_usage, g.self_cpu_memory_usage) == (
            w.cpu_memory_usage, w.self_cpu_memory_usage)
    assert re.search(r"aten::addmm.*\s400 B\s+400 B\s+2", tables[0])


def test_invalid_sort_key_as_pytorch():
    for lib in (ng, torch):
        with pytest.raises(AttributeError, match="'FunctionEventAvg' object has no attribute "
                                                 "'nope'"):
            _profile(lib).key_averages().table(sort_by="nope")


def test_record_function_as_decorator_nested_and_idle():
    for lib in (ng, torch):
        P = lib.profiler

        @P.record_function("deco")
        def f(a):
            with P.record_function("inner"):
                return a.relu()

        x = lib.ones(2, 3)
        assert f(x).tolist() == [[1.0] * 3] * 2  # (no profile: nothing recorded, no error)
        with P.profile() as prof:
            f(x)
        events = prof.events()
        assert [e.name for e in events][:3] == ["deco", "inner", "aten::relu"]
        assert events[1].cpu_parent is events[0] and events[2].cpu_parent is events[1]
        with lib.profiler.record_function("x") as rf:
            assert isinstance(rf, P.record_function)


def test_autograd_profiler_aliases():
    for lib in (ng, torch):
        AP = lib.autograd.profiler
        x = lib.ones(2, 3)
        with AP.profile(record_shapes=True) as prof:
            with AP.record_function("block"):
                x.relu()
        events = prof.function_events
        assert [e.name for e in events][:2] == ["block", "aten::relu"]
        assert str(prof) == prof.table() and "Input Shapes" in str(prof)
        assert isinstance(prof.key_averages(), AP.EventList)
        assert prof.self_cpu_time_total == pytest.approx(
            sum(e.self_cpu_time_total for e in events))
        with AP.profile(enabled=False) as off:
            x.relu()
        assert off is None


def test_enums_as_pytorch():
    for name in ("ProfilerActivity", "ProfilerAction"):
        got, want = getattr(ng.profiler, name), getattr(torch.profiler, name)
        assert {n: int(m.value) for n, m in got.__members__.items()} == {
            n: int(m.value) for n, m in want.__members__.items()}
        assert str(got.CUDA if name == "ProfilerActivity" else got.NONE) == str(
            want.CUDA if name == "ProfilerActivity" else want.NONE)
    assert ng.profiler.supported_activities() == {ng.profiler.ProfilerActivity.CPU}


@pytest.mark.parametrize("kw", [
    dict(wait=1, warmup=1, active=2, repeat=1, skip_first=1), dict(wait=1, warmup=1, active=2),
    dict(wait=0, warmup=1, active=3, repeat=2), dict(wait=2, warmup=1, active=1, skip_first=3,
                                                     skip_first_wait=1),
])
def test_schedule_actions_as_pytorch(kw):
    got, want = ng.profiler.schedule(**kw), torch.profiler.schedule(**kw)
    assert [got(i).name for i in range(20)] == [want(i).name for i in range(20)]


def test_schedule_refusals_and_warning_as_pytorch():
    for lib in (ng, torch):
        with pytest.raises(AssertionError, match=re.escape(
                "Invalid profiler schedule arguments. Got wait=0 (need >= 0), warmup=0 (need "
                ">= 0), active=0 (need > 0), repeat=0 (need >= 0), skip_first=0 (need >= 0).")):
            lib.profiler.schedule(wait=0, warmup=0, active=0)
        with pytest.warns(UserWarning, match="Profiler won't be using warmup"):
            lib.profiler.schedule(wait=0, warmup=0, active=1)


def _scheduled(lib, **kw):
    """Labels recorded per on_trace_ready call over 10 steps, and those of the last cycle."""
    P = lib.profiler
    calls = []

    def ready(p):
        calls.append((p.step_num, sorted({e.name for e in p.events()
                                          if not e.name.startswith("aten::")})))

    x = lib.ones(2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with P.profile(schedule=P.schedule(**kw), on_trace_ready=ready) as p:
            for i in range(10):
                with P.record_function(f"step{i}"):
                    x = x + 1
                p.step()
    last = p.key_averages() if p.profiler is not None else None
    return calls, last and {a.key: a.count for a in last if not a.key.startswith("aten::")}


@pytest.mark.parametrize("kw", [dict(wait=1, warmup=1, active=2, repeat=2),
                                dict(wait=0, warmup=0, active=1, repeat=3, skip_first=4),
                                dict(wait=1, warmup=1, active=3)])
def test_scheduled_steps_as_pytorch(kw):
    assert _scheduled(ng, **kw) == _scheduled(torch, **kw)


def test_results_unchanged_and_everything_restored():
    model, x = _model(ng)
    out = model(x)
    out.sum().backward()
    plain = [out.detach().numpy()] + [p.grad.numpy().copy() for p in model.parameters()]
    linear = ng.nn.functional.linear
    model.zero_grad()
    with ng.profiler.profile(record_shapes=True, profile_memory=True, with_stack=True):
        assert ng.nn.functional.linear is not linear and not dispatch.FAST_PATH
        out = model(x)
        out.sum().backward()
    profiled = [out.detach().numpy()] + [p.grad.numpy() for p in model.parameters()]
    for a, b in zip(plain, profiled, strict=True):
        np.testing.assert_array_equal(a, b)
    assert ng.nn.functional.linear is linear and dispatch.FAST_PATH
    assert not observe.OBSERVERS and not observe.BEFORE


def test_op_that_raises_leaves_the_profile_consistent():
    with ng.profiler.profile() as prof:
        with ng.profiler.record_function("outer"):
            with pytest.raises(RuntimeError):
                ng.mm(ng.ones(2, 3), ng.ones(2, 3))
            ng.ones(2).relu()
    events = prof.events()
    assert [e.name for e in events] == ["outer", "aten::relu"]
    assert events[1].cpu_parent is events[0]


def test_chrome_trace_and_tensorboard_handler(tmp_path):
    prof = _profile(ng, record_shapes=True)
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())
    ops = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert [e["name"] for e in ops] == [e.name for e in prof.events()]
    for e in ops:
        assert e["cat"] in ("cpu_op", "user_annotation")
        assert isinstance(e["ts"], float) and e["dur"] >= 0
    addmm = next(e for e in ops if e["name"] == "aten::addmm")
    assert addmm["args"]["Input Dims"] == [[16], [5, 8], [8, 16]]
    assert next(e for e in ops if e["name"] == "model_inference")["cat"] == "user_annotation"

    handler = ng.profiler.tensorboard_trace_handler(str(tmp_path / "tb"), worker_name="w")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with ng.profiler.profile(schedule=ng.profiler.schedule(wait=0, warmup=1, active=1,
                                                               repeat=1),
                                 on_trace_ready=handler) as p:
            for _ in range(3):
                ng.ones(2).relu()
                p.step()
    files = glob.glob(str(tmp_path / "tb" / "w.*.pt.trace.json"))
    assert len(files) == 1
    with open(files[0]) as f:
        names = [e["name"] for e in json.load(f)["traceEvents"] if e["ph"] == "X"]
    assert names == ["ProfilerStep#1", "aten::relu"]
