"""``Compare``: PyTorch's table of many measurements, laid out as PyTorch lays it out.

One table per label. Its columns are the descriptions (in order of first appearance); its
rows are the sub-labels (else the statements), grouped under a ``N threads: ----`` line per
thread count (fewest first) and, where measurements name more than one ``env``, headed by
``(env)`` where the env changes. Each cell is a median in the unit that shows the fastest
measurement of the table as 1 to 999; each column right-aligns its numbers to a common width
and is centred under its header, columns being joined by ``"  |  "``. Replicates (measurements
of the same task) are merged into one first."""

from __future__ import annotations

import enum
import math

from . import common
from .common import _log10_f32

__all__ = ["Colorize", "Compare"]

BEST = "\033[92m"
GOOD = "\033[34m"
BAD = "\033[2m\033[91m"
VERY_BAD = "\033[31m"
BOLD = "\033[1m"
TERMINATE = "\033[0m"


class Colorize(enum.Enum):
    NONE = "none"
    COLUMNWISE = "columnwise"
    ROWWISE = "rowwise"


def _colored(text: str, value: float, best: float) -> str:
    """``text`` coloured by how ``value`` compares with the ``best`` (lowest) one: within 1%
    (or 100 ns) green, within 10% blue, twice as slow dim red, five times as slow red."""
    if value <= best * 1.01 or value <= best + 100e-9:
        return BEST + BOLD + text + TERMINATE * 2
    if value <= best * 1.1:
        return GOOD + BOLD + text + TERMINATE * 2
    if value >= best * 5:
        return VERY_BAD + BOLD + text + TERMINATE * 2
    if value >= best * 2:
        return BAD + text + TERMINATE * 2
    return text


class _NumberFormat:
    """How one column writes its medians (already in the table's unit): right-aligned to the
    width of its widest integer part, with one decimal, or, when trimming to significant
    figures, with as many decimals as its least precise number has significant ones; with the
    spread ``(! NN%)`` of a noisy measurement after it when warnings are highlighted."""

    def __init__(self, column: list, scale: float, trim: bool, highlight: bool) -> None:
        present = [m for m in column if m is not None]
        self._trim = trim
        self._highlight = highlight and any(m.has_warnings for m in present)
        digits = [int(math.ceil(_log10_f32(m.median / scale))) for m in present]
        self._decimals = (min(max(m.significant_figures - d, 0) for d, m in zip(digits, present))
                          if trim else 1)
        self._width = max(digits) + self._decimals + (1 if self._decimals else 0)

    def __call__(self, value: float | None, figures: int, spread: float | None) -> str:
        if value is None:
            return " " * len(self(1, figures, None))
        if self._trim:
            value = common.trim_sigfig(value, figures)
        note = f" (! {spread * 100:.0f}%)" if self._highlight and spread is not None else ""
        return f"{value:>{self._width}.{self._decimals}f}" + note.rjust(
            7 if self._highlight else 0)


def _table(results: list, colorize: Colorize, trim: bool, highlight: bool) -> str:
    """The table of ``results`` (one label's measurements, replicates merged)."""
    label = results[0].label
    unit, scale = common.select_unit(min(m.median for m in results))

    def row_key(m):
        return m.num_threads, m.env, m.as_row_name

    # rows by thread count, then env (sorting only by those keeps first-appearance order
    # within them); columns in order of first appearance
    row_keys = common.ordered_unique(row_key(m) for m in results)
    row_keys.sort(key=lambda key: key[:2])
    col_keys = common.ordered_unique(m.description for m in results)
    row_at = {key: i for i, key in enumerate(row_keys)}
    col_at = {key: j for j, key in enumerate(col_keys)}
    grid: list[list] = [[None] * len(col_keys) for _ in row_keys]
    for m in results:
        grid[row_at[row_key(m)]][col_at[m.description]] = m

    envs = {m.env for m in results}
    show_env = len(envs) > 1
    env_width = max(len(e) for e in envs) if show_env else 0

    # each thread count is a group of rows; a row shows its env where the env changes within
    # its group
    groups, row_group, row_env_shown, thread_header = [], [], [], []
    prior_threads, prior_env = -1, ""
    for (threads, env, _), row in zip(row_keys, grid):
        new_group = threads != prior_threads
        if new_group:
            prior_threads, prior_env = threads, ""
            groups.append([])
        groups[-1].append(row)
        row_group.append(len(groups) - 1)
        row_env_shown.append(show_env and env != prior_env)
        thread_header.append(threads if new_group else None)
        prior_env = env

    formats = [_NumberFormat([row[j] for row in grid], scale, trim, highlight)
               for j in range(len(col_keys))]

    cells = [[""] + list(col_keys)]
    for row, env_shown in zip(grid, row_env_shown):
        first = next(m for m in row if m is not None)
        env = f"({first.env})" if env_shown else ""
        line = ["  " + env.ljust(env_width + 4) + first.as_row_name]
        for m, fmt in zip(row, formats):
            if m is None:
                line.append(fmt(None, 1, None))
            else:
                line.append(fmt(m.median / scale, m.significant_figures,
                                m.iqr / m.median if m.has_warnings else None))
        cells.append(line)
    widths = [max(len(c) for c in column) for column in zip(*cells)]

    header = "  |  ".join(c.center(w) for c, w in zip(cells[0], widths))
    lines = [header]
    for i, (line, row) in enumerate(zip(cells[1:], grid)):
        if thread_header[i] is not None:
            lines.append(f"{thread_header[i]} threads: ".ljust(len(header), "-"))
        bests = [None] * len(row)
        if colorize == Colorize.ROWWISE:
            bests = [min(m.median for m in row if m is not None)] * len(row)
        elif colorize == Colorize.COLUMNWISE:
            # (the best of the column within this thread count)
            bests = [min((r[j].median for r in groups[row_group[i]] if r[j] is not None),
                         default=None) for j in range(len(row))]
        out = [line[0].ljust(widths[0])]
        for j, (text, width, m) in enumerate(zip(line[1:], widths[1:], row)):
            text = text.center(width)
            if m is not None and bests[j] is not None:
                text = _colored(text, m.median, bests[j])
            out.append(text)
        lines.append("  |  ".join(out))

    title = f" {label or ''} ".center(len(header) - 2, "-")
    noisy = highlight and any(m.has_warnings for m in results)
    note = ("(! XX%) Measurement has high variance, where XX is the IQR / median * 100.\n"
            if noisy else "")
    body = "\n".join(lines)
    return (f"[{title}]\n{body}\n\nTimes are in {common.unit_to_english(unit)}s ({unit}).\n"
            + note)


class Compare:
    """A table of the medians of many measurements, one per label: columns by description,
    rows by sub-label, grouped by thread count (see the module's description). ``print()`` it
    or ``str()`` it; ``trim_significant_figures``, ``colorize`` and ``highlight_warnings``
    change how it is written."""

    def __init__(self, results: list) -> None:
        self._results: list = []
        self.extend_results(results)
        self._trim_significant_figures = False
        self._colorize = Colorize.NONE
        self._highlight_warnings = False

    def __str__(self) -> str:
        return "\n".join(self._render())

    def extend_results(self, results) -> None:
        """Add measurements to the ones already held."""
        for r in results:
            if not isinstance(r, common.Measurement):
                raise ValueError(f"Expected an instance of `Measurement`, got {type(r)} instead.")
        self._results.extend(results)

    def trim_significant_figures(self) -> None:
        """Write each median to the significant figures its spread supports."""
        self._trim_significant_figures = True

    def colorize(self, rowwise: bool = False) -> None:
        """Colour each cell by how it compares with the best of its column (within its thread
        count), or of its row."""
        self._colorize = Colorize.ROWWISE if rowwise else Colorize.COLUMNWISE

    def highlight_warnings(self) -> None:
        """Mark noisy measurements with their interquartile range, as a share of the median."""
        self._highlight_warnings = True

    def print(self) -> None:
        print(str(self))

    def _render(self) -> list:
        by_label: dict = {}
        for m in common.Measurement.merge(self._results):
            by_label.setdefault(m.label, []).append(m)
        return [_table(group, self._colorize, self._trim_significant_figures,
                       self._highlight_warnings) for group in by_label.values()]
