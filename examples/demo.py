"""Fit a small MLP to two interleaved spirals, PyTorch style, then check a gradient by hand."""

import math

import numpy as np
from tqdm import tqdm

import numbagrad as torch
import numbagrad.nn.functional as F


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


def main():
    torch.manual_seed(0)
    x, y = two_spirals()
    params = [*init(2, 64), *init(64, 64), *init(64, 2)]
    velocity = [torch.zeros_like(p) for p in params]

    def forward(inp):
        w1, b1, w2, b2, w3, b3 = params
        h = F.relu(F.linear(inp, w1, b1))
        h = F.tanh(F.linear(h, w2, b2))
        return F.linear(h, w3, b3)

    steps, lr, momentum = 800, 0.1, 0.9
    bar = tqdm(range(steps), desc="two spirals", ncols=80)
    for step in bar:
        loss = F.cross_entropy(forward(x), y)
        for p in params:
            p.grad = None
        loss.backward()
        with torch.no_grad():
            for p, v in zip(params, velocity):
                v.mul_(momentum).add_(p.grad)
                p -= lr * v
        if step % 25 == 0:
            bar.set_postfix(loss=f"{loss.item():.4f}")

    with torch.no_grad():
        pred = forward(x).argmax(1)
    accuracy = (pred == y).float().mean().item()
    print(f"final loss {loss.item():.4f}, accuracy {accuracy:.1%} on {len(y)} points")

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
