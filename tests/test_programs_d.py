"""More course and tutorial programs (tests/programs_d/), run unchanged under numbagrad and
PyTorch and compared as in test_programs_b: a CIFAR-style CNN with BatchNorm, a small ResNet,
a convolutional autoencoder, seq2seq with attention, a packed-LSTM classifier, word2vec with
negative sampling, a custom data pipeline, fine-tuning with frozen layers, neural style
transfer with LBFGS, Tensor Puzzles, SWA/EMA weight averaging,
per-sample gradients and Jacobians with torch.func, activation checkpointing; spatial
transformer networks, FGSM adversarial examples, DQN with a replay memory, custom Functions
with double backward and a fused conv + batch norm, forward-mode AD, d2l's RNN and batch norm
from scratch, d2l's attention mechanisms, and neural tangent kernels with model ensembling by
torch.func."""

import os
import sys

import pytest

from test_programs_b import _assert_matches, _run

torch = pytest.importorskip("torch")

HERE = os.path.join(os.path.dirname(__file__), "programs_d")
PROGRAMS = ["cifar_cnn", "resnet", "autoencoder", "seq2seq_attention", "lstm_classifier",
            "word2vec", "data_pipeline", "finetune", "style_transfer", "tensor_puzzles", "swa_ema",
            "per_sample_grads", "checkpointing", "stn", "fgsm", "dqn", "custom_function",
            "forward_ad", "d2l_scratch", "d2l_attention", "ntk_ensembling"]


def _run_fresh(name, backend):
    # (the programs' _common module reads the library from sys.argv when imported)
    sys.modules.pop("_common", None)
    try:
        return _run(name, backend, HERE)
    finally:
        sys.modules.pop("_common", None)


# (PyTorch's torch.func scripts a helper when first used, and warns that scripting is deprecated)
@pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")
# (d2l's training loop reads float(loss) of a loss that requires grad; both libraries warn)
@pytest.mark.filterwarnings("ignore:Converting a tensor with requires_grad=True:UserWarning")
@pytest.mark.parametrize("name", PROGRAMS)
def test_program_matches_torch(name):
    _assert_matches(_run_fresh(name, "numbagrad"), _run_fresh(name, "torch"))
