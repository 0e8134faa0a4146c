"""The package's layering, checked from its source: no import cycles (imports inside functions
count), no import of the package's own modules inside a function without a comment saying
why, and no positional reads of the dispatch and recording records."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import numbagrad

ROOT = Path(numbagrad.__file__).parent


def _modules():
    for path in sorted(ROOT.rglob("*.py")):
        parts = path.relative_to(ROOT.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        yield ".".join(parts), path


def _own_imports(name, path):
    """(imported module, line, inside a function) for each import of a numbagrad module."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    tree = ast.parse(path.read_text())
    in_function = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            in_function.update(id(n) for n in ast.walk(node) if n is not node)
    for node in ast.walk(tree):
        deferred = id(node) in in_function
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("numbagrad"):
                    yield alias.name, node.lineno, deferred
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("numbagrad"):
                continue
            # ``from . import x`` may name a submodule
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                yield (sub if (ROOT.parent / sub.replace(".", "/")).with_suffix(".py").exists()
                       or (ROOT.parent / sub.replace(".", "/")).is_dir() else target,
                       node.lineno, deferred)


def _graph():
    modules = dict(_modules())
    graph = {name: set() for name in modules}
    deferred = []
    for name, path in modules.items():
        for target, line, in_function in _own_imports(name, path):
            while target not in modules and "." in target:
                target = target.rsplit(".", 1)[0]
            if target in modules and target != name:
                graph[name].add(target)
                if in_function:
                    deferred.append((path, line))
    return graph, deferred


def _cycles(graph):
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def test_the_package_has_no_import_cycle():
    graph, _ = _graph()
    assert len(graph) > 30 and "numbagrad.ops.dispatch" in graph["numbagrad.ops.registry"]
    assert _cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_every_deferred_import_of_an_own_module_says_why():
    _, deferred = _graph()
    for path, line in deferred:
        lines = path.read_text().splitlines()
        said = "#" in lines[line - 1] or "#" in lines[line - 2] or '"""' in lines[line - 2]
        assert said, f"{path.relative_to(ROOT)}:{line} imports inside a function without a reason"


def test_records_are_read_by_name_or_unpacking():
    pattern = re.compile(r"\b(plan|lean|rule|saves|saved|record|_saved)\[\d\]")
    for _, path in _modules():
        for k, line in enumerate(path.read_text().splitlines(), 1):
            assert not pattern.search(line), f"{path.relative_to(ROOT)}:{k}: {line.strip()}"


def _top_level(path):
    """Names a module defines at its top level: {name: its ``def`` node, or None}."""
    names = {}
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.FunctionDef):
            names[node.name] = node
        elif isinstance(node, ast.Assign):
            names.update({t.id: None for t in node.targets if isinstance(t, ast.Name)})
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update({(a.asname or a.name): None for a in node.names})
    return names


def _positional(fdef, skip_self=False):
    """(required, total) positional parameters of a ``def``."""
    args = fdef.args.posonlyargs + fdef.args.args
    if skip_self:
        args = args[1:]
    return len(args) - len(fdef.args.defaults), len(args)


def test_both_backends_provide_every_member_of_the_backend_protocol():
    # read from the source: importing backend.gpu would import numba.cuda
    protocol = next(node for node in ast.parse((ROOT / "backend/base.py").read_text()).body
                    if isinstance(node, ast.ClassDef) and node.name == "Backend")
    members = {f.name: f for f in protocol.body if isinstance(f, ast.FunctionDef)}
    assert {"run_elementwise", "run_rows", "as_rows", "empty", "copyto", "matmul"} <= set(members)
    for module in ("cpu", "gpu"):
        defined = _top_level(ROOT / f"backend/{module}.py")
        for name, member in members.items():
            assert name in defined, f"backend/{module}.py does not provide {name}"
            fdef = defined[name]
            if fdef is not None:  # (not an alias of a NumPy function)
                required, total = _positional(member, skip_self=True)
                own_required, own_total = _positional(fdef)
                assert own_required <= required and own_total >= required, (
                    f"backend/{module}.py: {name} takes other arguments than Backend.{name}")
