"""The performance workloads W1-W8, written once for any PyTorch-like module.

``lib`` is ``numbagrad`` or ``torch``: both the asv suite and ``compare.py`` build their
benchmarks from these functions, so the two libraries run exactly the same code. Each ``w*``
function does its set-up (and one warm-up call, so JIT compilation is never timed) and returns
a zero-argument callable that runs one forward + backward.
"""

from __future__ import annotations

import numpy as np

CHAIN_LEN = 100


def _sync(lib, device):
    if device == "cuda":
        lib.cuda.synchronize()


def _leaf(lib, values, dtype, device):
    return lib.tensor(values, dtype=getattr(lib, dtype), device=device, requires_grad=True)


def _data(shape, seed=0, scale=1.0):
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float64)


def w1(lib, n, dtype="float32", device="cpu"):
    """``(x**2 * exp(x)).sum().backward()``."""
    x = _leaf(lib, _data(n), dtype, device)

    def run():
        x.grad = None
        (x**2 * lib.exp(x)).sum().backward()
        _sync(lib, device)

    run()
    return run


def w2(lib, dtype="float32", device="cpu", batch=256, loss="cross_entropy"):
    """One step of an MLP 784-512-10: matmul, bias, relu, a loss, backward.

    ``loss="mse"`` spells the loss as scripts write a mean-squared error by hand against
    one-hot targets: ``d = out - t; (d * d).mean()``.
    """
    w1_ = _leaf(lib, _data((784, 512), 1, 784**-0.5), dtype, device)
    b1 = _leaf(lib, _data(512, 2, 0.1), dtype, device)
    w2_ = _leaf(lib, _data((512, 10), 3, 512**-0.5), dtype, device)
    b2 = _leaf(lib, _data(10, 4, 0.1), dtype, device)
    x = lib.tensor(_data((batch, 784), 5), dtype=getattr(lib, dtype), device=device)
    labels = np.random.default_rng(6).integers(0, 10, batch)
    y = lib.tensor(labels, dtype=lib.int64, device=device)
    t = lib.tensor(np.eye(10)[labels], dtype=getattr(lib, dtype), device=device)
    params = (w1_, b1, w2_, b2)
    cross_entropy = lib.nn.functional.cross_entropy

    def mse(out):
        d = out - t
        return (d * d).mean()

    def ce(out):
        return cross_entropy(out, y)

    criterion = {"cross_entropy": ce, "mse": mse}[loss]

    def run():
        for p in params:
            p.grad = None
        h = lib.relu(x @ w1_ + b1)
        criterion(h @ w2_ + b2).backward()
        _sync(lib, device)

    run()
    return run


def _linear(lib, n_in, n_out, seed, dtype, device):
    """``nn.Linear(n_in, n_out)`` with weights drawn as ``w2``'s (the same in both libraries)."""
    layer = lib.nn.Linear(n_in, n_out, device=device, dtype=getattr(lib, dtype))
    with lib.no_grad():
        layer.weight.copy_(lib.tensor(_data((n_out, n_in), seed, n_in**-0.5)))
        layer.bias.copy_(lib.tensor(_data(n_out, seed + 1, 0.1)))
    return layer


def w2_nn(lib, dtype="float32", device="cpu", batch=256, optimizer="sgd"):
    """``w2``'s step as scripts write it with modules: ``nn.Sequential(nn.Linear, nn.ReLU,
    nn.Linear)``, ``nn.CrossEntropyLoss()``, and an optimizer's ``zero_grad`` and ``step``
    (``"sgd"`` or ``"adam"``)."""
    model = lib.nn.Sequential(_linear(lib, 784, 512, 1, dtype, device), lib.nn.ReLU(),
                              _linear(lib, 512, 10, 3, dtype, device))
    x = lib.tensor(_data((batch, 784), 5), dtype=getattr(lib, dtype), device=device)
    y = lib.tensor(np.random.default_rng(6).integers(0, 10, batch), dtype=lib.int64,
                   device=device)
    criterion = lib.nn.CrossEntropyLoss()
    opt = (lib.optim.SGD(model.parameters(), lr=0.01) if optimizer == "sgd"
           else lib.optim.Adam(model.parameters(), lr=1e-3))

    def run():
        opt.zero_grad()
        criterion(model(x), y).backward()
        opt.step()
        _sync(lib, device)

    run()
    return run


def w3(lib, grad=True, dtype="float32", device="cpu", length=CHAIN_LEN, operands="tensor",
       shape=(1,)):
    """A chain of ``length`` ops (mul, add, sin in turn) on small tensors, then backward.

    ``operands="tensor"`` multiplies and adds tensors of ``shape``; ``"scalar"`` Python numbers
    (``y * 1.001``, ``y + 0.1``, as code scales by a constant or a learning rate). ``shape``
    (1,) measures the per-op overhead; (16, 16) the same on a small 2-d tensor. With
    ``grad=False`` the forward chain runs under ``no_grad``. Time per op is the call's time
    divided by ``length``.
    """
    x = _leaf(lib, np.full(shape, 0.5), dtype, device)
    if operands == "tensor":
        w = lib.tensor(np.full(shape, 1.001), dtype=getattr(lib, dtype), device=device)
        c = lib.tensor(np.full(shape, 0.1), dtype=getattr(lib, dtype), device=device)
    else:
        w, c = 1.001, 0.1
    sin = lib.sin

    def chain():
        y = x
        for i in range(length):
            k = i % 3
            if k == 0:
                y = y * w
            elif k == 1:
                y = y + c
            else:
                y = sin(y)
        return y

    one = int(np.prod(shape)) == 1  # (a 1-element result takes backward() as it is)
    if grad:
        def run():
            x.grad = None
            y = chain()
            (y if one else y.sum()).backward()
            _sync(lib, device)
    else:
        def run():
            with lib.no_grad():
                chain()
            _sync(lib, device)

    run()
    return run


def w4(lib, which, n=10**7, dtype="float32", device="cpu"):
    """``x.sum()``, ``x.mean()`` or ``(x*x).max()`` and its backward."""
    x = _leaf(lib, _data(n), dtype, device)
    forward = {
        "sum": lambda: x.sum(),
        "mean": lambda: x.mean(),
        "max": lambda: (x * x).max(),
    }[which]
    return _backward_of(lib, x, forward, device)


def _backward_of(lib, x, forward, device):
    """A warmed-up step: ``forward()`` (a loss of leaf ``x``) and its backward."""
    def run():
        x.grad = None
        forward().backward()
        _sync(lib, device)

    run()
    return run


def w5(lib, dtype="float32", device="cpu", n=1000):
    """``((a + b) * a).sum().backward()`` with a (n, n) and a broadcast row b (n,)."""
    a = _leaf(lib, _data((n, n), 7), dtype, device)
    b = _leaf(lib, _data(n, 8), dtype, device)

    def run():
        a.grad = None
        b.grad = None
        ((a + b) * a).sum().backward()
        _sync(lib, device)

    run()
    return run


def w7(lib, dtype="float32", device="cpu", steps=10, batch=10):
    """A small-batch regression loop as tutorials write it (d2l's linear regression from
    scratch): ``steps`` minibatch steps of batch 10 with 2 features, each minibatch taken by
    fancy indexing with a LongTensor, a squared loss, backward, and SGD under ``no_grad``.
    Time per step is the call's time divided by ``steps``."""
    n = 200
    features = lib.tensor(_data((n, 2), 9), dtype=getattr(lib, dtype), device=device)
    true_w = lib.tensor([[2.0], [-3.4]], dtype=getattr(lib, dtype), device=device)
    labels = features @ true_w + 4.2
    w = _leaf(lib, _data((2, 1), 10, 0.01), dtype, device)
    b = _leaf(lib, np.zeros(1), dtype, device)
    order = np.random.default_rng(11).permutation(n)
    batches = [lib.tensor(order[i:i + batch], dtype=lib.int64, device=device)
               for i in range(0, n, batch)]
    lr = 0.03

    def run():
        for k in range(steps):
            idx = batches[k % len(batches)]
            X, y = features[idx], labels[idx]
            y_hat = lib.matmul(X, w) + b
            loss = ((y_hat - y.reshape(y_hat.shape)) ** 2 / 2).sum() / batch
            loss.backward()
            with lib.no_grad():
                for p in (w, b):
                    p -= lr * p.grad
                    p.grad.zero_()
        _sync(lib, device)

    run()
    return run


def w7_nn(lib, dtype="float32", device="cpu", steps=10, batch=10, optimizer="sgd"):
    """``w7``'s loop as scripts write it with modules (d2l's concise linear regression):
    ``nn.Linear(2, 1)``, ``nn.MSELoss()``, and ``optim.SGD`` (or ``optim.Adam``) with
    ``zero_grad`` and ``step``. Time per step is the call's time divided by ``steps``."""
    n = 200
    features = lib.tensor(_data((n, 2), 9), dtype=getattr(lib, dtype), device=device)
    true_w = lib.tensor([[2.0], [-3.4]], dtype=getattr(lib, dtype), device=device)
    labels = features @ true_w + 4.2
    net = lib.nn.Linear(2, 1, device=device, dtype=getattr(lib, dtype))
    with lib.no_grad():
        net.weight.copy_(lib.tensor(_data((1, 2), 10, 0.01)))
        net.bias.zero_()
    order = np.random.default_rng(11).permutation(n)
    batches = [lib.tensor(order[i:i + batch], dtype=lib.int64, device=device)
               for i in range(0, n, batch)]
    loss_fn = lib.nn.MSELoss()
    opt = (lib.optim.SGD(net.parameters(), lr=0.03) if optimizer == "sgd"
           else lib.optim.Adam(net.parameters(), lr=0.03))

    def run():
        for k in range(steps):
            idx = batches[k % len(batches)]
            loss = loss_fn(net(features[idx]), labels[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
        _sync(lib, device)

    run()
    return run


def w8(lib, dtype="float32", device="cpu", batch=64):
    """One step of a small CNN on 1x28x28 images: conv 3x3 (8 channels, padding 1), relu,
    2x2 max pooling, conv 3x3 (16 channels), relu, pooling, linear to 10, cross entropy,
    backward."""
    F = lib.nn.functional
    c1 = _leaf(lib, _data((8, 1, 3, 3), 12, 1 / 3), dtype, device)
    b1 = _leaf(lib, _data(8, 13, 0.1), dtype, device)
    c2 = _leaf(lib, _data((16, 8, 3, 3), 14, 72**-0.5), dtype, device)
    b2 = _leaf(lib, _data(16, 15, 0.1), dtype, device)
    fc = _leaf(lib, _data((10, 16 * 7 * 7), 16, 784**-0.5), dtype, device)
    x = lib.tensor(_data((batch, 1, 28, 28), 17), dtype=getattr(lib, dtype), device=device)
    y = lib.tensor(np.random.default_rng(18).integers(0, 10, batch), dtype=lib.int64,
                   device=device)
    params = (c1, b1, c2, b2, fc)

    def run():
        for p in params:
            p.grad = None
        h = F.max_pool2d(F.relu(F.conv2d(x, c1, b1, padding=1)), 2)
        h = F.max_pool2d(F.relu(F.conv2d(h, c2, b2, padding=1)), 2)
        F.cross_entropy(F.linear(h.reshape(batch, -1), fc), y).backward()
        _sync(lib, device)

    run()
    return run


def w9(lib, which, dtype="float32", device="cpu"):
    """Steps of the models tutorials train, spelled as they spell them (``nn`` modules, a loss,
    an optimizer or a loader), one step per call:

    - ``lstm``: ``nn.LSTM(32, 64, batch_first=True)`` and ``nn.Linear(64, 50)`` on (16, 20, 32),
      cross-entropy over every position, Adam;
    - ``gru``: ``nn.GRU(16, 32)`` on (10, 8, 16), ``out.sum().backward()``;
    - ``embedding``: ``Embedding(1000, 64)``, ``Flatten``, two ``Linear`` with ``Tanh``,
      cross-entropy over 1000 classes, SGD (makemore's MLP);
    - ``mlp_norm``: ``Linear``, ``BatchNorm1d``, ``ReLU``, ``Dropout``, ``Linear``, ``LayerNorm``,
      ``GELU``, ``Linear`` on a batch of 128, cross-entropy, AdamW;
    - ``transformer``: ``nn.TransformerEncoderLayer(64, 4, 128, dropout=0, batch_first=True)``
      on (8, 32, 64), ``.sum().backward()``;
    - ``loader``: one epoch of ``DataLoader(TensorDataset(X (2000, 20), y), batch_size=32,
      shuffle=True)``.
    """
    nn, F = lib.nn, lib.nn.functional
    dt = getattr(lib, dtype)
    lib.manual_seed(0)

    def model(*layers):
        return nn.Sequential(*layers).to(device=device, dtype=dt)

    def data(*shape, classes=None):
        if classes is not None:
            return lib.tensor(np.random.default_rng(12).integers(0, classes, shape),
                              device=device)
        return lib.tensor(_data(shape, 12), dtype=dt, device=device)

    if which == "lstm":
        rnn = nn.LSTM(32, 64, batch_first=True).to(device=device, dtype=dt)
        head = nn.Linear(64, 50).to(device=device, dtype=dt)
        opt = lib.optim.Adam(list(rnn.parameters()) + list(head.parameters()), lr=1e-3)
        x, y = data(16, 20, 32), data(16 * 20, classes=50)

        def step():
            opt.zero_grad()
            out, _ = rnn(x)
            F.cross_entropy(head(out).reshape(-1, 50), y).backward()
            opt.step()
    elif which == "gru":
        rnn = nn.GRU(16, 32).to(device=device, dtype=dt)
        x = data(10, 8, 16)

        def step():
            out, _ = rnn(x)
            out.sum().backward()
    elif which == "embedding":
        m = nn.Sequential(nn.Embedding(1000, 64), nn.Flatten(), nn.Linear(64 * 8, 128),
                          nn.Tanh(), nn.Linear(128, 1000)).to(device=device, dtype=dt)
        opt = lib.optim.SGD(m.parameters(), lr=0.1)
        x, y = data(64, 8, classes=1000), data(64, classes=1000)

        def step():
            opt.zero_grad()
            F.cross_entropy(m(x), y).backward()
            opt.step()
    elif which == "mlp_norm":
        m = model(nn.Linear(100, 256), nn.BatchNorm1d(256), nn.ReLU(), nn.Dropout(0.2),
                  nn.Linear(256, 256), nn.LayerNorm(256), nn.GELU(), nn.Linear(256, 10))
        opt = lib.optim.AdamW(m.parameters(), lr=1e-3)
        x, y = data(128, 100), data(128, classes=10)

        def step():
            opt.zero_grad()
            F.cross_entropy(m(x), y).backward()
            opt.step()
    elif which == "transformer":
        m = model(nn.TransformerEncoderLayer(64, 4, 128, dropout=0.0, batch_first=True))
        x = data(8, 32, 64)

        def step():
            m(x).sum().backward()
    elif which == "loader":
        from importlib import import_module

        tud = import_module(lib.__name__ + ".utils.data")
        loader = tud.DataLoader(tud.TensorDataset(data(2000, 20), data(2000, classes=2)),
                                batch_size=32, shuffle=True)

        def step():
            for _ in loader:
                pass
    else:
        raise ValueError(which)

    def run():
        step()
        _sync(lib, device)

    run()
    return run


def w10(lib, fn, n=10**5, dtype="float32", device="cpu"):
    """``fn(x).sum().backward()`` for a math function ``fn`` (``"tanh"``, ``"sigmoid"``,
    ``"log"``, ``"sin"``) of n elements: the libm functions a model or a loss calls (log's
    input is kept positive)."""
    values = _data(n, 11)
    x = _leaf(lib, np.abs(values) + 0.5 if fn == "log" else values, dtype, device)
    f = getattr(lib, fn)

    def run():
        x.grad = None
        f(x).sum().backward()
        _sync(lib, device)

    run()
    return run


def w11(lib, loss, n=10**5, dtype="float32", device="cpu"):
    """``F.<loss>(x, t).backward()`` at n elements: the loss functions scripts call by name
    (``"mse_loss"``, ``"l1_loss"``, ``"smooth_l1_loss"``, ``"huber_loss"``,
    ``"binary_cross_entropy_with_logits"``), mean reduction, a target without gradient."""
    x = _leaf(lib, _data(n, 13), dtype, device)
    values = _data(n, 14)
    if loss == "binary_cross_entropy_with_logits":
        values = 1 / (1 + np.exp(-values))  # (probabilities)
    t = lib.tensor(values, dtype=getattr(lib, dtype), device=device)
    f = getattr(lib.nn.functional, loss)

    def run():
        x.grad = None
        f(x, t).backward()
        _sync(lib, device)

    run()
    return run


def w12(lib, which, shape=(1000, 100), dtype="float32", device="cpu"):
    """A 2-d tensor's forward and backward at 1e5 elements, spelled as scripts write them:
    ``"w1"`` W1's expression, ``"rows"`` the same summed per row then averaged
    (``.sum(1).mean()``), ``"softmax"`` ``(softmax(x, 1) * x).sum()``."""
    x = _leaf(lib, _data(shape, 15), dtype, device)
    forward = {
        "w1": lambda: (x**2 * lib.exp(x)).sum(),
        "rows": lambda: (x**2 * lib.exp(x)).sum(1).mean(),
        "softmax": lambda: (lib.softmax(x, 1) * x).sum(),
    }[which]
    return _backward_of(lib, x, forward, device)


# W6 runs in a new interpreter: the import plus one W1 at n = 1e3.
W6_SOURCE = """\
import {module} as lib
x = lib.randn(1000, requires_grad=True)
(x**2 * lib.exp(x)).sum().backward()
assert x.grad is not None
"""


def w6_source(module: str) -> str:
    return W6_SOURCE.format(module=module)
