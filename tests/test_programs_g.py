"""More tutorial and course programs (tests/programs_g/), run unchanged under numbagrad and
PyTorch and compared as in test_programs_b: PyTorch's Pruning Tutorial (random, L1 and Ln
structured pruning, the PruningContainer history, ``global_unstructured``, a custom
BasePruningMethod, fine-tuning through the masks, ``remove``); Karpathy's llama2.c ``model.py``
and training loop (RMSNorm, real-valued RoPE by ``unbind``/``stack(...).flatten``, grouped-query
``repeat_kv``, ``scaled_dot_product_attention(is_causal=True)`` against the manual ``triu`` mask,
SwiGLU, tied embeddings, decay/no-decay AdamW groups, warmup + cosine lr, gradient accumulation
with a disabled GradScaler, ``generate`` under ``inference_mode``); mamba-minimal (the depthwise
causal Conv1d, ``softplus`` step sizes, the sequential selective scan by ``einsum`` checked
against a ``cumsum``-of-logs closed form); the VQ-VAE notebook (nearest-code ``argmin`` and
``scatter_`` one-hots, the straight-through estimator, perplexity, the EMA codebook that replaces
its ``nn.Parameter``s in ``forward``); The Annotated Diffusion Model (weight-standardised convs,
GroupNorm, linear attention, the pixel-unshuffle Unet, beta schedules, ``gather``-based
``extract``, training and the ``no_grad`` sampling loop); the Deep Implicit Layers tutorial
(fixed-point and Newton tanh layers, an implicit gradient by ``register_hook`` with a batched
``linalg.solve``, Anderson acceleration and the DEQ whose backward hook solves the adjoint fixed
point by ``autograd.grad(..., retain_graph=True)``, both checked by ``gradcheck``); PyTorch's
Chatbot Tutorial (a packed bidirectional GRU encoder, Luong dot/general/concat attention, the
masked NLL by ``gather``/``masked_select``, teacher forcing by a seeded ``random``, checkpoints
through ``torch.save``/``load`` of optimizer states, greedy search); The Annotated Transformer
(LabelSmoothing with ``scatter_``/``nonzero``/``index_fill_`` and ``KLDivLoss(reduction="sum")``,
``subsequent_mask`` by a ``uint8`` ``triu``, the Noam rate through LambdaLR, the copy task and
greedy decoding); MAML on sine waves three ways (second-order ``autograd.grad(create_graph=True)``,
``vmap(grad(...))`` and ``functional_call`` with the outer backward through them) and OpenAI's
Reptile demo (``param.data -=``, interpolated ``load_state_dict``); SimCLR (CS231n's naive and
vectorised contrastive losses, sthalles' ``info_nce_loss`` with bool-eye masking, top-k
``accuracy``, linear evaluation of a frozen backbone); CleanRL's PPO on a NumPy CartPole
(``orthogonal_`` init and its QR recipe, Categorical log-probs and entropy, GAE, the clipped
surrogate and value losses, minibatch epochs with a target-KL stop); caogang's WGAN-GP toy (the
gradient penalty by double backward, ``backward(mone)`` on 0-d losses, ``requires_grad`` toggles,
weight clipping, then spectral-norm and weight-norm parametrizations); and AssemblyAI's
speech-recognition model (CNN LayerNorm by transposes, residual CNNs, bidirectional GRUs,
``CTCLoss`` with float targets and length lists, OneCycleLR, greedy CTC decoding, WER/CER, the
loss's reductions and ``zero_infinity``)."""

import os
import sys

import pytest

from test_programs_b import _assert_matches, _run

torch = pytest.importorskip("torch")

HERE = os.path.join(os.path.dirname(__file__), "programs_g")
PROGRAMS = ["pruning_tutorial", "llama2c_model", "mamba_minimal", "vq_vae", "annotated_diffusion",
            "implicit_layers", "chatbot", "annotated_transformer", "maml_sine", "simclr",
            "cleanrl_ppo", "wgan_gp", "speech_ctc"]


def _run_fresh(name, backend):
    # (the programs' _common module reads the library from sys.argv when imported)
    sys.modules.pop("_common", None)
    try:
        return _run(name, backend, HERE)
    finally:
        sys.modules.pop("_common", None)


# (llama2.c's train.py makes its GradScaler by the deprecated ``torch.cuda.amp`` name, and Eric
# Jang's MAML prints a loss that requires grad with ``%.4f``: both libraries warn, as PyTorch does)
@pytest.mark.filterwarnings("ignore:`torch.cuda.amp.GradScaler:FutureWarning")
@pytest.mark.filterwarnings("ignore:Converting a tensor with requires_grad=True:UserWarning")
@pytest.mark.parametrize("name", PROGRAMS)
def test_program_matches_torch(name):
    _assert_matches(_run_fresh(name, "numbagrad"), _run_fresh(name, "torch"))
