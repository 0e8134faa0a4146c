"""PyTorch tutorial "Learning PyTorch with Examples", the parts programs_b/polynomial.py leaves
out, with the tutorial's torch.randn(()) starting values drawn by NumPy: the plain-tensor fit
of sin(x) by a cubic with the gradients written by hand (``grad_y_pred = 2.0 * (y_pred - y)``,
``grad_b = (grad_y_pred * x).sum()``, in-place ``a -= learning_rate * grad_a`` on tensors that
do not require grad, the loss read by .item()); the custom nn.Module Polynomial3 of four
scalar nn.Parameters with its string() method, MSELoss(reduction='sum') and SGD(lr=1e-6); and
the DynamicNet whose forward adds ``self.e * x ** exp`` for a random number of extra orders
(``range(4, random.randint(4, 6))``, Python's random seeded the same in both runs), reusing
the parameter e, trained by SGD(lr=1e-8, momentum=0.9).

    python dynamic_net.py [torch|numbagrad]
"""
import math
import random

import numpy as np

from _common import BACKEND, show

if BACKEND == "torch":
    import torch
else:
    import numbagrad as torch

rng = np.random.default_rng(21)


def randn_scalar(device=None, dtype=None):
    # (torch.randn((), device=device, dtype=dtype), drawn by NumPy)
    return torch.tensor(float(rng.standard_normal()), device=device, dtype=dtype)


dtype = torch.float
device = torch.device("cpu")

# --- tensors, gradients by hand ---
x = torch.linspace(-math.pi, math.pi, 2000, device=device, dtype=dtype)
y = torch.sin(x)

a = randn_scalar(device=device, dtype=dtype)
b = randn_scalar(device=device, dtype=dtype)
c = randn_scalar(device=device, dtype=dtype)
d = randn_scalar(device=device, dtype=dtype)
show('tensor_init', [a, b, c, d])

learning_rate = 1e-6
tensor_losses = []
for t in range(300):
    y_pred = a + b * x + c * x ** 2 + d * x ** 3

    loss = (y_pred - y).pow(2).sum().item()
    if t % 100 == 99:
        print(t, loss)
        tensor_losses.append(loss)

    grad_y_pred = 2.0 * (y_pred - y)
    grad_a = grad_y_pred.sum()
    grad_b = (grad_y_pred * x).sum()
    grad_c = (grad_y_pred * x ** 2).sum()
    grad_d = (grad_y_pred * x ** 3).sum()

    a -= learning_rate * grad_a
    b -= learning_rate * grad_b
    c -= learning_rate * grad_c
    d -= learning_rate * grad_d

print(f'Result: y = {a.item()} + {b.item()} x + {c.item()} x^2 + {d.item()} x^3')
show('tensor_losses', tensor_losses)
show('tensor_result', [a.item(), b.item(), c.item(), d.item(), a.requires_grad])
show('tensor_last_grads', [grad_a, grad_b, grad_c, grad_d])


# --- a custom nn.Module ---
class Polynomial3(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Parameter(randn_scalar())
        self.b = torch.nn.Parameter(randn_scalar())
        self.c = torch.nn.Parameter(randn_scalar())
        self.d = torch.nn.Parameter(randn_scalar())

    def forward(self, x):
        return self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3

    def string(self):
        return f'y = {self.a.item()} + {self.b.item()} x + {self.c.item()} x^2 + {self.d.item()} x^3'


model = Polynomial3()
show('module_init', [p for p in model.parameters()])
criterion = torch.nn.MSELoss(reduction='sum')
optimizer = torch.optim.SGD(model.parameters(), lr=1e-6)
module_losses = []
for t in range(300):
    y_pred = model(x)

    loss = criterion(y_pred, y)
    if t % 100 == 99:
        print(t, loss.item())
    module_losses.append(loss.item())

    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

print(f'Result: {model.string()}')
show('module_losses', module_losses[::20])
show('module_result', [model.a.item(), model.b.item(), model.c.item(), model.d.item()])
show('module_grads', [p.grad for p in model.parameters()])
show('module_names', [len(dict(model.named_parameters())), model.a.dim(), model.a.shape == ()])


# --- control flow and weight sharing ---
class DynamicNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Parameter(randn_scalar())
        self.b = torch.nn.Parameter(randn_scalar())
        self.c = torch.nn.Parameter(randn_scalar())
        self.d = torch.nn.Parameter(randn_scalar())
        self.e = torch.nn.Parameter(randn_scalar())

    def forward(self, x):
        y = self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3
        for exp in range(4, random.randint(4, 6)):
            y = y + self.e * x ** exp
        return y

    def string(self):
        return f'y = {self.a.item()} + {self.b.item()} x + {self.c.item()} x^2 + {self.d.item()} x^3 + {self.e.item()} x^4 ? + {self.e.item()} x^5 ?'


random.seed(3)
model = DynamicNet()
show('dynamic_init', [p for p in model.parameters()])
criterion = torch.nn.MSELoss(reduction='sum')
optimizer = torch.optim.SGD(model.parameters(), lr=1e-8, momentum=0.9)
dynamic_losses = []
e_grads = []
for t in range(300):
    y_pred = model(x)

    loss = criterion(y_pred, y)
    if t % 100 == 99:
        print(t, loss.item())
    dynamic_losses.append(loss.item())

    optimizer.zero_grad()
    loss.backward()
    # (e takes no part when randint picked 4: its grad stays None after zero_grad)
    e_grads.append(float('nan') if model.e.grad is None else model.e.grad.item())
    optimizer.step()

print(f'Result: {model.string()}')
show('dynamic_losses', dynamic_losses[::15])
show('dynamic_e_unused', [g != g for g in e_grads])
show('dynamic_e_grads', [g for g in e_grads if g == g][:10])
show('dynamic_result', [p.item() for p in model.parameters()])
show('momentum_buffer', [optimizer.state[p]['momentum_buffer'] for p in model.parameters()])
with torch.no_grad():
    show('dynamic_pred', model(torch.tensor([-1.0, 0.5, 2.0])))
