"""What a profile holds: one ``FunctionEvent`` per op call or labelled block, the ``EventList``
of them, its averages by name (``key_averages``) and PyTorch's text table of those."""

from __future__ import annotations

import enum
import json
import os
import threading

KB, MB, GB = 1024, 1024**2, 1024**3


class DeviceType(enum.Enum):
    CPU = 0
    CUDA = 1


class Interval:
    """An event's time span, in microseconds from the profile's start."""

    def __init__(self, start, end):
        self.start = start
        self.end = end

    def elapsed_us(self):
        return self.end - self.start


def format_time(us) -> str:
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def format_memory(nbytes) -> str:
    for size, unit in ((GB, "GB"), (MB, "MB"), (KB, "KB")):
        if abs(nbytes) >= size:
            return f"{nbytes / size:.2f} {unit}"
    return f"{nbytes} B"


class _Times:
    """The time and memory figures events and averages share, with PyTorch's names; numbagrad
    profiles the CPU only, so every device figure is zero."""

    device_time_total = self_device_time_total = 0.0
    cuda_time_total = self_cuda_time_total = 0.0
    device_memory_usage = self_device_memory_usage = 0
    cuda_memory_usage = self_cuda_memory_usage = 0
    device_type = DeviceType.CPU
    is_async = is_remote = is_legacy = False
    node_id = -1
    flops = 0

    @property
    def cpu_time(self):
        return self.cpu_time_total / max(self.count, 1)

    device_time = cuda_time = property(lambda self: 0.0)

    @property
    def cpu_time_str(self):
        return format_time(self.cpu_time)

    @property
    def cpu_time_total_str(self):
        return format_time(self.cpu_time_total)

    @property
    def self_cpu_time_total_str(self):
        return format_time(self.self_cpu_time_total)


class FunctionEvent(_Times):
    """One op call or ``record_function`` block: its name, span, inputs' shapes, the events
    it ran (``cpu_children``) and the one it ran in (``cpu_parent``)."""

    def __init__(self, id, name, thread, start_us, end_us, input_shapes=None, stack=None,
                 is_user_annotation=False, cpu_memory_usage=0, input_dtypes=None):
        self.id = id
        self.name = name
        self.key = name
        self.thread = thread
        self.time_range = Interval(start_us, end_us)
        self.input_shapes = input_shapes if input_shapes is not None else []
        self.input_dtypes = input_dtypes if input_dtypes is not None else []
        self.concrete_inputs = []
        self.stack = stack if stack is not None else []
        self.is_user_annotation = is_user_annotation
        self.cpu_children: list = []
        self.cpu_parent = None
        self.count = 1
        self.sequence_nr = -1
        self.overload_name = ""
        self.scope = 0
        self.kernels: list = []
        self.trace_name = None
        # bytes the event's own code allocated (not its children's)
        self.self_cpu_memory_usage = cpu_memory_usage

    def append_cpu_child(self, child):
        self.cpu_children.append(child)

    def set_cpu_parent(self, parent):
        self.cpu_parent = parent

    @property
    def cpu_time_total(self):
        return self.time_range.elapsed_us()

    @property
    def self_cpu_time_total(self):
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def cpu_memory_usage(self):
        return self.self_cpu_memory_usage + sum(c.cpu_memory_usage for c in self.cpu_children)

    def __repr__(self):
        return (f"<FunctionEvent id={self.id} name={self.name} device_type={self.device_type} "
                f"cpu_time={self.cpu_time_str} start_us={self.time_range.start} "
                f"end_us={self.time_range.end} "
                f"cpu_children={[c.id for c in self.cpu_children]} thread={self.thread} "
                f"input_shapes={self.input_shapes} cpu_memory_usage={self.cpu_memory_usage}>")


class FunctionEventAvg(_Times):
    """The events of one key summed: calls, total and self times, memory."""

    def __init__(self):
        self.key = None
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.cpu_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.input_shapes = None
        self.stack = None
        self.is_user_annotation = False
        self.cpu_children = None
        self.cpu_parent = None
        self.overload_name = ""
        self.scope = None

    def add(self, other):
        if self.key is None:
            self.key = other.key
            self.input_shapes = other.input_shapes
            self.stack = other.stack
            self.is_user_annotation = other.is_user_annotation
        self.count += other.count
        self.cpu_time_total += other.cpu_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        self.cpu_memory_usage += other.cpu_memory_usage
        self.self_cpu_memory_usage += other.self_cpu_memory_usage
        return self

    def __iadd__(self, other):
        return self.add(other)

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total_str}"
                f" cpu_time={self.cpu_time_str}  self_cuda_time=0.000us cuda_time=0.000us "
                f"input_shapes={self.input_shapes or ''} cpu_memory_usage="
                f"{self.cpu_memory_usage} cuda_memory_usage=0>")


def _step_key(name):
    """The steps' blocks ("ProfilerStep#3") average under one key, as PyTorch's."""
    return "ProfilerStep*" if name.startswith("ProfilerStep#") else name


class EventList(list):
    """A profile's events, in the order they started."""

    def __init__(self, *args, profile_memory=False, with_stack=False, trace_start_ns=0,
                 **kwargs):
        super().__init__(*args, **kwargs)
        self._profile_memory = profile_memory
        self._with_stack = with_stack
        self._trace_start_ns = trace_start_ns

    def _like(self, items):
        return EventList(items, profile_memory=self._profile_memory,
                         with_stack=self._with_stack, trace_start_ns=self._trace_start_ns)

    @property
    def self_cpu_time_total(self):
        return sum(e.self_cpu_time_total for e in self)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        """The events averaged by name (and input shapes, and the first ``group_by_stack_n``
        frames of their stacks), in the order each key first appears."""
        groups: dict = {}
        for e in self:
            key = [_step_key(e.key)]
            if group_by_input_shape:
                key.append(str(e.input_shapes))
            if group_by_stack_n > 0:
                key.append(tuple(e.stack[:group_by_stack_n]))
            avg = groups.get(tuple(key))
            if avg is None:
                avg = groups[tuple(key)] = FunctionEventAvg()
            avg.add(e)
            avg.key = key[0]
            if not group_by_input_shape:
                avg.input_shapes = ""
            if group_by_stack_n <= 0:
                avg.stack = []
        return self._like(groups.values())

    def total_average(self):
        total = FunctionEventAvg()
        for e in self:
            total.add(e)
        total.key = "Total"
        return total

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False, time_unit=None):
        """PyTorch's table of these events (or averages), sorted by the attribute ``sort_by``
        (largest first) and cut to ``row_limit`` rows."""
        return build_table(self, sort_by, row_limit, max_src_column_width,
                           max_name_column_width, max_shapes_column_width, header,
                           top_level_events_only, time_unit)

    def __str__(self):
        return self.table()

    def export_chrome_trace(self, path):
        """Write the events as a Chrome trace (JSON, chrome://tracing and Perfetto)."""
        pid = os.getpid()
        events = [
            {"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "ts": 0,
             "args": {"name": "python"}},
            {"ph": "M", "name": "process_labels", "pid": pid, "tid": 0, "ts": 0,
             "args": {"labels": "CPU"}},
        ]
        threads = sorted({e.thread for e in self if hasattr(e, "time_range")})
        for tid in threads:
            events.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "ts": 0,
                           "args": {"name": f"thread {tid} (python)"}})
        for k, e in enumerate(self):
            args = {"External id": e.id, "Ev Idx": k}
            if e.input_shapes:
                args["Input Dims"] = e.input_shapes
                args["Input type"] = e.input_dtypes
            events.append({
                "ph": "X", "cat": "user_annotation" if e.is_user_annotation else "cpu_op",
                "name": getattr(e, "trace_name", None) or e.name, "pid": pid,
                "tid": e.thread, "ts": e.time_range.start, "dur": e.cpu_time_total,
                "args": args,
            })
        trace = {"schemaVersion": 1, "deviceProperties": [], "displayTimeUnit": "ms",
                 "baseTimeNanoseconds": self._trace_start_ns, "traceEvents": events,
                 "traceName": str(path)}
        with open(path, "w") as f:
            json.dump(trace, f)


# ---------------------------------------------------------------- the table


def build_table(events, sort_by, row_limit, max_src_column_width, max_name_column_width,
                max_shapes_column_width, header, top_level_events_only, time_unit):
    if len(events) == 0:
        return ""
    profile_memory = getattr(events, "_profile_memory", False)
    rows = list(events)
    if sort_by is not None:
        rows.sort(key=lambda e: getattr(e, sort_by), reverse=True)  # (stable: ties keep order)
    if top_level_events_only:
        rows = [e for e in rows if e.cpu_parent is None]
    return _render(rows, profile_memory, row_limit, max_src_column_width,
                   max_name_column_width, max_shapes_column_width, header, time_unit)


def _render(rows, profile_memory, row_limit, max_src, max_name, max_shapes, header,
            time_unit):
    name_width = min(max(len(e.key) for e in rows) + 4, max_name)
    has_shapes = any(e.input_shapes for e in rows)
    shapes_width = (min(max(len(str(e.input_shapes)) for e in rows) + 4, max_shapes)
                    if has_shapes else 0)
    has_stack = any(e.stack for e in rows)
    stack_width = (min(max(len(s) for e in rows for s in e.stack) + 4, max_src)
                   if has_stack else 0)

    headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    if profile_memory:
        headers += ["CPU Mem", "Self CPU Mem"]
    headers.append("# of Calls")
    widths = [name_width] + [12] * (len(headers) - 1)
    if has_shapes:
        headers.append("Input Shapes")
        widths.append(shapes_width)
    if has_stack:
        headers.append("Source Location")
        widths.append(stack_width)

    def line(cells):
        return "".join(str(c).rjust(w) + "  " for c, w in zip(cells, widths)) + "\n"

    rule = "".join("-" * w + "  " for w in widths) + "\n"
    total = sum(e.self_cpu_time_total for e in rows)

    def fmt(us):
        if time_unit == "s":
            return f"{us / 1e6:.3f}s"
        if time_unit == "ms":
            return f"{us / 1e3:.3f}ms"
        if time_unit == "us":
            return f"{us:.3f}us"
        return format_time(us)

    def percent(us):
        return f"{us * 100 / total:.2f}%" if total else "0.00%"

    def cut(text, width):
        return text if len(text) <= width - 3 else text[:width - 3] + "..."

    out = ""
    if header is not None:
        out += "=" * len(rule.rstrip("\n")) + "\n" + header + "\n"
    out += rule + line(headers) + rule
    for e in rows[:row_limit] if row_limit is not None and row_limit > 0 else rows:
        cells = [cut(e.key, name_width), percent(e.self_cpu_time_total),
                 fmt(e.self_cpu_time_total), percent(e.cpu_time_total),
                 fmt(e.cpu_time_total), fmt(e.cpu_time)]
        if profile_memory:
            cells += [format_memory(e.cpu_memory_usage), format_memory(e.self_cpu_memory_usage)]
        cells.append(e.count)
        if has_shapes:
            cells.append(cut(str(e.input_shapes), shapes_width))
        stack = list(e.stack or [])
        if has_stack:
            cells.append(cut(stack[0], stack_width) if stack else "")
        out += line(cells)
        # (each further frame of the stack on a row of its own, the other cells empty)
        for frame in stack[1:]:
            out += line([""] * (len(cells) - 1) + [cut(frame, stack_width)])
    out += rule
    out += f"Self CPU time total: {fmt(total)}\n"
    return out


_thread_ids: dict = {}
_thread_lock = threading.Lock()


def thread_number() -> int:
    """The current thread's number in profiles: 1, 2, ... in the order threads are first seen
    (PyTorch numbers its threads in events the same way)."""
    ident = threading.get_ident()
    n = _thread_ids.get(ident)
    if n is None:
        with _thread_lock:
            n = _thread_ids.setdefault(ident, len(_thread_ids) + 1)
    return n
