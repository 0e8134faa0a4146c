"""``numbagrad.backends.cudnn``: PyTorch's cuDNN switches, settable; numbagrad has no cuDNN,
so they have no effect (``is_available()`` is False, ``version()`` None)."""

enabled = True
benchmark = False
deterministic = False
allow_tf32 = True
benchmark_limit = 10


def is_available() -> bool:
    return False


def version():
    return None
