"""``make_dot``: the autograd graph of a tensor as a Graphviz graph, as torchviz draws it.

Backward nodes are grey boxes named as PyTorch names them (``MulBackward0``); leaves that
require grad are blue (named from ``params``), saved tensors orange (``show_saved``), the
output green and a view's base dark green. With the ``graphviz`` package (the ``viz`` extra)
it returns a ``graphviz.Digraph`` (``.render()`` needs Graphviz's ``dot`` program); without,
an object with the same DOT text in ``.source``. torchviz's own ``make_dot`` also reads
numbagrad's graphs (``params`` aside: it asserts they are torch Variables).
"""

from __future__ import annotations

from ._tensor import Tensor

try:  # (optional: the plain DOT text below stands in for it)
    from graphviz import Digraph
except ImportError:  # pragma: no cover - depends on the environment
    Digraph = None

SAVED_PREFIX = "_saved_"
_NODE_ATTR = dict(style="filled", shape="box", align="left", fontsize="10", ranksep="0.1",
                  height="0.2", fontname="monospace")


class DotSource:
    """A Graphviz graph as DOT text (``.source``), when the graphviz package is absent."""

    def __init__(self, node_attr=None, graph_attr=None):
        self.node_attr = dict(node_attr or {})
        self.graph_attr = dict(graph_attr or {})
        self.body: list[str] = []

    def node(self, name, label=None, **attrs):
        self.body.append(f"\t{_quote(name)}{_attrs(dict(label=label, **attrs))}\n")

    def edge(self, tail, head, **attrs):
        self.body.append(f"\t{_quote(tail)} -> {_quote(head)}{_attrs(attrs)}\n")

    @property
    def source(self) -> str:
        head = ["digraph {\n"]
        if self.graph_attr:
            head.append(f"\tgraph{_attrs(self.graph_attr)}\n")
        if self.node_attr:
            head.append(f"\tnode{_attrs(self.node_attr)}\n")
        return "".join(head + self.body) + "}\n"

    def __str__(self):
        return self.source


def _quote(s) -> str:
    s = str(s)
    if s.isidentifier() or s.isdigit():
        return s
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _attrs(attrs) -> str:
    items = [f"{k}={_quote(v)}" for k, v in attrs.items() if v is not None]
    return f" [{' '.join(items)}]" if items else ""


def _fn_name(fn, show_attrs, max_attr_chars) -> str:
    """The node's class name, with its saved attributes below it when ``show_attrs``."""
    name = type(fn).__name__
    if not show_attrs:
        return name
    attrs = {}
    for attr in dir(fn):
        if not attr.startswith(SAVED_PREFIX):
            continue
        val = getattr(fn, attr)
        key = attr[len(SAVED_PREFIX):]
        if isinstance(val, Tensor):
            attrs[key] = "[saved tensor]"
        elif isinstance(val, tuple) and any(isinstance(t, Tensor) for t in val):
            attrs[key] = "[saved tensors]"
        else:
            attrs[key] = str(val)
    if not attrs:
        return name
    max_attr_chars = max(max_attr_chars, 3)
    col1 = max(len(k) for k in attrs)
    col2 = min(max(len(v) for v in attrs.values()), max_attr_chars)
    sep = "-" * max(col1 + col2 + 2, len(name))

    def cut(s):
        return s[:col2 - 3] + "..." if len(s) > col2 else s

    rows = "\n".join(f"{k:<{col1}}: {cut(v):>{col2}}" for k, v in attrs.items())
    return f"{name}\n{sep}\n{rows}"


def make_dot(var, params=None, show_attrs=False, show_saved=False, max_attr_chars=50):
    """The autograd graph that made ``var`` (a Tensor or a tuple of them).

    ``params``: {name: tensor} naming leaves; ``show_attrs``: each node's saved non-tensor
    attributes (``_saved_dim``, ...); ``show_saved``: its saved tensors, as orange nodes."""
    param_map = {id(v): k for k, v in (params or {}).items()}
    graph_attr = dict(size="12,12")
    dot = (Digraph(node_attr=_NODE_ATTR, graph_attr=graph_attr) if Digraph is not None
           else DotSource(_NODE_ATTR, graph_attr))
    seen: set = set()

    def var_name(t, name=None):
        name = name or param_map.get(id(t), "")
        return f"{name}\n ({', '.join(str(s) for s in t.shape)})"

    def add_saved(fn, name, t):
        seen.add(id(t))
        dot.edge(str(id(fn)), str(id(t)), dir="none")
        dot.node(str(id(t)), var_name(t, name), fillcolor="orange")

    def add_nodes(root):
        stack = [root]
        while stack:  # (iterative: deep graphs do not reach the recursion limit)
            fn = stack.pop()
            if id(fn) in seen:
                continue
            seen.add(id(fn))
            if show_saved:
                for attr in dir(fn):
                    if not attr.startswith(SAVED_PREFIX):
                        continue
                    val, name = getattr(fn, attr), attr[len(SAVED_PREFIX):]
                    if isinstance(val, Tensor):
                        add_saved(fn, name, val)
                    elif isinstance(val, tuple):
                        for i, t in enumerate(val):
                            if isinstance(t, Tensor):
                                add_saved(fn, f"{name}[{i}]", t)
            variable = getattr(fn, "variable", None)
            if variable is not None:  # AccumulateGrad: the leaf it accumulates into
                seen.add(id(variable))
                dot.node(str(id(variable)), var_name(variable), fillcolor="lightblue")
                dot.edge(str(id(variable)), str(id(fn)))
            dot.node(str(id(fn)), _fn_name(fn, show_attrs, max_attr_chars))
            for nxt, _ in reversed(fn.next_functions):
                if nxt is not None:
                    dot.edge(str(id(nxt)), str(id(fn)))
                    stack.append(nxt)
            for t in getattr(fn, "saved_tensors", ()) or ():  # custom Functions' ctx
                if isinstance(t, Tensor):
                    add_saved(fn, None, t)

    def add_base_tensor(t, color="darkolivegreen1"):
        if id(t) in seen:
            return
        seen.add(id(t))
        dot.node(str(id(t)), var_name(t), fillcolor=color)
        if t.grad_fn is not None:
            add_nodes(t.grad_fn)
            dot.edge(str(id(t.grad_fn)), str(id(t)))
        if t._is_view():
            add_base_tensor(t._base, color="darkolivegreen3")
            dot.edge(str(id(t._base)), str(id(t)), style="dotted")

    for t in var if isinstance(var, tuple) else (var,):
        add_base_tensor(t)
    size = max(12, len(dot.body) * 0.15)  # (torchviz's resize_graph)
    dot.graph_attr.update(size=f"{size},{size}")
    return dot
