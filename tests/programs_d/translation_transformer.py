"""PyTorch tutorial "Language Translation with nn.Transformer and torchtext", on a generated
toy language pair (the target sentence is the source's words mapped and reversed):
``TokenEmbedding`` scaled by sqrt(emb_size), a ``PositionalEncoding`` buffer of shape
(maxlen, 1, emb), ``Seq2SeqTransformer`` around ``nn.Transformer`` (sequence-first),
``generate_square_subsequent_mask`` as a float -inf mask, ``create_mask`` with key padding
masks, ``pad_sequence`` in ``collate_fn``, xavier_uniform_ initialisation,
CrossEntropyLoss(ignore_index=PAD_IDX), Adam(betas=(0.9, 0.98), eps=1e-9), ``train_epoch``/
``evaluate`` and ``greedy_decode``/``translate``. Dropout is 0 so both libraries agree.

    python translation_transformer.py [torch|numbagrad]
"""
import math

import numpy as np

from _common import BACKEND, show

if BACKEND == "torch":
    import torch
    import torch.nn as nn
    from torch import Tensor
    from torch.nn import Transformer
    from torch.nn.utils.rnn import pad_sequence
    from torch.utils.data import DataLoader
else:
    import numbagrad as torch
    import numbagrad.nn as nn
    from numbagrad import Tensor
    from numbagrad.nn import Transformer
    from numbagrad.nn.utils.rnn import pad_sequence
    from numbagrad.utils.data import DataLoader

DEVICE = torch.device('cpu')
rng = np.random.default_rng(0)

SRC_LANGUAGE = 'de'
TGT_LANGUAGE = 'en'
# Define special symbols and indices
UNK_IDX, PAD_IDX, BOS_IDX, EOS_IDX = 0, 1, 2, 3
# Make sure the tokens are in order of their indices to properly insert them in vocab
special_symbols = ['<unk>', '<pad>', '<bos>', '<eos>']
src_words = "ein zwei drei vier fuenf sechs sieben acht".split()
tgt_words = "one two three four five six seven eight".split()
vocab_transform = {SRC_LANGUAGE: special_symbols + src_words, TGT_LANGUAGE: special_symbols + tgt_words}
stoi = {ln: {w: i for i, w in enumerate(v)} for ln, v in vocab_transform.items()}


def make_pair():
    idx = rng.integers(0, len(src_words), int(rng.integers(2, 6)))
    return " ".join(src_words[i] for i in idx), " ".join(tgt_words[i] for i in idx[::-1])


train_iter = [make_pair() for _ in range(24)]
val_iter = [make_pair() for _ in range(8)]


# helper Module to convert tensor of input indices into corresponding tensor of token embeddings
class PositionalEncoding(nn.Module):
    def __init__(self,
                 emb_size: int,
                 dropout: float,
                 maxlen: int = 5000):
        super(PositionalEncoding, self).__init__()
        den = torch.exp(- torch.arange(0, emb_size, 2)* math.log(10000) / emb_size)
        pos = torch.arange(0, maxlen).reshape(maxlen, 1)
        pos_embedding = torch.zeros((maxlen, emb_size))
        pos_embedding[:, 0::2] = torch.sin(pos * den)
        pos_embedding[:, 1::2] = torch.cos(pos * den)
        pos_embedding = pos_embedding.unsqueeze(-2)

        self.dropout = nn.Dropout(dropout)
        self.register_buffer('pos_embedding', pos_embedding)

    def forward(self, token_embedding: Tensor):
        return self.dropout(token_embedding + self.pos_embedding[:token_embedding.size(0), :])


# helper Module to convert tensor of input indices into corresponding tensor of token embeddings
class TokenEmbedding(nn.Module):
    def __init__(self, vocab_size: int, emb_size):
        super(TokenEmbedding, self).__init__()
        self.embedding = nn.Embedding(vocab_size, emb_size)
        self.emb_size = emb_size

    def forward(self, tokens: Tensor):
        return self.embedding(tokens.long()) * math.sqrt(self.emb_size)


# Seq2Seq Network
class Seq2SeqTransformer(nn.Module):
    def __init__(self,
                 num_encoder_layers: int,
                 num_decoder_layers: int,
                 emb_size: int,
                 nhead: int,
                 src_vocab_size: int,
                 tgt_vocab_size: int,
                 dim_feedforward: int = 512,
                 dropout: float = 0.1):
        super(Seq2SeqTransformer, self).__init__()
        self.transformer = Transformer(d_model=emb_size,
                                       nhead=nhead,
                                       num_encoder_layers=num_encoder_layers,
                                       num_decoder_layers=num_decoder_layers,
                                       dim_feedforward=dim_feedforward,
                                       dropout=dropout)
        self.generator = nn.Linear(emb_size, tgt_vocab_size)
        self.src_tok_emb = TokenEmbedding(src_vocab_size, emb_size)
        self.tgt_tok_emb = TokenEmbedding(tgt_vocab_size, emb_size)
        self.positional_encoding = PositionalEncoding(
            emb_size, dropout=dropout)

    def forward(self,
                src: Tensor,
                trg: Tensor,
                src_mask: Tensor,
                tgt_mask: Tensor,
                src_padding_mask: Tensor,
                tgt_padding_mask: Tensor,
                memory_key_padding_mask: Tensor):
        src_emb = self.positional_encoding(self.src_tok_emb(src))
        tgt_emb = self.positional_encoding(self.tgt_tok_emb(trg))
        outs = self.transformer(src_emb, tgt_emb, src_mask, tgt_mask, None,
                                src_padding_mask, tgt_padding_mask, memory_key_padding_mask)
        return self.generator(outs)

    def encode(self, src: Tensor, src_mask: Tensor):
        return self.transformer.encoder(self.positional_encoding(
                            self.src_tok_emb(src)), src_mask)

    def decode(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor):
        return self.transformer.decoder(self.positional_encoding(
                          self.tgt_tok_emb(tgt)), memory,
                          tgt_mask)


def generate_square_subsequent_mask(sz):
    mask = (torch.triu(torch.ones((sz, sz), device=DEVICE)) == 1).transpose(0, 1)
    mask = mask.float().masked_fill(mask == 0, float('-inf')).masked_fill(mask == 1, float(0.0))
    return mask


def create_mask(src, tgt):
    src_seq_len = src.shape[0]
    tgt_seq_len = tgt.shape[0]

    tgt_mask = generate_square_subsequent_mask(tgt_seq_len)
    src_mask = torch.zeros((src_seq_len, src_seq_len),device=DEVICE).type(torch.bool)

    src_padding_mask = (src == PAD_IDX).transpose(0, 1)
    tgt_padding_mask = (tgt == PAD_IDX).transpose(0, 1)
    return src_mask, tgt_mask, src_padding_mask, tgt_padding_mask


show("square_mask", generate_square_subsequent_mask(3).clamp(min=-1))
show("square_mask_matches", bool(torch.equal(generate_square_subsequent_mask(4), Transformer.generate_square_subsequent_mask(4))))

SRC_VOCAB_SIZE = len(vocab_transform[SRC_LANGUAGE])
TGT_VOCAB_SIZE = len(vocab_transform[TGT_LANGUAGE])
EMB_SIZE = 16
NHEAD = 2
FFN_HID_DIM = 32
BATCH_SIZE = 6
NUM_ENCODER_LAYERS = 2
NUM_DECODER_LAYERS = 1

transformer = Seq2SeqTransformer(NUM_ENCODER_LAYERS, NUM_DECODER_LAYERS, EMB_SIZE,
                                 NHEAD, SRC_VOCAB_SIZE, TGT_VOCAB_SIZE, FFN_HID_DIM, dropout=0.0)

for p in transformer.parameters():
    if p.dim() > 1:
        nn.init.xavier_uniform_(p)

# xavier_uniform_ draws from the library's generator: check its bound, then draw the same
# distribution with NumPy (biases too, so both libraries start alike)
w = transformer.transformer.encoder.layers[0].linear1.weight
show("xavier_bound", bool(w.abs().max() <= math.sqrt(6 / (EMB_SIZE + FFN_HID_DIM))))
with torch.no_grad():
    for name, p in transformer.named_parameters():
        if p.dim() > 1:
            fan_out, fan_in = p.shape[0], int(np.prod(tuple(p.shape)[1:]))
            bound = math.sqrt(6 / (fan_in + fan_out))
        elif name.endswith("bias"):
            bound = 0.1
        else:
            continue
        p.copy_(torch.from_numpy(rng.uniform(-bound, bound, tuple(p.shape)).astype(np.float32)))

transformer = transformer.to(DEVICE)
show("num_params", sum(p.numel() for p in transformer.parameters()))
show("pos_embedding", [*transformer.positional_encoding.pos_embedding.shape, *transformer.positional_encoding.pos_embedding[3, 0, :4]])
show("buffers", [name for name, _ in transformer.named_buffers()] == ["positional_encoding.pos_embedding"])

loss_fn = torch.nn.CrossEntropyLoss(ignore_index=PAD_IDX)

optimizer = torch.optim.Adam(transformer.parameters(), lr=0.003, betas=(0.9, 0.98), eps=1e-9)


# helper function to club together sequential operations
def sequential_transforms(*transforms):
    def func(txt_input):
        for transform in transforms:
            txt_input = transform(txt_input)
        return txt_input
    return func


# function to add BOS/EOS and create tensor for input sequence indices
def tensor_transform(token_ids):
    return torch.cat((torch.tensor([BOS_IDX]),
                      torch.tensor(token_ids),
                      torch.tensor([EOS_IDX])))


token_transform = {SRC_LANGUAGE: str.split, TGT_LANGUAGE: str.split}
text_transform = {}
for ln in [SRC_LANGUAGE, TGT_LANGUAGE]:
    text_transform[ln] = sequential_transforms(token_transform[ln],  # Tokenization
                                               lambda toks, ln=ln: [stoi[ln].get(t, UNK_IDX) for t in toks],  # Numericalization
                                               tensor_transform)  # Add BOS/EOS and create tensor


# function to collate data samples into batch tensors
def collate_fn(batch):
    src_batch, tgt_batch = [], []
    for src_sample, tgt_sample in batch:
        src_batch.append(text_transform[SRC_LANGUAGE](src_sample.rstrip("\n")))
        tgt_batch.append(text_transform[TGT_LANGUAGE](tgt_sample.rstrip("\n")))

    src_batch = pad_sequence(src_batch, padding_value=PAD_IDX)
    tgt_batch = pad_sequence(tgt_batch, padding_value=PAD_IDX)
    return src_batch, tgt_batch


def train_epoch(model, optimizer):
    model.train()
    losses = 0
    train_dataloader = DataLoader(train_iter, batch_size=BATCH_SIZE, collate_fn=collate_fn)

    for src, tgt in train_dataloader:
        src = src.to(DEVICE)
        tgt = tgt.to(DEVICE)

        tgt_input = tgt[:-1, :]

        src_mask, tgt_mask, src_padding_mask, tgt_padding_mask = create_mask(src, tgt_input)

        logits = model(src, tgt_input, src_mask, tgt_mask,src_padding_mask, tgt_padding_mask, src_padding_mask)

        optimizer.zero_grad()

        tgt_out = tgt[1:, :]
        loss = loss_fn(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1))
        loss.backward()

        optimizer.step()
        losses += loss.item()

    return losses / len(list(train_dataloader))


def evaluate(model):
    model.eval()
    losses = 0

    val_dataloader = DataLoader(val_iter, batch_size=BATCH_SIZE, collate_fn=collate_fn)

    for src, tgt in val_dataloader:
        src = src.to(DEVICE)
        tgt = tgt.to(DEVICE)

        tgt_input = tgt[:-1, :]

        src_mask, tgt_mask, src_padding_mask, tgt_padding_mask = create_mask(src, tgt_input)

        logits = model(src, tgt_input, src_mask, tgt_mask,src_padding_mask, tgt_padding_mask, src_padding_mask)

        tgt_out = tgt[1:, :]
        loss = loss_fn(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1))
        losses += loss.item()

    return losses / len(list(val_dataloader))


src, tgt = collate_fn(train_iter[:3])
show("collated", [*src.shape, *tgt.shape, *src[:, 0]])
masks = create_mask(src, tgt[:-1, :])
show("mask_shapes", [list(m.shape) for m in masks])
show("mask_dtypes", [m.dtype == torch.bool for m in masks])

NUM_EPOCHS = 6
train_losses, val_losses = [], []
for epoch in range(1, NUM_EPOCHS+1):
    train_loss = train_epoch(transformer, optimizer)
    val_loss = evaluate(transformer)
    train_losses.append(train_loss)
    val_losses.append(val_loss)
    print((f"Epoch: {epoch}, Train loss: {train_loss:.3f}, Val loss: {val_loss:.3f}"))
show("train_losses", train_losses)
show("val_losses", val_losses)
show("generator_bias", transformer.generator.bias)
show("grad_of_src_embedding", transformer.src_tok_emb.embedding.weight.grad[4, :4])
show("pad_row_grad", transformer.tgt_tok_emb.embedding.weight.grad[PAD_IDX].abs().sum())


# function to generate output sequence using greedy algorithm
def greedy_decode(model, src, src_mask, max_len, start_symbol):
    src = src.to(DEVICE)
    src_mask = src_mask.to(DEVICE)

    memory = model.encode(src, src_mask)
    ys = torch.ones(1, 1).fill_(start_symbol).type(torch.long).to(DEVICE)
    for i in range(max_len-1):
        memory = memory.to(DEVICE)
        tgt_mask = (generate_square_subsequent_mask(ys.size(0))
                    .type(torch.bool)).to(DEVICE)
        out = model.decode(ys, memory, tgt_mask)
        out = out.transpose(0, 1)
        prob = model.generator(out[:, -1])
        _, next_word = torch.max(prob, dim=1)
        next_word = next_word.item()

        ys = torch.cat([ys,
                        torch.ones(1, 1).type_as(src.data).fill_(next_word)], dim=0)
        if next_word == EOS_IDX:
            break
    return ys


# actual function to translate input sentence into target language
def translate(model: torch.nn.Module, src_sentence: str):
    model.eval()
    src = text_transform[SRC_LANGUAGE](src_sentence).view(-1, 1)
    num_tokens = src.shape[0]
    src_mask = (torch.zeros(num_tokens, num_tokens)).type(torch.bool)
    tgt_tokens = greedy_decode(
        model,  src, src_mask, max_len=num_tokens + 5, start_symbol=BOS_IDX).flatten()
    return " ".join([vocab_transform[TGT_LANGUAGE][i] for i in tgt_tokens.tolist()]).replace("<bos>", "").replace("<eos>", ""), tgt_tokens


sentence, tokens = translate(transformer, "zwei drei vier")
print(sentence)
show("translated_tokens", tokens)
with torch.no_grad():
    src = text_transform[SRC_LANGUAGE]("ein acht").view(-1, 1)
    memory = transformer.encode(src, torch.zeros(4, 4).type(torch.bool))
show("memory", [*memory.shape, *memory[1, 0, :4]])
