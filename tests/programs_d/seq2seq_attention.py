"""PyTorch tutorial "NLP From Scratch: Translation with a Sequence to Sequence Network and
Attention", scaled down: a GRU encoder, a Bahdanau-attention GRU decoder with teacher forcing
(``random.random() < teacher_forcing_ratio``, seeded), ``torch.bmm``, ``F.softmax(dim=-1)``,
``topk`` greedy decoding, NLLLoss with ``ignore_index`` for the padding; then Luong dot
attention over a padded batch with a mask.

    python seq2seq_attention.py [torch|numbagrad]
"""
import random

import numpy as np

from _common import BACKEND, numpy_init, show

if BACKEND == "torch":
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from torch import optim
else:
    import numbagrad as torch
    import numbagrad.nn as nn
    import numbagrad.nn.functional as F
    from numbagrad import optim

SOS_token, EOS_token, PAD_token = 0, 1, 2
MAX_LENGTH = 6
pairs = [("je suis grand", "i am tall"), ("tu es petit", "you are small"),
         ("il est froid", "he is cold"), ("je suis froid", "i am cold"),
         ("elle est grande", "she is tall"), ("nous sommes petits", "we are small")]


class Lang:
    def __init__(self, name):
        self.name = name
        self.word2index = {}
        self.index2word = {0: "SOS", 1: "EOS", 2: "PAD"}
        self.n_words = 3

    def addSentence(self, sentence):
        for word in sentence.split(' '):
            if word not in self.word2index:
                self.word2index[word] = self.n_words
                self.index2word[self.n_words] = word
                self.n_words += 1


input_lang, output_lang = Lang('fra'), Lang('eng')
for src, tgt in pairs:
    input_lang.addSentence(src)
    output_lang.addSentence(tgt)


def indexesFromSentence(lang, sentence):
    return [lang.word2index[word] for word in sentence.split(' ')]


def tensorFromSentence(lang, sentence):
    indexes = indexesFromSentence(lang, sentence)
    indexes.append(EOS_token)
    return torch.tensor(indexes, dtype=torch.long).view(1, -1)


class EncoderRNN(nn.Module):
    def __init__(self, input_size, hidden_size, dropout_p=0.0):
        super(EncoderRNN, self).__init__()
        self.hidden_size = hidden_size
        self.embedding = nn.Embedding(input_size, hidden_size)
        self.gru = nn.GRU(hidden_size, hidden_size, batch_first=True)
        self.dropout = nn.Dropout(dropout_p)

    def forward(self, input):
        embedded = self.dropout(self.embedding(input))
        output, hidden = self.gru(embedded)
        return output, hidden


class BahdanauAttention(nn.Module):
    def __init__(self, hidden_size):
        super(BahdanauAttention, self).__init__()
        self.Wa = nn.Linear(hidden_size, hidden_size)
        self.Ua = nn.Linear(hidden_size, hidden_size)
        self.Va = nn.Linear(hidden_size, 1)

    def forward(self, query, keys):
        scores = self.Va(torch.tanh(self.Wa(query) + self.Ua(keys)))
        scores = scores.squeeze(2).unsqueeze(1)
        weights = F.softmax(scores, dim=-1)
        context = torch.bmm(weights, keys)
        return context, weights


class AttnDecoderRNN(nn.Module):
    def __init__(self, hidden_size, output_size, dropout_p=0.0):
        super(AttnDecoderRNN, self).__init__()
        self.embedding = nn.Embedding(output_size, hidden_size)
        self.attention = BahdanauAttention(hidden_size)
        self.gru = nn.GRU(2 * hidden_size, hidden_size, batch_first=True)
        self.out = nn.Linear(hidden_size, output_size)
        self.dropout = nn.Dropout(dropout_p)

    def forward(self, encoder_outputs, encoder_hidden, target_tensor=None, teacher_forcing=True):
        batch_size = encoder_outputs.size(0)
        decoder_input = torch.empty(batch_size, 1, dtype=torch.long).fill_(SOS_token)
        decoder_hidden = encoder_hidden
        decoder_outputs = []
        attentions = []
        length = target_tensor.size(1) if target_tensor is not None else MAX_LENGTH
        for i in range(length):
            decoder_output, decoder_hidden, attn_weights = self.forward_step(
                decoder_input, decoder_hidden, encoder_outputs)
            decoder_outputs.append(decoder_output)
            attentions.append(attn_weights)
            if target_tensor is not None and teacher_forcing:
                # Teacher forcing: Feed the target as the next input
                decoder_input = target_tensor[:, i].unsqueeze(1)
            else:
                # Without teacher forcing: use its own predictions as the next input
                _, topi = decoder_output.topk(1)
                decoder_input = topi.squeeze(-1).detach()  # detach from history as input
        decoder_outputs = torch.cat(decoder_outputs, dim=1)
        decoder_outputs = F.log_softmax(decoder_outputs, dim=-1)
        attentions = torch.cat(attentions, dim=1)
        return decoder_outputs, decoder_hidden, attentions

    def forward_step(self, input, hidden, encoder_outputs):
        embedded = self.dropout(self.embedding(input))
        query = hidden.permute(1, 0, 2)
        context, attn_weights = self.attention(query, encoder_outputs)
        input_gru = torch.cat((embedded, context), dim=2)
        output, hidden = self.gru(input_gru, hidden)
        output = self.out(output)
        return output, hidden, attn_weights


hidden_size = 16
encoder = EncoderRNN(input_lang.n_words, hidden_size)
decoder = AttnDecoderRNN(hidden_size, output_lang.n_words)
numpy_init(torch, encoder, seed=0)
numpy_init(torch, decoder, seed=1)
encoder_optimizer = optim.Adam(encoder.parameters(), lr=0.01)
decoder_optimizer = optim.Adam(decoder.parameters(), lr=0.01)
criterion = nn.NLLLoss(ignore_index=PAD_token)

# a padded batch: all the targets, EOS then PAD to the longest
inputs = [indexesFromSentence(input_lang, s) + [EOS_token] for s, _ in pairs]
targets = [indexesFromSentence(output_lang, t) + [EOS_token] for _, t in pairs]
targets[0] = targets[0][:2] + [EOS_token]  # one shorter target, so PAD appears
T = max(len(t) for t in targets)
input_tensor = torch.tensor(inputs)
target_tensor = torch.tensor([t + [PAD_token] * (T - len(t)) for t in targets])
show('target_pad', (target_tensor == PAD_token).sum())

random.seed(0)
teacher_forcing_ratio = 0.5
losses = []
for epoch in range(12):
    encoder_optimizer.zero_grad()
    decoder_optimizer.zero_grad()
    encoder_outputs, encoder_hidden = encoder(input_tensor)
    use_teacher_forcing = random.random() < teacher_forcing_ratio
    decoder_outputs, _, _ = decoder(encoder_outputs, encoder_hidden, target_tensor,
                                    teacher_forcing=use_teacher_forcing)
    loss = criterion(decoder_outputs.view(-1, decoder_outputs.size(-1)), target_tensor.view(-1))
    loss.backward()
    encoder_optimizer.step()
    decoder_optimizer.step()
    losses.append(loss.item())
show('losses', losses)
show('enc_grad', encoder.gru.weight_hh_l0.grad.norm())
show('attn_grad', decoder.attention.Va.weight.grad)


def evaluate(encoder, decoder, sentence):
    with torch.no_grad():
        input_tensor = tensorFromSentence(input_lang, sentence)
        encoder_outputs, encoder_hidden = encoder(input_tensor)
        decoder_outputs, decoder_hidden, decoder_attn = decoder(encoder_outputs, encoder_hidden)
        _, topi = decoder_outputs.topk(1)
        decoded_ids = topi.squeeze()
        decoded_words = []
        for idx in decoded_ids:
            if idx.item() == EOS_token:
                decoded_words.append('<EOS>')
                break
            decoded_words.append(output_lang.index2word[idx.item()])
    return decoded_words, decoder_attn


encoder.eval()
decoder.eval()
for src, tgt in pairs[:3]:
    words, attn = evaluate(encoder, decoder, src)
    print('>', src, '=', tgt, '<', ' '.join(words))
    show('attn_' + src.replace(' ', '_'), attn[0, 0])

# Luong dot attention over padded encoder states, with a mask
lengths = torch.tensor([4, 2, 3])
rng = np.random.default_rng(3)
enc = torch.from_numpy(rng.normal(size=(3, 4, 8)).astype(np.float32)).requires_grad_()
dec = torch.from_numpy(rng.normal(size=(3, 2, 8)).astype(np.float32)).requires_grad_()
mask = torch.arange(4)[None, :] < lengths[:, None]
scores = torch.bmm(dec, enc.transpose(1, 2)) / (8 ** 0.5)
scores = scores.masked_fill(~mask.unsqueeze(1), float('-inf'))
alpha = torch.softmax(scores, dim=2)
context = alpha @ enc
show('alpha', alpha)
show('alpha_rowsum', alpha.sum(-1))
(context.pow(2).sum() + alpha[:, :, 0].sum()).backward()
show('enc_grad_dot', enc.grad)
show('dec_grad_dot', dec.grad)
