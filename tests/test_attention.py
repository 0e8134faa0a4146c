"""Attention and Transformer layers against PyTorch: each module built in both libraries,
PyTorch's weights loaded into ours through ``state_dict``, then reprs, state_dict keys, outputs
and the gradients of the inputs and every parameter compared (eval mode, float64)."""

import copy
import math
import warnings

import numpy as np
import pytest

import numbagrad as ng
import numbagrad.autograd.forward_ad as fwAD
from devices import on_cuda
from numbagrad.random import numpy_rng

torch = pytest.importorskip("torch")

rng = np.random.default_rng(0)
E, H = 8, 2


def _pair(make):
    """The module made by ``make(nn)`` in both libraries, PyTorch's weights in ours."""
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = make(torch.nn).double().eval()
        ours = make(ng.nn).double().eval()
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    state = {k: ng.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()}
    result = ours.load_state_dict(state)
    assert result.missing_keys == [] and result.unexpected_keys == []
    return ours, theirs


def _mask(lib, m):
    return None if m is None else lib.tensor(m)


def _compare(ours, theirs, inputs, masks=None, call=None, tol=1e-10):
    """Run both modules on the same inputs (and masks, passed by keyword), compare every
    output, then backward a random weighting of the first and compare input and parameter
    gradients."""
    masks = masks or {}
    call = call or (lambda m, xs, kw: m(*xs, **kw))
    results = []
    for lib, module in ((ng, ours), (torch, theirs)):
        xs = [lib.tensor(x, requires_grad=True) for x in inputs]
        kw = {k: _mask(lib, v) for k, v in masks.items()}
        out = call(module, xs, kw)
        outs = list(out) if isinstance(out, tuple) else [out]
        results.append((xs, outs, module))
    (xo, oo, mo), (xt, ot, mt) = results
    assert len(oo) == len(ot)
    for a, b in zip(oo, ot):
        if b is None:
            assert a is None
            continue
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)
    seed = rng.standard_normal(tuple(ot[0].shape))
    (oo[0] * ng.tensor(seed)).sum().backward()
    (ot[0] * torch.tensor(seed)).sum().backward()
    for a, b in zip(xo, xt):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=tol, atol=tol)
    theirs_grads = dict(mt.named_parameters())
    for name, p in mo.named_parameters():
        q = theirs_grads[name]
        if q.grad is None:
            assert p.grad is None or not np.any(p.grad.numpy()), name
        else:
            np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=tol, atol=tol,
                                       err_msg=name)


def _x(*shape):
    return rng.standard_normal(shape)


# ---------------------------------------------------------------- scaled_dot_product_attention


SDPA_CASES = {
    "plain": {},
    "causal": {"is_causal": True},
    "scale": {"scale": 0.3},
    "bool_mask": {"attn_mask": np.array([[True, False, True, True, False]] * 3 +
                                        [[False] * 5])},  # a fully masked row: zeros
    "float_mask": {"attn_mask": _x(4, 5)},
    "gqa": {"enable_gqa": True},
}


@pytest.mark.parametrize("case", SDPA_CASES)
def test_sdpa_matches_torch(case):
    kw = dict(SDPA_CASES[case])
    kv_heads = 1 if kw.get("enable_gqa") else 2
    shapes = [(2, 2, 4, 3), (2, kv_heads, 5, 3), (2, kv_heads, 5, 6)]
    if kw.get("is_causal"):
        shapes[1:] = [(2, 2, 4, 3), (2, 2, 4, 6)]
    data = [_x(*s) for s in shapes]
    mask = kw.pop("attn_mask", None)
    outs, grads = [], []
    for lib in (ng, torch):
        xs = [lib.tensor(d, requires_grad=True) for d in data]
        out = lib.nn.functional.scaled_dot_product_attention(*xs, attn_mask=_mask(lib, mask),
                                                             **kw)
        out.sum().backward()
        outs.append(out.detach().numpy())
        grads.append([x.grad.numpy() for x in xs])
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-10, atol=1e-12)
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_sdpa_causal_with_mask_refused_as_torch():
    # (PyTorch's math and autograd path refuses the pair; its no-grad CPU kernel takes both)
    x = ng.ones(1, 1, 3, 2, requires_grad=True)
    with pytest.raises(RuntimeError, match="^_scaled_dot_product_attention: Explicit attn_mask "
                                           "should not be set when is_causal=True$"):
        ng.nn.functional.scaled_dot_product_attention(x, x, x, ng.ones(3, 3, dtype=ng.bool),
                                                      is_causal=True)


def test_sdpa_dropout_applies_without_a_training_flag():
    # as PyTorch's: dropout_p drops attention weights (kept ones scaled by 2 here) whatever the
    # mode; with uniform weights over 4 keys an output is 0.5 times the number kept
    ng.manual_seed(0)
    q, kv = ng.ones(1, 1, 64, 2), ng.ones(1, 1, 4, 2)
    out = ng.nn.functional.scaled_dot_product_attention(q, kv, kv, dropout_p=0.5).numpy()
    counts = out / 0.5
    np.testing.assert_allclose(counts, np.round(counts), atol=1e-6)
    assert len(np.unique(np.round(counts))) > 2


# ---------------------------------------------------------------- the fused op's paths
# (ops/attention.py: one op for batched inputs, PyTorch's flash attention node where PyTorch
# runs it, else its math path's UnsafeViewBackward0; CPU row kernels for each kind of mask)

FQ, FK = (2, 3, 4, 5), (2, 3, 6, 5)  # query, key (and value) shapes of most cases
_bmask = rng.random((4, 6)) > 0.4
_bmask[1] = False  # a row without keys: zeros
_fmask = rng.standard_normal((2, 1, 1, 6))
_fmask[1, 0, 0, 2:] = -np.inf  # keys masked out through a float mask
FUSED_CASES = {
    # name: (query, key, value shapes, mask, keyword arguments)
    "3d": ((3, 4, 5), (3, 6, 5), (3, 6, 5), None, {}),
    "5d": ((2, 2, 2, 3, 4), (2, 2, 2, 5, 4), (2, 2, 2, 5, 4), None, {"is_causal": True}),
    "head_sizes": (FQ, FK, (2, 3, 6, 7), None, {}),
    "causal_more_queries": ((2, 3, 9, 5), FK, FK, None, {"is_causal": True}),
    "causal_more_keys": ((2, 3, 3, 5), (2, 3, 11, 5), (2, 3, 11, 5), None, {"is_causal": True}),
    "negative_scale": (FQ, FK, FK, None, {"scale": -0.7}),
    "bool_mask_rows": (FQ, FK, FK, _bmask, {}),
    "bool_mask_full": (FQ, FK, FK, rng.random((2, 3, 4, 6)) > 0.3, {"scale": -0.4}),
    # (PyTorch refuses a mask under 2-d for 4-d inputs: test_sdpa_mask_under_2d_refused...)
    "bool_mask_keys": ((3, 4, 5), (3, 6, 5), (3, 6, 5),
                       np.array([True, False, True, True, False, True]), {}),
    "float_mask_batch": (FQ, FK, FK, _fmask, {}),
    "float_mask_queries": (FQ, FK, FK, rng.standard_normal((4, 1)), {}),
    "float_mask_0d": ((2, 2, 2, 3, 4), (2, 2, 2, 5, 4), (2, 2, 2, 5, 4), np.array(0.5), {}),
    "gqa_causal": ((2, 6, 4, 5), (2, 2, 6, 5), (2, 2, 6, 5), None,
                   {"enable_gqa": True, "is_causal": True}),
    "gqa_mask_head_sizes": ((2, 6, 4, 5), (2, 3, 6, 5), (2, 3, 6, 3),
                            rng.standard_normal((6, 1, 6)), {"enable_gqa": True}),
}


def _sdpa_both(data, mask, kw, grad_mask=False, seed=None):
    """(output, input gradients, grad_fn name) of scaled_dot_product_attention in each
    library, the backward seeded with ``seed``."""
    results = []
    for lib in (ng, torch):
        xs = [lib.tensor(d, requires_grad=True) for d in data]
        m = None if mask is None else lib.tensor(mask, requires_grad=grad_mask)
        out = lib.nn.functional.scaled_dot_product_attention(*xs, attn_mask=m, **kw)
        out.backward(lib.tensor(seed))
        grads = [x.grad.numpy() for x in xs] + ([m.grad.numpy()] if grad_mask else [])
        results.append((out.detach().numpy(), grads, out.grad_fn.name()))
    return results


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case", FUSED_CASES)
def test_sdpa_fused_paths_match_torch(case, dtype):
    qs, ks, vs, mask, kw = FUSED_CASES[case]
    data = [_x(*s).astype(dtype) for s in (qs, ks, vs)]
    if mask is not None and mask.dtype != bool:
        mask = mask.astype(dtype)
    seed = _x(*qs[:-1], vs[-1]).astype(dtype)
    (o1, g1, n1), (o2, g2, n2) = _sdpa_both(data, mask, kw, seed=seed)
    assert n1 == n2
    tol = {"rtol": 1e-10, "atol": 1e-12} if dtype == "float64" else {"rtol": 1e-4, "atol": 2e-5}
    np.testing.assert_allclose(o1, o2, **tol)
    for a, b in zip(g1, g2):
        np.testing.assert_allclose(a, b, **tol)


@pytest.mark.parametrize("lib", ["torch", "numbagrad"])
def test_sdpa_mask_under_2d_refused_for_4d_inputs_as_torch(lib):
    L = torch if lib == "torch" else ng
    q, kv = L.ones(1, 2, 3, 4), L.ones(1, 2, 5, 4)
    sdpa = L.nn.functional.scaled_dot_product_attention
    with pytest.raises(IndexError, match=r"^Dimension out of range \(expected to be in range of "
                                         r"\[-1, 0\], but got -2\)$"):
        sdpa(q, kv, kv, attn_mask=L.ones(5, dtype=L.bool))
    with pytest.raises(IndexError, match="^Dimension specified as -2 but tensor has no "
                                         "dimensions$"):
        sdpa(q, kv, kv, attn_mask=L.tensor(0.5))
    # (taken, broadcast, with dropout, a mask that needs a gradient, or 3-d inputs)
    assert sdpa(q, kv, kv, attn_mask=L.ones(5), dropout_p=0.5).shape == (1, 2, 3, 4)
    assert sdpa(q, kv, kv, attn_mask=L.ones(5, requires_grad=True)).shape == (1, 2, 3, 4)
    assert sdpa(q[0], kv[0], kv[0], attn_mask=L.tensor(0.5)).shape == (2, 3, 4)


def test_sdpa_mask_that_needs_a_gradient_matches_torch():
    # (composed of recorded ops, as PyTorch's math path: the mask gets its gradient)
    data = [_x(*s) for s in (FQ, FK, FK)]
    (o1, g1, n1), (o2, g2, n2) = _sdpa_both(data, _x(4, 6), {}, grad_mask=True,
                                            seed=_x(*FQ))
    assert n1 == n2 == "UnsafeViewBackward0"
    np.testing.assert_allclose(o1, o2, rtol=1e-10, atol=1e-12)
    for a, b in zip(g1, g2):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def _torch_attention(q, k, v, mask=None, kw=None, keep=None):
    """PyTorch's math formulation (its _safe_softmax too) of ``scaled_dot_product_attention``'s
    keyword arguments ``kw``, dropout's kept weights given as ``keep`` (scaled)."""
    kw = kw or {}
    if kw.get("enable_gqa"):
        groups = q.shape[-3] // k.shape[-3]
        k, v = k.repeat_interleave(groups, -3), v.repeat_interleave(groups, -3)
    scale = kw.get("scale")
    s = q @ k.transpose(-2, -1) * (scale if scale is not None else 1 / math.sqrt(q.shape[-1]))
    if kw.get("is_causal"):
        mask = torch.ones(s.shape[-2:], dtype=torch.bool).tril()
    if mask is not None:
        s = s.masked_fill(~mask, -math.inf) if mask.dtype == torch.bool else s + mask
    w = torch.softmax(s, -1).masked_fill(s.isneginf().all(-1, keepdim=True), 0.0)
    return (w if keep is None else w * keep) @ v


DROPOUT_CASES = {
    "4d": (FQ, FK, FK, _bmask, {}),
    "gqa_3d": ((6, 4, 5), (2, 6, 5), (2, 6, 3), None, {"enable_gqa": True}),
}


@pytest.mark.parametrize("case", DROPOUT_CASES)
def test_sdpa_dropout_as_its_draw_and_math(case):
    # the kept weights are dropout's draw from the generator (nn.functional.dropout), scaled by
    # 1 / (1 - p); values and gradients of first and second order as PyTorch's math
    # formulation with those weights kept
    qs, ks, vs, mask, kw = DROPOUT_CASES[case]
    p = 0.4
    data = [_x(*s) for s in (qs, ks, vs)]
    ng.manual_seed(5)
    keep = (numpy_rng(None).random(qs[:-1] + ks[-2:-1]) >= p) / (1 - p)
    ng.manual_seed(5)
    xs = [ng.tensor(d, requires_grad=True) for d in data]
    out = ng.nn.functional.scaled_dot_product_attention(*xs, attn_mask=_mask(ng, mask),
                                                        dropout_p=p, **kw)
    assert out.grad_fn.name() == "UnsafeViewBackward0"
    ts = [torch.tensor(d, requires_grad=True) for d in data]
    ref = _torch_attention(*ts, _mask(torch, mask), kw, torch.tensor(keep))
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-10,
                               atol=1e-12)
    seed = _x(*out.shape)
    gs = ng.autograd.grad(out, xs, ng.tensor(seed), create_graph=True)
    rs = torch.autograd.grad(ref, ts, torch.tensor(seed), create_graph=True)
    for a, b in zip(gs, rs):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-10,
                                   atol=1e-12)
    ggs = ng.autograd.grad(sum((g * g).sum() for g in gs), xs)
    ggr = torch.autograd.grad(sum((g * g).sum() for g in rs), ts)
    for a, b in zip(ggs, ggr):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-9, atol=1e-11)


def test_sdpa_dropout_of_one_drops_everything():
    xs = [ng.tensor(_x(*FQ), requires_grad=True) for _ in range(3)]
    out = ng.nn.functional.scaled_dot_product_attention(*xs, dropout_p=1.0)
    assert not out.detach().numpy().any()
    out.sum().backward()
    assert not any(x.grad.numpy().any() for x in xs)


CAUSAL_NEGATIVE_SCALE = (FQ, FK, FK, None, {"is_causal": True, "scale": -0.7})


@pytest.mark.parametrize("case", ["gqa_mask_head_sizes", "bool_mask_rows", "causal_more_keys",
                                  "causal_negative_scale"])
def test_sdpa_fused_first_and_second_derivatives_match_torch_math(case):
    # (PyTorch differentiates its flash attention op once only, and gives NaN for a causal
    # mask under a negative scale: its math formulation is the reference)
    qs, ks, vs, mask, kw = (CAUSAL_NEGATIVE_SCALE if case == "causal_negative_scale"
                            else FUSED_CASES[case])
    data = [_x(*s) for s in (qs, ks, vs)]
    seed = _x(*qs[:-1], vs[-1])
    results = []
    for lib in (ng, torch):
        xs = [lib.tensor(d, requires_grad=True) for d in data]
        if lib is ng:
            out = ng.nn.functional.scaled_dot_product_attention(*xs, attn_mask=_mask(ng, mask),
                                                                **kw)
        else:
            out = _torch_attention(*xs, _mask(torch, mask), kw)
        gs = lib.autograd.grad(out, xs, lib.tensor(seed), create_graph=True)
        ggs = lib.autograd.grad(sum((g * g).sum() for g in gs), xs)
        results.append([out] + list(gs) + list(ggs))
    for a, b in zip(*results):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-9,
                                   atol=1e-11)


# (PyTorch's forward AD imports torch.func, which warns about torch.jit.script)
@pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")
@pytest.mark.parametrize("case", ["gqa_causal", "float_mask_batch", "head_sizes"])
def test_sdpa_fused_forward_mode_matches_torch_math(case):
    # (PyTorch has no forward AD for its flash attention op: its math formulation's instead)
    qs, ks, vs, mask, kw = FUSED_CASES[case]
    data = [_x(*s) for s in (qs, ks, vs)]
    tangents = [_x(*s) for s in (qs, ks, vs)]
    with fwAD.dual_level():
        duals = [fwAD.make_dual(ng.tensor(d), ng.tensor(t)) for d, t in zip(data, tangents)]
        out = ng.nn.functional.scaled_dot_product_attention(*duals, attn_mask=_mask(ng, mask),
                                                            **kw)
        tangent = fwAD.unpack_dual(out).tangent.numpy()
    with torch.autograd.forward_ad.dual_level():
        duals = [torch.autograd.forward_ad.make_dual(torch.tensor(d), torch.tensor(t))
                 for d, t in zip(data, tangents)]
        ref = torch.autograd.forward_ad.unpack_dual(
            _torch_attention(*duals, _mask(torch, mask), kw)).tangent
    np.testing.assert_allclose(tangent, ref.numpy(), rtol=1e-10, atol=1e-12)


@on_cuda
@pytest.mark.parametrize("case", ["bool_mask_full", "gqa_causal", "dropout"])
def test_sdpa_fused_on_cuda_equals_cpu(case):
    # (the row kernels on the CPU, the same steps as ops of the CUDA backend; no row without
    # keys, whose -inf - -inf the simulator warns about; "dropout": the math path, 3 key heads
    # for 6, a float mask)
    qs, ks, vs, mask, kw = FUSED_CASES["gqa_mask_head_sizes" if case == "dropout" else case]
    if case == "dropout":
        kw = dict(kw, dropout_p=0.3)
    data = [_x(*s).astype(np.float32) for s in (qs, ks, vs)]
    if mask is not None and mask.dtype != bool:
        mask = mask.astype(np.float32)
    seed = _x(*qs[:-1], vs[-1]).astype(np.float32)
    results = []
    for dev in ("cpu", "cuda"):
        ng.manual_seed(0)
        xs = [ng.tensor(d, device=dev, requires_grad=True) for d in data]
        m = None if mask is None else ng.tensor(mask, device=dev)
        out = ng.nn.functional.scaled_dot_product_attention(*xs, attn_mask=m, **kw)
        out.backward(ng.tensor(seed, device=dev))
        results.append([out.detach().cpu().numpy()] + [x.grad.cpu().numpy() for x in xs])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------- MultiheadAttention

L, S, N = 4, 5, 2
KPM = np.array([[False, False, True, False, True], [False, False, False, False, False]])
AMASK = np.triu(np.ones((L, S), dtype=bool), 1)


MHA_CASES = {
    # name: (constructor kwargs, mask kwargs, forward kwargs)
    "plain": ({}, {}, {}),
    "no_bias_batch_first": ({"bias": False, "batch_first": True}, {}, {}),
    "kdim_vdim": ({"kdim": 3, "vdim": 6}, {}, {}),
    "bool_masks": ({}, {"key_padding_mask": KPM, "attn_mask": AMASK}, {}),
    "float_mask_per_head": ({}, {"attn_mask": _x(N * H, L, S)}, {"average_attn_weights": False}),
    "masks_no_weights": ({"batch_first": True}, {"key_padding_mask": KPM, "attn_mask": AMASK},
                         {"need_weights": False}),
    "float_kpm": ({}, {"key_padding_mask": np.where(KPM, -1e9, 0.0)}, {}),
    "bias_kv_zero_attn": ({"add_bias_kv": True, "add_zero_attn": True},
                          {"key_padding_mask": KPM, "attn_mask": AMASK}, {}),
}


@pytest.mark.parametrize("case", MHA_CASES)
def test_multihead_attention_matches_torch(case):
    ctor, masks, fwd = MHA_CASES[case]
    ours, theirs = _pair(lambda nn: nn.MultiheadAttention(E, H, dropout=0.1, **ctor))
    first = ctor.get("batch_first", False)
    shape = (lambda s: (N, s) if first else (s, N))
    inputs = [_x(*shape(L), E), _x(*shape(S), ctor.get("kdim", E)),
              _x(*shape(S), ctor.get("vdim", E))]
    _compare(ours, theirs, inputs, masks, call=lambda m, xs, kw: m(*xs, **kw, **fwd))


def test_multihead_attention_unbatched_self_attention():
    ours, theirs = _pair(lambda nn: nn.MultiheadAttention(E, H))
    masks = {"key_padding_mask": KPM[0][:L], "attn_mask": AMASK[:, :L]}
    _compare(ours, theirs, [_x(L, E)], masks, call=lambda m, xs, kw: m(xs[0], xs[0], xs[0], **kw))


def test_multihead_attention_parameters_and_init():
    ng.manual_seed(0)
    m = ng.nn.MultiheadAttention(E, H, kdim=3)
    shapes = {k: tuple(p.shape) for k, p in m.named_parameters()}
    assert shapes == {"q_proj_weight": (E, E), "k_proj_weight": (E, 3), "v_proj_weight": (E, E),
                      "in_proj_bias": (3 * E,), "out_proj.weight": (E, E),
                      "out_proj.bias": (E,)}
    assert not m.in_proj_bias.detach().numpy().any()
    assert not m.out_proj.bias.detach().numpy().any()
    bound = math.sqrt(6 / (E + 3))  # xavier_uniform_
    w = m.k_proj_weight.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > bound / 2
    assert isinstance(m.out_proj, ng.nn.Linear)
    assert m.in_proj_weight is None and m.bias_k is None


def test_multihead_attention_errors():
    with pytest.raises(AssertionError, match="^embed_dim must be divisible by num_heads$"):
        ng.nn.MultiheadAttention(6, 4)
    with pytest.raises(ValueError, match=r"^embed_dim and num_heads must be greater than 0, got "
                                         r"embed_dim=0 and num_heads=2 instead$"):
        ng.nn.MultiheadAttention(0, 2)
    m = ng.nn.MultiheadAttention(E, H)
    x = ng.randn(L, N, E)
    with pytest.raises(RuntimeError, match=r"^The shape of the 2D attn_mask is numbagrad.Size"
                                           r"\(\[3, 3\]\), but should be \(4, 4\)\.$"):
        m(x, x, x, attn_mask=ng.zeros(3, 3, dtype=ng.bool))
    with pytest.raises(AssertionError, match="^only bool and floating types of attn_mask are "
                                             "supported$"):
        m(x, x, x, attn_mask=ng.zeros(4, 4, dtype=ng.int64))
    with pytest.raises(RuntimeError, match="^Need attn_mask if specifying the is_causal hint"):
        m(x, x, x, is_causal=True)
    with pytest.raises(AssertionError, match="^query should be unbatched 2D or batched 3D "
                                             "tensor but received 1-D query tensor$"):
        m(x[0, 0], x[0, 0], x[0, 0])
    with pytest.warns(UserWarning, match="^Support for mismatched key_padding_mask and "
                                         "attn_mask is deprecated"):
        m(x, x, x, key_padding_mask=ng.zeros(N, L, dtype=ng.bool), attn_mask=ng.zeros(L, L))


# ---------------------------------------------------------------- Transformer layers

TGT_L = 3


@pytest.mark.parametrize("batch_first,norm_first,masked", [
    (False, False, False), (True, True, True), (False, False, True)])
def test_transformer_encoder_matches_torch(batch_first, norm_first, masked):
    def make(nn):
        layer = nn.TransformerEncoderLayer(E, H, dim_feedforward=12, batch_first=batch_first,
                                           norm_first=norm_first, activation="gelu")
        return nn.TransformerEncoder(layer, 2, norm=nn.LayerNorm(E))
    ours, theirs = _pair(make)
    x = _x(N, S, E) if batch_first else _x(S, N, E)
    masks = {}
    if masked:
        masks = {"mask": np.triu(np.ones((S, S), dtype=bool), 1), "src_key_padding_mask": KPM}
    _compare(ours, theirs, [x], masks)


def test_transformer_encoder_layer_unbatched_relu():
    ours, theirs = _pair(lambda nn: nn.TransformerEncoderLayer(E, H, 12))
    _compare(ours, theirs, [_x(S, E)], {"src_mask": _x(S, S)})


def test_transformer_encoder_copies_layers_and_warns_as_torch():
    layer = ng.nn.TransformerEncoderLayer(E, H, 12)
    with pytest.warns(UserWarning, match=r"^enable_nested_tensor is True, but "
                                         r"self.use_nested_tensor is False because encoder_layer"
                                         r".self_attn.batch_first was not True\(use batch_first "
                                         r"for better inference performance\)$"):
        enc = ng.nn.TransformerEncoder(layer, 2)
    assert enc.layers[0] is not layer and enc.layers[0] is not enc.layers[1]
    w = enc.layers[1].linear1.weight
    assert np.array_equal(w.detach().numpy(), layer.linear1.weight.detach().numpy())
    assert w is not layer.linear1.weight
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ng.nn.TransformerEncoder(ng.nn.TransformerEncoderLayer(E, H, 12, batch_first=True), 1)
    with pytest.raises(RuntimeError, match="^activation should be relu/gelu, not tanh$"):
        ng.nn.TransformerEncoderLayer(E, H, activation="tanh")


def test_transformer_decoder_matches_torch():
    def make(nn):
        return nn.TransformerDecoder(nn.TransformerDecoderLayer(E, H, 12, batch_first=True), 2,
                                     norm=nn.LayerNorm(E))
    ours, theirs = _pair(make)
    masks = {"tgt_mask": ng.nn.Transformer.generate_square_subsequent_mask(TGT_L).numpy(),
             "memory_key_padding_mask": np.where(KPM, -math.inf, 0.0)}
    _compare(ours, theirs, [_x(N, TGT_L, E), _x(N, S, E)], masks)


def test_transformer_matches_torch():
    ours, theirs = _pair(lambda nn: nn.Transformer(E, H, 1, 1, 12, norm_first=True))
    masks = {"tgt_mask": np.triu(np.ones((TGT_L, TGT_L), dtype=bool), 1),
             "src_key_padding_mask": KPM}
    _compare(ours, theirs, [_x(S, N, E), _x(TGT_L, N, E)], masks)
    with pytest.raises(RuntimeError, match="^the batch number of src and tgt must be equal$"):
        ours(ng.randn(S, N, E, dtype=ng.float64), ng.randn(TGT_L, 1, E, dtype=ng.float64))


def test_generate_square_subsequent_mask():
    m = ng.nn.Transformer.generate_square_subsequent_mask(4)
    np.testing.assert_array_equal(m.numpy(),
                                  torch.nn.Transformer.generate_square_subsequent_mask(4).numpy())
    assert m.dtype is ng.float32


@on_cuda
@pytest.mark.parametrize("masked", [False, True])
def test_transformer_encoder_layer_on_cuda_equals_cpu(masked):
    # (layer norm's and attention's row kernels and batched matmuls on both backends)
    ng.manual_seed(0)
    layer = ng.nn.TransformerEncoderLayer(E, H, 12, dropout=0.0, batch_first=True)
    x = np.random.default_rng(0).normal(size=(N, S, E)).astype(np.float32)
    mask = ng.nn.Transformer.generate_square_subsequent_mask(S) if masked else None
    modules = {"cpu": layer, "cuda": copy.deepcopy(layer).to("cuda")}
    results = []
    for dev, module in modules.items():
        xt = ng.tensor(x, device=dev, requires_grad=True)
        out = module(xt, src_mask=None if mask is None else mask.to(dev))
        (out * out).sum().backward()
        results.append([out.detach().cpu().numpy(), xt.grad.cpu().numpy()]
                       + [p.grad.cpu().numpy() for p in module.parameters()])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
