"""d2l's "Builders' Guide" chapter: an nn.Sequential MLP and parameter access
(``net[2].state_dict()``, ``net[2].bias`` and ``.bias.data``, named_parameters, the
``(name, param.shape)`` list), a shared nn.Linear used twice whose ``weight.data[0, 0] = 100``
shows in both places, custom initialisation by ``net.apply`` with type checks and
nn.init.constant_/zeros_, custom layers (CenteredLayer, MyLinear with nn.Parameter weights),
nn.LazyLinear's deferred initialisation, and file I/O (torch.save/torch.load of a tensor, a
list, a dict and an MLP's state_dict loaded into a clone) in a temporary directory.

    python d2l_builders_guide.py [torch|numbagrad]
"""
import os
import tempfile

import numpy as np

from _common import BACKEND, numpy_init, show

if BACKEND == "torch":
    import torch
    from torch import nn
    from torch.nn import functional as F
else:
    import numbagrad as torch
    from numbagrad import nn
    from numbagrad.nn import functional as F

rng = np.random.default_rng(7)


def rand(*shape):
    return torch.tensor(rng.uniform(0, 1, shape).astype(np.float32))


def randn(*shape):
    return torch.tensor(rng.standard_normal(shape).astype(np.float32))


# --- parameter management ---
net = nn.Sequential(nn.LazyLinear(8), nn.ReLU(), nn.LazyLinear(1))
X = rand(2, 4)
show('lazy_out_shape', list(net(X).shape))
numpy_init(torch, net, seed=1)
show('net_out', net(X))

sd = net[2].state_dict()
print('state_dict_keys', list(sd.keys()))
show('state_dict_weight', sd['weight'])
show('state_dict_bias', sd['bias'])
print(type(net[2].bias).__name__, net[2].bias.requires_grad)
show('bias_data', net[2].bias.data)
show('weight_grad_none', [net[2].weight.grad is None])
names = [(name, param.shape) for name, param in net.named_parameters()]
print(*names)
show('named_shapes', [list(s) for _, s in names])
print('names', [n for n, _ in names])

# --- tied parameters ---
shared = nn.LazyLinear(8)
net = nn.Sequential(nn.LazyLinear(8), nn.ReLU(),
                    shared, nn.ReLU(),
                    shared, nn.ReLU(),
                    nn.LazyLinear(1))
net(X)
numpy_init(torch, net, seed=2)
show('tied_out', net(X))
show('tied_same', [(net[2].weight.data == net[4].weight.data).all().item()])
net[2].weight.data[0, 0] = 100
show('tied_same_after', [(net[2].weight.data == net[4].weight.data).all().item(),
                         net[4].weight.data[0, 0].item()])
show('tied_count', [len(list(net.parameters())), len(dict(net.named_parameters()))])
print('tied_names', [n for n, _ in net.named_parameters()])
y = net(X).sum()
y.backward()
show('tied_grad', net[2].weight.grad[0])


# --- initialisation ---
def init_constant(module):
    if type(module) == nn.Linear:
        nn.init.constant_(module.weight, 1)
        nn.init.zeros_(module.bias)


def init_42(module):
    if type(module) == nn.Linear:
        nn.init.constant_(module.weight, 42)


net = nn.Sequential(nn.LazyLinear(8), nn.ReLU(), nn.LazyLinear(1))
net(X)
net.apply(init_constant)
show('init_constant', [net[0].weight.data[0], net[0].bias.data[0]])
net[0].apply(init_constant)
net[2].apply(init_42)
show('init_42', net[2].weight.data[0])
show('init_out', net(X))
net[0].weight.data[:] += 1
net[0].weight.data[0, 0] = 42
show('init_manual', net[0].weight.data[0])


# --- custom layers ---
class CenteredLayer(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, X):
        return X - X.mean()


layer = CenteredLayer()
show('centered', layer(torch.tensor([1.0, 2, 3, 4, 5])))
net = nn.Sequential(nn.LazyLinear(128), CenteredLayer())
Y = net(rand(4, 8))
numpy_init(torch, net, seed=3)
Y = net(rand(4, 8))
show('centered_mean', [abs(Y.mean().item()) < 1e-5])


class MyLinear(nn.Module):
    def __init__(self, in_units, units):
        super().__init__()
        self.weight = nn.Parameter(randn(in_units, units))
        self.bias = nn.Parameter(randn(units,))

    def forward(self, X):
        linear = torch.matmul(X, self.weight.data) + self.bias.data
        return F.relu(linear)


linear = MyLinear(5, 3)
show('mylinear_weight', linear.weight)
show('mylinear_out', linear(rand(2, 5)))
net = nn.Sequential(MyLinear(64, 8), MyLinear(8, 1))
show('mylinear_net', net(rand(2, 64)))
print('mylinear_names', [n for n, _ in net.named_parameters()])

# --- lazy initialisation ---
net = nn.Sequential(nn.LazyLinear(256), nn.ReLU(), nn.LazyLinear(10))
print('lazy_before', type(net[0].weight).__name__)
net(rand(2, 20))
print('lazy_after', type(net[0].weight).__name__, type(net[0]).__name__)
show('lazy_shape', list(net[0].weight.shape))
show('lazy_shapes', [list(p.shape) for p in net.parameters()])

# --- file I/O ---
with tempfile.TemporaryDirectory() as tmp:
    x = torch.arange(4)
    torch.save(x, os.path.join(tmp, 'x-file'))
    x2 = torch.load(os.path.join(tmp, 'x-file'))
    show('io_tensor', x2)
    print('io_tensor_dtype', str(x2.dtype).split('.')[-1])

    y = torch.zeros(4)
    torch.save([x, y], os.path.join(tmp, 'x-files'))
    x2, y2 = torch.load(os.path.join(tmp, 'x-files'))
    show('io_list', [x2, y2])

    mydict = {'x': x, 'y': y}
    torch.save(mydict, os.path.join(tmp, 'mydict'))
    mydict2 = torch.load(os.path.join(tmp, 'mydict'))
    print('io_dict_keys', list(mydict2.keys()))
    show('io_dict', [mydict2['x'], mydict2['y']])

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.hidden = nn.LazyLinear(256)
            self.output = nn.LazyLinear(10)

        def forward(self, x):
            return self.output(F.relu(self.hidden(x)))

    net = MLP()
    X = randn(2, 20)
    Y = net(X)
    numpy_init(torch, net, seed=4)
    Y = net(X)
    torch.save(net.state_dict(), os.path.join(tmp, 'mlp.params'))
    clone = MLP()
    clone.load_state_dict(torch.load(os.path.join(tmp, 'mlp.params')))
    print(type(clone.eval()).__name__)
    print('clone_keys', list(clone.state_dict().keys()))
    Y_clone = clone(X)
    show('io_mlp', Y)
    show('io_clone_equal', [(Y_clone == Y).all().item()])
    show('io_clone_shape', list(clone.hidden.weight.shape))
