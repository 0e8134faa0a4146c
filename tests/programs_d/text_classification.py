"""PyTorch tutorial "Text classification with the torchtext library" (AG_NEWS), on generated
four-topic headlines: a tokenizer and a vocabulary with ``<unk>`` built by hand, the
``collate_batch`` that concatenates token ids and makes ``offsets`` by
``torch.tensor(offsets[:-1]).cumsum(dim=0)``, ``nn.EmbeddingBag`` + Linear with
``init_weights`` by ``uniform_``, SGD(lr=5), ``StepLR(optimizer, 1.0, gamma=0.1)`` stepped when
the validation accuracy drops, ``clip_grad_norm_(..., 0.1)``, the accuracy loops and
``predict``; then EmbeddingBag's other modes (sum, max, per_sample_weights, padding_idx, 2-d
input, include_last_offset, from_pretrained).

    python text_classification.py [torch|numbagrad]
"""
from collections import Counter

import numpy as np

from _common import BACKEND, show

if BACKEND == "torch":
    import torch
    from torch import nn
    from torch.utils.data import DataLoader, Subset, random_split
else:
    import numbagrad as torch
    from numbagrad import nn
    from numbagrad.utils.data import DataLoader, Subset, random_split

device = torch.device("cpu")
rng = np.random.default_rng(0)

topics = [
    "government minister election war peace treaty president talks",
    "game team season coach player win cup match",
    "market shares profit company oil prices stocks bank",
    "software computer internet space research chip google phone",
]
common = "the a of to in on for with says new after over".split()


def make_headline(label):
    words = topics[label].split()
    n = int(rng.integers(4, 10))
    picks = [words[i] if rng.random() < 0.6 else common[int(rng.integers(len(common)))]
             for i in rng.integers(0, len(words), n)]
    return " ".join(picks)


# (label, text) pairs with labels 1..4 as AG_NEWS gives them
train_iter = [(int(lab) + 1, make_headline(int(lab))) for lab in rng.integers(0, 4, 96)]
test_iter = [(int(lab) + 1, make_headline(int(lab))) for lab in rng.integers(0, 4, 32)]


def tokenizer(line):
    # what get_tokenizer("basic_english") does to these lowercase words
    return line.lower().replace(",", " , ").split()


def yield_tokens(data_iter):
    for _, text in data_iter:
        yield tokenizer(text)


counter = Counter(tok for tokens in yield_tokens(train_iter) for tok in tokens)
itos = ["<unk>"] + sorted(counter, key=lambda w: (-counter[w], w))
stoi = {w: i for i, w in enumerate(itos)}


def vocab(tokens):
    return [stoi.get(tok, stoi["<unk>"]) for tok in tokens]


print(vocab(["here", "is", "an", "example"]))
text_pipeline = lambda x: vocab(tokenizer(x))
label_pipeline = lambda x: int(x) - 1
show("pipeline", text_pipeline("the market prices of oil"))


def collate_batch(batch):
    label_list, text_list, offsets = [], [], [0]
    for _label, _text in batch:
        label_list.append(label_pipeline(_label))
        processed_text = torch.tensor(text_pipeline(_text), dtype=torch.int64)
        text_list.append(processed_text)
        offsets.append(processed_text.size(0))
    label_list = torch.tensor(label_list, dtype=torch.int64)
    offsets = torch.tensor(offsets[:-1]).cumsum(dim=0)
    text_list = torch.cat(text_list)
    return label_list.to(device), text_list.to(device), offsets.to(device)


dataloader = DataLoader(train_iter, batch_size=8, shuffle=False, collate_fn=collate_batch)
label, text, offsets = next(iter(dataloader))
show("first_batch", [label, offsets, text.shape[0]])
show("offsets_dtype", [offsets.dtype == torch.int64, text.dtype == torch.int64])


class TextClassificationModel(nn.Module):
    def __init__(self, vocab_size, embed_dim, num_class):
        super(TextClassificationModel, self).__init__()
        self.embedding = nn.EmbeddingBag(vocab_size, embed_dim, sparse=False)
        self.fc = nn.Linear(embed_dim, num_class)
        self.init_weights()

    def init_weights(self):
        initrange = 0.5
        self.embedding.weight.data.uniform_(-initrange, initrange)
        self.fc.weight.data.uniform_(-initrange, initrange)
        self.fc.bias.data.zero_()

    def forward(self, text, offsets):
        embedded = self.embedding(text, offsets)
        return self.fc(embedded)


num_class = len(set([label for (label, text) in train_iter]))
vocab_size = len(itos)
emsize = 16
model = TextClassificationModel(vocab_size, emsize, num_class).to(device)
print(model)
# uniform_ draws differ between the libraries: check the range, then load NumPy's numbers
show("init_in_range", [bool(model.embedding.weight.abs().max() <= 0.5), bool((model.fc.bias == 0).all())])
with torch.no_grad():
    model.embedding.weight.copy_(torch.from_numpy(rng.uniform(-0.5, 0.5, (vocab_size, emsize)).astype(np.float32)))
    model.fc.weight.copy_(torch.from_numpy(rng.uniform(-0.5, 0.5, (num_class, emsize)).astype(np.float32)))


def train(dataloader):
    model.train()
    total_acc, total_count = 0, 0
    log_interval = 4
    losses = []

    for idx, (label, text, offsets) in enumerate(dataloader):
        optimizer.zero_grad()
        predicted_label = model(text, offsets)
        loss = criterion(predicted_label, label)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
        optimizer.step()
        total_acc += (predicted_label.argmax(1) == label).sum().item()
        total_count += label.size(0)
        losses.append(loss.item())
        if idx % log_interval == 0 and idx > 0:
            print(
                "| epoch {:3d} | {:5d}/{:5d} batches "
                "| accuracy {:8.3f}".format(
                    epoch, idx, len(dataloader), total_acc / total_count
                )
            )
            total_acc, total_count = 0, 0
    return losses


def evaluate(dataloader):
    model.eval()
    total_acc, total_count = 0, 0

    with torch.no_grad():
        for idx, (label, text, offsets) in enumerate(dataloader):
            predicted_label = model(text, offsets)
            loss = criterion(predicted_label, label)
            total_acc += (predicted_label.argmax(1) == label).sum().item()
            total_count += label.size(0)
    return total_acc / total_count


# Hyperparameters
EPOCHS = 4  # epoch
LR = 5  # learning rate
BATCH_SIZE = 8  # batch size for training

criterion = torch.nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=LR)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1.0, gamma=0.1)
total_accu = None
train_dataset = train_iter
test_dataset = test_iter
num_train = int(len(train_dataset) * 0.75)

# random_split draws from the library's generator: only the lengths are compared, and the
# split used for training is NumPy's
split_a, split_b = random_split(train_dataset, [num_train, len(train_dataset) - num_train],
                                generator=torch.Generator().manual_seed(42))
show("random_split_lengths", [len(split_a), len(split_b)])
perm = rng.permutation(len(train_dataset)).tolist()
split_train_, split_valid_ = Subset(train_dataset, perm[:num_train]), Subset(train_dataset, perm[num_train:])

train_dataloader = DataLoader(split_train_, batch_size=BATCH_SIZE, shuffle=False, collate_fn=collate_batch)
valid_dataloader = DataLoader(split_valid_, batch_size=BATCH_SIZE, shuffle=False, collate_fn=collate_batch)
test_dataloader = DataLoader(test_dataset, batch_size=BATCH_SIZE, shuffle=False, collate_fn=collate_batch)

all_losses, accs, lrs = [], [], []
for epoch in range(1, EPOCHS + 1):
    all_losses += train(train_dataloader)
    accu_val = evaluate(valid_dataloader)
    if total_accu is not None and total_accu > accu_val:
        scheduler.step()
    else:
        total_accu = accu_val
    accs.append(accu_val)
    lrs.append(scheduler.get_last_lr()[0])
    print("-" * 59)
    print("| end of epoch {:3d} | valid accuracy {:8.3f} ".format(epoch, accu_val))
    print("-" * 59)

show("losses", all_losses)
show("valid_accs", accs)
show("lrs", lrs)
scheduler.step()
show("lr_after_step", scheduler.get_last_lr())
accu_test = eval_test = evaluate(test_dataloader)
print("test accuracy {:8.3f}".format(accu_test))
show("test_acc", accu_test)
show("embedding_row", model.embedding.weight[stoi["market"], :6])

ag_news_label = {1: "World", 2: "Sports", 3: "Business", 4: "Sci/Tec"}


def predict(text, text_pipeline):
    with torch.no_grad():
        text = torch.tensor(text_pipeline(text))
        output = model(text, torch.tensor([0]))
        return output.argmax(1).item() + 1


ex_text_str = "the team coach says the season match was a win for the player"
model = model.to("cpu")
print("This is a %s news" % ag_news_label[predict(ex_text_str, text_pipeline)])
show("predict", [predict(ex_text_str, text_pipeline), predict("oil prices and bank stocks", text_pipeline)])

# ----- the other ways of calling EmbeddingBag
weight = torch.from_numpy(rng.normal(size=(10, 3)).astype(np.float32))
inp = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9])
offs = torch.tensor([0, 4])
for mode in ["sum", "mean", "max"]:
    bag = nn.EmbeddingBag.from_pretrained(weight, mode=mode, freeze=False)
    out = bag(inp, offs)
    out.pow(2).sum().backward()
    show("bag_" + mode, out)
    show("bag_grad_" + mode, bag.weight.grad[[2, 4, 9]])
bag = nn.EmbeddingBag.from_pretrained(weight, mode="sum")
show("bag_frozen", bag.weight.requires_grad)
psw = torch.from_numpy(rng.uniform(size=8).astype(np.float32)).requires_grad_()
out = bag(inp, offs, per_sample_weights=psw)
out.sum().backward()
show("bag_per_sample_weights", [out, psw.grad])
show("bag_2d", nn.EmbeddingBag.from_pretrained(weight)(inp.view(2, 4)))
show("bag_last_offset", nn.EmbeddingBag.from_pretrained(weight, include_last_offset=True)(inp, torch.tensor([0, 3, 8])))
show("bag_empty", nn.EmbeddingBag.from_pretrained(weight, mode="sum")(inp, torch.tensor([0, 0, 5])))
bag = nn.EmbeddingBag(10, 3, mode="mean", padding_idx=2)
bag.weight.data.copy_(weight)
show("bag_padding_idx", bag(inp, offs))
show("bag_functional", nn.functional.embedding_bag(inp, weight, offs, mode="max"))
bag = nn.EmbeddingBag(10, 3, max_norm=1.0, _weight=weight.clone())
show("bag_max_norm", bag(inp, offs))
show("bag_max_norm_renormed", bag.weight.norm(dim=1))
print(nn.EmbeddingBag(10, 3, mode="max"))
