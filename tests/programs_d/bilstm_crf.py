"""PyTorch tutorial "Advanced: Making Dynamic Decisions and the Bi-LSTM CRF", scaled down:
the argmax/prepare_sequence/log_sum_exp helpers (``max_score.view(1, -1).expand(...)``), a
BiLSTM_CRF of nn.Embedding, a bidirectional nn.LSTM and hidden2tag under an nn.Parameter of
transition scores whose START row and STOP column are set through ``.data[...] = -10000``;
the forward algorithm as a Python loop of per-tag log_sum_exp joined by
``torch.cat(alphas_t).view(1, -1)`` from ``torch.full(..., -10000.)``, the gold path score
with the START tag prepended by torch.cat, Viterbi decoding with backpointers and .item(),
the negative log-likelihood trained by SGD(lr=0.01, weight_decay=1e-4), and the decoded tag
sequence before and after under torch.no_grad(). The tutorial's torch.randn draws (the
transitions, init_hidden) come from NumPy.

    python bilstm_crf.py [torch|numbagrad]
"""
import numpy as np

from _common import BACKEND, numpy_init, show

if BACKEND == "torch":
    import torch
    import torch.autograd as autograd
    import torch.nn as nn
    import torch.optim as optim
else:
    import numbagrad as torch
    import numbagrad.autograd as autograd
    import numbagrad.nn as nn
    import numbagrad.optim as optim

torch.manual_seed(1)
rng = np.random.default_rng(3)


def randn(*shape):
    # (stands in for torch.randn: both libraries get the same NumPy draws)
    return torch.from_numpy(rng.standard_normal(shape).astype(np.float32))


def argmax(vec):
    # the index of the largest entry, as a Python int
    _, idx = torch.max(vec, 1)
    return idx.item()


def prepare_sequence(seq, to_ix):
    idxs = [to_ix[w] for w in seq]
    return torch.tensor(idxs, dtype=torch.long)


def log_sum_exp(vec):
    # subtract the max before exponentiating so nothing overflows
    max_score = vec[0, argmax(vec)]
    max_score_broadcast = max_score.view(1, -1).expand(1, vec.size()[1])
    return max_score + \
        torch.log(torch.sum(torch.exp(vec - max_score_broadcast)))


class BiLSTM_CRF(nn.Module):

    def __init__(self, vocab_size, tag_to_ix, embedding_dim, hidden_dim):
        super(BiLSTM_CRF, self).__init__()
        self.embedding_dim = embedding_dim
        self.hidden_dim = hidden_dim
        self.vocab_size = vocab_size
        self.tag_to_ix = tag_to_ix
        self.tagset_size = len(tag_to_ix)

        self.word_embeds = nn.Embedding(vocab_size, embedding_dim)
        self.lstm = nn.LSTM(embedding_dim, hidden_dim // 2,
                            num_layers=1, bidirectional=True)

        # emissions: LSTM output -> one score per tag
        self.hidden2tag = nn.Linear(hidden_dim, self.tagset_size)

        # transitions[i, j] scores a move *to* tag i *from* tag j
        self.transitions = nn.Parameter(
            randn(self.tagset_size, self.tagset_size))

        # nothing ever moves into START, and nothing leaves STOP
        self.transitions.data[tag_to_ix[START_TAG], :] = -10000
        self.transitions.data[:, tag_to_ix[STOP_TAG]] = -10000

        self.hidden = self.init_hidden()

    def init_hidden(self):
        return (randn(2, 1, self.hidden_dim // 2),
                randn(2, 1, self.hidden_dim // 2))

    def _forward_alg(self, feats):
        # log-space partition function, one time step at a time
        init_alphas = torch.full((1, self.tagset_size), -10000.)
        # only START has any mass at the beginning
        init_alphas[0][self.tag_to_ix[START_TAG]] = 0.

        forward_var = init_alphas

        for feat in feats:
            alphas_t = []  # the forward scores of this step
            for next_tag in range(self.tagset_size):
                # the emission of next_tag does not depend on the previous tag
                emit_score = feat[next_tag].view(
                    1, -1).expand(1, self.tagset_size)
                # every previous tag's score of moving into next_tag
                trans_score = self.transitions[next_tag].view(1, -1)
                next_tag_var = forward_var + trans_score + emit_score
                alphas_t.append(log_sum_exp(next_tag_var).view(1))
            forward_var = torch.cat(alphas_t).view(1, -1)
        terminal_var = forward_var + self.transitions[self.tag_to_ix[STOP_TAG]]
        alpha = log_sum_exp(terminal_var)
        return alpha

    def _get_lstm_features(self, sentence):
        self.hidden = self.init_hidden()
        embeds = self.word_embeds(sentence).view(len(sentence), 1, -1)
        lstm_out, self.hidden = self.lstm(embeds, self.hidden)
        lstm_out = lstm_out.view(len(sentence), self.hidden_dim)
        lstm_feats = self.hidden2tag(lstm_out)
        return lstm_feats

    def _score_sentence(self, feats, tags):
        # the score of the given tag sequence
        score = torch.zeros(1)
        tags = torch.cat([torch.tensor([self.tag_to_ix[START_TAG]], dtype=torch.long), tags])
        for i, feat in enumerate(feats):
            score = score + \
                self.transitions[tags[i + 1], tags[i]] + feat[tags[i + 1]]
        score = score + self.transitions[self.tag_to_ix[STOP_TAG], tags[-1]]
        return score

    def _viterbi_decode(self, feats):
        backpointers = []

        init_vvars = torch.full((1, self.tagset_size), -10000.)
        init_vvars[0][self.tag_to_ix[START_TAG]] = 0

        # forward_var at step i: the best path scores ending in each tag at step i-1
        forward_var = init_vvars
        for feat in feats:
            bptrs_t = []  # this step's backpointers
            viterbivars_t = []  # this step's best scores

            for next_tag in range(self.tagset_size):
                # emissions are added after the max: they do not change the argmax
                next_tag_var = forward_var + self.transitions[next_tag]
                best_tag_id = argmax(next_tag_var)
                bptrs_t.append(best_tag_id)
                viterbivars_t.append(next_tag_var[0][best_tag_id].view(1))
            forward_var = (torch.cat(viterbivars_t) + feat).view(1, -1)
            backpointers.append(bptrs_t)

        # the move into STOP
        terminal_var = forward_var + self.transitions[self.tag_to_ix[STOP_TAG]]
        best_tag_id = argmax(terminal_var)
        path_score = terminal_var[0][best_tag_id]

        # walk the backpointers to read off the best path
        best_path = [best_tag_id]
        for bptrs_t in reversed(backpointers):
            best_tag_id = bptrs_t[best_tag_id]
            best_path.append(best_tag_id)
        # drop the START tag: it is not part of the answer
        start = best_path.pop()
        assert start == self.tag_to_ix[START_TAG]
        best_path.reverse()
        return path_score, best_path

    def neg_log_likelihood(self, sentence, tags):
        feats = self._get_lstm_features(sentence)
        forward_score = self._forward_alg(feats)
        gold_score = self._score_sentence(feats, tags)
        return forward_score - gold_score

    def forward(self, sentence):
        # decoding, not the loss: the best path and its score
        lstm_feats = self._get_lstm_features(sentence)

        score, tag_seq = self._viterbi_decode(lstm_feats)
        return score, tag_seq


START_TAG = "<START>"
STOP_TAG = "<STOP>"
EMBEDDING_DIM = 5
HIDDEN_DIM = 4

training_data = [(
    "the wall street journal reported today that apple corporation made money".split(),
    "B I I I O O O B I O O".split()
), (
    "georgia tech is a university in georgia".split(),
    "B I O O O B I".split()
), (
    "new york times said that google made money".split(),
    "B I I O O B O O".split()
)]

word_to_ix = {}
for sentence, tags in training_data:
    for word in sentence:
        if word not in word_to_ix:
            word_to_ix[word] = len(word_to_ix)

tag_to_ix = {"B": 0, "I": 1, "O": 2, START_TAG: 3, STOP_TAG: 4}

model = BiLSTM_CRF(len(word_to_ix), tag_to_ix, EMBEDDING_DIM, HIDDEN_DIM)
numpy_init(torch, model.word_embeds, seed=1)
numpy_init(torch, model.lstm, seed=2)
numpy_init(torch, model.hidden2tag, seed=3)
optimizer = optim.SGD(model.parameters(), lr=0.01, weight_decay=1e-4)

show('transitions_init', model.transitions)
show('log_sum_exp', log_sum_exp(torch.tensor([[1.0, 2.0, 3.0, -10000.0]])))

# predictions before training
with torch.no_grad():
    precheck_sent = prepare_sequence(training_data[0][0], word_to_ix)
    precheck_tags = torch.tensor([tag_to_ix[t] for t in training_data[0][1]], dtype=torch.long)
    score, tag_seq = model(precheck_sent)
    print(score, tag_seq)
    show('before_score', score)
    show('before_tags', tag_seq)
    show('before_nll', model.neg_log_likelihood(precheck_sent, precheck_tags))

losses = []
for epoch in range(12):
    for sentence, tags in training_data:
        # fresh gradients for each instance
        model.zero_grad()

        sentence_in = prepare_sequence(sentence, word_to_ix)
        targets = torch.tensor([tag_to_ix[t] for t in tags], dtype=torch.long)

        loss = model.neg_log_likelihood(sentence_in, targets)

        loss.backward()
        optimizer.step()
        losses.append(loss.item())

show('losses', losses)
show('transitions', model.transitions)
show('transitions_grad', model.transitions.grad)
show('hidden2tag_grad', model.hidden2tag.weight.grad)
show('lstm_reverse_bias_grad', model.lstm.bias_hh_l0_reverse.grad)
show('embeds_grad_row', model.word_embeds.weight.grad[word_to_ix['money']])

# predictions after training
with torch.no_grad():
    for i, (sentence, tags) in enumerate(training_data):
        precheck_sent = prepare_sequence(sentence, word_to_ix)
        score, tag_seq = model(precheck_sent)
        print(score, tag_seq)
        show(f'after_score_{i}', score)
        show(f'after_tags_{i}', tag_seq)
    feats = model._get_lstm_features(prepare_sequence(training_data[1][0], word_to_ix))
    show('feats', feats)
    show('forward_alg', model._forward_alg(feats))
    show('gold_score', model._score_sentence(
        feats, prepare_sequence(training_data[1][1], tag_to_ix)))
