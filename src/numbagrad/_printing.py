"""``repr`` of tensors, following PyTorch's layout and number formatting."""

from __future__ import annotations

import contextlib
import math

import numpy as np

from . import dtypes as D


class PrintOptions:
    precision = 4
    threshold = 1000
    edgeitems = 3
    linewidth = 80
    sci_mode = None


PRINT_OPTS = PrintOptions()


# set_printoptions(profile=...): (precision, threshold, edgeitems, linewidth), as PyTorch's
_PROFILES = {"default": (4, 1000, 3, 80), "short": (2, 1000, 2, 80),
             "full": (4, math.inf, 3, 80)}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None):
    if profile in _PROFILES:
        (PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems,
         PRINT_OPTS.linewidth) = _PROFILES[profile]
    for name, value in (("precision", precision), ("threshold", threshold),
                        ("edgeitems", edgeitems), ("linewidth", linewidth)):
        if value is not None:
            setattr(PRINT_OPTS, name, value)
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> dict:
    """The current options, as keywords ``set_printoptions`` takes (PyTorch's
    ``torch._tensor_str.get_printoptions``)."""
    return {name: getattr(PRINT_OPTS, name)
            for name in ("precision", "threshold", "edgeitems", "linewidth", "sci_mode")}


@contextlib.contextmanager
def printoptions(**kwargs):
    """``set_printoptions(**kwargs)`` for the block, the previous options back after it."""
    old = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old)


class _Formatter:
    """Chooses one width and notation (int-like, fixed or scientific) for all elements."""

    def __init__(self, values: np.ndarray, floating: bool):
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        p = PRINT_OPTS.precision
        if not floating:
            for v in values.reshape(-1).tolist():
                self.max_width = max(self.max_width, len(str(v)))
            return
        vals = values.astype(np.float64).reshape(-1)
        finite = vals[np.isfinite(vals) & (vals != 0)]
        if finite.size == 0:
            return
        absv = np.abs(finite)
        lo, hi = float(absv.min()), float(absv.max())
        if not np.all(finite == np.ceil(finite)):
            self.int_mode = False
        # a forced sci_mode decides before the widths are measured, as PyTorch's
        if PRINT_OPTS.sci_mode is None:
            self.sci_mode = hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
        else:
            self.sci_mode = PRINT_OPTS.sci_mode
        if self.sci_mode:
            spec, extra = f".{p}e", 0
        elif self.int_mode:
            spec, extra = ".0f", 1  # (the "." a float written as an integer ends with)
        else:
            spec, extra = f".{p}f", 0
        self.max_width = max(self.max_width,
                             max(len(format(v, spec)) for v in finite.tolist()) + extra)

    def width(self) -> int:
        return self.max_width

    def format(self, value) -> str:
        p = PRINT_OPTS.precision
        if self.floating:
            value = float(value)
            if self.sci_mode:
                ret = f"{value:{self.max_width}.{p}e}"
            elif self.int_mode:
                ret = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    ret += "."
            else:
                ret = f"{value:.{p}f}"
        else:
            ret = str(value)
        return (self.max_width - len(ret)) * " " + ret


def _summarized(a: np.ndarray) -> np.ndarray:
    """The elements that get printed when the tensor is summarized (edges of each dim)."""
    e = PRINT_OPTS.edgeitems
    if a.ndim == 0:
        return a
    if a.ndim == 1:
        # (a[-0:] is the whole vector: with edgeitems=0 PyTorch measures all of it)
        return np.concatenate([a[:e], a[-e:]]) if a.shape[0] > 2 * e else a
    if not e:
        return a[(slice(0, 0),) * a.ndim]
    if a.shape[0] > 2 * e:
        rows = [_summarized(a[i]) for i in list(range(e)) + list(range(a.shape[0] - e, a.shape[0]))]
    else:
        rows = [_summarized(r) for r in a]
    return np.stack(rows)


def _bool_str(v) -> str:
    return "True" if v else "False"


def _vector_str(a, indent, summarize, fmt):
    element_length = fmt.width() + 2
    per_line = max(1, int(math.floor((PRINT_OPTS.linewidth - indent) / element_length)))
    e = PRINT_OPTS.edgeitems
    if summarize and not e:
        data = ["..."]
    elif summarize and a.shape[0] > 2 * e:
        data = [fmt.format(v) for v in a[:e].tolist()] + [" ..."] + [
            fmt.format(v) for v in a[-e:].tolist()
        ]
    else:
        data = [fmt.format(v) for v in a.tolist()]
    lines = [", ".join(data[i : i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _tensor_str(a, indent, summarize, fmt):
    if a.ndim == 0:
        return fmt.format(a.item())
    if a.ndim == 1:
        return _vector_str(a, indent, summarize, fmt)
    e = PRINT_OPTS.edgeitems
    if summarize and a.shape[0] > 2 * e:
        slices = (
            [_tensor_str(a[i], indent + 1, summarize, fmt) for i in range(e)]
            + ["..."]
            + [_tensor_str(a[i], indent + 1, summarize, fmt) for i in range(a.shape[0] - e, a.shape[0])]
        )
    else:
        slices = [_tensor_str(a[i], indent + 1, summarize, fmt) for i in range(a.shape[0])]
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(slices) + "]"


class _BoolFormatter:
    def __init__(self, a):
        self.max_width = max((len(_bool_str(v)) for v in a.reshape(-1).tolist()), default=1)

    def width(self):
        return self.max_width

    def format(self, v):
        s = _bool_str(v)
        return (self.max_width - len(s)) * " " + s


_LONGER_NAME = len("numbagrad") - len("torch")


def _add_suffixes(tensor_str, suffixes, indent):
    out = [tensor_str]
    last_line_len = len(tensor_str) - tensor_str.rfind("\n") + 1
    for suffix in suffixes:
        # (measured as PyTorch's "dtype=torch.int32": a script's output then wraps where
        # PyTorch's does, the module's name aside)
        width = len(suffix) - _LONGER_NAME * suffix.count("numbagrad.")
        if last_line_len + width + 2 > PRINT_OPTS.linewidth:
            out.append(",\n" + " " * indent + suffix)
            last_line_len = indent + width
        else:
            out.append(", " + suffix)
            last_line_len += width + 2
    out.append(")")
    return "".join(out)


def _is_ours(cls) -> bool:
    return cls.__module__ == "numbagrad" or cls.__module__.startswith("numbagrad.")


def tensor_repr(t, prefix: str | None = None) -> str:
    # a subclass a program defines prints under its own name, MyTensor([1., 2.]), as PyTorch's
    # (numbagrad's own classes: Parameter, Buffer, the lazy tensor, print as tensor(...))
    plain = _is_ours(type(t))
    if prefix is None:
        prefix = "tensor(" if plain else f"{type(t).__name__}("
    a = t._data
    indent = len(prefix)
    suffixes = []
    if type(a) is not np.ndarray:
        # PyTorch names the device first: tensor([1., 2.], device='cuda:0', dtype=...)
        a = a.get()
        suffixes.append(f"device='{t.device}'")
    dt = D.from_numpy_dtype(a.dtype)
    default_dtype = dt in (D.default_float, D.int64, D.bool_)
    if a.size == 0:
        if a.shape != (0,):
            suffixes.append("size=" + str(tuple(a.shape)))
        if dt is not D.default_float:
            suffixes.append(f"dtype={dt!r}")
        body = "[]"
    else:
        if not PRINT_OPTS.edgeitems:  # (PyTorch's: the shape, as "[...]" hides it)
            suffixes.append("size=" + str(tuple(a.shape)))
        summarize = a.size > PRINT_OPTS.threshold
        shown = _summarized(a) if summarize else a
        fmt = _BoolFormatter(shown) if dt is D.bool_ else _Formatter(shown, dt.is_floating_point)
        body = _tensor_str(a, indent, summarize, fmt)
        if not default_dtype:
            suffixes.append(f"dtype={dt!r}")
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{type(t.grad_fn).__name__}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    tangent = t._fw_grad
    if tangent is not None:  # (a dual tensor of forward-mode AD)
        suffixes.append(f"tangent={tangent}")
    out = _add_suffixes(prefix + body, suffixes, indent)  # (the line measured with its prefix)
    if not plain and any(c.__name__ == "Parameter" and _is_ours(c) for c in type(t).__mro__):
        out = f"Parameter({out})"  # (a program's subclass of Parameter, as PyTorch's)
    return out
