"""PyTorch recipes, as written in the recipes: "Defining a Neural Network in PyTorch" (conv1/
conv2, ``nn.Dropout2d``, ``F.max_pool2d(x, 2)``, ``torch.flatten(x, 1)``, ``F.softmax(x,
dim=1)`` on a ``torch.rand((1, 1, 28, 28))``-shaped image); "Zeroing out gradients" (the CIFAR
Net, CrossEntropyLoss, ``SGD(lr=0.001, momentum=0.9)``, ``optimizer.zero_grad()`` each step,
grads None after it, the running loss printed every few minibatches, ``net.zero_grad()`` beside
it); "Changing default device" (``torch.set_default_device('cpu')`` and ``with
torch.device('cpu'):`` around module construction, ``torch.get_default_device()``); "Timer quick
start" and "PyTorch Benchmark" (``torch.utils.benchmark.Timer`` with ``stmt``/``globals``,
``timeit`` and ``blocked_autorange`` results' ``mean``/``median``/``times``, labelled measurements
and A/B results pickled and loaded, collected into ``benchmark.Compare`` tables (trimmed to
significant figures and coloured) whose structure, not their times, is printed); and "Tips for
loading an nn.Module" (``torch.save`` of a state dict, ``torch.load(..., mmap=True,
weights_only=True)``, ``load_state_dict(state_dict, assign=True)`` onto a freshly made module
and the ``requires_grad`` it then has).

    python recipes_basics.py [torch|numbagrad]
"""
import os
import pickle
import re
import tempfile
import warnings

import numpy as np

from _common import BACKEND, numpy_init, show

if BACKEND == "torch":
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    import torch.optim as optim
    import torch.utils.benchmark as benchmark
else:
    import numbagrad as torch
    import numbagrad.nn as nn
    import numbagrad.nn.functional as F
    import numbagrad.optim as optim
    import numbagrad.utils.benchmark as benchmark

warnings.filterwarnings("ignore", message="dropout2d: Received a 2-D input")
rng = np.random.default_rng(0)


# ---- Defining a Neural Network in PyTorch
class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()

        # First 2D convolutional layer, taking in 1 input channel (image),
        # outputting 32 convolutional features, with a square kernel size of 3
        self.conv1 = nn.Conv2d(1, 32, 3, 1)
        # Second 2D convolutional layer, taking in the 32 input layers,
        # outputting 64 convolutional features, with a square kernel size of 3
        self.conv2 = nn.Conv2d(32, 64, 3, 1)

        # Designed to ensure that adjacent pixels are either all 0s or all active
        # with an input probability
        self.dropout1 = nn.Dropout2d(0.25)
        self.dropout2 = nn.Dropout2d(0.5)

        # First fully connected layer
        self.fc1 = nn.Linear(9216, 128)
        # Second fully connected layer that outputs our 10 labels
        self.fc2 = nn.Linear(128, 10)

    # x represents our data
    def forward(self, x):
        # Pass data through conv1
        x = self.conv1(x)
        # Use the rectified-linear activation function over x
        x = F.relu(x)

        x = self.conv2(x)
        x = F.relu(x)

        # Run max pooling over x
        x = F.max_pool2d(x, 2)
        # Pass data through dropout1
        x = self.dropout1(x)
        # Flatten x with start_dim=1
        x = torch.flatten(x, 1)
        # Pass data through ``fc1``
        x = self.fc1(x)
        x = F.relu(x)
        x = self.dropout2(x)
        x = self.fc2(x)

        # Apply softmax to x
        output = F.softmax(x, dim=1)
        return output


my_nn = Net()
print(my_nn)
numpy_init(torch, my_nn, seed=1)

# Equates to one random 28x28 image
random_data = torch.from_numpy(rng.random((1, 1, 28, 28)).astype(np.float32))  # torch.rand((1, 1, 28, 28))
result = my_nn(random_data)
show("~train_mode_result_sum", result.sum())
my_nn.eval()
result = my_nn(random_data)
show("eval_result", result)
show("eval_result_sums_to_one", result.sum())
show("num_parameters", sum(p.numel() for p in my_nn.parameters()))


# ---- Zeroing out gradients in PyTorch
class CifarNet(nn.Module):
    def __init__(self):
        super(CifarNet, self).__init__()
        self.conv1 = nn.Conv2d(3, 6, 5)
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = x.view(-1, 16 * 5 * 5)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x


net = CifarNet()
numpy_init(torch, net, seed=2)
criterion = nn.CrossEntropyLoss()
optimizer = optim.SGD(net.parameters(), lr=0.001, momentum=0.9)

images = ((rng.random((40, 3, 32, 32)) - 0.5) / 0.5).astype(np.float32)  # transforms.Normalize((0.5,)*3, (0.5,)*3)
labels = rng.integers(0, 10, 40)
trainloader = [(torch.from_numpy(images[i:i + 4]), torch.from_numpy(labels[i:i + 4])) for i in range(0, 40, 4)]

running_losses = []
for epoch in range(2):  # loop over the dataset multiple times

    running_loss = 0.0
    for i, data in enumerate(trainloader, 0):
        # get the inputs; data is a list of [inputs, labels]
        inputs, labels_ = data

        # zero the parameter gradients
        optimizer.zero_grad()
        if i == 0 and epoch == 1:
            show("grads_none_after_zero_grad", float(all(p.grad is None for p in net.parameters())))

        # forward + backward + optimize
        outputs = net(inputs)
        loss = criterion(outputs, labels_)
        loss.backward()
        optimizer.step()

        # print statistics
        running_loss += loss.item()
        if i % 5 == 4:  # print every 5 mini-batches
            print('[%d, %5d] loss: %.3f' % (epoch + 1, i + 1, running_loss / 5))
            running_losses.append(running_loss / 5)
            running_loss = 0.0

print('Finished Training')
show("running_losses", running_losses)
show("momentum_buffer_conv1", optimizer.state[net.conv1.weight]['momentum_buffer'].flatten()[:4])

# net.zero_grad() zeroes the same gradients the optimizer holds
net(trainloader[0][0]).sum().backward()
show("grad_before_net_zero_grad", net.fc3.bias.grad[:3])
net.zero_grad(set_to_none=False)
show("grad_after_net_zero_grad_false", net.fc3.bias.grad)
net.zero_grad()
show("grad_after_net_zero_grad_is_none", float(net.fc3.bias.grad is None))

# ---- Changing default device
torch.set_default_device('cpu')
mod = torch.nn.Linear(20, 30)
show("default_device_weight_cpu", float(mod.weight.device.type == 'cpu'))
show("default_device_tensor_cpu", float(torch.randn(2).device.type == 'cpu'))
show("get_default_device_cpu", float(str(torch.get_default_device()) == 'cpu'))
with torch.device('cpu'):
    mod = torch.nn.Linear(20, 30)
    show("context_device_weight_cpu", float(mod.weight.device == torch.device('cpu')))
    show("context_zeros_cpu", float(torch.zeros(3).is_cpu))
torch.set_default_device(None)


# ---- Timer quick start
def batched_dot_mul_sum(a, b):
    '''Computes batched dot by multiplying and summing'''
    return a.mul(b).sum(-1)


def batched_dot_bmm(a, b):
    '''Computes batched dot by reducing to ``bmm``'''
    a = a.reshape(-1, 1, a.shape[-1])
    b = b.reshape(-1, b.shape[-1], 1)
    return torch.bmm(a, b).flatten(-3)


# Input for benchmarking
x = torch.from_numpy(rng.normal(size=(100, 64)).astype(np.float32))

# Ensure that both functions compute the same output
assert batched_dot_mul_sum(x, x).allclose(batched_dot_bmm(x, x))
show("batched_dots_agree", batched_dot_mul_sum(x, x)[:4])

t0 = benchmark.Timer(
    stmt='batched_dot_mul_sum(x, x)',
    globals={'x': x, 'batched_dot_mul_sum': batched_dot_mul_sum})

t1 = benchmark.Timer(
    stmt='batched_dot_bmm(x, x)',
    globals={'x': x, 'batched_dot_bmm': batched_dot_bmm})

m0 = t0.timeit(20)
m1 = t1.timeit(20)
show("timeit_positive", float(m0.mean > 0 and m1.mean > 0))
show("timeit_number_runs", float(m0.number_per_run >= 1))
m2 = t1.blocked_autorange(min_run_time=0.05)
show("blocked_autorange_times_positive", float(len(m2.times) >= 1 and all(t > 0 for t in m2.times)))
show("median_positive", float(m2.median > 0))

# ("PyTorch Benchmark" recipe: measurements labelled and collected into a Compare table)
results = []
for b in [1, 16]:
    for n in [8, 64]:
        label = 'Batched dot'
        sub_label = f'[{b}, {n}]'
        x = torch.ones((b, n))
        for num_threads in [1, 4]:
            results.append(benchmark.Timer(
                stmt='batched_dot_mul_sum(x, x)',
                globals={'x': x, 'batched_dot_mul_sum': batched_dot_mul_sum},
                num_threads=num_threads,
                label=label,
                sub_label=sub_label,
                description='mul/sum',
            ).timeit(10))
            results.append(benchmark.Timer(
                stmt='batched_dot_bmm(x, x)',
                globals={'x': x, 'batched_dot_bmm': batched_dot_bmm},
                num_threads=num_threads,
                label=label,
                sub_label=sub_label,
                description='bmm',
            ).timeit(10))


def print_table(compare, name):
    """What ``compare.print()`` shows, less what timing decides: the recipe prints the table,
    whose times (and so the unit, the column widths and the colours) differ between runs and
    libraries. Printed here: each line with its times written as ``#``, the colour codes, the
    padding and the title's dashes taken out; and, as numbers to compare, the thread count of
    each group, the sizes the columns and rows name, the rows headed by their env, the cells
    per row and the number of lines."""
    text = re.sub("\x1b\\[[0-9;]*m", "", str(compare))
    text = re.sub(r"\w+seconds \(\w+\)", "<unit>", text)
    lines = []
    for line in text.splitlines():
        head, bar, cells = line.partition("|")
        cells = " ".join("#" if re.fullmatch(r"\d+(\.\d*)?", w) else w for w in cells.split())
        lines.append(re.sub(r"-{2,}", "-", " ".join((head + bar + " " + cells).split())))
    print("\n".join(lines))
    header, *rows = [line for line in lines if "|" in line]
    show(name + "_thread_groups", [int(line.split()[0]) for line in lines if "threads:" in line])
    # (the sizes in the column headers, then in each row's name: the tables' order)
    show(name + "_sizes", [int(v) for v in re.findall(r"\d+", header)]
         + [int(v) for row in rows for v in re.findall(r"\d+", row.split("|")[0])])
    show(name + "_rows_headed_by_env", sum(row.startswith("(") for row in rows))
    show(name + "_cells_per_row", [row.count("#") for row in rows])
    show(name + "_lines", len(lines))


compare = benchmark.Compare(results)
print_table(compare, "compare")  # compare.print()
show("compare_measurements", len(results))

# ("PyTorch Benchmark" recipe: results pickled as an A/B test would save them, then compared
# by env, trimmed to their significant figures and coloured)
ab_test_results = []
for env in ('environment A: mul/sum', 'environment B: bmm'):
    for b, n in ((1, 1), (16, 64)):
        x = torch.ones((b, n))
        dot_fn = (batched_dot_mul_sum if env == 'environment A: mul/sum' else batched_dot_bmm)
        m = benchmark.Timer(
            stmt='batched_dot(x, x)',
            globals={'x': x, 'batched_dot': dot_fn},
            num_threads=1,
            label='Batched dot',
            description=f'[{b}, {n}]',
            env=env,
        ).timeit(10)  # .blocked_autorange(min_run_time=1)
        ab_test_results.append(pickle.dumps(m))

ab_results = [pickle.loads(i) for i in ab_test_results]
compare = benchmark.Compare(ab_results)
compare.trim_significant_figures()
compare.colorize()
print_table(compare, "ab_compare")  # compare.print()
show("ab_pickled_number_per_run", [m.number_per_run for m in ab_results])

# ---- Tips for loading an nn.Module
with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "checkpoint.pth")
    m = torch.nn.Sequential(*[torch.nn.Linear(10, 10) for _ in range(3)])
    numpy_init(torch, m, seed=5)
    torch.save(m.state_dict(), path)

    state_dict = torch.load(path, mmap=True, weights_only=True)
    show("loaded_keys", len(state_dict))
    show("loaded_first_weight", state_dict['0.weight'][0, :4])

    new_m = torch.nn.Sequential(*[torch.nn.Linear(10, 10) for _ in range(3)])
    result = new_m.load_state_dict(state_dict, assign=True)
    show("assign_missing_unexpected", [len(result.missing_keys), len(result.unexpected_keys)])
    show("assign_same_values", float(torch.equal(new_m[0].weight, m[0].weight)))
    show("assign_requires_grad", float(new_m[0].weight.requires_grad))
    show("assign_is_parameter", float(isinstance(new_m[0].weight, torch.nn.Parameter)))
    out = new_m(torch.ones(2, 10))
    show("assign_forward", out[0, :4])
