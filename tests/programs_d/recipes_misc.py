"""Small PyTorch recipe idioms: torch.manual_seed for reproducibility (two draws after the same
seed compared by torch.equal within one library), torch.no_grad beside torch.inference_mode
(requires_grad and is_inference of the results), freezing by requires_grad_(False) and the
count ``sum(p.numel() for p in model.parameters() if p.requires_grad)``, named_modules() and
children(), register_forward_hook and register_full_backward_hook recording shapes,
parameters_to_vector / vector_to_parameters, clip_grad_value_, and gradient accumulation over
micro-batches matching one large batch.

    python recipes_misc.py [torch|numbagrad]
"""
import numpy as np

from _common import BACKEND, numpy_init, show

if BACKEND == "torch":
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from torch.nn.utils import parameters_to_vector, vector_to_parameters
else:
    import numbagrad as torch
    import numbagrad.nn as nn
    import numbagrad.nn.functional as F
    from numbagrad.nn.utils import parameters_to_vector, vector_to_parameters

rng = np.random.default_rng(9)


def randn(*shape):
    return torch.from_numpy(rng.standard_normal(shape).astype(np.float32))


# --- reproducibility ---
torch.manual_seed(0)
a = torch.rand(5)
torch.manual_seed(0)
b = torch.rand(5)
c = torch.rand(5)
show('seed_equal', [torch.equal(a, b), torch.equal(a, c)])
g = torch.Generator().manual_seed(42)
d = torch.randn(3, generator=g)
g.manual_seed(42)
e = torch.randn(3, generator=g)
show('generator_equal', [torch.equal(d, e)])
torch.manual_seed(1)
perm1 = torch.randperm(10)
torch.manual_seed(1)
perm2 = torch.randperm(10)
show('randperm_equal', [torch.equal(perm1, perm2), sorted(perm1.tolist()) == list(range(10))])


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 8), nn.Tanh())
        self.classifier = nn.Linear(8, 3)

    def forward(self, x):
        return self.classifier(self.features(x))


model = Model()
numpy_init(torch, model, seed=1)
x = randn(4, 6)
y = torch.from_numpy(rng.integers(0, 3, 4))

# --- no_grad and inference_mode ---
with torch.no_grad():
    out_ng = model(x)
with torch.inference_mode():
    out_im = model(x)
show('no_grad', [out_ng.requires_grad, out_ng.is_inference(), torch.is_grad_enabled()])
show('inference_mode', [out_im.requires_grad, out_im.is_inference(), torch.is_inference_mode_enabled()])
show('inference_equal', [torch.equal(out_ng, out_im)])
show('inference_out', out_im)
out = model(x)
show('grad_mode', [out.requires_grad, out.is_inference()])


@torch.inference_mode()
def predict(m, x):
    return m(x).argmax(1)


show('predict', predict(model, x))

# --- freezing ---
print('total', sum(p.numel() for p in model.parameters()))
show('trainable_before', sum(p.numel() for p in model.parameters() if p.requires_grad))
model.features.requires_grad_(False)
show('trainable_after', sum(p.numel() for p in model.parameters() if p.requires_grad))
show('frozen_flags', [p.requires_grad for p in model.parameters()])
optimizer = torch.optim.SGD(filter(lambda p: p.requires_grad, model.parameters()), lr=0.1)
loss = F.cross_entropy(model(x), y)
loss.backward()
show('frozen_grads_none', [p.grad is None for p in model.parameters()])
optimizer.step()
show('frozen_classifier', model.classifier.weight)
for p in model.parameters():
    p.requires_grad_(True)
show('trainable_again', sum(p.numel() for p in model.parameters() if p.requires_grad))

# --- module traversal ---
names = [name for name, _ in model.named_modules()]
print('named_modules', names)
print('module_types', [type(m).__name__ for _, m in model.named_modules()])
show('n_modules', len(names))
print('children', [type(m).__name__ for m in model.children()])
print('named_children', [n for n, _ in model.named_children()])
linears = [m for m in model.modules() if isinstance(m, nn.Linear)]
show('linear_shapes', [list(m.weight.shape) for m in linears])

# --- hooks ---
activations = {}
grads = {}


def get_activation(name):
    def hook(module, inp, output):
        activations[name] = (tuple(inp[0].shape), tuple(output.shape), output.detach())
    return hook


def get_grad(name):
    def hook(module, grad_input, grad_output):
        grads[name] = ([None if g is None else tuple(g.shape) for g in grad_input],
                       tuple(grad_output[0].shape), grad_output[0].detach())
    return hook


handles = []
for name, m in model.named_modules():
    if isinstance(m, (nn.Linear, nn.Tanh)):
        handles.append(m.register_forward_hook(get_activation(name)))
        handles.append(m.register_full_backward_hook(get_grad(name)))
model.zero_grad()
out = model(x)
F.cross_entropy(out, y).backward()
print('hook_forward_keys', sorted(activations.keys()))
print('hook_backward_keys', sorted(grads.keys()))
for name in sorted(activations):
    show(f'fwd_{name}_shapes', [activations[name][0], activations[name][1]])
    show(f'fwd_{name}_out', activations[name][2][0])
for name in sorted(grads):
    print(f'bwd_{name}_grad_input', grads[name][0])
    show(f'bwd_{name}_shape', grads[name][1])
    show(f'bwd_{name}_grad_output', grads[name][2][0])
for h in handles:
    h.remove()
activations.clear()
model(x)
show('hooks_removed', [len(activations)])

# --- parameters as one vector ---
vec = parameters_to_vector(model.parameters())
show('vector_shape', list(vec.shape))
show('vector_head', vec[:10])
vector_to_parameters(vec * 0.5, model.parameters())
show('halved', model.classifier.bias)
vector_to_parameters(vec, model.parameters())
show('restored_equal', [torch.equal(parameters_to_vector(model.parameters()), vec)])

# --- clip_grad_value_ ---
model.zero_grad()
(F.cross_entropy(model(x), y) * 10).backward()
show('grad_before_clip', model.classifier.weight.grad)
torch.nn.utils.clip_grad_value_(model.parameters(), clip_value=0.1)
show('grad_after_clip', model.classifier.weight.grad)
show('grad_max', max(p.grad.abs().max().item() for p in model.parameters()))

# --- gradient accumulation ---
model_a = Model()
numpy_init(torch, model_a, seed=2)
model_b = Model()
model_b.load_state_dict(model_a.state_dict())
opt_a = torch.optim.SGD(model_a.parameters(), lr=0.1)
opt_b = torch.optim.SGD(model_b.parameters(), lr=0.1)
X = randn(16, 6)
Y = torch.from_numpy(rng.integers(0, 3, 16))
accumulation_steps = 4
losses = []
for epoch in range(3):
    opt_a.zero_grad()
    for i in range(accumulation_steps):
        xb, yb = X[i * 4:(i + 1) * 4], Y[i * 4:(i + 1) * 4]
        loss = F.cross_entropy(model_a(xb), yb) / accumulation_steps
        loss.backward()
        if (i + 1) % accumulation_steps == 0:
            opt_a.step()
            opt_a.zero_grad()
    opt_b.zero_grad()
    loss_b = F.cross_entropy(model_b(X), Y)
    loss_b.backward()
    opt_b.step()
    losses.append(loss_b.item())
show('accum_losses', losses)
show('accum_weight', model_a.classifier.weight)
show('accum_matches', [torch.allclose(pa, pb, atol=1e-6)
                       for pa, pb in zip(model_a.parameters(), model_b.parameters())])
