"""UvA Deep Learning course, tutorial 6 "Transformers and Multi-Head Attention", with the Lightning
module written as a plain training loop: ``scaled_dot_product`` by ``torch.matmul`` and
``masked_fill(mask == 0, -9e15)``; ``expand_mask`` by ``unsqueeze`` to 4 dimensions; a
MultiheadAttention with one ``qkv_proj`` reshaped to heads, ``permute(0, 2, 1, 3)`` and
``chunk(3, dim=-1)``, ``nn.init.xavier_uniform_`` and ``bias.data.fill_(0)`` (the Xavier draws then
replaced by NumPy's); post-norm EncoderBlocks (``nn.ReLU(inplace=True)`` inside a Sequential) in a
TransformerEncoder with ``get_attention_maps``; a sinusoidal PositionalEncoding buffer registered
with ``persistent=False``; the CosineWarmupScheduler subclassing ``optim.lr_scheduler._LRScheduler``
(``self.base_lrs``, ``self.last_epoch``, NumPy cosine); and the sequence-reversal task (a Dataset
of ``torch.flip``, ``F.one_hot(...).float()`` inputs, cross-entropy over ``view(-1, C)``, Adam
with the scheduler stepped per batch and ``clip_grad_norm_``), ending with its attention maps
under ``@torch.no_grad()``.

    python uva_transformer.py [torch|numbagrad]
"""
import math

import numpy as np

from _common import BACKEND, numpy_init, show

if BACKEND == "torch":
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    import torch.optim as optim
    import torch.utils.data as data
else:
    import numbagrad as torch
    import numbagrad.nn as nn
    import numbagrad.nn.functional as F
    import numbagrad.optim as optim
    import numbagrad.utils.data as data

rng = np.random.default_rng(42)


def randn(*shape):
    return torch.from_numpy(rng.normal(size=shape).astype(np.float32))


def scaled_dot_product(q, k, v, mask=None):
    d_k = q.size()[-1]
    attn_logits = torch.matmul(q, k.transpose(-2, -1))
    attn_logits = attn_logits / math.sqrt(d_k)
    if mask is not None:
        attn_logits = attn_logits.masked_fill(mask == 0, -9e15)
    attention = F.softmax(attn_logits, dim=-1)
    values = torch.matmul(attention, v)
    return values, attention


seq_len, d_k = 3, 2
q = randn(seq_len, d_k)
k = randn(seq_len, d_k)
v = randn(seq_len, d_k)
values, attention = scaled_dot_product(q, k, v)
show("Q", q)
show("Values", values)
show("Attention", attention)
mask = torch.tril(torch.ones(seq_len, seq_len))
values, attention = scaled_dot_product(q, k, v, mask=mask)
show("Masked_attention", attention)
show("sdpa_matches", float(torch.allclose(
    values, F.scaled_dot_product_attention(q, k, v, attn_mask=mask.bool()), atol=1e-6)))


# Helper function to support different mask shapes.
# Output shape supports (batch_size, number of heads, seq length, seq length)
# If 2D: broadcasted over batch size and number of heads
# If 3D: broadcasted over number of heads
# If 4D: leave as is
def expand_mask(mask):
    assert mask.ndim >= 2, "Mask must be at least 2-dimensional with seq_length x seq_length"
    if mask.ndim == 3:
        mask = mask.unsqueeze(1)
    while mask.ndim < 4:
        mask = mask.unsqueeze(0)
    return mask


show("expand_mask_2d", list(expand_mask(mask).shape))
show("expand_mask_3d", list(expand_mask(mask.expand(5, 3, 3)).shape))


class MultiheadAttention(nn.Module):

    def __init__(self, input_dim, embed_dim, num_heads):
        super().__init__()
        assert embed_dim % num_heads == 0, "Embedding dimension must be 0 modulo number of heads."

        self.embed_dim = embed_dim
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads

        # Stack all weight matrices 1...h together for efficiency
        # Note that in many implementations you see "bias=False" which is optional
        self.qkv_proj = nn.Linear(input_dim, 3 * embed_dim)
        self.o_proj = nn.Linear(embed_dim, embed_dim)

        self._reset_parameters()

    def _reset_parameters(self):
        # Original Transformer initialization, see PyTorch documentation
        nn.init.xavier_uniform_(self.qkv_proj.weight)
        self.qkv_proj.bias.data.fill_(0)
        nn.init.xavier_uniform_(self.o_proj.weight)
        self.o_proj.bias.data.fill_(0)

    def forward(self, x, mask=None, return_attention=False):
        batch_size, seq_length, _ = x.size()
        if mask is not None:
            mask = expand_mask(mask)
        qkv = self.qkv_proj(x)

        # Separate Q, K, V from linear output
        qkv = qkv.reshape(batch_size, seq_length, self.num_heads, 3 * self.head_dim)
        qkv = qkv.permute(0, 2, 1, 3)  # [Batch, Head, SeqLen, Dims]
        q, k, v = qkv.chunk(3, dim=-1)

        # Determine value outputs
        values, attention = scaled_dot_product(q, k, v, mask=mask)
        values = values.permute(0, 2, 1, 3)  # [Batch, SeqLen, Head, Dims]
        values = values.reshape(batch_size, seq_length, self.embed_dim)
        o = self.o_proj(values)

        if return_attention:
            return o, attention
        else:
            return o


def xavier_from_numpy(module, seed):
    """The Xavier draws of the two libraries differ; the same bounds, drawn by NumPy."""
    g = np.random.default_rng(seed)
    with torch.no_grad():
        for name, p in module.named_parameters():
            if p.dim() == 2:
                bound = math.sqrt(6 / (p.shape[0] + p.shape[1]))
                p.copy_(torch.from_numpy(g.uniform(-bound, bound, tuple(p.shape)).astype(np.float32)))


mha = MultiheadAttention(input_dim=6, embed_dim=8, num_heads=2)
bound = math.sqrt(6 / (6 + 3 * 8))  # fan_in + fan_out of qkv_proj
show("xavier_bound_ok", float(mha.qkv_proj.weight.abs().max() <= bound))
show("bias_zero", float(mha.qkv_proj.bias.abs().sum() == 0))
xavier_from_numpy(mha, 0)
x = randn(2, 3, 6)
o, attn = mha(x, mask=mask, return_attention=True)
show("mha_out", o)
show("mha_attn", attn[1])
o.pow(2).mean().backward()
show("mha_grad_qkv", mha.qkv_proj.weight.grad.sum(dim=1))


class EncoderBlock(nn.Module):

    def __init__(self, input_dim, num_heads, dim_feedforward, dropout=0.0):
        """
        Inputs:
            input_dim - Dimensionality of the input
            num_heads - Number of heads to use in the attention block
            dim_feedforward - Dimensionality of the hidden layer in the MLP
            dropout - Dropout probability to use in the dropout layers
        """
        super().__init__()

        # Attention layer
        self.self_attn = MultiheadAttention(input_dim, input_dim, num_heads)

        # Two-layer MLP
        self.linear_net = nn.Sequential(
            nn.Linear(input_dim, dim_feedforward),
            nn.Dropout(dropout),
            nn.ReLU(inplace=True),
            nn.Linear(dim_feedforward, input_dim)
        )

        # Layers to apply in between the main layers
        self.norm1 = nn.LayerNorm(input_dim)
        self.norm2 = nn.LayerNorm(input_dim)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, mask=None):
        # Attention part
        attn_out = self.self_attn(x, mask=mask)
        x = x + self.dropout(attn_out)
        x = self.norm1(x)

        # MLP part
        linear_out = self.linear_net(x)
        x = x + self.dropout(linear_out)
        x = self.norm2(x)

        return x


class TransformerEncoder(nn.Module):

    def __init__(self, num_layers, **block_args):
        super().__init__()
        self.layers = nn.ModuleList([EncoderBlock(**block_args) for _ in range(num_layers)])

    def forward(self, x, mask=None):
        for l in self.layers:
            x = l(x, mask=mask)
        return x

    def get_attention_maps(self, x, mask=None):
        attention_maps = []
        for l in self.layers:
            _, attn_map = l.self_attn(x, mask=mask, return_attention=True)
            attention_maps.append(attn_map)
            x = l(x)
        return attention_maps


class PositionalEncoding(nn.Module):

    def __init__(self, d_model, max_len=5000):
        """
        Inputs
            d_model - Hidden dimensionality of the input.
            max_len - Maximum length of a sequence to expect.
        """
        super().__init__()

        # Create matrix of [SeqLen, HiddenDim] representing the positional encoding for max_len inputs
        pe = torch.zeros(max_len, d_model)
        position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        pe = pe.unsqueeze(0)

        # register_buffer => Tensor which is not a parameter, but should be part of the modules state.
        # Used for tensors that need to be on the same device as the module.
        # persistent=False tells PyTorch to not add the buffer to the state dict (e.g. when we save the model)
        self.register_buffer('pe', pe, persistent=False)

    def forward(self, x):
        x = x + self.pe[:, :x.size(1)]
        return x


encod_block = PositionalEncoding(d_model=48, max_len=96)
pe = encod_block.pe.squeeze().T.cpu().numpy()
show("pe_shape", list(pe.shape))
show("pe_rows", pe[[0, 1, 46, 47], ::16])
show("pe_state_dict", len(encod_block.state_dict()))
show("pe_buffers", len(list(encod_block.buffers())))


class CosineWarmupScheduler(optim.lr_scheduler._LRScheduler):

    def __init__(self, optimizer, warmup, max_iters):
        self.warmup = warmup
        self.max_num_iters = max_iters
        super().__init__(optimizer)

    def get_lr(self):
        lr_factor = self.get_lr_factor(epoch=self.last_epoch)
        return [base_lr * lr_factor for base_lr in self.base_lrs]

    def get_lr_factor(self, epoch):
        lr_factor = 0.5 * (1 + np.cos(np.pi * epoch / self.max_num_iters))
        if epoch <= self.warmup:
            lr_factor *= epoch * 1.0 / self.warmup
        return lr_factor


# Needed for initializing the lr scheduler
p = nn.Parameter(torch.empty(4, 4))
optimizer = optim.Adam([p], lr=1e-3)
lr_scheduler = CosineWarmupScheduler(optimizer=optimizer, warmup=100, max_iters=2000)
epochs = list(range(2000))
show("lr_factors", [lr_scheduler.get_lr_factor(e) for e in epochs][::250])
show("lr_initial", optimizer.param_groups[0]["lr"])
show("base_lrs", lr_scheduler.base_lrs)
lrs = []
for _ in range(120):
    optimizer.step()
    lr_scheduler.step()
    lrs.append(lr_scheduler.get_last_lr()[0])
show("lr_steps", lrs[::15])
show("lr_group_after", optimizer.param_groups[0]["lr"])
show("scheduler_last_epoch", lr_scheduler.last_epoch)
show("scheduler_state_keys", sorted(k in lr_scheduler.state_dict() for k in ("warmup", "max_num_iters", "base_lrs", "last_epoch")))


class TransformerPredictor(nn.Module):

    def __init__(self, input_dim, model_dim, num_classes, num_heads, num_layers, lr, warmup, max_iters,
                 dropout=0.0, input_dropout=0.0):
        """
        Inputs:
            input_dim - Hidden dimensionality of the input
            model_dim - Hidden dimensionality to use inside the Transformer
            num_classes - Number of classes to predict per sequence element
            num_heads - Number of heads to use in the Multi-Head Attention blocks
            num_layers - Number of encoder blocks to use.
            lr - Learning rate in the optimizer
            warmup - Number of warmup steps. Usually between 50 and 500
            max_iters - Number of maximum iterations the model is trained for. This is needed for the CosineWarmup scheduler
            dropout - Dropout to apply inside the model
            input_dropout - Dropout to apply on the input features
        """
        super().__init__()
        self.hparams = dict(input_dim=input_dim, model_dim=model_dim, num_classes=num_classes,
                            num_heads=num_heads, num_layers=num_layers, lr=lr, warmup=warmup,
                            max_iters=max_iters, dropout=dropout, input_dropout=input_dropout)
        self._create_model()

    def _create_model(self):
        hp = self.hparams
        # Input dim -> Model dim
        self.input_net = nn.Sequential(
            nn.Dropout(hp["input_dropout"]),
            nn.Linear(hp["input_dim"], hp["model_dim"])
        )
        # Positional encoding for sequences
        self.positional_encoding = PositionalEncoding(d_model=hp["model_dim"])
        # Transformer
        self.transformer = TransformerEncoder(num_layers=hp["num_layers"],
                                              input_dim=hp["model_dim"],
                                              dim_feedforward=2 * hp["model_dim"],
                                              num_heads=hp["num_heads"],
                                              dropout=hp["dropout"])
        # Output classifier per sequence lement
        self.output_net = nn.Sequential(
            nn.Linear(hp["model_dim"], hp["model_dim"]),
            nn.LayerNorm(hp["model_dim"]),
            nn.ReLU(inplace=True),
            nn.Dropout(hp["dropout"]),
            nn.Linear(hp["model_dim"], hp["num_classes"])
        )

    def forward(self, x, mask=None, add_positional_encoding=True):
        """
        Inputs:
            x - Input features of shape [Batch, SeqLen, input_dim]
            mask - Mask to apply on the attention outputs (optional)
            add_positional_encoding - If True, we add the positional encoding to the input.
                                      Might not be desired for some tasks.
        """
        x = self.input_net(x)
        if add_positional_encoding:
            x = self.positional_encoding(x)
        x = self.transformer(x, mask=mask)
        x = self.output_net(x)
        return x

    @torch.no_grad()
    def get_attention_maps(self, x, mask=None, add_positional_encoding=True):
        """
        Function for extracting the attention matrices of the whole Transformer for a single batch.
        Input arguments same as the forward pass.
        """
        x = self.input_net(x)
        if add_positional_encoding:
            x = self.positional_encoding(x)
        attention_maps = self.transformer.get_attention_maps(x, mask=mask)
        return attention_maps

    def configure_optimizers(self):
        optimizer = optim.Adam(self.parameters(), lr=self.hparams["lr"])

        # Apply lr scheduler per step
        lr_scheduler = CosineWarmupScheduler(optimizer,
                                             warmup=self.hparams["warmup"],
                                             max_iters=self.hparams["max_iters"])
        return [optimizer], [{'scheduler': lr_scheduler, 'interval': 'step'}]


class ReverseDataset(data.Dataset):

    def __init__(self, num_categories, seq_len, size, seed):
        super().__init__()
        self.num_categories = num_categories
        self.seq_len = seq_len
        self.size = size

        # (torch.randint(self.num_categories, size=(self.size, self.seq_len)), drawn by NumPy)
        self.data = torch.from_numpy(np.random.default_rng(seed).integers(
            self.num_categories, size=(self.size, self.seq_len)))

    def __len__(self):
        return self.size

    def __getitem__(self, idx):
        inp_data = self.data[idx]
        labels = torch.flip(inp_data, dims=(0,))
        return inp_data, labels


dataset = ReverseDataset
train_loader = data.DataLoader(dataset(10, 8, 1000, seed=1), batch_size=50, shuffle=False, drop_last=True)
val_loader = data.DataLoader(dataset(10, 8, 64, seed=2), batch_size=32)
test_loader = data.DataLoader(dataset(10, 8, 64, seed=3), batch_size=32)
inp_data, labels = train_loader.dataset[0]
show("Input_data", inp_data)
show("Labels", labels)


class ReversePredictor(TransformerPredictor):

    def _calculate_loss(self, batch, mode="train"):
        # Fetch data and transform categories to one-hot vectors
        inp_data, labels = batch
        inp_data = F.one_hot(inp_data, num_classes=self.hparams["num_classes"]).float()

        # Perform prediction and calculate loss and accuracy
        preds = self.forward(inp_data, add_positional_encoding=True)
        loss = F.cross_entropy(preds.view(-1, preds.size(-1)), labels.view(-1))
        acc = (preds.argmax(dim=-1) == labels).float().mean()

        return loss, acc


def train_reverse(max_epochs, **kwargs):
    model = ReversePredictor(max_iters=max_epochs * len(train_loader), **kwargs)
    numpy_init(torch, model, seed=0)
    for block in model.transformer.layers:
        xavier_from_numpy(block.self_attn, seed=1)
    (optimizer,), (sched,) = model.configure_optimizers()
    scheduler = sched["scheduler"]
    train_losses, val_accs, lrs = [], [], []
    for epoch in range(max_epochs):
        model.train()
        for batch in train_loader:
            loss, acc = model._calculate_loss(batch, mode="train")
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=5)  # gradient_clip_val=5
            optimizer.step()
            scheduler.step()
            train_losses.append(loss.item())
            lrs.append(scheduler.get_last_lr()[0])
        model.eval()
        with torch.no_grad():
            accs = [model._calculate_loss(batch, mode="val")[1].item() for batch in val_loader]
        val_accs.append(sum(accs) / len(accs))
    model.eval()
    with torch.no_grad():
        test_acc = np.mean([model._calculate_loss(batch, mode="test")[1].item() for batch in test_loader])
    return model, train_losses, val_accs, test_acc, lrs


reverse_model, train_losses, val_accs, test_acc, lrs = train_reverse(
    input_dim=train_loader.dataset.num_categories,
    model_dim=32,
    num_heads=1,
    num_classes=train_loader.dataset.num_categories,
    num_layers=1,
    dropout=0.0,
    lr=5e-3,
    warmup=20,
    max_epochs=8,
)
show("train_losses", train_losses[::10])
show("val_accs", val_accs)
show("test_acc", test_acc)
show("lrs", lrs[::20])
show("n_params", sum(p.numel() for p in reverse_model.parameters()))
show("state_dict_has_pe", float(any("pe" in k.split(".")[-1] for k in reverse_model.state_dict())))

data_input, labels = next(iter(val_loader))
inp_data = F.one_hot(data_input, num_classes=reverse_model.hparams["num_classes"]).float()
attention_maps = reverse_model.get_attention_maps(inp_data)
show("attention_maps_shape", list(attention_maps[0].shape))
show("attention_map_0", attention_maps[0][0, 0])
show("attention_maps_no_grad", float(attention_maps[0].requires_grad))
# the reversal: position i attends to position seq_len - 1 - i
show("attends_reversed", (attention_maps[0][:, 0].argmax(dim=-1) == torch.arange(7, -1, -1)).float().mean())
