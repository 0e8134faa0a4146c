"""Fit a small MLP to two interleaved spirals, PyTorch style, save a picture of the learned
decision boundary, then check a gradient by hand.

    python examples/demo.py [--steps 800] [--threads 1] [--out examples/out/two_spirals.png]

Needs the ``demo`` extra (tqdm, matplotlib, threadpoolctl): ``pip install -e '.[demo]'``.

Threads: the problem is small (400 points, 64 hidden units: each matmul is a few microseconds of
work), so extra threads only cost their wake-ups, and on a busy machine NumPy's BLAS threads and
Numba's threads fight other processes for the cores (on a loaded 2-core VM the 800 steps took
11 to 23 s on 2 threads, 1.1 to 1.3 s on 1). The demo therefore runs BLAS (capped through
threadpoolctl) and Numba (``numba.set_num_threads``) on ``--threads`` threads, 1 by default.
Large problems want the defaults: leave the caps out of your own code.
"""

import argparse
import math
import sys
import threading
import time
from pathlib import Path

import numpy as np

try:
    import matplotlib
    from threadpoolctl import threadpool_limits
    from tqdm import tqdm
except ImportError as e:  # pragma: no cover - the message is the point
    sys.exit(f"the demo needs the demo extra ({e.name} is missing): pip install -e '.[demo]'")

import numba

import numbagrad as torch
import numbagrad.nn.functional as F
from numbagrad.backend.codegen import cache_dir

def two_spirals(n_per_class=200, noise=0.15, seed=0):
    rng = np.random.default_rng(seed)
    t = np.sqrt(rng.uniform(0.05, 1.0, n_per_class)) * 3 * math.pi
    a = np.stack([t * np.cos(t), t * np.sin(t)], 1) / (3 * math.pi)
    pts = np.concatenate([a, -a]) + rng.normal(0, noise / (3 * math.pi), (2 * n_per_class, 2))
    labels = np.concatenate([np.zeros(n_per_class), np.ones(n_per_class)]).astype(np.int64)
    return torch.tensor(pts, dtype=torch.float32), torch.tensor(labels)


def init(fan_in, fan_out):
    bound = 1 / math.sqrt(fan_in)
    w = (torch.rand(fan_out, fan_in) * 2 - 1) * bound * math.sqrt(6)
    b = torch.zeros(fan_out)
    return w.requires_grad_(), b.requires_grad_()


def save_decision_boundary(forward, x, y, path, resolution=200, chunk=400):
    """Colour a grid by the model's probability of the second spiral, the points on top."""
    matplotlib.use("Agg")  # files only: no display needed
    import matplotlib.pyplot as plt

    pts = x.numpy()
    lo, hi = pts.min(0) - 0.15, pts.max(0) + 0.15
    gx, gy = np.meshgrid(np.linspace(lo[0], hi[0], resolution),
                         np.linspace(lo[1], hi[1], resolution))
    grid = np.stack([gx.ravel(), gy.ravel()], 1).astype(np.float32)
    probs = []
    with torch.no_grad():
        # batches of the training size: the same kernels as training, nothing new to compile
        for i in range(0, len(grid), chunk):
            logits = forward(torch.tensor(grid[i:i + chunk]))
            probs.append(F.softmax(logits, 1)[:, 1].numpy())
    p = np.concatenate(probs).reshape(gx.shape)

    fig, ax = plt.subplots(figsize=(5.5, 5), dpi=120)
    ax.contourf(gx, gy, p, levels=np.linspace(0, 1, 11), cmap="RdBu_r", alpha=0.5)
    ax.contour(gx, gy, p, levels=[0.5], colors="k", linewidths=1.2)
    labels = y.numpy()
    for cls, colour in ((0, "navy"), (1, "darkred")):
        sel = labels == cls
        ax.scatter(pts[sel, 0], pts[sel, 1], s=10, c=colour, edgecolors="white",
                   linewidths=0.3, label=f"spiral {cls}")
    ax.set_title("two spirals: the MLP's decision boundary (p = 0.5)")
    ax.set_aspect("equal")
    ax.legend(loc="upper right", fontsize=8)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, bbox_inches="tight")
    plt.close(fig)


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="Fit an MLP to two spirals, save its decision boundary, check a gradient.")
    parser.add_argument("--steps", type=int, default=800, help="training steps (default 800)")
    parser.add_argument("--threads", type=int, default=1,
                        help="BLAS and Numba threads (default 1: the problem is small)")
    parser.add_argument("--out", type=Path,
                        default=Path(__file__).resolve().parent / "out" / "two_spirals.png",
                        help="where to save the decision-boundary picture")
    args = parser.parse_args(argv)

    numba.set_num_threads(min(args.threads, numba.config.NUMBA_NUM_THREADS))
    with threadpool_limits(limits=args.threads, user_api="blas"):
        train_and_plot(args)
    gradient_check()


def train_and_plot(args):
    torch.manual_seed(0)
    x, y = two_spirals()
    params = [*init(2, 64), *init(64, 64), *init(64, 2)]
    velocity = [torch.zeros_like(p) for p in params]

    def forward(inp):
        w1, b1, w2, b2, w3, b3 = params
        h = F.relu(F.linear(inp, w1, b1))
        h = F.tanh(F.linear(h, w2, b2))
        return F.linear(h, w3, b3)

    lr, momentum = 0.1, 0.9

    def step():
        loss = F.cross_entropy(forward(x), y)
        for p in params:
            p.grad = None
        loss.backward()
        with torch.no_grad():
            for p, v in zip(params, velocity):
                v.mul_(momentum).add_(p.grad)
                p -= lr * v
        return loss

    # The first step compiles every kernel training needs (Numba, cached on disk), so it runs
    # before the progress bar: the bar's rate and time left are then those of training alone.
    # If it is still running after a second, it is compiling: say so (once).
    notice = threading.Timer(1.0, print, [
        f"Compiling kernels (first run only: about 5 s on a 2-core VM). They are cached in "
        f"{cache_dir()}, so later runs skip this.",
    ], {"flush": True})
    notice.start()
    t0 = time.perf_counter()
    try:
        loss = step()
        loss.item()
    finally:
        notice.cancel()
    first = time.perf_counter() - t0
    if first > 1.0:
        print(f"first step: {first:.1f} s (compiling kernels)", flush=True)

    t0 = time.perf_counter()
    bar = tqdm(range(1, args.steps), desc="two spirals", ncols=80, initial=1, total=args.steps)
    for i in bar:
        loss = step()
        if i % 25 == 0:
            bar.set_postfix(loss=f"{loss.item():.4f}")
    bar.close()
    train_s = time.perf_counter() - t0

    with torch.no_grad():
        pred = forward(x).argmax(1)
    accuracy = (pred == y).float().mean().item()
    print(f"final loss {loss.item():.4f}, accuracy {accuracy:.1%} on {len(y)} points "
          f"({args.steps - 1} steps in {train_s:.1f} s after the first, "
          f"{args.threads} thread{'s' if args.threads != 1 else ''})")

    save_decision_boundary(forward, x, y, args.out)
    print(f"decision boundary saved to {args.out}")


def gradient_check():
    print("\nThe tutorial example: y = x**2 * exp(x)")
    xs = torch.tensor([-1.0, 0.0, 0.5, 1.0, 2.0], requires_grad=True)
    out = xs**2 * torch.exp(xs)
    out.sum().backward()
    by_hand = 2 * xs.detach() * xs.detach().exp() + xs.detach() ** 2 * xs.detach().exp()
    print("x                 ", xs.detach())
    print("autograd dy/dx    ", xs.grad)
    print("2x·e^x + x²·e^x   ", by_hand)
    print("max difference    ", (xs.grad - by_hand).abs().max().item())


if __name__ == "__main__":
    main()
