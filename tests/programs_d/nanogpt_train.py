"""Karpathy's nanoGPT (model.py and train.py), shrunk to a character corpus made by NumPy: a
GPTConfig dataclass; a LayerNorm with optional bias through F.layer_norm; CausalSelfAttention
with one c_attn projection split into q, k, v by ``.split(n_embd, dim=2)``, heads by
``.view(B, T, nh, hs).transpose(1, 2)``, F.scaled_dot_product_attention(is_causal=True) or the
manual path over a registered tril buffer with ``masked_fill(... == 0, float('-inf'))``; an MLP
with nn.GELU; pre-norm Blocks; an nn.ModuleDict transformer whose wte weight is TIED to lm_head;
``self.apply(self._init_weights)`` dispatching by isinstance, then the scaled c_proj init found
by ``pn.endswith('c_proj.weight')`` (NumPy draws in place of nn.init.normal_); get_num_params;
configure_optimizers with decay/no-decay AdamW groups by ``p.dim() >= 2`` and the 'fused' check
by inspect.signature; train.py's loop (get_batch from a uint16 token array, a disabled
GradScaler, gradient accumulation, clip_grad_norm_, the warmup + cosine lr written into each
param_group, estimate_loss under @torch.no_grad() with eval()/train()), a checkpoint saved and
resumed (the '_orig_mod.' prefix strip, optimizer.load_state_dict), crop_block_size, and
generate() with temperature, top-k by torch.topk and ``logits[logits < v[:, [-1]]] = -inf``;
torch.multinomial's draws come from NumPy.

    python nanogpt_train.py [torch|numbagrad]
"""
import inspect
import io
import math
from contextlib import nullcontext
from dataclasses import dataclass

import numpy as np

from _common import BACKEND, show

if BACKEND == "torch":
    import torch
    import torch.nn as nn
    from torch.nn import functional as F
else:
    import numbagrad as torch
    import numbagrad.nn as nn
    from numbagrad.nn import functional as F

init_rng = np.random.default_rng(7)
USE_FLASH = True


def normal_init_(p, mean, std):
    # (torch.nn.init.normal_(p, mean, std), drawn by NumPy so both libraries start equal)
    with torch.no_grad():
        p.copy_(torch.from_numpy(init_rng.normal(mean, std, tuple(p.shape)).astype(np.float32)))


class LayerNorm(nn.Module):

    def __init__(self, ndim, bias):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(ndim))
        self.bias = nn.Parameter(torch.zeros(ndim)) if bias else None

    def forward(self, input):
        return F.layer_norm(input, self.weight.shape, self.weight, self.bias, 1e-5)


class CausalSelfAttention(nn.Module):

    def __init__(self, config):
        super().__init__()
        assert config.n_embd % config.n_head == 0
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd, bias=config.bias)
        self.c_proj = nn.Linear(config.n_embd, config.n_embd, bias=config.bias)
        self.attn_dropout = nn.Dropout(config.dropout)
        self.resid_dropout = nn.Dropout(config.dropout)
        self.n_head = config.n_head
        self.n_embd = config.n_embd
        self.dropout = config.dropout
        self.flash = hasattr(torch.nn.functional, 'scaled_dot_product_attention') and USE_FLASH
        if not self.flash:
            self.register_buffer("bias", torch.tril(torch.ones(config.block_size, config.block_size))
                                 .view(1, 1, config.block_size, config.block_size))

    def forward(self, x):
        B, T, C = x.size()

        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)

        if self.flash:
            y = torch.nn.functional.scaled_dot_product_attention(
                q, k, v, attn_mask=None, dropout_p=self.dropout if self.training else 0,
                is_causal=True)
        else:
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float('-inf'))
            att = F.softmax(att, dim=-1)
            att = self.attn_dropout(att)
            y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)

        y = self.resid_dropout(self.c_proj(y))
        return y


class MLP(nn.Module):

    def __init__(self, config):
        super().__init__()
        self.c_fc = nn.Linear(config.n_embd, 4 * config.n_embd, bias=config.bias)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd, bias=config.bias)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x):
        x = self.c_fc(x)
        x = self.gelu(x)
        x = self.c_proj(x)
        x = self.dropout(x)
        return x


class Block(nn.Module):

    def __init__(self, config):
        super().__init__()
        self.ln_1 = LayerNorm(config.n_embd, bias=config.bias)
        self.attn = CausalSelfAttention(config)
        self.ln_2 = LayerNorm(config.n_embd, bias=config.bias)
        self.mlp = MLP(config)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        x = x + self.mlp(self.ln_2(x))
        return x


@dataclass
class GPTConfig:
    block_size: int = 1024
    vocab_size: int = 50304
    n_layer: int = 12
    n_head: int = 12
    n_embd: int = 768
    dropout: float = 0.0
    bias: bool = True


class GPT(nn.Module):

    def __init__(self, config):
        super().__init__()
        assert config.vocab_size is not None
        assert config.block_size is not None
        self.config = config

        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(config.vocab_size, config.n_embd),
            wpe=nn.Embedding(config.block_size, config.n_embd),
            drop=nn.Dropout(config.dropout),
            h=nn.ModuleList([Block(config) for _ in range(config.n_layer)]),
            ln_f=LayerNorm(config.n_embd, bias=config.bias),
        ))
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        # weight tying: the token embedding and the output head share one matrix
        self.transformer.wte.weight = self.lm_head.weight

        self.apply(self._init_weights)
        # residual projections get a smaller init, scaled by the depth
        for pn, p in self.named_parameters():
            if pn.endswith('c_proj.weight'):
                normal_init_(p, mean=0.0, std=0.02 / math.sqrt(2 * config.n_layer))

        print("number of parameters: %.2fM" % (self.get_num_params() / 1e6,))

    def get_num_params(self, non_embedding=True):
        n_params = sum(p.numel() for p in self.parameters())
        if non_embedding:
            n_params -= self.transformer.wpe.weight.numel()
        return n_params

    def _init_weights(self, module):
        if isinstance(module, nn.Linear):
            normal_init_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                torch.nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            normal_init_(module.weight, mean=0.0, std=0.02)

    def forward(self, idx, targets=None):
        device = idx.device
        b, t = idx.size()
        assert t <= self.config.block_size, \
            f"Cannot forward sequence of length {t}, block size is only {self.config.block_size}"
        pos = torch.arange(0, t, dtype=torch.long, device=device)

        tok_emb = self.transformer.wte(idx)
        pos_emb = self.transformer.wpe(pos)
        x = self.transformer.drop(tok_emb + pos_emb)
        for block in self.transformer.h:
            x = block(x)
        x = self.transformer.ln_f(x)

        if targets is not None:
            logits = self.lm_head(x)
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1),
                                   ignore_index=-1)
        else:
            # at inference only the last position's logits are needed
            logits = self.lm_head(x[:, [-1], :])
            loss = None

        return logits, loss

    def crop_block_size(self, block_size):
        assert block_size <= self.config.block_size
        self.config.block_size = block_size
        self.transformer.wpe.weight = nn.Parameter(self.transformer.wpe.weight[:block_size])
        for block in self.transformer.h:
            if hasattr(block.attn, 'bias'):
                block.attn.bias = block.attn.bias[:, :, :block_size, :block_size]

    def configure_optimizers(self, weight_decay, learning_rate, betas, device_type):
        param_dict = {pn: p for pn, p in self.named_parameters()}
        param_dict = {pn: p for pn, p in param_dict.items() if p.requires_grad}
        # matrices and embeddings decay; biases and norm weights do not
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
        fused_available = 'fused' in inspect.signature(torch.optim.AdamW).parameters
        use_fused = fused_available and device_type == 'cuda'
        extra_args = dict(fused=True) if use_fused else dict()
        optimizer = torch.optim.AdamW(optim_groups, lr=learning_rate, betas=betas, **extra_args)
        print(f"using fused AdamW: {use_fused}")
        self.group_sizes = [len(decay_params), num_decay_params, len(nodecay_params),
                            num_nodecay_params, fused_available]
        return optimizer

    @torch.no_grad()
    def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None):
        for _ in range(max_new_tokens):
            idx_cond = idx if idx.size(1) <= self.config.block_size else idx[:, -self.config.block_size:]
            logits, _ = self(idx_cond)
            logits = logits[:, -1, :] / temperature
            if top_k is not None:
                v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
                logits[logits < v[:, [-1]]] = -float('Inf')
            probs = F.softmax(logits, dim=-1)
            idx_next = multinomial(probs)
            idx = torch.cat((idx, idx_next), dim=1)
        return idx


sample_rng = np.random.default_rng(11)


def multinomial(probs):
    # (torch.multinomial(probs, num_samples=1) by inverting the CDF at NumPy uniforms)
    u = torch.from_numpy(sample_rng.random((probs.size(0), 1)).astype(np.float32))
    cdf = torch.cumsum(probs, dim=-1)
    return (cdf < u).sum(dim=-1, keepdim=True).clamp(max=probs.size(-1) - 1)


# -----------------------------------------------------------------------------
# train.py's configuration, shrunk
eval_interval = 4
eval_iters = 2
gradient_accumulation_steps = 2
batch_size = 4
block_size = 8
n_layer = 2
n_head = 2
n_embd = 16
dropout = 0.0
bias = False
learning_rate = 1e-2
max_iters = 10
weight_decay = 1e-1
beta1 = 0.9
beta2 = 0.99
grad_clip = 1.0
decay_lr = True
warmup_iters = 3
lr_decay_iters = 8
min_lr = 1e-3
device = 'cpu'
dtype = 'float32'
compile = False
config = {k: v for k, v in globals().items()
          if not k.startswith('_') and isinstance(v, (int, float, bool, str))}
# -----------------------------------------------------------------------------

torch.manual_seed(1337)
torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True
device_type = 'cuda' if 'cuda' in device else 'cpu'
ptdtype = {'float32': torch.float32, 'bfloat16': torch.bfloat16, 'float16': torch.float16}[dtype]
ctx = nullcontext() if device_type == 'cpu' else torch.amp.autocast(device_type=device_type,
                                                                      dtype=ptdtype)

# prepare.py: a character vocabulary and uint16 token arrays
text_rng = np.random.default_rng(0)
words = ['to', 'be', 'or', 'not', 'that', 'is', 'the', 'question', 'whether', 'tis', 'nobler']
text = '\n'.join(' '.join(text_rng.choice(words, size=text_rng.integers(3, 7)))
                 for _ in range(40))
chars = sorted(list(set(text)))
vocab_size = len(chars)
stoi = {ch: i for i, ch in enumerate(chars)}
itos = {i: ch for i, ch in enumerate(chars)}


def encode(s):
    return [stoi[c] for c in s]


def decode(ids):
    return ''.join([itos[i] for i in ids])


n = len(text)
train_data = np.array(encode(text[:int(n * 0.9)]), dtype=np.uint16)
val_data = np.array(encode(text[int(n * 0.9):]), dtype=np.uint16)
batch_rng = np.random.default_rng(1337)


def get_batch(split):
    data = train_data if split == 'train' else val_data
    ix = batch_rng.integers(0, len(data) - block_size, size=(batch_size,))
    x = torch.stack([torch.from_numpy((data[i:i + block_size]).astype(np.int64)) for i in ix])
    y = torch.stack([torch.from_numpy((data[i + 1:i + 1 + block_size]).astype(np.int64)) for i in ix])
    x, y = x.to(device), y.to(device)
    return x, y


iter_num = 0
best_val_loss = 1e9
model_args = dict(n_layer=n_layer, n_head=n_head, n_embd=n_embd, block_size=block_size,
                  bias=bias, vocab_size=vocab_size, dropout=dropout)
gptconf = GPTConfig(**model_args)
model = GPT(gptconf)
model.to(device)

scaler = torch.amp.GradScaler('cuda', enabled=(dtype == 'float16'))
optimizer = model.configure_optimizers(weight_decay, learning_rate, (beta1, beta2), device_type)
if compile:
    model = torch.compile(model)


@torch.no_grad()
def estimate_loss():
    out = {}
    model.eval()
    for split in ['train', 'val']:
        losses = torch.zeros(eval_iters)
        for k in range(eval_iters):
            X, Y = get_batch(split)
            with ctx:
                logits, loss = model(X, Y)
            losses[k] = loss.item()
        out[split] = losses.mean()
    model.train()
    return out


def get_lr(it):
    # linear warmup, then cosine decay down to min_lr
    if it < warmup_iters:
        return learning_rate * (it + 1) / (warmup_iters + 1)
    if it > lr_decay_iters:
        return min_lr
    decay_ratio = (it - warmup_iters) / (lr_decay_iters - warmup_iters)
    assert 0 <= decay_ratio <= 1
    coeff = 0.5 * (1.0 + math.cos(math.pi * decay_ratio))
    return min_lr + coeff * (learning_rate - min_lr)


show('config', [vocab_size, len(train_data), len(val_data), model.get_num_params(),
                model.get_num_params(non_embedding=False)])
show('groups', model.group_sizes)
show('tied', [model.transformer.wte.weight is model.lm_head.weight,
              len(list(model.parameters())), len(model.state_dict())])
show('init_c_proj', model.transformer.h[1].attn.c_proj.weight[0, :6])
show('init_wte', model.transformer.wte.weight[0, :6])

train_losses, lrs, evals, norms = [], [], [], []
checkpoint_bytes = None
X, Y = get_batch('train')
raw_model = model
while True:
    lr = get_lr(iter_num) if decay_lr else learning_rate
    for param_group in optimizer.param_groups:
        param_group['lr'] = lr
    lrs.append(lr)

    if iter_num % eval_interval == 0:
        losses = estimate_loss()
        print(f"step {iter_num}: train loss {losses['train']:.4f}, val loss {losses['val']:.4f}")
        evals.append([losses['train'].item(), losses['val'].item()])
        if losses['val'] < best_val_loss:
            best_val_loss = losses['val'].item()
            if iter_num > 0:
                checkpoint = {
                    'model': raw_model.state_dict(),
                    'optimizer': optimizer.state_dict(),
                    'model_args': model_args,
                    'iter_num': iter_num,
                    'best_val_loss': best_val_loss,
                    'config': config,
                }
                buf = io.BytesIO()
                torch.save(checkpoint, buf)
                checkpoint_bytes = buf.getvalue()

    for micro_step in range(gradient_accumulation_steps):
        with ctx:
            logits, loss = model(X, Y)
            loss = loss / gradient_accumulation_steps
        X, Y = get_batch('train')
        scaler.scale(loss).backward()
    if grad_clip != 0.0:
        scaler.unscale_(optimizer)
        norms.append(torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip).item())
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)

    lossf = loss.item() * gradient_accumulation_steps
    train_losses.append(lossf)
    iter_num += 1
    if iter_num > max_iters:
        break

show('lrs', lrs)
show('train_losses', train_losses)
show('clip_norms', norms)
show('evals', evals)
show('ln_f_weight', model.transformer.ln_f.weight[:6])
show('wte_weight', model.transformer.wte.weight[1, :6])
show('c_attn_weight', model.transformer.h[0].attn.c_attn.weight[0, :6])
show('adam_state', [optimizer.state[model.lm_head.weight]['step'],
                    optimizer.state[model.lm_head.weight]['exp_avg_sq'][2, :4]])
show('grads_cleared', [p.grad is None for p in model.parameters()])

# resume from the checkpoint, as train.py does with init_from='resume'
checkpoint = torch.load(io.BytesIO(checkpoint_bytes), map_location=device)
checkpoint_model_args = checkpoint['model_args']
for k in ['n_layer', 'n_head', 'n_embd', 'block_size', 'bias', 'vocab_size']:
    model_args[k] = checkpoint_model_args[k]
resumed = GPT(GPTConfig(**model_args))
state_dict = checkpoint['model']
unwanted_prefix = '_orig_mod.'
for k, v in list(state_dict.items()):
    if k.startswith(unwanted_prefix):
        state_dict[k[len(unwanted_prefix):]] = state_dict.pop(k)
resumed.load_state_dict(state_dict)
resumed_opt = resumed.configure_optimizers(weight_decay, learning_rate, (beta1, beta2), device_type)
resumed_opt.load_state_dict(checkpoint['optimizer'])
show('resume', [checkpoint['iter_num'], checkpoint['best_val_loss'],
                checkpoint['config']['max_iters'],
                resumed_opt.param_groups[0]['lr'], resumed_opt.param_groups[1]['weight_decay']])
Xr, Yr = get_batch('train')
_, loss = resumed(Xr, Yr)
loss.backward()
resumed_opt.step()
show('resumed_step', [loss.item(), resumed.lm_head.weight[3, :4]])

# the manual attention path and the fused one agree on the same weights
USE_FLASH = False
manual = GPT(GPTConfig(**model_args))
missing, unexpected = manual.load_state_dict(model.state_dict(), strict=False)
show('manual_keys', [len(missing), len(unexpected), len(manual.state_dict())])
model.eval()
manual.eval()
with torch.no_grad():
    Xv, Yv = get_batch('val')
    logits_flash, loss_flash = model(Xv, Yv)
    logits_manual, loss_manual = manual(Xv, Yv)
show('flash_vs_manual', [loss_flash, loss_manual])
show('manual_logits', logits_manual[0, -1, :6])

manual.crop_block_size(6)
show('cropped', [list(manual.transformer.wpe.weight.shape), list(manual.transformer.h[0].attn.bias.shape),
                 manual.get_num_params()])

# sampling, as sample.py does
start_ids = encode('to be')
x = torch.tensor(start_ids, dtype=torch.long, device=device)[None, ...]
with torch.no_grad():
    with ctx:
        y = model.generate(x, 10, temperature=0.8, top_k=5)
        y_manual = manual.generate(x, 8, temperature=1.0, top_k=None)
print(decode(y[0].tolist()))
show('generated', y[0])
show('generated_manual', y_manual[0])
with torch.no_grad():
    logits, _ = model(x)
show('last_logits', [list(logits.shape), logits[0, 0, :6]])
