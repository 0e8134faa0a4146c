"""johnma2006/mamba-minimal (``model.py`` and ``demo.ipynb``), a one-file Mamba, on a tiny
config and tokens from a NumPy Markov chain in place of the pretrained weights: the ModelArgs
dataclass (``d_inner``, ``dt_rank='auto'`` by ``math.ceil``, the vocabulary padded to a multiple
of 8); Mamba with ``lm_head.weight`` tied to the embedding; ResidualBlock; MambaBlock's
``in_proj`` split into ``(x, res)`` by ``split(split_size=[...])``, the depthwise causal
``nn.Conv1d(groups=d_inner, padding=d_conv - 1)`` cut back to ``[:, :, :l]``, ``F.silu``; ``ssm``
with ``A = -torch.exp(A_log)`` (``A_log`` from ``torch.log`` of the repeated ``arange``),
``delta = F.softplus(dt_proj(delta))``; the sequential ``selective_scan`` written with
``torch.einsum`` for the einops calls, ``deltaA[:, i] * x + deltaB_u[:, i]`` over time and
``torch.stack``; RMSNorm. The scan is checked against a parallel form (``cumsum`` of
``log(deltaA)``, a ``tril`` mask), and the demo's ``generate`` (``F.softmax`` of the last logits,
``torch.topk`` and the ``probs[probs < ...] = 0`` cut, ``torch.multinomial``) runs greedily; the
``from_pretrained`` key renaming (``key.replace('backbone.', '')``) loads a state dict made of
NumPy arrays. Then a short AdamW training run with ``clip_grad_norm_``.

    python mamba_minimal.py [torch|numbagrad]
"""
import math
from dataclasses import dataclass
from typing import Union

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
    d_model: int
    n_layer: int
    vocab_size: int
    d_state: int = 16
    expand: int = 2
    dt_rank: Union[int, str] = 'auto'
    d_conv: int = 4
    pad_vocab_size_multiple: int = 8
    conv_bias: bool = True
    bias: bool = False

    def __post_init__(self):
        self.d_inner = int(self.expand * self.d_model)

        if self.dt_rank == 'auto':
            self.dt_rank = math.ceil(self.d_model / 16)

        if self.vocab_size % self.pad_vocab_size_multiple != 0:
            self.vocab_size += (self.pad_vocab_size_multiple
                                - self.vocab_size % self.pad_vocab_size_multiple)


class Mamba(nn.Module):
    def __init__(self, args: ModelArgs):
        """Full Mamba model."""
        super().__init__()
        self.args = args

        self.embedding = nn.Embedding(args.vocab_size, args.d_model)
        self.layers = nn.ModuleList([ResidualBlock(args) for _ in range(args.n_layer)])
        self.norm_f = RMSNorm(args.d_model)

        self.lm_head = nn.Linear(args.d_model, args.vocab_size, bias=False)
        self.lm_head.weight = self.embedding.weight  # Tie output projection to embedding weights.
                                                     # See "Weight Tying" paper

    def forward(self, input_ids):
        """
        Args:
            input_ids (long tensor): shape (b, l)    (See Glossary at top for definitions of b, l, d_in, n...)

        Returns:
            logits: shape (b, l, vocab_size)
        """
        x = self.embedding(input_ids)

        for layer in self.layers:
            x = layer(x)

        x = self.norm_f(x)
        logits = self.lm_head(x)

        return logits

    @staticmethod
    def from_pretrained(state_dict, args):
        """``from_pretrained`` with the downloaded files replaced by a ready state dict."""
        model = Mamba(args)
        new_state_dict = {}
        for key in state_dict:
            new_key = key.replace('backbone.', '')
            new_state_dict[new_key] = state_dict[key]
        model.load_state_dict(new_state_dict)

        return model


class ResidualBlock(nn.Module):
    def __init__(self, args: ModelArgs):
        """Simple block wrapping Mamba block with normalization and residual connection."""
        super().__init__()
        self.args = args
        self.mixer = MambaBlock(args)
        self.norm = RMSNorm(args.d_model)

    def forward(self, x):
        output = self.mixer(self.norm(x)) + x

        return output


class MambaBlock(nn.Module):
    def __init__(self, args: ModelArgs):
        """A single Mamba block, as described in Figure 3 in Section 3.4 in the Mamba paper [1]."""
        super().__init__()
        self.args = args

        self.in_proj = nn.Linear(args.d_model, args.d_inner * 2, bias=args.bias)

        self.conv1d = nn.Conv1d(
            in_channels=args.d_inner,
            out_channels=args.d_inner,
            bias=args.conv_bias,
            kernel_size=args.d_conv,
            groups=args.d_inner,
            padding=args.d_conv - 1,
        )

        # x_proj takes in `x` and outputs the input-specific Δ, B, C
        self.x_proj = nn.Linear(args.d_inner, args.dt_rank + args.d_state * 2, bias=False)

        # dt_proj projects Δ from dt_rank to d_in
        self.dt_proj = nn.Linear(args.dt_rank, args.d_inner, bias=True)

        # (einops: repeat(torch.arange(1, args.d_state + 1), 'n -> d n', d=args.d_inner))
        A = torch.arange(1, args.d_state + 1).repeat(args.d_inner, 1)
        self.A_log = nn.Parameter(torch.log(A))
        self.D = nn.Parameter(torch.ones(args.d_inner))
        self.out_proj = nn.Linear(args.d_inner, args.d_model, bias=args.bias)

    def forward(self, x):
        (b, l, d) = x.shape

        x_and_res = self.in_proj(x)  # shape (b, l, 2 * d_in)
        (x, res) = x_and_res.split(split_size=[self.args.d_inner, self.args.d_inner], dim=-1)

        x = x.permute(0, 2, 1)  # rearrange(x, 'b l d_in -> b d_in l')
        x = self.conv1d(x)[:, :, :l]
        x = x.permute(0, 2, 1)  # rearrange(x, 'b d_in l -> b l d_in')

        x = F.silu(x)

        y = self.ssm(x)

        y = y * F.silu(res)

        output = self.out_proj(y)

        return output

    def ssm(self, x, scan=None):
        (d_in, n) = self.A_log.shape

        # Compute ∆ A B C D, the state space parameters.
        #     A, D are input independent (see Mamba paper [1] Section 3.5.2 "Interpretation of A" for why A isn't selective)
        #     ∆, B, C are input-dependent (this is a key difference between Mamba and the linear time invariant S4,
        #                                  and is why Mamba is called **selective** state spaces)

        A = -torch.exp(self.A_log.float())  # shape (d_in, n)
        D = self.D.float()

        x_dbl = self.x_proj(x)  # (b, l, dt_rank + 2*n)

        (delta, B, C) = x_dbl.split(split_size=[self.args.dt_rank, n, n], dim=-1)  # delta: (b, l, dt_rank). B, C: (b, l, n)
        delta = F.softplus(self.dt_proj(delta))  # (b, l, d_in)

        y = (scan or self.selective_scan)(x, delta, A, B, C, D)  # This is similar to run_SSM(A, B, C, u) in The Annotated S4 [2]

        return y

    def selective_scan(self, u, delta, A, B, C, D):
        (b, l, d_in) = u.shape
        n = A.shape[1]

        # Discretize continuous parameters (A, B)
        # - A is discretized using zero-order hold (ZOH) discretization (see Section 2 Equation 4 in the Mamba paper [1])
        # - B is discretized using a simplified Euler discretization instead of ZOH. From a discussion with authors:
        #   "A is the more important term and the performance doesn't change much with the simplification on B"
        deltaA = torch.exp(torch.einsum('bld,dn->bldn', delta, A))
        deltaB_u = torch.einsum('bld,bln,bld->bldn', delta, B, u)

        # Perform selective scan (see scan_SSM() in The Annotated S4 [2])
        # Note that the below is sequential, while the official implementation does a much faster parallel scan that
        # is additionally hardware-aware (like FlashAttention).
        x = torch.zeros((b, d_in, n), device=deltaA.device)
        ys = []
        for i in range(l):
            x = deltaA[:, i] * x + deltaB_u[:, i]
            y = torch.einsum('bdn,bn->bd', x, C[:, i, :])
            ys.append(y)
        y = torch.stack(ys, dim=1)  # shape (b, l, d_in)

        y = y + u * D

        return y


def parallel_scan(u, delta, A, B, C, D):
    """The same recurrence in closed form: x_t = sum_{s<=t} exp(sum_{s<r<=t} delta_r A) dB_s u_s."""
    l = u.shape[1]
    logA = torch.einsum('bld,dn->bldn', delta, A)  # log(deltaA)
    P = torch.cumsum(logA, dim=1)
    deltaB_u = torch.einsum('bld,bln,bld->bldn', delta, B, u)
    diff = P.unsqueeze(2) - P.unsqueeze(1)  # (b, t, s, d, n): P_t - P_s
    causal = torch.tril(torch.ones(l, l, dtype=torch.bool))[None, :, :, None, None]
    weights = torch.where(causal, torch.exp(torch.where(causal, diff, torch.zeros_like(diff))),
                          torch.zeros_like(diff))
    x = (weights * deltaB_u.unsqueeze(1)).sum(dim=2)  # (b, t, d, n)
    y = torch.einsum('bldn,bln->bld', x, C)
    return y + u * D


class RMSNorm(nn.Module):
    def __init__(self, d_model: int, eps: float = 1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d_model))

    def forward(self, x):
        output = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight

        return output


def numpy_state_dict(model, seed):
    """A 'pretrained' state dict with 'backbone.'-prefixed keys, drawn by NumPy."""
    rng = np.random.default_rng(seed)
    out = {}
    for key, value in model.state_dict().items():
        shape = tuple(value.shape)
        if key.endswith("A_log") or key.endswith(".D") or "norm" in key:
            arr = value.detach().numpy().copy()
        else:
            fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
            arr = rng.uniform(-1, 1, shape) / np.sqrt(fan_in)
            if key.endswith("dt_proj.bias"):
                arr = np.log(np.expm1(rng.uniform(0.001, 0.1, shape)))  # inverse softplus of dt
        prefix = "" if key == "lm_head.weight" else "backbone."
        out[prefix + key] = torch.from_numpy(np.asarray(arr, dtype=np.float32))
    return out


def generate(model, prompt_ids, n_tokens_to_gen=12, sample=True, top_k=40):
    model.eval()

    input_ids = prompt_ids

    for token_n in range(n_tokens_to_gen):
        with torch.no_grad():
            indices_to_input = input_ids
            next_token_logits = model(indices_to_input)[:, -1]

        probs = F.softmax(next_token_logits, dim=-1)
        (batch, vocab_size) = probs.shape

        if top_k is not None:
            (values, indices) = torch.topk(probs, k=top_k)
            probs[probs < values[:, -1, None]] = 0
            probs = probs / probs.sum(axis=1, keepdims=True)

        if sample:
            next_indices = torch.multinomial(probs, num_samples=1)
        else:
            next_indices = torch.argmax(probs, dim=-1)[:, None]

        input_ids = torch.cat([input_ids, next_indices], dim=1)

    return input_ids


# ---- the config
args = ModelArgs(d_model=16, n_layer=2, vocab_size=21, d_state=4, d_conv=3)
show("args", [args.d_inner, args.dt_rank, args.vocab_size])
skeleton = Mamba(args)
show("tied", float(skeleton.lm_head.weight is skeleton.embedding.weight))
show("state_dict:" + ",".join(k for k in skeleton.state_dict() if k.startswith("layers.0")),
     len(skeleton.state_dict()))
show("A_log_row", skeleton.layers[0].mixer.A_log[0])
show("conv_weight_shape", list(skeleton.layers[0].mixer.conv1d.weight.shape))
pretrained = numpy_state_dict(skeleton, seed=0)
model = Mamba.from_pretrained(pretrained, args)
show("loaded_in_proj", model.layers[1].mixer.in_proj.weight[0, :5])
show("loaded_lm_head_is_embedding", float(model.lm_head.weight is model.embedding.weight))

# ---- the data
chain = np.random.default_rng(1)
P = chain.dirichlet(np.full(21, 0.2), size=21)
stream = [0]
for _ in range(2000):
    stream.append(int(chain.choice(21, p=P[stream[-1]])))
data = np.array(stream, dtype=np.int64)
rng = np.random.default_rng(2)


def get_batch(batch_size=6, block=12):
    ix = rng.integers(0, len(data) - block - 1, batch_size)
    x = np.stack([data[i:i + block] for i in ix])
    y = np.stack([data[i + 1:i + block + 1] for i in ix])
    return torch.from_numpy(x), torch.from_numpy(y)


xb, yb = get_batch()
logits = model(xb)
show("logits_shape", list(logits.shape))
show("logits", logits[0, -1, :8])
loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), yb.reshape(-1))
show("initial_loss", loss)
loss.backward()
mixer = model.layers[0].mixer
show("grad_A_log", mixer.A_log.grad[0])
show("grad_D", mixer.D.grad[:6])
show("grad_conv", mixer.conv1d.weight.grad[:3].reshape(-1))
show("grad_dt_bias", mixer.dt_proj.bias.grad[:6])
show("grad_embedding", model.embedding.weight.grad[data[0]][:6])

# ---- the sequential scan against its closed form, values and gradients
model.zero_grad()
h = model.layers[0].norm(model.embedding(xb[:2, :8]))
x_and_res = mixer.in_proj(h)
(u, res) = x_and_res.split(split_size=[args.d_inner, args.d_inner], dim=-1)
u = F.silu(mixer.conv1d(u.permute(0, 2, 1))[:, :, :8].permute(0, 2, 1))
y_seq = mixer.ssm(u)
y_par = mixer.ssm(u, scan=parallel_scan)
show("scan_max_diff_small", float((y_seq - y_par).abs().max() < 1e-4))
show("scan_y", y_seq[1, -1, :6])
g_seq = torch.autograd.grad(y_seq.pow(2).sum(), mixer.A_log, retain_graph=True)[0]
g_par = torch.autograd.grad(y_par.pow(2).sum(), mixer.A_log)[0]
show("scan_grad_A_log", g_seq[:2])
show("scan_grad_close", float(torch.allclose(g_seq, g_par, rtol=1e-3, atol=1e-5)))

# ---- the demo's generate, greedily (sampling differs between the libraries' generators)
prompt = torch.tensor([[3, 7, 1]])
out = generate(model, prompt, n_tokens_to_gen=10, sample=False, top_k=5)
show("greedy", out)
torch.manual_seed(0)
sampled = generate(model, prompt, n_tokens_to_gen=4, sample=True, top_k=5)
show("~sampled_len", sampled.shape[1])

# ---- a short training run
model.train()
opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
losses = []
for step in range(12):
    xb, yb = get_batch()
    logits = model(xb)
    loss = F.cross_entropy(logits.view(-1, logits.size(-1)), yb.view(-1))
    opt.zero_grad()
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    losses.append(loss.item())
show("train_losses", losses)
show("last_norm", norm)
show("A_log_trained", model.layers[1].mixer.A_log[0])
show("dt_bias_trained", model.layers[1].mixer.dt_proj.bias[:6])
