"""pytorch/examples siamese_network/main.py, scaled down: a ResNet-style encoder whose first
conv is replaced for 1-channel images and whose head is cut off with
``nn.Sequential(*(list(resnet.children())[:-1]))``, shared by both images; the two feature
vectors concatenated into an MLP + Sigmoid, ``init_weights`` through ``apply``
(xavier_uniform_, ``bias.data.fill_(0.01)``), a Dataset that pairs images of the same or of
different classes with the ``random`` module, BCELoss, Adadelta with StepLR, and the test
accuracy by ``torch.where(outputs > 0.5, 1, 0)``; then the contrastive loss of the
"Siamese network" tutorials (``F.pairwise_distance``) and triplet losses.

    python siamese.py [torch|numbagrad]
"""
import argparse
import random

import numpy as np

from _common import BACKEND, numpy_init, show

if BACKEND == "torch":
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    import torch.optim as optim
    from torch.optim.lr_scheduler import StepLR
    from torch.utils.data import DataLoader, Dataset
else:
    import numbagrad as torch
    import numbagrad.nn as nn
    import numbagrad.nn.functional as F
    import numbagrad.optim as optim
    from numbagrad.optim.lr_scheduler import StepLR
    from numbagrad.utils.data import DataLoader, Dataset


class BasicBlock(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += identity
        return self.relu(out)


class TinyResNet(nn.Module):
    """A stand-in for torchvision's resnet18 with the same children: conv1, bn1, relu,
    maxpool, layer1, avgpool, fc."""

    def __init__(self, num_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, kernel_size=3, stride=1, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = nn.Sequential(BasicBlock(8))
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(8, num_classes)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer1(x)
        return self.fc(torch.flatten(self.avgpool(x), 1))


class SiameseNetwork(nn.Module):
    """
        Siamese network for image similarity estimation.
        The network is composed of two identical networks, one for each input.
        The output of each network is concatenated and passed to a linear layer.
        The output of the linear layer passed through a sigmoid function.
    """
    def __init__(self):
        super(SiameseNetwork, self).__init__()
        # get resnet model
        self.resnet = TinyResNet()

        # over-write the first conv layer to be able to read MNIST images
        # as resnet18 reads (3,x,x) where 3 is RGB channels
        # whereas MNIST has (1,x,x) where 1 is a gray-scale channel
        self.resnet.conv1 = nn.Conv2d(1, 8, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), bias=False)
        self.fc_in_features = self.resnet.fc.in_features

        # remove the last layer of resnet18 (linear layer which is before avgpool layer)
        self.resnet = torch.nn.Sequential(*(list(self.resnet.children())[:-1]))

        # add linear layers to compare between the features of the two images
        self.fc = nn.Sequential(
            nn.Linear(self.fc_in_features * 2, 16),
            nn.ReLU(inplace=True),
            nn.Linear(16, 1),
        )

        self.sigmoid = nn.Sigmoid()

        # initialize the weights
        self.resnet.apply(self.init_weights)
        self.fc.apply(self.init_weights)

    def init_weights(self, m):
        if isinstance(m, nn.Linear):
            torch.nn.init.xavier_uniform_(m.weight)
            m.bias.data.fill_(0.01)

    def forward_once(self, x):
        output = self.resnet(x)
        output = output.view(output.size()[0], -1)
        return output

    def forward(self, input1, input2):
        # get two images' features
        output1 = self.forward_once(input1)
        output2 = self.forward_once(input2)

        # concatenate both images' features
        output = torch.cat((output1, output2), 1)

        # pass the concatenation to the linear layers
        output = self.fc(output)

        # pass the out of the linear layers to sigmoid layer
        output = self.sigmoid(output)

        return output


class APP_MATCHER(Dataset):
    def __init__(self, images, targets):
        super(APP_MATCHER, self).__init__()
        # uint8 "digits" of shape (N, 8, 8) as MNIST's ``.data`` (N, 28, 28)
        self.data = images.unsqueeze(1).clone()
        self.targets = targets
        self.group_examples()

    def group_examples(self):
        """
            To ease the accessibility of data based on the class, we will use `group_examples` to group
            examples based on class.
        """
        # get the targets from MNIST dataset
        np_arr = np.array(self.targets.clone())

        # group examples based on class
        self.grouped_examples = {}
        for i in range(0, 10):
            self.grouped_examples[i] = np.where((np_arr == i))[0]

    def __len__(self):
        return self.data.shape[0]

    def __getitem__(self, index):
        """
            For every example, we will select two images. There are two cases,
            positive and negative examples. For positive examples, we will have two
            images from the same class. For negative examples, we will have two images
            from different classes.
        """
        # pick some random class for the first image
        selected_class = random.randint(0, 9)

        # pick a random index for the first image in the grouped indices based of the label
        # of the class
        random_index_1 = random.randint(0, self.grouped_examples[selected_class].shape[0] - 1)

        # pick the index to get the first image
        index_1 = self.grouped_examples[selected_class][random_index_1]

        # get the first image
        image_1 = self.data[index_1].clone().float()

        # same class
        if index % 2 == 0:
            # pick a random index for the second image
            random_index_2 = random.randint(0, self.grouped_examples[selected_class].shape[0] - 1)

            # ensure that the index of the second image isn't the same as the first image
            while random_index_2 == random_index_1:
                random_index_2 = random.randint(0, self.grouped_examples[selected_class].shape[0] - 1)

            # pick the index to get the second image
            index_2 = self.grouped_examples[selected_class][random_index_2]

            # get the second image
            image_2 = self.data[index_2].clone().float()

            # set the label for this example to be positive (1)
            target = torch.tensor(1, dtype=torch.float)

        # different class
        else:
            # pick a random class
            other_selected_class = random.randint(0, 9)

            # ensure that the class of the second image isn't the same as the first image
            while other_selected_class == selected_class:
                other_selected_class = random.randint(0, 9)

            # pick a random index for the second image in the grouped indices based of the label
            # of the class
            random_index_2 = random.randint(0, self.grouped_examples[other_selected_class].shape[0] - 1)

            # pick the index to get the second image
            index_2 = self.grouped_examples[other_selected_class][random_index_2]

            # get the second image
            image_2 = self.data[index_2].clone().float()

            # set the label for this example to be negative (0)
            target = torch.tensor(0, dtype=torch.float)

        return self.normalize(image_1), self.normalize(image_2), target

    def normalize(self, image):
        # what ToTensor() and Normalize((0.1307,), (0.3081,)) do to MNIST's uint8 images
        return (image / 255.0 - 0.1307) / 0.3081


def train(args, model, device, train_loader, optimizer, epoch, losses):
    model.train()

    # we aren't using `TripletLoss` as the MNIST dataset is simple, so `BCELoss` can do the trick.
    criterion = nn.BCELoss()

    for batch_idx, (images_1, images_2, targets) in enumerate(train_loader):
        images_1, images_2, targets = images_1.to(device), images_2.to(device), targets.to(device)
        optimizer.zero_grad()
        outputs = model(images_1, images_2).squeeze()
        loss = criterion(outputs, targets)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        if batch_idx % args.log_interval == 0:
            print('Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}'.format(
                epoch, batch_idx * len(images_1), len(train_loader.dataset),
                100. * batch_idx / len(train_loader), loss.item()))


def test(model, device, test_loader):
    model.eval()
    test_loss = 0
    correct = 0

    # we aren't using `TripletLoss` as the MNIST dataset is simple, so `BCELoss` can do the trick.
    criterion = nn.BCELoss()

    with torch.no_grad():
        for (images_1, images_2, targets) in test_loader:
            images_1, images_2, targets = images_1.to(device), images_2.to(device), targets.to(device)
            outputs = model(images_1, images_2).squeeze()
            test_loss += criterion(outputs, targets).sum().item()  # sum up batch loss
            pred = torch.where(outputs > 0.5, 1, 0)  # get the index of the max log-probability
            correct += pred.eq(targets.view_as(pred)).sum().item()

    test_loss /= len(test_loader.dataset)

    print('\nTest set: Average loss: {:.4f}, Accuracy: {}/{} ({:.0f}%)\n'.format(
        test_loss, correct, len(test_loader.dataset),
        100. * correct / len(test_loader.dataset)))
    return test_loss, correct


parser = argparse.ArgumentParser(description='PyTorch Siamese network Example')
parser.add_argument('backend', nargs='?', default='numbagrad')
parser.add_argument('--batch-size', type=int, default=8, metavar='N')
parser.add_argument('--test-batch-size', type=int, default=10, metavar='N')
parser.add_argument('--epochs', type=int, default=2, metavar='N')
parser.add_argument('--lr', type=float, default=1.0, metavar='LR')
parser.add_argument('--gamma', type=float, default=0.7, metavar='M')
parser.add_argument('--seed', type=int, default=1, metavar='S')
parser.add_argument('--log-interval', type=int, default=2, metavar='N')
args = parser.parse_args()

torch.manual_seed(args.seed)
random.seed(args.seed)
device = torch.device("cpu")

rng = np.random.default_rng(0)
# (every class at least twice in each split: a positive pair needs two of its images)
digits = np.concatenate([rng.permutation(np.repeat(np.arange(10), 3)), rng.permutation(np.repeat(np.arange(10), 2))])
# each class a different blob position, plus noise, as uint8 images
yy, xx = np.mgrid[0:8, 0:8]
protos = np.stack([np.exp(-((yy - 1 - (d % 3) * 2.5) ** 2 + (xx - 1 - (d // 3) * 2) ** 2) / 3.0) for d in range(10)])
images = torch.from_numpy(np.clip(255 * (protos[digits] + 0.2 * rng.uniform(size=(50, 8, 8))), 0, 255).astype(np.uint8))
targets = torch.from_numpy(digits)
train_dataset = APP_MATCHER(images[:30], targets[:30])
test_dataset = APP_MATCHER(images[30:], targets[30:])
train_loader = DataLoader(train_dataset, batch_size=args.batch_size, shuffle=False)
test_loader = DataLoader(test_dataset, batch_size=args.test_batch_size, shuffle=False)
image_1, image_2, target = train_dataset[0]
show("pair", [*image_1.shape, target, image_1.dtype == torch.float32])

model = SiameseNetwork().to(device)
show("children", [type(m).__name__ for m in model.resnet.children()] == ["Conv2d", "BatchNorm2d", "ReLU", "MaxPool2d", "Sequential", "AdaptiveAvgPool2d"])
show("fc_bias_filled", model.fc[0].bias[:3])
show("xavier_bound", bool(model.fc[0].weight.abs().max() <= (6 / (16 + 16)) ** 0.5))
numpy_init(torch, model, seed=3)
optimizer = optim.Adadelta(model.parameters(), lr=args.lr)

scheduler = StepLR(optimizer, step_size=1, gamma=args.gamma)
losses, tests, lrs = [], [], []
for epoch in range(1, args.epochs + 1):
    train(args, model, device, train_loader, optimizer, epoch, losses)
    tests.append(test(model, device, test_loader))
    scheduler.step()
    lrs.append(scheduler.get_last_lr()[0])
show("losses", losses)
show("tests", tests)
show("lrs", lrs)
show("bn_running_mean", model.resnet[1].running_mean)
show("adadelta_acc_delta", optimizer.state[model.fc[2].weight]["acc_delta"][0, :4])
with torch.no_grad():
    a, b, _ = next(iter(test_loader))
    score = model(a, b).squeeze()
    pred = torch.where(score > 0.5, 1, 0)
show("pred_dtype", [pred.dtype == torch.int64, score.shape[0]])


# ----- the contrastive-loss variant ("Siamese network" tutorials)
class ContrastiveLoss(torch.nn.Module):
    """
    Contrastive loss function.
    Based on: http://yann.lecun.com/exdb/publis/pdf/hadsell-chopra-lecun-06.pdf
    """

    def __init__(self, margin=2.0):
        super(ContrastiveLoss, self).__init__()
        self.margin = margin

    def forward(self, output1, output2, label):
        euclidean_distance = F.pairwise_distance(output1, output2, keepdim = True)
        loss_contrastive = torch.mean((1-label) * torch.pow(euclidean_distance, 2) +
                                      (label) * torch.pow(torch.clamp(self.margin - euclidean_distance, min=0.0), 2))
        return loss_contrastive


class EmbeddingNet(nn.Module):
    def __init__(self):
        super(EmbeddingNet, self).__init__()
        self.cnn1 = nn.Sequential(
            nn.ReflectionPad2d(1),
            nn.Conv2d(1, 4, kernel_size=3),
            nn.ReLU(inplace=True),
            nn.BatchNorm2d(4),

            nn.ReflectionPad2d(1),
            nn.Conv2d(4, 4, kernel_size=3),
            nn.ReLU(inplace=True),
            nn.BatchNorm2d(4),
        )
        self.fc1 = nn.Sequential(
            nn.Linear(4 * 8 * 8, 16),
            nn.ReLU(inplace=True),
            nn.Linear(16, 5))

    def forward_once(self, x):
        output = self.cnn1(x)
        output = output.view(output.size()[0], -1)
        output = self.fc1(output)
        return output

    def forward(self, input1, input2):
        output1 = self.forward_once(input1)
        output2 = self.forward_once(input2)
        return output1, output2


net = EmbeddingNet()
numpy_init(torch, net, seed=7)
criterion = ContrastiveLoss()
optimizer = optim.Adam(net.parameters(), lr=0.0005)
# (the tutorials' label: 1 for a dissimilar pair)
contrastive_losses = []
for epoch in range(2):
    for i, (img0, img1, same) in enumerate(train_loader):
        label = (1 - same).unsqueeze(1)
        optimizer.zero_grad()
        output1, output2 = net(img0, img1)
        loss_contrastive = criterion(output1, output2, label)
        loss_contrastive.backward()
        optimizer.step()
        contrastive_losses.append(loss_contrastive.item())
show("contrastive_losses", contrastive_losses)
net.eval()
with torch.no_grad():
    x0, x1, same = next(iter(test_loader))
    output1, output2 = net(x0, x1)
    euclidean_distance = F.pairwise_distance(output1, output2)
show("embeddings", output1[:2])
show("dissimilarity", euclidean_distance)
show("pairwise_options", [F.pairwise_distance(output1, output2, p=1)[:3], F.pairwise_distance(output1[0], output2[0], eps=0.1),
                          nn.PairwiseDistance(p=3, keepdim=True)(output1, output2)[:2, 0]])
show("cosine", F.cosine_similarity(output1, output2)[:4])

# triplet losses on the embeddings (anchor, positive of its class, negative of another)
anchor = torch.from_numpy(rng.normal(size=(6, 5)).astype(np.float32)).requires_grad_()
positive = anchor.detach() + 0.3 * torch.from_numpy(rng.normal(size=(6, 5)).astype(np.float32))
negative = torch.from_numpy(rng.normal(size=(6, 5)).astype(np.float32))
triplet = nn.TripletMarginLoss(margin=3.0, p=2)(anchor, positive, negative)
triplet.backward()
show("triplet", triplet)
show("triplet_grad", anchor.grad[0])
cos_triplet = nn.TripletMarginWithDistanceLoss(
    distance_function=lambda x, y: 1.0 - F.cosine_similarity(x, y), margin=0.5, swap=True)
show("triplet_cosine", cos_triplet(anchor, positive, negative))
show("triplet_none", F.triplet_margin_loss(anchor, positive, negative, margin=3.0, reduction="none", swap=True))
