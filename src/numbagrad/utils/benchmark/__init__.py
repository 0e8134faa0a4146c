"""``numbagrad.utils.benchmark``: PyTorch's ``Timer`` and ``Measurement``, so a script that times
its code with ``torch.utils.benchmark`` runs unchanged.

``Timer`` runs ``stmt`` through the standard library's ``timeit`` with ``torch`` (this
package) in its globals, on ``num_threads`` threads (``set_num_threads`` for the
measurement); ``timeit``, ``blocked_autorange`` and ``adaptive_autorange`` return a
``Measurement`` whose statistics (median, mean, interquartile range) and printed summary are
PyTorch's. ``Compare`` (PyTorch's table of several measurements) is not here."""

from __future__ import annotations

import math
import sys
import textwrap
import time
import timeit as _timeit
from dataclasses import dataclass

import numpy as np

from ..._settings import get_num_threads, set_num_threads

__all__ = ["Timer", "Measurement", "TaskSpec", "select_unit"]

# an interquartile range above this share of the median makes a measurement warn
_IQR_WARN = 0.1
_IQR_GROSS_WARN = 0.25


def select_unit(t: float) -> tuple[str, float]:
    """The unit (and its scale in seconds) that shows ``t`` seconds as 1 to 999 of it."""
    power = math.floor(math.log10(t) / 3) if t > 0 else 0
    unit = {-3: "ns", -2: "us", -1: "ms"}.get(power, "s")
    return unit, {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[unit]


@dataclass(frozen=True)
class TaskSpec:
    """What a ``Timer`` runs and how it is named (its globals aside)."""

    stmt: str
    setup: str
    global_setup: str = ""
    label: str | None = None
    sub_label: str | None = None
    description: str | None = None
    env: str | None = None
    num_threads: int = 1

    @property
    def title(self) -> str:
        """The label (and sub-label), else the statement."""
        suffix = f": {self.sub_label}" if self.sub_label else ""
        if self.label is not None:
            return self.label + suffix
        if "\n" not in self.stmt:
            return self.stmt + suffix
        return (f"stmt:{f' ({self.sub_label})' if self.sub_label else ''}\n"
                + textwrap.indent(self.stmt, "  "))

    def summarize(self) -> str:
        """The title, the description and the setup, a section each where given; a section
        of several lines is followed by an empty one (PyTorch's layout)."""
        setup = self.setup
        if setup == "pass" or not setup:
            setup = ""
        elif "\n" in setup:
            setup = "setup:\n" + textwrap.indent(setup, "  ")
        else:
            setup = f"setup: {setup}"
        sections = [self.title, self.description or "", setup]
        return "\n".join([f"{s}\n" if "\n" in s else s for s in sections if s])


class Measurement:
    """Times of ``number_per_run`` runs of a task (``raw_times``, seconds each) and their
    statistics per run: ``median``, ``mean``, ``iqr`` (PyTorch's linear quantiles)."""

    def __init__(self, number_per_run: int, raw_times: list, task_spec: TaskSpec,
                 metadata: dict | None = None) -> None:
        self.number_per_run = number_per_run
        self.raw_times = list(raw_times)
        self.task_spec = task_spec
        self.metadata = metadata
        t = np.sort(np.asarray(self.times, dtype=np.float64))
        self._median, self._mean = float(np.quantile(t, 0.5)), float(t.mean())
        self._p25, self._p75 = float(np.quantile(t, 0.25)), float(np.quantile(t, 0.75))

    @property
    def times(self) -> list:
        return [t / self.number_per_run for t in self.raw_times]

    @property
    def median(self) -> float:
        return self._median

    @property
    def mean(self) -> float:
        return self._mean

    @property
    def iqr(self) -> float:
        return self._p75 - self._p25

    def meets_confidence(self, threshold: float = _IQR_WARN) -> bool:
        return self.iqr / self.median < threshold

    @property
    def has_warnings(self) -> bool:
        return bool(self._warnings())

    def _warnings(self) -> list:
        if len(self.raw_times) < 4 or self.meets_confidence(_IQR_WARN):
            return []
        why = ("This suggests significant environmental influence."
               if not self.meets_confidence(_IQR_GROSS_WARN)
               else "This could indicate system fluctuation.")
        return [f"  WARNING: Interquartile range is {self.iqr / self.median * 100:.1f}% of the "
                f"median measurement.\n           {why}"]

    def __getattr__(self, name):
        # (the task's fields read through the measurement: m.stmt, m.label, m.title, ...)
        if name in ("stmt", "setup", "global_setup", "label", "sub_label", "description",
                    "env", "num_threads", "title"):
            return getattr(self.task_spec, name)
        raise AttributeError(f"'Measurement' object has no attribute '{name}'")

    def __repr__(self) -> str:
        n = len(self.raw_times)
        unit, scale = select_unit(self._median)
        threads = self.task_spec.num_threads
        lines = [f"<{type(self).__module__}.Measurement object at {hex(id(self))}>",
                 self.task_spec.summarize(),
                 f"  {'Median: ' if n > 1 else ''}{self._median / scale:.2f} {unit}"]
        if n >= 4:
            lines.append(f"  IQR:    {self.iqr / scale:.2f} {unit} ({self._p25 / scale:.2f} to "
                         f"{self._p75 / scale:.2f})")
        lines.append(f"  {n} measurement{'s' if n > 1 else ''}, {self.number_per_run} runs "
                     f"{'per measurement,' if n > 1 else ','} {threads} "
                     f"thread{'s' if threads > 1 else ''}")
        return "\n".join(lines + self._warnings())


class Timer:
    """PyTorch's ``Timer``: ``stmt`` after ``setup``, with ``globals`` (and ``torch``, this
    package, as PyTorch adds itself), timed on ``num_threads`` threads."""

    def __init__(self, stmt: str = "pass", setup: str = "pass", global_setup: str = "",
                 timer=time.perf_counter, globals: dict | None = None, label=None,
                 sub_label=None, description=None, env=None, num_threads: int = 1,
                 language="python") -> None:
        if language not in ("python", "py"):
            raise ValueError(f"numbagrad's Timer runs Python statements, not {language!r}")
        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        self._globals = dict(globals or {})
        self._globals.setdefault("torch", sys.modules[__name__.split(".")[0]])
        self._task_spec = TaskSpec(stmt=textwrap.dedent(stmt).strip() or "pass",
                                   setup=textwrap.dedent(setup).strip() or "pass",
                                   global_setup=global_setup, label=label,
                                   sub_label=sub_label, description=description, env=env,
                                   num_threads=num_threads)
        code_setup = "\n".join(s for s in (global_setup, self._task_spec.setup) if s)
        self._timer = _timeit.Timer(self._task_spec.stmt, code_setup, timer, self._globals)

    def _run(self, number: int) -> float:
        threads = get_num_threads()
        set_num_threads(self._task_spec.num_threads)
        try:
            return self._timer.timeit(number)
        finally:
            set_num_threads(threads)

    def timeit(self, number: int = 1000000) -> Measurement:
        """One measurement of ``number`` runs (after one warm-up run)."""
        self._run(1)
        return Measurement(number, [self._run(number)], self._task_spec)

    def _block_size(self) -> int:
        """Runs per block: about 1 ms of them (the fastest of three single runs, after a
        warm-up, sets the pace), so that the timer's own cost is a small share of a block."""
        self._run(1)
        once = min(self._run(1) for _ in range(3))
        return max(1, math.ceil(1e-3 / once)) if once > 0 else 1000

    def blocked_autorange(self, callback=None, min_run_time: float = 0.2) -> Measurement:
        """Blocks of runs until ``min_run_time`` seconds have been spent in them."""
        number = self._block_size()
        times, total = [], 0.0
        while total < min_run_time or not times:
            t = self._run(number)
            if callback is not None:
                callback(number, t)
            times.append(t)
            total += t
        return Measurement(number, times, self._task_spec)

    def adaptive_autorange(self, threshold: float = 0.1, *, min_run_time: float = 0.01,
                           max_run_time: float = 10.0, callback=None) -> Measurement:
        """Blocks of runs until their interquartile range is under ``threshold`` of their
        median (after at least ``min_run_time`` seconds and 4 blocks), or ``max_run_time``
        seconds."""
        number = self._block_size()
        times, total = [], 0.0
        while total < max_run_time:
            t = self._run(number)
            if callback is not None:
                callback(number, t)
            times.append(t)
            total += t
            if total >= min_run_time and len(times) >= 4 and Measurement(
                    number, times, self._task_spec).meets_confidence(threshold):
                break
        return Measurement(number, times, self._task_spec)
