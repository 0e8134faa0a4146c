"""What the programs in this folder share: the library named on the command line, and the
same starting weights in both libraries (their random generators differ, so each program
overwrites a model's freshly drawn parameters with numbers drawn by NumPy)."""
import sys

import numpy as np

BACKEND = sys.argv[1] if len(sys.argv) > 1 and sys.argv[1] in ("torch", "numbagrad") else "numbagrad"


def numpy_init(torch, model, seed=0):
    """Every parameter uniform(-1/sqrt(fan_in), 1/sqrt(fan_in)) from NumPy (PyTorch's default
    range), in ``named_parameters`` order; BatchNorm/LayerNorm weights stay ones."""
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("weight") and p.dim() == 1:
                continue
            fan_in = int(np.prod(tuple(p.shape)[1:])) if p.dim() > 1 else p.numel()
            bound = 1 / np.sqrt(fan_in)
            p.copy_(torch.from_numpy(rng.uniform(-bound, bound, tuple(p.shape)).astype(np.float32)))


def _flat(value):
    if hasattr(value, "detach"):
        return value.detach().reshape(-1).tolist()
    if isinstance(value, np.ndarray):
        return value.reshape(-1).tolist()
    if isinstance(value, (list, tuple)):
        return [v for item in value for v in _flat(item)]
    return [value]


def show(name, value):
    """Print ``name v1 v2 ...`` for a tensor, a number or a (nested) list of them."""
    print(name, *[float(v) for v in _flat(value)])
