"""CS231n assignment 3, "Image Captioning with RNNs/LSTMs" in its PyTorch version, on generated
image features and captions: the layer functions written with torch ops (``rnn_step_forward``
with ``torch.tanh``, ``rnn_forward`` collecting hidden states by ``torch.stack``,
``word_embedding_forward`` as ``W[x]``, ``temporal_affine_forward`` by ``reshape``/``@``,
``lstm_step_forward`` slicing the ``4H`` activations into i/f/o/g with ``torch.sigmoid`` and
``torch.tanh``, ``temporal_softmax_loss`` by ``F.cross_entropy(..., reduction='none')`` times the
mask, summed over time and averaged over the minibatch), checked on the notebook's
``np.linspace`` inputs and its ``check_loss`` sanity values, and against numerical gradients in
float64; then the CaptioningRNN class holding a ``params`` dict of leaf tensors
(``requires_grad_()``), ``captions[:, :-1]`` / ``captions[:, 1:]`` with ``mask = captions_out !=
self._null``, trained to overfit a small dataset by ``torch.optim.Adam(model.params.values())``
for both cell types, and greedy ``sample`` under ``torch.no_grad()`` writing into a
``self._null``-filled caption tensor.

    python cs231n_captioning.py [torch|numbagrad]
"""
import numpy as np

from _common import BACKEND, show

if BACKEND == "torch":
    import torch
    import torch.nn.functional as F
else:
    import numbagrad as torch
    import numbagrad.nn.functional as F

rng = np.random.default_rng(231)


def rel_error(x, y):
    """ returns relative error """
    return np.max(np.abs(x - y) / (np.maximum(1e-8, np.abs(x) + np.abs(y))))


def eval_numerical_gradient(f, x, h=1e-5):
    """a naive implementation of numerical gradient of f at x (a float64 tensor)"""
    grad = torch.zeros_like(x)
    flat, gflat = x.view(-1), grad.view(-1)
    for i in range(flat.numel()):
        old = flat[i].item()
        flat[i] = old + h
        fxph = f(x).item()
        flat[i] = old - h
        fxmh = f(x).item()
        flat[i] = old
        gflat[i] = (fxph - fxmh) / (2 * h)
    return grad


# ---------------------------------------------------------------- rnn_layers_pytorch.py
def rnn_step_forward(x, prev_h, Wx, Wh, b):
    next_h = torch.tanh(x @ Wx + prev_h @ Wh + b)
    return next_h


def rnn_forward(x, h0, Wx, Wh, b):
    N, T, D = x.shape
    hs = []
    prev_h = h0
    for t in range(T):
        prev_h = rnn_step_forward(x[:, t, :], prev_h, Wx, Wh, b)
        hs.append(prev_h)
    h = torch.stack(hs, dim=1)
    return h


def word_embedding_forward(x, W):
    out = W[x]
    return out


def lstm_step_forward(x, prev_h, prev_c, Wx, Wh, b):
    H = prev_h.shape[1]
    a = x @ Wx + prev_h @ Wh + b
    i = torch.sigmoid(a[:, :H])
    f = torch.sigmoid(a[:, H:2 * H])
    o = torch.sigmoid(a[:, 2 * H:3 * H])
    g = torch.tanh(a[:, 3 * H:])
    next_c = f * prev_c + i * g
    next_h = o * torch.tanh(next_c)
    return next_h, next_c


def lstm_forward(x, h0, Wx, Wh, b):
    N, T, D = x.shape
    prev_h, prev_c = h0, torch.zeros_like(h0)
    hs = []
    for t in range(T):
        prev_h, prev_c = lstm_step_forward(x[:, t], prev_h, prev_c, Wx, Wh, b)
        hs.append(prev_h)
    return torch.stack(hs, dim=1)


def temporal_affine_forward(x, w, b):
    N, T, D = x.shape
    M = b.shape[0]
    out = x.reshape(N * T, D) @ w + b
    return out.reshape(N, T, M)


def temporal_softmax_loss(x, y, mask):
    N, T, V = x.shape
    x_flat = x.reshape(N * T, V)
    y_flat = y.reshape(N * T)
    mask_flat = mask.reshape(N * T)
    loss = F.cross_entropy(x_flat, y_flat, reduction='none')
    loss = torch.mul(loss, mask_flat)
    loss = torch.sum(loss) / N
    return loss


# ---------------------------------------------------------------- the notebook's checks
N, D, H = 3, 10, 4
x = torch.from_numpy(np.linspace(-0.4, 0.7, num=N * D).reshape(N, D))
prev_h = torch.from_numpy(np.linspace(-0.2, 0.5, num=N * H).reshape(N, H))
Wx = torch.from_numpy(np.linspace(-0.1, 0.9, num=D * H).reshape(D, H))
Wh = torch.from_numpy(np.linspace(-0.3, 0.7, num=H * H).reshape(H, H))
b = torch.from_numpy(np.linspace(-0.2, 0.4, num=H))
next_h = rnn_step_forward(x, prev_h, Wx, Wh, b)
expected_next_h = np.asarray([
    [-0.58172089, -0.50182032, -0.41232771, -0.31410098],
    [0.66854692, 0.79562378, 0.87755553, 0.92795967],
    [0.97934501, 0.99144213, 0.99646691, 0.99854353]])
show("rnn_step_next_h", next_h)
show("rnn_step_error_small", float(rel_error(expected_next_h, next_h.numpy()) < 1e-7))

N, T, D, H = 2, 3, 4, 5
x = torch.from_numpy(np.linspace(-0.1, 0.3, num=N * T * D).reshape(N, T, D))
h0 = torch.from_numpy(np.linspace(-0.3, 0.1, num=N * H).reshape(N, H))
Wx = torch.from_numpy(np.linspace(-0.2, 0.4, num=D * H).reshape(D, H))
Wh = torch.from_numpy(np.linspace(-0.4, 0.1, num=H * H).reshape(H, H))
b = torch.from_numpy(np.linspace(-0.7, 0.1, num=H))
h = rnn_forward(x, h0, Wx, Wh, b)
show("rnn_forward_h", h)

N, T, V, D = 2, 4, 5, 3
x = torch.from_numpy(np.asarray([[0, 3, 1, 2], [2, 1, 0, 3]]))
W = torch.from_numpy(np.linspace(0, 1, num=V * D).reshape(V, D))
out = word_embedding_forward(x, W)
show("word_embedding_out", out)

N, D, H = 3, 4, 5
x = torch.from_numpy(np.linspace(-0.4, 1.2, num=N * D).reshape(N, D))
prev_h = torch.from_numpy(np.linspace(-0.3, 0.7, num=N * H).reshape(N, H))
prev_c = torch.from_numpy(np.linspace(-0.4, 0.9, num=N * H).reshape(N, H))
Wx = torch.from_numpy(np.linspace(-2.1, 1.3, num=4 * D * H).reshape(D, 4 * H))
Wh = torch.from_numpy(np.linspace(-0.7, 2.2, num=4 * H * H).reshape(H, 4 * H))
b = torch.from_numpy(np.linspace(0.3, 0.7, num=4 * H))
next_h, next_c = lstm_step_forward(x, prev_h, prev_c, Wx, Wh, b)
show("lstm_step_next_h", next_h)
show("lstm_step_next_c", next_c)


# the loss sanity checks
def check_loss(N, T, V, p):
    x = torch.from_numpy(0.001 * rng.normal(size=(N, T, V)))
    y = torch.from_numpy(rng.integers(V, size=(N, T)))
    mask = torch.from_numpy(rng.random((N, T)) <= p)
    return temporal_softmax_loss(x, y, mask).item()


show("check_loss_about_2.3", check_loss(100, 1, 10, 1.0))  # Should be about 2.3
show("check_loss_about_23", check_loss(100, 10, 10, 1.0))  # Should be about 23
show("check_loss_2.2_to_2.4", check_loss(5000, 10, 10, 0.1))  # Should be within 2.2-2.4

# gradient checks against numerical gradients (float64)
N, T, V = 7, 8, 9
x = torch.from_numpy(rng.normal(size=(N, T, V)))
y = torch.from_numpy(rng.integers(V, size=(N, T)))
mask = torch.from_numpy(rng.random((N, T)) > 0.5)
xg = x.clone().requires_grad_()
temporal_softmax_loss(xg, y, mask).backward()
dx_num = eval_numerical_gradient(lambda x: temporal_softmax_loss(x, y, mask), x.clone())
show("temporal_softmax_dx_error_small", float(rel_error(xg.grad.numpy(), dx_num.numpy()) < 1e-7))
show("temporal_softmax_dx_head", xg.grad[0, 0, :4])

N, D, T, H = 2, 3, 5, 4
x = torch.from_numpy(rng.normal(size=(N, T, D)))
h0 = torch.from_numpy(rng.normal(size=(N, H)))
Wx = torch.from_numpy(rng.normal(size=(D, 4 * H)))
Wh = torch.from_numpy(rng.normal(size=(H, 4 * H)))
b = torch.from_numpy(rng.normal(size=(4 * H,)))
dout = torch.from_numpy(rng.normal(size=(N, T, H)))
leaves = [t.clone().requires_grad_() for t in (x, h0, Wx, Wh, b)]
(lstm_forward(*leaves) * dout).sum().backward()
names = ["dx", "dh0", "dWx", "dWh", "db"]
errors = []
for k, (name, leaf) in enumerate(zip(names, leaves)):
    def f(v, k=k):
        args = [x, h0, Wx, Wh, b]
        args[k] = v
        return (lstm_forward(*args) * dout).sum()
    num = eval_numerical_gradient(f, [x, h0, Wx, Wh, b][k].clone())
    errors.append(rel_error(leaf.grad.numpy(), num.numpy()))
show("lstm_backward_errors_small", [float(e < 1e-6) for e in errors])
show("lstm_dWh_head", leaves[3].grad[0, :4])


# ---------------------------------------------------------------- rnn_pytorch.py
class CaptioningRNN:
    def __init__(self, word_to_idx, input_dim=512, wordvec_dim=128, hidden_dim=128,
                 cell_type="rnn", dtype=torch.float32):
        if cell_type not in {"rnn", "lstm"}:
            raise ValueError('Invalid cell_type "%s"' % cell_type)

        self.cell_type = cell_type
        self.dtype = dtype
        self.word_to_idx = word_to_idx
        self.idx_to_word = {i: w for w, i in word_to_idx.items()}
        self.params = {}

        vocab_size = len(word_to_idx)

        self._null = word_to_idx["<NULL>"]
        self._start = word_to_idx.get("<START>", None)
        self._end = word_to_idx.get("<END>", None)

        # Initialize word vectors
        self.params["W_embed"] = rng.normal(size=(vocab_size, wordvec_dim))
        self.params["W_embed"] /= 100

        # Initialize CNN -> hidden state projection parameters
        self.params["W_proj"] = rng.normal(size=(input_dim, hidden_dim))
        self.params["W_proj"] /= np.sqrt(input_dim)
        self.params["b_proj"] = np.zeros(hidden_dim)

        # Initialize parameters for the RNN
        dim_mul = {"lstm": 4, "rnn": 1}[cell_type]
        self.params["Wx"] = rng.normal(size=(wordvec_dim, dim_mul * hidden_dim))
        self.params["Wx"] /= np.sqrt(wordvec_dim)
        self.params["Wh"] = rng.normal(size=(hidden_dim, dim_mul * hidden_dim))
        self.params["Wh"] /= np.sqrt(hidden_dim)
        self.params["b"] = np.zeros(dim_mul * hidden_dim)

        # Initialize output to vocab weights
        self.params["W_vocab"] = rng.normal(size=(hidden_dim, vocab_size))
        self.params["W_vocab"] /= np.sqrt(hidden_dim)
        self.params["b_vocab"] = np.zeros(vocab_size)

        # Cast parameters to correct dtype
        for k, v in self.params.items():
            self.params[k] = torch.tensor(v).to(self.dtype).requires_grad_()

    def loss(self, features, captions):
        captions_in = captions[:, :-1]
        captions_out = captions[:, 1:]

        # You'll need this
        mask = captions_out != self._null

        # Weight and bias for the affine transform from image features to initial hidden state
        W_proj, b_proj = self.params["W_proj"], self.params["b_proj"]
        # Word embedding matrix
        W_embed = self.params["W_embed"]
        # Input-to-hidden, hidden-to-hidden, and biases for the RNN
        Wx, Wh, b = self.params["Wx"], self.params["Wh"], self.params["b"]
        # Weight and bias for the hidden-to-vocab transformation.
        W_vocab, b_vocab = self.params["W_vocab"], self.params["b_vocab"]

        h0 = features @ W_proj + b_proj
        x = word_embedding_forward(captions_in, W_embed)
        if self.cell_type == "rnn":
            h = rnn_forward(x, h0, Wx, Wh, b)
        else:
            h = lstm_forward(x, h0, Wx, Wh, b)
        scores = temporal_affine_forward(h, W_vocab, b_vocab)
        loss = temporal_softmax_loss(scores, captions_out, mask)
        return loss

    def sample(self, features, max_length=30):
        N = features.shape[0]
        captions = self._null * torch.ones((N, max_length), dtype=torch.long)

        # Unpack parameters
        W_proj, b_proj = self.params["W_proj"], self.params["b_proj"]
        W_embed = self.params["W_embed"]
        Wx, Wh, b = self.params["Wx"], self.params["Wh"], self.params["b"]
        W_vocab, b_vocab = self.params["W_vocab"], self.params["b_vocab"]

        with torch.no_grad():
            h = features @ W_proj + b_proj
            c = torch.zeros_like(h)
            word = self._start * torch.ones(N, dtype=torch.long)
            for t in range(max_length):
                x = W_embed[word]
                if self.cell_type == "rnn":
                    h = rnn_step_forward(x, h, Wx, Wh, b)
                else:
                    h, c = lstm_step_forward(x, h, c, Wx, Wh, b)
                scores = h @ W_vocab + b_vocab
                word = scores.argmax(dim=1)
                captions[:, t] = word
        return captions


# the notebook's loss check of the model: fixed parameters from np.linspace
N, D, W_, H = 10, 20, 30, 40
word_to_idx = {"<NULL>": 0, "cat": 2, "dog": 3}
V = len(word_to_idx)
T = 13
model = CaptioningRNN(word_to_idx, input_dim=D, wordvec_dim=W_, hidden_dim=H, cell_type="rnn",
                      dtype=torch.float64)
# Set all model parameters to fixed values
for k, v in model.params.items():
    model.params[k] = torch.tensor(np.linspace(-1.4, 1.3, num=v.numel()).reshape(*v.shape)).requires_grad_()
features = torch.tensor(np.linspace(-1.5, 0.3, num=(N * D)).reshape(N, D))
captions = torch.tensor((np.arange(N * T) % V).reshape(N, T))
loss = model.loss(features, captions)
expected_loss = 9.83235591003
show("fixed_rnn_loss", loss)
show("fixed_rnn_loss_difference_small", float(abs(loss.item() - expected_loss) < 1e-8))

# ---- overfit a small dataset
vocab = ["<NULL>", "<START>", "<END>", "a", "cat", "dog", "on", "mat", "red", "sofa", "sits", "runs"]
word_to_idx = {w: i for i, w in enumerate(vocab)}
n_train, T = 24, 8
features = torch.from_numpy(rng.normal(size=(n_train, 16)).astype(np.float32))
captions = np.zeros((n_train, T), dtype=np.int64)
for i in range(n_train):
    length = int(rng.integers(3, T - 1))
    captions[i, 0] = 1
    captions[i, 1:length + 1] = rng.integers(3, len(vocab), length)
    captions[i, length + 1] = 2
captions = torch.from_numpy(captions)
show("captions_null_count", (captions == 0).sum())

for cell_type in ["rnn", "lstm"]:
    model = CaptioningRNN(word_to_idx, input_dim=16, wordvec_dim=16, hidden_dim=32, cell_type=cell_type)
    optimizer = torch.optim.Adam(model.params.values(), lr=5e-3)
    loss_history = []
    for it in range(60):
        optimizer.zero_grad()
        loss = model.loss(features, captions)
        loss.backward()
        optimizer.step()
        loss_history.append(loss.item())
    show(f"{cell_type}_loss_history", loss_history[::10] + loss_history[-1:])
    show(f"{cell_type}_W_embed_grad_null_row", model.params["W_embed"].grad[0].abs().sum())
    sample_captions = model.sample(features[:4], max_length=T)
    show(f"{cell_type}_sample", sample_captions)
    decoded = [" ".join(vocab[w] for w in row.tolist() if w != 0) for row in sample_captions]
    print(decoded[0])
