"""``numbagrad.profiler``: PyTorch's profiler, CPU activity only.

``profile`` times every op numbagrad runs (named as PyTorch names them: ``aten::addmm``) and
every ``record_function`` block, with self and total times, input shapes
(``record_shapes``), the bytes of new results (``profile_memory``: allocations only, frees
are not seen) and the Python stack (``with_stack``). A ``schedule`` records some steps only;
``on_trace_ready`` gets the profile at the end of each recorded cycle.
"""

from __future__ import annotations

import enum
import gzip
import os
import socket
import time
import warnings

from .._tensor import warn_once
from ..autograd import profiler
from ..autograd.profiler import record_function
from ._events import DeviceType, EventList
from ._record import Recorder

__all__ = ["profile", "record_function", "schedule", "supported_activities",
           "tensorboard_trace_handler", "ProfilerAction", "ProfilerActivity", "DeviceType",
           "kineto_available", "EventList", "profiler"]


class ProfilerActivity(enum.Enum):
    CPU = 0
    XPU = 1
    CUDA = 2
    HPU = 3
    MTIA = 4
    PrivateUse1 = 5

    def __str__(self):
        return f"ProfilerActivity.{self.name}"

    def __int__(self):
        return self.value


class ProfilerAction(enum.Enum):
    """What the profiler does at a step."""

    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3
    DEVICE_STOPPED = 4


def supported_activities() -> set:
    return {ProfilerActivity.CPU}


def kineto_available() -> bool:
    return True


def schedule(*, wait: int, warmup: int, active: int, repeat: int = 0, skip_first: int = 0,
             skip_first_wait: int = 0):
    """The action of each step: ``skip_first`` steps skipped, then cycles of ``wait`` steps
    idle, ``warmup`` steps warming up and ``active`` steps recorded (the last one saves), at
    most ``repeat`` cycles (0: no limit). ``skip_first_wait``: the first cycle does not wait."""
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError(
            f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), warmup="
            f"{warmup} (need >= 0), active={active} (need > 0), repeat={repeat} (need >= 0), "
            f"skip_first={skip_first} (need >= 0).")
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results",
                      stacklevel=2)
    cycle = wait + warmup + active

    def action(step: int) -> ProfilerAction:
        if step < 0:
            raise AssertionError(f"Step must be non-negative. Got {step}.")
        if step < skip_first:
            return ProfilerAction.NONE
        # (skip_first_wait: the count starts as if the first wait were over)
        k = step - skip_first + (wait if skip_first_wait else 0)
        if repeat and k >= repeat * cycle:
            return ProfilerAction.NONE
        k %= cycle
        if k < wait:
            return ProfilerAction.NONE
        if k < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if k < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    return action


def tensorboard_trace_handler(dir_name: str, worker_name: str | None = None,
                              use_gzip: bool = False, use_python_export: bool = False):
    """An ``on_trace_ready`` that writes each trace into ``dir_name`` as TensorBoard's profiler
    plugin reads them: ``<worker>.<time>.pt.trace.json`` (``.gz`` with ``use_gzip``)."""

    def handler(prof) -> None:
        os.makedirs(dir_name, exist_ok=True)
        worker = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        name = f"{worker}.{time.time_ns()}.pt.trace.json" + (".gz" if use_gzip else "")
        path = os.path.join(dir_name, name)
        if use_gzip:
            plain = path[:-3]
            prof.export_chrome_trace(plain)
            with open(plain, "rb") as f, gzip.open(path, "wb") as g:
                g.write(f.read())
            os.remove(plain)
        else:
            prof.export_chrome_trace(path)

    return handler


WARN_CYCLES = ("Warning: Profiler clears events at the end of each cycle. Only events from "
               "the current cycle will be reported. To keep events across cycles, set "
               "acc_events=True.")

_RECORDING = (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)


class profile:
    """Profile the block (a context manager, or ``start``/``stop``); ``step`` marks the end of
    a training step for the ``schedule``."""

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None,
                 record_shapes=False, profile_memory=False, with_stack=False, with_flops=False,
                 with_modules=False, experimental_config=None, execution_trace_observer=None,
                 acc_events=False, use_cuda=None, custom_trace_id_callback=None,
                 post_processing_timeout_s=None):
        self.activities = set(activities) if activities else supported_activities()
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.with_modules = with_modules
        self.acc_events = acc_events
        self.on_trace_ready = on_trace_ready
        self.record_steps = schedule is not None
        self.schedule = schedule if schedule is not None else (
            lambda step: ProfilerAction.RECORD)
        self.step_num = 0
        self.current_action = self.schedule(0)
        self.profiler = None  # the autograd profile of the cycle recorded last
        self._recorder = None
        self._events: list = []  # the cycles' events kept (acc_events)
        self._step_label = None

    # the cycle's stages (PyTorch's transitions between actions)

    def _prepare(self):
        if self.profiler is not None and not self.acc_events:
            warn_once("profiler_cycles", WARN_CYCLES, stacklevel=4)

    def _start_trace(self):
        self._recorder = Recorder(self.record_shapes, self.profile_memory, self.with_stack)
        self._recorder.start()

    def _stop_trace(self):
        if self._recorder is None:
            return
        events = self._recorder.stop()
        self._recorder = None
        if self.acc_events:
            self._events.extend(events)
            events = EventList(self._events, profile_memory=self.profile_memory,
                               with_stack=self.with_stack)
        self.profiler = profiler.profile(record_shapes=self.record_shapes,
                                         profile_memory=self.profile_memory,
                                         with_stack=self.with_stack)
        self.profiler.function_events = events

    def _trace_ready(self):
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def _transit(self, prev, now):
        A = ProfilerAction
        if prev is A.NONE:
            if now is not A.NONE:
                self._prepare()
            if now in _RECORDING:
                self._start_trace()
        elif prev is A.WARMUP:
            if now is A.NONE:
                warnings.warn("Incorrect schedule: WARMUP followed by NONE", stacklevel=4)
            elif now in _RECORDING:
                self._start_trace()
            elif now is None:
                self._stop_trace()
        elif prev is A.RECORD:
            if now in (A.NONE, A.WARMUP):
                warnings.warn(f"Incorrect schedule: RECORD followed by {now.name}",
                              stacklevel=4)
                self._stop_trace()
            elif now is None:
                self._stop_trace()
                self._trace_ready()
        elif prev is A.RECORD_AND_SAVE:
            self._stop_trace()
            self._trace_ready()
            if now in (A.WARMUP, A.RECORD, A.RECORD_AND_SAVE):
                self._prepare()
            if now in _RECORDING:
                self._start_trace()

    def _open_step(self):
        if self.record_steps:
            self._step_label = record_function(f"ProfilerStep#{self.step_num}")
            self._step_label.__enter__()

    def _close_step(self):
        if self._step_label is not None:
            self._step_label.__exit__(None, None, None)
            self._step_label = None

    def start(self):
        self._transit(ProfilerAction.NONE, self.current_action)
        self._open_step()

    def stop(self):
        self._close_step()
        self._transit(self.current_action, None)

    def step(self):
        """The next step starts: the schedule's action for it is taken."""
        self._close_step()
        prev = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        self._transit(prev, self.current_action)
        self._open_step()

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    # results (those of the last recorded cycle)

    def _finished(self):
        if self.profiler is None:
            raise AssertionError("Profiler must be initialized before exporting chrome trace")
        return self.profiler

    def events(self):
        return self._finished().function_events

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        return self._finished().key_averages(group_by_input_shape, group_by_stack_n,
                                             group_by_overload_name)

    def export_chrome_trace(self, path):
        return self._finished().export_chrome_trace(path)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        """Each event's stack and ``metric`` (microseconds) in the folded format of
        FlameGraph, one line per event that has a stack."""
        with open(path, "w") as f:
            for e in self.events():
                if e.stack:
                    f.write(";".join(reversed(e.stack)) + f" {int(getattr(e, metric))}\n")
