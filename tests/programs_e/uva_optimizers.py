"""UvA Deep Learning course, tutorial 4 "Optimization and Initialization", on generated data:
initialisations written on ``param.data`` (``fill_``, ``normal_(mean=, std=)``, ``uniform_`` with
the Xavier bound, Kaiming with the first layer told apart by ``name.startswith("layers.0")``),
checked by their statistics, then NumPy weights with an Identity activation to follow the
activation and gradient variance layer by layer; hand-written optimizers subclassing an
OptimizerTemplate (``p.grad.detach_(); p.grad.zero_()``, a ``@torch.no_grad()`` step that skips
``p.grad is None`` and calls ``update_param``, state in dicts keyed by the parameter tensors,
``p.add_(p_update)``): SGD, SGDMomentum and Adam, each compared with ``torch.optim``; the
``train_curve`` runs on a pathological curvature and on steep Gaussian optima
(``nn.Parameter(torch.FloatTensor(init))``, ``torch.cat([weights.data.detach(),
loss.unsqueeze(dim=0).detach()])``, ``torch.stack(...).numpy()``); and a small network trained
with each optimizer.

    python uva_optimizers.py [torch|numbagrad]
"""
import math

import numpy as np

from _common import BACKEND, show

if BACKEND == "torch":
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    import torch.utils.data as data
else:
    import numbagrad as torch
    import numbagrad.nn as nn
    import numbagrad.nn.functional as F
    import numbagrad.utils.data as data

device = torch.device("cpu")
rng = np.random.default_rng(42)

# the data: 64-pixel images in [-1, 1] of 10 classes
templates = (rng.random((10, 64)) > 0.5).astype(np.float64)
labels = rng.integers(0, 10, size=1024)
imgs = np.clip(templates[labels] + 0.3 * rng.normal(size=(1024, 64)), 0, 1) * 2 - 1
train_set = data.TensorDataset(torch.from_numpy(imgs[:768].astype(np.float32)).view(-1, 1, 8, 8),
                               torch.from_numpy(labels[:768]))
test_set = data.TensorDataset(torch.from_numpy(imgs[768:].astype(np.float32)).view(-1, 1, 8, 8),
                              torch.from_numpy(labels[768:]))
train_loader = data.DataLoader(train_set, batch_size=64, shuffle=False, drop_last=False)
test_loader = data.DataLoader(test_set, batch_size=256, shuffle=False, drop_last=False)


class Identity(nn.Module):
    def forward(self, x):
        return x


act_fn_by_name = {"tanh": nn.Tanh, "relu": nn.ReLU, "identity": Identity}


class BaseNetwork(nn.Module):

    def __init__(self, act_fn, input_size=64, num_classes=10, hidden_sizes=[128, 64, 64, 64, 32]):
        super().__init__()

        # Create the network based on the specified hidden sizes
        layers = []
        layer_sizes = [input_size] + hidden_sizes
        for layer_index in range(1, len(layer_sizes)):
            layers += [nn.Linear(layer_sizes[layer_index - 1], layer_sizes[layer_index]), act_fn]
        layers += [nn.Linear(layer_sizes[-1], num_classes)]
        self.layers = nn.ModuleList(layers)  # A module list registers a list of modules as submodules (e.g. for parameters)

        self.config = {
            "act_fn": act_fn.__class__.__name__,
            "input_size": input_size,
            "num_classes": num_classes,
            "hidden_sizes": hidden_sizes,
        }

    def forward(self, x):
        x = x.view(x.size(0), -1)
        for layer in self.layers:
            x = layer(x)
        return x


# --- initialisation: the distributions checked by their statistics
def const_init(model, fill=0.0):
    for name, param in model.named_parameters():
        param.data.fill_(fill)


def var_init(model, std=0.01):
    for name, param in model.named_parameters():
        param.data.normal_(mean=0.0, std=std)


def equal_var_init(model):
    for name, param in model.named_parameters():
        if name.endswith(".bias"):
            param.data.fill_(0)
        else:
            param.data.normal_(std=1.0 / math.sqrt(param.shape[1]))


def xavier_init(model):
    for name, param in model.named_parameters():
        if name.endswith(".bias"):
            param.data.fill_(0)
        else:
            bound = math.sqrt(6) / math.sqrt(param.shape[0] + param.shape[1])
            param.data.uniform_(-bound, bound)


def kaiming_init(model):
    for name, param in model.named_parameters():
        if name.endswith(".bias"):
            param.data.fill_(0)
        elif name.startswith("layers.0"):  # The first layer does not have ReLU applied on its input
            param.data.normal_(0, 1 / math.sqrt(param.shape[1]))
        else:
            param.data.normal_(0, math.sqrt(2) / math.sqrt(param.shape[1]))


model = BaseNetwork(act_fn=Identity()).to(device)
const_init(model, fill=0.005)
show("const_init", [p.unique() for p in model.parameters()][:2])
torch.manual_seed(42)
var_init(model, std=0.01)
show("var_init_std_ok", [abs(p.std().item() - 0.01) < 0.002 for p in model.parameters() if p.dim() == 2])
torch.manual_seed(42)
equal_var_init(model)
show("equal_var_std_ok", [abs(p.std().item() * math.sqrt(p.shape[1]) - 1) < 0.25
                          for p in model.parameters() if p.dim() == 2])
show("equal_var_bias_zero", [p.abs().sum().item() for p in model.parameters() if p.dim() == 1])
torch.manual_seed(42)
xavier_init(model)
show("xavier_within_bound", [bool(p.abs().max() <= math.sqrt(6 / (p.shape[0] + p.shape[1])))
                             for p in model.parameters() if p.dim() == 2])
show("xavier_uses_range", [bool(p.abs().max() > 0.9 * math.sqrt(6 / (p.shape[0] + p.shape[1])))
                           for p in model.parameters() if p.dim() == 2])
torch.manual_seed(42)
kaiming_init(model)
show("kaiming_std_ratio_ok", [abs(p.std().item() * math.sqrt(p.shape[1]) / (1 if i == 0 else math.sqrt(2)) - 1) < 0.25
                              for i, p in enumerate(p for p in model.parameters() if p.dim() == 2)])


# --- activation and gradient statistics of fixed (NumPy) weights
def np_init(model, scheme):
    g = np.random.default_rng(7)
    with torch.no_grad():
        for name, param in model.named_parameters():
            if name.endswith(".bias"):
                param.data.fill_(0)
                continue
            fan_out, fan_in = param.shape
            if scheme == "xavier":
                bound = math.sqrt(6) / math.sqrt(fan_in + fan_out)
                w = g.uniform(-bound, bound, size=(fan_out, fan_in))
            elif scheme == "kaiming":
                std = (1 if name.startswith("layers.0") else math.sqrt(2)) / math.sqrt(fan_in)
                w = g.normal(0, std, size=(fan_out, fan_in))
            else:
                w = g.normal(0, scheme, size=(fan_out, fan_in))
            param.data.copy_(torch.from_numpy(w.astype(np.float32)))


def visualize_gradients(model, tag):
    model.train()
    small_loader = data.DataLoader(train_set, batch_size=256, shuffle=False)
    imgs, labels = next(iter(small_loader))
    imgs, labels = imgs.to(device), labels.to(device)

    # Pass one batch through the network, and calculate the gradients for the weights
    model.zero_grad()
    preds = model(imgs)
    loss = F.cross_entropy(preds, labels)  # Same as nn.CrossEntropyLoss, but as a function instead of module
    loss.backward()
    # We limit our visualization to the weight parameters and exclude the bias to reduce the number of plots
    grads = {
        name: params.grad.view(-1).cpu().clone().numpy()
        for name, params in model.named_parameters()
        if "weight" in name
    }
    model.zero_grad()
    show(f"{tag}:grad_var", [np.var(g) for g in grads.values()])


def visualize_activations(model, tag):
    model.eval()
    small_loader = data.DataLoader(train_set, batch_size=512, shuffle=False)
    imgs, labels = next(iter(small_loader))
    imgs, labels = imgs.to(device), labels.to(device)

    # Pass one batch through the network, and calculate the gradients for the weights
    feats = imgs.view(imgs.shape[0], -1)
    activations = {}
    with torch.no_grad():
        for layer_index, layer in enumerate(model.layers):
            feats = layer(feats)
            if isinstance(layer, nn.Linear):
                activations[f"Layer {layer_index}"] = feats.view(-1).detach().cpu().numpy()
    show(f"{tag}:act_var", [np.var(a) for a in activations.values()])


for act_fn_name, scheme in [("identity", 0.01), ("identity", 0.1), ("identity", "xavier"),
                            ("tanh", "xavier"), ("relu", "kaiming")]:
    model = BaseNetwork(act_fn=act_fn_by_name[act_fn_name]()).to(device)
    np_init(model, scheme)
    visualize_gradients(model, f"{act_fn_name}_{scheme}")
    visualize_activations(model, f"{act_fn_name}_{scheme}")


# --- optimizers written by hand
class OptimizerTemplate:

    def __init__(self, params, lr):
        self.params = list(params)
        self.lr = lr

    def zero_grad(self):
        # Set gradients of all parameters to zero
        for p in self.params:
            if p.grad is not None:
                p.grad.detach_()  # For second-order optimizers important
                p.grad.zero_()

    @torch.no_grad()
    def step(self):
        # Apply update step to all parameters
        for p in self.params:
            if p.grad is None:  # We skip parameters without any gradients
                continue
            self.update_param(p)

    def update_param(self, p):
        # To be implemented in optimizer-specific classes
        raise NotImplementedError


class SGD(OptimizerTemplate):

    def __init__(self, params, lr):
        super().__init__(params, lr)

    def update_param(self, p):
        p_update = -self.lr * p.grad
        p.add_(p_update)  # In-place update => saves memory and does not create computation graph


class SGDMomentum(OptimizerTemplate):

    def __init__(self, params, lr, momentum=0.0):
        super().__init__(params, lr)
        self.momentum = momentum  # Corresponds to beta_1 in the equation above
        self.param_momentum = {p: torch.zeros_like(p.data) for p in self.params}  # Dict to store m_t

    def update_param(self, p):
        self.param_momentum[p] = (1 - self.momentum) * p.grad + self.momentum * self.param_momentum[p]
        p_update = -self.lr * self.param_momentum[p]
        p.add_(p_update)


class Adam(OptimizerTemplate):

    def __init__(self, params, lr, beta1=0.9, beta2=0.999, eps=1e-8):
        super().__init__(params, lr)
        self.beta1 = beta1
        self.beta2 = beta2
        self.eps = eps
        self.param_step = {p: 0 for p in self.params}  # Remembers "t" for each parameter for bias correction
        self.param_momentum = {p: torch.zeros_like(p.data) for p in self.params}
        self.param_2nd_momentum = {p: torch.zeros_like(p.data) for p in self.params}

    def update_param(self, p):
        self.param_step[p] += 1

        self.param_momentum[p] = (1 - self.beta1) * p.grad + self.beta1 * self.param_momentum[p]
        self.param_2nd_momentum[p] = (1 - self.beta2) * (p.grad) ** 2 + self.beta2 * self.param_2nd_momentum[p]

        bias_correction_1 = 1 - self.beta1 ** self.param_step[p]
        bias_correction_2 = 1 - self.beta2 ** self.param_step[p]

        p_2nd_mom = self.param_2nd_momentum[p] / bias_correction_2
        p_mom = self.param_momentum[p] / bias_correction_1
        p_lr = self.lr / (torch.sqrt(p_2nd_mom) + self.eps)
        p_update = -p_lr * p_mom

        p.add_(p_update)


# --- pathological curvatures
def pathological_curve_loss(w1, w2):
    # Example of a pathological curvature. There are many more possible, feel free to experiment here!
    x1_loss = torch.tanh(w1) ** 2 + 0.01 * torch.abs(w1)
    x2_loss = torch.sigmoid(w2)
    return x1_loss + x2_loss


def train_curve(optimizer_func, curve_func=pathological_curve_loss, num_updates=100, init=[5, 5]):
    """
    Inputs:
        optimizer_func - Constructor of the optimizer to use. Should only take a parameter list
        curve_func - Loss function (e.g. pathological curvature)
        num_updates - Number of updates/steps to take when optimizing
        init - Initial values of parameters. Must be a list/tuple with two elements representing w_1 and w_2
    Outputs:
        Numpy array of shape [num_updates, 3] with [t,:2] being the parameter values at step t, and [t,2] the loss at t.
    """
    weights = nn.Parameter(torch.FloatTensor(init), requires_grad=True)
    optimizer = optimizer_func([weights])

    list_points = []
    for _ in range(num_updates):
        loss = curve_func(weights[0], weights[1])
        list_points.append(torch.cat([weights.data.detach(), loss.unsqueeze(dim=0).detach()], dim=0))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    points = torch.stack(list_points, dim=0).numpy()
    return points


SGD_points = train_curve(lambda params: SGD(params, lr=10))
SGDMom_points = train_curve(lambda params: SGDMomentum(params, lr=10, momentum=0.9))
Adam_points = train_curve(lambda params: Adam(params, lr=1))
# (with lr=10 the SGD paths are chaotic once they leave the plateau: one-ulp differences in the
# gradient of tanh(w1)**2 near saturation grow without bound, so only the first steps are shown)
show("SGD_points", SGD_points[:16:3])
show("SGDMom_points", SGDMom_points[:16:3])
show("Adam_points", Adam_points[::20])
show("Adam_final", Adam_points[-1])

# the same runs through torch.optim: SGD and Adam agree with the templates; SGD with dampening
# equal to momentum is not SGDMomentum, since torch.optim's first step takes the whole gradient
# into the buffer where the template starts from zeros
ref_SGD = train_curve(lambda params: torch.optim.SGD(params, lr=10))
ref_SGDMom = train_curve(lambda params: torch.optim.SGD(params, lr=10, momentum=0.9, dampening=0.9))
ref_Adam = train_curve(lambda params: torch.optim.Adam(params, lr=1))
show("SGD_vs_optim_close", float(np.abs(SGD_points[:16] - ref_SGD[:16]).max() < 1e-3))
show("SGDMom_vs_optim_close", float(np.abs(SGDMom_points[1:16] - ref_SGDMom[1:16]).max() < 1e-3))
show("ref_SGDMom_first", ref_SGDMom[:3])
show("Adam_vs_optim_close", float(np.abs(Adam_points - ref_Adam).max() < 1e-3))


# steep optima
def bivar_gaussian(w1, w2, x_mean=0.0, y_mean=0.0, x_sig=1.0, y_sig=1.0):
    norm = 1 / (2 * np.pi * x_sig * y_sig)
    x_exp = (-1 * (w1 - x_mean) ** 2) / (2 * x_sig ** 2)
    y_exp = (-1 * (w2 - y_mean) ** 2) / (2 * y_sig ** 2)
    return norm * torch.exp(x_exp + y_exp)


def comb_func(w1, w2):
    z = -bivar_gaussian(w1, w2, x_mean=1.0, y_mean=-0.5, x_sig=0.2, y_sig=0.2)
    z -= bivar_gaussian(w1, w2, x_mean=-1.0, y_mean=0.5, x_sig=0.2, y_sig=0.2)
    z -= bivar_gaussian(w1, w2, x_mean=-0.5, y_mean=-0.8, x_sig=0.2, y_sig=0.2)
    return z


SGD_points = train_curve(lambda params: SGD(params, lr=0.5), comb_func, init=[0, 0])
SGDMom_points = train_curve(lambda params: SGDMomentum(params, lr=1, momentum=0.9), comb_func, init=[0, 0])
Adam_points = train_curve(lambda params: Adam(params, lr=0.2), comb_func, init=[0, 0])
show("steep_SGD", SGD_points[::25])
show("steep_SGDMom", SGDMom_points[::25])
show("steep_Adam", Adam_points[::25])


# --- a network trained with each optimizer
def train_model(net, optimizer, max_epochs=3):
    loss_module = nn.CrossEntropyLoss()
    losses = []
    for epoch in range(max_epochs):
        net.train()
        epoch_loss = 0.0
        for imgs, labels in train_loader:
            imgs, labels = imgs.to(device), labels.to(device)
            optimizer.zero_grad()
            preds = net(imgs)
            loss = loss_module(preds, labels)
            loss.backward()
            optimizer.step()
            epoch_loss += loss.item()
        losses.append(epoch_loss / len(train_loader))
    return losses


def test_model(net, data_loader):
    net.eval()
    true_preds, count = 0.0, 0
    for imgs, labels in data_loader:
        with torch.no_grad():
            preds = net(imgs).argmax(dim=-1)
            true_preds += (preds == labels).sum().item()
            count += labels.shape[0]
    return true_preds / count


for name, make_opt in [("SGD", lambda p: SGD(p, lr=1e-1)),
                       ("SGDMom", lambda p: SGDMomentum(p, lr=1e-1, momentum=0.9)),
                       ("Adam", lambda p: Adam(p, lr=1e-3))]:
    net = BaseNetwork(act_fn=nn.ReLU(), hidden_sizes=[64, 32])
    np_init(net, "kaiming")
    opt = make_opt(net.parameters())
    losses = train_model(net, opt)
    show(f"{name}:losses", losses)
    show(f"{name}:test_acc", test_model(net, test_loader))
    show(f"{name}:n_state", len(getattr(opt, "param_momentum", {})))
    net.layers[0].weight.grad = None  # a parameter without grad is skipped
    before = net.layers[0].weight.clone()
    opt.step()
    show(f"{name}:skipped_none_grad", float(torch.equal(before, net.layers[0].weight)))
