"""PyTorch tutorial "Learning PyTorch with Examples": fitting sin(x) with a third-order
polynomial, by tensors and autograd, with nn.Sequential + Flatten(0, 1), with torch.optim,
with a custom autograd Function (LegendrePolynomial3), and the dynamic net.

    python polynomial.py [torch|numbagrad]
"""
import math
import random
import sys

BACKEND = sys.argv[1] if len(sys.argv) > 1 else "numbagrad"
if BACKEND == "torch":
    import torch
else:
    import numbagrad as torch

results = {}
dtype = torch.float
device = torch.device("cpu")
# device = torch.device("cuda:0")  # Uncomment this to run on GPU

# --- tensors and autograd ---
x = torch.linspace(-math.pi, math.pi, 2000, device=device, dtype=dtype)
y = torch.sin(x)

# the tutorial draws a, b, c, d with torch.randn; fixed starts keep both libraries equal
a = torch.tensor(0.1, device=device, dtype=dtype, requires_grad=True)
b = torch.tensor(-0.2, device=device, dtype=dtype, requires_grad=True)
c = torch.tensor(0.3, device=device, dtype=dtype, requires_grad=True)
d = torch.tensor(-0.4, device=device, dtype=dtype, requires_grad=True)

learning_rate = 1e-6
for t in range(200):
    y_pred = a + b * x + c * x ** 2 + d * x ** 3
    loss = (y_pred - y).pow(2).sum()
    if t % 100 == 99:
        print(t, loss.item())
    loss.backward()
    with torch.no_grad():
        a -= learning_rate * a.grad
        b -= learning_rate * b.grad
        c -= learning_rate * c.grad
        d -= learning_rate * d.grad

        # Manually zero the gradients after updating weights
        a.grad = None
        b.grad = None
        c.grad = None
        d.grad = None
results['autograd'] = [loss.item(), a.item(), b.item(), c.item(), d.item()]
print(f'Result: y = {a.item()} + {b.item()} x + {c.item()} x^2 + {d.item()} x^3')

# --- nn ---
p = torch.tensor([1, 2, 3])
xx = x.unsqueeze(-1).pow(p)
assert xx.shape == (2000, 3) and xx.dtype == torch.float32

model = torch.nn.Sequential(
    torch.nn.Linear(3, 1),
    torch.nn.Flatten(0, 1)
)
with torch.no_grad():
    model[0].weight.copy_(torch.tensor([[0.1, -0.2, 0.3]]))
    model[0].bias.fill_(0.05)
loss_fn = torch.nn.MSELoss(reduction='sum')

learning_rate = 1e-6
for t in range(200):
    y_pred = model(xx)
    loss = loss_fn(y_pred, y)
    if t % 100 == 99:
        print(t, loss.item())
    model.zero_grad()
    loss.backward()
    with torch.no_grad():
        for param in model.parameters():
            param -= learning_rate * param.grad

# You can access the first layer of `model` like accessing the first item of a list
linear_layer = model[0]
print(f'Result: y = {linear_layer.bias.item()} + {linear_layer.weight[:, 0].item()} x + '
      f'{linear_layer.weight[:, 1].item()} x^2 + {linear_layer.weight[:, 2].item()} x^3')
results['nn'] = [loss.item(), linear_layer.bias.item(), linear_layer.weight[:, 2].item()]

# --- optim ---
with torch.no_grad():
    model[0].weight.copy_(torch.tensor([[0.1, -0.2, 0.3]]))
    model[0].bias.fill_(0.05)
learning_rate = 1e-3
optimizer = torch.optim.RMSprop(model.parameters(), lr=learning_rate)
for t in range(200):
    y_pred = model(xx)
    loss = loss_fn(y_pred, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
results['optim'] = [loss.item(), linear_layer.weight[:, 0].item()]


# --- custom autograd Function ---
class LegendrePolynomial3(torch.autograd.Function):
    """
    We can implement our own custom autograd Functions by subclassing
    torch.autograd.Function and implementing the forward and backward passes
    which operate on Tensors.
    """

    @staticmethod
    def forward(ctx, input):
        """
        In the forward pass we receive a Tensor containing the input and return
        a Tensor containing the output. ctx is a context object that can be used
        to stash information for backward computation. You can cache tensors for
        use in the backward pass using the ``ctx.save_for_backward`` method. Other
        objects can be stored directly as attributes on the ctx object, such as
        ``ctx.my_object = my_object``. Check out `Extending torch.autograd <https://docs.pytorch.org/docs/stable/notes/extending.html#extending-torch-autograd>`_
        for further details.
        """
        ctx.save_for_backward(input)
        return 0.5 * (5 * input ** 3 - 3 * input)

    @staticmethod
    def backward(ctx, grad_output):
        """
        In the backward pass we receive a Tensor containing the gradient of the loss
        with respect to the output, and we need to compute the gradient of the loss
        with respect to the input.
        """
        input, = ctx.saved_tensors
        return grad_output * 1.5 * (5 * input ** 2 - 1)


a = torch.full((), 0.0, device=device, dtype=dtype, requires_grad=True)
b = torch.full((), -1.0, device=device, dtype=dtype, requires_grad=True)
c = torch.full((), 0.0, device=device, dtype=dtype, requires_grad=True)
d = torch.full((), 0.3, device=device, dtype=dtype, requires_grad=True)

learning_rate = 5e-6
for t in range(200):
    # To apply our Function, we use Function.apply method. We alias this as 'P3'.
    P3 = LegendrePolynomial3.apply

    # Forward pass: compute predicted y using operations; we compute
    # P3 using our custom autograd operation.
    y_pred = a + b * P3(c + d * x)

    # Compute and print loss
    loss = (y_pred - y).pow(2).sum()
    if t % 100 == 99:
        print(t, loss.item())

    # Use autograd to compute the backward pass.
    loss.backward()

    # Update weights using gradient descent
    with torch.no_grad():
        a -= learning_rate * a.grad
        b -= learning_rate * b.grad
        c -= learning_rate * c.grad
        d -= learning_rate * d.grad

        # Manually zero the gradients after updating weights
        a.grad = None
        b.grad = None
        c.grad = None
        d.grad = None
assert y_pred.grad_fn.next_functions[1][0].next_functions[1][0].name() == 'LegendrePolynomial3Backward'
results['legendre'] = [loss.item(), a.item(), b.item(), c.item(), d.item()]
print(f'Result: y = {a.item()} + {b.item()} * P3({c.item()} + {d.item()} x)')


# --- dynamic net ---
class DynamicNet(torch.nn.Module):
    def __init__(self):
        """
        In the constructor we instantiate five parameters and assign them as members.
        """
        super().__init__()
        self.a = torch.nn.Parameter(torch.tensor(0.1))
        self.b = torch.nn.Parameter(torch.tensor(0.2))
        self.c = torch.nn.Parameter(torch.tensor(-0.1))
        self.d = torch.nn.Parameter(torch.tensor(0.05))
        self.e = torch.nn.Parameter(torch.tensor(0.01))

    def forward(self, x):
        """
        For the forward pass of the model, we randomly choose either 4, 5
        and reuse the e parameter to compute the contribution of these orders.

        Since each forward pass builds a dynamic computation graph, we can use normal
        Python control-flow operators like loops or conditional statements when
        defining the forward pass of the model.

        Here we also see that it is perfectly safe to reuse the same parameter many
        times when defining a computational graph.
        """
        y = self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3
        for exp in range(4, random.randint(4, 6)):
            y = y + self.e * x ** exp
        return y

    def string(self):
        """
        Just like any class in Python, you can also define custom method on PyTorch modules
        """
        return f'y = {self.a.item()} + {self.b.item()} x + {self.c.item()} x^2 + {self.d.item()} x^3 + {self.e.item()} x^4 ? + {self.e.item()} x^5 ?'


random.seed(0)
model = DynamicNet()
criterion = torch.nn.MSELoss(reduction='sum')
optimizer = torch.optim.SGD(model.parameters(), lr=1e-8, momentum=0.9)
for t in range(100):
    # Forward pass: Compute predicted y by passing x to the model
    y_pred = model(x)

    # Compute and print loss
    loss = criterion(y_pred, y)
    if t % 50 == 49:
        print(t, loss.item())

    # Zero gradients, perform a backward pass, and update the weights.
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(f'Result: {model.string()}')
results['dynamic'] = [loss.item(), model.e.item()]

for k, v in results.items():
    print(k, *v)
