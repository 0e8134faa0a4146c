"""UvA Deep Learning course, tutorial 3 "Activation Functions", on generated 8x8 "FashionMNIST":
activation functions as ``nn.Module`` subclasses of an ActivationFunction base with a ``config``
dict (sigmoid and tanh from ``torch.exp``, ReLU as ``x * (x > 0).float()``, LeakyReLU and ELU by
``torch.where``, Swish), compared with the built-ins; ``get_grads`` by ``x.clone().requires_grad_()``
and ``out.sum().backward()``; a BaseNetwork of ``nn.Sequential(*layers)`` whose config is saved to
JSON beside its state dict and rebuilt by ``act_fn_by_name[...](**config)``; the gradient
statistics of ``params.grad.data.view(-1)`` per weight; the training loop with SGD momentum,
``true_preds += (preds.argmax(dim=-1) == labels).sum()`` formatted as a tensor, early stopping on
validation accuracy with save/load of the best model; activation statistics layer by layer; and
``measure_number_dead_neurons`` by ``torch.logical_and(..., (imgs == 0).all(dim=0))``.

    python uva_activations.py [torch|numbagrad]
"""
import json
import os
import tempfile

import numpy as np

from _common import BACKEND, numpy_init, show

if BACKEND == "torch":
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    import torch.optim as optim
    import torch.utils.data as data
else:
    import numbagrad as torch
    import numbagrad.nn as nn
    import numbagrad.nn.functional as F
    import numbagrad.optim as optim
    import numbagrad.utils.data as data

tmp_dir = tempfile.TemporaryDirectory()  # (removed when the program ends)
CHECKPOINT_PATH = tmp_dir.name
device = torch.device("cuda:0") if torch.cuda.is_available() else torch.device("cpu")
device = torch.device("cpu")  # (the comparison runs on the CPU)


class ActivationFunction(nn.Module):

    def __init__(self):
        super().__init__()
        self.name = self.__class__.__name__
        self.config = {"name": self.name}


class Sigmoid(ActivationFunction):

    def forward(self, x):
        return 1 / (1 + torch.exp(-x))


class Tanh(ActivationFunction):

    def forward(self, x):
        x_exp, neg_x_exp = torch.exp(x), torch.exp(-x)
        return (x_exp - neg_x_exp) / (x_exp + neg_x_exp)


class ReLU(ActivationFunction):

    def forward(self, x):
        return x * (x > 0).float()


class LeakyReLU(ActivationFunction):

    def __init__(self, alpha=0.1):
        super().__init__()
        self.config["alpha"] = alpha

    def forward(self, x):
        return torch.where(x > 0, x, self.config["alpha"] * x)


class ELU(ActivationFunction):

    def forward(self, x):
        return torch.where(x > 0, x, torch.exp(x) - 1)


class Swish(ActivationFunction):

    def forward(self, x):
        return x * torch.sigmoid(x)


act_fn_by_name = {
    "sigmoid": Sigmoid,
    "tanh": Tanh,
    "relu": ReLU,
    "leakyrelu": LeakyReLU,
    "elu": ELU,
    "swish": Swish
}
builtin = {
    "sigmoid": torch.sigmoid,
    "tanh": torch.tanh,
    "relu": F.relu,
    "leakyrelu": lambda x: F.leaky_relu(x, 0.1),
    "elu": F.elu,
    "swish": F.silu,
}


def get_grads(act_fn, x):
    """
    Computes the gradients of an activation function at specified positions.

    Inputs:
        act_fn - An object of the class "ActivationFunction" with an implemented forward pass.
        x - 1D input tensor.
    Output:
        A tensor with the same size of x containing the gradients of act_fn at x.
    """
    x = x.clone().requires_grad_()  # Mark the input as tensor for which we want to store gradients
    out = act_fn(x)
    out.sum().backward()  # Summing results in an equal gradient flow to each element in x
    return x.grad  # Accessing the gradients of x by "x.grad"


# Add activation functions if wanted
act_fns = [act_fn() for act_fn in act_fn_by_name.values()]
x = torch.linspace(-5, 5, 1000)  # Range on which we want to visualize the activation functions
for act_fn in act_fns:
    # Run activation function
    y = act_fn(x)
    y_grads = get_grads(act_fn, x)
    # Push x, y and gradients back to cpu for plotting
    x_np, y, y_grads = x.cpu().numpy(), y.cpu().numpy(), y_grads.cpu().numpy()
    show(f"{act_fn.name}:y", y[::111])
    show(f"{act_fn.name}:grad", y_grads[::111])
    ref = builtin[act_fn.name.lower()](x)
    show(f"{act_fn.name}:vs_builtin", float(np.abs(y - ref.numpy()).max() < 1e-5))
    xg = x.clone().requires_grad_()
    builtin[act_fn.name.lower()](xg).sum().backward()
    show(f"{act_fn.name}:grad_vs_builtin", float(np.abs(y_grads - xg.grad.numpy()).max() < 1e-4))
show("relu_grad_at_zero", get_grads(ReLU(), torch.tensor([-1.0, 0.0, 1.0])))
show("leaky_grad_at_zero", get_grads(LeakyReLU(), torch.tensor([-1.0, 0.0, 1.0])))
show("elu_grad_at_zero", get_grads(ELU(), torch.tensor([-1.0, 0.0, 1.0])))


class BaseNetwork(nn.Module):

    def __init__(self, act_fn, input_size=64, num_classes=10, hidden_sizes=[48, 32, 32, 16]):
        """
        Inputs:
            act_fn - Object of the activation function that should be used as non-linearity in the network.
            input_size - Size of the input images in pixels
            num_classes - Number of classes we want to predict
            hidden_sizes - A list of integers specifying the hidden layer sizes in the NN
        """
        super().__init__()

        # Create the network based on the specified hidden sizes
        layers = []
        layer_sizes = [input_size] + hidden_sizes
        layer_size_last = layer_sizes[0]
        for layer_size in layer_sizes[1:]:
            layers += [nn.Linear(layer_size_last, layer_size), act_fn]
            layer_size_last = layer_size
        layers += [nn.Linear(layer_sizes[-1], num_classes)]
        # nn.Sequential summarizes a list of modules into a single module, applying them in sequence
        self.layers = nn.Sequential(*layers)

        # We store all hyperparameters in a dictionary for saving and loading of the model
        self.config = {
            "act_fn": act_fn.config,
            "input_size": input_size,
            "num_classes": num_classes,
            "hidden_sizes": hidden_sizes,
        }

    def forward(self, x):
        x = x.view(x.size(0), -1)  # Reshape images to a flat vector
        out = self.layers(x)
        return out


def _get_config_file(model_path, model_name):
    # Name of the file for storing hyperparameter details
    return os.path.join(model_path, model_name + ".config")


def _get_model_file(model_path, model_name):
    # Name of the file for storing network parameters
    return os.path.join(model_path, model_name + ".tar")


def load_model(model_path, model_name, net=None):
    """
    Loads a saved model from disk.

    Inputs:
        model_path - Path of the checkpoint directory
        model_name - Name of the model (str)
        net - (Optional) If given, the state dict is loaded into this model. Otherwise, a new model is created.
    """
    config_file, model_file = _get_config_file(model_path, model_name), _get_model_file(model_path, model_name)
    assert os.path.isfile(config_file), \
        f"Could not find the config file \"{config_file}\". Are you sure this is the correct path and you have your model config stored here?"
    assert os.path.isfile(model_file), \
        f"Could not find the model file \"{model_file}\". Are you sure this is the correct path and you have your model stored here?"
    with open(config_file) as f:
        config_dict = json.load(f)
    if net is None:
        act_fn_name = config_dict["act_fn"].pop("name").lower()
        act_fn = act_fn_by_name[act_fn_name](**config_dict.pop("act_fn"))
        net = BaseNetwork(act_fn=act_fn, **config_dict)
    net.load_state_dict(torch.load(model_file, map_location=device))
    return net


def save_model(model, model_path, model_name):
    """
    Given a model, we save the state_dict and hyperparameters.

    Inputs:
        model - Network object to save parameters from
        model_path - Path of the checkpoint directory
        model_name - Name of the model (str)
    """
    config_dict = model.config
    os.makedirs(model_path, exist_ok=True)
    config_file, model_file = _get_config_file(model_path, model_name), _get_model_file(model_path, model_name)
    with open(config_file, "w") as f:
        json.dump(config_dict, f)
    torch.save(model.state_dict(), model_file)


# --- the data: 10 classes of noisy 8x8 templates, normalised to [-1, 1] like
# transforms.Normalize((0.5,), (0.5,))
rng = np.random.default_rng(42)
templates = (rng.random((10, 1, 8, 8)) > 0.5).astype(np.float64)


def make_split(n):
    labels = rng.integers(0, 10, size=n)
    imgs = np.clip(templates[labels] + 0.3 * rng.normal(size=(n, 1, 8, 8)), 0, 1)
    imgs = (imgs - 0.5) / 0.5
    return data.TensorDataset(torch.from_numpy(imgs.astype(np.float32)), torch.from_numpy(labels))


train_set, val_set, test_set = make_split(512), make_split(128), make_split(128)
train_loader = data.DataLoader(train_set, batch_size=64, shuffle=False, drop_last=False)
val_loader = data.DataLoader(val_set, batch_size=128, shuffle=False, drop_last=False)
test_loader = data.DataLoader(test_set, batch_size=128, shuffle=False, drop_last=False)
imgs, _ = next(iter(train_loader))
show("Mean", imgs.mean().item())
show("Std", imgs.std().item())
show("Maximum", imgs.max().item())
show("Minimum", imgs.min().item())
show("Shape_of_tensor", list(imgs.shape))


# --- gradient flow after initialization
def visualize_gradients(net, tag):
    """
    Inputs:
        net - Object of class BaseNetwork
    """
    net.eval()
    small_loader = data.DataLoader(train_set, batch_size=256, shuffle=False)
    imgs, labels = next(iter(small_loader))
    imgs, labels = imgs.to(device), labels.to(device)

    # Pass one batch through the network, and calculate the gradients for the weights
    net.zero_grad()
    preds = net(imgs)
    loss = F.cross_entropy(preds, labels)
    loss.backward()
    # We limit our visualization to the weight parameters and exclude the bias to reduce the number of plots
    grads = {
        name: params.grad.data.view(-1).cpu().clone().numpy()
        for name, params in net.named_parameters()
        if "weight" in name
    }
    net.zero_grad()
    show(f"{tag}:grad_std", [np.std(g) for g in grads.values()])
    show(f"{tag}:grad_absmax", [np.abs(g).max() for g in grads.values()])
    show(f"{tag}:grad_none_after_zero_grad", [p.grad is None for p in net.parameters()])


for i, act_fn_name in enumerate(act_fn_by_name):
    torch.manual_seed(42)
    act_fn = act_fn_by_name[act_fn_name]()
    net_actfn = BaseNetwork(act_fn=act_fn).to(device)
    numpy_init(torch, net_actfn, seed=i)
    visualize_gradients(net_actfn, act_fn_name)


# --- training
def train_model(net, model_name, max_epochs=50, patience=7, batch_size=256, overwrite=False):
    """
    Train a model on the training set of FashionMNIST

    Inputs:
        net - Object of BaseNetwork
        model_name - (str) Name of the model, used for creating the checkpoint names
        max_epochs - Number of epochs we want to (maximally) train for
        patience - If the performance on the validation set has not improved for #patience epochs, we stop training early
        batch_size - Size of batches used in training
        overwrite - Determines how to handle the case when there already exists a checkpoint. If True, it will be overwritten. Otherwise, we skip training.
    """
    file_exists = os.path.isfile(_get_model_file(CHECKPOINT_PATH, model_name))
    if file_exists and not overwrite:
        print("Model file already exists. Skipping training...")
    else:
        if file_exists:
            print("Model file exists, but will be overwritten...")

        # Defining optimizer, loss and data loader
        optimizer = optim.SGD(net.parameters(), lr=1e-2, momentum=0.9)  # Default parameters, feel free to change
        loss_module = nn.CrossEntropyLoss()
        train_loader_local = data.DataLoader(train_set, batch_size=batch_size, shuffle=False, drop_last=True)

        val_scores = []
        best_val_epoch = -1
        for epoch in range(max_epochs):
            ############
            # Training #
            ############
            net.train()
            true_preds, count = 0.0, 0
            for imgs, labels in train_loader_local:
                imgs, labels = imgs.to(device), labels.to(device)  # To GPU
                optimizer.zero_grad()  # Zero-grad can be placed anywhere before "loss.backward()"
                preds = net(imgs)
                loss = loss_module(preds, labels)
                loss.backward()
                optimizer.step()
                # Record statistics during training
                true_preds += (preds.argmax(dim=-1) == labels).sum()
                count += labels.shape[0]
            train_acc = true_preds / count

            ##############
            # Validation #
            ##############
            val_acc = test_model(net, val_loader)
            val_scores.append(val_acc)
            print(
                f"[Epoch {epoch+1:2d}] Training accuracy: {train_acc*100.0:05.2f}%, Validation accuracy: {val_acc*100.0:05.2f}%"
            )

            if len(val_scores) == 1 or val_acc > val_scores[best_val_epoch]:
                print("\t   (New best performance, saving model...)")
                save_model(net, CHECKPOINT_PATH, model_name)
                best_val_epoch = epoch
            elif best_val_epoch <= epoch - patience:
                print(f"Early stopping due to no improvement over the last {patience} epochs")
                break

        show(f"{model_name}:val_scores", val_scores)
        show(f"{model_name}:best_val_epoch", best_val_epoch)
        show(f"{model_name}:train_acc", train_acc)
        show(f"{model_name}:train_acc_is_tensor", float(hasattr(train_acc, "item")))

    # Load best model and return it.
    net = load_model(CHECKPOINT_PATH, model_name, net=net)
    test_acc = test_model(net, test_loader)
    print((f" Test accuracy: {test_acc*100.0:4.2f}% ").center(50, "=") + "\n")
    return test_acc


def test_model(net, data_loader):
    """
    Test a model on a specified dataset.

    Inputs:
        net - Trained model of type BaseNetwork
        data_loader - DataLoader object of the dataset to test on (validation or test)
    """
    net.eval()
    true_preds, count = 0.0, 0
    for imgs, labels in data_loader:
        imgs, labels = imgs.to(device), labels.to(device)
        with torch.no_grad():
            preds = net(imgs).argmax(dim=-1)
            true_preds += (preds == labels).sum().item()
            count += labels.shape[0]
    test_acc = true_preds / count
    return test_acc


test_accs = []
for i, act_fn_name in enumerate(["sigmoid", "relu", "leakyrelu", "swish"]):
    torch.manual_seed(42)
    act_fn = act_fn_by_name[act_fn_name]()
    net_actfn = BaseNetwork(act_fn=act_fn).to(device)
    numpy_init(torch, net_actfn, seed=10 + i)
    test_accs.append(train_model(net_actfn, f"FashionMNIST_{act_fn_name}", max_epochs=8, patience=3,
                                 batch_size=16, overwrite=False))
show("test_accs", test_accs)

# reloading from the config file alone
net_loaded = load_model(CHECKPOINT_PATH, "FashionMNIST_leakyrelu")
show("loaded_alpha", net_loaded.layers[1].config["alpha"])
show("loaded_test_acc", test_model(net_loaded, test_loader))
show("loaded_sizes", [m.out_features for m in net_loaded.layers if isinstance(m, nn.Linear)])
show("loaded_shares_act_fn", float(net_loaded.layers[1] is net_loaded.layers[3]))


# --- activation distribution
def visualize_activations(net, tag):
    activations = {}

    net.eval()
    small_loader = data.DataLoader(train_set, batch_size=128)
    imgs, labels = next(iter(small_loader))
    with torch.no_grad():
        layer_index = 0
        imgs = imgs.to(device)
        imgs = imgs.view(imgs.size(0), -1)
        # We need to manually loop through the layers to save all activations
        for layer_index, layer in enumerate(net.layers[:-1]):
            imgs = layer(imgs)
            activations[layer_index] = imgs.view(-1).cpu().numpy()
    show(f"{tag}:act_std", [np.std(a) for a in activations.values()])
    show(f"{tag}:act_hist", np.histogram(activations[1], bins=5, range=(-2, 2))[0])


for act_fn_name in ["sigmoid", "relu", "swish"]:
    net_actfn = load_model(model_path=CHECKPOINT_PATH, model_name=f"FashionMNIST_{act_fn_name}").to(device)
    visualize_activations(net_actfn, act_fn_name)


# --- finding dead neurons in ReLU networks
def measure_number_dead_neurons(net, tag):
    """Function to measure the number of dead neurons in a trained neural network.

    For each neuron, we create a boolean variable initially set to 1. If it has an activation unequals 0 at any time, we
    set this variable to 0. After running through the whole training set, only dead neurons will have a 1.
    """
    neurons_dead = [
        torch.ones(layer.weight.shape[0], device=device, dtype=torch.bool)
        for layer in net.layers[:-1]
        if isinstance(layer, nn.Linear)
    ]  # Same shapes as hidden size in BaseNetwork

    net.eval()
    with torch.no_grad():
        for imgs, labels in train_loader:  # Run through whole training set
            layer_index = 0
            imgs = imgs.to(device)
            imgs = imgs.view(imgs.size(0), -1)
            for layer in net.layers[:-1]:
                imgs = layer(imgs)
                if isinstance(layer, ActivationFunction):
                    # Are all activations == 0 in the batch, and we did not record the opposite in the last batches?
                    neurons_dead[layer_index] = torch.logical_and(neurons_dead[layer_index], (imgs == 0).all(dim=0))
                    layer_index += 1
    number_neurons_dead = [t.sum().item() for t in neurons_dead]
    print("Number of dead neurons:", number_neurons_dead)
    print(
        "In percentage:",
        ", ".join(
            [f"{(100.0 * num_dead / tens.shape[0]):4.2f}%" for tens, num_dead in zip(neurons_dead, number_neurons_dead)]
        ),
    )
    show(f"{tag}:dead", number_neurons_dead)


net_relu = BaseNetwork(act_fn=ReLU()).to(device)
numpy_init(torch, net_relu, seed=20)
measure_number_dead_neurons(net_relu, "untrained")
net_relu = load_model(model_path=CHECKPOINT_PATH, model_name="FashionMNIST_relu").to(device)
measure_number_dead_neurons(net_relu, "trained")
net_relu = BaseNetwork(act_fn=ReLU(), hidden_sizes=[32, 32, 32, 32, 32, 24, 24, 16, 16, 8]).to(device)
numpy_init(torch, net_relu, seed=21)
with torch.no_grad():  # a deep net with negatively shifted biases kills units
    for m in net_relu.layers:
        if isinstance(m, nn.Linear):
            m.bias.sub_(0.3)
measure_number_dead_neurons(net_relu, "deep")

tmp_dir.cleanup()
