"""Attention and Transformer layers against PyTorch: each module built in both libraries,
PyTorch's weights loaded into ours through ``state_dict``, then reprs, state_dict keys, outputs
and the gradients of the inputs and every parameter compared (eval mode, float64)."""

import copy
import math
import warnings

import numpy as np
import pytest

import numbagrad as ng
from devices import on_cuda

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
