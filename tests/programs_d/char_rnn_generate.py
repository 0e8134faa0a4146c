"""PyTorch tutorial "NLP From Scratch: Generating Names with a Character-Level RNN", scaled
down: unicodeToAscii by unicodedata, a hand-written RNN conditioned on the category (i2h and
i2o over ``torch.cat((category, input, hidden), 1)``, o2o over ``torch.cat((hidden, output),
1)``, nn.Dropout(0.1) and nn.LogSoftmax(dim=1)), initHidden by torch.zeros(1, hidden_size),
one-hot categoryTensor/inputTensor filled by index assignment, targetTensor as a LongTensor
ending in EOS and unsqueezed in place, NLLLoss summed over the letters into
``torch.Tensor([0])`` by ``loss += l``, the manual update ``p.data.add_(p.grad.data,
alpha=-learning_rate)``, and greedy sampling by ``output.topk(1)`` until EOS. Training pairs are
picked by Python's random (seeded the same in both runs); the model is put in eval() so the
dropout leaves it deterministic.

    python char_rnn_generate.py [torch|numbagrad]
"""
import random
import string
import unicodedata

from _common import BACKEND, numpy_init, show

if BACKEND == "torch":
    import torch
    import torch.nn as nn
else:
    import numbagrad as torch
    import numbagrad.nn as nn

all_letters = string.ascii_letters + " .,;'-"
n_letters = len(all_letters) + 1  # the last index is the EOS marker


def unicodeToAscii(s):
    return ''.join(
        c for c in unicodedata.normalize('NFD', s)
        if unicodedata.category(c) != 'Mn'
        and c in all_letters
    )


raw_lines = {
    'Czech': ['Abl', 'Adsit', 'Ajdrna', 'Alt', 'Antonowitsch', 'Šimek'],
    'German': ['Abbing', 'Abel', 'Abeln', 'Abt', 'Achilles', 'Müller'],
    'Polish': ['Adamczak', 'Adamczyk', 'Andrysiak', 'Auttenberg', 'Ślusàrski'],
    'Spanish': ['Abana', 'Abano', 'Abarca', 'Abaroa', 'Núñez'],
}
category_lines = {}
all_categories = []
for category, lines in raw_lines.items():
    all_categories.append(category)
    category_lines[category] = [unicodeToAscii(line) for line in lines]
n_categories = len(all_categories)


class RNN(nn.Module):
    def __init__(self, input_size, hidden_size, output_size):
        super(RNN, self).__init__()
        self.hidden_size = hidden_size

        self.i2h = nn.Linear(n_categories + input_size + hidden_size, hidden_size)
        self.i2o = nn.Linear(n_categories + input_size + hidden_size, output_size)
        self.o2o = nn.Linear(hidden_size + output_size, output_size)
        self.dropout = nn.Dropout(0.1)
        self.softmax = nn.LogSoftmax(dim=1)

    def forward(self, category, input, hidden):
        input_combined = torch.cat((category, input, hidden), 1)
        hidden = self.i2h(input_combined)
        output = self.i2o(input_combined)
        output_combined = torch.cat((hidden, output), 1)
        output = self.o2o(output_combined)
        output = self.dropout(output)
        output = self.softmax(output)
        return output, hidden

    def initHidden(self):
        return torch.zeros(1, self.hidden_size)


def randomChoice(l):
    return l[random.randint(0, len(l) - 1)]


def randomTrainingPair():
    category = randomChoice(all_categories)
    line = randomChoice(category_lines[category])
    return category, line


# a one-hot vector for the category
def categoryTensor(category):
    li = all_categories.index(category)
    tensor = torch.zeros(1, n_categories)
    tensor[0][li] = 1
    return tensor


# one-hot letters from the first to the last (no EOS) as <line_length x 1 x n_letters>
def inputTensor(line):
    tensor = torch.zeros(len(line), 1, n_letters)
    for li in range(len(line)):
        letter = line[li]
        tensor[li][0][all_letters.find(letter)] = 1
    return tensor


# indexes of the second letter to the end, then EOS
def targetTensor(line):
    letter_indexes = [all_letters.find(line[li]) for li in range(1, len(line))]
    letter_indexes.append(n_letters - 1)
    return torch.LongTensor(letter_indexes)


def randomTrainingExample():
    category, line = randomTrainingPair()
    category_tensor = categoryTensor(category)
    input_line_tensor = inputTensor(line)
    target_line_tensor = targetTensor(line)
    return category_tensor, input_line_tensor, target_line_tensor


criterion = nn.NLLLoss()
learning_rate = 0.02


def train(category_tensor, input_line_tensor, target_line_tensor):
    target_line_tensor.unsqueeze_(-1)
    hidden = rnn.initHidden()

    rnn.zero_grad()

    loss = torch.Tensor([0])

    for i in range(input_line_tensor.size(0)):
        output, hidden = rnn(category_tensor, input_line_tensor[i], hidden)
        l = criterion(output, target_line_tensor[i])  # noqa: E741
        loss += l

    loss.backward()

    for p in rnn.parameters():
        p.data.add_(p.grad.data, alpha=-learning_rate)

    return output, loss.item() / input_line_tensor.size(0)


random.seed(4)
rnn = RNN(n_letters, 32, n_letters)
numpy_init(torch, rnn)
rnn.eval()

show('data', [n_letters, n_categories, len(category_lines['Polish'][4]),
              [ord(c) for c in category_lines['Spanish'][4]]])
c, i, t = randomTrainingExample()
show('example_shapes', [list(c.shape), list(i.shape), list(t.shape), t, i[1, 0].argmax()])

n_iters = 120
plot_every = 20
all_losses = []
step_losses = []
total_loss = 0

for iter in range(1, n_iters + 1):
    output, loss = train(*randomTrainingExample())
    total_loss += loss
    step_losses.append(loss)

    if iter % plot_every == 0:
        all_losses.append(total_loss / plot_every)
        total_loss = 0

show('step_losses', step_losses)
show('all_losses', all_losses)
show('last_output', output[0, :8])
show('i2h_weight', rnn.i2h.weight[0, :8])
show('o2o_bias', rnn.o2o.bias[:8])
show('i2o_grad', rnn.i2o.weight.grad[-1, -8:])

max_length = 10


def sample(category, start_letter='A'):
    with torch.no_grad():
        category_tensor = categoryTensor(category)
        input = inputTensor(start_letter)
        hidden = rnn.initHidden()

        output_name = start_letter

        for i in range(max_length):
            output, hidden = rnn(category_tensor, input[0], hidden)
            topv, topi = output.topk(1)
            topi = topi[0][0]
            if topi == n_letters - 1:
                break
            else:
                letter = all_letters[topi]
                output_name += letter
            input = inputTensor(letter)

        return output_name, topv


for category in ['German', 'Spanish']:
    for start_letter in 'ABC':
        name, topv = sample(category, start_letter)
        print(name)
        show('sample_%s_%s' % (category, start_letter), [ord(ch) for ch in name] + [topv.item()])
