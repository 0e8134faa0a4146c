"""More course and tutorial programs (tests/programs_e/), run unchanged under numbagrad and
PyTorch and compared as in test_programs_b: Sebastian Raschka's "Build a Large Language Model
(From Scratch)" chapters 3-7 and appendix E (attention by loops and by weight splits, causal
``masked_fill_`` on a buffer mask, ``scaled_dot_product_attention`` and ``nn.MultiheadAttention``
variants; LayerNorm with ``unbiased=False``, the tanh GELU, shortcut gradients, GPTModel and
``generate_text_simple``; pretraining with ``cross_entropy`` on ``flatten(0, 1)``, temperature and
top-k through ``torch.where(condition=, input=, other=)``, state dicts of model and optimizer,
GPT-2 weights assigned from a NumPy dict; classification fine-tuning with frozen layers and
last-token logits; instruction fine-tuning with a ``partial`` collate function and
``ignore_index=-100``; LoRA layers swapped in by ``setattr`` over ``named_children``, with the
shared ``previous_chapters.py`` as in the book); the UvA Deep Learning course (activation
functions as modules and their gradients, dead-neuron counts, JSON configs beside state dicts;
hand-written SGD/momentum/Adam optimizers keyed by parameter tensors and initialisation
statistics; the Transformer tutorial's qkv attention, PositionalEncoding buffer and
CosineWarmupScheduler on ``_LRScheduler``; dense GCN and GAT layers with ``nonzero``,
``index_select`` and ``einsum``; energy-based Langevin sampling with ``requires_grad`` and
``set_grad_enabled`` toggled and ``.data``/``.grad`` updated in place; the introduction's
tensors, XOR classifier and meshgrid decision boundary); d2l's optimisation chapter (momentum,
AdaGrad, RMSProp, Adadelta, Adam, Yogi from scratch with ``v[:] =`` states, their torch.optim
twins, learning-rate schedulers) and its Bahdanau and Transformer encoder-decoders (LazyLinear,
``_flat_weights_names``, key-value caching in the decoder state, masked cross-entropy, BLEU);
Zero to Mastery's workflow, classification and TinyVGG notebooks (``inference_mode``, pathlib
state dict round trips, ``accuracy_fn``, ``train_step``/``test_step``, a folder Dataset); CS231n's
layer backward passes checked against autograd and numerical gradients in float64 with the
PyTorch notebook's barebones, Module and Sequential APIs; and fast.ai's hooks and initialisation
notebooks (a ``Hooks`` context manager with ``histc`` statistics, GeneralRelu's in-place ops on
an autograd output, LSUV, BatchNorm from scratch with ``lerp_`` running statistics)."""

import os
import sys

import pytest

from test_programs_b import _assert_matches, _run

torch = pytest.importorskip("torch")

HERE = os.path.join(os.path.dirname(__file__), "programs_e")
PROGRAMS = ["llm_attention", "llm_gpt_model", "llm_pretrain", "llm_classifier_finetune",
            "llm_instruction_finetune", "llm_lora", "uva_activations", "uva_optimizers",
            "uva_gnn", "uva_energy_models", "uva_transformer", "uva_intro", "d2l_optimizers",
            "d2l_transformer", "ztm_workflow", "ztm_tinyvgg", "cs231n_pytorch", "fastai_hooks_init"]


def _run_fresh(name, backend):
    # (the programs' _common and previous_chapters modules read the library from sys.argv when
    # imported)
    for module in ("_common", "previous_chapters"):
        sys.modules.pop(module, None)
    try:
        return _run(name, backend, HERE)
    finally:
        for module in ("_common", "previous_chapters"):
            sys.modules.pop(module, None)


@pytest.mark.parametrize("name", PROGRAMS)
def test_program_matches_torch(name):
    _assert_matches(_run_fresh(name, "numbagrad"), _run_fresh(name, "torch"))
