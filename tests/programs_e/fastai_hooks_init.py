"""fast.ai course part 2 (2022), notebooks "10_activations" and "11_initializing", on generated
28x28 images: a strided conv net built by ``conv(ni, nf, ks, stride, act)`` helpers; a
MomentumLearner-style loop whose ``zero_grad`` scales the gradients (``p.grad *= mom`` under
``no_grad``); a ``Hook`` class around ``register_forward_hook(partial(f, self))`` and a
``Hooks(list)`` context manager whose ``append_stats`` records ``acts.mean()``, ``acts.std()`` and
``acts.abs().histc(40, 0, 10)``, read back by ``get_hist`` (``torch.stack(...).t().float().log1p()``)
and ``get_min``; GeneralRelu (``F.leaky_relu`` then in-place ``x -= sub`` and
``x.clamp_max_(maxv)`` on an autograd output); ``init.kaiming_normal_(m.weight, a=leaky)`` through
``model.apply(partial(init_weights, leaky=0.1))`` (checked by its spread, then NumPy weights with
the same std); input normalisation; LSUV initialisation (a hook storing mean and std, ``m_in.bias
-= h.mean`` and ``m_in.weight.data /= h.std`` until both settle); and LayerNorm and BatchNorm from
scratch (``x.var((0, 2, 3), keepdim=True)``, running statistics by ``self.means.lerp_(m,
self.mom)`` under ``torch.no_grad()``, registered buffers used in eval mode).

    python fastai_hooks_init.py [torch|numbagrad]
"""
import math
from functools import partial

import numpy as np

from _common import BACKEND, numpy_init, show

if BACKEND == "torch":
    import torch
    from torch import nn, tensor
    import torch.nn.functional as F
    from torch.nn import init
else:
    import numbagrad as torch
    from numbagrad import nn, tensor
    import numbagrad.nn.functional as F
    from numbagrad.nn import init

def_device = "cpu"
rng = np.random.default_rng(42)

# the data: "Fashion MNIST" of 10 block templates, 28x28, batches of 64
templates = (rng.random((10, 7, 7)) > 0.5).astype(np.float32)
labels_np = rng.integers(0, 10, size=512)
imgs_np = np.kron(templates[labels_np], np.ones((4, 4), np.float32))[:, None]
imgs_np = np.clip(imgs_np + 0.3 * rng.normal(size=imgs_np.shape), 0, 1).astype(np.float32)
xs, ys = torch.from_numpy(imgs_np), torch.from_numpy(labels_np)
bs = 64
batches = [(xs[i:i + bs], ys[i:i + bs]) for i in range(0, len(xs), bs)]
xb, yb = batches[0]
show("xb", [list(xb.shape), xb.mean(), xb.std()])


def conv(ni, nf, ks=3, stride=2, act=nn.ReLU):
    res = nn.Conv2d(ni, nf, stride=stride, kernel_size=ks, padding=ks // 2)
    if act:
        res = nn.Sequential(res, act())
    return res


def cnn_layers():
    return [
        conv(1, 8, ks=5),  # 14x14
        conv(8, 16),  # 7x7
        conv(16, 32),  # 4x4
        conv(32, 64),  # 2x2
        conv(64, 10, act=False),  # 1x1
        nn.Flatten()]


def fit(model, epochs=1, lr=0.6, mom=0.85, xform=None):
    """A MomentumLearner's loop: SGD whose zero_grad keeps a fraction of the old gradients."""
    losses = []
    for epoch in range(epochs):
        for xb_, yb_ in batches:
            if xform is not None:
                xb_ = xform(xb_)
            model.train()
            preds = model(xb_)
            loss = F.cross_entropy(preds, yb_)
            loss.backward()
            with torch.no_grad():
                for p in model.parameters():
                    p -= p.grad * lr
            # MomentumLearner.zero_grad
            with torch.no_grad():
                for p in model.parameters():
                    p.grad *= mom
            losses.append(loss.item())
    return losses


# --- 10_activations: the baseline, then hooks
model = nn.Sequential(*cnn_layers())
numpy_init(torch, model, seed=0)
show("baseline_losses", fit(model, lr=0.6)[::2])


class Hook():
    def __init__(self, m, f):
        self.hook = m.register_forward_hook(partial(f, self))

    def remove(self):
        self.hook.remove()

    def __del__(self):
        self.remove()


def append_stats(hook, mod, inp, outp):
    if not hasattr(hook, 'stats'):
        hook.stats = ([], [], [])
    acts = outp.detach().cpu()  # to_cpu(outp)
    hook.stats[0].append(acts.mean())
    hook.stats[1].append(acts.std())
    hook.stats[2].append(acts.abs().histc(40, 0, 10))


class Hooks(list):
    def __init__(self, ms, f):
        super().__init__([Hook(m, f) for m in ms])

    def __enter__(self, *args):
        return self

    def __exit__(self, *args):
        self.remove()

    def __del__(self):
        self.remove()

    def __delitem__(self, i):
        self[i].remove()
        super().__delitem__(i)

    def remove(self):
        for h in self:
            h.remove()


def get_hist(h):
    return torch.stack(h.stats[2]).t().float().log1p()


def get_min(h):
    h1 = torch.stack(h.stats[2]).t().float()
    return h1[0] / h1.sum(0)


model = nn.Sequential(*cnn_layers())
numpy_init(torch, model, seed=1)
with Hooks(model[:5], append_stats) as hooks:
    losses = fit(model, lr=0.4)
    show("hooked_losses", losses[::2])
    show("n_hooks", len(hooks))
    show("hook_means", [torch.stack(h.stats[0])[::2] for h in hooks])
    show("hook_stds", [torch.stack(h.stats[1])[::2] for h in hooks])
    show("hist_shape", list(get_hist(hooks[0]).shape))
    show("hist_first_col", get_hist(hooks[1])[:6, 0])
    show("get_min", [get_min(h) for h in hooks[:3]])
    del hooks[4]
    show("n_hooks_after_del", len(hooks))
n_before = len(hooks[0].stats[0])
model(xb)
show("hooks_removed_after_exit", float(len(hooks[0].stats[0]) == n_before))


# --- 11_initializing: GeneralRelu, kaiming init with a leak, normalised inputs
class GeneralRelu(nn.Module):
    def __init__(self, leak=None, sub=None, maxv=None):
        super().__init__()
        self.leak, self.sub, self.maxv = leak, sub, maxv

    def forward(self, x):
        x = F.leaky_relu(x, self.leak) if self.leak is not None else F.relu(x)
        if self.sub is not None:
            x -= self.sub
        if self.maxv is not None:
            x.clamp_max_(self.maxv)
        return x


def plot_func(f, start=-5., end=5., steps=100):
    x = torch.linspace(start, end, steps)
    return f(x)


show("general_relu", plot_func(GeneralRelu(leak=0.1, sub=0.4))[::11])
xg = torch.linspace(-5., 5., 21).requires_grad_()
GeneralRelu(leak=0.1, sub=0.4, maxv=3.0)(xg).sum().backward()
show("general_relu_grad", xg.grad)


def init_weights(m, leaky=0.):
    if isinstance(m, (nn.Conv1d, nn.Conv2d, nn.Conv3d)):
        init.kaiming_normal_(m.weight, a=leaky)


def conv(ni, nf, ks=3, stride=2, act=nn.ReLU, norm=None, bias=None):
    if bias is None:
        bias = not isinstance(norm, (nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d))
    layers = [nn.Conv2d(ni, nf, stride=stride, kernel_size=ks, padding=ks // 2, bias=bias)]
    if norm:
        layers.append(norm(nf))
    if act:
        layers.append(act())
    return nn.Sequential(*layers)


act_gr = partial(GeneralRelu, leak=0.1, sub=0.4)
iw = partial(init_weights, leaky=0.1)


def get_model(act=nn.ReLU, nfs=None, norm=None):
    if nfs is None:
        nfs = [1, 8, 16, 32, 64]
    layers = [conv(nfs[i], nfs[i + 1], act=act, norm=norm) for i in range(len(nfs) - 1)]
    return nn.Sequential(*layers, conv(nfs[-1], 10, act=None, norm=False, bias=True),
                         nn.Flatten()).to(def_device)


torch.manual_seed(1)
model = get_model(act_gr)
model.apply(iw)
convs = [o for o in model.modules() if isinstance(o, nn.Conv2d)]
gain = math.sqrt(2.0 / (1 + 0.1 ** 2))
show("kaiming_leaky_std_ok", [abs(c.weight.std().item() / (gain / math.sqrt(c.weight[0].numel())) - 1) < 0.3
                              for c in convs])


def np_kaiming(model, leaky, seed):
    g = np.random.default_rng(seed)
    gain = math.sqrt(2.0 / (1 + leaky ** 2))
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.Conv2d):
                std = gain / math.sqrt(m.weight[0].numel())
                m.weight.copy_(torch.from_numpy(g.normal(0, std, size=tuple(m.weight.shape)).astype(np.float32)))
                if m.bias is not None:
                    m.bias.zero_()


np_kaiming(model, 0.1, seed=2)
xmean, xstd = xb.mean(), xb.std()


def _norm(b):
    return (b - xmean) / xstd


with Hooks([m for m in model if isinstance(m, nn.Sequential)][:4], append_stats) as hooks:
    losses = fit(model, lr=0.2, xform=_norm)
    show("general_relu_losses", losses[::2])
    show("general_relu_act_means", [h.stats[0][0] for h in hooks])
    show("general_relu_act_stds", [h.stats[1][0] for h in hooks])


# --- LSUV
def _lsuv_stats(hook, mod, inp, outp):
    acts = outp.detach().cpu()  # to_cpu(outp)
    hook.mean = acts.mean()
    hook.std = acts.std()


def lsuv_init(model, m, m_in, xb):
    h = Hook(m, _lsuv_stats)
    n_iter = 0
    with torch.no_grad():
        while model(xb) is not None and (abs(h.std - 1) > 1e-3 or abs(h.mean) > 1e-3):
            m_in.bias -= h.mean
            m_in.weight.data /= h.std
            n_iter += 1
            if n_iter > 50:
                break
    h.remove()
    return n_iter


model = get_model(act_gr)
np_kaiming(model, 0.1, seed=3)
relus = [o for o in model.modules() if isinstance(o, GeneralRelu)]
convs = [o for o in model.modules() if isinstance(o, nn.Conv2d)]
iters = [lsuv_init(model, *ms, _norm(xb).to(def_device)) for ms in zip(relus, convs)]
show("lsuv_converged", [n <= 50 for n in iters])
with Hooks(relus, append_stats) as hooks:
    model(_norm(xb))
    show("lsuv_means", [h.stats[0][0] for h in hooks])
    show("lsuv_stds", [h.stats[1][0] for h in hooks])
show("lsuv_biases", [c.bias[:3] for c in convs[:2]])
show("lsuv_losses", fit(model, lr=0.2, xform=_norm)[::2])


# --- normalisation layers from scratch
class LayerNorm(nn.Module):
    def __init__(self, dummy, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.mult = nn.Parameter(tensor(1.))
        self.add = nn.Parameter(tensor(0.))

    def forward(self, x):
        m = x.mean((1, 2, 3), keepdim=True)
        v = x.var((1, 2, 3), keepdim=True)
        x = (x - m) / ((v + self.eps).sqrt())
        return x * self.mult + self.add


class BatchNorm(nn.Module):
    def __init__(self, nf, mom=0.1, eps=1e-5):
        super().__init__()
        # NB: pytorch bn mom is opposite of what you'd expect
        self.mom, self.eps = mom, eps
        self.mults = nn.Parameter(torch.ones(nf, 1, 1))
        self.adds = nn.Parameter(torch.zeros(nf, 1, 1))
        self.register_buffer('vars', torch.ones(1, nf, 1, 1))
        self.register_buffer('means', torch.zeros(1, nf, 1, 1))

    def update_stats(self, x):
        m = x.mean((0, 2, 3), keepdim=True)
        v = x.var((0, 2, 3), keepdim=True)
        self.means.lerp_(m, self.mom)
        self.vars.lerp_(v, self.mom)
        return m, v

    def forward(self, x):
        if self.training:
            with torch.no_grad():
                m, v = self.update_stats(x)
        else:
            m, v = self.means, self.vars
        x = (x - m) / (v + self.eps).sqrt()
        return x * self.mults + self.adds


for name, norm in [("layernorm", LayerNorm), ("batchnorm", BatchNorm), ("nn_batchnorm", nn.BatchNorm2d)]:
    model = get_model(act_gr, norm=norm)
    np_kaiming(model, 0.1, seed=4)
    losses = fit(model, lr=0.2, xform=_norm)
    show(f"{name}_losses", losses[::2])
    model.eval()
    with torch.no_grad():
        show(f"{name}_eval_logits", model(_norm(xb[:2]))[:, :5])
    if name == "batchnorm":
        bn = model[0][1]
        show("bn_buffers", [n for n, _ in bn.named_buffers()] == ["vars", "means"])
        show("bn_running_means", bn.means.view(-1))
        show("bn_running_vars", bn.vars.view(-1))
        show("bn_state_dict_len", len(model.state_dict()))
    if name == "nn_batchnorm":
        show("nn_bn_running_mean", model[0][1].running_mean)
        show("nn_bn_running_var", model[0][1].running_var)
