"""PyTorch tutorial "Parametrizations Tutorial" (``torch.nn.utils.parametrize``): a symmetric
layer by hand and by ``register_parametrization(layer, "weight", Symmetric())``, Skew on a
Conv2d, the ``parametrizations``/``original`` attributes, ``parametrize.cached()``, chained
parametrizations (Skew then CayleyMap or MatrixExponential: orthogonal; Symmetric then
MatrixExponential: positive definite), ``right_inverse`` for assigning ``layer.weight``, a
pruning parametrization, ``remove_parametrizations`` with and without ``leave_parametrized``;
then ``parametrizations.orthogonal`` (each map, with and without the trivialization) trained
with SGD, and an orthogonal RNN-style recurrence.

    python parametrizations.py [torch|numbagrad]
"""
import numpy as np

from _common import BACKEND, show

if BACKEND == "torch":
    import torch
    import torch.nn as nn
    import torch.nn.utils.parametrize as parametrize
    from torch.nn.utils.parametrizations import orthogonal
else:
    import numbagrad as torch
    import numbagrad.nn as nn
    import numbagrad.nn.utils.parametrize as parametrize
    from numbagrad.nn.utils.parametrizations import orthogonal

rng = np.random.default_rng(0)


def rand(*shape):
    """``torch.rand`` with NumPy's numbers (the libraries' generators differ)."""
    return torch.from_numpy(rng.uniform(size=shape).astype(np.float32))


def load(layer):
    with torch.no_grad():
        layer.weight.copy_(torch.from_numpy(rng.uniform(-0.5, 0.5, tuple(layer.weight.shape)).astype(np.float32)))
        if layer.bias is not None:
            layer.bias.copy_(torch.from_numpy(rng.uniform(-0.5, 0.5, tuple(layer.bias.shape)).astype(np.float32)))
    return layer


def symmetric(X):
    return X.triu() + X.triu(1).transpose(-1, -2)


X = rand(3, 3)
A = symmetric(X)
assert torch.allclose(A, A.T)  # A is symmetric
print(A)                       # Quick visual check
show("symmetric_by_hand", A)


class LinearSymmetric(nn.Module):
    def __init__(self, n_features):
        super().__init__()
        self.weight = nn.Parameter(rand(n_features, n_features))

    def forward(self, x):
        A = symmetric(self.weight)
        return x @ A


layer = LinearSymmetric(3)
out = layer(rand(8, 3))
out.sum().backward()
show("linear_symmetric_grad", layer.weight.grad)


class Symmetric(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(-1, -2)


layer = load(nn.Linear(3, 3))
parametrize.register_parametrization(layer, "weight", Symmetric())
A = layer.weight
assert torch.allclose(A, A.T)  # A is symmetric
print(A)                       # Quick visual check
show("registered_symmetric", A)


class Skew(nn.Module):
    def forward(self, X):
        A = X.triu(1)
        return A - A.transpose(-1, -2)


cnn = load(nn.Conv2d(in_channels=5, out_channels=8, kernel_size=3))
parametrize.register_parametrization(cnn, "weight", Skew())
# Print a few kernels
print(cnn.weight[0, 1])
print(cnn.weight[2, 2])
show("skew_kernels", [cnn.weight[0, 1], cnn.weight[2, 2]])
show("skew_conv_out", cnn(rand(1, 5, 4, 4))[0, :, 0, 0])

layer = load(nn.Linear(3, 3))
print(f"Unparametrized:\n{layer}")
parametrize.register_parametrization(layer, "weight", Symmetric())
print(f"\nParametrized:\n{layer}")
show("class_name", [type(layer).__name__ == "ParametrizedLinear", parametrize.is_parametrized(layer),
                    parametrize.is_parametrized(layer, "weight"), parametrize.is_parametrized(layer, "bias"),
                    parametrize.type_before_parametrizations(layer) is nn.Linear])

print(layer.parametrizations)
print(layer.parametrizations.weight)
print(layer.parametrizations.weight[0])
print(dict(layer.named_parameters()))
show("named_parameters", [name for name, _ in layer.named_parameters()] == ["bias", "parametrizations.weight.original"])
show("state_dict_keys", sorted(layer.state_dict().keys()) == ["bias", "parametrizations.weight.original"])
print(layer.parametrizations.weight.original)
symmetric = Symmetric()
weight_orig = layer.parametrizations.weight.original
print(torch.dist(layer.weight, symmetric(weight_orig)))
show("dist_to_original", torch.dist(layer.weight, symmetric(weight_orig)))


class NoisyParametrization(nn.Module):
    calls = 0

    def forward(self, X):
        print("Computing the Parametrization")
        NoisyParametrization.calls += 1
        return X


layer = load(nn.Linear(4, 4))
parametrize.register_parametrization(layer, "weight", NoisyParametrization())
print("Here, layer.weight is recomputed every time we call it")
foo = layer.weight + layer.weight.T
bar = layer.weight.sum()
with parametrize.cached():
    print("Here, it is computed just the first time layer.weight is called")
    foo = layer.weight + layer.weight.T
    bar = layer.weight.sum()
show("noisy_calls", NoisyParametrization.calls)


class CayleyMap(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.register_buffer("Id", torch.eye(n))

    def forward(self, X):
        # (I + X)(I - X)^{-1}
        return torch.linalg.solve(self.Id - X, self.Id + X)


layer = load(nn.Linear(3, 3))
parametrize.register_parametrization(layer, "weight", Skew())
parametrize.register_parametrization(layer, "weight", CayleyMap(3))
X = layer.weight
print(torch.dist(X.T @ X, torch.eye(3)))  # X is orthogonal
show("cayley_orthogonal", bool(torch.dist(X.T @ X, torch.eye(3)) < 1e-5))
show("cayley_weight", X)
show("buffers", [name for name, _ in layer.named_buffers()] == ["parametrizations.weight.1.Id"])


class MatrixExponential(nn.Module):
    def forward(self, X):
        return torch.matrix_exp(X)


layer_orthogonal = load(nn.Linear(3, 3))
parametrize.register_parametrization(layer_orthogonal, "weight", Skew())
parametrize.register_parametrization(layer_orthogonal, "weight", MatrixExponential())
X = layer_orthogonal.weight
print(torch.dist(X.T @ X, torch.eye(3)))         # X is orthogonal
show("expm_orthogonal", bool(torch.dist(X.T @ X, torch.eye(3)) < 1e-5))
show("expm_weight", X)

layer_spd = load(nn.Linear(3, 3))
parametrize.register_parametrization(layer_spd, "weight", Symmetric())
parametrize.register_parametrization(layer_spd, "weight", MatrixExponential())
X = layer_spd.weight
print(torch.dist(X, X.T))                        # X is symmetric
print((torch.linalg.eigvalsh(X) > 0.).all())  # X is positive definite
show("spd_eigenvalues", torch.linalg.eigvalsh(X))


class Skew(nn.Module):
    def forward(self, X):
        A = X.triu(1)
        return A - A.transpose(-1, -2)

    def right_inverse(self, A):
        # We assume that A is skew-symmetric
        # We take the upper-triangular elements, as these are those used in the forward
        return A.triu(1)


layer = load(nn.Linear(3, 3))
parametrize.register_parametrization(layer, "weight", Skew())
X = rand(3, 3)
X = X - X.T                             # X is now skew-symmetric
layer.weight = X                        # Initialize layer.weight to be X
print(torch.dist(layer.weight, X))      # layer.weight == X
show("right_inverse_dist", torch.dist(layer.weight, X))
show("right_inverse_original", layer.parametrizations.weight.original)


class CayleyMap(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.register_buffer("Id", torch.eye(n))

    def forward(self, X):
        # Assume X skew-symmetric
        # (I + X)(I - X)^{-1}
        return torch.linalg.solve(self.Id - X, self.Id + X)

    def right_inverse(self, A):
        # Assume A orthogonal
        # See https://en.wikipedia.org/wiki/Cayley_transform#Matrix_map
        # (A - I)(A + I)^{-1}
        return torch.linalg.solve(A + self.Id, self.Id - A)


layer_orthogonal = load(nn.Linear(3, 3))
parametrize.register_parametrization(layer_orthogonal, "weight", Skew())
parametrize.register_parametrization(layer_orthogonal, "weight", CayleyMap(3))
# Sample an orthogonal matrix with positive determinant
X = torch.empty(3, 3)
nn.init.orthogonal_(X)
if X.det() < 0.:
    X[0].neg_()
show("sampled_orthogonal", [bool(torch.allclose(X @ X.T, torch.eye(3), atol=1e-5)), bool(X.det() > 0)])
# the sampled matrix comes from the library's generator: assign NumPy's instead
q, r = np.linalg.qr(rng.normal(size=(3, 3)))
q = q * np.sign(np.diag(r))
if np.linalg.det(q) < 0:
    q[0] = -q[0]
X = torch.from_numpy(q.astype(np.float32))
layer_orthogonal.weight = X
print(torch.dist(layer_orthogonal.weight, X))  # layer_orthogonal.weight == X
show("cayley_assign_dist", bool(torch.dist(layer_orthogonal.weight, X) < 1e-5))


class PruningParametrization(nn.Module):
    def __init__(self, X, p_drop=0.2):
        super().__init__()
        # sample zeros with probability p_drop
        mask = torch.full_like(X, 1.0 - p_drop)
        self.mask = torch.bernoulli(mask)

    def forward(self, X):
        return X * self.mask

    def right_inverse(self, A):
        return A


layer = load(nn.Linear(3, 4))
X = rand(*layer.weight.shape)
print(f"Initialization matrix:\n{X}")
pruning = PruningParametrization(layer.weight)
show("bernoulli_mask", bool(((pruning.mask == 0) | (pruning.mask == 1)).all()))
pruning.mask = torch.from_numpy((rng.uniform(size=(4, 3)) > 0.2).astype(np.float32))
parametrize.register_parametrization(layer, "weight", pruning)
layer.weight = X
print(f"\nInitialized weight:\n{layer.weight}")
show("pruned_weight", layer.weight)

layer = load(nn.Linear(3, 3))
print("Before:")
print(layer)
print(layer.weight)
parametrize.register_parametrization(layer, "weight", Skew())
print("\nParametrized:")
print(layer)
print(layer.weight)
parametrize.remove_parametrizations(layer, "weight")
print("\nAfter. Weight has skew-symmetric values but it is unconstrained:")
print(layer)
print(layer.weight)
show("removed_left_parametrized", layer.weight)
show("removed_type", [type(layer).__name__ == "Linear", isinstance(layer.weight, nn.Parameter)])

layer = load(nn.Linear(3, 3))
before = layer.weight.detach().clone()
print("Before:")
print(layer)
print(layer.weight)
parametrize.register_parametrization(layer, "weight", Skew())
print("\nParametrized:")
print(layer)
print(layer.weight)
parametrize.remove_parametrizations(layer, "weight", leave_parametrized=False)
print("\nAfter. Same as Before:")
print(layer)
print(layer.weight)
show("removed_original", bool(torch.equal(layer.weight, before)))

# ----- parametrizations.orthogonal: every map, trained to fit a rotation
target = torch.from_numpy(np.linalg.qr(rng.normal(size=(4, 4)))[0].astype(np.float32))
inputs = rand(16, 4)
for orthogonal_map in ["matrix_exp", "cayley", "householder"]:
    for use_trivialization in [True, False]:
        layer = load(nn.Linear(4, 4, bias=False))
        orthogonal(layer, orthogonal_map=orthogonal_map, use_trivialization=use_trivialization)
        W = layer.weight
        tag = orthogonal_map + ("_triv" if use_trivialization else "")
        show("orth_init_" + tag, W[0])
        show("orth_is_orthogonal_" + tag, bool(torch.allclose(W.T @ W, torch.eye(4), atol=1e-5)))
        opt = torch.optim.SGD(layer.parameters(), lr=0.1)
        losses = []
        for step in range(5):
            opt.zero_grad()
            loss = (layer(inputs) - inputs @ target.T).pow(2).mean()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        show("orth_losses_" + tag, losses)
        with torch.no_grad():
            W = layer.weight
        show("orth_still_orthogonal_" + tag, bool(torch.allclose(W.T @ W, torch.eye(4), atol=1e-5)))
print(layer)

# a tall weight (orthonormal columns), a wide one (rows), a batch, and assigning an
# orthogonal matrix with the householder map without the trivialization
tall = load(nn.Linear(3, 5))
orthogonal(tall, orthogonal_map="householder", use_trivialization=False)
show("tall_columns", bool(torch.allclose(tall.weight.T @ tall.weight, torch.eye(3), atol=1e-5)))
show("tall_weight", tall.weight[:, 0])
wide = load(nn.Linear(5, 3))
orthogonal(wide, orthogonal_map="cayley", use_trivialization=False)
show("wide_rows", bool(torch.allclose(wide.weight @ wide.weight.T, torch.eye(3), atol=1e-5)))
show("wide_weight", wide.weight[0])
q = np.linalg.qr(rng.normal(size=(5, 3)))[0].astype(np.float32)
tall.weight = torch.from_numpy(q)
show("householder_assign", bool(torch.allclose(tall.weight, torch.from_numpy(q), atol=1e-5)))
show("householder_original", tall.parametrizations.weight.original.diagonal())

# an orthogonal recurrence (the tutorial's motivation: stable RNNs)
cell = load(nn.Linear(4, 4, bias=False))
orthogonal(cell)
h = rand(2, 4)
norms = []
for t in range(6):
    h = cell(h)
    norms.append(h.norm(dim=1).tolist())
show("orth_rnn_norms", norms)
h.sum().backward()
show("orth_rnn_grad", cell.parametrizations.weight.original.grad[1])
