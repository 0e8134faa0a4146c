"""``Timer``: PyTorch's timer, on the standard library's ``timeit``, with ``torch`` (this
package) in the statement's globals and numbagrad's kernels on ``num_threads`` threads."""

from __future__ import annotations

import enum
import sys
import textwrap
import timeit as _timeit
from typing import Any, Callable

import numpy as np

from .... import accelerator
from . import common

__all__ = ["Timer", "timer", "Language"]


def timer() -> float:
    """The clock, read once the accelerator (CUDA) has finished what was launched, so that a
    measurement covers the kernels a statement starts and not only their launch."""
    if accelerator.is_available():
        accelerator.synchronize()
    return _timeit.default_timer()


class Language(enum.Enum):
    PYTHON = 0
    CPP = 1


def _tidy(code: str) -> str:
    # (a snippet written as an indented block string: dedented, without its first newline and
    # trailing blanks; what runs is the same, what prints is tidier)
    code = textwrap.dedent(code)
    return (code[1:] if code and code[0] == "\n" else code).rstrip()


class Timer:
    """Times Python statement ``stmt`` after ``setup``, with ``globals`` (and ``torch``, this
    package, where not given), on ``num_threads`` threads. ``label``, ``sub_label``,
    ``description`` and ``env`` name the measurements it returns (``Compare`` groups its
    tables by label, its rows by sub-label and its columns by description)."""

    def __init__(self, stmt: str = "pass", setup: str = "pass", global_setup: str = "",
                 timer: Callable[[], float] = timer, globals: dict[str, Any] | None = None,
                 label: str | None = None, sub_label: str | None = None,
                 description: str | None = None, env: str | None = None,
                 num_threads: int = 1, language: Language | str = Language.PYTHON) -> None:
        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        # (a copy: running the statement adds ``__builtins__`` to the dict it is given)
        self._globals = dict(globals or {})
        if language in (Language.PYTHON, "py", "python"):
            self._globals.setdefault("torch", sys.modules[__name__.split(".")[0]])
            self._language = Language.PYTHON
            if global_setup:
                raise ValueError(
                    f"global_setup is C++ only, got `{global_setup}`. Most likely this code "
                    "can simply be moved to `setup`.")
        elif language in (Language.CPP, "cpp", "c++"):
            # (PyTorch compiles C++ statements against libtorch; numbagrad has no C++ API)
            raise NotImplementedError("numbagrad's Timer times Python statements only; it has "
                                      "no C++ API to compile a C++ statement against.")
        else:
            raise ValueError(f"Invalid language `{language}`.")
        stmt, setup = _tidy(stmt), _tidy(setup)
        self._timer = _timeit.Timer(stmt=stmt, setup=setup, timer=timer, globals=self._globals)
        self._task_spec = common.TaskSpec(stmt=stmt, setup=setup, global_setup=global_setup,
                                          label=label, sub_label=sub_label,
                                          description=description, env=env,
                                          num_threads=num_threads)

    def _timeit(self, number: int) -> float:
        # (no real statement takes under a nanosecond, and a zero time would divide by zero)
        return max(self._timer.timeit(number), 1e-9)

    def _measurement(self, number: int, times: list) -> common.Measurement:
        return common.Measurement(number_per_run=number, raw_times=times,
                                  task_spec=self._task_spec)

    def timeit(self, number: int = 1000000) -> common.Measurement:
        """One measurement of ``number`` runs, after ``max(number // 100, 2)`` warm-up runs
        (some of numbagrad's work, compiling a kernel for one, happens on first use)."""
        with common.set_torch_threads(self._task_spec.num_threads):
            self._timeit(number=max(int(number // 100), 2))
            return self._measurement(number, [self._timeit(number=number)])

    def repeat(self, repeat: int = -1, number: int = -1) -> None:
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback=None) -> None:
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def _measurement_loop(self, number: int, stop: Callable[[list], bool],
                          min_run_time: float, max_run_time: float | None = None,
                          callback=None) -> list:
        """Blocks of ``number`` runs until ``min_run_time`` seconds are spent and ``stop``
        agrees, or more than ``max_run_time`` seconds are."""
        total, can_stop, times = 0.0, False, []
        with common.set_torch_threads(self._task_spec.num_threads):
            while total < min_run_time or not can_stop:
                spent = self._timeit(number)
                times.append(spent)
                total += spent
                if callback:
                    callback(number, spent)
                can_stop = stop(times)
                if max_run_time and total > max_run_time:
                    break
        return times

    def _estimate_block_size(self, min_run_time: float) -> int:
        """Runs per block: ten times more until the timer's own cost (the median of five
        empty timings) is at most 0.01% of a block taking ``min_run_time / 1000`` seconds or
        more, or one block takes over ``min_run_time``. This also warms the statement up."""
        with common.set_torch_threads(self._task_spec.num_threads):
            overhead = float(np.median([self._timeit(0) for _ in range(5)]))
            number = 1
            while True:
                taken = self._timeit(number)
                if overhead / taken <= 1e-4 and taken >= min_run_time / 1000:
                    break
                if taken > min_run_time or number * 10 > 2147483647:
                    break
                number *= 10
        return number

    def blocked_autorange(self, callback: Callable[[int, float], Any] | None = None,
                          min_run_time: float = 0.2) -> common.Measurement:
        """Blocks of runs (of a size that makes the timer's cost negligible) until
        ``min_run_time`` seconds have been spent in them; ``callback(number, seconds)`` after
        each block."""
        number = self._estimate_block_size(min_run_time)
        times = self._measurement_loop(number, lambda times: True, min_run_time=min_run_time,
                                       callback=callback)
        return self._measurement(number, times)

    def adaptive_autorange(self, threshold: float = 0.1, *, min_run_time: float = 0.01,
                           max_run_time: float = 10.0,
                           callback: Callable[[int, float], Any] | None = None
                           ) -> common.Measurement:
        """As ``blocked_autorange``, but on until more than 3 blocks have an interquartile
        range under ``threshold`` of their median (after ``min_run_time`` seconds), or
        ``max_run_time`` seconds have been spent."""
        number = self._estimate_block_size(min_run_time=0.05)

        def stop(times: list) -> bool:
            return len(times) > 3 and self._measurement(number, times).meets_confidence(
                threshold=threshold)

        times = self._measurement_loop(number, stop, min_run_time, max_run_time,
                                       callback=callback)
        return self._measurement(number, times)

    def collect_callgrind(self, number: int = 100, *, repeats: int | None = None,
                          collect_baseline: bool = True, retain_out_file: bool = False):
        # (instruction counts need Valgrind and PyTorch's C++ bindings for it)
        raise NotImplementedError("numbagrad's Timer measures wall time only; "
                                  "collect_callgrind is not available.")
