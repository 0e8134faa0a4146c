"""Stanford CS224n assignment 3, the neural transition-based dependency parser, on a generated
treebank: ``parser_transitions.py`` (PartialParse with ``S``/``LA``/``RA`` steps and
``minibatch_parse`` over shallow copies of the unfinished parses), ``parser_model.py`` (the
embeddings as an ``nn.Parameter(torch.tensor(embeddings))``, weight matrices as
``nn.Parameter(torch.empty(...))`` initialised by ``nn.init.xavier_uniform_`` and
``nn.init.uniform_``, ``embedding_lookup`` by ``self.embeddings[w.flatten()].view(...)`` next to
``torch.index_select``, ``F.relu(torch.matmul(x, W) + b)``, ``nn.Dropout`` before the logits; the
file's ``check_embedding``/``check_forward`` shape checks) and ``run.py`` (Adam, CrossEntropyLoss
on ``torch.from_numpy(train_y.nonzero()[1]).long()``, an AverageMeter, ``train_for_epoch``,
evaluation under ``model.eval()`` with the illegal transitions pushed down by ``pred + 10000 *
legal`` before ``np.argmax``, UAS, keeping the best weights by ``torch.save``). A run with
``dropout_prob=0.0`` is compared exactly; the assignment's default dropout run only by finite,
falling loss.

    python cs224n_parser.py [torch|numbagrad]
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
    import torch.optim as optim
else:
    import numbagrad as torch
    import numbagrad.nn as nn
    import numbagrad.nn.functional as F
    import numbagrad.optim as optim

rng = np.random.default_rng(224)


# ---------------------------------------------------------------- parser_transitions.py
class PartialParse(object):
    def __init__(self, sentence):
        """Initializes this partial parse."""
        # The sentence being parsed is kept for bookkeeping purposes. Do NOT alter it in your code.
        self.sentence = sentence
        self.stack = ['ROOT']
        self.buffer = sentence[:]
        self.dependencies = []

    def parse_step(self, transition):
        """Performs a single parse step by applying the given transition to this partial parse"""
        if transition == 'S':
            self.stack.append(self.buffer.pop(0))
        elif transition == 'LA':
            dependent = self.stack.pop(-2)
            self.dependencies.append((self.stack[-1], dependent))
        elif transition == 'RA':
            dependent = self.stack.pop()
            self.dependencies.append((self.stack[-1], dependent))

    def parse(self, transitions):
        """Applies the provided transitions to this PartialParse"""
        for transition in transitions:
            self.parse_step(transition)
        return self.dependencies


def minibatch_parse(sentences, model, batch_size):
    """Parses a list of sentences in minibatches using a model."""
    partial_parses = [PartialParse(sentence) for sentence in sentences]
    unfinished_parses = partial_parses[:]
    while unfinished_parses:
        minibatch = unfinished_parses[:batch_size]
        transitions = model.predict(minibatch)
        for pp, transition in zip(minibatch, transitions):
            pp.parse_step(transition)
        unfinished_parses = [pp for pp in unfinished_parses
                             if len(pp.buffer) > 0 or len(pp.stack) > 1]
    dependencies = [pp.dependencies for pp in partial_parses]
    return dependencies


# the assignment's sanity checks of the transitions
pp = PartialParse(["parse", "this", "sentence"])
deps = pp.parse(["S", "S", "S", "LA", "RA", "RA"])
print(deps)
show("sanity_parse_deps", len(deps))
assert tuple(sorted(deps)) == (("ROOT", "parse"), ("parse", "sentence"), ("sentence", "this"))


# ---------------------------------------------------------------- parser_model.py
class ParserModel(nn.Module):
    """ Feedforward neural network with an embedding layer and two hidden layers."""

    def __init__(self, embeddings, n_features=36,
                 hidden_size=200, n_classes=3, dropout_prob=0.5):
        super(ParserModel, self).__init__()
        self.n_features = n_features
        self.n_classes = n_classes
        self.dropout_prob = dropout_prob
        self.embed_size = embeddings.shape[1]
        self.hidden_size = hidden_size
        self.embeddings = nn.Parameter(torch.tensor(embeddings))

        ### YOUR CODE HERE (~9-10 Lines)
        self.embed_to_hidden_weight = nn.Parameter(torch.empty(self.n_features * self.embed_size, self.hidden_size))
        nn.init.xavier_uniform_(self.embed_to_hidden_weight)
        self.embed_to_hidden_bias = nn.Parameter(torch.empty(self.hidden_size))
        nn.init.uniform_(self.embed_to_hidden_bias)
        self.dropout = nn.Dropout(p=self.dropout_prob)
        self.hidden_to_logits_weight = nn.Parameter(torch.empty(self.hidden_size, self.n_classes))
        nn.init.xavier_uniform_(self.hidden_to_logits_weight)
        self.hidden_to_logits_bias = nn.Parameter(torch.empty(self.n_classes))
        nn.init.uniform_(self.hidden_to_logits_bias)
        ### END YOUR CODE

    def embedding_lookup(self, w):
        """ Utilize `w` to select embeddings from embedding matrix `self.embeddings`"""
        ### YOUR CODE HERE (~1-4 Lines)
        x = self.embeddings[w.flatten()].view(w.shape[0], -1)
        ### END YOUR CODE
        return x

    def forward(self, w):
        """ Run the model forward."""
        ### YOUR CODE HERE (~3-5 lines)
        x = self.embedding_lookup(w)
        h = F.relu(torch.matmul(x, self.embed_to_hidden_weight) + self.embed_to_hidden_bias)
        logits = torch.matmul(self.dropout(h), self.hidden_to_logits_weight) + self.hidden_to_logits_bias
        ### END YOUR CODE
        return logits


# ---------------------------------------------------------------- a generated treebank
VOCAB = 40
NULL, ROOT_ID = VOCAB, VOCAB + 1  # extra embedding rows, as the parser's tok2id has
N_FEATURES = 6  # s1 s2 s3 b1 b2 b3 (the assignment extracts 36; the idea is the same)


def make_sentence():
    """Random word ids with a projective tree: each word attaches to a neighbour, chosen by a
    rule on the ids the parser can learn (even ids head right, odd ids head left)."""
    n = int(rng.integers(3, 7))
    words = [int(w) for w in rng.integers(0, VOCAB, n)]
    heads = [0] * n  # head index (1-based; 0 = ROOT)
    root = int(rng.integers(1, n + 1))
    for i in range(1, n + 1):
        if i == root:
            heads[i - 1] = 0
        elif i < root:
            heads[i - 1] = i + 1
        else:
            heads[i - 1] = i - 1
    return words, heads


def oracle(words, heads):
    """Arc-standard static oracle: the gold transitions with their feature vectors."""
    stack, buf, deps = [0], list(range(1, len(words) + 1)), set()
    feats, labels = [], []
    while buf or len(stack) > 1:
        feats.append(features(stack, buf, words))
        if len(stack) > 2 and heads[stack[-2] - 1] == stack[-1]:
            t = 0  # LA
            deps.add(stack.pop(-2))
        elif len(stack) > 1 and heads[stack[-1] - 1] == stack[-2] and \
                all(heads[j - 1] != stack[-1] for j in buf):
            t = 1  # RA
            deps.add(stack.pop())
        else:
            t = 2  # S
            stack.append(buf.pop(0))
        labels.append(t)
    return feats, labels


def features(stack, buf, words):
    tok = lambda i: ROOT_ID if i == 0 else words[i - 1]
    s = [tok(i) for i in stack[-3:]][::-1]
    s = s + [NULL] * (3 - len(s))
    b = [tok(i) for i in buf[:3]]
    b = b + [NULL] * (3 - len(b))
    return s + b


def legal_labels(stack, buf):
    labels = ([1] if len(stack) > 2 else [0])
    labels += ([1] if len(stack) >= 2 else [0])
    labels += [1] if len(buf) > 0 else [0]
    return labels


treebank = [make_sentence() for _ in range(160)]
train_set, dev_set = treebank[:128], treebank[128:]
train_x, train_y = [], []
for words, heads in train_set:
    f, l = oracle(words, heads)
    train_x += f
    train_y += l
train_x = np.array(train_x, dtype=np.int64)
train_y = np.eye(3, dtype=np.float32)[train_y]  # one-hot, as the assignment stores them
show("train_examples", len(train_x))
show("label_counts", train_y.sum(0))

# the assignment's parser_model.py checks
embeddings = (0.1 * rng.normal(size=(VOCAB + 2, 8))).astype(np.float32)
model = ParserModel(embeddings, n_features=N_FEATURES, hidden_size=32)
bound = math.sqrt(6 / (N_FEATURES * 8 + 32))
show("xavier_within_bound", float(model.embed_to_hidden_weight.abs().max().item() <= bound + 1e-6))
show("uniform_bias_in_0_1", float(((model.embed_to_hidden_bias >= 0) & (model.embed_to_hidden_bias <= 1)).all()))


def check_embedding():
    inds = torch.from_numpy(rng.integers(0, VOCAB, (4, N_FEATURES)))  # torch.randint(0, 100, (4, 36), dtype=torch.long)
    selected = model.embedding_lookup(inds)
    assert np.all(selected.data.numpy() == np.reshape(embeddings[inds.numpy()], (4, -1))), \
        "The result of embedding lookup: " + repr(selected) + " contains non-zero elements."
    same = torch.index_select(model.embeddings, 0, inds.view(-1)).view(inds.shape[0], -1)
    return float(torch.equal(selected, same))


def check_forward():
    inputs = torch.from_numpy(rng.integers(0, VOCAB, (4, N_FEATURES)))
    out = model(inputs)
    expected_out_shape = (4, 3)
    assert out.shape == expected_out_shape, "The result shape of forward is: " + repr(out.shape) + \
        " which doesn't match expected " + repr(expected_out_shape)
    return list(out.shape)


show("check_embedding", check_embedding())
show("check_forward", check_forward())


# ---------------------------------------------------------------- run.py
class AverageMeter(object):
    """Computes and stores the average and current value"""

    def __init__(self):
        self.reset()

    def reset(self):
        self.val = 0
        self.avg = 0
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def minibatches(data, batch_size):
    x = np.array([d[0] for d in data])
    y = np.array([d[1] for d in data])
    for start in range(0, len(x), batch_size):
        yield x[start:start + batch_size], y[start:start + batch_size]


class Parser(object):
    def __init__(self, model):
        self.model = model

    def predict(self, partial_parses):
        mb_x = [self.vectorize(p) for p in partial_parses]
        mb_x = np.array(mb_x).astype('int32')
        mb_x = torch.from_numpy(mb_x).long()
        mb_l = [legal_labels(p.stack, p.buffer) for p in partial_parses]

        pred = self.model(mb_x)
        pred = pred.detach().numpy()
        pred = np.argmax(pred + 10000 * np.array(mb_l).astype('float32'), 1)
        pred = ["S" if p == 2 else ("LA" if p == 0 else "RA") for p in pred]
        return pred

    def vectorize(self, p):
        # stack/buffer hold word positions (ints) or 'ROOT'
        ids = lambda items: [0 if i == 'ROOT' else i for i in items]
        return features(ids(p.stack), ids(p.buffer), self.words_of[id(p.sentence)])

    def parse(self, dataset, eval_batch_size=16):
        sentences = [list(range(1, len(words) + 1)) for words, _ in dataset]
        self.words_of = {id(s): words for s, (words, _) in zip(sentences, dataset)}
        dependencies = minibatch_parse(sentences, self, eval_batch_size)
        UAS = all_tokens = 0.0
        for (words, heads), deps in zip(dataset, dependencies):
            head = [-1] * len(words)
            for h, t in deps:
                head[t - 1] = 0 if h == 'ROOT' else h
            for pred_h, gold_h in zip(head, heads):
                UAS += 1 if pred_h == gold_h else 0
                all_tokens += 1
        UAS /= all_tokens
        return UAS, dependencies


def train_for_epoch(parser, train_data, dev_data, optimizer, loss_func, batch_size):
    parser.model.train()  # Places model in "train" mode, i.e. apply dropout layer
    n_minibatches = math.ceil(len(train_data) / batch_size)
    loss_meter = AverageMeter()

    for i, (train_x, train_y) in enumerate(minibatches(train_data, batch_size)):
        optimizer.zero_grad()  # remove any baggage in the optimizer
        loss = 0.  # store loss for this batch here
        train_x = torch.from_numpy(train_x).long()
        train_y = torch.from_numpy(train_y.nonzero()[1]).long()

        ### YOUR CODE HERE (~4-10 lines)
        logits = parser.model(train_x)
        loss = loss_func(logits, train_y)
        loss.backward()
        optimizer.step()
        ### END YOUR CODE
        loss_meter.update(loss.item())

    print("Average Train Loss: {}".format(loss_meter.avg))

    print("Evaluating on dev set", )
    parser.model.eval()  # Places model in "eval" mode, i.e. don't apply dropout layer
    dev_UAS, _ = parser.parse(dev_data)
    print("- dev UAS: {:.2f}".format(dev_UAS * 100.0))
    return dev_UAS, loss_meter.avg


def train(parser, train_data, dev_data, output_path, batch_size=64, n_epochs=4, lr=0.0005):
    best_dev_UAS = 0

    ### YOUR CODE HERE (~2-7 lines)
    optimizer = optim.Adam(parser.model.parameters(), lr=lr)
    loss_func = nn.CrossEntropyLoss()
    ### END YOUR CODE

    history = []
    for epoch in range(n_epochs):
        print("Epoch {:} out of {:}".format(epoch + 1, n_epochs))
        dev_UAS, avg_loss = train_for_epoch(parser, train_data, dev_data, optimizer, loss_func, batch_size)
        history.append((dev_UAS, avg_loss))
        if dev_UAS > best_dev_UAS:
            best_dev_UAS = dev_UAS
            print("New best dev UAS! Saving model.")
            torch.save(parser.model.state_dict(), output_path)
        print("")
    return best_dev_UAS, history


train_data = list(zip(train_x, train_y))
with tempfile.TemporaryDirectory() as tmp:
    output_path = os.path.join(tmp, "model.weights")

    # the deterministic run: no dropout
    model = ParserModel(embeddings, n_features=N_FEATURES, hidden_size=32, dropout_prob=0.0)
    numpy_init(torch, model, seed=1)
    model.embeddings.data = torch.tensor(embeddings)
    parser = Parser(model)
    show("untrained_dev_UAS", parser.parse(dev_set)[0])
    best, history = train(parser, train_data, dev_set, output_path, batch_size=64, n_epochs=6, lr=0.005)
    show("history_UAS", [h[0] for h in history])
    show("history_loss", [h[1] for h in history])
    show("best_dev_UAS", best)

    # restore the best weights, as run.py does before testing
    parser.model.load_state_dict(torch.load(output_path))
    parser.model.eval()
    show("restored_dev_UAS", parser.parse(dev_set)[0])
    show("embedding_row_changed", float(not torch.allclose(parser.model.embeddings[3], torch.tensor(embeddings[3]))))

    # the assignment's setting: dropout 0.5 (each library draws its own masks)
    model = ParserModel(embeddings, n_features=N_FEATURES, hidden_size=32)
    numpy_init(torch, model, seed=1)
    model.embeddings.data = torch.tensor(embeddings)
    best, history = train(Parser(model), train_data, dev_set, output_path, batch_size=64, n_epochs=6, lr=0.005)
    show("~dropout_history_loss", [h[1] for h in history])
