"""Sebastian Raschka, "Build a Large Language Model (From Scratch)", chapter 6 "Fine-tuning for
classification", on generated spam/ham messages and a character-level GPT: a SpamDataset that
encodes, truncates and pads with the end-of-text id (``torch.tensor(..., dtype=torch.long)``),
DataLoaders with ``drop_last``; the "pretrained" model frozen by ``param.requires_grad =
False``, its ``out_head`` replaced by a 2-class ``torch.nn.Linear``, the last transformer block
and the final norm unfrozen; last-token logits ``model(x)[:, -1, :]`` for the loss and for
``calc_accuracy_loader`` (``(predicted_labels == target_batch).sum().item()``);
``train_classifier_simple`` with AdamW over all parameters (frozen ones have no grad) and
``examples_seen``; frozen weights unchanged; ``classify_review`` padding to the training length;
the fine-tuned state dict saved and loaded.

    python llm_classifier_finetune.py [torch|numbagrad]
"""
import os
import tempfile

import numpy as np

from _common import BACKEND, numpy_init, show
from previous_chapters import CharTokenizer, GPTModel

if BACKEND == "torch":
    import torch
    from torch.utils.data import Dataset, DataLoader
else:
    import numbagrad as torch
    from numbagrad.utils.data import Dataset, DataLoader

# --- 6.2 preparing the dataset (generated instead of the SMS Spam Collection)
rng = np.random.default_rng(42)
spam_words = ["win", "free", "cash", "prize", "call now", "txt", "urgent", "claim"]
ham_words = ["see you", "lunch", "home", "ok", "later", "mum", "thanks", "sorry"]


def make_message(words):
    k = rng.integers(2, 4)
    return " ".join(rng.choice(words, size=k, replace=False))


data = [(make_message(spam_words), 1) for _ in range(40)] + \
       [(make_message(ham_words), 0) for _ in range(40)]
order = rng.permutation(len(data))  # df.sample(frac=1, random_state=123)
data = [data[i] for i in order]
train_frac, validation_frac = 0.7, 0.1
train_end = int(len(data) * train_frac)
validation_end = train_end + int(len(data) * validation_frac)
train_df, validation_df, test_df = data[:train_end], data[train_end:validation_end], data[validation_end:]
show("split_sizes", [len(train_df), len(validation_df), len(test_df)])

tokenizer = CharTokenizer("abcdefghijklmnopqrstuvwxyz ?!'")
show("pad_token_id", tokenizer.encode("<|endoftext|>"))


class SpamDataset(Dataset):
    def __init__(self, rows, tokenizer, max_length=None, pad_token_id=50256):
        self.data = rows

        # Pre-tokenize texts
        self.encoded_texts = [
            tokenizer.encode(text) for text, _ in self.data
        ]

        if max_length is None:
            self.max_length = self._longest_encoded_length()
        else:
            self.max_length = max_length
            # Truncate sequences if they are longer than max_length
            self.encoded_texts = [
                encoded_text[:self.max_length]
                for encoded_text in self.encoded_texts
            ]

        # Pad sequences to the longest sequence
        self.encoded_texts = [
            encoded_text + [pad_token_id] * (self.max_length - len(encoded_text))
            for encoded_text in self.encoded_texts
        ]

    def __getitem__(self, index):
        encoded = self.encoded_texts[index]
        label = self.data[index][1]
        return (
            torch.tensor(encoded, dtype=torch.long),
            torch.tensor(label, dtype=torch.long)
        )

    def __len__(self):
        return len(self.data)

    def _longest_encoded_length(self):
        max_length = 0
        for encoded_text in self.encoded_texts:
            encoded_length = len(encoded_text)
            if encoded_length > max_length:
                max_length = encoded_length
        return max_length
        # Note: A more pythonic version to implement this method
        # is the following, which is also used in the next chapter:
        # return max(len(encoded_text) for encoded_text in self.encoded_texts)


pad_token_id = tokenizer.encode("<|endoftext|>")[0]
train_dataset = SpamDataset(train_df, max_length=None, tokenizer=tokenizer, pad_token_id=pad_token_id)
show("train_max_length", train_dataset.max_length)
val_dataset = SpamDataset(validation_df, max_length=train_dataset.max_length, tokenizer=tokenizer,
                          pad_token_id=pad_token_id)
test_dataset = SpamDataset(test_df, max_length=train_dataset.max_length, tokenizer=tokenizer,
                           pad_token_id=pad_token_id)

num_workers = 0
batch_size = 8

torch.manual_seed(123)

train_loader = DataLoader(
    dataset=train_dataset,
    batch_size=batch_size,
    shuffle=False,  # (the book shuffles; the libraries' generators differ)
    num_workers=num_workers,
    drop_last=True,
)

val_loader = DataLoader(
    dataset=val_dataset,
    batch_size=batch_size,
    num_workers=num_workers,
    drop_last=False,
)

test_loader = DataLoader(
    dataset=test_dataset,
    batch_size=batch_size,
    num_workers=num_workers,
    drop_last=False,
)

for input_batch, target_batch in train_loader:
    pass
show("input_batch.shape", list(input_batch.shape))
show("label_batch", target_batch)
show("loader_lengths", [len(train_loader), len(val_loader), len(test_loader)])

# --- 6.4 initializing a model with pretrained weights
BASE_CONFIG = {
    "vocab_size": tokenizer.n_vocab,  # Vocabulary size
    "context_length": 32,      # Context length
    "drop_rate": 0.0,          # Dropout rate
    "qkv_bias": True,          # Query-key-value bias
    "emb_dim": 32, "n_layers": 2, "n_heads": 4,
}
assert train_dataset.max_length <= BASE_CONFIG["context_length"], (
    f"Dataset length {train_dataset.max_length} exceeds model's context "
    f"length {BASE_CONFIG['context_length']}. Reinitialize data sets with "
    f"`max_length={BASE_CONFIG['context_length']}`"
)

model = GPTModel(BASE_CONFIG)
numpy_init(torch, model, seed=0)  # (stands in for load_weights_into_gpt)
with torch.no_grad():  # (and makes it look pretrained: unit norms, sharper attention)
    for name, param in model.named_parameters():
        if name.endswith("scale"):
            param.fill_(1.0)
        elif name.endswith("shift"):
            param.zero_()
        elif name.endswith(("W_query.weight", "W_key.weight")):
            param.mul_(4.0)
model.eval()

# --- 6.5 adding a classification head
for param in model.parameters():
    param.requires_grad = False

torch.manual_seed(123)

num_classes = 2
model.out_head = torch.nn.Linear(in_features=BASE_CONFIG["emb_dim"], out_features=num_classes)
numpy_init(torch, model.out_head, seed=1)

for param in model.trf_blocks[-1].parameters():
    param.requires_grad = True

for param in model.final_norm.parameters():
    param.requires_grad = True

show("trainable_params", sum(p.numel() for p in model.parameters() if p.requires_grad))
show("total_params", sum(p.numel() for p in model.parameters()))
show("trainable_names", [n.startswith("trf_blocks.1") or n.startswith("final_norm") or n.startswith("out_head")
                         for n, p in model.named_parameters() if p.requires_grad])

inputs = tokenizer.encode("do you have time")
inputs = torch.tensor(inputs).unsqueeze(0)
show("Inputs", inputs)
show("Inputs_dimensions", list(inputs.shape))  # shape: (batch_size, num_tokens)

with torch.no_grad():
    outputs = model(inputs)

show("Outputs", outputs[0, :3])
show("Outputs_dimensions", list(outputs.shape))  # shape: (batch_size, num_tokens, num_classes)
show("Last_output_token", outputs[:, -1, :])

# --- 6.6 calculating the classification loss and accuracy
probas = torch.softmax(outputs[:, -1, :], dim=-1)
label = torch.argmax(probas)
show("Class_label", label.item())
logits = outputs[:, -1, :]
label = torch.argmax(logits)
show("Class_label_logits", label.item())


def calc_accuracy_loader(data_loader, model, device, num_batches=None):
    model.eval()
    correct_predictions, num_examples = 0, 0

    if num_batches is None:
        num_batches = len(data_loader)
    else:
        num_batches = min(num_batches, len(data_loader))
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


device = torch.device("cpu")
model.to(device)  # no assignment model = model.to(device) necessary for nn.Module classes

torch.manual_seed(123)  # For reproducibility due to the shuffling in the training data loader

train_accuracy = calc_accuracy_loader(train_loader, model, device, num_batches=10)
val_accuracy = calc_accuracy_loader(val_loader, model, device, num_batches=10)
test_accuracy = calc_accuracy_loader(test_loader, model, device, num_batches=10)
show("initial_accuracies", [train_accuracy, val_accuracy, test_accuracy])


def calc_loss_batch(input_batch, target_batch, model, device):
    input_batch, target_batch = input_batch.to(device), target_batch.to(device)
    logits = model(input_batch)[:, -1, :]  # Logits of last output token
    loss = torch.nn.functional.cross_entropy(logits, target_batch)
    return loss


def calc_loss_loader(data_loader, model, device, num_batches=None):
    total_loss = 0.
    if len(data_loader) == 0:
        return float("nan")
    elif num_batches is None:
        num_batches = len(data_loader)
    else:
        # Reduce the number of batches to match the total number of batches in the data loader
        # if num_batches exceeds the number of batches in the data loader
        num_batches = min(num_batches, len(data_loader))
    for i, (input_batch, target_batch) in enumerate(data_loader):
        if i < num_batches:
            loss = calc_loss_batch(input_batch, target_batch, model, device)
            total_loss += loss.item()
        else:
            break
    return total_loss / num_batches


with torch.no_grad():  # Disable gradient tracking for efficiency because we are not training, yet
    train_loss = calc_loss_loader(train_loader, model, device, num_batches=5)
    val_loss = calc_loss_loader(val_loader, model, device, num_batches=5)
    test_loss = calc_loss_loader(test_loader, model, device, num_batches=5)
show("initial_losses", [train_loss, val_loss, test_loss])


# --- 6.7 fine-tuning the model on supervised data
def evaluate_model(model, train_loader, val_loader, device, eval_iter):
    model.eval()
    with torch.no_grad():
        train_loss = calc_loss_loader(train_loader, model, device, num_batches=eval_iter)
        val_loss = calc_loss_loader(val_loader, model, device, num_batches=eval_iter)
    model.train()
    return train_loss, val_loss


def train_classifier_simple(model, train_loader, val_loader, optimizer, device, num_epochs,
                            eval_freq, eval_iter):
    # Initialize lists to track losses and examples seen
    train_losses, val_losses, train_accs, val_accs = [], [], [], []
    examples_seen, global_step = 0, -1

    # Main training loop
    for epoch in range(num_epochs):
        model.train()  # Set model to training mode

        for input_batch, target_batch in train_loader:
            optimizer.zero_grad()  # Reset loss gradients from previous batch iteration
            loss = calc_loss_batch(input_batch, target_batch, model, device)
            loss.backward()  # Calculate loss gradients
            optimizer.step()  # Update model weights using loss gradients
            examples_seen += input_batch.shape[0]  # New: track examples instead of tokens
            global_step += 1

            # Optional evaluation step
            if global_step % eval_freq == 0:
                train_loss, val_loss = evaluate_model(
                    model, train_loader, val_loader, device, eval_iter)
                train_losses.append(train_loss)
                val_losses.append(val_loss)
                print(f"Ep {epoch+1} (Step {global_step:06d}): "
                      f"Train loss {train_loss:.3f}, Val loss {val_loss:.3f}")

        # Calculate accuracy after each epoch
        train_accuracy = calc_accuracy_loader(train_loader, model, device, num_batches=eval_iter)
        val_accuracy = calc_accuracy_loader(val_loader, model, device, num_batches=eval_iter)
        print(f"Training accuracy: {train_accuracy*100:.2f}% | ", end="")
        print(f"Validation accuracy: {val_accuracy*100:.2f}%")
        train_accs.append(train_accuracy)
        val_accs.append(val_accuracy)

    return train_losses, val_losses, train_accs, val_accs, examples_seen


frozen_before = model.tok_emb.weight.clone()
block0_before = model.trf_blocks[0].att.W_query.weight.clone()
block1_before = model.trf_blocks[1].att.W_query.weight.clone()

torch.manual_seed(123)
optimizer = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=0.1)

num_epochs = 3
train_losses, val_losses, train_accs, val_accs, examples_seen = train_classifier_simple(
    model, train_loader, val_loader, optimizer, device,
    num_epochs=num_epochs, eval_freq=3, eval_iter=5,
)
show("train_losses", train_losses)
show("val_losses", val_losses)
show("train_accs", train_accs)
show("val_accs", val_accs)
show("examples_seen", examples_seen)
show("frozen_unchanged", [torch.equal(frozen_before, model.tok_emb.weight),
                          torch.equal(block0_before, model.trf_blocks[0].att.W_query.weight)])
show("unfrozen_changed", float(not torch.equal(block1_before, model.trf_blocks[1].att.W_query.weight)))
show("frozen_grad_is_none", float(model.tok_emb.weight.grad is None))
show("optimizer_state_size", len(optimizer.state))
show("out_head_after", model.out_head.weight[:, :6])

train_accuracy = calc_accuracy_loader(train_loader, model, device)
val_accuracy = calc_accuracy_loader(val_loader, model, device)
test_accuracy = calc_accuracy_loader(test_loader, model, device)
show("final_accuracies", [train_accuracy, val_accuracy, test_accuracy])


# --- 6.8 using the LLM as a spam classifier
def classify_review(text, model, tokenizer, device, max_length=None, pad_token_id=50256):
    model.eval()

    # Prepare inputs to the model
    input_ids = tokenizer.encode(text)
    supported_context_length = model.pos_emb.weight.shape[0]
    # Note: In the book, this was originally written as pos_emb.weight.shape[1] by mistake
    # It didn't break the code but would have caused unnecessary truncation (to 768 instead of 1024)

    # Truncate sequences if they too long
    input_ids = input_ids[:min(max_length, supported_context_length)]
    assert max_length is not None, (
        "max_length must be specified. If you want to use the full model context, "
        "pass max_length=model.pos_emb.weight.shape[0]."
    )
    assert max_length <= supported_context_length, (
        f"max_length ({max_length}) exceeds model's supported context length ({supported_context_length})."
    )
    # Alternatively, a more robust version is the following one, which handles the max_length=None case better
    # max_len = min(max_length,supported_context_length) if max_length else supported_context_length
    # input_ids = input_ids[:max_len]

    # Pad sequences to the longest sequence
    input_ids += [pad_token_id] * (max_length - len(input_ids))
    input_tensor = torch.tensor(input_ids, device=device).unsqueeze(0)  # add batch dimension

    # Model inference
    with torch.no_grad():
        logits = model(input_tensor)[:, -1, :]  # Logits of the last output token
    predicted_label = torch.argmax(logits, dim=-1).item()

    # Return the classified result
    return "spam" if predicted_label == 1 else "not spam"


text_1 = "win cash prize urgent"
text_2 = "see you home later"
results = [classify_review(t, model, tokenizer, device, max_length=train_dataset.max_length,
                           pad_token_id=pad_token_id) for t in (text_1, text_2)]
print(results)
show("classified_spam", [r == "spam" for r in results])

tmp_dir = tempfile.TemporaryDirectory()  # (removed when the program ends)
tmp = tmp_dir.name
torch.save(model.state_dict(), os.path.join(tmp, "review_classifier.pth"))
model_state_dict = torch.load(os.path.join(tmp, "review_classifier.pth"), map_location=device, weights_only=True)
model2 = GPTModel(BASE_CONFIG)
model2.out_head = torch.nn.Linear(in_features=BASE_CONFIG["emb_dim"], out_features=num_classes)
model2.load_state_dict(model_state_dict)
model2.eval()
show("reloaded_accuracy", calc_accuracy_loader(test_loader, model2, device))
show("reloaded_requires_grad", float(model2.tok_emb.weight.requires_grad))

tmp_dir.cleanup()
