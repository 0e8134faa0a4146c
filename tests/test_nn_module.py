"""nn.Module, Parameter and the containers, each against PyTorch's behaviour."""

from __future__ import annotations

import copy
import pickle
from collections import OrderedDict

import numpy as np
import pytest

import numbagrad as ng
from numbagrad import nn

torch = pytest.importorskip("torch")


def _ours(text: str) -> str:
    """PyTorch's text with its names as numbagrad spells them."""
    return text.replace("torch.", "numbagrad.")


def _copy_weights(ours, theirs):
    ours.load_state_dict({k: ng.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})


class Net:
    """The same small network built in either library."""

    @staticmethod
    def build(lib):
        class N(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc1 = lib.nn.Linear(3, 4)
                self.act = lib.nn.Tanh()
                self.blocks = lib.nn.ModuleList([lib.nn.Linear(4, 4), lib.nn.Linear(4, 4)])
                self.register_buffer("scale", lib.ones(4))
                self.register_buffer("tmp", lib.zeros(2), persistent=False)
                self.head = lib.nn.Sequential(lib.nn.Linear(4, 2), lib.nn.Sigmoid())

            def forward(self, x):
                x = self.act(self.fc1(x))
                for b in self.blocks:
                    x = x + b(x)
                return self.head(x * self.scale)

        return N()


# ---------------------------------------------------------------- Parameter


def test_parameter_repr_isinstance_and_shared_data():
    t = ng.tensor([1.0, 2.0])
    p = nn.Parameter(t)
    assert repr(p) == repr(torch.nn.Parameter(torch.tensor([1.0, 2.0])))
    assert repr(nn.Parameter(t, requires_grad=False)) == repr(
        torch.nn.Parameter(torch.tensor([1.0, 2.0]), requires_grad=False))
    assert repr(nn.Parameter()) == repr(torch.nn.Parameter())
    assert isinstance(p, ng.Tensor) and isinstance(p, nn.Parameter)
    assert p.is_leaf and p.requires_grad and p.grad_fn is None
    t.add_(1.0)
    assert p.tolist() == [2.0, 3.0]  # shares t's memory


def test_parameter_of_a_graph_tensor_is_a_leaf_and_takes_gradients():
    x = ng.ones(3, requires_grad=True)
    p = nn.Parameter(x * 2)
    assert p.is_leaf and p.grad_fn is None
    (p * p).sum().backward()
    assert p.grad.tolist() == [4.0, 4.0, 4.0]
    assert x.grad is None


def test_parameter_refuses_integer_data_as_pytorch():
    with pytest.raises(RuntimeError) as theirs:
        torch.nn.Parameter(torch.tensor([1, 2]))
    with pytest.raises(RuntimeError) as ours:
        nn.Parameter(ng.tensor([1, 2]))
    assert str(ours.value) == str(theirs.value)


def test_parameter_survives_pickle_and_deepcopy():
    p = nn.Parameter(ng.tensor([1.0, 2.0]))
    for q in (pickle.loads(pickle.dumps(p)), copy.deepcopy(p)):
        assert type(q) is nn.Parameter and q.requires_grad and q.tolist() == [1.0, 2.0]
        assert q.data_ptr() != p.data_ptr()


# ---------------------------------------------------------------- registration


def test_registration_names_order_and_state_dict_keys_match_pytorch():
    ours, theirs = Net.build(ng), Net.build(torch)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in theirs.named_buffers()]
    assert [n for n, _ in ours.named_modules()] == [n for n, _ in theirs.named_modules()]
    assert [n for n, _ in ours.named_children()] == [n for n, _ in theirs.named_children()]
    assert list(ours.state_dict()) == list(theirs.state_dict())  # (no non-persistent "tmp")
    assert list(ours.state_dict()._metadata) == list(theirs.state_dict()._metadata)
    assert [n for n, _ in ours.named_parameters(prefix="m", recurse=False)] == [
        n for n, _ in theirs.named_parameters(prefix="m", recurse=False)]
    assert repr(ours) == repr(theirs)


def test_forward_and_gradients_match_pytorch_after_loading_its_weights():
    ours, theirs = Net.build(ng), Net.build(torch)
    _copy_weights(ours, theirs)
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    xo, xt = ng.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    yo, yt = ours(xo), theirs(xt)
    np.testing.assert_allclose(yo.detach().numpy(), yt.detach().numpy(), rtol=1e-5, atol=1e-6)
    (yo * yo).sum().backward()
    (yt * yt).sum().backward()
    np.testing.assert_allclose(xo.grad.numpy(), xt.grad.numpy(), rtol=1e-4, atol=1e-6)
    for (n, po), (_, pt) in zip(ours.named_parameters(), theirs.named_parameters()):
        np.testing.assert_allclose(po.grad.numpy(), pt.grad.numpy(), rtol=1e-4, atol=1e-6,
                                   err_msg=n)


def test_shared_parameters_are_yielded_once_unless_duplicates_are_asked_for():
    for lib in (ng, torch):
        a = lib.nn.Linear(2, 2)
        seq = lib.nn.Sequential(a, a)
        b = lib.nn.Linear(2, 2)
        b.weight = a.weight
        seq.append(b)
        names = [n for n, _ in seq.named_parameters()]
        assert names == ["0.weight", "0.bias", "2.bias"]
        assert len(list(seq.named_parameters(remove_duplicate=False))) == 6
        assert len(list(seq.modules())) == 3


def test_setattr_errors_match_pytorch():
    def run(lib, action):
        try:
            action(lib)
        except Exception as e:
            return type(e).__name__, _ours(str(e))
        return None

    class Early(ng.nn.Module):
        def __init__(self):
            self.w = ng.nn.Parameter(ng.ones(1))

    class EarlyT(torch.nn.Module):
        def __init__(self):
            self.w = torch.nn.Parameter(torch.ones(1))

    assert run(ng, lambda lib: Early()) == run(torch, lambda lib: EarlyT())
    actions = [
        lambda lib: setattr(lib.nn.Linear(1, 1), "weight", lib.ones(1, 1)),
        lambda lib: setattr(lib.nn.Sequential(lib.nn.ReLU()), "0", 3),
        lambda lib: lib.nn.Linear(1, 1).register_buffer("weight", lib.ones(1)),
        lambda lib: lib.nn.Linear(1, 1).register_buffer("a.b", lib.ones(1)),
        lambda lib: lib.nn.Linear(1, 1).register_buffer("b", [1]),
        lambda lib: lib.nn.Linear(1, 1).register_parameter("p", lib.ones(1)),
        lambda lib: lib.nn.Linear(1, 1).register_parameter(
            "p", lib.nn.Parameter(lib.ones(1)) * 2),
        lambda lib: lib.nn.Linear(1, 1).add_module("m", 3),
        lambda lib: lib.nn.Linear(1, 1).add_module("", lib.nn.ReLU()),
        lambda lib: lib.nn.Linear(1, 1).nothing,
        lambda lib: lib.nn.Sequential(lib.nn.ReLU()).get_submodule("0.x"),
        lambda lib: lib.nn.Module()(1),
        lambda lib: lib.nn.Linear(1, 1).train("yes"),
    ]
    for k, action in enumerate(actions):
        assert run(ng, action) == run(torch, action), k


def test_parameter_buffer_and_module_reassignment_and_deletion():
    m = nn.Linear(2, 2)
    m.bias = None
    assert m.bias is None and "bias" in m._parameters
    assert list(m.state_dict()) == ["weight"]
    m.extra = nn.ReLU()
    assert list(dict(m.named_children())) == ["extra"]
    del m.extra
    assert not hasattr(m, "extra")
    m.register_buffer("b", ng.zeros(1))
    m.b = ng.ones(1)  # a tensor assigned to a buffer's name stays a buffer
    assert m._buffers["b"].tolist() == [1.0]
    m.b = nn.Parameter(ng.ones(1))  # a Parameter takes the name over
    assert "b" in m._parameters and "b" not in m._buffers
    m.c = nn.Buffer(ng.ones(2), persistent=False)
    assert "c" in m._buffers and "c" not in m.state_dict()
    assert "weight" in dir(m) and "extra" not in dir(m)


def test_get_submodule_parameter_buffer_and_apply_order():
    ours, theirs = Net.build(ng), Net.build(torch)
    assert ours.get_submodule("blocks.1") is ours.blocks[1]
    assert ours.get_parameter("head.0.bias") is ours.head[0].bias
    assert ours.get_buffer("scale") is ours.scale
    seen_o, seen_t = [], []
    ours.apply(lambda m: seen_o.append(m._get_name()))
    theirs.apply(lambda m: seen_t.append(m._get_name()))
    assert seen_o == seen_t


def test_train_eval_and_requires_grad():
    m = Net.build(ng)
    assert m.eval() is m and not m.training and not m.head[1].training
    m.train()
    assert all(x.training for x in m.modules())
    m.requires_grad_(False)
    assert not any(p.requires_grad for p in m.parameters())


# ---------------------------------------------------------------- gradients


def test_zero_grad_semantics_match_pytorch():
    for lib in (ng, torch):
        m = lib.nn.Linear(2, 1)
        m(lib.ones(3, 2)).sum().backward()
        grad = m.weight.grad
        m.zero_grad(set_to_none=False)
        assert m.weight.grad is grad and m.weight.grad.tolist() == [[0.0, 0.0]]
        m.zero_grad()
        assert m.weight.grad is None


# ---------------------------------------------------------------- conversion


def test_to_double_float_keep_the_parameter_objects_and_convert_grads():
    m = nn.Linear(2, 2)
    m.register_buffer("steps", ng.tensor(3))
    w = m.weight
    m(ng.ones(1, 2)).sum().backward()
    assert m.double() is m
    assert m.weight is w and type(w) is nn.Parameter and w.dtype is ng.float64
    assert w.grad.dtype is ng.float64 and w.requires_grad
    assert m.steps.dtype is ng.int64  # (integer buffers keep their dtype)
    m.to(ng.float32)
    assert m.weight is w and w.dtype is ng.float32
    m.to(ng.zeros(1, dtype=ng.float64))
    assert w.dtype is ng.float64
    m.float()
    m.type(ng.float64)
    assert m.steps.dtype is ng.float64  # (type() converts every tensor, as PyTorch)
    m.cpu()
    assert m.weight is w
    with pytest.raises(TypeError, match="nn.Module.to only accepts floating point or complex "
                       "dtypes, but got desired dtype=numbagrad.int64"):
        m.to(ng.int64)


# ---------------------------------------------------------------- state dict


def test_state_dict_holds_detached_tensors_sharing_memory():
    m = nn.Linear(2, 2)
    sd = m.state_dict()
    assert isinstance(sd, OrderedDict)
    assert type(sd["weight"]) is ng.Tensor and not sd["weight"].requires_grad
    assert sd["weight"].data_ptr() == m.weight.data_ptr()
    assert m.state_dict(keep_vars=True)["weight"] is m.weight
    assert list(m.state_dict(prefix="p.")) == ["p.weight", "p.bias"]


def test_load_state_dict_copies_in_place_and_reports_keys_as_pytorch():
    ours, theirs = nn.Linear(2, 3), torch.nn.Linear(2, 3)
    w = ours.weight
    res = ours.load_state_dict({"weight": ng.ones(3, 2), "bias": ng.zeros(3)})
    assert ours.weight is w and w.tolist() == [[1.0, 1.0]] * 3 and w.requires_grad
    assert repr(res) == repr(theirs.load_state_dict(theirs.state_dict()))
    res_o = ours.load_state_dict({"weight": ng.ones(3, 2), "x": ng.ones(1)}, strict=False)
    res_t = theirs.load_state_dict({"weight": torch.ones(3, 2), "x": torch.ones(1)}, strict=False)
    assert repr(res_o) == repr(res_t)
    assert res_o.missing_keys == ["bias"] and res_o.unexpected_keys == ["x"]


@pytest.mark.parametrize("sd", [
    {"weight": np.zeros((3, 3)), "foo": np.zeros(1)},
    {"weight": np.zeros((3, 3)), "bias": np.zeros(3)},
    {"bias": np.zeros(3), "0.x": np.zeros(1)},
])
def test_load_state_dict_errors_match_pytorch(sd):
    with pytest.raises(RuntimeError) as theirs:
        torch.nn.Linear(2, 3).load_state_dict({k: torch.tensor(v) for k, v in sd.items()})
    with pytest.raises(RuntimeError) as ours:
        nn.Linear(2, 3).load_state_dict({k: ng.tensor(v) for k, v in sd.items()})
    assert str(ours.value) == _ours(str(theirs.value))


def test_load_state_dict_nested_unexpected_keys_and_assign():
    ours, theirs = Net.build(ng), Net.build(torch)
    sd_t = theirs.state_dict()
    sd_t["blocks.0.extra"] = torch.ones(1)
    sd_t["nowhere.w"] = torch.ones(1)
    with pytest.raises(RuntimeError) as e_t:
        theirs.load_state_dict(sd_t)
    with pytest.raises(RuntimeError) as e_o:
        ours.load_state_dict({k: ng.tensor(v.numpy()) for k, v in sd_t.items()})
    assert str(e_o.value) == str(e_t.value)
    m = nn.Linear(2, 2)
    new = ng.ones(2, 2)
    m.load_state_dict({"weight": new, "bias": ng.zeros(2)}, assign=True)
    assert type(m.weight) is nn.Parameter and m.weight.data_ptr() == new.data_ptr()
    with pytest.raises(TypeError, match="Expected state_dict to be dict-like, got <class 'list'>"):
        m.load_state_dict([])


# ---------------------------------------------------------------- hooks


def test_forward_hooks_order_replacement_and_removal_match_pytorch():
    def trace(lib):
        log = []
        m = lib.nn.Linear(2, 2)
        with lib.no_grad():
            m.weight.copy_(lib.eye(2))
            m.bias.zero_()
        h1 = m.register_forward_pre_hook(lambda mod, args: log.append("pre1"))
        m.register_forward_pre_hook(lambda mod, args: (args[0] * 2,))
        m.register_forward_pre_hook(lambda mod, args: log.append("pre0"), prepend=True)
        m.register_forward_hook(lambda mod, args, out: log.append(("post", out.tolist())))
        m.register_forward_hook(lambda mod, args, out: out + 1)
        m.register_forward_hook(lambda mod, args, kwargs, out: log.append(("kw", kwargs)),
                                with_kwargs=True)
        first = m(lib.ones(1, 2)).tolist()
        h1.remove()
        second = m(lib.ones(1, 2)).tolist()
        return log, first, second

    assert trace(ng) == trace(torch)


# ---------------------------------------------------------------- containers


def test_sequential_indexing_slicing_and_editing_match_pytorch():
    def build(lib):
        return lib.nn.Sequential(lib.nn.ReLU(), lib.nn.Tanh(), lib.nn.Sigmoid(), lib.nn.SiLU())

    o, t = build(ng), build(torch)
    assert type(o[-1]) is nn.SiLU and type(o[1]) is nn.Tanh
    assert type(o[1:3]) is nn.Sequential and repr(o[1:3]) == repr(t[1:3])
    assert repr(o[::-1]) == repr(t[::-1])
    assert len(o) == 4 and [type(m).__name__ for m in o] == [type(m).__name__ for m in t]
    for s in (o, t):
        lib = ng if s is o else torch
        del s[1]
        s.insert(0, lib.nn.Identity())
        s.append(lib.nn.ELU())
        s.extend([lib.nn.GELU()])
        s[-1] = lib.nn.GELU("tanh")
        s.pop(2)
    assert repr(o) == repr(t)
    assert repr(o + build(ng)) == repr(t + build(torch))
    od = OrderedDict([("a", nn.ReLU()), ("b", nn.Tanh())])
    assert repr(nn.Sequential(od)) == repr(torch.nn.Sequential(
        OrderedDict([("a", torch.nn.ReLU()), ("b", torch.nn.Tanh())])))
    with pytest.raises(IndexError, match="index 9 is out of range"):
        o[9]
    with pytest.raises(ValueError, match="add operator supports only objects of Sequential"):
        o + 1
    assert repr(nn.Sequential()) == "Sequential()"


def test_module_list_and_dict_match_pytorch():
    def build(lib):
        ml = lib.nn.ModuleList([lib.nn.Linear(1, 1), lib.nn.Linear(1, 1), lib.nn.ReLU()])
        ml.append(lib.nn.Tanh())
        ml.extend([lib.nn.Tanh(), lib.nn.Tanh()])
        ml.insert(1, lib.nn.ELU())
        del ml[0]
        md = lib.nn.ModuleDict({"b": lib.nn.ReLU(), "a": lib.nn.Tanh()})
        md["c"] = lib.nn.SiLU()
        md.pop("b")
        return ml, md

    (ml_o, md_o), (ml_t, md_t) = build(ng), build(torch)
    assert repr(ml_o) == repr(ml_t) and repr(md_o) == repr(md_t)
    assert repr(ml_o[1:3]) == repr(ml_t[1:3]) and type(ml_o[-1]) is nn.Tanh
    assert len(ml_o) == len(ml_t) and list(md_o.keys()) == list(md_t.keys())
    assert "a" in md_o and type(md_o["c"]) is nn.SiLU
    with pytest.raises(IndexError, match="index 7 is out of range"):
        ml_o[7]


def test_parameter_list_and_dict_register_and_print_as_pytorch():
    def build(lib):
        pl = lib.nn.ParameterList([lib.nn.Parameter(lib.ones(2, 3)), lib.zeros(1)])
        pl.append(lib.ones(4))
        pd = lib.nn.ParameterDict({"b": lib.ones(2), "a": lib.nn.Parameter(lib.zeros(1, 2))})
        pd["c"] = lib.ones(3)
        holder = lib.nn.Module()
        holder.pl, holder.pd = pl, pd
        return holder

    o, t = build(ng), build(torch)
    assert _ours(repr(t)) == repr(o)
    assert [n for n, _ in o.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert all(isinstance(p, nn.Parameter) for p in o.pl)
    assert len(o.pl[1:]) == 2 and list(o.pd.keys()) == ["a", "b", "c"]
    with pytest.raises(RuntimeError, match="ParameterList should not be called."):
        o.pl()


def test_a_modules_hook_tables_print_as_pytorchs_ordered_dicts():
    torch = pytest.importorskip("torch")
    reprs = []
    for lib in (ng, torch):
        m = lib.nn.Linear(2, 2)
        before = repr(m._forward_pre_hooks), repr(m._forward_hooks), repr(m._backward_hooks)
        h = m.register_forward_pre_hook(print)
        during = repr(m._forward_pre_hooks).replace(f"({h.id},", "(ID,")
        h.remove()
        reprs.append((before, during, repr(m._forward_pre_hooks)))
    assert reprs[0] == reprs[1]
    assert reprs[0][1] == "OrderedDict([(ID, <built-in function print>)])"
