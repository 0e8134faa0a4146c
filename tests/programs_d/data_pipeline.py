"""The data-loading tutorial ("Datasets & DataLoaders", "Writing Custom Datasets, DataLoaders
and Transforms") and the idioms courses build on it: a map-style Dataset with a transform,
TensorDataset, random_split and Subset, ConcatDataset, a DataLoader with a custom collate_fn,
drop_last, a seeded shuffling Generator, samplers (WeightedRandomSampler, BatchSampler), an
IterableDataset, and a short training run over the loader.

    python data_pipeline.py [torch|numbagrad]
"""
import numpy as np

from _common import BACKEND, numpy_init, show

if BACKEND == "torch":
    import torch
    import torch.nn as nn
    from torch.utils.data import (BatchSampler, ConcatDataset, DataLoader, Dataset,
                                  IterableDataset, RandomSampler, SequentialSampler, Subset,
                                  TensorDataset, WeightedRandomSampler, random_split)
    from torch.utils.data import default_collate
else:
    import numbagrad as torch
    import numbagrad.nn as nn
    from numbagrad.utils.data import (BatchSampler, ConcatDataset, DataLoader, Dataset,
                                      IterableDataset, RandomSampler, SequentialSampler, Subset,
                                      TensorDataset, WeightedRandomSampler, random_split)
    from numbagrad.utils.data import default_collate

rng = np.random.default_rng(0)
TABLE = rng.normal(size=(30, 4)).astype(np.float32)
TARGET = (TABLE @ np.array([1.0, -2.0, 0.5, 0.0], dtype=np.float32) > 0).astype(np.int64)


class ToTensor:
    """Convert ndarrays in sample to Tensors."""
    def __call__(self, sample):
        features, label = sample['features'], sample['label']
        return {'features': torch.from_numpy(features), 'label': torch.tensor(label)}


class Normalize:
    def __init__(self, mean, std):
        self.mean, self.std = mean, std

    def __call__(self, sample):
        sample['features'] = (sample['features'] - self.mean) / self.std
        return sample


class Compose:
    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, sample):
        for t in self.transforms:
            sample = t(sample)
        return sample


class TableDataset(Dataset):
    """A table of features and labels (a CSV file in the tutorial)."""
    def __init__(self, table, target, transform=None):
        self.table = table
        self.target = target
        self.transform = transform

    def __len__(self):
        return len(self.table)

    def __getitem__(self, idx):
        if torch.is_tensor(idx):
            idx = idx.tolist()
        sample = {'features': self.table[idx], 'label': self.target[idx]}
        if self.transform:
            sample = self.transform(sample)
        return sample


dataset = TableDataset(TABLE, TARGET, transform=Compose([ToTensor(), Normalize(0.1, 2.0)]))
show('len', len(dataset))
sample = dataset[3]
show('sample', torch.cat([sample['features'], sample['label'].float().view(1)]))
show('sample_tensor_idx', dataset[torch.tensor(5)]['features'])

loader = DataLoader(dataset, batch_size=8, shuffle=False, drop_last=True)
for i_batch, sample_batched in enumerate(loader):
    print(i_batch, sample_batched['features'].size(), sample_batched['label'].size())
show('n_batches', [len(loader), len(DataLoader(dataset, batch_size=8))])
show('batch0', next(iter(loader))['features'].sum(0))


def collate_pad(batch):
    """Variable-length rows: pad to the longest, and return lengths."""
    lengths = torch.tensor([len(x) for x, _ in batch])
    padded = torch.zeros(len(batch), int(lengths.max()))
    for i, (x, _) in enumerate(batch):
        padded[i, :len(x)] = x
    return padded, lengths, torch.stack([y for _, y in batch])


ragged = [(torch.arange(1., n + 1), torch.tensor(n % 2)) for n in (3, 1, 4, 2, 5)]
padded, lengths, ys = next(iter(DataLoader(ragged, batch_size=3, collate_fn=collate_pad)))
show('collate_pad', padded)
show('collate_len', lengths)
show('default_collate', default_collate([(1, 2.0), (3, 4.0)])[1])
show('default_collate_np', default_collate([np.ones(2), np.zeros(2)]))

# shuffling draws from each library's generator: the orders differ, what they cover does not
g = torch.Generator()
g.manual_seed(0)
shuffled = DataLoader(TensorDataset(torch.arange(10)), batch_size=4, shuffle=True, generator=g)
seen = [b[0].tolist() for b in shuffled]
show('shuffle_cover', sorted(sum(seen, [])))
show('shuffle_sizes', [len(b) for b in seen])
g2 = torch.Generator().manual_seed(0)
again = [b[0].tolist() for b in DataLoader(TensorDataset(torch.arange(10)), batch_size=4,
                                           shuffle=True, generator=g2)]
show('shuffle_repeatable', int(again == seen))

features, targets = torch.from_numpy(TABLE), torch.from_numpy(TARGET)
full = TensorDataset(features, targets)
train_set, val_set = random_split(full, [24, 6], generator=torch.Generator().manual_seed(42))
show('split_sizes', [len(train_set), len(val_set)])
show('split_cover', sorted(train_set.indices + val_set.indices))
a, b, c = random_split(range(10), [0.5, 0.3, 0.2], generator=torch.Generator().manual_seed(1))
show('split_fractions', [len(a), len(b), len(c)])
first_ten = Subset(full, range(10))
show('subset', [len(first_ten), first_ten[2][0].sum().item(), first_ten[2][1].item()])
both = ConcatDataset([first_ten, Subset(full, [20, 21])])
show('concat', [len(both), both[11][0].sum().item(), both.cumulative_sizes[-1]])

sampler = WeightedRandomSampler(weights=[0.0, 0.0, 1.0, 1.0], num_samples=6, replacement=True)
show('weighted', sorted(set(list(sampler))))
show('batch_sampler', sum(list(BatchSampler(SequentialSampler(range(7)), batch_size=3, drop_last=False)), []))
show('batch_sampler_n', len(BatchSampler(SequentialSampler(range(7)), batch_size=3, drop_last=False)))
show('batch_sampler_drop', sum(list(BatchSampler(range(7), batch_size=3, drop_last=True)), []))
show('random_sampler', [len(RandomSampler(range(5)))] + sorted(RandomSampler(range(5))))


class Squares(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter((torch.tensor(float(i)), torch.tensor(float(i * i))) for i in range(self.n))


show('iterable', [y.tolist() for _, y in DataLoader(Squares(7), batch_size=3)])

# training over the loader (not shuffled: the same batches in both libraries)
model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))
numpy_init(torch, model)
opt = torch.optim.SGD(model.parameters(), lr=0.3)
loss_fn = nn.CrossEntropyLoss()
train_loader = DataLoader(Subset(full, list(range(24))), batch_size=6)
val_loader = DataLoader(Subset(full, list(range(24, 30))), batch_size=6)
history = []
for epoch in range(4):
    size = len(train_loader.dataset)
    model.train()
    for batch, (X, y) in enumerate(train_loader):
        pred = model(X)
        loss = loss_fn(pred, y)
        loss.backward()
        opt.step()
        opt.zero_grad()
    model.eval()
    test_loss, correct = 0, 0
    with torch.no_grad():
        for X, y in val_loader:
            pred = model(X)
            test_loss += loss_fn(pred, y).item()
            correct += (pred.argmax(1) == y).type(torch.float).sum().item()
    history += [loss.item(), test_loss / len(val_loader), correct / len(val_loader.dataset)]
show('history', history)
