"""Train a small CNN on generated images of handwritten-style digits, the PyTorch way: an
``nn.Module`` subclass, a ``Dataset`` and ``DataLoader``, ``CrossEntropyLoss``, ``Adam``, a
learning-rate schedule, a progress bar, and the best checkpoint saved and loaded back.

    python examples/train_cnn.py [--epochs 6] [--backend numbagrad|torch] [--out DIR]

The same file runs on PyTorch (``--backend torch``): only the import differs. The images are
generated (``examples/digits.py``), so nothing is downloaded. Needs the ``demo`` extra (tqdm).
"""

import argparse
import sys
import time
from pathlib import Path

import digits  # (examples/digits.py: the generated images)

parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
parser.add_argument("--epochs", type=int, default=6)
parser.add_argument("--backend", choices=["numbagrad", "torch"], default="numbagrad")
parser.add_argument("--out", type=Path, default=Path(__file__).parent / "out")
parser.add_argument("--target", type=float, default=0.95, help="validation accuracy to reach")
args = parser.parse_args()

if args.backend == "torch":
    import torch
else:
    import numbagrad as torch
# (attributes, not ``from torch import nn``: that statement would import the package named
# torch, whichever module the name ``torch`` is bound to here)
nn = torch.nn
DataLoader, Dataset = torch.utils.data.DataLoader, torch.utils.data.Dataset

try:
    from tqdm import tqdm
except ImportError as e:  # pragma: no cover - the message is the point
    sys.exit(f"the example needs the demo extra ({e.name} is missing): pip install -e '.[demo]'")

class Digits(Dataset):
    """``n`` generated images and their labels (balanced classes), fixed by ``seed``."""

    def __init__(self, n: int, seed: int):
        self.images, self.labels = digits.images(n, seed)

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return torch.from_numpy(self.images[i]), int(self.labels[i])


class Net(nn.Module):
    def __init__(self, classes: int = 10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        )
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(16 * 4 * 4, 64), nn.ReLU(),
                                  nn.Dropout(0.2), nn.Linear(64, classes))

    def forward(self, x):
        return self.head(self.features(x))


def accuracy(model: nn.Module, loader: DataLoader) -> float:
    model.eval()
    right = 0
    with torch.no_grad():
        for x, y in loader:
            right += (model(x).argmax(1) == y).sum().item()
    return right / len(loader.dataset)


def main() -> None:
    torch.manual_seed(0)
    train = DataLoader(Digits(3000, seed=1), batch_size=64, shuffle=True,
                       generator=torch.Generator().manual_seed(0))
    val = DataLoader(Digits(1000, seed=2), batch_size=250)
    model = Net()
    loss_fn = nn.CrossEntropyLoss(label_smoothing=0.05)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    args.out.mkdir(parents=True, exist_ok=True)
    best_path = args.out / f"best_cnn_{args.backend}.pt"
    best = -1.0
    start = time.perf_counter()
    for epoch in range(args.epochs):
        model.train()
        bar = tqdm(train, desc=f"epoch {epoch + 1}/{args.epochs}", leave=False, disable=None)
        for x, y in bar:
            loss = loss_fn(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            bar.set_postfix(loss=f"{loss.item():.3f}")
        sched.step()
        acc = accuracy(model, val)
        print(f"epoch {epoch + 1}: loss {loss.item():.3f}, val accuracy {acc:.3f}, "
              f"lr {sched.get_last_lr()[0]:.2e}")
        if acc > best:
            best = acc
            torch.save({"model": model.state_dict(), "optimizer": opt.state_dict(),
                        "epoch": epoch, "accuracy": acc}, best_path)
    seconds = time.perf_counter() - start
    checkpoint = torch.load(best_path)
    restored = Net()
    restored.load_state_dict(checkpoint["model"])
    acc = accuracy(restored, val)
    print(f"{args.backend}: {seconds:.1f} s for {args.epochs} epochs; best checkpoint "
          f"(epoch {checkpoint['epoch'] + 1}) reloaded: val accuracy {acc:.3f}")
    if acc != checkpoint["accuracy"] or acc < args.target:
        sys.exit(f"expected the reloaded model to reach {args.target:.2f} (and its saved "
                 f"accuracy {checkpoint['accuracy']:.3f}); it reached {acc:.3f}")


if __name__ == "__main__":
    main()
