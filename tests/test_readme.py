"""The README's examples run, and print what their comments say.

Each ```python block of README.md runs in a new namespace, with README.md as its file name and
its own line numbers (a traceback points at the README). A line ``print(...)  # text`` must
print ``text`` (runs of spaces compared as one). A block right after the line
``<!-- readme-test: cuda -->`` is a CUDA test: ``pytest -m cuda`` runs it (in Numba's simulator
under ``make test``, for real on a GPU), and it skips, saying why, where there is no CUDA. No
other marker exists, so no block is left out.

Also: every ``make <target>`` in the README's shell blocks is a Makefile target, and every file
the README names in backticks or links to exists in the repository.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

from devices import CUDA

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
TEXT = README.read_text(encoding="utf-8")

FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```[ \t]*$", re.S | re.M)
MARKER = re.compile(r"<!--\s*readme-test:\s*(.*?)\s*-->\s*\Z")
KNOWN_MARKERS = {"cuda"}


def _blocks(lang):
    """(first line number of the code, code, marker or None) for each ``lang`` block."""
    out = []
    for m in FENCE.finditer(TEXT):
        if m.group(1) != lang:
            continue
        line = TEXT.count("\n", 0, m.start(2)) + 1
        before = TEXT[:m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        marker = MARKER.search(before)
        out.append((line, m.group(2), marker.group(1) if marker else None))
    return out


PYTHON = _blocks("python")


def _params():
    params = []
    for line, code, marker in PYTHON:
        marks = CUDA if marker == "cuda" else []
        params.append(pytest.param(line, code, marks=marks, id=f"README.md:{line}"))
    return params


def _squash(text):
    return " ".join(text.split())


def test_the_readme_has_examples():
    assert len(PYTHON) >= 2, "README.md lost its Python examples"
    unknown = {m for _, _, m in PYTHON if m is not None} - KNOWN_MARKERS
    assert not unknown, f"unknown readme-test markers {unknown}: known are {KNOWN_MARKERS}"


@pytest.mark.parametrize("line, code", _params())
def test_readme_example(line, code):
    expected = {}  # README line -> the output its comment promises
    for k, src in enumerate(code.splitlines()):
        m = re.match(r"\s*print\(.*\)\s*#\s*(.+)$", src)
        if m:
            expected[line + k] = _squash(m.group(1))

    printed = {}  # README line -> what the print on it wrote

    def record(*args, sep=" ", end="\n", file=None, flush=False):
        frame = sys._getframe(1)
        text = sep.join(str(a) for a in args)
        if frame.f_code.co_filename == str(README):
            printed.setdefault(frame.f_lineno, []).append(_squash(text))
        print(*args, sep=sep, end=end, file=file, flush=flush)

    compiled = compile("\n" * (line - 1) + code, str(README), "exec")
    exec(compiled, {"__name__": "__readme__", "print": record})

    for at, want in expected.items():
        assert at in printed, f"README.md:{at}: the print did not run"
        assert printed[at] == [want], f"README.md:{at}: printed {printed[at]}, README says {want!r}"


def test_readme_make_targets_exist():
    makefile = (ROOT / "Makefile").read_text()
    targets = set(re.findall(r"^([\w.-]+)\s*:(?!=)", makefile, re.M))
    named = set()
    for _, code, _ in _blocks("sh"):
        named.update(re.findall(r"(?:^|[;&|]\s*)make\s+([\w-]+)", code, re.M))
    named.update(re.findall(r"`make ([\w-]+)", TEXT))
    assert named, "the README names no make targets"
    assert named <= targets, f"README names make targets the Makefile lacks: {named - targets}"


# made by the commands the README describes, not files in the repository
GENERATED = ("examples/out/", "build/", ".asv/", ".venv/", "~/")


def _repo_files():
    skip = {".git", ".venv", "build", ".asv", "__pycache__", ".pytest_cache", "node_modules"}
    files = []
    for dirpath, dirnames, filenames in os.walk(ROOT):
        dirnames[:] = [d for d in dirnames if d not in skip and not d.endswith(".egg-info")]
        rel = Path(dirpath).relative_to(ROOT)
        files += [(rel / f).as_posix() for f in filenames]
    return files


def test_readme_files_exist():
    names = set(re.findall(r"`([\w./-]+\.(?:py|md|json|toml|txt))`", TEXT))
    names |= set(re.findall(r"\]\(((?!https?:)[\w./-]+)\)", TEXT))
    names = {n for n in names if not n.startswith(GENERATED)}
    assert names, "the README names no files"
    files = _repo_files()
    missing = sorted(n for n in names
                     if not any(f == n or f.endswith("/" + n) for f in files))
    assert not missing, f"README.md names files that do not exist: {missing}"
