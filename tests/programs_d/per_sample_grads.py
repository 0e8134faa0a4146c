"""PyTorch tutorials "Per-sample-gradients" and "Jacobians, Hessians, hvp, vhp, and more"
(torch.func): per-sample gradients by a loop and by ``vmap(grad(...))`` over
``functional_call``, compared with ``torch.testing.assert_close``; ``jacrev``/``jacfwd`` of a
linear layer against the analytic Jacobian, batched with ``vmap``, ``hessian``, and
Hessian-vector products through ``jvp(grad)`` and ``vjp``.

    python per_sample_grads.py [torch|numbagrad]
"""
import numpy as np

from _common import BACKEND, numpy_init, show

if BACKEND == "torch":
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from torch.func import functional_call, grad, hessian, jacfwd, jacrev, jvp, vjp, vmap
else:
    import numbagrad as torch
    import numbagrad.nn as nn
    import numbagrad.nn.functional as F
    from numbagrad.func import functional_call, grad, hessian, jacfwd, jacrev, jvp, vjp, vmap


class SimpleCNN(nn.Module):
    def __init__(self):
        super(SimpleCNN, self).__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, 1)
        self.conv2 = nn.Conv2d(4, 8, 3, 1)
        self.fc1 = nn.Linear(8 * 2 * 2, 16)
        self.fc2 = nn.Linear(16, 10)

    def forward(self, x):
        x = self.conv1(x)
        x = F.relu(x)
        x = self.conv2(x)
        x = F.relu(x)
        x = F.max_pool2d(x, 2)
        x = torch.flatten(x, 1)
        x = self.fc1(x)
        x = F.relu(x)
        x = self.fc2(x)
        output = F.log_softmax(x, dim=1)
        return output


def loss_fn(predictions, targets):
    return F.nll_loss(predictions, targets)


rng = np.random.default_rng(0)
batch_size = 6
data = torch.from_numpy(rng.normal(size=(batch_size, 1, 8, 8)).astype(np.float32))
targets = torch.from_numpy(rng.integers(0, 10, batch_size))
model = SimpleCNN()
numpy_init(torch, model)

predictions = model(data)
loss = loss_fn(predictions, targets)
loss.backward()
show('batch_loss', loss)


def compute_grad(sample, target):
    sample = sample.unsqueeze(0)  # prepend batch dimension for processing
    target = target.unsqueeze(0)
    prediction = model(sample)
    loss = loss_fn(prediction, target)
    return torch.autograd.grad(loss, list(model.parameters()))


def compute_sample_grads(data, targets):
    """ manually process each sample with per sample gradient """
    sample_grads = [compute_grad(data[i], targets[i]) for i in range(batch_size)]
    sample_grads = zip(*sample_grads)
    sample_grads = [torch.stack(shards) for shards in sample_grads]
    return sample_grads


per_sample_grads = compute_sample_grads(data, targets)
show('per_sample_shape', list(per_sample_grads[0].shape))
show('per_sample_fc2', per_sample_grads[-1])

params = {k: v.detach() for k, v in model.named_parameters()}
buffers = {k: v.detach() for k, v in model.named_buffers()}


def compute_loss(params, buffers, sample, target):
    batch = sample.unsqueeze(0)
    targets = target.unsqueeze(0)
    predictions = functional_call(model, (params, buffers), (batch,))
    loss = loss_fn(predictions, targets)
    return loss


ft_compute_grad = grad(compute_loss)
ft_compute_sample_grad = vmap(ft_compute_grad, in_dims=(None, None, 0, 0))
ft_per_sample_grads = ft_compute_sample_grad(params, buffers, data, targets)
for per_sample_grad, ft_per_sample_grad in zip(per_sample_grads, ft_per_sample_grads.values()):
    assert torch.allclose(per_sample_grad, ft_per_sample_grad, atol=3e-3, rtol=1e-5)
    torch.testing.assert_close(per_sample_grad, ft_per_sample_grad, atol=3e-5, rtol=1e-4)
show('ft_keys', len(ft_per_sample_grads))
show('mean_matches_batch', bool((ft_per_sample_grads['fc2.bias'].mean(0) - model.fc2.bias.grad).abs().max() < 1e-6))
try:
    torch.testing.assert_close(per_sample_grads[-1], per_sample_grads[-1] * 1.01)
except AssertionError as e:
    print(str(e).splitlines()[0])
    print('mismatched', str(e).splitlines()[2].split(':')[1])

# Jacobians, Hessians, hvp, vhp
D = 8
weight = torch.from_numpy(rng.normal(size=(D, D)).astype(np.float32))
bias = torch.from_numpy(rng.normal(size=D).astype(np.float32))
x = torch.from_numpy(rng.normal(size=D).astype(np.float32))


def predict(weight, bias, x):
    return F.linear(x, weight, bias).tanh()


jacobian = jacrev(predict, argnums=2)(weight, bias, x)
expected = torch.autograd.functional.jacobian(lambda x: predict(weight, bias, x), x)
torch.testing.assert_close(jacobian, expected)
analytic = (1 - predict(weight, bias, x) ** 2)[:, None] * weight
show('jac_analytic', bool((jacobian - analytic).abs().max() < 1e-6))
show('jacrev_row', jacobian[0])
jacfwd_out = jacfwd(predict, argnums=2)(weight, bias, x)
torch.testing.assert_close(jacrev(predict, argnums=2)(weight, bias, x), jacfwd_out)
ft_jac_weight, ft_jac_bias = jacrev(predict, argnums=(0, 1))(weight, bias, x)
show('jac_weight_shape', list(ft_jac_weight.shape) + list(ft_jac_bias.shape))
show('jac_bias_diag', torch.diagonal(ft_jac_bias))

batch_size = 4
xb = torch.from_numpy(rng.normal(size=(batch_size, D)).astype(np.float32))
compute_batch_jacobian = vmap(jacrev(predict, argnums=2), in_dims=(None, None, 0))
batch_jacobian0 = compute_batch_jacobian(weight, bias, xb)


def predict_with_output_summed(weight, bias, x):
    return predict(weight, bias, x).sum(0)


batch_jacobian1 = jacrev(predict_with_output_summed, argnums=2)(weight, bias, xb).movedim(1, 0)
torch.testing.assert_close(batch_jacobian0, batch_jacobian1)
show('batch_jac', batch_jacobian0[:, 0, :3])

hess_api = hessian(predict, argnums=2)(weight, bias, x)
hess_fwdrev = jacfwd(jacrev(predict, argnums=2), argnums=2)(weight, bias, x)
torch.testing.assert_close(hess_api, hess_fwdrev)
show('hessian', hess_api[0, :2, :3])


def hvp(f, primals, tangents):
    return jvp(grad(f), primals, tangents)[1]


def f(x):
    return x.sin().sum()


x = torch.from_numpy(rng.normal(size=2048).astype(np.float32))
tangent = torch.from_numpy(rng.normal(size=2048).astype(np.float32))
result = hvp(f, (x,), (tangent,))
torch.testing.assert_close(result, -x.sin() * tangent)
_, vjp_fn = vjp(grad(f), x)
(vhp,) = vjp_fn(tangent)
torch.testing.assert_close(vhp, result)
show('hvp', result[:4])
