"""Karpathy's llama2.c, ``model.py`` and the loop of ``train.py``, on a tiny config and token
streams from a NumPy Markov chain in place of TinyStories: the ModelArgs dataclass; RMSNorm
(``x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)`` after ``x.float()``, ``type_as``);
``precompute_freqs_cis`` with real cos/sin (``torch.outer``), ``reshape_for_broadcast`` and
``apply_rotary_emb`` by ``reshape(... + (-1, 2)).unbind(-1)`` and ``torch.stack(...).flatten(3)``;
``repeat_kv`` for grouped-query attention (``x[:, :, :, None, :].expand(...).reshape``); Attention
through ``F.scaled_dot_product_attention(is_causal=True)`` and the manual path with a
``torch.triu(torch.full(..., -inf), diagonal=1)`` mask buffer; the SwiGLU FeedForward with the
``multiple_of`` hidden size; the Transformer with tied ``tok_embeddings``/``output`` weights,
non-persistent RoPE buffers, the GPT-2 scaled init of ``w3``/``wo`` (``_init_weights`` by
``apply``, then NumPy's numbers), ``last_loss`` with ``ignore_index=-1``, the last-position
``h[:, [-1], :]`` logits; ``configure_optimizers`` splitting decay/no-decay groups by ``dim()``
for AdamW; ``generate`` under ``@torch.inference_mode()`` (greedy by ``topk(k=1)``, top-k masking
by ``logits[logits < v[:, [-1]]] = -inf`` then ``multinomial``); train.py's warmup + cosine
``get_lr``, gradient accumulation, a disabled ``GradScaler`` with ``unscale_``,
``clip_grad_norm_`` and ``zero_grad(set_to_none=True)``; ``estimate_loss`` under ``no_grad``.

    python llama2c_model.py [torch|numbagrad]
"""
import inspect
import math
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Optional

import numpy as np

from _common import BACKEND, show

if BACKEND == "torch":
    import torch
    import torch.nn.functional as F
    from torch import nn
else:
    import numbagrad as torch
    import numbagrad.nn.functional as F
    from numbagrad import nn


@dataclass
class ModelArgs:
    # default hyperparameters for the Llama 7B model
    dim: int = 4096
    n_layers: int = 32
    n_heads: int = 32
    n_kv_heads: Optional[int] = None
    vocab_size: int = 32000
    hidden_dim: Optional[int] = None
    multiple_of: int = 256  # MLP hidden layer size will be multiple of
    norm_eps: float = 1e-5
    max_seq_len: int = 2048
    dropout: float = 0.0


class RMSNorm(torch.nn.Module):
    def __init__(self, dim: int, eps: float):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def _norm(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)

    def forward(self, x):
        output = self._norm(x.float()).type_as(x)
        return output * self.weight


def precompute_freqs_cis(dim: int, end: int, theta: float = 10000.0):
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))
    t = torch.arange(end, device=freqs.device)  # type: ignore
    freqs = torch.outer(t, freqs).float()  # type: ignore
    freqs_cos = torch.cos(freqs)  # real part
    freqs_sin = torch.sin(freqs)  # imaginary part
    return freqs_cos, freqs_sin


def reshape_for_broadcast(freqs_cis, x):
    ndim = x.ndim
    assert 0 <= 1 < ndim
    assert freqs_cis.shape == (x.shape[1], x.shape[-1])
    shape = [d if i == 1 or i == ndim - 1 else 1 for i, d in enumerate(x.shape)]
    return freqs_cis.view(shape)


def apply_rotary_emb(xq, xk, freqs_cos, freqs_sin):
    # reshape xq and xk to match the complex representation
    xq_r, xq_i = xq.float().reshape(xq.shape[:-1] + (-1, 2)).unbind(-1)
    xk_r, xk_i = xk.float().reshape(xk.shape[:-1] + (-1, 2)).unbind(-1)

    # reshape freqs_cos and freqs_sin for broadcasting
    freqs_cos = reshape_for_broadcast(freqs_cos, xq_r)
    freqs_sin = reshape_for_broadcast(freqs_sin, xq_r)

    # apply rotation using real numbers
    xq_out_r = xq_r * freqs_cos - xq_i * freqs_sin
    xq_out_i = xq_r * freqs_sin + xq_i * freqs_cos
    xk_out_r = xk_r * freqs_cos - xk_i * freqs_sin
    xk_out_i = xk_r * freqs_sin + xk_i * freqs_cos

    # flatten last two dimensions
    xq_out = torch.stack([xq_out_r, xq_out_i], dim=-1).flatten(3)
    xk_out = torch.stack([xk_out_r, xk_out_i], dim=-1).flatten(3)

    return xq_out.type_as(xq), xk_out.type_as(xk)


def repeat_kv(x, n_rep: int):
    """torch.repeat_interleave(x, dim=2, repeats=n_rep)"""
    bs, slen, n_kv_heads, head_dim = x.shape
    if n_rep == 1:
        return x
    return (
        x[:, :, :, None, :]
        .expand(bs, slen, n_kv_heads, n_rep, head_dim)
        .reshape(bs, slen, n_kv_heads * n_rep, head_dim)
    )


class Attention(nn.Module):
    def __init__(self, args: ModelArgs, flash=True):
        super().__init__()
        self.n_kv_heads = args.n_heads if args.n_kv_heads is None else args.n_kv_heads
        assert args.n_heads % self.n_kv_heads == 0
        model_parallel_size = 1
        self.n_local_heads = args.n_heads // model_parallel_size
        self.n_local_kv_heads = self.n_kv_heads // model_parallel_size
        self.n_rep = self.n_local_heads // self.n_local_kv_heads
        self.head_dim = args.dim // args.n_heads
        self.wq = nn.Linear(args.dim, args.n_heads * self.head_dim, bias=False)
        self.wk = nn.Linear(args.dim, self.n_kv_heads * self.head_dim, bias=False)
        self.wv = nn.Linear(args.dim, self.n_kv_heads * self.head_dim, bias=False)
        self.wo = nn.Linear(args.n_heads * self.head_dim, args.dim, bias=False)
        self.attn_dropout = nn.Dropout(args.dropout)
        self.resid_dropout = nn.Dropout(args.dropout)
        self.dropout = args.dropout

        # use flash attention or a manual implementation?
        self.flash = flash and hasattr(torch.nn.functional, 'scaled_dot_product_attention')
        if not self.flash:
            print("WARNING: using slow attention. Flash Attention requires PyTorch >= 2.0")
            mask = torch.full((1, 1, args.max_seq_len, args.max_seq_len), float("-inf"))
            mask = torch.triu(mask, diagonal=1)
            self.register_buffer("mask", mask)

    def forward(self, x, freqs_cos, freqs_sin):
        bsz, seqlen, _ = x.shape

        # QKV
        xq, xk, xv = self.wq(x), self.wk(x), self.wv(x)
        xq = xq.view(bsz, seqlen, self.n_local_heads, self.head_dim)
        xk = xk.view(bsz, seqlen, self.n_local_kv_heads, self.head_dim)
        xv = xv.view(bsz, seqlen, self.n_local_kv_heads, self.head_dim)

        # RoPE relative positional embeddings
        xq, xk = apply_rotary_emb(xq, xk, freqs_cos, freqs_sin)

        # grouped multiquery attention: expand out keys and values
        xk = repeat_kv(xk, self.n_rep)  # (bs, seqlen, n_local_heads, head_dim)
        xv = repeat_kv(xv, self.n_rep)  # (bs, seqlen, n_local_heads, head_dim)

        # make heads into a batch dimension
        xq = xq.transpose(1, 2)  # (bs, n_local_heads, seqlen, head_dim)
        xk = xk.transpose(1, 2)
        xv = xv.transpose(1, 2)

        # flash implementation
        if self.flash:
            output = torch.nn.functional.scaled_dot_product_attention(
                xq, xk, xv, attn_mask=None, dropout_p=self.dropout if self.training else 0.0,
                is_causal=True)
        else:
            # manual implementation
            scores = torch.matmul(xq, xk.transpose(2, 3)) / math.sqrt(self.head_dim)
            assert hasattr(self, 'mask')
            scores = scores + self.mask[:, :, :seqlen, :seqlen]  # (bs, n_local_heads, seqlen, cache_len + seqlen)
            scores = F.softmax(scores.float(), dim=-1).type_as(xq)
            scores = self.attn_dropout(scores)
            output = torch.matmul(scores, xv)  # (bs, n_local_heads, seqlen, head_dim)

        # restore time as batch dimension and concat heads
        output = output.transpose(1, 2).contiguous().view(bsz, seqlen, -1)

        # final projection into the residual stream
        output = self.wo(output)
        output = self.resid_dropout(output)
        return output


class FeedForward(nn.Module):
    def __init__(self, dim: int, hidden_dim: int, multiple_of: int, dropout: float):
        super().__init__()
        if hidden_dim is None:
            hidden_dim = 4 * dim
            hidden_dim = int(2 * hidden_dim / 3)
            hidden_dim = multiple_of * ((hidden_dim + multiple_of - 1) // multiple_of)
        self.w1 = nn.Linear(dim, hidden_dim, bias=False)
        self.w2 = nn.Linear(hidden_dim, dim, bias=False)
        self.w3 = nn.Linear(dim, hidden_dim, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        return self.dropout(self.w2(F.silu(self.w1(x)) * self.w3(x)))


class TransformerBlock(nn.Module):
    def __init__(self, layer_id: int, args: ModelArgs, flash=True):
        super().__init__()
        self.n_heads = args.n_heads
        self.dim = args.dim
        self.head_dim = args.dim // args.n_heads
        self.attention = Attention(args, flash)
        self.feed_forward = FeedForward(
            dim=args.dim,
            hidden_dim=args.hidden_dim,
            multiple_of=args.multiple_of,
            dropout=args.dropout,
        )
        self.layer_id = layer_id
        self.attention_norm = RMSNorm(args.dim, eps=args.norm_eps)
        self.ffn_norm = RMSNorm(args.dim, eps=args.norm_eps)

    def forward(self, x, freqs_cos, freqs_sin):
        h = x + self.attention.forward(self.attention_norm(x), freqs_cos, freqs_sin)
        out = h + self.feed_forward.forward(self.ffn_norm(h))
        return out


class Transformer(nn.Module):

    def __init__(self, params: ModelArgs, flash=True):
        super().__init__()
        self.params = params
        self.vocab_size = params.vocab_size
        self.n_layers = params.n_layers

        self.tok_embeddings = nn.Embedding(params.vocab_size, params.dim)
        self.dropout = nn.Dropout(params.dropout)
        self.layers = torch.nn.ModuleList()
        for layer_id in range(params.n_layers):
            self.layers.append(TransformerBlock(layer_id, params, flash))
        self.norm = RMSNorm(params.dim, eps=params.norm_eps)
        self.output = nn.Linear(params.dim, params.vocab_size, bias=False)

        # share the unembedding parameters with the embedding parameters
        self.tok_embeddings.weight = self.output.weight  # https://paperswithcode.com/method/weight-tying

        # some useful precompute for the RoPE relative positional embeddings
        freqs_cos, freqs_sin = precompute_freqs_cis(self.params.dim // self.params.n_heads, self.params.max_seq_len)
        self.register_buffer("freqs_cos", freqs_cos, persistent=False)
        self.register_buffer("freqs_sin", freqs_sin, persistent=False)

        # init all weights
        self.apply(self._init_weights)
        # apply special scaled init to the residual projections, per GPT-2 paper
        for pn, p in self.named_parameters():
            if pn.endswith('w3.weight') or pn.endswith('wo.weight'):
                torch.nn.init.normal_(p, mean=0.0, std=0.02/math.sqrt(2 * params.n_layers))

        # Initialize attribute for the loss of the last forward call. This will be set if the forward is called with a targets tensor.
        self.last_loss = None

    def _init_weights(self, module):
        if isinstance(module, nn.Linear):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                torch.nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def forward(self, tokens, targets=None):
        _bsz, seqlen = tokens.shape
        h = self.tok_embeddings(tokens)
        h = self.dropout(h)
        freqs_cos = self.freqs_cos[:seqlen]
        freqs_sin = self.freqs_sin[:seqlen]

        for layer in self.layers:
            h = layer(h, freqs_cos, freqs_sin)
        h = self.norm(h)

        if targets is not None:
            # if we are given some desired targets also calculate the loss
            logits = self.output(h)
            self.last_loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
        else:
            # inference-time mini-optimization: only forward the output on the very last position
            logits = self.output(h[:, [-1], :])  # note: using list [-1] to preserve the time dim
            self.last_loss = None

        return logits

    def configure_optimizers(self, weight_decay, learning_rate, betas, device_type):
        # start with all of the candidate parameters
        param_dict = {pn: p for pn, p in self.named_parameters()}
        # filter out those that do not require grad
        param_dict = {pn: p for pn, p in param_dict.items() if p.requires_grad}
        # create optim groups. Any parameters that is 2D will be weight decayed, otherwise no.
        # i.e. all weight tensors in matmuls + embeddings decay, all biases and layernorms don't.
        decay_params = [p for n, p in param_dict.items() if p.dim() >= 2]
        nodecay_params = [p for n, p in param_dict.items() if p.dim() < 2]
        optim_groups = [
            {'params': decay_params, 'weight_decay': weight_decay},
            {'params': nodecay_params, 'weight_decay': 0.0}
        ]
        num_decay_params = sum(p.numel() for p in decay_params)
        num_nodecay_params = sum(p.numel() for p in nodecay_params)
        print(f"num decayed parameter tensors: {len(decay_params)}, with {num_decay_params:,} parameters")
        print(f"num non-decayed parameter tensors: {len(nodecay_params)}, with {num_nodecay_params:,} parameters")
        show("decay_groups", [len(decay_params), num_decay_params, len(nodecay_params), num_nodecay_params])
        # Create AdamW optimizer and use the fused version if it is available
        fused_available = 'fused' in inspect.signature(torch.optim.AdamW).parameters
        use_fused = fused_available and device_type == 'cuda'
        extra_args = dict(fused=True) if use_fused else dict()
        optimizer = torch.optim.AdamW(optim_groups, lr=learning_rate, betas=betas, **extra_args)
        print(f"using fused AdamW: {use_fused}")
        return optimizer

    def estimate_mfu(self, fwdbwd_per_iter, dt):
        """ estimate model flops utilization (MFU) in units of A100 bfloat16 peak FLOPS """
        N = sum(p.numel() for p in self.parameters())
        cfg = self.params
        L, H, Q, T = cfg.n_layers, cfg.n_heads, cfg.dim//cfg.n_heads, cfg.max_seq_len
        flops_per_token = 6*N + 12*L*H*Q*T
        flops_per_fwdbwd = flops_per_token * T
        flops_per_iter = flops_per_fwdbwd * fwdbwd_per_iter
        flops_achieved = flops_per_iter * (1.0/dt)  # per second
        flops_promised = 312e12  # A100 GPU bfloat16 peak flops is 312 TFLOPS
        mfu = flops_achieved / flops_promised
        return mfu

    @torch.inference_mode()
    def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None):
        for _ in range(max_new_tokens):
            # if the sequence context is growing too long we must crop it at block_size
            idx_cond = idx if idx.size(1) <= self.params.max_seq_len else idx[:, -self.params.max_seq_len:]
            # forward the model to get the logits for the index in the sequence
            logits = self(idx_cond)
            logits = logits[:, -1, :]  # crop to just the final time step
            if temperature == 0.0:
                # "sample" the single most likely index
                _, idx_next = torch.topk(logits, k=1, dim=-1)
            else:
                # pluck the logits at the final step and scale by desired temperature
                logits = logits / temperature
                # optionally crop the logits to only the top k options
                if top_k is not None:
                    v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
                    logits[logits < v[:, [-1]]] = -float('Inf')
                # apply softmax to convert logits to (normalized) probabilities
                probs = F.softmax(logits, dim=-1)
                idx_next = torch.multinomial(probs, num_samples=1)
            # append sampled index to the running sequence and continue
            idx = torch.cat((idx, idx_next), dim=1)

        return idx


def numpy_gpt_init(model, n_layers, seed):
    """``_init_weights``' N(0, 0.02) and the scaled residual projections, drawn by NumPy."""
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for pn, p in model.named_parameters():
            if p.dim() < 2:
                continue
            std = 0.02 / math.sqrt(2 * n_layers) if pn.endswith(('w3.weight', 'wo.weight')) else 0.02
            p.copy_(torch.from_numpy(rng.normal(0.0, std, tuple(p.shape)).astype(np.float32)))


# ---- the pieces on their own
cos, sin = precompute_freqs_cis(8, 6)
show("freqs_cos", cos[-1])
show("freqs_sin", sin[:, 1])
rng = np.random.default_rng(2)
xq = torch.from_numpy(rng.normal(size=(2, 6, 4, 8)).astype(np.float32))
xk = torch.from_numpy(rng.normal(size=(2, 6, 2, 8)).astype(np.float32))
q_rot, k_rot = apply_rotary_emb(xq, xk, cos, sin)
show("rope_q", q_rot[1, 5, 3])
show("rope_norm_kept", (q_rot.norm(dim=-1) - xq.norm(dim=-1)).abs().max() < 1e-5)
show("repeat_kv_equals_interleave",
     float(torch.equal(repeat_kv(k_rot, 2), torch.repeat_interleave(k_rot, dim=2, repeats=2))))
norm = RMSNorm(8, 1e-5)
show("rmsnorm", norm(xq[0, 0]))
ff = FeedForward(dim=12, hidden_dim=None, multiple_of=8, dropout=0.0)
show("swiglu_hidden", ff.w1.out_features)

# ---- the model: a tiny config with grouped-query attention
vocab_size = 32
model_args = dict(dim=32, n_layers=2, n_heads=4, n_kv_heads=2, vocab_size=vocab_size,
                  multiple_of=16, max_seq_len=16, dropout=0.0)
gptconf = ModelArgs(**model_args)
torch.manual_seed(1337)
model = Transformer(gptconf)
show("tied", float(model.tok_embeddings.weight is model.output.weight))
show("num_params_tied", sum(p.numel() for p in model.parameters()))
show("state_dict:" + ",".join(k for k in model.state_dict() if not k.startswith("layers.1")),
     len(model.state_dict()))
show("residual_std_small", float(model.layers[0].feed_forward.w3.weight.std() < 0.012))
numpy_gpt_init(model, gptconf.n_layers, seed=3)

# a slow-attention twin with the same weights
slow = Transformer(gptconf, flash=False)
missing = slow.load_state_dict(model.state_dict(), strict=False)
show("missing:" + ",".join(missing.missing_keys), len(missing.unexpected_keys))
show("mask_buffer", slow.layers[0].attention.mask[0, 0, 2, :4])

# ---- data: a Markov chain over the vocabulary, in (B, T) chunks like train.py's iter_batches
chain = np.random.default_rng(4)
P = chain.dirichlet(np.full(vocab_size, 0.3), size=vocab_size)
stream = [0]
for _ in range(4000):
    stream.append(int(chain.choice(vocab_size, p=P[stream[-1]])))
data = np.array(stream, dtype=np.int64)


def iter_batches(split, batch_size, seqlen, rng):
    lo, hi = (0, 3200) if split == "train" else (3200, len(data) - seqlen - 1)
    while True:
        ix = rng.integers(lo, hi, batch_size)
        chunk = np.stack([data[i:i + seqlen + 1] for i in ix])
        x = torch.from_numpy(chunk[:, :-1].copy())
        y = torch.from_numpy(chunk[:, 1:].copy())
        yield x, y


X, Y = next(iter_batches("train", 4, 16, np.random.default_rng(5)))
logits = model(X, Y)
show("initial_loss", model.last_loss)
slow(X, Y)
show("slow_attention_same_loss", slow.last_loss)
Y_ignored = Y.clone()
Y_ignored[:, :4] = -1
model(X, Y_ignored)
show("loss_ignore_index", model.last_loss)
last = model(X)
show("last_position_logits_shape", list(last.shape))
show("last_position_logits", last[0, 0, :6])
show("last_loss_is_none", float(model.last_loss is None))
model.last_loss = None

# ---- train.py
gradient_accumulation_steps = 2
batch_size = 8
max_seq_len = 16
learning_rate = 5e-3
max_iters = 24
weight_decay = 1e-1
beta1, beta2 = 0.9, 0.95
grad_clip = 1.0
decay_lr = True
warmup_iters = 4
lr_decay_iters = max_iters
min_lr = 5e-4
eval_iters = 3
device_type = "cpu"
ctx = nullcontext() if device_type == "cpu" else torch.amp.autocast(device_type=device_type)
scaler = torch.cuda.amp.GradScaler(enabled=False)
optimizer = model.configure_optimizers(weight_decay, learning_rate, (beta1, beta2), device_type)


@torch.no_grad()
def estimate_loss():
    out = {}
    model.eval()
    for split in ["train", "val"]:
        batch_iter = iter_batches(split, batch_size, max_seq_len, np.random.default_rng(6))
        losses = torch.zeros(eval_iters)  # keep on CPU
        for k in range(eval_iters):
            X, Y = next(batch_iter)
            with ctx:
                logits = model(X, Y)
                loss = model.last_loss
            losses[k] = loss.item()
        out[split] = losses.mean()
    model.train()
    return out


def get_lr(it):
    # 1) linear warmup for warmup_iters steps
    if it < warmup_iters:
        return learning_rate * it / warmup_iters
    # 2) if it > lr_decay_iters, return min learning rate
    if it > lr_decay_iters:
        return min_lr
    # 3) in between, use cosine decay down to min learning rate
    decay_ratio = (it - warmup_iters) / (lr_decay_iters - warmup_iters)
    assert 0 <= decay_ratio <= 1
    coeff = 0.5 * (1.0 + math.cos(math.pi * decay_ratio))  # coeff ranges 0..1
    return min_lr + coeff * (learning_rate - min_lr)


train_batch_iter = iter_batches("train", batch_size, max_seq_len, np.random.default_rng(7))
X, Y = next(train_batch_iter)  # fetch the very first batch
iter_num = 0
lrs, train_losses, norms = [], [], []
while True:
    lr = get_lr(iter_num) if decay_lr else learning_rate
    for param_group in optimizer.param_groups:
        param_group["lr"] = lr
    lrs.append(lr)
    if iter_num % 12 == 0:
        losses = estimate_loss()
        print(f"step {iter_num}: train loss {losses['train']:.4f}, val loss {losses['val']:.4f}")
        show(f"eval_{iter_num}", [losses["train"], losses["val"]])
    for micro_step in range(gradient_accumulation_steps):
        with ctx:
            logits = model(X, Y)
            loss = model.last_loss
            loss = loss / gradient_accumulation_steps
        # immediately async prefetch next batch while model is doing the forward pass on the GPU
        X, Y = next(train_batch_iter)
        # backward pass, with gradient scaling if training in fp16
        scaler.scale(loss).backward()
    # clip the gradient
    if grad_clip != 0.0:
        scaler.unscale_(optimizer)
        norms.append(float(torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)))
    # step the optimizer and scaler if training in fp16
    scaler.step(optimizer)
    scaler.update()
    # flush the gradients as soon as we can, no need for this memory anymore
    optimizer.zero_grad(set_to_none=True)
    lossf = loss.item() * gradient_accumulation_steps
    train_losses.append(lossf)
    iter_num += 1
    if iter_num > max_iters:
        break
show("lrs", lrs)
show("train_losses", train_losses)
show("grad_norms", norms)
show("grads_flushed", float(all(p.grad is None for p in model.parameters())))
show("tied_after_training", float(model.tok_embeddings.weight is model.output.weight))
show("adamw_state_steps", [float(optimizer.state[p]["step"]) for p in list(model.parameters())[:2]])
show("output_weight", model.output.weight[0, :6])
show("mfu_positive", float(model.estimate_mfu(batch_size * gradient_accumulation_steps, 1.0) > 0))

# ---- sample.py
model.eval()
start_ids = torch.tensor([[0, 5]], dtype=torch.long)
greedy = model.generate(start_ids, 20, temperature=0.0)
show("greedy_tokens", greedy)
show("inference_tensor_requires_grad", float(greedy.requires_grad))
torch.manual_seed(42)
sampled = model.generate(start_ids, 8, temperature=1.0, top_k=3)
show("~sampled_len", sampled.shape[1])
with torch.no_grad():
    logits = model(greedy[:, -16:])[:, -1, :]
    v, _ = torch.topk(logits, 3)
    topk_logits = logits.clone()
    topk_logits[topk_logits < v[:, [-1]]] = -float('Inf')
show("topk_kept", float(torch.isfinite(topk_logits).sum()))
show("topk_probs", F.softmax(topk_logits, dim=-1).topk(3).values)
