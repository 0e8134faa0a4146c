"""Training with activation checkpointing, as the Hugging Face models and the "Trading compute
for memory" guides write it: a stack of residual blocks whose forward calls
``torch.utils.checkpoint.checkpoint(block, hidden, use_reentrant=False)`` when
``gradient_checkpointing`` is on and the model trains, ``checkpoint_sequential`` over an
``nn.Sequential``, and the same training with checkpointing off; all three must agree.

    python checkpointing.py [torch|numbagrad]
"""
import numpy as np

from _common import BACKEND, numpy_init, show

if BACKEND == "torch":
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from torch.utils.checkpoint import checkpoint, checkpoint_sequential
else:
    import numbagrad as torch
    import numbagrad.nn as nn
    import numbagrad.nn.functional as F
    from numbagrad.utils.checkpoint import checkpoint, checkpoint_sequential


class Block(nn.Module):
    def __init__(self, d, hidden):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, hidden)
        self.fc2 = nn.Linear(hidden, d)

    def forward(self, x):
        return x + self.fc2(F.gelu(self.fc1(self.norm(x))))


class Model(nn.Module):
    def __init__(self, d=8, hidden=16, n_layers=4, n_classes=3):
        super().__init__()
        self.embed = nn.Linear(5, d)
        self.layers = nn.ModuleList([Block(d, hidden) for _ in range(n_layers)])
        self.head = nn.Linear(d, n_classes)
        self.gradient_checkpointing = False

    def gradient_checkpointing_enable(self):
        self.gradient_checkpointing = True

    def forward(self, x):
        hidden_states = self.embed(x)
        for layer in self.layers:
            if self.gradient_checkpointing and self.training:
                hidden_states = checkpoint(layer, hidden_states, use_reentrant=False)
            else:
                hidden_states = layer(hidden_states)
        return self.head(hidden_states.mean(1))


rng = np.random.default_rng(0)
X = torch.from_numpy(rng.normal(size=(16, 6, 5)).astype(np.float32))
y = torch.from_numpy(rng.integers(0, 3, 16))


def train(model, steps=5):
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    losses = []
    for step in range(steps):
        model.train()
        opt.zero_grad()
        loss = F.cross_entropy(model(X), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


plain = Model()
numpy_init(torch, plain)
ckpt = Model()
ckpt.load_state_dict(plain.state_dict())
ckpt.gradient_checkpointing_enable()
losses_plain = train(plain)
losses_ckpt = train(ckpt)
show('losses', losses_plain)
show('losses_checkpointed', losses_ckpt)
show('same_weights', [(a - b).abs().max().item() < 1e-5
                      for a, b in zip(plain.parameters(), ckpt.parameters())])
ckpt.eval()
with torch.no_grad():
    show('eval_logits', ckpt(X[:2]))

# checkpoint_sequential over an nn.Sequential (the reentrant variant)
seq = nn.Sequential(nn.Linear(5, 12), nn.ReLU(), nn.Linear(12, 12), nn.ReLU(),
                    nn.Linear(12, 12), nn.ReLU(), nn.Linear(12, 3))
numpy_init(torch, seq, seed=1)
inp = X[:, 0].clone().requires_grad_()
out = checkpoint_sequential(seq, 3, inp, use_reentrant=True)
loss = F.cross_entropy(out, y)
loss.backward()
print(out.grad_fn.__class__.__name__)
show('seq_loss', loss)
show('seq_input_grad', inp.grad[:2])
show('seq_weight_grad', seq[2].weight.grad.sum(1))
# the hidden block's node, for the reentrant variant
h = checkpoint(seq[:2], inp, use_reentrant=True)
print(h.grad_fn.name())
show('seq_checkpoint_out', h[:1])
