"""numbagrad.save / numbagrad.load: exact round trips of tensors, state dicts and containers
through a path and a file object; sharing kept; unsafe or unknown content refused."""

from __future__ import annotations

import io
import json
import math
import pickle
import zipfile
from collections import OrderedDict

import numpy as np
import pytest

import numbagrad as ng
from numbagrad import serialization


def roundtrip(obj, how, tmp_path, **load_kwargs):
    if how == "bytesio":
        buf = io.BytesIO()
        ng.save(obj, buf)
        buf.seek(0)
        return ng.load(buf, **load_kwargs)
    path = tmp_path / "ckpt.pt"
    ng.save(obj, str(path) if how == "str" else path)
    return ng.load(path if how == "pathlib" else str(path), **load_kwargs)


HOWS = ["str", "pathlib", "bytesio"]


def same_tensor(a, b):
    assert type(a) is type(b) and a.dtype == b.dtype and a.shape == b.shape
    assert a.requires_grad == b.requires_grad and a.device == b.device
    x, y = a.detach().numpy(), b.detach().numpy()
    assert x.tobytes() == np.ascontiguousarray(y).tobytes()  # bit for bit (NaNs, -0.0 too)


def same(a, b):
    assert type(a) is type(b), (a, b)
    if isinstance(a, ng.Tensor):
        same_tensor(a, b)
    elif isinstance(a, dict):
        assert list(a) == list(b)
        for k in a:
            assert type(k) is type(next(x for x in b if x == k))
            same(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            same(x, y)
    elif isinstance(a, float) and math.isnan(a):
        assert math.isnan(b)
    else:
        assert a == b and repr(a) == repr(b)


def tensors():
    special = np.array([np.nan, -0.0, np.inf, -np.inf, 5e-324, 1 / 3], np.float64)
    return [
        ng.tensor(special), ng.tensor(special.astype(np.float32)),
        ng.tensor([[1, -2], [3, 2 ** 40]]), ng.tensor([7, 8], dtype=ng.int32),
        ng.tensor([True, False]), ng.tensor(3.5), ng.zeros(0, 3),
        ng.arange(12.0).reshape(3, 4).t(),  # not contiguous
        ng.randn(2, 3, requires_grad=True),
    ]


@pytest.mark.parametrize("how", HOWS)
def test_tensors_round_trip_exactly(how, tmp_path):
    ts = tensors()
    out = roundtrip(ts, how, tmp_path)
    assert isinstance(out, list) and len(out) == len(ts)
    for a, b in zip(out, ts):
        same_tensor(a, b)
        assert a.is_leaf and a._data.flags.writeable
    same_tensor(roundtrip(ts[-1] * 2, how, tmp_path), (ts[-1] * 2).detach().requires_grad_())


@pytest.mark.parametrize("how", HOWS)
def test_state_dicts_and_containers_round_trip(how, tmp_path):
    w, b = ng.randn(3, 2), ng.zeros(3)
    state = OrderedDict([("fc.weight", w), ("fc.bias", b),
                         ("bn.num_batches_tracked", ng.tensor(4))])
    state._metadata = OrderedDict([("", {"version": 1}), ("fc", {"version": 1})])
    optim = {
        "state": {0: {"step": ng.tensor(3.0), "exp_avg": ng.ones(3, 2)},
                  1: {"momentum_buffer": None}},
        "param_groups": [{"lr": 1e-3, "betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0,
                          "amsgrad": False, "foreach": None, "params": [0, 1], "name": "all"}],
    }
    obj = {"model": state, "optimizer": optim, "epoch": 7, "loss": float("nan"),
           "extremes": [-0.0, float("inf"), float("-inf"), 2 ** 70, -(2 ** 65), 0.1],
           "text": "héllo ✓", "empty": ([], (), {}, OrderedDict()),
           (1, "k"): {2.5: True, None: 1},
           "size": ng.Size([2, 3]), "dtype": ng.float64, "device": ng.device("cpu"),
           "set": {1, 2}, "frozen": frozenset({"a"}),
           "np": (np.float64(2.5), np.arange(3, dtype=np.int16))}
    out = roundtrip(obj, how, tmp_path)
    same({k: v for k, v in out.items() if k != "np"}, {k: v for k, v in obj.items() if k != "np"})
    assert type(out["model"]) is OrderedDict and out["model"]._metadata == state._metadata
    assert type(out["np"][0]) is np.float64 and out["np"][0] == 2.5
    assert out["np"][1].dtype == np.int16 and out["np"][1].tolist() == [0, 1, 2]
    assert out["dtype"] is ng.float64


@pytest.mark.parametrize("how", HOWS)
def test_sharing_is_kept(how, tmp_path):
    w = ng.randn(4, requires_grad=True)
    alias = w.detach()  # what state_dict() gives for tied weights: another tensor, same memory
    out = roundtrip({"a": w, "b": w, "c": alias, "d": [w]}, how, tmp_path)
    assert out["a"] is out["b"] is out["d"][0]
    assert out["c"] is not out["a"] and not out["c"].requires_grad
    out["c"][0] = 100.0
    assert out["a"][0].item() == 100.0  # one storage again


class Config:
    """A user class: pickled into the archive, loaded only when trusted or allowlisted."""

    def __init__(self, lr):
        self.lr = lr


def _saved(obj):
    buf = io.BytesIO()
    ng.save(obj, buf)
    buf.seek(0)
    return buf


def test_other_objects_are_pickled_and_refused_by_a_weights_only_load():
    cfg = Config(0.5)
    w = ng.randn(2, requires_grad=True)
    cfg.w = w
    obj = {"cfg": cfg, "again": cfg, "w": w, "counts": __import__("collections").Counter("aab")}
    buf = _saved(obj)
    with zipfile.ZipFile(buf) as zf:  # the tensor is a record, not pickled bytes
        assert zf.namelist() == ["archive/data.json", "archive/objects.pkl", "archive/data/0.npy"]
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError) as info:
        ng.load(buf)
    name = f"{__name__}.Config"
    assert str(info.value).startswith(
        "Weights only load failed. This file can still be loaded, to do so you have two options, "
        "\x1b[1mdo those steps only if you trust the source of the checkpoint\x1b[0m. \n\t(1) ")
    assert str(info.value).endswith(
        f"WeightsUnpickler error: Unsupported global: GLOBAL {name} was not an allowed global "
        f"by default. Please use `torch.serialization.add_safe_globals([{name}])` or the "
        f"`torch.serialization.safe_globals([{name}])` context manager to allowlist this global "
        "if you trust this class/function.")
    buf.seek(0)
    out = ng.load(buf, weights_only=False)
    assert type(out["cfg"]) is Config and out["cfg"] is out["again"] and out["cfg"].lr == 0.5
    assert out["cfg"].w is out["w"] and out["w"].requires_grad  # sharing kept across the two
    assert out["w"].tolist() == w.tolist() and out["counts"] == {"a": 2, "b": 1}
    loop = [1]
    loop.append(loop)
    with pytest.raises(ValueError, match="a list that contains itself"):
        ng.save(loop, io.BytesIO())


def test_add_safe_globals_allows_named_classes():
    import argparse

    buf = _saved({"args": argparse.Namespace(lr=0.1, dtype=ng.bool, size=ng.Size([2]))})
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL argparse.Namespace was not"):
        ng.load(buf)
    with serialization.safe_globals([argparse.Namespace]):
        buf.seek(0)
        assert ng.load(buf)["args"] == argparse.Namespace(lr=0.1, dtype=ng.bool, size=ng.Size([2]))
    assert serialization.get_safe_globals() == []
    serialization.add_safe_globals([(argparse.Namespace, "argparse.Namespace")])
    try:
        assert serialization.get_safe_globals() == [argparse.Namespace]
        buf.seek(0)
        assert ng.load(buf)["args"].lr == 0.1
    finally:
        serialization.clear_safe_globals()
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL argparse.Namespace was not"):
        ng.load(buf)


def test_a_whole_module_round_trips_when_trusted(tmp_path):
    torch = pytest.importorskip("torch")
    model = ng.nn.Sequential(ng.nn.Linear(3, 4), ng.nn.ReLU(), ng.nn.Linear(4, 2))
    path = tmp_path / "model.pt"
    ng.save(model, path)
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        ng.load(path)
    loaded = ng.load(path, weights_only=False)
    x = ng.randn(5, 3)
    assert type(loaded) is ng.nn.Sequential and type(loaded[0].weight) is ng.nn.Parameter
    assert loaded(x).tolist() == model(x).tolist()
    loaded(x).sum().backward()
    assert loaded[0].weight.grad is not None and model[0].weight.grad is None
    # the same refusal as PyTorch's for a whole module
    tpath = tmp_path / "torch_model.pt"
    torch.save(torch.nn.Sequential(torch.nn.Linear(3, 4)), tpath)
    with pytest.raises(pickle.UnpicklingError) as info:
        torch.load(tpath)
    with pytest.raises(pickle.UnpicklingError) as ours:
        ng.load(path)
    head = str(info.value).split("WeightsUnpickler")[0]
    assert str(ours.value).split("WeightsUnpickler")[0] == head


class Marked(ng.Tensor):
    """A Tensor subclass built as nn.Parameter is: ``Marked(data, requires_grad)``."""

    def __new__(cls, data, requires_grad=True):
        return cls._make(data._data, requires_grad)

    def __init__(self, *args, **kwargs):
        pass


def test_a_registered_tensor_subclass_loads_as_itself(tmp_path):
    # unregistered, it is pickled (as its __reduce_ex__ says: Tensor's gives a plain tensor)
    buf = _saved(Marked(ng.ones(2)))
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL numbagrad._tensor._rebuild was not"):
        ng.load(buf)
    buf.seek(0)
    assert ng.load(buf, weights_only=False).tolist() == [1.0, 1.0]
    serialization.register_tensor_class(Marked)
    saved = io.BytesIO()
    try:
        p = Marked(ng.ones(2))
        out = roundtrip([p, p, Marked(ng.zeros(1), False)], "bytesio", tmp_path)
        assert type(out[0]) is Marked and out[0] is out[1] and out[0].requires_grad
        assert type(out[2]) is Marked and not out[2].requires_grad
        ng.save(p, saved)
    finally:
        del serialization._tensor_classes[serialization._class_name(Marked)]
    saved.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="unknown tensor class .*Marked"):
        ng.load(saved)


def _archive(obj, edit):
    """The archive of ``obj`` with its description changed by ``edit``."""
    src = io.BytesIO()
    ng.save(obj, src)
    src.seek(0)
    out = io.BytesIO()
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(out, "w") as zout:
        for name in zin.namelist():
            data = zin.read(name)
            if name.endswith("data.json"):
                description = json.loads(data)
                edit(description)
                data = json.dumps(description)
            zout.writestr(name, data)
    out.seek(0)
    return out


ran = []


def _mark(what):
    ran.append(what)


class Payload:
    """Unpickling it runs ``_mark``: the stand-in for a malicious payload."""

    def __reduce__(self):
        return (_mark, ("code ran",))


def test_a_pickle_is_refused_unless_weights_only_is_false(tmp_path):
    ran.clear()
    path = tmp_path / "evil.pt"
    path.write_bytes(pickle.dumps({"x": Payload(), "t": ng.ones(2)}))
    with pytest.raises(pickle.UnpicklingError, match="not a numbagrad archive"):
        ng.load(path)
    with pytest.raises(pickle.UnpicklingError):
        ng.load(path, weights_only=True)
    assert ran == []
    out = ng.load(path, weights_only=False)  # trusted: pickle runs what the file names
    assert ran == ["code ran"] and out["t"].tolist() == [1.0, 1.0]


def test_unknown_or_broken_archive_content_is_refused():
    ran.clear()
    def kind(d):
        d["root"] = {"kind": "object", "module": "os", "name": "system"}

    with pytest.raises(pickle.UnpicklingError, match="unsupported kind of object 'object'"):
        ng.load(_archive([1], kind))

    def klass(d):
        d["tensors"][0]["class"] = "os.system"

    with pytest.raises(pickle.UnpicklingError, match="unknown tensor class os.system"):
        ng.load(_archive([ng.ones(1)], klass))

    def shape(d):
        d["tensors"][0]["shape"] = [5]

    with pytest.raises(pickle.UnpicklingError, match="does not match its dtype and shape"):
        ng.load(_archive([ng.ones(1)], shape))
    # an object array inside: NumPy refuses it without pickle
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("archive/data.json", json.dumps({
            "format": "numbagrad.save", "version": 1, "root": {"kind": "ndarray", "storage": 0},
            "tensors": [], "storages": ["data/0.npy"]}))
        npy = io.BytesIO()
        np.save(npy, np.array([Payload()], dtype=object), allow_pickle=True)
        zf.writestr("archive/data/0.npy", npy.getvalue())
    buf.seek(0)
    with pytest.raises(ValueError, match="Object arrays cannot be loaded"):
        ng.load(buf)
    assert ran == []


def test_map_location():
    def to_cuda(d):
        for r in d["tensors"]:
            r["device"] = "cuda:0"

    a, b = ng.arange(3.0), ng.ones(2)
    for ml in ("cpu", ng.device("cpu"), {"cuda:0": "cpu"}, lambda t, loc: t):
        out = ng.load(_archive([a, b], to_cuda), map_location=ml)
        assert out[0].device == ng.device("cpu") and out[0].tolist() == [0.0, 1.0, 2.0]
    seen = []
    ng.load(_archive([a, a], to_cuda), map_location=lambda t, loc: seen.append(loc) or t)
    assert seen == ["cuda:0"]  # once per storage
    buf = io.BytesIO()
    ng.save(a, buf)
    buf.seek(0)
    assert ng.load(buf, map_location=lambda t, loc: None).tolist() == a.tolist()  # the default
    if not ng.cuda.is_available():
        with pytest.raises(RuntimeError, match="Attempting to deserialize object on a CUDA device"):
            ng.load(_archive([a], to_cuda))


@pytest.mark.cuda
@pytest.mark.skipif(not ng.cuda.is_available(), reason="no CUDA device or simulator")
def test_cuda_tensors_round_trip_to_their_device():
    t = ng.arange(4.0, device="cuda")
    buf = io.BytesIO()
    ng.save({"t": t, "u": t}, buf)
    buf.seek(0)
    out = ng.load(buf)
    assert out["t"].device == ng.device("cuda:0") and out["t"] is out["u"]
    assert out["t"].tolist() == [0.0, 1.0, 2.0, 3.0]
    buf.seek(0)
    assert ng.load(buf, map_location="cpu")["t"].device == ng.device("cpu")
