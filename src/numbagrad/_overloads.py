"""PyTorch's argument parser's refusals, for the methods numbagrad writes with ``*args,
**kwargs`` (``Tensor.to``, ``Tensor.random_``, ...): a call that none of the overloads'
signatures takes, by the count and the names of its arguments, raises the TypeError PyTorch's
C++ parser raises, in its words. The types of the arguments are left to the method itself."""

from __future__ import annotations

# the classes PyTorch's messages name by their C type's name
_C_NAMES = {"dtype": "torch.dtype", "device": "torch.device", "layout": "torch.layout",
            "memory_format": "torch.memory_format", "Size": "torch.Size",
            "Generator": "torch._C.Generator"}


def type_name(value) -> str:
    """``value``'s type as PyTorch's parser names it (``torch.dtype``, ``Tensor``, ``int``)."""
    cls = type(value)
    if cls.__module__.startswith("numbagrad") and cls.__name__ in _C_NAMES:
        return _C_NAMES[cls.__name__]
    return cls.__name__


class _Signature:
    """One overload, from its text as PyTorch prints it:
    ``"(torch.dtype dtype, bool non_blocking = False, *, torch.memory_format ...)"``."""

    def __init__(self, text: str):
        self.text = text
        self.entries = [e.strip() for e in text.strip()[1:-1].split(",") if e.strip()]
        self.names, self.optional = [], []
        self.required = []  # (per entry: the name of a parameter without a default, or None)
        self.max_pos = None  # (the count of parameters before ``*``)
        for entry in self.entries:
            if entry == "*":
                self.max_pos = len(self.names)
                self.required.append(None)
                continue
            # (the name is the word before the default: "tuple of Tensors out = None")
            self.names.append(entry.split(" = ")[0].split()[-1])
            self.optional.append(" = " in entry)
            self.required.append(None if self.optional[-1] else self.names[-1])
        if self.max_pos is None:
            self.max_pos = len(self.names)
        self.min_args = self.optional.count(False)

    def binds(self, args, kwargs) -> bool:
        """Whether the arguments fit this signature by count and name."""
        if len(args) > self.max_pos:
            return False
        for key in kwargs:
            if key not in self.names or self.names.index(key) < len(args):
                return False
        return all(k < len(args) or name in kwargs or opt
                   for k, (name, opt) in enumerate(zip(self.names, self.optional)))

    def refuse(self, name, args, kwargs):
        """The TypeError PyTorch's parser raises for this signature, the only one that takes
        as many arguments as were given; checked in its order: the count of positional
        arguments, a required parameter missing, a keyword it does not know or that repeats
        a positional argument (the first, in the order they were given)."""
        if len(args) > self.max_pos:
            if self.min_args != self.max_pos:
                return TypeError(f"{name}() takes from {self.min_args} to {self.max_pos} "
                                 f"positional arguments but {len(args)} were given")
            return TypeError(f"{name}() takes {self.max_pos} positional argument"
                             f"{'' if self.max_pos == 1 else 's'} but {len(args)} "
                             f"{'was' if len(args) == 1 else 'were'} given")
        for k, (param, opt) in enumerate(zip(self.names, self.optional)):
            if k >= len(args) and param not in kwargs and not opt:
                missing = [f'"{p}"' for p, o in zip(self.names[k:], self.optional[k:])
                           if not o]
                # (PyTorch's plural: "arguments" for one)
                return TypeError(f"{name}() missing {len(missing)} required positional "
                                 f"argument{'s' if len(missing) == 1 else ''}: "
                                 f"{', '.join(missing)}")
        for key in kwargs:
            if key not in self.names:
                return TypeError(f"{name}() got an unexpected keyword argument '{key}'")
            if self.names.index(key) < len(args):
                return TypeError(f"{name}() got multiple values for argument '{key}'")
        return None


_SIGNATURES: dict = {}
# the calls found to fit, by (name, count of positional arguments, keyword names): whether a
# call binds depends on nothing else, and ``x.to(device=d)`` runs in a training loop
_FITS: set = set()


def check(name: str, args, kwargs, signatures) -> None:
    """Raise PyTorch's TypeError unless one of ``signatures`` (their texts, as PyTorch prints
    them) takes ``args`` and ``kwargs`` by count and name."""
    fit = (name, len(args), *kwargs)
    if fit in _FITS:
        return
    key = (name, tuple(signatures))
    parsed = _SIGNATURES.get(key)
    if parsed is None:
        parsed = _SIGNATURES[key] = [_Signature(s) for s in signatures]
    if any(s.binds(args, kwargs) for s in parsed):
        _FITS.add(fit)
        return
    if len(parsed) == 1:  # (PyTorch's parser then raises that signature's own error)
        raise parsed[0].refuse(name, args, kwargs)
    n = len(args) + len(kwargs)
    plausible = [s for s in parsed if s.min_args <= n <= len(s.names)]
    if len(plausible) == 1:
        error = plausible[0].refuse(name, args, kwargs)
        if error is not None:
            raise error
    raise invalid_combination(name, args, kwargs, parsed)


def invalid_combination(name, args, kwargs, parsed) -> TypeError:
    """PyTorch's "received an invalid combination of arguments". Its parser keeps the
    keywords in a C++ hash map, which for a few of them lists them last given first."""
    keys = list(kwargs)[::-1]
    given = [type_name(a) for a in args] + [f"{k}={type_name(kwargs[k])}" for k in keys]
    got = ", ".join(given) if args else "".join(f"{g}, " for g in given)
    lines = []
    for s in parsed:
        lines.append(f" * {s.text}\n")
        # (PyTorch explains only an overload with as many entries, its ``*`` one of them, as
        # arguments given; it looks for each keyword among the last entries, as many as the
        # keywords, and reads a parameter's name together with its default: a keyword for a
        # parameter with a default is never found)
        if len(s.entries) == len(args) + len(kwargs) and kwargs:
            last = s.required[max(0, len(s.entries) - len(kwargs)):]
            wrong = [k for k in keys if k not in last]
            if wrong:
                lines.append("      didn't match because some of the keywords were "
                             f"incorrect: {', '.join(wrong)}\n")
    return TypeError(f"{name}() received an invalid combination of arguments - got ({got}), "
                     f"but expected one of:\n{''.join(lines)}")


# ``Tensor.to``'s overloads (``nn.Module.to`` parses its arguments by the same)
TO = (
    "(torch.device device = None, torch.dtype dtype = None, bool non_blocking = False, "
    "bool copy = False, *, torch.memory_format memory_format = None)",
    "(torch.dtype dtype, bool non_blocking = False, bool copy = False, *, "
    "torch.memory_format memory_format = None)",
    "(Tensor tensor, bool non_blocking = False, bool copy = False, *, "
    "torch.memory_format memory_format = None)",
)

UNIFORM_ = ("(float from = 0, float to = 1, *, torch.Generator generator = None)",)
RANDOM_ = ("(*, torch.Generator generator = None)",
           "(int from, int to, *, torch.Generator generator = None)",
           "(int to, *, torch.Generator generator = None)")
