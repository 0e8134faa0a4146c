"""Weight averaging as the PyTorch "Stochastic Weight Averaging" blog/recipe and timm-style
EMA training write it: ``AveragedModel`` for SWA (started part-way, with ``SWALR`` after a
CosineAnnealingLR phase) and for EMA (``get_ema_multi_avg_fn``, ``use_buffers=True``), then
``update_bn`` over the loader, and the averaged models evaluated and saved.

    python swa_ema.py [torch|numbagrad]
"""
import numpy as np

from _common import BACKEND, numpy_init, show

if BACKEND == "torch":
    import torch
    import torch.nn as nn
    from torch.optim.swa_utils import SWALR, AveragedModel, get_ema_multi_avg_fn, update_bn
    from torch.utils.data import DataLoader, TensorDataset
else:
    import numbagrad as torch
    import numbagrad.nn as nn
    from numbagrad.optim.swa_utils import SWALR, AveragedModel, get_ema_multi_avg_fn, update_bn
    from numbagrad.utils.data import DataLoader, TensorDataset

rng = np.random.default_rng(0)
X = rng.normal(size=(48, 6)).astype(np.float32)
y = (X[:, 0] * X[:, 1] + np.sin(X[:, 2]) > 0).astype(np.int64)
loader = DataLoader(TensorDataset(torch.from_numpy(X), torch.from_numpy(y)), batch_size=12)
X_test = torch.from_numpy(rng.normal(size=(20, 6)).astype(np.float32))


def make_model():
    model = nn.Sequential(nn.Linear(6, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 2))
    numpy_init(torch, model)
    return model


model = make_model()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
loss_fn = nn.CrossEntropyLoss()
swa_model = AveragedModel(model)
ema_model = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.9), use_buffers=True)
scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=10)
swa_start = 4
swa_scheduler = SWALR(optimizer, swa_lr=0.05, anneal_epochs=2, anneal_strategy='linear')
show('swa_initial_lr', optimizer.param_groups[0]['lr'])
losses, lrs = [], []
for epoch in range(8):
    model.train()
    for input, target in loader:
        optimizer.zero_grad()
        loss = loss_fn(model(input), target)
        loss.backward()
        optimizer.step()
        ema_model.update_parameters(model)
        losses.append(loss.item())
    if epoch > swa_start:
        swa_model.update_parameters(model)
        swa_scheduler.step()
    else:
        scheduler.step()
    lrs.append(optimizer.param_groups[0]['lr'])
show('losses', losses)
show('lrs', lrs)
show('n_averaged', [swa_model.n_averaged, ema_model.n_averaged])

# Update bn statistics for the swa_model at the end
update_bn(loader, swa_model)
bn = swa_model.module[1]
show('swa_bn_mean', bn.running_mean)
show('swa_bn_var', bn.running_var)
show('swa_bn_momentum', bn.momentum)
show('ema_bn_mean', ema_model.module[1].running_mean)
show('ema_batches', ema_model.module[1].num_batches_tracked)
show('swa_weight', swa_model.module[0].weight[:2])
show('ema_weight', ema_model.module[3].weight)

model.eval()
swa_model.eval()
ema_model.eval()
with torch.no_grad():
    show('preds', [model(X_test).argmax(1), swa_model(X_test).argmax(1), ema_model(X_test).argmax(1)])
    show('swa_logits', swa_model(X_test[:3]))
print(*list(swa_model.state_dict())[:3], sep='\n')
show('state_keys', [len(swa_model.state_dict()), int('n_averaged' in swa_model.state_dict()),
                    int('module.0.weight' in swa_model.state_dict())])
sd = swa_scheduler.state_dict()
show('swalr_state', [sd['anneal_epochs'], sd['last_epoch'], sd['_step_count']])

# the per-tensor averaging function form (an EMA written by hand)
ema2 = AveragedModel(model, avg_fn=lambda avg, new, num: 0.5 * avg + 0.5 * new)
for scale in (2.0, 4.0):
    with torch.no_grad():
        shifted = make_model()
        for p in shifted.parameters():
            p.mul_(scale)
    ema2.update_parameters(shifted)
show('avg_fn', ema2.module[3].bias)
