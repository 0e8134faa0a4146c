"""More course and tutorial programs (tests/programs_c/), run unchanged under numbagrad and
PyTorch and compared as in test_programs_b: a REINFORCE policy gradient with
``torch.distributions.Categorical``, and the nn.TransformerEncoder language-model tutorial."""

import os

import pytest

from test_programs_b import _assert_matches, _run

torch = pytest.importorskip("torch")

HERE = os.path.join(os.path.dirname(__file__), "programs_c")
PROGRAMS = ["reinforce", "transformer_lm"]


# the tutorial's encoder is sequence-first, for which both libraries warn once
@pytest.mark.filterwarnings("ignore:enable_nested_tensor is True:UserWarning")
@pytest.mark.parametrize("name", PROGRAMS)
def test_program_matches_torch(name):
    _assert_matches(_run(name, "numbagrad", HERE), _run(name, "torch", HERE))
