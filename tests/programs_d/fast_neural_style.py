"""pytorch/examples fast_neural_style (transformer_net.py, vgg.py, utils.py, neural_style.py),
scaled down: the TransformerNet of ``ConvLayer``s (``nn.ReflectionPad2d`` + Conv2d),
``nn.InstanceNorm2d(affine=True)``, residual blocks and ``UpsampleConvLayer`` (``F.interpolate
(mode='nearest', scale_factor=2)``); a VGG-like loss network in slices returning a
``namedtuple`` of features with ``requires_grad = False``; ``gram_matrix`` by ``bmm``,
``normalize_batch`` with ``new_tensor`` and ``div_``; the content + style loss trained with
Adam; the state_dict saved, the deprecated ``in\\d+.running_*`` keys dropped with ``re``, and the
stylized image under ``no_grad``.

    python fast_neural_style.py [torch|numbagrad]
"""
import io
import re
from collections import namedtuple

import numpy as np

from _common import BACKEND, numpy_init, show

if BACKEND == "torch":
    import torch
    from torch.optim import Adam
    from torch.utils.data import DataLoader, TensorDataset
else:
    import numbagrad as torch
    from numbagrad.optim import Adam
    from numbagrad.utils.data import DataLoader, TensorDataset


# ----- transformer_net.py
class TransformerNet(torch.nn.Module):
    def __init__(self):
        super(TransformerNet, self).__init__()
        # Initial convolution layers
        self.conv1 = ConvLayer(3, 4, kernel_size=5, stride=1)
        self.in1 = torch.nn.InstanceNorm2d(4, affine=True)
        self.conv2 = ConvLayer(4, 6, kernel_size=3, stride=2)
        self.in2 = torch.nn.InstanceNorm2d(6, affine=True)
        self.conv3 = ConvLayer(6, 8, kernel_size=3, stride=2)
        self.in3 = torch.nn.InstanceNorm2d(8, affine=True)
        # Residual layers
        self.res1 = ResidualBlock(8)
        self.res2 = ResidualBlock(8)
        # Upsampling Layers
        self.deconv1 = UpsampleConvLayer(8, 6, kernel_size=3, stride=1, upsample=2)
        self.in4 = torch.nn.InstanceNorm2d(6, affine=True)
        self.deconv2 = UpsampleConvLayer(6, 4, kernel_size=3, stride=1, upsample=2)
        self.in5 = torch.nn.InstanceNorm2d(4, affine=True)
        self.deconv3 = ConvLayer(4, 3, kernel_size=5, stride=1)
        # Non-linearities
        self.relu = torch.nn.ReLU()

    def forward(self, X):
        y = self.relu(self.in1(self.conv1(X)))
        y = self.relu(self.in2(self.conv2(y)))
        y = self.relu(self.in3(self.conv3(y)))
        y = self.res1(y)
        y = self.res2(y)
        y = self.relu(self.in4(self.deconv1(y)))
        y = self.relu(self.in5(self.deconv2(y)))
        y = self.deconv3(y)
        return y


class ConvLayer(torch.nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride):
        super(ConvLayer, self).__init__()
        reflection_padding = kernel_size // 2
        self.reflection_pad = torch.nn.ReflectionPad2d(reflection_padding)
        self.conv2d = torch.nn.Conv2d(in_channels, out_channels, kernel_size, stride)

    def forward(self, x):
        out = self.reflection_pad(x)
        out = self.conv2d(out)
        return out


class ResidualBlock(torch.nn.Module):
    """ResidualBlock
    introduced in: https://arxiv.org/abs/1512.03385
    recommended architecture: http://torch.ch/blog/2016/02/04/resnets.html
    """

    def __init__(self, channels):
        super(ResidualBlock, self).__init__()
        self.conv1 = ConvLayer(channels, channels, kernel_size=3, stride=1)
        self.in1 = torch.nn.InstanceNorm2d(channels, affine=True)
        self.conv2 = ConvLayer(channels, channels, kernel_size=3, stride=1)
        self.in2 = torch.nn.InstanceNorm2d(channels, affine=True)
        self.relu = torch.nn.ReLU()

    def forward(self, x):
        residual = x
        out = self.relu(self.in1(self.conv1(x)))
        out = self.in2(self.conv2(out))
        out = out + residual
        return out


class UpsampleConvLayer(torch.nn.Module):
    """UpsampleConvLayer
    Upsamples the input and then does a convolution. This method gives better results
    compared to ConvTranspose2d.
    ref: http://distill.pub/2016/deconv-checkerboard/
    """

    def __init__(self, in_channels, out_channels, kernel_size, stride, upsample=None):
        super(UpsampleConvLayer, self).__init__()
        self.upsample = upsample
        reflection_padding = kernel_size // 2
        self.reflection_pad = torch.nn.ReflectionPad2d(reflection_padding)
        self.conv2d = torch.nn.Conv2d(in_channels, out_channels, kernel_size, stride)

    def forward(self, x):
        x_in = x
        if self.upsample:
            x_in = torch.nn.functional.interpolate(x_in, mode='nearest', scale_factor=self.upsample)
        out = self.reflection_pad(x_in)
        out = self.conv2d(out)
        return out


# ----- vgg.py, on a small stand-in for the pretrained features
def vgg_features():
    return torch.nn.Sequential(
        torch.nn.Conv2d(3, 4, 3, padding=1), torch.nn.ReLU(inplace=True),
        torch.nn.Conv2d(4, 4, 3, padding=1), torch.nn.ReLU(inplace=True),
        torch.nn.MaxPool2d(2, 2),
        torch.nn.Conv2d(4, 6, 3, padding=1), torch.nn.ReLU(inplace=True),
        torch.nn.Conv2d(6, 6, 3, padding=1), torch.nn.ReLU(inplace=True),
        torch.nn.MaxPool2d(2, 2),
        torch.nn.Conv2d(6, 8, 3, padding=1), torch.nn.ReLU(inplace=True),
    )


class Vgg16(torch.nn.Module):
    def __init__(self, requires_grad=False):
        super(Vgg16, self).__init__()
        vgg_pretrained_features = vgg_features()
        numpy_init(torch, vgg_pretrained_features, seed=5)
        self.slice1 = torch.nn.Sequential()
        self.slice2 = torch.nn.Sequential()
        self.slice3 = torch.nn.Sequential()
        for x in range(4):
            self.slice1.add_module(str(x), vgg_pretrained_features[x])
        for x in range(4, 9):
            self.slice2.add_module(str(x), vgg_pretrained_features[x])
        for x in range(9, 12):
            self.slice3.add_module(str(x), vgg_pretrained_features[x])
        if not requires_grad:
            for param in self.parameters():
                param.requires_grad = False

    def forward(self, X):
        h = self.slice1(X)
        h_relu1_2 = h
        h = self.slice2(h)
        h_relu2_2 = h
        h = self.slice3(h)
        h_relu3_3 = h
        vgg_outputs = namedtuple("VggOutputs", ['relu1_2', 'relu2_2', 'relu3_3'])
        out = vgg_outputs(h_relu1_2, h_relu2_2, h_relu3_3)
        return out


# ----- utils.py
def gram_matrix(y):
    (b, ch, h, w) = y.size()
    features = y.view(b, ch, w * h)
    features_t = features.transpose(1, 2)
    gram = features.bmm(features_t) / (ch * h * w)
    return gram


def normalize_batch(batch):
    # normalize using imagenet mean and std
    mean = batch.new_tensor([0.485, 0.456, 0.406]).view(-1, 1, 1)
    std = batch.new_tensor([0.229, 0.224, 0.225]).view(-1, 1, 1)
    batch = batch.div_(255.0)
    return (batch - mean) / std


# ----- neural_style.py train()
class Args:
    epochs = 2
    batch_size = 2
    lr = 1e-3
    # (the example's 1e5 and 1e10, scaled down: Adam is scale-free except for its eps, and
    # the conv biases in front of an InstanceNorm have only rounding noise for a gradient,
    # which those weights would lift above eps, so each library's noise would move them)
    content_weight = 1.0
    style_weight = 1e3
    log_interval = 2


args = Args()
device = torch.device("cpu")
rng = np.random.default_rng(0)
np.random.seed(42)
torch.manual_seed(42)

# images in [0, 255] as ``transforms.Lambda(lambda x: x.mul(255))`` leaves them
train_images = torch.from_numpy(rng.uniform(0, 255, (6, 3, 12, 12)).astype(np.float32))
train_dataset = TensorDataset(train_images, torch.zeros(6))
train_loader = DataLoader(train_dataset, batch_size=args.batch_size)

transformer = TransformerNet().to(device)
numpy_init(torch, transformer, seed=1)
print(transformer.in1)
show("instance_norm_params", [transformer.in1.weight.shape[0], transformer.in1.running_mean is None, transformer.in1.track_running_stats])
optimizer = Adam(transformer.parameters(), args.lr)
mse_loss = torch.nn.MSELoss()

vgg = Vgg16(requires_grad=False).to(device)
show("vgg_frozen", [p.requires_grad for p in vgg.parameters()])
style = torch.from_numpy(rng.uniform(0, 255, (3, 12, 12)).astype(np.float32))
style = style.repeat(args.batch_size, 1, 1, 1).to(device)
show("style_shape", list(style.shape))

features_style = vgg(normalize_batch(style))
gram_style = [gram_matrix(y) for y in features_style]
show("gram_shapes", [list(g.shape) for g in gram_style])
show("gram_style", gram_style[1][0, 0])
show("style_divided_in_place", bool(style.max() <= 1.0))

content_losses, style_losses = [], []
for e in range(args.epochs):
    transformer.train()
    agg_content_loss = 0.
    agg_style_loss = 0.
    count = 0
    for batch_id, (x, _) in enumerate(train_loader):
        n_batch = len(x)
        count += n_batch
        optimizer.zero_grad()

        x = x.to(device)
        y = transformer(x)

        y = normalize_batch(y)
        x = normalize_batch(x)

        features_y = vgg(y)
        features_x = vgg(x)

        content_loss = args.content_weight * mse_loss(features_y.relu2_2, features_x.relu2_2)

        style_loss = 0.
        for ft_y, gm_s in zip(features_y, gram_style):
            gm_y = gram_matrix(ft_y)
            style_loss += mse_loss(gm_y, gm_s[:n_batch, :, :])
        style_loss *= args.style_weight

        total_loss = content_loss + style_loss
        total_loss.backward()
        optimizer.step()

        agg_content_loss += content_loss.item()
        agg_style_loss += style_loss.item()
        content_losses.append(content_loss.item())
        style_losses.append(style_loss.item())

        if (batch_id + 1) % args.log_interval == 0:
            mesg = "Epoch {}:\t[{}/{}]\tcontent: {:.6f}\tstyle: {:.6f}\ttotal: {:.6f}".format(
                e + 1, count, len(train_dataset),
                agg_content_loss / (batch_id + 1),
                agg_style_loss / (batch_id + 1),
                (agg_content_loss + agg_style_loss) / (batch_id + 1)
            )
            print(mesg)

show("content_losses", content_losses)
show("style_losses", style_losses)
show("in3_weight", transformer.in3.weight)
show("conv1_grad", transformer.conv1.conv2d.weight.grad[0, 0, 2])
show("train_images_untouched", bool(train_images.max() > 1.0))

# save model
transformer.eval().cpu()
buffer = io.BytesIO()
torch.save(transformer.state_dict(), buffer)
show("state_dict_keys", len(transformer.state_dict()))

# ----- neural_style.py stylize()
content_image = torch.from_numpy(rng.uniform(0, 255, (1, 3, 10, 14)).astype(np.float32))
with torch.no_grad():
    style_model = TransformerNet()
    buffer.seek(0)
    state_dict = torch.load(buffer)
    # an old checkpoint also held InstanceNorm's running stats: they are dropped
    state_dict["in1.running_mean"] = torch.zeros(4)
    state_dict["res1.in2.running_var"] = torch.ones(8)
    # remove saved deprecated running_* keys in InstanceNorm from the checkpoint
    for k in list(state_dict.keys()):
        if re.search(r'in\d+\.running_(mean|var)$', k):
            del state_dict[k]
    style_model.load_state_dict(state_dict)
    style_model.to(device)
    style_model.eval()
    output = style_model(content_image).cpu()
show("stylized_shape", list(output.shape))
show("stylized", output[0, 1, 4])
img = output[0].clone().clamp(0, 255).numpy()
img = img.transpose(1, 2, 0).astype("uint8")
show("saved_pixels", img[3, :5, 0])

# the layers on their own: reflection padding, instance norm over unbatched input, its stats
x = torch.from_numpy(rng.normal(size=(2, 3, 4, 5)).astype(np.float32)).requires_grad_()
pad = torch.nn.ReflectionPad2d((1, 2, 0, 3))(x)
show("reflection_pad", [*pad.shape, *pad[0, 0, 5]])
norm = torch.nn.InstanceNorm2d(3, affine=True)
norm.weight.data.copy_(torch.tensor([1.0, 2.0, 0.5]))
out = norm(x)
(out * torch.arange(60.).view(3, 4, 5)).sum().backward()
show("instance_norm", out[1, 2, 0])
show("instance_norm_grad", x.grad[0, 1, 1])
show("instance_norm_unbatched", bool(torch.allclose(norm(x[0]), out[0], atol=1e-6)))
tracked = torch.nn.InstanceNorm2d(3, track_running_stats=True)
tracked(x)
show("instance_norm_running", [tracked.running_mean, tracked.running_var])
tracked.eval()
show("instance_norm_eval", tracked(x)[0, 0, 0])
print(tracked)
