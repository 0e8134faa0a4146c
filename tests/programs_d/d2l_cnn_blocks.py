"""d2l.ai "Modern Convolutional Neural Networks", the blocks in miniature: a NiN block
(Conv2d, ReLU and two 1x1 convolutions) and a NiN head ending in
nn.AdaptiveAvgPool2d((1, 1)) and nn.Flatten(); GoogLeNet's Inception block (four branches
joined by ``torch.cat((b1, b2, b3, b4), dim=1)``, one through MaxPool2d(3, stride=1,
padding=1)); DenseNet's dense block (conv_block = BatchNorm2d, ReLU, Conv2d; ``X =
torch.cat((X, Y), dim=1)``) and transition block (BatchNorm2d, ReLU, 1x1 Conv2d,
AvgPool2d(2, stride=2)); the shape walk through the layers, a few SGD steps with
nn.CrossEntropyLoss on 8x8 inputs, and the model.eval() outputs with BatchNorm's running
statistics.

    python d2l_cnn_blocks.py [torch|numbagrad]
"""
import numpy as np

from _common import BACKEND, numpy_init, show

if BACKEND == "torch":
    import torch
    from torch import nn
    from torch.nn import functional as F
else:
    import numbagrad as torch
    from numbagrad import nn
    from numbagrad.nn import functional as F

rng = np.random.default_rng(0)


def nin_block(in_channels, out_channels, kernel_size, strides, padding):
    return nn.Sequential(
        nn.Conv2d(in_channels, out_channels, kernel_size, strides, padding),
        nn.ReLU(),
        nn.Conv2d(out_channels, out_channels, kernel_size=1), nn.ReLU(),
        nn.Conv2d(out_channels, out_channels, kernel_size=1), nn.ReLU())


class Inception(nn.Module):
    # c1--c4 are the number of output channels for each branch
    def __init__(self, in_channels, c1, c2, c3, c4, **kwargs):
        super(Inception, self).__init__(**kwargs)
        # Branch 1
        self.b1_1 = nn.Conv2d(in_channels, c1, kernel_size=1)
        # Branch 2
        self.b2_1 = nn.Conv2d(in_channels, c2[0], kernel_size=1)
        self.b2_2 = nn.Conv2d(c2[0], c2[1], kernel_size=3, padding=1)
        # Branch 3
        self.b3_1 = nn.Conv2d(in_channels, c3[0], kernel_size=1)
        self.b3_2 = nn.Conv2d(c3[0], c3[1], kernel_size=5, padding=2)
        # Branch 4
        self.b4_1 = nn.MaxPool2d(kernel_size=3, stride=1, padding=1)
        self.b4_2 = nn.Conv2d(in_channels, c4, kernel_size=1)

    def forward(self, x):
        b1 = F.relu(self.b1_1(x))
        b2 = F.relu(self.b2_2(F.relu(self.b2_1(x))))
        b3 = F.relu(self.b3_2(F.relu(self.b3_1(x))))
        b4 = F.relu(self.b4_2(self.b4_1(x)))
        # the branches side by side along the channel axis
        return torch.cat((b1, b2, b3, b4), dim=1)


def conv_block(input_channels, num_channels):
    return nn.Sequential(
        nn.BatchNorm2d(input_channels), nn.ReLU(),
        nn.Conv2d(input_channels, num_channels, kernel_size=3, padding=1))


class DenseBlock(nn.Module):
    def __init__(self, num_convs, input_channels, num_channels):
        super(DenseBlock, self).__init__()
        layer = []
        for i in range(num_convs):
            layer.append(conv_block(
                num_channels * i + input_channels, num_channels))
        self.net = nn.Sequential(*layer)

    def forward(self, X):
        for blk in self.net:
            Y = blk(X)
            # each block's input and output joined on the channels
            X = torch.cat((X, Y), dim=1)
        return X


def transition_block(input_channels, num_channels):
    return nn.Sequential(
        nn.BatchNorm2d(input_channels), nn.ReLU(),
        nn.Conv2d(input_channels, num_channels, kernel_size=1),
        nn.AvgPool2d(kernel_size=2, stride=2))


blk = DenseBlock(2, 3, 10)
numpy_init(torch, blk, seed=5)
X = torch.from_numpy(rng.standard_normal((4, 3, 8, 8)).astype(np.float32))
Y = blk(X)
show('dense_shape', list(Y.shape))
tb = transition_block(23, 10)
numpy_init(torch, tb, seed=6)
show('transition_shape', list(tb(Y).shape))
inc = Inception(3, 4, (2, 4), (2, 4), 4)
numpy_init(torch, inc, seed=7)
show('inception_shape', list(inc(X).shape))
show('inception_out', inc(X)[0, :, 0, 0])

num_classes = 3
net = nn.Sequential(
    nin_block(1, 8, kernel_size=3, strides=1, padding=1),
    Inception(8, 4, (4, 8), (2, 4), 4),          # 20 channels
    DenseBlock(2, 20, 6),                        # 32 channels
    transition_block(32, 16),                    # 4x4
    nn.Dropout(0.0),
    # the NiN head: one channel per class, averaged over the positions
    nin_block(16, num_classes, kernel_size=3, strides=1, padding=1),
    nn.AdaptiveAvgPool2d((1, 1)),
    nn.Flatten())
numpy_init(torch, net, seed=2)

X = torch.from_numpy(rng.standard_normal((1, 1, 8, 8)).astype(np.float32))
shapes = []
for layer in net:
    X = layer(X)
    print(layer.__class__.__name__, 'output shape:\t', X.shape)
    shapes += list(X.shape)
show('shapes', shapes)

# 8x8 "images" of three kinds: a bright row, a bright column, a bright diagonal
n = 24
labels = rng.integers(0, num_classes, n)
images = rng.normal(0, 0.3, (n, 1, 8, 8)).astype(np.float32)
for i, y in enumerate(labels):
    k = int(rng.integers(1, 7))
    if y == 0:
        images[i, 0, k, :] += 1.5
    elif y == 1:
        images[i, 0, :, k] += 1.5
    else:
        images[i, 0][np.eye(8, dtype=bool)] += 1.5
images, labels = torch.from_numpy(images), torch.from_numpy(labels)

loss = nn.CrossEntropyLoss()
lr = 0.1
trainer = torch.optim.SGD(net.parameters(), lr=lr)
losses = []
net.train()
for epoch in range(4):
    for i in range(0, n, 8):
        X, y = images[i:i + 8], labels[i:i + 8]
        trainer.zero_grad()
        y_hat = net(X)
        l = loss(y_hat, y)
        l.backward()
        trainer.step()
        losses.append(l.item())
show('losses', losses)
show('inception_grad', net[1].b3_2.weight.grad[0, 0])
show('dense_bn_grad', net[2].net[1][0].weight.grad)
show('nin_bias_grad', net[0][2].bias.grad)
show('head_grad', net[5][0].bias.grad)
show('running_mean', net[2].net[0][0].running_mean)
show('running_var', net[3][0].running_var)
show('num_batches_tracked', net[3][0].num_batches_tracked)

net.eval()
with torch.no_grad():
    y_hat = net(images)
    show('eval_logits', y_hat[:4])
    show('eval_acc', (y_hat.argmax(axis=1) == labels).float().mean())
    net.train()
    show('train_mode_logits', net(images[:4]))
show('running_mean_after', net[2].net[0][0].running_mean)
