"""Stevens, Antiga & Viehmann, "Deep Learning with PyTorch", chapter 8 ("Using convolutions to
generalize") on generated 32x32 "birds vs airplanes": ``nn.Conv2d(3, 16, kernel_size=3)`` and its
shapes, a blur kernel set by ``conv.weight.fill_(1.0 / 9.0)`` and an edge detector written into
``conv.weight[:] = torch.tensor(...)`` under ``torch.no_grad()``, ``nn.MaxPool2d(2)``; the
Sequential model that fails without a view, ``Net`` with ``torch.tanh``/``F.max_pool2d`` and
``out.view(-1, 8 * 8 * 8)``; ``training_loop`` printing ``datetime.datetime.now()``, ``validate``
with ``torch.max(outputs, dim=1)`` and ``int((predicted == labels).sum())``; the L2-regularised
loop ``sum(p.pow(2.0).sum() for p in model.parameters())``; NetWidth, NetDropout
(``nn.Dropout2d``), NetBatchNorm (``nn.BatchNorm2d`` in train and eval mode); and NetResDeep whose
``nn.Sequential(*(n_blocks * [ResBlock(n_chans=n_chans1)]))`` repeats one block (so one set of
parameters and running statistics updated ten times a forward), with ``kaiming_normal_(...,
nonlinearity='relu')``, ``constant_(batch_norm.weight, 0.5)`` and ``zeros_``; parameter counts by
``numel``; a state dict saved and loaded back.

    python dlwpt_convnets.py [torch|numbagrad]
"""
import datetime
import os
import tempfile

import numpy as np

from _common import BACKEND, numpy_init, show

if BACKEND == "torch":
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    import torch.optim as optim
    from torch.utils.data import DataLoader, TensorDataset
else:
    import numbagrad as torch
    import numbagrad.nn as nn
    import numbagrad.nn.functional as F
    import numbagrad.optim as optim
    from numbagrad.utils.data import DataLoader, TensorDataset

rng = np.random.default_rng(8)
device = (torch.device('cuda') if torch.cuda.is_available() else torch.device('cpu'))
device = torch.device('cpu')  # (compared on the CPU)


def make_cifar2(n):
    """Airplanes: a bright sky with a dark horizontal bar; birds: green-brown with a blob."""
    labels = rng.integers(0, 2, n)
    imgs = rng.normal(0, 0.3, (n, 3, 32, 32)).astype(np.float32)
    for i, lab in enumerate(labels):
        r = int(rng.integers(6, 24))
        if lab == 0:
            imgs[i, 2] += 1.0
            imgs[i, :, r:r + 3, 4:28] -= 1.5
        else:
            imgs[i, 1] += 0.6
            imgs[i, :, r:r + 6, r - 4:r + 2] += 1.2
    return TensorDataset(torch.from_numpy(imgs), torch.from_numpy(labels))


cifar2 = make_cifar2(64)
cifar2_val = make_cifar2(32)
img, label = cifar2[0]

conv = nn.Conv2d(3, 16, kernel_size=3)  # <1>
print(conv)
show("conv_weight_bias_shapes", [list(conv.weight.shape), list(conv.bias.shape)])
numpy_init(torch, conv, seed=0)
output = conv(img.unsqueeze(0))
show("conv_in_out_shapes", [list(img.unsqueeze(0).shape), list(output.shape)])

conv = nn.Conv2d(3, 1, kernel_size=3, padding=1)  # <1>
output = conv(img.unsqueeze(0))
show("padded_shape", list(output.shape))

with torch.no_grad():
    conv.bias.zero_()

with torch.no_grad():
    conv.weight.fill_(1.0 / 9.0)
output = conv(img.unsqueeze(0))
show("blurred_corner", output[0, 0, :2, :4])

conv = nn.Conv2d(3, 1, kernel_size=3, padding=1)

with torch.no_grad():
    conv.weight[:] = torch.tensor([[-1.0, 0.0, 1.0],
                                   [-1.0, 0.0, 1.0],
                                   [-1.0, 0.0, 1.0]])
    conv.bias.zero_()
output = conv(img.unsqueeze(0))
show("edges_row", output[0, 0, 8, :6])

pool = nn.MaxPool2d(2)
output = pool(img.unsqueeze(0))
show("pooled_shape", list(output.shape))

model = nn.Sequential(
    nn.Conv2d(3, 16, kernel_size=3, padding=1),
    nn.Tanh(),
    nn.MaxPool2d(2),
    nn.Conv2d(16, 8, kernel_size=3, padding=1),
    nn.Tanh(),
    nn.MaxPool2d(2),
    # ...
    nn.Linear(512, 32),
    nn.Tanh(),
    nn.Linear(32, 2))
numel_list = [p.numel() for p in model.parameters()]
show("sequential_numel", [sum(numel_list)] + numel_list)
try:
    model(img.unsqueeze(0))
    show("sequential_without_view_fails", 0.0)
except RuntimeError as e:
    print("RuntimeError:", str(e).splitlines()[0][:20])
    show("sequential_without_view_fails", 1.0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, kernel_size=3, padding=1)
        self.conv2 = nn.Conv2d(16, 8, kernel_size=3, padding=1)
        self.fc1 = nn.Linear(8 * 8 * 8, 32)
        self.fc2 = nn.Linear(32, 2)

    def forward(self, x):
        out = F.max_pool2d(torch.tanh(self.conv1(x)), 2)
        out = F.max_pool2d(torch.tanh(self.conv2(out)), 2)
        out = out.view(-1, 8 * 8 * 8)  # <1>
        out = torch.tanh(self.fc1(out))
        out = self.fc2(out)
        return out


def training_loop(n_epochs, optimizer, model, loss_fn, train_loader):
    history = []
    for epoch in range(1, n_epochs + 1):  # <2>
        loss_train = 0.0
        for imgs, labels in train_loader:  # <3>
            imgs = imgs.to(device=device)
            labels = labels.to(device=device)
            outputs = model(imgs)  # <4>

            loss = loss_fn(outputs, labels)  # <5>

            optimizer.zero_grad()  # <6>

            loss.backward()  # <7>

            optimizer.step()  # <8>

            loss_train += loss.item()  # <9>

        print('{} Epoch {}, Training loss {}'.format(
            datetime.datetime.now(), epoch,
            loss_train / len(train_loader)))  # <10>
        history.append(loss_train / len(train_loader))
    return history


def training_loop_l2reg(n_epochs, optimizer, model, loss_fn, train_loader):
    history = []
    for epoch in range(1, n_epochs + 1):
        loss_train = 0.0
        for imgs, labels in train_loader:
            imgs = imgs.to(device=device)
            labels = labels.to(device=device)
            outputs = model(imgs)
            loss = loss_fn(outputs, labels)

            l2_lambda = 0.001
            l2_norm = sum(p.pow(2.0).sum()
                          for p in model.parameters())  # <1>
            loss = loss + l2_lambda * l2_norm

            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

            loss_train += loss.item()
        history.append(loss_train / len(train_loader))
    return history


def validate(model, train_loader, val_loader):
    accdict = {}
    for name, loader in [("train", train_loader), ("val", val_loader)]:
        correct = 0
        total = 0

        with torch.no_grad():  # <1>
            for imgs, labels in loader:
                imgs = imgs.to(device=device)
                labels = labels.to(device=device)
                outputs = model(imgs)
                _, predicted = torch.max(outputs, dim=1)  # <2>
                total += labels.shape[0]  # <3>
                correct += int((predicted == labels).sum())  # <4>

        print("Accuracy {}: {:.2f}".format(name, correct / total))
        accdict[name] = correct / total
    return accdict


train_loader = DataLoader(cifar2, batch_size=16, shuffle=False)  # (the book shuffles)
val_loader = DataLoader(cifar2_val, batch_size=16, shuffle=False)

model = Net().to(device=device)
numpy_init(torch, model, seed=1)
show("net_numel", sum(p.numel() for p in model.parameters()))
show("net_output", model(img.unsqueeze(0)))
optimizer = optim.SGD(model.parameters(), lr=1e-2)  # <3>
loss_fn = nn.CrossEntropyLoss()  # <4>
show("net_history", training_loop(n_epochs=4, optimizer=optimizer, model=model, loss_fn=loss_fn,
                                   train_loader=train_loader))
all_acc_dict = {"baseline": validate(model, train_loader, val_loader)}
show("net_accuracy", [all_acc_dict["baseline"]["train"], all_acc_dict["baseline"]["val"]])

with tempfile.TemporaryDirectory() as tmp:
    torch.save(model.state_dict(), os.path.join(tmp, 'birds_vs_airplanes.pt'))
    loaded_model = Net().to(device=device)
    loaded_model.load_state_dict(torch.load(os.path.join(tmp, 'birds_vs_airplanes.pt'), map_location=device))
    show("loaded_output_same", float(torch.equal(loaded_model(img.unsqueeze(0)), model(img.unsqueeze(0)))))

model = Net().to(device=device)
numpy_init(torch, model, seed=1)
optimizer = optim.SGD(model.parameters(), lr=1e-2)
show("l2reg_history", training_loop_l2reg(n_epochs=3, optimizer=optimizer, model=model, loss_fn=loss_fn,
                                          train_loader=train_loader))


class NetWidth(nn.Module):
    def __init__(self, n_chans1=32):
        super().__init__()
        self.n_chans1 = n_chans1
        self.conv1 = nn.Conv2d(3, n_chans1, kernel_size=3, padding=1)
        self.conv2 = nn.Conv2d(n_chans1, n_chans1 // 2, kernel_size=3, padding=1)
        self.fc1 = nn.Linear(8 * 8 * n_chans1 // 2, 32)
        self.fc2 = nn.Linear(32, 2)

    def forward(self, x):
        out = F.max_pool2d(torch.tanh(self.conv1(x)), 2)
        out = F.max_pool2d(torch.tanh(self.conv2(out)), 2)
        out = out.view(-1, 8 * 8 * self.n_chans1 // 2)
        out = torch.tanh(self.fc1(out))
        out = self.fc2(out)
        return out


model = NetWidth(n_chans1=16).to(device=device)
numpy_init(torch, model, seed=2)
show("netwidth_numel", sum(p.numel() for p in model.parameters()))
optimizer = optim.SGD(model.parameters(), lr=1e-2)
show("netwidth_history", training_loop(2, optimizer, model, loss_fn, train_loader))


class NetDropout(nn.Module):
    def __init__(self, n_chans1=32):
        super().__init__()
        self.n_chans1 = n_chans1
        self.conv1 = nn.Conv2d(3, n_chans1, kernel_size=3, padding=1)
        self.conv1_dropout = nn.Dropout2d(p=0.4)
        self.conv2 = nn.Conv2d(n_chans1, n_chans1 // 2, kernel_size=3, padding=1)
        self.conv2_dropout = nn.Dropout2d(p=0.4)
        self.fc1 = nn.Linear(8 * 8 * n_chans1 // 2, 32)
        self.fc2 = nn.Linear(32, 2)

    def forward(self, x):
        out = F.max_pool2d(torch.tanh(self.conv1(x)), 2)
        out = self.conv1_dropout(out)
        out = F.max_pool2d(torch.tanh(self.conv2(out)), 2)
        out = self.conv2_dropout(out)
        out = out.view(-1, 8 * 8 * self.n_chans1 // 2)
        out = torch.tanh(self.fc1(out))
        out = self.fc2(out)
        return out


model = NetDropout(n_chans1=16).to(device=device)
numpy_init(torch, model, seed=2)
model.eval()
show("netdropout_eval_output", model(img.unsqueeze(0)))
model.train()
optimizer = optim.SGD(model.parameters(), lr=1e-2)
show("~netdropout_history", training_loop(3, optimizer, model, loss_fn, train_loader))
# Dropout2d zeroes whole channels
out = model.conv1_dropout(torch.ones(4, 16, 5, 5))
per_channel = out.view(4, 16, -1)
show("dropout2d_whole_channels", float(bool((per_channel.min(-1).values == per_channel.max(-1).values).all())))


class NetBatchNorm(nn.Module):
    def __init__(self, n_chans1=32):
        super().__init__()
        self.n_chans1 = n_chans1
        self.conv1 = nn.Conv2d(3, n_chans1, kernel_size=3, padding=1)
        self.conv1_batchnorm = nn.BatchNorm2d(num_features=n_chans1)
        self.conv2 = nn.Conv2d(n_chans1, n_chans1 // 2, kernel_size=3, padding=1)
        self.conv2_batchnorm = nn.BatchNorm2d(num_features=n_chans1 // 2)
        self.fc1 = nn.Linear(8 * 8 * n_chans1 // 2, 32)
        self.fc2 = nn.Linear(32, 2)

    def forward(self, x):
        out = self.conv1_batchnorm(self.conv1(x))
        out = F.max_pool2d(torch.tanh(out), 2)
        out = self.conv2_batchnorm(self.conv2(out))
        out = F.max_pool2d(torch.tanh(out), 2)
        out = out.view(-1, 8 * 8 * self.n_chans1 // 2)
        out = torch.tanh(self.fc1(out))
        out = self.fc2(out)
        return out


model = NetBatchNorm(n_chans1=16).to(device=device)
numpy_init(torch, model, seed=3)
optimizer = optim.SGD(model.parameters(), lr=1e-2)
show("netbatchnorm_history", training_loop(3, optimizer, model, loss_fn, train_loader))
show("netbatchnorm_running_var", model.conv2_batchnorm.running_var[:4])
acc = validate(model, train_loader, val_loader)
show("netbatchnorm_accuracy", [acc["train"], acc["val"]])


class ResBlock(nn.Module):
    def __init__(self, n_chans):
        super(ResBlock, self).__init__()
        self.conv = nn.Conv2d(n_chans, n_chans, kernel_size=3,
                              padding=1, bias=False)  # <1>
        self.batch_norm = nn.BatchNorm2d(num_features=n_chans)
        torch.nn.init.kaiming_normal_(self.conv.weight,
                                      nonlinearity='relu')  # <2>
        torch.nn.init.constant_(self.batch_norm.weight, 0.5)
        torch.nn.init.zeros_(self.batch_norm.bias)

    def forward(self, x):
        out = self.conv(x)
        out = self.batch_norm(out)
        out = torch.relu(out)
        return out + x


class NetResDeep(nn.Module):
    def __init__(self, n_chans1=32, n_blocks=10):
        super().__init__()
        self.n_chans1 = n_chans1
        self.conv1 = nn.Conv2d(3, n_chans1, kernel_size=3, padding=1)
        self.resblocks = nn.Sequential(
            *(n_blocks * [ResBlock(n_chans=n_chans1)]))
        self.fc1 = nn.Linear(8 * 8 * n_chans1, 32)
        self.fc2 = nn.Linear(32, 2)

    def forward(self, x):
        out = F.max_pool2d(torch.relu(self.conv1(x)), 2)
        out = self.resblocks(out)
        out = F.max_pool2d(out, 2)
        out = out.view(-1, 8 * 8 * self.n_chans1)
        out = torch.relu(self.fc1(out))
        out = self.fc2(out)
        return out


model = NetResDeep(n_chans1=16, n_blocks=10).to(device=device)
# kaiming_normal_ draws from each library's generator: its spread is checked, then NumPy weights
w = model.resblocks[0].conv.weight
show("kaiming_std_close", float(abs(w.std().item() - (2.0 / (16 * 9)) ** 0.5) < 0.02))
show("bn_weight_constant", model.resblocks[3].batch_norm.weight[:3])
show("resblocks_shared", float(model.resblocks[0] is model.resblocks[9]))
show("resdeep_named_parameters", len(list(model.named_parameters())))
show("resdeep_state_dict_keys", len(model.state_dict()))
numpy_init(torch, model, seed=4)
show("resdeep_numel", sum(p.numel() for p in model.parameters()))
optimizer = optim.SGD(model.parameters(), lr=3e-3)
show("resdeep_history", training_loop(2, optimizer, model, loss_fn, train_loader))
show("resdeep_batches_tracked", model.resblocks[0].batch_norm.num_batches_tracked)
show("resdeep_running_mean", model.resblocks[5].batch_norm.running_mean[:4])
acc = validate(model.eval(), train_loader, val_loader)
show("resdeep_accuracy", [acc["train"], acc["val"]])
