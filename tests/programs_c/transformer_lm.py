"""The "Language Modeling with nn.TransformerEncoder" tutorial at toy scale: Embedding, a
PositionalEncoding buffer, TransformerEncoder with a square subsequent mask, batchify/get_batch,
CrossEntropyLoss, SGD with StepLR and clip_grad_norm_, train/evaluate over epochs. The text is
made by numpy and the weights loaded from numpy, so both libraries compute the same numbers
(dropout is 0 to keep them so).

    python transformer_lm.py [torch|numbagrad]
"""
import math
import sys

import numpy as np

BACKEND = sys.argv[1] if len(sys.argv) > 1 else "numbagrad"
if BACKEND == "torch":
    import torch
    from torch import nn, Tensor
    from torch.nn import TransformerEncoder, TransformerEncoderLayer
else:
    import numbagrad as torch
    from numbagrad import nn, Tensor
    from numbagrad.nn import TransformerEncoder, TransformerEncoderLayer

torch.manual_seed(0)
rng = np.random.default_rng(0)
device = torch.device("cpu")


class TransformerModel(nn.Module):

    def __init__(self, ntoken: int, d_model: int, nhead: int, d_hid: int,
                 nlayers: int, dropout: float = 0.5):
        super().__init__()
        self.model_type = 'Transformer'
        self.pos_encoder = PositionalEncoding(d_model, dropout)
        encoder_layers = TransformerEncoderLayer(d_model, nhead, d_hid, dropout)
        self.transformer_encoder = TransformerEncoder(encoder_layers, nlayers)
        self.embedding = nn.Embedding(ntoken, d_model)
        self.d_model = d_model
        self.linear = nn.Linear(d_model, ntoken)

        self.init_weights()

    def init_weights(self) -> None:
        initrange = 0.1
        self.embedding.weight.data.uniform_(-initrange, initrange)
        self.linear.bias.data.zero_()
        self.linear.weight.data.uniform_(-initrange, initrange)

    def forward(self, src: Tensor, src_mask: Tensor = None) -> Tensor:
        src = self.embedding(src) * math.sqrt(self.d_model)
        src = self.pos_encoder(src)
        if src_mask is None:
            src_mask = nn.Transformer.generate_square_subsequent_mask(len(src)).to(device)
        output = self.transformer_encoder(src, src_mask)
        output = self.linear(output)
        return output


class PositionalEncoding(nn.Module):

    def __init__(self, d_model: int, dropout: float = 0.1, max_len: int = 5000):
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)

        position = torch.arange(max_len).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        pe = torch.zeros(max_len, 1, d_model)
        pe[:, 0, 0::2] = torch.sin(position * div_term)
        pe[:, 0, 1::2] = torch.cos(position * div_term)
        self.register_buffer('pe', pe)

    def forward(self, x: Tensor) -> Tensor:
        x = x + self.pe[:x.size(0)]
        return self.dropout(x)


# A made-up corpus in place of WikiText2: sentences from a tiny grammar.
subjects, verbs, objects = ["the cat", "a dog", "my friend", "the bird"], \
    ["sees", "likes", "chases", "finds"], ["the ball", "a tree", "the house", "some food"]
lines = [" ".join([subjects[rng.integers(4)], verbs[rng.integers(4)], objects[rng.integers(4)],
                   "."]) for _ in range(120)]
vocab = {w: i for i, w in enumerate(["<unk>"] + sorted({w for ln in lines for w in ln.split()}))}


def data_process(raw_text_iter):
    data = [torch.tensor([vocab.get(w, 0) for w in item.split()], dtype=torch.long)
            for item in raw_text_iter]
    return torch.cat(tuple(filter(lambda t: t.numel() > 0, data)))


def batchify(data: Tensor, bsz: int) -> Tensor:
    # Work out how cleanly we can divide the dataset into bsz parts.
    nbatch = data.size(0) // bsz
    # Trim off any extra elements that wouldn't cleanly fit (remainders).
    data = data.narrow(0, 0, nbatch * bsz)
    # Evenly divide the data across the bsz batches.
    data = data.view(bsz, -1).t().contiguous()
    return data.to(device)


train_data = batchify(data_process(lines[:100]), 8)
val_data = batchify(data_process(lines[100:]), 4)
bptt = 12


def get_batch(source: Tensor, i: int):
    seq_len = min(bptt, len(source) - 1 - i)
    data = source[i:i + seq_len]
    target = source[i + 1:i + 1 + seq_len].reshape(-1)
    return data, target


ntokens = len(vocab)
emsize, d_hid, nlayers, nhead, dropout = 16, 32, 2, 2, 0.0
model = TransformerModel(ntokens, emsize, nhead, d_hid, nlayers, dropout).to(device)
# the same weights in both libraries (LayerNorm weights around 1)
model.load_state_dict({k: torch.from_numpy(
    (rng.standard_normal(tuple(v.shape)) * 0.1
     + (1.0 if 'norm' in k and k.endswith('weight') else 0.0)).astype(np.float32))
    for k, v in model.state_dict().items() if k != 'pos_encoder.pe'}, strict=False)

criterion = nn.CrossEntropyLoss()
lr = 5.0  # learning rate
optimizer = torch.optim.SGD(model.parameters(), lr=lr)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1.0, gamma=0.95)
train_losses = []


def train(model: nn.Module) -> None:
    model.train()  # turn on train mode
    total_loss = 0.
    log_interval = 4
    for batch, i in enumerate(range(0, train_data.size(0) - 1, bptt)):
        data, targets = get_batch(train_data, i)
        output = model(data)
        output_flat = output.view(-1, ntokens)
        loss = criterion(output_flat, targets)

        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        optimizer.step()

        total_loss += loss.item()
        train_losses.append(loss.item())
        if batch % log_interval == 0 and batch > 0:
            lr = scheduler.get_last_lr()[0]
            print(f'| epoch {epoch:3d} | {batch:5d} batches | lr {lr:02.2f} | '
                  f'loss {total_loss / log_interval:5.2f}')
            total_loss = 0


def evaluate(model: nn.Module, eval_data: Tensor) -> float:
    model.eval()  # turn on evaluation mode
    total_loss = 0.
    with torch.no_grad():
        for i in range(0, eval_data.size(0) - 1, bptt):
            data, targets = get_batch(eval_data, i)
            seq_len = data.size(0)
            output = model(data)
            output_flat = output.view(-1, ntokens)
            total_loss += seq_len * criterion(output_flat, targets).item()
    return total_loss / (len(eval_data) - 1)


best_val_loss = float('inf')
val_losses, lrs = [], []
epochs = 2
for epoch in range(1, epochs + 1):
    train(model)
    val_loss = evaluate(model, val_data)
    val_ppl = math.exp(val_loss)
    print('-' * 89)
    print(f'| end of epoch {epoch:3d} | valid loss {val_loss:5.2f} | valid ppl {val_ppl:8.2f}')
    print('-' * 89)
    val_losses.append(val_loss)
    if val_loss < best_val_loss:
        best_val_loss = val_loss
        best_state = {k: v.clone() for k, v in model.state_dict().items()}
    lrs.append(scheduler.get_last_lr()[0])
    scheduler.step()

model.load_state_dict(best_state)
print('shapes', *train_data.shape, *val_data.shape, ntokens)
print('pe', *model.pos_encoder.pe[:3, 0, :4].flatten().tolist())
print('mask', *nn.Transformer.generate_square_subsequent_mask(3).flatten().tolist())
print('train_loss', *train_losses)
print('val_loss', *val_losses)
print('lr', *lrs)
print('test_loss', evaluate(model, val_data))
