"""UvA Deep Learning course, tutorial 2 "Introduction to PyTorch": tensors from
``torch.Tensor(2, 3, 4)`` (shape only), ``torch.Tensor([[1, 2], [3, 4]])``, ``torch.zeros``,
``torch.rand``; ``x.size()`` unpacked, NumPy round trips, ``add_`` in place, ``view`` /
``permute``, ``torch.matmul`` against ``torch.arange(9).view(3, 3)``, slicing; the small
computational graph (``requires_grad=True`` on ``torch.arange(3, dtype=torch.float32)``,
``y.backward()``, ``x.grad``); seeding with the CUDA and cuDNN switches; the device string and
``.to(device)``; a SimpleClassifier (``nn.Tanh``) listed by ``named_parameters``; the continuous
XOR Dataset (``(data.sum(dim=1) == 1).to(torch.long)``, NumPy noise) through a DataLoader; training
with BCEWithLogitsLoss on ``preds.squeeze(dim=1)`` and ``data_labels.float()``; the state dict
saved, loaded into a new model, and evaluated by ``(torch.sigmoid(preds) >= 0.5).long()``
accumulated as a tensor and printed with a format spec; and the decision boundary on a
``torch.meshgrid(..., indexing='ij')`` grid under ``@torch.no_grad()``, coloured by blending two
RGBA tensors with ``[None, None]`` broadcasting.

    python uva_intro.py [torch|numbagrad]
"""
import os
import tempfile

import numpy as np

from _common import BACKEND, show

if BACKEND == "torch":
    import torch
    import torch.nn as nn
    import torch.utils.data as data
else:
    import numbagrad as torch
    import numbagrad.nn as nn
    import numbagrad.utils.data as data

show("Using_torch", float(torch.__version__ is not None))
torch.manual_seed(42)  # Setting the seed

# --- tensors
x = torch.Tensor(2, 3, 4)
show("uninitialised_shape", list(x.shape))

# Create a tensor from a (nested) list
x = torch.Tensor([[1, 2], [3, 4]])
show("from_list", x)
show("from_list_dtype", float(x.dtype == torch.float32))

# Create a tensor with random values between 0 and 1 with the shape [2, 3, 4]
x = torch.rand(2, 3, 4)
show("rand_in_range", float(bool(((x >= 0) & (x < 1)).all())))

shape = x.shape
show("Shape", list(shape))

size = x.size()
show("Size", list(size))

dim1, dim2, dim3 = x.size()
show("Size_unpacked", [dim1, dim2, dim3])

np_arr = np.array([[1, 2], [3, 4]])
tensor = torch.from_numpy(np_arr)
show("Numpy_array", np_arr)
show("PyTorch_tensor", tensor)
show("from_numpy_dtype_int64", float(tensor.dtype == torch.int64))

tensor = torch.arange(4)
np_arr = tensor.numpy()
show("arange_to_numpy", np_arr)
show("numpy_dtype_int64", float(np_arr.dtype == np.int64))

# operations
x1 = torch.from_numpy(np.random.default_rng(0).random((2, 3)).astype(np.float32))
x2 = torch.from_numpy(np.random.default_rng(1).random((2, 3)).astype(np.float32))
y = x1 + x2
show("X1", x1)
show("X2", x2)
show("Y", y)

x2.add_(x1)
show("X2_after_add_", x2)

x = torch.arange(6)
show("X", x)
x = x.view(2, 3)
show("X_view", x)
x = x.permute(1, 0)  # Swapping dimension 0 and 1
show("X_permute", x)
show("X_permute_contiguous", float(x.is_contiguous()))

x = torch.arange(6)
x = x.view(2, 3)
W = torch.arange(9).view(3, 3)  # We can also stack multiple operations in a single line
h = torch.matmul(x, W)  # Verify the result by calculating it by hand too!
show("h", h)
show("h_dtype_int64", float(h.dtype == torch.int64))

# indexing
x = torch.arange(12).view(3, 4)
show("X_idx", x)
show("Second_column", x[:, 1])
show("First_row", x[0])
show("First_two_rows_last_column", x[:2, -1])
show("Middle_two_rows", x[1:3, :])

# --- dynamic computation graph and backpropagation
x = torch.ones((3,))
show("ones_requires_grad", float(x.requires_grad))
x.requires_grad_(True)
show("after_requires_grad_", float(x.requires_grad))

x = torch.arange(3, dtype=torch.float32, requires_grad=True)  # Only float tensors can have gradients
show("X_graph", x)
a = x + 2
b = a ** 2
c = b + 3
y = c.mean()
show("Y_graph", y)
y.backward()
show("x.grad", x.grad)
show("grad_fns", [a.grad_fn is not None, x.grad_fn is None, y.is_leaf, x.is_leaf])

# --- GPU support
gpu_avail = torch.cuda.is_available()
device = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")
device = torch.device("cpu")  # (the comparison runs on the CPU)
x = torch.zeros(2, 3)
x = x.to(device)
show("X_device_cpu", float(x.device.type == "cpu"))

# GPU operations have a separate seed we also want to set
if torch.cuda.is_available():
    torch.cuda.manual_seed(42)
    torch.cuda.manual_seed_all(42)

# Additionally, some operations on a GPU are implemented stochastic for efficiency
# We want to ensure that all operations are deterministic on GPU (if used) for reproducibility
torch.backends.cudnn.deterministic = True
torch.backends.cudnn.benchmark = False


# --- learning by example: continuous XOR
class MyModule(nn.Module):

    def __init__(self):
        super().__init__()
        # Some init for my module

    def forward(self, x):
        # Function for performing the calculation of the module.
        pass


class SimpleClassifier(nn.Module):

    def __init__(self, num_inputs, num_hidden, num_outputs):
        super().__init__()
        # Initialize the modules we need to build the network
        self.linear1 = nn.Linear(num_inputs, num_hidden)
        self.act_fn = nn.Tanh()
        self.linear2 = nn.Linear(num_hidden, num_outputs)

    def forward(self, x):
        # Perform the calculation of the model to determine the prediction
        x = self.linear1(x)
        x = self.act_fn(x)
        x = self.linear2(x)
        return x


model = SimpleClassifier(num_inputs=2, num_hidden=4, num_outputs=1)
# Printing a module shows all its submodules
print(model)
show("repr_lines", len(repr(model).splitlines()))
for name, param in model.named_parameters():
    print(f"Parameter {name}, shape {param.shape}")
show("param_shapes", [list(p.shape) for _, p in model.named_parameters()])
with torch.no_grad():  # the same start in both libraries
    model.linear1.weight.copy_(torch.tensor([[0.5, -0.3], [0.2, 0.8], [-0.6, 0.4], [0.1, -0.7]]))
    model.linear1.bias.copy_(torch.tensor([0.1, -0.2, 0.05, 0.3]))
    model.linear2.weight.copy_(torch.tensor([[0.4, -0.5, 0.3, 0.6]]))
    model.linear2.bias.zero_()


class XORDataset(data.Dataset):

    def __init__(self, size, std=0.1, seed=0):
        """
        Inputs:
            size - Number of data points we want to generate
            std - Standard deviation of the noise (see generate_continuous_xor function)
        """
        super().__init__()
        self.size = size
        self.std = std
        self.rng = np.random.default_rng(seed)  # (torch.randint / torch.randn in the tutorial)
        self.generate_continuous_xor()

    def generate_continuous_xor(self):
        # Each data point in the XOR dataset has two variables, x and y, that can be either 0 or 1
        # The label is their XOR combination, i.e. 1 if only x or only y is 1 while the other is 0.
        # If x=y, the label is 0.
        data = torch.from_numpy(self.rng.integers(low=0, high=2, size=(self.size, 2)).astype(np.float32))
        label = (data.sum(dim=1) == 1).to(torch.long)
        # To make it slightly more challenging, we add a bit of gaussian noise to the data points.
        data += self.std * torch.from_numpy(self.rng.normal(size=tuple(data.shape)).astype(np.float32))

        self.data = data
        self.label = label

    def __len__(self):
        # Number of data point we have. Alternatively self.data.shape[0], or self.label.shape[0]
        return self.size

    def __getitem__(self, idx):
        # Return the idx-th data point of the dataset
        # If we have multiple things to return (data point and label), we can return them as tuple
        data_point = self.data[idx]
        data_label = self.label[idx]
        return data_point, data_label


dataset = XORDataset(size=200)
show("Size_of_dataset", len(dataset))
show("Data_point_0", list(dataset[0]))
show("label_dtype_long", float(dataset.label.dtype == torch.long))

data_loader = data.DataLoader(dataset, batch_size=8, shuffle=False)
# next(iter(...)) catches the first batch of the data loader
# If shuffle is True, this will return a different batch every time we run this cell
# For iterating over the whole dataset, we can simple use "for batch in data_loader: ..."
data_inputs, data_labels = next(iter(data_loader))
show("Data_inputs", list(data_inputs.shape) + data_inputs[0].tolist())
show("Data_labels", data_labels)

loss_module = nn.BCEWithLogitsLoss()
# Input to the optimizer are the parameters of the model: model.parameters()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

train_dataset = XORDataset(size=1000, seed=1)
train_data_loader = data.DataLoader(train_dataset, batch_size=128, shuffle=False)

# Push model to device. Has to be only done once
model.to(device)


def train_model(model, optimizer, data_loader, loss_module, num_epochs=100):
    # Set model to train mode
    model.train()
    epoch_losses = []

    # Training loop
    for epoch in range(num_epochs):
        total = 0.0
        for data_inputs, data_labels in data_loader:

            # Step 1: Move input data to device (only strictly necessary if we use GPU)
            data_inputs = data_inputs.to(device)
            data_labels = data_labels.to(device)

            # Step 2: Run the model on the input data
            preds = model(data_inputs)
            preds = preds.squeeze(dim=1)  # Output is [Batch size, 1], but we want [Batch size]

            # Step 3: Calculate the loss
            loss = loss_module(preds, data_labels.float())

            # Step 4: Perform backpropagation
            # Before calculating the gradients, we need to ensure that they are all zero.
            # The gradients would not be overwritten, but actually added to the existing ones.
            optimizer.zero_grad()
            # Perform backpropagation
            loss.backward()

            # Step 5: Update the parameters
            optimizer.step()
            total += loss.item()
        epoch_losses.append(total / len(data_loader))
    return epoch_losses


epoch_losses = train_model(model, optimizer, train_data_loader, loss_module, num_epochs=60)
show("epoch_losses", epoch_losses[::6])

state_dict = model.state_dict()
print(state_dict)
show("state_dict", list(state_dict.values()))

# torch.save(object, filename). For the filename, any extension can be used
tmp_dir = tempfile.TemporaryDirectory()  # (removed when the program ends)
path = os.path.join(tmp_dir.name, "our_model.tar")
torch.save(state_dict, path)

# Load state dict from the disk (make sure it is the same name as above)
state_dict = torch.load(path)

# Create a new model and load the state
new_model = SimpleClassifier(num_inputs=2, num_hidden=4, num_outputs=1)
new_model.load_state_dict(state_dict)

# Verify that the parameters are the same
show("Original_model", list(model.state_dict().values())[0])
show("Loaded_model", list(new_model.state_dict().values())[0])

test_dataset = XORDataset(size=500, seed=2)
# drop_last -> Don't drop the last batch although it is smaller than 128
test_data_loader = data.DataLoader(test_dataset, batch_size=128, shuffle=False, drop_last=False)


def eval_model(model, data_loader):
    model.eval()  # Set model to eval mode
    true_preds, num_preds = 0.0, 0.0

    with torch.no_grad():  # Deactivate gradients for the following code
        for data_inputs, data_labels in data_loader:

            # Determine prediction of model on dev set
            data_inputs, data_labels = data_inputs.to(device), data_labels.to(device)
            preds = model(data_inputs)
            preds = preds.squeeze(dim=1)
            preds = torch.sigmoid(preds)  # Sigmoid to map predictions between 0 and 1
            pred_labels = (preds >= 0.5).long()  # Binarize predictions to 0 and 1

            # Keep records of predictions for the accuracy metric (true_preds=TP+TN, num_preds=TP+TN+FP+FN)
            true_preds += (pred_labels == data_labels).sum()
            num_preds += data_labels.shape[0]

    acc = true_preds / num_preds
    print(f"Accuracy of the model: {100.0*acc:4.2f}%")
    return acc


acc = eval_model(new_model, test_data_loader)
show("accuracy", acc)
show("accuracy_is_tensor", float(hasattr(acc, "dtype")))


@torch.no_grad()  # Decorator, same effect as "with torch.no_grad(): ..." over the whole function.
def visualize_classification(model, data, label):
    if isinstance(data, torch.Tensor):
        data = data.cpu().numpy()
    if isinstance(label, torch.Tensor):
        label = label.cpu().numpy()
    data_0 = data[label == 0]
    data_1 = data[label == 1]

    # Let's make use of a lot of operations we have learned above
    model.to(device)
    c0 = torch.Tensor((0.12, 0.47, 0.71, 1.0)).to(device)  # to_rgba("C0")
    c1 = torch.Tensor((1.0, 0.5, 0.05, 1.0)).to(device)  # to_rgba("C1")
    x1 = torch.arange(-0.5, 1.5, step=0.05, device=device)
    x2 = torch.arange(-0.5, 1.5, step=0.05, device=device)
    xx1, xx2 = torch.meshgrid(x1, x2, indexing='ij')  # Meshgrid function as in numpy
    model_inputs = torch.stack([xx1, xx2], dim=-1)
    preds = model(model_inputs)
    preds = torch.sigmoid(preds)
    # Specifying "None" in a dimension creates a new one
    output_image = (1 - preds) * c0[None, None] + preds * c1[None, None]
    output_image = output_image.cpu().numpy()  # Convert to numpy array. This only works for tensors on CPU, hence first push to CPU
    return data_0, data_1, output_image, preds


data_0, data_1, output_image, preds = visualize_classification(model, dataset.data, dataset.label)
show("class_sizes", [len(data_0), len(data_1)])
show("output_image_shape", list(output_image.shape))
show("output_image_corners", output_image[[0, 0, -1, -1], [0, -1, 0, -1]])
show("grid_preds_requires_grad", float(preds.requires_grad))
show("grid_preds_mean", preds.mean())

tmp_dir.cleanup()
