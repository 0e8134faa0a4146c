"""Random number generators: ``Generator``, the default one behind the factories, and the
``manual_seed`` / ``seed`` / ``initial_seed`` / ``get_rng_state`` / ``set_rng_state`` functions.

A ``Generator`` wraps a NumPy ``PCG64`` bit generator, so its streams are reproducible run to run
for a seed but are not PyTorch's (PyTorch uses a Mersenne Twister and its own sampling).
"""

from __future__ import annotations

import numpy as np

from ._tensor import CPU, Tensor, _check_device

# PyTorch's seed for a new torch.Generator() (its c10 default_rng_seed_val)
_DEFAULT_SEED = 67280421310721
_U64 = (1 << 64) - 1
_STATE_LEN = 7  # seed, PCG64 state (2 words), increment (2 words), has_uint32, uinteger


def _check_seed(seed) -> int:
    if isinstance(seed, Tensor):
        seed = seed.item()
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool):
        raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}")
    seed = int(seed)
    if not -(1 << 63) <= seed <= _U64:
        raise ValueError("Overflow when unpacking long long")
    return seed & _U64  # a negative seed wraps to an unsigned one, as in PyTorch


class Generator:
    """A source of random numbers for ``randperm``, ``randint``, ``rand``, ``randn``, the
    samplers and ``random_split``.

    >>> import numbagrad as torch
    >>> g = torch.Generator().manual_seed(0)
    >>> a = torch.randperm(5, generator=g)
    >>> b = torch.randperm(5, generator=torch.Generator().manual_seed(0))
    >>> a.tolist() == b.tolist()
    True
    """

    __slots__ = ("_rng", "_seed", "device")

    def __init__(self, device="cpu"):
        self.device = _check_device(device) or CPU
        self._set(_DEFAULT_SEED)

    def _set(self, seed: int) -> None:
        self._seed = seed
        self._rng = np.random.default_rng(seed)

    def manual_seed(self, seed) -> Generator:
        """Seed it (a negative seed wraps to 2**64 + seed); returns the generator."""
        self._set(_check_seed(seed))
        return self

    def seed(self) -> int:
        """Seed it from the operating system's entropy; returns that seed."""
        seed = int(np.random.SeedSequence().entropy) & _U64
        self._set(seed)
        return seed

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self) -> Tensor:
        """The generator's state as an int64 tensor (PyTorch's is a uint8 tensor of its
        Mersenne Twister's state; numbagrad has no uint8 dtype)."""
        st = self._rng.bit_generator.state
        words = [self._seed, st["state"]["state"] & _U64, st["state"]["state"] >> 64,
                 st["state"]["inc"] & _U64, st["state"]["inc"] >> 64, st["has_uint32"],
                 st["uinteger"]]
        return Tensor._make(np.array(words, dtype=np.uint64).view(np.int64))

    def set_state(self, new_state: Tensor) -> Generator:
        if not isinstance(new_state, Tensor):
            raise TypeError(
                f"expected a torch.ByteTensor, but got {type(new_state).__name__}"
            )
        if new_state.dtype.name != "int64" or tuple(new_state.shape) != (_STATE_LEN,):
            raise RuntimeError(
                f"RNG state is wrong size: expected an int64 tensor of {_STATE_LEN} elements "
                "from Generator.get_state()"
            )
        w = [int(x) for x in new_state._host().view(np.uint64)]
        rng = np.random.default_rng()
        rng.bit_generator.state = {
            "bit_generator": "PCG64",
            "state": {"state": w[1] | (w[2] << 64), "inc": w[3] | (w[4] << 64)},
            "has_uint32": w[5], "uinteger": w[6],
        }
        self._seed, self._rng = w[0], rng
        return self

    def __repr__(self) -> str:
        # (PyTorch's class lives in torch._C)
        return f"<numbagrad._C.Generator object at {hex(id(self))}>"


# seeded from the operating system at import, as PyTorch's default CPU generator
default_generator = Generator()
default_generator.seed()


def numpy_rng(generator: Generator | None) -> np.random.Generator:
    """The NumPy generator behind ``generator`` (None: the default generator)."""
    return (default_generator if generator is None else generator)._rng


def standard_normal(rng: np.random.Generator, shape: tuple, np_dtype) -> np.ndarray:
    """``shape`` draws of N(0, 1) from NumPy generator ``rng`` for a tensor of ``np_dtype``
    (float64 ones for a dtype other than float32, as NumPy's ``standard_normal``). float32
    ones come from float32 uniforms by the Box-Muller transform, as PyTorch's CPU kernel
    makes them: NumPy's float32 log, sin and cos are vector loops, faster than its ziggurat's
    per-element branches, and no float64 array is made and cast. Their first half holds the
    cosines, the second half the sines (of the same pairs of uniforms)."""
    if np_dtype != np.float32:
        return rng.standard_normal(shape)
    n = 1
    for s in shape:
        n *= s
    half = (n + 1) // 2
    u = rng.random(2 * half, dtype=np.float32)  # in [0, 1 - 2**-24]: 1 - u is never 0
    out = np.empty(2 * half, np.float32)
    radius = np.log1p(-u[:half])
    radius *= np.float32(-2.0)
    np.sqrt(radius, out=radius)
    angle = u[half:]
    angle *= _TWO_PI_32
    np.cos(angle, out=out[:half])
    np.sin(angle, out=out[half:])
    out[:half] *= radius
    out[half:] *= radius
    return out[:n].reshape(shape)


_TWO_PI_32 = np.float32(2 * np.pi)


def draw_seed(generator: Generator | None = None) -> int:
    """A seed drawn from ``generator`` (None: the default one), as PyTorch's
    ``torch.empty((), dtype=torch.int64).random_(generator=generator)``."""
    return int(numpy_rng(generator).integers(0, 1 << 63))


def manual_seed(seed) -> Generator:
    """Seed the default generator (behind rand, randn, randint, randperm, shuffling, ...)."""
    return default_generator.manual_seed(seed)


def seed() -> int:
    """Seed the default generator nondeterministically; returns the seed."""
    return default_generator.seed()


def initial_seed() -> int:
    return default_generator.initial_seed()


def get_rng_state() -> Tensor:
    return default_generator.get_state()


def set_rng_state(new_state: Tensor) -> None:
    default_generator.set_state(new_state)
