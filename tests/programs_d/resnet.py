"""A small ResNet as in d2l "Residual Networks (ResNet)" and the PyTorch ResNet code:
a residual block with a 1x1 projection shortcut, AdaptiveAvgPool2d, initialisation through
``model.apply(init_fn)`` (kaiming_normal_, constant_, zeros_), SGD (Nesterov) with CosineAnnealingLR,
gradient clipping with ``clip_grad_norm_``, and ``torchsummary``-style shape tracing.

    python resnet.py [torch|numbagrad]
"""
import numpy as np

from _common import BACKEND, numpy_init, show

if BACKEND == "torch":
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
else:
    import numbagrad as torch
    import numbagrad.nn as nn
    import numbagrad.nn.functional as F


class Residual(nn.Module):
    """The Residual block of ResNet models."""
    def __init__(self, in_channels, num_channels, use_1x1conv=False, strides=1):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, num_channels, kernel_size=3, padding=1, stride=strides)
        self.conv2 = nn.Conv2d(num_channels, num_channels, kernel_size=3, padding=1)
        if use_1x1conv:
            self.conv3 = nn.Conv2d(in_channels, num_channels, kernel_size=1, stride=strides)
        else:
            self.conv3 = None
        self.bn1 = nn.BatchNorm2d(num_channels)
        self.bn2 = nn.BatchNorm2d(num_channels)

    def forward(self, X):
        Y = F.relu(self.bn1(self.conv1(X)))
        Y = self.bn2(self.conv2(Y))
        if self.conv3:
            X = self.conv3(X)
        Y += X
        return F.relu(Y)


def resnet_block(in_channels, num_channels, num_residuals, first_block=False):
    blk = []
    for i in range(num_residuals):
        if i == 0 and not first_block:
            blk.append(Residual(in_channels, num_channels, use_1x1conv=True, strides=2))
        else:
            blk.append(Residual(num_channels, num_channels))
    return blk


b1 = nn.Sequential(nn.Conv2d(1, 8, kernel_size=7, stride=2, padding=3),
                   nn.BatchNorm2d(8), nn.ReLU(),
                   nn.MaxPool2d(kernel_size=3, stride=2, padding=1))
b2 = nn.Sequential(*resnet_block(8, 8, 2, first_block=True))
b3 = nn.Sequential(*resnet_block(8, 16, 2))
net = nn.Sequential(b1, b2, b3, nn.AdaptiveAvgPool2d((1, 1)), nn.Flatten(), nn.Linear(16, 10))

X = torch.rand(size=(1, 1, 32, 32))
for layer in net:
    X = layer(X)
    print(layer.__class__.__name__, 'output shape:\t', X.shape)

blk = Residual(3, 6, use_1x1conv=True, strides=2)
print('block', *blk(torch.rand(4, 3, 6, 6)).shape)


def init_weights(m):
    if isinstance(m, nn.Conv2d):
        nn.init.kaiming_normal_(m.weight, mode='fan_out', nonlinearity='relu')
        if m.bias is not None:
            nn.init.zeros_(m.bias)
    elif isinstance(m, nn.BatchNorm2d):
        nn.init.constant_(m.weight, 1)
        nn.init.constant_(m.bias, 0)
    elif isinstance(m, nn.Linear):
        nn.init.normal_(m.weight, 0, 0.01)
        nn.init.zeros_(m.bias)


net.apply(init_weights)
w = net[0][0].weight
# kaiming_normal_(fan_out, relu): std = sqrt(2 / (out_channels * 7 * 7))
show('kaiming_std_ok', abs(w.std().item() / (2 / (8 * 49)) ** 0.5 - 1) < 0.2)
show('init_zero_bias', [m.bias.abs().sum().item() for m in net.modules() if isinstance(m, nn.Conv2d)])
show('init_bn', [net[1][0].bn1.weight.sum().item(), net[1][0].bn1.bias.sum().item()])
numpy_init(torch, net, seed=1)
for m in net.modules():  # (the shape trace above ran in training mode)
    if isinstance(m, nn.BatchNorm2d):
        m.reset_running_stats()

rng = np.random.default_rng(0)
X = torch.from_numpy(rng.normal(size=(24, 1, 32, 32)).astype(np.float32))
y = torch.from_numpy(rng.integers(0, 10, 24))
# (SGD: the conv biases before BatchNorm get gradients of rounding noise only, which Adam
# would blow up to full steps)
optimizer = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-4)
num_epochs = 6
scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=num_epochs, eta_min=1e-3)
loss_fn = nn.CrossEntropyLoss(label_smoothing=0.1)
losses, norms, lrs = [], [], []
for epoch in range(num_epochs):
    net.train()
    for i in range(0, 24, 12):
        optimizer.zero_grad()
        l = loss_fn(net(X[i:i + 12]), y[i:i + 12])
        l.backward()
        norms.append(nn.utils.clip_grad_norm_(net.parameters(), max_norm=1.0).item())
        optimizer.step()
        losses.append(l.item())
    scheduler.step()
    lrs.append(scheduler.get_last_lr()[0])
show('losses', losses)
show('grad_norms', norms)
show('lrs', lrs)
show('clipped_norm', torch.norm(torch.stack([p.grad.norm() for p in net.parameters()])))
net.eval()
with torch.no_grad():
    logits = net(X[:6])
show('eval_logits', logits)
show('probs', F.softmax(logits, dim=-1).max(dim=1).values)
show('bn_stats', net[2][0].bn2.running_var)
