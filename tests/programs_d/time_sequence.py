"""pytorch/examples time_sequence_prediction (generate_sine_wave.py and train.py), scaled
down: shifted sine waves in float64 saved and loaded with ``torch.save``/``torch.load``, two
``nn.LSTMCell``s and a Linear unrolled over ``input.split(1, dim=1)`` with the states as
``torch.zeros(..., dtype=torch.double)``, ``seq.double()``, MSELoss, ``optim.LBFGS(lr=0.8)``
stepped with a closure that prints the loss, and the future predicted by feeding outputs back
in (``torch.cat`` of the per-step outputs) under ``no_grad``.

    python time_sequence.py [torch|numbagrad]
"""
import argparse
import io

import numpy as np

from _common import BACKEND, show

if BACKEND == "torch":
    import torch
    import torch.nn as nn
    import torch.optim as optim
else:
    import numbagrad as torch
    import numbagrad.nn as nn
    import numbagrad.optim as optim

HIDDEN = 10

# ----- generate_sine_wave.py
np.random.seed(2)

T = 20
L = 16
N = 7
x = np.empty((N, L), 'int64')
x[:] = np.array(range(L)) + np.random.randint(-4 * T, 4 * T, N).reshape(N, 1)
data = np.sin(x / 1.0 / T).astype('float64')
buffer = io.BytesIO()
torch.save(torch.from_numpy(data), buffer)


# ----- train.py
class Sequence(nn.Module):
    def __init__(self):
        super(Sequence, self).__init__()
        self.lstm1 = nn.LSTMCell(1, HIDDEN)
        self.lstm2 = nn.LSTMCell(HIDDEN, HIDDEN)
        self.linear = nn.Linear(HIDDEN, 1)

    def forward(self, input, future = 0):
        outputs = []
        h_t = torch.zeros(input.size(0), HIDDEN, dtype=torch.double)
        c_t = torch.zeros(input.size(0), HIDDEN, dtype=torch.double)
        h_t2 = torch.zeros(input.size(0), HIDDEN, dtype=torch.double)
        c_t2 = torch.zeros(input.size(0), HIDDEN, dtype=torch.double)

        for input_t in input.split(1, dim=1):
            h_t, c_t = self.lstm1(input_t, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        for i in range(future):# if we should predict the future
            h_t, c_t = self.lstm1(output, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        outputs = torch.cat(outputs, dim=1)
        return outputs


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('backend', nargs='?', default='numbagrad')
    parser.add_argument('--steps', type=int, default=2, help='steps to run')
    opt = parser.parse_args()
    # set random seed to 0
    np.random.seed(0)
    torch.manual_seed(0)
    # load data and make training set
    buffer.seek(0)
    data = torch.load(buffer)
    show("data_dtype", data.dtype == torch.float64)
    input = data[3:, :-1]
    target = data[3:, 1:]
    test_input = data[:3, :-1]
    test_target = data[:3, 1:]
    # build the model
    seq = Sequence()
    seq.double()
    # the library's initial weights differ: load NumPy's numbers (as doubles)
    rng = np.random.default_rng(0)
    with torch.no_grad():
        for p in seq.parameters():
            p.copy_(torch.from_numpy(rng.uniform(-1 / np.sqrt(HIDDEN), 1 / np.sqrt(HIDDEN), tuple(p.shape))))
    show("param_dtypes", [p.dtype == torch.float64 for p in seq.parameters()])
    criterion = nn.MSELoss()
    # use LBFGS as optimizer since we can load the whole data to train
    optimizer = optim.LBFGS(seq.parameters(), lr=0.8)
    #begin to train
    losses, test_losses = [], []
    for i in range(opt.steps):
        print('STEP: ', i)
        def closure():
            optimizer.zero_grad()
            out = seq(input)
            loss = criterion(out, target)
            print('loss:', loss.item())
            losses.append(loss.item())
            loss.backward()
            return loss
        optimizer.step(closure)
        # begin to predict, no need to track gradient here
        with torch.no_grad():
            future = 8
            pred = seq(test_input, future=future)
            loss = criterion(pred[:, :-future], test_target)
            print('test loss:', loss.item())
            test_losses.append(loss.item())
            y = pred.detach().numpy()
    show("losses", losses)
    show("test_losses", test_losses)
    show("prediction_shape", list(y.shape))
    show("future", y[0, -future:])
    show("lstm1_bias_hh", seq.lstm1.bias_hh)
    show("lbfgs_state", [optimizer.state[optimizer._params[0]]["func_evals"], optimizer.state[optimizer._params[0]]["n_iter"]])

    # one LSTMCell step against its equations (gates i, f, g, o stacked in the weights)
    cell = seq.lstm1
    x_t = test_input[:, :1]
    h0 = torch.zeros(3, HIDDEN, dtype=torch.double)
    c0 = torch.zeros(3, HIDDEN, dtype=torch.double) + 0.1
    h1, c1 = cell(x_t, (h0, c0))
    gates = x_t @ cell.weight_ih.t() + cell.bias_ih + h0 @ cell.weight_hh.t() + cell.bias_hh
    i_g, f_g, g_g, o_g = gates.chunk(4, 1)
    c_ref = torch.sigmoid(f_g) * c0 + torch.sigmoid(i_g) * torch.tanh(g_g)
    show("cell_matches", [bool(torch.allclose(c1, c_ref)), bool(torch.allclose(h1, torch.sigmoid(o_g) * torch.tanh(c_ref)))])
    show("cell_grad_fn", h1.grad_fn is not None)
    h_unbatched, c_unbatched = cell(x_t[0], (h0[0], c0[0]))
    show("cell_unbatched", [*h_unbatched.shape, *(h_unbatched - h1[0]).abs().max().reshape(1)])
    h_default, _ = nn.LSTMCell(1, 3, bias=False).double()(x_t)
    show("cell_default_state", list(h_default.shape))
