"""PyTorch tutorial "NLP From Scratch: Classifying Names with a Character-Level RNN" (the
hand-written RNN cell, plain SGD through ``p.data.add_``), then a batched variant with
``nn.Embedding`` + ``nn.LSTM(batch_first=True)`` over padded sequences and gradient clipping.

    python char_rnn.py [torch|numbagrad]
"""
import string
import sys

import numpy as np

BACKEND = sys.argv[1] if len(sys.argv) > 1 else "numbagrad"
if BACKEND == "torch":
    import torch
    import torch.nn as nn
else:
    import numbagrad as torch
    import numbagrad.nn as nn

all_letters = string.ascii_letters + " .,;'"
n_letters = len(all_letters)

category_lines = {
    'English': ['Smith', 'Jones', 'Taylor', 'Brown', 'Wilson'],
    'Italian': ['Rossi', 'Russo', 'Ferrari', 'Esposito', 'Bianchi'],
    'Japanese': ['Sato', 'Suzuki', 'Takahashi', 'Tanaka', 'Watanabe'],
}
all_categories = list(category_lines)
n_categories = len(all_categories)


# Find letter index from all_letters, e.g. "a" = 0
def letterToIndex(letter):
    return all_letters.find(letter)


# Just for demonstration, turn a letter into a <1 x n_letters> Tensor
def letterToTensor(letter):
    tensor = torch.zeros(1, n_letters)
    tensor[0][letterToIndex(letter)] = 1
    return tensor


# Turn a line into a <line_length x 1 x n_letters>,
# or an array of one-hot letter vectors
def lineToTensor(line):
    tensor = torch.zeros(len(line), 1, n_letters)
    for li, letter in enumerate(line):
        tensor[li][0][letterToIndex(letter)] = 1
    return tensor


print(letterToTensor('J'))
print(lineToTensor('Jones').size())
assert lineToTensor('Jones').sum().item() == 5 and lineToTensor('Jones')[0, 0, 35].item() == 1


class RNN(nn.Module):
    def __init__(self, input_size, hidden_size, output_size):
        super(RNN, self).__init__()

        self.hidden_size = hidden_size

        self.i2h = nn.Linear(input_size + hidden_size, hidden_size)
        self.i2o = nn.Linear(input_size + hidden_size, output_size)
        self.softmax = nn.LogSoftmax(dim=1)

    def forward(self, input, hidden):
        combined = torch.cat((input, hidden), 1)
        hidden = self.i2h(combined)
        output = self.i2o(combined)
        output = self.softmax(output)
        return output, hidden

    def initHidden(self):
        return torch.zeros(1, self.hidden_size)


def load_numpy_weights(model, seed):
    """Both libraries start from the same weights, drawn by numpy."""
    rng = np.random.default_rng(seed)
    state = {k: torch.from_numpy(rng.uniform(-0.1, 0.1, v.shape).astype(np.float32))
             for k, v in model.state_dict().items()}
    model.load_state_dict(state)


n_hidden = 32
rnn = RNN(n_letters, n_hidden, n_categories)
load_numpy_weights(rnn, 0)

input = lineToTensor('Albert')
hidden = torch.zeros(1, n_hidden)
output, next_hidden = rnn(input[0], hidden)
print(output)


def categoryFromOutput(output):
    top_n, top_i = output.topk(1)
    category_i = top_i[0].item()
    return all_categories[category_i], category_i


print(categoryFromOutput(output))

criterion = nn.NLLLoss()
learning_rate = 0.005  # If you set this too high, it might explode. If too low, it might not learn


def train(category_tensor, line_tensor):
    hidden = rnn.initHidden()

    rnn.zero_grad()

    for i in range(line_tensor.size()[0]):
        output, hidden = rnn(line_tensor[i], hidden)

    loss = criterion(output, category_tensor)
    loss.backward()

    # Add parameters' gradients to their values, multiplied by learning rate
    for p in rnn.parameters():
        p.data.add_(p.grad.data, alpha=-learning_rate)

    return output, loss.item()


# a fixed order of examples instead of randomTrainingExample
pairs = [(c, line) for c in all_categories for line in category_lines[c]]
order = np.random.default_rng(1).permutation(len(pairs) * 4) % len(pairs)
current_loss = 0
all_losses = []
for it, k in enumerate(order):
    category, line = pairs[k]
    category_tensor = torch.tensor([all_categories.index(category)], dtype=torch.long)
    line_tensor = lineToTensor(line)
    output, loss = train(category_tensor, line_tensor)
    current_loss += loss
    if (it + 1) % 20 == 0:
        all_losses.append(current_loss / 20)
        current_loss = 0

# Keep track of correct guesses in a confusion matrix
confusion = torch.zeros(n_categories, n_categories)


# Just return an output given a line
def evaluate(line_tensor):
    hidden = rnn.initHidden()
    for i in range(line_tensor.size()[0]):
        output, hidden = rnn(line_tensor[i], hidden)
    return output


for category, line in pairs:
    output = evaluate(lineToTensor(line))
    guess, guess_i = categoryFromOutput(output)
    category_i = all_categories.index(category)
    confusion[category_i][guess_i] += 1

# Normalize by dividing every row by its sum
for i in range(n_categories):
    confusion[i] = confusion[i] / confusion[i].sum()


def predict(input_line, n_predictions=3):
    with torch.no_grad():
        output = evaluate(lineToTensor(input_line))

        # Get top N categories
        topv, topi = output.topk(n_predictions, 1, True)
        predictions = []

        for i in range(n_predictions):
            value = topv[0][i].item()
            category_index = topi[0][i].item()
            predictions.append([value, all_categories[category_index]])
    return predictions


preds = predict('Satoshi')


# --- a batched LSTM over padded sequences ---
class CharLSTM(nn.Module):
    def __init__(self, vocab_size, embed_dim, hidden_dim, n_classes):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed_dim, padding_idx=0)
        self.lstm = nn.LSTM(embed_dim, hidden_dim, num_layers=1, batch_first=True)
        self.fc = nn.Linear(hidden_dim, n_classes)

    def forward(self, x, lengths):
        emb = self.embedding(x)  # (B, T, E)
        out, (h_n, c_n) = self.lstm(emb)  # out: (B, T, H)
        # the output at each sequence's last real character (no packing: gather by length)
        idx = (lengths - 1).view(-1, 1, 1).expand(-1, 1, out.size(2))
        last = out.gather(1, idx).squeeze(1)
        return self.fc(last)


lines = [line for _, line in pairs]
labels = torch.tensor([all_categories.index(c) for c, _ in pairs])
max_len = max(len(s) for s in lines)
X = torch.zeros(len(lines), max_len, dtype=torch.long)
for i, s in enumerate(lines):
    X[i, :len(s)] = torch.tensor([letterToIndex(ch) + 1 for ch in s])
lengths = torch.tensor([len(s) for s in lines])

model = CharLSTM(n_letters + 1, 8, 16, n_categories)
load_numpy_weights(model, 2)
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
loss_fn = nn.CrossEntropyLoss()
lstm_losses = []
for epoch in range(15):
    model.train()
    optimizer.zero_grad()
    logits = model(X, lengths)
    loss = loss_fn(logits, labels)
    loss.backward()
    total_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    optimizer.step()
    lstm_losses.append(loss.item())

model.eval()
with torch.no_grad():
    acc = (model(X, lengths).argmax(dim=1) == labels).float().mean().item()

print('rnn_losses', *all_losses)
print('confusion', confusion.diag().sum().item())
print('predict', *[v for v, _ in preds])
print('lstm', lstm_losses[0], lstm_losses[-1], total_norm.item(), acc)
