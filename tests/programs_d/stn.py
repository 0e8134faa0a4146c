"""PyTorch tutorial "Spatial Transformer Networks", scaled down: a localization network
regresses a 2x3 affine matrix (its last layer started at the identity), ``F.affine_grid`` and
``F.grid_sample`` warp the input, and a small classifier is trained a few steps with SGD;
then the transformed batch in eval mode.

    python stn.py [torch|numbagrad]
"""
import numpy as np

from _common import BACKEND, numpy_init, show

if BACKEND == "torch":
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    import torch.optim as optim
else:
    import numbagrad as torch
    import numbagrad.nn as nn
    import numbagrad.nn.functional as F
    import numbagrad.optim as optim


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 4, kernel_size=3)
        self.conv2 = nn.Conv2d(4, 8, kernel_size=3)
        self.fc1 = nn.Linear(8 * 2 * 2, 16)
        self.fc2 = nn.Linear(16, 10)

        # Spatial transformer localization-network
        self.localization = nn.Sequential(
            nn.Conv2d(1, 4, kernel_size=3),
            nn.MaxPool2d(2, stride=2),
            nn.ReLU(True),
            nn.Conv2d(4, 6, kernel_size=3),
            nn.MaxPool2d(2, stride=2),
            nn.ReLU(True)
        )

        # Regressor for the 3 * 2 affine matrix
        self.fc_loc = nn.Sequential(
            nn.Linear(6 * 2 * 2, 16),
            nn.ReLU(True),
            nn.Linear(16, 3 * 2)
        )

    # Spatial transformer network forward function
    def stn(self, x):
        xs = self.localization(x)
        xs = xs.view(-1, 6 * 2 * 2)
        theta = self.fc_loc(xs)
        theta = theta.view(-1, 2, 3)

        grid = F.affine_grid(theta, x.size(), align_corners=False)
        x = F.grid_sample(x, grid, align_corners=False)

        return x

    def forward(self, x):
        # transform the input
        x = self.stn(x)

        # Perform the usual forward pass
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(F.max_pool2d(self.conv2(x), 2))
        x = x.view(-1, 8 * 2 * 2)
        x = F.relu(self.fc1(x))
        x = F.dropout(x, training=self.training, p=0.0)
        x = self.fc2(x)
        return F.log_softmax(x, dim=1)


model = Net()
numpy_init(torch, model)
# Initialize the weights/bias with identity transformation
model.fc_loc[2].weight.data.zero_()
model.fc_loc[2].bias.data.copy_(torch.tensor([1, 0, 0, 0, 1, 0], dtype=torch.float))
optimizer = optim.SGD(model.parameters(), lr=0.05, momentum=0.9)

rng = np.random.default_rng(0)
data_all = torch.from_numpy(rng.normal(size=(16, 1, 14, 14)).astype(np.float32))
target_all = torch.from_numpy(rng.integers(0, 10, 16))

identity = model.stn(data_all[:2])
show('identity_warp_err', bool((identity - data_all[:2]).abs().max() < 1e-5))


def train(epoch):
    model.train()
    losses = []
    for batch_idx in range(4):
        data, target = data_all[batch_idx * 4:(batch_idx + 1) * 4], target_all[batch_idx * 4:(batch_idx + 1) * 4]
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


losses = []
for epoch in range(1, 4):
    losses += train(epoch)
show('losses', losses)
show('fc_loc_bias', model.fc_loc[2].bias)
show('fc_loc_weight_grad', model.fc_loc[2].weight.grad[:, :4])


def test():
    with torch.no_grad():
        model.eval()
        test_loss = 0
        correct = 0
        output = model(data_all)
        test_loss += F.nll_loss(output, target_all, reduction='sum').item()
        pred = output.max(1, keepdim=True)[1]
        correct += pred.eq(target_all.view_as(pred)).sum().item()
        test_loss /= len(data_all)
        print('\nTest set: Average loss: {:.4f}, Accuracy: {}/{} ({:.0f}%)\n'
              .format(test_loss, correct, len(data_all), 100. * correct / len(data_all)))
        return test_loss, correct


test_loss, correct = test()
show('test', [test_loss, correct])

# Visualize the STN transformation on some input batch
with torch.no_grad():
    data = data_all[:3]
    input_tensor = data.cpu()
    transformed_input_tensor = model.stn(data).cpu()
show('transformed', transformed_input_tensor[0, 0, 5])
show('transformed_shape', list(transformed_input_tensor.shape))

# the sampling modes the tutorial's grid may use, and the grid's gradient
theta = torch.tensor([[[0.9, -0.2, 0.1], [0.15, 1.1, -0.05]]], requires_grad=True)
img = data_all[:1].clone().requires_grad_()
for mode, padding_mode in [('bilinear', 'zeros'), ('nearest', 'border'), ('bilinear', 'reflection')]:
    grid = F.affine_grid(theta, img.size(), align_corners=True)
    out = F.grid_sample(img, grid, mode=mode, padding_mode=padding_mode, align_corners=True)
    show('sample_' + mode + '_' + padding_mode, out[0, 0, 3, :6])
out = F.grid_sample(img, F.affine_grid(theta, (1, 1, 7, 5), align_corners=False), align_corners=False)
out.pow(2).sum().backward()
show('theta_grad', theta.grad)
show('img_grad', img.grad[0, 0, 6, :6])
