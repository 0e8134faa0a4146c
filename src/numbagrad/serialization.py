"""``save`` and ``load``: tensors, state dicts and nested containers in a zip archive holding a
JSON description of the object tree and one ``.npy`` file per tensor storage. Loading runs no
pickle (unless asked to with ``weights_only=False``). The format: docs/serialization.md.
"""

from __future__ import annotations

import json
import math
import os
import pickle
import zipfile
from collections import OrderedDict
from collections.abc import Callable

import numpy as np

from . import cuda
from . import dtypes as D
from ._tensor import LazyTensor, Size, Tensor, _check_device, _on, device

__all__ = ["load", "register_tensor_class", "save"]

FORMAT = "numbagrad.save"
VERSION = 1
_ROOT = "archive/"
_DESCRIPTION = _ROOT + "data.json"

# Tensor subclasses that round-trip as themselves (nn.Parameter registers here), by name:
# name -> rebuild(tensor, requires_grad)
_tensor_classes: dict[str, Callable] = {}


def _class_name(cls) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def register_tensor_class(cls, rebuild: Callable | None = None) -> None:
    """Let tensors of the Tensor subclass ``cls`` load back as ``cls``: saved under its name,
    rebuilt by ``rebuild(tensor, requires_grad)`` (default ``cls(tensor, requires_grad)``, the
    signature of ``nn.Parameter``)."""
    _tensor_classes[_class_name(cls)] = rebuild or cls


# ---------------------------------------------------------------- save

class _Writer:
    """Turns an object tree into JSON-able nodes, collecting tensors and arrays on the way."""

    def __init__(self):
        self.tensors: list[dict] = []
        self.storages: list[np.ndarray] = []
        self._tensor_index: dict[int, int] = {}  # id(tensor) -> index in self.tensors
        self._storage_index: dict[int, int] = {}  # id(tensor._data) -> index in self.storages
        self._open: set[int] = set()  # containers being encoded (a cycle check)
        self._alive: list = []  # what the ids above refer to, kept alive while saving

    def storage(self, key_obj, array: np.ndarray) -> int:
        k = self._storage_index.get(id(key_obj))
        if k is None:
            k = self._storage_index[id(key_obj)] = len(self.storages)
            # (not np.ascontiguousarray, which makes a 0-d array 1-d)
            self.storages.append(array if array.flags.c_contiguous else array.copy(order="C"))
            self._alive.append(key_obj)
        return k

    def tensor(self, t: Tensor) -> int:
        k = self._tensor_index.get(id(t))
        if k is not None:
            return k
        record = {}
        cls = type(t)
        if cls is not Tensor and cls is not LazyTensor:
            name = _class_name(cls)
            if name not in _tensor_classes:
                raise TypeError(
                    f"numbagrad.save: cannot save a {cls.__name__} (a Tensor subclass not "
                    "registered with numbagrad.serialization.register_tensor_class)"
                )
            record["class"] = name
        data = t._data
        record.update(storage=self.storage(data, t._host()), dtype=t.dtype.name,
                      shape=list(t.shape), requires_grad=t.requires_grad, device=str(t.device))
        k = self._tensor_index[id(t)] = len(self.tensors)
        self.tensors.append(record)
        self._alive.append(t)
        return k

    def encode(self, obj):
        t = type(obj)
        if obj is None or t is bool or t is int or t is str:
            return obj
        if t is float:
            return obj if math.isfinite(obj) else {"kind": "float", "value": repr(obj)}
        if isinstance(obj, Tensor):
            return {"kind": "tensor", "index": self.tensor(obj)}
        if t is D.dtype:
            return {"kind": "dtype", "name": obj.name}
        if t is device:
            return {"kind": "device", "name": str(obj)}
        if t is np.ndarray or isinstance(obj, np.generic):
            if obj.dtype.hasobject:
                raise TypeError(f"numbagrad.save: cannot save a NumPy array of dtype {obj.dtype}")
            node = {"kind": "ndarray" if t is np.ndarray else "numpy_scalar",
                    "storage": self.storage(obj, np.asarray(obj))}
            return node
        if t in _CONTAINERS:
            if id(obj) in self._open:
                raise ValueError(f"numbagrad.save: a {t.__name__} that contains itself")
            self._open.add(id(obj))
            try:
                return self._container(obj, t)
            finally:
                self._open.discard(id(obj))
        raise TypeError(
            f"numbagrad.save: cannot save an object of type {t.__module__}.{t.__qualname__}; "
            "supported are tensors, dtypes, devices, None, bool, int, float, str, NumPy arrays "
            "and scalars, and lists, tuples, torch.Size, sets, dicts and OrderedDicts of them"
        )

    def _container(self, obj, t):
        if t is list:
            return [self.encode(x) for x in obj]
        if t is dict or t is OrderedDict:
            node = {"kind": _CONTAINERS[t],
                    "items": [[self.encode(k), self.encode(v)] for k, v in obj.items()]}
            metadata = getattr(obj, "_metadata", None)  # a state_dict's per-module versions
            if metadata is not None:
                node["metadata"] = self.encode(metadata)
            return node
        return {"kind": _CONTAINERS[t], "items": [self.encode(x) for x in obj]}


_CONTAINERS = {list: "list", tuple: "tuple", Size: "Size", set: "set", frozenset: "frozenset",
               dict: "dict", OrderedDict: "OrderedDict"}


def _is_path(f) -> bool:
    return isinstance(f, (str, os.PathLike))


def save(obj, f) -> None:
    """Write ``obj`` to ``f`` (a path or a writable binary file object).

    >>> import io, numbagrad as torch
    >>> buf = io.BytesIO()
    >>> torch.save({"w": torch.ones(2), "step": 3}, buf)
    >>> _ = buf.seek(0)
    >>> torch.load(buf)
    {'w': tensor([1., 1.]), 'step': 3}
    """
    writer = _Writer()
    root = writer.encode(obj)
    description = {"format": FORMAT, "version": VERSION, "root": root,
                   "tensors": writer.tensors,
                   "storages": [f"data/{k}.npy" for k in range(len(writer.storages))]}
    text = json.dumps(description, allow_nan=False, separators=(",", ":"))
    with zipfile.ZipFile(f, "w", zipfile.ZIP_STORED, allowZip64=True) as zf:
        zf.writestr(_DESCRIPTION, text)
        for k, array in enumerate(writer.storages):
            with zf.open(f"{_ROOT}data/{k}.npy", "w", force_zip64=True) as out:
                np.lib.format.write_array(out, array, allow_pickle=False)


# ---------------------------------------------------------------- load

def _refuse(why: str):
    return pickle.UnpicklingError(f"numbagrad.load: {why}")


class _Reader:
    """Rebuilds the object tree from an archive's description, checking every node."""

    def __init__(self, zf: zipfile.ZipFile, description: dict, map_location):
        self.zf = zf
        self.records = description["tensors"]
        self.files = description["storages"]
        self.map_location = map_location
        self._arrays: dict[int, np.ndarray] = {}
        self._storages: dict[tuple, object] = {}  # (storage, location) -> device array
        self._tensors: dict[int, Tensor] = {}

    def array(self, k) -> np.ndarray:
        if type(k) is not int or not 0 <= k < len(self.files):
            raise _refuse(f"no storage {k!r} in the archive")
        if k not in self._arrays:
            with self.zf.open(_ROOT + self.files[k]) as fh:
                self._arrays[k] = np.lib.format.read_array(fh, allow_pickle=False)
        return self._arrays[k]

    def tensor(self, k) -> Tensor:
        if type(k) is not int or not 0 <= k < len(self.records):
            raise _refuse(f"no tensor {k!r} in the archive")
        t = self._tensors.get(k)
        if t is not None:
            return t
        r = self.records[k]
        array = self.array(r["storage"])
        if array.dtype != D.as_dtype(r["dtype"]).np or list(array.shape) != r["shape"]:
            raise _refuse(f"tensor {k}'s storage does not match its dtype and shape")
        t = Tensor._make(self.place(r["storage"], array, r["device"]), r["requires_grad"])
        name = r.get("class")
        if name is not None:
            rebuild = _tensor_classes.get(name)
            if rebuild is None:
                raise _refuse(f"unknown tensor class {name} (register it with "
                              "numbagrad.serialization.register_tensor_class)")
            t = rebuild(Tensor._make(t._data), r["requires_grad"])
        self._tensors[k] = t
        return t

    def place(self, k, array, location: str):
        """Storage ``k`` on the device ``map_location`` gives for ``location``; one copy per
        storage, so tensors that shared memory when saved share it again."""
        ml = self.map_location
        key = (k, "map_location")
        if callable(ml):
            if key not in self._storages:
                moved = ml(Tensor._make(array), location)
                self._storages[key] = None if moved is None else moved._data
            if self._storages[key] is not None:
                return self._storages[key]
            target = location
        elif isinstance(ml, dict):
            target = ml.get(location, location)
        else:
            target = location if ml is None else ml
        dev = device(target)
        if dev.type == "cuda" and not cuda.is_available():
            raise RuntimeError(
                "Attempting to deserialize object on a CUDA device but "
                "torch.cuda.is_available() is False. If you are running on a CPU-only machine, "
                "please use torch.load with map_location=torch.device('cpu') to map your "
                "storages to the CPU."
            )
        dev = _check_device(dev)
        key = (k, str(dev))
        if key not in self._storages:
            self._storages[key] = _on(array, dev)
        return self._storages[key]

    def decode(self, node):
        if node is None or isinstance(node, (bool, int, float, str)):
            return node
        if isinstance(node, list):
            return [self.decode(x) for x in node]
        if not isinstance(node, dict):
            raise _refuse(f"unexpected node {node!r}")
        kind = node.get("kind")
        if kind == "tensor":
            return self.tensor(node["index"])
        if kind == "float":
            if node["value"] not in ("nan", "inf", "-inf"):
                raise _refuse(f"bad float {node['value']!r}")
            return float(node["value"])
        if kind == "dtype":
            return D.as_dtype(node["name"])
        if kind == "device":
            return device(node["name"])
        if kind == "ndarray":
            return self.array(node["storage"]).copy()
        if kind == "numpy_scalar":
            return self.array(node["storage"])[()]
        if kind in ("dict", "OrderedDict"):
            pairs = [(self.decode(k), self.decode(v)) for k, v in node["items"]]
            out = dict(pairs) if kind == "dict" else OrderedDict(pairs)
            if "metadata" in node:
                out._metadata = self.decode(node["metadata"])
            return out
        build = {"tuple": tuple, "Size": Size, "set": set, "frozenset": frozenset}.get(kind)
        if build is None:
            raise _refuse(f"unsupported kind of object {kind!r}")
        return build(self.decode(x) for x in node["items"])


def _unsafe_load(f, pickle_module, pickle_load_args):
    """``pickle.load`` of ``f``: runs whatever code the file names (weights_only=False)."""
    if _is_path(f):
        with open(f, "rb") as fh:
            return pickle_module.load(fh, **pickle_load_args)
    return pickle_module.load(f, **pickle_load_args)


def load(f, map_location=None, pickle_module=None, *, weights_only: bool | None = None,
         mmap=None, **pickle_load_args):
    """Read an object written by ``save`` from ``f`` (a path or a readable binary file object).

    ``map_location``: None (each tensor back on the device it was saved from), a device or
    device string (all tensors there), a dict from saved location to location
    (``{'cuda:0': 'cpu'}``), or a callable ``(cpu_tensor, saved_location)`` returning the
    tensor to use (or None for the default).

    A file that is not a numbagrad archive (a plain pickle) is refused unless
    ``weights_only=False``, which reads it with pickle: that runs any code the file names, so
    use it only for files from a trusted source. (``mmap`` is accepted and unused: the
    archive is read into memory.)
    """
    if weights_only is None:
        weights_only = True
    start = None if _is_path(f) else f.tell()
    try:
        zf = zipfile.ZipFile(f)
    except zipfile.BadZipFile:
        if weights_only:
            raise _refuse(
                "the file is not a numbagrad archive. Loading it with weights_only=False reads "
                "it with pickle, which can run arbitrary code: do it only for a file from a "
                "trusted source."
            ) from None
        if start is not None:
            f.seek(start)
        return _unsafe_load(f, pickle_module or pickle, pickle_load_args)
    with zf:
        try:
            description = json.loads(zf.read(_DESCRIPTION))
        except KeyError:
            raise _refuse("the archive has no data.json: not written by numbagrad.save") from None
        if description.get("format") != FORMAT or description.get("version") != VERSION:
            raise _refuse("the archive is not in numbagrad.save's format, version 1")
        return _Reader(zf, description, map_location).decode(description["root"])

