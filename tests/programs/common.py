"""What the tutorial programs share: the library chosen on the command line, the generated
data that stands in for the downloaded data sets, and the same starting numbers in both
libraries (their random generators differ, so a tensor the tutorial draws at random is
overwritten with numbers drawn by NumPy).

    python tests/programs/quickstart.py [numbagrad|torch]
"""

import sys

import numpy as np

BACKEND = sys.argv[1] if len(sys.argv) > 1 else "numbagrad"
if BACKEND not in ("numbagrad", "torch"):
    sys.exit(f"usage: {sys.argv[0]} [numbagrad|torch]")


def images(n: int, seed: int, classes: int = 10, shape=(1, 28, 28)):
    """``n`` float32 images in [0, 1] (one noisy template per class) and int64 labels."""
    rng = np.random.default_rng(seed)
    templates = np.random.default_rng(1234).uniform(size=(classes, *shape))
    labels = rng.integers(0, classes, size=n)
    x = 0.6 * templates[labels] + 0.4 * rng.uniform(size=(n, *shape))
    return x.astype(np.float32), labels.astype(np.int64)


def same(torch, *things, seed: int = 0, scale: float = 1.0) -> None:
    """Overwrite, in place, tensors with standard-normal numbers times ``scale``, and modules'
    weights and biases with PyTorch's default uniform(-1/sqrt(fan_in), 1/sqrt(fan_in)); the
    numbers come from NumPy, so both libraries start from the same values."""
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for thing in things:
            if isinstance(thing, torch.nn.Module):
                for m in thing.modules():
                    w = getattr(m, "weight", None)
                    if isinstance(w, torch.Tensor) and w.dim() >= 2:
                        bound = 1 / np.sqrt(np.prod(tuple(w.shape)[1:]))
                        for t in (w, getattr(m, "bias", None)):
                            if t is not None:
                                u = rng.uniform(-bound, bound, size=tuple(t.shape))
                                t.copy_(torch.from_numpy(u.astype(np.float32)))
            else:
                z = scale * rng.standard_normal(size=tuple(thing.shape))
                thing.copy_(torch.from_numpy(z.astype(np.float32)))
