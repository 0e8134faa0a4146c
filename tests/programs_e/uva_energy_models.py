"""UvA Deep Learning course, tutorial 8 "Deep Energy-Based Generative Models", on generated 28x28
"digits" with the Lightning module as a plain loop: a Swish module and the strided CNNModel
returning ``squeeze(dim=-1)``; the Sampler's Langevin dynamics (parameters set to
``requires_grad = False``, ``inp_imgs.requires_grad = True``, ``torch.is_grad_enabled`` /
``torch.set_grad_enabled(True)`` saved and restored, a noise buffer refilled by
``noise.normal_(0, std)``, ``inp_imgs.data.add_`` / ``clamp_``, ``inp_imgs.grad.data.clamp_``,
``grad.detach_(); grad.zero_()``, ``model.train(is_training)``, per-step ``torch.stack``) run with
zero noise so that both libraries follow the same path; the replay buffer (``random.choices``,
``chunk(sample_size, dim=0)``); the contrastive-divergence loss with its regulariser on
``cnn(torch.cat([real, fake])).chunk(2, dim=0)``, Adam with ``betas=(0.0, 0.999)`` and StepLR;
then the tutorial's randomised training step and the outlier scores (``torch.rand_like``) as
checked-only lines.

    python uva_energy_models.py [torch|numbagrad]
"""
import random

import numpy as np

from _common import BACKEND, numpy_init, show

if BACKEND == "torch":
    import torch
    import torch.nn as nn
    import torch.optim as optim
else:
    import numbagrad as torch
    import numbagrad.nn as nn
    import numbagrad.optim as optim

device = torch.device("cpu")
rng = np.random.default_rng(42)
random.seed(42)
np.random.seed(42)


class Swish(nn.Module):

    def forward(self, x):
        return x * torch.sigmoid(x)


class CNNModel(nn.Module):

    def __init__(self, hidden_features=32, out_dim=1, **kwargs):
        super().__init__()
        # We increase the hidden dimension over layers. Here pre-calculated for simplicity.
        c_hid1 = hidden_features // 2
        c_hid2 = hidden_features
        c_hid3 = hidden_features * 2

        # Series of convolutions and Swish activation functions
        self.cnn_layers = nn.Sequential(
            nn.Conv2d(1, c_hid1, kernel_size=5, stride=2, padding=4),  # [16x16] - Larger padding to get 32x32 image
            Swish(),
            nn.Conv2d(c_hid1, c_hid2, kernel_size=3, stride=2, padding=1),  # [8x8]
            Swish(),
            nn.Conv2d(c_hid2, c_hid3, kernel_size=3, stride=2, padding=1),  # [4x4]
            Swish(),
            nn.Conv2d(c_hid3, c_hid3, kernel_size=3, stride=2, padding=1),  # [2x2]
            Swish(),
            nn.Flatten(),
            nn.Linear(c_hid3 * 4, c_hid3),
            Swish(),
            nn.Linear(c_hid3, out_dim)
        )

    def forward(self, x):
        x = self.cnn_layers(x).squeeze(dim=-1)
        return x


class Sampler:

    def __init__(self, model, img_shape, sample_size, max_len=8192):
        """
        Inputs:
            model - Neural network to use for modeling E_theta
            img_shape - Shape of the images to model
            sample_size - Batch size of the samples
            max_len - Maximum number of data points to keep in the buffer
        """
        super().__init__()
        self.model = model
        self.img_shape = img_shape
        self.sample_size = sample_size
        self.max_len = max_len
        self.examples = [(torch.rand((1,) + img_shape) * 2 - 1) for _ in range(self.sample_size)]

    def sample_new_exmps(self, steps=60, step_size=10):
        """
        Function for getting a new batch of "fake" images.
        Inputs:
            steps - Number of iterations in the MCMC algorithm
            step_size - Learning rate nu in the algorithm above
        """
        # Choose 95% of the batch from the buffer, 5% generate from scratch
        n_new = np.random.binomial(self.sample_size, 0.05)
        rand_imgs = torch.rand((n_new,) + self.img_shape) * 2 - 1
        old_imgs = torch.cat(random.choices(self.examples, k=self.sample_size - n_new), dim=0)
        inp_imgs = torch.cat([rand_imgs, old_imgs], dim=0).detach().to(device)

        # Perform MCMC sampling
        inp_imgs = Sampler.generate_samples(self.model, inp_imgs, steps=steps, step_size=step_size)

        # Add new images to the buffer and remove old ones if needed
        self.examples = list(inp_imgs.to(torch.device("cpu")).chunk(self.sample_size, dim=0)) + self.examples
        self.examples = self.examples[:self.max_len]
        return inp_imgs

    @staticmethod
    def generate_samples(model, inp_imgs, steps=60, step_size=10, return_img_per_step=False, noise_std=0.005):
        """
        Function for sampling images for a given model.
        Inputs:
            model - Neural network to use for modeling E_theta
            inp_imgs - Images to start from for sampling. If you want to generate new images, enter noise between -1 and 1.
            steps - Number of iterations in the MCMC algorithm.
            step_size - Learning rate nu in the algorithm above
            return_img_per_step - If True, we return the sample at every iteration of the MCMC
            noise_std - (0.005 in the tutorial; 0 for a path both libraries can follow)
        """
        # Before MCMC: set model parameters to "required_grad=False"
        # because we are only interested in the gradients of the input.
        is_training = model.training
        model.eval()
        for p in model.parameters():
            p.requires_grad = False
        inp_imgs.requires_grad = True

        # Enable gradient calculation if not already the case
        had_gradients_enabled = torch.is_grad_enabled()
        torch.set_grad_enabled(True)

        # We use a buffer tensor in which we generate noise each loop iteration.
        # More efficient than creating a new tensor every iteration.
        noise = torch.randn(inp_imgs.shape, device=inp_imgs.device)

        # List for storing generations at each step (for later analysis)
        imgs_per_step = []

        # Loop over K (steps)
        for _ in range(steps):
            # Part 1: Add noise to the input.
            noise.normal_(0, noise_std)
            inp_imgs.data.add_(noise.data)
            inp_imgs.data.clamp_(min=-1.0, max=1.0)

            # Part 2: calculate gradients for the current input.
            out_imgs = -model(inp_imgs)
            out_imgs.sum().backward()
            inp_imgs.grad.data.clamp_(-0.03, 0.03)  # For stabilizing and preventing too high gradients

            # Apply gradients to our current samples
            inp_imgs.data.add_(-step_size * inp_imgs.grad.data)
            inp_imgs.grad.detach_()
            inp_imgs.grad.zero_()
            inp_imgs.data.clamp_(min=-1.0, max=1.0)

            if return_img_per_step:
                imgs_per_step.append(inp_imgs.clone().detach())

        # Reactivate gradients for parameters for training
        for p in model.parameters():
            p.requires_grad = True
        model.train(is_training)

        # Reset gradient calculation to setting before this function
        torch.set_grad_enabled(had_gradients_enabled)

        if return_img_per_step:
            return torch.stack(imgs_per_step, dim=0)
        else:
            return inp_imgs


# --- the data: strokes on 28x28 canvases, scaled to [-1, 1]
def make_digits(n):
    imgs = np.zeros((n, 1, 28, 28), np.float32)
    for i in range(n):
        r0, c0 = rng.integers(4, 10, size=2)
        length = rng.integers(10, 16)
        if i % 2:
            imgs[i, 0, r0:r0 + length, c0:c0 + 3] = 1
        else:
            imgs[i, 0, r0:r0 + 3, c0:c0 + length] = 1
    return torch.from_numpy(imgs * 2 - 1)


train_imgs = make_digits(32)
show("data_range", [train_imgs.min(), train_imgs.max(), train_imgs.mean()])

model = CNNModel(hidden_features=8)
numpy_init(torch, model, seed=0)
energies = model(train_imgs[:4])
show("cnn_out_shape", list(energies.shape))
show("cnn_energies", energies)

# --- Langevin sampling, noise switched off so that both libraries take the same path
start = torch.from_numpy(rng.uniform(-1, 1, size=(4, 1, 28, 28)).astype(np.float32))
model.train()
with torch.no_grad():
    imgs_per_step = Sampler.generate_samples(model, start.clone(), steps=12, step_size=10,
                                             return_img_per_step=True, noise_std=0.0)
    show("grad_mode_restored", float(torch.is_grad_enabled()))
show("model_training_restored", float(model.training))
show("params_require_grad_again", [p.requires_grad for p in model.parameters()][:4])
show("imgs_per_step_shape", list(imgs_per_step.shape))
show("imgs_per_step_requires_grad", float(imgs_per_step.requires_grad))
with torch.no_grad():
    step_energies = torch.stack([model(x) for x in imgs_per_step[::3]])
show("energies_along_chain", step_energies)
show("samples_mean_abs", imgs_per_step[-1].abs().mean(dim=(1, 2, 3)))
show("samples_clamped", float(imgs_per_step.abs().max() <= 1.0))
show("saturated_fraction", (imgs_per_step[-1].abs() == 1).float().mean())

inp = start.clone()
out = Sampler.generate_samples(model, inp, steps=5, step_size=10, noise_std=0.0)
show("returned_is_input", float(out is inp))
show("input_requires_grad_after", float(inp.requires_grad))
show("input_grad_zeroed", inp.grad.abs().sum())
show("chain_matches_per_step", float(torch.allclose(out, imgs_per_step[4], atol=1e-6)))


# --- the training step (contrastive divergence), deterministic: NumPy noise on the real images,
# samples from a buffer picked by Python's random.choices, Langevin without noise
def training_step(cnn, real_imgs, fake_imgs, alpha):
    inp_imgs = torch.cat([real_imgs, fake_imgs], dim=0)
    real_out, fake_out = cnn(inp_imgs).chunk(2, dim=0)

    # Calculate losses
    reg_loss = alpha * (real_out ** 2 + fake_out ** 2).mean()
    cdiv_loss = fake_out.mean() - real_out.mean()
    loss = reg_loss + cdiv_loss
    return loss, reg_loss, cdiv_loss, real_out.mean(), fake_out.mean()


cnn = CNNModel(hidden_features=8)
numpy_init(torch, cnn, seed=1)
# configure_optimizers: Energy models can have issues with momentum as the loss surfaces changes with its parameters.
# Hence, we set it to 0 by default.
optimizer = optim.Adam(cnn.parameters(), lr=1e-3, betas=(0.0, 0.999))
scheduler = optim.lr_scheduler.StepLR(optimizer, 1, gamma=0.97)  # Exponential decay over epochs
buffer = list(torch.from_numpy(rng.uniform(-1, 1, size=(16, 1, 28, 28)).astype(np.float32)).chunk(16, dim=0))
batch_size = 8
history = []
for step in range(4):
    real_imgs = train_imgs[step * batch_size:(step + 1) * batch_size].clone()
    small_noise = torch.from_numpy(rng.normal(size=real_imgs.shape).astype(np.float32)) * 0.005
    real_imgs.add_(small_noise).clamp_(min=-1.0, max=1.0)
    old_imgs = torch.cat(random.choices(buffer, k=batch_size), dim=0)
    fake_imgs = Sampler.generate_samples(cnn, old_imgs.detach(), steps=6, step_size=10, noise_std=0.0)
    buffer = list(fake_imgs.chunk(batch_size, dim=0)) + buffer
    buffer = buffer[:24]

    cnn.train()
    optimizer.zero_grad()
    loss, reg_loss, cdiv_loss, real_mean, fake_mean = training_step(cnn, real_imgs, fake_imgs.detach(), alpha=0.1)
    loss.backward()
    optimizer.step()
    scheduler.step()
    history.append([loss.item(), reg_loss.item(), cdiv_loss.item(), real_mean.item(), fake_mean.item(),
                    scheduler.get_last_lr()[0]])
show("train_history", history)
show("buffer_len", len(buffer))
show("trained_last_bias", cnn.cnn_layers[-1].bias)

# validation_step: for validating, we calculate the contrastive divergence between purely random
# images and unseen examples (random images: checked only for being finite)
with torch.no_grad():
    real_imgs = make_digits(8)
    fake_imgs = torch.rand_like(real_imgs) * 2 - 1
    inp_imgs = torch.cat([real_imgs, fake_imgs], dim=0)
    real_out, fake_out = cnn(inp_imgs).chunk(2, dim=0)
    cdiv = fake_out.mean() - real_out.mean()
show("~val_contrastive_divergence", [cdiv.item()])
show("val_real_out", real_out)

# --- the tutorial's own sampler, with noise and fresh random images: finite results only
torch.manual_seed(0)
sampler = Sampler(cnn, img_shape=(1, 28, 28), sample_size=8, max_len=32)
show("sampler_buffer_len", len(sampler.examples))
fake = sampler.sample_new_exmps(steps=4, step_size=10)
show("sampler_shape", list(fake.shape))
show("sampler_buffer_grew", len(sampler.examples))
show("~sampler_fake_energy", [cnn(fake).mean().item()])
show("sampler_clamped", float(fake.abs().max() <= 1.0))


# --- out-of-distribution detection
@torch.no_grad()
def compare_images(img1, img2):
    imgs = torch.stack([img1, img2], dim=0).to(device)
    score1, score2 = cnn(imgs).cpu().chunk(2, dim=0)
    return score1.item(), score2.item()


test_imgs = make_digits(2)
score1, score2 = compare_images(test_imgs[0], test_imgs[0].flip(-1))
show("scores_flipped", [score1, score2])
score1, score2 = compare_images(test_imgs[1], test_imgs[1] * -1)
show("scores_inverted", [score1, score2])
with torch.no_grad():
    rand_imgs = torch.rand((16,) + (1, 28, 28)).to(device)
    rand_imgs = rand_imgs * 2 - 1.0
    rand_out = cnn(rand_imgs).mean()
show("~average_score_random", [rand_out.item()])
