"""PyTorch's examples/word_language_model: a Dictionary/Corpus tokenizer (torch.tensor(ids)
.type(torch.int64), torch.cat), batchify (narrow, view, t().contiguous()), get_batch, an
RNNModel of Dropout, Embedding, a 2-layer LSTM and a Linear decoder whose weight is TIED to
the encoder's, init_hidden by weight.new_zeros, repackage_hidden (detach of tuples),
NLLLoss on log_softmax, clip_grad_norm_(0.25), the manual update
``p.data.add_(p.grad, alpha=-lr)``, model.zero_grad(), evaluate() summing
``len(data) * criterion(...).item()``, lr annealing by 4, the best model saved whole by
torch.save(model, f) and loaded back (torch.load(f, weights_only=False), then
rnn.flatten_parameters()), and math.exp of the loss. A generated corpus in place of
Wikitext-2; dropout 0; init_weights' uniform_ draws come from NumPy.

    python word_lm.py [torch|numbagrad]
"""
import math
import os
import tempfile

import numpy as np

from _common import BACKEND, numpy_init, show

if BACKEND == "torch":
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
else:
    import numbagrad as torch
    import numbagrad.nn as nn
    import numbagrad.nn.functional as F

init_rng = np.random.default_rng(5)


class Dictionary(object):
    def __init__(self):
        self.word2idx = {}
        self.idx2word = []

    def add_word(self, word):
        if word not in self.word2idx:
            self.idx2word.append(word)
            self.word2idx[word] = len(self.idx2word) - 1
        return self.word2idx[word]

    def __len__(self):
        return len(self.idx2word)


class Corpus(object):
    def __init__(self, texts):
        self.dictionary = Dictionary()
        self.train = self.tokenize(texts['train'])
        self.valid = self.tokenize(texts['valid'])
        self.test = self.tokenize(texts['test'])

    def tokenize(self, lines):
        """Tokenizes a text file."""
        # Add words to the dictionary
        for line in lines:
            words = line.split() + ['<eos>']
            for word in words:
                self.dictionary.add_word(word)

        # Tokenize file content
        idss = []
        for line in lines:
            words = line.split() + ['<eos>']
            ids = []
            for word in words:
                ids.append(self.dictionary.word2idx[word])
            idss.append(torch.tensor(ids).type(torch.int64))
        ids = torch.cat(idss)

        return ids


class RNNModel(nn.Module):
    """Container module with an encoder, a recurrent module, and a decoder."""

    def __init__(self, rnn_type, ntoken, ninp, nhid, nlayers, dropout=0.5, tie_weights=False):
        super(RNNModel, self).__init__()
        self.ntoken = ntoken
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        if rnn_type in ['LSTM', 'GRU']:
            self.rnn = getattr(nn, rnn_type)(ninp, nhid, nlayers, dropout=dropout)
        else:
            try:
                nonlinearity = {'RNN_TANH': 'tanh', 'RNN_RELU': 'relu'}[rnn_type]
            except KeyError as e:
                raise ValueError("""An invalid option for `--model` was supplied,
                                 options are ['LSTM', 'GRU', 'RNN_TANH' or 'RNN_RELU']""") from e
            self.rnn = nn.RNN(ninp, nhid, nlayers, nonlinearity=nonlinearity, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)

        # Optionally tie weights as in:
        # "Using the Output Embedding to Improve Language Models" (Press & Wolf 2016)
        # https://arxiv.org/abs/1608.05859
        # and
        # "Tying Word Vectors and Word Classifiers: A Loss Framework for Language Modeling" (Inan et al. 2016)
        # https://arxiv.org/abs/1611.01462
        if tie_weights:
            if nhid != ninp:
                raise ValueError('When using the tied flag, nhid must be equal to emsize')
            self.decoder.weight = self.encoder.weight

        self.init_weights()

        self.rnn_type = rnn_type
        self.nhid = nhid
        self.nlayers = nlayers

    def init_weights(self):
        initrange = 0.1
        # (nn.init.uniform_(w, -initrange, initrange), drawn by NumPy)
        with torch.no_grad():
            self.encoder.weight.copy_(torch.from_numpy(init_rng.uniform(
                -initrange, initrange, tuple(self.encoder.weight.shape)).astype(np.float32)))
        nn.init.zeros_(self.decoder.bias)
        with torch.no_grad():
            self.decoder.weight.copy_(torch.from_numpy(init_rng.uniform(
                -initrange, initrange, tuple(self.decoder.weight.shape)).astype(np.float32)))

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        decoded = self.decoder(output)
        decoded = decoded.view(-1, self.ntoken)
        return F.log_softmax(decoded, dim=1), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        if self.rnn_type == 'LSTM':
            return (weight.new_zeros(self.nlayers, bsz, self.nhid),
                    weight.new_zeros(self.nlayers, bsz, self.nhid))
        else:
            return weight.new_zeros(self.nlayers, bsz, self.nhid)


args = {'emsize': 16, 'nhid': 16, 'nlayers': 2, 'lr': 20, 'clip': 0.25, 'epochs': 3,
        'batch_size': 4, 'bptt': 5, 'dropout': 0.0, 'tied': True, 'model': 'LSTM'}
torch.manual_seed(1111)
device = torch.device("cpu")


def make_text(n_lines, seed):
    words = ['the', 'cat', 'dog', 'sat', 'ran', 'on', 'a', 'mat', 'log', 'and', 'then', 'slept']
    r = np.random.default_rng(seed)
    return [' '.join(r.choice(words, size=r.integers(3, 8))) for _ in range(n_lines)]


corpus = Corpus({'train': make_text(24, 0), 'valid': make_text(8, 1), 'test': make_text(8, 2)})

# Starting from sequential data, batchify arranges the dataset into columns.
# For instance, with the alphabet as the sequence and batch size 4, we'd get
# ┌ a g m s ┐
# │ b h n t │
# │ c i o u │
# │ d j p v │
# │ e k q w │
# └ f l r x ┘.
# These columns are treated as independent by the model, which means that the
# dependence of e. g. 'g' on 'f' can not be learned, but allows more efficient
# batch processing.


def batchify(data, bsz):
    # Work out how cleanly we can divide the dataset into bsz parts.
    nbatch = data.size(0) // bsz
    # Trim off any extra elements that wouldn't cleanly fit (remainders).
    data = data.narrow(0, 0, nbatch * bsz)
    # Evenly divide the data across the bsz batches.
    data = data.view(bsz, -1).t().contiguous()
    return data.to(device)


eval_batch_size = 2
train_data = batchify(corpus.train, args['batch_size'])
val_data = batchify(corpus.valid, eval_batch_size)
test_data = batchify(corpus.test, eval_batch_size)

ntokens = len(corpus.dictionary)
model = RNNModel(args['model'], ntokens, args['emsize'], args['nhid'], args['nlayers'],
                 args['dropout'], args['tied']).to(device)
numpy_init(torch, model.rnn)

criterion = nn.NLLLoss()


def repackage_hidden(h):
    """Wraps hidden states in new Tensors, to detach them from their history."""

    if isinstance(h, torch.Tensor):
        return h.detach()
    else:
        return tuple(repackage_hidden(v) for v in h)


# get_batch subdivides the source data into chunks of length args.bptt.
# If source is equal to the example output of the batchify function, with
# a bptt-limit of 2, we'd get the following two Variables for i = 0:
# ┌ a g m s ┐ ┌ b h n t ┐
# └ b h n t ┘ └ c i o u ┘
# Note that despite the name of the function, the subdivison of data is not
# done along the batch dimension (i.e. dimension 1), since that was handled
# by the batchify function. The chunks are along dimension 0, corresponding
# to the seq_len dimension in the LSTM.

def get_batch(source, i):
    seq_len = min(args['bptt'], len(source) - 1 - i)
    data = source[i:i+seq_len]
    target = source[i+1:i+1+seq_len].view(-1)
    return data, target


def evaluate(data_source):
    # Turn on evaluation mode which disables dropout.
    model.eval()
    total_loss = 0.
    ntokens = len(corpus.dictionary)
    hidden = model.init_hidden(eval_batch_size)
    with torch.no_grad():
        for i in range(0, data_source.size(0) - 1, args['bptt']):
            data, targets = get_batch(data_source, i)
            output, hidden = model(data, hidden)
            hidden = repackage_hidden(hidden)
            total_loss += len(data) * criterion(output, targets).item()
    return total_loss / (len(data_source) - 1)


train_losses, grad_norms = [], []


def train():
    # Turn on training mode which enables dropout.
    model.train()
    total_loss = 0.
    ntokens = len(corpus.dictionary)
    hidden = model.init_hidden(args['batch_size'])
    for batch, i in enumerate(range(0, train_data.size(0) - 1, args['bptt'])):
        data, targets = get_batch(train_data, i)
        # Starting each batch, we detach the hidden state from how it was previously produced.
        # If we didn't, the model would try backpropagating all the way to start of the dataset.
        model.zero_grad()
        hidden = repackage_hidden(hidden)
        output, hidden = model(data, hidden)
        loss = criterion(output, targets)
        loss.backward()

        # `clip_grad_norm` helps prevent the exploding gradient problem in RNNs / LSTMs.
        grad_norms.append(torch.nn.utils.clip_grad_norm_(model.parameters(), args['clip']).item())
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-lr)

        total_loss += loss.item()
        train_losses.append(loss.item())
    return total_loss / (batch + 1)


# Loop over epochs.
save_dir = tempfile.TemporaryDirectory()
save_path = os.path.join(save_dir.name, 'model.pt')
lr = args['lr']
best_val_loss = None
val_losses, lrs = [], []
for epoch in range(1, args['epochs'] + 1):
    cur_loss = train()
    val_loss = evaluate(val_data)
    print('| end of epoch {:3d} | valid loss {:5.2f} | valid ppl {:8.2f}'.format(
        epoch, val_loss, math.exp(val_loss)))
    val_losses.append(val_loss)
    # Save the model if the validation loss is the best we've seen so far.
    if not best_val_loss or val_loss < best_val_loss:
        with open(save_path, 'wb') as f:
            torch.save(model, f)
        best_val_loss = val_loss
    else:
        # Anneal the learning rate if no improvement has been seen in the validation dataset.
        lr /= 4.0
    lrs.append(lr)

last_grad = model.rnn.bias_hh_l1.grad[:8].clone()
# Load the best saved model.
try:
    with open(save_path, 'rb') as f:
        model = torch.load(f, weights_only=False)
        # after load the rnn params are not a continuous chunk of memory
        # this makes them a continuous chunk, and will speed up forward pass
        # Currently, only rnn model supports flatten_parameters function.
        if args['model'] in ['RNN_TANH', 'RNN_RELU', 'LSTM', 'GRU']:
            model.rnn.flatten_parameters()
finally:
    save_dir.cleanup()

# Run on test data.
test_loss = evaluate(test_data)
print('| End of training | test loss {:5.2f} | test ppl {:8.2f}'.format(
    test_loss, math.exp(test_loss)))

show('ntokens', ntokens)
show('train_data_shape', list(train_data.shape))
show('train_data_col', train_data[:, 1])
show('train_losses', train_losses)
show('grad_norms', grad_norms)
show('val_losses', val_losses)
show('lrs', lrs)
show('test', [test_loss, math.exp(test_loss)])
show('tied', [model.decoder.weight is model.encoder.weight,
              model.decoder.weight.data_ptr() == model.encoder.weight.data_ptr(),
              len(list(model.parameters())), len(model.state_dict())])
show('encoder_weight', model.encoder.weight[:2])
show('decoder_bias', model.decoder.bias)
show('lstm_l1_bias_grad', last_grad)
show('loaded_grads', [p.grad is None for p in model.parameters()])
hidden = model.init_hidden(1)
with torch.no_grad():
    out, hidden = model(test_data[:4, :1], hidden)
show('next_word_logp', out[-1])
show('hidden', hidden[0][1])
