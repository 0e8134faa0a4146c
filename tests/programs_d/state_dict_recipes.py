"""PyTorch recipes on state_dicts: "What is a state_dict" (a small CNN's state_dict keys and
shapes, ``optimizer.state_dict()`` with its 'state' and 'param_groups'), "Saving and loading a
general checkpoint" (epoch/model/optimizer/loss in one dict, resumed after model.eval() and
model.train()), "Warmstarting a model using parameters from a different model"
(load_state_dict(strict=False) and its missing/unexpected keys, keys renamed to match),
"Saving and loading multiple models in one file", and "Zeroing out gradients"
(optimizer.zero_grad() beside net.zero_grad(), set_to_none=False leaving zero tensors).

    python state_dict_recipes.py [torch|numbagrad]
"""
import os
import tempfile

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

rng = np.random.default_rng(3)


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(3, 4, 3)
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(4, 6, 3)
        self.fc1 = nn.Linear(6 * 2 * 2, 12)
        self.fc2 = nn.Linear(12, 8)
        self.fc3 = nn.Linear(8, 3)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = x.view(-1, 6 * 2 * 2)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x


inputs = torch.tensor(rng.standard_normal((4, 3, 14, 14)).astype(np.float32))
labels = torch.tensor(rng.integers(0, 3, 4))

net = Net()
numpy_init(torch, net, seed=1)
optimizer = optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
criterion = nn.CrossEntropyLoss()

print("Model's state_dict:")
for param_tensor in net.state_dict():
    print(param_tensor, "\t", list(net.state_dict()[param_tensor].size()))
print('model_keys', list(net.state_dict().keys()))
show('model_shapes', [list(v.size()) for v in net.state_dict().values()])

print("Optimizer's state_dict:")
for var_name in optimizer.state_dict():
    print(var_name, "\t", optimizer.state_dict()[var_name])
osd = optimizer.state_dict()
print('optim_keys', list(osd.keys()))
print('optim_group_keys', sorted(osd['param_groups'][0].keys()))
g = osd['param_groups'][0]
show('optim_group', [g['lr'], g['momentum'], g['dampening'], g['weight_decay'],
                     g['nesterov'], len(osd['state'])])
show('optim_params', g['params'])


def train_steps(net, optimizer, n):
    losses = []
    for _ in range(n):
        optimizer.zero_grad()
        loss = criterion(net(inputs), labels)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


show('train_losses', train_steps(net, optimizer, 5))
osd = optimizer.state_dict()
print('optim_state_keys', sorted(osd['state'].keys()), sorted(osd['state'][0].keys()))
show('optim_momentum0', osd['state'][0]['momentum_buffer'][0, 0])
show('optim_momentum9', osd['state'][9]['momentum_buffer'])

with tempfile.TemporaryDirectory() as tmp:
    # --- a general checkpoint ---
    PATH = os.path.join(tmp, 'model.pt')
    EPOCH, LOSS = 5, 0.4
    torch.save({
        'epoch': EPOCH,
        'model_state_dict': net.state_dict(),
        'optimizer_state_dict': optimizer.state_dict(),
        'loss': LOSS,
    }, PATH)

    model = Net()
    optimizer2 = optim.SGD(model.parameters(), lr=0.001, momentum=0.9)
    checkpoint = torch.load(PATH, weights_only=True)
    model.load_state_dict(checkpoint['model_state_dict'])
    optimizer2.load_state_dict(checkpoint['optimizer_state_dict'])
    epoch = checkpoint['epoch']
    loss = checkpoint['loss']
    print('checkpoint_keys', list(checkpoint.keys()))
    show('checkpoint_epoch_loss', [epoch, loss, optimizer2.param_groups[0]['lr']])
    model.eval()
    show('eval_flags', [model.training, model.conv1.training])
    with torch.no_grad():
        show('eval_out', model(inputs))
    model.train()
    show('train_flags', [model.training, model.fc3.training])
    show('resumed_losses', train_steps(model, optimizer2, 3))
    show('original_losses', train_steps(net, optimizer, 3))

    # --- warmstarting ---
    class NetA(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(5, 4)
            self.fc2 = nn.Linear(4, 2)

        def forward(self, x):
            return self.fc2(F.relu(self.fc1(x)))

    class NetB(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(5, 4)
            self.fc2 = nn.Linear(4, 2)
            self.fc3 = nn.Linear(2, 1)

        def forward(self, x):
            return self.fc3(self.fc2(F.relu(self.fc1(x))))

    netA = NetA()
    numpy_init(torch, netA, seed=2)
    netB = NetB()
    numpy_init(torch, netB, seed=3)
    PATH_A = os.path.join(tmp, 'netA.pt')
    torch.save(netA.state_dict(), PATH_A)
    result = netB.load_state_dict(torch.load(PATH_A, weights_only=True), strict=False)
    print('warm_missing', result.missing_keys)
    print('warm_unexpected', result.unexpected_keys)
    show('warm_counts', [len(result.missing_keys), len(result.unexpected_keys)])
    show('warm_fc1_equal', [torch.equal(netA.fc1.weight, netB.fc1.weight)])
    x5 = torch.tensor(rng.standard_normal((3, 5)).astype(np.float32))
    show('warm_out', netB(x5))

    result = netA.load_state_dict(netB.state_dict(), strict=False)
    print('warm_back_missing', result.missing_keys, 'unexpected', result.unexpected_keys)
    try:
        netA.load_state_dict(netB.state_dict())
        strict_error = False
    except RuntimeError:
        strict_error = True
    show('strict_error', [strict_error])

    renamed = {k.replace('fc', 'layer'): v for k, v in netA.state_dict().items()}
    print('renamed_keys', list(renamed.keys()))
    result = netB.load_state_dict(renamed, strict=False)
    print('renamed_missing', result.missing_keys)
    print('renamed_unexpected', result.unexpected_keys)
    fixed = {k.replace('layer', 'fc'): v for k, v in renamed.items()}
    result = netB.load_state_dict(fixed, strict=False)
    show('fixed_counts', [len(result.missing_keys), len(result.unexpected_keys)])

    # --- several models in one file ---
    PATH_AB = os.path.join(tmp, 'ab.pt')
    optimizerA = optim.SGD(netA.parameters(), lr=0.001, momentum=0.9)
    optimizerB = optim.Adam(netB.parameters(), lr=0.01)
    loss = netB(x5).pow(2).sum() + netA(x5).pow(2).sum()
    loss.backward()
    optimizerA.step()
    optimizerB.step()
    torch.save({
        'modelA_state_dict': netA.state_dict(),
        'modelB_state_dict': netB.state_dict(),
        'optimizerA_state_dict': optimizerA.state_dict(),
        'optimizerB_state_dict': optimizerB.state_dict(),
    }, PATH_AB)
    modelA, modelB = NetA(), NetB()
    optA = optim.SGD(modelA.parameters(), lr=0.001, momentum=0.9)
    optB = optim.Adam(modelB.parameters(), lr=0.01)
    checkpoint = torch.load(PATH_AB, weights_only=True)
    modelA.load_state_dict(checkpoint['modelA_state_dict'])
    modelB.load_state_dict(checkpoint['modelB_state_dict'])
    optA.load_state_dict(checkpoint['optimizerA_state_dict'])
    optB.load_state_dict(checkpoint['optimizerB_state_dict'])
    modelA.eval()
    modelB.eval()
    show('multi_out', [modelA(x5), modelB(x5)])
    bstate = optB.state_dict()['state'][0]
    print('adam_state_keys', sorted(bstate.keys()))
    show('adam_state', [float(bstate['step']), bstate['exp_avg'][0], bstate['exp_avg_sq'][0]])
    g = optB.state_dict()['param_groups'][0]
    show('adam_group', [g['lr'], *g['betas'], g['eps'], g['weight_decay'], g['amsgrad']])

# --- zeroing out gradients ---
net = Net()
numpy_init(torch, net, seed=4)
optimizer = optim.SGD(net.parameters(), lr=0.001, momentum=0.9)
show('grad_none_at_start', [p.grad is None for p in net.parameters()])
for epoch in range(2):
    running_loss = 0.0
    for i in range(2):
        optimizer.zero_grad()
        outputs = net(inputs[2 * i:2 * i + 2])
        loss = criterion(outputs, labels[2 * i:2 * i + 2])
        loss.backward()
        optimizer.step()
        running_loss += loss.item()
    show(f'zero_epoch{epoch}', running_loss)
show('grad_after_step', net.fc3.weight.grad)
optimizer.zero_grad()
show('optimizer_zero_grad_none', [p.grad is None for p in net.parameters()])
criterion(net(inputs), labels).backward()
net.zero_grad(set_to_none=False)
show('net_zero_grad_kept', [p.grad is not None and bool((p.grad == 0).all()) for p in net.parameters()])
criterion(net(inputs), labels).backward()
optimizer.zero_grad(set_to_none=False)
show('optimizer_zero_grad_kept', [p.grad is None for p in net.parameters()])
show('fc3_grad_zero', net.fc3.weight.grad)
net.zero_grad()
show('net_zero_grad_none', [p.grad is None for p in net.parameters()])
