"""PyTorch tutorial "Neural Transfer Using PyTorch", on a small stand-in CNN and generated
images: ContentLoss and StyleLoss modules (gram matrices by ``torch.mm``) inserted into an
``nn.Sequential`` rebuilt from ``cnn.children()``, the model trimmed after the last loss,
``model.requires_grad_(False)``, the input image optimised by ``optim.LBFGS`` with a closure
that clamps it; then a curve fit by LBFGS with the strong-Wolfe line search.

    python style_transfer.py [torch|numbagrad]
"""
import numpy as np

from _common import BACKEND, show

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

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.set_default_device(device)
imsize = 16
rng = np.random.default_rng(0)
yy, xx = np.mgrid[0:imsize, 0:imsize] / imsize
style = np.stack([np.sin(8 * xx), np.cos(8 * yy), np.sin(4 * (xx + yy))])[None] * 0.5 + 0.5
content = np.stack([xx, yy, 1 - xx * yy])[None]
style_img = torch.tensor(style, dtype=torch.float)
content_img = torch.tensor(content, dtype=torch.float)
assert style_img.size() == content_img.size(), "we need to import style and content images of the same size"


class ContentLoss(nn.Module):
    def __init__(self, target,):
        super(ContentLoss, self).__init__()
        # we 'detach' the target content from the tree used to dynamically compute the
        # gradient: this is a stated value, not a variable.
        self.target = target.detach()

    def forward(self, input):
        self.loss = F.mse_loss(input, self.target)
        return input


def gram_matrix(input):
    a, b, c, d = input.size()  # a=batch size(=1), b=number of feature maps, (c,d)=dimensions
    features = input.view(a * b, c * d)  # resize F_XL into \hat F_XL
    G = torch.mm(features, features.t())  # compute the gram product
    # we 'normalize' the values of the gram matrix by dividing by the number of element in
    # each feature maps.
    return G.div(a * b * c * d)


class StyleLoss(nn.Module):
    def __init__(self, target_feature):
        super(StyleLoss, self).__init__()
        self.target = gram_matrix(target_feature).detach()

    def forward(self, input):
        G = gram_matrix(input)
        self.loss = F.mse_loss(G, self.target)
        return input


class Normalization(nn.Module):
    def __init__(self, mean, std):
        super(Normalization, self).__init__()
        # .view the mean and std to make them [C x 1 x 1] so that they can directly work
        # with image Tensor of shape [B x C x H x W].
        self.mean = torch.tensor(mean).view(-1, 1, 1)
        self.std = torch.tensor(std).view(-1, 1, 1)

    def forward(self, img):
        return (img - self.mean) / self.std


# a small stand-in for vgg19().features, its weights from numpy
cnn = nn.Sequential(
    nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(inplace=True),
    nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(inplace=True), nn.MaxPool2d(2, 2),
    nn.Conv2d(8, 12, 3, padding=1), nn.ReLU(inplace=True),
    nn.Conv2d(12, 12, 3, padding=1), nn.ReLU(inplace=True), nn.MaxPool2d(2, 2),
    nn.Conv2d(12, 16, 3, padding=1), nn.ReLU(inplace=True),
).eval()
with torch.no_grad():
    for m in cnn:
        if isinstance(m, nn.Conv2d):
            fan_in = m.weight[0].numel()
            m.weight.copy_(torch.tensor(rng.normal(0, np.sqrt(2 / fan_in), tuple(m.weight.shape)), dtype=torch.float))
            m.bias.copy_(torch.tensor(rng.uniform(-0.1, 0.1, tuple(m.bias.shape)), dtype=torch.float))
cnn_normalization_mean = [0.485, 0.456, 0.406]
cnn_normalization_std = [0.229, 0.224, 0.225]

content_layers_default = ['conv_4']
style_layers_default = ['conv_1', 'conv_2', 'conv_3', 'conv_4', 'conv_5']


def get_style_model_and_losses(cnn, normalization_mean, normalization_std, style_img,
                               content_img, content_layers=content_layers_default,
                               style_layers=style_layers_default):
    normalization = Normalization(normalization_mean, normalization_std)
    content_losses = []
    style_losses = []
    model = nn.Sequential(normalization)
    i = 0  # increment every time we see a conv
    for layer in cnn.children():
        if isinstance(layer, nn.Conv2d):
            i += 1
            name = 'conv_{}'.format(i)
        elif isinstance(layer, nn.ReLU):
            name = 'relu_{}'.format(i)
            # The in-place version doesn't play very nicely with the ``ContentLoss``
            # and ``StyleLoss`` we insert below. So we replace with out-of-place
            # ones here.
            layer = nn.ReLU(inplace=False)
        elif isinstance(layer, nn.MaxPool2d):
            name = 'pool_{}'.format(i)
        elif isinstance(layer, nn.BatchNorm2d):
            name = 'bn_{}'.format(i)
        else:
            raise RuntimeError('Unrecognized layer: {}'.format(layer.__class__.__name__))
        model.add_module(name, layer)
        if name in content_layers:
            target = model(content_img).detach()
            content_loss = ContentLoss(target)
            model.add_module("content_loss_{}".format(i), content_loss)
            content_losses.append(content_loss)
        if name in style_layers:
            target_feature = model(style_img).detach()
            style_loss = StyleLoss(target_feature)
            model.add_module("style_loss_{}".format(i), style_loss)
            style_losses.append(style_loss)
    # now we trim off the layers after the last content and style losses
    for i in range(len(model) - 1, -1, -1):
        if isinstance(model[i], ContentLoss) or isinstance(model[i], StyleLoss):
            break
    model = model[:(i + 1)]
    return model, style_losses, content_losses


input_img = content_img.clone()


def get_input_optimizer(input_img):
    # this line to show that input is a parameter that requires a gradient
    optimizer = optim.LBFGS([input_img])
    return optimizer


def run_style_transfer(cnn, normalization_mean, normalization_std, content_img, style_img,
                       input_img, num_steps=4, style_weight=1000000, content_weight=1):
    """Run the style transfer."""
    model, style_losses, content_losses = get_style_model_and_losses(
        cnn, normalization_mean, normalization_std, style_img, content_img)
    print(model)
    # We want to optimize the input and not the model parameters so we
    # update all the requires_grad fields accordingly
    input_img.requires_grad_(True)
    # We also put the model in evaluation mode, so that specific layers
    # such as dropout or batch normalization layers behave correctly.
    model.eval()
    model.requires_grad_(False)
    optimizer = get_input_optimizer(input_img)
    run = [0]
    trace = []
    while run[0] <= num_steps:

        def closure():
            # correct the values of updated input image
            with torch.no_grad():
                input_img.clamp_(0, 1)
            optimizer.zero_grad()
            model(input_img)
            style_score = 0
            content_score = 0
            for sl in style_losses:
                style_score += sl.loss
            for cl in content_losses:
                content_score += cl.loss
            style_score *= style_weight
            content_score *= content_weight
            loss = style_score + content_score
            loss.backward()
            run[0] += 1
            trace.append((style_score.item(), content_score.item()))
            return style_score + content_score

        optimizer.step(closure)
    # a last correction...
    with torch.no_grad():
        input_img.clamp_(0, 1)
    return input_img, trace, optimizer


output, trace, optimizer = run_style_transfer(cnn, cnn_normalization_mean,
                                              cnn_normalization_std, content_img, style_img,
                                              input_img, num_steps=12, style_weight=10000)
show('n_evals', len(trace))
# float32 rounding differs between the libraries, and LBFGS with the clamped image amplifies it
# over the evaluations: the first ones agree closely, the later ones only go the same way
show('style_scores', [s for s, _ in trace[:8]])
show('content_scores', [c for _, c in trace[:8]])
print('~style_scores_tail', *[s for s, _ in trace[8:]])
print('~output_mean', output.mean().item())
show('output_range', [output.min().item(), output.max().item()])
state = optimizer.state[optimizer.param_groups[0]['params'][0]]
show('lbfgs_state', [state['func_evals'], state['n_iter'], len(state['old_dirs'])])

# curve fitting with the strong-Wolfe line search (the scipy.optimize-style use)
x = torch.linspace(0, 2, 25, dtype=torch.float64)
y = 1.5 * torch.exp(-1.3 * x) + 0.2 + torch.tensor(rng.normal(0, 0.01, 25))
params = torch.tensor([1.0, -0.5, 0.0], dtype=torch.float64, requires_grad=True)
opt = optim.LBFGS([params], lr=1, max_iter=50, history_size=10, line_search_fn='strong_wolfe',
                  tolerance_grad=1e-9, tolerance_change=1e-12)


def closure():
    opt.zero_grad()
    a, k, c = params
    loss = ((a * torch.exp(k * x) + c - y) ** 2).sum()
    loss.backward()
    return loss


first = opt.step(closure).item()
show('fit', params)
show('fit_loss', [first, closure().item()])
show('fit_evals', opt.state[params]['func_evals'])
