"""zalandoresearch/pytorch-vq-vae (``vq-vae.ipynb``), the VQ-VAE of van den Oord et al. on
generated 3x16x16 "CIFAR" images in place of the download: the VectorQuantizer (BCHW -> BHWC by
``permute(...).contiguous()``, distances ``sum(x**2, keepdim) + sum(e**2) - 2 x e^T``,
``argmin(...).unsqueeze(1)`` scattered into one-hot ``encodings`` by ``scatter_``, the codebook
and commitment ``mse_loss`` terms with ``detach``, the straight-through ``inputs + (quantized -
inputs).detach()``, the perplexity of the average code use); the VectorQuantizerEMA (a
``_ema_cluster_size`` buffer reassigned each step, Laplace smoothing by ``.data`` sums, the
``_ema_w`` and codebook replaced by new ``nn.Parameter``s made from tensors in ``forward``);
Residual/ResidualStack with ``nn.ReLU(True)``, the strided Conv2d Encoder and the
ConvTranspose2d Decoder; the Model with ``_pre_vq_conv``; training with ``optim.Adam(amsgrad=
False)`` on ``mse_loss(data_recon, data) / data_variance + vq_loss``, recording reconstruction
error and perplexity; then evaluation of a validation batch through ``model._vq_vae`` and the
decoder, and the codebook's pairwise distances.

    python vq_vae.py [torch|numbagrad]
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

device = torch.device("cpu")


class VectorQuantizer(nn.Module):
    def __init__(self, num_embeddings, embedding_dim, commitment_cost):
        super(VectorQuantizer, self).__init__()

        self._embedding_dim = embedding_dim
        self._num_embeddings = num_embeddings

        self._embedding = nn.Embedding(self._num_embeddings, self._embedding_dim)
        self._embedding.weight.data.uniform_(-1/self._num_embeddings, 1/self._num_embeddings)
        self._commitment_cost = commitment_cost

    def forward(self, inputs):
        # convert inputs from BCHW -> BHWC
        inputs = inputs.permute(0, 2, 3, 1).contiguous()
        input_shape = inputs.shape

        # Flatten input
        flat_input = inputs.view(-1, self._embedding_dim)

        # Calculate distances
        distances = (torch.sum(flat_input**2, dim=1, keepdim=True)
                     + torch.sum(self._embedding.weight**2, dim=1)
                     - 2 * torch.matmul(flat_input, self._embedding.weight.t()))

        # Encoding
        encoding_indices = torch.argmin(distances, dim=1).unsqueeze(1)
        encodings = torch.zeros(encoding_indices.shape[0], self._num_embeddings, device=inputs.device)
        encodings.scatter_(1, encoding_indices, 1)

        # Quantize and unflatten
        quantized = torch.matmul(encodings, self._embedding.weight).view(input_shape)

        # Loss
        e_latent_loss = F.mse_loss(quantized.detach(), inputs)
        q_latent_loss = F.mse_loss(quantized, inputs.detach())
        loss = q_latent_loss + self._commitment_cost * e_latent_loss

        quantized = inputs + (quantized - inputs).detach()
        avg_probs = torch.mean(encodings, dim=0)
        perplexity = torch.exp(-torch.sum(avg_probs * torch.log(avg_probs + 1e-10)))

        # convert quantized from BHWC -> BCHW
        return loss, quantized.permute(0, 3, 1, 2).contiguous(), perplexity, encodings


class VectorQuantizerEMA(nn.Module):
    def __init__(self, num_embeddings, embedding_dim, commitment_cost, decay, epsilon=1e-5):
        super(VectorQuantizerEMA, self).__init__()

        self._embedding_dim = embedding_dim
        self._num_embeddings = num_embeddings

        self._embedding = nn.Embedding(self._num_embeddings, self._embedding_dim)
        self._embedding.weight.data.normal_()
        self._commitment_cost = commitment_cost

        self.register_buffer('_ema_cluster_size', torch.zeros(num_embeddings))
        self._ema_w = nn.Parameter(torch.Tensor(num_embeddings, self._embedding_dim))
        self._ema_w.data.normal_()

        self._decay = decay
        self._epsilon = epsilon

    def forward(self, inputs):
        # convert inputs from BCHW -> BHWC
        inputs = inputs.permute(0, 2, 3, 1).contiguous()
        input_shape = inputs.shape

        # Flatten input
        flat_input = inputs.view(-1, self._embedding_dim)

        # Calculate distances
        distances = (torch.sum(flat_input**2, dim=1, keepdim=True)
                     + torch.sum(self._embedding.weight**2, dim=1)
                     - 2 * torch.matmul(flat_input, self._embedding.weight.t()))

        # Encoding
        encoding_indices = torch.argmin(distances, dim=1).unsqueeze(1)
        encodings = torch.zeros(encoding_indices.shape[0], self._num_embeddings, device=inputs.device)
        encodings.scatter_(1, encoding_indices, 1)

        # Quantize and unflatten
        quantized = torch.matmul(encodings, self._embedding.weight).view(input_shape)

        # Use EMA to update the embedding vectors
        if self.training:
            self._ema_cluster_size = self._ema_cluster_size * self._decay + \
                                     (1 - self._decay) * torch.sum(encodings, 0)

            # Laplace smoothing of the cluster size
            n = torch.sum(self._ema_cluster_size.data)
            self._ema_cluster_size = (
                (self._ema_cluster_size + self._epsilon)
                / (n + self._num_embeddings * self._epsilon) * n)

            dw = torch.matmul(encodings.t(), flat_input)
            self._ema_w = nn.Parameter(self._ema_w * self._decay + (1 - self._decay) * dw)

            self._embedding.weight = nn.Parameter(self._ema_w / self._ema_cluster_size.unsqueeze(1))

        # Loss
        e_latent_loss = F.mse_loss(quantized.detach(), inputs)
        loss = self._commitment_cost * e_latent_loss

        # Straight Through Estimator
        quantized = inputs + (quantized - inputs).detach()
        avg_probs = torch.mean(encodings, dim=0)
        perplexity = torch.exp(-torch.sum(avg_probs * torch.log(avg_probs + 1e-10)))

        # convert quantized from BHWC -> BCHW
        return loss, quantized.permute(0, 3, 1, 2).contiguous(), perplexity, encodings


class Residual(nn.Module):
    def __init__(self, in_channels, num_hiddens, num_residual_hiddens):
        super(Residual, self).__init__()
        self._block = nn.Sequential(
            nn.ReLU(True),
            nn.Conv2d(in_channels=in_channels,
                      out_channels=num_residual_hiddens,
                      kernel_size=3, stride=1, padding=1, bias=False),
            nn.ReLU(True),
            nn.Conv2d(in_channels=num_residual_hiddens,
                      out_channels=num_hiddens,
                      kernel_size=1, stride=1, bias=False)
        )

    def forward(self, x):
        return x + self._block(x)


class ResidualStack(nn.Module):
    def __init__(self, in_channels, num_hiddens, num_residual_layers, num_residual_hiddens):
        super(ResidualStack, self).__init__()
        self._num_residual_layers = num_residual_layers
        self._layers = nn.ModuleList([Residual(in_channels, num_hiddens, num_residual_hiddens)
                                      for _ in range(self._num_residual_layers)])

    def forward(self, x):
        for i in range(self._num_residual_layers):
            x = self._layers[i](x)
        return F.relu(x)


class Encoder(nn.Module):
    def __init__(self, in_channels, num_hiddens, num_residual_layers, num_residual_hiddens):
        super(Encoder, self).__init__()

        self._conv_1 = nn.Conv2d(in_channels=in_channels,
                                 out_channels=num_hiddens//2,
                                 kernel_size=4,
                                 stride=2, padding=1)
        self._conv_2 = nn.Conv2d(in_channels=num_hiddens//2,
                                 out_channels=num_hiddens,
                                 kernel_size=4,
                                 stride=2, padding=1)
        self._conv_3 = nn.Conv2d(in_channels=num_hiddens,
                                 out_channels=num_hiddens,
                                 kernel_size=3,
                                 stride=1, padding=1)
        self._residual_stack = ResidualStack(in_channels=num_hiddens,
                                             num_hiddens=num_hiddens,
                                             num_residual_layers=num_residual_layers,
                                             num_residual_hiddens=num_residual_hiddens)

    def forward(self, inputs):
        x = self._conv_1(inputs)
        x = F.relu(x)

        x = self._conv_2(x)
        x = F.relu(x)

        x = self._conv_3(x)
        return self._residual_stack(x)


class Decoder(nn.Module):
    def __init__(self, in_channels, num_hiddens, num_residual_layers, num_residual_hiddens):
        super(Decoder, self).__init__()

        self._conv_1 = nn.Conv2d(in_channels=in_channels,
                                 out_channels=num_hiddens,
                                 kernel_size=3,
                                 stride=1, padding=1)

        self._residual_stack = ResidualStack(in_channels=num_hiddens,
                                             num_hiddens=num_hiddens,
                                             num_residual_layers=num_residual_layers,
                                             num_residual_hiddens=num_residual_hiddens)

        self._conv_trans_1 = nn.ConvTranspose2d(in_channels=num_hiddens,
                                                out_channels=num_hiddens//2,
                                                kernel_size=4,
                                                stride=2, padding=1)

        self._conv_trans_2 = nn.ConvTranspose2d(in_channels=num_hiddens//2,
                                                out_channels=3,
                                                kernel_size=4,
                                                stride=2, padding=1)

    def forward(self, inputs):
        x = self._conv_1(inputs)

        x = self._residual_stack(x)

        x = self._conv_trans_1(x)
        x = F.relu(x)

        return self._conv_trans_2(x)


class Model(nn.Module):
    def __init__(self, num_hiddens, num_residual_layers, num_residual_hiddens,
                 num_embeddings, embedding_dim, commitment_cost, decay=0):
        super(Model, self).__init__()

        self._encoder = Encoder(3, num_hiddens,
                                num_residual_layers,
                                num_residual_hiddens)
        self._pre_vq_conv = nn.Conv2d(in_channels=num_hiddens,
                                      out_channels=embedding_dim,
                                      kernel_size=1,
                                      stride=1)
        if decay > 0.0:
            self._vq_vae = VectorQuantizerEMA(num_embeddings, embedding_dim,
                                              commitment_cost, decay)
        else:
            self._vq_vae = VectorQuantizer(num_embeddings, embedding_dim,
                                           commitment_cost)
        self._decoder = Decoder(embedding_dim,
                                num_hiddens,
                                num_residual_layers,
                                num_residual_hiddens)

    def forward(self, x):
        z = self._encoder(x)
        z = self._pre_vq_conv(z)
        loss, quantized, perplexity, _ = self._vq_vae(z)
        x_recon = self._decoder(quantized)

        return loss, x_recon, perplexity


# ---- data: smooth random colour blobs, normalised like the notebook's (x - 0.5) / 1.0
rng = np.random.default_rng(0)


def make_images(n):
    yy, xx = np.mgrid[0:16, 0:16] / 15.0
    imgs = np.empty((n, 3, 16, 16), dtype=np.float32)
    for i in range(n):
        cx, cy, r = rng.uniform(0.2, 0.8), rng.uniform(0.2, 0.8), rng.uniform(0.15, 0.4)
        blob = np.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / (2 * r * r))
        colour = rng.uniform(0, 1, 3)
        imgs[i] = colour[:, None, None] * blob + 0.05 * rng.normal(size=(3, 16, 16))
    return imgs - 0.5


train_images = make_images(64)
valid_images = make_images(8)
data_variance = np.var(train_images + 0.5)
show("data_variance", data_variance)

batch_size = 16
num_training_updates = 10
num_hiddens = 16
num_residual_hiddens = 8
num_residual_layers = 2
embedding_dim = 4
num_embeddings = 16
commitment_cost = 0.25
learning_rate = 1e-3


def batch(i):
    idx = np.arange(i * batch_size, (i + 1) * batch_size) % len(train_images)
    return torch.from_numpy(train_images[idx]).to(device)


for decay in (0.0, 0.99):
    tag = "ema" if decay else "vq"
    model = Model(num_hiddens, num_residual_layers, num_residual_hiddens,
                  num_embeddings, embedding_dim,
                  commitment_cost, decay).to(device)
    numpy_init(torch, model, seed=1)
    with torch.no_grad():  # the codebook: encoder outputs of the first batch, picked by NumPy
        z = model._pre_vq_conv(model._encoder(batch(0))).permute(0, 2, 3, 1).reshape(-1, embedding_dim)
        pick = np.random.default_rng(2).choice(z.shape[0], num_embeddings, replace=False)
        book = z[torch.from_numpy(pick)]
        model._vq_vae._embedding.weight.copy_(book)
        if decay:
            model._vq_vae._ema_w.copy_(book)
    show(f"{tag}_param_count", sum(p.numel() for p in model.parameters()))
    show(f"{tag}_buffers:" + (",".join(n for n, _ in model.named_buffers()) or "none"),
         len(list(model.named_buffers())))
    optimizer = optim.Adam(model.parameters(), lr=learning_rate, amsgrad=False)

    model.train()
    train_res_recon_error = []
    train_res_perplexity = []

    for i in range(num_training_updates):
        data = batch(i)
        optimizer.zero_grad()

        vq_loss, data_recon, perplexity = model(data)
        recon_error = F.mse_loss(data_recon, data) / data_variance
        loss = recon_error + vq_loss
        loss.backward()

        optimizer.step()

        train_res_recon_error.append(recon_error.item())
        train_res_perplexity.append(perplexity.item())

        if (i + 1) % 5 == 0:
            print('%d iterations' % (i + 1))
            print('recon_error: %.3f' % np.mean(train_res_recon_error[-5:]))
            print('perplexity: %.3f' % np.mean(train_res_perplexity[-5:]))
            print()
    show(f"{tag}_recon_error", train_res_recon_error)
    show(f"{tag}_perplexity", train_res_perplexity)
    show(f"{tag}_codebook", model._vq_vae._embedding.weight[:3])
    show(f"{tag}_codebook_requires_grad", float(model._vq_vae._embedding.weight.requires_grad))
    show(f"{tag}_codebook_grad_is_none", float(model._vq_vae._embedding.weight.grad is None))
    show(f"{tag}_pre_vq_grad", model._pre_vq_conv.weight.grad[:, :4, 0, 0])
    show(f"{tag}_decoder_weight", model._decoder._conv_trans_2.weight[0, 0, 0])
    if decay:
        show("ema_cluster_size", model._vq_vae._ema_cluster_size)
        show("ema_w", model._vq_vae._ema_w[:2])
        show("ema_w_is_leaf", float(model._vq_vae._ema_w.is_leaf))
        show("ema_state_dict:" + ",".join(k for k in model.state_dict() if "_vq_vae" in k),
             len(model.state_dict()))

    # ---- view reconstructions
    model.eval()
    valid_originals = torch.from_numpy(valid_images).to(device)
    vq_output_eval = model._pre_vq_conv(model._encoder(valid_originals))
    _, valid_quantize, _, encodings = model._vq_vae(vq_output_eval)
    valid_reconstructions = model._decoder(valid_quantize)
    show(f"{tag}_valid_codes", encodings.argmax(dim=1)[:16])
    show(f"{tag}_valid_recon_error",
         F.mse_loss(valid_reconstructions, valid_originals) / data_variance)
    show(f"{tag}_valid_quantize", valid_quantize[0, :, 0, :3])
    grad_in = torch.autograd.grad(valid_reconstructions.sum(), vq_output_eval)[0]
    show(f"{tag}_straight_through_grad", grad_in[0, :, 0, :3])

    # ---- the codebook's pairwise distances (the notebook projects them with UMAP)
    with torch.no_grad():
        w = model._vq_vae._embedding.weight
        dists = torch.cdist(w, w)
        show(f"{tag}_codebook_dist", dists[0, :6])
