"""Karpathy, micrograd: the README's examples and test/test_engine.py, whose reference side is
PyTorch (``torch.Tensor([...]).double()``, ``requires_grad = True``, ``.grad.item()``).

    python micrograd_check.py [torch|numbagrad]
"""
import sys

BACKEND = sys.argv[1] if len(sys.argv) > 1 else "numbagrad"
if BACKEND == "torch":
    import torch
else:
    import numbagrad as torch


def test_sanity_check():
    x = torch.Tensor([-4.0]).double()
    x.requires_grad = True
    z = 2 * x + 2 + x
    q = z.relu() + z * x
    h = (z * z).relu()
    y = h + q + q * x
    y.backward()
    xpt, ypt = x, y
    # the values micrograd computes
    assert ypt.data.item() == -20.0
    assert xpt.grad.item() == 46.0
    return ypt.data.item(), xpt.grad.item()


def test_more_ops():
    a = torch.Tensor([-4.0]).double()
    b = torch.Tensor([2.0]).double()
    a.requires_grad = True
    b.requires_grad = True
    c = a + b
    d = a * b + b**3
    c = c + c + 1
    c = c + 1 + c + (-a)
    d = d + d * 2 + (b + a).relu()
    d = d + 3 * d + (b - a).relu()
    e = c - d
    f = e**2
    g = f / 2.0
    g = g + 10.0 / f
    g.backward()
    apt, bpt, gpt = a, b, g

    tol = 1e-6
    # forward pass went well
    assert abs(gpt.data.item() - 24.70408163265306) < tol
    # backward pass went well
    assert abs(apt.grad.item() - 138.83381924198252) < tol
    assert abs(bpt.grad.item() - 645.5772594752186) < tol
    return gpt.data.item(), apt.grad.item(), bpt.grad.item()


# the training demo's MLP, on torch tensors: a neuron is w @ x + b, relu except the last layer
def mlp_demo():
    import random
    random.seed(1337)
    nin, nouts = 2, [16, 16, 1]
    sz = [nin] + nouts
    params = []
    for i in range(len(nouts)):
        W = torch.tensor([[random.uniform(-1, 1) for _ in range(sz[i])] for _ in range(sz[i+1])],
                         dtype=torch.float64, requires_grad=True)
        b = torch.zeros(sz[i+1], dtype=torch.float64, requires_grad=True)
        params += [W, b]
    X = [[random.uniform(-2, 2), random.uniform(-2, 2)] for _ in range(20)]
    y = [1 if x0 * x1 > 0 else -1 for x0, x1 in X]
    X, y = torch.tensor(X, dtype=torch.float64), torch.tensor(y, dtype=torch.float64)

    def model(x):
        for i in range(0, len(params), 2):
            x = x @ params[i].t() + params[i+1]
            if i < len(params) - 2:
                x = x.relu()
        return x.squeeze(-1)

    losses = []
    for k in range(10):
        scores = model(X)
        # svm "max-margin" loss, L2 regularization
        data_loss = (1 + -y * scores).relu().mean()
        alpha = 1e-4
        reg_loss = alpha * sum((p * p).sum() for p in params)
        total_loss = data_loss + reg_loss
        accuracy = ((y > 0) == (scores > 0)).float().mean()
        for p in params:
            p.grad = None
        total_loss.backward()
        learning_rate = 1.0 - 0.9 * k / 100
        for p in params:
            p.data -= learning_rate * p.grad
        losses.append(total_loss.item())
    return losses[0], losses[-1], accuracy.item()


print('sanity', *test_sanity_check())
print('more', *test_more_ops())
print('mlp', *mlp_demo())
