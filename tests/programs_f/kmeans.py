"""K-means clustering in torch, as the "k-means in PyTorch" posts and gists write it: distances by
``torch.cdist`` and by the expanded ``(x**2).sum(1, keepdim=True) - 2 x c^T + (c**2).sum(1)``,
assignments by ``argmin``; centroids updated three ways (``torch.zeros(k, d).index_add_(0,
labels, X)`` over ``torch.bincount`` counts, ``scatter_add_`` with an index ``expand``-ed over
the feature dimension, and ``scatter_reduce_(..., reduce='mean', include_self=False)``), empty
clusters kept by ``torch.where``; k-means++ seeding with the ``D^2`` probabilities turned into a
draw by ``torch.searchsorted`` on a NumPy uniform; Lloyd iterations until ``torch.allclose``
says the centroids stopped; inertia for an elbow curve over k; the silhouette score from a
``cdist`` matrix and boolean masks; ``torch.unique(return_counts=True)``; mini-batch k-means
with per-centre learning rates ``1 / counts``; and soft k-means (``softmax(-beta * d2)``)
differentiated by autograd to move the centres by gradient descent.

    python kmeans.py [torch|numbagrad]
"""
import numpy as np

from _common import BACKEND, show

if BACKEND == "torch":
    import torch
else:
    import numbagrad as torch

rng = np.random.default_rng(3)

centers_true = np.array([[0, 0], [5, 5], [0, 6], [6, 0]], dtype=np.float32)
X_np = np.concatenate([c + rng.normal(size=(60, 2)).astype(np.float32) for c in centers_true])
X = torch.from_numpy(X_np)
N, D = X.shape


def pairwise_sq(X, C):
    return (X ** 2).sum(1, keepdim=True) - 2 * X @ C.T + (C ** 2).sum(1)


def kmeans_plus_plus(X, k):
    first = int(rng.integers(len(X)))
    centroids = [X[first]]
    for _ in range(1, k):
        d2 = torch.cdist(X, torch.stack(centroids)).min(dim=1).values ** 2
        probs = d2 / d2.sum()
        cdf = torch.cumsum(probs, 0)
        u = torch.tensor([rng.random()], dtype=cdf.dtype)
        idx = int(torch.searchsorted(cdf, u).clamp(max=len(X) - 1))
        centroids.append(X[idx])
    return torch.stack(centroids)


def update_index_add(X, labels, k, old):
    sums = torch.zeros(k, X.shape[1]).index_add_(0, labels, X)
    counts = torch.bincount(labels, minlength=k).float()
    new = sums / counts.clamp(min=1).unsqueeze(1)
    return torch.where(counts.unsqueeze(1) > 0, new, old)


def update_scatter_add(X, labels, k, old):
    sums = torch.zeros(k, X.shape[1]).scatter_add_(0, labels.unsqueeze(1).expand(-1, X.shape[1]), X)
    counts = torch.zeros(k).scatter_add_(0, labels, torch.ones(len(labels)))
    new = sums / counts.clamp(min=1)[:, None]
    return torch.where(counts[:, None] > 0, new, old)


def update_scatter_reduce(X, labels, k, old):
    index = labels.unsqueeze(1).expand(-1, X.shape[1])
    return old.clone().scatter_reduce_(0, index, X, reduce='mean', include_self=False)


def kmeans(X, k, max_iters=50, update=update_index_add):
    centroids = kmeans_plus_plus(X, k)
    for it in range(max_iters):
        labels = torch.cdist(X, centroids).argmin(dim=1)
        new_centroids = update(X, labels, k, centroids)
        if torch.allclose(new_centroids, centroids):
            break
        centroids = new_centroids
    inertia = ((X - centroids[labels]) ** 2).sum()
    return centroids, labels, inertia, it + 1


# distances two ways
C0 = X[:4]
show("cdist_vs_expanded", float(torch.allclose(torch.cdist(X, C0) ** 2, pairwise_sq(X, C0).clamp(min=0), atol=1e-3)))
show("cdist_head", torch.cdist(X[:3], C0))

state = rng.bit_generator.state
init = kmeans_plus_plus(X, 4)
show("kmeans_pp_init", init)

results = {}
for name, update in [("index_add", update_index_add), ("scatter_add", update_scatter_add),
                     ("scatter_reduce", update_scatter_reduce)]:
    rng.bit_generator.state = state  # the same seeding for each update rule
    centroids, labels, inertia, iters = kmeans(X, 4, update=update)
    order = torch.argsort(centroids[:, 0] * 10 + centroids[:, 1])
    results[name] = centroids[order]
    show(f"{name}_centroids", centroids[order])
    show(f"{name}_inertia", inertia)
    show(f"{name}_iterations", iters)
show("update_rules_agree", float(torch.allclose(results["index_add"], results["scatter_add"]) and
                                 torch.allclose(results["index_add"], results["scatter_reduce"])))

values, counts = torch.unique(labels, return_counts=True)
show("unique_labels_counts", [values, counts])

# empty clusters: a centroid far away keeps its place
far = torch.tensor([[100.0, 100.0]])
C = torch.cat([X[:3], far])
labels_far = torch.cdist(X, C).argmin(1)
show("empty_cluster_kept", update_index_add(X, labels_far, 4, C)[3])
show("empty_cluster_kept_scatter_reduce", update_scatter_reduce(X, labels_far, 4, C)[3])

# elbow curve
inertias = []
for k in range(1, 7):
    _, _, inertia, _ = kmeans(X, k)
    inertias.append(inertia.item())
show("elbow_inertias_decrease", float(all(b <= a + 1e-3 for a, b in zip(inertias, inertias[1:]))))
show("elbow_inertias", inertias)


# silhouette score
def silhouette(X, labels, k):
    dist = torch.cdist(X, X)
    s = torch.zeros(len(X))
    for i in range(len(X)):
        same = labels == labels[i]
        same[i] = False
        a = dist[i][same].mean() if same.any() else torch.tensor(0.0)
        b = min(dist[i][labels == c].mean() for c in range(k) if c != labels[i] and (labels == c).any())
        s[i] = (b - a) / torch.maximum(a, b)
    return s.mean()


rng.bit_generator.state = state
centroids, labels, inertia, _ = kmeans(X, 4)
show("silhouette_k4", silhouette(X, labels, 4))

# mini-batch k-means (Sculley 2010)
centroids = kmeans_plus_plus(X, 4)
counts = torch.zeros(4)
for step in range(30):
    batch = X[torch.from_numpy(rng.choice(N, 32, replace=False))]
    lab = torch.cdist(batch, centroids).argmin(1)
    for x, c in zip(batch, lab.tolist()):
        counts[c] += 1
        eta = 1.0 / counts[c]
        centroids[c] = (1 - eta) * centroids[c] + eta * x
order = torch.argsort(centroids[:, 0] * 10 + centroids[:, 1])
show("minibatch_centroids", centroids[order])
show("minibatch_counts_total", counts.sum())

# soft k-means by gradient descent on the centres
C = kmeans_plus_plus(X, 4).clone().requires_grad_(True)
opt = torch.optim.SGD([C], lr=0.05)
beta = 2.0
soft_losses = []
for step in range(40):
    d2 = pairwise_sq(X, C)
    r = torch.softmax(-beta * d2, dim=1)
    loss = (r * d2).sum(1).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    soft_losses.append(loss.item())
show("soft_kmeans_losses", soft_losses[::5] + soft_losses[-1:])
order = torch.argsort(C[:, 0] * 10 + C[:, 1])
show("soft_kmeans_centres", C.detach()[order])
