"""How a profile is recorded: an op observer with a before-call (ops/observe.py) times every
op, ``record_function`` labels blocks, and while any profile records, the functional-layer
functions PyTorch shows as ops of their own (``aten::linear``) are swapped for timed ones.

Each recorder keeps, per thread, a stack of open frames; a frame closed becomes a
``FunctionEvent`` whose children are the events closed inside it, so self and total times come
as PyTorch's do. Nothing here runs while no profile records.
"""

from __future__ import annotations

import functools
import os
import threading
import traceback
from time import perf_counter_ns

from .._tensor import Tensor
from ..nn import functional as F
from ..ops import observe
from ._events import EventList, FunctionEvent, thread_number

ACTIVE: list = []  # the recorders recording now

# internal op names whose PyTorch name differs (the rest: "aten::" + the op's own name)
ATEN_NAMES = {
    "add_alpha": "add", "sub_alpha": "sub", "rsub_alpha": "rsub", "mul_scalar": "mul",
    "div_scalar": "div", "div_mode": "div", "div_floor": "div", "div_trunc": "div",
    "pow_tensor": "pow", "pow_bool_exponent": "pow", "fmod_scalar": "fmod",
    "remainder_scalar": "remainder", "remainder_of_number": "remainder",
    "clamp_tensor": "clamp", "clamp_tensor_max": "clamp", "clamp_tensor_min": "clamp",
    "clamp_max_tensor": "clamp_max", "clamp_min_tensor": "clamp_min",
    "max_all": "max", "max_dim": "max", "min_all": "min", "min_dim": "min",
    "median_all": "median", "median_dim": "median", "nanmedian_all": "nanmedian",
    "nanmedian_dim": "nanmedian", "masked_fill_scalar": "masked_fill", "lerp_tensor": "lerp",
    "norm_p_dim": "norm", "getitem": "index", "to_dtype": "to", "to_device": "to",
    "contiguous_copy": "contiguous", "copy": "copy_", "fill": "fill_", "zero": "zero_",
    "reshape_alias": "_reshape_alias", "reshape_copy": "reshape",
    "unsafe_view": "_unsafe_view", "squeeze_result": "squeeze", "gelu_tanh": "gelu",
    "gelu_tanh_backward": "gelu_backward", "index_put_zeros": "index_put_",
    "bce_with_logits_elementwise": "binary_cross_entropy_with_logits",
    "binary_cross_entropy_elementwise": "binary_cross_entropy",
    "huber_elementwise": "huber_loss", "smooth_l1_elementwise": "smooth_l1_loss",
    "max_pool2d_gather": "max_pool2d_with_indices",
    "max_pool3d_gather": "max_pool3d_with_indices",
    "scaled_dot_product_flash_attention_for_cpu": "_scaled_dot_product_flash_attention_for_cpu",
    "scaled_dot_product_attention_math": "_scaled_dot_product_attention_math",
    "celu_": "celu_", "elu_": "elu_", "threshold_": "threshold_",
}
# numbagrad's plumbing ops, which PyTorch has no event for: their children go to their parent
HIDDEN = frozenset({"depends_on", "recorded_on", "not_implemented",
                    "inplace_without_derivative"})

# the functional-layer functions PyTorch profiles as ops of their own, by their name there
FUNCTIONAL = {
    "linear": "aten::linear", "dropout": "aten::dropout", "conv1d": "aten::conv1d",
    "conv2d": "aten::conv2d", "conv3d": "aten::conv3d",
    "cross_entropy": "aten::cross_entropy_loss",
    "scaled_dot_product_attention": "aten::scaled_dot_product_attention",
}
_swapped: dict = {}  # name -> the functional-layer function put aside while recording

_C_TYPES = {"float32": "float", "float64": "double", "int64": "long int", "int32": "int",
            "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
            "bool": "bool"}

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def aten_name(op, args) -> str:
    name = op.name
    if name == "random_fill" and len(args) > 2 and isinstance(args[2], str):
        return f"aten::{args[2]}_"  # (the distribution: aten::uniform_, aten::normal_)
    return "aten::" + ATEN_NAMES.get(name, name)


class _Frame:
    __slots__ = ("name", "op", "start", "children", "made", "shapes", "dtypes", "stack",
                 "annotation")

    def __init__(self, name, op, start, annotation):
        self.name = name
        self.op = op
        self.start = start
        self.annotation = annotation
        self.children: list = []  # the events closed inside this frame
        self.made: set = set()  # ids of the tensors its children returned (profile_memory)
        self.shapes = self.dtypes = self.stack = None


class Recorder:
    """One profile's recording, from ``start`` to ``stop``."""

    def __init__(self, record_shapes=False, profile_memory=False, with_stack=False):
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.events: list = []
        self.recording = False
        self._local = threading.local()
        self._t0 = 0
        self._t0_wall = 0
        self._open: list = []  # every thread's stack, to close at stop

    def _stack(self):
        stack = getattr(self._local, "stack", None)
        if stack is None:
            stack = self._local.stack = []
            self._open.append(stack)
        return stack

    def start(self):
        import time
        self._t0 = perf_counter_ns()
        self._t0_wall = time.time_ns()
        self.recording = True
        if not ACTIVE:
            observe.add(_after, before=_before)
            _swap_functional()
        ACTIVE.append(self)

    def stop(self) -> EventList:
        if self.recording:
            self.recording = False
            ACTIVE.remove(self)
            if not ACTIVE:
                observe.remove(_after)
                _restore_functional()
            # (a block still open, as a step's label, ends here)
            for stack in self._open:
                while stack:
                    self.close(stack[-1])
        events = sorted(self.events, key=lambda e: e.time_range.start)
        for k, e in enumerate(events):
            e.id = k + 1
        return EventList(events, profile_memory=self.profile_memory,
                         with_stack=self.with_stack, trace_start_ns=self._t0_wall)

    def open(self, name, op=None, args=(), kwargs=None, annotation=False):
        frame = _Frame(name, op, 0, annotation)
        if self.record_shapes and not annotation:
            frame.shapes, frame.dtypes = _shapes(args, kwargs)
        if self.with_stack:
            frame.stack = _python_stack()
        self._stack().append(frame)
        frame.start = perf_counter_ns()  # (last: the shapes and stack are not the op's time)
        return frame

    def close(self, frame, args=(), result=None):
        end = perf_counter_ns()
        stack = self._stack()
        if frame not in stack:
            return
        # frames above it were left by an op that raised: their events go to this frame
        while stack[-1] is not frame:
            lost = stack.pop()
            frame.children.extend(lost.children)
            frame.made |= lost.made
        stack.pop()
        parent = stack[-1] if stack else None
        if frame.op is not None and frame.op.name in HIDDEN:
            self._adopt(parent, frame.children, frame.made)
            return
        memory = _new_bytes(args, result, frame.made) if self.profile_memory else 0
        event = FunctionEvent(
            0, frame.name, thread_number(), (frame.start - self._t0) / 1e3,
            (end - self._t0) / 1e3, input_shapes=frame.shapes if frame.shapes else [],
            input_dtypes=frame.dtypes, stack=frame.stack, is_user_annotation=frame.annotation,
            cpu_memory_usage=memory)
        if frame.name.startswith("ProfilerStep#"):
            # (PyTorch's events name every step's block alike; the trace keeps the number)
            event.trace_name, event.name = event.name, "ProfilerStep*"
            event.key = event.name
        for child in frame.children:
            event.append_cpu_child(child)
            child.set_cpu_parent(event)
        made = frame.made
        if self.profile_memory:
            made = made | {id(t) for t in _tensors(result)}
        self._adopt(parent, [event], made)

    def _adopt(self, parent, events, made):
        if parent is None:
            self.events.extend(_flatten(events))
        else:
            parent.children.extend(events)
            parent.made |= made

    def close_op(self, op, args, result):
        stack = self._stack()
        for frame in reversed(stack):
            if frame.op is op:
                self.close(frame, args, result)
                return


def _flatten(events):
    """The events and all their descendants (the recorder's list holds every event)."""
    out = []
    todo = list(events)
    while todo:
        e = todo.pop()
        out.append(e)
        todo.extend(e.cpu_children)
    return out


def _before(op, args, kwargs):
    for r in ACTIVE:
        r.open(aten_name(op, args), op, args, kwargs)


def _after(op, args, kwargs, result):
    for r in ACTIVE:
        r.close_op(op, args, result)


def _tensors(value):
    if isinstance(value, Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for t in value if isinstance(t, Tensor)]
    return []


def _new_bytes(args, result, made) -> int:
    """The bytes of the results the op itself allocated: not views, not its inputs (in-place),
    not what its children returned."""
    inputs = {id(a) for a in args if isinstance(a, Tensor)}
    total = 0
    for t in _tensors(result):
        if t._base is None and id(t) not in inputs and id(t) not in made:
            total += t.numel() * t.element_size()
    return total


def _shapes(args, kwargs):
    """PyTorch's ``input_shapes`` and input types: a tensor's sizes, [] for anything else."""
    values = list(args) + (list(kwargs.values()) if kwargs else [])
    shapes, dtypes = [], []
    for a in values:
        if isinstance(a, Tensor):
            shapes.append(list(a.shape))
            dtypes.append(_C_TYPES.get(a.dtype.name, a.dtype.name))
        else:
            shapes.append([])
            dtypes.append("Scalar" if isinstance(a, (int, float, bool)) else
                          "TensorList" if isinstance(a, (list, tuple)) else "")
    return shapes, dtypes


def _python_stack() -> list:
    """The caller's Python frames, innermost first, as PyTorch's ``stack`` entries, without
    numbagrad's own."""
    frames = traceback.extract_stack()[:-3]
    return [f"{f.filename}({f.lineno}): {f.name}" for f in reversed(frames)
            if not f.filename.startswith(_PACKAGE) and "contextlib" not in f.filename]


# ---------------------------------------------------------------- labels


def open_label(name):
    return [(r, r.open(name, annotation=True)) for r in ACTIVE]


def close_label(frames):
    for r, frame in frames:
        if r.recording:
            r.close(frame)


# ---------------------------------------------------------------- functional-layer ops


def _timed(fn, name):
    @functools.wraps(fn)
    def timed(*args, **kwargs):
        frames = [(r, r.open(name, None, args, kwargs)) for r in ACTIVE]
        result = fn(*args, **kwargs)
        for r, frame in frames:
            if r.recording:
                r.close(frame, args, result)
        return result

    return timed


def _swap_functional():
    for name, aten in FUNCTIONAL.items():
        fn = getattr(F, name, None)
        if fn is not None:
            _swapped[name] = fn
            setattr(F, name, _timed(fn, aten))


def _restore_functional():
    for name, fn in _swapped.items():
        setattr(F, name, fn)
    _swapped.clear()
