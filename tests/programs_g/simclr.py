"""SimCLR contrastive learning, as sthalles/SimCLR (``simclr.py``, ``utils.py``,
``models/resnet_simclr.py``) and CS231n assignment 3's "Self-Supervised Learning" notebook write
it, on generated 3x12x12 images with NumPy-made augmented views: CS231n's ``sim`` by
``torch.dot``/``torch.linalg.norm``, ``simclr_loss_naive`` (double loop, ``-torch.log(numerator /
denominator)``), ``sim_positive_pairs``, ``compute_sim_matrix`` and ``simclr_loss_vectorized``
(``(torch.ones_like(e) - torch.eye(2N)).bool()``, ``masked_select(mask).view(2N, -1)``), each
agreeing with the others; sthalles' ``info_nce_loss`` (labels from ``torch.cat`` of aranges
compared by broadcasting, ``F.normalize``, ``features.T``, ``labels[~mask]`` with a bool eye,
positives by ``similarity_matrix[labels.bool()]``, ``logits / temperature`` against zero labels),
``accuracy`` with ``topk(maxk, 1, True, True)``, ``pred.eq(target.view(1, -1).expand_as(pred))``
and ``correct_k.mul_(100.0 / batch_size)``; the ResNetSimCLR idea (a backbone whose ``fc`` is
wrapped into an MLP head), training with Adam, a disabled GradScaler/autocast and
CosineAnnealingLR after warm-up epochs; then the linear evaluation protocol: the backbone frozen
by ``requires_grad = False`` on everything but ``fc``, checked by ``len(parameters)``.

    python simclr.py [torch|numbagrad]
"""
import numpy as np

from _common import BACKEND, numpy_init, show

if BACKEND == "torch":
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from torch.amp import GradScaler, autocast
else:
    import numbagrad as torch
    import numbagrad.nn as nn
    import numbagrad.nn.functional as F
    from numbagrad.amp import GradScaler, autocast

rng = np.random.default_rng(0)


# ---------------------------------------------------------------- CS231n simclr/contrastive_loss.py
def sim(z_i, z_j):
    """Normalized dot product between two vectors."""
    norm_dot_product = torch.dot(z_i, z_j) / (torch.linalg.norm(z_i) * torch.linalg.norm(z_j))
    return norm_dot_product


def simclr_loss_naive(out_left, out_right, tau):
    """Compute the contrastive loss L over a batch (naive loop version)."""
    N = out_left.shape[0]  # total number of training examples

    # Concatenate out_left and out_right into a 2*N x D tensor.
    out = torch.cat([out_left, out_right], dim=0)  # [2*N, D]

    total_loss = 0
    for k in range(N):  # loop through each positive pair (k, k+N)
        z_k, z_k_N = out[k], out[k+N]

        # Compute the contrastive loss for the positive pair (z_k, z_k_N)
        numerator = torch.exp(sim(z_k, z_k_N) / tau)
        denominator = 0
        for i in range(2 * N):
            if i != k:
                denominator += torch.exp(sim(z_k, out[i]) / tau)
        total_loss += -torch.log(numerator / denominator)

        # Compute the contrastive loss for the positive pair (z_k_N, z_k)
        numerator = torch.exp(sim(z_k_N, z_k) / tau)
        denominator = 0
        for i in range(2 * N):
            if i != k + N:
                denominator += torch.exp(sim(z_k_N, out[i]) / tau)
        total_loss += -torch.log(numerator / denominator)

    # In the end, we need to divide the total loss by 2N, the number of samples in the batch.
    total_loss = total_loss / (2*N)
    return total_loss


def sim_positive_pairs(out_left, out_right):
    """Normalized dot product between positive pairs."""
    left_norm = out_left / torch.linalg.norm(out_left, dim=1, keepdim=True)
    right_norm = out_right / torch.linalg.norm(out_right, dim=1, keepdim=True)
    pos_pairs = torch.sum(left_norm * right_norm, dim=1, keepdim=True)
    return pos_pairs


def compute_sim_matrix(out):
    """Compute a 2N x 2N matrix of normalized dot products between all pairs of augmented examples in a batch."""
    out_norm = out / torch.linalg.norm(out, dim=1, keepdim=True)
    sim_matrix = out_norm @ out_norm.T
    return sim_matrix


def simclr_loss_vectorized(out_left, out_right, tau, device='cpu'):
    """Compute the contrastive loss L over a batch (vectorized version)."""
    N = out_left.shape[0]

    # Concatenate out_left and out_right into a 2*N x D tensor.
    out = torch.cat([out_left, out_right], dim=0)  # [2*N, D]

    # Compute similarity matrix between all pairs of augmented examples in the batch.
    sim_matrix = compute_sim_matrix(out)  # [2*N, 2*N]

    # Step 1: Use sim_matrix to compute the denominator value for all augmented samples.
    exponential = torch.exp(sim_matrix / tau)

    # This binary mask zeros out terms where k=i.
    mask = (torch.ones_like(exponential, device=device) - torch.eye(2 * N, device=device)).to(device).bool()

    # We apply the binary mask.
    exponential = exponential.masked_select(mask).view(2 * N, -1)  # [2*N, 2*N-1]

    # Hint: Compute the denominator values for all augmented samples. This should be a 2N x 1 vector.
    denom = torch.sum(exponential, dim=1, keepdim=True)

    # Step 2: Compute similarity between positive pairs.
    numerator = torch.exp(sim_positive_pairs(out_left, out_right) / tau)
    numerator = torch.cat([numerator, numerator], dim=0)

    # Step 3: Compute the loss.
    loss = -torch.log(numerator / denom).sum() / (2 * N)
    return loss


out_left = torch.from_numpy(rng.normal(size=(6, 5)).astype(np.float64)).requires_grad_()
out_right = torch.from_numpy(rng.normal(size=(6, 5)).astype(np.float64)).requires_grad_()
tau = 0.5
naive = simclr_loss_naive(out_left, out_right, tau)
vectorized = simclr_loss_vectorized(out_left, out_right, tau)
show("naive_loss", naive)
show("vectorized_loss", vectorized)
show("sim_positive_pairs", sim_positive_pairs(out_left, out_right).squeeze(1))
g_naive = torch.autograd.grad(naive, (out_left, out_right))
g_vec = torch.autograd.grad(vectorized, (out_left, out_right))
show("naive_grad_left", g_naive[0][0])
show("vectorized_grad_right", g_vec[1][0])
show("grads_agree", float(torch.allclose(g_naive[0], g_vec[0]) and torch.allclose(g_naive[1], g_vec[1])))


# ---------------------------------------------------------------- sthalles/SimCLR
class Args:
    batch_size = 8
    n_views = 2
    temperature = 0.07
    device = torch.device("cpu")
    fp16_precision = False
    epochs = 4
    lr = 3e-3
    weight_decay = 1e-4


def accuracy(output, target, topk=(1,)):
    """Computes the accuracy over the k top predictions for the specified values of k"""
    with torch.no_grad():
        maxk = max(topk)
        batch_size = target.size(0)

        _, pred = output.topk(maxk, 1, True, True)
        pred = pred.t()
        correct = pred.eq(target.view(1, -1).expand_as(pred))

        res = []
        for k in topk:
            correct_k = correct[:k].reshape(-1).float().sum(0, keepdim=True)
            res.append(correct_k.mul_(100.0 / batch_size))
        return res


class Backbone(nn.Module):
    """A small stand-in for torchvision's resnet18(num_classes=out_dim): features, then ``fc``."""

    def __init__(self, num_classes):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, 3, stride=2, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(16)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(16, num_classes)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = F.relu(self.bn2(self.conv2(x)))
        x = torch.flatten(self.avgpool(x), 1)
        return self.fc(x)


class ResNetSimCLR(nn.Module):

    def __init__(self, base_model, out_dim):
        super(ResNetSimCLR, self).__init__()
        self.resnet_dict = {"resnet18": Backbone}

        self.backbone = self._get_basemodel(base_model)(num_classes=out_dim)
        dim_mlp = self.backbone.fc.in_features

        # add mlp projection head
        self.backbone.fc = nn.Sequential(nn.Linear(dim_mlp, dim_mlp), nn.ReLU(), self.backbone.fc)

    def _get_basemodel(self, model_name):
        model = self.resnet_dict[model_name]
        return model

    def forward(self, x):
        return self.backbone(x)


class SimCLR(object):

    def __init__(self, *args, **kwargs):
        self.args = kwargs['args']
        self.model = kwargs['model'].to(self.args.device)
        self.optimizer = kwargs['optimizer']
        self.scheduler = kwargs['scheduler']
        self.criterion = torch.nn.CrossEntropyLoss().to(self.args.device)

    def info_nce_loss(self, features):

        labels = torch.cat([torch.arange(self.args.batch_size) for i in range(self.args.n_views)], dim=0)
        labels = (labels.unsqueeze(0) == labels.unsqueeze(1)).float()
        labels = labels.to(self.args.device)

        features = F.normalize(features, dim=1)

        similarity_matrix = torch.matmul(features, features.T)
        # assert similarity_matrix.shape == (
        #     self.args.n_views * self.args.batch_size, self.args.n_views * self.args.batch_size)
        # assert similarity_matrix.shape == labels.shape

        # discard the main diagonal from both: labels and similarities matrix
        mask = torch.eye(labels.shape[0], dtype=torch.bool).to(self.args.device)
        labels = labels[~mask].view(labels.shape[0], -1)
        similarity_matrix = similarity_matrix[~mask].view(similarity_matrix.shape[0], -1)
        # assert similarity_matrix.shape == labels.shape

        # select and combine multiple positives
        positives = similarity_matrix[labels.bool()].view(labels.shape[0], -1)

        # select only the negatives the negatives
        negatives = similarity_matrix[~labels.bool()].view(similarity_matrix.shape[0], -1)

        logits = torch.cat([positives, negatives], dim=1)
        labels = torch.zeros(logits.shape[0], dtype=torch.long).to(self.args.device)

        logits = logits / self.args.temperature
        return logits, labels

    def train(self, train_loader):

        scaler = GradScaler("cpu", enabled=self.args.fp16_precision)
        n_iter = 0
        history = []
        print(f"Start SimCLR training for {self.args.epochs} epochs.")

        for epoch_counter in range(self.args.epochs):
            for images, _ in train_loader:
                images = torch.cat(images, dim=0)

                images = images.to(self.args.device)

                with autocast("cpu", enabled=self.args.fp16_precision):
                    features = self.model(images)
                    logits, labels = self.info_nce_loss(features)
                    loss = self.criterion(logits, labels)

                self.optimizer.zero_grad()

                scaler.scale(loss).backward()

                scaler.step(self.optimizer)
                scaler.update()

                top1, top5 = accuracy(logits, labels, topk=(1, 5))
                history.append([loss.item(), top1[0].item(), top5[0].item(),
                                self.scheduler.get_last_lr()[0]])
                n_iter += 1

            # warmup for the first 2 epochs
            if epoch_counter >= 2:
                self.scheduler.step()
            print(f"Epoch: {epoch_counter}\tLoss: {loss}\tTop1 accuracy: {top1[0]}")
        return history


# the nce loss on its own, against the CS231n loss (same positives, temperature 1 and 0.5)
args = Args()
args.batch_size = 6
features = torch.cat([out_left, out_right]).detach().float()
logits, labels = SimCLR(args=args, model=nn.Identity(), optimizer=None, scheduler=None).info_nce_loss(features)
show("nce_logits_shape", list(logits.shape))
show("nce_logits_row", logits[0])
nce = F.cross_entropy(logits * args.temperature / tau, labels)
show("nce_equals_cs231n", nce)
show("accuracy_topk", accuracy(logits, labels, topk=(1, 5)))


# the data: two augmented views (flip, shift, colour jitter, noise) of each generated image
def make_images(n):
    yy, xx = np.mgrid[0:12, 0:12] / 11.0
    cls = rng.integers(0, 4, n)
    out = np.empty((n, 3, 12, 12), dtype=np.float32)
    for i in range(n):
        freq = 1 + cls[i]
        pattern = np.sin(2 * np.pi * freq * xx) * np.cos(2 * np.pi * yy * (cls[i] % 2 + 1))
        out[i] = pattern[None] * rng.uniform(0.5, 1.0, (3, 1, 1))
    return out, cls


def augment(img):
    if rng.random() < 0.5:
        img = img[:, :, ::-1]
    img = np.roll(img, tuple(rng.integers(-2, 3, 2)), axis=(1, 2))
    img = img * rng.uniform(0.8, 1.2, (3, 1, 1)) + rng.uniform(-0.1, 0.1, (3, 1, 1))
    return (img + 0.05 * rng.normal(size=img.shape)).astype(np.float32)


images, classes = make_images(32)
train_loader = []
for start in range(0, 32, Args.batch_size):
    batch = images[start:start + Args.batch_size]
    views = [torch.from_numpy(np.stack([augment(x) for x in batch])) for _ in range(Args.n_views)]
    train_loader.append((views, torch.from_numpy(classes[start:start + Args.batch_size])))

args = Args()
model = ResNetSimCLR(base_model="resnet18", out_dim=16)
numpy_init(torch, model, seed=1)
show("head:" + ",".join(type(m).__name__ for m in model.backbone.fc), len(model.backbone.fc))
optimizer = torch.optim.Adam(model.parameters(), args.lr, weight_decay=args.weight_decay)
scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=len(train_loader), eta_min=0,
                                                       last_epoch=-1)
simclr = SimCLR(model=model, optimizer=optimizer, scheduler=scheduler, args=args)
history = simclr.train(train_loader)
show("simclr_history", history)
show("simclr_bn_running_var", model.backbone.bn2.running_var[:6])

# ---- linear evaluation (mini-batch-evaluation.ipynb): freeze all but the last fc
backbone = Backbone(num_classes=4)
state_dict = {k[len("backbone."):]: v for k, v in model.state_dict().items()
              if k.startswith("backbone.") and not k.startswith("backbone.fc")}
log = backbone.load_state_dict(state_dict, strict=False)
assert log.missing_keys == ['fc.weight', 'fc.bias']
numpy_init(torch, backbone.fc, seed=2)

# freeze all layers but the last fc
for name, param in backbone.named_parameters():
    if name not in ['fc.weight', 'fc.bias']:
        param.requires_grad = False

parameters = list(filter(lambda p: p.requires_grad, backbone.parameters()))
assert len(parameters) == 2  # fc.weight, fc.bias
show("trainable", len(parameters))
optimizer = torch.optim.Adam(backbone.parameters(), lr=3e-3, weight_decay=0.0008)
criterion = torch.nn.CrossEntropyLoss()
backbone.eval()
accs = []
for epoch in range(5):
    top1_train_accuracy = 0
    for counter, (views, y_batch) in enumerate(train_loader):
        logits = backbone(views[0])
        loss = criterion(logits, y_batch)
        top1 = accuracy(logits, y_batch, topk=(1,))
        top1_train_accuracy += top1[0]

        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    top1_train_accuracy /= (counter + 1)
    accs.append([top1_train_accuracy.item(), loss.item()])
show("linear_eval", accs)
show("frozen_grad_is_none", float(backbone.conv1.weight.grad is None))
show("fc_weight", backbone.fc.weight[0, :6])
