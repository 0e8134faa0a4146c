"""``torch.backends.mps``: numbagrad has no Apple MPS backend."""


def is_available() -> bool:
    return False


def is_built() -> bool:
    return False
