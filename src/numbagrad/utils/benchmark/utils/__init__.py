"""The modules behind ``numbagrad.utils.benchmark``, laid out as PyTorch's
``torch.utils.benchmark.utils`` is (``common``, ``timer``, ``compare``), so that a script
importing from them, and the names its objects print (``...utils.common.Measurement``), match."""
