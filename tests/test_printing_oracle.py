"""What programs print, against PyTorch: tensors (every dtype, the number formats, summaries,
print options, suffixes), the classes and small objects around them, modules, optimizers,
schedulers and distributions. Both libraries build each object from the same NumPy data and
the strings must agree exactly, ``numbagrad.`` read as ``torch.`` and object addresses dropped.
"""

from __future__ import annotations

import collections
import re

import numpy as np
import pytest

import numbagrad as ng

torch = pytest.importorskip("torch")

LIBS = (ng, torch)


def _norm(text: str) -> str:
    return re.sub(r" at 0x[0-9a-fA-F]+", "", str(text).replace("numbagrad.", "torch."))


def _same(make):
    """``make(lib)``'s string under each library, compared."""
    ours, theirs = (_norm(make(lib)) for lib in LIBS)
    assert ours == theirs


@pytest.fixture(autouse=True)
def _default_printoptions():
    yield
    for lib in LIBS:
        lib.set_printoptions(profile="default")


rng = np.random.default_rng(0)
nan, inf = float("nan"), float("inf")

FLOATS = {
    "ints": np.array([1.0, 2.0, -3.0, 100.0]),
    "fractions": np.array([0.5, 1.25, -3.75]),
    "tiny": np.array([1e-5, 2e-5]),
    "huge": np.array([1e10, 2e10]),
    "mixed": np.array([1e-3, 12.5]),
    "ratio_over_1000": np.array([1.5, 1500.0]),
    "negative_zero": np.array([-0.0, 1.5]),
    "nonfinite": np.array([nan, inf, -inf, 0.5]),
    "all_nan": np.array([nan, nan]),
    "int_valued_1e9": np.array([1.0, 1e9]),
    "randn_3d": rng.standard_normal((2, 3, 4)),
    "long_row": rng.standard_normal((2, 30)),
    "summarized": rng.standard_normal((40, 40)),
    "summarized_1d": np.arange(2000.0),
    "scalar": np.array(3.25),
    "scalar_tiny": np.array(1e-9),
    "empty": np.zeros((0,)),
    "empty_3d": np.zeros((2, 0, 3)),
}

OPTIONS = {
    "default": {},
    "precision_2": dict(precision=2),
    "threshold_5": dict(threshold=5),
    "edgeitems_1": dict(edgeitems=1, threshold=10),
    "edgeitems_0": dict(threshold=5, edgeitems=0),
    "linewidth_40": dict(linewidth=40),
    "sci_on": dict(sci_mode=True),
    "sci_on_precision_1": dict(precision=1, sci_mode=True),
    "sci_off": dict(sci_mode=False),
    "short": dict(profile="short"),
    "full": dict(profile="full"),
}


@pytest.mark.parametrize("options", list(OPTIONS))
def test_float_tensors(options):
    def show(lib):
        lib.set_printoptions(**OPTIONS[options])
        out = []
        for data in FLOATS.values():
            for dt in ("float32", "float64"):
                t = lib.tensor(data.astype(dt), dtype=getattr(lib, dt))
                out += [repr(t), str(t)]
                if t.numel() and t.numel() < 50:
                    out.append(repr(lib.tensor(data.astype(dt), requires_grad=True)))
        return "\n".join(out)
    _same(show)


@pytest.mark.parametrize("options", ["default", "edgeitems_0", "threshold_5", "linewidth_40"])
def test_integer_and_bool_tensors(options):
    ints = [np.array([-1, 200, 3]), np.arange(12).reshape(3, 4) - 5,
            np.arange(3000).reshape(3, 1000), np.arange(50), np.array(7),
            np.zeros((2, 0), dtype=np.int64)]
    bools = [np.array([True, False]), np.array([[True], [False]]), np.array(True),
             rng.random(2000) > 0.5]

    def show(lib):
        lib.set_printoptions(**OPTIONS[options])
        out = []
        for data in ints:
            for dt in ("int64", "int32", "int16", "int8", "uint8"):
                a = np.abs(data) % 100
                out.append(repr(lib.tensor(a.astype(dt), dtype=getattr(lib, dt))))
        out += [repr(lib.tensor(b)) for b in bools]
        return "\n".join(out)
    _same(show)


def test_set_printoptions_resets_sci_mode_and_context_manager():
    def show(lib):
        t = lib.tensor([0.5, 1.25, -3.75])
        lib.set_printoptions(precision=2)
        lib.set_printoptions(sci_mode=True)  # (precision stays; sci_mode is set each call)
        out = [repr(t)]
        lib.set_printoptions()
        out.append(repr(t))
        with lib._tensor_str.printoptions(precision=1, sci_mode=True):
            out.append(repr(t))
        out += [repr(t), repr(lib._tensor_str.get_printoptions())]
        return "\n".join(out)
    _same(show)


def test_scalars_format_items_and_lists():
    def show(lib):
        out = []
        for v, dt in ((3.25, "float32"), (1e-9, "float64"), (-0.0, "float32"), (7, "int64"),
                      (-3, "int8"), (True, "bool")):
            t = lib.tensor(v, dtype=getattr(lib, dt))
            out += [repr(t), f"{t}", repr(t.item()), repr(t.tolist()), type(t.item()).__name__]
            if dt.startswith("float"):
                out += [f"{t:.3f}", f"{t:e}", f"{t:>10.2f}", "%.2f" % t]
        m = lib.tensor(np.array([[1.5, -2.0], [3.0, 4.25]], dtype=np.float32))
        out += [repr(m.tolist()), repr(m[0].tolist()), str(m.shape), repr(m.size()), repr(m.dtype),
                repr(m.device), str(m.device), repr(m.shape[1:]), repr(lib.Size([]))]
        try:
            f"{m:.2f}"
        except TypeError as e:  # (only a 0-d tensor takes a format spec)
            out.append(str(e))
        return "\n".join(out)
    _same(show)


def test_suffixes_parameters_views_and_defaults():
    def show(lib):
        nn = lib.nn
        a = np.arange(6, dtype=np.float32).reshape(2, 3)
        out = [
            repr(lib.tensor(a, dtype=lib.float64, requires_grad=True) * 2),
            repr(nn.Parameter(lib.tensor(a))),
            repr(nn.Parameter(lib.tensor(a), requires_grad=False)),
            repr(nn.Parameter(lib.zeros(0, 3))),
            repr(lib.tensor(a).t()), repr(lib.tensor(a)[:, ::2]),
            repr(lib.tensor(a[0]).expand(3, 3)),
            repr(lib.tensor(a, requires_grad=True).reshape(3, 2).t()),
            repr(lib.tensor(a, requires_grad=True).detach()),
        ]
        x = lib.tensor(a, requires_grad=True)
        (x * x).sum().backward()
        out += [repr(x.grad), repr(x.grad_fn)]
        lib.set_default_dtype(lib.float64)
        try:
            out += [repr(lib.tensor([1.5, 2.0])), repr(lib.tensor([1.5, 2.0], dtype=lib.float32)),
                    repr(lib.zeros(0, dtype=lib.float32))]
        finally:
            lib.set_default_dtype(lib.float32)
        return "\n".join(out)
    _same(show)


@pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")
def test_subclass_prefix_and_forward_ad_tangent():
    def show(lib):
        class MyTensor(lib.Tensor):
            pass

        t = lib.tensor([1.0, 2.0])
        t.__class__ = MyTensor  # (a program's own Tensor subclass prints under its name)
        fa = lib.autograd.forward_ad
        with fa.dual_level():
            d = fa.make_dual(lib.tensor([1.0, 2.0]), lib.tensor([3.0, 4.0]))
            duals = [repr(d), repr(d * 2)]
        return "\n".join([repr(t), *duals])
    _same(show)


def test_class_reprs():
    def show(lib):
        x = lib.ones(2)
        return " ".join(map(repr, (
            type(x), type(x.shape), type(x.dtype), type(x.device), type(lib.strided),
            type(lib.channels_last), type(lib.finfo(lib.float32)), type(lib.iinfo(lib.int8)),
            lib.Tensor, lib.Size, lib.dtype, lib.device, lib.nn.Parameter, lib.Generator(),
            lib.set_grad_enabled(True), lib.finfo(lib.float32), lib.finfo(lib.float64),
            lib.iinfo(lib.int32), lib.iinfo(lib.uint8), lib.float64, lib.long, lib.strided,
            lib.channels_last)))
    _same(show)


# grad_fn names that a printed tensor shows: ops whose PyTorch implementation goes through
# other ops than the obvious one
GRAD_FNS = {
    "diag_of_matrix": lambda lib, x: x.diag(),
    "diagonal_copy": lambda lib, x: lib.diagonal_copy(x, 1),
    "repeat_interleave_int": lambda lib, x: x.repeat_interleave(2, dim=1),
    "repeat_interleave_flat": lambda lib, x: x.repeat_interleave(2),
    "repeat_interleave_tensor": lambda lib, x: x.repeat_interleave(lib.tensor([1, 2, 1]), 0),
    "global_avg_pool2d": lambda lib, x: lib.nn.functional.adaptive_avg_pool2d(x[None, None], 1),
    "global_avg_pool_module": lambda lib, x: lib.nn.AdaptiveAvgPool2d((1, 1))(x[None, None]),
    "global_avg_pool3d": lambda lib, x: lib.nn.functional.adaptive_avg_pool3d(
        x[None, None, None], 1),
    "global_avg_pool_channels_last": lambda lib, x: lib.nn.functional.adaptive_avg_pool2d(
        x.expand(2, 2, 3, 3).contiguous(memory_format=lib.channels_last), 1),
    "avg_pool_not_global": lambda lib, x: lib.nn.functional.adaptive_avg_pool2d(x[None], (1, 2)),
    "iterate": lambda lib, x: list(x),
    "setitem_true": lambda lib, x: _set(x * 1, True),
    "setitem_0d_mask": lambda lib, x: _set(x * 1, lib.tensor(True)),
    "setitem_mask": lambda lib, x: _set(x * 1, x > 0),
    "gru": lambda lib, x: _rnn(lib, "GRU", x, batch_first=False),
    "rnn_unbatched": lambda lib, x: _rnn(lib, "RNN", x, unbatched=True),
    "lstm_batch_first": lambda lib, x: _rnn(lib, "LSTM", x, batch_first=True),
    "lstm_projected": lambda lib, x: _rnn(lib, "LSTM", x, batch_first=True, proj_size=2),
}


def _rnn(lib, kind, x, unbatched=False, **kw):
    layer = getattr(lib.nn, kind)(3, 3, **kw)
    with lib.no_grad():
        for p in layer.parameters():
            p.fill_(0.1)
    out = layer(x if unbatched else x.unsqueeze(0))[0]
    return out.grad_fn.name()


def _set(y, index):
    y[index] = 5.0
    return y


@pytest.mark.filterwarnings("ignore:LSTM with projections is not supported with oneDNN")
@pytest.mark.parametrize("name", list(GRAD_FNS))
def test_grad_fn_names(name):
    data = np.arange(9, dtype=np.float32).reshape(3, 3) - 4

    def show(lib):
        x = lib.tensor(data, requires_grad=True)
        out = GRAD_FNS[name](lib, x)
        if isinstance(out, str):  # (a node's name)
            return out
        outs = out if isinstance(out, list) else [out]
        (sum(o.sum() for o in outs)).backward()
        return f"{out!r} {[o.stride() for o in outs]} {x.grad!r}"
    _same(show)


MODULES = [
    "Linear(3, 4)", "Linear(3, 4, bias=False)", "Bilinear(2, 3, 4)",
    "Conv1d(3, 6, 3, groups=3, dilation=2, padding_mode='reflect', padding=2)",
    "Conv2d(3, 4, (3, 5), stride=(2, 1), padding=(1, 2))", "Conv2d(3, 4, 3, padding='same')",
    "ConvTranspose2d(3, 4, 2, stride=2, padding=1, output_padding=1, bias=False, dilation=2)",
    "LazyConv2d(4, 3, stride=2)", "LazyLinear(4)", "BatchNorm1d(3, momentum=None, affine=False)",
    "BatchNorm2d(8)", "LayerNorm((3, 4), elementwise_affine=False)", "GroupNorm(2, 4)",
    "InstanceNorm1d(3, affine=True, track_running_stats=True)", "RMSNorm([2, 3], eps=1e-5)",
    "LocalResponseNorm(3, alpha=1e-3)", "Embedding(10, 3, padding_idx=0, max_norm=1.0)",
    "EmbeddingBag(10, 3, mode='sum')", "LSTM(3, 4, 2, batch_first=True, proj_size=2)",
    "GRU(3, 4, 2, bidirectional=True, dropout=0.5)", "RNN(3, 4, nonlinearity='relu')",
    "LSTMCell(3, 4)", "MultiheadAttention(8, 2, kdim=4, vdim=6, batch_first=True)",
    "TransformerEncoder(torch.nn.TransformerEncoderLayer(8, 2, 16, batch_first=True), 2, "
    "enable_nested_tensor=False)",
    "Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1, "
    "dim_feedforward=16)",
    "MaxPool2d(3, stride=2, padding=1, return_indices=True, ceil_mode=True)",
    "AvgPool2d(3, stride=2, count_include_pad=False, divisor_override=2)",
    "AdaptiveAvgPool2d((2, None))", "LPPool1d(2.5, 3, stride=2)", "MaxUnpool2d(3, stride=2)",
    "Fold(output_size=4, kernel_size=2, stride=2)", "Unfold((2, 3), dilation=2)",
    "Upsample(size=(4, 5), mode='bilinear', align_corners=True)", "Upsample(scale_factor=2)",
    "PixelShuffle(2)", "ReflectionPad2d((1, 1, 2, 0))", "ConstantPad1d(2, 3.5)", "ZeroPad2d(2)",
    "Dropout(p=0.1, inplace=True)", "ReLU(inplace=True)", "LeakyReLU(0.2)", "GELU('tanh')",
    "ELU(alpha=0.5)", "Softplus(beta=2, threshold=10)", "Softmax(dim=-1)", "LogSoftmax(1)",
    "Hardtanh(-2, 2)", "Threshold(0.1, 20)", "PReLU(3, init=0.1)", "RReLU(0.1, 0.3)", "GLU()",
    "Flatten(0, -1)", "Unflatten(1, (2, 3))", "Identity(3, foo=2)",
    "CrossEntropyLoss(ignore_index=0, label_smoothing=0.1)", "MSELoss(reduction='none')",
    "KLDivLoss(reduction='batchmean', log_target=True)", "TripletMarginLoss(margin=2.0, p=1)",
    "CTCLoss(blank=1, zero_infinity=True)", "CosineSimilarity(dim=0)", "PairwiseDistance(p=1)",
    "AdaptiveLogSoftmaxWithLoss(8, 10, [4, 8])",
    "ModuleList([torch.nn.Linear(2, 2) for _ in range(3)])",
    "ModuleDict({'a': torch.nn.Linear(2, 3), 'b': torch.nn.ReLU()})",
    "ParameterList([torch.nn.Parameter(torch.ones(2, 3)), torch.nn.Parameter(torch.zeros(1), "
    "requires_grad=False)])",
    "ParameterDict({'a': torch.nn.Parameter(torch.ones(2, 3, dtype=torch.float64))})",
    "Sequential(torch.nn.Linear(2, 2), torch.nn.Linear(2, 2), torch.nn.ReLU(), torch.nn.ReLU(), "
    "*[torch.nn.Linear(2, 3) for _ in range(3)])",
]


@pytest.mark.filterwarnings("ignore::UserWarning")  # (Transformer's nested-tensor advice)
def test_module_reprs():
    def show(lib):
        return "\n".join(repr(eval(f"torch.nn.{m}", {"torch": lib})) for m in MODULES)
    _same(show)


def test_custom_module_tree():
    def show(lib):
        nn = lib.nn

        class Block(nn.Module):
            def __init__(self, d):
                super().__init__()
                self.fc = nn.Linear(d, d)
                self.register_buffer("scale", lib.ones(d))
                self.alpha = nn.Parameter(lib.tensor(0.5))

        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.blocks = nn.ModuleList([Block(4) for _ in range(3)])
                self.head = nn.Sequential(collections.OrderedDict(
                    [("fc1", nn.Linear(4, 8)), ("relu", nn.ReLU()), ("fc2", nn.Linear(8, 2))]))
                self.empty = nn.Sequential()

            def extra_repr(self):
                return "custom=True\nsecond line"

        m = Model()
        lazy = nn.LazyLinear(4)
        lazy(lib.ones(2, 3))
        return "\n".join(map(str, (
            m, [n for n, _ in m.named_parameters()], [n for n, _ in m.named_buffers()],
            list(m.state_dict()), [n for n, _ in m.named_modules()], lazy,
            nn.utils.parametrizations.weight_norm(nn.Linear(2, 3)),
            nn.BatchNorm1d(2).state_dict())))
    _same(show)


def test_optimizers_and_schedulers():
    def show(lib):
        w = lib.nn.Parameter(lib.tensor(np.array([[1.0, 2.0], [3.0, 4.0]], dtype=np.float32)))
        b = lib.nn.Parameter(lib.tensor(np.array([0.5, -0.5], dtype=np.float32)))
        out = []
        for name in ("SGD", "Adam", "AdamW", "NAdam", "RAdam", "Adamax", "RMSprop", "Adagrad",
                     "Adadelta", "Rprop", "ASGD", "LBFGS"):
            cls = getattr(lib.optim, name)
            opt = (cls([w], lr=0.1) if name == "LBFGS" else
                   cls([{"params": [w]}, {"params": [b], "lr": 0.5}], lr=0.01))

            def closure():
                opt.zero_grad()
                loss = (w.sum() * 2 + b.sum()) ** 2
                loss.backward()
                return loss
            opt.step(closure)
            state = opt.state_dict()
            out += [str(opt), str(state["param_groups"]),
                    str({k: sorted(v) for k, v in state["state"].items()})]
        S = lib.optim.lr_scheduler
        for make in (lambda o: S.StepLR(o, 2, 0.5), lambda o: S.OneCycleLR(o, 1.0, total_steps=10),
                     lambda o: S.CosineAnnealingLR(o, 10), lambda o: S.LinearLR(o)):
            opt = lib.optim.SGD([w], lr=0.1, momentum=0.9)
            sched = make(opt)
            for _ in range(3):
                opt.step()
                sched.step()
            out.append(f"{sched.get_last_lr()} {sched.last_epoch}")
        return "\n".join(out)
    _same(show)


def test_distributions():
    def show(lib):
        D = lib.distributions

        def t(v, **kw):
            return lib.tensor(np.array(v, dtype=np.float32), **kw)
        loc = t([0.5], requires_grad=True)
        dists = [D.Normal(0.0, 1.0), D.Normal(t([0.0, 1.0]), t([1.0, 2.0])), D.Normal(loc, 1.0),
                 D.Bernoulli(logits=t([0.3, -1.0])), D.Categorical(probs=t([0.2, 0.8])),
                 D.MultivariateNormal(t([0.0, 0.0]), lib.eye(2)), D.Dirichlet(t([1.0, 2.0, 3.0])),
                 D.Independent(D.Normal(t([0.0, 1.0]), t([1.0, 1.0])), 1),
                 D.TransformedDistribution(D.Normal(0.0, 1.0), [D.transforms.ExpTransform()]),
                 D.Normal(lib.zeros(2, 3), lib.ones(2, 3))]
        sc = t([1.0, 2.0], requires_grad=True)
        values = [D.MultivariateNormal(t([0.0, 1.0]), lib.diag(sc)).entropy(),
                  D.Dirichlet(t([0.5, 0.7], requires_grad=True)).mode,
                  D.Dirichlet(t([[0.5, 0.7], [2.0, 3.0]], requires_grad=True)).mode,
                  D.Gamma(sc, sc).cdf(t([0.5, 1.5]))]
        return "\n".join(map(repr, dists + values))
    _same(show)
