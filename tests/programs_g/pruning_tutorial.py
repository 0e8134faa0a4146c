"""PyTorch tutorial "Pruning Tutorial" (``torch.nn.utils.prune``), with the LeNet's weights drawn
by NumPy: ``random_unstructured`` on ``conv1.weight`` (``weight_orig`` among the parameters,
``weight_mask`` among the buffers, the forward pre-hook), ``l1_unstructured`` on the bias with an
integer amount, iterative pruning by ``ln_structured(n=2, dim=0)`` and the PruningContainer's
history, the pruned model's ``state_dict`` keys, ``prune.remove``; pruning every Conv2d and
Linear of a model by ``named_modules``; ``global_unstructured`` with the per-layer and global
sparsities the tutorial prints; a custom ``BasePruningMethod`` (FooBarPruningMethod) applied
through ``apply``. Then what one does next: fine-tuning the pruned LeNet with SGD (the gradient of
``weight_orig`` masked), ``custom_from_mask``, ``importance_scores``, ``is_pruned`` and
``random_structured``.

    python pruning_tutorial.py [torch|numbagrad]
"""
import numpy as np

from _common import BACKEND, numpy_init, show

if BACKEND == "torch":
    import torch
    import torch.nn.functional as F
    import torch.nn.utils.prune as prune
    from torch import nn
else:
    import numbagrad as torch
    import numbagrad.nn.functional as F
    import numbagrad.nn.utils.prune as prune
    from numbagrad import nn

device = torch.device("cpu")


class LeNet(nn.Module):
    def __init__(self):
        super(LeNet, self).__init__()
        # 1 input image channel, 6 output channels, 5x5 square conv kernel
        self.conv1 = nn.Conv2d(1, 6, 5)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)  # 5x5 image dimension
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), (2, 2))
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = x.view(-1, int(x.nelement() / x.shape[0]))
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x


def names(pairs):
    return ",".join(n for n, _ in pairs)


model = LeNet().to(device=device)
numpy_init(torch, model, seed=0)

# ---- inspect a module
module = model.conv1
show("params:" + names(module.named_parameters()), len(list(module.named_parameters())))
show("buffers:" + (names(module.named_buffers()) or "none"), len(list(module.named_buffers())))

# ---- pruning a module (random: which entries differ between libraries, how many does not)
prune.random_unstructured(module, name="weight", amount=0.3)
show("params_after:" + names(module.named_parameters()), len(list(module.named_parameters())))
show("buffers_after:" + names(module.named_buffers()), len(list(module.named_buffers())))
show("random_zeros", float(torch.sum(module.weight == 0)))
show("mask_zeros", float((module.weight_mask == 0).sum()))
show("mask_dtype_is_float", float(module.weight_mask.dtype == torch.float32))
show("weight_is_orig_times_mask",
     float(torch.equal(module.weight, module.weight_orig * module.weight_mask)))
show("hooks", len(module._forward_pre_hooks))
print(module._forward_pre_hooks)

prune.l1_unstructured(module, name="bias", amount=3)
show("params_bias:" + names(module.named_parameters()), len(list(module.named_parameters())))
show("buffers_bias:" + names(module.named_buffers()), len(list(module.named_buffers())))
show("pruned_bias", module.bias)
show("bias_mask", module.bias_mask)
show("hooks_after_bias", len(module._forward_pre_hooks))

# ---- iterative pruning
prune.ln_structured(module, name="weight", amount=0.5, n=2, dim=0)
kept_channels = (module.weight.abs().sum(dim=(1, 2, 3)) != 0).float()
show("~structured_kept_channels", kept_channels.sum())
show("~structured_zeros", float((module.weight == 0).sum()))
for hook in module._forward_pre_hooks.values():
    if hook._tensor_name == "weight":  # select out the correct hook
        break
show("history:" + ",".join(type(h).__name__ for h in hook), len(list(hook)))
show("container:" + type(hook).__name__, 1)

# ---- serializing a pruned model
show("state_dict_keys:" + ",".join(model.state_dict().keys()), len(model.state_dict()))

# ---- remove pruning re-parametrization
prune.remove(module, "weight")
show("params_removed:" + names(module.named_parameters()), len(list(module.named_parameters())))
show("buffers_removed:" + names(module.named_buffers()), len(list(module.named_buffers())))
show("~weight_is_parameter_zeros", float((module.weight == 0).sum()))
show("weight_is_parameter", float(isinstance(module.weight, nn.Parameter)))

# ---- pruning multiple parameters in a model
new_model = LeNet()
numpy_init(torch, new_model, seed=1)
for name, module in new_model.named_modules():
    # prune 20% of connections in all 2D-conv layers
    if isinstance(module, torch.nn.Conv2d):
        prune.l1_unstructured(module, name="weight", amount=0.2)
    # prune 40% of connections in all linear layers
    elif isinstance(module, torch.nn.Linear):
        prune.l1_unstructured(module, name="weight", amount=0.4)
show("new_model_buffers:" + ",".join(dict(new_model.named_buffers()).keys()),
     len(dict(new_model.named_buffers())))
show("new_model_zeros", [float((m.weight == 0).sum()) for m in
                         (new_model.conv1, new_model.conv2, new_model.fc1, new_model.fc2,
                          new_model.fc3)])
show("new_model_conv1_weight", new_model.conv1.weight[0, 0])

# ---- global pruning
model = LeNet()
numpy_init(torch, model, seed=2)
parameters_to_prune = (
    (model.conv1, "weight"),
    (model.conv2, "weight"),
    (model.fc1, "weight"),
    (model.fc2, "weight"),
    (model.fc3, "weight"),
)
prune.global_unstructured(
    parameters_to_prune,
    pruning_method=prune.L1Unstructured,
    amount=0.2,
)
for label, layer in (("conv1", model.conv1), ("conv2", model.conv2), ("fc1", model.fc1),
                     ("fc2", model.fc2), ("fc3", model.fc3)):
    sparsity = 100. * float(torch.sum(layer.weight == 0)) / float(layer.weight.nelement())
    print("Sparsity in {}.weight: {:.2f}%".format(label, sparsity))
    show(f"sparsity_{label}", sparsity)
global_sparsity = 100. * float(
    torch.sum(model.conv1.weight == 0)
    + torch.sum(model.conv2.weight == 0)
    + torch.sum(model.fc1.weight == 0)
    + torch.sum(model.fc2.weight == 0)
    + torch.sum(model.fc3.weight == 0)
) / float(
    model.conv1.weight.nelement()
    + model.conv2.weight.nelement()
    + model.fc1.weight.nelement()
    + model.fc2.weight.nelement()
    + model.fc3.weight.nelement()
)
print("Global sparsity: {:.2f}%".format(global_sparsity))
show("global_sparsity", global_sparsity)


# ---- extending torch.nn.utils.prune with custom pruning functions
class FooBarPruningMethod(prune.BasePruningMethod):
    """Prune every other entry in a tensor
    """
    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t, default_mask):
        mask = default_mask.clone()
        mask.view(-1)[::2] = 0
        return mask


def foobar_unstructured(module, name):
    """Prunes tensor corresponding to parameter called `name` in `module`
    by removing every other entry in the tensors.
    Modifies module in place (and also return the modified module)
    by:
    1) adding a named buffer called `name+'_mask'` corresponding to the
    binary mask applied to the parameter `name` by the pruning method.
    The parameter `name` is replaced by its pruned version, while the
    original (unpruned) parameter is stored in a new parameter named
    `name+'_orig'`.
    """
    FooBarPruningMethod.apply(module, name)
    return module


model = LeNet()
numpy_init(torch, model, seed=3)
foobar_unstructured(model.fc3, name="bias")
show("foobar_mask", model.fc3.bias_mask)
show("foobar_bias", model.fc3.bias)

# ---- fine-tuning the globally pruned model: the pruned entries stay zero
model = LeNet()
numpy_init(torch, model, seed=4)
prune.global_unstructured(
    [(model.conv1, "weight"), (model.conv2, "weight"), (model.fc1, "weight"),
     (model.fc2, "weight"), (model.fc3, "weight")],
    pruning_method=prune.L1Unstructured, amount=0.5)
rng = np.random.default_rng(5)
x = torch.from_numpy(rng.normal(size=(16, 1, 32, 32)).astype(np.float32))
y = torch.from_numpy(rng.integers(0, 10, 16))
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
losses = []
for step in range(8):
    opt.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    losses.append(loss.item())
show("finetune_losses", losses)
show("orig_grad_zero_where_masked",
     float(torch.all(model.fc1.weight_orig.grad[model.fc1.weight_mask == 0] == 0)))
show("fc2_grad_head", model.fc2.weight_orig.grad[0, :6])
with torch.no_grad():
    out = model(x)
show("still_sparse", float((model.fc1.weight == 0).sum()))
show("finetuned_logits", out[:2])
for m in (model.conv1, model.conv2, model.fc1, model.fc2, model.fc3):
    prune.remove(m, "weight")
show("is_pruned_after_remove", float(prune.is_pruned(model)))
show("state_dict_after_remove:" + ",".join(model.state_dict().keys()), len(model.state_dict()))

# ---- custom_from_mask, importance_scores, random_structured, identity
lin = nn.Linear(4, 3)
numpy_init(torch, lin, seed=6)
prune.custom_from_mask(lin, name="weight", mask=torch.tensor([[1, 0, 1, 0], [0, 1, 1, 0],
                                                             [1, 1, 1, 1]]))
show("custom_mask_weight", lin.weight)
show("is_pruned", float(prune.is_pruned(lin)))
scores = torch.arange(12, dtype=torch.float32).reshape(3, 4)
prune.l1_unstructured(lin, name="weight", amount=0.5, importance_scores=scores)
show("importance_mask", lin.weight_mask)
prune.identity(lin, "bias")
show("identity_bias_mask", lin.bias_mask)
conv = nn.Conv2d(2, 8, 3)
numpy_init(torch, conv, seed=7)
prune.random_structured(conv, "weight", amount=0.25, dim=0)
show("random_structured_dead_channels",
     float((conv.weight.abs().sum(dim=(1, 2, 3)) == 0).sum()))
prune.remove(conv, "weight")
show("random_structured_removed:" + names(conv.named_parameters()), 2)
