"""More course and tutorial programs (tests/programs_d/), run unchanged under numbagrad and
PyTorch and compared as in test_programs_b: a CIFAR-style CNN with BatchNorm, a small ResNet,
a convolutional autoencoder, seq2seq with attention, a packed-LSTM classifier, word2vec with
negative sampling, a custom data pipeline, fine-tuning with frozen layers, neural style
transfer with LBFGS, Tensor Puzzles, SWA/EMA weight averaging,
per-sample gradients and Jacobians with torch.func, and activation checkpointing."""

import os
import sys

import pytest

from test_programs_b import _assert_matches, _run

torch = pytest.importorskip("torch")

HERE = os.path.join(os.path.dirname(__file__), "programs_d")
PROGRAMS = ["cifar_cnn", "resnet", "autoencoder", "seq2seq_attention", "lstm_classifier",
            "word2vec", "data_pipeline", "finetune", "style_transfer", "tensor_puzzles", "swa_ema",
            "per_sample_grads", "checkpointing"]


def _run_fresh(name, backend):
    # (the programs' _common module reads the library from sys.argv when imported)
    sys.modules.pop("_common", None)
    try:
        return _run(name, backend, HERE)
    finally:
        sys.modules.pop("_common", None)


# (PyTorch's torch.func scripts a helper when first used, and warns that scripting is deprecated)
@pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")
@pytest.mark.parametrize("name", PROGRAMS)
def test_program_matches_torch(name):
    _assert_matches(_run_fresh(name, "numbagrad"), _run_fresh(name, "torch"))
