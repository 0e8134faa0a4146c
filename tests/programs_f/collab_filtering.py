"""Collaborative filtering by matrix factorisation, after fast.ai's book chapter 8
("Collaborative Filtering Deep Dive") in plain PyTorch, on generated ratings from a low-rank
taste model: the crosstab-style latent factors picked by a one-hot matrix product
(``user_factors.t() @ one_hot_3``) equal to indexing; DotProduct with two ``nn.Embedding``s and
``sigmoid_range``; DotProductBias written with ``create_params`` (``nn.Parameter(torch.zeros(*size)
.normal_(0, 0.01))`` overwritten by NumPy draws), row indexing ``self.user_factors[x[:, 0]]`` and
``res += bias`` on an autograd result; weight decay added by hand as ``wd * (p**2).sum()`` next to
AdamW's decoupled decay; ``OneCycleLR`` stepped per batch (fit_one_cycle); interpretation of the
biases by ``argsort(descending=True)``, nearest items by ``nn.CosineSimilarity(dim=1)``, a PCA of
the item factors by ``torch.linalg.svd``; and CollabNN (the two embeddings ``torch.cat``-ed into
an MLP).

    python collab_filtering.py [torch|numbagrad]
"""
import numpy as np

from _common import BACKEND, show

if BACKEND == "torch":
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from torch.utils.data import DataLoader, TensorDataset
else:
    import numbagrad as torch
    import numbagrad.nn as nn
    import numbagrad.nn.functional as F
    from numbagrad.utils.data import DataLoader, TensorDataset

rng = np.random.default_rng(8)

n_users, n_movies, n_factors = 40, 30, 5
true_u = rng.normal(size=(n_users, 3))
true_m = rng.normal(size=(n_movies, 3))
true_mbias = rng.normal(scale=0.7, size=n_movies)
pairs = np.array([(u, m) for u in range(n_users) for m in range(n_movies) if rng.random() < 0.5])
ratings = np.clip(np.round(3 + (true_u[pairs[:, 0]] * true_m[pairs[:, 1]]).sum(1) * 0.7
                           + true_mbias[pairs[:, 1]] + rng.normal(scale=0.3, size=len(pairs))), 1, 5)
perm = rng.permutation(len(pairs))
n_valid = len(pairs) // 5
valid_idx, train_idx = perm[:n_valid], perm[n_valid:]
x_all = torch.from_numpy(pairs.astype(np.int64))
y_all = torch.from_numpy(ratings.astype(np.float32))
train_dl = DataLoader(TensorDataset(x_all[train_idx], y_all[train_idx]), batch_size=64, shuffle=False)
valid_dl = DataLoader(TensorDataset(x_all[valid_idx], y_all[valid_idx]), batch_size=256)
show("n_ratings", len(pairs))
show("rating_histogram", torch.bincount(y_all.long(), minlength=6)[1:])

# ---- latent factors: one-hot matrix product == indexing
user_factors = torch.from_numpy(rng.normal(size=(n_users, n_factors)).astype(np.float32))
one_hot_3 = F.one_hot(torch.tensor(3), n_users).float()
show("one_hot_product", user_factors.t() @ one_hot_3[:, None])
show("one_hot_equals_index", float(torch.allclose((user_factors.t() @ one_hot_3[:, None])[:, 0], user_factors[3])))


def sigmoid_range(x, low, high):
    "Sigmoid function with range `(low, high)`"
    return torch.sigmoid(x) * (high - low) + low


def numpy_params(module, scale=0.01):
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.from_numpy(rng.normal(0, scale, tuple(p.shape)).astype(np.float32)))


class DotProduct(nn.Module):
    def __init__(self, n_users, n_movies, n_factors, y_range=(0, 5.5)):
        super().__init__()
        self.user_factors = nn.Embedding(n_users, n_factors)
        self.movie_factors = nn.Embedding(n_movies, n_factors)
        self.y_range = y_range

    def forward(self, x):
        users = self.user_factors(x[:, 0])
        movies = self.movie_factors(x[:, 1])
        return sigmoid_range((users * movies).sum(dim=1), *self.y_range)


def create_params(size):
    return nn.Parameter(torch.zeros(*size).normal_(0, 0.01))


class DotProductBias(nn.Module):
    def __init__(self, n_users, n_movies, n_factors, y_range=(0, 5.5)):
        super().__init__()
        self.user_factors = create_params([n_users, n_factors])
        self.user_bias = create_params([n_users])
        self.movie_factors = create_params([n_movies, n_factors])
        self.movie_bias = create_params([n_movies])
        self.y_range = y_range

    def forward(self, x):
        users = self.user_factors[x[:, 0]]
        movies = self.movie_factors[x[:, 1]]
        res = (users * movies).sum(dim=1)
        res += self.user_bias[x[:, 0]] + self.movie_bias[x[:, 1]]
        return sigmoid_range(res, *self.y_range)


def validate(model):
    model.eval()
    total, n = 0.0, 0
    with torch.no_grad():
        for xb, yb in valid_dl:
            total += F.mse_loss(model(xb), yb, reduction='sum').item()
            n += len(yb)
    model.train()
    return total / n


def fit_one_cycle(model, n_epoch, lr_max, wd=0.0, manual_wd=0.0):
    opt = torch.optim.AdamW(model.parameters(), lr=lr_max, weight_decay=wd)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr_max, total_steps=n_epoch * len(train_dl))
    history = []
    for epoch in range(n_epoch):
        train_loss = 0.0
        for xb, yb in train_dl:
            loss = F.mse_loss(model(xb), yb)
            loss_with_wd = loss + manual_wd * sum((p ** 2).sum() for p in model.parameters())
            opt.zero_grad()
            loss_with_wd.backward()
            opt.step()
            sched.step()
            train_loss += loss.item()
        history.append([train_loss / len(train_dl), validate(model)])
        print(f"epoch {epoch} train_loss {history[-1][0]:.4f} valid_loss {history[-1][1]:.4f}")
    return history, sched


model = DotProduct(n_users, n_movies, 50)
numpy_params(model, scale=0.1)
history, sched = fit_one_cycle(model, 5, 5e-2)
show("dotproduct_history", history)
show("one_cycle_final_lr", sched.get_last_lr())

model = DotProductBias(n_users, n_movies, 50)
show("create_params_std_small", float(model.user_factors.std().item() < 0.05))
numpy_params(model, scale=0.01)
show("dotproductbias_param_shapes", [list(p.shape) for p in model.parameters()])
history, _ = fit_one_cycle(model, 5, 5e-2, manual_wd=1e-3)
show("manual_wd_history", history)

model = DotProductBias(n_users, n_movies, 50)
numpy_params(model, scale=0.01)
history, _ = fit_one_cycle(model, 5, 5e-2, wd=0.1)
show("adamw_wd_history", history)

# ---- interpretation
movie_bias = model.movie_bias.squeeze()
idxs = movie_bias.argsort(descending=True)[:5]
show("top_movie_bias_idx", idxs)
show("top_movie_bias_matches_truth", float(len(set(idxs.tolist()) & set(np.argsort(-true_mbias)[:5].tolist())) / 5))
idxs = movie_bias.argsort()[:5]
show("bottom_movie_bias_idx", idxs)

movie_factors = model.movie_factors.detach()
distances = nn.CosineSimilarity(dim=1)(movie_factors, movie_factors[3][None])
idx = distances.argsort(descending=True)[1]
show("most_similar_to_movie_3", idx)
show("cosine_self", distances[3])

centered = movie_factors - movie_factors.mean(0)
U, S, Vh = torch.linalg.svd(centered, full_matrices=False)
show("pca_singular_values", S[:3])
pca3 = centered @ Vh[:3].T
show("pca_projection_shape", list(pca3.shape))
show("pca_projection_variance", pca3.var(0))


# ---- deep learning for collaborative filtering
class CollabNN(nn.Module):
    def __init__(self, user_sz, item_sz, y_range=(0, 5.5), n_act=32):
        super().__init__()
        self.user_factors = nn.Embedding(*user_sz)
        self.item_factors = nn.Embedding(*item_sz)
        self.layers = nn.Sequential(
            nn.Linear(user_sz[1] + item_sz[1], n_act),
            nn.ReLU(),
            nn.Linear(n_act, 1))
        self.y_range = y_range

    def forward(self, x):
        embs = self.user_factors(x[:, 0]), self.item_factors(x[:, 1])
        x = self.layers(torch.cat(embs, dim=1))
        return sigmoid_range(x, *self.y_range)


embs = [(n_users, 10), (n_movies, 9)]  # get_emb_sz's rule of thumb would give these
model = CollabNN(*embs)
numpy_params(model, scale=0.2)
out = model(x_all[:4])
show("collabnn_out_shape", list(out.shape))
opt = torch.optim.AdamW(model.parameters(), lr=5e-3, weight_decay=0.01)
nn_hist = []
for epoch in range(4):
    for xb, yb in train_dl:
        loss = F.mse_loss(model(xb).squeeze(1), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()
    with torch.no_grad():
        nn_hist.append(F.mse_loss(model(x_all[valid_idx]).squeeze(1), y_all[valid_idx]).item())
    model.train()
show("collabnn_valid_mse", nn_hist)
