"""Stanford CS231n, assignment 2, in PyTorch: the layer functions of ``layers.py`` (affine, ReLU,
batch normalisation in train and test modes with running averages in a ``bn_param`` dict, inverted
dropout from a fixed mask, SVM and softmax losses) written with their hand-derived backward passes
(``batchnorm_backward`` through the computation graph and the simplified ``batchnorm_backward_alt``),
checked by ``rel_error`` against autograd and against ``eval_numerical_gradient_array`` in float64;
then the PyTorch notebook: barebones ``two_layer_fc`` / ``three_layer_convnet`` on ``F.conv2d``
with ``random_weight`` (a Kaiming std, ``w.requires_grad = True``) and a manual update ``w -=
learning_rate * w.grad`` under ``torch.no_grad()``; ``check_accuracy`` by ``scores.max(1)`` and
``float(num_correct) / num_samples``; the Module API (TwoLayerFC with
``nn.init.kaiming_normal_``) and the Sequential API with a Flatten module, SGD with Nesterov
momentum, ``x.to(device=device, dtype=dtype)``.

    python cs231n_pytorch.py [torch|numbagrad]
"""
import numpy as np

from _common import BACKEND, numpy_init, show

if BACKEND == "torch":
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    import torch.optim as optim
    from torch.utils.data import DataLoader, TensorDataset
else:
    import numbagrad as torch
    import numbagrad.nn as nn
    import numbagrad.nn.functional as F
    import numbagrad.optim as optim
    from numbagrad.utils.data import DataLoader, TensorDataset

rng = np.random.default_rng(231)


def rel_error(x, y):
    """ returns relative error """
    x, y = torch.as_tensor(x), torch.as_tensor(y)
    return (torch.max(torch.abs(x - y) / torch.clamp(torch.abs(x) + torch.abs(y), min=1e-8))).item()


def eval_numerical_gradient_array(f, x, df, h=1e-5):
    """
    Evaluate a numeric gradient for a function that accepts an array and returns an array.
    """
    grad = torch.zeros_like(x)
    flat_x, flat_grad = x.view(-1), grad.view(-1)
    for ix in range(flat_x.numel()):
        oldval = flat_x[ix].item()
        flat_x[ix] = oldval + h
        pos = f(x).clone()
        flat_x[ix] = oldval - h
        neg = f(x).clone()
        flat_x[ix] = oldval

        flat_grad[ix] = torch.sum((pos - neg) * df) / (2 * h)
    return grad


def randn(*shape):
    return torch.from_numpy(rng.normal(size=shape))  # float64, as the assignment's np.random.randn


# --- layers.py
def affine_forward(x, w, b):
    out = x.reshape(x.shape[0], -1) @ w + b
    cache = (x, w, b)
    return out, cache


def affine_backward(dout, cache):
    x, w, b = cache
    dx = (dout @ w.T).reshape(x.shape)
    dw = x.reshape(x.shape[0], -1).T @ dout
    db = dout.sum(dim=0)
    return dx, dw, db


def relu_forward(x):
    out = torch.clamp(x, min=0)
    cache = x
    return out, cache


def relu_backward(dout, cache):
    x = cache
    dx = dout * (x > 0)
    return dx


def batchnorm_forward(x, gamma, beta, bn_param):
    mode = bn_param["mode"]
    eps = bn_param.get("eps", 1e-5)
    momentum = bn_param.get("momentum", 0.9)

    N, D = x.shape
    running_mean = bn_param.get("running_mean", torch.zeros(D, dtype=x.dtype))
    running_var = bn_param.get("running_var", torch.zeros(D, dtype=x.dtype))

    out, cache = None, None
    if mode == "train":
        sample_mean = x.mean(dim=0)
        xmu = x - sample_mean
        sq = xmu ** 2
        sample_var = sq.mean(dim=0)
        sqrtvar = torch.sqrt(sample_var + eps)
        ivar = 1. / sqrtvar
        xhat = xmu * ivar
        out = gamma * xhat + beta
        cache = (xhat, gamma, xmu, ivar, sqrtvar, sample_var, eps)

        running_mean = momentum * running_mean + (1 - momentum) * sample_mean
        running_var = momentum * running_var + (1 - momentum) * sample_var
    elif mode == "test":
        xhat = (x - running_mean) / torch.sqrt(running_var + eps)
        out = gamma * xhat + beta
    else:
        raise ValueError('Invalid forward batchnorm mode "%s"' % mode)

    # Store the updated running means back into bn_param
    bn_param["running_mean"] = running_mean
    bn_param["running_var"] = running_var

    return out, cache


def batchnorm_backward(dout, cache):
    # the computation graph, node by node
    xhat, gamma, xmu, ivar, sqrtvar, var, eps = cache
    N, D = dout.shape
    dbeta = dout.sum(dim=0)
    dgammax = dout
    dgamma = torch.sum(dgammax * xhat, dim=0)
    dxhat = dgammax * gamma
    divar = torch.sum(dxhat * xmu, dim=0)
    dxmu1 = dxhat * ivar
    dsqrtvar = -1. / (sqrtvar ** 2) * divar
    dvar = 0.5 * 1. / torch.sqrt(var + eps) * dsqrtvar
    dsq = 1. / N * torch.ones((N, D), dtype=dout.dtype) * dvar
    dxmu2 = 2 * xmu * dsq
    dx1 = (dxmu1 + dxmu2)
    dmu = -1 * torch.sum(dxmu1 + dxmu2, dim=0)
    dx2 = 1. / N * torch.ones((N, D), dtype=dout.dtype) * dmu
    dx = dx1 + dx2
    return dx, dgamma, dbeta


def batchnorm_backward_alt(dout, cache):
    xhat, gamma, xmu, ivar, sqrtvar, var, eps = cache
    N = dout.shape[0]
    dbeta = dout.sum(dim=0)
    dgamma = (dout * xhat).sum(dim=0)
    dxhat = dout * gamma
    dx = ivar / N * (N * dxhat - dxhat.sum(dim=0) - xhat * (dxhat * xhat).sum(dim=0))
    return dx, dgamma, dbeta


def dropout_forward(x, dropout_param, mask_np):
    p, mode = dropout_param["p"], dropout_param["mode"]
    mask = None
    if mode == "train":
        mask = torch.from_numpy(mask_np < p) / p  # (np.random.rand(*x.shape) < p) / p
        out = x * mask
    elif mode == "test":
        out = x
    cache = (dropout_param, mask)
    out = out.to(x.dtype)
    return out, cache


def dropout_backward(dout, cache):
    dropout_param, mask = cache
    mode = dropout_param["mode"]
    if mode == "train":
        dx = dout * mask
    elif mode == "test":
        dx = dout
    return dx


def svm_loss(x, y):
    N = x.shape[0]
    correct_class_scores = x[torch.arange(N), y]
    margins = torch.clamp(x - correct_class_scores[:, None] + 1.0, min=0)
    margins[torch.arange(N), y] = 0
    loss = torch.sum(margins) / N
    num_pos = torch.sum(margins > 0, dim=1)
    dx = torch.zeros_like(x)
    dx[margins > 0] = 1
    dx[torch.arange(N), y] -= num_pos.to(x.dtype)
    dx /= N
    return loss, dx


def softmax_loss(x, y):
    shifted_logits = x - torch.max(x, dim=1, keepdim=True).values
    Z = torch.sum(torch.exp(shifted_logits), dim=1, keepdim=True)
    log_probs = shifted_logits - torch.log(Z)
    probs = torch.exp(log_probs)
    N = x.shape[0]
    loss = -torch.sum(log_probs[torch.arange(N), y]) / N
    dx = probs.clone()
    dx[torch.arange(N), y] -= 1
    dx /= N
    return loss, dx


def autograd_grads(f, *inputs, dout):
    leaves = [t.detach().clone().requires_grad_(True) for t in inputs]
    out = f(*leaves)
    out.backward(dout)
    return [t.grad for t in leaves]


# affine
x, w, b = randn(10, 2, 3), randn(6, 5), randn(5)
dout = randn(10, 5)
out, cache = affine_forward(x, w, b)
dx, dw, db = affine_backward(dout, cache)
dx_num = eval_numerical_gradient_array(lambda x: affine_forward(x, w, b)[0], x.clone(), dout)
dw_num = eval_numerical_gradient_array(lambda w: affine_forward(x, w, b)[0], w.clone(), dout)
db_num = eval_numerical_gradient_array(lambda b: affine_forward(x, w, b)[0], b.clone(), dout)
show("affine_rel_errors_small", [rel_error(dx_num, dx) < 1e-8, rel_error(dw_num, dw) < 1e-8,
                                 rel_error(db_num, db) < 1e-8])
ag = autograd_grads(lambda x, w, b: affine_forward(x, w, b)[0], x, w, b, dout=dout)
show("affine_vs_autograd_small", [rel_error(a, m) < 1e-12 for a, m in zip(ag, (dx, dw, db))])
show("affine_dx", dx[0, 0])
show("affine_dtype_double", float(dx.dtype == torch.float64))

# relu
x = randn(10, 10)
dout = randn(*x.shape)
dx = relu_backward(dout, relu_forward(x)[1])
dx_num = eval_numerical_gradient_array(lambda x: relu_forward(x)[0], x.clone(), dout)
show("relu_rel_error_small", float(rel_error(dx_num, dx) < 1e-8))
show("relu_dx", dx[0])
show("relu_dx_dtype_double", float(dx.dtype == torch.float64))

# batch normalisation: forward statistics
N, D1, D2, D3 = 200, 50, 60, 3
X = randn(N, D1)
W1 = randn(D1, D2)
W2 = randn(D2, D3)
a = torch.clamp(X @ W1, min=0) @ W2
show("before_bn_means", a.mean(dim=0))
show("before_bn_stds", a.std(dim=0, unbiased=False))
gamma = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
beta = torch.tensor([11.0, 12.0, 13.0], dtype=torch.float64)
a_norm, _ = batchnorm_forward(a, gamma, beta, {"mode": "train"})
show("after_bn_means", a_norm.mean(dim=0))
show("after_bn_stds", a_norm.std(dim=0, unbiased=False))
show("vs_F_batch_norm", rel_error(a_norm, F.batch_norm(a, None, None, gamma, beta, training=True)) < 1e-10)

bn_param = {"mode": "train"}
gamma = torch.ones(D3, dtype=torch.float64)
beta = torch.zeros(D3, dtype=torch.float64)
for t in range(50):
    X = randn(N, D1)
    a = torch.clamp(X @ W1, min=0) @ W2
    batchnorm_forward(a, gamma, beta, bn_param)
bn_param["mode"] = "test"
X = randn(N, D1)
a = torch.clamp(X @ W1, min=0) @ W2
a_norm, _ = batchnorm_forward(a, gamma, beta, bn_param)
show("test_mode_means", a_norm.mean(dim=0))
show("test_mode_stds", a_norm.std(dim=0, unbiased=False))
show("running_mean", bn_param["running_mean"])

# batch normalisation: backward
N, D = 4, 5
x = 5 * randn(N, D) + 12
gamma = randn(D)
beta = randn(D)
dout = randn(N, D)
bn_param = {"mode": "train"}
fx = lambda x: batchnorm_forward(x, gamma, beta, bn_param)[0]  # noqa: E731
fg = lambda a: batchnorm_forward(x, a, beta, bn_param)[0]  # noqa: E731
fb = lambda b: batchnorm_forward(x, gamma, b, bn_param)[0]  # noqa: E731
dx_num = eval_numerical_gradient_array(fx, x.clone(), dout)
da_num = eval_numerical_gradient_array(fg, gamma.clone(), dout)
db_num = eval_numerical_gradient_array(fb, beta.clone(), dout)
_, cache = batchnorm_forward(x, gamma, beta, bn_param)
dx, dgamma, dbeta = batchnorm_backward(dout, cache)
show("bn_backward_rel_errors_small", [rel_error(dx_num, dx) < 1e-6, rel_error(da_num, dgamma) < 1e-8,
                                      rel_error(db_num, dbeta) < 1e-8])
dx2, dgamma2, dbeta2 = batchnorm_backward_alt(dout, cache)
show("bn_alt_matches", [rel_error(dx, dx2) < 1e-10, rel_error(dgamma, dgamma2) < 1e-12,
                        rel_error(dbeta, dbeta2) < 1e-12])
ag = autograd_grads(lambda x, g, b: batchnorm_forward(x, g, b, {"mode": "train"})[0], x, gamma, beta, dout=dout)
show("bn_vs_autograd", [rel_error(a, m) < 1e-10 for a, m in zip(ag, (dx, dgamma, dbeta))])
show("bn_dx", dx[0])
show("bn_dgamma", dgamma)

# dropout
x = randn(500, 50) + 10
mask_np = rng.random(x.shape)
for p in [0.25, 0.4, 0.7]:
    out, _ = dropout_forward(x, {"mode": "train", "p": p}, mask_np)
    out_test, _ = dropout_forward(x, {"mode": "test", "p": p}, mask_np)
    show(f"dropout_{p}", [x.mean(), out.mean(), out_test.mean(), (out == 0).double().mean()])
x = randn(10, 10) + 10
dout = randn(*x.shape)
dropout_param = {"mode": "train", "p": 0.2}
mask_np = rng.random(x.shape)
out, cache = dropout_forward(x, dropout_param, mask_np)
dx = dropout_backward(dout, cache)
dx_num = eval_numerical_gradient_array(lambda xx: dropout_forward(xx, dropout_param, mask_np)[0], x.clone(), dout)
show("dropout_rel_error_small", float(rel_error(dx, dx_num) < 1e-8))

# losses
num_classes, num_inputs = 10, 50
x = 0.001 * randn(num_inputs, num_classes)
y = torch.from_numpy(rng.integers(num_classes, size=num_inputs))
loss, dx = svm_loss(x, y)
dx_num = eval_numerical_gradient_array(lambda x: svm_loss(x, y)[0].reshape(1), x.clone(), torch.ones(1, dtype=x.dtype))
show("svm_loss", loss)
show("svm_rel_error_small", float(rel_error(dx_num, dx) < 1e-7))
show("svm_vs_multi_margin", float(abs(loss.item() * num_inputs / (num_classes) - F.multi_margin_loss(x, y).item() * num_inputs) < 1e-9))
loss, dx = softmax_loss(x, y)
show("softmax_loss", loss)
show("softmax_vs_cross_entropy", float(abs(loss.item() - F.cross_entropy(x, y).item()) < 1e-12))
xg = x.clone().requires_grad_(True)
F.cross_entropy(xg, y).backward()
show("softmax_dx_vs_autograd", float(rel_error(xg.grad, dx) < 1e-10))

# --- PyTorch.ipynb, part II: barebones PyTorch
USE_GPU = True
dtype = torch.float32  # We will be using float throughout this tutorial.
if USE_GPU and torch.cuda.is_available():
    device = torch.device('cuda')
else:
    device = torch.device('cpu')
device = torch.device('cpu')  # (the comparison runs on the CPU)

# CIFAR-10 shaped (3 x 8 x 8 here) generated images in 10 classes
templates = rng.normal(size=(10, 3, 8, 8))
labels_np = rng.integers(0, 10, size=640)
imgs_np = (templates[labels_np] + 1.0 * rng.normal(size=(640, 3, 8, 8))).astype(np.float32)
cifar_train = TensorDataset(torch.from_numpy(imgs_np[:512]), torch.from_numpy(labels_np[:512]))
cifar_val = TensorDataset(torch.from_numpy(imgs_np[512:]), torch.from_numpy(labels_np[512:]))
cifar_train.train, cifar_val.train = True, True
loader_train = DataLoader(cifar_train, batch_size=64, shuffle=False)
loader_val = DataLoader(cifar_val, batch_size=64, shuffle=False)
print_every = 4


def flatten(x):
    N = x.shape[0]  # read in N, C, H, W
    return x.view(N, -1)  # "flatten" the C * H * W values into a single vector per image


def test_flatten():
    x = torch.arange(12).view(2, 1, 3, 2)
    print('Before flattening: ', x)
    print('After flattening: ', flatten(x))
    return flatten(x)


show("flatten", test_flatten())


def two_layer_fc(x, params):
    # first we flatten the image
    x = flatten(x)  # shape: [batch_size, C x H x W]

    w1, w2 = params

    # Forward pass: compute predicted y using operations on Tensors. Since w1 and
    # w2 have requires_grad=True, operations involving these Tensors will cause
    # PyTorch to build a computational graph, allowing automatic computation of
    # gradients. Since we are no longer implementing the backward pass by hand we
    # don't need to keep references to intermediate values.
    # you can also use `.clamp(min=0)`, equivalent to F.relu()
    x = F.relu(x.mm(w1))
    x = x.mm(w2)
    return x


def two_layer_fc_test():
    hidden_layer_size = 42
    x = torch.zeros((64, 50), dtype=dtype)  # minibatch size 64, feature dimension 50
    w1 = torch.zeros((50, hidden_layer_size), dtype=dtype)
    w2 = torch.zeros((hidden_layer_size, 10), dtype=dtype)
    scores = two_layer_fc(x, [w1, w2])
    return list(scores.size())  # you should see [64, 10]


show("two_layer_fc_test", two_layer_fc_test())


def three_layer_convnet(x, params):
    conv_w1, conv_b1, conv_w2, conv_b2, fc_w, fc_b = params
    x = F.conv2d(x, conv_w1, conv_b1, padding=2)
    x = F.relu(x)
    x = F.conv2d(x, conv_w2, conv_b2, padding=1)
    x = F.relu(x)
    x = flatten(x)
    scores = x.mm(fc_w) + fc_b
    return scores


def three_layer_convnet_test():
    x = torch.zeros((64, 3, 32, 32), dtype=dtype)  # minibatch size 64, image size [3, 32, 32]

    conv_w1 = torch.zeros((6, 3, 5, 5), dtype=dtype)  # [out_channel, in_channel, kernel_H, kernel_W]
    conv_b1 = torch.zeros((6,))  # out_channel
    conv_w2 = torch.zeros((9, 6, 3, 3), dtype=dtype)  # [out_channel, in_channel, kernel_H, kernel_W]
    conv_b2 = torch.zeros((9,))  # out_channel

    # you must calculate the shape of the tensor after two conv layers, before the fully-connected layer
    fc_w = torch.zeros((9 * 32 * 32, 10))
    fc_b = torch.zeros(10)

    scores = three_layer_convnet(x, [conv_w1, conv_b1, conv_w2, conv_b2, fc_w, fc_b])
    return list(scores.size())  # you should see [64, 10]


show("three_layer_convnet_test", three_layer_convnet_test())


def random_weight(shape):
    """
    Create random Tensors for weights; setting requires_grad=True means that we
    want to compute gradients for these Tensors during the backward pass.
    We use Kaiming normalization: sqrt(2 / fan_in)
    """
    if len(shape) == 2:  # FC weight
        fan_in = shape[0]
    else:
        fan_in = np.prod(shape[1:])  # conv weight [out_channel, in_channel, kH, kW]
    # randn is standard normal distribution generator.
    w = torch.from_numpy(rng.normal(size=shape)).to(device=device, dtype=dtype) * np.sqrt(2. / fan_in)
    w.requires_grad = True
    return w


def zero_weight(shape):
    return torch.zeros(shape, device=device, dtype=dtype, requires_grad=True)


w = random_weight((3, 5))
show("random_weight_leaf", [w.is_leaf, w.requires_grad, w.dtype == torch.float32])


def check_accuracy_part2(loader, model_fn, params):
    """
    Check the accuracy of a classification model.
    """
    split = 'val' if loader.dataset.train else 'test'
    print('Checking accuracy on the %s set' % split)
    num_correct, num_samples = 0, 0
    with torch.no_grad():
        for x, y in loader:
            x = x.to(device=device, dtype=dtype)  # move to device, e.g. GPU
            y = y.to(device=device, dtype=torch.int64)
            scores = model_fn(x, params)
            _, preds = scores.max(1)
            num_correct += (preds == y).sum()
            num_samples += preds.size(0)
        acc = float(num_correct) / num_samples
        print('Got %d / %d correct (%.2f%%)' % (num_correct, num_samples, 100 * acc))
    return acc


def train_part2(model_fn, params, learning_rate, tag):
    losses, accs = [], []
    for t, (x, y) in enumerate(loader_train):
        # Move the data to the proper device (GPU or CPU)
        x = x.to(device=device, dtype=dtype)
        y = y.to(device=device, dtype=torch.long)

        # Forward pass: compute scores and loss
        scores = model_fn(x, params)
        loss = F.cross_entropy(scores, y)

        # Backward pass: PyTorch figures out which Tensors in the computational
        # graph has requires_grad=True and uses backpropagation to compute the
        # gradient of the loss with respect to these Tensors, and stores the
        # gradients in the .grad attribute of each Tensor.
        loss.backward()

        # Update parameters. We don't want to backpropagate through the
        # parameter updates, so we scope the updates under a torch.no_grad()
        # context manager to prevent a computational graph from being built.
        with torch.no_grad():
            for w in params:
                w -= learning_rate * w.grad

                # Manually zero the gradients after running the backward pass
                w.grad.zero_()

        if t % print_every == 0:
            print('Iteration %d, loss = %.4f' % (t, loss.item()))
            losses.append(loss.item())
            accs.append(check_accuracy_part2(loader_val, model_fn, params))
    show(f"{tag}:losses", losses)
    show(f"{tag}:accs", accs)


hidden_layer_size = 64
learning_rate = 1e-2
w1 = random_weight((3 * 8 * 8, hidden_layer_size))
w2 = random_weight((hidden_layer_size, 10))
train_part2(two_layer_fc, [w1, w2], learning_rate, "part2_fc")
show("part2_w_still_leaf", [w1.is_leaf, w1.grad.abs().sum().item()])

conv_w1 = random_weight((8, 3, 5, 5))
conv_b1 = zero_weight((8,))
conv_w2 = random_weight((6, 8, 3, 3))
conv_b2 = zero_weight((6,))
fc_w = random_weight((6 * 8 * 8, 10))
fc_b = zero_weight((10,))
params = [conv_w1, conv_b1, conv_w2, conv_b2, fc_w, fc_b]
train_part2(three_layer_convnet, params, 3e-3, "part2_conv")


# --- part III: the Module API
class TwoLayerFC(nn.Module):
    def __init__(self, input_size, hidden_size, num_classes):
        super().__init__()
        # assign layer objects to class attributes
        self.fc1 = nn.Linear(input_size, hidden_size)
        # nn.init package contains convenient initialization methods
        # http://pytorch.org/docs/master/nn.html#torch-nn-init
        nn.init.kaiming_normal_(self.fc1.weight)
        self.fc2 = nn.Linear(hidden_size, num_classes)
        nn.init.kaiming_normal_(self.fc2.weight)

    def forward(self, x):
        # forward always defines connectivity
        x = flatten(x)
        scores = self.fc2(F.relu(self.fc1(x)))
        return scores


def test_TwoLayerFC():
    input_size = 50
    x = torch.zeros((64, input_size), dtype=dtype)  # minibatch size 64, feature dimension 50
    model = TwoLayerFC(input_size, 42, 10)
    scores = model(x)
    return list(scores.size())  # you should see [64, 10]


show("test_TwoLayerFC", test_TwoLayerFC())
torch.manual_seed(0)
kaiming_model = TwoLayerFC(400, 300, 10)
show("kaiming_std_ok", float(abs(kaiming_model.fc1.weight.std().item() * np.sqrt(400 / 2) - 1) < 0.05))


def check_accuracy_part34(loader, model):
    if loader.dataset.train:
        print('Checking accuracy on validation set')
    else:
        print('Checking accuracy on test set')
    num_correct = 0
    num_samples = 0
    model.eval()  # set model to evaluation mode
    with torch.no_grad():
        for x, y in loader:
            x = x.to(device=device, dtype=dtype)  # move to device, e.g. GPU
            y = y.to(device=device, dtype=torch.long)
            scores = model(x)
            _, preds = scores.max(1)
            num_correct += (preds == y).sum()
            num_samples += preds.size(0)
        acc = float(num_correct) / num_samples
        print('Got %d / %d correct (%.2f)' % (num_correct, num_samples, 100 * acc))
    return acc


def train_part34(model, optimizer, epochs=1, tag=""):
    """
    Train a model on CIFAR-10 using the PyTorch Module API.

    Inputs:
    - model: A PyTorch Module giving the model to train.
    - optimizer: An Optimizer object we will use to train the model
    - epochs: (Optional) A Python integer giving the number of epochs to train for

    Returns: Nothing, but prints model accuracies during training.
    """
    model = model.to(device=device)  # move the model parameters to CPU/GPU
    losses, accs = [], []
    for e in range(epochs):
        for t, (x, y) in enumerate(loader_train):
            model.train()  # put model to training mode
            x = x.to(device=device, dtype=dtype)  # move to device, e.g. GPU
            y = y.to(device=device, dtype=torch.long)

            scores = model(x)
            loss = F.cross_entropy(scores, y)

            # Zero out all of the gradients for the variables which the optimizer
            # will update.
            optimizer.zero_grad()

            # This is the backwards pass: compute the gradient of the loss with
            # respect to each  parameter of the model.
            loss.backward()

            # Actually update the parameters of the model using the gradients
            # computed by the backwards pass.
            optimizer.step()

            if t % print_every == 0:
                print('Iteration %d, loss = %.4f' % (t, loss.item()))
                losses.append(loss.item())
                accs.append(check_accuracy_part34(loader_val, model))
                print()
    show(f"{tag}:losses", losses)
    show(f"{tag}:accs", accs)


hidden_layer_size = 64
learning_rate = 1e-2
model = TwoLayerFC(3 * 8 * 8, hidden_layer_size, 10)
numpy_init(torch, model, seed=1)
optimizer = optim.SGD(model.parameters(), lr=learning_rate)
train_part34(model, optimizer, epochs=2, tag="part3_fc")


# --- part IV: the Sequential API
# We need to wrap `flatten` function in a module in order to stack it
# in nn.Sequential
class Flatten(nn.Module):
    def forward(self, x):
        return flatten(x)


hidden_layer_size = 64
learning_rate = 1e-2

model = nn.Sequential(
    Flatten(),
    nn.Linear(3 * 8 * 8, hidden_layer_size),
    nn.ReLU(),
    nn.Linear(hidden_layer_size, 10),
)
numpy_init(torch, model, seed=2)

# you can use Nesterov momentum in optim.SGD
optimizer = optim.SGD(model.parameters(), lr=learning_rate,
                      momentum=0.9, nesterov=True)

train_part34(model, optimizer, epochs=2, tag="part4_seq")

model = nn.Sequential(
    nn.Conv2d(3, 8, 5, padding=2),
    nn.BatchNorm2d(8),
    nn.ReLU(),
    nn.Conv2d(8, 6, 3, padding=1),
    nn.ReLU(),
    nn.MaxPool2d(2),
    Flatten(),
    nn.Linear(6 * 4 * 4, 10),
)
numpy_init(torch, model, seed=3)
optimizer = optim.SGD(model.parameters(), lr=3e-3, momentum=0.9, nesterov=True)
train_part34(model, optimizer, epochs=1, tag="part4_conv")
show("part4_conv_running_var", model[1].running_var)
