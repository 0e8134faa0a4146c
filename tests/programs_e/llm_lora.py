"""Sebastian Raschka, "Build a Large Language Model (From Scratch)", appendix E "Parameter-efficient
fine-tuning with LoRA": a LoRALayer whose ``A`` is ``torch.nn.init.kaiming_uniform_(a=math.sqrt(5))``
on an empty parameter (the bound checked, then the values replaced by NumPy's) and ``B`` zeros;
LinearWithLoRA wrapping a Linear; ``replace_linear_with_lora`` walking ``named_children()`` and
``setattr``; the trainable-parameter counts before and after freezing; the model's repr; a
classification fine-tune of the GPT's last-token logits (AdamW, ``calc_accuracy_loader``) in which
only A and B (and the new head) learn; the merged variant ``F.linear(x, W + alpha * (A @ B).T, b)``
equal to the unmerged one; the state dict keys of the wrapped model.

    python llm_lora.py [torch|numbagrad]
"""
import math

import numpy as np

from _common import BACKEND, numpy_init, show
from previous_chapters import CharTokenizer, GPTModel

if BACKEND == "torch":
    import torch
    import torch.nn.functional as F
    from torch.utils.data import Dataset, DataLoader
else:
    import numbagrad as torch
    import numbagrad.nn.functional as F
    from numbagrad.utils.data import Dataset, DataLoader

rng = np.random.default_rng(5)


# --- E.3 parameter-efficient fine-tuning with LoRA
class LoRALayer(torch.nn.Module):
    def __init__(self, in_dim, out_dim, rank, alpha):
        super().__init__()
        self.A = torch.nn.Parameter(torch.empty(in_dim, rank))
        torch.nn.init.kaiming_uniform_(self.A, a=math.sqrt(5))  # similar to standard weight initialization
        self.B = torch.nn.Parameter(torch.zeros(rank, out_dim))
        self.alpha = alpha

    def forward(self, x):
        x = self.alpha * (x @ self.A @ self.B)
        return x


class LinearWithLoRA(torch.nn.Module):
    def __init__(self, linear, rank, alpha):
        super().__init__()
        self.linear = linear
        self.lora = LoRALayer(
            linear.in_features, linear.out_features, rank, alpha
        )

    def forward(self, x):
        return self.linear(x) + self.lora(x)


# This LoRA code is equivalent to LinearWithLoRA
class LinearWithLoRAMerged(torch.nn.Module):
    def __init__(self, linear, rank, alpha):
        super().__init__()
        self.linear = linear
        self.lora = LoRALayer(
            linear.in_features, linear.out_features, rank, alpha
        )

    def forward(self, x):
        lora = self.lora.A @ self.lora.B  # Combine LoRA matrices
        # Then combine LoRA with orig. weights
        combined_weight = self.linear.weight + self.lora.alpha * lora.T
        return F.linear(x, combined_weight, self.linear.bias)


def replace_linear_with_lora(model, rank, alpha, cls=LinearWithLoRA):
    for name, module in model.named_children():
        if isinstance(module, torch.nn.Linear):
            # Replace the Linear layer with LinearWithLoRA
            setattr(model, name, cls(module, rank, alpha))
        else:
            # Recursively apply the same function to child modules
            replace_linear_with_lora(module, rank, alpha, cls)


# the initialisation of A: kaiming_uniform_ with a=sqrt(5) on an (in_dim, rank) tensor takes
# its fan-in from the rank
torch.manual_seed(123)
layer = LoRALayer(64, 32, rank=16, alpha=16)
bound = 1 / math.sqrt(16)
show("A_within_bound", float(layer.A.abs().max() <= bound))
show("A_spread", float(layer.A.abs().max() > 0.8 * bound))
show("A_mean_small", float(abs(layer.A.mean().item()) < 0.05))
show("B_zero", float(layer.B.abs().sum() == 0))
show("A_requires_grad", float(layer.A.requires_grad))


def numpy_lora_init(model):
    """Replaces the libraries' different kaiming draws by NumPy's."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("lora.A"):
                r = p.shape[1]
                p.copy_(torch.from_numpy(rng.uniform(-1 / math.sqrt(r), 1 / math.sqrt(r),
                                                     tuple(p.shape)).astype(np.float32)))


# a LoRA-wrapped Linear starts as the Linear itself
lin = torch.nn.Linear(10, 6)
numpy_init(torch, lin, seed=1)
x = torch.from_numpy(rng.normal(size=(4, 10)).astype(np.float32))
wrapped = LinearWithLoRA(lin, rank=2, alpha=4)
numpy_lora_init(wrapped)
show("wrapped_equals_linear", float(torch.equal(wrapped(x), lin(x))))
with torch.no_grad():
    wrapped.lora.B.copy_(torch.from_numpy(rng.normal(size=(2, 6)).astype(np.float32)))
merged = LinearWithLoRAMerged(lin, rank=2, alpha=4)
merged.lora.load_state_dict(wrapped.lora.state_dict())
show("wrapped_out", wrapped(x))
show("merged_close", float(torch.allclose(wrapped(x), merged(x), atol=1e-5)))
wrapped(x).square().sum().backward()
show("grad_A", wrapped.lora.A.grad)
show("grad_B", wrapped.lora.B.grad)
show("grad_linear_w", wrapped.linear.weight.grad.sum(dim=0))

# --- E.2 the data: generated spam/ham messages, padded
spam_words = ["win", "free", "cash", "prize", "call now", "txt", "urgent", "claim"]
ham_words = ["see you", "lunch", "home", "ok", "later", "mum", "thanks", "sorry"]


def make_message(words):
    return " ".join(rng.choice(words, size=rng.integers(2, 4), replace=False))


data = [(make_message(spam_words), 1) for _ in range(24)] + [(make_message(ham_words), 0) for _ in range(24)]
data = [data[i] for i in rng.permutation(len(data))]
train_df, val_df = data[:40], data[40:]
tokenizer = CharTokenizer("abcdefghijklmnopqrstuvwxyz ?!'")
pad_token_id = tokenizer.encode("<|endoftext|>")[0]


class SpamDataset(Dataset):
    def __init__(self, rows, tokenizer, max_length=None, pad_token_id=50256):
        self.data = rows
        self.encoded_texts = [tokenizer.encode(text) for text, _ in rows]
        if max_length is None:
            self.max_length = max(len(encoded_text) for encoded_text in self.encoded_texts)
        else:
            self.max_length = max_length
            self.encoded_texts = [encoded_text[:self.max_length] for encoded_text in self.encoded_texts]
        self.encoded_texts = [
            encoded_text + [pad_token_id] * (self.max_length - len(encoded_text))
            for encoded_text in self.encoded_texts
        ]

    def __getitem__(self, index):
        return (torch.tensor(self.encoded_texts[index], dtype=torch.long),
                torch.tensor(self.data[index][1], dtype=torch.long))

    def __len__(self):
        return len(self.data)


train_dataset = SpamDataset(train_df, tokenizer, pad_token_id=pad_token_id)
val_dataset = SpamDataset(val_df, tokenizer, max_length=train_dataset.max_length, pad_token_id=pad_token_id)
train_loader = DataLoader(train_dataset, batch_size=8, shuffle=False, drop_last=True)
val_loader = DataLoader(val_dataset, batch_size=8, shuffle=False, drop_last=False)

BASE_CONFIG = {"vocab_size": tokenizer.n_vocab, "context_length": 24, "drop_rate": 0.0,
               "qkv_bias": True, "emb_dim": 32, "n_layers": 2, "n_heads": 4}
model = GPTModel(BASE_CONFIG)
numpy_init(torch, model, seed=0)  # (stands in for the pretrained GPT-2 weights)
with torch.no_grad():
    for name, param in model.named_parameters():
        if name.endswith("scale"):
            param.fill_(1.0)
        elif name.endswith("shift"):
            param.zero_()
        elif name.endswith(("W_query.weight", "W_key.weight")):
            param.mul_(4.0)

torch.manual_seed(123)
num_classes = 2
model.out_head = torch.nn.Linear(in_features=BASE_CONFIG["emb_dim"], out_features=num_classes)
numpy_init(torch, model.out_head, seed=2)
device = torch.device("cpu")
model.to(device)  # no assignment model = model.to(device) necessary for nn.Module classes


def calc_accuracy_loader(data_loader, model, device, num_batches=None):
    model.eval()
    correct_predictions, num_examples = 0, 0
    num_batches = len(data_loader) if num_batches is None else min(num_batches, len(data_loader))
    for i, (input_batch, target_batch) in enumerate(data_loader):
        if i < num_batches:
            input_batch, target_batch = input_batch.to(device), target_batch.to(device)
            with torch.no_grad():
                logits = model(input_batch)[:, -1, :]  # Logits of last output token
            predicted_labels = torch.argmax(logits, dim=-1)
            num_examples += predicted_labels.shape[0]
            correct_predictions += (predicted_labels == target_batch).sum().item()
        else:
            break
    return correct_predictions / num_examples


def calc_loss_batch(input_batch, target_batch, model, device):
    input_batch, target_batch = input_batch.to(device), target_batch.to(device)
    logits = model(input_batch)[:, -1, :]  # Logits of last output token
    loss = torch.nn.functional.cross_entropy(logits, target_batch)
    return loss


def calc_loss_loader(data_loader, model, device, num_batches=None):
    total_loss = 0.
    num_batches = len(data_loader) if num_batches is None else min(num_batches, len(data_loader))
    for i, (input_batch, target_batch) in enumerate(data_loader):
        if i < num_batches:
            total_loss += calc_loss_batch(input_batch, target_batch, model, device).item()
        else:
            break
    return total_loss / num_batches


torch.manual_seed(123)
train_accuracy = calc_accuracy_loader(train_loader, model, device, num_batches=10)
val_accuracy = calc_accuracy_loader(val_loader, model, device, num_batches=10)
show("accuracies_before_lora", [train_accuracy, val_accuracy])

total_params = sum(p.numel() for p in model.parameters() if p.requires_grad)
show("trainable_before", total_params)

for param in model.parameters():
    param.requires_grad = False

total_params = sum(p.numel() for p in model.parameters() if p.requires_grad)
show("trainable_frozen", total_params)

replace_linear_with_lora(model, rank=4, alpha=8)
numpy_lora_init(model)

total_params = sum(p.numel() for p in model.parameters() if p.requires_grad)
show("trainable_lora", total_params)
show("lora_layers", sum(isinstance(m, LinearWithLoRA) for m in model.modules()))
print(model)
show("repr_lengths", [len(repr(model.trf_blocks[0].att.W_query)), len(repr(model.out_head)),
                      len(repr(model.trf_blocks[0].ff)), len(repr(model).splitlines())])
show("state_dict_keys", len(model.state_dict()))
show("state_dict_has_lora", sum(k.endswith(("lora.A", "lora.B")) for k in model.state_dict()))

torch.manual_seed(123)
with torch.no_grad():
    show("loss_same_after_wrap", [calc_loss_loader(train_loader, model, device, num_batches=2)])
train_accuracy = calc_accuracy_loader(train_loader, model, device, num_batches=10)
val_accuracy = calc_accuracy_loader(val_loader, model, device, num_batches=10)
show("accuracies_after_wrap", [train_accuracy, val_accuracy])


def train_classifier_simple(model, train_loader, val_loader, optimizer, device, num_epochs,
                            eval_freq, eval_iter):
    train_losses, val_losses, train_accs, val_accs = [], [], [], []
    examples_seen, global_step = 0, -1
    for epoch in range(num_epochs):
        model.train()  # Set model to training mode
        for input_batch, target_batch in train_loader:
            optimizer.zero_grad()  # Reset loss gradients from previous batch iteration
            loss = calc_loss_batch(input_batch, target_batch, model, device)
            loss.backward()  # Calculate loss gradients
            optimizer.step()  # Update model weights using loss gradients
            examples_seen += input_batch.shape[0]  # New: track examples instead of tokens
            global_step += 1
            if global_step % eval_freq == 0:
                model.eval()
                with torch.no_grad():
                    train_loss = calc_loss_loader(train_loader, model, device, num_batches=eval_iter)
                    val_loss = calc_loss_loader(val_loader, model, device, num_batches=eval_iter)
                model.train()
                train_losses.append(train_loss)
                val_losses.append(val_loss)
        train_accs.append(calc_accuracy_loader(train_loader, model, device, num_batches=eval_iter))
        val_accs.append(calc_accuracy_loader(val_loader, model, device, num_batches=eval_iter))
    return train_losses, val_losses, train_accs, val_accs, examples_seen


head_before = model.out_head.linear.weight.clone()
torch.manual_seed(123)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.1)
train_losses, val_losses, train_accs, val_accs, examples_seen = train_classifier_simple(
    model, train_loader, val_loader, optimizer, device,
    num_epochs=3, eval_freq=2, eval_iter=2,
)
show("train_losses", train_losses)
show("val_losses", val_losses)
show("train_accs", train_accs)
show("val_accs", val_accs)
show("examples_seen", examples_seen)
show("base_head_unchanged", float(torch.equal(head_before, model.out_head.linear.weight)))
show("lora_B_head", model.out_head.lora.B)
show("lora_B_norms", [m.lora.B.norm() for m in model.modules() if isinstance(m, LinearWithLoRA)][:6])

# the merged form computes the same logits
merged_model = GPTModel(BASE_CONFIG)
merged_model.out_head = torch.nn.Linear(BASE_CONFIG["emb_dim"], num_classes)
replace_linear_with_lora(merged_model, rank=4, alpha=8, cls=LinearWithLoRAMerged)
merged_model.load_state_dict(model.state_dict())
merged_model.eval()
model.eval()
xb, _ = next(iter(val_loader))
with torch.no_grad():
    show("merged_logits", merged_model(xb)[:, -1, :])
    show("merged_equals_unmerged", float(torch.allclose(merged_model(xb), model(xb), atol=1e-4)))
show("final_val_accuracy", calc_accuracy_loader(val_loader, merged_model, device))
