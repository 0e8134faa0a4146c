"""``numbagrad.backends.mkldnn``: oneDNN, which numbagrad does not use."""

enabled = True


def is_available() -> bool:
    return False
