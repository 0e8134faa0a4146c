"""PyTorch recipes "Reasoning about Shapes in PyTorch" and the meta-device part of "Tips for
Loading an nn.Module": tensors made with ``device="meta"`` (shape without data, ``a + b`` still
shaped), ``nn.Conv2d(..., device="meta")`` applied to a meta input, a CIFAR Net built under
``with torch.device("meta"):`` with a forward hook on every module from ``named_modules`` that
records each output's shape, the same hooks on CPU tensors for comparison; then a module made on
the meta device, filled by ``load_state_dict(state_dict, assign=True)`` from a saved
checkpoint, and ``to_empty(device='cpu')`` on another meta module followed by a re-init.

    python recipes_meta_shapes.py [torch|numbagrad]
"""
import os
import tempfile

import numpy as np

from _common import BACKEND, numpy_init, show

if BACKEND == "torch":
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
else:
    import numbagrad as torch
    import numbagrad.nn as nn
    import numbagrad.nn.functional as F

a = torch.ones(2, 3, 4, device="meta")
b = torch.ones(2, 3, 4, device="meta")
print(a + b)
show("meta_sum_shape", list((a + b).shape))
show("meta_is_meta", float((a + b).is_meta))
show("meta_device_type_meta", float((a + b).device.type == "meta"))

conv = torch.nn.Conv2d(3, 5, 2, device="meta")
i = torch.randn(2, 3, 10, 10, device="meta")
out = conv(i)
show("meta_conv_shape", list(out.shape))
show("meta_conv_weight_is_meta", float(conv.weight.is_meta))


def fw_hook(module, input, output):
    print(f"Shape of output to {module} is {output.shape}.")
    shapes.append(list(output.shape))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 6, 5)
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = torch.flatten(x, 1)  # flatten all dimensions except batch
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x


# Any tensor created within this torch.device context manager will be
# on the meta device.
shapes = []
with torch.device("meta"):
    net = Net()
    inp = torch.randn((1024, 3, 32, 32))

for name, layer in net.named_modules():
    layer.register_forward_hook(fw_hook)

out = net(inp)
show("meta_hook_shapes", shapes)
show("meta_net_out_is_meta", float(out.is_meta))

# the same hooks on real CPU tensors give the same shapes
cpu_shapes, shapes = shapes, []
net = Net()
for name, layer in net.named_modules():
    layer.register_forward_hook(fw_hook)
net(torch.zeros(4, 3, 32, 32))
show("cpu_hook_shapes_same_modulo_batch", float([s[1:] for s in shapes] == [s[1:] for s in cpu_shapes]))


# ---- Tips for loading an nn.Module: meta device + assign=True
class SomeModule(torch.nn.Module):
    def __init__(self, size):
        super().__init__()
        self.linears = nn.ModuleList([nn.Linear(size, size) for i in range(10)])

    def forward(self, x):
        return self.linears(x)


with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "checkpoint.pth")
    m = SomeModule(16)
    numpy_init(torch, m, seed=0)
    torch.save(m.state_dict(), path)

    state_dict = torch.load(path, mmap=True, weights_only=True)
    with torch.device('meta'):
        meta_m = SomeModule(16)
    show("meta_module_is_meta", float(meta_m.linears[0].weight.is_meta))
    meta_m.load_state_dict(state_dict, assign=True)
    show("after_assign_not_meta", float(not meta_m.linears[0].weight.is_meta))
    show("after_assign_values", meta_m.linears[3].weight[0, :4])
    show("after_assign_requires_grad", float(meta_m.linears[3].weight.requires_grad))

with torch.device('meta'):
    empty_m = SomeModule(8)
empty_m = empty_m.to_empty(device='cpu')
show("to_empty_device_cpu", float(empty_m.linears[0].weight.device.type == 'cpu'))
numpy_init(torch, empty_m, seed=1)
show("to_empty_reinit", empty_m.linears[0].bias[:4])
