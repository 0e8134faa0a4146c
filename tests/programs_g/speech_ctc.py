"""AssemblyAI's "Building an end-to-end Speech Recognition model in PyTorch" (Michael Nguyen's
Deep Speech 2-style model), scaled down, with generated utterances and NumPy "spectrograms"
(each character a noisy frequency pattern held for a few frames, SpecAugment's frequency and
time masks applied in NumPy) in place of LibriSpeech and torchaudio: the TextTransform character
map, ``data_processing`` (``spec.squeeze(0).transpose(0, 1)``, ``torch.Tensor`` labels,
``pad_sequence(batch_first=True).unsqueeze(1).transpose(2, 3)``, input lengths halved by the
stride); CNNLayerNorm (``transpose(2, 3).contiguous()`` around ``nn.LayerNorm``), ResidualCNN
with GELU and the in-place ``x += residual``, BidirectionalGRU (the blog's ``batch_first=i==0``
for the later layers kept as written), SpeechRecognitionModel's ``view``/``transpose`` to the
RNN; training with ``F.log_softmax(output, dim=2).transpose(0, 1)`` into ``nn.CTCLoss(blank=28)``
(float label tensors and Python length lists), AdamW and ``OneCycleLR(anneal_strategy='linear')``
stepped per batch (``get_last_lr``); ``GreedyDecoder`` (argmax, blanks dropped, repeats
collapsed) and the word and character error rates by Levenshtein distance under ``no_grad``;
``CTCLoss`` reductions and ``zero_infinity`` on an impossible alignment.

    python speech_ctc.py [torch|numbagrad]
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

rng = np.random.default_rng(0)


class TextTransform:
    """Maps characters to integers and vice versa"""

    def __init__(self):
        char_map_str = """
        ' 0
        <SPACE> 1
        a 2
        b 3
        c 4
        d 5
        e 6
        f 7
        g 8
        h 9
        i 10
        j 11
        k 12
        l 13
        m 14
        n 15
        o 16
        p 17
        q 18
        r 19
        s 20
        t 21
        u 22
        v 23
        w 24
        x 25
        y 26
        z 27
        """
        self.char_map = {}
        self.index_map = {}
        for line in char_map_str.strip().split('\n'):
            ch, index = line.split()
            self.char_map[ch] = int(index)
            self.index_map[int(index)] = ch
        self.index_map[1] = ' '

    def text_to_int(self, text):
        """ Use a character map and convert text to an integer sequence """
        int_sequence = []
        for c in text:
            if c == ' ':
                ch = self.char_map['<SPACE>']
            else:
                ch = self.char_map[c]
            int_sequence.append(ch)
        return int_sequence

    def int_to_text(self, labels):
        """ Use a character map and convert integer labels to an text sequence """
        string = []
        for i in labels:
            string.append(self.index_map[i])
        return ''.join(string).replace('<SPACE>', ' ')


text_transform = TextTransform()

# ---- the "audio": each character a frequency pattern over n_feats bins, 2-3 frames long
n_feats = 16
patterns = rng.normal(size=(28, n_feats))
words = ["a", "cat", "sat", "on", "the", "mat", "dog", "ran", "to", "me"]


def make_utterance():
    utterance = " ".join(rng.choice(words, size=rng.integers(1, 3)))
    frames = []
    for c in utterance:
        idx = text_transform.text_to_int(c)[0]
        frames += [patterns[idx]] * int(rng.integers(2, 4))
    spec = np.array(frames).T + 0.3 * rng.normal(size=(n_feats, len(frames)))
    return spec.astype(np.float32)[None], utterance  # (channel, feature, time) like MelSpectrogram


def spec_augment(spec):
    """FrequencyMasking(freq_mask_param=4) then TimeMasking(time_mask_param=3), in NumPy."""
    spec = spec.copy()
    f = int(rng.integers(0, 5))
    f0 = int(rng.integers(0, n_feats - f + 1))
    spec[:, f0:f0 + f, :] = 0
    t = int(rng.integers(0, 4))
    t0 = int(rng.integers(0, spec.shape[2] - t + 1))
    spec[:, :, t0:t0 + t] = 0
    return spec


train_dataset = [make_utterance() for _ in range(24)]
test_dataset = [make_utterance() for _ in range(6)]


def data_processing(data, data_type="train"):
    spectrograms = []
    labels = []
    input_lengths = []
    label_lengths = []
    for (waveform, utterance) in data:
        if data_type == 'train':
            spec = torch.from_numpy(spec_augment(waveform)).squeeze(0).transpose(0, 1)
        elif data_type == 'valid':
            spec = torch.from_numpy(waveform).squeeze(0).transpose(0, 1)
        else:
            raise Exception('data_type should be train or valid')
        spectrograms.append(spec)
        label = torch.Tensor(text_transform.text_to_int(utterance.lower()))
        labels.append(label)
        input_lengths.append(spec.shape[0]//2)
        label_lengths.append(len(label))

    spectrograms = nn.utils.rnn.pad_sequence(spectrograms, batch_first=True).unsqueeze(1).transpose(2, 3)
    labels = nn.utils.rnn.pad_sequence(labels, batch_first=True)

    return spectrograms, labels, input_lengths, label_lengths


def avg_wer(wer_scores, combined_ref_len):
    return float(sum(wer_scores)) / float(combined_ref_len)


def _levenshtein_distance(ref, hyp):
    """Levenshtein distance is a string metric for measuring the difference between two sequences."""
    m = len(ref)
    n = len(hyp)

    # special case
    if ref == hyp:
        return 0
    if m == 0:
        return n
    if n == 0:
        return m

    if m < n:
        ref, hyp = hyp, ref
        m, n = n, m

    # use O(min(m, n)) space
    distance = np.zeros((2, n + 1), dtype=np.int32)

    # initialize distance matrix
    for j in range(0, n + 1):
        distance[0][j] = j

    # calculate levenshtein distance
    for i in range(1, m + 1):
        prev_row_idx = (i - 1) % 2
        cur_row_idx = i % 2
        distance[cur_row_idx][0] = i
        for j in range(1, n + 1):
            if ref[i - 1] == hyp[j - 1]:
                distance[cur_row_idx][j] = distance[prev_row_idx][j - 1]
            else:
                s_num = distance[prev_row_idx][j - 1] + 1
                i_num = distance[cur_row_idx][j - 1] + 1
                d_num = distance[prev_row_idx][j] + 1
                distance[cur_row_idx][j] = min(s_num, i_num, d_num)

    return distance[m % 2][n]


def word_errors(reference, hypothesis, ignore_case=False, delimiter=' '):
    if ignore_case:
        reference = reference.lower()
        hypothesis = hypothesis.lower()

    ref_words = reference.split(delimiter)
    hyp_words = hypothesis.split(delimiter)

    edit_distance = _levenshtein_distance(ref_words, hyp_words)
    return float(edit_distance), len(ref_words)


def char_errors(reference, hypothesis, ignore_case=False, remove_space=False):
    if ignore_case:
        reference = reference.lower()
        hypothesis = hypothesis.lower()

    join_char = ' '
    if remove_space:
        join_char = ''

    reference = join_char.join(filter(None, reference.split(' ')))
    hypothesis = join_char.join(filter(None, hypothesis.split(' ')))

    edit_distance = _levenshtein_distance(reference, hypothesis)
    return float(edit_distance), len(reference)


def wer(reference, hypothesis, ignore_case=False, delimiter=' '):
    edit_distance, ref_len = word_errors(reference, hypothesis, ignore_case, delimiter)

    if ref_len == 0:
        raise ValueError("Reference's word number should be greater than 0.")

    wer = float(edit_distance) / ref_len
    return wer


def cer(reference, hypothesis, ignore_case=False, remove_space=False):
    edit_distance, ref_len = char_errors(reference, hypothesis, ignore_case, remove_space)

    if ref_len == 0:
        raise ValueError("Length of reference should be greater than 0.")

    cer = float(edit_distance) / ref_len
    return cer


def GreedyDecoder(output, labels, label_lengths, blank_label=28, collapse_repeated=True):
    arg_maxes = torch.argmax(output, dim=2)
    decodes = []
    targets = []
    for i, args in enumerate(arg_maxes):
        decode = []
        targets.append(text_transform.int_to_text(labels[i][:label_lengths[i]].tolist()))
        for j, index in enumerate(args):
            if index != blank_label:
                if collapse_repeated and j != 0 and index == args[j - 1]:
                    continue
                decode.append(index.item())
        decodes.append(text_transform.int_to_text(decode))
    return decodes, targets


class CNNLayerNorm(nn.Module):
    """Layer normalization built for cnns input"""

    def __init__(self, n_feats):
        super(CNNLayerNorm, self).__init__()
        self.layer_norm = nn.LayerNorm(n_feats)

    def forward(self, x):
        # x (batch, channel, feature, time)
        x = x.transpose(2, 3).contiguous()  # (batch, channel, time, feature)
        x = self.layer_norm(x)
        return x.transpose(2, 3).contiguous()  # (batch, channel, feature, time)


class ResidualCNN(nn.Module):
    """Residual CNN inspired by https://arxiv.org/pdf/1603.05027.pdf
        except with layer norm instead of batch norm
    """

    def __init__(self, in_channels, out_channels, kernel, stride, dropout, n_feats):
        super(ResidualCNN, self).__init__()

        self.cnn1 = nn.Conv2d(in_channels, out_channels, kernel, stride, padding=kernel//2)
        self.cnn2 = nn.Conv2d(out_channels, out_channels, kernel, stride, padding=kernel//2)
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(dropout)
        self.layer_norm1 = CNNLayerNorm(n_feats)
        self.layer_norm2 = CNNLayerNorm(n_feats)

    def forward(self, x):
        residual = x  # (batch, channel, feature, time)
        x = self.layer_norm1(x)
        x = F.gelu(x)
        x = self.dropout1(x)
        x = self.cnn1(x)
        x = self.layer_norm2(x)
        x = F.gelu(x)
        x = self.dropout2(x)
        x = self.cnn2(x)
        x += residual
        return x  # (batch, channel, feature, time)


class BidirectionalGRU(nn.Module):

    def __init__(self, rnn_dim, hidden_size, dropout, batch_first):
        super(BidirectionalGRU, self).__init__()

        self.BiGRU = nn.GRU(
            input_size=rnn_dim, hidden_size=hidden_size,
            num_layers=1, batch_first=batch_first, bidirectional=True)
        self.layer_norm = nn.LayerNorm(rnn_dim)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        x = self.layer_norm(x)
        x = F.gelu(x)
        x, _ = self.BiGRU(x)
        x = self.dropout(x)
        return x


class SpeechRecognitionModel(nn.Module):

    def __init__(self, n_cnn_layers, n_rnn_layers, rnn_dim, n_class, n_feats, stride=2, dropout=0.1):
        super(SpeechRecognitionModel, self).__init__()
        n_feats = n_feats//2
        self.cnn = nn.Conv2d(1, 32, 3, stride=stride, padding=3//2)  # cnn for extracting heirachal features

        # n residual cnn layers with filter size of 32
        self.rescnn_layers = nn.Sequential(*[
            ResidualCNN(32, 32, kernel=3, stride=1, dropout=dropout, n_feats=n_feats)
            for _ in range(n_cnn_layers)
        ])
        self.fully_connected = nn.Linear(n_feats*32, rnn_dim)
        self.birnn_layers = nn.Sequential(*[
            BidirectionalGRU(rnn_dim=rnn_dim if i == 0 else rnn_dim*2,
                             hidden_size=rnn_dim, dropout=dropout, batch_first=i == 0)
            for i in range(n_rnn_layers)
        ])
        self.classifier = nn.Sequential(
            nn.Linear(rnn_dim*2, rnn_dim),  # birnn returns rnn_dim*2
            nn.GELU(),
            nn.Dropout(dropout),
            nn.Linear(rnn_dim, n_class)
        )

    def forward(self, x):
        x = self.cnn(x)
        x = self.rescnn_layers(x)
        sizes = x.size()
        x = x.view(sizes[0], sizes[1] * sizes[2], sizes[3])  # (batch, feature, time)
        x = x.transpose(1, 2)  # (batch, time, feature)
        x = self.fully_connected(x)
        x = self.birnn_layers(x)
        x = self.classifier(x)
        return x


class IterMeter(object):
    """keeps track of total iterations"""

    def __init__(self):
        self.val = 0

    def step(self):
        self.val += 1

    def get(self):
        return self.val


def train(model, device, train_loader, criterion, optimizer, scheduler, epoch, iter_meter, log):
    model.train()
    for batch_idx, _data in enumerate(train_loader):
        spectrograms, labels, input_lengths, label_lengths = _data
        spectrograms, labels = spectrograms.to(device), labels.to(device)

        optimizer.zero_grad()

        output = model(spectrograms)  # (batch, time, n_class)
        output = F.log_softmax(output, dim=2)
        output = output.transpose(0, 1)  # (time, batch, n_class)

        loss = criterion(output, labels, input_lengths, label_lengths)
        loss.backward()

        log.append([loss.item(), scheduler.get_last_lr()[0]])

        optimizer.step()
        scheduler.step()
        iter_meter.step()


def test(model, device, test_loader, criterion, epoch, iter_meter):
    print('\nevaluating...')
    model.eval()
    test_loss = 0
    test_cer, test_wer = [], []
    with torch.no_grad():
        for i, _data in enumerate(test_loader):
            spectrograms, labels, input_lengths, label_lengths = _data
            spectrograms, labels = spectrograms.to(device), labels.to(device)

            output = model(spectrograms)  # (batch, time, n_class)
            output = F.log_softmax(output, dim=2)
            output = output.transpose(0, 1)  # (time, batch, n_class)

            loss = criterion(output, labels, input_lengths, label_lengths)
            test_loss += loss.item() / len(test_loader)

            decoded_preds, decoded_targets = GreedyDecoder(output.transpose(0, 1), labels, label_lengths)
            for j in range(len(decoded_preds)):
                test_cer.append(cer(decoded_targets[j], decoded_preds[j]))
                test_wer.append(wer(decoded_targets[j], decoded_preds[j]))

    avg_cer = sum(test_cer)/len(test_cer)
    avg_wer = sum(test_wer)/len(test_wer)
    print('Test set: Average loss: {:.4f}, Average CER: {:4f} Average WER: {:.4f}\n'.format(test_loss, avg_cer, avg_wer))
    return test_loss, avg_cer, avg_wer, decoded_preds


# ---- the pieces
show("text_to_int", text_transform.text_to_int("the cat"))
show("int_to_text:" + text_transform.int_to_text([21, 9, 6, 1, 4]).replace(" ", "_"), 1)
show("levenshtein", [wer("the cat sat", "the sat"), cer("the cat", "th cat"), wer("a b", "a b")])
batch = data_processing(train_dataset[:3], 'valid')
show("spectrogram_shape", list(batch[0].shape))
show("labels", batch[1])
show("labels_float", float(batch[1].dtype == torch.float32))
show("lengths", [batch[2], batch[3]])

hparams = {
    "n_cnn_layers": 2,
    "n_rnn_layers": 2,
    "rnn_dim": 24,
    "n_class": 29,
    "n_feats": n_feats,
    "stride": 2,
    "dropout": 0.0,  # (0.1 in the blog; dropout masks differ between the libraries)
    "learning_rate": 2e-3,
    "batch_size": 6,
    "epochs": 3
}
device = torch.device("cpu")
train_loader = [data_processing(train_dataset[i:i + hparams['batch_size']], 'train')
                for i in range(0, len(train_dataset), hparams['batch_size'])]
test_loader = [data_processing(test_dataset[i:i + 3], 'valid') for i in (0, 3)]

model = SpeechRecognitionModel(
    hparams['n_cnn_layers'], hparams['n_rnn_layers'], hparams['rnn_dim'],
    hparams['n_class'], hparams['n_feats'], hparams['stride'], hparams['dropout']
).to(device)
numpy_init(torch, model, seed=1)
print(model)
print('Num Model Parameters', sum([param.nelement() for param in model.parameters()]))
show("num_parameters", sum([param.nelement() for param in model.parameters()]))

optimizer = optim.AdamW(model.parameters(), hparams['learning_rate'])
criterion = nn.CTCLoss(blank=28).to(device)
scheduler = optim.lr_scheduler.OneCycleLR(optimizer, max_lr=hparams['learning_rate'],
                                          steps_per_epoch=int(len(train_loader)),
                                          epochs=hparams['epochs'],
                                          anneal_strategy='linear')

spectrograms, labels, input_lengths, label_lengths = train_loader[0]
out = F.log_softmax(model(spectrograms), dim=2).transpose(0, 1)
show("output_shape", list(out.shape))
first = criterion(out, labels, input_lengths, label_lengths)
first.backward()
show("first_loss", first)
show("grad_cnn", model.cnn.weight.grad[0, 0, 0])
show("grad_birnn", model.birnn_layers[1].BiGRU.weight_hh_l0_reverse.grad[0, :6])
show("grad_classifier", model.classifier[3].bias.grad[:8])
model.zero_grad()

iter_meter = IterMeter()
log = []
results = []
for epoch in range(1, hparams['epochs'] + 1):
    train(model, device, train_loader, criterion, optimizer, scheduler, epoch, iter_meter, log)
    test_loss, avg_cer, avg_wer, preds = test(model, device, test_loader, criterion, epoch, iter_meter)
    results.append([test_loss, avg_cer, avg_wer])
show("train_log", log)
show("test_results", results)
show("iterations", iter_meter.get())
show("last_preds:" + "|".join(p.replace(" ", "_") for p in preds), len(preds))

# ---- the loss itself: reductions, and an alignment that cannot fit
logp = F.log_softmax(torch.from_numpy(rng.normal(size=(6, 2, 5)).astype(np.float32)), 2)
logp.requires_grad_()
targets = torch.tensor([[1, 2, 2], [3, 1, 0]])
for reduction in ("mean", "sum", "none"):
    loss = nn.CTCLoss(blank=0, reduction=reduction)(logp, targets, [6, 5], [3, 2])
    show(f"ctc_{reduction}", loss)
impossible = nn.CTCLoss(blank=0, reduction="none")(logp, targets, [2, 5], [3, 2])
show("ctc_impossible", impossible)
loss = nn.CTCLoss(blank=0, zero_infinity=True)(logp, targets, [2, 5], [3, 2])
loss.backward()
show("ctc_zero_infinity", loss)
show("ctc_zero_infinity_grad", logp.grad[:, 1, :].reshape(-1))
show("ctc_zero_infinity_dead_grad", logp.grad[:, 0, :].abs().sum())
