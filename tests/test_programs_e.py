"""A second round of tutorial programs (tests/programs_e/), run unchanged under numbagrad and
PyTorch and compared as in test_programs_b: spatial transformer networks, FGSM adversarial
examples, DQN with a replay memory, custom Functions with double backward and a fused
conv + batch norm, forward-mode AD, d2l's RNN and batch norm from scratch, d2l's attention
mechanisms, and neural tangent kernels with model ensembling by torch.func."""

import os
import sys

import pytest

from test_programs_b import _assert_matches, _run

torch = pytest.importorskip("torch")

HERE = os.path.join(os.path.dirname(__file__), "programs_e")
PROGRAMS = ["stn", "fgsm", "dqn", "custom_function", "forward_ad",
            "d2l_scratch", "d2l_attention", "ntk_ensembling"]


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
