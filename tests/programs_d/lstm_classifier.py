"""A sentiment classifier as the bentrevett "pytorch-sentiment-analysis" notebooks write it:
variable-length token sequences padded with ``pad_sequence``, ``nn.Embedding(padding_idx=0)``,
a bidirectional 2-layer LSTM over ``pack_padded_sequence(enforce_sorted=False)``, the last
hidden states of both directions concatenated, BCEWithLogitsLoss, a binary accuracy, Adam and
ReduceLROnPlateau stepped on the validation loss.

    python lstm_classifier.py [torch|numbagrad]
"""
import numpy as np

from _common import BACKEND, numpy_init, show

if BACKEND == "torch":
    import torch
    import torch.nn as nn
    import torch.optim as optim
    from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence
else:
    import numbagrad as torch
    import numbagrad.nn as nn
    import numbagrad.optim as optim
    from numbagrad.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence

PAD_IDX = 0
vocab = ['<pad>', '<unk>', 'good', 'great', 'fun', 'love', 'bad', 'awful', 'boring', 'hate',
         'the', 'movie', 'was', 'plot', 'acting', 'a', 'really', 'not']
stoi = {w: i for i, w in enumerate(vocab)}
rng = np.random.default_rng(0)
positive, negative, filler = ['good', 'great', 'fun', 'love'], ['bad', 'awful', 'boring', 'hate'], vocab[10:]


def make_review(label):
    words = list(rng.choice(filler, size=rng.integers(2, 7)))
    words.insert(int(rng.integers(0, len(words) + 1)), rng.choice(positive if label else negative))
    return words


labels = rng.integers(0, 2, 40)
reviews = [make_review(y) for y in labels]


class RNN(nn.Module):
    def __init__(self, vocab_size, embedding_dim, hidden_dim, output_dim, n_layers,
                 bidirectional, dropout, pad_idx):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embedding_dim, padding_idx=pad_idx)
        self.rnn = nn.LSTM(embedding_dim, hidden_dim, num_layers=n_layers,
                           bidirectional=bidirectional, dropout=dropout)
        self.fc = nn.Linear(hidden_dim * 2, output_dim)
        self.dropout = nn.Dropout(dropout)

    def forward(self, text, text_lengths):
        # text = [sent len, batch size]
        embedded = self.dropout(self.embedding(text))
        # pack sequence; lengths need to be on CPU!
        packed_embedded = nn.utils.rnn.pack_padded_sequence(embedded, text_lengths.to('cpu'),
                                                            enforce_sorted=False)
        packed_output, (hidden, cell) = self.rnn(packed_embedded)
        # unpack sequence
        output, output_lengths = nn.utils.rnn.pad_packed_sequence(packed_output)
        # concat the final forward (hidden[-2,:,:]) and backward (hidden[-1,:,:]) hidden layers
        hidden = self.dropout(torch.cat((hidden[-2, :, :], hidden[-1, :, :]), dim=1))
        return self.fc(hidden)


def binary_accuracy(preds, y):
    rounded_preds = torch.round(torch.sigmoid(preds))
    correct = (rounded_preds == y).float()
    return correct.sum() / len(correct)


def batchify(idx):
    seqs = [torch.tensor([stoi[w] for w in reviews[i]]) for i in idx]
    lengths = torch.tensor([len(s) for s in seqs])
    text = pad_sequence(seqs, padding_value=PAD_IDX)  # [max len, batch]
    return text, lengths, torch.tensor(labels[idx], dtype=torch.float)


train_batches = [batchify(np.arange(i, i + 10)) for i in range(0, 30, 10)]
valid = batchify(np.arange(30, 40))
show('pad_shape', list(train_batches[0][0].shape))
show('batch_first', pad_sequence([torch.tensor([1, 2, 3]), torch.tensor([4])], batch_first=True))
show('pad_left', pad_sequence([torch.tensor([1, 2, 3]), torch.tensor([4])], batch_first=True,
                              padding_side='left'))

model = RNN(len(vocab), 8, 12, 1, n_layers=2, bidirectional=True, dropout=0.0, pad_idx=PAD_IDX)
numpy_init(torch, model)
model.embedding.weight.data[PAD_IDX] = torch.zeros(8)
print(f'The model has {sum(p.numel() for p in model.parameters() if p.requires_grad):,} trainable parameters')
optimizer = optim.Adam(model.parameters(), lr=0.02)
scheduler = optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode='min', factor=0.5, patience=0)
criterion = nn.BCEWithLogitsLoss()

packed = pack_padded_sequence(model.embedding(valid[0]), valid[1], enforce_sorted=False)
show('batch_sizes', packed.batch_sizes)
show('sorted_indices', packed.sorted_indices)
out, (h, c) = model.rnn(packed)
padded, lens = pad_packed_sequence(out, total_length=9)
show('unpacked', list(padded.shape) + lens.tolist())
show('last_step_zero', padded[-1].abs().sum())

history = []
for epoch in range(6):
    model.train()
    epoch_loss, epoch_acc = 0, 0
    for text, text_lengths, y in train_batches:
        optimizer.zero_grad()
        predictions = model(text, text_lengths).squeeze(1)
        loss = criterion(predictions, y)
        acc = binary_accuracy(predictions, y)
        loss.backward()
        optimizer.step()
        epoch_loss += loss.item()
        epoch_acc += acc.item()
    model.eval()
    with torch.no_grad():
        predictions = model(valid[0], valid[1]).squeeze(1)
        valid_loss = criterion(predictions, valid[2]).item()
        valid_acc = binary_accuracy(predictions, valid[2]).item()
    scheduler.step(valid_loss)
    history += [epoch_loss / len(train_batches), epoch_acc / len(train_batches), valid_loss,
                valid_acc, optimizer.param_groups[0]['lr']]
    print(f'Epoch: {epoch + 1:02} | Train Loss: {epoch_loss / 3:.3f} | Val. Loss: {valid_loss:.3f}')
show('history', history)
show('pad_row_grad', model.embedding.weight.grad[PAD_IDX])
show('pad_row', model.embedding.weight[PAD_IDX])
show('scheduler_best', scheduler.best)
show('num_bad_epochs', scheduler.num_bad_epochs)


def predict_sentiment(model, sentence):
    model.eval()
    indexed = [stoi.get(t, 1) for t in sentence.split()]
    tensor = torch.LongTensor(indexed).unsqueeze(1)
    length_tensor = torch.LongTensor([len(indexed)])
    prediction = torch.sigmoid(model(tensor, length_tensor))
    return prediction.item()


show('predict', [predict_sentiment(model, "the movie was great fun"),
                 predict_sentiment(model, "the plot was awful and boring")])
