"""``save`` and ``load``: tensors, state dicts and nested containers in a zip archive holding a
JSON description of the object tree and one ``.npy`` file per tensor storage; any other object
(a whole ``nn.Module``, an ``argparse.Namespace``) is pickled into one more member, which
``load`` reads only with ``weights_only=False`` or for classes allowed by ``add_safe_globals``.
The format: docs/serialization.md.
"""

from __future__ import annotations

import io
import json
import math
import os
import pickle
import zipfile
from collections import OrderedDict
from collections.abc import Callable
from contextlib import contextmanager

import numpy as np

from . import cuda
from . import dtypes as D
from ._tensor import LazyTensor, Size, Tensor, _check_device, _on, device

__all__ = ["add_safe_globals", "clear_safe_globals", "get_safe_globals", "load",
           "register_tensor_class", "safe_globals", "save"]

FORMAT = "numbagrad.save"
VERSION = 1
_ROOT = "archive/"
_DESCRIPTION = _ROOT + "data.json"
_OBJECTS = _ROOT + "objects.pkl"

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
        self.objects: list = []  # what the JSON cannot describe, pickled together
        self._object_index: dict[int, int] = {}  # id(object) -> index in self.objects

    def storage(self, key_obj, array: np.ndarray) -> int:
        k = self._storage_index.get(id(key_obj))
        if k is None:
            k = self._storage_index[id(key_obj)] = len(self.storages)
            # (not np.ascontiguousarray, which makes a 0-d array 1-d)
            self.storages.append(array if array.flags.c_contiguous else array.copy(order="C"))
            self._alive.append(key_obj)
        return k

    def tensor(self, t: Tensor) -> int:
        """The index of ``t``'s record (a plain tensor or one of a registered class)."""
        k = self._tensor_index.get(id(t))
        if k is not None:
            return k
        record = {}
        cls = type(t)
        if cls is not Tensor and cls is not LazyTensor:
            record["class"] = _class_name(cls)
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
        if _has_record(obj):
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
        return {"kind": "pickle", "index": self.pickled(obj)}

    def pickled(self, obj) -> int:
        k = self._object_index.get(id(obj))
        if k is None:
            k = self._object_index[id(obj)] = len(self.objects)
            self.objects.append(obj)
        return k

    def pickle_objects(self, pickle_module=pickle, protocol=None) -> bytes:
        """``self.objects`` pickled (by ``pickle_module``'s Pickler, in ``protocol``: pickle's
        highest by default), with the tensors inside them saved as tensor records (so they
        keep their sharing with the rest of the archive) and named by index."""
        writer = self

        class Pickler(pickle_module.Pickler):
            def persistent_id(self, obj):
                return ("tensor", writer.tensor(obj)) if _has_record(obj) else None

        buf = io.BytesIO()
        Pickler(buf, protocol=pickle.HIGHEST_PROTOCOL if protocol is None else protocol).dump(
            self.objects)
        return buf.getvalue()

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


def _has_record(obj) -> bool:
    """Whether ``obj`` is a tensor saved as a tensor record: a plain tensor or one of a class
    registered with ``register_tensor_class`` (any other subclass is pickled)."""
    cls = type(obj)
    return (cls is Tensor or cls is LazyTensor
            or (isinstance(obj, Tensor) and _class_name(cls) in _tensor_classes))


_CONTAINERS = {list: "list", tuple: "tuple", Size: "Size", set: "set", frozenset: "frozenset",
               dict: "dict", OrderedDict: "OrderedDict"}


def _is_path(f) -> bool:
    return isinstance(f, (str, os.PathLike))


def save(obj, f, pickle_module=pickle, pickle_protocol=None,
         _use_new_zipfile_serialization=True, _disable_byteorder_record=False) -> None:
    """Write ``obj`` to ``f`` (a path or a writable binary file object).

    The archive is numbagrad's: JSON and ``.npy`` members, pickle only for the objects JSON
    cannot describe. ``pickle_module`` and ``pickle_protocol`` (PyTorch's) pickle those; the
    protocol is pickle's highest unless given (PyTorch's default, 2, is older than needed
    here). PyTorch's two format switches change nothing: there is one format, whose arrays
    record their byte order.

    >>> import io, numbagrad as torch
    >>> buf = io.BytesIO()
    >>> torch.save({"w": torch.ones(2), "step": 3}, buf)
    >>> _ = buf.seek(0)
    >>> torch.load(buf)
    {'w': tensor([1., 1.]), 'step': 3}
    """
    writer = _Writer()
    root = writer.encode(obj)
    objects = (writer.pickle_objects(pickle_module, pickle_protocol)  # (adds tensor records)
               if writer.objects else None)
    description = {"format": FORMAT, "version": VERSION, "root": root,
                   "tensors": writer.tensors,
                   "storages": [f"data/{k}.npy" for k in range(len(writer.storages))]}
    text = json.dumps(description, allow_nan=False, separators=(",", ":"))
    with zipfile.ZipFile(f, "w", zipfile.ZIP_STORED, allowZip64=True) as zf:
        zf.writestr(_DESCRIPTION, text)
        if objects is not None:
            zf.writestr(_OBJECTS, objects)
        for k, array in enumerate(writer.storages):
            with zf.open(f"{_ROOT}data/{k}.npy", "w", force_zip64=True) as out:
                np.lib.format.write_array(out, array, allow_pickle=False)


# ---------------------------------------------------------------- load

def _refuse(why: str):
    return pickle.UnpicklingError(f"numbagrad.load: {why}")


# what a weights_only load may name in the pickled member: "module.qualname" -> object
_safe_globals: dict[str, object] = {}
_DEFAULT_SAFE = {_class_name(c): c for c in (OrderedDict, Size, device, D._by_name)}
# (Size and device are named numbagrad.Size and numbagrad.device, as PyTorch's classes print;
# a file written before they were names them by the module that defines them)
_DEFAULT_SAFE.update({"numbagrad._tensor.Size": Size, "numbagrad._tensor.device": device})


def add_safe_globals(safe_globals: list) -> None:
    """Let ``load(..., weights_only=True)`` build the given classes and call the given
    functions: each item is the object or ``(object, "module.qualname")``."""
    for item in safe_globals:
        obj, name = item if isinstance(item, tuple) else (item, _class_name(item))
        _safe_globals[name] = obj


def get_safe_globals() -> list:
    """The globals added with ``add_safe_globals``."""
    return list(_safe_globals.values())


def clear_safe_globals() -> None:
    """Forget every global added with ``add_safe_globals``."""
    _safe_globals.clear()


@contextmanager
def safe_globals(safe_globals: list):
    """``add_safe_globals(safe_globals)`` for the duration of a ``with`` block."""
    before = dict(_safe_globals)
    add_safe_globals(safe_globals)
    try:
        yield
    finally:
        _safe_globals.clear()
        _safe_globals.update(before)


def _unsupported_global(name: str):
    return pickle.UnpicklingError(
        "Weights only load failed. This file can still be loaded, to do so you have two "
        "options, \x1b[1mdo those steps only if you trust the source of the checkpoint\x1b[0m. "
        "\n\t(1) In PyTorch 2.6, we changed the default value of the `weights_only` argument "
        "in `torch.load` from `False` to `True`. Re-running `torch.load` with `weights_only` "
        "set to `False` will likely succeed, but it can result in arbitrary code execution. "
        "Do it only if you got the file from a trusted source.\n\t(2) Alternatively, to load "
        "with `weights_only=True` please check the recommended steps in the following error "
        f"message.\n\tWeightsUnpickler error: Unsupported global: GLOBAL {name} was not an "
        "allowed global by default. Please use `torch.serialization.add_safe_globals([" + name
        + "])` or the `torch.serialization.safe_globals([" + name + "])` context manager to "
        "allowlist this global if you trust this class/function."
    )


class _Reader:
    """Rebuilds the object tree from an archive's description, checking every node."""

    def __init__(self, zf: zipfile.ZipFile, description: dict, map_location, weights_only):
        self.zf = zf
        self.weights_only = weights_only
        self._objects: list | None = None
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

    def objects(self) -> list:
        """The pickled member's objects. Under weights_only it may name only the globals
        allowed by default or by ``add_safe_globals``; tensors in it are tensor records."""
        if self._objects is None:
            reader = self

            class Unpickler(pickle.Unpickler):
                def find_class(self, module, name):
                    if not reader.weights_only:
                        return super().find_class(module, name)
                    full = f"{module}.{name}"
                    found = _safe_globals.get(full, _DEFAULT_SAFE.get(full))
                    if found is None:
                        raise _unsupported_global(full)
                    return found

                def persistent_load(self, pid):
                    if type(pid) is not tuple or len(pid) != 2 or pid[0] != "tensor":
                        raise _refuse(f"unknown persistent id {pid!r}")
                    return reader.tensor(pid[1])

            try:
                data = self.zf.read(_OBJECTS)
            except KeyError:
                raise _refuse("the archive names a pickled object but has no objects.pkl") from None
            objects = Unpickler(io.BytesIO(data)).load()
            if type(objects) is not list:
                raise _refuse("objects.pkl does not hold a list")
            self._objects = objects
        return self._objects

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
        if kind == "pickle":
            objects = self.objects()
            k = node["index"]
            if type(k) is not int or not 0 <= k < len(objects):
                raise _refuse(f"no pickled object {k!r} in the archive")
            return objects[k]
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
    use it only for files from a trusted source. Objects ``save`` pickled (a whole module) load
    only with ``weights_only=False`` or when their classes are allowed with
    ``add_safe_globals``. (``mmap`` is accepted and unused: the
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
        reader = _Reader(zf, description, map_location, weights_only)
        return reader.decode(description["root"])

