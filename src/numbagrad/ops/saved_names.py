"""PyTorch's public names for what a backward node saved: ``grad_fn._saved_self``,
``_saved_other``, ``_saved_result``, ``_saved_exponent``, ``_saved_dim``, ... Tools read them:
torchviz draws every attribute of ``dir(grad_fn)`` that starts with ``_saved_``.

Each name is a property of the node class, made once with the class (``record.node_class``),
so recording an op costs nothing more; the value is read from the node's ``ctx`` (or a lean
elementwise node's slots, without building a ctx) only when asked for. The values are
PyTorch's: the very input Tensor for a saved input, a Tensor on the node's output for a saved
result (checked against in-place changes either way), and ints, tuples and bools for the op's
parameters. A saved tensor read after backward freed the graph raises PyTorch's error; the
parameters stay readable, as in PyTorch.

Elementwise ops get their names from their rules: what a rule reads is what the op saves, named
as in PyTorch (``x`` is ``self``, ``y`` ``other``, ``cond`` ``condition``, a scalar parameter
keeps its name); ``ELEMENTWISE`` lists the nodes whose PyTorch names differ from that.
Composite ops are listed in ``COMPOSITE``. A node with no entry shows no ``_saved_`` names.

Each saved tensor also has PyTorch's ``_raw_saved_<name>`` (a ``RawSavedTensor``, to set
saved-tensor hooks on it), and the node class maps numbagrad's names of its saved tensors to
PyTorch's (``_torch_saved_names``): hooks pack them in the order of PyTorch's names.
"""

from __future__ import annotations

import math
import weakref

from .. import dtypes as D
from .._tensor import Tensor
from ..autograd.graph import ERR_FREED
from ..autograd.saved import FREED, PackedTensor, RawSavedTensor


# ---------------------------------------------------------------- saved tensors


def _unpack(node, s, index, differentiable):
    """The Tensor a SavedTensor stands for, as PyTorch's unpack gives it: a saved input is the
    input itself; a saved output is a new Tensor on its memory and version counter whose
    ``grad_fn`` is the node (grad mode or not), unless that output gets no gradient. One kept
    through saved-tensor hooks is unpacked by them, on each read."""
    if isinstance(s, PackedTensor):
        s = s.fresh()
    s.check(node, index)
    if not s.is_output:
        return s.tensor
    t = Tensor._make(s.array())
    t._version_cell = s.version_cell
    if differentiable:
        t._requires_grad = True
        t._grad_fn = node
        t._output_nr = index
    return t


def _was_saved(node, name, needs):
    """Whether the op saved ``name`` when it was recorded (asked once backward freed it)."""
    op = node.op
    if op.kind == "elementwise":
        flags = 0
        for k, (fn, _) in enumerate(node.next_functions):
            if fn is not None:
                flags |= 1 << k
        inputs, result = op._saves.get(flags) or op._save_plan(flags)
        return (name == "result" and result) or any(n == name for _, n in inputs)
    return needs is None or node.next_functions[needs][0] is not None


def saved_tensor(name, needs=None, dtype=None):
    """The getter of the tensor the op saved as ``name`` (None where it saved none, as for
    PyTorch's unsaved ``_saved_self`` of ``x * 2``). ``needs``: the input whose gradient the
    op saves it for (a composite op that saves it only then); ``dtype``: the dtype PyTorch
    saved it in, where numbagrad keeps it in another."""

    def get(node):
        if node._lean is not None:  # a lean elementwise node: read its slots, build no ctx
            if name not in node._lean.names:
                return None
            if node._released:
                raise RuntimeError(ERR_FREED)
            out = _unpack(node, node.saved_item(name), 0, True)
        else:
            ctx = node.ctx
            s = ctx.saved.get(name)
            if s is None:
                if node._released and _was_saved(node, name, needs):
                    raise RuntimeError(ERR_FREED)
                return None
            index = ctx.output_index.get(name, 0)
            differentiable = index not in getattr(ctx, "non_differentiable", ())
            out = _unpack(node, s, index, differentiable)
        if dtype is not None and out.dtype is not dtype:
            out = out.to(dtype)
        return out

    get.saved_name, get.needs = name, needs  # (for ``raw_saved_tensor`` and the pack order)
    return get


def raw_saved_tensor(name, needs=None):
    """The getter of ``_raw_saved_<name>``: the node's one ``RawSavedTensor`` for the tensor it
    saved as ``name`` (a lean node becomes a general one, whose ctx holds SavedTensors)."""

    def lookup(node):
        ctx = node.ctx
        s = ctx.saved.get(name)
        if s is None and node._released and _was_saved(node, name, needs):
            return FREED
        return s

    def store(node, packed):
        node.ctx.saved[name] = packed
        node.mark_packed((name,))

    def get(node):
        # (the node holds its handles weakly, as each handle holds its node: no cycle)
        handles = node.__dict__.get("_raw_saved")
        if handles is None:
            handles = node._raw_saved = weakref.WeakValueDictionary()
        h = handles.get(name)
        if h is None:
            h = handles[name] = RawSavedTensor(node, lookup, store)
        return h

    return get


# ---------------------------------------------------------------- parameters


def _param(name):
    """An elementwise op's scalar parameter ``name``, as it was passed."""

    def get(node):
        params = node._params if node._lean is not None else node.ctx.params
        return params[node.op.param_names.index(name)]

    return get


def _clamp_bound(name):
    # numbagrad.clamp fills an absent bound with an infinity; PyTorch saves None
    read = _param(name)

    def get(node):
        v = read(node)
        return None if isinstance(v, float) and math.isinf(v) else v

    return get


def _const(value):
    return lambda node: value


# ---------------------------------------------------------------- composite parameters


def _torch_dim(d):
    # PyTorch keeps a dim as an int64 and hands it to Python through an unsigned conversion:
    # dim=-1 comes back as 2**64 - 1
    d = int(d)
    return d + (1 << 64) if d < 0 else d


def _dim_list(node):
    """A reduction's ``dim`` argument as PyTorch's ``dim: int[1]?`` gives it back: None when
    none was given, else a tuple, in the order and signs passed."""
    dim = node.ctx.dim_arg
    if dim is None:
        return None
    if isinstance(dim, (list, tuple)):
        return tuple(_torch_dim(d) for d in dim)
    return (_torch_dim(dim),)


def _dim_list_or_all(node):
    # amax/amin: PyTorch's default is the empty list (every dim), numbagrad's None
    dims = _dim_list(node)
    return () if dims is None else dims


def _dim_int(node):
    return _torch_dim(node.ctx.dim_arg)


def _keepdim(node):
    return bool(node.ctx.keepdim)


def _correction(node):
    # var()/std() with no dim: PyTorch's overload saves correction=None unless one was given;
    # numbagrad has the number only, and 1 is the default
    ctx = node.ctx
    if ctx.dim_arg is None and ctx.correction == 1:
        return None
    return ctx.correction


def _sizes(k):
    """Input ``k``'s shape as a tuple of ints (``_saved_self_sym_sizes``)."""
    return lambda node: tuple(int(n) for n in node.ctx.input_shapes[k])


def _numel(node):
    return math.prod(node.ctx.input_shapes[0])


def _ctx_dim(node):
    return node.ctx.dim


def _transpose_dim(k):
    # (a 0-d transpose has nothing to swap and keeps no pair)
    return lambda node: getattr(node.ctx, "pair", (0, 0))[k]


def _split_dim_sizes(node):
    ctx = node.ctx
    return tuple(int(shape[ctx.dim]) for shape in ctx.out_shapes)


_SELF, _RESULT = saved_tensor("x"), saved_tensor("result")
_SELF_SIZES = _sizes(0)

# PyTorch's saved names per node, for the elementwise nodes whose names do not follow from
# their rules (see ``elementwise_getters``): PyTorch saves alpha for add and sub, which
# numbagrad's nodes compute without one; pow's tensor exponent is ``exponent``
ELEMENTWISE = {
    "AddBackward0": {"alpha": _const(1)},
    "SubBackward0": {"alpha": _const(1)},
    "RsubBackward1": {"alpha": _const(1)},
    "PowBackward1": {"self": _SELF, "exponent": saved_tensor("y"), "result": _RESULT},
    # (PyTorch also saves the exponent tensor, which numbagrad's rule does not read)
    "PowBackward2": {"self": _param("base"), "result": _RESULT},
    "ClampBackward1": {"self": _SELF, "min": _clamp_bound("min"), "max": _clamp_bound("max")},
    # (numbagrad keeps the condition in the compute dtype, PyTorch as the bool it is)
    "WhereBackward0": {"condition": saved_tensor("cond", dtype=D.bool_)},
    # (constant-gradient rules read nothing, but PyTorch's nodes keep these)
    "AngleBackward0": {"self": _SELF},
    "SgnBackward0": {"self": _SELF, "result": _RESULT},
}

_TORCH_ARG_NAMES = {"x": "self", "y": "other", "cond": "condition", "result": "result"}

# composite nodes: PyTorch's saved names and how to read each from numbagrad's ctx
_REDUCED = {"dim": _dim_list, "keepdim": _keepdim}
_GRID_SAMPLER = {"align_corners": lambda node: bool(node.ctx.how.align),
                 "grid": saved_tensor("g"), "input": saved_tensor("x"),
                 "interpolation_mode": lambda node: node.ctx.how.mode,
                 "padding_mode": lambda node: node.ctx.how.padding}
COMPOSITE = {
    "SumBackward0": {"self_sym_sizes": _SELF_SIZES},
    "SumBackward1": {**_REDUCED, "self_sym_sizes": _SELF_SIZES},
    "MeanBackward0": {"self_sym_numel": _numel, "self_sym_sizes": _SELF_SIZES},
    "MeanBackward1": {**_REDUCED, "self_sym_numel": _numel, "self_sym_sizes": _SELF_SIZES},
    "ProdBackward0": {"result": _RESULT, "self": _SELF},
    "ProdBackward1": {"dim": _dim_int, "keepdim": _keepdim, "result": _RESULT, "self": _SELF},
    "MaxBackward1": {"result": _RESULT, "self": _SELF},
    "MinBackward1": {"result": _RESULT, "self": _SELF},
    "MaxBackward0": {"dim": _dim_int, "indices": saved_tensor("indices"), "keepdim": _keepdim,
                     "self_sym_sizes": _SELF_SIZES},
    "MinBackward0": {"dim": _dim_int, "indices": saved_tensor("indices"), "keepdim": _keepdim,
                     "self_sym_sizes": _SELF_SIZES},
    "AmaxBackward0": {"dim": _dim_list_or_all, "keepdim": _keepdim, "result": _RESULT,
                      "self": _SELF},
    "AminBackward0": {"dim": _dim_list_or_all, "keepdim": _keepdim, "result": _RESULT,
                      "self": _SELF},
    "VarBackward0": {"correction": _correction, **_REDUCED, "self": _SELF},
    "StdBackward0": {"correction": _correction, **_REDUCED, "result": _RESULT, "self": _SELF},
    "LinalgVectorNormBackward0": {**_REDUCED, "ord": _const(2), "result": _RESULT,
                                  "self": _SELF},
    "LogsumexpBackward0": {**_REDUCED, "result": _RESULT, "self": _SELF},
    "SoftmaxBackward0": {"dim": _ctx_dim, "result": _RESULT},
    "LogSoftmaxBackward0": {"dim": _ctx_dim, "result": _RESULT},
    # the matrix products save each operand only for the other one's gradient
    "MmBackward0": {"self": saved_tensor("x", needs=1), "mat2": saved_tensor("y", needs=0),
                    "self_sym_sizes": _SELF_SIZES, "mat2_sym_sizes": _sizes(1)},
    "BmmBackward0": {"self": saved_tensor("x", needs=1), "mat2": saved_tensor("y", needs=0)},
    "MvBackward0": {"self": saved_tensor("x", needs=1), "vec": saved_tensor("v", needs=0)},
    "DotBackward0": {"self": saved_tensor("x", needs=1), "tensor": saved_tensor("y", needs=0)},
    "ViewBackward0": {"self_sym_sizes": _SELF_SIZES},
    "TakeBackward0": {"index": saved_tensor("index"), "self": _SELF},
    "UnsafeViewBackward0": {"self_sym_sizes": _SELF_SIZES},
    "ExpandBackward0": {"self_sym_sizes": _SELF_SIZES},
    "SqueezeBackward0": {"self_sym_sizes": _SELF_SIZES},
    "TransposeBackward0": {"dim0": _transpose_dim(0), "dim1": _transpose_dim(1)},
    "PermuteBackward0": {"dims": lambda node: tuple(node.ctx.dims)},
    "CatBackward0": {"dim": _ctx_dim},
    "StackBackward0": {"dim": _ctx_dim},
    "SplitBackward0": {"dim": _ctx_dim, "self_sym_sizes": _SELF_SIZES,
                       "split_size": lambda node: _split_dim_sizes(node)[0]},
    "SplitWithSizesBackward0": {"dim": _ctx_dim, "self_sym_sizes": _SELF_SIZES,
                                "split_sizes": _split_dim_sizes},
    "AddmmBackward0": {"mat1": saved_tensor("x", needs=2), "mat2": saved_tensor("y", needs=1)},
    "ConvolutionBackward0": {"input": _SELF, "weight": saved_tensor("w")},
    "MseLossBackward0": {"self": _SELF, "target": saved_tensor("target")},
    "BinaryCrossEntropyBackward0": {"self": _SELF, "target": saved_tensor("target"),
                                    "weight": saved_tensor("weight")},
    "BinaryCrossEntropyWithLogitsBackward0": {"self": _SELF, "target": saved_tensor("target"),
                                              "weight": saved_tensor("weight"),
                                              "pos_weight": saved_tensor("pos_weight")},
    "NllLossBackward0": {"self": _SELF},
    # (PyTorch's normalisation nodes also save the statistics, which numbagrad recomputes)
    "NativeLayerNormBackward0": {"input": _SELF},
    "NativeBatchNormBackward0": {"input": _SELF},
    "NativeGroupNormBackward0": {"input": _SELF},
    "GridSampler2DBackward0": _GRID_SAMPLER,
    "GridSampler2DBackwardBackward0": {**_GRID_SAMPLER, "grad_output": saved_tensor("grad")},
    "AffineGridGeneratorBackward0": {"align_corners": lambda node: node.ctx.align,
                                     "size": lambda node: node.ctx.size},
}


def elementwise_getters(op, node_name):
    """PyTorch's saved names of an elementwise op's node: ``ELEMENTWISE``'s entry, else what
    the op's rules read, renamed as PyTorch names it."""
    if node_name in ELEMENTWISE:
        return ELEMENTWISE[node_name]
    getters = {}
    for args in op.vjp_args:
        for name in args:
            if name == "grad":
                continue
            if name in op.param_names:
                getters[name] = _param(name)
            else:
                # (a name PyTorch has no other word for: a user's op's own argument names)
                getters[_TORCH_ARG_NAMES.get(name, name)] = saved_tensor(name)
    return getters


def saved_properties(op, node_name) -> dict:
    """The ``_saved_<name>`` and ``_raw_saved_<name>`` properties of the node class
    ``node_name`` of ``op``, and its ``_torch_saved_names``."""
    if op.kind == "elementwise":
        getters = elementwise_getters(op, node_name)
    else:
        getters = COMPOSITE.get(node_name, {})
    props = {}
    torch_names = {}  # numbagrad's name of each saved tensor -> PyTorch's
    for torch_name, get in getters.items():
        attr = "_saved_" + torch_name
        props[attr] = property(get, doc=f"PyTorch's ``{attr}``: what the node saved.")
        name = getattr(get, "saved_name", None)
        if name is not None:
            torch_names[name] = torch_name
            attr = "_raw_saved_" + torch_name
            props[attr] = property(raw_saved_tensor(name, get.needs),
                                   doc=f"PyTorch's ``{attr}``: a handle on the saved tensor.")
    if torch_names:
        props["_torch_saved_names"] = torch_names
    return props
