"""Sebastian Raschka, "Build a Large Language Model (From Scratch)", chapter 3 "Coding
attention mechanisms": attention scores by a loop of ``torch.dot`` into ``torch.empty``, a naive
softmax, context vectors; trainable weights as ``nn.Parameter(torch.rand(...),
requires_grad=False)``, SelfAttention_v1 (parameters) and SelfAttention_v2 (nn.Linear) with the
v2 weights copied into v1 by ``nn.Parameter(W.weight.T)``; causal masks by ``torch.tril`` and
renormalising, then by ``masked_fill(mask.bool(), -torch.inf)``; dropout; CausalAttention with a
``register_buffer`` mask and in-place ``masked_fill_`` on ``mask.bool()[:n, :n]``; the
MultiHeadAttentionWrapper (ModuleList and ``torch.cat``); MultiHeadAttention by ``view`` /
``transpose(1, 2)`` / ``contiguous().view``; and the bonus variants with
``F.scaled_dot_product_attention(is_causal=True)`` and ``nn.MultiheadAttention(batch_first=True,
need_weights=False)``.

    python llm_attention.py [torch|numbagrad]
"""
import numpy as np

from _common import BACKEND, numpy_init, show

if BACKEND == "torch":
    import torch
    import torch.nn as nn
else:
    import numbagrad as torch
    import numbagrad.nn as nn

rng = np.random.default_rng(123)


def np_rand(*shape):
    return torch.from_numpy(rng.random(shape).astype(np.float32))


inputs = torch.tensor(
    [[0.43, 0.15, 0.89],  # Your     (x^1)
     [0.55, 0.87, 0.66],  # journey  (x^2)
     [0.57, 0.85, 0.64],  # starts   (x^3)
     [0.22, 0.58, 0.33],  # with     (x^4)
     [0.77, 0.25, 0.10],  # one      (x^5)
     [0.05, 0.80, 0.55]]  # step     (x^6)
)

# --- 3.3.1 a simple self-attention mechanism without trainable weights
query = inputs[1]  # 2nd input token is the query
attn_scores_2 = torch.empty(inputs.shape[0])
for i, x_i in enumerate(inputs):
    attn_scores_2[i] = torch.dot(x_i, query)  # dot product (transpose not necessary here since they are 1-dim vectors)
show('attn_scores_2', attn_scores_2)

attn_weights_2_tmp = attn_scores_2 / attn_scores_2.sum()
show('attn_weights_2_tmp', attn_weights_2_tmp)
show('attn_weights_2_tmp_sum', attn_weights_2_tmp.sum())


def softmax_naive(x):
    return torch.exp(x) / torch.exp(x).sum(dim=0)


attn_weights_2_naive = softmax_naive(attn_scores_2)
show('attn_weights_2_naive', attn_weights_2_naive)
attn_weights_2 = torch.softmax(attn_scores_2, dim=0)
show('attn_weights_2', attn_weights_2)

context_vec_2 = torch.zeros(query.shape)
for i, x_i in enumerate(inputs):
    context_vec_2 += attn_weights_2[i] * x_i
show('context_vec_2', context_vec_2)

# --- 3.3.2 for all input tokens
attn_scores = torch.empty(6, 6)
for i, x_i in enumerate(inputs):
    for j, x_j in enumerate(inputs):
        attn_scores[i, j] = torch.dot(x_i, x_j)
show('attn_scores_loop', attn_scores)
attn_scores = inputs @ inputs.T
show('attn_scores', attn_scores)
attn_weights = torch.softmax(attn_scores, dim=-1)
show('attn_weights', attn_weights)
row_2_sum = sum([0.1385, 0.2379, 0.2333, 0.1240, 0.1082, 0.1581])
show('row_2_sum', row_2_sum)
show('all_row_sums', attn_weights.sum(dim=-1))
all_context_vecs = attn_weights @ inputs
show('all_context_vecs', all_context_vecs)

# --- 3.4.1 computing the attention weights step by step
x_2 = inputs[1]  # second input element
d_in = inputs.shape[1]  # the input embedding size, d=3
d_out = 2  # the output embedding size, d=2

W_query = torch.nn.Parameter(np_rand(d_in, d_out), requires_grad=False)
W_key = torch.nn.Parameter(np_rand(d_in, d_out), requires_grad=False)
W_value = torch.nn.Parameter(np_rand(d_in, d_out), requires_grad=False)
show('W_query_requires_grad', float(W_query.requires_grad))

query_2 = x_2 @ W_query  # _2 because it's with respect to the 2nd input element
key_2 = x_2 @ W_key
value_2 = x_2 @ W_value
show('query_2', query_2)

keys = inputs @ W_key
values = inputs @ W_value
show('keys.shape', list(keys.shape))
show('values.shape', list(values.shape))

keys_2 = keys[1]  # Python starts index at 0
attn_score_22 = query_2.dot(keys_2)
show('attn_score_22', attn_score_22)
attn_scores_2 = query_2 @ keys.T  # All attention scores for given query
show('attn_scores_2_w', attn_scores_2)

d_k = keys.shape[1]
attn_weights_2 = torch.softmax(attn_scores_2 / d_k**0.5, dim=-1)
show('attn_weights_2_w', attn_weights_2)
context_vec_2 = attn_weights_2 @ values
show('context_vec_2_w', context_vec_2)


# --- 3.4.2 implementing a compact SelfAttention class
class SelfAttention_v1(nn.Module):

    def __init__(self, d_in, d_out):
        super().__init__()
        self.W_query = nn.Parameter(np_rand(d_in, d_out))
        self.W_key = nn.Parameter(np_rand(d_in, d_out))
        self.W_value = nn.Parameter(np_rand(d_in, d_out))

    def forward(self, x):
        keys = x @ self.W_key
        queries = x @ self.W_query
        values = x @ self.W_value

        attn_scores = queries @ keys.T  # omega
        attn_weights = torch.softmax(
            attn_scores / keys.shape[-1]**0.5, dim=-1
        )

        context_vec = attn_weights @ values
        return context_vec


sa_v1 = SelfAttention_v1(d_in, d_out)
show('sa_v1', sa_v1(inputs))


class SelfAttention_v2(nn.Module):

    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        keys = self.W_key(x)
        queries = self.W_query(x)
        values = self.W_value(x)

        attn_scores = queries @ keys.T
        attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)

        context_vec = attn_weights @ values
        return context_vec


sa_v2 = SelfAttention_v2(d_in, d_out)
numpy_init(torch, sa_v2, seed=789)
show('sa_v2', sa_v2(inputs))

# Exercise 3.1: the same outputs after copying v2's weights into v1
sa_v1.W_query = torch.nn.Parameter(sa_v2.W_query.weight.T)
sa_v1.W_key = torch.nn.Parameter(sa_v2.W_key.weight.T)
sa_v1.W_value = torch.nn.Parameter(sa_v2.W_value.weight.T)
show('sa_v1_copied', sa_v1(inputs))
show('sa_v1_is_leaf', float(sa_v1.W_query.is_leaf))
show('sa_v1_nparams', len(list(sa_v1.parameters())))

# --- 3.5.1 applying a causal attention mask
queries = sa_v2.W_query(inputs)
keys = sa_v2.W_key(inputs)
attn_scores = queries @ keys.T
attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)
show('attn_weights_v2', attn_weights)

context_length = attn_scores.shape[0]
mask_simple = torch.tril(torch.ones(context_length, context_length))
show('mask_simple', mask_simple)
masked_simple = attn_weights * mask_simple
show('masked_simple', masked_simple)
row_sums = masked_simple.sum(dim=-1, keepdim=True)
masked_simple_norm = masked_simple / row_sums
show('masked_simple_norm', masked_simple_norm)

mask = torch.triu(torch.ones(context_length, context_length), diagonal=1)
masked = attn_scores.masked_fill(mask.bool(), -torch.inf)
show('masked_isinf', torch.isinf(masked).sum())
show('masked_finite', masked[~mask.bool()])
attn_weights = torch.softmax(masked / keys.shape[-1]**0.5, dim=-1)
show('attn_weights_masked', attn_weights)
show('attn_weights_masked_close', float(torch.allclose(attn_weights, masked_simple_norm)))

# --- 3.5.2 masking additional attention weights with dropout
torch.manual_seed(123)
dropout = torch.nn.Dropout(0.5)  # dropout rate of 50%
example = torch.ones(6, 6)  # create a matrix of ones
show('dropout_values', torch.unique(dropout(example)))
show('~dropout_kept', [(dropout(example) > 0).float().mean()])
dropout.eval()
show('dropout_eval', dropout(attn_weights)[2])

# --- 3.5.3 a compact causal self-attention class
batch = torch.stack((inputs, inputs), dim=0)
show('batch.shape', list(batch.shape))


class CausalAttention(nn.Module):

    def __init__(self, d_in, d_out, context_length,
                 dropout, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)  # New
        self.register_buffer('mask', torch.triu(torch.ones(context_length, context_length), diagonal=1))  # New

    def forward(self, x):
        b, num_tokens, d_in = x.shape  # New batch dimension b
        keys = self.W_key(x)
        queries = self.W_query(x)
        values = self.W_value(x)

        attn_scores = queries @ keys.transpose(1, 2)  # Changed transpose
        attn_scores.masked_fill_(  # New, _ ops are in-place
            self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)  # `:num_tokens` to account for cases where the number of tokens in the batch is smaller than the supported context_size
        attn_weights = torch.softmax(
            attn_scores / keys.shape[-1]**0.5, dim=-1
        )
        attn_weights = self.dropout(attn_weights)  # New

        context_vec = attn_weights @ values
        return context_vec


context_length = batch.shape[1]
ca = CausalAttention(d_in, d_out, context_length, 0.0)
numpy_init(torch, ca, seed=1)
context_vecs = ca(batch)
show('ca_context_vecs', context_vecs)
show('ca_buffers', [name == 'mask' for name, _ in ca.named_buffers()])
show('ca_state_dict_keys', len(ca.state_dict()))
context_vecs.pow(2).sum().backward()
show('ca_grad_W_query', ca.W_query.weight.grad)
show('ca_grad_W_value', ca.W_value.weight.grad)
# fewer tokens than the context length: the mask is cut to size
show('ca_short', ca(batch[:, :4]))


# --- 3.6.1 stacking multiple single-head attention layers
class MultiHeadAttentionWrapper(nn.Module):

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList(
            [CausalAttention(d_in, d_out, context_length, dropout, qkv_bias)
             for _ in range(num_heads)]
        )

    def forward(self, x):
        return torch.cat([head(x) for head in self.heads], dim=-1)


mha_w = MultiHeadAttentionWrapper(d_in, d_out, context_length, 0.0, num_heads=2)
numpy_init(torch, mha_w, seed=2)
context_vecs = mha_w(batch)
show('mha_wrapper', context_vecs)
show('mha_wrapper.shape', list(context_vecs.shape))


# --- 3.6.2 implementing multi-head attention with weight splits
class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        assert (d_out % num_heads == 0), \
            "d_out must be divisible by num_heads"

        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads  # Reduce the projection dim to match desired output dim

        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)  # Linear layer to combine head outputs
        self.dropout = nn.Dropout(dropout)
        self.register_buffer(
            "mask",
            torch.triu(torch.ones(context_length, context_length),
                       diagonal=1)
        )

    def forward(self, x):
        b, num_tokens, d_in = x.shape

        keys = self.W_key(x)  # Shape: (b, num_tokens, d_out)
        queries = self.W_query(x)
        values = self.W_value(x)

        # We implicitly split the matrix by adding a `num_heads` dimension
        # Unroll last dim: (b, num_tokens, d_out) -> (b, num_tokens, num_heads, head_dim)
        keys = keys.view(b, num_tokens, self.num_heads, self.head_dim)
        values = values.view(b, num_tokens, self.num_heads, self.head_dim)
        queries = queries.view(b, num_tokens, self.num_heads, self.head_dim)

        # Transpose: (b, num_tokens, num_heads, head_dim) -> (b, num_heads, num_tokens, head_dim)
        keys = keys.transpose(1, 2)
        queries = queries.transpose(1, 2)
        values = values.transpose(1, 2)

        # Compute scaled dot-product attention (aka self-attention) with a causal mask
        attn_scores = queries @ keys.transpose(2, 3)  # Dot product for each head

        # Original mask truncated to the number of tokens and converted to boolean
        mask_bool = self.mask.bool()[:num_tokens, :num_tokens]

        # Use the mask to fill attention scores
        attn_scores.masked_fill_(mask_bool, -torch.inf)

        attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)

        # Shape: (b, num_tokens, num_heads, head_dim)
        context_vec = (attn_weights @ values).transpose(1, 2)

        # Combine heads, where self.d_out = self.num_heads * self.head_dim
        context_vec = context_vec.contiguous().view(b, num_tokens, self.d_out)
        context_vec = self.out_proj(context_vec)  # optional projection

        return context_vec


# the illustration of batched matrix multiplication over heads
a = torch.tensor([[[[0.2745, 0.6584, 0.2775, 0.8573],
                    [0.8993, 0.0390, 0.9268, 0.7388],
                    [0.7179, 0.7058, 0.9156, 0.4340]],

                   [[0.0772, 0.3565, 0.1479, 0.5331],
                    [0.4066, 0.2318, 0.4545, 0.9737],
                    [0.4606, 0.5159, 0.4220, 0.5786]]]])
show('a_at_aT', a @ a.transpose(2, 3))
first_head = a[0, 0, :, :]
first_res = first_head @ first_head.T
show('first_res', first_res)
second_head = a[0, 1, :, :]
second_res = second_head @ second_head.T
show('second_res', second_res)

batch_size, context_length, d_in = batch.shape
d_out = 4
mha = MultiHeadAttention(d_in, d_out, context_length, 0.0, num_heads=2)
numpy_init(torch, mha, seed=3)
context_vecs = mha(batch)
show('mha', context_vecs)
show('mha.shape', list(context_vecs.shape))
context_vecs.sum().backward()
show('mha_grad_out_proj_bias', mha.out_proj.bias.grad)
show('mha_grad_W_key', mha.W_key.weight.grad)
show('mha_nparams', sum(p.numel() for p in mha.parameters()))

# GPT-2 sized heads on a random batch
gpt_mha = MultiHeadAttention(16, 16, 8, 0.0, num_heads=4, qkv_bias=True)
numpy_init(torch, gpt_mha, seed=4)
x = torch.from_numpy(rng.normal(size=(3, 8, 16)).astype(np.float32))
show('gpt_mha', gpt_mha(x)[:, -1])


# --- bonus: the same module through PyTorch's fused kernels
class MHAPyTorchScaledDotProduct(nn.Module):
    def __init__(self, d_in, d_out, num_heads, context_length, dropout=0.0, qkv_bias=False):
        super().__init__()

        assert d_out % num_heads == 0, "embed_dim is indivisible by num_heads"

        self.num_heads = num_heads
        self.context_length = context_length
        self.head_dim = d_out // num_heads
        self.d_out = d_out

        self.qkv = nn.Linear(d_in, 3 * d_out, bias=qkv_bias)
        self.proj = nn.Linear(d_out, d_out)
        self.dropout = dropout

    def forward(self, x):
        batch_size, num_tokens, embed_dim = x.shape

        # (b, num_tokens, embed_dim) --> (b, num_tokens, 3 * embed_dim)
        qkv = self.qkv(x)

        # (b, num_tokens, 3 * embed_dim) --> (b, num_tokens, 3, num_heads, head_dim)
        qkv = qkv.view(batch_size, num_tokens, 3, self.num_heads, self.head_dim)

        # (b, num_tokens, 3, num_heads, head_dim) --> (3, b, num_heads, num_tokens, head_dim)
        qkv = qkv.permute(2, 0, 3, 1, 4)

        # (3, b, num_heads, num_tokens, head_dim) -> 3 times (b, num_heads, num_tokens, head_dim)
        queries, keys, values = qkv

        use_dropout = 0. if not self.training else self.dropout

        context_vec = nn.functional.scaled_dot_product_attention(
            queries, keys, values, attn_mask=None, dropout_p=use_dropout, is_causal=True)

        # Combine heads, where self.d_out = self.num_heads * self.head_dim
        context_vec = context_vec.transpose(1, 2).contiguous().view(batch_size, num_tokens, self.d_out)

        context_vec = self.proj(context_vec)

        return context_vec


class MHAPyTorchClass(nn.Module):
    def __init__(self, d_in, d_out, num_heads, context_length, dropout=0.0, qkv_bias=False, need_weights=True):
        super().__init__()

        self.context_length = context_length
        self.multihead_attn = nn.MultiheadAttention(
            embed_dim=d_out,
            num_heads=num_heads,
            dropout=dropout,
            bias=qkv_bias,
            add_bias_kv=qkv_bias,
            batch_first=True,
        )

        self.need_weights = need_weights
        self.proj = nn.Linear(d_out, d_out)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1).bool())

    def forward(self, x):
        batch_size, num_tokens, _ = x.shape

        # Ensure attn_mask is compatible with expected shape and `batch_first=True`
        # No need to manually adjust for num_heads; ensure it's right for the sequence
        if self.context_length >= num_tokens:
            attn_mask = self.mask[:num_tokens, :num_tokens]
        else:
            attn_mask = self.mask[:self.context_length, :self.context_length]

        # attn_mask broadcasting will handle batch_size dimension implicitly
        attn_output, _ = self.multihead_attn(
            x, x, x, attn_mask=attn_mask, need_weights=self.need_weights
        )

        output = self.proj(attn_output)

        return output


sdp = MHAPyTorchScaledDotProduct(16, 16, 4, 8, qkv_bias=False)
numpy_init(torch, sdp, seed=5)
# the fused qkv holds the three separate projections stacked
with torch.no_grad():
    sdp.qkv.weight.copy_(torch.cat([gpt_mha.W_query.weight, gpt_mha.W_key.weight, gpt_mha.W_value.weight]))
    sdp.proj.weight.copy_(gpt_mha.out_proj.weight)
    sdp.proj.bias.copy_(gpt_mha.out_proj.bias)
gpt_mha_nobias = MultiHeadAttention(16, 16, 8, 0.0, num_heads=4, qkv_bias=False)
gpt_mha_nobias.load_state_dict({k: v for k, v in gpt_mha.state_dict().items()
                                if not (k.startswith('W_') and k.endswith('bias'))})
out_sdp = sdp(x)
show('sdp', out_sdp[:, -1])
show('sdp_matches_manual', float(torch.allclose(out_sdp, gpt_mha_nobias(x), atol=1e-5)))
out_sdp.square().mean().backward()
show('sdp_grad_qkv', sdp.qkv.weight.grad.abs().sum(dim=1))

for need_weights in (True, False):
    mha_cls = MHAPyTorchClass(16, 16, 4, 8, need_weights=need_weights)
    numpy_init(torch, mha_cls, seed=6)
    out = mha_cls(x)
    show(f'mha_class_need_weights_{need_weights}', out[:, -2:])
    out.sum().backward()
    show(f'mha_class_grad_in_proj_{need_weights}',
         mha_cls.multihead_attn.in_proj_weight.grad.sum(dim=1))
show('mha_class_params', [list(p.shape) for p in mha_cls.parameters()])
