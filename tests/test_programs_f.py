"""More course and tutorial programs (tests/programs_f/), run unchanged under numbagrad and
PyTorch and compared as in test_programs_b: Karpathy's micrograd demo rewritten on tensors
(Neuron/Layer/MLP classes, the max-margin loss, ``p.data -= lr * p.grad`` in float64), his "Let's
build GPT" notebook (encode/decode, get_batch, the bigram model, the four versions of the
masked-average trick with ``tril``/``masked_fill(-inf)``/softmax, LayerNorm1d, a single-head
model with ``estimate_loss``) and makemore part 1's exercises (trigram counts in a 3-d int32
tensor, smoothing tuned on a dev split, one-hot vs ``W[ix]`` indexing vs ``F.cross_entropy``);
pytorch/examples mnist_rnn (an LSTM over image rows, BatchNorm1d, Dropout2d on 2-d activations,
Adadelta with StepLR); "Extending torch.func with autograd.Function" (``setup_context``,
Functions whose backward is another Function, ``generate_vmap_rule`` and hand-written ``vmap``
staticmethods, a ``jvp`` staticmethod, gradcheck); CS224n's transition parser (PartialParse,
minibatch_parse, embeddings as a Parameter indexed by ``w.flatten()``, legal-transition masking,
UAS), CS231n's RNN/LSTM captioning in torch (temporal softmax loss with a mask, numerical
gradient checks, a ``params`` dict trained by Adam, greedy sampling) and CS285's policy gradient
(build_mlp, Normal and Categorical policies, reward-to-go by ``flip``/``cumsum``, GAE, a value
baseline); "Deep Learning with PyTorch" chapters 5, 6 and 8 (the thermometer fit by hand-derived
gradients, autograd and optimizers, ``set_grad_enabled`` validation, nn.Linear on unsqueezed data;
convolution kernels written under no_grad, L2 by hand, Dropout2d, BatchNorm and NetResDeep
repeating one ResBlock ten times); d2l's object-oriented chapters 3-4 (save_hyperparameters by
``inspect``, a Trainer that steps under ``no_grad``, LazyLinear initialised after materialising,
the Classifier's accuracy and loss); and blog-style programs: a Neural ODE through a hand-written
RK4 solver (its order checked against ``matrix_exp``, RMSprop, gradients w.r.t. the initial
state), planar and radial flows (log-determinants against autograd Jacobians, annealed reverse
KL), a Gaussian mixture by EM (MultivariateNormal log-densities, einsum covariances, Cholesky by
hand, MixtureSameFamily fitted by Adam), k-means (cdist, index_add_/scatter_add_/scatter_reduce_
centroid updates, k-means++ through searchsorted, silhouette, soft k-means), a physics-informed
network (second derivatives by ``autograd.grad(create_graph=True)``, the inverse problem, L-BFGS)
and collaborative filtering (Embedding dot products, sigmoid_range, ``res +=`` on an autograd
result, OneCycleLR, cosine similarity, an SVD of the factors, CollabNN); and PyTorch's recipes
(a network defined and run, zeroing gradients, changing the default device with
``with torch.device('cpu'):``, ``utils.benchmark``'s Timer and Compare tables, loading a state
dict with ``mmap``/``assign``; the Compare tables are printed without their times, which differ
from run to run). One program stays out of PROGRAMS because numbagrad lacks what it uses:
recipes_meta_shapes (the meta device, ``Module.to_empty``)."""

import os
import sys

import pytest

from test_programs_b import _assert_matches, _run

torch = pytest.importorskip("torch")

HERE = os.path.join(os.path.dirname(__file__), "programs_f")
PROGRAMS = ["micrograd_moons", "gpt_dev_notebook", "makemore_exercises", "mnist_rnn",
            "func_autograd_function", "cs224n_parser", "cs231n_captioning",
            "cs285_policy_gradient", "dlwpt_temperature", "dlwpt_convnets", "d2l_oop_regression",
            "neural_ode_rk4", "planar_flow", "gmm_em", "kmeans", "pinn_oscillator",
            "collab_filtering", "recipes_basics"]


def _run_fresh(name, backend):
    # (the programs' _common module reads the library from sys.argv when imported)
    sys.modules.pop("_common", None)
    try:
        return _run(name, backend, HERE)
    finally:
        sys.modules.pop("_common", None)


# (PyTorch's torch.func.jvp scripts a helper when first used, and warns that scripting is deprecated)
@pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")
@pytest.mark.parametrize("name", PROGRAMS)
def test_program_matches_torch(name):
    _assert_matches(_run_fresh(name, "numbagrad"), _run_fresh(name, "torch"))
