"""PyTorch tutorials "Neural Tangent Kernels" and "Model ensembling" (torch.func): the
empirical NTK of a small CNN by ``vmap(jacrev(fnet_single))`` over ``functional_call`` with
the Jacobian contraction in ``einsum`` (full, trace and diagonal modes), and by NTK-vector
products through ``vjp``/``jvp``; then an ensemble of MLPs stacked with
``stack_module_state`` and run with ``vmap`` over the stacked parameters, against a loop.

    python ntk_ensembling.py [torch|numbagrad]
"""
import copy

import numpy as np

from _common import BACKEND, numpy_init, show

if BACKEND == "torch":
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from torch.func import functional_call, jacrev, jvp, stack_module_state, vjp, vmap
else:
    import numbagrad as torch
    import numbagrad.nn as nn
    import numbagrad.nn.functional as F
    from numbagrad.func import functional_call, jacrev, jvp, stack_module_state, vjp, vmap

rng = np.random.default_rng(0)
device = 'cpu'


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 4, (3, 3))
        self.conv2 = nn.Conv2d(4, 4, (3, 3))
        self.conv3 = nn.Conv2d(4, 4, (3, 3))
        self.fc = nn.Linear(4, 5)

    def forward(self, x):
        x = self.conv1(x)
        x = x.relu()
        x = self.conv2(x)
        x = x.relu()
        x = self.conv3(x)
        x = x.mean((-1, -2))
        x = self.fc(x)
        return x


x_train = torch.from_numpy(rng.normal(size=(4, 3, 8, 8)).astype(np.float32))
x_test = torch.from_numpy(rng.normal(size=(3, 3, 8, 8)).astype(np.float32))

net = CNN().to(device)
numpy_init(torch, net)

# Detaching the parameters because we won't be calling Tensor.backward().
params = {k: v.detach() for k, v in net.named_parameters()}


def fnet_single(params, x):
    return functional_call(net, params, (x.unsqueeze(0),)).squeeze(0)


def empirical_ntk_jacobian_contraction(fnet_single, params, x1, x2, compute='full'):
    # Compute J(x1)
    jac1 = vmap(jacrev(fnet_single), (None, 0))(params, x1)
    jac1 = jac1.values()
    jac1 = [j.flatten(2) for j in jac1]

    # Compute J(x2)
    jac2 = vmap(jacrev(fnet_single), (None, 0))(params, x2)
    jac2 = jac2.values()
    jac2 = [j.flatten(2) for j in jac2]

    # Compute J(x1) @ J(x2).T
    einsum_expr = None
    if compute == 'full':
        einsum_expr = 'Naf,Mbf->NMab'
    elif compute == 'trace':
        einsum_expr = 'Naf,Maf->NM'
    elif compute == 'diagonal':
        einsum_expr = 'Naf,Maf->NMa'
    else:
        assert False

    result = torch.stack([torch.einsum(einsum_expr, j1, j2) for j1, j2 in zip(jac1, jac2)])
    result = result.sum(0)
    return result


result = empirical_ntk_jacobian_contraction(fnet_single, params, x_train, x_test)
show('ntk_shape', list(result.shape))
show('ntk_full', result[0, 1])
trace = empirical_ntk_jacobian_contraction(fnet_single, params, x_train, x_test, 'trace')
show('ntk_trace', trace)
diagonal = empirical_ntk_jacobian_contraction(fnet_single, params, x_train, x_test, 'diagonal')
show('ntk_diag_matches', bool(torch.allclose(diagonal, torch.diagonal(result, dim1=-2, dim2=-1), atol=1e-4)))
show('ntk_trace_matches', bool(torch.allclose(trace, result.diagonal(dim1=-2, dim2=-1).sum(-1), atol=1e-4)))


def empirical_ntk_ntk_vps(func, params, x1, x2, compute='full'):
    def get_ntk(x1, x2):
        def func_x1(params):
            return func(params, x1)

        def func_x2(params):
            return func(params, x2)

        output, vjp_fn = vjp(func_x1, params)

        def get_ntk_slice(vec):
            # This computes ``vec @ J(x2).T``
            # `vec` is some unit vector (a single slice of the Identity matrix)
            vjps = vjp_fn(vec)
            # This computes ``J(X1) @ vjps``
            _, jvps = jvp(func_x2, (params,), vjps)
            return jvps

        # Here's our identity matrix
        basis = torch.eye(output.numel(), dtype=output.dtype, device=output.device).view(output.numel(), -1)
        return vmap(get_ntk_slice)(basis)

    # ``get_ntk(x1, x2)`` computes the NTK for a single data point x1, x2
    # Since the x1, x2 inputs to ``empirical_ntk_ntk_vps`` are batched,
    # we actually wish to compute the NTK between every pair of data points
    # between {x1} and {x2}. That's what the ``vmaps`` here do.
    result = vmap(vmap(get_ntk, (None, 0)), (0, None))(x1, x2)

    if compute == 'full':
        return result
    if compute == 'trace':
        return torch.einsum('NMKK->NM', result)
    if compute == 'diagonal':
        return torch.einsum('NMKK->NMK', result)


result_from_jacobian_contraction = empirical_ntk_jacobian_contraction(fnet_single, params, x_test[:2], x_train[:2])
result_from_ntk_vps = empirical_ntk_ntk_vps(fnet_single, params, x_test[:2], x_train[:2])
assert torch.allclose(result_from_jacobian_contraction, result_from_ntk_vps, atol=1e-5)
show('ntk_vps', result_from_ntk_vps[1, 0, 2])
show('ntk_vps_trace', empirical_ntk_ntk_vps(fnet_single, params, x_test[:2], x_train[:2], 'trace'))


# ----- Model ensembling
class SimpleMLP(nn.Module):
    def __init__(self):
        super(SimpleMLP, self).__init__()
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 16)
        self.fc3 = nn.Linear(16, 10)

    def forward(self, x):
        x = x.flatten(1)
        x = self.fc1(x)
        x = F.relu(x)
        x = self.fc2(x)
        x = F.relu(x)
        x = self.fc3(x)
        return x


num_models = 4
data = torch.from_numpy(rng.normal(size=(12, 1, 4, 4)).astype(np.float32))
targets = torch.from_numpy(rng.integers(0, 10, (12,)))
models = [SimpleMLP().to(device) for _ in range(num_models)]
for i, m in enumerate(models):
    numpy_init(torch, m, seed=10 + i)

minibatches = data[:num_models * 3].reshape(num_models, 3, 1, 4, 4)
minibatch = data[:3]
predictions_diff_minibatch_loop = [model(minibatch) for model, minibatch in zip(models, minibatches)]
predictions2 = [model(minibatch) for model in models]

params, buffers = stack_module_state(models)
show('stacked_keys', len(params))
show('stacked_shape', list(params['fc1.weight'].shape))
show('stacked_requires_grad', params['fc1.weight'].requires_grad)

# Construct a "stateless" version of one of the models. It is "stateless" in
# the sense that the parameters are meta Tensors and do not have storage.
base_model = copy.deepcopy(models[0])
base_model = base_model.to('cpu')


def fmodel(params, buffers, x):
    return functional_call(base_model, (params, buffers), (x,))


print([p.size(0) for p in params.values()])  # show the leading 'num_models' dimension
assert minibatches.shape == (num_models, 3, 1, 4, 4)  # verify minibatch has leading dimension of size 'num_models'

predictions1_vmap = vmap(fmodel)(params, buffers, minibatches)
# verify the ``vmap`` predictions match the
assert torch.allclose(predictions1_vmap, torch.stack(predictions_diff_minibatch_loop), atol=1e-3, rtol=1e-5)
show('ensemble_diff', predictions1_vmap[2, 1])
predictions2_vmap = vmap(fmodel, in_dims=(0, 0, None))(params, buffers, minibatch)
assert torch.allclose(predictions2_vmap, torch.stack(predictions2), atol=1e-3, rtol=1e-5)
show('ensemble_same', predictions2_vmap[:, 0, 0])


# training the ensemble: one loss over the vmapped models, Adam on the stacked parameters
def compute_loss(params, buffers, x, y):
    return F.cross_entropy(fmodel(params, buffers, x), y)


opt = torch.optim.Adam(list(params.values()), lr=0.01)
ys = targets.reshape(num_models, 3)
ens_losses = []
for step in range(4):
    opt.zero_grad()
    per_model = vmap(compute_loss)(params, buffers, minibatches, ys)
    per_model.sum().backward()
    opt.step()
    ens_losses.append(per_model.tolist())
show('ensemble_losses', ens_losses)
show('ensemble_fc3_bias', params['fc3.bias'][1])
