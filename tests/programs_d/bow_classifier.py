"""PyTorch tutorial "Deep Learning for NLP with Pytorch: Creating Network Components": the
affine map nn.Linear(5, 3) on a (2, 5) batch, F.relu, F.softmax with its .sum() and
F.log_softmax over dim 0; then the Spanish/English bag-of-words classifier: a word_to_ix
vocabulary, make_bow_vector (torch.zeros(len(word_to_ix)), ``vec[word_to_ix[word]] += 1``,
``vec.view(1, -1)``), make_target (``torch.LongTensor([label_to_ix[label]])``), BoWClassifier
(nn.Linear then F.log_softmax(..., dim=1)), its parameters printed by ``for param in
model.parameters()``, the log probabilities and the "creo" column of
``next(model.parameters())`` before and after training under torch.no_grad(), NLLLoss and
optim.SGD(lr=0.1) with model.zero_grad(). The tutorial's torch.randn draws come from NumPy.

    python bow_classifier.py [torch|numbagrad]
"""
import numpy as np

from _common import BACKEND, numpy_init, show

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

torch.manual_seed(1)
rng = np.random.default_rng(1)


def randn(*shape):
    # (torch.randn, drawn by NumPy)
    return torch.from_numpy(rng.standard_normal(shape).astype(np.float32))


# affine maps
lin = nn.Linear(5, 3)
numpy_init(torch, lin)
data = randn(2, 5)
show('affine', lin(data))

# non-linearities
data = randn(2, 2)
show('relu_in', data)
show('relu', F.relu(data))

# softmax and probabilities
data = randn(5)
show('softmax_in', data)
show('softmax', F.softmax(data, dim=0))
show('softmax_sum', F.softmax(data, dim=0).sum())
show('log_softmax', F.log_softmax(data, dim=0))

data = [("me gusta comer en la cafeteria".split(), "SPANISH"),
        ("Give it to me".split(), "ENGLISH"),
        ("No creo que sea una buena idea".split(), "SPANISH"),
        ("No it is not a good idea to get lost at sea".split(), "ENGLISH")]

test_data = [("Yo creo que si".split(), "SPANISH"),
             ("it is lost on me".split(), "ENGLISH")]

word_to_ix = {}
for sent, _ in data + test_data:
    for word in sent:
        if word not in word_to_ix:
            word_to_ix[word] = len(word_to_ix)
print(word_to_ix)

VOCAB_SIZE = len(word_to_ix)
NUM_LABELS = 2


class BoWClassifier(nn.Module):

    def __init__(self, num_labels, vocab_size):
        super(BoWClassifier, self).__init__()
        self.linear = nn.Linear(vocab_size, num_labels)

    def forward(self, bow_vec):
        return F.log_softmax(self.linear(bow_vec), dim=1)


def make_bow_vector(sentence, word_to_ix):
    vec = torch.zeros(len(word_to_ix))
    for word in sentence:
        vec[word_to_ix[word]] += 1
    return vec.view(1, -1)


def make_target(label, label_to_ix):
    return torch.LongTensor([label_to_ix[label]])


model = BoWClassifier(NUM_LABELS, VOCAB_SIZE)
numpy_init(torch, model, seed=2)

for i, param in enumerate(model.parameters()):
    print(param)
    show('param%d' % i, param)

with torch.no_grad():
    sample = data[0]
    bow_vector = make_bow_vector(sample[0], word_to_ix)
    log_probs = model(bow_vector)
    show('bow_vector', bow_vector)
    show('sample_log_probs', log_probs)

label_to_ix = {"SPANISH": 0, "ENGLISH": 1}

with torch.no_grad():
    for i, (instance, label) in enumerate(test_data):
        bow_vec = make_bow_vector(instance, word_to_ix)
        log_probs = model(bow_vec)
        show('test_before%d' % i, log_probs)

show('creo_before', next(model.parameters())[:, word_to_ix["creo"]])

loss_function = nn.NLLLoss()
optimizer = optim.SGD(model.parameters(), lr=0.1)

epoch_losses = []
for epoch in range(30):
    total = 0.0
    for instance, label in data:
        model.zero_grad()

        bow_vec = make_bow_vector(instance, word_to_ix)
        target = make_target(label, label_to_ix)

        log_probs = model(bow_vec)

        loss = loss_function(log_probs, target)
        loss.backward()
        optimizer.step()
        total += loss.item()
    epoch_losses.append(total)

show('epoch_losses', epoch_losses)
show('target', [target, target.dtype == torch.int64])
show('last_grad', model.linear.weight.grad[:, 7:13])

with torch.no_grad():
    for i, (instance, label) in enumerate(test_data):
        bow_vec = make_bow_vector(instance, word_to_ix)
        log_probs = model(bow_vec)
        show('test_after%d' % i, [log_probs, log_probs.argmax(dim=1) == label_to_ix[label]])

show('creo_after', next(model.parameters())[:, word_to_ix["creo"]])
show('bias', model.linear.bias)
