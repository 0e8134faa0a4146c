"""The spellings ``torch.*`` gives layers and losses of ``nn.functional`` (PyTorch's
``torch._C._VariableFunctions``): ATen's argument orders, ``train`` for ``training``, ATen's
errors, and reductions as ATen's enum (0 none, 1 mean, 2 sum), over nn.functional."""

from __future__ import annotations

from ._tensor import Tensor
from .nn import functional as F
from .ops.embedding import embedding as _embedding

# ---------------------------------------------------------------- dropout


def _check_p(p) -> None:
    # (ATen's RuntimeError where nn.functional's is a ValueError; C++ prints 2.0 as 2)
    if p < 0 or p > 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p:g}")


def dropout(input: Tensor, p: float, train: bool) -> Tensor:
    _check_p(p)
    return F.dropout_impl(input, p, train)


def dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    _check_p(p)
    return F.dropout_impl(input, p, train, inplace=True)


def feature_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    _check_p(p)
    return F.dropout_impl(input, p, train, channel_dim=1)


def feature_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    _check_p(p)
    return F.dropout_impl(input, p, train, inplace=True, channel_dim=1)


def alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    _check_p(p)
    return F.dropout_impl(input, p, train, alpha=True)


def alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    _check_p(p)
    return F.dropout_impl(input, p, train, inplace=True, alpha=True)


def feature_alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    _check_p(p)
    return F.dropout_impl(input, p, train, channel_dim=1, alpha=True)


def feature_alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    _check_p(p)
    return F.dropout_impl(input, p, train, inplace=True, channel_dim=1, alpha=True)


# ---------------------------------------------------------------- normalization
# (``cudnn_enable(d)``: no cuDNN here, so it changes nothing)


def layer_norm(input: Tensor, normalized_shape, weight=None, bias=None, eps: float = 1e-05,
               cudnn_enable: bool = True) -> Tensor:
    return F.layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input: Tensor, num_groups: int, weight=None, bias=None, eps: float = 1e-05,
               cudnn_enabled: bool = True) -> Tensor:
    return F.group_norm(input, num_groups, weight, bias, eps)


def batch_norm(input: Tensor, weight, bias, running_mean, running_var, training: bool,
               momentum: float, eps: float, cudnn_enabled: bool) -> Tensor:
    return F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input: Tensor, weight, bias, running_mean, running_var, use_input_stats: bool,
                  momentum: float, eps: float, cudnn_enabled: bool) -> Tensor:
    return F.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats,
                           momentum, eps)


rms_norm = F.rms_norm  # (one signature in both places)

# ---------------------------------------------------------------- embedding, distances


def embedding(weight: Tensor, indices: Tensor, padding_idx: int = -1,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Rows of ``weight`` picked by ``indices`` (note the order: ``F.embedding``'s is the
    other); a negative ``padding_idx`` is none."""
    if sparse:
        raise NotImplementedError("numbagrad has no sparse gradients: use sparse=False")
    return _embedding(weight, indices, padding_idx if padding_idx >= 0 else -1,
                      scale_grad_by_freq)


bilinear = F.bilinear
cosine_similarity = F.cosine_similarity
pairwise_distance = F.pairwise_distance

# ---------------------------------------------------------------- losses

_REDUCTIONS = {1: "mean", 2: "sum"}  # (ATen applies no reduction for any other number)


def _reduction(name: str, reduction, position: int) -> str:
    if not isinstance(reduction, int):
        raise TypeError(f"{name}(): argument 'reduction' (position {position}) must be int, not "
                        f"{type(reduction).__name__}")
    return _REDUCTIONS.get(reduction, "none")


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths, target_lengths, blank: int = 0,
             reduction: int = 0, zero_infinity: bool = False) -> Tensor:
    """ATen's ``ctc_loss``: called without a reduction it reduces nothing (PyTorch 2.13's
    binding, whatever its signature prints)."""
    return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank,
                      _reduction("ctc_loss", reduction, 6), zero_infinity)


def kl_div(input: Tensor, target: Tensor, reduction: int = 1, *,
           log_target: bool = False) -> Tensor:
    """ATen's ``kl_div``: ``reduction=1`` is the plain mean (no warning, no "batchmean")."""
    return F.kl_div_impl(input, target, _reduction("kl_div", reduction, 3), log_target)


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight=None,
                                     pos_weight=None, reduction: int = 1) -> Tensor:
    return F.binary_cross_entropy_with_logits(
        input, target, weight,
        reduction=_reduction("binary_cross_entropy_with_logits", reduction, 5),
        pos_weight=pos_weight)


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0,
                         reduction: int = 1) -> Tensor:
    return F.hinge_embedding_loss(
        input, target, margin, reduction=_reduction("hinge_embedding_loss", reduction, 4))


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                        reduction: int = 1) -> Tensor:
    return F.margin_ranking_loss(
        input1, input2, target, margin,
        reduction=_reduction("margin_ranking_loss", reduction, 5))


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0,
                        p: float = 2, eps: float = 1e-06, swap: bool = False,
                        reduction: int = 1) -> Tensor:
    return F.triplet_margin_loss(
        anchor, positive, negative, margin, p, eps, swap,
        reduction=_reduction("triplet_margin_loss", reduction, 8))


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                          reduction: int = 1) -> Tensor:
    return F.cosine_embedding_loss(
        input1, input2, target, margin,
        reduction=_reduction("cosine_embedding_loss", reduction, 5))


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool, full: bool, eps: float,
                     reduction: int) -> Tensor:
    return F.poisson_nll_loss(input, target, log_input, full, eps=eps,
                              reduction=_reduction("poisson_nll_loss", reduction, 6))


# ---------------------------------------------------------------- pooling, padding


def adaptive_max_pool1d(input: Tensor, output_size) -> tuple:
    """(values, indices), always."""
    return F.adaptive_max_pool1d(input, output_size, True)


def max_pool1d_with_indices(input: Tensor, kernel_size, stride=(), padding=0, dilation=1,
                            ceil_mode: bool = False) -> tuple:
    """(values, indices); an empty ``stride`` is ``kernel_size``."""
    return F.max_pool1d(input, kernel_size, stride or None, padding, dilation, ceil_mode, True)


def constant_pad_nd(input: Tensor, pad, value=0) -> Tensor:
    return F.pad(input, pad, "constant", value)
