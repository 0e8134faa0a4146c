"""A tabular regression MLP as courses write it: Adam, StepLR, BatchNorm1d, Dropout, and early
stopping that keeps the best state_dict (copy.deepcopy) and loads it back."""

import copy
import random

import numpy as np

import common  # (tests/programs/common.py: the library chosen, the generated data)

if common.BACKEND == "torch":
    import torch
    import torch.nn as nn
    from torch.utils.data import DataLoader, TensorDataset
else:
    import numbagrad as torch
    import numbagrad.nn as nn
    from numbagrad.utils.data import DataLoader, TensorDataset



def set_seed(seed=42):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False


set_seed(42)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

# a made-up regression problem: 8 features, a nonlinear target
X = np.random.randn(600, 8).astype(np.float32)
y = (np.sin(X[:, 0]) + 0.5 * X[:, 1] * X[:, 2] - X[:, 3] ** 2 + 0.1 * np.random.randn(600))
y = y.astype(np.float32)

X_train, y_train = torch.tensor(X[:480]), torch.tensor(y[:480])
X_val, y_val = torch.tensor(X[480:]), torch.tensor(y[480:])

# standardise with the training statistics
mean, std = X_train.mean(dim=0, keepdim=True), X_train.std(dim=0, keepdim=True)
X_train = (X_train - mean) / std
X_val = (X_val - mean) / std

train_loader = DataLoader(TensorDataset(X_train, y_train), batch_size=32, shuffle=True)


class MLP(nn.Module):
    def __init__(self, in_features, hidden=64, p=0.1):
        super(MLP, self).__init__()
        self.net = nn.Sequential(
            nn.Linear(in_features, hidden),
            nn.BatchNorm1d(hidden),
            nn.ReLU(),
            nn.Dropout(p),
            nn.Linear(hidden, hidden),
            nn.BatchNorm1d(hidden),
            nn.ReLU(),
            nn.Dropout(p),
            nn.Linear(hidden, 1),
        )

    def forward(self, x):
        return self.net(x).squeeze(-1)


model = MLP(X_train.shape[1])
common.same(torch, model)
print(model)
print(sum(p.numel() for p in model.parameters() if p.requires_grad))

criterion = nn.MSELoss()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2, weight_decay=1e-5)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=3, gamma=0.5)

model.eval()
with torch.no_grad():
    print(f"initial val loss {criterion(model(X_val), y_val).item():.4f}")

print("-- shuffled from here --")
n_epochs = 6
patience = 10
best_loss = float("inf")
best_state = None
epochs_no_improve = 0
history = []
for epoch in range(n_epochs):
    model.train()
    running_loss = 0.0
    for xb, yb in train_loader:
        optimizer.zero_grad()
        outputs = model(xb)
        loss = criterion(outputs, yb)
        loss.backward()
        optimizer.step()
        running_loss += loss.item() * xb.size(0)
    scheduler.step()
    train_loss = running_loss / len(train_loader.dataset)

    model.eval()
    with torch.no_grad():
        val_loss = criterion(model(X_val), y_val).item()
    history.append(val_loss)
    print(f"Epoch {epoch + 1}/{n_epochs} lr {scheduler.get_last_lr()[0]:.5f} "
          f"train_loss {train_loss:.4f} val_loss {val_loss:.4f}")

    if val_loss < best_loss:
        best_loss = val_loss
        best_state = copy.deepcopy(model.state_dict())
        epochs_no_improve = 0
    else:
        epochs_no_improve += 1
        if epochs_no_improve >= patience:
            print(f"Early stopping at epoch {epoch + 1}")
            break

model.load_state_dict(best_state)
model.eval()
with torch.no_grad():
    preds = model(X_val)
    final = criterion(preds, y_val).item()
    mae = torch.mean(torch.abs(preds - y_val)).item()
print(final == best_loss, min(history) == best_loss)
print(model.net[1].running_mean.shape, int(model.net[1].num_batches_tracked))
print(f"best val loss {best_loss:.4f} reloaded {final:.4f} mae {mae:.4f}")
