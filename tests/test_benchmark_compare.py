"""``utils.benchmark.Compare`` against PyTorch's: the same measurements (built from fixed times in
both libraries, since real timings differ between runs) must print the same tables, character
for character: tables per label, rows per sub-label grouped by thread count and env, columns
per description, units, widths, trimmed significant figures, highlighted warnings and colours.
Also ``Measurement``'s remaining statistics and helpers, and ``Timer``'s arguments, errors and
measurement loops as PyTorch's."""

import re

import pytest

import numbagrad.utils.benchmark as nb
from numbagrad.utils.benchmark.utils import common as ncommon

tb = pytest.importorskip("torch.utils.benchmark")
tcommon = pytest.importorskip("torch.utils.benchmark.utils.common")

NOISY = [1.0, 1.5, 1.1, 2.2, 1.05, 0.9]          # IQR over 25% of the median
WOBBLY = [1.0, 1.12, 1.05, 1.2, 0.98, 1.01, 1.1]  # IQR between 10% and 25%
STEADY = [1.0, 1.01, 1.02, 0.99, 1.0]


def _pair(number, raw, **spec):
    spec.setdefault("stmt", "f(x)")
    spec.setdefault("setup", "pass")
    return (nb.Measurement(number, list(raw), nb.TaskSpec(**spec)),
            tb.Measurement(number, list(raw), tcommon.TaskSpec(**spec)))


def _both(pairs):
    return [p[0] for p in pairs], [p[1] for p in pairs]


def _recipe():
    """The "PyTorch Benchmark" recipe's sweep: two labels, sub-labels by size, descriptions
    mul/sum and bmm, one and four threads (listed out of thread order)."""
    pairs = []
    for threads in (4, 1):
        for b, n in ((1, 8), (16, 64), (1024, 1024)):
            for desc, f in (("mul/sum", 1.0), ("bmm", 1.7)):
                base = 1e-6 * b * n / 64 / threads * f
                pairs.append(_pair(100, [base * s * 100 for s in STEADY], label="Batched dot",
                                   sub_label=f"[{b}, {n}]", description=desc,
                                   num_threads=threads))
    pairs.append(_pair(10, [2.5e-3, 2.6e-3], stmt="g(x)", label="Other", sub_label="small",
                       description="only"))
    return pairs


def _noisy():
    """Measurements with warnings (of both kinds), steady ones beside them, and a missing cell
    (no 'b' measurement for row 'r3')."""
    return [_pair(1, [t * 3.3e-5 for t in NOISY], label="L", sub_label="r1", description="a"),
            _pair(1, [t * 4.1e-5 for t in STEADY], label="L", sub_label="r1", description="b"),
            _pair(1, [t * 1.2e-4 for t in WOBBLY], label="L", sub_label="r2", description="a"),
            _pair(1, [t * 9.7e-4 for t in STEADY], label="L", sub_label="r2", description="b"),
            _pair(1, [t * 1.5e-5 for t in STEADY], label="L", sub_label="r3", description="a")]


def _envs():
    """Two envs (an A/B comparison) on two thread counts: '(env)' heads a row where the env
    changes within a thread count."""
    pairs = []
    for threads in (1, 2):
        for env in ("master", "my_branch"):
            for sub in ("add", "mul"):
                for desc, f in (("n=1", 1.0), ("n=1024", 130.0)):
                    t = 2e-6 * f / threads * (1.05 if env == "my_branch" else 1.0)
                    pairs.append(_pair(1000, [t * s * 1000 for s in STEADY], stmt=f"x.{sub}(y)",
                                       label="Binary ops", sub_label=sub, description=desc,
                                       env=env, num_threads=threads))
    return pairs


def _replicates():
    """The same task measured three times (merged into one row of all their times), a task
    without a sub-label (its row named by its statement) and one with no label at all."""
    pairs = [_pair(n, [t * n * 2e-3 for t in STEADY[:k]], label="Rep", sub_label="x",
                   description="d") for n, k in ((10, 2), (100, 3), (1, 5))]
    pairs.append(_pair(1, [3e-2, 3.3e-2, 2.9e-2], stmt="torch.mm(a, b)", label="Rep",
                       description="d"))
    pairs.append(_pair(1, [7e-9, 7.2e-9], stmt="pass", sub_label="empty", description="d"))
    return pairs


def _multiline():
    """A several-line statement as the row name, and times in seconds."""
    return [_pair(1, [1.5, 1.6, 1.55], stmt="a = 1\nb = a + 1", label="Slow", description="c"),
            _pair(1, [12.0, 12.5], stmt="time.sleep(12)", label="Slow", description="c")]


SETS = {"recipe": _recipe, "noisy": _noisy, "envs": _envs, "replicates": _replicates,
        "multiline": _multiline}
OPTIONS = {
    "plain": [],
    "trim": [("trim_significant_figures",)],
    "highlight": [("highlight_warnings",)],
    "trim_highlight": [("trim_significant_figures",), ("highlight_warnings",)],
    "colorize": [("colorize",)],
    "colorize_rowwise": [("colorize", True)],
    "everything": [("trim_significant_figures",), ("highlight_warnings",), ("colorize",)],
}


@pytest.mark.parametrize("options", OPTIONS)
@pytest.mark.parametrize("name", SETS)
def test_compare_prints_pytorchs_table(name, options):
    ours, theirs = _both(SETS[name]())
    c_ours, c_theirs = nb.Compare(ours), tb.Compare(theirs)
    for method, *args in OPTIONS[options]:
        getattr(c_ours, method)(*args)
        getattr(c_theirs, method)(*args)
    assert str(c_ours) == str(c_theirs)


def test_compare_recipe_table_layout():
    # the layout spelled out once: title bar, centred headers, thread groups (fewest threads
    # first), right-aligned numbers in the smallest median's unit
    ours, theirs = _both(_recipe()[:4] + _recipe()[6:10])
    text = str(nb.Compare(ours))
    assert text == str(tb.Compare(theirs))
    assert text == (
        "[----------- Batched dot ------------]\n"
        "                |  mul/sum  |    bmm  \n"
        "1 threads: ---------------------------\n"
        "      [1, 8]    |    125.0  |    212.5\n"
        "      [16, 64]  |  16000.0  |  27200.0\n"
        "4 threads: ---------------------------\n"
        "      [1, 8]    |     31.2  |     53.1\n"
        "      [16, 64]  |   4000.0  |   6800.0\n"
        "\n"
        "Times are in nanoseconds (ns).\n")


def test_compare_print_and_extend(capsys):
    ours, theirs = _both(_recipe())
    c_ours, c_theirs = nb.Compare(ours[:3]), tb.Compare(theirs[:3])
    c_ours.extend_results(ours[3:])
    c_theirs.extend_results(theirs[3:])
    c_ours.print()
    printed = capsys.readouterr().out
    c_theirs.print()
    assert printed == capsys.readouterr().out
    assert printed == str(c_ours) + "\n"


def test_compare_refuses_what_is_not_a_measurement():
    with pytest.raises(ValueError) as ours:
        nb.Compare([1.5])
    with pytest.raises(ValueError) as theirs:
        tb.Compare([1.5])
    assert str(ours.value) == str(theirs.value) == (
        "Expected an instance of `Measurement`, got <class 'float'> instead.")
    c = nb.Compare([])
    with pytest.raises(ValueError, match="got <class 'str'>"):
        c.extend_results(["m"])
    assert str(c) == str(tb.Compare([])) == ""


ALL_PAIRS = [p for make in SETS.values() for p in make()]


@pytest.mark.parametrize("i", range(len(ALL_PAIRS)))
def test_measurement_statistics_as_pytorchs(i):
    ours, theirs = ALL_PAIRS[i]
    assert ours.significant_figures == theirs.significant_figures
    assert ours.has_warnings == theirs.has_warnings
    assert ours.as_row_name == theirs.as_row_name
    assert (ours.env, ours.title, ours.label, ours.sub_label, ours.description,
            ours.num_threads) == (theirs.env, theirs.title, theirs.label, theirs.sub_label,
                                  theirs.description, theirs.num_threads)
    assert ours.median == pytest.approx(theirs.median, rel=1e-12)
    assert ours.mean == pytest.approx(theirs.mean, rel=1e-12)
    assert ours.iqr == pytest.approx(theirs.iqr, rel=1e-9, abs=1e-20)
    assert ours.times == theirs.times and ours.raw_times == theirs.raw_times
    assert repr(ours).splitlines()[1:] == repr(theirs).splitlines()[1:]


def test_measurement_repr_names_its_module_and_warns_with_few_times():
    ours, theirs = _pair(1, [1.0, 2.0], stmt="f()")
    assert repr(ours).splitlines()[0].startswith(
        "<numbagrad.utils.benchmark.utils.common.Measurement object at 0x")
    assert repr(theirs).splitlines()[0].startswith(
        "<torch.utils.benchmark.utils.common.Measurement object at 0x")
    # (two times already warn when they spread: PyTorch warns whatever the count)
    assert repr(ours).splitlines()[1:] == repr(theirs).splitlines()[1:] == [
        "f()", "  Median: 1.50 s", "  2 measurements, 1 runs per measurement, 1 thread",
        "  WARNING: Interquartile range is 33.3% of the median measurement.",
        "           This suggests significant environmental influence."]
    one, one_t = _pair(7, [3.5e-3], stmt="f()", description="d", env="e")
    assert repr(one).splitlines()[1:] == repr(one_t).splitlines()[1:]
    assert (one.significant_figures, one.has_warnings, one.env) == (4, False, "e")


def test_measurement_is_a_dataclass_as_pytorchs():
    spec = nb.TaskSpec("f()", "pass")
    a = nb.Measurement(number_per_run=2, raw_times=[1.0], task_spec=spec)
    assert a == nb.Measurement(2, [1.0], spec, None) and a != nb.Measurement(2, [1.5], spec)
    assert a.metadata is None and nb.Measurement(1, [1.0], spec, {"k": 1}).metadata == {"k": 1}
    # an empty measurement can be made (PyTorch's fills its statistics when first read)
    empty = nb.Measurement(1, [], spec)
    empty_t = tb.Measurement(1, [], tcommon.TaskSpec("f()", "pass"))
    assert (empty.median, empty.mean, empty.times) == (empty_t.median, empty_t.mean, empty_t.times)
    with pytest.raises(AttributeError, match="no attribute 'nonsense'"):
        a.nonsense


def test_merge_pools_replicates_per_task():
    ours, theirs = _both(_replicates())
    merged, merged_t = nb.Measurement.merge(ours), tb.Measurement.merge(theirs)
    assert [(m.number_per_run, m.times, m.as_row_name, m.metadata) for m in merged] == [
        (m.number_per_run, m.times, m.as_row_name, m.metadata) for m in merged_t]
    assert len(merged) == 3 and len(merged[0].times) == 10


@pytest.mark.parametrize("t", [3e-10, 1e-9, 4.5e-8, 9.99e-7, 1e-6, 2.5e-5, 1e-3, 0.5, 1.0, 7.0,
                               1234.0])
def test_select_unit_as_pytorchs(t):
    assert nb.select_unit(t) == tcommon.select_unit(t)
    unit = nb.select_unit(t)[0]
    assert nb.unit_to_english(unit) == tcommon.unit_to_english(unit)


@pytest.mark.parametrize("x, n", [(3.14159, 2), (3.14159, 4), (1250.0, 1), (0.0123456, 3),
                                  (999.96, 3), (55.0, 1), (125.25, 4), (1e6 + 3, 2)])
def test_trim_sigfig_as_pytorchs(x, n):
    assert nb.trim_sigfig(x, n) == tcommon.trim_sigfig(x, n)


def test_helpers_as_pytorchs():
    seq = [3, 1, 3, 2, 1]
    assert nb.ordered_unique(seq) == tcommon.ordered_unique(seq) == [3, 1, 2]
    with pytest.raises(AssertionError, match="must be an integer"):
        nb.trim_sigfig(1.0, 1.5)
    assert [c.value for c in nb.Colorize] == [c.value for c in tb.Colorize]
    assert [lang.name for lang in nb.Language] == [lang.name for lang in tb.Language]


TIMER_ARGS = [
    dict(stmt="f(x)"),
    dict(stmt="\n    a = x + 1\n    b = a * 2\n    ", setup="\n    x = 1\n    y = 2\n"),
    dict(stmt="x * 2", setup="x = 3", label="Mul", sub_label="[3]", description="int",
         env="cpu", num_threads=2),
    dict(stmt="", setup=""),
]


@pytest.mark.parametrize("kwargs", TIMER_ARGS)
def test_timer_task_spec_as_pytorchs(kwargs):
    ours = nb.Timer(**kwargs)._task_spec
    theirs = tb.Timer(**kwargs)._task_spec
    assert [getattr(ours, f) for f in ncommon._TASKSPEC_FIELDS] == [
        getattr(theirs, f) for f in tcommon._TASKSPEC_FIELDS]
    assert ours.summarize() == theirs.summarize()


def test_timer_errors_as_pytorchs():
    def message(lib, **kwargs):
        with pytest.raises(Exception) as info:
            lib.Timer(**kwargs)
        return type(info.value), str(info.value)

    for kwargs in (dict(stmt=lambda: 1), dict(global_setup="#include <vector>"),
                   dict(language="fortran")):
        assert message(nb, **kwargs) == message(tb, **kwargs)
    for method in ("repeat", "autorange"):
        with pytest.raises(NotImplementedError) as ours:
            getattr(nb.Timer(), method)()
        with pytest.raises(NotImplementedError) as theirs:
            getattr(tb.Timer(), method)()
        assert str(ours.value) == str(theirs.value) == "See `Timer.blocked_autorange.`"
    with pytest.raises(NotImplementedError, match="Python statements only"):
        nb.Timer("x", language="c++")


def test_timer_measurements_and_loops():
    calls = []
    m = nb.Timer("calls.append(1)", globals={"calls": calls}, label="L", sub_label="s",
                 description="d", env="e", num_threads=1).timeit(300)
    # (PyTorch's warm-up: number // 100 runs, at least two)
    assert len(calls) == 303 and m.number_per_run == 300 and len(m.raw_times) == 1
    assert (m.label, m.sub_label, m.description, m.env, m.num_threads) == ("L", "s", "d", "e", 1)

    blocks = []
    m = nb.Timer("sum(range(50))").blocked_autorange(
        callback=lambda n, t: blocks.append((n, t)), min_run_time=0.02)
    assert [n for n, _ in blocks] == [m.number_per_run] * len(blocks)
    assert [t for _, t in blocks] == m.raw_times and sum(m.raw_times) >= 0.02
    assert re.fullmatch(r"10*", str(m.number_per_run))  # (a power of ten)

    m = nb.Timer("sum(range(50))").adaptive_autorange(threshold=0.5, max_run_time=0.2)
    assert len(m.raw_times) >= 4 or sum(m.raw_times) > 0.2
    assert re.fullmatch(r"10*", str(m.number_per_run))


def test_compare_of_timed_results_has_pytorchs_structure():
    # real timings: the tables' words (headers, row names, thread lines, unit sentence) agree
    # once the numbers and the padding they set are taken out
    import torch

    def run(lib, ones):
        results = []
        for b, n in ((1, 8), (4, 16)):
            x = ones((b, n))
            for desc, stmt in (("mul/sum", "x.mul(x).sum(-1)"), ("sum", "x.sum()")):
                results.append(lib.Timer(stmt=stmt, globals={"x": x}, label="Batched dot",
                                         sub_label=f"[{b}, {n}]", description=desc).timeit(20))
        return str(lib.Compare(results))

    import numbagrad

    def words(text):
        text = re.sub(r"\d+\.\d+|\((?:ns|us|ms|s)\)|\w+seconds", "#", text)
        return [re.sub(r"[\s-]+", " ", line).strip() for line in text.splitlines()]

    assert words(run(nb, numbagrad.ones)) == words(run(tb, torch.ones))
