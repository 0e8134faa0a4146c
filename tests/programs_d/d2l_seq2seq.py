"""d2l.ai "Sequence to Sequence Learning" (machine translation), scaled down: the
Encoder/Decoder/EncoderDecoder interfaces, a Seq2SeqEncoder (Embedding + nn.GRU over
``X.permute(1, 0, 2)``), a Seq2SeqDecoder whose input is joined to the context
``state[-1].repeat(X.shape[0], 1, 1)`` by torch.cat; sequence_mask
(``torch.arange(...)[None, :] < valid_len[:, None]``, ``X[~mask] = value``) and
MaskedSoftmaxCELoss, a subclass of nn.CrossEntropyLoss that sets ``self.reduction='none'`` and
calls the parent on ``pred.permute(0, 2, 1)``; train_seq2seq with ``net.apply`` of an init
function, Adam, teacher forcing (the <bos> column concatenated before ``Y[:, :-1]``),
``l.sum().backward()`` and d2l's own grad_clipping (the global norm by torch.sqrt of a Python
sum; ``p.grad[:] *= theta / norm``); then greedy predict_seq2seq with ``argmax(dim=2)`` and
BLEU. The Xavier draws come from NumPy (the init function copies them in, keeping the apply()
pattern) and a toy English-French corpus stands in for the downloaded one.

    python d2l_seq2seq.py [torch|numbagrad]
"""
import collections
import math

import numpy as np

from _common import BACKEND, numpy_init, show

if BACKEND == "torch":
    import torch
    from torch import nn
else:
    import numbagrad as torch
    from numbagrad import nn

rng = np.random.default_rng(0)

raw_text = """go .\tva !
hi .\tsalut !
run !\tcours !
i lost .\tj'ai perdu .
he's calm .\til est calme .
i'm home .\tje suis chez moi .
i'm calm .\tje suis calme .
we won .\tnous avons gagne .
he ran .\til a couru .
i ran .\tj'ai couru .
we ran .\tnous avons couru .
i'm cold .\tj'ai froid .
he's cold .\til a froid .
he's home .\til est chez lui .
we lost .\tnous avons perdu .
i won !\tj'ai gagne !"""


def tokenize_nmt(text, num_examples=None):
    source, target = [], []
    for i, line in enumerate(text.split('\n')):
        if num_examples and i > num_examples:
            break
        parts = line.split('\t')
        if len(parts) == 2:
            source.append(parts[0].split(' '))
            target.append(parts[1].split(' '))
    return source, target


class Vocab:
    """Vocabulary for text."""
    def __init__(self, tokens=None, min_freq=0, reserved_tokens=None):
        if tokens is None:
            tokens = []
        if reserved_tokens is None:
            reserved_tokens = []
        counter = collections.Counter([token for line in tokens for token in line])
        self._token_freqs = sorted(counter.items(), key=lambda x: (-x[1], x[0]))
        self.idx_to_token = ['<unk>'] + reserved_tokens
        self.token_to_idx = {token: idx for idx, token in enumerate(self.idx_to_token)}
        for token, freq in self._token_freqs:
            if freq < min_freq:
                break
            if token not in self.token_to_idx:
                self.idx_to_token.append(token)
                self.token_to_idx[token] = len(self.idx_to_token) - 1

    def __len__(self):
        return len(self.idx_to_token)

    def __getitem__(self, tokens):
        if not isinstance(tokens, (list, tuple)):
            return self.token_to_idx.get(tokens, self.unk)
        return [self.__getitem__(token) for token in tokens]

    def to_tokens(self, indices):
        if not isinstance(indices, (list, tuple)):
            return self.idx_to_token[indices]
        return [self.idx_to_token[index] for index in indices]

    @property
    def unk(self):
        return 0


def truncate_pad(line, num_steps, padding_token):
    if len(line) > num_steps:
        return line[:num_steps]  # truncate
    return line + [padding_token] * (num_steps - len(line))  # pad


def build_array_nmt(lines, vocab, num_steps):
    lines = [vocab[l] for l in lines]
    lines = [l + [vocab['<eos>']] for l in lines]
    array = torch.tensor([truncate_pad(l, num_steps, vocab['<pad>']) for l in lines])
    valid_len = (array != vocab['<pad>']).type(torch.int32).sum(1)
    return array, valid_len


def load_data_nmt(batch_size, num_steps):
    source, target = tokenize_nmt(raw_text)
    src_vocab = Vocab(source, min_freq=0, reserved_tokens=['<pad>', '<bos>', '<eos>'])
    tgt_vocab = Vocab(target, min_freq=0, reserved_tokens=['<pad>', '<bos>', '<eos>'])
    src_array, src_valid_len = build_array_nmt(source, src_vocab, num_steps)
    tgt_array, tgt_valid_len = build_array_nmt(target, tgt_vocab, num_steps)
    data_arrays = (src_array, src_valid_len, tgt_array, tgt_valid_len)

    def data_iter():
        # (d2l.load_array's shuffled DataLoader, shuffled by NumPy)
        order = torch.from_numpy(rng.permutation(len(source)))
        for i in range(0, len(source), batch_size):
            idx = order[i:i + batch_size]
            yield tuple(a[idx] for a in data_arrays)
    return data_iter, src_vocab, tgt_vocab


class Encoder(nn.Module):
    """The base encoder interface for the encoder-decoder architecture."""
    def __init__(self, **kwargs):
        super(Encoder, self).__init__(**kwargs)

    def forward(self, X, *args):
        raise NotImplementedError


class Decoder(nn.Module):
    """The base decoder interface for the encoder-decoder architecture."""
    def __init__(self, **kwargs):
        super(Decoder, self).__init__(**kwargs)

    def init_state(self, enc_outputs, *args):
        raise NotImplementedError

    def forward(self, X, state):
        raise NotImplementedError


class EncoderDecoder(nn.Module):
    """The base class for the encoder-decoder architecture."""
    def __init__(self, encoder, decoder, **kwargs):
        super(EncoderDecoder, self).__init__(**kwargs)
        self.encoder = encoder
        self.decoder = decoder

    def forward(self, enc_X, dec_X, *args):
        enc_outputs = self.encoder(enc_X, *args)
        dec_state = self.decoder.init_state(enc_outputs, *args)
        return self.decoder(dec_X, dec_state)


class Seq2SeqEncoder(Encoder):
    """The RNN encoder for sequence to sequence learning."""
    def __init__(self, vocab_size, embed_size, num_hiddens, num_layers,
                 dropout=0, **kwargs):
        super(Seq2SeqEncoder, self).__init__(**kwargs)
        # Embedding layer
        self.embedding = nn.Embedding(vocab_size, embed_size)
        self.rnn = nn.GRU(embed_size, num_hiddens, num_layers, dropout=dropout)

    def forward(self, X, *args):
        # `X` (batch_size, num_steps, embed_size) after embedding
        X = self.embedding(X)
        # time steps first for the RNN
        X = X.permute(1, 0, 2)
        # no state given: it starts at zeros
        output, state = self.rnn(X)
        # `output`: (num_steps, batch_size, num_hiddens)
        # `state`: (num_layers, batch_size, num_hiddens)
        return output, state


class Seq2SeqDecoder(Decoder):
    """The RNN decoder for sequence to sequence learning."""
    def __init__(self, vocab_size, embed_size, num_hiddens, num_layers,
                 dropout=0, **kwargs):
        super(Seq2SeqDecoder, self).__init__(**kwargs)
        self.embedding = nn.Embedding(vocab_size, embed_size)
        self.rnn = nn.GRU(embed_size + num_hiddens, num_hiddens, num_layers,
                          dropout=dropout)
        self.dense = nn.Linear(num_hiddens, vocab_size)

    def init_state(self, enc_outputs, *args):
        return enc_outputs[1]

    def forward(self, X, state):
        # `X` (num_steps, batch_size, embed_size) after the permute
        X = self.embedding(X).permute(1, 0, 2)
        # the encoder's last-layer final state, repeated for every time step
        context = state[-1].repeat(X.shape[0], 1, 1)
        X_and_context = torch.cat((X, context), 2)
        output, state = self.rnn(X_and_context, state)
        output = self.dense(output).permute(1, 0, 2)
        # `output` (batch_size, num_steps, vocab_size)
        return output, state


encoder = Seq2SeqEncoder(vocab_size=10, embed_size=8, num_hiddens=16, num_layers=2)
numpy_init(torch, encoder)
encoder.eval()
X = torch.zeros((4, 7), dtype=torch.long)
output, state = encoder(X)
show('enc_shapes', list(output.shape) + list(state.shape))
decoder = Seq2SeqDecoder(vocab_size=10, embed_size=8, num_hiddens=16, num_layers=2)
numpy_init(torch, decoder)
decoder.eval()
state = decoder.init_state(encoder(X))
output, state = decoder(X, state)
show('dec_shapes', list(output.shape) + list(state.shape))
show('dec_out', output[0, 0])


def sequence_mask(X, valid_len, value=0):
    """Mask irrelevant entries in sequences."""
    maxlen = X.size(1)
    mask = torch.arange((maxlen), dtype=torch.float32,
                        device=X.device)[None, :] < valid_len[:, None]
    X[~mask] = value
    return X


X = torch.tensor([[1, 2, 3], [4, 5, 6]])
show('sequence_mask', sequence_mask(X, torch.tensor([1, 2])))
X = torch.ones(2, 3, 4)
show('sequence_mask_value', sequence_mask(X, torch.tensor([1, 2]), value=-1))


class MaskedSoftmaxCELoss(nn.CrossEntropyLoss):
    """The softmax cross-entropy loss with masks."""
    # `pred` (batch_size, num_steps, vocab_size)
    # `label` (batch_size, num_steps)
    # `valid_len` (batch_size,)
    def forward(self, pred, label, valid_len):
        weights = torch.ones_like(label)
        weights = sequence_mask(weights, valid_len)
        self.reduction = 'none'
        unweighted_loss = super(MaskedSoftmaxCELoss, self).forward(
            pred.permute(0, 2, 1), label)
        weighted_loss = (unweighted_loss * weights).mean(dim=1)
        return weighted_loss


loss = MaskedSoftmaxCELoss()
show('masked_ce', loss(torch.ones(3, 4, 10), torch.ones((3, 4), dtype=torch.long),
                       torch.tensor([4, 2, 0])))


def grad_clipping(net, theta):
    """Clip the gradient."""
    if isinstance(net, nn.Module):
        params = [p for p in net.parameters() if p.requires_grad]
    else:
        params = net.params
    norm = torch.sqrt(sum(torch.sum((p.grad ** 2)) for p in params))
    if norm > theta:
        for param in params:
            param.grad[:] *= theta / norm
    return norm


def xavier_uniform_np(tensor):
    # (nn.init.xavier_uniform_'s bound sqrt(6 / (fan_in + fan_out)), the draw from NumPy)
    fan_out, fan_in = tensor.shape
    bound = math.sqrt(6.0 / (fan_in + fan_out))
    with torch.no_grad():
        tensor.copy_(torch.from_numpy(rng.uniform(-bound, bound, tuple(tensor.shape))
                                      .astype(np.float32)))


history = {'loss': [], 'norm': []}


def train_seq2seq(net, data_iter, lr, num_epochs, tgt_vocab, device):
    """Train a model for sequence to sequence."""
    def xavier_init_weights(m):
        if type(m) == nn.Linear:
            xavier_uniform_np(m.weight)
        if type(m) == nn.GRU:
            for param in m._flat_weights_names:
                if "weight" in param:
                    xavier_uniform_np(m._parameters[param])
    net.apply(xavier_init_weights)
    net.to(device)
    optimizer = torch.optim.Adam(net.parameters(), lr=lr)
    loss = MaskedSoftmaxCELoss()
    net.train()
    for epoch in range(num_epochs):
        total_loss, total_tokens = 0.0, 0
        for batch in data_iter():
            optimizer.zero_grad()
            X, X_valid_len, Y, Y_valid_len = [x.to(device) for x in batch]
            bos = torch.tensor([tgt_vocab['<bos>']] * Y.shape[0],
                               device=device).reshape(-1, 1)
            dec_input = torch.cat([bos, Y[:, :-1]], 1)  # Teacher forcing
            Y_hat, _ = net(X, dec_input, X_valid_len)
            l = loss(Y_hat, Y, Y_valid_len)
            l.sum().backward()  # Make the loss scalar for `backward`
            history['norm'].append(grad_clipping(net, 1).item())
            num_tokens = Y_valid_len.sum()
            optimizer.step()
            with torch.no_grad():
                total_loss += l.sum().item()
                total_tokens += num_tokens.item()
        history['loss'].append(total_loss / total_tokens)
        if (epoch + 1) % 10 == 0:
            print(f'epoch {epoch + 1}: loss {total_loss / total_tokens:.3f}')


embed_size, num_hiddens, num_layers, dropout = 8, 16, 2, 0.0
batch_size, num_steps = 4, 6
lr, num_epochs, device = 0.01, 30, torch.device('cpu')

train_iter, src_vocab, tgt_vocab = load_data_nmt(batch_size, num_steps)
show('vocab_sizes', [len(src_vocab), len(tgt_vocab)])
encoder = Seq2SeqEncoder(len(src_vocab), embed_size, num_hiddens, num_layers, dropout)
decoder = Seq2SeqDecoder(len(tgt_vocab), embed_size, num_hiddens, num_layers, dropout)
net = EncoderDecoder(encoder, decoder)
numpy_init(torch, net, seed=1)  # (biases and embeddings; the weights are Xavier below)
train_seq2seq(net, train_iter, lr, num_epochs, tgt_vocab, device)
show('loss', history['loss'])
show('grad_norms', history['norm'])
show('dense_grad', net.decoder.dense.weight.grad[:3])
show('enc_rnn_grad', net.encoder.rnn.weight_hh_l1.grad[:2])
show('enc_embedding', net.encoder.embedding.weight[:2])


def predict_seq2seq(net, src_sentence, src_vocab, tgt_vocab, num_steps,
                    device, save_attention_weights=False):
    """Predict for sequence to sequence."""
    # Set `net` to eval mode for inference
    net.eval()
    src_tokens = src_vocab[src_sentence.lower().split(' ')] + [src_vocab['<eos>']]
    enc_valid_len = torch.tensor([len(src_tokens)], device=device)
    src_tokens = truncate_pad(src_tokens, num_steps, src_vocab['<pad>'])
    # Add the batch axis
    enc_X = torch.unsqueeze(torch.tensor(src_tokens, dtype=torch.long, device=device), dim=0)
    enc_outputs = net.encoder(enc_X, enc_valid_len)
    dec_state = net.decoder.init_state(enc_outputs, enc_valid_len)
    # Add the batch axis
    dec_X = torch.unsqueeze(torch.tensor(
        [tgt_vocab['<bos>']], dtype=torch.long, device=device), dim=0)
    output_seq, attention_weight_seq = [], []
    for _ in range(num_steps):
        Y, dec_state = net.decoder(dec_X, dec_state)
        # the most likely token is the next step's input
        dec_X = Y.argmax(dim=2)
        pred = dec_X.squeeze(dim=0).type(torch.int32).item()
        # Save attention weights (to be covered later)
        if save_attention_weights:
            attention_weight_seq.append(net.decoder.attention_weights)
        # Once the end-of-sequence token is predicted, the generation of the
        # output sequence is complete
        if pred == tgt_vocab['<eos>']:
            break
        output_seq.append(pred)
    return ' '.join(tgt_vocab.to_tokens(output_seq)), attention_weight_seq, Y


def bleu(pred_seq, label_seq, k):
    """Compute the BLEU."""
    pred_tokens, label_tokens = pred_seq.split(' '), label_seq.split(' ')
    len_pred, len_label = len(pred_tokens), len(label_tokens)
    score = math.exp(min(0, 1 - len_label / len_pred))
    for n in range(1, k + 1):
        num_matches, label_subs = 0, collections.defaultdict(int)
        for i in range(len_label - n + 1):
            label_subs[' '.join(label_tokens[i: i + n])] += 1
        for i in range(len_pred - n + 1):
            if label_subs[' '.join(pred_tokens[i: i + n])] > 0:
                num_matches += 1
                label_subs[' '.join(pred_tokens[i: i + n])] -= 1
        score *= math.pow(num_matches / (len_pred - n + 1), math.pow(0.5, n))
    return score


engs = ['go .', "i lost .", 'he\'s calm .', 'i\'m home .']
fras = ['va !', 'j\'ai perdu .', 'il est calme .', 'je suis chez moi .']
translations, scores = [], []
for eng, fra in zip(engs, fras):
    translation, attention_weight_seq, last_Y = predict_seq2seq(
        net, eng, src_vocab, tgt_vocab, num_steps, device)
    print(f'{eng} => {translation}, bleu {bleu(translation, fra, k=2):.3f}')
    translations.append(tgt_vocab[translation.split(' ')] if translation else [])
    scores.append(bleu(translation, fra, k=2) if translation else 0.0)
    show(f'last_logits_{len(translations)}', last_Y)
show('translations', translations)
show('bleu', scores)
