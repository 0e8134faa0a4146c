"""A small binary classifier as courses write it: BCEWithLogitsLoss, manual minibatches over
torch.randperm with fancy indexing, sigmoid > 0.5 predictions, accuracy with torch.sum."""

import numpy as np

import common  # (tests/programs/common.py: the library chosen, the generated data)

if common.BACKEND == "torch":
    import torch
    import torch.nn as nn
else:
    import numbagrad as torch
    import numbagrad.nn as nn

torch.manual_seed(0)

# two interleaved half-moons
rng = np.random.default_rng(0)
n = 400
t = rng.uniform(0, np.pi, n)
label = rng.integers(0, 2, n)
pts = np.stack([np.cos(t) + label, np.sin(t) * (1 - 2 * label) + 0.5 * label], 1)
pts += 0.1 * rng.standard_normal((n, 2))

X = torch.from_numpy(pts).float()
y = torch.from_numpy(label).float()
print(X.shape, X.dtype, y.shape, y.dtype)


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(2, 32)
        self.fc2 = nn.Linear(32, 32)
        self.out = nn.Linear(32, 1)

    def forward(self, x):
        x = torch.relu(self.fc1(x))
        x = torch.tanh(self.fc2(x))
        return self.out(x)


model = Classifier()
common.same(torch, model)
criterion = nn.BCEWithLogitsLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)

with torch.no_grad():
    logits = model(X).squeeze(1)
    print(f"initial loss {criterion(logits, y).item():.6f}")
    print(f"weighted {nn.BCEWithLogitsLoss(pos_weight=torch.tensor([2.0]))(logits, y).item():.6f}")
    print(f"bce {nn.BCELoss()(torch.sigmoid(logits), y).item():.6f}")

print("-- shuffled from here --")
batch_size = 32
epochs = 20
losses = []
for epoch in range(epochs):
    perm = torch.randperm(X.size(0))
    epoch_loss = 0.0
    for i in range(0, X.size(0), batch_size):
        idx = perm[i:i + batch_size]
        xb, yb = X[idx], y[idx]
        logits = model(xb).squeeze(1)
        loss = criterion(logits, yb)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        epoch_loss += loss.item() * len(idx)
    losses.append(epoch_loss / len(X))
    if epoch % 5 == 4:
        print(f"epoch {epoch + 1}: loss {losses[-1]:.4f}")

print(losses[-1] < losses[0])
model.eval()
with torch.no_grad():
    logits = model(X).squeeze(1)
    probs = torch.sigmoid(logits)
    preds = (probs > 0.5).float()
    acc = torch.sum(preds == y).item() / len(y)
    labels = torch.where(probs > 0.5, 1, 0)
    print(labels.dtype, torch.equal(labels.float(), preds),
          int(labels.sum()) + int((labels == 0).sum()))
    tp = ((preds == 1) & (y == 1)).sum().item()
    fp = ((preds == 1) & (y == 0)).sum().item()
    fn = ((preds == 0) & (y == 1)).sum().item()
    precision = tp / max(tp + fp, 1)
    recall = tp / max(tp + fn, 1)
    print(f"precision {precision:.3f} recall {recall:.3f}")
    print(torch.where(y > 0.5, probs, 1 - probs).mean() > 0.5)
    print(f"accuracy {acc:.3f}")
