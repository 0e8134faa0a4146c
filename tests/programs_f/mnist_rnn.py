"""pytorch/examples mnist_rnn/main.py on generated 28x28 "digits" (nothing downloaded): an
``nn.LSTM(input_size=28, hidden_size=64, batch_first=True)`` reading the image row by row after
``input.reshape(-1, 28, 28)``, the last step's output ``output[:, -1, :]`` through
``nn.BatchNorm1d(64)``, ``nn.Dropout2d`` applied to 2-D activations (as the example does),
``fc1``/``fc2`` and ``F.log_softmax``; argparse defaults parsed from an empty list,
``torch.manual_seed(args.seed)``, a ``DataLoader`` with ``**train_kwargs``, Adadelta with
``StepLR(step_size=1, gamma=args.gamma)``, ``F.nll_loss`` and the test loop's summed loss
``reduction='sum'`` and ``pred.eq(target.view_as(pred)).sum().item()``; then saving
``model.state_dict()`` as ``args.save_model`` asks. The untrained model's test numbers and a
deterministic epoch with the dropout layers in eval mode are compared exactly; the ordinary
training epoch (dropout drawn by each library) is checked only for finite, decreasing loss.

    python mnist_rnn.py [torch|numbagrad]
"""
import argparse
import os
import tempfile
import warnings

import numpy as np

from _common import BACKEND, numpy_init, show

if BACKEND == "torch":
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    import torch.optim as optim
    from torch.optim.lr_scheduler import StepLR
    from torch.utils.data import DataLoader, TensorDataset
else:
    import numbagrad as torch
    import numbagrad.nn as nn
    import numbagrad.nn.functional as F
    import numbagrad.optim as optim
    from numbagrad.optim.lr_scheduler import StepLR
    from numbagrad.utils.data import DataLoader, TensorDataset

warnings.filterwarnings("ignore", message="dropout2d: Received a 2-D input")


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.rnn = nn.LSTM(input_size=28, hidden_size=64, batch_first=True)
        self.batchnorm = nn.BatchNorm1d(64)
        self.dropout1 = nn.Dropout2d(0.25)
        self.dropout2 = nn.Dropout2d(0.5)
        self.fc1 = nn.Linear(64, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, input):
        # Shape of input is (batch_size,1, 28, 28)
        # converting shape of input to (batch_size, 28, 28)
        # as required by RNN when batch_first is set True
        input = input.reshape(-1, 28, 28)
        output, hidden = self.rnn(input)

        # RNN output shape is (seq_len, batch, input_size)
        # Get last output of RNN
        output = output[:, -1, :]
        output = self.batchnorm(output)
        output = self.dropout1(output)
        output = self.fc1(output)
        output = F.relu(output)
        output = self.dropout2(output)
        output = self.fc2(output)
        output = F.log_softmax(output, dim=1)
        return output


def train(args, model, device, train_loader, optimizer, epoch, losses):
    model.train()
    for batch_idx, (data, target) in enumerate(train_loader):
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        if batch_idx % args.log_interval == 0:
            print('Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}'.format(
                epoch, batch_idx * len(data), len(train_loader.dataset),
                100. * batch_idx / len(train_loader), loss.item()))
            if args.dry_run:
                break


def test(args, model, device, test_loader):
    model.eval()
    test_loss = 0
    correct = 0
    with torch.no_grad():
        for data, target in test_loader:
            data, target = data.to(device), target.to(device)
            output = model(data)
            test_loss += F.nll_loss(output, target, reduction='sum').item()  # sum up batch loss
            pred = output.argmax(dim=1, keepdim=True)  # get the index of the max log-probability
            correct += pred.eq(target.view_as(pred)).sum().item()

    test_loss /= len(test_loader.dataset)

    print('\nTest set: Average loss: {:.4f}, Accuracy: {}/{} ({:.0f}%)\n'.format(
        test_loss, correct, len(test_loader.dataset),
        100. * correct / len(test_loader.dataset)))
    return test_loss, correct


def make_digits(n, rng):
    """Ten stroke patterns on a 28x28 canvas, shifted and noised, normalised like MNIST."""
    base = np.zeros((10, 28, 28), np.float32)
    for d in range(10):
        base[d, 4 + 2 * d:8 + 2 * d, 6:22] = 1.0  # a horizontal bar whose height encodes the digit
        base[d, 6:22, 4 + d:7 + d] = 1.0  # and a vertical one
    labels = rng.integers(0, 10, n)
    imgs = base[labels] + 0.3 * rng.normal(size=(n, 28, 28)).astype(np.float32)
    imgs = ((imgs - 0.1307) / 0.3081).astype(np.float32)
    return torch.from_numpy(imgs[:, None]), torch.from_numpy(labels)


def main(argv):
    # Training settings
    parser = argparse.ArgumentParser(description='PyTorch MNIST Example using RNN')
    parser.add_argument('--batch-size', type=int, default=64, metavar='N',
                        help='input batch size for training (default: 64)')
    parser.add_argument('--test-batch-size', type=int, default=1000, metavar='N',
                        help='input batch size for testing (default: 1000)')
    parser.add_argument('--epochs', type=int, default=14, metavar='N',
                        help='number of epochs to train (default: 14)')
    parser.add_argument('--lr', type=float, default=0.1, metavar='LR',
                        help='learning rate (default: 0.1)')
    parser.add_argument('--gamma', type=float, default=0.7, metavar='M',
                        help='learning rate step gamma (default: 0.7)')
    parser.add_argument('--cuda', action='store_true', default=False,
                        help='enables CUDA training')
    parser.add_argument('--mps', action="store_true", default=False,
                        help="enables MPS training")
    parser.add_argument('--dry-run', action='store_true', default=False,
                        help='quickly check a single pass')
    parser.add_argument('--seed', type=int, default=1, metavar='S',
                        help='random seed (default: 1)')
    parser.add_argument('--log-interval', type=int, default=10, metavar='N',
                        help='how many batches to wait before logging training status')
    parser.add_argument('--save-model', action='store_true', default=False,
                        help='for Saving the current Model')
    args = parser.parse_args(argv)

    if args.cuda and not args.mps and torch.cuda.is_available():
        device = "cuda"
    else:
        device = "cpu"

    torch.manual_seed(args.seed)

    kwargs = {'num_workers': 0, 'pin_memory': False} if device == "cuda" else {}
    rng = np.random.default_rng(args.seed)
    train_loader = DataLoader(TensorDataset(*make_digits(320, rng)),
                              batch_size=args.batch_size, shuffle=False, **kwargs)
    test_loader = DataLoader(TensorDataset(*make_digits(200, rng)),
                             batch_size=args.test_batch_size, shuffle=False, **kwargs)
    show("loader_lengths", [len(train_loader), len(test_loader)])

    model = Net().to(device)
    numpy_init(torch, model, seed=3)
    show("lstm_weight_shapes", [list(p.shape) for p in model.rnn.parameters()])
    optimizer = optim.Adadelta(model.parameters(), lr=args.lr)

    # the untrained model (eval mode: running statistics, no dropout)
    show("untrained_test", test(args, model, device, test_loader))

    # a deterministic epoch: the dropout layers put in eval mode
    det = Net().to(device)
    det.load_state_dict(model.state_dict())
    det_opt = optim.Adadelta(det.parameters(), lr=args.lr)
    det_sched = StepLR(det_opt, step_size=1, gamma=args.gamma)
    det_losses = []
    for epoch in range(1, 3):
        det.train()
        det.dropout1.eval()
        det.dropout2.eval()
        for data, target in train_loader:
            det_opt.zero_grad()
            loss = F.nll_loss(det(data), target)
            loss.backward()
            det_opt.step()
            det_losses.append(loss.item())
        det_sched.step()
        show(f"deterministic_lr_epoch{epoch}", det_sched.get_last_lr())
    show("deterministic_losses", det_losses)
    show("deterministic_running_mean", det.batchnorm.running_mean[:6])
    show("deterministic_batches_tracked", det.batchnorm.num_batches_tracked)
    show("deterministic_test", test(args, det, device, test_loader))

    # the example's own loop, dropout on
    scheduler = StepLR(optimizer, step_size=1, gamma=args.gamma)
    losses = []
    for epoch in range(1, args.epochs + 1):
        train(args, model, device, train_loader, optimizer, epoch, losses)
        test_loss, correct = test(args, model, device, test_loader)
        scheduler.step()
    show("lr_after_epochs", scheduler.get_last_lr())
    show("~train_losses", [losses[0], losses[-1]])
    show("~test_loss", test_loss)

    # dropout2d on the 2-D batch: entries are kept (scaled by 1/(1-p)) or zeroed
    model.train()
    h = torch.ones(64, 64)
    dropped = model.dropout2(h)
    show("dropout2d_values_are_0_or_2", float(bool(((dropped == 0) | (dropped == 2)).all())))

    if args.save_model:
        with tempfile.TemporaryDirectory() as tmp:
            torch.save(model.state_dict(), os.path.join(tmp, "mnist_rnn.pt"))
            state = torch.load(os.path.join(tmp, "mnist_rnn.pt"))
            show("saved_keys", len(state))
            show("saved_num_batches_tracked", state['batchnorm.num_batches_tracked'])


main(['--epochs', '2', '--lr', '1.0', '--batch-size', '64', '--test-batch-size', '100', '--log-interval', '2', '--save-model'])
