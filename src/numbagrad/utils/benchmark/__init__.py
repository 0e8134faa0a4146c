"""``numbagrad.utils.benchmark``: PyTorch's ``Timer``, ``Measurement`` and ``Compare``, so that a
script that times its code with ``torch.utils.benchmark`` runs unchanged.

``Timer`` runs ``stmt`` through the standard library's ``timeit`` with ``torch`` (this package)
in its globals, on ``num_threads`` threads; ``timeit``, ``blocked_autorange`` and
``adaptive_autorange`` return a ``Measurement`` whose statistics (median, mean, interquartile
range, significant figures) and printed summary are PyTorch's. ``Compare`` prints many
measurements as PyTorch's table. The modules are laid out as PyTorch's (``utils.common``,
``utils.timer``, ``utils.compare``). Not here: C++ statements and Callgrind instruction counts
(``collect_callgrind``), and the fuzzers (``Fuzzer``, ``FuzzedParameter``, ...)."""

from .utils.common import (Measurement, TaskSpec, ordered_unique, select_unit,
                           set_torch_threads, trim_sigfig, unit_to_english)
from .utils.compare import Colorize, Compare
from .utils.timer import Language, Timer, timer

__all__ = ["TaskSpec", "Measurement", "select_unit", "unit_to_english", "trim_sigfig",
           "ordered_unique", "set_torch_threads", "Timer", "timer", "Language", "Colorize",
           "Compare"]
