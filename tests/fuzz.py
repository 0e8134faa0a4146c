"""A differential fuzzer: seeded random programs over the public API, run in numbagrad and in
PyTorch from the same NumPy data, compared after every statement.

A *program* is a list of ``Stmt``: one line of Python each, written with ``torch`` as the
module name (``F`` is ``torch.nn.functional``, ``np`` is NumPy). ``run_program`` executes it
twice, once with ``torch`` bound to PyTorch and once bound to numbagrad, and after every
statement compares what the statement names in ``touches``: a tensor's shape, dtype,
``requires_grad``, ``is_leaf``, ``grad_fn`` class name and (unless deferred) its values; a tuple
element by element; a number by value. When one side raises, the other must raise the same kind
of exception (TypeError, RuntimeError, IndexError, ValueError, OverflowError); messages are not
compared. A program ends with gradients: ``backward()`` and the ``.grad`` of every leaf,
``autograd.grad`` results, or second-order gradients through ``create_graph=True``, then a final
comparison of every tensor it made (large results are left unread until then, so the lazy
forward and the fused backward really run).

The generator runs each statement in PyTorch as it writes it, and chooses the next one from the
values it sees: operands of log/sqrt/reciprocal/division stay in a safe range (except in the
occasional NaN/inf program), and discontinuous ops (comparisons, relu/sign/abs/clamp kinks,
max/argmax, casts to int) are not applied where two values differ by less than the two
libraries' rounding could move them (exact ties are kept: they compare tie-breaking rules).

    python tests/fuzz.py --seeds 0:1000       # a summary of mismatches by class, with repros
    python tests/fuzz.py --seed 17 --print    # one program, as Python
    python tests/fuzz.py --known              # which known classes are still open

Values are compared with a tolerance that follows each value's history: exact inputs (dyadic
literals, so small sums are exact and ties happen) are compared exactly through exact ops; an
op that rounds, a reduction that cancels (sum |x| / |sum x|) or an op that shrinks the scale of
an inexact operand widens it. Gradients get an absolute slack of a tenth of the statement's
largest gradient (a gradient that cancels to zero next to the others).

Mismatch classes still open in the library are listed in ``KNOWN_OPEN``; the generator avoids
each of them exactly (look for ``avoid("...")``), so the CI seeds in ``test_fuzz.py`` pass. Move
a class to ``FIXED`` once it is fixed, and the generator produces it again.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
import time
import warnings
from collections import defaultdict
from dataclasses import dataclass, replace
from typing import NamedTuple

import numpy as np

import numbagrad

# ---------------------------------------------------------------------------------------------
# Mismatch classes this fuzzer found in numbagrad. Each has what differs and a minimal program
# (PyTorch's outcome against numbagrad's); ``python tests/fuzz.py --known`` runs every repro
# and says which classes are still open.
#
# KNOWN_OPEN: still open. The generator does not produce programs of these classes: each key is
# consulted by ``avoid(key)`` at the place that would generate it. Once the library is fixed,
# move the entry to FIXED and the generator produces such programs again.


class Known(NamedTuple):
    what: str  # what differs: PyTorch's outcome, then numbagrad's
    repro: str  # a minimal program; a "# compare: a, b" comment names what to compare


KNOWN_OPEN: dict[str, Known] = {
    "topk_ties": Known(
        "topk of a slice holding equal values: PyTorch's CPU kernel picks among the ties by its"
        " selection algorithm (std::partial_sort, or std::nth_element and std::sort, from"
        " libstdc++); numbagrad's stable sort picks the first. Values agree; the indices, and"
        " where the gradient goes, differ",
        """
        x = torch.tensor([[1.5, 0.0, 0.5, 1.5]])
        i = x.topk(2).indices
        """),
    "sort_unstable_ties": Known(
        "sort / argsort without stable=True of a dim longer than 16 holding equal values:"
        " PyTorch's CPU sort orders the ties by its algorithm (up to 16 elements it is stable);"
        " numbagrad's sort is always stable. Values agree, indices differ",
        """
        x = torch.tensor([[1.0, 0.0] * 9])
        i = x.argsort(1)
        """),
    "conv_nonfinite": Known(
        "a convolution over NaN or inf values: PyTorch's kernels differ in where an inf * 0"
        " term occurs (its depthwise kernel skips the padded positions, its backward sums"
        " others); numbagrad pads with zeros and multiplies every term",
        """
        x = torch.tensor([[[0.5, 0.398, -0.971], [-1.903, -0.862, 2.116], [-1.032, 1.504, 2.877]]])
        w = torch.tensor([[[0.75, 1.75]], [[0.25, -2.25]], [[np.nan, -2.0]]])
        y = F.conv1d(x, w, stride=2, padding=1, groups=3)
        """),
    "masked_scatter_layout": Known(
        "masked_scatter of a permuted (transposed) tensor: PyTorch's result is laid out"
        " contiguously (mostly); numbagrad's keeps the input's layout, so a later view or"
        " linear takes another path (F.linear: ViewBackward0 against AddBackward0)",
        """
        x = torch.arange(18.0).reshape(2, 3, 3).transpose(0, 1).requires_grad_()
        m = torch.tensor([[[True, True, True], [False, True, True]], [[False, False, True], [True, False, True]], [[False, False, False], [True, True, True]]])
        v = torch.masked_scatter(x, m, torch.arange(18.0))
        y = F.linear(v, torch.ones(1, 3), torch.ones(1))
        """),
    "mode_long_slice_ties": Known(
        "mode along a dim longer than 16 holding equal values or NaN: PyTorch's CPU kernel"
        " sorts (value, index) pairs by value with std::sort, unstable past 16 elements, and"
        " reports the index its sort leaves last in the longest run; numbagrad's stable sort"
        " gives the last occurrence (up to 16 elements it copies PyTorch's insertion sort)",
        """
        x = torch.tensor([[2.0, 1.0, 2.0, 0.0] * 5])
        m = x.mode(1)
        i = m.indices
        """),
    "nonfinite_kernel_arithmetic": Known(
        "F.interpolate and the normalisation layers over infinite values: PyTorch's kernels"
        " read only the neighbours an output interpolates (numbagrad multiplies the whole row by"
        " a matrix of weights, inf * 0 = NaN), and its norm kernels' backward arranges the"
        " terms otherwise (NaN where numbagrad's gives -inf)",
        """
        x = torch.tensor([[[1.0, np.inf, 2.0, 3.0]]])
        y = F.interpolate(x, size=7, mode='linear')
        """),
    "scatter_larger_source_unasked_grad": Known(
        "scatter / scatter_add / scatter_reduce whose source, larger than the index, requires"
        " grad, then autograd.grad of another input: PyTorch skips the source's formula (and"
        " its shape check); numbagrad computes it and raises (invalid gradient: the index's"
        " shape, not the source's)",
        """
        x = torch.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
        s = torch.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
        y = torch.scatter_reduce(x, 1, torch.tensor([[0, 2]]), s, 'mean', include_self=False)
        g, = torch.autograd.grad(y.sum(), x)
        """),
    "abs_of_nan_second_order": Known(
        "second-order gradient through abs of an mv whose operands hold NaN and inf, scaled by"
        " NaN/inf (seed 426865): PyTorch gives -0.0 where numbagrad gives NaN at one element"
        " of the matrix's gradient (the order in which 0 * inf meets the NaN terms)",
        """
        x2 = torch.tensor([1.616, 1.351, np.nan, 1.172, 1.547], requires_grad=True)
        c4 = torch.tensor(np.array([[-2.565, -0.365, -1.563, 2.167, -2.053], [-2.187, -2.315, np.nan, -np.inf, 2.181], [-2.671, -0.19, -2.615, 2.183, 1.349]], dtype=np.float32), requires_grad=True)
        v6 = abs(c4.mv(x2))
        loss = (v6 * torch.tensor(np.array([np.nan, np.inf, -0.75], dtype=np.float32))).sum()
        g, = torch.autograd.grad(loss, x2, create_graph=True)
        gg = torch.autograd.grad((g * torch.tensor(np.array([-2.5, np.inf, 0.25, np.inf, 2.0], dtype=np.float32))).sum(), [x2, c4], allow_unused=True)
        """),
    "hook_wrapped_number_grad": Known(
        "a hook scaling the gradient of a 0-d tensor (g * 0.5) in a second-order backward"
        " (seed 405511): PyTorch's gradient there can be a wrapped number, which the"
        " hook's arithmetic promotes to float64, and the engine refuses the dtype change"
        " (RuntimeError); numbagrad has no wrapped numbers: the hook's result stays float32",
        """
        x = torch.tensor(np.random.default_rng(581).uniform(-2, 2, (5, 5, 5)).astype(np.float32), requires_grad=True)
        v = x.max()
        v.register_hook(lambda g: g if g is None else g * 0.5)
        c = torch.tensor(np.array(-1.75, dtype=np.float32), requires_grad=True)
        g, = torch.autograd.grad((F.l1_loss(v, c, reduction='sum') * -0.308).sum(), c, create_graph=True)
        gg = torch.autograd.grad((g * 0.394).sum(), [x, c], allow_unused=True)
        """),
    "var_mean_nonfinite_mean": Known(
        "the mean output of var_mean / std_mean over elements with an infinity before the last:"
        " PyTorch's Welford update (mean += (x - mean) / n) turns it into NaN; numbagrad's mean"
        " is the infinity (as torch.mean's)",
        """
        x = torch.tensor([1.0, np.inf, 2.0])
        r = torch.var_mean(x)
        """),
    "threshold_expanded_grad": Known(
        "threshold_ (allowed on an expanded view, as PyTorch's kernel skips the overlap check)"
        " of an empty expanded view of a tensor that requires grad: under create_graph the"
        " base's gradient is CopySlices; numbagrad's AddBackward0",
        """
        x = torch.zeros(0, requires_grad=True)
        v = x - 1.0
        F.threshold(v.expand(2, 0), 0.5, 1.5, inplace=True)
        g, = torch.autograd.grad((v * torch.zeros(0)).sum(), x, create_graph=True)
        """),
    "copy_slices_create_graph_name": Known(
        "an in-place op through a view of a tensor (v[0].mul_(2), v[0] = 5.0, v[None, [1], 0] ="
        " c), then a gradient under create_graph that reaches the base's old value through a"
        " node that passes it on (clone, add): PyTorch's CopySlices runs the op's backward"
        " itself and copies its result into the region of the base's gradient (CopySlices);"
        " numbagrad's op node is a node of its own, whose gradient reaches the base through an"
        " AsStridedBackward0, and the engine adds the two (AddBackward0). Values agree"
        " (seeds 110361, 110898)",
        """
        x = torch.tensor([[0.5, 1.0], [2.0, -1.0]], requires_grad=True)
        v = x.clone()
        v[0].mul_(2)
        g, = torch.autograd.grad((v * v).sum(), x, create_graph=True)
        """),
    "prod_zero_inf_second_order": Known(
        "the second derivative of prod(dim) over a slice holding a zero, with an infinite"
        " incoming gradient: PyTorch's prod_safe_zeros_backward (cumprods of the elements"
        " before and after each) gives -inf where numbagrad's products of the other elements"
        " give NaN (inf * 0; seed 154520)",
        """
        x = torch.tensor([[0.75, -2.25, 0.0, 2.25]], requires_grad=True)
        loss = (x.prod(dim=1, keepdim=True) * -np.inf).sum()
        g, = torch.autograd.grad(loss, x, create_graph=True)
        gg = torch.autograd.grad((g * torch.tensor([[2.75, -0.75, 2.0, 1.75]])).sum(), x)  # compare: gg
        """),
    "double_backward_node_names": Known(
        "the gradient of glu, rrelu, soft_margin_loss, aminmax, batch_norm, layer_norm or"
        " embedding made with create_graph=True: PyTorch's double-backward node"
        " (GluBackwardBackward0, NativeBatchNormBackwardBackward0,"
        " EmbeddingDenseBackwardBackward0, ...); numbagrad's comes from"
        " the ops its rule is composed of (CatBackward0, AliasBackward0, MulBackward0); with an"
        " infinite incoming gradient the second derivative can differ too (smooth_l1_loss,"
        " huber_loss and binary_cross_entropy_with_logits left the class when their backward"
        " became PyTorch's kernels and formula)",
        """
        x = torch.tensor([[1.0, -2.0, 0.5, 3.0]], requires_grad=True)
        l = torch.nn.functional.glu(x).sum()
        g, = torch.autograd.grad(l, x, create_graph=True)
        """),
}

# Classes found earlier (or reported on the tracker) and fixed since; kept so that their
# repros keep being checked by --known and ``avoid`` accepts their keys.
FIXED: dict[str, Known] = {
    "inplace_on_data_of_strided_view": Known(
        "an in-place op with a value that requires grad on an element of"
        " x.diagonal().data (a tensor laid out with gaps that is no autograd view):"
        " PyTorch regenerates its node (AsStridedBackward0) inside the shared memory;"
        " numbagrad's as_strided bounded the offsets by the tensor's element count"
        " (setStorage RuntimeError)",
        """
        x = torch.tensor([[1.79, 1.728, 0.89], [1.746, 1.322, 0.205], [0.564, 0.178, 0.537], [2.636, 1.988, 0.69]])
        v = x.diagonal(offset=2, dim1=1, dim2=0).data
        c = torch.tensor(-2.5, requires_grad=True)
        v[1].sub_(c)
        g, = torch.autograd.grad((v * torch.tensor([1.0, 2.0])).sum(), c)
        """),
    "empty_planes_refused": Known(
        "a convolution of an input with a batch and channels but no elements (an empty"
        " spatial dim, made valid by padding), or replicate padding of an input whose"
        " non-batch dims hold a 0: PyTorch's RuntimeError (Only zero batch or zero channel"
        " inputs are supported; Expected 2D or 3D (batch mode) tensor with possibly 0"
        " batch size and other non-zero dimensions); numbagrad computed",
        """
        a = F.conv2d(torch.zeros(1, 1, 0, requires_grad=True) * 2, torch.ones(2, 1, 2, 2), torch.ones(2), padding=1)
        b = F.conv1d(torch.zeros(2, 1, 0), torch.ones(2, 1, 1), padding=1)
        c = F.conv_transpose1d(torch.zeros(2, 1, 0), torch.ones(1, 2, 1))
        d = F.pad(torch.zeros(1, 0), (0, 0), mode='replicate')
        e = F.pad(torch.zeros(2, 0, 3), (1, 1), mode='replicate')
        f = F.pad(torch.zeros(0, 2, 3), (1, 1), mode='replicate')
        """),
    "index_add_source_gradient_node": Known(
        "the recorded gradient (create_graph) of index_add's source: PyTorch's"
        " maybe_multiply(grad.index_select(dim, index).expand_as(source), alpha) ends in"
        " ExpandBackward0, or MulBackward1 with an alpha; numbagrad's in a reshape"
        " (ViewBackward0) or MulBackward0",
        """
        x = torch.zeros(3, 2, requires_grad=True)
        s = torch.ones(2, 2, requires_grad=True)
        v = (x * 1).index_add(0, torch.tensor([1, 0]), s, alpha=2)
        g = torch.autograd.grad((v * v).sum(), [x, s], create_graph=True)
        w = (x * 1).index_add(0, torch.tensor([1, 0]), s)
        h = torch.autograd.grad((w * w).sum(), [s], create_graph=True)
        """),
    "nan_to_num_gradient_formula": Known(
        "the gradient of nan_to_num: PyTorch's grad * isfinite(x) (MulBackward0 when"
        " recorded; NaN where an infinite or NaN incoming gradient meets a non-finite x);"
        " numbagrad's where(isfinite(x), grad, 0) (WhereBackward0, and 0 there)",
        """
        x = torch.tensor([[1.0, np.nan, np.inf], [-np.inf, 2.0, 0.5]], requires_grad=True)
        v = torch.expm1(torch.nan_to_num(x, neginf=-3.0))
        g, = torch.autograd.grad((v * torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])).sum(), x, create_graph=True)
        y = torch.tensor([[1.0, np.nan, np.inf], [-np.inf, 2.0, 0.5]], requires_grad=True)
        torch.nan_to_num(y).backward(torch.tensor([[np.inf, np.inf, np.nan], [np.inf, 1.0, 2.0]]))
        """),
    "addcdiv_saves_tensor2": Known(
        "addcdiv saves tensor2 whichever input needs a gradient (AddcdivBackward0), so an"
        " in-place change of it before backward is the version error even when only the"
        " input requires grad; numbagrad saved it only for tensor1's formula",
        """
        x = torch.tensor([2.942, 1.416], requires_grad=True)
        c = torch.tensor(3.0)
        v = (x * 1).addcdiv(torch.tensor(2.0), c, value=2)
        c[...] = -2.5
        v.sum().backward()
        """),
    "scalar_lerp_and_masked_fill_gradient_nodes": Known(
        "the recorded gradients (create_graph) of lerp with a number weight and of"
        " masked_fill: PyTorch's formulas are grad * (1 - weight) and grad * weight with a"
        " Scalar (MulBackward1) and grad.masked_fill(mask, 0) (MaskedFillBackward0, whose"
        " node saves the mask); numbagrad's were MulBackward0 and WhereBackward0, the mask"
        " unchecked",
        """
        x = torch.tensor([[-1.0, 0.5, 3.0], [-0.25, 0.25, 0.0]], requires_grad=True)
        e = torch.tensor([-0.823, 1.198, 2.568], requires_grad=True)
        g = torch.autograd.grad((torch.lerp(x, e, 2.0) ** 2).sum(), [x, e], create_graph=True)
        y = torch.tensor([-3.0, 2.5, -2.0, 1.25], dtype=torch.float64, requires_grad=True)
        h, = torch.autograd.grad(y.masked_fill(torch.tensor(False), 0).atan().sum(), y, create_graph=True)
        z = torch.tensor([[-3.0, 2.5], [-2.0, 1.25]], requires_grad=True)
        m = torch.tensor([True, False])
        v = z.masked_fill(m, 0.5)
        m.logical_not_()
        v.sum().backward()
        """),
    "lerp_weight_dtype": Known(
        "lerp with a weight tensor (not 0-d) of another dtype than the input:"
        " RuntimeError (expected dtype float for `weight` but got dtype double); numbagrad"
        " promoted",
        """
        a = torch.lerp(torch.tensor([1, 2]), torch.tensor([3, 4]), torch.tensor([0.5, 0.5]))
        b = torch.lerp(torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0]), torch.tensor([0.5, 0.5], dtype=torch.float64))
        c = torch.lerp(torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0]), torch.tensor(0.5, dtype=torch.float64))
        """),
    "ldexp_saves_other_and_result": Known(
        "ldexp saves its exponent and result whichever input needs a gradient"
        " (LdexpBackward0), so an in-place change of either before backward is the version"
        " error; numbagrad saved only what the needed formula read",
        """
        x = torch.tensor([-1.276, -1.205], requires_grad=True)
        v = x.ldexp(torch.tensor([1.0, 1.0]))
        F.elu_(v[...], alpha=1.0)
        (v * torch.tensor([-1.25, -1.25])).sum().backward()
        """),
    "cumprod_dim_of_one_backward": Known(
        "the gradient of cumprod along a dim of size 1: PyTorch's cumprod_backward passes"
        " the incoming gradient on as it is; numbagrad's formula divided by the input (NaN"
        " at an infinity or a zero)",
        """
        x = torch.tensor([[np.inf], [np.inf], [0.776], [-np.inf]], requires_grad=True)
        v = torch.cumprod(F.selu(x), dim=-1, dtype=torch.float32)
        (v * torch.tensor([[1.25], [-2.75], [2.25], [-3.0]])).sum().backward()
        """),
    "median_of_nothing_create_graph": Known(
        "the recorded backward (create_graph) of the median of an empty tensor: PyTorch"
        " runs; numbagrad's forward had saved nothing (KeyError)",
        """
        x = torch.zeros(0, requires_grad=True)
        v = torch.median(F.silu(x * 2) / torch.zeros(0, dtype=torch.float64, requires_grad=True))
        (v * 2.304).sum().backward(create_graph=True)
        """),
    "atan2_gradient_at_origin": Known(
        "the gradient of atan2 where both operands are 0 (or their squares underflow):"
        " PyTorch's atan2_backward takes the reciprocal of x^2 + y^2 as 0 there (a zero"
        " gradient, NaN for an infinite incoming one); numbagrad's 0 / 0 was NaN",
        """
        x = torch.tensor([0.0, 1e-30, -0.0, 3.0], requires_grad=True)
        y = torch.tensor([0.0, 1e-30, 0.0, 4.0], requires_grad=True)
        torch.atan2(x, y).backward(torch.tensor([2.0, 2.0, 2.0, np.inf]))
        z = torch.tensor([0.0, 2.0, -np.inf], requires_grad=True)
        torch.atan2(z, z).sum().backward()
        """),
    "rot90_layout": Known(
        "rot90 by an odd number of turns: PyTorch flips, then transposes in place, so the"
        " result keeps the transposed layout (and a later op's, as rms_norm's final"
        " contiguous copy, CloneBackward0, follows it); numbagrad's result was contiguous",
        """
        x = torch.tensor([[0.5, -0.75, -1.25], [1.0, 0.5, 0.25], [3.0, -1.75, 2.75], [0.0, 0.5, -2.0], [1.5, 0.5, -2.25]], requires_grad=True)
        r = torch.rot90(x, 3)
        v = F.rms_norm(r.pow(-2), (5,), torch.tensor([-1.25, 1.0, -1.75, 2.0, 2.5]))
        w = r.view(-1)
        u = torch.rot90(x.t(), 1).view(-1)
        """),
    "conv_same_asymmetric_padding": Known(
        "conv1d/2d/3d with padding='same' over an even kernel span: PyTorch pads the"
        " input's end by the odd element first (constant_pad_nd), so the input's recorded"
        " gradient ends in ConstantPadNdBackward0; numbagrad convolved with asymmetric"
        " padding (ConvolutionBackwardBackward0)",
        """
        x = torch.tensor([[[-2.0, -2.0]], [[1.25, -1.25]], [[-1.75, -0.5]]], requires_grad=True)
        w = torch.tensor([[[-0.5, 0.25]], [[1.5, 0.75]]], requires_grad=True)
        y = F.conv1d(x, w, padding='same')
        g = torch.autograd.grad((y * torch.tensor([[[1.5, -2.75], [2.0, 0.75]], [[-1.75, -0.5], [-1.5, -2.25]], [[-1.25, -1.5], [1.0, -2.5]]])).sum(), [x, w], create_graph=True)
        z = torch.arange(24.0).reshape(2, 3, 4).requires_grad_()
        u = F.conv2d(z, torch.ones(1, 2, 2, 2, requires_grad=True), padding='same')
        h, = torch.autograd.grad(u.sum(), z, create_graph=True)
        """),
    "bool_rounding_refused": Known(
        "floor_ / ceil_ / trunc_ / fix_ / round_ of a bool tensor and"
        " div(rounding_mode='floor') of bools: NotImplementedError (floor_vml_cpu,"
        " div_floor_cpu: no bool kernel, even for an empty tensor); numbagrad's in-place"
        " call wrote through the op's loop, and its floor division computed",
        """
        a = torch.tensor([True, False]).floor_()
        b = torch.tensor(True).clone().ceil_()
        c = torch.zeros(0, dtype=torch.bool).trunc_()
        d = torch.tensor([True, False]).div(torch.tensor([True, True]), rounding_mode='floor')
        e = torch.zeros(0, dtype=torch.bool).div(torch.zeros(0, dtype=torch.bool), rounding_mode='floor')
        f = torch.tensor([True, False]).div(torch.tensor([True, True]), rounding_mode='trunc')
        """),
    "kthvalue_empty_dim_before_bool": Known(
        "kthvalue of a bool tensor along an empty dim: PyTorch's IndexError (Expected"
        " reduction dim to have non-zero size) before the missing bool kernel; numbagrad's"
        " NotImplementedError",
        """
        x = torch.tensor([0.75, -1.25, -1.25], requires_grad=True)
        v = torch.ne(x[3:], 0.5)
        a = v.kthvalue(1, -1, keepdim=True)
        """),
    "div_rounding_saves_operands": Known(
        "div(x, y, rounding_mode='floor' or 'trunc'): PyTorch's formula for x reads y and"
        " y's reads x, so each is saved when the other needs a gradient (an in-place"
        " change before backward is the version error), although the gradients are zeros;"
        " numbagrad saved nothing",
        """
        x = torch.tensor([1.5, 2.5])
        y = torch.tensor([0.5, 2.0], requires_grad=True)
        v = torch.div(x, y, rounding_mode='floor')
        x.mul_(2)
        v.sum().backward()
        """),
    "masked_scatter_backward_node": Known(
        "the recorded gradient (create_graph) of masked_scatter's source: PyTorch's"
        " masked_scatter_backward op (MaskedScatterBackwardBackward0, whose backward is"
        " masked_scatter again, saving the mask); numbagrad composed it (ViewBackward0)",
        """
        x = torch.tensor([[1.32, 2.007]], requires_grad=True)
        v = torch.mv(x, torch.tensor([1.75, 1.75], requires_grad=True))
        s = torch.tensor([-1.113], requires_grad=True)
        w = torch.broadcast_to(v.masked_scatter(torch.tensor(False), s), (2,))
        g, = torch.autograd.grad((F.softshrink(w) * torch.tensor([0.5, 1.0])).sum(), s, create_graph=True)
        """),
    "bool_reduce_into": Known(
        "scatter_reduce(..., 'mean') of a bool tensor: NotImplementedError (no bool"
        " kernel for the mean; with an empty index, div_floor's); index_reduce of a bool"
        " tensor: NotImplementedError (index_func_); numbagrad computed",
        """
        a = torch.tensor([True, False, True]).scatter_reduce(0, torch.tensor([0, 2, 0]), torch.tensor([False, True, True]), 'mean')
        b = torch.tensor([True]).scatter_reduce(0, torch.tensor([], dtype=torch.int64), torch.tensor([], dtype=torch.bool), 'mean', include_self=False)
        c = torch.tensor([True, False, True]).index_reduce(0, torch.tensor([0, 2, 0]), torch.tensor([False, True, True]), 'amax')
        d = torch.tensor([True, False, True]).scatter_reduce(0, torch.tensor([0, 2, 0]), torch.tensor([False, True, True]), 'amax')
        """),
    "constant_pad_crops_by_narrow": Known(
        "F.pad (constant) whose negative padding crops more than a dim holds, on either"
        " side: PyTorch's narrow() error (length must be non-negative), even where the"
        " other side's positive padding would make the size non-negative; numbagrad padded",
        """
        a = F.pad(torch.zeros(2, 4, 4, 0), (2, -1))
        b = F.pad(torch.zeros(2, 3), (-4, 2))
        c = F.pad(torch.zeros(2, 3), (-1, -1, 1, -3))
        d = F.pad(torch.zeros(2, 3), (2, -4))
        """),
    "norm_layers_save_weight": Known(
        "batch_norm / layer_norm / group_norm save their weight (and layer_norm its"
        " bias), so a frozen weight changed in place before backward is the version error;"
        " numbagrad read it as it was then",
        """
        x = torch.tensor([[0.065], [-0.826], [-1.122], [-1.217], [0.418]], requires_grad=True)
        w = torch.tensor([1.039])
        y = F.batch_norm(x * 1, torch.zeros(1), torch.ones(1), w, torch.tensor([1.0], requires_grad=True), training=True, momentum=0.1)
        w.relu_()
        y.sum().backward()
        """),
    "scalar_factor_gradient_node": Known(
        "the recorded gradient (create_graph) of exp2, of ldexp by its exponent and of"
        " the compositions that multiply or divide by a Python number as PyTorch's C++"
        " does (special.ndtr, mean): PyTorch's formula ends in mul.Scalar / div.Scalar"
        " (MulBackward1, DivBackward1); numbagrad multiplied by a 0-d tensor"
        " (MulBackward0)",
        """
        x = torch.tensor([0.3, 0.6, 0.45], requires_grad=True)
        a, = torch.autograd.grad((torch.exp2(x) * torch.tensor([1.0, 2.0, -1.5])).sum(), x, create_graph=True)
        b, = torch.autograd.grad(torch.special.ndtr(x).sum(), x, create_graph=True)
        e = torch.tensor([1.0, 2.0, -1.0], requires_grad=True)
        c = torch.autograd.grad(torch.ldexp(x, e).sum(), [x, e], create_graph=True)
        """),
    "masked_select_backward_node": Known(
        "the recorded gradient (create_graph) of masked_select: PyTorch's"
        " masked_select_backward scatters the gradient into zeros of the broadcast shape"
        " (MaskedScatterBackward0, a 0-d input's too), and the node saves the mask (an"
        " in-place change before backward is the version error); numbagrad put it by index"
        " (IndexBackwardBackward0) and kept no mask",
        """
        c = torch.tensor([-1.25, -1.0, -0.25, -0.5], requires_grad=True)
        v = c.masked_select(torch.tensor([True, False, True, False]))
        w = F.hardswish(F.binary_cross_entropy_with_logits(v, torch.tensor([1.0, 0.0])))
        g, = torch.autograd.grad((w * 1.772).sum(), c, create_graph=True)
        x = torch.tensor(2.5, requires_grad=True)
        h, = torch.autograd.grad((x.masked_select(torch.tensor(True)) ** 2).sum(), x, create_graph=True)
        y = torch.tensor([2.5, 1.0], requires_grad=True)
        m = torch.tensor([True, False])
        u = (y * 2).masked_select(m)
        m.logical_not_()
        u.sum().backward()
        """),
    "scan_inplace_0d_bool": Known(
        "cumsum_ / cumprod_ of a 0-d or empty bool tensor: PyTorch copies it (no kernel runs),"
        " a bool tensor with elements: NotImplementedError (as cumsum / cumprod with"
        " dtype=torch.bool); numbagrad refused to write the int64 result into bool"
        " (RuntimeError) or computed, and cumprod of bools with dtype= gave int64",
        """
        y = torch.tensor(False).clone()
        y.cumsum_(0)
        z = torch.zeros(2, 0, dtype=torch.bool).cumprod_(0)
        a = torch.tensor([True, False]).cumsum(0, dtype=torch.bool)
        b = torch.tensor([True, True]).cumprod(0, dtype=torch.uint8)
        c = torch.zeros(0, dtype=torch.bool).cumprod(0, dtype=torch.bool)
        """),
    "flip_of_size_one_dims_copies": Known(
        "flip / flipud / fliplr whose flipped dims have size 1 (or none): a new tensor in"
        " PyTorch; numbagrad's result shared the input's memory (NumPy's flip view looked"
        " contiguous), so a later write to the input showed through",
        """
        c = torch.tensor([-5])
        f = torch.flipud(c)
        g = torch.flip(torch.tensor([[1.0]]), (0, 1))
        h = torch.flip(c, ())
        c[torch.tensor([True])] = torch.tensor(-3)
        """),
    "diff_of_order_zero": Known(
        "torch.diff(x, n=0): PyTorch's zeros_like(x).copy_(x) (CopyBackwards; prepend and"
        " append unused); numbagrad returned x itself (or joined prepend / append)",
        """
        x = torch.tensor([[1.0, 2.0], [4.0, 0.5]], requires_grad=True)
        a = torch.diff(x, n=0)
        b = torch.diff(x.t(), n=0, dim=0)
        c = torch.diff(x, n=0, prepend=x)
        y = torch.tensor([1.0, 2.0])
        d = torch.diff(y, n=0)
        y.add_(1)
        """),
    "cross_entropy_no_classes": Known(
        "cross_entropy with label_smoothing over an input of 0 classes: PyTorch's"
        " smoothing share is eps / 0 = inf (a NaN or empty loss); numbagrad raised"
        " ZeroDivisionError. Also nll_loss of a 3-d input of 0 classes with a non-empty"
        " target: the 2-d loss's size mismatch RuntimeError; numbagrad's IndexError or a"
        " loss",
        """
        x = torch.zeros(1, 0, 2, 0, requires_grad=True)
        a = F.cross_entropy(x, torch.zeros((1, 2, 0), dtype=torch.int64), label_smoothing=0.1)
        b = F.cross_entropy(x, torch.zeros((1, 2, 0), dtype=torch.int64), label_smoothing=0.1, reduction='sum')
        c = F.cross_entropy(torch.zeros(2, 0), torch.zeros((2, 0)), label_smoothing=0.1)
        d = F.nll_loss(torch.zeros(1, 0, 2), torch.zeros((1, 2), dtype=torch.int64), ignore_index=0)
        e = F.cross_entropy(torch.zeros(1, 0, 2), torch.zeros((1, 2), dtype=torch.int64))
        """),
    "std_mean_saves_std": Known(
        "std_mean saves its std output (StdMeanBackward0's result0), which its backward"
        " unpacks even for the mean's gradient alone: changed in place first (t_, mul_),"
        " the version error; numbagrad ran",
        """
        x = torch.tensor([[1.0, 2.0, 4.0], [0.5, -1.0, 3.0]], requires_grad=True)
        v = torch.std_mean(x, 0, unbiased=False)
        v[0].t_()
        v[1].sum().backward()
        """),
    "index_put_empty_dim_before_dtype": Known(
        "index_put_ / x[idx] = v of another dtype with a non-empty index into a dim of"
        " size 0: PyTorch's IndexError (index is out of bounds for dimension with size 0)"
        " comes before the dtype check; numbagrad raised the dtype RuntimeError",
        """
        a = torch.zeros(0, 2, 5, dtype=torch.int64).index_put_((torch.tensor([-2, -1, 3]),), torch.ones(3, 2, 5, dtype=torch.bool), accumulate=True)
        b = torch.zeros(2, 0, 5).index_put_((torch.tensor([1]), torch.tensor([0])), torch.ones((), dtype=torch.float64), accumulate=True)
        x = torch.zeros(0, 2, 5, dtype=torch.int64)
        x[torch.tensor([-2, -1, 3])] = torch.ones(3, 2, 5, dtype=torch.bool)
        """),
    "masked_scatter_saves_mask": Known(
        "masked_scatter saves its mask (MaskedScatterBackward0), so a mask changed in"
        " place before backward is the version error; numbagrad kept the mask unchecked",
        """
        x = torch.tensor([[2.25, -1.5, -2.75], [-0.5, 1.0, -1.75]], requires_grad=True)
        m = torch.tensor([[True, False, True], [False, False, True]])
        v = x.masked_scatter(m, torch.tensor([1.0, 2.0, 3.0, 4.0]))
        m.logical_not_()
        v.sum().backward()
        """),
    "cumsum_backward_casts_first": Known(
        "the recorded backward of cumsum / nansum with a wider dtype=: PyTorch casts the"
        " gradient to the input's dtype first, then flips and sums (FlipBackward0; nansum:"
        " MulBackward0), and passes a gradient of one element (or one along dim) on as it"
        " is; numbagrad cast last (ToCopyBackward0) and always flipped",
        """
        x = torch.tensor([2.0, -0.25], requires_grad=True)
        v = torch.cumsum(x, dim=-1, dtype=torch.float64).sin()
        g, = torch.autograd.grad((v * torch.tensor([1.0, 2.0], dtype=torch.float64)).sum(), x, create_graph=True)
        y = torch.tensor([[2.0, -0.25]], requires_grad=True)
        w = torch.cumsum(y, dim=0).sin()
        h, = torch.autograd.grad((w * 2).sum(), y, create_graph=True)
        z = torch.tensor([[2.0, -0.25], [1.0, 3.0]], requires_grad=True)
        u = torch.nansum(z, 0, dtype=torch.float64).sin()
        k, = torch.autograd.grad((u * 2).sum(), z, create_graph=True)
        """),
    "lerp_infinite_weight": Known(
        "lerp with an infinite (or other |weight| >= 0.5 negative) weight: PyTorch's"
        " formula takes end - (end - start) * (1 - weight) unless |weight| < 0.5 (NaN for"
        " -inf towards -inf); numbagrad's chose by weight < 0.5 (inf)",
        """
        a = torch.tensor([1.75, -2.0]).lerp(torch.tensor([-np.inf, 1.0]), torch.tensor([-np.inf, -2.14]))
        b = torch.lerp(torch.tensor([1.0, np.inf, -3.0]), torch.tensor([np.inf, -np.inf, 2.0]), float('-inf'))
        c = torch.lerp(torch.tensor([1.0, 2.0]), torch.tensor([np.inf, 5.0]), -1.0)
        """),
    "group_norm_check_order": Known(
        "F.group_norm checks the batch of the groups it makes (nn.functional's"
        " _verify_batch_size: ValueError for one value per group) before the channels'"
        " divisibility, and a num_groups <= 0 before the divisibility too; numbagrad"
        " checked divisibility first",
        """
        a = F.group_norm(torch.tensor([[1.0, 0.75], [-2.25, -0.75]]), 3)
        b = F.group_norm(torch.ones(1, 2, 1), 2)
        c = F.group_norm(torch.ones(2, 4), -3)
        """),
    "integer_division_by_zero_empty": Known(
        "an integer division / remainder by zero whose result has no elements: PyTorch"
        " divides nothing (an empty result); where the operands do not broadcast, the"
        " shape error; numbagrad raised ZeroDivisionError",
        """
        a = torch.div(torch.zeros((1, 0, 1), dtype=torch.int64), torch.tensor(0), rounding_mode='trunc')
        b = torch.zeros((0,), dtype=torch.int64) % 0
        c = 5 // torch.zeros(0, dtype=torch.int64)
        d = torch.tensor([1, 2]) // torch.zeros(3, dtype=torch.int64)
        """),
    "layer_norm_bias_double_backward": Known(
        "layer_norm's recorded backward (create_graph) when only the bias requires grad:"
        " PyTorch's native_layer_norm_backward takes the bias, so the bias's gradient"
        " requires grad; numbagrad's did not",
        """
        x = torch.tensor([[1.0, 2.0, 4.0], [0.5, -1.0, 3.0]])
        w = torch.tensor([1.5, 0.5, 2.0])
        b = torch.tensor([0.1, 0.2, 0.3], requires_grad=True)
        y = F.layer_norm(x, (3,), w, b)
        (y * torch.tensor([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]])).sum().backward(create_graph=True)
        """),
    "ldexp_bool_exponent": Known(
        "ldexp of a floating tensor by a bool exponent: NotImplementedError"
        " (ldexp_cpu_exp not implemented for Bool); numbagrad computed",
        """
        a = torch.ldexp(torch.tensor([1.5]), torch.tensor([True, False]))
        b = torch.tensor([1.5]).ldexp_(torch.tensor([True]))
        c = torch.ldexp(torch.tensor([1, 0]), torch.tensor([True, False]))
        """),
    "adaptive_avg_pool_empty_backward": Known(
        "the backward of adaptive_avg_pool / adaptive_max_pool whose output has an empty dim"
        " past the first (0 channels, or an output size of 0): RuntimeError (Expected"
        " grad_output to have non-zero size for non-batch dimensions); numbagrad's gradient was"
        " empty",
        """
        x = torch.zeros(2, 0, 3, 3, requires_grad=True)
        F.adaptive_avg_pool2d(x, 2).sum().backward()
        y = torch.tensor([[[1.488], [-1.373], [-2.538], [0.301]]], requires_grad=True)
        F.interpolate(y, scale_factor=0.5, mode='area').sum().backward()
        z = torch.zeros(2, 2, 3, requires_grad=True)
        F.adaptive_max_pool1d(z, 0).sum().backward()
        """),
    "diag_and_copy_ops_copy": Known(
        "torch.diag of a 2-d tensor (its diagonal), diagonal_copy and narrow_copy: new"
        " tensors in PyTorch; numbagrad returned views, so an in-place write to the result"
        " changed the input",
        """
        c = torch.tensor([[-0.704, 2.967, -2.043, 0.23]], requires_grad=True)
        d = torch.diag(c)
        d.scatter_add_(-1, torch.tensor([0, 0, 0]), torch.tensor([-1.446, 2.105, -0.119]))
        x = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
        e = torch.diagonal_copy(x)
        e.add_(1)
        f = x.narrow_copy(1, 0, 1)
        f.mul_(2)
        """),
    "xlogy_of_two_numbers": Known(
        "torch.xlogy of two Python numbers: TypeError (no overload takes two numbers);"
        " numbagrad computed",
        """
        a = torch.xlogy(0, 2)
        b = torch.xlogy(2.0, torch.tensor([1.5]))
        """),
    "lerp_end_dtype": Known(
        "lerp whose end is of another dtype than the input: RuntimeError (expected dtype"
        " bool for `end` but got dtype double); numbagrad promoted",
        """
        x = torch.zeros(0, dtype=torch.bool)
        e = torch.float_power(x, torch.tensor(1.765, requires_grad=True))
        a = x.lerp(e, torch.tensor(False))
        b = torch.tensor([1.0]).lerp(torch.tensor([2.0], dtype=torch.float64), 0.5)
        """),
    "masked_fill_integer_with_grad_value": Known(
        "in-place masked_fill_ of an integral tensor with a 0-d value that requires grad:"
        " PyTorch fills (only the out-of-place form records, and refuses the dtype);"
        " numbagrad raised Autograd not support dtype: Long",
        """
        v = torch.tensor([False, True, False]) * 1
        v.masked_fill_(torch.tensor(False), torch.tensor(0.5, requires_grad=True))
        w = torch.tensor([1, 2, 3])
        w.masked_fill_(torch.tensor([True, False, True]), torch.tensor(2.5, requires_grad=True))
        """),
    "circular_pad_negative_empty": Known(
        "F.pad(mode='circular') whose negative padding empties a dim: RuntimeError"
        " (Negative padding value is resulting in an empty dimension); numbagrad ran",
        """
        x = torch.ones(5, 1, 3, requires_grad=True)
        a = F.pad(x, (0, 2, -1, -1), mode='circular')
        b = F.pad(torch.ones(1, 2, 3), (-2, -1), mode='circular')
        """),
    "nll_loss_empty_higher_dims": Known(
        "F.nll_loss of an empty 3-d / 4-d input with an empty target: PyTorch returns the"
        " reduced loss; numbagrad's reshape of the empty input (a -1 dim) raised",
        """
        x = torch.zeros(0, 2, 4, requires_grad=True)
        a = F.nll_loss(F.log_softmax(x, 1), torch.zeros((0, 4), dtype=torch.int64), reduction='sum')
        b = F.nll_loss(x, torch.zeros((0, 4), dtype=torch.int64))
        c = F.nll_loss(torch.zeros(0, 3, 1, 2), torch.zeros((0, 1, 2), dtype=torch.int64), reduction='none')
        """),
    "fmod_second_order_infinite": Known(
        "the second-order gradient of x.fmod(x) at an infinity: PyTorch's other-formula"
        " -grad * trunc(x / y) is 0 there under create_graph; numbagrad's NaN",
        """
        x = torch.tensor([-np.inf, 2.0], requires_grad=True)
        v = x.clone().fmod_(x)
        g, = torch.autograd.grad((v * torch.tensor([-2.75, 1.0])).sum(), x, create_graph=True)
        gg = torch.autograd.grad((g * 1.5).sum(), [x], allow_unused=True)
        """),
    "sgn_saves_result": Known(
        "x.sgn() saves its input and result (as PyTorch's SgnBackward0), so writing the"
        " result afterwards fails the backward; numbagrad saved nothing and ran",
        """
        x = torch.tensor([[0.591, -0.948], [2.266, 0.0]], requires_grad=True)
        v = x.sgn()
        v[...,] = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
        v.sum().backward()
        """),
    "adaptive_avg_pool_empty_to_one": Known(
        "adaptive_avg_pool of an input with an empty pooled dim to an output size of 1:"
        " PyTorch takes the mean (NaN); numbagrad raised the non-zero size RuntimeError",
        """
        a = F.adaptive_avg_pool1d(torch.zeros(5, 0) + True, 1)
        b = F.adaptive_avg_pool2d(torch.zeros(2, 3, 0, 2), 1)
        c = F.adaptive_avg_pool2d(torch.zeros(3, 0, 2), (1, 1))
        """),
    "kthvalue_0d_bool": Known(
        "kthvalue of a 0-d bool tensor: the tensor itself (no kernel is called);"
        " numbagrad raised NotImplementedError for bool",
        """
        x = torch.tensor(-1.518, requires_grad=True)
        v = torch.isfinite(x) != torch.tensor(2.375)
        a = v.kthvalue(1, 0, keepdim=True)
        b = torch.tensor(True).kthvalue(1)
        """),
    "setitem_empty_region_index_out_of_range": Known(
        "x[...] = v whose region is empty, with an out-of-range index tensor and a value"
        " that does not fit: PyTorch's shape mismatch RuntimeError; numbagrad's IndexError"
        " (NumPy's)",
        """
        x = torch.zeros(2, 2, 3, 2)
        v = torch.tensor([[-0.662, -2.801]], requires_grad=True) * 2
        x[2:2:3, ..., -1:2:1, torch.tensor([2, 0, 1]), None] = v
        y = torch.zeros(2, 3)
        y[2:2, torch.tensor([5])] = torch.ones(2)
        """),
    "max_pool1d_fresh_output": Known(
        "F.max_pool1d of an input that needs no gradient: PyTorch's own kernel writes a"
        " new tensor; numbagrad returned a squeezed view of the 2-d pooling (so writing it"
        " gave AsStridedBackward0, not CopySlices)",
        """
        v = F.max_pool1d(torch.tensor([[[np.nan, np.nan]], [[-0.996, -0.888]]]), 2)
        w = torch.tensor([[-1.0]], requires_grad=True) * 2
        v[torch.tensor(-1), None, :, -1] = w
        u = F.max_pool1d(torch.tensor([[[1.0, 2.0, 3.0]]], requires_grad=True), 2)
        u.mul_(2)
        """),
    "index_select_refusals": Known(
        "index_select out of range or along an empty dim: PyTorch's CPU kernels raise"
        " RuntimeError (INDICES element is out of DATA bounds; self indexing axis dim"
        " should be positive) along a dim that is neither the first nor the last of 3 or"
        " more dims (the last of 2 included), IndexError otherwise; numbagrad always"
        " IndexError. Also take_along_dim without a dim is PyTorch's view(-1) of the input"
        " (refused for a transposed one); numbagrad reshaped",
        """
        a = torch.zeros(3, 2).index_select(1, torch.tensor([2]))
        b = torch.zeros(2, 3, 2).index_select(1, torch.tensor([3]))
        c = torch.zeros(2, 3, 2).index_select(2, torch.tensor([2]))
        d = torch.zeros(0, 3).index_select(0, torch.tensor([0]))
        e = torch.zeros(0).index_select(0, torch.tensor([0]))
        f = torch.zeros(3, 4).t().take_along_dim(torch.tensor([0, 1]))
        """),
    "fill_of_integers_with_grad_value": Known(
        "masked_fill / index_fill of an integral tensor with a 0-d value that requires"
        " grad: RuntimeError (Autograd not support dtype: Long); numbagrad filled",
        """
        a = torch.tensor([1, 2]).masked_fill(torch.tensor([True, False]), torch.tensor(1.5, requires_grad=True))
        b = torch.tensor([1, 2]).index_fill(0, torch.tensor([0]), torch.tensor(1.5, requires_grad=True))
        c = torch.tensor([1, 2]).masked_fill(torch.tensor([True, False]), torch.tensor(1.5))
        """),
    "addcmul_bool": Known(
        "addcmul of bool tensors: NotImplementedError (no bool kernel); numbagrad"
        " computed",
        """
        a = torch.addcmul(torch.tensor([True]), torch.tensor([True]), torch.tensor([False]))
        b = torch.addcmul(torch.tensor([1]), torch.tensor([True]), torch.tensor([False]))
        c = torch.tensor([True]).addcmul_(torch.tensor([True]), torch.tensor([False]))
        """),
    "batch_norm_low_dims": Known(
        "F.batch_norm of a 0-d input in training: IndexError (nn.functional's batch-size"
        " check reads size[0]); of a 1-d one: the batch size is size[0] (ValueError for"
        " 1), else the kernel's IndexError for dim 1; numbagrad checked other things first"
        " or ran",
        """
        a = F.batch_norm(torch.tensor(2.0), None, None, training=True)
        b = F.batch_norm(torch.ones(1), None, None, training=True, momentum=None)
        c = F.batch_norm(torch.ones(3), None, None, training=True)
        d = F.batch_norm(torch.ones(3), torch.zeros(3), torch.ones(3), training=False)
        """),
    "mode_with_nan": Known(
        "mode of a slice (16 elements or fewer) holding NaN: PyTorch's insertion sort by"
        " value leaves NaN where it is and NaN ends every run ([nan, 0.5] gives NaN; [2,"
        " nan, 2, nan] gives 2 at index 0); numbagrad's stable sort put NaN last",
        """
        x = torch.tensor([[np.nan, 0.5, 1.0], [2.0, np.nan, 2.0], [0.9, np.nan, np.nan]], requires_grad=True)
        m = x.mode(1)
        v = torch.tensor([2.0, np.nan, 2.0, np.nan]).mode(0)
        m.values.sum().backward()  # compare: m, v, x.grad
        """),
    "median_of_empty_bool": Known(
        "median / nanmedian of an empty bool tensor: True (checked before the dtype);"
        " numbagrad raised NotImplementedError",
        """
        a = torch.median(torch.zeros(0, dtype=torch.bool))
        b = torch.zeros(0, dtype=torch.bool).nanmedian()
        """),
    "mean_output_gradient_node": Known(
        "the gradient of std_mean / var_mean's mean output under create_graph: PyTorch's"
        " mean_backward expands the gradient, then divides by the count (DivBackward1);"
        " numbagrad divided first (ExpandBackward0)",
        """
        x = torch.tensor([0.39, 0.195, 2.866, 2.91], dtype=torch.float64, requires_grad=True)
        s, m = torch.std_mean(x, -1, correction=2, keepdim=True)
        g, = torch.autograd.grad((m * -1.25).sum(), x, create_graph=True)
        """),
    "group_norm_nonfinite_weight": Known(
        "group_norm with an infinite weight: PyTorch's kernel applies x * scale + (bias -"
        " mean * scale): inf - inf gives NaN where numbagrad's (x - mean) * scale + bias"
        " gave inf",
        """
        x = torch.tensor([[[[2.658, -0.724], [2.567, 1.728]], [[-1.893, -0.909], [0.817, 1.076]]]], dtype=torch.float64)
        w = torch.tensor([-np.inf, 0.0], dtype=torch.float64)
        y = F.group_norm(x, 1, w)
        """),
    "interpolate_zero_channels": Known(
        "F.interpolate of an input with 0 channels (not area): RuntimeError (Non-empty 4D"
        " data tensor expected); a batch of 0 runs; numbagrad ran",
        """
        a = F.interpolate(torch.zeros(4, 0, 2, 3), size=(3, 4))
        b = F.interpolate(torch.zeros(2, 0, 3), size=4, mode='linear')
        c = F.interpolate(torch.zeros(0, 2, 2, 3), size=(3, 4), mode='bicubic')
        d = F.interpolate(torch.zeros(4, 0, 2, 3), size=(3, 4), mode='area')
        """),
    "cumprod_one_element_backward": Known(
        "cumprod of a tensor of one element (or none), its gradient under create_graph:"
        " PyTorch's cumprod_backward returns the incoming gradient itself (not recorded on"
        " the input); numbagrad's formula required grad",
        """
        x = torch.tensor([[2.0]], requires_grad=True)
        y = x.t().clone().cumprod_(1)
        g, = torch.autograd.grad((y * 2.25).sum() + x.cumprod(0).sum(), x, create_graph=True)
        """),
    "batch_norm_nonfinite_weight": Known(
        "batch_norm / instance_norm with an infinite weight: PyTorch's kernel applies x *"
        " alpha + beta (alpha = rstd * w, beta = b - mean * alpha), so inf - inf gives NaN"
        " where numbagrad's (x - mean) * rstd * w + b gave inf",
        """
        x = torch.tensor(np.random.default_rng(261).uniform(-2, 2, (5, 2, 5, 4)).astype(np.float32))
        w = torch.tensor([np.inf, -2.5])
        b = torch.tensor([-1.25, 1.0], requires_grad=True)
        y = F.instance_norm(x, torch.zeros(2), torch.ones(2), w, b, use_input_stats=True)
        z = F.batch_norm(x, None, None, w, b, training=True)
        """),
    "group_norm_output_not_a_view": Known(
        "F.group_norm's output was marked a view of its input (its ctx's own 'view', a"
        " shape, read as the composite's 'outputs are views' flag): an in-place write into"
        " it raised the view-of-a-leaf error or an as_strided storage error; PyTorch's is"
        " a tensor of its own",
        """
        x = torch.tensor(np.random.default_rng(0).uniform(-2, 2, (5, 4, 3)).astype(np.float32), requires_grad=True)
        y = F.group_norm(x, 1, torch.tensor([0.25, 3.0, -1.75, -1.0]))
        y[None, -2:7] = 1.5
        z = F.group_norm(x * 1, 2)
        with torch.no_grad(): z.mul_(0.5)
        (y.sum() + z.sum()).backward()  # compare: x.grad
        """),
    "norm_params_dtype_refused": Known(
        "batch_norm, layer_norm and group_norm with a weight, bias or running statistic"
        " of another dtype than the input's: RuntimeError (mixed dtype, PyTorch's CPU"
        " kernels); numbagrad computed in the promoted dtype",
        """
        x = torch.ones(3, 5, 4)
        w = torch.ones(5, dtype=torch.float64)
        a = F.group_norm(x, 5, w)
        b = F.layer_norm(x, (4,), torch.ones(4, dtype=torch.float64))
        c = F.batch_norm(x, None, None, w, training=True)
        d = F.batch_norm(x.double(), torch.zeros(5), torch.ones(5), training=False)
        """),
    "norm_grads_one_node": Known(
        "the gradients of batch_norm / layer_norm / instance_norm under create_graph are"
        " outputs of one PyTorch node that takes the input and the weight: each requires"
        " grad when one of those does (the bias's too), a group norm's input's and"
        " weight's; numbagrad's composed ones did not where they do not depend on them",
        """
        x = torch.tensor(np.random.default_rng(0).uniform(-2, 2, (2, 3, 4)))
        w = torch.tensor([1.0, 2.0, 0.5], dtype=torch.float64, requires_grad=True)
        b = torch.tensor([0.5, -1.0, 0.0], dtype=torch.float64, requires_grad=True)
        y = F.batch_norm(x, None, None, w, b, training=True)
        gw, gb = torch.autograd.grad((y * y.detach()).sum(), [w, b], create_graph=True)  # compare: gw.requires_grad, gb.requires_grad
        z = F.group_norm(x, 3, w, b)
        hw, hb = torch.autograd.grad((z * z.detach()).sum(), [w, b], create_graph=True)  # compare: hw.requires_grad, hb.requires_grad
        """),
    "layer_norm_over_every_dim_recorded": Known(
        "layer_norm over every dim of its input with a weight, its gradient under"
        " create_graph: the weight's gradient sums over no dims; numbagrad's sum over"
        " dim=() summed everything and then failed to reshape (RuntimeError)",
        """
        x = torch.tensor([[0.25], [-1.25], [-0.5], [3.0], [3.0]], requires_grad=True)
        w = torch.tensor([[1.795], [-2.856], [1.371], [-0.862], [2.266]], requires_grad=True)
        y = F.layer_norm(x, (5, 1), w)
        gx, gw = torch.autograd.grad((y * torch.tensor([[0.0], [-2.0], [-1.75], [2.25], [2.5]])).sum(), [x, w], create_graph=True)  # compare: gw.shape, gw.requires_grad
        gg = torch.autograd.grad((gw * gw).sum(), [x, w], allow_unused=True)
        """),
    "batch_norm_saves_running_stats": Known(
        "batch_norm saves its running statistics (PyTorch's node does): an in-place"
        " change of one before backward is the version error; numbagrad's ran",
        """
        x = torch.tensor([[0.0, 1.75, 2.75], [0.5, 1.25, 0.5]], requires_grad=True)
        rm = torch.zeros(3)
        rv = torch.ones(3)
        y = F.batch_norm(x, rm, rv, training=False)
        rm.copy_(torch.tensor(1.016))
        y.sum().backward()
        """),
    "copies_laid_out_as_pytorch": Known(
        "the layout of the results of index_fill and flip (a clone of the input's: a"
        " transposed input's are transposed), sort's values and indices (likewise), and"
        " roll, cumprod and index_select (contiguous): numbagrad's differed, so a later"
        " view raised or not as PyTorch's did (x.t().flip(0).view(-1)), and roll by a"
        " multiple of the size returned the input's memory",
        """
        x = torch.arange(12.0).reshape(3, 4).t()
        a = x.flip(0).view(-1)
        b = x.index_fill(1, torch.tensor([0]), 2.0).view(-1)
        c = x.sort(1).values.view(-1)
        d = x.roll(1, 0).view(-1)
        e = x.cumprod(1).view(-1)
        f = torch.arange(12).reshape(3, 4).index_select(1, torch.tensor([2, 0])).view(-1)
        g = torch.tensor([-1.5])
        h = g.roll(-3)
        h.sqrt_()  # compare: g, h
        """),
    "median_of_nothing_integer": Known(
        "median / nanmedian of an empty integer tensor: the dtype's lowest value (NaN"
        " cast); numbagrad raised ValueError (NaN into an integer)",
        """
        a = torch.median(torch.tensor([], dtype=torch.int64))
        b = torch.tensor([], dtype=torch.int32).nanmedian()
        c = torch.tensor([]).median()
        """),
    "copysign_gradient_formula": Known(
        "copysign's gradient for its first operand is PyTorch's grad * (result / x masked"
        " to 0 where x is 0): MulBackward0 under create_graph, and a derivative by the"
        " incoming gradient that stays finite at 0; numbagrad's where(x == 0, 0, grad *"
        " result / x) gave WhereBackward0 and spread NaN through a second derivative",
        """
        x = torch.tensor([3.0, -1.5, 0.0], requires_grad=True)
        y = x.copysign(torch.tensor([1.0, -2.0, 5.0]))
        v = y.var()
        g, = torch.autograd.grad(v, x, create_graph=True)
        gg = torch.autograd.grad((g * torch.tensor([0.5, 1.0, 2.0])).sum(), x, allow_unused=True)
        """),
    "narrow_and_squeeze_details": Known(
        "narrow over a whole dim of a view is PyTorch's slice (SliceBackward0;"
        " numbagrad's AliasBackward0); squeeze of a 0-d tensor with a dim named twice is"
        " RuntimeError (numbagrad squeezed)",
        """
        x = torch.tensor([[1.848, 0.818, 1.321]], requires_grad=True)
        v = x[0].narrow(0, 0, 3)
        w = torch.narrow(x * 1, -1, -2, 2)
        s = torch.tensor(2.0).squeeze((-1, 0))
        (v.sum() + w.sum()).backward()  # compare: x.grad
        """),
    "cross_entropy_0d_and_empty": Known(
        "cross_entropy of a 0-d input: IndexError (its class dim is 1); of an empty input"
        " with class probabilities: the sum filled with NaN (NegBackward0); numbagrad"
        " computed, and divided by NaN (DivBackward1)",
        """
        a = F.cross_entropy(torch.tensor(1.5), torch.ones(()))
        x = torch.zeros(0, 3, requires_grad=True)
        b = F.cross_entropy(x, torch.ones((0, 3)))
        c = F.cross_entropy(torch.zeros(0, requires_grad=True), torch.ones((0,)))
        """),
    "repeat_interleave_float_repeats": Known(
        "repeat_interleave with a float (or bool, int16) tensor of repeats:"
        " NotImplementedError (no kernel); numbagrad raised NumPy's TypeError",
        """
        a = torch.ones(3).repeat_interleave(torch.tensor([1.0, 2.0, 1.0]))
        b = torch.ones(3).repeat_interleave(torch.tensor([], dtype=torch.float32), dim=-1)
        c = torch.ones(1).repeat_interleave(torch.tensor([2], dtype=torch.int32))
        """),
    "batch_norm_check_order": Known(
        "F.batch_norm's checks in PyTorch's order: the batch size (ValueError), the"
        " momentum's type (TypeError), then an empty input's early answer (no running"
        " statistics needed), then the kernel's checks; numbagrad checked the running"
        " statistics and the momentum first",
        """
        a = F.batch_norm(torch.ones(1, 3), None, None, training=True, momentum=None)
        b = F.batch_norm(torch.zeros(0, 3), None, None, training=False)
        c = F.batch_norm(torch.zeros(0, 3), torch.zeros(2), None, training=False)
        d = F.batch_norm(torch.ones(2, 3), None, None, training=False)
        """),
    "tensor_only_ops_refuse_numbers": Known(
        "logical_and/or/xor, gcd, lcm, ldexp, logaddexp(2), nextafter and heaviside with"
        " a Python number operand (and atan2_ with one, even on a leaf that requires"
        " grad): TypeError (they have no Scalar overload); numbagrad computed, or raised"
        " AttributeError or the leaf's RuntimeError first",
        """
        x = torch.tensor([1.5, 0.0, -2.0], requires_grad=True)
        a = torch.logical_and(x, True)
        b = x.logical_xor(0)
        c = torch.gcd(torch.tensor([4, 6]), 2)
        d = torch.ldexp(x, 2)
        e = x.logaddexp(1.0)
        f = torch.nextafter(x, 1.0)
        g = torch.heaviside(x, 1.0)
        h = x.atan2_(1)
        i = torch.tensor([1.0, 2.0]).clone().logical_or_(False)
        """),
    "number_input_refused": Known(
        "a function whose PyTorch signature takes a Tensor first given a Python number"
        " there (torch.exp(2.0), torch.sum(3), torch.relu(2), torch.clamp(2.0, 0, 1)):"
        " TypeError; numbagrad computed a tensor or raised AttributeError",
        """
        a = torch.exp(2.0)
        b = torch.sum(3)
        c = torch.relu(2)
        d = torch.clamp(2.0, 0, 1)
        e = torch.maximum(2, torch.ones(2))
        f = torch.add(2, torch.ones(2))
        g = torch.pow(2, torch.ones(2))
        """),
    "index_fill_value_grad": Known(
        "index_fill with a 0-d tensor value and a negative or repeated index, then"
        " backward: PyTorch computes the value's gradient only when it requires grad (its"
        " index_select refuses a negative index) and counts each filled slice once;"
        " numbagrad raised IndexError, or counted a repeated index twice",
        """
        x = torch.ones(3, 2, requires_grad=True)
        y = (x * 1).index_fill(0, torch.tensor([-1, 0]), torch.tensor(1.5))
        y.sum().backward()  # compare: x.grad
        v = torch.tensor(1.5, requires_grad=True)
        z = x.index_fill(0, torch.tensor([2, 0, 0]), v)
        (z * torch.arange(6.0).reshape(3, 2)).sum().backward()  # compare: x.grad, v.grad
        """),
    "batch_norm_eval_create_graph": Known(
        "batch_norm in eval mode (running statistics), its gradient under create_graph:"
        " it requires grad and the weight's depends on the input (PyTorch's"
        " double-backward node takes the input in every mode); numbagrad's did not require"
        " grad, and the weight's second derivative by the input was lost",
        """
        x = torch.tensor([[1.955, 0.5], [0.25, -1.0]], requires_grad=True)
        w = torch.tensor([1.5, 2.0], requires_grad=True)
        y = F.batch_norm(x, torch.zeros(2), torch.ones(2), w, training=False)
        gx, gw = torch.autograd.grad((y * torch.tensor([[1.0, 2.0], [3.0, -1.0]])).sum(), [x, w], create_graph=True)  # compare: gx.requires_grad, gw.requires_grad
        gg = torch.autograd.grad((gw * gw).sum(), [x, w], allow_unused=True)
        z = F.batch_norm(x, torch.zeros(2), torch.ones(2), training=False)
        g2, = torch.autograd.grad(z.sum(), x, create_graph=True)  # compare: g2.requires_grad
        gg2 = torch.autograd.grad((g2 * g2).sum(), [x], allow_unused=True)
        """),
    "copysign_other_grad_constant": Known(
        "copysign's gradient for its second operand under create_graph: zeros that do not"
        " require grad (PyTorch's zeros_like(other)); numbagrad's required grad",
        """
        x = torch.tensor([1.0, -2.0], requires_grad=True)
        y = torch.tensor([-1.0, 3.0], requires_grad=True)
        g, = torch.autograd.grad(x.copysign(y).sum(), y, create_graph=True)
        """),
    "moments_undefined_output_grad": Known(
        "std_mean / var_mean where only one output gets a gradient: the other's formula"
        " is skipped (the mean's alone does not depend on x: under create_graph it does"
        " not require grad), but the saved input is still checked against in-place"
        " changes; numbagrad added the other's formula with a zero gradient and read no"
        " saved input",
        """
        x = torch.tensor([[1.0, -2.0, 3.5], [0.5, 2.0, -1.0]], requires_grad=True)
        s, m = torch.std_mean(x, 1)
        g, = torch.autograd.grad(m.sum(), x, create_graph=True)
        v = x * 1
        s2, m2 = torch.var_mean(v)
        with torch.no_grad(): v.mul_(0.5)
        m2.backward()
        """),
    "pooling_saves_input": Known(
        "max / avg / adaptive pooling save their input (PyTorch's nodes take self): an"
        " in-place change of it before backward is the version error, and a second"
        " derivative reaches it as zeros; numbagrad's ran, and gave None",
        """
        x = torch.arange(16.0).reshape(1, 1, 4, 4).requires_grad_()
        y = x * 1
        a = F.max_pool2d(y, 2)
        b = F.avg_pool2d(y, 2)
        w = torch.tensor(2.0, requires_grad=True)
        g, = torch.autograd.grad((F.avg_pool2d(x, 2) * w).sum(), x, create_graph=True)
        gg = torch.autograd.grad((g * x.detach()).sum(), [x, w], allow_unused=True)
        y.add_(1)
        (a.sum() + b.sum()).backward()
        """),
    "take_along_dim_wraps_indices": Known(
        "take_along_dim with a dim and negative (or too large) indices: PyTorch 2.13"
        " takes them modulo the dim's size; numbagrad raised RuntimeError",
        """
        x = torch.arange(12.0).reshape(4, 3).requires_grad_()
        y = torch.take_along_dim(x, torch.tensor([[1, -5, 3], [4, 0, -1]]), 0)
        y.sum().backward()  # compare: x.grad
        """),
    "masked_select_0d_and_saved": Known(
        "masked_select of 0-d operands (one element selected or none), and an in-place"
        " change of its input before backward (PyTorch's node saves it: the version"
        " error); numbagrad raised NumPy's ValueError, and ran",
        """
        x = torch.tensor(2.0, requires_grad=True)
        a = x.masked_select(torch.tensor(True))
        b = torch.masked_select(x, torch.tensor(False))
        (a.sum() * 3 + b.sum()).backward()  # compare: x.grad
        v = torch.tensor([-2.25, 1.75, 2.75], requires_grad=True) * 1
        s = v.masked_select(v > 0)
        v.exp_()
        s.sum().backward()
        """),
    "movedim_0d": Known(
        "movedim of a 0-d tensor (dims 0 and -1 name its one position): an alias"
        " (AliasBackward0); numbagrad raised IndexError",
        """
        x = torch.tensor(2.0, requires_grad=True) * 1
        a = x.movedim(0, 0)
        b = torch.movedim(x, (-1,), (0,))
        """),
    "cosine_similarity_broadcast": Known(
        "F.cosine_similarity of operands of different shapes: the norms are taken after"
        " broadcasting (and clamped under no_grad, so the gradient passes unclamped);"
        " numbagrad took each operand's own norms (wrong values, or IndexError for a dim"
        " only the broadcast shape has)",
        """
        a = torch.tensor([[0.25], [1.5], [-2.0]], requires_grad=True)
        b = torch.tensor([[2.937, -0.373], [-0.277, 2.729], [1.151, 1.228]], requires_grad=True)
        y = F.cosine_similarity(a, b)
        x = torch.tensor([-1.75, 2.75, 2.75], requires_grad=True)
        z = F.cosine_similarity(x[None] * 2, x, dim=1)
        (y.sum() + z.sum()).backward()  # compare: a.grad, b.grad, x.grad
        """),
    "group_norm_empty_batch": Known(
        "F.group_norm of a batch of 0 samples: an empty result; numbagrad raised"
        " RuntimeError (a reshape with -1 of 0 elements)",
        """
        x = torch.zeros(0, 3, 2, requires_grad=True)
        y = F.group_norm(x, 3)
        y.sum().backward()  # compare: x.grad
        """),
    "index_put_accumulate_empty_region": Known(
        "index_put_(accumulate=True) whose region has no elements (a dim of size 0 after"
        " the index): nothing is checked against the bounds; numbagrad raised IndexError",
        """
        x = torch.zeros(2, 0, 3)
        x.index_put_((torch.tensor([4, 4, -1]),), torch.zeros(0, 3), accumulate=True)
        """),
    "reduction_dim_refusals": Known(
        "max/min with a tuple of dims: TypeError (one int); all/any with a dim named"
        " twice: RuntimeError; numbagrad raised IndexError and NumPy's ValueError",
        """
        x = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
        a = x.max(dim=(0, 1))
        b = torch.min(x, (0,))
        c = x.bool().all(dim=(0, 0))
        d = x.any(dim=(1, -1), keepdim=True)
        """),
    "flip_function_int_dims": Known(
        "torch.flip(x, 0) (the function with an int for dims): TypeError; the method"
        " takes ints (x.flip(0, 1)); numbagrad's function took them too",
        """
        x = torch.ones(2, 3)
        a = torch.flip(x, 0)
        b = x.flip(0, 1)
        c = torch.flip(x, dims=(0,))
        d = x.flip(dims=0)
        """),
    "factory_argument_errors": Known(
        "eye with a negative size, linspace/logspace with a float steps, arange of bool,"
        " a ragged nested list: PyTorch's RuntimeError, TypeError, NotImplementedError and"
        " TypeError/ValueError; numbagrad's NumPy errors or a result ([[], [1]] is (2, 0))",
        """
        a = torch.eye(-1)
        b = torch.eye(2, -1)
        c = torch.linspace(0, 1, 2.5)
        d = torch.arange(3, dtype=torch.bool)
        e = torch.tensor([1, [2]])
        f = torch.tensor([[1], 2])
        g = torch.tensor([[1, 2], [3]])
        h = torch.tensor([[], [1]])
        """),
    "isin_bool": Known(
        "isin with a bool tensor or a bool number: RuntimeError (no kernel); numbagrad"
        " computed",
        """
        a = torch.isin(torch.tensor([True]), 2)
        b = torch.isin(torch.tensor([1, 2]), torch.tensor([True]))
        c = torch.isin(torch.tensor([1, 2]), True)
        """),
    "overload_node_names": Known(
        "div(..., rounding_mode=None) is PyTorch's div.Tensor_mode overload"
        " (DivBackward2), and sort with stable= given its sort.stable one (SortBackward1);"
        " numbagrad's DivBackward0 and SortBackward0. argsort's stable must be a bool"
        " (TypeError for None)",
        """
        x = torch.tensor([[1.0, 3.0, 2.0], [4.0, 5.0, 6.0]], requires_grad=True)
        y = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        a = x.div(y, rounding_mode=None)
        b = torch.div(x, 2, rounding_mode=None)
        c = x.sort(dim=1, stable=True).values
        d = torch.sort(x, stable=False, dim=0).values
        e = x.sort(1).values
        f = x.argsort(stable=None)
        (a.sum() + b.sum() + c.sum() + d.sum()).backward()  # compare: x.grad, y.grad
        """),
    "unflatten_is_a_view": Known(
        "unflatten of a non-contiguous tensor is a view (ViewBackward0), of an empty one"
        " infers -1 from its dim, of a 0-d one is RuntimeError; numbagrad's was a reshape"
        " (ReshapeAliasBackward0) and raised for the others",
        """
        x = torch.arange(12.0).reshape(3, 4).T.requires_grad_()
        a = x.unflatten(0, (2, 2))
        b = torch.zeros(0, 6).unflatten(1, (2, -1))
        c = torch.tensor(2.25).unflatten(-1, (1, 1))
        a.sum().backward()  # compare: x.grad
        """),
    "remainder_number_first": Known(
        "a Python number modulo a tensor (5.0 % x, torch.remainder(7, x)): PyTorch's"
        " remainder.Scalar_Tensor has no derivative (NotImplemented node, its backward"
        " raises); numbagrad's RemainderBackward1 computed one",
        """
        x = torch.tensor([1.5, 2.0, -3.0], requires_grad=True)
        y = 5.0 % x
        z = torch.remainder(7, x)
        w = 5 % torch.tensor([2, -3, 4])
        y.sum().backward()
        """),
    "rms_norm_permuted_input": Known(
        "F.rms_norm of a permuted (transposed) input: PyTorch's result ends in a"
        " contiguous copy (CloneBackward0); numbagrad's in MulBackward0",
        """
        b = torch.ones(3, 4, requires_grad=True)
        a = F.rms_norm(b.t(), [3])
        c = F.rms_norm(b[:, ::2], [2])
        (a.sum() + c.sum()).backward()  # compare: b.grad
        """),
    "batch_norm_arguments_and_empty_input": Known(
        "F.batch_norm with momentum=None: TypeError; of an empty input: a copy scaled by"
        " the first weight and shifted by the first bias, no statistics moved;"
        " instance_norm moves the running statistics only with use_input_stats. numbagrad"
        " raised a Numba TypingError, ran its op (and wrote NaN into the running mean)",
        """
        x = torch.ones(4, 2, requires_grad=True)
        a = F.batch_norm(x, None, None, training=True, momentum=None)
        rm = torch.zeros(2) + 0.5
        rv = torch.ones(2) * 2
        e = torch.zeros(0, 2, 3, requires_grad=True)
        b = F.batch_norm(e, rm, rv, torch.ones(2) * 3, torch.ones(2), training=True)
        c = F.instance_norm(torch.zeros(0, 2), rm, rv, use_input_stats=False)
        b.sum().backward()  # compare: e.grad, rm, rv
        """),
    "adaptive_pool_empty_dims": Known(
        "adaptive pooling of an input with a dim of size 0 outside the pooled dims"
        " (PyTorch's 1-d and 2-d average pools check only the pooled dims; max pools every"
        " dim but the first): an empty result; numbagrad raised RuntimeError",
        """
        a = F.adaptive_avg_pool2d(torch.zeros(2, 0, 3, 3), 2)
        b = F.adaptive_max_pool1d(torch.zeros(0, 4), 5)
        c = F.adaptive_avg_pool1d(torch.zeros(0, 4), 5)
        d = F.adaptive_avg_pool3d(torch.zeros(2, 0, 3, 3, 3), 2)
        """),
    "repeat_interleave_arguments": Known(
        "repeat_interleave of a 0-d tensor with a dim and a tensor of repeats: IndexError"
        " (no dims); with a list of repeats: TypeError; numbagrad ran",
        """
        a = torch.tensor(-0.25).repeat_interleave(torch.tensor([1]), 0)
        b = torch.tensor([1.0, 2.0]).repeat_interleave([2, 1], 0)
        c = torch.tensor(-0.25).repeat_interleave(torch.tensor([2]))
        """),
    "order_statistics_refuse_bool": Known(
        "median, nanmedian, kthvalue and topk of a bool tensor: NotImplementedError /"
        " RuntimeError (no bool kernel); kthvalue along an empty dim: IndexError first;"
        " numbagrad computed, and raised its k-out-of-range RuntimeError",
        """
        x = torch.tensor([[True, False, True]])
        a = x.median()
        b = x.median(1)
        c = x.nanmedian(1)
        d = x.kthvalue(1, 1)
        e = x.topk(1)
        f = torch.zeros(1, 4, 0).kthvalue(1, 2)
        """),
    "integral_dtype_recorded_reduction": Known(
        "sum / prod / cumsum / cumprod / nansum asked for an integral dtype of an input"
        " that requires grad: RuntimeError (Autograd not support dtype: Long); numbagrad"
        " returned an integer tensor",
        """
        x = torch.tensor([1.5, 2.0], requires_grad=True)
        a = x.sum(dtype=torch.int64)
        b = x.cumsum(0, dtype=torch.int64)
        c = x.prod(dtype=torch.int32)
        d = x.cumprod(0, dtype=torch.int16)
        e = x.nansum(dtype=torch.int64)
        f = x.detach().cumsum(0, dtype=torch.int64)
        with torch.no_grad(): g = x.sum(dtype=torch.int64)
        """),
    "dropout1d_unbatched_view": Known(
        "F.dropout1d of an unbatched (C, L) input: unsqueezed and squeezed again, even in"
        " eval mode (SqueezeBackward1); numbagrad returned the input itself",
        """
        x = torch.tensor([[0.142, 1.483], [0.428, 2.947]], requires_grad=True)
        v = x * 2
        a = F.dropout1d(v, 0.5, training=False)
        b = F.dropout1d(v, 0.0, training=True)
        """),
    "repeat_of_ones_copies": Known(
        "repeat / tile by ones: a copy; numbagrad's shared the input's memory (a write"
        " into it changed the input)",
        """
        v3 = torch.tensor(2.5, dtype=torch.float64)
        v4 = torch.tile(v3, [1])
        v7 = torch.ones(2, 3)
        v8 = v7.repeat(1, 1)
        v4.clamp_(-0.5, 0.0)
        v8.mul_(2)  # compare: v3, v7
        """),
    "conv_second_order_undefined": Known(
        "the second derivative of a convolution's input gradient by the input: undefined"
        " (None from autograd.grad with allow_unused), as the input gradient does not"
        " depend on it; numbagrad gave zeros (an output without a gradient was handed"
        " zeros)",
        """
        x = torch.tensor([[[[-1.453, -0.864, 2.207]]]], requires_grad=True)
        w = torch.tensor([[[[1.985]]], [[[2.821]]]], requires_grad=True)
        y = F.conv2d(x, w)
        g, = torch.autograd.grad((y * torch.ones(2, 1, 3)).sum(), x, create_graph=True)
        gg = torch.autograd.grad((g * torch.tensor([-2.5, 3.0, -1.0])).sum(), [x], allow_unused=True)
        """),
    "nll_loss_saves_target_and_weight": Known(
        "nll_loss / cross_entropy save their target and class weights (PyTorch's node"
        " does): an in-place change of either before backward (or before the second"
        " backward under create_graph) is the version error; numbagrad's ran",
        """
        x = torch.tensor([[1.0, 2.0, 0.5], [0.1, -1.0, 2.0]], requires_grad=True)
        w = torch.tensor([1.0, 2.0, 3.0])
        t = torch.tensor([2, 0])
        l = F.cross_entropy(x, t, weight=w)
        w[0] = 5.0
        l.backward()
        m = F.nll_loss(F.log_softmax(x, 1), t)
        t[0] = 1
        m.backward()
        """),
    "kthvalue_ties": Known(
        "kthvalue of a slice holding equal values: PyTorch's index is where ATen's quick"
        " select (median-of-three pivots) leaves it; numbagrad's stable sort gave the first"
        " (now it runs that quick select on the tied slices)",
        """
        k = torch.tensor([[1.0, 1.0, 0.0, -0.5, -0.5, -0.5]]).kthvalue(1, 1)
        x = torch.tensor([[1.5, 0.0, 0.5, 1.5], [np.nan, 1.0, np.nan, 0.0]], requires_grad=True)
        v, i = x.kthvalue(3, 1)
        v.sum().backward()  # compare: i, x.grad
        """),
    "median_dim_nan": Known(
        "median of a tensor (or a slice along dim) holding NaN: NaN, and the index of its"
        " first NaN; numbagrad's sort put NaN last and returned the middle number",
        """
        x = torch.tensor([[1.0, np.nan, 3.0, np.nan], [3.0, 4.0, 1.0, 2.0]], requires_grad=True)
        m = x.median(1)
        a = x.median()
        (m.values.sum() + a).backward()  # compare: m, a, x.grad
        """),
    "pad_mode_node_names": Known(
        "F.pad with mode reflect / replicate / circular: grad_fn ReflectionPad2DBackward0,"
        " ReplicationPad1DBackward0, CopySlices (and ...BackwardBackward0 for the gradient"
        " under create_graph, which requires grad); numbagrad's were IndexBackward0",
        """
        x = torch.tensor([[[1.0, 2.0, 3.0, -1.0]]], requires_grad=True)
        g = F.pad(x, (2, 1), mode='reflect')
        h = F.pad(x, (1, 1), mode='replicate')
        c = F.pad(x, (1, 2), mode='circular')
        d, = torch.autograd.grad((h * h).sum(), x, create_graph=True)
        """),
    "interpolate_node_names": Known(
        "F.interpolate (nearest, nearest-exact, linear, bilinear, bicubic, trilinear,"
        " antialias): grad_fn UpsampleNearest1DBackward0, UpsampleBilinear2DBackward0, ...;"
        " numbagrad's were IndexBackward0 or UnsafeViewBackward0",
        """
        x = torch.tensor([[[[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]]]], requires_grad=True)
        j = F.interpolate(x, scale_factor=2)
        k = F.interpolate(x, size=(3, 5), mode='bilinear')
        l = F.interpolate(x, size=(3, 5), mode='bicubic', align_corners=True)
        """),
    "kron_saved_operand": Known(
        "kron, then an in-place write into an operand, then backward: PyTorch runs (its kron"
        " reshapes the operands by _unsafe_view, so the product's saved operands have their own"
        " version counters); numbagrad's reshape views raised RuntimeError (modified by an"
        " inplace operation) until kron took unsafe_view too (seed 68198)",
        """
        x = torch.tensor([-1.785, 1.032], requires_grad=True)
        c = torch.tensor([0.217, 1.138, -0.089])
        v = torch.kron(x, c)
        c[1] = 2.0
        v.sum().backward()  # compare: x.grad
        """),
    "create_graph_grad_fn_names": Known(
        "gradients made with create_graph=True: PyTorch's double-backward nodes"
        " (SigmoidBackwardBackward0, a leaf's .grad is CopyBackwards); numbagrad builds them"
        " from forward ops (MulBackward0, MvBackward0, ...)",
        """
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        g, = torch.autograd.grad(x.sigmoid().sum(), x, create_graph=True)
        (torch.ones(3, 2) @ x).sum().backward(create_graph=True)  # compare: x.grad
        """),
    "create_graph_inf_grad": Known(
        "second derivatives with an infinite incoming gradient: PyTorch's double-backward nodes"
        " give +-inf (SigmoidBackwardBackward0); numbagrad's, built from forward ops, give nan"
        " (inf * 0)",
        """
        x = torch.tensor([2.0], requires_grad=True)
        g, = torch.autograd.grad(x.sigmoid(), x, torch.tensor([np.inf]), create_graph=True)
        gg = torch.autograd.grad(g, x, torch.tensor([0.08]))
        """),
    "retain_grad_view_base_write": Known(
        "retain_grad() on a view, then a write into its base through another view: the"
        " view's .grad stays None after a backward that does not ask for the view's node (the"
        " retain_grad hook moves to a node only when one is re-derived); numbagrad filled it"
        " (and a write through the view itself left hooks on both nodes)",
        """
        x = torch.tensor(1.0, requires_grad=True)
        a = (x * 1).flatten()
        a.retain_grad()
        v = a.squeeze(-1)
        v[...] = torch.tensor(2.0, requires_grad=True) * 2
        (v[...] * 3).sum().backward()  # compare: a.grad
        """),
    "setitem_into_expanded_overlap": Known(
        "y[:-1] = v where the region of an expanded y has several elements at one address:"
        " RuntimeError (unsupported operation: more than one element of the written-to tensor"
        " refers to a single memory location); numbagrad writes",
        """
        y = torch.tensor(4.0).expand(3)
        y[:-1] = torch.tensor(1.0)
        """),
    "inplace_expanded_backward": Known(
        "fill_ / zero_ on an expanded view of a tensor that requires grad (allowed), then"
        " backward: RuntimeError (unsupported operation: more than one element of the"
        " written-to tensor refers to a single memory location); numbagrad runs",
        """
        x = torch.tensor([-1.5, 1.5], requires_grad=True)
        v = x + 0.5
        v.expand(2, 2).fill_(0.0)
        v.sum().backward()
        """),
    "inplace_view_of_multi_output_view": Known(
        "an in-place op on a view of an output of split/chunk (or on the output of chunk(1))"
        " of a tensor that requires grad: RuntimeError (Output 0 of T is a view and is being"
        " modified inplace ...); numbagrad allows it (AsStridedBackward0)",
        """
        x = torch.ones(4, 2, requires_grad=True) * 1
        y = x.chunk(2, -1)[0].t()
        y.sin_()
        z = x.chunk(1, -1)[0]
        z.sin_()
        """),
    "nograd_write_multi_output_view": Known(
        "a write under no_grad into an output of split/chunk (or their base) of a tensor that"
        " requires grad: reading that output's grad_fn afterwards raises RuntimeError (Output 0"
        " of Split is a view and its base ... has been modified inplace); numbagrad returns"
        " SplitBackward0",
        """
        x = torch.ones(4, 2, requires_grad=True) * 1
        s = x.chunk(2, -1)
        with torch.no_grad(): s[0].mul_(2)  # compare: s[0]
        """),
    "no_grad_inplace_view_grad_fn": Known(
        "a write autograd does not record (under no_grad, or through a .detach()ed alias) into"
        " a view of a tensor that requires grad, or into its base: the view's grad_fn becomes"
        " AsStridedBackward0; numbagrad keeps the old one (TBackward0, UnsqueezeBackward0)",
        """
        x = torch.ones(3, 2, requires_grad=True)
        v = x.t()
        with torch.no_grad(): v.mul_(0.5)  # compare: v
        w = x.unsqueeze(0)
        w.detach().pow_(2)  # compare: w
        """),
    "create_graph_empty_grad": Known(
        "under create_graph=True the gradient of an empty tensor (an empty input of cat, an"
        " empty operand of @) does not require grad; numbagrad's does (SliceBackward0, ...)",
        """
        c = torch.zeros(0, requires_grad=True)
        y = torch.cat([torch.ones(2), c]).exp().sum()
        y.backward(create_graph=True)  # compare: c.grad
        x = torch.zeros(4, 0, requires_grad=True)
        z = (torch.ones(4) @ x).clip(-1.5, 2).dot(torch.zeros(0, requires_grad=True))
        z.backward(create_graph=True)  # compare: x.grad
        """),
    "prod_create_graph": Known(
        "the gradient of prod() with create_graph=True: over a tensor holding a zero it"
        " requires grad (second derivatives work), numbagrad's does not; over a 0-d tensor it"
        " does not, numbagrad's does (MulBackward0)",
        """
        x = torch.tensor([[1.0, 0.0], [2.0, 3.0]], dtype=torch.float64, requires_grad=True)
        g, = torch.autograd.grad(x.prod(), x, create_graph=True)
        y = torch.tensor(2.0, requires_grad=True)
        g, = torch.autograd.grad(y.prod(), y, create_graph=True)
        """),
    "reshape_alias_grad_fn": Known(
        "reshape or flatten of a non-contiguous tensor that can still be a view: grad_fn"
        " ReshapeAliasBackward0, numbagrad ViewBackward0",
        """
        x = torch.ones(3, 2, requires_grad=True)
        r = x.t().reshape(2, 3, 1)
        """),
    "setitem_grad_value_into_nonfloat": Known(
        "writing a value that requires grad into a bool or integer tensor (b[:1] = v): the"
        " target requires grad afterwards (grad_fn CopySlices); numbagrad's does not",
        """
        b = torch.zeros(3, dtype=torch.bool)
        b[:1] = torch.tensor(1.0, requires_grad=True) * 2
        """),
    "setitem_advanced_empty": Known(
        "assignment through an advanced index into an empty region: the value's shape is still"
        " checked (RuntimeError shape mismatch), and grad_fn is CopySlices; numbagrad accepts"
        " any empty value and records IndexPutBackward0",
        """
        y = torch.zeros(1, 3, 4, requires_grad=True) * 1
        y[None, 1::3, torch.tensor([-3, -3, 1]), 2] = torch.zeros(3, 1, 0, 1)
        z = torch.zeros(1, 0, requires_grad=True) * 1
        z[torch.tensor([0, 0]), 0:-1] = torch.zeros(0, requires_grad=True) * 1
        """),
    "index_out_of_bounds_empty": Known(
        "out-of-range integer indices where the result is empty (an empty tensor, x of shape"
        " (3, 0), x[[-4, 4]]; or an empty slice next to the index): an empty result, the"
        " indices are not checked; numbagrad IndexError",
        """
        x = torch.zeros(3, 0, requires_grad=True)
        r = x[torch.tensor([-4, 4])]
        y = torch.ones(1, 1, 2, 1)
        r = y[-1, ..., 1:1, None, torch.tensor([-2, 0, 0])]
        """),
    "index_0d_int_tensor": Known(
        "indexing with a 0-d integer tensor (x[torch.tensor(1)], x[t.argmax()]) acts as an int:"
        " grad_fn SelectBackward0, and x[torch.tensor(1)] = v gives CopySlices; numbagrad"
        " IndexBackward0 / IndexPutBackward0 (its result said it was on cuda:0 until c5afdad)",
        """
        y = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        r = y[torch.tensor(1)]
        z = y * 1
        z[torch.tensor(1)] = 5.0
        """),
    "bmm_empty_mixed_dtype": Known(
        "torch.bmm (or batched @) of operands of two dtypes when the result or the sum is"
        " empty: a result (zeros) in batch2's dtype; numbagrad RuntimeError (expected batch1"
        " and batch2 to have the same dtype), later the promoted dtype",
        """
        r = torch.bmm(torch.zeros(3, 0, 4), torch.zeros(3, 4, 2, dtype=torch.float64))
        r = torch.zeros(3, 0, 5, dtype=torch.float64) @ torch.zeros(3, 5, 2)
        r = torch.zeros(3, 1, 0) @ torch.zeros(3, 0, 2, dtype=torch.int64)
        """),
    "index_error_precedence_view": Known(
        "an assignment with an invalid index (more parts than dimensions, out of bounds) into"
        " a view of a leaf that requires grad: IndexError; numbagrad RuntimeError (a view of a"
        " leaf Variable ...) (the leaf itself was fixed: see index_error_precedence)",
        """
        x = torch.tensor([2.25, 1.0], requires_grad=True)
        v = x[...]
        v[0, 0] = -2.5
        v[torch.tensor([0]), 0] = -2.5
        v[5] = 1.0
        """),
    "max_dim_0d_indices_not_saved": Known(
        "max / min with a dim of a 0-d tensor saves the indices it returns (as for any other"
        " tensor): writing them in place before backward raises RuntimeError (modified by an"
        " inplace operation); numbagrad runs (it checks them for tensors of 1 or more dims)",
        """
        x = torch.tensor(1.0, requires_grad=True)
        v, i = x.max(0, keepdim=True)
        i.copy_(torch.tensor(0))
        v.sum().backward()
        """),
    "pow_zero_create_graph": Known(
        "the gradient of x ** 0 with create_graph=True: zeros that do not require grad;"
        " numbagrad's requires grad (WhereBackward0)",
        """
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        g, = torch.autograd.grad((x ** 0).sum(), x, create_graph=True)
        """),
    "pow_exponent_grad_zero_base": Known(
        "the exponent's gradient of x ** c where x == 0 and the incoming gradient is nan or inf:"
        " nan (grad * 0); numbagrad 0",
        """
        x = torch.tensor([0.0, 1.0], requires_grad=True)
        c = torch.tensor([1.5, 2.0], requires_grad=True)
        g = torch.autograd.grad(x ** c, c, torch.tensor([np.nan, 1.0]))
        """),
    "rpow_saved_exponent": Known(
        "number ** tensor saves its exponent: writing the exponent in place before backward"
        " raises RuntimeError (modified by an inplace operation); numbagrad runs",
        """
        x = torch.ones(2, requires_grad=True)
        e = x * 1
        y = 1.5 ** e
        e[0] = 2.0
        y.sum().backward()
        """),
    "pow_exponent_saved_base_no_grad": Known(
        "x ** c where only the exponent c requires grad saves c: writing c (under no_grad)"
        " before backward raises RuntimeError (modified by an inplace operation); numbagrad"
        " runs (it saves c when x requires grad too)",
        """
        x = torch.ones(4) * 2
        c = torch.tensor([1.5], requires_grad=True)
        y = x ** c
        with torch.no_grad(): c.mul_(0.5)
        y.sum().backward()
        """),
    "pow_tensor_saved_result": Known(
        "x ** e with a tensor exponent saves its result: writing the result in place before"
        " backward raises RuntimeError (modified by an inplace operation); numbagrad runs",
        """
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        y = (x * 1) ** torch.tensor([1.0, 2.0])
        y[0] = 0.0
        y.sum().backward()
        """),
    "sign_create_graph_grad": Known(
        "the gradient through sign() with create_graph=True: zeros that do not require grad;"
        " numbagrad's required grad (MulBackward0)",
        """
        x = torch.tensor([1.5, -2.0], requires_grad=True)
        g, = torch.autograd.grad((x.sign() * 3).sum(), x, create_graph=True)
        """),
    "where_saved_condition": Known(
        "torch.where saves its condition: writing the condition in place before backward"
        " raises RuntimeError (modified by an inplace operation); numbagrad runs",
        """
        x = torch.ones(3, requires_grad=True)
        c = torch.tensor([True, False, True])
        y = torch.where(c, x, 0.0)
        c[0] = False
        y.sum().backward()
        """),
    "cast_operand_not_saved": Known(
        "x * c, x / c, x ** c, maximum / minimum(x, c) with x requiring grad and c of another"
        " dtype than the result (int64, bool, float32 next to float64) save c: writing c in"
        " place before backward raises RuntimeError (modified by an inplace operation);"
        " numbagrad casts c to a copy, and runs",
        """
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        c = torch.tensor([1, 2])
        y = x * c
        c[0] = 0
        y.sum().backward()
        """),
    "bitwise_float_large_nd": Known(
        "& and | of float tensors of 2**15 elements or more with 2 or more dims ((300, 400),"
        " x.broadcast_to(...)): RuntimeError; numbagrad computes (1-d and strided ones are"
        " refused since bitwise_float_large was fixed)",
        """
        x = torch.ones(300, 400)
        r = x & x
        """),
    "like_factories_0d": Known(
        "torch.zeros_like / ones_like / empty_like / rand_like of a 0-d tensor: a 0-d tensor;"
        " numbagrad TypeError (zeros() missing 1 required positional arguments: \"size\")"
        " (since the fix of factory_no_size)",
        """
        r = torch.ones_like(torch.tensor(2.0))
        r = torch.zeros_like(torch.tensor(2.0))
        r = torch.empty_like(torch.tensor(2.0)).shape
        """),
    "copy_into_nonfloat_requires_grad": Known(
        "int_tensor.copy_(float tensor that requires grad): the int tensor does not require"
        " grad; numbagrad's does (grad_fn CopyBackwards)",
        """
        y = torch.zeros(3, dtype=torch.int64)
        y.copy_(torch.ones(3, requires_grad=True) * 2)
        """),
    "setitem_full_index_grad_fn": Known(
        "x[...] = v, x[:] = v, x[:, :] = v (an index that selects all of x): grad_fn"
        " CopyBackwards (tensor value) or FillBackward3 (number); numbagrad CopySlices, which"
        " keeps x's old value in the graph (under create_graph its zero gradient requires"
        " grad)",
        """
        y = torch.ones(2, 2, requires_grad=True) * 1
        y[...] = torch.zeros(2)
        y[:, 0:2] = 2.0
        """),
    "basic_index_grad_fn": Known(
        "basic indexing with several parts: PyTorch names the node after the last view it"
        " applies (x[1, None] UnsqueezeBackward0, x[1, 0:3:2] SliceBackward0, x[:, :]"
        " AliasBackward0); numbagrad SelectBackward0 / SliceBackward0",
        """
        y = torch.ones(2, 3, requires_grad=True) * 1
        r = y[1, None]
        r = y[1, 0:3:2]
        r = y[:, :]
        """),
    "bitwise_float_large_scalar": Known(
        "&, | of a float tensor of 2**15 elements or more with a number or a 0-d tensor:"
        " RuntimeError; numbagrad computes (two large tensors are refused since"
        " bitwise_float_large was fixed)",
        """
        x = torch.ones(40000)
        r = x | torch.tensor(-0.25)
        r = x | -0.25
        """),
    "pow_neg_inf_half": Known(
        "x ** 0.5 and x ** -0.5 at x = -inf: nan (computed as sqrt / rsqrt), and so the"
        " gradient of x ** 1.5 there; numbagrad inf / 0 / inf (C's pow)",
        """
        x = torch.tensor([-np.inf, 4.0], requires_grad=True)
        r = x ** 0.5
        r = x ** -0.5
        g = torch.autograd.grad((x ** 1.5).sum(), x)
        """),
    "rpow_backward_inf_grad": Known(
        "the gradient of number ** x where the incoming gradient is infinite: inf;"
        " numbagrad nan",
        """
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        g = torch.autograd.grad(2 ** x, x, torch.tensor([np.inf, 1.0]))
        """),
    "matmul_result_is_view": Known(
        "matmul other than 2-d @ 2-d, 2-d @ 1-d, 1-d @ 1-d and bmm (batched @ anything, 1-d @"
        " 2-d, 2-d @ 3-d): the result is a new tensor (an in-place op on it, or on a view of"
        " it, gives MulBackward0, CopySlices); numbagrad's is a view (._base is set:"
        " AsStridedBackward0)",
        """
        x = torch.ones(2, 3, 4, requires_grad=True)
        v = x @ torch.ones(4)
        v.mul_(2)
        """),
    "vecmat_grad_fn": Known(
        "1-d @ 2-d: grad_fn SqueezeBackward4 (1-d @ 3-d: UnsafeViewBackward0);"
        " numbagrad SqueezeBackward1",
        """
        x = torch.ones(3, requires_grad=True)
        r = x @ torch.ones(3, 4)
        r = x @ torch.ones(2, 3, 4)
        """),
    "bitwise_float_large": Known(
        "&, | and ~ on a float tensor of 2**15 elements or more: RuntimeError / TypeError as"
        " for a small one; numbagrad computes (the refusal is skipped on the lazy path)",
        """
        a = torch.ones(40000)
        r = a | a
        r = ~a
        """),
    "linear_grad_fn": Known(
        "F.linear with a bias on a 2-d input: grad_fn AddmmBackward0; numbagrad AddBackward0",
        """
        x = torch.ones(2, 3, requires_grad=True)
        r = F.linear(x, torch.ones(4, 3), torch.ones(4))
        """),
    "number_first_function": Known(
        "torch.sub(2, x) / torch.div(2, x): grad_fn SubBackward0 / DivBackward0; numbagrad"
        " RsubBackward1 / MulBackward0",
        """
        x = torch.ones(3, requires_grad=True)
        r = torch.sub(2, x)
        r = torch.div(2, x)
        """),
    "loss_saved_inputs": Known(
        "F.mse_loss saves its input and target (F.nll_loss its input): writing one in place"
        " before backward raises RuntimeError (modified by an inplace operation); numbagrad"
        " runs",
        """
        x = torch.ones(2, requires_grad=True)
        t = torch.zeros(2)
        l = F.mse_loss(x * 1, t)
        t.add_(1)
        l.backward()
        """),
    "loss_grad_fn_names": Known(
        "F.mse_loss / F.cross_entropy / F.nll_loss: grad_fn MseLossBackward0 / NllLossBackward0;"
        " numbagrad names its last primitive op (MeanBackward0, SumBackward0, MulBackward0, ...)",
        """
        x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        r = F.mse_loss(x, torch.zeros(2, 2))
        r = F.cross_entropy(x, torch.tensor([0, 1]))
        r = F.nll_loss(x, torch.tensor([0, 1]), reduction='sum')
        """),
    "setitem_value_extra_dims_backward": Known(
        "y[a:b] = v with v of more dimensions than the region (leading size-1 ones, (1, 1, 5)"
        " into (2, 5)) and v requires grad: backward runs; numbagrad's raises RuntimeError"
        " (shape '[1, 1, 5]' is invalid for input of size 1)",
        """
        w = torch.ones(1, 1, 5, requires_grad=True)
        y = torch.zeros(4, 5)
        y[-2:] = w * 2
        y.sum().backward()  # compare: w.grad
        """),
    "norm_dim_3_tuple": Known(
        "x.norm(dim=(0, 1, 2)): RuntimeError (linalg.matrix_norm: dim must be a 2-tuple);"
        " numbagrad computes the 2-norm over the three dims",
        """
        r = torch.ones(2, 3, 4).norm(dim=(0, 1, 2))
        """),
    "copy_broadcast_extra_dims": Known(
        "y.copy_(src) with src of more dimensions than y (leading size-1 ones): RuntimeError"
        " (output with shape [2] doesn't match the broadcast shape [1, 2]); numbagrad copies",
        """
        y = torch.zeros(2)
        y.copy_(torch.ones(1, 2))
        """),
    "setitem_mask_single_value_dtype": Known(
        "y[mask] = v with a one-element v of another dtype (float64 into float32): v is cast;"
        " numbagrad RuntimeError (Index put requires the source and destination dtypes match)",
        """
        y = torch.zeros(3, 2)
        y[torch.tensor([True, False, True])] = torch.tensor([[0.75]], dtype=torch.float64)
        """),
    "var_constant_inexact": Known(
        "var/std over a slice of equal values whose mean is not exact in float32 (0.637 +"
        " tanh(1), three times): 0, and a zero gradient; numbagrad's two-pass formula gives"
        " 1.2e-07 and gradients of +-1/n per element (-1 below)",
        """
        c = torch.tensor(0.637, requires_grad=True)
        v = c + torch.tensor([[0.7615942, 0.0]]).expand(3, 2)
        r = v.std(0, unbiased=False)
        r.sum().backward()  # compare: c.grad
        """),
    "setitem_advanced_slice_grad_fn": Known(
        "y[[0, 0], -2:4] = v (an advanced index with a slice that covers its dimension but is"
        " not written 0:n): grad_fn CopySlices; numbagrad IndexPutBackward0",
        """
        y = torch.tensor([[1.0, 2.0]], requires_grad=True) * 1
        y[[0, 0], -2:4] = -2.5
        """),
    "bitwise_and_or": Known(
        "& and | are bitwise: on int64 tensors the result is int64 (1 | 2 = 3), on float"
        " tensors RuntimeError; numbagrad makes them logical_and / logical_or (bool)",
        """
        r = torch.tensor([1]) | torch.tensor([2])
        r = torch.tensor([True]) & 2.5
        """),
    "zero_d_leaf_value_grad_device": Known(
        "y[i] = v or y[i].copy_(v) for a 0-d leaf v that requires grad (a 0-d region), then"
        " backward: v.grad is a CPU tensor; numbagrad's says it is on cuda:0, so .numpy()"
        " raises TypeError (also through autograd.grad)",
        """
        y = torch.zeros(3)
        v = torch.tensor(2.0, requires_grad=True)
        y[1] = v
        y.sum().backward()  # compare: v.grad
        w = torch.tensor(2.0, requires_grad=True)
        z = torch.zeros(3)
        z[0].copy_(w)
        z.sum().backward()  # compare: w.grad
        """),
    "log_softmax_cancellation": Known(
        "log_softmax where one element dominates its row (also through cross_entropy and"
        " nll_loss): PyTorch keeps full precision near 0; numbagrad computes x - logsumexp(x)"
        " and loses the digits to cancellation (0.00054023 against 0.00054169 below, exact"
        " 0.00054019)",
        """
        x = torch.tensor([[-0.234767, 42.2009, 4.4037642, -21.648672, 34.67758]])
        r = -torch.log_softmax(x, 1)[0, 1]
        """),
    "factory_no_size": Known(
        "torch.ones() / torch.zeros() with no size: TypeError; numbagrad returns a 0-d tensor",
        """
        r = torch.ones()
        """),
    "setitem_value_leading_ones": Known(
        "x[i] = v into a 0-d region with v of shape (1,) (leading size-1 dims are dropped):"
        " runs; numbagrad RuntimeError (expand ... the number of sizes provided (0))",
        """
        y = torch.zeros(3)
        y[1] = torch.ones(1)
        """),
    "retain_grad_then_inplace": Known(
        "t.retain_grad(), then an in-place op on t: .grad is the gradient of t's new value"
        " (None below: the loss uses the old one); numbagrad keeps the gradient of the old"
        " value",
        """
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        t = x * 1
        t.retain_grad()
        y = t * 3
        t.mul_(2)
        y.sum().backward()  # compare: t.grad
        """),
    "index_error_precedence": Known(
        "an index with more parts than dimensions raises IndexError (too many indices) first;"
        " numbagrad raises another error first: ValueError (step must be greater than zero)"
        " for a negative step, RuntimeError (a view of a leaf Variable ...) for an assignment"
        " into a leaf that requires grad",
        """
        r = torch.ones(3)[1:-1:-1, 0]
        x = torch.ones(1, 2, requires_grad=True)
        x[0:1, 0:2, 0] = 1.5
        """),
    "setitem_0d_view_backward": Known(
        "writing into a 0-d view (w = v[1]; w[...] = 5.0) of a tensor that requires grad, then"
        " backward: runs; numbagrad's backward raises TypeError ('numpy.float32' object does"
        " not support item assignment)",
        """
        x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        v = x * 1
        w = v[1]
        w[...] = 5.0
        v.sum().backward()  # compare: x.grad
        """),
    "permute_no_dims": Known(
        "x.permute() with no dims: TypeError (missing dims); numbagrad returns x for a 0-d x"
        " (RuntimeError for others)",
        """
        r = torch.tensor(2.0).permute()
        """),
    "scalar_conversion_error": Known(
        "float(t) / int(t) of a tensor of several elements: ValueError ('only one element"
        " tensors can be converted to Python scalars'); numbagrad RuntimeError",
        """
        r = float(torch.ones(3))
        """),
    "argmax_bool": Known(
        "argmax / argmin of a bool tensor: RuntimeError, numbagrad computes",
        """
        r = torch.tensor([True, False]).argmax()
        """),
    "inplace_on_empty": Known(
        "an in-place op on an empty tensor of 2 or more dimensions (also .grad accumulation"
        " into one): runs; numbagrad raises RuntimeError 'unsupported operation: more than one"
        " element of the written-to tensor refers to a single memory location'",
        """
        r = torch.zeros(5, 4, 0)
        r.sub_(1)
        """),
    "pow_bool": Known(
        "bool tensor ** bool: dtype bool, numbagrad int64; True ** bool tensor: RuntimeError"
        " (\"pow\" not implemented for 'Bool'), numbagrad computes",
        """
        b = torch.tensor([True, False])
        r = b ** False
        r = torch.pow(b, True)
        r = True ** b
        """),
    "sub_bool_scalar": Known(
        "subtraction with a Python bool (x - True, True - x, torch.sub(x, True), x.sub_(True),"
        " x -= True): RuntimeError, numbagrad computes",
        """
        x = torch.tensor([1.0, 2.0])
        r = x - True
        r = True - x
        r = torch.sub(x, False)
        x.sub_(True)
        """),
    "matmul_empty_batch": Known(
        "batched matmul with an empty inner dimension ((3, 2, 0) @ (0, 3)): zeros of shape"
        " (3, 2, 3); numbagrad RuntimeError \"shape '[-1, 0]' is invalid\"",
        """
        r = torch.zeros(3, 2, 0) @ torch.zeros(0, 3)
        """),
    "std_constant_row": Known(
        "the gradient of std(dim) over a row of equal values",
        """
        x = torch.tensor([[1.0, 1.0, 1.0], [1.0, 2.0, 3.0]], requires_grad=True)
        x.std(1).sum().backward()  # compare: x.grad
        """),
    "reduce_dim_0d": Known(
        "reductions with a dim on a 0-d tensor",
        """
        x = torch.tensor(2.0, requires_grad=True)
        r = x.sum(0)
        r = x.amax(-1, keepdim=True)
        r = x.max(0)
        r = x.argmin(0)
        r = x.norm(dim=-1)
        """),
    "mT_low_dim": Known(
        ".mT on a 0-d tensor (allowed) and a 1-d one (RuntimeError)",
        """
        r = torch.tensor(2.0).mT
        r = torch.tensor([2.0, 3.0]).mT
        """),
    "chunk_one_grad": Known(
        "gradients through chunk(1)",
        """
        x = torch.ones(3, 2, requires_grad=True)
        (x.chunk(1)[0] * 2).sum().backward()  # compare: x.grad
        """),
    "mixed_int_advanced_index": Known(
        "an int and a list index with a slice between them",
        """
        x = torch.arange(24.0).reshape(2, 3, 4)
        r = x[0, :, [0, 1]]
        r = x[[0, 1], :, 0]
        """),
    "inplace_on_expanded": Known(
        "in-place ops on an expanded tensor",
        """
        x = torch.ones(3, requires_grad=True) * 1
        x.expand(2, 3).add_(1)
        """),
    "setitem_advanced_value_grad": Known(
        "x[index tensor or mask] = v keeps v's gradient",
        """
        v = torch.tensor([1.0, 2.0], requires_grad=True)
        y = torch.zeros(4)
        y[torch.tensor([0, 2])] = v * 2
        y[torch.tensor([False, True, False, True])] = v * 3
        y.sum().backward()  # compare: v.grad
        """),
    "bitwise_float_large_unread": Known(
        "&, |, ~ on a float tensor of 2**15 elements or more whose values were not read yet"
        " (a lazy result, torch.ones(40000), torch.rand(400, 300) * 2): RuntimeError /"
        " TypeError; numbagrad computes (once its values are read, e.g. by .numpy(), it"
        " refuses: the fixed bitwise_float_large* repros read them first)",
        """
        r = torch.ones(40000) & torch.ones(40000)
        r = (torch.ones(400, 300) * 2) | 1.5
        r = ~(torch.ones(400, 300) * 2)
        """),
    "index_single_slice_grad_fn": Known(
        "an index of one slice that selects a whole dimension (x[:], x[0:], x[0:5] of 2 rows,"
        " x[0:0] of 0 rows): grad_fn SliceBackward0; numbagrad AliasBackward0 (since the fix"
        " of basic_index_grad_fn; x[:, :] is AliasBackward0 in both)",
        """
        x = torch.ones(2, 3, requires_grad=True) * 1
        r = x[:]
        r = x[0:5]
        """),
    "int_pow_zero": Known(
        "an integer or bool tensor ** 0 (or ** False): all ones; numbagrad returns wrong values"
        " ([[1, 1], [1, 2], [2, 2]] for [[1, 2], [3, 4], [5, 6]]) (a recent regression)",
        """
        x = torch.tensor([[1, 2], [3, 4], [5, 6]])
        r = x.pow(0)
        r = torch.pow(x.t(), False)
        """),
    "mse_loss_empty_mean_backward": Known(
        "backward of F.mse_loss (mean) over empty tensors: runs (the loss is nan); numbagrad"
        " raises ZeroDivisionError (since mse_loss got its own node)",
        """
        x = torch.zeros(1, 0, requires_grad=True)
        F.mse_loss(x, torch.zeros(1, 0)).backward()  # compare: x.grad
        """),
    "nll_loss_backward_inf_grad": Known(
        "the gradient of cross_entropy / nll_loss (reduction='none') with an infinite incoming"
        " gradient: inf at the classes that are not the target; numbagrad nan (inf * 0 from"
        " the one-hot)",
        """
        x = torch.tensor([[2.5, 1.75]], requires_grad=True)
        l = F.cross_entropy(x, torch.tensor([1]), reduction='none')
        g = torch.autograd.grad(l, x, torch.tensor([np.inf]))
        """),
    "relu_grad_nan": Known(
        "the gradient of relu at nan: the incoming gradient passes (1); numbagrad 0 (the"
        " value, nan, was fixed: relu(nan) on the tracker)",
        """
        x = torch.tensor([np.nan, -1.0, 2.0], requires_grad=True)
        x.relu().sum().backward()  # compare: x.grad
        """),
    "retain_grad_write_through_view": Known(
        "t.retain_grad(), then an in-place op through a view of t (t[0].mul_(3)): t.grad is"
        " the gradient of t's new value ([2, 2] below); numbagrad's is that of the old value"
        " ([6, 2]) (an in-place op on t itself was fixed: retain_grad_then_inplace)",
        """
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        t = x * 1
        t.retain_grad()
        t[0].mul_(3)
        (t * 2).sum().backward()  # compare: t.grad
        """),
    "sign_create_graph_dtype": Known(
        "a gradient through sign() with create_graph=True: float32 zeros; numbagrad's are"
        " int64",
        """
        x = torch.tensor([0.75], requires_grad=True)
        g, = torch.autograd.grad((x.sign() * 2).sum(), x, create_graph=True)
        """),
    "setitem_into_expanded_grad_value": Known(
        "y[i] = v into an expanded tensor (y = x.expand(3, 2)) with v requiring grad: the"
        " write lands in x's memory (every row shows it, and x); numbagrad's write is lost: y"
        " and x keep their old values",
        """
        x = torch.tensor([-2.25, 1.0])
        y = x.expand(3, 2)
        y[1] = torch.tensor([2.0, 3.0], requires_grad=True)  # compare: y, x
        """),
    "prod_0d_nonfinite_grad": Known(
        "the gradient of prod() of a 0-d tensor holding nan or inf: the incoming gradient (1);"
        " numbagrad nan (result / input)",
        """
        x = torch.tensor(np.nan, requires_grad=True)
        x.prod().backward()  # compare: x.grad
        """),
    "prod_0d_zero_grad_shape": Known(
        "autograd.grad of prod() of a 0-d tensor holding 0: a 0-d gradient; numbagrad's has"
        " shape (1,) (backward() gives .grad the right shape)",
        """
        x = torch.zeros((), requires_grad=True)
        g = torch.autograd.grad(x.prod(), x)
        """),
    "prod_two_zeros_nonfinite_grad": Known(
        "the gradient of prod() over all elements, with two or more zeros and a nan or inf:"
        " zeros everywhere; numbagrad nan at the zeros (prod(dim) gives nan in both)",
        """
        x = torch.tensor([0.0, 0.0, np.nan], requires_grad=True)
        x.prod().backward()  # compare: x.grad
        """),
    "rand_like_nonfloat": Known(
        "torch.rand_like / randn_like of an integer or bool tensor: RuntimeError (not"
        " implemented for 'Long'); numbagrad returns a tensor",
        """
        r = torch.randn_like(torch.tensor([1, 2])).shape
        r = torch.randn_like(torch.zeros(0, dtype=torch.bool)).shape
        """),
    "stale_view_error_precedence": Known(
        "an op that fails its own check on an output of split whose base was since written in"
        " place: RuntimeError (Output 0 of Split is a view and its base ... has been modified"
        " inplace), PyTorch's edges being collected before its kernel runs; numbagrad raised"
        " the op's error (IndexError)",
        """
        x = torch.zeros(1, 4, 2, requires_grad=True) * 2
        s = x.split(1, 2)
        x[0, 0, 0] = -0.25
        m = s[0].amax(5)
        """),
    "setitem_mask_value_shape_error": Known(
        "x[mask] = value of the wrong shape: RuntimeError (shape mismatch); numbagrad TypeError",
        """
        y = torch.zeros(3)
        y[torch.tensor([True, False, True])] = torch.ones(2, 1)
        """),
    "setitem_full_index_0d_grad_fn": Known(
        "x[...] = v on a 0-d tensor: grad_fn CopyBackwards (a number or a tensor); numbagrad"
        " FillBackward3 (since the fix of setitem_full_index_grad_fn, right for n-d tensors)",
        """
        y = torch.tensor(2.0, requires_grad=True) * 1
        y[...] = -2.5
        """),
    "maximum_number_first": Known(
        "torch.maximum(2, x) / torch.minimum(2, x): TypeError (argument 'input' must be"
        " Tensor); numbagrad computes (torch.sub / torch.div with a number first were fixed:"
        " number_first_function)",
        """
        x = torch.ones(3, requires_grad=True)
        r = torch.maximum(2, x)
        r = torch.minimum(x, 2)
        """),
    "linear_nd_grad_fn": Known(
        "F.linear with a bias on a 1-d or 3-d input: grad_fn ViewBackward0; numbagrad"
        " AddBackward0 (a 2-d input was fixed: linear_grad_fn)",
        """
        x = torch.ones(2, 3, requires_grad=True)
        r = F.linear(x[0], torch.ones(4, 3), torch.ones(4))
        r = F.linear(x[None], torch.ones(4, 3), torch.ones(4))
        """),
    "pow_bool_exponent_grad": Known(
        "the gradient of x ** False at x == 0: nan (False * 0 ** -1); numbagrad 0 (as for"
        " x ** 0)",
        """
        x = torch.tensor([-0.5, 0.0], requires_grad=True)
        g = torch.autograd.grad(torch.pow(x, False).sum(), x)
        """),
    "advanced_index_layout": Known(
        "advanced indexing with a slice before the index (x[:, i], x[..., i]): the result is"
        " contiguous, so .view() works and flatten is a view (ViewBackward0); numbagrad's"
        " (NumPy's layout) is not: view() raises RuntimeError, flatten copies"
        " (UnsafeViewBackward0)",
        """
        x = torch.ones(3, 2, 4, requires_grad=True)
        r = x[:, torch.tensor([0, 1])].view(-1)
        """),
    "cat_stack_layout": Known(
        "torch.cat / torch.stack of non-contiguous (transposed) inputs: a contiguous result, so"
        " .view() works; numbagrad's keeps the inputs' layout: view() raises RuntimeError,"
        " flatten copies",
        """
        x = torch.ones(3, 2, requires_grad=True)
        r = torch.cat((x.t(), x.t()), dim=0).view(12)
        r = torch.stack((x.t(), x.t()), dim=0).view(12)
        """),
    "elementwise_layout": Known(
        "an elementwise result of a non-contiguous input keeps the input's memory layout, so"
        " .view() of it raises, .contiguous() copies (CloneBackward0), flatten/reshape copy;"
        " numbagrad's result is contiguous (view works, contiguous() returns it, reshape is a"
        " view that aliases it)",
        """
        x = torch.ones(3, 2, requires_grad=True)
        r = (x.t() + 1).contiguous()
        r = (x.t() + 1).view(-1)
        """),
    "inplace_partial_overlap": Known(
        "an in-place op whose operand overlaps the written tensor in part (x[::2] *= x):"
        " RuntimeError (some elements of the input tensor and the written-to tensor refer to a"
        " single memory location); numbagrad computes",
        """
        x = torch.tensor([[[1, 0], [-1, 0]]])
        y = x[::2]
        y *= x
        """),
    "activation_integer_input": Known(
        "gelu, silu or softplus of an integer or bool tensor: NotImplementedError (no kernel);"
        " hardtanh of uint8 with a negative bound: RuntimeError; numbagrad computed them",
        """
        a = torch.nn.functional.softplus(torch.tensor([1, 2]))
        b = torch.nn.functional.hardtanh(torch.tensor([1, 2], dtype=torch.uint8))
        """),
    "pairwise_distance_node": Known(
        "pairwise_distance (and triplet_margin_loss's distances) is ATen's norm(x, p, dim):"
        " grad_fn NormBackward1; numbagrad LinalgVectorNormBackward0",
        """
        x = torch.tensor([[1.0, -2.0], [0.5, 3.0]], requires_grad=True)
        d = torch.nn.functional.pairwise_distance(x, torch.ones(2, 2))
        """),
    "bce_with_logits_target_dtype": Known(
        "binary_cross_entropy_with_logits of float64 logits and a float32 target: a float32 loss"
        " (PyTorch writes it into 1 - target in place); numbagrad float64. And a weight or"
        " pos_weight that requires grad: RuntimeError (not differentiable); numbagrad ran",
        """
        x = torch.tensor([1.0, -2.0], dtype=torch.float64, requires_grad=True)
        l = torch.nn.functional.binary_cross_entropy_with_logits(x, torch.tensor([1.0, 0.0]))
        w = torch.nn.functional.binary_cross_entropy_with_logits(x.float(), torch.tensor([1.0, 0.0]), pos_weight=torch.ones(2, requires_grad=True))
        m = torch.nn.functional.binary_cross_entropy_with_logits(x, torch.tensor([1.0, 0.0]), weight=torch.tensor([0.5], dtype=torch.float64))
        """),
    "elu_backward_nan": Known(
        "the gradient of elu / selu / celu at a NaN input: the positive side's slope (PyTorch's"
        " x <= 0 test sends NaN there); numbagrad NaN",
        """
        x = torch.tensor([np.nan, -1.0], requires_grad=True)
        torch.nn.functional.selu(x).sum().backward()  # compare: x.grad
        """),
    "inplace_negative_slope": Known(
        "leaky_relu_ / elu_ / celu_ / rrelu_ in place with a negative slope: PyTorch's in-place"
        " node (LeakyReluBackward1), whose backward raises RuntimeError; numbagrad recorded the"
        " out-of-place node and gave its gradient",
        """
        x = torch.tensor([-1.0, 2.0], requires_grad=True)
        y = x * 1
        torch.nn.functional.leaky_relu_(y, -0.5)
        y.sum().backward()
        """),
    "hardsigmoid_double_backward": Known(
        "hardsigmoid's gradient under create_graph: grad_fn NotImplemented, and a second"
        " derivative raises RuntimeError; numbagrad gave zeros (AliasBackward0)",
        """
        x = torch.tensor([0.5, 1.0], requires_grad=True)
        g, = torch.autograd.grad(torch.nn.functional.hardsigmoid(x).sum(), x, create_graph=True)
        gg = torch.autograd.grad(g.sum(), x)
        """),
    "saved_integer_output_requires_grad": Known(
        "cummax / cummin's gradient under create_graph, the incoming gradient a constant: does"
        " not require grad; numbagrad's did (its saved indices, an integer output, were unpacked"
        " as requiring grad: ScatterAddBackward0)",
        """
        x = torch.tensor([-2.0, -2.75], requires_grad=True)
        g, = torch.autograd.grad(torch.cummax(x, 0)[0], x, torch.tensor([1.0, -1.0]), create_graph=True)
        """),
    "prelu_weight_second_order": Known(
        "prelu's gradients under create_graph are functions of the weight (PyTorch's"
        " _prelu_kernel_backward): the weight's gradient requires grad even where the input and"
        " the incoming gradient do not, and a second derivative reaches the weight (zeros);"
        " numbagrad's did not require grad / gave None",
        """
        w = torch.tensor([-0.25], requires_grad=True)
        y = torch.nn.functional.prelu(torch.tensor([[-2.5], [-0.25]]), w)
        y.sum().backward(create_graph=True)  # compare: w.grad
        """),
    "take_empty_backward": Known(
        "the backward of take (a gather) with an empty index: zeros; numbagrad raised"
        " ValueError (a reshape of the empty rows)",
        """
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        x.take(torch.tensor([], dtype=torch.int64)).sum().backward()  # compare: x.grad
        """),
    "cummax_saves_input": Known(
        "cummax / cummin save their input (CummaxBackward0 unpacks self): writing into it before"
        " backward is RuntimeError (modified by an inplace operation); numbagrad ran",
        """
        x = torch.tensor([1.5, -3.0, 0.5], requires_grad=True)
        v = x * 1
        m = v.cummin(-1)
        with torch.no_grad(): v.mul_(0.5)
        m[0].sum().backward()
        """),
    "advanced_index_empty_ellipsis": Known(
        "advanced indices on either side of an Ellipsis that stands for no dimension stay"
        " adjacent (their dims in place): x[0:0, [1], ..., [2]] of a (1, 2, 3) tensor is (0, 1);"
        " numbagrad took NumPy's rule (the Ellipsis separates them: (1, 0))",
        """
        x = torch.arange(6.0).reshape(1, 2, 3).requires_grad_()
        a = x[0:0, [1], ..., [2]]
        b = x[0:1, [0, 1], ..., [0, 2]]
        """),
    "transpose_0d_create_graph": Known(
        "transpose(0, 0) of a 0-d tensor: under create_graph its gradient is transposed too"
        " (TransposeBackward0); numbagrad passed it on (MulBackward0)",
        """
        x = torch.tensor(-1.5, requires_grad=True)
        v = x * 1
        t = v.transpose(0, 0)
        g, = torch.autograd.grad((t * t).sum(), v, create_graph=True)
        """),
    "setitem_leading_ones_clone": Known(
        "x[basic] = v with v of the region's shape but for leading ones (v[None] written into a"
        " row, or an empty region): under create_graph v's gradient is CloneBackward0; numbagrad"
        " gave ViewBackward0 (and SumBackward1 for a v that broadcasts, PyTorch ViewBackward0)",
        """
        y = torch.zeros(2, 4)
        c = torch.zeros(1, 1, 4, requires_grad=True)
        y[None, 1:] = c
        g, = torch.autograd.grad((y * torch.ones(2, 4, requires_grad=True)).sum(), c, create_graph=True)
        """),
    "hook_on_unused_output": Known(
        "a hook on an output of a multi-output node (aminmax) that received no gradient, the"
        " node run for another output: PyTorch calls it with None (lambda g: g + 1 raises"
        " TypeError); numbagrad did not call it",
        """
        x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        v = torch.aminmax(x)
        h = v[1].register_hook(lambda g: g + 1)
        v[0].backward()
        """),
    "cummax_empty_create_graph": Known(
        "cummax / cummin of an empty tensor: the gradient is the input itself (PyTorch's"
        " cummaxmin_backward returns it), so under create_graph a leaf's .grad requires grad"
        " (CopyBackwards); numbagrad's did not",
        """
        c = torch.zeros(0, 2, requires_grad=True)
        v = torch.cummin(c, 0)
        (v[0].sigmoid() * torch.zeros(0, 2)).sum().backward(create_graph=True)  # compare: c.grad
        """),
    "index_copy_source_grad_node": Known(
        "index_copy's gradient of the source under create_graph: ExpandBackward0 (PyTorch's"
        " index_select(...).expand_as(source)); numbagrad ViewBackward0",
        """
        x = torch.tensor([-2.5])
        s = torch.tensor([2.64], requires_grad=True)
        y = x.index_copy(-1, torch.tensor([0]), s)
        g, = torch.autograd.grad((y * y).sum(), s, create_graph=True)
        """),
    "float_into_small_int_range": Known(
        "a float written into an integer tensor (fill_, x[i] = v) outside its range (-2.5 or"
        " 255.5 into uint8, NaN into any): RuntimeError (value cannot be converted without"
        " overflow); numbagrad wrapped it, or raised OverflowError / ValueError",
        """
        x = torch.tensor([4, 3], dtype=torch.uint8)
        x.fill_(-2.5)
        x[0] = 255.5
        y = torch.tensor([1, 2])
        y[1] = np.nan
        """),
    "clamp_nan_bound": Known(
        "clamp with a NaN bound: NaN everywhere; numbagrad ignored the bound",
        """
        x = torch.tensor([1.0, -2.0], requires_grad=True)
        y = x.clamp(min=np.nan)
        z = torch.tensor([1, 2]).clamp(max=np.nan)
        """),
    "inf_norm_empty": Known(
        "the inf norm (torch.dist(x, y, inf), linalg.vector_norm) over an empty dim:"
        " RuntimeError (no identity); numbagrad raised IndexError (amax's)",
        """
        d = torch.dist(torch.zeros(0, 1), torch.zeros(1), float('inf'))
        """),
    "index_fill_0d_scalar": Known(
        "index_copy (index_fill) of a 0-d tensor under create_graph: the gradient; numbagrad's"
        " index_fill made a NumPy scalar, taken for a device array (RuntimeError: no NVIDIA"
        " driver)",
        """
        x = torch.tensor(-2.75, dtype=torch.float64, requires_grad=True)
        y = torch.index_copy(x, 0, torch.tensor([0]), torch.tensor(2.6, dtype=torch.float64))
        (y * -2.5).sum().backward(create_graph=True)  # compare: x.grad
        """),
    "threshold_expanded": Known(
        "threshold_ of an expanded view (its elements share memory): PyTorch writes it (its"
        " kernel skips the overlap check); numbagrad raised RuntimeError",
        """
        x = torch.tensor([0.62, -1.771], dtype=torch.float64)
        torch.threshold_(x.expand(2, 2), -1.0, 1.5)  # compare: x
        """),
    "index_put_logcumsumexp_layout": Known(
        "index_put of a non-contiguous tensor is laid out as its input (a clone, then"
        " index_put_), so a later view() of it can fail as PyTorch's; logcumsumexp's result is"
        " C-contiguous; numbagrad's were the other way round",
        """
        x = torch.arange(12).reshape(3, 4).T
        y = torch.index_put(x, (torch.tensor([0, 1]),), torch.tensor([7]))
        z = y[1:3].view(6)
        """),
    "index_put_value_grad_node": Known(
        "index_put's gradient of a value of the region's shape (with a leading 1) under"
        " create_graph: IndexBackward0 (the region's gradient itself); numbagrad reshaped it"
        " (ViewBackward0)",
        """
        x = torch.tensor([[1.0, 2.0, 2.0]])
        c = torch.tensor([[-0.25, -1.0, 2.0]], requires_grad=True)
        y = torch.index_put(x, (torch.tensor([0]),), c)
        g, = torch.autograd.grad((y * y).sum(), c, create_graph=True)
        """),
    "prod_dim_of_one_with_zero": Known(
        "prod(dim) over a dim of size 1 of a tensor holding a zero, under create_graph: the"
        " gradient is the incoming one unsqueezed (PyTorch's prod_safe_zeros_backward), which"
        " need not require grad; numbagrad multiplied the other elements out (requires grad)",
        """
        x = torch.tensor([[0.0], [2.0]], requires_grad=True)
        v = torch.prod(x, -1)
        (v * torch.tensor([1.5, -1.0])).sum().backward(create_graph=True)  # compare: x.grad
        """),
    "view_requires_grad_after_base": Known(
        "a view made before its base's requires_grad_(): requires grad (and ops on it record"
        " a graph); numbagrad's view does not",
        """
        x = torch.zeros(3, 2)
        v = x.t()
        x.requires_grad_()
        r = v.exp()
        """),
    "sort_stable_positional_dim": Known(
        "sort / argsort with stable= and dim (or descending) given by position: TypeError"
        " (PyTorch's stable overload takes them by keyword only); numbagrad sorted",
        """
        x = torch.tensor([[3.0, 1.0, 2.0]])
        s = x.sort(1, stable=True)
        a = x.argsort(1, stable=True)
        """),
    "bool_operand_backward": Known(
        "atan2 (bool first) or logaddexp / logaddexp2 (either) of a bool tensor and a tensor"
        " that requires grad, then backward: RuntimeError (PyTorch's formula negates or"
        " subtracts the bool operand: 'Negation, the `-` operator, on a bool tensor is not"
        " supported'); numbagrad's gradient was computed",
        """
        b = torch.tensor([True, False])
        y = torch.tensor([-0.5, 2.0], requires_grad=True)
        torch.atan2(b, y).sum().backward()
        """),
    "conv_zero_in_channels": Known(
        "a convolution of an input with 0 channels (and a weight of 0 input channels): PyTorch"
        " returns no elements: 0 channels (its Empty backend), the input's dtype unchecked against"
        " the weight's; numbagrad convolved to the weight's channels",
        """
        y = F.conv1d(torch.zeros(3, 0, 5), torch.zeros(1, 0, 1))
        """),
    "put_saves_source": Known(
        "put / put_ whose source requires grad, the source then written in place (under"
        " no_grad) before backward: RuntimeError (PyTorch's PutBackward0 keeps the source for"
        " its gradient); numbagrad's gradient was computed (seed 410923)",
        """
        x = torch.zeros(3, requires_grad=True)
        s = torch.tensor([0.031, -1.124], requires_grad=True)
        v = (x * 1).put(torch.tensor([1, 0]), s)
        with torch.no_grad(): s.mul_(0.5)
        v.sum().backward()
        """),
    "reflect_pad_empty_planes": Known(
        "F.pad(mode='reflect') of an input with a 0 among its non-batch dims (a 2-d (0, 3)"
        " input is unbatched): RuntimeError (PyTorch's reflection pad kernels take an empty"
        " batch only, as its replication ones); numbagrad padded (seed 408365)",
        """
        a = F.pad(torch.zeros(0, 3), (0, 1), mode='reflect')
        b = F.pad(torch.zeros(2, 0, 3, 3), (1, 1, 1, 1), mode='reflect')
        """),
    "median_of_nothing_narrow_integer": Known(
        "median / nanmedian of an empty int8, uint8 or int16 tensor: 0 (PyTorch's NaN cast"
        " goes through a 32-bit int, whose lowest value has 0 low bits); numbagrad gave the"
        " dtype's lowest value (seed 412927)",
        """
        a = torch.median(torch.tensor([], dtype=torch.int8))
        b = torch.tensor([], dtype=torch.int16).nanmedian()
        c = torch.tensor([[5, 5, 3]], dtype=torch.uint8)[-1:-1:3].median()
        """),
    "copysign_saves_result": Known(
        "copysign whose other requires grad (self not), its result then written in place"
        " before backward: RuntimeError (PyTorch's CopysignBackward0 saves the result whichever"
        " input requires grad); numbagrad's gradient was computed (seed 418790)",
        """
        x = torch.tensor([1.34, -1.73], dtype=torch.float64)
        c = torch.tensor(-0.5, requires_grad=True)
        v = x.copysign(c)
        v[0].exp_()
        v.sum().backward()
        """),
    "addcdiv_grad_nodes": Known(
        "addcdiv's gradients of tensor1 and tensor2 under create_graph: MulBackward0"
        " (PyTorch's grad * (value / tensor2) and -grad * (value * tensor1 / tensor2**2));"
        " numbagrad's DivBackward0 (seed 421770)",
        """
        x = torch.tensor([[0.0, 2.0], [-1.5, -3.0]], requires_grad=True)
        y = torch.tensor([[1.25, 0.75], [2.75, 0.75]], requires_grad=True)
        z = torch.tensor([[2.158, 0.525], [2.665, 1.597]], requires_grad=True)
        v = x.clone().addcdiv_(y, z, value=2)
        g, h = torch.autograd.grad((v.expm1() * torch.tensor([[-1.4, 0.2], [3.0, -1.0]])).sum(), [y, z], create_graph=True)
        """),
    "group_norm_weight_grad_node": Known(
        "group_norm's weight gradient under create_graph when the input does not require"
        " grad: ViewBackward0 (PyTorch's backward sums grad * xhat from the forward's mean and"
        " rstd, which require grad with the weight, and views the sum as the weight);"
        " numbagrad's AliasBackward0 (seed 389006)",
        """
        x = torch.tensor([[2.016, -0.786, 0.961, 1.22]])
        w = torch.tensor([-0.022, -0.647, -2.182, -2.28], requires_grad=True)
        y = F.group_norm(x, 2, w)
        g, = torch.autograd.grad((y * torch.tensor([[-0.388, -1.582, 1.0, 2.0]])).sum(), w, create_graph=True)
        """),
}


def _is_leaf(t) -> bool:
    """``t.is_leaf``; False where asking raises (a view of a multi-output op whose base was
    written in place: PyTorch refuses to re-derive its node)."""
    try:
        return t.is_leaf
    except RuntimeError:
        return False


def _retained_nonleaf(t) -> bool:
    """``t`` is a non-leaf whose ``.grad`` backward fills (retain_grad); False where asking
    for its node raises (see ``_is_leaf``)."""
    try:
        return not t.is_leaf and t.retains_grad
    except RuntimeError:
        return False


def _window_in_padding(n, k, stride, pad, dilation, ceil) -> bool:
    """Whether a max pooling of a dim of size ``n`` has a window that reads no element (a
    dilated window over the padding: PyTorch's output there is -inf with an index past the
    dim)."""
    span = dilation * (k - 1) + 1
    if n + 2 * pad < span:
        return False  # (refused: the output would be empty)
    out = (n + 2 * pad - span + (stride - 1 if ceil else 0)) // stride + 1
    if ceil and (out - 1) * stride >= n + pad:
        out -= 1
    return any(not any(0 <= o * stride - pad + j * dilation < n for j in range(k))
               for o in range(out))


def _same_values(a, b) -> bool:
    """Whether tensors ``a`` and ``b`` hold the same values (NaN equal to NaN)."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    return bool(((a == b) | ((a != a) & (b != b))).all())


def avoid(key: str) -> bool:
    """True while mismatch class ``key`` is open: the generator then avoids it."""
    if key not in KNOWN_OPEN and key not in FIXED:
        raise KeyError(f"unknown mismatch class {key!r}: add it to KNOWN_OPEN or FIXED")
    return key in KNOWN_OPEN

# ---------------------------------------------------------------------------------------------
# Knobs: how often each family of statements is chosen, and the shape of programs.
WEIGHTS = {
    "unary": 12, "pow": 4, "clamp": 3, "binary": 14, "where": 3, "compare": 4, "reduce": 12,
    "matmul": 6, "view": 10, "index": 8, "setitem": 6, "inplace": 7, "hook": 3, "retain": 2,
    "create": 2, "convert": 3, "loss": 5, "misc": 2, "nograd": 2, "detach": 2, "join": 4,
    "act": 8, "api": 8,
    # the API real programs use that the families above never wrote (see "the API real
    # programs use" below)
    "arith": 8, "move": 7, "scatter": 5, "sortred": 6, "nnf": 6, "factory": 2, "print": 2,
    "wrong": 1,
}
LARGE_P = 0.12  # a program on large inputs (>= 1e5 elements: the lazy and fused paths)
NAN_P = 0.08  # a program whose inputs hold NaN and inf, and whose ops ignore domains
ERROR_KEEP = 0.35  # of the statements PyTorch refuses, the share kept (error parity)
BODY = (4, 22)  # statements in a program's body (attempts)
LARGE = 1 << 15  # a tensor this big may be lazy in numbagrad: its values are read late
MAX_ITEMS = 2_000_000  # no broadcast beyond this many elements (memory)
# the exception types compared (NotImplementedError, which PyTorch raises for a dtype a kernel
# lacks, is a RuntimeError: ``except RuntimeError`` catches it)
# (OverflowError: int() of an infinite 0-d tensor, Python's own error in both libraries)
CATEGORIES = (IndexError, ValueError, TypeError, RuntimeError, OverflowError)


def _category(exc) -> str | None:
    if exc is None:
        return None
    for c in CATEGORIES:
        if isinstance(exc, c):
            return c.__name__
    return type(exc).__name__


# ---------------------------------------------------------------------------------------------
# Programs


@dataclass
class Stmt:
    code: str  # one line of Python over ``torch``, ``F`` and ``np`` ("" compares only)
    tag: str  # what it exercises ("unary:exp", "setitem:mask", ...): mismatches group by it
    touches: tuple = ()  # expressions whose outcome is compared after the statement
    values: bool = True  # compare values now (False: a large result, read at the end)
    rtol: float = 0.0  # relative error the two libraries' rounding may explain
    loose: tuple = ()  # touches whose grad_fn name is not compared (a KNOWN_OPEN class)
    # gradients: the absolute slack scales with the largest gradient of the statement (a
    # gradient that sums to zero up to rounding, next to the ones of the other inputs)
    shared_scale: bool = False


@dataclass
class Mismatch:
    index: int  # the statement
    tag: str
    check: str  # raises, value, dtype, shape, requires_grad, is_leaf, grad_fn, type, ...
    detail: str  # torch's outcome against numbagrad's
    expr: str = ""

    @property
    def key(self) -> str:
        return f"{self.tag} / {self.check}"


class Invalid(Exception):
    """The program is not valid PyTorch any more (a statement refers to a removed one)."""


def render(stmts, mismatch: Mismatch | None = None) -> str:
    """The program as Python a human can paste next to ``import torch``."""
    lines = ["import numpy as np", "import torch", "import torch.nn.functional as F", ""]
    for i, st in enumerate(stmts):
        line = st.code if st.code else f"# compare {', '.join(st.touches)}"
        if mismatch is not None and i == mismatch.index:
            what = mismatch.check + (f" of {mismatch.expr}" if mismatch.expr else "")
            line += f"  # <-- MISMATCH {what}: {mismatch.detail}"
        lines.append(line)
    return "\n".join(lines)


def namespace(lib) -> dict:
    return {"torch": lib, "F": lib.nn.functional, "np": np}


def _exec(code, ns):
    try:
        exec(code, ns)
    except Exception as e:  # noqa: BLE001 - compared by category
        return e
    return None


def run_program(stmts, torch_lib=None) -> Mismatch | None:
    """Run ``stmts`` in PyTorch and numbagrad side by side; the first difference, or None."""
    if torch_lib is None:
        import torch as torch_lib
    ns_t, ns_n = namespace(torch_lib), namespace(numbagrad)
    with warnings.catch_warnings(), numbagrad.enable_grad():
        warnings.simplefilter("ignore")
        for i, st in enumerate(stmts):
            if st.code:
                err_t = _exec(st.code, ns_t)
                if isinstance(err_t, (NameError, AttributeError, SyntaxError, KeyError)):
                    raise Invalid(f"statement {i} in PyTorch: {err_t!r}")
                err_n = _exec(st.code, ns_n)
                if err_t is not None or err_n is not None:
                    if _category(err_t) != _category(err_n):
                        return Mismatch(i, st.tag, "raises",
                                        f"torch {_describe(err_t)}, numbagrad {_describe(err_n)}")
                    continue
            outs = []
            for expr in st.touches:
                try:
                    a = eval(expr, ns_t)
                except (NameError, AttributeError) as e:
                    raise Invalid(f"statement {i} in PyTorch: {e!r}") from None
                try:
                    b = eval(expr, ns_n)
                except Exception as e:  # noqa: BLE001 - numbagrad has no such thing
                    b = e
                outs.append((expr, a, b))
            # gradients: the largest gradient of the statement sets the scale of its rounding
            # (at least 1: a gradient that cancels to 0 next to others of order 1)
            floor = max(_scale([a for _, a, _ in outs]) * 0.1, 1.0) if st.shared_scale else 0.0
            for expr, a, b in outs:
                diff = compare(a, b, st.values, st.rtol, expr not in st.loose, floor)
                if diff is not None:
                    return Mismatch(i, st.tag, diff[0], diff[1], expr)
    return None


def _describe(exc) -> str:
    if exc is None:
        return "ran"
    msg = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"raised {type(exc).__name__}({msg[:90]!r})"


# ---------------------------------------------------------------------------------------------
# Comparing outcomes


def _dtype_name(dt) -> str:
    return str(dt).replace("torch.", "numbagrad.")


def _grad_fn_name(t):
    return None if t.grad_fn is None else type(t.grad_fn).__name__


def _scale(items) -> float:
    """The largest finite magnitude in PyTorch's tensors (tuples searched too)."""
    import torch

    m = 0.0
    for a in items:
        if isinstance(a, (tuple, list)):
            m = max(m, _scale(a))
        elif isinstance(a, torch.Tensor) and a.is_floating_point() and a.numel():
            v = a.detach().double().nan_to_num(0.0, 0.0, 0.0).abs().max()
            m = max(m, float(v))
    return m


def compare(a, b, values=True, rtol=0.0, grad_fn=True, floor=0.0):
    """None when PyTorch's ``a`` and numbagrad's ``b`` agree, else (check, detail)."""
    import torch

    if isinstance(a, torch.Tensor):
        if not isinstance(b, numbagrad.Tensor):
            return "type", f"torch Tensor, numbagrad {type(b).__name__}"
        sa, sb = _summary(a, grad_fn, values), _summary(b, grad_fn, values)
        for check in ("shape", "dtype", "requires_grad", "is_leaf", "grad_fn"):
            if sa[check] != sb[check]:
                return check, f"torch {sa[check]}, numbagrad {sb[check]}"
        if values:
            if isinstance(sa["values"], str) or isinstance(sb["values"], str):
                if sa["values"] != sb["values"]:
                    return "read", f"torch {_short(sa['values'])}, numbagrad {_short(sb['values'])}"
                return None
            return compare_arrays(sa["values"], sb["values"], rtol, floor)
        return None
    if isinstance(a, (tuple, list)) and not isinstance(a, torch.Size):
        if not isinstance(b, (tuple, list)) or len(a) != len(b):
            return "type", f"torch {type(a).__name__} of {len(a)}, numbagrad {_short(b)}"
        for x, y in zip(a, b):
            diff = compare(x, y, values, rtol, grad_fn, floor)
            if diff is not None:
                return diff
        return None
    if isinstance(a, str):  # (repr and str: numbagrad's module name stands for torch's)
        if not isinstance(b, str) or a != b.replace("numbagrad", "torch"):
            return "value", f"torch {_short(a)}, numbagrad {_short(b)}"
        return None
    if isinstance(a, torch.dtype):
        same = _dtype_name(a) == _dtype_name(b)
        return None if same else ("dtype", f"torch {a}, numbagrad {_short(b)}")
    if a is None or b is None or isinstance(a, (bool, int, float, torch.Size)):
        if a is None or b is None:
            same = a is None and b is None
        elif isinstance(a, torch.Size):
            same = isinstance(b, tuple) and tuple(a) == tuple(b)
        elif type(a) is not type(b):
            same = False
        elif isinstance(a, float):
            same = compare_arrays(np.float64(a), np.float64(b), rtol) is None
        else:
            same = a == b
        return None if same else ("value", f"torch {_short(a)}, numbagrad {_short(b)}")
    return None  # handles, dtypes and the like: nothing to compare


def _read(f):
    """f(), or what it raised (reading a grad_fn or the values can raise)."""
    try:
        return f()
    except Exception as e:  # noqa: BLE001
        return f"raised {type(e).__name__}: {str(e).strip().splitlines()[0][:80] if str(e) else ''}"


def _summary(t, grad_fn=True, values=True) -> dict:
    """What is compared of a tensor, read on its own side."""
    return {
        "shape": _read(lambda: tuple(t.shape)),
        "dtype": _read(lambda: _dtype_name(t.dtype)),
        "requires_grad": _read(lambda: t.requires_grad),
        "is_leaf": _read(lambda: t.is_leaf),
        "grad_fn": _read(lambda: _grad_fn_name(t)) if grad_fn else None,
        "values": _read(lambda: _values(t)) if values else None,
    }


def _values(t):
    """A tensor's values as an array. autograd.grad may hand back one of PyTorch's ZeroTensors,
    which has no memory to read: reading one through strides segfaults PyTorch 2.13 (seed
    32139, abs's second derivative), so its zeros are made here."""
    if isinstance(t, numbagrad.Tensor):
        return t.detach().numpy()
    if t._is_zerotensor():
        return np.zeros(tuple(t.shape), str(t.dtype).split(".")[-1])
    return t.detach().numpy(force=True)


def _short(v) -> str:
    r = repr(v).replace("\n", " ")
    return r if len(r) < 80 else r[:77] + "..."


BASE_RTOL = {np.dtype(np.float32): 1e-4, np.dtype(np.float64): 1e-9}


def compare_arrays(a: np.ndarray, b: np.ndarray, rtol: float = 0.0, floor: float = 0.0):
    """Values: exact for integers and bools; for floats NaN == NaN, infinities by sign, and
    finite values within ``rtol`` (at least the dtype's own), with an absolute slack of ``rtol``
    times a tenth of the largest magnitude in the tensor (errors of sums and cancellations scale
    with it), and at least ``rtol / 1000`` (a result that is zero up to rounding, such as the
    gradient of x / x)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return "shape", f"torch {a.shape}, numbagrad {b.shape}"
    if a.dtype.kind in "biu" or b.dtype.kind in "biu":
        if a.dtype.kind != b.dtype.kind or not np.array_equal(a, b):
            return "value", f"torch {_short(a)}, numbagrad {_short(b)}"
        return None
    rtol = max(rtol, BASE_RTOL.get(a.dtype, 1e-4))
    a64, b64 = a.astype(np.float64).ravel(), b.astype(np.float64).ravel()
    nan_a, nan_b = np.isnan(a64), np.isnan(b64)
    inf_a, inf_b = np.isinf(a64), np.isinf(b64)
    bad = (nan_a != nan_b) | (inf_a != inf_b) | (inf_a & inf_b & (np.sign(a64) != np.sign(b64)))
    fin = np.isfinite(a64) & np.isfinite(b64)
    if fin.any():
        scale = max(np.abs(a64[fin]).max(), floor)
        slack = rtol * (np.abs(a64[fin]) + 0.1 * scale + 1e-3)
        bad[fin] |= np.abs(a64[fin] - b64[fin]) > slack
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        at = f" at {list(np.unravel_index(k, a.shape))}" if a.ndim else ""
        return "value", (f"torch {a64[k]!r}, numbagrad {b64[k]!r}{at} "
                         f"(rtol {rtol:.0e}, {int(bad.sum())} of {bad.size} differ)")
    return None


# ---------------------------------------------------------------------------------------------
# The generator


def _fmt(v) -> str:
    if isinstance(v, (bool, np.bool_)):
        return "True" if v else "False"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    v = float(v)
    if math.isnan(v):
        return "np.nan"
    if math.isinf(v):
        return "np.inf" if v > 0 else "-np.inf"
    return repr(v)


def _nested(a: np.ndarray) -> str:
    if a.ndim == 0:
        return _fmt(a[()])
    return "[" + ", ".join(_nested(x) for x in a) + "]"


_NP_NAMES = {"float32": "np.float32", "float64": "np.float64", "int64": "np.int64",
             "int32": "np.int32", "bool": "np.bool_", "uint8": "np.uint8", "int8": "np.int8",
             "int16": "np.int16"}


class Gen:
    """One program, written statement by statement while PyTorch runs it."""

    def __init__(self, seed: int):
        import torch

        self.torch = torch
        self.rng = np.random.default_rng(seed)
        self.ns = namespace(torch)
        self.stmts: list[Stmt] = []
        self.pool: list[str] = []  # tensor expressions the next statements may use
        self.err: dict[str, float] = {}  # expression -> its relative error (rounding)
        self.n = 0
        self.nan_mode = self.chance(NAN_P)
        self.large = self.chance(LARGE_P)
        self.retained: list[str] = []
        # tensors PyTorch saves for backward and numbagrad does not: expression -> the class
        # (writing one in place before backward is an error in PyTorch only)
        self.unsaved: dict[str, str] = {}
        self.prod_zero = False  # a prod() over a zero or a 0-d tensor (see prod_create_graph)
        self.pow_zero = False  # x ** 0 on x that requires grad (see pow_zero_create_graph)
        self.empty_grad = False  # an empty tensor that requires grad
        self.sign_grad = False  # sign() of a tensor that requires grad
        self.dbl_names = False  # an op of the double_backward_node_names class was recorded
        self.view_write = False  # a write through a view of a tensor that requires grad
        # a norm / std / var / logsumexp over a large tensor that requires grad: its second
        # derivative sums ~1e5 terms that cancel (to 0 over equal entries, an expanded input),
        # leaving float32 rounding noise in both libraries (seed 1344)
        self.big_curved_reduce = False
        # softmax / softmin outputs that require grad: expression -> the dim they sum to 1
        # along. A sum or mean over that dim is a constant whose gradient is rounding noise
        # (y (g - sum(g y)) with g constant), which a steep loss then scales up to anything
        # (seed 388144: +-1.5e-3 in PyTorch and numbagrad, second order through a mean)
        self.normalized: dict[str, int] = {}
        self.prod_dim = False  # a prod(dim) of a tensor that requires grad
        self.took_abs = False  # an abs: its second derivative meets NaN/inf terms in some order
        self.full_setitem = False  # x[...] = v (see setitem_full_index_grad_fn)
        self.multi_views: set[str] = set()  # outputs of split and chunk
        # integer or bool tensors that require grad, which no statement uses again (emit)
        self.nonfloat_grad: set[str] = set()
        self.loose: set[str] = set()  # expressions whose grad_fn name is not compared
        # laid out in memory unlike numbagrad's: expression -> the class
        self.tainted: dict[str, str] = {}
        self.fake_views: set[str] = set()  # results numbagrad makes views of something

    # ---------------------------------------------------------------- helpers
    def chance(self, p) -> bool:
        return self.rng.random() < p

    def choice(self, seq):
        return seq[int(self.rng.integers(len(seq)))]

    def fresh(self, prefix="v") -> str:
        self.n += 1
        return f"{prefix}{self.n}"

    def val(self, expr):
        return eval(expr, self.ns)

    def is_float(self, t) -> bool:
        return t.dtype in (self.torch.float32, self.torch.float64)

    def err_of(self, exprs) -> float:
        return max([self.err.get(e, 0.0) for e in exprs] + [0.0])

    def finite_safe(self, t, bound=1e4) -> bool:
        """Finite and not huge (or anything in a NaN/inf program)."""
        if self.nan_mode or not self.is_float(t) or t.numel() == 0:
            return True
        a = t.detach()
        return bool(self.torch.isfinite(a).all()) and float(a.abs().max()) <= bound

    # ZERO_SIGN: 1 / x (reciprocal, a negative power, a division by x) is discontinuous at 0,
    # from -inf to +inf, so it is not applied where x is zero or near it and inexact: rounding
    # moves x across 0, and the sign of a zero that rounds or sums is the implementation's (a
    # BLAS that starts its sum at +0.0 gives +0.0 for 0.0 * -1.25 where PyTorch's mm gives
    # -0.0: seed 14409). Exact zeros (inputs, copies) keep their sign and are compared.

    def near(self, a, b, err) -> bool:
        """Some elements of a and b (values computed with rounding ``err``) are closer than
        rounding could explain: a discontinuous op there could go either way in the two
        libraries. Exact values (err 0) never are: their ties are compared."""
        torch = self.torch
        if err <= 0:
            return False
        try:
            a = torch.as_tensor(a).detach().double()
            b = torch.as_tensor(b).detach().double()
            d = (a - b).abs()
            scale = torch.maximum(a.abs(), b.abs()).clamp(min=1.0)
        except RuntimeError:
            return False
        # (equal values count too: computed ones may be equal in one library only)
        close = d <= 20 * err * scale
        return bool(close.any())

    def near_tie(self, t, dim, err) -> bool:
        """The two largest (or smallest) values of a reduced slice nearly tie."""
        if err <= 0 or t.numel() < 2:
            return False
        x = t.detach().double().nan_to_num(0.0, 1e300, -1e300)
        if dim is None:
            x, dim = x.reshape(-1), 0
        if x.ndim == 0 or x.shape[dim] < 2:
            return False
        for s in (x, -x):
            top = s.topk(2, dim).values
            if self.near(top.select(dim, 0), top.select(dim, 1), err):
                return True
        return False

    def add(self, expr, err):
        self.pool.append(expr)
        self.err[expr] = err

    def emit(self, code, tag, out=None, inputs=(), touches=None, factor=1.0, keep_errors=None,
             values=None, loose=False, exact=False) -> bool:
        """Run ``code`` in PyTorch and append it; True if it ran. ``out`` names the result,
        which joins the pool (tuple elements too); ``inputs`` its operands (for tolerances);
        ``exact``: the op does not round (data, views, copies), so exact inputs stay exact."""
        torch = self.torch
        # (an in-place op may write part of its target before it raises, as PyTorch's
        # accumulating index_put_ does at its first out-of-range index: kept only if not)
        before = {t: self.val(t).detach().clone() for t in (touches or ())
                  if isinstance(self.ns.get(t), torch.Tensor)}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            err = _exec(code, self.ns)
        if err is not None:
            if not isinstance(err, CATEGORIES):  # no valid call: a generator bug
                raise AssertionError(f"generator wrote invalid code {code!r}: {err!r}")
            keep = ERROR_KEEP if keep_errors is None else keep_errors
            if self.chance(keep) and all(_same_values(a, self.val(t)) for t, a in before.items()):
                self.stmts.append(Stmt(code, tag))
            return False
        e = self.err_of(inputs)
        if touches is None:
            touches = (out,) if out else ()
        outs = []
        if out is not None:
            v = self.val(out)
            if isinstance(v, torch.Tensor):
                outs = [(out, v)]
            elif isinstance(v, (tuple, list)):
                outs = [(f"{out}[{i}]", x) for i, x in enumerate(v[:4])
                        if isinstance(x, torch.Tensor)]
        if e > 0 and outs:
            # an inexact operand's absolute error stays when the op shrinks the scale (clamp,
            # where, a - b): relative to the result, it grows by that ratio
            ins = max([self._magnitude(self.val(i)) for i in inputs if i in self.pool] + [0.0])
            o = max(self._magnitude(v) for _, v in outs)
            if ins > 0 and o > 0:
                e *= min(max(ins / o, 1.0), 100.0)
        for name, v in outs:
            if self.is_float(v) and not exact:
                e = max(e, BASE_RTOL[np.dtype(str(v.dtype).replace("torch.", ""))])
        e *= factor  # (the op's own amplification: cancellation in a sum, an exponent)
        if not math.isfinite(e):  # (a cancellation ratio of NaN values)
            e = 1e-2
        if values is None:
            big = any(isinstance(v, torch.Tensor) and v.numel() >= LARGE for _, v in outs)
            values = not big or self.chance(0.3)
        # a result that is an operand itself (x.float() of a float32 x) keeps its looseness
        loose = loose or any(v is self.val(e) for _, v in outs for e in self.loose
                             if e in self.pool)
        if loose:  # a KNOWN_OPEN grad_fn-name class: not compared, now or at the end
            self.loose.update(touches)
            self.loose.update(name for name, _ in outs)
        # (a statement that touches a tensor without computing it, as requires_grad_, compares
        # it at the tolerance it already has)
        self.stmts.append(Stmt(code, tag, tuple(touches), values, max(e, self.err_of(touches)),
                               tuple(t for t in touches if t in self.loose)))
        for t_ in touches:  # an in-place op: what it wrote is no more exact than its result
            if t_ in self.pool and t_ not in dict(outs):
                w = self.val(t_)
                if self.is_float(w) and not exact:
                    # its result is only the in-place op's own, which rounds as an out-of-place
                    # op's does (x.exp_() may differ by an ulp, then be cast to float64 and
                    # compared at float64's tolerance: seed 42804)
                    e_t = max(e, BASE_RTOL[np.dtype(str(w.dtype).replace("torch.", ""))])
                else:
                    e_t = e
                self.err[t_] = max(self.err.get(t_, 0.0), e_t)
                if isinstance(w, torch.Tensor) and w._base is not None and w.requires_grad:
                    self.view_write = True  # (see copy_slices_create_graph_name)
        for name, v in outs:
            self.add(name, e)
            if v.numel() == 0 and v.requires_grad:
                self.empty_grad = True
            # PyTorch gives an elementwise result the memory layout of a non-contiguous input
            # (numbagrad's results are contiguous): such results, and views of them
            if v.numel() > 1 and v._base is None and not v.is_contiguous():
                self.tainted[name] = "elementwise_layout"
            elif v.numel() > 1 and (v._base is not None or tag.startswith(("convert", "detach"))):
                # a view, or a copy that keeps its input's layout (.to(), clone)
                for i in inputs:
                    if i in self.tainted:
                        self.tainted[name] = self.tainted[i]
                        break
        # PyTorch records a write of a value that requires grad into an integer or bool tensor
        # (x[mask] = v is IndexPutBackward0, x[1:] = v CopySlices, x.fill_(v) FillBackward3;
        # numbagrad records the same), but that history is unusable, a PyTorch bug: only
        # floating tensors may require grad, an op on such a tensor raises or not by accident
        # of implementation (x + 1: "Autograd not support dtype: Long"; x.add_(1), x * 2.5:
        # recorded; x.abs_(): raises), and a backward through it fails an INTERNAL ASSERT
        # (isDifferentiableType(grad.scalar_type()), engine.cpp: seed 38249). So such a tensor
        # and its aliases are compared as they are, then not used again (``pick``).
        for t_ in (*touches, *(name for name, _ in outs)):
            if t_ in self.pool and t_ not in self.nonfloat_grad:
                w = self.val(t_)
                if isinstance(w, torch.Tensor) and not self.is_float(w) and w.requires_grad:
                    self.nonfloat_grad.update(self.aliases(t_))
        return True

    def _magnitude(self, v) -> float:
        torch = self.torch
        if not (isinstance(v, torch.Tensor) and self.is_float(v) and v.numel()):
            return 0.0
        a = v.detach().double().abs()
        a = a[torch.isfinite(a)]
        return float(a.max()) if a.numel() else 0.0

    def pick(self, pred=None, exclude=()):
        """A pool expression (recent ones more likely) whose PyTorch value satisfies pred."""
        cands = [e for e in self.pool if e not in exclude and e not in self.nonfloat_grad
                 and (pred is None or pred(self.val(e)))]
        if not cands:
            return None
        w = np.arange(1, len(cands) + 1, dtype=float) ** 1.5
        return cands[int(self.rng.choice(len(cands), p=w / w.sum()))]

    def pick_safe(self, pred=None, **kw):
        return self.pick(lambda t: self.finite_safe(t) and (pred is None or pred(t)), **kw)

    def aliases(self, expr):
        """Pool expressions sharing memory with ``expr`` (an in-place op changes them too)."""
        try:
            t = self.val(expr)
            ptr = t.untyped_storage().data_ptr()
        except Exception:  # noqa: BLE001
            return [expr]
        root = t if t._base is None else t._base
        out = [expr] if expr in self.pool or expr.isidentifier() else []
        for e in self.pool:
            v = self.val(e)
            if e in out:
                continue
            if (v if v._base is None else v._base) is root or (
                    v.numel() and t.numel() and v.untyped_storage().data_ptr() == ptr):
                out.append(e)
        return out

    # ---------------------------------------------------------------- data
    def rand_shape(self, large=None):
        if large if large is not None else (self.large and self.chance(0.5)):
            return self.choice([(400, 300), (300, 400), (120000,), (2, 250, 240)])
        nd = int(self.rng.choice(5, p=[0.12, 0.3, 0.35, 0.18, 0.05]))
        dims = []
        for _ in range(nd):
            r = self.rng.random()
            dims.append(0 if r < 0.04 else 1 if r < 0.2 else int(self.rng.integers(2, 6)))
        return tuple(dims)

    def values(self, shape, dtype, positive=False):
        rng = self.rng
        if dtype == "bool":
            return rng.random(shape) < 0.5
        if dtype.startswith(("int", "uint")):
            return rng.integers(0 if positive or dtype == "uint8" else -5, 6, shape)
        if positive:
            a = np.round(rng.uniform(0.1, 3.0, shape), 3)
        elif self.chance(0.6):
            a = rng.integers(-12, 13, shape) / 4.0  # exact in float32: sums exact, ties happen
        else:
            a = np.round(rng.uniform(-3.0, 3.0, shape), 3)
        if self.nan_mode and a.size:
            mask = rng.random(shape) < 0.15
            a = np.where(mask, rng.choice([np.nan, np.inf, -np.inf], shape), a)
        return np.asarray(a)

    def data_code(self, shape, dtype, positive=False, as_list=None):
        """NumPy (or list) source for data of ``shape`` and ``dtype``."""
        n = math.prod(shape)
        npd = _NP_NAMES[dtype]
        if n >= 64:
            s = int(self.rng.integers(1000))
            lo = 0.1 if positive else -2
            if dtype == "bool":
                return f"np.random.default_rng({s}).random({shape}) < 0.5"
            if dtype.startswith(("int", "uint")):
                lo = 0 if positive or dtype == "uint8" else -5
                return (f"np.random.default_rng({s}).integers({lo}, 6, "
                        f"{shape}).astype({npd})")
            return f"np.random.default_rng({s}).uniform({lo}, 2, {shape}).astype({npd})"
        if n == 0:
            return f"np.zeros({shape}, dtype={npd})"
        a = self.values(shape, dtype, positive)
        if as_list is None:
            as_list = self.chance(0.5)
        if as_list:
            return _nested(a)
        return f"np.array({_nested(a)}, dtype={npd})"

    def new_tensor(self, shape, dtype="float32", requires_grad=None, positive=False,
                   prefix="c"):
        """Emit a new input tensor; return its name (None if PyTorch refused it)."""
        if requires_grad is None:
            requires_grad = dtype.startswith("float") and self.chance(0.5)
        name = self.fresh(prefix)
        rg = ", requires_grad=True" if requires_grad else ""
        n = math.prod(shape)
        list_ok = n > 0 and 0 < len(shape) and n < 64
        form = self.rng.random()
        if list_ok and dtype in ("float32", "int64", "bool") and form < 0.55:
            code = f"torch.tensor({self.data_code(shape, dtype, positive, True)}{rg})"
        elif list_ok and dtype == "float64" and form < 0.4:
            code = (f"torch.tensor({self.data_code(shape, dtype, positive, True)}, "
                    f"dtype=torch.float64{rg})")
        elif form < 0.8 or n == 0:
            code = f"torch.tensor({self.data_code(shape, dtype, positive, False)}{rg})"
        elif form < 0.9:
            code = f"torch.from_numpy({self.data_code(shape, dtype, positive, False)})"
            code += ".requires_grad_()" if requires_grad else ""
        else:
            code = f"torch.as_tensor({self.data_code(shape, dtype, positive, False)})"
            code += ".requires_grad_()" if requires_grad else ""
        if len(shape) == 0 and self.chance(0.3):
            a = self.values((), dtype, positive)
            code = f"torch.tensor({_fmt(a[()])}{rg})"
        ok = self.emit(f"{name} = {code}", "input", out=name, keep_errors=1.0, exact=True)
        return name if ok else None

    def rand_dtype(self):
        return str(self.rng.choice(["float32", "float64", "int64", "bool", "uint8", "int8", "int16"],
                                   p=[0.7, 0.12, 0.08, 0.05, 0.02, 0.015, 0.015]))

    def inputs(self):
        for _ in range(int(self.rng.integers(1, 4))):
            dtype = self.rand_dtype()
            rg = dtype.startswith("float") and self.chance(0.8)
            if dtype.startswith("int") and self.chance(0.05):
                rg = True  # PyTorch refuses: only floating point tensors require grad
            shape = self.rand_shape(large=self.large and not self.pool)
            name = self.new_tensor(shape, dtype, rg, positive=self.chance(0.25), prefix="x")
            if name is None:
                continue
            t = self.val(name)
            # a transposed, strided or expanded input
            if self.chance(0.25):
                if t.ndim >= 2 and self.chance(0.5):
                    view = self.choice([f"{name}.t()" if t.ndim == 2 else f"{name}.mT",
                                        f"{name}.transpose(0, 1)"])
                elif t.ndim >= 1 and self.chance(0.6):
                    view = self.choice([f"{name}[::2]", f"{name}[..., ::2]", f"{name}[1::3]"])
                else:
                    view = f"{name}.expand({', '.join(['3'] + [str(d) for d in t.shape])})"
                    if t.numel() >= LARGE:
                        view = f"{name}[:1].expand({', '.join(str(d) for d in t.shape)})"
                v = self.fresh("x")
                self.emit(f"{v} = {view}", "input:view", out=v, inputs=[name], exact=True)

    # ---------------------------------------------------------------- shapes
    def bshape(self, s):
        """A shape broadcastable with ``s`` (rarely not: PyTorch's error then)."""
        s = list(s)
        k = int(self.rng.integers(0, len(s) + 1))
        out = s[len(s) - k:]
        out = [1 if (d > 1 and self.chance(0.3)) else d for d in out]
        out = [int(self.rng.integers(2, 4)) if (d == 1 and self.chance(0.3)) else d for d in out]
        if not self.large and self.chance(0.12):
            out = [int(self.rng.integers(1, 4))] + out
        if out and self.chance(0.03):
            i = int(self.rng.integers(len(out)))
            out[i] += 2
        if math.prod(out) * max(1, math.prod(s)) > 4e6:
            out = [1] * len(out)
        return tuple(out)

    def operand(self, t_expr, dtype=None, grad_p=0.5, positive=False, bshape=True):
        """A tensor operand broadcastable with ``t_expr``: from the pool or new."""
        torch = self.torch
        t = self.val(t_expr)
        if self.chance(0.4):
            def fits(u):
                try:
                    out = torch.broadcast_shapes(u.shape, t.shape)
                except RuntimeError:
                    return False
                if math.prod(out) > MAX_ITEMS:  # (120000,) against (120000, 1): 58 GB
                    return False
                return (not positive or bool((u > 0.05).all())) and (
                    dtype is None or str(u.dtype) == "torch." + dtype)
            e = self.pick_safe(fits)
            if e is not None:
                return e
        if dtype is None:
            dtype = str(t.dtype).replace("torch.", "")
            if self.chance(0.15):
                dtype = self.rand_dtype()
        shape = self.bshape(t.shape) if bshape else tuple(t.shape)
        return self.new_tensor(shape, dtype, dtype.startswith("float") and self.chance(grad_p),
                               positive=positive)

    def scalar(self, kind=None):
        kind = kind or self.choice(["int", "float", "float", "float", "bool"])
        if kind == "int":
            return self.choice([2, 3, -1, 0, 1, -2])
        if kind == "bool":
            return self.choice([True, False])
        return self.choice([0.5, 1.5, -2.5, 2.0, -0.25, 3.0, 0.0])

    # ---------------------------------------------------------------- families
    UNARY = {
        # name: domain check on the (float64) input; None: anything
        "exp": lambda x: x.max() <= 10, "expm1": lambda x: x.max() <= 10,
        "log": lambda x: x.min() >= 0.05, "log1p": lambda x: x.min() >= -0.9,
        "sqrt": lambda x: x.min() >= 0.05, "rsqrt": lambda x: x.min() >= 0.05,
        "reciprocal": lambda x: x.abs().min() >= 0.1, "tan": lambda x: x.abs().max() <= 1.3,
        "square": lambda x: x.abs().max() <= 1e3,
        "sin": None, "cos": None, "tanh": None, "sigmoid": None, "relu": None, "abs": None,
        "neg": None, "sign": None, "logical_not": None,
    }
    KINKED = {"relu", "abs", "sign"}

    def fam_unary(self):
        name = self.choice(list(self.UNARY))
        x = self.pick_safe()
        if x is None:
            return
        t = self.val(x)
        check = self.UNARY[name]
        if check is not None and t.numel() and not self.nan_mode:
            if not bool(check(t.detach().double())):
                return
        err = self.err_of([x])
        if name in self.KINKED and self.near(t, 0, err):
            return
        if name in ("sin", "cos") and t.numel() and t.is_floating_point() and \
                err * float(t.detach().abs().max()) > 1e-3:
            # sin of a large inexact value: its absolute error is |x| times the input's relative
            # one (tan(1.5707934) is 340539.03 in PyTorch, .06 in numbagrad, both within 1 ulp;
            # their sines 0.187 and 0.156: seed 61722)
            return
        if name == "relu" and t.is_floating_point() and bool(t.isnan().any()) and \
                avoid("relu_grad_nan"):
            return
        # at a singularity, a value that is only rounding noise (0.0 against 2e-7 for the std
        # of equal values) gives -inf in one library and nan in the other (and see ZERO_SIGN)
        if name in ("log", "sqrt", "rsqrt", "reciprocal") and self.near(t, 0, err):
            return
        if name == "log1p" and self.near(t, -1, err):
            return
        forms = [f"torch.{name}({x})", f"{x}.{name}()"]
        if name in ("relu", "sigmoid", "tanh"):
            forms.append(f"F.{name}({x})")
        if name == "neg":
            forms.append(f"-{x}")
        if name == "abs":
            forms.append(f"abs({x})")
            self.took_abs = True
        factor = max(1.0, float(t.detach().double().abs().max())) if t.numel() else 1.0
        if name not in ("exp", "expm1", "tan", "square", "reciprocal", "rsqrt"):
            factor = 1.0
        v = self.fresh()
        if self.emit(f"{v} = {self.choice(forms)}", f"unary:{name}", out=v, inputs=[x],
                     factor=min(factor, 100.0)) and name == "sign" and t.requires_grad:
            self.sign_grad = True

    def fam_pow(self):
        x = self.pick_safe()
        if x is None:
            return
        t = self.val(x)
        a = t.detach().double()
        v = self.fresh()
        if self.chance(0.3):  # a scalar base
            if self.nan_mode and avoid("rpow_backward_inf_grad"):
                return
            base = self.choice([2, 2.5, 0.5, 3, 1.5])
            if not self.nan_mode and t.numel() and float(a.max()) > 20:
                return
            form = self.choice([f"{base} ** {x}", f"torch.pow({base}, {x})"])
            if self.emit(f"{v} = {form}", "pow:scalar_base", out=v, inputs=[x],
                         factor=max(1.0, min(float(a.abs().max()) if a.numel() else 1.0, 100.0))):
                self.mark_unsaved(x, "rpow_saved_exponent")
            return
        e = self.choice([2, 3, 0.5, -1, 1.5, 0, 2.0, -2, -0.5, 1])
        if e == 0 and not self.is_float(t) and avoid("int_pow_zero"):
            return
        if e in (0.5, -0.5, 1.5) and bool((a == -math.inf).any()) and avoid("pow_neg_inf_half"):
            return
        if e == 0 and t.requires_grad:
            self.pow_zero = True
        if e < 0 and self.near(t, 0, self.err_of([x])):
            return  # (1 / x at an inexact zero: see ZERO_SIGN)
        if not self.nan_mode and t.numel():
            if isinstance(e, float) and e != int(e) and float(a.min()) < 0.05:
                return
            if e < 0 and float(a.abs().min()) < 0.1:
                return
            if float(a.abs().max()) ** max(abs(e), 1) > 1e6:
                return
        form = self.choice([f"{x} ** {e}", f"torch.pow({x}, {e})", f"{x}.pow({e})"])
        self.emit(f"{v} = {form}", "pow:scalar_exp", out=v, inputs=[x], factor=max(1, abs(e)))

    def fam_clamp(self):
        x = self.pick_safe()
        if x is None:
            return
        t = self.val(x)
        lo, hi = sorted(self.choice([-1.5, -0.5, 0.0, 0.25, 1.0, 2, -1]) for _ in range(2))
        err = self.err_of([x])
        if self.near(t, lo, err) or self.near(t, hi, err):
            return
        forms = [f"{x}.clamp({lo}, {hi})", f"torch.clamp({x}, min={lo})",
                 f"torch.clamp({x}, max={hi})", f"{x}.clip({lo}, {hi})",
                 f"torch.clip({x}, {lo}, {hi})", f"{x}.clamp(min={lo}, max={hi})",
                 f"{x}.clamp(max={hi})"]
        if self.chance(0.05):
            forms = [f"{x}.clamp({hi}, {lo})" if hi != lo else f"{x}.clamp()"]
        v = self.fresh()
        self.emit(f"{v} = {self.choice(forms)}", "clamp", out=v, inputs=[x])

    BINARY = {
        "add": ("+", "add"), "sub": ("-", "sub"), "mul": ("*", "mul"), "div": ("/", "div"),
        "pow": ("**", "pow"), "maximum": (None, "maximum"), "minimum": (None, "minimum"),
    }

    def fam_binary(self):
        torch = self.torch
        op = self.choice(list(self.BINARY) + ["add", "mul", "sub", "div"])
        sym, fn = self.BINARY[op]
        x = self.pick_safe()
        if x is None:
            return
        t = self.val(x)
        ta = t.detach().double()
        kind = self.rng.random()
        v = self.fresh()
        err = self.err_of([x])
        factor = 1.0
        if kind < 0.3 and sym is not None:  # tensor op scalar / scalar op tensor
            s = self.scalar()
            left = self.chance(0.4)
            if op == "sub" and isinstance(s, bool) and avoid("sub_bool_scalar"):
                s = 2
            if op == "pow" and isinstance(s, bool) and t.dtype == torch.bool and avoid("pow_bool"):
                return
            if op == "div" and not self.nan_mode:
                if left and t.numel() and float(ta.abs().min()) < 0.1:
                    return
                if not left and (s == 0 or s is False):
                    s = 2
            if op == "pow" and left and self.nan_mode and avoid("rpow_backward_inf_grad"):
                return
            if op == "pow" and left and isinstance(s, bool):
                s = 2  # PyTorch's own backward of True ** x fails (an INTERNAL ASSERT)
            if ((op == "div" and left) or (op == "pow" and not left and s < 0)) and \
                    self.near(ta, 0, err):
                return  # (1 / x at an inexact zero: see ZERO_SIGN)
            if op == "pow" and not left and s in (0.5, -0.5, 1.5) and \
                    bool((ta == -math.inf).any()) and avoid("pow_neg_inf_half"):
                return
            if op == "pow" and not left and s == 0 and t.requires_grad:
                self.pow_zero = True
            if op == "pow" and not left and isinstance(s, bool) and t.requires_grad and \
                    bool((ta == 0).any()) and avoid("pow_bool_exponent_grad"):
                return
            if op == "pow" and not left and s == 0 and not self.is_float(t) and \
                    avoid("int_pow_zero"):
                return
            if op == "pow" and not self.nan_mode and t.numel():
                if left:
                    if not (isinstance(s, (int, float)) and s > 0 and float(ta.max()) <= 20):
                        return
                    factor = min(100.0, max(1.0, float(ta.abs().max())))
                elif (isinstance(s, float) and s != int(s) and float(ta.min()) < 0.05) or (
                        s < 0 and float(ta.abs().min()) < 0.1):
                    return
            sv = repr(s)
            if left:
                form = self.choice([f"{sv} {sym} {x}"] * 3 + [f"torch.{fn}({sv}, {x})"])
                if fn in ("sub", "div") and avoid("number_first_function"):
                    form = f"{sv} {sym} {x}"
            else:
                form = self.choice([f"{x} {sym} {sv}", f"torch.{fn}({x}, {sv})",
                                    f"{x}.{fn}({sv})"])
            ok = self.emit(f"{v} = {form}", f"binary:{op}:scalar{'_left' if left else ''}",
                           out=v, inputs=[x], factor=factor)
            if ok and op == "pow" and left:
                self.mark_unsaved(x, "rpow_saved_exponent")
            return
        if op in ("maximum", "minimum") and self.chance(0.1):
            s = self.scalar("float")
            if self.near(t, s, err) or avoid("maximum_number_first"):
                return
            form = self.choice([f"torch.{op}({s!r}, {x})", f"torch.{op}({x}, {s!r})"])
            self.emit(f"{v} = {form}", f"binary:{op}:scalar", out=v, inputs=[x])
            return
        positive = op == "pow"
        y = self.operand(x, positive=positive)
        if y is None:
            return
        u = self.val(y)
        if op == "pow" and u.dtype == torch.bool and (t.requires_grad or u.requires_grad):
            return  # PyTorch's own backward of x ** bool_tensor fails (bool subtraction)
        ua = u.detach().double()
        if op == "div" and self.near(ua, 0, self.err_of([y])):
            return  # (1 / x at an inexact zero: see ZERO_SIGN)
        err = max(err, self.err_of([y]))
        if not self.nan_mode and t.numel() and u.numel():
            if op == "div" and float(ua.abs().min()) < 0.1:
                return
            if op == "pow":
                if float(ta.min()) < 0.05 or float(ta.max()) > 50 or float(ua.abs().max()) > 4:
                    return
                factor = 10.0
        if op == "pow" and self.nan_mode and bool((ta == 0).any()) and u.requires_grad and \
                avoid("pow_exponent_grad_zero_base"):
            return
        if op in ("maximum", "minimum"):
            try:
                if self.near(*torch.broadcast_tensors(ta, ua), err):
                    return
            except RuntimeError:
                pass
        if sym is not None and self.chance(0.6):
            form = f"{x} {sym} {y}"
        else:
            form = self.choice([f"torch.{fn}({x}, {y})", f"{x}.{fn}({y})"])
            if op in ("maximum", "minimum") and self.chance(0.3):
                form = f"torch.{'max' if op == 'maximum' else 'min'}({x}, {y})"
        if self.emit(f"{v} = {form}", f"binary:{op}:tensor", out=v, inputs=[x, y],
                     factor=factor) and op in ("mul", "div", "pow", "maximum", "minimum"):
            res = self.val(v)
            for a, b in ((x, y), (y, x)):  # an operand of another dtype, of an op that saves it
                if self.val(a).dtype != res.dtype and self.val(b).requires_grad:
                    self.mark_unsaved(a, "cast_operand_not_saved")
            if op == "pow" and self.val(v).requires_grad:
                self.mark_unsaved(v, "pow_tensor_saved_result")
            if op == "pow" and form.index(x) < form.index(y) and self.val(y).requires_grad \
                    and not t.requires_grad:
                self.mark_unsaved(y, "pow_exponent_saved_base_no_grad")

    def fam_compare(self):
        torch = self.torch
        x = self.pick_safe()
        if x is None:
            return
        t = self.val(x)
        sym, fn = self.choice([("==", "eq"), ("!=", "ne"), ("<", "lt"), ("<=", "le"),
                               (">", "gt"), (">=", "ge"), ("&", "logical_and"),
                               ("|", "logical_or")])
        if self.chance(0.4) and fn not in ("logical_and", "logical_or"):
            s = self.scalar()
            other, ov = repr(s), s
        else:
            other = self.operand(x, grad_p=0.2)
            if other is None:
                return
            ov = self.val(other)
        err = max(self.err_of([x]), self.err_of([other]) if other in self.err else 0.0)
        try:
            a, b = torch.broadcast_tensors(t.detach().double(), torch.as_tensor(ov).double())
            if self.near(a, b, err):
                return
        except RuntimeError:
            pass
        if fn in ("logical_and", "logical_or"):
            both_bool = t.dtype == torch.bool and isinstance(ov, torch.Tensor) and \
                ov.dtype == torch.bool
            big_float = (self.is_float(t) or isinstance(ov, float) or (
                isinstance(ov, torch.Tensor) and self.is_float(ov))) and \
                max(t.numel(), getattr(ov, "numel", lambda: 0)()) >= LARGE
            scalar_other = not isinstance(ov, torch.Tensor) or ov.ndim == 0
            if self.chance(0.5) and (both_bool or not avoid("bitwise_and_or")) and not (
                    big_float and avoid("bitwise_float_large")) and not (
                    big_float and scalar_other and avoid("bitwise_float_large_scalar")) and not (
                    big_float and t.ndim >= 2 and avoid("bitwise_float_large_nd")) and not (
                    big_float and avoid("bitwise_float_large_unread")):
                form = f"{x} {sym} {other}"
            else:
                form = self.choice([f"torch.{fn}({x}, {other})", f"{x}.{fn}({other})"])
        else:
            form = self.choice([f"{x} {sym} {other}", f"torch.{fn}({x}, {other})",
                                f"{x}.{fn}({other})"])
        v = self.fresh()
        if self.emit(f"{v} = {form}", f"compare:{fn}", out=v, inputs=[x]) and self.chance(0.2):
            w = self.fresh()
            form = self.choice([f"torch.logical_not({v})", f"~{v}", f"{v}.logical_not()"])
            self.emit(f"{w} = {form}", "compare:not", out=w, inputs=[v])

    def fam_where(self):
        torch = self.torch
        x = self.pick_safe()
        if x is None:
            return
        t = self.val(x)
        err = self.err_of([x])
        if self.chance(0.5):  # a condition made from x itself
            k = self.choice([0, 0.5, -1])
            if self.near(t, k, err):
                return
            cond = f"{x} > {k}"
        else:
            cond = self.pick(lambda u: u.dtype == torch.bool and self._bcast(u, t))
            if cond is None:
                cond = self.new_tensor(self.bshape(t.shape), "bool")
                if cond is None:
                    return
        r = self.rng.random()
        if r < 0.2:
            other = repr(self.scalar("float"))
        else:
            other = self.operand(x)
            if other is None:
                return
        args = [x, other] if self.chance(0.6) else [other, x]
        v = self.fresh()
        if self.emit(f"{v} = torch.where({cond}, {args[0]}, {args[1]})", "where", out=v,
                     inputs=[x, other]) and cond.isidentifier():
            self.mark_unsaved(cond, "where_saved_condition")

    def _bcast(self, u, t):
        try:
            return math.prod(self.torch.broadcast_shapes(u.shape, t.shape)) <= MAX_ITEMS
        except RuntimeError:
            return False

    REDUCE = ["sum", "mean", "prod", "max", "min", "amax", "amin", "std", "var", "logsumexp",
              "argmax", "argmin", "norm", "softmax", "log_softmax", "any"]

    def rand_dim(self, nd, tuple_ok):
        if self.chance(0.03):
            return nd + 1  # out of range: PyTorch's IndexError
        if nd == 0:
            return self.choice([0, -1])
        if tuple_ok and nd >= 2 and self.chance(0.3):
            k = int(self.rng.integers(1, nd + 1))
            dims = sorted(self.rng.choice(nd, k, replace=False).tolist())
            return tuple(d - nd if self.chance(0.3) else d for d in dims)
        return int(self.rng.integers(-nd, nd))

    def fam_reduce(self):
        torch = self.torch
        op = self.choice(self.REDUCE)
        x = self.pick_safe()
        if x is None:
            return
        t = self.val(x)
        a = t.detach().double()
        err = self.err_of([x])
        nd = t.ndim
        if op == "prod" and (t.numel() > 40 or (t.numel() and float(a.abs().max()) > 3)):
            return
        if op == "logsumexp" and t.numel() and float(a.max()) > 50 and not self.nan_mode:
            return
        if op in ("argmax", "argmin") and t.dtype == torch.bool and avoid("argmax_bool"):
            return
        if op == "prod" and t.ndim == 0 and not bool(a.isfinite().all()) and \
                avoid("prod_0d_nonfinite_grad"):
            return
        if op == "prod" and t.ndim == 0 and bool((a == 0).all()) and \
                avoid("prod_0d_zero_grad_shape"):
            return
        if op == "prod" and int((a == 0).sum()) >= 2 and not bool(a.isfinite().all()) and \
                avoid("prod_two_zeros_nonfinite_grad"):
            return
        if op == "prod" and t.requires_grad and (bool((a == 0).any()) or t.ndim == 0):
            self.prod_zero = True
        with_dim = self.chance(0.65) or op in ("softmax", "log_softmax", "logsumexp")
        tuple_ok = op in ("sum", "mean", "amax", "amin", "std", "var", "logsumexp", "norm")
        dim = self.rand_dim(nd, tuple_ok) if with_dim else None
        keep = self.chance(0.35)
        kd = ", keepdim=True" if keep else ""
        if op in ("max", "min", "amax", "amin", "argmax", "argmin"):
            if isinstance(dim, tuple):
                nt = False
                for d in dim:
                    nt = nt or self.near_tie(t, d, err)
            else:
                nt = self.near_tie(t, dim if (dim is None or -nd <= dim < max(nd, 1)) and nd
                                   else None, err)
            if nt:
                return
        v = self.fresh()
        factor = 1.0
        if op in ("sum", "mean", "var", "std", "norm", "logsumexp") and t.numel():
            # the error of a sum grows with its cancellation: sum |x| / |sum x|
            try:
                dims = None if dim is None else dim
                s = a.sum() if dims is None else a.sum(dims)
                sa = a.abs().sum() if dims is None else a.abs().sum(dims)
                if op in ("var", "std"):
                    m = a.mean() if dims is None else a.mean(dims, keepdim=True)
                    s = ((a - m) ** 2).sum() if dims is None else ((a - m) ** 2).sum(dims)
                    sa = (a * a).sum() if dims is None else (a * a).sum(dims)
                ratio = (sa / s.abs().clamp(min=1e-300)).max()
                factor = float(min(max(ratio, 1.0), 1e4))
                if t.numel() > 1000:
                    factor *= 10
            except (RuntimeError, IndexError):
                pass
        d = "" if dim is None else repr(dim)
        if op in ("sum", "mean", "amax", "amin", "logsumexp", "prod"):
            if op == "prod" and isinstance(dim, tuple):
                dim, d = dim[0], repr(dim[0])
            if dim is None:
                form = self.choice([f"{x}.{op}()", f"torch.{op}({x})"])
                if op == "logsumexp":
                    return
            else:
                form = self.choice([f"{x}.{op}({d}{kd})", f"torch.{op}({x}, {d}{kd})",
                                    f"{x}.{op}(dim={d}{kd})"])
        elif op in ("max", "min"):
            if dim is None:
                form = self.choice([f"{x}.{op}()", f"torch.{op}({x})"])
            else:
                form = self.choice([f"{x}.{op}({d}{kd})", f"torch.{op}({x}, {d}{kd})",
                                    f"{x}.{op}(dim={d}{kd})"])
        elif op in ("argmax", "argmin"):
            form = f"{x}.{op}()" if dim is None else self.choice(
                [f"{x}.{op}({d}{kd})", f"torch.{op}({x}, dim={d}{kd})"])
        elif op in ("std", "var"):
            corr = self.choice(["", ", unbiased=False", ", correction=0", ", correction=1"])
            if dim is None:
                form = self.choice([f"{x}.{op}()", f"torch.{op}({x})",
                                    f"{x}.{op}(unbiased=False)"])
            else:
                form = self.choice([f"{x}.{op}({d}{corr}{kd})", f"torch.{op}({x}, {d}{kd})",
                                    f"{x}.{op}(dim={d}{corr}{kd})"])
            if (dim is not None and not self.nan_mode and t.numel()
                    and self._constant_slice(a, dim) and avoid("std_constant_row")):
                return
            if t.numel() and self._constant_slice(a, dim) and avoid("var_constant_inexact"):
                return
            if t.numel() > 1000 and self._constant_slice(a, dim):
                # (std's gradient there is 0/0 made finite by the last bit of the mean, which
                # PyTorch's cascade sum and numbagrad's pairwise one round differently over
                # thousands of terms: +-1 against 0, seed 149662)
                return
        elif op == "norm":
            form = self.choice([f"{x}.norm()", f"torch.norm({x})"]) if dim is None else \
                f"{x}.norm(dim={d}{kd})"
            if isinstance(dim, tuple) and len(dim) > 2 and avoid("norm_dim_3_tuple"):
                return
        elif op in ("softmax", "log_softmax"):
            if isinstance(dim, tuple):
                dim, d = dim[0], repr(dim[0])
            form = self.choice([f"{x}.{op}({d})", f"torch.{op}({x}, {d})",
                                f"F.{op}({x}, dim={d})"])
            if op == "log_softmax" and self.log_softmax_cancels(t, dim):
                return
        else:  # any
            form = f"{x}.any()"
        tag = f"reduce:{op}" + (":dim" if dim is not None else "")
        if nd == 0 and dim is not None and avoid("reduce_dim_0d"):
            return
        if op in ("norm", "std", "var", "logsumexp") and t.numel() >= LARGE and t.requires_grad:
            self.big_curved_reduce = True
        if op == "prod" and dim is not None and t.requires_grad:
            self.prod_dim = True
        if op in ("sum", "mean") and self.sums_a_normalized_dim(x, dim):
            return
        if not self.emit(f"{v} = {form}", tag, out=v, inputs=[x], factor=factor):
            return
        if op in ("max", "min") and dim is not None and t.requires_grad and nd == 0:
            self.mark_unsaved(f"{v}[1]", "max_dim_0d_indices_not_saved")
        if op == "softmax":
            self.note_normalized(v, dim)

    def note_normalized(self, v, dim):
        """``v`` is a softmax (or softmin) along ``dim``: see ``self.normalized``."""
        u = self.val(v)
        if isinstance(u, self.torch.Tensor) and u.requires_grad and isinstance(dim, int):
            self.normalized[v] = dim % max(u.ndim, 1)

    def sums_a_normalized_dim(self, x, dim) -> bool:
        """A sum or mean of ``x`` over ``dim`` (None: all) adds up a softmax's dim."""
        if x not in self.normalized:
            return False
        if dim is None:
            return True
        n = max(self.val(x).ndim, 1)
        dims = dim if isinstance(dim, tuple) else (dim,)
        try:
            return self.normalized[x] in {int(d) % n for d in dims}
        except (TypeError, ZeroDivisionError):
            return False

    def log_softmax_cancels(self, t, dim) -> bool:
        """numbagrad's log_softmax is x - logsumexp(x): where one element dominates its row, the
        result near 0 loses the digits PyTorch's keeps (KNOWN_OPEN log_softmax_cancellation)."""
        torch = self.torch
        if not self.is_float(t) or t.numel() == 0 or not avoid("log_softmax_cancellation"):
            return False
        try:
            a = t.detach()
            ref = torch.log_softmax(a, dim)
            emu = a - torch.logsumexp(a, dim, keepdim=True)
        except (RuntimeError, IndexError):
            return False
        return compare_arrays(ref.numpy(), emu.numpy(), self.err_of([])) is not None

    def _constant_slice(self, a, dim):
        """Some reduced slice of ``a`` holds one value repeated (std's gradient is 0/0 there)."""
        try:
            if dim is None:
                return bool(a.amax() == a.amin()) and a.numel() > 1
            return bool(((a.amax(dim) - a.amin(dim)) == 0).any())
        except (RuntimeError, IndexError):
            return False

    def fam_matmul(self):
        x = self.pick_safe(lambda u: u.ndim >= 1 and self.is_float(u))
        if x is None:
            return
        t = self.val(x)
        dt = str(t.dtype).replace("torch.", "")
        if self.chance(0.05):
            dt = self.choice(["float32", "float64", "int64"])
        s = tuple(t.shape)
        nd = len(s)
        k = self.choice([1, 2, 3, 4]) if not self.large else self.choice([1, 3, 5])
        v = self.fresh()
        r = self.rng.random()
        loose = False
        if nd == 1:
            if r < 0.4:
                y = self.new_tensor(s, dt)
                form = self.choice([f"{x} @ {y}", f"torch.dot({x}, {y})", f"{x}.dot({y})",
                                    f"torch.matmul({x}, {y})"])
                kind = "dot"
            elif r < 0.8:
                y = self.new_tensor((k,) + s, dt)
                form = self.choice([f"{y} @ {x}", f"torch.mv({y}, {x})", f"{y}.mv({x})"])
                kind = "mv"
            elif r < 0.9 or self.large:  # a vector times a matrix (or a batch of them)
                shp = s + (k,) if self.chance(0.7) or self.large else (2,) + s + (k,)
                y = self.new_tensor(shp, dt)
                form = self.choice([f"{x} @ {y}", f"torch.matmul({x}, {y})"])
                kind = "vecmat"
                loose = avoid("vecmat_grad_fn")
            else:
                y = self.new_tensor((k,) + s, dt)
                b = self.new_tensor((k,), dt)
                form = f"F.linear({x}, {y}, {b})"
                kind = "linear"
                # (a non-contiguous input takes matmul and add: its node follows its layout)
                loose = avoid("linear_nd_grad_fn") or self.layout_dependent(x)
        elif nd == 2:
            if r < 0.45:
                y = self.new_tensor((s[1], k), dt)
                form = self.choice([f"{x} @ {y}", f"torch.mm({x}, {y})", f"{x}.mm({y})",
                                    f"torch.matmul({x}, {y})", f"{x}.matmul({y})"])
                kind = "mm"
            elif r < 0.65:
                y = self.new_tensor((s[1],), dt)
                form = self.choice([f"{x} @ {y}", f"torch.mv({x}, {y})", f"{x}.mv({y})"])
                kind = "mv"
            elif r < 0.8:
                y = self.new_tensor((s[0],), dt)
                form = f"{y} @ {x}"
                kind = "vecmat"
                loose = avoid("vecmat_grad_fn")
            else:
                w = self.new_tensor((k, s[1]), dt)
                b = self.new_tensor((k,), dt) if self.chance(0.6) else None
                form = f"F.linear({x}, {w}" + (f", {b})" if b else ")")
                y = w
                kind = "linear"
                loose = b is not None and avoid("linear_grad_fn")
        elif nd == 3 and r < 0.1 and not self.large:
            y = self.new_tensor((k, s[-1]), dt)
            b = self.new_tensor((k,), dt)
            form = f"F.linear({x}, {y}, {b})"
            kind = "linear"
            loose = avoid("linear_nd_grad_fn") or self.layout_dependent(x)
        else:
            if r < 0.35 and nd == 3:
                y = self.new_tensor((s[0], s[2], k), dt)
                form = self.choice([f"torch.bmm({x}, {y})", f"{x}.bmm({y})", f"{x} @ {y}"])
                kind = "batched" if "@" in form else "bmm"
            elif r < 0.55:
                y = self.new_tensor((s[-1], k), dt)
                form = f"{x} @ {y}"
                kind = "batched"
            elif r < 0.7 and not self.large:
                y = self.new_tensor((1,) + s[-1:] + (k,), dt)
                form = self.choice([f"{x} @ {y}", f"torch.matmul({x}, {y})"])
                kind = "batched"
            else:
                y = self.new_tensor((s[-1],), dt)
                form = self.choice([f"{x} @ {y}", f"torch.matmul({x}, {y})"])
                kind = "batched_mv"
        if y is None:
            return
        u = self.val(y)
        if u.dtype != t.dtype and (t.numel() == 0 or u.numel() == 0) and \
                avoid("bmm_empty_mixed_dtype"):
            return
        factor = 1.0
        try:  # the cancellation in its sums: (|x| @ |y|) / |x @ y|
            ns = dict(self.ns)
            ns[x], ns[y] = t.detach().double().abs(), u.detach().double().abs()
            absolute = eval(form, ns)
            ns[x], ns[y] = t.detach().double(), u.detach().double()
            plain = eval(form, ns)
            if absolute.numel():
                ratio = float(absolute.abs().max()) / max(float(plain.abs().max()), 1e-300)
                factor = min(max(ratio, 1.0), 1e4) if math.isfinite(ratio) else 1e4
        except Exception:  # noqa: BLE001 - PyTorch refuses it: an error, compared as such
            pass
        if self.emit(f"{v} = {form}", f"matmul:{kind}", out=v, inputs=[x, y], factor=factor,
                     loose=loose):
            for e in (x, y):  # PyTorch saved a copy of a tensor laid out otherwise, numbagrad it
                if e in self.tainted:
                    self.mark_unsaved(e, self.tainted[e])
            u = self.val(y)
            first = re.search(rf"\b({re.escape(x)}|{re.escape(y)})\b", form).group(1)
            a, b = (u, t) if first == y else (t, u)  # the left and right operands
            if (a.ndim, b.ndim) not in ((2, 2), (2, 1), (1, 1)) and kind not in ("bmm", "linear"):
                self.fake_views.add(v)  # numbagrad's result is a view (of the matmul's output)

    def reshape_target(self, s):
        """Another shape with the same number of elements."""
        n = math.prod(s)
        dims = [d for d in s if d != 1]
        r = self.rng.random()
        if r < 0.25 or not dims:
            out = [n]
        elif r < 0.5 and len(dims) >= 2:
            i = int(self.rng.integers(len(dims) - 1))
            out = dims[:i] + [dims[i] * dims[i + 1]] + dims[i + 2:]
        elif r < 0.75:
            out = list(dims)
            for f in (2, 3, 5):
                if n and n % f == 0 and n // f > 1:
                    out = [f, n // f]
                    break
        else:
            out = list(dims)
            out.insert(int(self.rng.integers(len(out) + 1)), 1)
        if out and n and self.chance(0.3):
            out[int(self.rng.integers(len(out)))] = -1
        return out

    def fam_view(self):
        x = self.pick_safe()
        if x is None:
            return
        t = self.val(x)
        s = tuple(t.shape)
        nd = len(s)
        op = self.choice(["reshape", "view", "permute", "transpose", "t", "T", "mT", "expand",
                          "squeeze", "unsqueeze", "flatten", "select", "chunk", "split",
                          "contiguous", "broadcast_to"])
        if op in ("reshape", "view", "flatten", "contiguous") and self.layout_dependent(x):
            return
        v = self.fresh()
        loose = False
        if op in ("reshape", "view"):
            shp = self.reshape_target(s)
            args = ", ".join(map(str, shp))
            form = self.choice([f"{x}.{op}({args})", f"{x}.{op}({tuple(shp)!r})"])
            if op == "reshape" and self.chance(0.3):
                form = f"torch.reshape({x}, {tuple(shp)!r})"
            if op == "reshape" and not t.is_contiguous() and t.numel():
                try:  # does PyTorch make it a view (grad_fn ReshapeAliasBackward0)?
                    res = eval(form, self.ns)
                    alias = res.untyped_storage().data_ptr() == t.untyped_storage().data_ptr()
                except RuntimeError:
                    alias = False
                loose = alias and avoid("reshape_alias_grad_fn")
        elif op == "permute":
            p = self.rng.permutation(nd).tolist()
            form = self.choice([f"{x}.permute({', '.join(map(str, p))})",
                                f"torch.permute({x}, {tuple(p)!r})"]) if nd else f"{x}.permute(())"
            if not nd and self.chance(0.3) and not avoid("permute_no_dims"):
                form = f"{x}.permute()"
        elif op == "transpose":
            if nd == 0:
                a = b = self.choice([0, -1])
            else:
                a, b = (int(i) for i in self.rng.integers(-nd, nd, 2))
            form = self.choice([f"{x}.transpose({a}, {b})", f"torch.transpose({x}, {a}, {b})"])
        elif op == "t":
            if nd > 2:
                return
            form = self.choice([f"{x}.t()", f"torch.t({x})"])
        elif op == "T":
            if nd not in (0, 2) and not self.chance(0.2):
                return
            form = f"{x}.T"
        elif op == "mT":
            if nd < 2 and (avoid("mT_low_dim") or not self.chance(0.2)):
                return
            form = f"{x}.mT"
        elif op in ("expand", "broadcast_to"):
            shp = [self.choice([2, 3]) if d == 1 and self.chance(0.6)
                   else (-1 if self.chance(0.3) else d) for d in s]
            if not self.large and self.chance(0.3):
                shp = [self.choice([1, 2])] + shp
            if op == "expand":
                form = f"{x}.expand({', '.join(map(str, shp))})" if shp else f"{x}.expand(())"
            else:
                form = self.choice([f"{x}.broadcast_to({tuple(shp)!r})",
                                    f"torch.broadcast_to({x}, {tuple(shp)!r})"])
        elif op == "squeeze":
            if nd and self.chance(0.7):
                d = int(self.rng.integers(-nd, nd))
                form = self.choice([f"{x}.squeeze({d})", f"torch.squeeze({x}, {d})"])
            else:
                form = f"{x}.squeeze()"
        elif op == "unsqueeze":
            d = int(self.rng.integers(-nd - 1, nd + 1))
            form = self.choice([f"{x}.unsqueeze({d})", f"torch.unsqueeze({x}, {d})"])
        elif op == "flatten":
            if nd >= 2 and self.chance(0.5):
                a = int(self.rng.integers(0, nd - 1))
                form = self.choice([f"{x}.flatten({a})", f"torch.flatten({x}, {a}, -1)",
                                    f"{x}.flatten({a}, {a + 1})"])
            else:
                form = self.choice([f"{x}.flatten()", f"torch.flatten({x})"])
            if not t.is_contiguous() and t.numel() and t.ndim > 1:
                try:  # does PyTorch make it a view (grad_fn ReshapeAliasBackward0)?
                    res = eval(form, self.ns)
                    alias = res.untyped_storage().data_ptr() == t.untyped_storage().data_ptr()
                except RuntimeError:
                    alias = False
                loose = alias and avoid("reshape_alias_grad_fn")
        elif op == "select":
            if nd == 0:
                return
            d = int(self.rng.integers(-nd, nd))
            n = s[d]
            i = int(self.rng.integers(-n, n)) if n else 0
            form = self.choice([f"{x}.select({d}, {i})", f"torch.select({x}, {d}, {i})"])
        elif op in ("chunk", "split"):
            if nd == 0:
                return
            d = int(self.rng.integers(-nd, nd))
            n = s[d]
            if op == "chunk":
                c = self.choice([1, 2, 3])
                if c == 1 and avoid("chunk_one_grad"):
                    c = 2
                form = self.choice([f"{x}.chunk({c}, {d})", f"torch.chunk({x}, {c}, {d})"])
            elif self.chance(0.5) or n == 0:
                form = f"{x}.split({self.choice([1, 2, 3])}, {d})"
            else:
                a = int(self.rng.integers(0, n + 1))
                parts = [a, n - a] if not self.chance(0.05) else [a, n - a + 1]
                form = self.choice([f"{x}.split({parts}, {d})", f"torch.split({x}, {parts}, {d})"])
        elif op == "contiguous":
            form = f"{x}.contiguous()"
        else:
            return
        if self.emit(f"{v} = {form}", f"view:{op}", out=v, inputs=[x], loose=loose,
                     exact=True) and \
                op in ("chunk", "split"):
            self.multi_views.update(e for e in self.pool if e.startswith(f"{v}["))

    def fam_join(self):
        x = self.pick_safe(lambda u: u.ndim >= 1 or self.chance(0.1))
        if x is None:
            return
        t = self.val(x)
        s = list(t.shape)
        nd = len(s)
        op = self.choice(["cat", "stack"])
        d = int(self.rng.integers(-nd, nd)) if nd else 0
        if op == "stack":
            d = int(self.rng.integers(-nd - 1, nd + 1))
        others = []
        for _ in range(int(self.rng.integers(1, 3))):
            if self.chance(0.3):
                others.append(x)
                continue
            shp = list(s)
            if op == "cat" and nd:
                shp[d] = int(self.rng.integers(0, 4))
            dt = str(t.dtype).replace("torch.", "")
            if self.chance(0.1):
                dt = self.rand_dtype()
            y = self.new_tensor(tuple(shp), dt)
            if y is None:
                return
            others.append(y)
        items = [x] + others
        self.rng.shuffle(items)
        v = self.fresh()
        lst = ", ".join(items)
        form = self.choice([f"torch.{op}([{lst}], {d})", f"torch.{op}(({lst}), dim={d})"])
        if self.emit(f"{v} = {form}", f"join:{op}", out=v, inputs=items, exact=True) and any(
                not self.val(i).is_contiguous() for i in items) and self.val(v).numel() > 1:
            self.tainted[v] = "cat_stack_layout"

    # ---------------------------------------------------------------- indexing
    def rand_index(self, shape, allow_mask=True, unique=False):
        """Index source for a tensor of ``shape`` (a valid one, mostly). ``unique``: for an
        assignment, an integer index repeats no element (PyTorch leaves the result of a
        repeated one undefined, and its parallel CPU loop does pick either)."""
        nd = len(shape)
        if allow_mask and nd and self.chance(0.15):
            k = int(self.rng.integers(1, nd + 1))
            m = self.rng.random(shape[:k]) < 0.5
            if shape[:k] == () or math.prod(shape[:k]) == 0:
                return "..."
            return f"torch.tensor({_nested(m)})"
        parts = []
        i = 0
        n_adv = 0
        adv_len = self.choice([1, 2, 3])
        ellipsis = False
        want = int(self.rng.integers(1, nd + 2)) if nd else 1
        while len(parts) < want:
            r = self.rng.random()
            if r < 0.08:
                parts.append("None")
                continue
            if r < 0.13 and not ellipsis:
                parts.append("...")
                ellipsis = True
                i = max(i, nd - (want - len(parts)))
                continue
            if i >= nd:
                if self.chance(0.1):
                    parts.append("0")  # one index too many: IndexError
                break
            n = shape[i]
            i += 1
            r = self.rng.random()
            if r < 0.3 and n:
                parts.append(str(int(self.rng.integers(-n, n)) if not self.chance(0.03) else n))
            elif r < 0.7 or n == 0 or n_adv >= (1 if unique else 2):
                a = self.choice([None, 0, 1, -1, -2, n])
                b = self.choice([None, None, 1, -1, n, n + 2, 2])
                st = self.choice([None, None, 1, 2, 3])
                if self.chance(0.02):
                    st = -1
                sl = ("" if a is None else str(a)) + ":" + ("" if b is None else str(b))
                if st is not None:
                    sl += f":{st}"
                parts.append(sl)
            else:
                n_adv += 1
                idx = self.rng.integers(-n, n, adv_len).tolist()
                if unique:
                    idx = [int(i) - (n if self.chance(0.3) else 0) for i in
                           self.rng.choice(n, min(adv_len, n), replace=False)]
                if self.chance(0.1) and not avoid("index_0d_int_tensor"):
                    parts.append(f"torch.tensor({idx[0]})")  # a 0-d index: an int to PyTorch
                elif self.chance(0.5):
                    parts.append(repr(idx))
                else:
                    parts.append(f"torch.tensor({idx})")
        if not parts:
            return "..."
        if len(parts) == 1 and self.chance(0.5):
            return parts[0]
        return ", ".join(parts) + ("," if len(parts) == 1 else "")

    def index_kind(self, idx):
        if idx.startswith("torch.tensor([True") or idx.startswith("torch.tensor([False") or \
                "> " in idx or "torch.tensor([[True" in idx or "torch.tensor([[False" in idx:
            return "mask"
        if "[" in idx:
            return "advanced"
        return "basic"

    def fam_index(self):
        x = self.pick_safe()
        if x is None:
            return
        t = self.val(x)
        if self.chance(0.15) and t.numel():  # a mask made from the tensor
            err = self.err_of([x])
            if self.near(t, 0, err):
                return
            idx = f"{x} > 0"
            kind = "mask"
        elif self.chance(0.1):  # an index tensor from the pool: integers, or a bool mask
            torch = self.torch
            ix = self.pick(lambda u: (u.dtype == torch.int64 and u.numel() < 50) or (
                u.dtype == torch.bool and 0 < u.ndim <= t.ndim and u.shape == t.shape[:u.ndim]))
            if ix is None:
                return
            u = self.val(ix)
            if u.dtype == torch.int64 and u.ndim == 0 and avoid("index_0d_int_tensor"):
                return
            idx, kind = ix, "tensor" if u.dtype == torch.int64 else "mask"
        else:
            idx = self.rand_index(tuple(t.shape))
            kind = self.index_kind(idx)
        if self._mixed_int_list(idx) and avoid("mixed_int_advanced_index"):
            return
        if kind in ("advanced", "tensor") and avoid("index_out_of_bounds_empty"):
            try:
                empty = eval(f"{x}[{idx}]", self.ns).numel() == 0
            except Exception:  # noqa: BLE001 - PyTorch refuses it: compared as an error
                empty = False
            if empty:
                return
        if self._too_many(idx, t.ndim) and self._neg_step(idx) and \
                avoid("index_error_precedence"):
            return
        # several basic parts: PyTorch names the node after the last view it applies
        loose = kind == "basic" and "," in idx and avoid("basic_index_grad_fn")
        # one slice: PyTorch records SliceBackward0 even where it selects the whole dim
        loose = loose or (kind == "basic" and len(self._parts(idx)) == 1 and ":" in idx
                          and avoid("index_single_slice_grad_fn"))
        v = self.fresh()
        if self.emit(f"{v} = {x}[{idx}]", f"index:{kind}", out=v, inputs=[x], loose=loose,
                     exact=True) and \
                kind != "basic" and self.val(v).numel() > 1:
            self.tainted[v] = "advanced_index_layout"

    @staticmethod
    def _parts(idx):
        return [p.strip().rstrip(",") for p in idx.split(", ") if p.strip().rstrip(",")]

    def _too_many(self, idx, nd):
        """An index with more parts than the tensor has dimensions (PyTorch's IndexError)."""
        return len([p for p in self._parts(idx) if p not in ("None", "...")]) > nd

    def _neg_step(self, idx):
        return any(p.endswith(":-1") and p.count(":") == 2 for p in self._parts(idx))

    def _mixed_int_list(self, idx):
        """An int index next to an advanced one, with a slice between (NumPy and PyTorch put
        the advanced dimensions in different places)."""
        parts = [p.strip() for p in idx.split(", ") if p.strip()]
        ints = [k for k, p in enumerate(parts) if p.lstrip("-").isdigit()]
        adv = [k for k, p in enumerate(parts) if p.startswith("[") or p.startswith("torch.")]
        return bool(ints and adv)

    def target(self, for_setitem):
        """An expression to write into: a fresh copy, a pool tensor, or a view of one."""
        r = self.rng.random()
        if r < 0.45:
            src = self.pick_safe()
            if src is None:
                return None
            v = self.fresh()
            form = self.choice([f"{src}.clone()", f"{src} * 1", f"torch.clone({src})",
                                f"{src}.detach().clone()"])
            if not self.emit(f"{v} = {form}", "copy", out=v, inputs=[src], exact=True):
                return None
            return v
        if r < 0.55:
            shape = self.rand_shape()
            v = self.fresh("c")
            form = self.choice([f"torch.zeros({shape})", f"torch.ones({shape})",
                                f"torch.zeros({shape}, requires_grad=True)"])
            if not self.emit(f"{v} = {form}", "create:target", out=v, exact=True):
                return None
            return v
        t = self.pick_safe()
        if t is None:
            return None
        if r < 0.8 or for_setitem:
            return t
        u = self.val(t)
        if u.ndim >= 1 and u.shape[0] and self.chance(0.5):
            return f"{t}[{int(self.rng.integers(u.shape[0]))}]"
        if u.ndim == 2:
            return self.choice([f"{t}.t()", f"{t}[:, ::2]"])
        if u.ndim >= 1 and self.chance(0.4) and not avoid("inplace_on_expanded"):
            return f"{t}.expand(2, {', '.join(map(str, u.shape))})"
        return f"{t}[...]"

    def may_write(self, tgt, setitem=False) -> bool:
        """Whether an in-place write into ``tgt`` stays clear of the KNOWN_OPEN classes."""
        try:
            t = self.val(tgt)
        except RuntimeError:
            # (a view of an output of split/chunk whose base was written: PyTorch refuses to
            # make it, seed 60230; the statement would only repeat that error)
            return False
        if t.numel() == 0 and t.ndim >= 2 and not setitem and avoid("inplace_on_empty"):
            return False
        # a write into part of an expanded view (its elements share memory) of a tensor that
        # requires grad: PyTorch's CopySlices copies the view's gradient back into the base's
        # through that shared memory, and which copy lands last is its kernel's business
        # (seed 5484: x2 = x1.expand(3, ...); x1 /= c; x2[1:2] = v gives c the gradient 0)
        whole = self.val(re.split(r"[\[.]", tgt)[0]) if not setitem else t
        if not isinstance(whole, self.torch.Tensor):  # (an element of split's tuple)
            whole = t
        if t.requires_grad and (setitem or whole is not t) and any(
                st == 0 and n > 1 for st, n in zip(whole.stride(), whole.shape)):
            return False
        if self.unsaved_hit(tgt):
            return False
        aliases = self.aliases(tgt)
        if set(aliases) & set(self.retained) and avoid("retain_grad_then_inplace"):
            return False
        if any(self.val(e)._base is not None for e in set(aliases) & set(self.retained)) and \
                avoid("retain_grad_view_base_write"):
            return False
        if any(e != tgt for e in set(aliases) & set(self.retained)) and \
                avoid("retain_grad_write_through_view"):
            return False
        if set(aliases) & self.fake_views and avoid("matmul_result_is_view"):
            return False
        if set(aliases) & self.multi_views and avoid("inplace_view_of_multi_output_view"):
            return False
        return True

    def layout_dependent(self, x) -> bool:
        """``x`` is laid out differently in the two libraries, and that is still open."""
        return x in self.tainted and avoid(self.tainted[x])

    def mark_unsaved(self, expr, key):
        for e in self.aliases(expr):
            self.unsaved.setdefault(e, key)

    def unsaved_hit(self, tgt) -> bool:
        """Writing into ``tgt`` would change a tensor of a KNOWN_OPEN saved-tensor class."""
        return any(avoid(self.unsaved[e]) for e in self.aliases(tgt) if e in self.unsaved)

    def fam_setitem(self):
        tgt = self.target(True)
        if tgt is None:
            return
        t = self.val(tgt)
        if not self.may_write(tgt, setitem=True):
            return
        if t.ndim == 0 and t._base is not None and avoid("setitem_0d_view_backward"):
            return
        idx = self.rand_index(tuple(t.shape), unique=True)
        if self._mixed_int_list(idx) and avoid("mixed_int_advanced_index"):
            return
        if self._too_many(idx, t.ndim) and avoid("index_error_precedence") and (
                self._neg_step(idx) or t.requires_grad and (t._base is not None or _is_leaf(t))):
            return
        if self._too_many(idx, t.ndim) and t._base is not None and t.requires_grad and \
                avoid("index_error_precedence_view"):
            return
        try:
            region = eval(f"{tgt}[{idx}]", self.ns).shape
        except Exception:  # noqa: BLE001 - PyTorch refuses the index: a scalar, and the error
            region = None
        if region is None and t._base is not None and t.requires_grad and \
                avoid("index_error_precedence_view"):
            return
        kind = self.index_kind(idx)
        if region is None and kind != "basic":
            return  # PyTorch writes part of an out-of-range advanced index before it raises
        if kind != "basic" and region is not None and math.prod(region) == 0 and \
                avoid("setitem_advanced_empty"):
            return
        if self.chance(0.35) or region is None:
            value = repr(self.scalar("float" if self.is_float(t) else None))
            vkind = "scalar"
        else:
            dt = str(t.dtype).replace("torch.", "")
            if self.chance(0.08):
                dt = self.rand_dtype()
            shp = self.bshape(tuple(region)) if self.chance(0.5) else tuple(region)
            rg = dt.startswith("float") and self.chance(0.6)
            src = self.new_tensor(shp, dt, rg)
            if src is None:
                return
            if rg and self.chance(0.5):  # the value is a computed tensor
                w = self.fresh()
                self.emit(f"{w} = {src} * 2", "binary:mul:scalar", out=w, inputs=[src])
                src = w
            value = src
            u = self.val(value)
            vkind = "grad_value" if u.requires_grad else "value"
            if (u.requires_grad and kind != "basic" and avoid("setitem_advanced_value_grad")):
                return
            if u.requires_grad and not self.is_float(t) and \
                    avoid("setitem_grad_value_into_nonfloat"):
                return
            if kind == "mask" and not self._bcast_to(u.shape, region) and \
                    avoid("setitem_mask_value_shape_error"):
                return
            if region == () and u.ndim > 0 and avoid("setitem_value_leading_ones"):
                return
            if u.ndim > len(region) and u.requires_grad and \
                    avoid("setitem_value_extra_dims_backward"):
                return
            if kind == "mask" and u.numel() == 1 and u.dtype != t.dtype and \
                    avoid("setitem_mask_single_value_dtype"):
                return
            if u.requires_grad and any(st == 0 and n > 1 for st, n in zip(t.stride(), t.shape)) \
                    and avoid("setitem_into_expanded_grad_value"):
                return
            if region == () and _is_leaf(u) and u.requires_grad and \
                    avoid("zero_d_leaf_value_grad_device"):
                return
        if region is not None and math.prod(region) > 1 and any(
                st == 0 and n > 1 for st, n in zip(t.stride(), t.shape)) and \
                avoid("setitem_into_expanded_overlap"):
            return
        # an index that selects all of the target: PyTorch writes into the target itself
        full = False
        if region is not None and kind == "basic" and "None" not in idx:
            view = eval(f"{tgt}[{idx}]", self.ns)
            full = (view.shape == t.shape and view.stride() == t.stride()
                    and view.storage_offset() == t.storage_offset())
        # an advanced index with a slice: PyTorch names the node after its own normalization
        sliced = kind == "advanced" and any(":" in p and p.strip() != ":" for p in idx.split(", "))
        code = f"{tgt}[{idx}] = {value}"
        touches = self.aliases(tgt) if tgt.isidentifier() else [tgt]
        if self.emit(code, f"setitem:{kind}:{vkind}", touches=touches,
                     inputs=[tgt] + ([value] if value in self.pool else []), exact=True,
                     loose=(full and avoid("setitem_full_index_grad_fn")) or (
                         full and t.ndim == 0 and avoid("setitem_full_index_0d_grad_fn")) or (
                         sliced and avoid("setitem_advanced_slice_grad_fn")) or
                     self.untracked_view_write(t, touches)) and full:
            self.full_setitem = True
        if self.val(tgt).requires_grad:  # (PyTorch writes through a view: CopySlices)
            self.view_write = True

    def _bcast_to(self, shape, target):
        try:
            return tuple(self.torch.broadcast_shapes(shape, target)) == tuple(target)
        except RuntimeError:
            return False

    INPLACE_UNARY = ["exp_", "neg_", "relu_", "sigmoid_", "tanh_", "sqrt_", "abs_", "square_",
                     "reciprocal_", "log_", "sin_", "cos_", "zero_"]

    def fam_inplace(self):
        tgt = self.target(False)
        if tgt is None or not self.may_write(tgt):
            return
        root = tgt.split("[")[0].split(".")[0]
        t = self.val(tgt)
        a = t.detach().double()
        r = self.rng.random()
        err = self.err_of([root])
        if r < 0.3:  # an in-place activation, comparison, or shape change
            r = self.rng.random()
            if r < 0.5:
                got = self.act_call(tgt, t, inplace=True)
                if got is None:
                    return
                code, kinks, op = got
                if t.is_floating_point() and any(self.near(a, k, err) for k in kinks):
                    return
                if self.nan_grad_varies(op, t):
                    return
                if op == "threshold" and t.requires_grad and any(
                        st == 0 and n > 1 for st, n in zip(t.stride(), t.shape)) and \
                        avoid("threshold_expanded_grad"):
                    return
                if op == "mish" and not self.nan_mode and a.numel() and \
                        float(a.abs().max()) > 30:
                    return
            elif r < 0.8:
                sym, op = self.choice([(">", "gt_"), ("<", "lt_"), (">=", "ge_"), ("<=", "le_"),
                                       ("==", "eq_"), ("!=", "ne_")])
                if self.chance(0.4):
                    y = repr(self.scalar())
                    ov = self.val(y)
                else:
                    y = self.operand(root if t.ndim == 0 else tgt) if tgt.isidentifier() else \
                        self.operand(tgt)
                    if y is None:
                        return
                    ov = self.val(y)
                    if y != tgt and y in self.aliases(tgt) and avoid("inplace_partial_overlap"):
                        return
                    err = max(err, self.err_of([y]))
                try:
                    if self.near(*self.torch.broadcast_tensors(
                            a, self.torch.as_tensor(ov).double()), err):
                        return
                except RuntimeError:
                    pass
                code = self.choice([f"{tgt}.{op}({y})", f"{tgt}.{op[:-1]}_({y})"])
            else:
                op = self.choice(["t_", "unsqueeze_", "squeeze_", "index_put_", "index_copy_"])
                nd = t.ndim
                if op in ("index_put_", "index_copy_"):
                    if nd == 0 or t.shape[0] == 0 or any(
                            st == 0 and n > 1 for st, n in zip(t.stride(), t.shape)):
                        return  # (into shared memory, PyTorch adds in its own order)
                    n = t.shape[0]
                    acc = op == "index_put_" and self.chance(0.5)
                    k = int(self.rng.integers(1, (2 * n if acc else n) + 1))
                    idx = (self.rng.integers(-n, n, k) if acc else self.rng.permutation(n)[:k])
                    vals = self.new_tensor((k,) + tuple(t.shape[1:]),
                                           str(t.dtype).replace("torch.", ""))
                    if vals is None:
                        return
                    index = f"torch.tensor({idx.tolist()})"
                    code = (f"{tgt}.index_put_(({index},), {vals}"
                            f"{', accumulate=True' if acc else ''})" if op == "index_put_"
                            else f"{tgt}.index_copy_(0, {index}, {vals})")
                elif op == "t_":
                    code = f"{tgt}.t_()"
                elif op == "unsqueeze_":
                    code = f"{tgt}.unsqueeze_({int(self.rng.integers(-nd - 1, nd + 1))})"
                else:
                    code = f"{tgt}.squeeze_({int(self.rng.integers(-nd, nd))})" if nd and \
                        self.chance(0.7) else f"{tgt}.squeeze_()"
        elif (r := (r - 0.3) / 0.7) < 0.35:
            op = self.choice(self.INPLACE_UNARY)
            check = self.UNARY.get(op[:-1])
            if check is not None and a.numel() and not self.nan_mode and not bool(check(a)):
                return
            if op in ("sin_", "cos_") and a.numel() and t.is_floating_point() and \
                    err * float(a.abs().nan_to_num(0.0, 0.0, 0.0).max()) > 1e-3:
                return  # (as fam_unary: the sine of a large inexact value; seed 14182)
            if op in ("relu_", "abs_") and self.near(a, 0, err):
                return
            if op == "relu_" and bool(a.isnan().any()) and avoid("relu_grad_nan"):
                return
            code = f"{tgt}.{op}()"
            if op == "relu_" and self.chance(0.3):
                code = f"F.relu({tgt}, inplace=True)"
        elif r < 0.5:
            lo, hi = sorted(self.choice([-1.5, -0.5, 0.0, 0.25, 1.0]) for _ in range(2))
            if self.near(a, lo, err) or self.near(a, hi, err):
                return
            code = self.choice([f"{tgt}.clamp_({lo}, {hi})", f"{tgt}.clamp_(min={lo})",
                                f"{tgt}.clip_({lo}, {hi})"])
            op = "clamp_"
        elif r < 0.6:
            s = self.scalar()
            op = self.choice(["fill_", "pow_"])
            code = f"{tgt}.fill_({s!r})" if op == "fill_" else f"{tgt}.pow_(2)"
        else:
            op = self.choice(["add_", "sub_", "mul_", "div_", "copy_", "+=", "-=", "*=", "/="])
            if self.chance(0.4) and op != "copy_":
                y = repr(self.scalar())
                if op in ("div_", "/=") and y in ("0", "0.0", "False"):
                    y = "2"
                if op in ("sub_", "-=") and y in ("True", "False") and avoid("sub_bool_scalar"):
                    y = "2"
            else:
                y = self.operand(root if t.ndim == 0 else tgt) if tgt.isidentifier() else \
                    self.operand(tgt)
                if y is None:
                    return
                u = self.val(y)
                if y != tgt and y in self.aliases(tgt) and avoid("inplace_partial_overlap"):
                    return
                if op == "copy_" and u.requires_grad and not self.is_float(t) and \
                        avoid("copy_into_nonfloat_requires_grad"):
                    return
                if op == "copy_" and u.ndim > t.ndim and avoid("copy_broadcast_extra_dims"):
                    return
                if op == "copy_" and u.ndim == 0 and t.ndim == 0 and _is_leaf(u) and \
                        u.requires_grad and avoid("zero_d_leaf_value_grad_device"):
                    return
                if op in ("div_", "/=") and u.numel() and not self.nan_mode and \
                        float(u.detach().double().abs().min()) < 0.1:
                    return
            if op.endswith("="):
                if not tgt.isidentifier():
                    return
                code = f"{tgt} {op} {y}"
            else:
                code = f"{tgt}.{op}({y})"
        touches = self.aliases(tgt)
        if not tgt.isidentifier():
            touches = [root] + [e for e in touches if e != root and e != tgt]
        kind = "view" if t._base is not None else "leaf" if _is_leaf(t) else "nonleaf"
        expanded = any(st == 0 and n > 1 for st, n in zip(t.stride(), t.shape))
        if expanded and t.requires_grad and avoid("inplace_expanded_backward"):
            return
        operands = [root] + [w for w in code.replace("(", " ").replace(")", " ").split()
                             if w in self.pool]
        if self.emit(code, f"inplace:{op}:{kind}", touches=tuple(dict.fromkeys(touches)),
                     inputs=operands, loose=self.untracked_view_write(t, touches)):
            self.note_double_backward(op, root)

    def untracked_view_write(self, t, touches) -> bool:
        """A write autograd does not record (``t`` does not require grad: a detached alias)
        into the memory of a view of a tensor that requires grad: PyTorch gives the views a
        new grad_fn (AsStridedBackward0)."""
        if t.requires_grad:
            return False
        views = any(self.val(e)._base is not None and self.val(e)._base.requires_grad
                    for e in touches if e in self.pool)
        return views and avoid("no_grad_inplace_view_grad_fn")

    # ---------------------------------------------------------------- autograd bits
    def fam_hook(self):
        # not on views: PyTorch 2.13 itself crashes (SIGSEGV) registering a hook on a view whose
        # base was written in place after the view was made, e.g.
        #   v = x * 1; w = v[1:]; v.mul_(2); w.register_hook(lambda g: g)
        x = self.pick_safe(lambda u: (u.requires_grad or self.chance(0.1)) and u._base is None)
        if x is None:
            return
        # (None-safe: PyTorch 2.13 calls a leaf's hook with None where a second derivative is
        # undefined, a convolution's by its input)
        fn = self.choice(["lambda g: g if g is None else g * 2",
                          "lambda g: g if g is None else g * 0.5",
                          "lambda g: g if g is None else -g", "lambda g: None",
                          "lambda g: g if g is None else g + 1"])
        if self.val(x).ndim == 0 and ("*" in fn or "+" in fn) and \
                avoid("hook_wrapped_number_grad"):
            fn = "lambda g: g if g is None else -g"
        if self.chance(0.3):
            h = self.fresh("h")
            if self.emit(f"{h} = {x}.register_hook({fn})", "hook", inputs=[x]) and \
                    self.chance(0.5):
                self.emit(f"{h}.remove()", "hook:remove")
        else:
            self.emit(f"{x}.register_hook({fn})", "hook", inputs=[x])

    def fam_retain(self):
        x = self.pick_safe(lambda u: u.requires_grad or self.chance(0.1))
        if x is None:
            return
        if self.emit(f"{x}.retain_grad()", "retain_grad", touches=(x,), inputs=[x]):
            self.retained.append(x)

    def fam_detach(self):
        x = self.pick_safe()
        if x is None:
            return
        v = self.fresh()
        form = self.choice([f"{x}.detach()", f"{x}.detach().requires_grad_()",
                            f"{x}.clone()", f"torch.clone({x})", f"{x}.contiguous()",
                            f"{x}.data"])
        if form.endswith(".contiguous()") and self.layout_dependent(x):
            return
        self.emit(f"{v} = {form}", f"detach:{form.split('.', 1)[1].split('(')[0]}", out=v,
                  inputs=[x], exact=True)
        if self.chance(0.1) and self.is_float(self.val(x)):
            if len(self.aliases(x)) > 1 and avoid("view_requires_grad_after_base"):
                return
            self.emit(f"{x}.requires_grad_({self.choice(['True', 'False'])})", "requires_grad_",
                      touches=(x,))

    def fam_create(self):
        x = self.pick()
        shape = self.rand_shape(large=False)
        forms = [
            f"torch.zeros({shape})", f"torch.ones({', '.join(map(str, shape))})"
            if shape or not avoid("factory_no_size") else "torch.ones(())",
            f"torch.full({shape}, 1.5)", f"torch.full({shape}, 3)",
            f"torch.zeros({shape}, dtype=torch.float64)", f"torch.ones({shape}, dtype=torch.int64)",
            f"torch.arange({self.choice([0, 1, 3, 5])})", "torch.arange(1, 7, 2)",
            "torch.arange(0.0, 2.0, 0.5)", f"torch.linspace(0, 1, {self.choice([1, 2, 5])})",
            f"torch.eye({self.choice([1, 2, 3])})", "torch.eye(2, 3)",
            f"torch.full({shape}, True)", f"torch.ones({shape}, requires_grad=True)",
        ]
        if x is not None:
            forms += [f"torch.zeros_like({x})", f"torch.ones_like({x})",
                      f"torch.full_like({x}, 2.5)", f"{x}.new_zeros({shape})",
                      f"{x}.new_ones({shape})", f"{x}.new_full({shape}, 2)",
                      f"{x}.new_tensor([1.5, 2.0])", f"torch.zeros_like({x}, dtype=torch.float64)"]
            # values PyTorch leaves undefined or random: only the shape and dtype are compared
            forms += [f"torch.empty_like({x}).shape"]
            if self.is_float(self.val(x)) or not avoid("rand_like_nonfloat"):
                forms += [f"torch.rand_like({x}).dtype", f"torch.randn_like({x}).shape"]
        v = self.fresh("c")
        form = self.choice(forms)
        if x is not None and "_like(" in form and self.val(x).ndim == 0 and \
                avoid("like_factories_0d"):
            return
        self.emit(f"{v} = {form}", f"create:{form.split('(')[0].split('.')[-1]}", out=v,
                  touches=(v,), exact="linspace" not in form)

    def fam_convert(self):
        x = self.pick_safe()
        if x is None:
            return
        t = self.val(x)
        to = self.choice(["float", "double", "long", "int", "bool", "byte", "char", "short"])
        if to != "float" and to != "double" and self.is_float(t):
            a = t.detach().double()
            if not bool(self.torch.isfinite(a).all()):
                return  # casting NaN/inf to an integer is undefined in C
            if self.near(a, a.trunc(), self.err_of([x])) or self.near(a, 0, self.err_of([x])):
                return
            lo, hi = {"byte": (0, 255), "char": (-128, 127), "short": (-32768, 32767)}.get(
                to, (-2.0 ** 31, 2.0 ** 31 - 1))
            if a.numel() and (float(a.min()) <= lo - 1 or float(a.max()) >= hi + 1):
                return  # (out of the integer type's range: undefined in C)
        forms = {"float": [f"{x}.float()", f"{x}.to(torch.float32)", f"{x}.type(torch.float32)"],
                 "double": [f"{x}.double()", f"{x}.to(torch.float64)",
                            f"{x}.to(dtype=torch.float64)"],
                 "long": [f"{x}.long()", f"{x}.to(torch.int64)"],
                 "int": [f"{x}.int()", f"{x}.to(torch.int32)"],
                 "bool": [f"{x}.bool()", f"{x}.to(torch.bool)"],
                 "byte": [f"{x}.byte()", f"{x}.to(torch.uint8)", f"{x}.type(torch.uint8)"],
                 "char": [f"{x}.char()", f"{x}.to(torch.int8)"],
                 "short": [f"{x}.short()", f"{x}.to(torch.int16)",
                           f"{x}.to(dtype=torch.int16)"]}[to]
        v = self.fresh()
        self.emit(f"{v} = {self.choice(forms)}", f"convert:{to}", out=v, inputs=[x])

    def fam_loss(self):
        r = self.rng.random()
        v = self.fresh()
        rd = self.choice(["", ", reduction='sum'", ", reduction='none'", ", reduction='mean'"])
        if r < 0.5:
            got = self.loss_more(v, rd)
            if got is None:
                return
            form, ins = got
            t = self.val(ins[0])
            name = form.split('(')[0].split('.')[-1]
            if self.emit(f"{v} = {form}", f"loss:{name}", out=v, inputs=ins,
                         factor=10.0 if t.numel() > 1000 else 2.0):
                self.note_double_backward(name, v)
            return
        r = self.rng.random()
        if r < 0.5:
            x = self.pick_safe(lambda u: self.is_float(u))
            if x is None:
                return
            t = self.val(x)
            y = self.operand(x, dtype=str(t.dtype).replace("torch.", ""),
                             bshape=self.chance(0.1))
            if y is None:
                return
            form = f"F.mse_loss({x}, {y}{rd})"
            tag = "loss:mse_loss"
            if (t.numel() == 0 or self.val(y).numel() == 0) and "sum" not in rd and \
                    "none" not in rd and avoid("mse_loss_empty_mean_backward"):
                return
        else:
            x = self.pick_safe(lambda u: self.is_float(u) and u.ndim == 2)
            if x is None:
                return
            t = self.val(x)
            n, c = t.shape
            tgt = self.rng.integers(0, max(c, 1), n).tolist()
            if self.chance(0.05) and n:
                tgt[0] = c  # out of range
            target = f"torch.tensor({tgt}, dtype=torch.int64)" if n else \
                "torch.zeros(0, dtype=torch.int64)"
            if self.log_softmax_cancels(t, 1):
                return
            if self.nan_mode and avoid("nll_loss_backward_inf_grad"):
                return  # (the loss's weights may be infinite)
            if self.chance(0.5):
                form = f"F.cross_entropy({x}, {target}{rd})"
                tag = "loss:cross_entropy"
            else:
                form = f"F.nll_loss(F.log_softmax({x}, dim=1), {target}{rd})"
                tag = "loss:nll_loss"
        if self.emit(f"{v} = {form}", tag, out=v, inputs=[x], factor=10.0 if t.numel() > 1000
                     else 1.0, loose=avoid("loss_grad_fn_names")) and tag == "loss:mse_loss":
            self.mark_unsaved(x, "loss_saved_inputs")
            self.mark_unsaved(y, "loss_saved_inputs")

    # activations: name -> (kinks: points where the value or the slope jumps, given the
    # parameters; domain check or None)
    ACT = ["hardtanh", "relu6", "logsigmoid", "selu", "celu", "mish", "softsign", "hardswish",
           "hardsigmoid", "threshold", "glu", "softmin", "tanhshrink", "softshrink",
           "hardshrink", "prelu", "elu", "leaky_relu", "gelu", "silu", "softplus", "rrelu"]
    # the activations with an in-place spelling (F.<name>(x, inplace=True); the trailing-_
    # functions PyTorch has)
    ACT_INPLACE = {"hardtanh": ["F.hardtanh_"], "relu6": [], "selu": ["torch.selu_"],
                   "celu": ["torch.celu_"], "elu": ["F.elu_"], "leaky_relu": ["F.leaky_relu_"],
                   "threshold": ["F.threshold_", "torch.threshold_"], "hardswish": [],
                   "hardsigmoid": [], "silu": [], "mish": [], "rrelu": ["F.rrelu_"]}

    def act_call(self, x, t, inplace=False):
        """(code, kinks) for a random activation of ``x`` (its value ``t``); None if none fits.
        ``inplace``: a spelling that writes into ``x``."""
        name = self.choice(list(self.ACT_INPLACE) if inplace else self.ACT)
        args, kinks, fn = "", [], f"F.{name}"
        if name == "hardtanh":
            lo, hi = sorted(self.choice([-1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0]) for _ in range(2))
            if self.chance(0.4):
                lo, hi = -1.0, 1.0
            else:
                args = self.choice([f", {lo}, {hi}", f", min_val={lo}, max_val={hi}"])
            kinks = [lo, hi]
        elif name == "relu6":
            kinks = [0.0, 6.0]
        elif name in ("hardswish", "hardsigmoid"):
            kinks = [-3.0, 3.0]
        elif name == "threshold":
            th, val = self.choice([0.0, 0.5, -1.0, 1.25]), self.choice([0.0, -2.0, 1.5, 20.0])
            args = self.choice([f", {th}, {val}", f", threshold={th}, value={val}"])
            kinks = [th]
        elif name in ("softshrink", "hardshrink"):
            lam = self.choice([None, 0.25, 1.0, 0.0])
            if lam is not None:
                args = self.choice([f", {lam}", f", lambd={lam}"])
            kinks = [0.5 if lam is None else lam, -(0.5 if lam is None else lam)]
        elif name in ("elu", "celu"):
            alpha = self.choice([None, 0.5, 2.0, 1.0])
            if alpha is not None:
                args = self.choice([f", {alpha}", f", alpha={alpha}"])
            kinks = [0.0]
        elif name == "selu":
            kinks = [0.0]
        elif name == "leaky_relu":
            slope = self.choice([None, 0.1, 0.25, -0.5, 2.0])
            if slope is not None:
                args = self.choice([f", {slope}", f", negative_slope={slope}"])
            kinks = [0.0]
        elif name == "rrelu":  # (training=False, the default: the mean slope)
            if self.chance(0.5):
                args = self.choice([", 0.125, 0.25", ", lower=0.1, upper=0.3"])
            kinks = [0.0]
        elif name == "softplus":
            beta, th = self.choice([2.0, 0.5]), self.choice([1.0, 2.0])
            args, beta, th = self.choice([("", 1.0, 20.0), (f", {beta}", beta, 20.0),
                                          (f", beta={beta}, threshold={th}", beta, th),
                                          (f", threshold={th}", 1.0, th)])
            kinks = [th / beta]
        elif name == "gelu":
            if self.chance(0.4):
                args = ", approximate='tanh'"
        elif name in ("glu", "softmin"):
            if t.ndim == 0 and name == "glu":
                return None
            nd = max(t.ndim, 1)
            d = int(self.rng.integers(-nd, nd))
            if name == "glu" and t.shape[d] % 2 and not self.chance(0.05):
                return None  # (an odd size: PyTorch's error, now and then)
            args = self.choice([f", {d}", f", dim={d}"])
            if name == "softmin" and self.log_softmax_cancels(
                    -t.detach() if self.is_float(t) else t, d):  # (a view PyTorch may refuse)
                return None
        elif name == "prelu":
            c = t.shape[1] if t.ndim >= 2 else 1
            if c != 1 and self.chance(0.5):
                w = self.new_tensor((c,), "float32" if t.dtype != self.torch.float64
                                    else "float64")
            else:
                w = self.new_tensor((1,), "float32" if t.dtype != self.torch.float64
                                    else "float64")
            if w is None:
                return None
            args = f", {w}"
            fn = self.choice(["F.prelu", "torch.prelu"])
            kinks = [0.0]
        if name in ("relu6", "hardtanh", "hardswish", "hardsigmoid", "selu", "celu",
                    "threshold", "prelu") and not inplace and fn == f"F.{name}" and \
                self.chance(0.2) and hasattr(self.torch, name):
            fn = f"torch.{name}"
            if name == "hardtanh" and "=" in args:
                args = args.replace("min_val=", "").replace("max_val=", "")
        if inplace:
            spellings = [f"{fn}({x}{args}, inplace=True)"] + [
                f"{s}({x}{args})" for s in self.ACT_INPLACE[name]]
            return self.choice(spellings), kinks, name
        return f"{fn}({x}{args})", kinks, name

    DOUBLE_BACKWARD_NAMES = {"glu", "rrelu", "soft_margin_loss", "aminmax", "batch_norm",
                             "layer_norm", "instance_norm", "embedding"}

    def note_double_backward(self, name, out):
        """``name`` (an op) made ``out``: if it is of the double_backward_node_names class and
        recorded, the gradients under create_graph are not compared by node name."""
        v = self.val(out)
        if name in self.DOUBLE_BACKWARD_NAMES and isinstance(v, self.torch.Tensor) and \
                v.requires_grad:
            self.dbl_names = True

    def nan_grad_varies(self, name, t) -> bool:
        """PyTorch's gradient of these activations at NaN is 0 from its vectorized kernel and
        the incoming gradient from its scalar one (the tail of a row): seeds 7241, 10178; elu,
        selu and celu's NaN (the negative side) against the positive side's slope: 159123."""
        return name in ("softshrink", "hardshrink", "hardtanh", "relu6", "hardswish",
                        "hardsigmoid", "elu", "selu", "celu") and t.is_floating_point() and t.requires_grad and \
            bool(t.detach().isnan().any())

    def fam_act(self):
        x = self.pick_safe(lambda u: self.is_float(u) or self.chance(0.1))
        if x is None:
            return
        t = self.val(x)
        got = self.act_call(x, t)
        if got is None:
            return
        code, kinks, name = got
        err = self.err_of([x])
        if t.is_floating_point() and any(self.near(t, k, err) for k in kinks):
            return
        if name in ("softplus", "mish") and t.is_floating_point() and t.numel() and \
                not self.nan_mode and float(t.detach().abs().max()) > 30:
            return
        if self.nan_grad_varies(name, t):
            return
        factor = 1.0
        if name == "gelu" and t.is_floating_point() and t.numel():
            a = t.detach().double()
            if bool(a.isinf().any()):
                return  # (PyTorch's vectorized float kernel gives NaN at +-inf, its scalar one not)
            # x * Phi(x) for x < 0 cancels in 1 + erf(x / sqrt 2), and PyTorch's vectorized erf
            # is a few ulps off: (-3.0 gives -0.004050225 there, -0.0040496886 exactly)
            lo = float(a.nan_to_num(0.0).min())
            factor = min(100.0, max(1.0, 1e-2 / max(1 + math.erf(lo / math.sqrt(2)), 1e-30)))
        v = self.fresh()
        if self.emit(f"{v} = {code}", f"act:{name}", out=v, factor=factor, inputs=[x] + [
                w for w in re.findall(r"\b[a-z]+\d+\b", code) if w in self.pool and w != x]):
            self.note_double_backward(name, v)
            if name == "softmin":
                self.note_normalized(v, int(re.search(r"(-?\d+)\)$", code).group(1)))

    LOSSES = ["l1_loss", "smooth_l1_loss", "huber_loss", "soft_margin_loss",
              "margin_ranking_loss", "hinge_embedding_loss", "cosine_embedding_loss",
              "triplet_margin_loss", "multilabel_soft_margin_loss", "poisson_nll_loss",
              "gaussian_nll_loss", "multi_margin_loss", "pairwise_distance",
              "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div"]

    def sign_target(self, shape, zero_one=False):
        """A new tensor of -1/1 (or 0/1) labels, float32."""
        a = self.rng.integers(0, 2, shape).astype(float)
        a = a if zero_one else 2 * a - 1
        name = self.fresh("c")
        code = f"torch.tensor(np.array({_nested(a)}, dtype=np.float32))" if a.size else \
            f"torch.zeros({tuple(shape)})"
        if a.size >= 64:
            code = (f"torch.tensor(np.random.default_rng({int(self.rng.integers(1000))})"
                    f".integers(0, 2, {tuple(shape)}).astype(np.float32))")
            code = code if zero_one else f"{code} * 2 - 1"
        return name if self.emit(f"{name} = {code}", "input", out=name, exact=True) else None

    def loss_more(self, v, rd):
        """One of the losses besides mse / cross_entropy / nll: (code, tag, operands) or None."""
        torch = self.torch
        name = self.choice(self.LOSSES)
        x = self.pick_safe(lambda u: self.is_float(u) and (u.ndim >= 1 or self.chance(0.3)))
        if x is None:
            return None
        t = self.val(x)
        a = t.detach().double()
        dt = str(t.dtype).replace("torch.", "")
        s = tuple(t.shape)
        err = self.err_of([x])
        ops = [x]
        if name in ("l1_loss", "smooth_l1_loss", "huber_loss"):
            y = self.operand(x, dtype=dt, bshape=self.chance(0.1))
            if y is None:
                return None
            ops.append(y)
            try:
                d = a - self.val(y).detach().double()
            except RuntimeError:
                d = None
            arg, kinks = "", [0.0]
            if name == "smooth_l1_loss":
                beta = self.choice([1.0, 0.5, 2.0, 0.0])
                arg = self.choice(["", f", beta={beta}"])
                kinks.append(1.0 if not arg else beta)
            elif name == "huber_loss":
                delta = self.choice([1.0, 0.5, 2.0])
                arg = self.choice(["", f", delta={delta}"])
                kinks.append(1.0 if not arg else delta)
            if d is not None and any(self.near(d.abs(), k, max(err, self.err_of([y])))
                                     for k in kinks):
                return None
            return f"F.{name}({x}, {y}{arg}{rd})", ops
        if name in ("soft_margin_loss", "multilabel_soft_margin_loss",
                    "binary_cross_entropy_with_logits"):
            if name == "multilabel_soft_margin_loss" and t.ndim not in (1, 2):
                return None
            y = self.sign_target(s, zero_one=name != "soft_margin_loss")
            if y is None:
                return None
            if name == "binary_cross_entropy_with_logits" and self.chance(0.3) and t.ndim:
                w = self.new_tensor((s[-1],), dt, positive=True)
                arg = self.choice([f", pos_weight={w}", f", weight={w}"]) if w else ""
                ops.append(w)
            else:
                arg = ""
            if not self.nan_mode and t.numel() and float(a.abs().max()) > 30:
                return None
            return f"F.{name}({x}, {y}{arg}{rd})", ops + [y]
        if name == "binary_cross_entropy":
            if not self.nan_mode and t.numel() and float(a.abs().max()) > 8:
                return None  # (a probability near 0 or 1: its log is clamped at -100)
            y = self.sign_target(s, zero_one=True)
            if y is None:
                return None
            if self.chance(0.3):  # soft labels
                y2 = self.fresh("c")
                if not self.emit(f"{y2} = {y} * 0.5 + 0.25", "input", out=y2, exact=True):
                    return None
                y = y2
            return f"F.binary_cross_entropy(torch.sigmoid({x}), {y}{rd})", ops + [y]
        if name == "kl_div":
            if t.ndim == 0 or self.log_softmax_cancels(t, -1):
                return None
            lt = self.chance(0.4)
            y = self.new_tensor(s, dt, requires_grad=self.chance(0.3), positive=True)
            if y is None:
                return None
            tgt = f"{y}.log()" if lt else y
            rd2 = self.choice([rd, ", reduction='batchmean'"])
            arg = ", log_target=True" if lt else ""
            return f"F.kl_div(F.log_softmax({x}, -1), {tgt}{rd2}{arg})", ops + [y]
        if name == "margin_ranking_loss":
            y = self.operand(x, dtype=dt, bshape=False)
            lab = self.sign_target(s)
            if y is None or lab is None:
                return None
            m = self.choice([0.0, 0.5, 1.0])
            arg = self.choice(["", f", margin={m}"])
            m = m if arg else 0.0
            d = self.val(lab).double() * (a - self.val(y).detach().double())
            if self.near(d, m, max(err, self.err_of([y]))):
                return None
            return f"F.margin_ranking_loss({x}, {y}, {lab}{arg}{rd})", ops + [y, lab]
        if name == "hinge_embedding_loss":
            lab = self.sign_target(s)
            if lab is None:
                return None
            m = self.choice([1.0, 0.5, 2.0])
            arg = self.choice(["", f", margin={m}"])
            m = m if arg else 1.0
            if self.near(a, m, err):
                return None
            return f"F.hinge_embedding_loss({x}, {lab}{arg}{rd})", ops + [lab]
        if name in ("cosine_embedding_loss", "pairwise_distance", "triplet_margin_loss"):
            if t.ndim not in (1, 2) or t.numel() == 0:
                return None
            others = [self.operand(x, dtype=dt, bshape=False)
                      for _ in range(2 if name == "triplet_margin_loss" else 1)]
            if None in others or any(self.val(o).numel() == 0 for o in others):
                return None
            b = [self.val(o).detach().double() for o in others]
            err = max([err] + [self.err_of([o]) for o in others])
            if name == "pairwise_distance":
                p = self.choice([2.0, 1.0, 3.0])
                arg = self.choice(["", f", p={p}", f", p={p}, keepdim=True", ", eps=0.0"])
                if "eps=0.0" in arg and bool(((a - b[0]) == 0).any()):
                    return None  # (|0|'s gradient: 0 against nan)
                if self.near(a - b[0], -1e-6, err):
                    return None
                return f"F.pairwise_distance({x}, {others[0]}{arg})", ops + others
            if name == "cosine_embedding_loss":
                lab = self.sign_target(s[:1] if t.ndim == 2 else ())
                if lab is None:
                    return None
                if float(a.norm(dim=-1).min()) < 0.1 or float(b[0].norm(dim=-1).min()) < 0.1:
                    return None
                m = self.choice([0.0, 0.5, -0.25])
                arg = self.choice(["", f", margin={m}"])
                m = m if arg else 0.0
                cos = torch.nn.functional.cosine_similarity(a, b[0], dim=-1)
                if self.near(cos, m, err * 10):
                    return None
                return f"F.cosine_embedding_loss({x}, {others[0]}, {lab}{arg}{rd})", \
                    ops + others + [lab]
            m = self.choice([1.0, 0.5, 2.0])
            p = self.choice([2.0, 1.0])
            swap = self.chance(0.2)
            arg = self.choice(["", f", margin={m}", f", margin={m}, p={p}"]) + (
                ", swap=True" if swap else "")
            m = m if "margin" in arg else 1.0
            p = p if "p=" in arg else 2.0
            pd = torch.nn.functional.pairwise_distance
            dp, dn = pd(a, b[0], p=p), pd(a, b[1], p=p)
            if swap:
                try:  # (the swapped distance may not broadcast as the other two do)
                    alt = pd(b[0], b[1], p=p)
                except RuntimeError:
                    return None
                if alt.shape != dn.shape:
                    return None
                dn = torch.minimum(dn, alt)
                if self.near(pd(a, b[1], p=p), pd(b[0], b[1], p=p), err * 10):
                    return None
            if self.near(dp - dn + m, 0, err * 10) or (p == 1.0 and any(
                    self.near(a - o, -1e-6, err) for o in b)):
                return None
            return f"F.triplet_margin_loss({x}, {others[0]}, {others[1]}{arg}{rd})", \
                ops + others
        if name == "poisson_nll_loss":
            log_input = self.chance(0.6)
            y = self.new_tensor(s, dt, requires_grad=False, positive=self.chance(0.5))
            if y is None:
                return None
            yv = self.val(y).double()
            if not self.nan_mode and t.numel():
                if log_input and float(a.max()) > 10:
                    return None
                if not log_input and float(a.min()) < 0.05:
                    return None
            full = self.chance(0.3)
            if full and bool((yv < 0).any()):
                return None  # (log of a negative target)
            arg = ("" if log_input else ", log_input=False") + (", full=True" if full else "")
            return f"F.poisson_nll_loss({x}, {y}{arg}{rd})", ops + [y]
        if name == "gaussian_nll_loss":
            y = self.operand(x, dtype=dt, bshape=False)
            var = self.new_tensor(s if self.chance(0.7) else s[:-1] + (1,) if s else s, dt,
                                  positive=True)
            if y is None or var is None:
                return None
            arg = ", full=True" if self.chance(0.3) else ""
            return f"F.gaussian_nll_loss({x}, {y}, {var}{arg}{rd})", ops + [y, var]
        if name == "multi_margin_loss":
            if t.ndim not in (1, 2) or t.numel() == 0:
                return None
            n, c = (s[0], s[1]) if t.ndim == 2 else (None, s[0])
            if c > 1024:
                # (PyTorch's kernel adds the target's gradient up class by class in the input's
                # dtype, numbagrad pairwise: over many classes the rounding of a gradient that
                # cancels differs, by far more than its size: seed 129574)
                return None
            tg = self.rng.integers(0, c, n if n is not None else ()).tolist()
            target = f"torch.tensor({tg})"
            p = self.choice([1, 2])
            m = self.choice([1.0, 0.5])
            arg = self.choice(["", f", p={p}", f", margin={m}", f", p={p}, margin={m}"])
            p, m = (p if "p=" in arg else 1), (m if "margin" in arg else 1.0)
            a2 = a if t.ndim == 2 else a[None]
            idx = torch.tensor(tg if n is not None else [tg]).reshape(-1, 1)
            gap = m - a2.gather(1, idx) + a2
            if self.near(gap, 0, err * 10):
                return None
            return f"F.multi_margin_loss({x}, {target}{arg}{rd})", ops
        return None

    API = ["tensor_split", "hsplit", "vsplit", "hstack", "vstack", "column_stack",
           "index_copy", "index_put", "take", "nansum", "nanmean", "cummax", "cummin",
           "logcumsumexp", "aminmax", "fmax", "fmin", "dist", "kron", "ravel"]

    def near_pair(self, t, dim, err) -> bool:
        """Two values of one slice along ``dim`` are closer than rounding could explain (a
        running max could pick either)."""
        if err <= 0 or t.numel() < 2:
            return False
        x = t.detach().double().nan_to_num(0.0, 1e300, -1e300)
        if x.ndim == 0:
            return False
        s = x.sort(dim).values
        n = s.shape[dim]
        return n >= 2 and self.near(s.narrow(dim, 0, n - 1), s.narrow(dim, 1, n - 1), err)

    def fam_api(self):
        torch = self.torch
        op = self.choice(self.API)
        x = self.pick_safe()
        if x is None:
            return
        t = self.val(x)
        a = t.detach().double()
        s = tuple(t.shape)
        nd = len(s)
        err = self.err_of([x])
        v = self.fresh()
        ins = [x]
        exact, factor = False, 1.0
        d = int(self.rng.integers(-nd, nd)) if nd else self.choice([0, -1])
        if op in ("tensor_split", "hsplit", "vsplit"):
            exact = True
            if op == "tensor_split":
                if self.chance(0.5):
                    how = str(self.choice([1, 2, 3, 5]))
                else:
                    n = s[d] if nd else 0
                    how = repr(sorted(int(i) for i in self.rng.integers(-1, n + 2, 2)))
                    if self.chance(0.3):
                        how = f"torch.tensor({how})"
                form = self.choice([f"{x}.tensor_split({how}, {d})",
                                    f"torch.tensor_split({x}, {how}, dim={d})"])
                if self.chance(0.2):
                    form = f"{x}.tensor_split({how})"
            else:
                dd = 1 if op == "hsplit" and nd >= 2 else 0
                n = s[dd] if nd > dd else 0
                how = self.choice([self.choice([1, 2, 3]), [int(self.rng.integers(0, n + 2))]])
                form = self.choice([f"{x}.{op}({how!r})", f"torch.{op}({x}, {how!r})"])
        elif op in ("hstack", "vstack", "column_stack"):
            exact = True
            others = []
            for _ in range(int(self.rng.integers(1, 3))):
                if self.chance(0.3):
                    others.append(x)
                    continue
                shp = list(s)
                dd = {"hstack": 1 if nd >= 2 else 0, "vstack": 0, "column_stack": 1}[op]
                if op == "vstack" and nd <= 1:
                    shp = [int(self.rng.integers(1, 3))] + shp if self.chance(0.4) else shp
                elif op == "column_stack" and nd <= 1:
                    shp = shp + [int(self.rng.integers(1, 3))] if self.chance(0.5) else shp
                elif len(shp) > dd:
                    shp[dd] = int(self.rng.integers(0, 4))
                y = self.new_tensor(tuple(shp), str(t.dtype).replace("torch.", "") if
                                    self.chance(0.9) else self.rand_dtype())
                if y is None:
                    return
                others.append(y)
            items = [x] + others
            self.rng.shuffle(items)
            ins = items
            form = self.choice([f"torch.{op}([{', '.join(items)}])",
                                f"torch.{op}(({', '.join(items)},))"])
        elif op == "index_copy":
            if nd == 0 and not self.chance(0.2):
                return
            n = s[d] if nd else 1
            k = int(self.rng.integers(0, n + 1))
            idx = self.rng.permutation(n)[:k].tolist()
            shp = list(s)
            if nd:
                shp[d] = k
            src = self.new_tensor(tuple(shp), str(t.dtype).replace("torch.", ""))
            if src is None:
                return
            ins = [x, src]
            index = f"torch.tensor({idx}, dtype=torch.int64)" if idx else \
                "torch.zeros(0, dtype=torch.int64)"
            if nd == 0:
                index = "torch.tensor([0])"
            form = self.choice([f"{x}.index_copy({d}, {index}, {src})",
                                f"torch.index_copy({x}, {d}, {index}, {src})"])
            exact = True
        elif op == "index_put":
            if nd == 0 or s[0] == 0:
                return
            acc = self.chance(0.6)
            n = s[0]
            k = int(self.rng.integers(1, 2 * n + 1))
            idx = (self.rng.integers(-n, n, k) if acc else self.rng.permutation(n)[:k]).tolist()
            vals = self.new_tensor((len(idx),) + s[1:] if self.chance(0.8) else s[1:],
                                   str(t.dtype).replace("torch.", ""))
            if vals is None:
                return
            ins = [x, vals]
            arg = self.choice([", accumulate=True", ", True"]) if acc else \
                self.choice(["", ", accumulate=False"])
            form = self.choice([f"{x}.index_put((torch.tensor({idx}),), {vals}{arg})",
                                f"torch.index_put({x}, (torch.tensor({idx}),), {vals}{arg})"])
            exact = not acc
        elif op == "take":
            n = t.numel()
            if n == 0:
                return
            idx = self.rng.integers(-n, n, self.choice([(3,), (2, 2), (), (0,)])).tolist()
            form = self.choice([f"{x}.take(torch.tensor({idx}, dtype=torch.int64))",
                                f"torch.take({x}, torch.tensor({idx}, dtype=torch.int64))"])
            exact = True
        elif op in ("nansum", "nanmean", "logcumsumexp"):
            if op == "logcumsumexp":
                if nd == 0 and self.chance(0.5):
                    return
                if t.numel() and float(a.max()) > 50 and not self.nan_mode:
                    return
                form = self.choice([f"{x}.logcumsumexp({d})", f"torch.logcumsumexp({x}, {d})",
                                    f"torch.logcumsumexp({x}, dim={d})"])
            else:
                dim = self.rand_dim(nd, True) if self.chance(0.6) else None
                kd = ", keepdim=True" if dim is not None and self.chance(0.3) else ""
                form = self.choice([f"{x}.{op}()", f"torch.{op}({x})"]) if dim is None else \
                    self.choice([f"{x}.{op}({dim!r}{kd})", f"torch.{op}({x}, dim={dim!r}{kd})"])
                if t.numel():
                    b = a.nan_to_num(0.0, 0.0, 0.0)
                    try:
                        sm = b.sum() if dim is None else b.sum(dim)
                        sa = b.abs().sum() if dim is None else b.abs().sum(dim)
                        factor = float(min(max((sa / sm.abs().clamp(min=1e-300)).max(), 1.0),
                                           1e4))
                    except (RuntimeError, IndexError):
                        pass
        elif op in ("cummax", "cummin"):
            if self.near_pair(t, d if nd else 0, err):
                return
            if t.numel() == 0 and t.requires_grad and t._base is not None:
                # (the gradient is the input itself, PyTorch's cummaxmin_backward: a view of a
                # leaf, then a second backward writes the leaf's .grad into the leaf's memory
                # and its views' nodes become AsStridedBackward0; numbagrad's .grad is its own)
                return
            form = self.choice([f"{x}.{op}({d})", f"torch.{op}({x}, {d})",
                                f"torch.{op}({x}, dim={d})"])
            exact = True
        elif op == "aminmax":
            dim = d if self.chance(0.6) else None
            if self.near_tie(t, dim if nd else None, err):
                return
            kd = ", keepdim=True" if dim is not None and self.chance(0.3) else ""
            form = self.choice([f"torch.aminmax({x})", f"{x}.aminmax()"]) if dim is None else \
                self.choice([f"torch.aminmax({x}, dim={dim}{kd})", f"{x}.aminmax(dim={dim}{kd})"])
            exact = True
        elif op in ("fmax", "fmin"):
            y = self.operand(x)
            if y is None:
                return
            ins = [x, y]
            try:
                if self.near(*torch.broadcast_tensors(a, self.val(y).detach().double()),
                             max(err, self.err_of([y]))):
                    return
            except RuntimeError:
                pass
            form = self.choice([f"torch.{op}({x}, {y})", f"{x}.{op}({y})"])
            exact = True
        elif op == "dist":
            y = self.operand(x)
            if y is None:
                return
            ins = [x, y]
            p = self.choice([2, 1, 3, 0, "float('inf')"])
            if p == 0 and (t.requires_grad or self.val(y).requires_grad):
                p = 1  # (PyTorch's backward of dist(x, y, 0) fails: an undefined gradient)
            form = self.choice([f"torch.dist({x}, {y})" if p == 2 else
                                f"torch.dist({x}, {y}, {p})", f"{x}.dist({y}, p={p})"])
            try:
                diff = (a - self.val(y).detach().double()).abs()
            except RuntimeError:
                diff = None
            e2 = max(err, self.err_of([y]))
            if diff is not None and diff.numel():
                if self.near(diff, 0, e2) or (p != 2 and p != 3 and self.near_tie(diff, None, e2)):
                    return
                if p == 2 or p == 3:
                    factor = 10.0
                    if diff.numel() >= LARGE and (t.requires_grad or self.val(y).requires_grad):
                        # a norm over many terms: its second derivative cancels them to
                        # rounding (seed 249179: 0 exactly, 0.02 in PyTorch's float32)
                        self.big_curved_reduce = True
        elif op == "kron":
            if t.numel() > 64 or t.stride() != self.torch.empty(t.shape).stride():
                # (PyTorch's kron of some non-contiguous layouts fails a view: seed 12190; of a
                # contiguous one too, where a size-1 dim has another stride: seed 101219)
                return
            y = self.new_tensor(self.rand_shape(large=False), str(t.dtype).replace("torch.", ""))
            if y is None or self.val(y).numel() > 64:
                return
            ins = [x, y]
            form = self.choice([f"torch.kron({x}, {y})", f"{x}.kron({y})"])
            if self.emit(f"{v} = {form}", "api:kron", out=v, inputs=ins):
                for e, other in ((x, y), (y, x)):
                    if not self.val(e).requires_grad and self.val(other).requires_grad:
                        self.mark_unsaved(e, "kron_saved_operand")
            return
        else:  # ravel
            if self.layout_dependent(x):
                return
            form = self.choice([f"{x}.ravel()", f"torch.ravel({x})"])
            exact = True
            loose = False
            if not t.is_contiguous() and t.numel() and t.ndim > 1:
                try:
                    res = eval(form, self.ns)
                    loose = res.untyped_storage().data_ptr() == \
                        t.untyped_storage().data_ptr() and avoid("reshape_alias_grad_fn")
                except RuntimeError:
                    pass
            self.emit(f"{v} = {form}", "api:ravel", out=v, inputs=ins, exact=True, loose=loose)
            return
        if self.emit(f"{v} = {form}", f"api:{op}", out=v, inputs=ins, exact=exact,
                     factor=factor):
            self.note_double_backward(op, f"{v}[0]" if op == "aminmax" else v)

    def fam_misc(self):
        x = self.pick()
        if x is None:
            return
        t = self.val(x)
        form = self.choice([f"{x}.item()", f"{x}.tolist()", f"{x}.numel()", f"{x}.dim()",
                            f"{x}.size()", f"{x}.size(-1)", f"len({x})", f"{x}.shape",
                            f"bool({x})", f"float({x})", f"int({x})", f"{x}.ndim",
                            f"{x}.is_floating_point()", f"torch.numel({x})",
                            f"torch.is_tensor({x})"])
        if form.startswith(("float(", "int(")) and t.numel() != 1 and \
                avoid("scalar_conversion_error"):
            return
        if ("float(" in form or "int(" in form or ".item()" in form or "tolist" in form) and \
                self.is_float(t) and self.err_of([x]) > 0:
            return  # rounding: compared with tolerance only inside tensors
        if "bool(" in form and self.is_float(t) and self.near(t, 0, self.err_of([x])):
            return
        v = self.fresh("n")
        self.emit(f"{v} = {form}", f"misc:{form.split('(')[0].split('.')[-1]}", touches=(v,))

    def fam_nograd(self):
        x = self.pick_safe(lambda u: self.is_float(u))
        if x is None:
            return
        r = self.rng.random()
        if r < 0.5:
            v = self.fresh()
            self.emit(f"with torch.no_grad(): {v} = {x} * 2", "no_grad:op", out=v, inputs=[x])
            return
        if not self.may_write(x):
            return
        touches = tuple(self.aliases(x))
        if set(touches) & self.multi_views and avoid("nograd_write_multi_output_view"):
            return
        # a view of a tensor that requires grad, written under no_grad: PyTorch gives the
        # views a new grad_fn (AsStridedBackward0)
        views = any(self.val(e)._base is not None and self.val(e)._base.requires_grad
                    for e in touches)
        loose = views and avoid("no_grad_inplace_view_grad_fn")
        if r < 0.8:
            self.emit(f"with torch.no_grad(): {x}.mul_(0.5)", "no_grad:inplace",
                      touches=touches, inputs=[x], loose=loose)
        else:
            t = self.val(x)
            if t.ndim == 0:
                return
            # (detached: indexing a view of a multi-output op whose base was written raises)
            row = t.detach()[0] if t.shape[0] else t
            if row.numel() > 1 and 0 in row.stride() and avoid("setitem_into_expanded_overlap"):
                return
            self.emit(f"with torch.no_grad(): {x}[0] = 1.0", "no_grad:setitem",
                      touches=touches, inputs=[x], loose=loose)

    # ---------------------------------------------------------------- the API real programs use
    # Families added when the generator above had saturated: the spellings, dtype mixes and ops
    # training scripts use that it never wrote (division modes, bitwise ops, int32 and 0-d
    # operands, movement ops, scatters, sorts, nn.functional layers, factories, printing, and
    # calls PyTorch refuses). Each is one entry of WEIGHTS.

    WIDE_DTYPES = ["float32", "float64", "int64", "int32", "int16", "int8", "uint8", "bool"]
    WIDE_P = [0.35, 0.15, 0.15, 0.12, 0.05, 0.05, 0.05, 0.08]

    def wide_dtype(self, ints=False):
        if ints:
            return self.choice(["int64", "int32", "int16", "int8", "uint8", "bool", "int64"])
        return str(self.rng.choice(self.WIDE_DTYPES, p=self.WIDE_P))

    def mixed_operand(self, x, ints=False, positive=False, scalar_p=0.3):
        """A second operand for ``x`` of any kind: a Python bool/int/float, a 0-d tensor or a
        tensor of another dtype (int32 too); (expression, value) or None."""
        r = self.rng.random()
        if r < scalar_p:
            kind = self.choice(["int", "bool"] if ints else ["int", "float", "float", "bool"])
            s = self.scalar(kind)
            if positive and not (s > 0.05):
                s = self.choice([2, 1.5, 3])
            return repr(s), s
        dt = self.wide_dtype(ints)
        if r < scalar_p + 0.2:
            y = self.new_tensor((), dt, positive=positive)
        elif self.chance(0.4):
            y = self.operand(x, dtype=dt, positive=positive)
        else:
            y = self.operand(x, positive=positive)
        return (y, self.val(y)) if y is not None else None

    def _f64(self, v):
        """A tensor or number as a float64 tensor (for the generator's guards)."""
        return self.torch.as_tensor(v).detach().double()

    def _pair64(self, a, b):
        try:
            return self.torch.broadcast_tensors(self._f64(a), self._f64(b))
        except RuntimeError:
            return None

    def _inexact(self, *exprs) -> float:
        return self.err_of([e for e in exprs if e in self.err])

    def too_big(self, form) -> bool:
        """``form``'s result (PyTorch's, a view costs nothing) has more than MAX_ITEMS
        elements: an unfold of an unfold is a view of 10^9 (seed 346831), which a later op,
        or the comparison, would copy, in both libraries and in float64 for the guards."""
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = eval(form, self.ns)
        except Exception:  # noqa: BLE001 - PyTorch refuses it: an error, compared as such
            return False
        items = res if isinstance(res, (tuple, list)) else (res,)
        return any(isinstance(r, self.torch.Tensor) and r.numel() > MAX_ITEMS for r in items)

    def cancel_factor(self, form, names, cap=1e4) -> float:
        """How much the sums in ``form`` cancel: the result over float64 absolute values of
        its float operands (``names``) against the plain one; 1 if it cannot be told."""
        torch = self.torch
        try:
            ns = dict(self.ns)
            for n in names:
                v = self.val(n)
                if isinstance(v, torch.Tensor) and self.is_float(v):
                    ns[n] = v.detach().double().abs()
            absolute = eval(form, ns)
            for n in names:
                v = self.val(n)
                if isinstance(v, torch.Tensor) and self.is_float(v):
                    ns[n] = v.detach().double()
            plain = eval(form, ns)
            if isinstance(absolute, (tuple, list)):
                absolute, plain = absolute[0], plain[0]
            if not absolute.numel():
                return 1.0
            ratio = float(absolute.abs().max()) / max(float(plain.abs().max()), 1e-300)
            return min(max(ratio, 1.0), cap) if math.isfinite(ratio) else cap
        except Exception:  # noqa: BLE001 - PyTorch refuses it (compared as an error)
            return 1.0

    # ---- arithmetic: division modes, promotion, bitwise, rounding, more math
    ARITH_UNARY = {
        "floor": None, "ceil": None, "round": None, "trunc": None, "frac": None, "fix": None,
        "exp2": lambda a: a.max() <= 20, "log2": lambda a: a.min() >= 0.05,
        "log10": lambda a: a.min() >= 0.05, "sinh": lambda a: a.abs().max() <= 10,
        "cosh": lambda a: a.abs().max() <= 10, "asin": lambda a: a.abs().max() <= 0.95,
        "acos": lambda a: a.abs().max() <= 0.95, "atan": None, "asinh": None,
        "atanh": lambda a: a.abs().max() <= 0.95, "acosh": lambda a: a.min() >= 1.05,
        "erf": None, "erfc": None, "erfinv": lambda a: a.abs().max() <= 0.95, "sgn": None,
        "nan_to_num": None, "isnan": None, "isinf": None, "isfinite": None, "signbit": None,
        "deg2rad": None, "rad2deg": None, "sinc": None, "logit": lambda a: (a.min() >= 0.05) & (
            a.max() <= 0.95), "positive": None, "bitwise_not": None, "square": lambda a:
        a.abs().max() <= 1e3,
    }
    ROUNDING = {"floor", "ceil", "round", "trunc", "frac", "fix"}

    def _arith_unary(self):
        name = self.choice(list(self.ARITH_UNARY))
        x = self.pick_safe()
        if x is None:
            return
        t = self.val(x)
        a = t.detach().double()
        err = self.err_of([x])
        check = self.ARITH_UNARY[name]
        if check is not None and t.numel() and not self.nan_mode and not bool(check(a)):
            return
        arg = ""
        if name in self.ROUNDING:
            k = 0
            if name == "round" and self.chance(0.3):
                k = self.choice([1, 2, -1])
                arg = self.choice([f"decimals={k}"])
            s = a * 10.0 ** k
            if self.near(s, s.round(), err) or (name == "round" and self.near(
                    s, s.floor() + 0.5, err)):
                return  # (a value at a jump: rounding decides the side)
        if name in ("sgn", "signbit", "logit") and self.near(a, 0, err):
            return
        if name == "sgn" and t.requires_grad and t.is_floating_point():
            # (PyTorch's gradient of a real sgn is an immutable ZeroTensor: a backward formula
            # that writes its incoming gradient in place, as std's, raises an internal error)
            return
        if name == "nan_to_num" and self.chance(0.6):
            arg = self.choice(["nan=0.5", "posinf=2.0", "neginf=-3.0", "0.0, 1.0, -1.0"])
        if name == "logit" and self.chance(0.4):
            arg = "eps=0.1" if self.chance(0.5) else "0.2"
            lo = 0.1 if "0.1" in arg else 0.2
            if self.near(a, lo, err) or self.near(a, 1 - lo, err):
                return
        if name == "sinc" and self.near(a, 0, err):
            return  # (its removable singularity: 0 / 0 rounded either way)
        if name == "sinc" and t.requires_grad and bool(
                ((a != 0) & (a.abs() < (0.03 if t.dtype == self.torch.float32 else 1e-3))).any()):
            # (its gradient near 0, (pi x cos(pi x) - sin(pi x)) / (pi x^2), cancels to a
            # float rounding's noise: an ulp of sin or cos, which the two libraries' kernels
            # round differently, over x^2)
            return
        factor = 1.0
        if name in ("exp2", "sinh", "cosh", "square") and t.numel():
            factor = min(max(1.0, float(a.abs().nan_to_num(0, 0, 0).max())), 100.0)
        if name in ("asin", "acos", "atanh", "erfinv", "acosh", "logit"):
            factor = 10.0
        call = f"{name}({arg})"
        forms = [f"torch.{name}({x}{', ' + arg if arg else ''})", f"{x}.{call}"]
        if name not in ("isnan", "isinf", "isfinite", "signbit", "positive", "sgn", "fix"):
            forms.append(f"{x}.clone().{name}_({arg})")
        if name == "bitwise_not":
            forms.append(f"~{x}")
        if name == "positive":
            forms.append(f"+{x}")
        v = self.fresh()
        self.emit(f"{v} = {self.choice(forms)}", f"arith:{name}", out=v, inputs=[x],
                  factor=factor, exact=name in self.ROUNDING or name in (
                      "isnan", "isinf", "isfinite", "signbit", "positive", "bitwise_not",
                      "nan_to_num", "sgn"))

    ARITH_BINARY = ["floor_divide", "remainder", "fmod", "div_trunc", "div_floor", "true_divide",
                    "add_alpha", "sub_alpha", "atan2", "hypot", "copysign", "logaddexp", "xlogy",
                    "lerp", "addcmul", "addcdiv", "bitwise", "shift", "logical", "gcd", "mixed",
                    "mixed", "mixed", "float_power", "ldexp"]

    def fam_arith(self):
        if self.chance(0.3):
            self._arith_unary()
            return
        torch = self.torch
        op = self.choice(self.ARITH_BINARY)
        ints = op in ("bitwise", "shift", "gcd")
        x = self.pick_safe((lambda u: not self.is_float(u) or self.chance(0.05)) if ints
                           else None)
        if x is None:
            return
        t = self.val(x)
        a = t.detach().double()
        err = self.err_of([x])
        v = self.fresh()
        factor, exact, ins = 1.0, False, [x]
        if op in ("floor_divide", "remainder", "fmod", "div_trunc", "div_floor", "true_divide"):
            got = self.mixed_operand(x)
            if got is None:
                return
            y, yv = got
            ins.append(y)
            left = not isinstance(yv, torch.Tensor) and op in (
                "floor_divide", "remainder") and self.chance(0.3)
            num, den = (yv, t) if left else (t, yv)
            pair = self._pair64(num, den)
            e2 = max(err, self._inexact(y))
            if pair is not None:
                n64, d64 = pair
                if bool((d64 == 0).any()):
                    res_float = (self.is_float(t) or isinstance(yv, float) or (
                        isinstance(yv, torch.Tensor) and self.is_float(yv)))
                    if res_float and not self.nan_mode:
                        return
                    if not res_float and not self.chance(0.3):
                        return  # (PyTorch's ZeroDivisionError, now and then)
                elif not self.nan_mode and n64.numel() and float(d64.abs().min()) < 0.1 and \
                        e2 > 0:
                    return
                q = n64 / d64.where(d64 != 0, self.torch.ones(()).double())
                if e2 > 0 and (self.near(q, q.round(), e2) or self.near(q, q.trunc(), e2)):
                    return  # (a quotient at an integer: floor and remainder jump there)
            if op == "floor_divide":
                form = (f"{y} // {x}" if left else self.choice(
                    [f"{x} // {y}", f"torch.floor_divide({x}, {y})", f"{x}.floor_divide({y})",
                     f"{x}.clone().floor_divide_({y})"]))
            elif op == "remainder":
                form = (self.choice([f"{y} % {x}", f"torch.remainder({y}, {x})"]) if left else
                        self.choice([f"{x} % {y}", f"torch.remainder({x}, {y})",
                                     f"{x}.remainder({y})", f"{x}.clone().remainder_({y})"]))
            elif op == "fmod":
                form = self.choice([f"torch.fmod({x}, {y})", f"{x}.fmod({y})",
                                    f"{x}.clone().fmod_({y})"])
            elif op == "true_divide":
                form = self.choice([f"torch.true_divide({x}, {y})", f"{x} / {y}",
                                    f"torch.divide({x}, {y})", f"{x}.div({y}, rounding_mode=None)"])
            else:
                mode = op.split("_")[1]
                form = self.choice([f"torch.div({x}, {y}, rounding_mode='{mode}')",
                                    f"{x}.div({y}, rounding_mode='{mode}')",
                                    f"torch.divide({x}, {y}, rounding_mode='{mode}')",
                                    f"{x}.clone().div_({y}, rounding_mode='{mode}')"])
        elif op in ("add_alpha", "sub_alpha"):
            got = self.mixed_operand(x)
            if got is None:
                return
            y, yv = got
            ins.append(y)
            alpha = self.choice([2, -1, 0.5, -1.5, 3, True, 0])
            fn = op.split("_")[0]
            form = self.choice([f"torch.{fn}({x}, {y}, alpha={alpha!r})",
                                f"{x}.{fn}({y}, alpha={alpha!r})",
                                f"{x}.clone().{fn}_({y}, alpha={alpha!r})",
                                f"torch.rsub({x}, {y}, alpha={alpha!r})" if fn == "sub" else
                                f"torch.add({x}, {y}, alpha={alpha!r})"])
            if fn == "sub" and isinstance(yv, bool) and avoid("sub_bool_scalar"):
                return
        elif op in ("atan2", "hypot", "copysign", "logaddexp", "xlogy", "float_power", "ldexp"):
            got = self.mixed_operand(x, positive=op in ("xlogy", "float_power"),
                                     scalar_p=0.15)
            if got is None:
                return
            y, yv = got
            ins.append(y)
            pair = self._pair64(t, yv)
            e2 = max(err, self._inexact(y))
            if pair is not None:
                p, q = pair
                if op in ("atan2", "hypot") and self.near(p.abs() + q.abs(), 0, e2):
                    return
                if op == "atan2" and self.near(p, 0, e2) and bool((q < 0).any()):
                    return  # (the branch cut: atan2(+-0, x < 0) is +-pi)
                if op == "copysign" and (self.near(q, 0, e2) or self.near(p, 0, e2)):
                    return
                if op in ("logaddexp",) and p.numel() and float(
                        torch.maximum(p.abs(), q.abs()).nan_to_num(0, 0, 0).max()) > 50:
                    return
                if op == "xlogy" and p.numel() and not self.nan_mode and (
                        float(q.min()) < 0.05 or self.near(q, 0, e2)):
                    return
                if op == "ldexp" and q.numel() and float(q.nan_to_num(0, 0, 0).abs().max()) > 10:
                    return  # (x * 2 ** y: a large exponent overflows)
                if op == "ldexp" and t.requires_grad and isinstance(yv, torch.Tensor) and \
                        not yv.dtype.is_floating_point and q.numel() and (
                            float(q.min()) < 0 or float(q.max()) > 6):
                    # (PyTorch 2.13's gradient by x is grad * pow(2, y) in y's integer dtype:
                    # 0 for a negative y, wrapped past the dtype's range; a wrong gradient)
                    return
                if op == "float_power" and p.numel() and not self.nan_mode and (
                        float(p.min()) < 0.05 or float(p.max()) > 20 or
                        float(q.abs().max()) > 4):
                    return
            if op in ("atan2", "logaddexp") and isinstance(yv, torch.Tensor) and (
                    (t.dtype == torch.bool and yv.requires_grad) or (
                        yv.dtype == torch.bool and t.requires_grad)) and \
                    avoid("bool_operand_backward"):
                return
            if op == "atan2" and (t.requires_grad or getattr(yv, "requires_grad", False)) and any(
                    u.dtype not in (torch.float32, torch.float64, torch.bool) and (
                        u.dtype == torch.uint8 or float(u.double().abs().max()) > 11)
                    for u in (t, yv) if isinstance(u, torch.Tensor) and u.numel()):
                # (PyTorch's atan2_backward squares and negates an integer operand in its own
                # dtype: -x of uint8 wraps, x * x of int8 overflows; a wrong gradient)
                return
            fn = op
            form = self.choice([f"torch.{fn}({x}, {y})", f"{x}.{fn}({y})"])
            if op in ("atan2", "hypot", "copysign", "xlogy", "ldexp") and self.chance(0.2):
                form = f"{x}.clone().{fn}_({y})"
            if op == "xlogy" and self.chance(0.2):
                form = f"torch.xlogy({self.choice([0, 2.0, 0.5])}, {y})"
            factor = 10.0 if op in ("float_power", "xlogy") else 1.0
            if op == "ldexp" and isinstance(yv, torch.Tensor) and yv.dtype == torch.float32 and \
                    t.dtype == torch.float64:
                # (PyTorch's x * pow(2.0, y) takes 2 ** y in y's float32 before it promotes)
                factor = 1e5
        elif op in ("lerp", "addcmul", "addcdiv"):
            dt = str(t.dtype).replace("torch.", "")
            y = self.operand(x, dtype=dt if self.chance(0.9) else None)
            if y is None:
                return
            ins.append(y)
            if op == "lerp":
                if self.chance(0.5):
                    w = repr(self.choice([0.5, 0.25, -1.0, 2.0, 0.75]))
                else:
                    w = self.operand(x, dtype=dt if self.chance(0.9) else None)
                    if w is None:
                        return
                    ins.append(w)
                form = self.choice([f"torch.lerp({x}, {y}, {w})", f"{x}.lerp({y}, {w})",
                                    f"{x}.clone().lerp_({y}, {w})"])
            else:
                z = self.operand(x, dtype=dt if self.chance(0.9) else None,
                                 positive=op == "addcdiv" and self.chance(0.5))
                if z is None:
                    return
                ins.append(z)
                zv = self._f64(self.val(z))
                if op == "addcdiv" and zv.numel() and not self.nan_mode and (
                        float(zv.abs().min()) < 0.1 or self.near(zv, 0, self._inexact(z))):
                    return
                if op == "addcdiv" and not self.is_float(self.val(z)) and \
                        self.val(y).requires_grad:
                    # (PyTorch 2.13's gradient by tensor1 divides into tensor2's integer dtype:
                    # its backward raises "result type Float can't be cast")
                    return
                val = self.choice(["", ", value=0.5", ", value=2", ", value=-1"])
                form = self.choice([f"torch.{op}({x}, {y}, {z}{val})",
                                    f"{x}.{op}({y}, {z}{val})",
                                    f"{x}.clone().{op}_({y}, {z}{val})"])
                factor = 2.0
        elif op in ("bitwise", "shift", "gcd"):
            got = self.mixed_operand(x, ints=True, scalar_p=0.35)
            if got is None:
                return
            y, yv = got
            ins.append(y)
            exact = True
            if op == "bitwise":
                sym, fn = self.choice([("&", "bitwise_and"), ("|", "bitwise_or"),
                                       ("^", "bitwise_xor")])
                form = self.choice([f"{x} {sym} {y}", f"torch.{fn}({x}, {y})", f"{x}.{fn}({y})",
                                    f"{x}.clone().{fn}_({y})"])
                if isinstance(yv, (bool, int)) and self.chance(0.3):
                    form = f"{y} {sym} {x}"
            elif op == "shift":
                if isinstance(yv, torch.Tensor):
                    yv64 = self._f64(yv)
                    if yv64.numel() and (float(yv64.min()) < 0 or float(yv64.max()) > 9) and \
                            not self.chance(0.2):
                        return
                sym, fn = self.choice([("<<", "bitwise_left_shift"),
                                       (">>", "bitwise_right_shift")])
                form = self.choice([f"{x} {sym} {y}", f"torch.{fn}({x}, {y})", f"{x}.{fn}({y})"])
            else:
                fn = self.choice(["gcd", "lcm"])
                form = self.choice([f"torch.{fn}({x}, {y})", f"{x}.{fn}({y})"])
        elif op == "logical":
            got = self.mixed_operand(x, scalar_p=0.1)
            if got is None:
                return
            y, yv = got
            ins.append(y)
            if self.near(a, 0, err) or (isinstance(yv, torch.Tensor) and self.near(
                    self._f64(yv), 0, self._inexact(y))):
                return
            fn = self.choice(["logical_xor", "logical_and", "logical_or"])
            form = self.choice([f"torch.{fn}({x}, {y})", f"{x}.{fn}({y})"])
            exact = True
        else:  # mixed: + - * / and comparisons across dtypes, 0-d tensors and Python numbers
            got = self.mixed_operand(x)
            if got is None:
                return
            y, yv = got
            ins.append(y)
            sym = self.choice(["+", "-", "*", "/", "==", "<", ">=", "!=", "*", "+"])
            left = self.chance(0.3)
            pair = self._pair64(t, yv)
            e2 = max(err, self._inexact(y))
            if pair is not None:
                p, q = pair
                den = p if left else q
                if sym == "/" and not self.nan_mode and den.numel() and (
                        float(den.abs().min()) < 0.1 or self.near(den, 0, e2)):
                    return
                if sym in ("==", "<", ">=", "!=") and self.near(p, q, e2):
                    return
            if sym == "-" and (isinstance(yv, bool) or t.dtype == torch.bool or (
                    isinstance(yv, torch.Tensor) and yv.dtype == torch.bool)) and \
                    avoid("sub_bool_scalar") and not self.chance(0.3):
                return
            form = f"{y} {sym} {x}" if left else f"{x} {sym} {y}"
            if self.chance(0.25) and sym in ("+", "-", "*", "/"):
                fn = {"+": "add", "-": "sub", "*": "mul", "/": "div"}[sym]
                form = self.choice([f"torch.{fn}({x}, {y})", f"{x}.{fn}({y})",
                                    f"{x}.clone().{fn}_({y})"])
        self.emit(f"{v} = {form}", f"arith:{op}", out=v, inputs=ins, factor=factor,
                  exact=exact)

    # ---- movement ops and their gradients
    MOVE = ["flip", "roll", "movedim", "narrow", "unfold", "repeat", "tile", "expand_as",
            "unflatten", "diagonal", "tril", "triu", "gather", "take_along_dim", "squeeze_dims",
            "swapaxes", "index_select", "masked_select", "rot90", "repeat_interleave",
            "diag_embed", "diag", "view_as", "unbind", "tensor_split", "atleast", "flatten_dims",
            "diff"]

    def fam_move(self):
        op = self.choice(self.MOVE)
        x = self.pick_safe()
        if x is None:
            return
        t = self.val(x)
        s = tuple(t.shape)
        nd = len(s)
        rng = self.rng

        def dim(extra=0):
            if nd == 0:
                return self.choice([0, -1])
            return int(rng.integers(-nd - extra, nd + extra))

        v = self.fresh()
        ins = [x]
        if op == "flip":
            dims = tuple(sorted(set(int(d) for d in rng.integers(-max(nd, 1), max(nd, 1),
                                                                  rng.integers(1, 3)))))
            form = self.choice([f"{x}.flip({dims!r})", f"torch.flip({x}, {dims!r})",
                                f"{x}.flip({', '.join(map(str, dims))})"])
            if nd >= 1 and self.chance(0.2):
                form = self.choice([f"torch.fliplr({x})", f"torch.flipud({x})"])
        elif op == "roll":
            if nd == 0 or self.chance(0.3):
                form = self.choice([f"{x}.roll({int(rng.integers(-5, 6))})",
                                    f"torch.roll({x}, {int(rng.integers(-5, 6))})"])
            elif nd >= 2 and self.chance(0.4):
                form = f"torch.roll({x}, shifts=({int(rng.integers(-3, 4))}, " \
                       f"{int(rng.integers(-3, 4))}), dims=(0, {dim()}))"
            else:
                form = self.choice([f"{x}.roll({int(rng.integers(-4, 5))}, {dim()})",
                                    f"torch.roll({x}, shifts={int(rng.integers(-4, 5))}, "
                                    f"dims={dim()})"])
        elif op == "movedim":
            if nd >= 2 and self.chance(0.4):
                src = [int(i) for i in rng.choice(nd, 2, replace=False)]
                dst = [int(i) for i in rng.choice(nd, 2, replace=False)]
                form = self.choice([f"{x}.movedim({tuple(src)}, {tuple(dst)})",
                                    f"torch.moveaxis({x}, {src}, {dst})"])
            else:
                form = self.choice([f"{x}.movedim({dim()}, {dim()})",
                                    f"torch.movedim({x}, {dim()}, {dim()})",
                                    f"{x}.moveaxis({dim()}, {dim()})"])
        elif op == "narrow":
            if nd == 0:
                return
            d = dim()
            n = s[d]
            start = int(rng.integers(-n, n + 1)) if n else 0
            length = int(rng.integers(0, max(n - (start % max(n, 1)), 0) + 2))
            form = self.choice([f"{x}.narrow({d}, {start}, {length})",
                                f"torch.narrow({x}, {d}, {start}, {length})"] + (
                # (PyTorch 2.13's narrow_copy backward takes a negative start as it is: a
                # wrong gradient, or an error)
                [f"{x}.narrow_copy({d}, {start}, {length})"] if start >= 0 else []))
        elif op == "unfold":
            d = dim()
            n = s[d] if nd else 1
            size = int(rng.integers(0, n + 2))
            step = int(rng.integers(1, 4))
            form = f"{x}.unfold({d}, {size}, {step})"
        elif op in ("repeat", "tile"):
            reps = [int(rng.choice([1, 2, 3, 1, 0 if self.chance(0.05) else 1]))
                    for _ in range(nd + int(rng.integers(0, 2)))]
            if op == "tile":
                reps = reps[:int(rng.integers(1, len(reps) + 1))] if reps else [2]
                form = self.choice([f"{x}.tile({tuple(reps)!r})", f"torch.tile({x}, {reps})"])
            else:
                if len(reps) < nd:
                    return
                form = self.choice([f"{x}.repeat({', '.join(map(str, reps))})" if reps else
                                    f"{x}.repeat(())", f"{x}.repeat({tuple(reps)!r})"])
            if t.numel() * max(1, math.prod(reps)) > MAX_ITEMS:
                return
        elif op == "expand_as":
            shp = [self.choice([2, 3]) if d == 1 else d for d in s]
            if self.chance(0.3):
                shp = [2] + shp
            y = self.new_tensor(tuple(shp), self.wide_dtype(), requires_grad=False)
            if y is None:
                return
            form = self.choice([f"{x}.expand_as({y})", f"{y}.expand_as({x})" if nd else
                                f"{x}.expand_as({y})"])
        elif op == "unflatten":
            d = dim()
            n = s[d] if nd else 1
            fs = [f for f in (2, 3, 1) if n and n % f == 0] or [1]
            f = self.choice(fs)
            sizes = self.choice([(f, n // f if n else 0), (-1, f), (f, -1), (1, n, 1)])
            form = self.choice([f"{x}.unflatten({d}, {sizes!r})",
                                f"torch.unflatten({x}, {d}, {sizes!r})"])
        elif op in ("diagonal", "tril", "triu", "diag_embed", "diag"):
            k = int(rng.integers(-2, 3))
            if op == "diagonal":
                if nd < 2 and not self.chance(0.1):
                    return
                d1, d2 = (int(i) for i in rng.choice(max(nd, 2), 2, replace=False))
                form = self.choice([f"{x}.diagonal()", f"torch.diagonal({x}, {k})",
                                    f"{x}.diagonal(offset={k}, dim1={d1}, dim2={d2})",
                                    f"torch.diagonal({x}, {k}, {d2 - nd}, {d1})"])
            elif op in ("tril", "triu"):
                form = self.choice([f"{x}.{op}()", f"torch.{op}({x}, {k})",
                                    f"{x}.{op}(diagonal={k})", f"{x}.clone().{op}_({k})"])
            elif op == "diag_embed":
                if nd > 3 or (nd and s[-1] > 2000):
                    return
                form = self.choice([f"torch.diag_embed({x})", f"{x}.diag_embed({k})"])
            else:
                if nd > 2 or (nd == 1 and t.numel() > 2000):
                    return  # (a vector's diag is n * n: memory)
                form = self.choice([f"torch.diag({x})", f"{x}.diag({k})"])
        elif op in ("gather", "take_along_dim"):
            if nd == 0 and not self.chance(0.2):
                return
            d = dim()
            n = s[d] if nd else 1
            shp = list(s)
            if nd:
                shp[d] = int(rng.integers(0 if self.chance(0.1) else 1, n + 3))
                if op == "gather" and self.chance(0.3):
                    j = int(rng.integers(nd))
                    shp[j] = max(0, min(shp[j], s[j] - int(rng.integers(0, 2))))
            if math.prod(shp) > 5000:
                return
            hi = n if not self.chance(0.03) else n + 1
            idx = rng.integers(-n if op == "take_along_dim" else 0, max(hi, 1), shp)
            if n == 0:
                idx = np.zeros(shp, dtype=np.int64)
            idx_code = f"torch.tensor({_nested(idx)}, dtype=torch.int64)" if idx.size else \
                f"torch.zeros({tuple(shp)}, dtype=torch.int64)"
            if self.chance(0.03):
                idx_code = idx_code.replace("torch.int64", "torch.int32")
            if op == "gather":
                form = self.choice([f"{x}.gather({d}, {idx_code})",
                                    f"torch.gather({x}, {d}, {idx_code})",
                                    f"torch.gather({x}, dim={d}, index={idx_code})"])
            else:
                form = self.choice([f"torch.take_along_dim({x}, {idx_code}, {d})",
                                    f"{x}.take_along_dim({idx_code}, dim={d})"])
                if self.chance(0.15):
                    flat = rng.integers(0, max(t.numel(), 1), (3,)).tolist()
                    form = f"torch.take_along_dim({x}, torch.tensor({flat}))"
        elif op == "squeeze_dims":
            dims = tuple(sorted(set(int(i) for i in rng.integers(-max(nd, 1), max(nd, 1),
                                                                  rng.integers(1, 3)))))
            form = self.choice([f"{x}.squeeze({dims!r})", f"torch.squeeze({x}, {dims!r})",
                                f"{x}.squeeze(dim={dims!r})"])
        elif op == "swapaxes":
            form = self.choice([f"{x}.swapaxes({dim()}, {dim()})",
                                f"torch.swapdims({x}, {dim()}, {dim()})",
                                f"{x}.swapdims({dim()}, {dim()})"])
        elif op == "index_select":
            d = dim()
            n = s[d] if nd else 1
            idx = rng.integers(0, max(n, 1) + (1 if self.chance(0.03) else 0),
                               int(rng.integers(0, 5))).tolist()
            ic = f"torch.tensor({idx}, dtype=torch.int64)" if idx else \
                "torch.zeros(0, dtype=torch.int64)"
            form = self.choice([f"{x}.index_select({d}, {ic})",
                                f"torch.index_select({x}, {d}, {ic})"])
        elif op == "masked_select":
            err = self.err_of([x])
            if self.chance(0.5) and self.is_float(t) and not self.near(t, 0, err):
                mask = f"{x} > 0"
            else:
                mask = self.new_tensor(self.bshape(s), "bool")
                if mask is None:
                    return
            form = self.choice([f"{x}.masked_select({mask})",
                                f"torch.masked_select({x}, {mask})"])
        elif op == "rot90":
            k = int(rng.integers(-2, 4))
            if nd < 2 and not self.chance(0.1):
                return
            form = self.choice([f"{x}.rot90()", f"torch.rot90({x}, {k})",
                                f"torch.rot90({x}, {k}, [{nd - 1 if nd else 0}, 0])"])
        elif op == "repeat_interleave":
            d = dim()
            n = s[d] if nd else 1
            if self.chance(0.5):
                r = int(rng.integers(0, 4))
                form = self.choice([f"{x}.repeat_interleave({r})",
                                    f"{x}.repeat_interleave({r}, dim={d})",
                                    f"torch.repeat_interleave({x}, {r}, {d})"])
            else:
                reps = rng.integers(0, 3, n if nd else 1).tolist()
                form = self.choice([f"{x}.repeat_interleave(torch.tensor({reps}), dim={d})",
                                    f"torch.repeat_interleave({x}, torch.tensor({reps}), {d})"])
        elif op == "view_as":
            y = self.pick(lambda u: u.numel() == t.numel() and u is not t)
            if y is None:
                return
            form = self.choice([f"{x}.reshape_as({y})", f"{x}.view_as({y})"])
            if "view_as" in form and self.layout_dependent(x):
                return
        elif op == "unbind":
            form = self.choice([f"{x}.unbind({dim()})", f"torch.unbind({x}, {dim()})",
                                f"{x}.unbind()"])
        elif op == "tensor_split":
            d = dim()
            n = s[d] if nd else 1
            form = self.choice([f"{x}.tensor_split({int(rng.integers(1, 4))}, {d})",
                                f"torch.tensor_split({x}, {sorted(rng.integers(0, n + 1, 2).tolist())}, dim={d})"])
        elif op == "atleast":
            k = self.choice(["1d", "2d", "3d"])
            form = f"torch.atleast_{k}({x})"
        elif op == "diff":
            if (nd == 0 and not self.chance(0.1)) or (self.is_float(t) and self.err_of([x]) > 0):
                return  # (differences of inexact values cancel: their error is unbounded)
            d = dim()
            k = self.choice([1, 1, 2, 0, 3])
            extra = ""
            if nd and self.chance(0.3):
                for side in self.choice([["prepend"], ["append"], ["prepend", "append"]]):
                    shp = list(s)
                    shp[d] = int(rng.integers(0, 3))
                    dt = str(t.dtype).replace("torch.", "")
                    p = self.new_tensor(tuple(shp), dt)
                    if p is None:
                        return
                    ins.append(p)
                    extra += f", {side}={p}"
            form = self.choice([f"torch.diff({x}, n={k}, dim={d}{extra})",
                                f"torch.diff({x}{extra})"] +
                               ([f"{x}.diff({k}, {d})", f"{x}.diff()"] if not extra else []))
        else:  # flatten_dims
            if nd < 2:
                return
            a0 = int(rng.integers(-nd, nd))
            a1 = int(rng.integers(-nd, nd))
            form = self.choice([f"{x}.flatten({a0}, {a1})", f"torch.flatten({x}, {a0}, {a1})"])
            if self.layout_dependent(x):
                return
            if not t.is_contiguous() and t.numel() and avoid("reshape_alias_grad_fn"):
                return
        if op in ("view_as", "unflatten", "flatten_dims") and self.layout_dependent(x):
            return
        if op in ("unflatten",) and not t.is_contiguous() and avoid("reshape_alias_grad_fn"):
            return
        if self.too_big(form):
            return
        ok = self.emit(f"{v} = {form}", f"move:{op}", out=v, inputs=ins, exact=True)
        if ok and op in ("unbind", "tensor_split"):
            self.multi_views.update(e for e in self.pool if e.startswith(f"{v}["))

    # ---- scatters, index_add, masked_fill and friends (out of place and in place)
    SCATTER = ["scatter", "scatter_value", "scatter_add", "scatter_reduce", "index_add",
               "index_fill", "masked_fill", "masked_scatter", "put", "setitem_repeat",
               "index_put_acc"]

    def fam_scatter(self):
        torch = self.torch
        op = self.choice(self.SCATTER)
        # (small tensors: an index is written out as a literal, one number per element)
        x = self.pick_safe(lambda u: (u.ndim >= 1 or self.chance(0.1)) and u.numel() <= 20000)
        if x is None:
            return
        t = self.val(x)
        s = tuple(t.shape)
        nd = len(s)
        rng = self.rng
        dt = str(t.dtype).replace("torch.", "")
        inplace = self.chance(0.4)
        if inplace:  # into a copy (or, now and then, the tensor itself)
            if self.chance(0.8) or not self.may_write(x):
                tgt = self.fresh()
                if not self.emit(f"{tgt} = {x} * 1" if self.chance(0.5) else f"{tgt} = "
                                 f"{x}.clone()", "copy", out=tgt, inputs=[x], exact=True):
                    return
            else:
                tgt = x
            if not self.may_write(tgt):
                return
            t = self.val(tgt)
            if any(st == 0 and n > 1 for st, n in zip(t.stride(), t.shape)):
                return
        else:
            tgt = x
        d = int(rng.integers(-nd, nd)) if nd else 0
        n = s[d] if nd else 1
        ins = [tgt]
        exact = True
        factor = 1.0
        v = self.fresh()

        def index_like(unique):
            shp = list(s)
            if nd:
                shp[d] = int(rng.integers(0, n + 1)) if unique else int(rng.integers(1, 2 * n + 2))
                for j in range(nd):
                    if j != d % nd and self.chance(0.2):
                        shp[j] = int(rng.integers(0, s[j] + 1))
            if unique and nd:
                # distinct positions along d in each slice (PyTorch leaves the winner of a
                # repeated one undefined)
                other = [shp[j] for j in range(nd) if j != d % nd]
                perm = np.argsort(rng.random(other + [n]), axis=-1)[..., :shp[d]]
                idx = np.moveaxis(perm, -1, d % nd)
            else:
                idx = rng.integers(0, max(n, 1), shp)
            if idx.size == 0:
                return f"torch.zeros({tuple(shp)}, dtype=torch.int64)", shp
            return f"torch.tensor({_nested(idx)}, dtype=torch.int64)", shp

        if op in ("scatter", "scatter_value", "scatter_add", "scatter_reduce"):
            if nd == 0 or n == 0:
                return
            unique = op in ("scatter", "scatter_value")
            ic, shp = index_like(unique)
            if math.prod(shp) > 5000:
                return
            if op == "scatter_value":
                val = repr(self.scalar("float" if self.is_float(t) else "int"))
                base = f"scatter({d}, {ic}, {val})"
                if self.chance(0.2):
                    base = f"scatter({d}, {ic}, value={val})"
            else:
                src_shape = tuple(max(a, b) for a, b in zip(shp, s)) if self.chance(0.3) \
                    else tuple(shp)
                src = self.new_tensor(src_shape, dt if self.chance(0.93) else self.wide_dtype())
                if src is None:
                    return
                if src_shape != tuple(shp) and self.val(src).requires_grad and \
                        avoid("scatter_larger_source_unasked_grad"):
                    return
                ins.append(src)
                if op == "scatter_reduce":
                    red = self.choice(["sum", "prod", "mean", "amax", "amin"])
                    inc = self.choice(["", ", include_self=False", ", include_self=True"])
                    sv = self._f64(self.val(src))
                    if red in ("amax", "amin") and (self.near_pair(sv.reshape(-1), 0, max(
                            self._inexact(src), self.err_of([x]))) or self.near_pair(
                            torch.cat([sv.reshape(-1), self._f64(t).reshape(-1)]), 0,
                            max(self._inexact(src), self.err_of([x])))):
                        return
                    if red == "prod" and (sv.numel() > 40 or (sv.numel() and float(
                            sv.abs().max()) > 3)):
                        return
                    base = f"scatter_reduce({d}, {ic}, {src}, '{red}'{inc})"
                    if red in ("sum", "mean"):
                        exact = False
                        factor = 4.0
                elif op == "scatter_add":
                    base = f"scatter_add({d}, {ic}, {src})"
                    exact = False
                    factor = 4.0
                else:
                    base = f"scatter({d}, {ic}, {src})"
                    if self.chance(0.1):
                        base = f"scatter({d}, {ic}, {src}, reduce='add')"
                        exact = False
            fn = base.split("(")[0]
            form = (f"{tgt}.{fn}_({base.split('(', 1)[1]}" if inplace else self.choice(
                [f"{x}.{base}", f"torch.{fn}({x}, {base.split('(', 1)[1]}"]))
        elif op in ("index_add", "index_fill"):
            k = int(rng.integers(0, 2 * n + 2)) if nd else 1
            idx = rng.integers(-n if op == "index_fill" else 0, max(n, 1), k).tolist() if n \
                else []
            if op == "index_fill":
                idx = sorted(set(idx))
            ic = f"torch.tensor({idx}, dtype=torch.int64)" if idx else \
                "torch.zeros(0, dtype=torch.int64)"
            if nd == 0:
                ic = "torch.tensor([0])"
            if op == "index_add":
                shp = list(s)
                if nd:
                    shp[d] = len(idx)
                src = self.new_tensor(tuple(shp), dt if self.chance(0.93) else self.wide_dtype())
                if src is None:
                    return
                ins.append(src)
                alpha = self.choice(["", ", alpha=2", ", alpha=-0.5"])
                if not self.is_float(t) and "0.5" in alpha:
                    alpha = ", alpha=3"
                base = f"index_add({d}, {ic}, {src}{alpha})"
                exact = False
                factor = 4.0
            else:
                val = self.choice([repr(self.scalar("float" if self.is_float(t) else "int")),
                                   "torch.tensor(1.5)", "-1"])
                base = f"index_fill({d}, {ic}, {val})"
            fn = base.split("(")[0]
            form = (f"{tgt}.{fn}_({base.split('(', 1)[1]}" if inplace else self.choice(
                [f"{x}.{base}", f"torch.{fn}({x}, {base.split('(', 1)[1]}"]))
        elif op in ("masked_fill", "masked_scatter"):
            err = self.err_of([x])
            if self.chance(0.4) and self.is_float(t) and not self.near(t, 0, err) and \
                    t.numel():
                mask = f"{x} < 0"
                mv = t.detach() < 0
            else:
                mask = self.new_tensor(self.bshape(s), "bool")
                if mask is None:
                    return
                mv = self.val(mask)
            if op == "masked_fill":
                val = self.choice([repr(self.scalar("float" if self.is_float(t) else None)),
                                   "torch.tensor(-1.0)", "float('-inf')", "0"])
                if "inf" in val and not self.is_float(t):
                    val = "0"
                if val == "torch.tensor(-1.0)" and self.chance(0.4):
                    w = self.new_tensor((), "float32", requires_grad=True)
                    if w is None:
                        return
                    val = w
                    ins.append(w)
                base = f"masked_fill({mask}, {val})"
            else:
                try:
                    cnt = int(torch.broadcast_to(mv, s).sum()) if s else int(mv.sum())
                except RuntimeError:
                    cnt = 1
                src = self.new_tensor((cnt + int(rng.integers(0, 3)),), dt)
                if src is None:
                    return
                ins.append(src)
                base = f"masked_scatter({mask}, {src})"
            fn = base.split("(")[0]
            form = (f"{tgt}.{fn}_({base.split('(', 1)[1]}" if inplace else self.choice(
                [f"{x}.{base}", f"torch.{fn}({x}, {base.split('(', 1)[1]}"]))
        elif op == "put":
            m = t.numel()
            if m == 0:
                return
            acc = self.chance(0.5)
            k = int(rng.integers(1, 6))
            idx = (rng.integers(-m, m, k) if acc else rng.permutation(m)[:k]).tolist()
            src = self.new_tensor((len(idx),), dt)
            if src is None:
                return
            ins.append(src)
            arg = ", accumulate=True" if acc else ""
            exact = not acc
            form = (f"{tgt}.put_(torch.tensor({idx}), {src}{arg})" if inplace else
                    f"{x}.put(torch.tensor({idx}), {src}{arg})")
        elif op == "setitem_repeat":
            # x[idx] += value with a repeated index: x[idx] = x[idx] + value, so each position
            # is written once per repeat with the same value (no accumulation)
            if nd == 0 or n == 0:
                return
            if not inplace:
                tgt = self.fresh()
                if not self.emit(f"{tgt} = {x}.clone()", "copy", out=tgt, inputs=[x],
                                 exact=True):
                    return
                if not self.may_write(tgt):
                    return
            idx = rng.integers(-n, n, int(rng.integers(1, 5))).tolist()
            val = self.choice(["1", "2.5", "-0.5"] if self.is_float(t) else ["1", "2", "True"])
            if self.chance(0.3) and self.is_float(t):
                w = self.new_tensor(s[1:], dt, requires_grad=self.chance(0.5))
                if w is None:
                    return
                val = w
                ins.append(w)
            sym = self.choice(["+=", "-=", "*="])
            code = f"{tgt}[torch.tensor({idx})] {sym} {val}"
            if self.chance(0.3):
                code = f"{tgt}[{idx}] {sym} {val}"
            u = self.val(val) if val in self.pool else None
            if u is not None and u.requires_grad and avoid("setitem_advanced_value_grad"):
                return
            self.emit(code, "scatter:setitem_repeat", touches=tuple(self.aliases(tgt)),
                      inputs=ins, exact=sym != "*=")
            return
        else:  # index_put_acc
            if nd == 0 or n == 0:
                return
            k = int(rng.integers(1, 2 * n + 1))
            rows = rng.integers(-n, n, k).tolist()
            parts = [f"torch.tensor({rows})"]
            if nd >= 2 and s[1] and self.chance(0.5):
                parts.append(f"torch.tensor({rng.integers(0, s[1], k).tolist()})")
            vshape = (k,) + tuple(s[len(parts):]) if self.chance(0.7) else tuple(s[len(parts):])
            src = self.new_tensor(vshape, dt)
            if src is None:
                return
            ins.append(src)
            form = (f"{tgt}.index_put_(({', '.join(parts)},), {src}, accumulate=True)"
                    if inplace else
                    f"torch.index_put({x}, ({', '.join(parts)},), {src}, True)")
            exact = False
            factor = 4.0
        if inplace:
            kind = "view" if t._base is not None else "leaf" if _is_leaf(t) else "nonleaf"
            self.emit(form, f"scatter:{op}_:{kind}", touches=tuple(self.aliases(tgt)),
                      inputs=ins, exact=exact, factor=factor,
                      loose=self.untracked_view_write(t, self.aliases(tgt)))
        else:
            if self.too_big(form):
                return
            if self.emit(f"{v} = {form}", f"scatter:{op}", out=v, inputs=ins, exact=exact,
                         factor=factor) and op == "masked_scatter" and \
                    not self.val(x).is_contiguous() and self.val(v).numel() > 1:
                self.tainted[v] = "masked_scatter_layout"

    # ---- sorts, order statistics, scans and reductions with named results
    SORTRED = ["sort", "argsort", "msort", "topk", "kthvalue", "median", "nanmedian", "mode",
               "cumsum", "cumprod", "all", "any", "var_mean", "std_mean", "count_nonzero",
               "max_dim", "min_dim", "quantile", "sum_dtype", "mean_dims", "logsumexp"]

    def _ties(self, t, d, err, exact_too):
        """Two values of a slice along ``d`` tie (exactly, when ``exact_too``) or nearly."""
        a = self._f64(t).nan_to_num(0.0, 1e300, -1e300)
        if a.ndim == 0 or a.numel() < 2:
            return False
        if d is None:
            a, d = a.reshape(-1), 0
        srt = a.sort(d).values
        m = srt.shape[d]
        if m < 2:
            return False
        lo, hi = srt.narrow(d, 0, m - 1), srt.narrow(d, 1, m - 1)
        if exact_too and bool((lo == hi).any()):
            return True
        return self.near(lo, hi, err)

    def fam_sortred(self):
        torch = self.torch
        op = self.choice(self.SORTRED)
        x = self.pick_safe()
        if x is None:
            return
        t = self.val(x)
        s = tuple(t.shape)
        nd = len(s)
        rng = self.rng
        err = self.err_of([x])
        d = int(rng.integers(-nd, nd)) if nd else self.choice([0, -1])
        kd = self.choice(["", ", keepdim=True", ", keepdim=False"])
        v = self.fresh()
        exact, factor = True, 1.0
        nan = self.is_float(t) and bool(t.detach().isnan().any())
        if op in ("sort", "argsort", "msort"):
            stable = self.chance(0.4) and op != "msort"
            sv = self.choice([True, False, None]) if stable else None
            desc = self.chance(0.4)
            dd = (0 if op == "msort" else d) if nd else None
            if self._ties(t, dd, err, False):
                return
            if (s[dd] if nd else 1) > 16 and sv is not True and \
                    self._ties(t, dd, 0.0, True) and avoid("sort_unstable_ties"):
                return
            arg = (", descending=True" if desc else "") + (f", stable={sv}" if stable else "")
            # (with ``stable``, PyTorch takes dim and descending by keyword only)
            positional = not stable or not avoid("sort_stable_positional_dim")
            if op == "sort":
                form = self.choice([f"torch.sort({x}, dim={d}{arg})",
                                    f"{x}.sort(dim={d}{arg}).values"] + (
                    [f"{x}.sort({d}{arg})", f"torch.sort({x}, {d}, {desc}).indices"]
                    if positional else []))
                if stable and self.chance(0.5):
                    form = f"torch.sort({x}, stable=True, dim={d}, descending={desc})"
            elif op == "argsort":
                form = self.choice([f"torch.argsort({x}, dim={d}{arg})"] + (
                    [f"{x}.argsort({d}{arg})"] if positional else []))
            else:
                form = f"torch.msort({x})"
        elif op in ("topk", "kthvalue"):
            if nd == 0 and not self.chance(0.3):
                return
            n = s[d] if nd else 1
            if self._ties(t, d if nd else None, err, op == "topk") and (
                    op == "kthvalue" or avoid("topk_ties")):
                return  # (kthvalue: exact ties are compared, near ones not)
            lo = 0 if op == "topk" else 1
            k = int(rng.integers(lo, max(n, lo) + 1)) if not self.chance(0.03) \
                else n + 1
            if op == "topk":
                arg = self.choice(["", ", largest=False", ", sorted=True",
                                   ", largest=False, sorted=True"])
                form = self.choice([f"{x}.topk({k}, {d}{arg})", f"torch.topk({x}, {k}, dim={d}{arg})",
                                    f"{x}.topk({k}{arg}).values"])
            else:
                form = self.choice([f"{x}.kthvalue({k}, {d}{kd})",
                                    f"torch.kthvalue({x}, {k}, dim={d}{kd})"])
        elif op in ("median", "nanmedian", "mode"):
            if op == "median" and nan and avoid("median_dim_nan"):
                return
            if op == "mode" and nd and s[d] > 16 and (nan or self._ties(t, d, 0.0, True)) and \
                    avoid("mode_long_slice_ties"):
                return
            if op in ("median", "nanmedian") and 0 in t.stride():
                # (PyTorch 2.13's median and nanmedian along a dim read an expanded input's
                # memory past its one element: x.expand(3).median(0) gives garbage)
                return
            if self._ties(t, d if nd else None, err, False):
                return
            if op == "mode" or self.chance(0.7):
                form = self.choice([f"{x}.{op}({d}{kd})", f"torch.{op}({x}, dim={d}{kd})",
                                    f"{x}.{op}({d}).values"])
            else:
                form = self.choice([f"{x}.{op}()", f"torch.{op}({x})"])
        elif op in ("cumsum", "cumprod"):
            a = self._f64(t)
            if op == "cumprod" and (t.numel() > 40 or (t.numel() and float(
                    a.abs().nan_to_num(0, 0, 0).max()) > 3)):
                return
            dtype = self.choice(["", "", ", dtype=torch.float64", ", dtype=torch.int64",
                                 ", dtype=torch.float32"])
            form = self.choice([f"{x}.{op}({d}{dtype})", f"torch.{op}({x}, dim={d}{dtype})",
                                f"{x}.{op}(dim={d})", f"{x}.clone().{op}_({d})"])
            if form.endswith(f".{op}_({d})") and nd == 0 and t.dtype == torch.bool and \
                    avoid("scan_inplace_0d_bool"):
                return
            if "int64" in dtype and self.is_float(t) and (not bool(a.isfinite().all()) or
                                                           self.near(a, a.trunc(), err)):
                return
            exact = False
            factor = 4.0
        elif op in ("all", "any"):
            if self.is_float(t) and self.near(t, 0, err):
                return
            if self.chance(0.6):
                form = self.choice([f"{x}.{op}({d}{kd})", f"torch.{op}({x}, dim={d}{kd})"])
                if nd >= 2 and self.chance(0.3):
                    form = f"{x}.{op}(dim=(0, {d}){kd})"
            else:
                form = self.choice([f"{x}.{op}()", f"torch.{op}({x})"])
        elif op in ("var_mean", "std_mean"):
            a = self._f64(t)
            if t.numel() and not bool(self.torch.isfinite(a).all()) and \
                    avoid("var_mean_nonfinite_mean"):
                return
            dims = d if self.chance(0.7) or nd < 2 else (0, d)
            if t.numel() and self._constant_slice(a, dims) and (
                    avoid("var_constant_inexact") or err > 0 or t.requires_grad):
                return
            corr = self.choice(["", ", correction=0", ", correction=2", ", unbiased=False"])
            form = self.choice([f"torch.{op}({x}, {dims!r}{corr}{kd})",
                                f"torch.{op}({x}, dim={dims!r}{corr})", f"torch.{op}({x})"])
            exact = False
            try:
                m = a.mean(dims, keepdim=True)
                ss = ((a - m) ** 2).sum(dims)
                sa = (a * a).sum(dims)
                factor = float(min(max(float((sa / ss.clamp(min=1e-300)).max()), 1.0), 1e4))
            except (RuntimeError, IndexError):
                factor = 10.0
        elif op == "count_nonzero":
            if self.is_float(t) and self.near(t, 0, err):
                return
            form = self.choice([f"torch.count_nonzero({x})", f"{x}.count_nonzero({d})",
                                f"torch.count_nonzero({x}, dim={d})"])
            if nd >= 2 and self.chance(0.3):
                form = f"{x}.count_nonzero(dim=(0, {d}))"
        elif op in ("max_dim", "min_dim"):
            fn = op[:3]
            if self.near_tie(t, d if nd else None, err):
                return
            field = self.choice(["values", "indices", "[0]", "[1]"])
            acc = field if field.startswith("[") else f".{field}"
            form = self.choice([f"{x}.{fn}({d}{kd}){acc}", f"torch.{fn}({x}, dim={d}{kd}){acc}",
                                f"torch.{fn}({x}, {d}){acc}"])
        elif op == "quantile":
            if not self.is_float(t) and not self.chance(0.1):
                return
            q = self.choice(["0.5", "0.25", "0.9", "torch.tensor([0.1, 0.5])", "1.0"])
            if "tensor" in q and t.dtype == torch.float64:
                q = "torch.tensor([0.1, 0.5], dtype=torch.float64)"
            interp = self.choice(["", ", interpolation='lower'", ", interpolation='midpoint'",
                                  ", interpolation='nearest'", ", interpolation='higher'"])
            fn = "nanquantile" if self.chance(0.2) else "quantile"
            whole = self.chance(0.5)
            # (ties within what is sorted: the whole tensor when no dim is given; equal values
            # in more than 16 take their gradient where PyTorch's unstable sort leaves them)
            n_sorted = t.numel() if whole or not nd else s[d]
            if self._ties(t, None if whole or not nd else d, err, t.requires_grad and
                          n_sorted > 16 and avoid("sort_unstable_ties")):
                return
            form = f"{x}.{fn}({q}{interp})" if whole else \
                f"torch.{fn}({x}, {q}, dim={d}{kd}{interp})"
            exact = False
        elif op == "sum_dtype":
            dtype = self.choice(["torch.float64", "torch.int64", "torch.float32", "torch.int32"])
            a = self._f64(t)
            if "int" in dtype and self.is_float(t) and (not bool(a.isfinite().all()) or
                                                         self.near(a, a.trunc(), err)):
                return
            fn = self.choice(["sum", "prod", "mean", "nansum"])
            if fn == "prod" and (t.numel() > 40 or (t.numel() and float(
                    a.abs().nan_to_num(0, 0, 0).max()) > 3)):
                return
            form = self.choice([f"{x}.{fn}(dtype={dtype})", f"torch.{fn}({x}, {d}, dtype={dtype})"
                                if fn != "nansum" else f"torch.nansum({x}, dtype={dtype})"])
            exact = False
            factor = self.cancel_factor(f"{x}.sum()", [x]) if fn != "prod" else 2.0
        elif op == "mean_dims":
            if nd < 1:
                return
            dims = tuple(sorted(set(int(i) % nd for i in rng.integers(-nd, nd, rng.integers(1, 3)))))
            dims = tuple(d_ - nd if self.chance(0.3) else d_ for d_ in dims)
            fn = self.choice(["mean", "sum", "amax", "amin", "nansum"])
            if fn in ("amax", "amin") and any(self.near_tie(t, dd, err) for dd in dims):
                return
            form = self.choice([f"{x}.{fn}({dims!r}{kd})", f"torch.{fn}({x}, dim={list(dims)}{kd})",
                                f"{x}.{fn}(dim={dims!r})"])
            if fn == "amax" and self.chance(0.2):
                form = f"{x}.max(dim={dims!r})"  # (PyTorch's TypeError: max takes one dim)
            exact = fn in ("amax", "amin")
            factor = 1.0 if exact else self.cancel_factor(f"{x}.sum({dims!r})", [x])
        else:  # logsumexp over dims, keepdim
            a = self._f64(t)
            if t.numel() and float(a.nan_to_num(0, 0, 0).max()) > 50 and not self.nan_mode:
                return
            dims = d if nd < 2 or self.chance(0.6) else (0, d)
            form = self.choice([f"torch.logsumexp({x}, {dims!r}{kd})",
                                f"{x}.logsumexp(dim={dims!r}{kd})"])
            exact = False
            factor = 2.0
        if self.too_big(form):
            return
        self.emit(f"{v} = {form}", f"sortred:{op}", out=v, inputs=[x], exact=exact,
                  factor=factor)

    # ---- nn.functional layers
    NNF = ["conv1d", "conv2d", "max_pool", "avg_pool", "adaptive_pool", "batch_norm",
           "layer_norm", "group_norm", "instance_norm", "dropout", "embedding", "pad",
           "interpolate", "cross_entropy", "nll_loss", "one_hot", "normalize",
           "cosine_similarity", "linear", "softmax_dtype", "rms_norm"]

    def _new_float(self, shape, dt="float32", rg=None, positive=False):
        if math.prod(shape) > 20000:
            return None
        return self.new_tensor(tuple(shape), dt, requires_grad=rg if rg is not None else
                               self.chance(0.6), positive=positive)

    def fam_nnf(self):
        op = self.choice(self.NNF)
        rng = self.rng
        v = self.fresh()
        x = self.pick_safe(lambda u: self.is_float(u) and u.ndim >= 2 and u.numel() <= 20000)
        if x is None or self.chance(0.3):
            shape = tuple(int(rng.integers(1, 5)) for _ in range(int(rng.integers(2, 5))))
            if op in ("conv2d", "max_pool", "avg_pool", "adaptive_pool", "interpolate", "pad") \
                    and self.chance(0.6):
                shape = (int(rng.integers(1, 3)), int(rng.integers(1, 4)),
                         int(rng.integers(2, 7)), int(rng.integers(2, 7)))
            x = self._new_float(shape, self.choice(["float32", "float32", "float64"]))
            if x is None:
                return
        t = self.val(x)
        s = tuple(t.shape)
        nd = len(s)
        dt = str(t.dtype).replace("torch.", "")
        err = self.err_of([x])
        ins = [x]
        exact, factor = False, 1.0
        a = self._f64(t)
        if op in ("conv1d", "conv2d"):
            sp = 1 if op == "conv1d" else 2
            if nd not in (sp + 1, sp + 2):
                return
            c = s[-sp - 1]
            groups = self.choice([1, 1, 1, 2, c]) if c else 1
            if groups < 1 or c % groups:
                groups = 1
            out_c = groups * int(rng.integers(1, 3))
            k = [int(rng.integers(1, 4)) for _ in range(sp)]
            w = self._new_float((out_c, c // groups) + tuple(k), dt if self.chance(0.95) else
                                "float64")
            if w is None:
                return
            ins.append(w)
            args = []
            if self.chance(0.5):
                b = self._new_float((out_c,), dt)
                if b is None:
                    return
                ins.append(b)
                args.append(b if self.chance(0.5) else f"bias={b}")
            elif self.chance(0.3):
                args.append("None")
            if self.chance(0.4):
                args.append(f"stride={self.choice([2, (1, 2) if sp == 2 else 3, 1])}")
            if self.chance(0.4):
                args.append(f"padding={self.choice([1, 0, repr('same'), repr('valid'), (1, 0) if sp == 2 else 2])}")
            if self.chance(0.3):
                args.append(f"dilation={self.choice([2, 1])}")
            if groups != 1:
                args.append(f"groups={groups}")
            kw = [x_ for x_ in args if "=" in x_]
            pos = [x_ for x_ in args if "=" not in x_]
            form = f"F.{op}({', '.join([x, w] + pos[:1] + kw)})"
            if c == 0 and avoid("conv_zero_in_channels"):
                return
            if self.nan_mode and avoid("conv_nonfinite"):
                return
            if "'same'" in form and "stride=1" not in form and "stride" in form:
                pass  # (PyTorch's error: padding='same' with strides)
            factor = self.cancel_factor(form, ins)
        elif op in ("max_pool", "avg_pool", "adaptive_pool"):
            sp = max(1, min(3, nd - 2)) if nd >= 3 else 1
            if nd < 2:
                return
            sp = self.choice([1, 2]) if nd >= 4 else 1
            if nd - sp not in (1, 2):
                return
            spatial = s[-sp:]
            if op == "adaptive_pool":
                outs = tuple(int(rng.integers(1, max(n, 1) + 2)) for n in spatial)
                kind = self.choice(["avg", "max"])
                if kind == "max" and self._ties(t, None, err, False):
                    return
                form = f"F.adaptive_{kind}_pool{sp}d({x}, {outs if sp > 1 else outs[0]})"
                exact = kind == "max"
                if kind == "avg" and t.numel() == 0 and t.requires_grad and \
                        avoid("adaptive_avg_pool_empty_backward"):
                    return
            else:
                k = int(rng.integers(1, 4))
                args = [str(k)]
                stride, pad, ceil, dil = k, 0, False, 1
                if self.chance(0.4):
                    stride = self.choice([1, 2, 3])
                    args.append(f"stride={stride}")
                if self.chance(0.3):
                    pad = self.choice([0, 1])
                    args.append(f"padding={pad}")
                if self.chance(0.3):
                    ceil = True
                    args.append("ceil_mode=True")
                if op == "avg_pool" and self.chance(0.3):
                    args.append(self.choice(["count_include_pad=False",
                                             "count_include_pad=True"]))
                if op == "max_pool" and self.chance(0.2) and sp == 1:
                    dil = 2
                    args.append("dilation=2")
                if op == "max_pool" and any(_window_in_padding(n, k, stride, pad, dil, ceil)
                                            for n in s[-sp:]):
                    # (a window over padding only: PyTorch's -inf there has an index past the
                    # plane, where its backward writes into the next plane's gradient)
                    return
                if op == "max_pool" and self.chance(0.15):
                    args.append("return_indices=True")
                form = f"F.{op}{sp}d({x}, {', '.join(args)})"
                if op == "max_pool":
                    if self._ties(t, None, err, False):
                        return
                    exact = True
                else:
                    factor = 2.0
        elif op in ("batch_norm", "instance_norm"):
            if nd < 2:
                return
            if self.nan_mode and avoid("nonfinite_kernel_arithmetic"):
                return
            c = s[1]
            training = self.chance(0.6) if op == "batch_norm" else True
            rm, rv = self.fresh("c"), self.fresh("c")
            if not (self.emit(f"{rm} = torch.zeros({c}{', dtype=torch.float64' if dt == 'float64' else ''})",
                              "create:running", out=rm, exact=True) and
                    self.emit(f"{rv} = torch.ones({c}{', dtype=torch.float64' if dt == 'float64' else ''})",
                              "create:running", out=rv, exact=True)):
                return
            red = (0,) + tuple(range(2, nd)) if op == "batch_norm" else tuple(range(2, nd))
            if training and (t.numel() == 0 or self._constant_slice(a, red) or
                             math.prod(s[j] for j in red) < 2):
                if not self.chance(0.1):
                    return
            args = [x, rm, rv]
            if self.chance(0.5):
                g = self._new_float((c,), dt)
                b = self._new_float((c,), dt) if self.chance(0.7) else "None"
                if g is None or b is None:
                    return
                args += [g, b]
                ins += [g] + ([b] if b != "None" else [])
            if op == "batch_norm":
                args.append(f"training={training}")
                if self.chance(0.4):
                    args.append(f"momentum={self.choice([0.1, 0.5, 1.0])}")
                if self.chance(0.3):
                    args.append("eps=0.001")
                if self.chance(0.1):
                    args = [x, "None", "None"] + args[3:]
            else:
                args.append(f"use_input_stats={self.chance(0.8)}")
            form = f"F.{op}({', '.join(args)})"
            factor = 10.0
            # (the running statistics, updated in place, compared with the result)
            if self.emit(f"{v} = {form}", f"nnf:{op}", out=v, touches=(v, rm, rv), inputs=ins,
                         factor=factor):
                self.note_double_backward("batch_norm", v)
            return
        elif op in ("layer_norm", "group_norm", "rms_norm"):
            if self.nan_mode and op != "rms_norm" and avoid("nonfinite_kernel_arithmetic"):
                return
            if op == "group_norm":
                c = s[1]
                gs = [g for g in (1, 2, 3, c) if g and c % g == 0] or [1]
                g = self.choice(gs) if not self.chance(0.05) else 3
                args = [x, str(g)]
                if self.chance(0.5):
                    w = self._new_float((c,), dt)
                    if w is None:
                        return
                    args.append(w)
                    ins.append(w)
                try:
                    grp = a.reshape(s[0], g, -1)
                    if grp.shape[-1] < 2 or self._constant_slice(grp, 2):
                        return
                except RuntimeError:
                    pass
                form = f"F.group_norm({', '.join(args)})"
            else:
                k = int(rng.integers(1, min(nd, 3) + 1))
                shape = list(s[-k:])
                if self.chance(0.03):
                    shape[0] += 1
                red = tuple(range(nd - k, nd))
                if op == "layer_norm" and (self._constant_slice(a, red) or
                                           math.prod(s[-k:]) < 2):
                    return
                args = [x, repr(tuple(shape)) if self.chance(0.5) else repr(shape)]
                if self.chance(0.5):
                    w = self._new_float(tuple(shape), dt)
                    if w is None:
                        return
                    args.append(w)
                    ins.append(w)
                    if op == "layer_norm" and self.chance(0.5):
                        b = self._new_float(tuple(shape), dt)
                        if b is None:
                            return
                        args.append(b)
                        ins.append(b)
                if self.chance(0.3):
                    args.append("eps=0.01")
                if op == "rms_norm" and t.numel() and float(a.abs().nan_to_num(0, 0, 0).max()) < 0.05:
                    return
                form = f"F.{op}({', '.join(args)})"
            factor = 10.0
        elif op == "dropout":
            p = self.choice([0.0, 1.0, 0.5])
            training = "True" if p in (0.0, 1.0) and self.chance(0.6) else "False"
            fn = self.choice(["dropout", "dropout", "alpha_dropout", "dropout1d",
                              "feature_alpha_dropout"])
            if fn == "dropout1d" and nd not in (2, 3):
                return
            if fn in ("alpha_dropout", "feature_alpha_dropout") and training == "True" and \
                    p != 0.0:
                training = "False"
            inpl = ""
            if self.chance(0.2) and fn == "dropout":
                tgt = self.fresh()
                if not self.emit(f"{tgt} = {x} * 1", "copy", out=tgt, inputs=[x], exact=True):
                    return
                x = tgt
                inpl = ", inplace=True"
            form = f"F.{fn}({x}, {p}, training={training}{inpl})"
            if self.chance(0.2):
                form = f"F.{fn}({x}, p={self.choice([1.5, -0.1])})"
            exact = p == 0.0 or training == "False"
        elif op == "embedding":
            n = int(rng.integers(1, 7))
            w = self._new_float((n, int(rng.integers(1, 4))), dt)
            if w is None:
                return
            ins = [w]
            idx = rng.integers(0, n + (1 if self.chance(0.03) else 0),
                               tuple(int(rng.integers(1, 4)) for _ in range(int(rng.integers(1, 3)))))
            pad_idx = self.choice(["", f", padding_idx={int(rng.integers(-n, n))}"])
            form = f"F.embedding(torch.tensor({_nested(idx)}), {w}{pad_idx})"
            if self.chance(0.1):
                form = f"F.embedding(torch.tensor({_nested(idx)}).float(), {w})"
            exact = True
        elif op == "pad":
            mode = self.choice(["constant", "constant", "reflect", "replicate", "circular"])
            k = int(rng.integers(1, min(3, nd) + 1))
            # (no negative circular amounts: PyTorch 2.13 reads past its input for some, garbage
            # values, seed 352357; constant ones crop)
            amounts = [int(rng.integers(-1 if mode == "constant" else 0, 3)) for _ in range(2 * k)]
            arg = f", mode='{mode}'" if mode != "constant" or self.chance(0.3) else ""
            if mode == "constant" and self.chance(0.4):
                arg += f", value={self.choice([1.5, -2.0, 0.0])}"
            form = f"F.pad({x}, {tuple(amounts)!r}{arg})"
            if mode in ("reflect", "replicate", "circular") and avoid("pad_mode_node_names"):
                return
            exact = True
        elif op == "interpolate":
            if nd not in (3, 4, 5):
                return
            if self.nan_mode and avoid("nonfinite_kernel_arithmetic"):
                return
            sp = nd - 2
            mode = self.choice(["nearest", "nearest-exact", "area"] +
                               [{1: "linear", 2: "bilinear", 3: "trilinear"}[sp]] +
                               (["bicubic"] if sp == 2 else []))
            if avoid("interpolate_node_names") and mode != "area":
                return
            if self.chance(0.5):
                size = tuple(int(rng.integers(1, 7)) for _ in range(sp))
                arg = f"size={size if sp > 1 else size[0]}"
            else:
                arg = f"scale_factor={self.choice([2, 0.5, 1.5, 3])}"
            if mode not in ("nearest", "nearest-exact", "area") and self.chance(0.4):
                arg += f", align_corners={self.choice([True, False])}"
            form = f"F.interpolate({x}, {arg}, mode='{mode}')"
            exact = mode in ("nearest", "nearest-exact")
            factor = 4.0
        elif op in ("cross_entropy", "nll_loss"):
            n, c = s[0], s[1]
            tshape = (n,) + s[2:]
            lbl = rng.integers(0, max(c, 1), tshape)
            ignore = ""
            if self.chance(0.3) and c:
                ig = int(rng.integers(0, c)) if self.chance(0.7) else -100
                ignore = f", ignore_index={ig}"
                if self.chance(0.5) and lbl.size:
                    lbl.reshape(-1)[0] = ig
            if self.chance(0.03) and lbl.size:
                lbl.reshape(-1)[0] = c
            target = f"torch.tensor({_nested(lbl)})" if lbl.size else \
                f"torch.zeros({tshape}, dtype=torch.int64)"
            arg = ignore
            if self.chance(0.4):
                wv = self._new_float((c,), dt, rg=False, positive=True)
                if wv is None:
                    return
                arg += f", weight={wv}"
            if op == "cross_entropy" and self.chance(0.4):
                arg += f", label_smoothing={self.choice([0.1, 0.25, 0.0])}"
            if op == "cross_entropy" and self.chance(0.2) and not ignore:
                target = f"torch.softmax({self.fresh_probs(s, dt)}, 1)"
                if "None" in target:
                    return
            arg += self.choice(["", ", reduction='sum'", ", reduction='none'"])
            if self.log_softmax_cancels(t, 1):
                return
            if self.nan_mode and avoid("nll_loss_backward_inf_grad"):
                return
            inp = x if op == "cross_entropy" else f"F.log_softmax({x}, 1)"
            form = f"F.{op}({inp}, {target}{arg})"
            factor = 4.0
        elif op == "one_hot":
            n = int(rng.integers(1, 6))
            idx = rng.integers(0, n, tuple(int(rng.integers(0, 4)) for _ in range(
                int(rng.integers(0, 3)))))
            nc = self.choice([f", {n}", f", num_classes={n + 1}", "", ", -1"])
            if self.chance(0.05):
                nc = f", {max(n - 2, 0)}"
            form = f"F.one_hot(torch.tensor({_nested(idx)}, dtype=torch.int64){nc})" if idx.size \
                else f"F.one_hot(torch.zeros({idx.shape}, dtype=torch.int64), {n})"
            exact = True
            ins = []
        elif op == "normalize":
            p = self.choice([2.0, 1.0, 3.0])
            dd = int(rng.integers(-nd, nd))
            if t.numel() and float(a.abs().nan_to_num(0, 0, 0).sum(dd).min()) < 0.1:
                return
            form = self.choice([f"F.normalize({x})", f"F.normalize({x}, p={p}, dim={dd})",
                                f"F.normalize({x}, dim={dd}, eps=1e-6)"])
            factor = 4.0
        elif op == "cosine_similarity":
            y = self.operand(x, dtype=dt, bshape=self.chance(0.2))
            if y is None:
                return
            ins.append(y)
            dd = int(rng.integers(-nd, nd))
            try:
                b = self._f64(self.val(y))
                if float(a.norm(dim=dd).min()) < 0.1 or float(b.norm(dim=dd).min()) < 0.1:
                    return
            except (RuntimeError, IndexError):
                pass
            form = self.choice([f"F.cosine_similarity({x}, {y})",
                                f"F.cosine_similarity({x}, {y}, dim={dd})"])
            factor = 10.0
        elif op == "linear":
            k = int(rng.integers(1, 4))
            w = self._new_float((k, s[-1]), dt)
            if w is None:
                return
            ins.append(w)
            b = self._new_float((k,), dt) if self.chance(0.5) else None
            if b is not None:
                ins.append(b)
            form = f"F.linear({x}, {w}{', ' + b if b else ''})"
            if b is not None and avoid("linear_grad_fn"):
                return
            if nd > 2 and (avoid("linear_nd_grad_fn") or self.layout_dependent(x)):
                return
            factor = self.cancel_factor(form, ins)
        elif op == "softmax_dtype":
            dd = int(rng.integers(-nd, nd))
            fn = self.choice(["softmax", "log_softmax"])
            if fn == "log_softmax" and self.log_softmax_cancels(t, dd):
                return
            form = self.choice([f"F.{fn}({x}, {dd}, dtype=torch.float64)",
                                f"torch.{fn}({x}, dim={dd}, dtype=torch.float64)",
                                f"{x}.{fn}({dd}, dtype=torch.float32)"])
            factor = 2.0
        else:
            return
        if self.too_big(form):
            return
        if self.emit(f"{v} = {form}", f"nnf:{op}", out=v, inputs=ins, exact=exact,
                     factor=factor):
            self.note_double_backward(op, v)
            if op == "softmax_dtype" and fn == "softmax":
                self.note_normalized(v, dd)

    def fresh_probs(self, shape, dt="float32"):
        """A new float tensor for soft targets (its softmax is taken), of the input's dtype."""
        return str(self.new_tensor(tuple(shape), dt, requires_grad=False))

    # ---- factories
    RAGGED = ["[[1, 2], [3]]", "[1, [2]]", "'a'", "[None]"]

    def fam_factory(self):
        rng = self.rng
        forms = [
            f"torch.arange({self.choice([0, -1, 1.5, 0.25])}, {self.choice([1, 2.5, 3, -2])}, "
            f"{self.choice([0.1, 0.25, 0.3, 1, -0.5, 0.7])})",
            f"torch.arange({self.choice([5, 2.5, 0])})",
            f"torch.arange(0, 10, 3, dtype=torch.{self.choice(['float32', 'int32', 'float64'])})",
            f"torch.linspace({self.choice([-1, 0, 2.5])}, {self.choice([1, 10, -3])}, "
            f"{self.choice([0, 1, 2, 5, 7])})",
            f"torch.linspace(0, 10, {self.choice([3, 6])}, dtype=torch.int64)",
            f"torch.logspace(0, {self.choice([1, 2, -1])}, {self.choice([3, 4])})",
            f"torch.full(({int(rng.integers(0, 4))}, 2), {self.choice([7, 1.5, True, -2])})",
            f"torch.full((2,), {self.choice([1.5, 3])}, dtype=torch.{self.choice(['float64', 'int64', 'int32', 'bool'])})",
            f"torch.eye({self.choice([2, 3, 0])}, dtype=torch.{self.choice(['int64', 'bool', 'float32'])})",
            f"torch.eye({self.choice([2, 3])}, {self.choice([1, 4])})",
            f"torch.tril_indices({self.choice([3, 4, 0])}, {self.choice([3, 2])})",
            f"torch.triu_indices({self.choice([3, 4])}, {self.choice([4, 2])}, {self.choice([0, 1, -1])})",
            f"torch.tensor({self.choice(['[1, 2.0]', '[True, 1]', '[[1, 2], [3, 4]]', '[]', '[[]]', '[True, False]', '2**40', '3', '-0.0', '[1.5, True]'])})",
            f"torch.tensor({self.choice(['[1, 2]', '3.5', '[0.1, 0.2]'])}, dtype=torch.{self.choice(['float64', 'int32', 'uint8', 'bool', 'int8'])})",
            f"torch.scalar_tensor({self.choice([2, 1.5, True])})",
            f"torch.zeros({self.choice(['2, 3', '(0,)', '[2]', '()'])}, dtype=torch.{self.choice(['int32', 'bool', 'float64'])})",
            f"torch.ones({self.choice(['3', '(1, 2)'])}).new_full((2,), {self.choice([3, 2.5, True])})",
            f"torch.empty({self.choice(['0', '(2, 0)'])})",
            f"torch.as_tensor({self.choice(['[1, 2]', '(1.5, 2)', '[[True]]'])}, dtype=torch.{self.choice(['float32', 'int64'])})",
            f"torch.arange({self.choice([6, 12])}).reshape({self.choice(['2, -1', '-1, 3'])})",
            f"torch.tensor({self.choice(['np.float64(1.5)', 'np.int32(4)', 'np.array([1, 2], dtype=np.int16)', 'np.bool_(True)'])})",
            f"torch.{self.choice(['zeros', 'ones'])}_like(torch.arange(3), dtype=torch.{self.choice(['float32', 'bool', 'int32'])})",
            f"torch.full_like(torch.arange(3), {self.choice([2.7, -1, True])})",
            f"torch.{self.choice(['eye', 'zeros', 'ones'])}({self.choice(['-1', '2, -1'])})",
            f"torch.arange({self.choice(['0, 1, 0', '0, 1, -1', '0, 5, 2.5'])})",
            f"torch.linspace(0, 1, {self.choice([-1, 2.5])})",
            f"torch.full((2,), {self.choice([1.5, -1, 300])}, dtype=torch.{self.choice(['int64', 'uint8', 'int8'])})",
            f"torch.tensor({self.choice(self.RAGGED)})",
        ]
        x = self.pick()
        if x is not None:
            forms += [f"torch.zeros_like({x}, dtype=torch.{self.choice(['int32', 'float64', 'bool'])})",
                      f"{x}.new_tensor({self.choice(['[1, 2]', '2.5', '[True]'])})",
                      f"{x}.new_empty(({int(rng.integers(0, 3))},)).shape",
                      f"torch.full_like({x}, {self.choice([7, 2.5, True])}, dtype=torch.{self.choice(['float64', 'int64'])})",
                      f"torch.arange({x}.numel())",
                      f"torch.ones({x}.shape)", f"torch.zeros(*{x}.shape)" if self.val(x).ndim
                      else "torch.zeros(())", f"{x}.new_ones({x}.size())"]
        form = self.choice(forms)
        v = self.fresh("c")
        inexact = any(k in form for k in ("linspace", "logspace", "0.1", "0.3", "0.7"))
        self.emit(f"{v} = {form}", f"factory:{form.split('(')[0].split('.')[-1]}", out=v,
                  touches=(v,), exact=not inexact, keep_errors=0.8)

    # ---- printing and Python values
    def fam_print(self):
        x = self.pick()
        if x is None:
            return
        t = self.val(x)
        if self.err_of([x]) > 0 and self.is_float(t):
            return  # (a printed value rounds to 4 digits: an ulp may change the last one)
        if x in self.loose or x in self.tainted:
            return
        if t.numel() > 2000:
            return
        forms = [f"repr({x})", f"str({x})", f"{x}.tolist()", f"repr({x}.dtype)",
                 f"repr({x}.shape)", f"str({x}.size())", f"repr({x}.T)" if t.ndim == 2 else
                 f"repr({x}[None])", f"repr({x}.detach())", f"repr({x} * 0)" if t.dtype !=
                 self.torch.bool else f"repr(~{x})", f"f'{{{x}}}'"]
        if t.numel() == 1:
            forms += [f"{x}.item()", f"repr({x}.item())", f"float({x})", f"int({x})",
                      f"bool({x})", f"{x}.item().__class__.__name__"]
        if t.numel() == 1 and self.is_float(t):
            forms += [f"format({x}.item(), '.3f')", f"round({x}.item(), 2)"]
        form = self.choice(forms)
        if form.startswith(("int(", "float(")) and self.is_float(t) and not bool(
                t.detach().isfinite().all()):
            return
        v = self.fresh("n")
        self.emit(f"{v} = {form}", f"print:{form.split('(')[0].split('.')[-1]}", touches=(v,))

    # ---- calls PyTorch refuses: the same kind of exception in both
    def fam_wrong(self):
        x = self.pick_safe(lambda u: u.numel() < LARGE)  # (an error needs no large tensor)
        if x is None:
            return
        t = self.val(x)
        s = tuple(t.shape)
        nd = len(s)
        y = self.pick_safe(lambda u: u is not t)
        y = y or x
        forms = [
            f"{x} @ {y}", f"torch.mm({x}, {y})", f"torch.cat([{x}, {y}], {nd})",
            f"torch.stack([{x}, {y}])", f"{x}.view({t.numel() + 1})", f"{x}.reshape(-1, -1)",
            f"{x}.expand({', '.join(['0'] * (nd + 1))})", f"{x}.sum(dim={nd + 1})",
            f"{x}[torch.tensor([0.5])]", f"{x}[{s[0] if nd else 1}]",
            f"{x}.gather(0, torch.tensor([0], dtype=torch.int32))",
            f"torch.logical_and({x}, True)", f"torch.maximum(2, {x})", f"torch.atan2({x}, 2)",
            f"{x}.item()", f"int({x})", f"{x}.numpy()", f"{x}.backward()",
            f"F.linear({x}, torch.ones(2, 2, dtype=torch.int64))",
            # (a 1-d input takes ones of its own size as class probabilities: one more)
            f"F.cross_entropy({x}, torch.ones({(s[0] + 1,) if nd == 1 else s[:1]}))",
            f"F.embedding({x}, torch.ones(2, 2))", f"torch.where({x}, {x}, {y})",
            f"{x}.masked_fill({x}, 1.0)", f"{x}.index_select(0, torch.tensor([0.0]))",
            f"torch.heaviside({x}, 1.0)", f"torch.gcd({x}, 2)", f"torch.logical_xor({x}, 0)",
            f"{x}.bool() - True", "torch.zeros(2).add_(torch.ones(3))",
            f"{x}.max(dim=(0, 1))", f"{x}.new_zeros(-1)", "torch.eye(-1)",
            f"F.batch_norm({x}, None, None, training=True, momentum=None)",
            f"{x}.permute(0, 0)", f"{x}.transpose(0, {nd + 1})", f"{x}.clamp(min='a')",
            f"torch.nextafter({x}, 1.0)", f"torch.ldexp({x}, 2)", f"torch.logaddexp({x}, 1)",
            f"{x}.atan2_(1)", f"torch.flip({x}, 0)", f"torch.isin({x}, 2)",
            f"torch.exp({self.choice([2.0, 3, True])})", f"torch.sum({self.choice([2.5, 1])})",
        ]
        form = self.choice(forms)
        v = self.fresh("e")
        self.emit(f"{v} = {form}", f"wrong:{form.split('(')[0].split('.')[-1][:20]}",
                  out=v, inputs=[x, y], keep_errors=1.0)

    # ---------------------------------------------------------------- the end: gradients
    def weights_for(self, t):
        shape = tuple(t.shape)
        dt = str(t.dtype).replace("torch.", "")
        code = self.data_code(shape, dt, as_list=False)
        if shape == ():
            code = _fmt(self.values((), dt)[()])
            return code
        return f"torch.tensor({code})"

    def grads(self):
        torch = self.torch
        cands = [e for e in self.pool if self.is_float(self.val(e)) and self.val(e).requires_grad]
        if not cands:
            return
        leaves = [e for e in self.pool if e.isidentifier() and self.val(e).requires_grad
                  and _is_leaf(self.val(e))]
        err = max([self.err.get(e, 0.0) for e in self.pool] + [1e-4]) * 10
        st = len(self.stmts)
        # the loss: a weighted sum of one to three results
        outs = [cands[-1]] + [self.choice(cands) for _ in range(int(self.rng.integers(0, 3)))]
        made = False  # (a first term PyTorch refuses leaves loss undefined: the next starts it)
        for o in dict.fromkeys(outs):
            w = self.weights_for(self.val(o))
            if not made:
                made = self.emit(f"loss = ({o} * {w}).sum()", "grad:loss", out=None,
                                 touches=("loss",), inputs=[o], keep_errors=1.0)
            else:
                self.emit(f"loss = loss + ({o} * {w}).sum()", "grad:loss", touches=("loss",),
                          inputs=[o], keep_errors=1.0)
        if "loss" not in self.ns:
            return
        grads_of = tuple(f"{e}.grad" for e in leaves) + tuple(
            f"{e}.grad" for e in dict.fromkeys(self.retained) if _retained_nonleaf(self.val(e)))
        mode = self.choice(["backward", "backward", "grad", "grad2", "twice", "create_graph"])
        if mode == "twice" and avoid("inplace_on_empty") and any(
                self.val(e).numel() == 0 and self.val(e).ndim >= 2 for e in leaves):
            mode = "backward"  # the second backward adds into the empty .grad in place
        if mode in ("grad2", "create_graph") and self.prod_zero and \
                avoid("prod_create_graph"):
            mode = "backward"
        if mode in ("grad2", "create_graph") and self.pow_zero and \
                avoid("pow_zero_create_graph"):
            mode = "backward"
        if mode in ("grad2", "create_graph") and self.empty_grad and \
                avoid("create_graph_empty_grad"):
            mode = "backward"
        if mode in ("grad2", "create_graph") and self.sign_grad and \
                avoid("sign_create_graph_dtype"):
            mode = "backward"
        if mode in ("grad2", "create_graph") and self.full_setitem and \
                avoid("setitem_full_index_grad_fn"):
            mode = "backward"  # the tensor's old value stays in numbagrad's graph
        if mode in ("grad2", "create_graph") and self.nan_mode and \
                avoid("create_graph_inf_grad"):
            mode = "backward"
        if mode in ("grad2", "create_graph") and self.nan_mode and self.prod_dim and \
                avoid("prod_dim_of_one_with_zero"):
            mode = "backward"
        if mode in ("grad2", "create_graph") and self.nan_mode and self.prod_dim and \
                avoid("prod_zero_inf_second_order"):
            mode = "backward"
        if mode == "grad2" and self.nan_mode and self.took_abs and \
                avoid("abs_of_nan_second_order"):
            mode = "backward"
        if mode in ("grad2", "create_graph") and self.big_curved_reduce:
            mode = "backward"  # (see big_curved_reduce)
        if mode in ("grad2", "create_graph") and self.dbl_names and self.nan_mode and \
                avoid("double_backward_node_names"):
            mode = "backward"  # (the composed rules meet inf * 0 elsewhere: seed 21111)
        loose = mode in ("grad2", "create_graph") and (avoid("create_graph_grad_fn_names") or (
            self.dbl_names and avoid("double_backward_node_names")) or (
            self.view_write and avoid("copy_slices_create_graph_name")))
        if mode == "backward":
            self.emit("loss.backward()", "grad:backward", touches=grads_of, keep_errors=1.0)
        elif mode == "twice":
            self.emit("loss.backward(retain_graph=True)", "grad:backward", touches=grads_of,
                      keep_errors=1.0)
            self.emit("loss.backward()", "grad:backward_again", touches=grads_of,
                      keep_errors=1.0)
        elif mode == "grad" and leaves:
            ins = ", ".join(leaves[:4])
            self.emit(f"g = torch.autograd.grad(loss, [{ins}], allow_unused=True)", "grad:grad",
                      touches=("g",), keep_errors=1.0)
        elif mode in ("grad2", "create_graph") and leaves:
            x = self.choice(leaves)
            if mode == "grad2":
                ok = self.emit(f"g, = torch.autograd.grad(loss, {x}, create_graph=True)",
                               "grad:grad_create_graph", touches=("g",), keep_errors=1.0,
                               loose=loose)
                if ok and isinstance(self.val("g"), torch.Tensor):
                    w = self.weights_for(self.val("g"))
                    ins = ", ".join(leaves[:4])
                    self.emit(f"gg = torch.autograd.grad((g * {w}).sum(), [{ins}], "
                              "allow_unused=True)", "grad:second_order", touches=("gg",),
                              keep_errors=1.0)
            else:
                ok = self.emit("loss.backward(create_graph=True)", "grad:backward_create_graph",
                               touches=grads_of, keep_errors=1.0, loose=loose)
                g = self.val(f"{x}.grad") if ok else None
                if g is not None and g.requires_grad:
                    w = self.weights_for(g)
                    self.emit(f"gg = torch.autograd.grad(({x}.grad * {w}).sum(), [{x}], "
                              "allow_unused=True)", "grad:second_order", touches=("gg",),
                              keep_errors=1.0)
        else:
            self.emit("loss.backward()", "grad:backward", touches=grads_of, keep_errors=1.0)
        for s in self.stmts[st:]:
            s.rtol = max(s.rtol, err)
            s.shared_scale = True

    def program(self):
        """Write the whole program; returns its statements."""
        self.inputs()
        fams = list(WEIGHTS)
        w = np.array([WEIGHTS[f] for f in fams], dtype=float)
        for _ in range(int(self.rng.integers(*BODY))):
            if not self.pool:
                self.inputs()
                continue
            getattr(self, "fam_" + fams[int(self.rng.choice(len(fams), p=w / w.sum()))])()
        self.grads()
        # at the end, every tensor once more: values deferred above, and what in-place ops did
        err = max([self.err.get(e, 0.0) for e in self.pool] + [0.0])
        self.stmts.append(Stmt("", "final", tuple(self.pool), True, err * 10,
                               tuple(e for e in self.pool if e in self.loose)))
        return self.stmts


def generate(seed: int) -> list[Stmt]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return Gen(seed).program()


def check_seed(seed: int):
    """(program, mismatch or None) for one seed."""
    prog = generate(seed)
    return prog, run_program(prog)


def parse_repro(text: str) -> list[Stmt]:
    """A Known repro as statements: each compares what it assigns or writes, or what its
    ``# compare: a, b`` comment names."""
    stmts = []
    for line in textwrap_dedent(text).strip().splitlines():
        code, _, note = line.partition("# compare:")
        code = code.strip()
        if note:
            touches = tuple(t.strip() for t in note.split(","))
        else:
            m = re.match(r"(?:with [^:]+: )?([A-Za-z_]\w*)\s*(?:,\s*)?(?:\[.*\])?\s*[-+*/]?=[^=]",
                         code) or re.match(r"([A-Za-z_]\w*)\.\w+_\(", code)
            touches = (m.group(1),) if m else ()
        stmts.append(Stmt(code, "repro", touches, True, 1e-4))
    return stmts


def textwrap_dedent(text):
    import textwrap

    return textwrap.dedent(text)


def check_known(classes=None) -> dict[str, Mismatch | None]:
    """Run each class's repro: its first mismatch, or None where PyTorch and numbagrad agree."""
    out = {}
    for key, known in (classes if classes is not None else {**KNOWN_OPEN, **FIXED}).items():
        try:
            out[key] = run_program(parse_repro(known.repro))
        except Invalid as e:
            out[key] = Mismatch(-1, "repro", "invalid", str(e))
    return out


# ---------------------------------------------------------------------------------------------
# Shrinking a failing program


def minimize(stmts, key: str, budget: int = 300):
    """Drop statements while the program still fails with the same class (``key``)."""
    def fails(cand):
        try:
            m = run_program(cand)
        except Invalid:
            return None
        return m if m is not None and m.key == key else None

    cur = list(stmts)
    m = fails(cur)
    if m is None:
        return cur, None
    runs = 1
    changed = True
    while changed and runs < budget:
        changed = False
        i = len(cur) - 1
        while i >= 0 and runs < budget:
            if i == m.index and cur[i].code:
                i -= 1
                continue
            cand = cur[:i] + cur[i + 1:]
            runs += 1
            m2 = fails(cand)
            if m2 is not None:
                cur, m, changed = cand, m2, True
            i -= 1
    # the last statement's touches: only the one that differs
    last = cur[m.index]
    if m.expr and len(last.touches) > 1:
        cand = cur[:m.index] + [replace(last, touches=(m.expr,))] + cur[m.index + 1:]
        m2 = fails(cand)
        if m2 is not None:
            cur, m = cand, m2
    return cur[: m.index + 1], m


# ---------------------------------------------------------------------------------------------
# The command line


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seeds", default="0:100", help="a range A:B of seeds (default 0:100)")
    p.add_argument("--seed", type=int, help="one seed")
    p.add_argument("--print", action="store_true", help="print the program(s)")
    p.add_argument("--no-minimize", action="store_true")
    p.add_argument("--repros", type=int, default=2, help="minimized repros shown per class")
    p.add_argument("-v", "--verbose", action="store_true", help="one line per mismatch")
    p.add_argument("--known", action="store_true",
                   help="run the repro of every known class: which are still open")
    args = p.parse_args(argv)
    if args.known:
        for key, m in check_known().items():
            state = "open " if m is not None else "fixed"
            where = "KNOWN_OPEN" if key in KNOWN_OPEN else "FIXED"
            print(f"{state} {key} (listed in {where})" + (f": {m.check}: {m.detail}" if m else ""))
        return 0
    if args.seed is not None:
        seeds = [args.seed]
    else:
        a, b = (int(s) for s in args.seeds.split(":"))
        seeds = range(a, b)
    classes: dict[str, list] = defaultdict(list)
    n_stmts = 0
    t0 = time.perf_counter()
    for seed in seeds:
        try:
            prog, m = check_seed(seed)
        except Exception as e:  # noqa: BLE001 - a fuzzer bug must not hide the other seeds
            m, prog = Mismatch(-1, "fuzzer", "crash", repr(e)), []
        n_stmts += len(prog)
        if args.print:
            print(f"# seed {seed}\n{render(prog, m)}\n")
        if m is not None:
            classes[m.key].append((seed, prog, m))
            if args.verbose:
                print(f"seed {seed}: {m.key}: {m.detail}", flush=True)
    dt = time.perf_counter() - t0
    n_bad = sum(len(v) for v in classes.values())
    print(f"{len(seeds)} programs ({n_stmts} statements) in {dt:.1f} s: "
          f"{n_bad} with a mismatch, {len(classes)} classes")
    for key, items in sorted(classes.items(), key=lambda kv: -len(kv[1])):
        seeds_of = [s for s, _, _ in items]
        print(f"\n=== {key}: {len(items)} programs (seeds {seeds_of[:12]}"
              f"{' ...' if len(seeds_of) > 12 else ''})")
        shown = set()
        for seed, prog, m in sorted(items, key=lambda it: len(it[1]))[: max(args.repros, 1) * 2]:
            if len(shown) >= args.repros:
                break
            if not prog:
                print(f"seed {seed}: {m.detail}")
                shown.add(seed)
                continue
            small, m2 = (prog, m) if args.no_minimize else minimize(prog, key)
            if m2 is None:
                small, m2 = prog, m
            text = render(small, m2)
            if text in shown:
                continue
            shown.add(text)
            print(f"--- seed {seed}, {len(small)} statements\n{text}")
    return 1 if classes else 0


if __name__ == "__main__":
    sys.exit(main())
