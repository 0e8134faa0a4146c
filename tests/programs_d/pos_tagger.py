"""PyTorch tutorial "Sequence Models and Long Short-Term Memory Networks", scaled down: an
nn.LSTM(3, 3) stepped one element at a time and then run over the whole sequence at once
(``torch.cat(inputs).view(len(inputs), 1, -1)``), the LSTMTagger (Embedding, LSTM,
hidden2tag on ``lstm_out.view(len(sentence), -1)``, F.log_softmax(dim=1)) trained with
NLLLoss and SGD(lr=0.1) after model.zero_grad(), the tag scores before and after training
under torch.no_grad(); then the exercise's character-level augmentation: a character LSTM
run over each word, whose final hidden state is joined to the word's embedding by torch.cat
before the word LSTM. The tutorial's torch.randn inputs and states come from NumPy.

    python pos_tagger.py [torch|numbagrad]
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
rng = np.random.default_rng(7)


def randn(*shape):
    # (torch.randn's place: the same NumPy numbers for both libraries)
    return torch.from_numpy(rng.standard_normal(shape).astype(np.float32))


lstm = nn.LSTM(3, 3)  # input dim 3, output dim 3
numpy_init(torch, lstm)
inputs = [randn(1, 3) for _ in range(5)]  # a sequence of length 5

# the hidden state (h, c), drawn at random to start
hidden = (randn(1, 1, 3),
          randn(1, 1, 3))
hidden0 = hidden
for i in inputs:
    # one element of the sequence at a time; hidden carries over between steps
    out, hidden = lstm(i.view(1, 1, -1), hidden)
show('stepwise_out', out)
show('stepwise_hidden', hidden)

# the whole sequence in one call: the second axis is the batch of one
inputs = torch.cat(inputs).view(len(inputs), 1, -1)
out, hidden = lstm(inputs, hidden0)
print(out)
print(hidden)
show('seq_out', out)
show('seq_hidden', hidden)
hidden = (randn(1, 1, 3), randn(1, 1, 3))
out, hidden = lstm(inputs, hidden)
show('seq_out_fresh', out[-1])


def prepare_sequence(seq, to_ix):
    idxs = [to_ix[w] for w in seq]
    return torch.tensor(idxs, dtype=torch.long)


training_data = [
    # tags: DET - determiner; NN - noun; V - verb
    ("The dog ate the apple".split(), ["DET", "NN", "V", "DET", "NN"]),
    ("Everybody read that book".split(), ["NN", "V", "DET", "NN"]),
    ("The cat chased a mouse".split(), ["DET", "NN", "V", "DET", "NN"]),
]
word_to_ix = {}
# each unseen word gets the next free index
for sent, tags in training_data:
    for word in sent:
        if word not in word_to_ix:
            word_to_ix[word] = len(word_to_ix)
print(word_to_ix)
tag_to_ix = {"DET": 0, "NN": 1, "V": 2}

# small sizes, to watch the weights change while training
EMBEDDING_DIM = 6
HIDDEN_DIM = 6


class LSTMTagger(nn.Module):

    def __init__(self, embedding_dim, hidden_dim, vocab_size, tagset_size):
        super(LSTMTagger, self).__init__()
        self.hidden_dim = hidden_dim

        self.word_embeddings = nn.Embedding(vocab_size, embedding_dim)

        # word embeddings in, hidden states of size hidden_dim out
        self.lstm = nn.LSTM(embedding_dim, hidden_dim)

        # hidden state -> tag scores
        self.hidden2tag = nn.Linear(hidden_dim, tagset_size)

    def forward(self, sentence):
        embeds = self.word_embeddings(sentence)
        lstm_out, _ = self.lstm(embeds.view(len(sentence), 1, -1))
        tag_space = self.hidden2tag(lstm_out.view(len(sentence), -1))
        tag_scores = F.log_softmax(tag_space, dim=1)
        return tag_scores


model = LSTMTagger(EMBEDDING_DIM, HIDDEN_DIM, len(word_to_ix), len(tag_to_ix))
numpy_init(torch, model, seed=1)
loss_function = nn.NLLLoss()
optimizer = optim.SGD(model.parameters(), lr=0.1)

# the scores before training
with torch.no_grad():
    inputs = prepare_sequence(training_data[0][0], word_to_ix)
    tag_scores = model(inputs)
    print(tag_scores)
    show('scores_before', tag_scores)

losses = []
for epoch in range(30):  # the tutorial runs 300 epochs on its toy data
    for sentence, tags in training_data:
        # gradients accumulate: clear them before each instance
        model.zero_grad()

        # words and tags as tensors of indices
        sentence_in = prepare_sequence(sentence, word_to_ix)
        targets = prepare_sequence(tags, tag_to_ix)

        # forward pass
        tag_scores = model(sentence_in)

        # loss, gradients, update
        loss = loss_function(tag_scores, targets)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
show('losses', losses)

# the scores after training
with torch.no_grad():
    inputs = prepare_sequence(training_data[0][0], word_to_ix)
    tag_scores = model(inputs)

    # row i: the scores of each tag for word i; the argmax is the predicted tag
    print(tag_scores)
    show('scores_after', tag_scores)
    show('tags_after', tag_scores.argmax(dim=1))
show('hidden2tag_grad', model.hidden2tag.weight.grad)
show('lstm_bias_grad', model.lstm.bias_ih_l0.grad)
show('embedding_row', model.word_embeddings.weight[word_to_ix["apple"]])


# the exercise: character-level features for each word
char_to_ix = {}
for sent, _ in training_data:
    for word in sent:
        for ch in word:
            if ch not in char_to_ix:
                char_to_ix[ch] = len(char_to_ix)
CHAR_EMBEDDING_DIM = 3
CHAR_HIDDEN_DIM = 4


class LSTMTaggerWithChars(nn.Module):

    def __init__(self, embedding_dim, char_embedding_dim, hidden_dim, char_hidden_dim,
                 vocab_size, charset_size, tagset_size):
        super(LSTMTaggerWithChars, self).__init__()
        self.hidden_dim = hidden_dim
        self.char_hidden_dim = char_hidden_dim

        self.word_embeddings = nn.Embedding(vocab_size, embedding_dim)
        self.char_embeddings = nn.Embedding(charset_size, char_embedding_dim)
        # the character LSTM's last hidden state is the word's character representation
        self.char_lstm = nn.LSTM(char_embedding_dim, char_hidden_dim)
        # the word LSTM sees the embedding and the character representation side by side
        self.lstm = nn.LSTM(embedding_dim + char_hidden_dim, hidden_dim)
        self.hidden2tag = nn.Linear(hidden_dim, tagset_size)

    def forward(self, sentence, words_chars):
        word_embeds = self.word_embeddings(sentence)
        char_reprs = []
        for chars in words_chars:
            char_embeds = self.char_embeddings(chars)
            _, (h_n, c_n) = self.char_lstm(char_embeds.view(len(chars), 1, -1))
            char_reprs.append(h_n.view(1, -1))
        char_reprs = torch.cat(char_reprs)  # (len(sentence), char_hidden_dim)
        embeds = torch.cat((word_embeds, char_reprs), dim=1)
        lstm_out, _ = self.lstm(embeds.view(len(sentence), 1, -1))
        tag_space = self.hidden2tag(lstm_out.view(len(sentence), -1))
        return F.log_softmax(tag_space, dim=1)


char_model = LSTMTaggerWithChars(EMBEDDING_DIM, CHAR_EMBEDDING_DIM, HIDDEN_DIM, CHAR_HIDDEN_DIM,
                                 len(word_to_ix), len(char_to_ix), len(tag_to_ix))
numpy_init(torch, char_model, seed=2)
optimizer = optim.SGD(char_model.parameters(), lr=0.1)

char_losses = []
for epoch in range(15):
    for sentence, tags in training_data:
        char_model.zero_grad()
        sentence_in = prepare_sequence(sentence, word_to_ix)
        words_chars = [prepare_sequence(word, char_to_ix) for word in sentence]
        targets = prepare_sequence(tags, tag_to_ix)
        tag_scores = char_model(sentence_in, words_chars)
        loss = loss_function(tag_scores, targets)
        loss.backward()
        optimizer.step()
        char_losses.append(loss.item())
show('char_losses', char_losses)
show('char_lstm_grad', char_model.char_lstm.weight_hh_l0.grad[:4])
show('char_embedding_grad', char_model.char_embeddings.weight.grad)

with torch.no_grad():
    sentence = training_data[1][0]
    tag_scores = char_model(prepare_sequence(sentence, word_to_ix),
                            [prepare_sequence(word, char_to_ix) for word in sentence])
    print(tag_scores)
    show('char_scores', tag_scores)
    show('char_tags', tag_scores.argmax(dim=1))
