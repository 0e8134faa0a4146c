"""What ``Timer`` and ``Compare`` share: ``TaskSpec`` (what was timed, and its names),
``Measurement`` (the times and their statistics) and the helpers that choose units and
round to significant figures.

Several numbers here are worked out in float32 on purpose: PyTorch computes them on
default-dtype (float32) tensors (``select_unit``'s logarithm, ``trim_sigfig``'s rounding, the
spread behind ``significant_figures``), and near a power of ten float32's rounding decides a
unit, a digit count or the last printed digit, so a table reads the same only if it rounds
the same way."""

from __future__ import annotations

import contextlib
import dataclasses
import math
import textwrap
from typing import Any, Iterable, Iterator

import numpy as np

from ...._settings import get_num_threads, set_num_threads

__all__ = ["TaskSpec", "Measurement", "select_unit", "unit_to_english", "trim_sigfig",
           "ordered_unique", "set_torch_threads"]

_MAX_SIGNIFICANT_FIGURES = 4
# (no timing is trusted to better than 25 ns, whatever its spread)
_MIN_CONFIDENCE_INTERVAL = 25e-9
# an interquartile range above these shares of the median makes a measurement warn
_IQR_WARN_THRESHOLD = 0.1
_IQR_GROSS_WARN_THRESHOLD = 0.25


def _log10_f32(x: float) -> float:
    """log10 of ``x`` as a float32 tensor's ``log10()``: of ``x`` rounded to float32, the result
    rounded to float32. (Worked in float64 and then rounded, so correctly rounded save
    in rare cases; NumPy's own float32 log10 is a few units in the last place off, enough to
    put float32(1e-6) below -6 and so in nanoseconds.)"""
    x = float(np.float32(x))
    if x <= 0 or math.isnan(x):
        return -math.inf if x == 0 else math.nan
    return float(np.float32(math.log10(x)))


@dataclasses.dataclass(init=True, repr=False, eq=True, frozen=True)
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

    def setup_str(self) -> str:
        if self.setup == "pass" or not self.setup:
            return ""
        if "\n" in self.setup:
            return "setup:\n" + textwrap.indent(self.setup, "  ")
        return f"setup: {self.setup}"

    def summarize(self) -> str:
        """The title, the description and the setup, a line each where given; a section of
        several lines is followed by an empty one."""
        sections = [self.title, self.description or "", self.setup_str()]
        return "\n".join([f"{s}\n" if "\n" in s else s for s in sections if s])


_TASKSPEC_FIELDS = tuple(f.name for f in dataclasses.fields(TaskSpec))


@dataclasses.dataclass(init=True, repr=False)
class Measurement:
    """Times of ``number_per_run`` runs of a task (``raw_times``, seconds each) and their
    statistics per run: ``median``, ``mean``, ``iqr`` (linear quantiles). Built by a
    ``Timer``, or directly from given times (as PyTorch's can be)."""

    number_per_run: int
    raw_times: list
    task_spec: TaskSpec
    metadata: dict | None = None  # (the caller's own)

    def __post_init__(self) -> None:
        # (the statistics are worked out when first read, so that an empty measurement can be
        # made and filled)
        self._sorted_times: tuple = ()
        self._warnings: tuple = ()
        self._median = self._mean = self._p25 = self._p75 = -1.0

    def __getattr__(self, name: str) -> Any:
        # (the task's fields read through the measurement: m.stmt, m.label, m.env, ...)
        if name in _TASKSPEC_FIELDS:
            return getattr(self.task_spec, name)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def _lazy_init(self) -> None:
        if not self.raw_times or self._sorted_times:
            return
        self._sorted_times = tuple(sorted(self.times))
        t = np.asarray(self._sorted_times, dtype=np.float64)
        self._median = float(np.quantile(t, 0.5))
        self._mean = float(t.mean())
        self._p25, self._p75 = float(np.quantile(t, 0.25)), float(np.quantile(t, 0.75))
        for threshold, why in ((_IQR_GROSS_WARN_THRESHOLD,
                                "This suggests significant environmental influence."),
                               (_IQR_WARN_THRESHOLD, "This could indicate system fluctuation.")):
            if not self.meets_confidence(threshold):
                self._warnings = (f"  WARNING: Interquartile range is "
                                  f"{self.iqr / self.median * 100:.1f}% of the median "
                                  f"measurement.\n           {why}",)
                break

    @property
    def times(self) -> list:
        """Seconds per run, one per measurement."""
        return [t / self.number_per_run for t in self.raw_times]

    @property
    def median(self) -> float:
        self._lazy_init()
        return self._median

    @property
    def mean(self) -> float:
        self._lazy_init()
        return self._mean

    @property
    def iqr(self) -> float:
        self._lazy_init()
        return self._p75 - self._p25

    @property
    def significant_figures(self) -> int:
        """How many digits of the median to believe (1 to 4): the median over a rough 90%
        confidence interval of it, from the spread of the middle half of the times."""
        self._lazy_init()
        n = len(self._sorted_times)
        middle = self._sorted_times[n // 4:int(math.ceil(np.float32(3 * n / 4)))]
        # (population standard deviation, accumulated in float64 and kept in float32)
        std = float(np.float32(np.std(np.asarray(middle, np.float32).astype(np.float64))))
        sqrt_n = float(np.sqrt(np.float32(len(middle))))
        interval = max(1.645 * std / sqrt_n, _MIN_CONFIDENCE_INTERVAL)
        figures = int(math.floor(np.float32(_log10_f32(self._median / interval))))
        return min(max(figures, 1), _MAX_SIGNIFICANT_FIGURES)

    @property
    def has_warnings(self) -> bool:
        self._lazy_init()
        return bool(self._warnings)

    def meets_confidence(self, threshold: float = _IQR_WARN_THRESHOLD) -> bool:
        return self.iqr / self.median < threshold

    @property
    def title(self) -> str:
        return self.task_spec.title

    @property
    def as_row_name(self) -> str:
        """The name of its row in a ``Compare`` table."""
        return self.sub_label or self.stmt or "[Unknown]"

    def __repr__(self) -> str:
        self._lazy_init()
        n = len(self._sorted_times)
        unit, scale = select_unit(self._median)
        threads = self.num_threads
        lines = [object.__repr__(self), self.task_spec.summarize(),
                 f"  {'Median: ' if n > 1 else ''}{self._median / scale:.2f} {unit}"]
        if n >= 4:
            lines.append(f"  IQR:    {self.iqr / scale:.2f} {unit} ({self._p25 / scale:.2f} "
                         f"to {self._p75 / scale:.2f})")
        lines.append(f"  {n} measurement{'s' if n > 1 else ''}, {self.number_per_run} runs "
                     f"{'per measurement,' if n > 1 else ','} {threads} "
                     f"thread{'s' if threads > 1 else ''}")
        lines.append("\n".join(self._warnings))
        # (an empty summary leaves an empty line; a summary ending in a section of several
        # lines, an empty line before the times; nothing trails the last line)
        return "\n".join(lines).strip()

    @staticmethod
    def merge(measurements: Iterable[Measurement]) -> list[Measurement]:
        """One measurement per task (in order of first appearance) holding the times per run
        of all its replicates (``number_per_run`` 1; no metadata, which replicates may not
        share)."""
        times: dict[TaskSpec, list] = {}
        for m in measurements:
            times.setdefault(m.task_spec, []).extend(m.times)
        return [Measurement(number_per_run=1, raw_times=t, task_spec=spec, metadata=None)
                for spec, t in times.items()]


def select_unit(t: float) -> tuple[str, float]:
    """The unit (and its scale in seconds) that shows ``t`` seconds as 1 to 999 of it."""
    unit = {-3: "ns", -2: "us", -1: "ms"}.get(int(_log10_f32(t) // 3), "s")
    return unit, {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1}[unit]


def unit_to_english(u: str) -> str:
    return {"ns": "nanosecond", "us": "microsecond", "ms": "millisecond", "s": "second"}[u]


def trim_sigfig(x: float, n: int) -> float:
    """``x`` rounded to ``n`` significant figures (3.14159, 2 -> 3.1)."""
    if n != int(n):
        raise AssertionError("Number of significant figures must be an integer")
    magnitude = int(math.ceil(_log10_f32(abs(x))))
    scale = 10 ** (magnitude - n)
    return float(np.round(np.float32(x / scale)) * np.float32(scale))


def ordered_unique(elements: Iterable[Any]) -> list[Any]:
    """The distinct elements, in order of first appearance."""
    return list(dict.fromkeys(elements))


@contextlib.contextmanager
def set_torch_threads(n: int) -> Iterator[None]:
    """numbagrad's kernels on ``n`` threads while inside, the number before restored after."""
    prior = get_num_threads()
    try:
        set_num_threads(n)
        yield
    finally:
        set_num_threads(prior)
