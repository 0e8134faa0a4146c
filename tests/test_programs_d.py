"""More course and tutorial programs (tests/programs_d/), run unchanged under numbagrad and
PyTorch and compared as in test_programs_b: a CIFAR-style CNN with BatchNorm, a small ResNet,
a convolutional autoencoder, seq2seq with attention, a packed-LSTM classifier, word2vec with
negative sampling, a custom data pipeline, fine-tuning with frozen layers, neural style
transfer with LBFGS, Tensor Puzzles, SWA/EMA weight averaging,
per-sample gradients and Jacobians with torch.func, activation checkpointing; spatial
transformer networks, FGSM adversarial examples, DQN with a replay memory, custom Functions
with double backward and a fused conv + batch norm, forward-mode AD, d2l's RNN and batch norm
from scratch, d2l's attention mechanisms, and neural tangent kernels with model ensembling by
torch.func; knowledge distillation (KL divergence on soft targets, cosine loss on hooked
hidden representations), DCGAN, text classification with EmbeddingBag, translation with
nn.Transformer, time-sequence prediction with LSTMCells and LBFGS, sub-pixel super-resolution
with orthogonal init and an antialiased resize, fast neural style (reflection padding,
instance norm, Gram matrices), the parametrizations tutorial with ``orthogonal``, a siamese
network with contrastive and triplet losses, fast.ai's matmul/backprop/minibatch notebooks from
scratch, and learning-rate schedules (a range test, warmup lambdas, one-cycle, cyclic, warm
restarts); from pytorch/examples, the word language model (tied encoder/decoder weights,
batchify/get_batch, repackage_hidden, clip_grad_norm_, the manual ``p.data.add_(p.grad,
alpha=-lr)`` update, the whole model saved, loaded and ``flatten_parameters()``), polynomial
regression (torch.cat of powers, smooth_l1_loss), the actor-critic (Categorical log_prob,
normalised discounted returns, torch.stack of the losses) and a graph attention network
(torch.where masking, heads by permute/view and by torch.cat with masked_fill(-inf), boolean
train masks, Adam with weight decay); the Bi-LSTM CRF tutorial (log_sum_exp by a max expanded
with ``view(1, -1).expand``, transitions set through ``.data[...] = -10000``, the forward
algorithm as a Python loop of ``torch.cat(alphas_t)``, Viterbi backpointers read by .item(),
SGD with weight decay), the word-embeddings tutorial (an N-gram language model on
``view((1, -1))`` embeddings with NLLLoss, and the CBOW exercise summing context embeddings),
the sequence-models tutorial (an LSTM stepped and run whole, the LSTMTagger with scores
before and after training, and a character-level LSTM whose final hidden state is joined to
each word embedding by torch.cat), makemore's WaveNet (hand-written Linear, BatchNorm1d with
running buffers over dims (0, 1), FlattenConsecutive, Sequential, ``p.data += -lr * p.grad``,
``layer.training = False`` for the split losses), d2l's seq2seq (a GRU encoder-decoder with the
context repeated over time steps, sequence_mask by ``X[~mask] = value``, a
MaskedSoftmaxCELoss subclassing nn.CrossEntropyLoss with ``reduction='none'`` on a 3-d input,
grad_clipping's ``p.grad[:] *= theta / norm``, Adam, greedy decoding by ``argmax(dim=2)``) and
d2l's modern CNN blocks (NiN with AdaptiveAvgPool2d and Flatten, an Inception block of four
concatenated branches, a DenseNet dense and transition block, BatchNorm2d's running statistics
in eval mode); nanoGPT's model.py and train.py (a GPTConfig dataclass, c_attn split into heads,
scaled_dot_product_attention(is_causal=True) beside the masked tril-buffer path, wte tied to
lm_head, ``self.apply(self._init_weights)`` and the c_proj init by named_parameters, decay and
no-decay AdamW groups with the 'fused' signature check, the ptdtype table, gradient accumulation
under a disabled GradScaler, clip_grad_norm_, a warmup-cosine lr in each param_group, a
checkpoint resumed, crop_block_size, top-k generate); the names-generation tutorial (a
category-conditioned hand-written RNN, ``loss += l`` into torch.Tensor([0]), ``p.data.add_``,
greedy sampling by topk); a RealNVP flow (coupling layers with buffer masks, a Tanh scale net,
the log-det-Jacobian, a MultivariateNormal prior); Gaussian-process regression by hand
(cdist RBF kernel, cholesky, cholesky_solve, solve_triangular, Adam on log hyper-parameters);
the bag-of-words classifier of "Creating Network Components" (``vec[word_to_ix[word]] += 1``,
LongTensor targets, log_softmax, NLLLoss, SGD); and "Learning PyTorch with Examples"' hand-written
gradients, Polynomial3 module and DynamicNet (a random count of reused-parameter terms, SGD with
momentum where a parameter's grad can stay None); d2l's Builders' Guide (state_dict and
named_parameters of a Sequential, a shared Linear whose ``weight.data[0, 0] = 100`` shows in both
places, init by ``net.apply`` with constant_/zeros_, CenteredLayer and MyLinear, LazyLinear's
UninitializedParameter, torch.save/torch.load of tensors, lists, dicts and a state_dict loaded
into an eval() clone); d2l's weight decay from scratch and by SGD param groups, dropout from
scratch on NumPy masks and nn.Dropout in eval mode, and k-fold get_k_fold_data with a clamped
log_rmse; the state_dict recipes (optimizer.state_dict() keys and momentum buffers, a general
checkpoint, warmstarting by load_state_dict(strict=False) with its missing/unexpected keys and
renamed keys, several models in one file, zero_grad with and without set_to_none); makemore's
"Activations & Gradients, BatchNorm" (the 5/3 kaiming gain, running BatchNorm statistics under
no_grad, tanh saturation, torch.histc and torch.histogram of h, grad:data and update:data
ratios); and small recipe idioms (manual_seed reproducibility within one library, no_grad
beside inference_mode, freezing by requires_grad_(False), named_modules and children, forward
and full backward hooks, parameters_to_vector / vector_to_parameters, clip_grad_value_,
gradient accumulation matching one large batch)."""

import os
import sys

import pytest

from test_programs_b import _assert_matches, _run

torch = pytest.importorskip("torch")

HERE = os.path.join(os.path.dirname(__file__), "programs_d")
PROGRAMS = ["cifar_cnn", "resnet", "autoencoder", "seq2seq_attention", "lstm_classifier",
            "word2vec", "data_pipeline", "finetune", "style_transfer", "tensor_puzzles", "swa_ema",
            "per_sample_grads", "checkpointing", "stn", "fgsm", "dqn", "custom_function",
            "forward_ad", "d2l_scratch", "d2l_attention", "ntk_ensembling", "distillation", "dcgan",
            "text_classification", "translation_transformer", "time_sequence", "super_resolution",
            "fast_neural_style", "parametrizations", "siamese", "fastai_from_scratch",
            "lr_schedules", "word_lm", "poly_regression", "actor_critic", "gat", "bilstm_crf",
            "ngram_cbow", "pos_tagger", "makemore_wavenet", "d2l_seq2seq", "d2l_cnn_blocks",
            "nanogpt_train",
            "char_rnn_generate",
            "realnvp_flow",
            "gp_regression", "bow_classifier", "dynamic_net",
            "d2l_builders_guide", "d2l_regularization", "state_dict_recipes",
            "makemore_batchnorm", "recipes_misc"]


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
# (both libraries warn where the programs ask for it: kl_div's reduction='mean', a
# sequence-first TransformerEncoder with enable_nested_tensor, a float attn_mask beside a bool
# key_padding_mask)
@pytest.mark.filterwarnings("ignore:reduction. 'mean' divides the total loss:UserWarning")
@pytest.mark.filterwarnings("ignore:enable_nested_tensor is True:UserWarning")
@pytest.mark.filterwarnings("ignore:Support for mismatched key_padding_mask:UserWarning")
# (np.array(tensor) on PyTorch's Tensor.__array__, which has no copy keyword)
@pytest.mark.filterwarnings(
    "ignore:__array__ implementation doesn't accept a copy:DeprecationWarning")
# (the recipes' full backward hook on a first layer whose input needs no grad: both libraries
# warn that it fires with respect to the module's outputs)
@pytest.mark.filterwarnings("ignore:Full backward hook is firing:UserWarning")
@pytest.mark.parametrize("name", PROGRAMS)
def test_program_matches_torch(name):
    _assert_matches(_run_fresh(name, "numbagrad"), _run_fresh(name, "torch"),
                    rtol=_RTOL.get(name, 2e-4))


# Programs whose printed numbers come after many steps of Adam, which turns a gradient's
# rounding noise into full steps: fast_neural_style's stylized pixels moved by 2.4e-4 of their
# value when batch and instance norm took PyTorch's affine form (x * alpha + beta), the
# statistics themselves differing from PyTorch's in the last bits (two passes against Welford)
_RTOL = {"fast_neural_style": 5e-4}
