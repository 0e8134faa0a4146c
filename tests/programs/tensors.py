"""PyTorch "Learn the Basics": Tensors."""

import numpy as np

import common  # (tests/programs/common.py: the library chosen, the generated data)

if common.BACKEND == "torch":
    import torch
else:
    import numbagrad as torch

# Initializing a Tensor
data = [[1, 2], [3, 4]]
x_data = torch.tensor(data)
print(x_data, x_data.dtype)

np_array = np.array(data)
x_np = torch.from_numpy(np_array)
print(x_np)

x_ones = torch.ones_like(x_data)  # retains the properties of x_data
print(f"Ones Tensor: \n {x_ones} \n")

x_rand = torch.rand_like(x_data, dtype=torch.float)  # overrides the datatype of x_data
in_range = bool(((x_rand >= 0) & (x_rand < 1)).all())
print(f"Random Tensor: \n {x_rand.shape} {x_rand.dtype} {in_range} \n")

shape = (2, 3,)
rand_tensor = torch.rand(shape)
ones_tensor = torch.ones(shape)
zeros_tensor = torch.zeros(shape)

print(f"Random Tensor: \n {rand_tensor.shape} \n")
print(f"Ones Tensor: \n {ones_tensor} \n")
print(f"Zeros Tensor: \n {zeros_tensor}")

# Attributes of a Tensor
tensor = torch.rand(3, 4)

print(f"Shape of tensor: {tensor.shape}")
print(f"Datatype of tensor: {tensor.dtype}")
print(f"Device tensor is stored on: {tensor.device}")

# We move our tensor to the current accelerator if available
if torch.accelerator.is_available():
    tensor = tensor.to(torch.accelerator.current_accelerator())

# Standard numpy-like indexing and slicing
tensor = torch.ones(4, 4)
print(f"First row: {tensor[0]}")
print(f"First column: {tensor[:, 0]}")
print(f"Last column: {tensor[..., -1]}")
tensor[:, 1] = 0
print(tensor)

# Joining tensors
t1 = torch.cat([tensor, tensor, tensor], dim=1)
print(t1)
print(torch.stack([tensor[0], tensor[1]]).shape)

# Arithmetic operations
# This computes the matrix multiplication between two tensors. y1, y2, y3 will have the same value
y1 = tensor @ tensor.T
y2 = tensor.matmul(tensor.T)

y3 = torch.rand_like(y1)
torch.matmul(tensor, tensor.T, out=y3)
print(y1, torch.equal(y1, y2), torch.equal(y1, y3))

# This computes the element-wise product. z1, z2, z3 will have the same value
z1 = tensor * tensor
z2 = tensor.mul(tensor)

z3 = torch.rand_like(tensor)
torch.mul(tensor, tensor, out=z3)
print(z1, torch.equal(z1, z2), torch.equal(z1, z3))

# Single-element tensors
agg = tensor.sum()
agg_item = agg.item()
print(agg_item, type(agg_item))

# In-place operations
print(f"{tensor} \n")
tensor.add_(5)
print(tensor)

# Bridge with NumPy: Tensor to NumPy array
t = torch.ones(5)
print(f"t: {t}")
n = t.numpy()
print(f"n: {n}")

t.add_(1)
print(f"t: {t}")
print(f"n: {n}")

# NumPy array to Tensor
n = np.ones(5)
t = torch.from_numpy(n)

np.add(n, 1, out=n)
print(f"t: {t}")
print(f"n: {n}")

# Older versions of the tutorial
x = torch.empty(5, 3)
print(x.size(), x.size()[0], len(x))
x = torch.zeros(5, 3, dtype=torch.long)
print(x)
x = torch.tensor([5.5, 3])
print(x)
x = x.new_ones(5, 3, dtype=torch.double)
print(x)
x = torch.randn_like(x, dtype=torch.float)
print(x.size())
y = torch.arange(15, dtype=torch.float32).view(5, 3)
print(x.add(y).shape, torch.add(x, y).shape)
result = torch.empty(5, 3)
torch.add(y, y, out=result)
print(result)
y.add_(y)
print(y[:, 1])
x = torch.arange(16.0).reshape(4, 4)
y = x.view(16)
z = x.view(-1, 8)  # the size -1 is inferred from other dimensions
print(x.size(), y.size(), z.size())
x = torch.tensor([1.5])
print(x, x.item())
a = torch.ones(5)
b = a.numpy()
a.add_(1)
print(a, b)
print(torch.zeros(2, 3).fill_(7).sum(), torch.full((2, 2), 3.0), torch.linspace(0, 1, steps=5))
print(torch.arange(6).reshape(2, 3).transpose(0, 1).contiguous().view(-1))
torch.set_printoptions(precision=2)
print(torch.tensor([1.12345, 2.5]))
torch.set_printoptions(profile="default")
print(torch.tensor([1.12345, 2.5]))
x = torch.tensor([1.0, float("nan"), float("inf"), -2.0])
print(torch.isnan(x), x.isinf(), torch.isfinite(x), torch.is_floating_point(x), torch.is_tensor(x))
print(x[~torch.isnan(x)], torch.where(torch.isfinite(x), x, torch.zeros_like(x)))
