"""make_dot: the graph's nodes, names, shapes and colours in the DOT text; torchviz's own
make_dot on numbagrad tensors gives the same graph."""

from __future__ import annotations

import re

import pytest

import numbagrad as ng
from numbagrad import viz


def _graph():
    w = ng.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    b = ng.tensor([0.5, -0.5], requires_grad=True)
    y = (ng.tensor([[1.0, -1.0]]) @ w + b).tanh().sum()
    return w, b, y


def _labels(source):
    return sorted(re.findall(r'\[label="?((?:[^"\\]|\\.)*?)"?(?: fillcolor=(\w+))?\]', source))


def test_make_dot_nodes_and_edges(monkeypatch):
    monkeypatch.setattr(viz, "Digraph", None)  # the plain DOT text, with or without graphviz
    w, b, y = _graph()
    dot = viz.make_dot(y, params={"w": w, "b": b})
    assert isinstance(dot, viz.DotSource)
    src = dot.source
    assert src.startswith("digraph {\n\tgraph [size=\"12,12\"]\n\tnode [style=filled shape=box")
    assert _labels(src) == sorted([
        ("\\n ()", "darkolivegreen1"), ("SumBackward0", ""), ("TanhBackward0", ""),
        ("AddBackward0", ""), ("MmBackward0", ""), ("AccumulateGrad", ""),
        ("AccumulateGrad", ""), ("w\\n (2, 2)", "lightblue"), ("b\\n (2)", "lightblue")])
    assert re.search(rf"\t{id(w)} -> \d+\n", src)  # the leaf into its AccumulateGrad
    assert f"\t{id(y.grad_fn)} -> {id(y)}\n" in src
    assert len(re.findall(r"->", src)) == 8


def test_make_dot_saved_tensors_and_attrs(monkeypatch):
    monkeypatch.setattr(viz, "Digraph", None)
    x = ng.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
    y = x.sum(1).exp()
    src = viz.make_dot(y, show_saved=True, show_attrs=True).source
    assert '[label="result\\n (1)" fillcolor=orange]' in src  # ExpBackward0's saved result
    assert f"\t{id(y.grad_fn)} -> " in src and "[dir=none]" in src
    assert "SumBackward1\\n" in src and "dim" in src  # its _saved_dim under the name


def test_make_dot_view_base():
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    v = (x * 2)[0:1]
    dot = viz.make_dot(v)
    assert "darkolivegreen3" in dot.source and "style=dotted" in dot.source


def test_graphviz_digraph_when_installed():
    graphviz = pytest.importorskip("graphviz")
    _, _, y = _graph()
    dot = viz.make_dot(y)
    assert isinstance(dot, graphviz.Digraph)
    assert "TanhBackward0" in dot.source


@pytest.mark.filterwarnings("ignore:distutils Version classes are deprecated")
def test_torchviz_reads_numbagrad_graphs():
    torchviz = pytest.importorskip("torchviz")
    w, b, y = _graph()
    ours, theirs = viz.make_dot(y), torchviz.make_dot(y)
    assert sorted(ours.body) == sorted(theirs.body)
    assert ours.graph_attr == theirs.graph_attr
