"""PyTorch tutorial "Word Embeddings: Encoding Lexical Semantics", scaled down: an
nn.Embedding looked up by a ``torch.tensor([word_to_ix["hello"]], dtype=torch.long)``, the
N-Gram language model (trigram contexts, ``embeds.view((1, -1))``, linear1, relu, linear2,
log_softmax) trained with NLLLoss and SGD summing ``total_loss += loss.item()``, a row of
``embeddings.weight[word_to_ix[...]]``; then the exercise's continuous bag-of-words model
(the context embeddings summed) on a two-words-either-side window. Word indices come from
sorted(set(...)) so that every process numbers the words alike.

    python ngram_cbow.py [torch|numbagrad]
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

word_to_ix = {"hello": 0, "world": 1}
embeds = nn.Embedding(2, 5)  # 2 words in vocab, 5 dimensional embeddings
numpy_init(torch, embeds)
lookup_tensor = torch.tensor([word_to_ix["hello"]], dtype=torch.long)
hello_embed = embeds(lookup_tensor)
print(hello_embed)
show('hello_embed', hello_embed)

CONTEXT_SIZE = 2
EMBEDDING_DIM = 10
# a few lines of made-up verse, split into tokens
test_sentence = """When autumn rain shall drum upon the roof,
And the old lamp burns low beside the door,
Then shall the quiet house give its own proof
Of every year it kept the cold before;
And every year the rain shall drum once more,
And the old door shall open to the rain.""".split()
# each tuple is ([ word_i-CONTEXT_SIZE, ..., word_i-1 ], target word)
ngrams = [
    (
        [test_sentence[i - j - 1] for j in range(CONTEXT_SIZE)],
        test_sentence[i]
    )
    for i in range(CONTEXT_SIZE, len(test_sentence))
]
# the first three, to see what they look like
print(ngrams[:3])

vocab = set(test_sentence)
word_to_ix = {word: i for i, word in enumerate(sorted(vocab))}
show('vocab_ngrams', [len(vocab), len(ngrams)])


class NGramLanguageModeler(nn.Module):

    def __init__(self, vocab_size, embedding_dim, context_size):
        super(NGramLanguageModeler, self).__init__()
        self.embeddings = nn.Embedding(vocab_size, embedding_dim)
        self.linear1 = nn.Linear(context_size * embedding_dim, 128)
        self.linear2 = nn.Linear(128, vocab_size)

    def forward(self, inputs):
        embeds = self.embeddings(inputs).view((1, -1))
        out = F.relu(self.linear1(embeds))
        out = self.linear2(out)
        log_probs = F.log_softmax(out, dim=1)
        return log_probs


losses = []
loss_function = nn.NLLLoss()
model = NGramLanguageModeler(len(vocab), EMBEDDING_DIM, CONTEXT_SIZE)
numpy_init(torch, model, seed=1)
optimizer = optim.SGD(model.parameters(), lr=0.05)

for epoch in range(6):
    total_loss = 0
    for context, target in ngrams:

        # words -> integer indices, wrapped in a tensor
        context_idxs = torch.tensor([word_to_ix[w] for w in context], dtype=torch.long)

        # gradients accumulate, so clear them for each instance
        model.zero_grad()

        # the log probabilities over the next word
        log_probs = model(context_idxs)

        # the target word, wrapped in a tensor too
        loss = loss_function(log_probs, torch.tensor([word_to_ix[target]], dtype=torch.long))

        # backward pass and update
        loss.backward()
        optimizer.step()

        # .item() gives a Python number from a one-element tensor
        total_loss += loss.item()
    losses.append(total_loss)
print(losses)  # the loss went down every epoch
show('ngram_losses', losses)

# the embedding of one word
print(model.embeddings.weight[word_to_ix["rain"]])
show('rain_embedding', model.embeddings.weight[word_to_ix["rain"]])
show('ngram_linear1_grad', model.linear1.weight.grad[:2])
show('ngram_emb_grad', model.embeddings.weight.grad[word_to_ix[ngrams[-1][0][0]]])
with torch.no_grad():
    log_probs = model(torch.tensor([word_to_ix["the"], word_to_ix["And"]], dtype=torch.long))
    show('ngram_next', log_probs)
    show('ngram_best', log_probs.argmax(dim=1))


CONTEXT_SIZE = 2  # 2 words to the left, 2 to the right
raw_text = """A process is a thing that lives inside the machine and acts on data.
As it runs the process follows a pattern of rules we call a program.
We write programs to tell processes what to do, and the machine obeys.
Our rules are symbols written in a language made for the purpose.""".split()

# duplicates dropped by the set, then sorted for a fixed numbering
vocab = set(raw_text)
vocab_size = len(vocab)

word_to_ix = {word: i for i, word in enumerate(sorted(vocab))}
data = []
for i in range(CONTEXT_SIZE, len(raw_text) - CONTEXT_SIZE):
    context = (
        [raw_text[i - j - 1] for j in range(CONTEXT_SIZE)]
        + [raw_text[i + j + 1] for j in range(CONTEXT_SIZE)]
    )
    target = raw_text[i]
    data.append((context, target))
print(data[:5])


class CBOW(nn.Module):

    def __init__(self, vocab_size, embedding_dim):
        super(CBOW, self).__init__()
        self.embeddings = nn.Embedding(vocab_size, embedding_dim)
        self.linear1 = nn.Linear(embedding_dim, 32)
        self.linear2 = nn.Linear(32, vocab_size)

    def forward(self, inputs):
        # the context's embeddings summed into one vector
        embeds = sum(self.embeddings(inputs)).view((1, -1))
        out = F.relu(self.linear1(embeds))
        out = self.linear2(out)
        return F.log_softmax(out, dim=1)


def make_context_vector(context, word_to_ix):
    idxs = [word_to_ix[w] for w in context]
    return torch.tensor(idxs, dtype=torch.long)


show('context_vector', make_context_vector(data[0][0], word_to_ix))

cbow = CBOW(vocab_size, EMBEDDING_DIM)
numpy_init(torch, cbow, seed=2)
optimizer = optim.SGD(cbow.parameters(), lr=0.05)
cbow_losses = []
for epoch in range(6):
    total_loss = 0
    for context, target in data:
        context_vector = make_context_vector(context, word_to_ix)
        cbow.zero_grad()
        log_probs = cbow(context_vector)
        loss = loss_function(log_probs, torch.tensor([word_to_ix[target]], dtype=torch.long))
        loss.backward()
        optimizer.step()
        total_loss += loss.item()
    cbow_losses.append(total_loss)
print(cbow_losses)
show('cbow_losses', cbow_losses)
show('cbow_embedding', cbow.embeddings.weight[word_to_ix["process"]])
show('cbow_grad', cbow.linear1.weight.grad[:2])

with torch.no_grad():
    hits = 0
    for context, target in data:
        pred = cbow(make_context_vector(context, word_to_ix)).argmax(dim=1).item()
        hits += int(pred == word_to_ix[target])
    show('cbow_train_acc', hits / len(data))
    show('cbow_predict', cbow(make_context_vector(['machine', 'the', 'and', 'acts'], word_to_ix)))
