"""Sebastian Raschka, "Build a Large Language Model (From Scratch)", chapter 7 "Fine-tuning to
follow instructions", on a handful of made-up instruction entries and a character-level GPT: the
Alpaca-style ``format_input``; an InstructionDataset of encoded prompts+responses; the three
collate drafts, the last one (``custom_collate_fn``) padding with the end-of-text id, shifting
inputs and targets, replacing all but the first padding target by ``ignore_index=-100`` through
``torch.nonzero(mask).squeeze()`` and ``indices.numel() > 1``, truncating to
``allowed_max_length``, ``torch.stack(...).to(device)``, bound with ``functools.partial`` and
passed as ``collate_fn``; ``F.cross_entropy`` ignoring -100 targets (equal to the loss without
them); the instruction-masking exercise; training with ``train_model_simple``, generation that
stops at the end-of-text id, the response cut out of the generated text, and the saved state
dict.

    python llm_instruction_finetune.py [torch|numbagrad]
"""
import os
import tempfile
from functools import partial


from _common import BACKEND, numpy_init, show
from previous_chapters import CharTokenizer, GPTModel, text_to_token_ids, token_ids_to_text

if BACKEND == "torch":
    import torch
    from torch.utils.data import Dataset, DataLoader
else:
    import numbagrad as torch
    from numbagrad.utils.data import Dataset, DataLoader

# --- 7.2 preparing a dataset for supervised instruction fine-tuning
data = [
    {"instruction": "Convert to uppercase.", "input": "cat", "output": "CAT"},
    {"instruction": "Convert to uppercase.", "input": "dog", "output": "DOG"},
    {"instruction": "Reverse the word.", "input": "star", "output": "rats"},
    {"instruction": "Reverse the word.", "input": "pool", "output": "loop"},
    {"instruction": "Give the plural.", "input": "box", "output": "boxes"},
    {"instruction": "Give the plural.", "input": "cat", "output": "cats"},
    {"instruction": "Name a color.", "input": "", "output": "red"},
    {"instruction": "Name a number.", "input": "", "output": "seven"},
    {"instruction": "Convert to uppercase.", "input": "sun", "output": "SUN"},
    {"instruction": "Reverse the word.", "input": "live", "output": "evil"},
    {"instruction": "Give the plural.", "input": "fox", "output": "foxes"},
    {"instruction": "Name an animal.", "input": "", "output": "horse"},
    {"instruction": "Convert to uppercase.", "input": "map", "output": "MAP"},
    {"instruction": "Reverse the word.", "input": "stop", "output": "pots"},
    {"instruction": "Give the plural.", "input": "dog", "output": "dogs"},
    {"instruction": "Name a color.", "input": "", "output": "blue"},
    {"instruction": "Convert to uppercase.", "input": "hat", "output": "HAT"},
    {"instruction": "Reverse the word.", "input": "time", "output": "emit"},
    {"instruction": "Give the plural.", "input": "bus", "output": "buses"},
    {"instruction": "Name a fruit.", "input": "", "output": "apple"},
]
show("Number_of_entries", len(data))


def format_input(entry):
    instruction_text = (
        f"Below is an instruction that describes a task. "
        f"Write a response that appropriately completes the request."
        f"\n\n### Instruction:\n{entry['instruction']}"
    )

    input_text = f"\n\n### Input:\n{entry['input']}" if entry["input"] else ""

    return instruction_text + input_text


model_input = format_input(data[2])
desired_response = f"\n\n### Response:\n{data[2]['output']}"
print(model_input + desired_response)
show("formatted_lengths", [len(format_input(data[2])), len(format_input(data[6]))])

train_portion = int(len(data) * 0.8)  # 80% for training
test_portion = int(len(data) * 0.1)    # 10% for testing
val_portion = len(data) - train_portion - test_portion  # Remaining 10% for validation

train_data = data[:train_portion]
test_data = data[train_portion:train_portion + test_portion]
val_data = data[train_portion + test_portion:]
show("split_lengths", [len(train_data), len(val_data), len(test_data)])

tokenizer = CharTokenizer("".join(format_input(e) + f"\n\n### Response:\n{e['output']}" for e in data))
pad_token_id = tokenizer.encode("<|endoftext|>", allowed_special={"<|endoftext|>"})[0]
show("vocab_and_pad", [tokenizer.n_vocab, pad_token_id])


# --- 7.3 organizing data into training batches
class InstructionDataset(Dataset):
    def __init__(self, data, tokenizer):
        self.data = data

        # Pre-tokenize texts
        self.encoded_texts = []
        for entry in data:
            instruction_plus_input = format_input(entry)
            response_text = f"\n\n### Response:\n{entry['output']}"
            full_text = instruction_plus_input + response_text
            self.encoded_texts.append(
                tokenizer.encode(full_text)
            )

    def __getitem__(self, index):
        return self.encoded_texts[index]

    def __len__(self):
        return len(self.data)


def custom_collate_draft_1(batch, pad_token_id=50256, device="cpu"):
    # Find the longest sequence in the batch
    # and increase the max length by +1, which will add one extra
    # padding token below
    batch_max_length = max(len(item) + 1 for item in batch)

    # Pad and prepare inputs
    inputs_lst = []

    for item in batch:
        new_item = item.copy()
        # Add an <|endoftext|> token
        new_item += [pad_token_id]
        # Pad sequences to batch_max_length
        padded = (
            new_item + [pad_token_id] *
            (batch_max_length - len(new_item))
        )
        # Via padded[:-1], we remove the extra padded token
        # that has been added via the +1 setting in batch_max_length
        # (the extra padding token will be relevant in later codes)
        inputs = torch.tensor(padded[:-1])
        inputs_lst.append(inputs)

    # Convert list of inputs to tensor and transfer to target device
    inputs_tensor = torch.stack(inputs_lst).to(device)
    return inputs_tensor


inputs_1 = [0, 1, 2, 3, 4]
inputs_2 = [5, 6]
inputs_3 = [7, 8, 9]

batch = (
    inputs_1,
    inputs_2,
    inputs_3
)

show("collate_draft_1", custom_collate_draft_1(batch))


def custom_collate_draft_2(batch, pad_token_id=50256, device="cpu"):
    # Find the longest sequence in the batch
    batch_max_length = max(len(item) + 1 for item in batch)

    # Pad and prepare inputs
    inputs_lst, targets_lst = [], []

    for item in batch:
        new_item = item.copy()
        # Add an <|endoftext|> token
        new_item += [pad_token_id]
        # Pad sequences to max_length
        padded = (
            new_item + [pad_token_id] *
            (batch_max_length - len(new_item))
        )
        inputs = torch.tensor(padded[:-1])  # Truncate the last token for inputs
        targets = torch.tensor(padded[1:])  # Shift +1 to the right for targets
        inputs_lst.append(inputs)
        targets_lst.append(targets)

    # Convert list of inputs to tensor and transfer to target device
    inputs_tensor = torch.stack(inputs_lst).to(device)
    targets_tensor = torch.stack(targets_lst).to(device)
    return inputs_tensor, targets_tensor


inputs, targets = custom_collate_draft_2(batch)
show("draft_2_inputs", inputs)
show("draft_2_targets", targets)


def custom_collate_fn(
    batch,
    pad_token_id=50256,
    ignore_index=-100,
    allowed_max_length=None,
    device="cpu"
):
    # Find the longest sequence in the batch
    batch_max_length = max(len(item) + 1 for item in batch)

    # Pad and prepare inputs and targets
    inputs_lst, targets_lst = [], []

    for item in batch:
        new_item = item.copy()
        # Add an <|endoftext|> token
        new_item += [pad_token_id]
        # Pad sequences to max_length
        padded = (
            new_item + [pad_token_id] *
            (batch_max_length - len(new_item))
        )
        inputs = torch.tensor(padded[:-1])  # Truncate the last token for inputs
        targets = torch.tensor(padded[1:])  # Shift +1 to the right for targets

        # New: Replace all but the first padding tokens in targets by ignore_index
        mask = targets == pad_token_id
        indices = torch.nonzero(mask).squeeze()
        if indices.numel() > 1:
            targets[indices[1:]] = ignore_index

        # New: Optionally truncate to maximum sequence length
        if allowed_max_length is not None:
            inputs = inputs[:allowed_max_length]
            targets = targets[:allowed_max_length]

        inputs_lst.append(inputs)
        targets_lst.append(targets)

    # Convert list of inputs and targets to tensors and transfer to target device
    inputs_tensor = torch.stack(inputs_lst).to(device)
    targets_tensor = torch.stack(targets_lst).to(device)

    return inputs_tensor, targets_tensor


inputs, targets = custom_collate_fn(batch)
show("collate_inputs", inputs)
show("collate_targets", targets)
inputs, targets = custom_collate_fn(batch, allowed_max_length=3)
show("collate_truncated_targets", targets)

logits_1 = torch.tensor(
    [[-1.0, 1.0],  # 1st training example
     [-0.5, 1.5]]  # 2nd training example
)
targets_1 = torch.tensor([0, 1])

loss_1 = torch.nn.functional.cross_entropy(logits_1, targets_1)
show("loss_1", loss_1)

logits_2 = torch.tensor(
    [[-1.0, 1.0],
     [-0.5, 1.5],
     [-0.5, 1.5]]  # New 3rd training example
)
targets_2 = torch.tensor([0, 1, 1])

loss_2 = torch.nn.functional.cross_entropy(logits_2, targets_2)
show("loss_2", loss_2)

targets_3 = torch.tensor([0, 1, -100])

loss_3 = torch.nn.functional.cross_entropy(logits_2, targets_3)
show("loss_3", loss_3)
show("loss_1_equals_loss_3", float(loss_1 == loss_3))
logits_g = logits_2.clone().requires_grad_(True)
torch.nn.functional.cross_entropy(logits_g, targets_3).backward()
show("ignored_row_grad", logits_g.grad)
show("loss_3_sum", torch.nn.functional.cross_entropy(logits_2, targets_3, reduction="sum"))
show("loss_3_none", torch.nn.functional.cross_entropy(logits_2, targets_3, reduction="none"))

# --- 7.4 creating data loaders for an instruction dataset
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
device = torch.device("cpu")  # (the comparison runs on the CPU)

customized_collate_fn = partial(
    custom_collate_fn,
    pad_token_id=pad_token_id,
    device=device,
    allowed_max_length=256
)

num_workers = 0
batch_size = 4

torch.manual_seed(123)

train_dataset = InstructionDataset(train_data, tokenizer)
train_loader = DataLoader(
    train_dataset,
    batch_size=batch_size,
    collate_fn=customized_collate_fn,
    shuffle=False,  # (the book shuffles; the libraries' generators differ)
    drop_last=True,
    num_workers=num_workers
)

val_dataset = InstructionDataset(val_data, tokenizer)
val_loader = DataLoader(
    val_dataset,
    batch_size=batch_size,
    collate_fn=customized_collate_fn,
    shuffle=False,
    drop_last=False,
    num_workers=num_workers
)

shapes = []
for inputs, targets in train_loader:
    shapes.append(list(inputs.shape) + list(targets.shape))
show("train_loader_shapes", shapes)
show("ignored_targets_per_batch", [int((t == -100).sum()) for _, t in train_loader])
show("first_targets_tail", targets[0][-8:])

# --- 7.5 loading a "pretrained" LLM
BASE_CONFIG = {
    "vocab_size": tokenizer.n_vocab,  # Vocabulary size
    "context_length": 256,  # Context length
    "drop_rate": 0.0,        # Dropout rate
    "qkv_bias": True,        # Query-key-value bias
    "emb_dim": 32, "n_layers": 2, "n_heads": 4,
}
model = GPTModel(BASE_CONFIG)
numpy_init(torch, model, seed=0)  # (stands in for load_weights_into_gpt)
model.eval()

input_text = format_input(val_data[0])
print(input_text)


def generate(model, idx, max_new_tokens, context_size, temperature=0.0, top_k=None, eos_id=None):
    for _ in range(max_new_tokens):
        idx_cond = idx[:, -context_size:]
        with torch.no_grad():
            logits = model(idx_cond)
        logits = logits[:, -1, :]
        if top_k is not None:
            top_logits, _ = torch.topk(logits, top_k)
            min_val = top_logits[:, -1]
            logits = torch.where(logits < min_val, torch.tensor(float("-inf")).to(logits.device), logits)
        if temperature > 0.0:
            logits = logits / temperature
            probs = torch.softmax(logits, dim=-1)  # (batch_size, context_len)
            idx_next = torch.multinomial(probs, num_samples=1)  # (batch_size, 1)
        else:
            idx_next = torch.argmax(logits, dim=-1, keepdim=True)  # (batch_size, 1)
        if idx_next == eos_id:  # Stop generating early if end-of-sequence token is encountered and eos_id is specified
            break
        idx = torch.cat((idx, idx_next), dim=1)  # (batch_size, num_tokens+1)
    return idx


token_ids = generate(
    model=model,
    idx=text_to_token_ids(input_text, tokenizer),
    max_new_tokens=12,
    context_size=BASE_CONFIG["context_length"],
    eos_id=pad_token_id,
)
generated_text = token_ids_to_text(token_ids, tokenizer)
response_text = generated_text[len(input_text):].strip()
show("untrained_response_ids", token_ids[0, len(input_text):])


# --- 7.6 fine-tuning the LLM on instruction data
def calc_loss_batch(input_batch, target_batch, model, device):
    input_batch, target_batch = input_batch.to(device), target_batch.to(device)
    logits = model(input_batch)
    loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), target_batch.flatten())
    return loss


def calc_loss_loader(data_loader, model, device, num_batches=None):
    total_loss = 0.
    if len(data_loader) == 0:
        return float("nan")
    elif num_batches is None:
        num_batches = len(data_loader)
    else:
        num_batches = min(num_batches, len(data_loader))
    for i, (input_batch, target_batch) in enumerate(data_loader):
        if i < num_batches:
            loss = calc_loss_batch(input_batch, target_batch, model, device)
            total_loss += loss.item()
        else:
            break
    return total_loss / num_batches


def evaluate_model(model, train_loader, val_loader, device, eval_iter):
    model.eval()
    with torch.no_grad():
        train_loss = calc_loss_loader(train_loader, model, device, num_batches=eval_iter)
        val_loss = calc_loss_loader(val_loader, model, device, num_batches=eval_iter)
    model.train()
    return train_loss, val_loss


def train_model_simple(model, train_loader, val_loader, optimizer, device, num_epochs,
                       eval_freq, eval_iter, start_context, tokenizer):
    train_losses, val_losses, track_tokens_seen = [], [], []
    tokens_seen, global_step = 0, -1
    for epoch in range(num_epochs):
        model.train()  # Set model to training mode
        for input_batch, target_batch in train_loader:
            optimizer.zero_grad()  # Reset loss gradients from previous batch iteration
            loss = calc_loss_batch(input_batch, target_batch, model, device)
            loss.backward()  # Calculate loss gradients
            optimizer.step()  # Update model weights using loss gradients
            tokens_seen += input_batch.numel()
            global_step += 1
            if global_step % eval_freq == 0:
                train_loss, val_loss = evaluate_model(
                    model, train_loader, val_loader, device, eval_iter)
                train_losses.append(train_loss)
                val_losses.append(val_loss)
                track_tokens_seen.append(tokens_seen)
                print(f"Ep {epoch+1} (Step {global_step:06d}): "
                      f"Train loss {train_loss:.3f}, Val loss {val_loss:.3f}")
    return train_losses, val_losses, track_tokens_seen


model.to(device)

torch.manual_seed(123)

with torch.no_grad():
    train_loss = calc_loss_loader(train_loader, model, device, num_batches=5)
    val_loss = calc_loss_loader(val_loader, model, device, num_batches=5)
show("initial_losses", [train_loss, val_loss])

torch.manual_seed(123)
optimizer = torch.optim.AdamW(model.parameters(), lr=0.005, weight_decay=0.1)

num_epochs = 3

train_losses, val_losses, tokens_seen = train_model_simple(
    model, train_loader, val_loader, optimizer, device,
    num_epochs=num_epochs, eval_freq=2, eval_iter=2,
    start_context=format_input(val_data[0]), tokenizer=tokenizer
)
show("train_losses", train_losses)
show("val_losses", val_losses)
show("tokens_seen", tokens_seen)

# --- 7.7 extracting and saving responses
model.eval()
responses = []
for entry in test_data:
    input_text = format_input(entry)

    token_ids = generate(
        model=model,
        idx=text_to_token_ids(input_text, tokenizer).to(device),
        max_new_tokens=12,
        context_size=BASE_CONFIG["context_length"],
        eos_id=pad_token_id
    )
    generated_text = token_ids_to_text(token_ids, tokenizer)
    response_text = (
        generated_text[len(input_text):]
        .replace("### Response:", "")
        .strip()
    )
    print(input_text)
    print(f"\nCorrect response:\n>> {entry['output']}")
    print(f"\nModel response:\n>> {response_text.strip()}")
    print("-------------------------------------")
    responses.append(token_ids[0, len(input_text):])
show("test_responses", responses)

tmp_dir = tempfile.TemporaryDirectory()  # (removed when the program ends)
file_name = os.path.join(tmp_dir.name, "gpt2-small-sft.pth")
torch.save(model.state_dict(), file_name)
model2 = GPTModel(BASE_CONFIG)
model2.load_state_dict(torch.load(file_name, weights_only=True))
model2.eval()
with torch.no_grad():
    show("reloaded_val_loss", calc_loss_loader(val_loader, model2, device))


# --- exercise 7.2: instruction and input masking
def custom_collate_with_masking(batch, pad_token_id=50256, ignore_index=-100, allowed_max_length=None,
                                device="cpu"):
    batch_max_length = max(len(item) + 1 for item, _ in batch)
    inputs_lst, targets_lst = [], []
    for item, instruction_length in batch:
        new_item = item.copy()
        new_item += [pad_token_id]
        padded = new_item + [pad_token_id] * (batch_max_length - len(new_item))
        inputs = torch.tensor(padded[:-1])
        targets = torch.tensor(padded[1:])
        mask = targets == pad_token_id
        indices = torch.nonzero(mask).squeeze()
        if indices.numel() > 1:
            targets[indices[1:]] = ignore_index
        # mask the instruction: only the response is learned
        targets[:instruction_length - 1] = -100
        if allowed_max_length is not None:
            inputs = inputs[:allowed_max_length]
            targets = targets[:allowed_max_length]
        inputs_lst.append(inputs)
        targets_lst.append(targets)
    return torch.stack(inputs_lst).to(device), torch.stack(targets_lst).to(device)


class InstructionDatasetWithLengths(InstructionDataset):
    def __getitem__(self, index):
        return self.encoded_texts[index], len(tokenizer.encode(format_input(self.data[index])))


masked_loader = DataLoader(InstructionDatasetWithLengths(train_data, tokenizer), batch_size=batch_size,
                           collate_fn=partial(custom_collate_with_masking, pad_token_id=pad_token_id),
                           shuffle=False, drop_last=True)
inputs, targets = next(iter(masked_loader))
show("masked_kept_targets", (targets != -100).sum(dim=1))
with torch.no_grad():
    show("masked_loss", calc_loss_loader(masked_loader, model, device))

tmp_dir.cleanup()
