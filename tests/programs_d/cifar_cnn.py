"""A CIFAR-10 classifier as courses write it (d2l "Batch Normalization", the CS231n/fast.ai
"CNN with BatchNorm and Dropout" notebooks): Conv2d/BatchNorm2d/ReLU/MaxPool2d blocks, a
Dropout + Flatten head, SGD with momentum and weight decay, StepLR, train()/eval(), accuracy
under no_grad, and a state_dict save/load round trip; generated (N, 3, 32, 32) images.

    python cifar_cnn.py [torch|numbagrad]
"""
import os
import tempfile

import numpy as np

from _common import BACKEND, numpy_init, show

if BACKEND == "torch":
    import torch
    import torch.nn as nn
    import torch.optim as optim
    from torch.utils.data import DataLoader, TensorDataset
else:
    import numbagrad as torch
    import numbagrad.nn as nn
    import numbagrad.optim as optim
    from numbagrad.utils.data import DataLoader, TensorDataset

classes = ('plane', 'car', 'bird', 'cat', 'deer', 'dog', 'frog', 'horse', 'ship', 'truck')


def conv_block(in_channels, out_channels):
    return nn.Sequential(
        nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1, bias=False),
        nn.BatchNorm2d(out_channels),
        nn.ReLU(inplace=True),
        nn.MaxPool2d(2),
    )


class Net(nn.Module):
    def __init__(self, num_classes=10, p=0.0):
        super().__init__()
        self.features = nn.Sequential(conv_block(3, 8), conv_block(8, 16), conv_block(16, 16))
        self.classifier = nn.Sequential(
            nn.Flatten(),
            nn.Dropout(p),
            nn.Linear(16 * 4 * 4, 32),
            nn.ReLU(),
            nn.Linear(32, num_classes),
        )

    def forward(self, x):
        return self.classifier(self.features(x))


def make_data(n, seed):
    rng = np.random.default_rng(seed)
    templates = np.random.default_rng(99).normal(size=(10, 3, 32, 32)).astype(np.float32)
    labels = rng.integers(0, 10, n)
    x = 0.5 * templates[labels] + rng.normal(size=(n, 3, 32, 32)).astype(np.float32)
    return torch.from_numpy(x.astype(np.float32)), torch.from_numpy(labels)


def evaluate(model, loader, criterion):
    model.eval()
    correct, total, loss_sum = 0, 0, 0.0
    with torch.no_grad():
        for images, labels in loader:
            outputs = model(images)
            loss_sum += criterion(outputs, labels).item() * labels.size(0)
            _, predicted = torch.max(outputs.data, 1)
            total += labels.size(0)
            correct += (predicted == labels).sum().item()
    return loss_sum / total, 100 * correct / total


trainset = TensorDataset(*make_data(64, 0))
testset = TensorDataset(*make_data(32, 1))
trainloader = DataLoader(trainset, batch_size=16, shuffle=False)
testloader = DataLoader(testset, batch_size=16, shuffle=False)

net = Net()
numpy_init(torch, net)
print(net)
print(sum(p.numel() for p in net.parameters() if p.requires_grad))
criterion = nn.CrossEntropyLoss()
optimizer = optim.SGD(net.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4)
scheduler = optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.1)

show('initial', evaluate(net, testloader, criterion))
losses, lrs, train_acc = [], [], []
for epoch in range(3):
    net.train()
    correct = 0
    for i, (inputs, labels) in enumerate(trainloader):
        optimizer.zero_grad()
        outputs = net(inputs)
        loss = criterion(outputs, labels)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        correct += (outputs.argmax(1) == labels).type(torch.float).sum().item()
    train_acc.append(correct / len(trainset))
    scheduler.step()
    lrs.append(optimizer.param_groups[0]['lr'])
show('losses', losses)
show('train_acc', train_acc)
show('lrs', lrs)
show('test', evaluate(net, testloader, criterion))
bn = net.features[0][1]
show('bn_running_mean', bn.running_mean)
show('bn_running_var', bn.running_var)
show('bn_batches', bn.num_batches_tracked)
show('momentum_buf', optimizer.state[net.classifier[4].bias]['momentum_buffer'])

# per-class accuracy, as the CIFAR tutorial prints it
correct_pred = {classname: 0 for classname in classes}
total_pred = {classname: 0 for classname in classes}
with torch.no_grad():
    for images, labels in testloader:
        predictions = net(images).argmax(dim=1)
        for label, prediction in zip(labels, predictions):
            if label == prediction:
                correct_pred[classes[label]] += 1
            total_pred[classes[label]] += 1
show('per_class', [correct_pred[c] for c in classes] + [total_pred[c] for c in classes])

# save and load the weights
with tempfile.TemporaryDirectory() as tmp:
    PATH = os.path.join(tmp, 'cifar_net.pth')
    torch.save(net.state_dict(), PATH)
    net2 = Net()
    result = net2.load_state_dict(torch.load(PATH, weights_only=True))
    print('missing', len(result.missing_keys), len(result.unexpected_keys))
for k, v in net2.state_dict().items():
    print(f'key {k} {str(v.dtype).split(".")[-1]} {tuple(v.shape)} | {v.float().sum().item()}')
net2.eval()
x = testset[:4][0]
show('roundtrip', (net2(x) - net.eval()(x)).abs().max())

# dropout: identity under eval(), zeros or x / (1 - p) under train()
drop = nn.Dropout(p=0.5)
x = torch.ones(2000)
drop.eval()
show('dropout_eval', torch.equal(drop(x), x))
drop.train()
y = drop(x)
show('dropout_train', [bool(((y == 0) | (y == 2)).all()), abs(y.mean().item() - 1) < 0.15])
net3 = Net(p=0.5)
numpy_init(torch, net3)
net3.train()
out = net3(x.new_ones(2, 3, 32, 32))
print('~dropout_net', *out.detach().reshape(-1).tolist()[:3])
