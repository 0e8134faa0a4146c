"""Transfer learning as the "Finetuning Torchvision Models" tutorial and fast.ai courses do it,
on a small stand-in backbone: freeze the feature extractor (``requires_grad_(False)`` /
``param.requires_grad = False``), replace the head, optimise only what trains, discriminative
learning rates through parameter groups, ``add_param_group`` when unfreezing, and the module
introspection around it (children, named_modules, named_parameters, ModuleList, ModuleDict,
register_buffer, state_dict keys, load_state_dict(strict=False)).

    python finetune.py [torch|numbagrad]
"""
import copy

import numpy as np

from _common import BACKEND, numpy_init, show

if BACKEND == "torch":
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    import torch.optim as optim
else:
    import numbagrad as torch
    import numbagrad.nn as nn
    import numbagrad.nn.functional as F
    import numbagrad.optim as optim


class Backbone(nn.Module):
    """A stand-in for a pretrained network: stages in a ModuleList, a normalisation buffer."""
    def __init__(self):
        super().__init__()
        self.register_buffer('mean', torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1))
        self.register_buffer('std', torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1))
        self.register_buffer('calls', torch.zeros((), dtype=torch.long), persistent=False)
        self.stages = nn.ModuleList([
            nn.Sequential(nn.Conv2d(3, 6, 3, padding=1), nn.BatchNorm2d(6), nn.ReLU()),
            nn.Sequential(nn.Conv2d(6, 8, 3, stride=2, padding=1), nn.BatchNorm2d(8), nn.ReLU()),
        ])
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(8, 5)

    def forward(self, x):
        self.calls += 1
        x = (x - self.mean) / self.std
        for stage in self.stages:
            x = stage(x)
        return self.fc(torch.flatten(self.pool(x), 1))


class MultiHead(nn.Module):
    def __init__(self, backbone, tasks):
        super().__init__()
        self.backbone = backbone
        self.heads = nn.ModuleDict({name: nn.Linear(8, n) for name, n in tasks.items()})

    def forward(self, x, task):
        feats = self.backbone(x)
        return self.heads[task](feats)


def set_parameter_requires_grad(model, feature_extracting):
    if feature_extracting:
        for param in model.parameters():
            param.requires_grad = False


model = Backbone()
numpy_init(torch, model)
print(model)
show('buffers', [len(list(model.buffers())), len(model.state_dict()),
                 int('calls' in model.state_dict()), int('mean' in model.state_dict())])
for name, module in model.named_children():
    print('child', name, type(module).__name__)
show('n_modules', len(list(model.named_modules())))

# feature extraction: freeze everything, reshape the head
set_parameter_requires_grad(model, True)
num_ftrs = model.fc.in_features
model.fc = nn.Linear(num_ftrs, 3)
numpy_init(torch, model.fc, seed=1)
params_to_update = []
for name, param in model.named_parameters():
    if param.requires_grad:
        params_to_update.append(param)
        print("\t", name)
show('n_trainable', [len(params_to_update), sum(p.numel() for p in params_to_update)])
optimizer_ft = optim.SGD(params_to_update, lr=0.1, momentum=0.9)

rng = np.random.default_rng(0)
inputs = torch.from_numpy(rng.uniform(size=(12, 3, 8, 8)).astype(np.float32))
labels = torch.from_numpy(rng.integers(0, 3, 12))
criterion = nn.CrossEntropyLoss()
frozen_before = model.stages[0][0].weight.clone()
losses = []
for step in range(4):
    model.train()
    optimizer_ft.zero_grad()
    outputs = model(inputs)
    loss = criterion(outputs, labels)
    _, preds = torch.max(outputs, 1)
    loss.backward()
    optimizer_ft.step()
    losses.append(loss.item())
show('feature_extract_losses', losses)
show('frozen_unchanged', [int(torch.equal(frozen_before, model.stages[0][0].weight)),
                          int(model.stages[0][0].weight.grad is None)])
show('bn_still_tracks', model.stages[0][1].running_mean)
show('calls', model.calls)

# unfreeze the last stage with a smaller learning rate
model.stages[1].requires_grad_(True)
optimizer_ft.add_param_group({'params': model.stages[1].parameters(), 'lr': 0.01})
show('groups', [len(optimizer_ft.param_groups), optimizer_ft.param_groups[1]['lr'],
                optimizer_ft.param_groups[1]['momentum']])
for step in range(3):
    optimizer_ft.zero_grad()
    loss = criterion(model(inputs), labels)
    loss.backward()
    optimizer_ft.step()
    losses.append(loss.item())
show('unfrozen_losses', losses[4:])
show('stage1_grad', model.stages[1][0].weight.grad.norm())

# discriminative learning rates, by name
backbone_params = [p for n, p in model.named_parameters() if not n.startswith('fc.')]
model.requires_grad_(True)
optimizer = optim.Adam([
    {'params': backbone_params, 'lr': 1e-3},
    {'params': model.fc.parameters()},
], lr=1e-2, weight_decay=1e-4)
scheduler = optim.lr_scheduler.LambdaLR(optimizer, lr_lambda=[lambda e: 0.5 ** e, lambda e: 1.0 / (e + 1)])
lrs = []
for epoch in range(3):
    optimizer.zero_grad()
    F.cross_entropy(model(inputs), labels).backward()
    optimizer.step()
    scheduler.step()
    lrs += [g['lr'] for g in optimizer.param_groups]
show('group_lrs', lrs)
show('after_adam', model.fc.weight)
sd = optimizer.state_dict()
show('opt_state', [len(sd['state']), len(sd['param_groups']), len(sd['param_groups'][0]['params'])])

# multi-task heads on a shared backbone; loading a checkpoint without the heads
features = copy.deepcopy(model)
features.fc = nn.Identity()
multi = MultiHead(features, {'color': 4, 'shape': 2})
numpy_init(torch, multi.heads, seed=2)
out_color, out_shape = multi(inputs[:2], 'color'), multi(inputs[:2], 'shape')
show('heads', list(out_color.shape) + list(out_shape.shape))
for k in multi.state_dict():
    print(f'key {k} | 1')
fresh = MultiHead(Backbone(), {'color': 4, 'shape': 2})
fresh.backbone.fc = nn.Identity()
result = fresh.load_state_dict({k: v for k, v in multi.state_dict().items()
                                if not k.startswith('heads.')}, strict=False)
show('missing', len(result.missing_keys))
print('missing', *result.missing_keys)
fresh.eval()
multi.eval()
show('transfer_equal', int(torch.allclose(fresh.backbone(inputs), multi.backbone(inputs))))
show('heads_keys', [len(multi.heads), int('color' in multi.heads)])
show('deepcopy_independent', int(features.stages[0][0].weight is not model.stages[0][0].weight))
show('first_layer', [m.out_channels for m in model.modules() if isinstance(m, nn.Conv2d)])
