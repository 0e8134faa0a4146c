"""PyTorch recipe "Saving and loading a general checkpoint", with gradient clipping: train,
save {'epoch', 'model_state_dict', 'optimizer_state_dict', 'loss'}, load it into a new model
and optimizer, and resume; the resumed run matches the uninterrupted one."""

import os

import common  # (tests/programs/common.py: the library chosen, the generated data)

if common.BACKEND == "torch":
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


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(3, 6, 5)
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = x.view(-1, 16 * 5 * 5)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x


# (CIFAR-10-shaped generated images)
images, labels = common.images(64, seed=3, shape=(3, 32, 32))
trainloader = DataLoader(TensorDataset(torch.from_numpy(images), torch.from_numpy(labels)),
                         batch_size=16, shuffle=False)
criterion = nn.CrossEntropyLoss()


def train_one_epoch(net, optimizer):
    running_loss = 0.0
    norms = []
    for i, data in enumerate(trainloader, 0):
        inputs, labels = data
        optimizer.zero_grad(set_to_none=True)
        outputs = net(inputs)
        loss = criterion(outputs, labels)
        if torch.isnan(loss) or not torch.isfinite(loss).all():
            raise RuntimeError(f"loss is {loss.item()} at step {i}")
        loss.backward()
        norms.append(torch.nn.utils.clip_grad_norm_(net.parameters(), max_norm=1.0).item())
        optimizer.step()
        running_loss += loss.item()
    return running_loss / len(trainloader), max(norms)


net = Net()
common.same(torch, net)
optimizer = optim.SGD(net.parameters(), lr=0.01, momentum=0.9)

for epoch in range(2):
    loss, norm = train_one_epoch(net, optimizer)
    print(f"epoch {epoch}: loss {loss:.6f} max grad norm {norm:.6f}")

EPOCH = epoch
PATH = "model.pt"
LOSS = loss

torch.save({
            'epoch': EPOCH,
            'model_state_dict': net.state_dict(),
            'optimizer_state_dict': optimizer.state_dict(),
            'loss': LOSS,
            }, PATH)
print(os.path.exists(PATH))

model = Net()
optimizer2 = optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

checkpoint = torch.load(PATH, weights_only=True)
model.load_state_dict(checkpoint['model_state_dict'])
optimizer2.load_state_dict(checkpoint['optimizer_state_dict'])
epoch = checkpoint['epoch']
loss = checkpoint['loss']
print(epoch, loss, sorted(checkpoint), sorted(checkpoint['optimizer_state_dict']))
print(checkpoint['optimizer_state_dict']['param_groups'][0]['lr'],
      checkpoint['optimizer_state_dict']['param_groups'][0]['params'])

model.eval()
with torch.no_grad():
    x = torch.from_numpy(images[:4])
    print(torch.equal(model(x), net(x)))
# - or -
model.train()

resumed, _ = train_one_epoch(model, optimizer2)
continued, _ = train_one_epoch(net, optimizer)
print(f"epoch {epoch + 1}: resumed {resumed:.6f} continued {continued:.6f} {resumed == continued}")

# Saving and loading the model for inference, and the whole model's state as tensors
torch.save(model.state_dict(), "weights.pt")
model3 = Net()
print(model3.load_state_dict(torch.load("weights.pt", weights_only=True)))
print(list(model3.state_dict().keys())[:4], model3.state_dict()['fc3.bias'].shape)
for name, grad in ((n, p.grad) for n, p in model.named_parameters()):
    print(name, tuple(grad.shape), grad.norm().item() > 0)
    break
optimizer2.zero_grad(set_to_none=True)
print(next(model.parameters()).grad)
