"""pytorch/examples mnist/main.py, on generated 1x28x28 "digits" (nothing downloaded), with
argparse, DataLoader, Adadelta, StepLR, nll_loss and the accuracy count, scaled down.

    python mnist.py [torch|numbagrad]
"""
import argparse
import sys

import numpy as np

BACKEND = sys.argv[1] if len(sys.argv) > 1 and sys.argv[1] in ("torch", "numbagrad") else "numbagrad"
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


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, 1)
        self.conv2 = nn.Conv2d(32, 64, 3, 1)
        self.dropout1 = nn.Dropout(0.25)
        self.dropout2 = nn.Dropout(0.5)
        self.fc1 = nn.Linear(9216, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = self.conv1(x)
        x = F.relu(x)
        x = self.conv2(x)
        x = F.relu(x)
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = self.fc1(x)
        x = F.relu(x)
        x = self.dropout2(x)
        x = self.fc2(x)
        output = F.log_softmax(x, dim=1)
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


def test(model, device, test_loader):
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


def synthetic_digits(n, seed):
    """Images whose class is the position of a bright square, plus noise, normalised like
    ``transforms.Normalize((0.1307,), (0.3081,))``."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 10, n)
    x = rng.random((n, 1, 28, 28), dtype=np.float32) * 0.2
    for i, c in enumerate(y):
        r, col = divmod(int(c), 5)
        x[i, 0, 4 + 10 * r: 10 + 10 * r, 2 + 5 * col: 6 + 5 * col] = 1.0
    x = (x - 0.1307) / 0.3081
    return torch.from_numpy(x.astype(np.float32)), torch.from_numpy(y)


def main():
    # Training settings
    parser = argparse.ArgumentParser(description='PyTorch MNIST Example')
    parser.add_argument('backend', nargs='?', default='numbagrad')
    parser.add_argument('--batch-size', type=int, default=16, metavar='N',
                        help='input batch size for training (default: 16)')
    parser.add_argument('--test-batch-size', type=int, default=32, metavar='N',
                        help='input batch size for testing (default: 32)')
    parser.add_argument('--epochs', type=int, default=2, metavar='N',
                        help='number of epochs to train (default: 2)')
    parser.add_argument('--lr', type=float, default=1.0, metavar='LR',
                        help='learning rate (default: 1.0)')
    parser.add_argument('--gamma', type=float, default=0.7, metavar='M',
                        help='Learning rate step gamma (default: 0.7)')
    parser.add_argument('--no-cuda', action='store_true', default=False,
                        help='disables CUDA training')
    parser.add_argument('--dry-run', action='store_true', default=False,
                        help='quickly check a single pass')
    parser.add_argument('--seed', type=int, default=1, metavar='S',
                        help='random seed (default: 1)')
    parser.add_argument('--log-interval', type=int, default=2, metavar='N',
                        help='how many batches to wait before logging training status')
    parser.add_argument('--save-model', action='store_true', default=False,
                        help='For Saving the current Model')
    args = parser.parse_args()
    use_cuda = not args.no_cuda and torch.cuda.is_available()

    torch.manual_seed(args.seed)

    device = torch.device("cuda" if use_cuda else "cpu")

    train_kwargs = {'batch_size': args.batch_size}
    test_kwargs = {'batch_size': args.test_batch_size}
    if use_cuda:
        cuda_kwargs = {'num_workers': 1,
                       'pin_memory': True,
                       'shuffle': True}
        train_kwargs.update(cuda_kwargs)
        test_kwargs.update(cuda_kwargs)

    dataset1 = TensorDataset(*synthetic_digits(48, 0))
    dataset2 = TensorDataset(*synthetic_digits(32, 1))
    train_loader = torch.utils.data.DataLoader(dataset1, **train_kwargs)
    test_loader = torch.utils.data.DataLoader(dataset2, **test_kwargs)

    model = Net().to(device)
    # the same start in both libraries: weights from numpy
    rng = np.random.default_rng(args.seed)
    model.load_state_dict({k: torch.from_numpy(
        rng.uniform(-1, 1, tuple(v.shape)).astype(np.float32) / np.sqrt(v[0].numel() if v.dim() > 1 else v.numel()))
        for k, v in model.state_dict().items()})
    optimizer = optim.Adadelta(model.parameters(), lr=args.lr)

    first = test(model, device, test_loader)
    losses, lrs = [], []
    scheduler = StepLR(optimizer, step_size=1, gamma=args.gamma)
    for epoch in range(1, args.epochs + 1):
        train(args, model, device, train_loader, optimizer, epoch, losses)
        last = test(model, device, test_loader)
        scheduler.step()
        lrs.append(scheduler.get_last_lr()[0])

    if args.save_model:
        torch.save(model.state_dict(), "mnist_cnn.pt")

    print('first', *first)
    print('lrs', *lrs)
    print('~losses', *losses)
    print('~test_loss', last[0])
    print('~test_correct', last[1])


if __name__ == '__main__':
    main()
