"""PyTorch's examples/regression/main.py: polynomial features by
``torch.cat([x ** i for i in range(1, POLY_DEGREE+1)], 1)``, the target f(x) =
x.mm(W_target) + b_target.item(), a single nn.Linear(W_target.size(0), 1) fitted with
F.smooth_l1_loss, fc.zero_grad() and the manual update ``param.data.add_(-0.1 * param.grad)``,
stopping at a small loss; poly_desc formats the weights with '{:+.2f}'.format(w) of 0-d
tensors. The torch.randn draws (W_target, b_target, the batches) come from NumPy.

    python poly_regression.py [torch|numbagrad]
"""
import re
from itertools import count

import numpy as np

from _common import BACKEND, numpy_init, show

if BACKEND == "torch":
    import torch
    import torch.nn.functional as F
else:
    import numbagrad as torch
    import numbagrad.nn.functional as F

rng = np.random.default_rng(0)


def randn(*size):
    """torch.randn, drawn by NumPy."""
    return torch.from_numpy(rng.standard_normal(size).astype(np.float32))


POLY_DEGREE = 4
W_target = randn(POLY_DEGREE, 1) * 5
b_target = randn(1) * 5


def make_features(x):
    """Builds features i.e. a matrix with columns [x, x^2, x^3, x^4]."""
    x = x.unsqueeze(1)
    return torch.cat([x ** i for i in range(1, POLY_DEGREE+1)], 1)


def f(x):
    """Approximated function."""
    return x.mm(W_target) + b_target.item()


def poly_desc(W, b):
    """Creates a string description of a polynomial."""
    result = 'y = '
    for i, w in enumerate(W):
        result += '{:+.2f} x^{} '.format(w, i + 1)
    result += '{:+.2f}'.format(b[0])
    return result


def get_batch(batch_size=32):
    """Builds a batch i.e. (x, f(x)) pair."""
    random = randn(batch_size)
    x = make_features(random)
    y = f(x)
    return x, y


# Define model
fc = torch.nn.Linear(W_target.size(0), 1)
numpy_init(torch, fc)

losses, first_grads = [], None
for batch_idx in count(1):
    # Get data
    batch_x, batch_y = get_batch()

    # Reset gradients
    fc.zero_grad()

    # Forward pass
    output = F.smooth_l1_loss(fc(batch_x), batch_y)
    loss = output.item()
    losses.append(loss)

    # Backward pass
    output.backward()
    if first_grads is None:
        first_grads = [fc.weight.grad.clone(), fc.bias.grad.clone()]

    # Apply gradients
    for param in fc.parameters():
        param.data.add_(-0.1 * param.grad)

    # Stop criterion
    if loss < 1e-3 or batch_idx >= 60:
        break

learned = poly_desc(fc.weight.view(-1), fc.bias)
actual = poly_desc(W_target.view(-1), b_target)
print('Loss: {:.6f} after {} batches'.format(loss, batch_idx))
print('==> Learned function:\t' + learned)
print('==> Actual function:\t' + actual)

show('batches', batch_idx)
show('losses', losses)
show('first_grads', first_grads)
show('weight', fc.weight)
show('bias', fc.bias)
show('features', make_features(torch.tensor([0.5, -2.0])))
show('f', f(make_features(torch.tensor([0.5, -2.0]))))
show('learned_desc', [float(v) for v in re.findall(r'[+-]\d+\.\d+', learned)])
show('actual_desc', [float(v) for v in re.findall(r'[+-]\d+\.\d+', actual)])
