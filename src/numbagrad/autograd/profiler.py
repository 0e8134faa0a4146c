"""``numbagrad.autograd.profiler``: PyTorch's older profiler API (``profile``,
``record_function``), on the recorder of ``numbagrad.profiler``."""

from __future__ import annotations

import contextlib

from ..profiler import _record
from ..profiler._events import EventList, FunctionEvent, FunctionEventAvg  # noqa: F401

__all__ = ["profile", "record_function", "EventList", "FunctionEvent", "FunctionEventAvg"]


class record_function(contextlib.ContextDecorator):
    """Label a block (or, as a decorator, each call of a function) with ``name`` in the
    profiles recording now; nothing while none records."""

    def __init__(self, name: str, args: str | None = None):
        self.name = name
        self.args = args
        self._frames: list = []

    def __enter__(self):
        self._frames = _record.open_label(self.name) if _record.ACTIVE else []
        return self

    def __exit__(self, *exc):
        _record.close_label(self._frames)
        self._frames = []
        return False


class profile:
    """Profile the block: ``events()``, ``key_averages()``, ``table()`` and
    ``export_chrome_trace`` once it is over."""

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False,
                 with_flops=False, profile_memory=False, with_stack=False, with_modules=False,
                 use_kineto=False, use_cpu=True, experimental_config=None, acc_events=False,
                 custom_trace_id_callback=None, post_processing_timeout_s=None,
                 activity_filters=None):
        self.enabled = enabled
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.function_events = None
        self._recorder = None

    def __enter__(self):
        if not self.enabled:
            return None  # (as PyTorch's: ``with profile(enabled=False) as p`` binds None)
        self._recorder = _record.Recorder(self.record_shapes, self.profile_memory,
                                          self.with_stack)
        self._recorder.start()
        return self

    def __exit__(self, *exc):
        if self._recorder is not None:
            self.function_events = self._recorder.stop()
            self._recorder = None
        return False

    def _check_finish(self):
        if self.function_events is None:
            raise RuntimeError("Profiler didn't finish running")

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        self._check_finish()
        return self.function_events.key_averages(group_by_input_shape, group_by_stack_n,
                                                 group_by_overload_name)

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False, time_unit=None):
        self._check_finish()
        return self.function_events.table(sort_by, row_limit, max_src_column_width,
                                          max_name_column_width, max_shapes_column_width,
                                          header, top_level_events_only, time_unit)

    def export_chrome_trace(self, path):
        self._check_finish()
        return self.function_events.export_chrome_trace(path)

    def total_average(self):
        self._check_finish()
        return self.function_events.total_average()

    @property
    def self_cpu_time_total(self):
        self._check_finish()
        return self.function_events.self_cpu_time_total

    def __str__(self):
        self._check_finish()
        return str(self.function_events)
