"""PyTorch tutorial "Adversarial Example Generation" (FGSM), scaled down: a LeNet-style model
in eval mode, the input's gradient through ``data.requires_grad = True`` and
``loss.backward()``, the perturbation ``image + epsilon * data_grad.sign()`` clamped to
[0, 1], the tutorial's denormalize step, and the accuracy under several epsilons.

    python fgsm.py [torch|numbagrad]
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

epsilons = [0, .05, .1, .2, .3]
torch.manual_seed(42)
device = torch.device("cpu")


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, 1)
        self.conv2 = nn.Conv2d(4, 8, 3, 1)
        self.dropout1 = nn.Dropout(0.25)
        self.dropout2 = nn.Dropout(0.5)
        self.fc1 = nn.Linear(8 * 4 * 4, 32)
        self.fc2 = nn.Linear(32, 10)

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


model = Net().to(device)
numpy_init(torch, model)

# a "trained" model: a few full-batch Adam steps in eval mode (no dropout draws)
rng = np.random.default_rng(0)
images = rng.uniform(0, 1, size=(24, 1, 12, 12)).astype(np.float32)
labels = rng.integers(0, 10, 24)
mean, std = 0.1307, 0.3081
inputs = torch.from_numpy(images)
targets = torch.from_numpy(labels)
opt = optim.Adam(model.parameters(), lr=0.01)
model.eval()
train_losses = []
for step in range(15):
    opt.zero_grad()
    loss = F.nll_loss(model((inputs - mean) / std), targets)
    loss.backward()
    opt.step()
    train_losses.append(loss.item())
show('train_losses', train_losses)


# FGSM attack code
def fgsm_attack(image, epsilon, data_grad):
    # Collect the element-wise sign of the data gradient
    sign_data_grad = data_grad.sign()
    # Create the perturbed image by adjusting each pixel of the input image
    perturbed_image = image + epsilon * sign_data_grad
    # Adding clipping to maintain [0,1] range
    perturbed_image = torch.clamp(perturbed_image, 0, 1)
    # Return the perturbed image
    return perturbed_image


# restores the tensors to their original scale
def denorm(batch, mean=[0.1307], std=[0.3081]):
    if isinstance(mean, list):
        mean = torch.tensor(mean).to(device)
    if isinstance(std, list):
        std = torch.tensor(std).to(device)
    return batch * std.view(1, -1, 1, 1) + mean.view(1, -1, 1, 1)


def test(model, device, test_loader, epsilon):
    # Accuracy counter
    correct = 0
    adv_examples = []
    for data, target in test_loader:
        data, target = data.to(device), target.to(device)
        # Set requires_grad attribute of tensor. Important for Attack
        data.requires_grad = True
        output = model(data)
        init_pred = output.max(1, keepdim=True)[1]  # get the index of the max log-probability
        # If the initial prediction is wrong, don't bother attacking, just move on
        if init_pred.item() != target.item():
            continue
        loss = F.nll_loss(output, target)
        model.zero_grad()
        loss.backward()
        data_grad = data.grad.data
        data_denorm = denorm(data)
        perturbed_data = fgsm_attack(data_denorm, epsilon, data_grad)
        # Reapply normalization
        perturbed_data_normalized = (perturbed_data - mean) / std
        output = model(perturbed_data_normalized)
        final_pred = output.max(1, keepdim=True)[1]
        if final_pred.item() == target.item():
            correct += 1
            # Special case for saving 0 epsilon examples
            if epsilon == 0 and len(adv_examples) < 5:
                adv_ex = perturbed_data.squeeze().detach().cpu().numpy()
                adv_examples.append((init_pred.item(), final_pred.item(), adv_ex))
        else:
            # Save some adv examples for visualization later
            if len(adv_examples) < 5:
                adv_ex = perturbed_data.squeeze().detach().cpu().numpy()
                adv_examples.append((init_pred.item(), final_pred.item(), adv_ex))
    final_acc = correct / float(len(test_loader))
    print(f"Epsilon: {epsilon}\tTest Accuracy = {correct} / {len(test_loader)} = {final_acc}")
    return final_acc, adv_examples


test_loader = [(((inputs[i:i + 1] - mean) / std).detach().clone(), targets[i:i + 1]) for i in range(len(labels))]
accuracies = []
examples = []
for eps in epsilons:
    acc, ex = test(model, device, test_loader, eps)
    accuracies.append(acc)
    examples.append(ex)
show('accuracies', accuracies)
show('n_examples', [len(e) for e in examples])
show('adv_pixels', [float(np.abs(ex[0][2]).sum()) for ex in examples if ex])
show('adv_preds', [p for ex in examples for (p, f, _) in ex[:2]])

# one batch at once, the gradient checked
x = ((inputs[:4] - mean) / std).clone().requires_grad_(True)
loss = F.nll_loss(model(x), targets[:4], reduction='sum')
loss.backward()
show('grad_sign_counts', [(x.grad > 0).sum().item(), (x.grad < 0).sum().item(), (x.grad == 0).sum().item()])
show('grad_row', x.grad[1, 0, 5])
adv = fgsm_attack(denorm(x.detach()), 0.1, x.grad)
show('adv_range', [adv.min().item(), adv.max().item()])
show('adv_mean', adv.mean())
