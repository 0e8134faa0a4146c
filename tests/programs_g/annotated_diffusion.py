"""Hugging Face blog "The Annotated Diffusion Model" (DDPM), on generated 1x8x8 images in place
of Fashion-MNIST, with the einops calls written as ``reshape``/``permute``/``einsum`` and the
random draws (``torch.randn_like``, ``torch.randint``) made by NumPy: the helpers (``exists``,
``default``, ``num_to_groups``), Residual, Upsample (``nn.Upsample(scale_factor=2,
mode="nearest")`` + conv) and the pixel-unshuffle Downsample, SinusoidalPositionEmbeddings,
WeightStandardizedConv2d (mean and ``torch.var(unbiased=False)`` over each filter, ``rsqrt``,
``F.conv2d``), Block with GroupNorm, SiLU and the time ``scale_shift`` from ``chunk(2, dim=1)``,
ResnetBlock, Attention (``sim - sim.amax(dim=-1, keepdim=True).detach()``) and LinearAttention
(softmax over ``dim=-2`` and ``dim=-1``, two einsums, GroupNorm(1, dim)), PreNorm and the Unet
with its skip list; the linear, quadratic, sigmoid and cosine beta schedules (``torch.clip``),
``cumprod``, ``F.pad(alphas_cumprod[:-1], (1, 0), value=1.0)``, ``extract`` by ``gather``,
``q_sample``, ``p_losses`` (l1, l2 and huber through ``smooth_l1_loss``), training with Adam,
and ``p_sample``/``p_sample_loop`` under ``@torch.no_grad()``.

    python annotated_diffusion.py [torch|numbagrad]
"""
import math
from functools import partial
from inspect import isfunction

import numpy as np

from _common import BACKEND, numpy_init, show

if BACKEND == "torch":
    import torch
    import torch.nn.functional as F
    from torch import einsum, nn
    from torch.optim import Adam
else:
    import numbagrad as torch
    import numbagrad.nn.functional as F
    from numbagrad import einsum, nn
    from numbagrad.optim import Adam

noise_rng = np.random.default_rng(0)


def randn_like(x):
    """torch.randn_like, from NumPy's generator (the libraries' generators differ)."""
    return torch.from_numpy(noise_rng.standard_normal(tuple(x.shape)).astype(np.float32))


def exists(x):
    return x is not None


def default(val, d):
    if exists(val):
        return val
    return d() if isfunction(d) else d


def num_to_groups(num, divisor):
    groups = num // divisor
    remainder = num % divisor
    arr = [divisor] * groups
    if remainder > 0:
        arr.append(remainder)
    return arr


class Residual(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x, *args, **kwargs):
        return self.fn(x, *args, **kwargs) + x


def Upsample(dim, dim_out=None):
    return nn.Sequential(
        nn.Upsample(scale_factor=2, mode="nearest"),
        nn.Conv2d(dim, default(dim_out, dim), 3, padding=1),
    )


class Rearrange(nn.Module):
    """einops' Rearrange("b c (h p1) (w p2) -> b (c p1 p2) h w", p1=2, p2=2)."""

    def forward(self, x):
        b, c, h, w = x.shape
        x = x.reshape(b, c, h // 2, 2, w // 2, 2).permute(0, 1, 3, 5, 2, 4)
        return x.reshape(b, c * 4, h // 2, w // 2)


def Downsample(dim, dim_out=None):
    # No More Strided Convolutions or Pooling
    return nn.Sequential(
        Rearrange(),
        nn.Conv2d(dim * 4, default(dim_out, dim), 1),
    )


class SinusoidalPositionEmbeddings(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, time):
        device = time.device
        half_dim = self.dim // 2
        embeddings = math.log(10000) / (half_dim - 1)
        embeddings = torch.exp(torch.arange(half_dim, device=device) * -embeddings)
        embeddings = time[:, None] * embeddings[None, :]
        embeddings = torch.cat((embeddings.sin(), embeddings.cos()), dim=-1)
        return embeddings


class WeightStandardizedConv2d(nn.Conv2d):
    """
    https://arxiv.org/abs/1903.10520
    weight standardization purportedly works synergistically with group normalization
    """

    def forward(self, x):
        eps = 1e-5 if x.dtype == torch.float32 else 1e-3

        weight = self.weight
        mean = weight.mean(dim=(1, 2, 3), keepdim=True)  # reduce(weight, "o ... -> o 1 1 1", "mean")
        var = torch.var(weight, dim=(1, 2, 3), keepdim=True, unbiased=False)
        normalized_weight = (weight - mean) * (var + eps).rsqrt()

        return F.conv2d(
            x,
            normalized_weight,
            self.bias,
            self.stride,
            self.padding,
            self.dilation,
            self.groups,
        )


class Block(nn.Module):
    def __init__(self, dim, dim_out, groups=8):
        super().__init__()
        self.proj = WeightStandardizedConv2d(dim, dim_out, 3, padding=1)
        self.norm = nn.GroupNorm(groups, dim_out)
        self.act = nn.SiLU()

    def forward(self, x, scale_shift=None):
        x = self.proj(x)
        x = self.norm(x)

        if exists(scale_shift):
            scale, shift = scale_shift
            x = x * (scale + 1) + shift

        x = self.act(x)
        return x


class ResnetBlock(nn.Module):
    """https://arxiv.org/abs/1512.03385"""

    def __init__(self, dim, dim_out, *, time_emb_dim=None, groups=8):
        super().__init__()
        self.mlp = (
            nn.Sequential(nn.SiLU(), nn.Linear(time_emb_dim, dim_out * 2))
            if exists(time_emb_dim)
            else None
        )

        self.block1 = Block(dim, dim_out, groups=groups)
        self.block2 = Block(dim_out, dim_out, groups=groups)
        self.res_conv = nn.Conv2d(dim, dim_out, 1) if dim != dim_out else nn.Identity()

    def forward(self, x, time_emb=None):
        scale_shift = None
        if exists(self.mlp) and exists(time_emb):
            time_emb = self.mlp(time_emb)
            time_emb = time_emb[:, :, None, None]  # rearrange(time_emb, "b c -> b c 1 1")
            scale_shift = time_emb.chunk(2, dim=1)

        h = self.block1(x, scale_shift=scale_shift)
        h = self.block2(h)
        return h + self.res_conv(x)


def heads_first(t, heads):
    """rearrange(t, "b (h c) x y -> b h c (x y)", h=heads)"""
    b, hc, x, y = t.shape
    return t.reshape(b, heads, hc // heads, x * y)


class Attention(nn.Module):
    def __init__(self, dim, heads=4, dim_head=32):
        super().__init__()
        self.scale = dim_head**-0.5
        self.heads = heads
        hidden_dim = dim_head * heads
        self.to_qkv = nn.Conv2d(dim, hidden_dim * 3, 1, bias=False)
        self.to_out = nn.Conv2d(hidden_dim, dim, 1)

    def forward(self, x):
        b, c, h, w = x.shape
        qkv = self.to_qkv(x).chunk(3, dim=1)
        q, k, v = map(lambda t: heads_first(t, self.heads), qkv)
        q = q * self.scale

        sim = einsum("b h d i, b h d j -> b h i j", q, k)
        sim = sim - sim.amax(dim=-1, keepdim=True).detach()
        attn = sim.softmax(dim=-1)

        out = einsum("b h i j, b h d j -> b h i d", attn, v)
        # rearrange(out, "b h (x y) d -> b (h d) x y", x=h, y=w)
        out = out.permute(0, 1, 3, 2).reshape(b, -1, h, w)
        return self.to_out(out)


class LinearAttention(nn.Module):
    def __init__(self, dim, heads=4, dim_head=32):
        super().__init__()
        self.scale = dim_head**-0.5
        self.heads = heads
        hidden_dim = dim_head * heads
        self.to_qkv = nn.Conv2d(dim, hidden_dim * 3, 1, bias=False)

        self.to_out = nn.Sequential(nn.Conv2d(hidden_dim, dim, 1),
                                    nn.GroupNorm(1, dim))

    def forward(self, x):
        b, c, h, w = x.shape
        qkv = self.to_qkv(x).chunk(3, dim=1)
        q, k, v = map(lambda t: heads_first(t, self.heads), qkv)

        q = q.softmax(dim=-2)
        k = k.softmax(dim=-1)

        q = q * self.scale
        context = torch.einsum("b h d n, b h e n -> b h d e", k, v)

        out = torch.einsum("b h d e, b h d n -> b h e n", context, q)
        out = out.reshape(b, -1, h, w)  # rearrange(out, "b h c (x y) -> b (h c) x y", ...)
        return self.to_out(out)


class PreNorm(nn.Module):
    def __init__(self, dim, fn):
        super().__init__()
        self.fn = fn
        self.norm = nn.GroupNorm(1, dim)

    def forward(self, x):
        x = self.norm(x)
        return self.fn(x)


class Unet(nn.Module):
    def __init__(
        self,
        dim,
        init_dim=None,
        out_dim=None,
        dim_mults=(1, 2, 4, 8),
        channels=3,
        self_condition=False,
        resnet_block_groups=4,
    ):
        super().__init__()

        # determine dimensions
        self.channels = channels
        self.self_condition = self_condition
        input_channels = channels * (2 if self_condition else 1)

        init_dim = default(init_dim, dim)
        self.init_conv = nn.Conv2d(input_channels, init_dim, 1, padding=0)  # changed to 1 and 0 from 7,3

        dims = [init_dim, *map(lambda m: dim * m, dim_mults)]
        in_out = list(zip(dims[:-1], dims[1:]))

        block_klass = partial(ResnetBlock, groups=resnet_block_groups)

        # time embeddings
        time_dim = dim * 4

        self.time_mlp = nn.Sequential(
            SinusoidalPositionEmbeddings(dim),
            nn.Linear(dim, time_dim),
            nn.GELU(),
            nn.Linear(time_dim, time_dim),
        )

        # layers
        self.downs = nn.ModuleList([])
        self.ups = nn.ModuleList([])
        num_resolutions = len(in_out)

        for ind, (dim_in, dim_out) in enumerate(in_out):
            is_last = ind >= (num_resolutions - 1)

            self.downs.append(
                nn.ModuleList(
                    [
                        block_klass(dim_in, dim_in, time_emb_dim=time_dim),
                        block_klass(dim_in, dim_in, time_emb_dim=time_dim),
                        Residual(PreNorm(dim_in, LinearAttention(dim_in))),
                        Downsample(dim_in, dim_out)
                        if not is_last
                        else nn.Conv2d(dim_in, dim_out, 3, padding=1),
                    ]
                )
            )

        mid_dim = dims[-1]
        self.mid_block1 = block_klass(mid_dim, mid_dim, time_emb_dim=time_dim)
        self.mid_attn = Residual(PreNorm(mid_dim, Attention(mid_dim)))
        self.mid_block2 = block_klass(mid_dim, mid_dim, time_emb_dim=time_dim)

        for ind, (dim_in, dim_out) in enumerate(reversed(in_out)):
            is_last = ind == (len(in_out) - 1)

            self.ups.append(
                nn.ModuleList(
                    [
                        block_klass(dim_out + dim_in, dim_out, time_emb_dim=time_dim),
                        block_klass(dim_out + dim_in, dim_out, time_emb_dim=time_dim),
                        Residual(PreNorm(dim_out, LinearAttention(dim_out))),
                        Upsample(dim_out, dim_in)
                        if not is_last
                        else nn.Conv2d(dim_out, dim_in, 3, padding=1),
                    ]
                )
            )

        self.out_dim = default(out_dim, channels)

        self.final_res_block = block_klass(dim * 2, dim, time_emb_dim=time_dim)
        self.final_conv = nn.Conv2d(dim, self.out_dim, 1)

    def forward(self, x, time, x_self_cond=None):
        if self.self_condition:
            x_self_cond = default(x_self_cond, lambda: torch.zeros_like(x))
            x = torch.cat((x_self_cond, x), dim=1)

        x = self.init_conv(x)
        r = x.clone()

        t = self.time_mlp(time)

        h = []

        for block1, block2, attn, downsample in self.downs:
            x = block1(x, t)
            h.append(x)

            x = block2(x, t)
            x = attn(x)
            h.append(x)

            x = downsample(x)

        x = self.mid_block1(x, t)
        x = self.mid_attn(x)
        x = self.mid_block2(x, t)

        for block1, block2, attn, upsample in self.ups:
            x = torch.cat((x, h.pop()), dim=1)
            x = block1(x, t)

            x = torch.cat((x, h.pop()), dim=1)
            x = block2(x, t)
            x = attn(x)

            x = upsample(x)

        x = torch.cat((x, r), dim=1)

        x = self.final_res_block(x, t)
        return self.final_conv(x)


# ---- the noise schedules
def cosine_beta_schedule(timesteps, s=0.008):
    """
    cosine schedule as proposed in https://arxiv.org/abs/2102.09672
    """
    steps = timesteps + 1
    x = torch.linspace(0, timesteps, steps)
    alphas_cumprod = torch.cos(((x / timesteps) + s) / (1 + s) * torch.pi * 0.5) ** 2
    alphas_cumprod = alphas_cumprod / alphas_cumprod[0]
    betas = 1 - (alphas_cumprod[1:] / alphas_cumprod[:-1])
    return torch.clip(betas, 0.0001, 0.9999)


def linear_beta_schedule(timesteps):
    beta_start = 0.0001
    beta_end = 0.02
    return torch.linspace(beta_start, beta_end, timesteps)


def quadratic_beta_schedule(timesteps):
    beta_start = 0.0001
    beta_end = 0.02
    return torch.linspace(beta_start**0.5, beta_end**0.5, timesteps) ** 2


def sigmoid_beta_schedule(timesteps):
    beta_start = 0.0001
    beta_end = 0.02
    betas = torch.linspace(-6, 6, timesteps)
    return torch.sigmoid(betas) * (beta_end - beta_start) + beta_start


timesteps = 40
show("cosine_betas", cosine_beta_schedule(timesteps)[::8])
show("quadratic_betas", quadratic_beta_schedule(timesteps)[::8])
show("sigmoid_betas", sigmoid_beta_schedule(timesteps)[::8])

# define beta schedule
betas = linear_beta_schedule(timesteps=timesteps)

# define alphas
alphas = 1. - betas
alphas_cumprod = torch.cumprod(alphas, axis=0)
alphas_cumprod_prev = F.pad(alphas_cumprod[:-1], (1, 0), value=1.0)
sqrt_recip_alphas = torch.sqrt(1.0 / alphas)

# calculations for diffusion q(x_t | x_{t-1}) and others
sqrt_alphas_cumprod = torch.sqrt(alphas_cumprod)
sqrt_one_minus_alphas_cumprod = torch.sqrt(1. - alphas_cumprod)

# calculations for posterior q(x_{t-1} | x_t, x_0)
posterior_variance = betas * (1. - alphas_cumprod_prev) / (1. - alphas_cumprod)
show("alphas_cumprod_prev", alphas_cumprod_prev[:4])
show("posterior_variance", posterior_variance[::8])


def extract(a, t, x_shape):
    batch_size = t.shape[0]
    out = a.gather(-1, t.cpu())
    return out.reshape(batch_size, *((1,) * (len(x_shape) - 1))).to(t.device)


# ---- the images: bars and squares, scaled to [-1, 1] by Lambda(lambda t: (t * 2) - 1)
img_rng = np.random.default_rng(1)


def make_images(n):
    out = np.zeros((n, 1, 8, 8), dtype=np.float32)
    for i in range(n):
        a, b = sorted(img_rng.choice(8, 2, replace=False))
        if i % 2:
            out[i, 0, a:b + 1, :] = 1.0
        else:
            out[i, 0, a:b + 1, a:b + 1] = 1.0
    return out * 2 - 1


x_start = torch.from_numpy(make_images(4))


# forward diffusion (using the nice property)
def q_sample(x_start, t, noise=None):
    if noise is None:
        noise = randn_like(x_start)

    sqrt_alphas_cumprod_t = extract(sqrt_alphas_cumprod, t, x_start.shape)
    sqrt_one_minus_alphas_cumprod_t = extract(
        sqrt_one_minus_alphas_cumprod, t, x_start.shape
    )

    return sqrt_alphas_cumprod_t * x_start + sqrt_one_minus_alphas_cumprod_t * noise


def get_noisy_image(x_start, t):
    # add noise
    x_noisy = q_sample(x_start, t=t)

    # turn back into an image: Lambda(lambda t: (t + 1) / 2), then clamp
    return ((x_noisy + 1) / 2).clamp(0, 1)


t = torch.tensor([0, 10, 20, 39])
show("extract_shape", list(extract(sqrt_alphas_cumprod, t, x_start.shape).shape))
show("noisy_images", get_noisy_image(x_start, t)[:, 0, 3, :4])


def p_losses(denoise_model, x_start, t, noise=None, loss_type="l1"):
    if noise is None:
        noise = randn_like(x_start)

    x_noisy = q_sample(x_start=x_start, t=t, noise=noise)
    predicted_noise = denoise_model(x_noisy, t)

    if loss_type == 'l1':
        loss = F.l1_loss(noise, predicted_noise)
    elif loss_type == 'l2':
        loss = F.mse_loss(noise, predicted_noise)
    elif loss_type == "huber":
        loss = F.smooth_l1_loss(noise, predicted_noise)
    else:
        raise NotImplementedError()

    return loss


# ---- the pieces
emb = SinusoidalPositionEmbeddings(8)(torch.tensor([0.0, 3.0, 39.0]))
show("time_embedding", emb[2])
ws = WeightStandardizedConv2d(2, 4, 3, padding=1)
numpy_init(torch, ws, seed=2)
xs = torch.from_numpy(np.random.default_rng(3).normal(size=(1, 2, 4, 4)).astype(np.float32))
show("weight_standardized", ws(xs)[0, :, 1, 1])
show("num_to_groups", num_to_groups(36, 16))
show("downsample_layout", Rearrange()(torch.arange(16.0).reshape(1, 1, 4, 4))[0, :, 0, 0])

# ---- the model and training
image_size = 8
channels = 1
batch_size = 8
model = Unet(
    dim=image_size,
    channels=channels,
    dim_mults=(1, 2,)
)
numpy_init(torch, model, seed=4)
show("unet_params", sum(p.numel() for p in model.parameters()))
optimizer = Adam(model.parameters(), lr=1e-3)

for loss_type in ("l1", "l2"):
    t = torch.from_numpy(noise_rng.integers(0, timesteps, 4))
    show(f"loss_{loss_type}", p_losses(model, x_start, t, loss_type=loss_type))

losses = []
step_rng = np.random.default_rng(5)
for step in range(6):
    optimizer.zero_grad()
    batch = torch.from_numpy(make_images(batch_size))
    t = torch.from_numpy(step_rng.integers(0, timesteps, (batch_size,))).long()
    loss = p_losses(model, batch, t, loss_type="huber")
    losses.append(loss.item())
    loss.backward()
    if step == 0:
        show("grad_final_conv", model.final_conv.weight.grad[0, :6, 0, 0])
        show("grad_mid_attn", model.mid_attn.fn.fn.to_qkv.weight.grad[:4, :4, 0, 0])
        show("grad_time_mlp", model.time_mlp[1].weight.grad[:2, :4])
        show("grad_groupnorm", model.downs[0][0].block1.norm.weight.grad)
    optimizer.step()
show("huber_losses", losses)


# ---- sampling
@torch.no_grad()
def p_sample(model, x, t, t_index):
    betas_t = extract(betas, t, x.shape)
    sqrt_one_minus_alphas_cumprod_t = extract(
        sqrt_one_minus_alphas_cumprod, t, x.shape
    )
    sqrt_recip_alphas_t = extract(sqrt_recip_alphas, t, x.shape)

    # Equation 11 in the paper
    # Use our model (noise predictor) to predict the mean
    model_mean = sqrt_recip_alphas_t * (
        x - betas_t * model(x, t) / sqrt_one_minus_alphas_cumprod_t
    )

    if t_index == 0:
        return model_mean
    else:
        posterior_variance_t = extract(posterior_variance, t, x.shape)
        noise = randn_like(x)
        # Algorithm 2 line 4:
        return model_mean + torch.sqrt(posterior_variance_t) * noise


# Algorithm 2 (including returning all images)
@torch.no_grad()
def p_sample_loop(model, shape):
    device = next(model.parameters()).device

    b = shape[0]
    # start from pure noise (for each example in the batch)
    img = torch.from_numpy(noise_rng.standard_normal(shape).astype(np.float32)).to(device)
    imgs = []

    for i in reversed(range(0, timesteps)):
        img = p_sample(model, img, torch.full((b,), i, device=device, dtype=torch.long), i)
        imgs.append(img.cpu().numpy())
    return imgs


def sample(model, image_size, batch_size=16, channels=3):
    return p_sample_loop(model, shape=(batch_size, channels, image_size, image_size))


samples = sample(model, image_size=image_size, batch_size=2, channels=channels)
show("num_samples", len(samples))
show("sample_first_step", samples[0][0, 0, 0, :4])
show("sample_last", samples[-1][1, 0, :2, :4])
show("sample_grad_disabled", float(torch.is_grad_enabled()))
