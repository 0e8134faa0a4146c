"""Sebastian Raschka, "Build a Large Language Model (From Scratch)", chapter 5 "Pretraining on
unlabeled data", scaled down to a character-level GPT on a short story: the target-token
probabilities picked by ``probas[text_idx, [0, 1, 2], targets[text_idx]]``, the negative
average log-probability equal to ``cross_entropy(logits.flatten(0, 1), targets.flatten())`` and
the perplexity; the 90/10 train/validation split through ``create_dataloader_v1``;
``calc_loss_batch`` / ``calc_loss_loader`` (``loss.item()`` summed, ``num_batches``);
``train_model_simple`` with AdamW(weight_decay=0.1), ``evaluate_model`` between
``model.eval()`` and ``model.train()``, tokens seen, greedy samples; the decoding strategies
(``torch.multinomial``, ``torch.bincount``, softmax with temperature, top-k by
``torch.topk`` and ``torch.where(condition=..., input=..., other=...)`` with ``-inf``, the
``generate`` function with ``idx_next == eos_id``); saving and loading model and optimizer
state dicts (``weights_only=True``) and resuming training; and GPT-2's weights loaded by
``assign`` / ``load_weights_into_gpt`` from a NumPy parameter dict (``np.split`` of ``c_attn``).

    python llm_pretrain.py [torch|numbagrad]
"""
import os
import tempfile

import numpy as np

from _common import BACKEND, numpy_init, show
from previous_chapters import (CharTokenizer, GPTModel, create_dataloader_v1, generate_text_simple,
                               text_to_token_ids, token_ids_to_text)

if BACKEND == "torch":
    import torch
else:
    import numbagrad as torch

GPT_CONFIG_124M = {
    "vocab_size": 50257,   # Vocabulary size
    "context_length": 256,  # Shortened context length (orig: 1024)
    "emb_dim": 768,        # Embedding dimension
    "n_heads": 12,         # Number of attention heads
    "n_layers": 12,        # Number of layers
    "drop_rate": 0.1,      # Dropout rate
    "qkv_bias": False      # Query-key-value bias
}

text_data = (
    "I had always thought the painter a cheap genius, though a good fellow enough, "
    "so it was no great surprise to me to hear that, in the height of his glory, he had "
    "dropped his painting, married a rich widow, and established himself in a villa on "
    "the coast. The height of his glory, that was what the women called it. I can hear "
    "the voice of one of them, deploring his unaccountable abdication. Of course it was "
    "going to send the value of his pictures up; but I did not think of that at the time. "
    "It was not till three years later that, in the course of a few weeks idling on the "
    "coast, it suddenly occurred to me to wonder why he had given up his painting."
)
tokenizer = CharTokenizer(text_data)
GPT_CONFIG = dict(GPT_CONFIG_124M, vocab_size=tokenizer.n_vocab, context_length=16,
                  emb_dim=32, n_heads=4, n_layers=2,
                  drop_rate=0.0)  # dropout off so that both libraries train alike

torch.manual_seed(123)
model = GPTModel(GPT_CONFIG)
numpy_init(torch, model, seed=0)
model.eval()  # Disable dropout during inference

# --- 5.1.1 using GPT to generate text
start_context = "It was not"
token_ids = generate_text_simple(
    model=model,
    idx=text_to_token_ids(start_context, tokenizer),
    max_new_tokens=10,
    context_size=GPT_CONFIG["context_length"]
)
show("untrained_output", token_ids)
show("untrained_text_len", len(token_ids_to_text(token_ids, tokenizer)))

# --- 5.1.2 calculating the text generation loss
inputs = torch.tensor([tokenizer.encode("the pai"),   # ["every effort moves",
                       tokenizer.encode("I had a")])  #  "I really like"]
targets = torch.tensor([tokenizer.encode("he pain"),  # [" effort moves you",
                        tokenizer.encode(" had al")])  #  " really like chocolate"]

with torch.no_grad():
    logits = model(inputs)

probas = torch.softmax(logits, dim=-1)  # Probability of each token in vocabulary
show("probas.shape", list(probas.shape))
token_ids = torch.argmax(probas, dim=-1, keepdim=True)
show("token_ids", token_ids)

text_idx = 0
target_probas_1 = probas[text_idx, [0, 1, 2, 3, 4, 5, 6], targets[text_idx]]
show("target_probas_1", target_probas_1)
text_idx = 1
target_probas_2 = probas[text_idx, [0, 1, 2, 3, 4, 5, 6], targets[text_idx]]
show("target_probas_2", target_probas_2)

# Compute logarithm of all token probabilities
log_probas = torch.log(torch.cat((target_probas_1, target_probas_2)))
show("log_probas", log_probas)
# Calculate the average probability for each token
avg_log_probas = torch.mean(log_probas)
show("avg_log_probas", avg_log_probas)
neg_avg_log_probas = avg_log_probas * -1
show("neg_avg_log_probas", neg_avg_log_probas)

# Logits have shape (batch_size, num_tokens, vocab_size)
show("logits.shape", list(logits.shape))
# Targets have shape (batch_size, num_tokens)
show("targets.shape", list(targets.shape))
logits_flat = logits.flatten(0, 1)
targets_flat = targets.flatten()
show("logits_flat.shape", list(logits_flat.shape))
loss = torch.nn.functional.cross_entropy(logits_flat, targets_flat)
show("cross_entropy", loss)
perplexity = torch.exp(loss)
show("perplexity", perplexity)

# --- 5.1.3 calculating the training and validation set losses
total_characters = len(text_data)
total_tokens = len(tokenizer.encode(text_data))
show("characters_tokens", [total_characters, total_tokens])

# Train/validation ratio
train_ratio = 0.90
split_idx = int(train_ratio * len(text_data))
train_data = text_data[:split_idx]
val_data = text_data[split_idx:]

torch.manual_seed(123)

train_loader = create_dataloader_v1(
    train_data,
    tokenizer,
    batch_size=2,
    max_length=GPT_CONFIG["context_length"],
    stride=GPT_CONFIG["context_length"],
    drop_last=True,
    shuffle=False,  # (the book shuffles; the libraries' generators differ, so not here)
    num_workers=0
)

val_loader = create_dataloader_v1(
    val_data,
    tokenizer,
    batch_size=2,
    max_length=GPT_CONFIG["context_length"],
    stride=GPT_CONFIG["context_length"],
    drop_last=False,
    shuffle=False,
    num_workers=0
)

train_shapes = [list(x.shape) + list(y.shape) for x, y in train_loader]
show("train_loader_shapes", train_shapes[-1])
show("val_loader_shapes", [list(x.shape) + list(y.shape) for x, y in val_loader])
show("num_batches", [len(train_loader), len(val_loader)])

train_tokens = 0
for input_batch, target_batch in train_loader:
    train_tokens += input_batch.numel()
val_tokens = 0
for input_batch, target_batch in val_loader:
    val_tokens += input_batch.numel()
show("train_val_tokens", [train_tokens, val_tokens])


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


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
device = torch.device("cpu")  # (the comparison runs on the CPU)
model.to(device)  # no assignment model = model.to(device) necessary for nn.Module classes

torch.manual_seed(123)  # For reproducibility due to the shuffling in the data loader

with torch.no_grad():  # Disable gradient tracking for efficiency because we are not training, yet
    train_loss = calc_loss_loader(train_loader, model, device)
    val_loss = calc_loss_loader(val_loader, model, device)
show("initial_losses", [train_loss, val_loss])


# --- 5.2 training an LLM
def train_model_simple(model, train_loader, val_loader, optimizer, device, num_epochs,
                       eval_freq, eval_iter, start_context, tokenizer):
    # Initialize lists to track losses and tokens seen
    train_losses, val_losses, track_tokens_seen = [], [], []
    tokens_seen, global_step = 0, -1

    # Main training loop
    for epoch in range(num_epochs):
        model.train()  # Set model to training mode

        for input_batch, target_batch in train_loader:
            optimizer.zero_grad()  # Reset loss gradients from previous batch iteration
            loss = calc_loss_batch(input_batch, target_batch, model, device)
            loss.backward()  # Calculate loss gradients
            optimizer.step()  # Update model weights using loss gradients
            tokens_seen += input_batch.numel()
            global_step += 1

            # Optional evaluation step
            if global_step % eval_freq == 0:
                train_loss, val_loss = evaluate_model(
                    model, train_loader, val_loader, device, eval_iter)
                train_losses.append(train_loss)
                val_losses.append(val_loss)
                track_tokens_seen.append(tokens_seen)
                print(f"Ep {epoch+1} (Step {global_step:06d}): "
                      f"Train loss {train_loss:.3f}, Val loss {val_loss:.3f}")

        # Print a sample text after each epoch
        generate_and_print_sample(
            model, tokenizer, device, start_context
        )

    return train_losses, val_losses, track_tokens_seen


def evaluate_model(model, train_loader, val_loader, device, eval_iter):
    model.eval()
    with torch.no_grad():
        train_loss = calc_loss_loader(train_loader, model, device, num_batches=eval_iter)
        val_loss = calc_loss_loader(val_loader, model, device, num_batches=eval_iter)
    model.train()
    return train_loss, val_loss


samples = []


def generate_and_print_sample(model, tokenizer, device, start_context):
    model.eval()
    context_size = model.pos_emb.weight.shape[0]
    encoded = text_to_token_ids(start_context, tokenizer).to(device)
    with torch.no_grad():
        token_ids = generate_text_simple(
            model=model, idx=encoded,
            max_new_tokens=12, context_size=context_size
        )
    decoded_text = token_ids_to_text(token_ids, tokenizer)
    samples.append(token_ids)
    print("sample:", decoded_text.replace("\n", " "))  # Compact print format
    model.train()


torch.manual_seed(123)
optimizer = torch.optim.AdamW(model.parameters(), lr=0.004, weight_decay=0.1)

num_epochs = 2
train_losses, val_losses, tokens_seen = train_model_simple(
    model, train_loader, val_loader, optimizer, device,
    num_epochs=num_epochs, eval_freq=5, eval_iter=3,
    start_context="It was not", tokenizer=tokenizer
)
show("train_losses", train_losses)
show("val_losses", val_losses)
show("tokens_seen", tokens_seen)
show("epoch_samples", samples)
show("trained_out_head", model.out_head.weight[:3, :5])

# --- 5.3 decoding strategies to control randomness
vocab = {
    "closer": 0,
    "every": 1,
    "effort": 2,
    "forward": 3,
    "inches": 4,
    "moves": 5,
    "pizza": 6,
    "toward": 7,
    "you": 8,
}

inverse_vocab = {v: k for k, v in vocab.items()}

# Suppose input is "every effort moves you", and the LLM
# returns the following logits for the next token:
next_token_logits = torch.tensor(
    [4.51, 0.89, -1.90, 6.75, 1.63, -1.62, -1.89, 6.28, 1.79]
)

probas = torch.softmax(next_token_logits, dim=0)
next_token_id = torch.argmax(probas).item()
show("greedy_next_token", next_token_id)

torch.manual_seed(123)
next_token_id = torch.multinomial(probas, num_samples=1).item()
show("multinomial_in_vocab", float(inverse_vocab[next_token_id] in vocab))


def print_sampled_tokens(probas):
    torch.manual_seed(123)  # Manual seed for reproducibility
    sample = [torch.multinomial(probas, num_samples=1).item() for i in range(1_000)]
    sampled_ids = torch.bincount(torch.tensor(sample), minlength=len(probas))
    for i, freq in enumerate(sampled_ids):
        print(f"{freq} x {inverse_vocab[i]}")
    return sampled_ids


sampled_ids = print_sampled_tokens(probas)
show("bincount_shape_sum", [len(sampled_ids), sampled_ids.sum()])
show("bincount_close_to_probas", float((sampled_ids / 1000 - probas).abs().max() < 0.06))
show("bincount_dtype_long", float(sampled_ids.dtype == torch.long))


def softmax_with_temperature(logits, temperature):
    scaled_logits = logits / temperature
    return torch.softmax(scaled_logits, dim=0)


# Temperature values
temperatures = [1, 0.1, 5]  # Original, higher confidence, and lower confidence

# Calculate scaled probabilities
scaled_probas = [softmax_with_temperature(next_token_logits, T) for T in temperatures]
for T, p in zip(temperatures, scaled_probas):
    show(f"temperature_{T}", p)

top_k = 3
top_logits, top_pos = torch.topk(next_token_logits, top_k)
show("top_logits", top_logits)
show("top_pos", top_pos)

new_logits = torch.where(
    condition=next_token_logits < top_logits[-1],
    input=torch.tensor(float("-inf")),
    other=next_token_logits
)
show("new_logits_isinf", torch.isinf(new_logits))
show("new_logits_kept", new_logits[top_pos])

new_logits2 = torch.full_like(  # create tensor containing -inf values
    next_token_logits, -torch.inf
)
new_logits2[top_pos] = next_token_logits[top_pos]  # copy top k values into the -inf tensor
show("new_logits_equal", float(torch.equal(new_logits, new_logits2)))

topk_probas = torch.softmax(new_logits, dim=0)
show("topk_probas", topk_probas)


def generate(model, idx, max_new_tokens, context_size, temperature=0.0, top_k=None, eos_id=None):

    # For-loop is the same as before: Get logits, and only focus on last time step
    for _ in range(max_new_tokens):
        idx_cond = idx[:, -context_size:]
        with torch.no_grad():
            logits = model(idx_cond)
        logits = logits[:, -1, :]

        # New: Filter logits with top_k sampling
        if top_k is not None:
            # Keep only top_k values
            top_logits, _ = torch.topk(logits, top_k)
            min_val = top_logits[:, -1]
            logits = torch.where(logits < min_val, torch.tensor(float("-inf")).to(logits.device), logits)

        # New: Apply temperature scaling
        if temperature > 0.0:
            logits = logits / temperature

            # New (not in book): numerical stability tip to get equivalent results on mps device
            # subtract rowwise max before softmax
            logits = logits - logits.max(dim=-1, keepdim=True).values

            # Apply softmax to get probabilities
            probs = torch.softmax(logits, dim=-1)  # (batch_size, context_len)

            # Sample from the distribution
            idx_next = torch.multinomial(probs, num_samples=1)  # (batch_size, 1)

        # Otherwise same as before: get idx of the vocab entry with the highest logits value
        else:
            idx_next = torch.argmax(logits, dim=-1, keepdim=True)  # (batch_size, 1)

        if idx_next == eos_id:  # Stop generating early if end-of-sequence token is encountered and eos_id is specified
            break

        # Same as before: append sampled index to the running sequence
        idx = torch.cat((idx, idx_next), dim=1)  # (batch_size, num_tokens+1)

    return idx


model.eval()
token_ids = generate(
    model=model,
    idx=text_to_token_ids("the height", tokenizer),
    max_new_tokens=15,
    context_size=GPT_CONFIG["context_length"],
    top_k=5,
)
show("generate_topk_greedy", token_ids)
show("generate_equals_simple", float(torch.equal(token_ids, generate_text_simple(
    model, text_to_token_ids("the height", tokenizer), 15, GPT_CONFIG["context_length"]))))

eos = tokenizer.encode(" ")[0]
token_ids = generate(
    model=model,
    idx=text_to_token_ids("the height", tokenizer),
    max_new_tokens=15,
    context_size=GPT_CONFIG["context_length"],
    eos_id=eos,
)
show("generate_stops_at_eos", token_ids)

torch.manual_seed(123)
token_ids = generate(
    model=model,
    idx=text_to_token_ids("the height", tokenizer),
    max_new_tokens=15,
    context_size=GPT_CONFIG["context_length"],
    top_k=25,
    temperature=1.4
)
show("sampled_len", token_ids.shape[1])
show("sampled_in_vocab", float(bool((token_ids < tokenizer.n_vocab).all())))

# --- 5.4 loading and saving model weights
tmp_dir = tempfile.TemporaryDirectory()  # (removed when the program ends)
tmp = tmp_dir.name
torch.save(model.state_dict(), os.path.join(tmp, "model.pth"))

model2 = GPTModel(GPT_CONFIG)
model2.load_state_dict(torch.load(os.path.join(tmp, "model.pth"), map_location=device, weights_only=True))
model2.eval()
show("reloaded_equal", float(torch.equal(model2(inputs), model(inputs))))

torch.save({
    "model_state_dict": model.state_dict(),
    "optimizer_state_dict": optimizer.state_dict(),
    },
    os.path.join(tmp, "model_and_optimizer.pth")
)

checkpoint = torch.load(os.path.join(tmp, "model_and_optimizer.pth"), weights_only=True)

model = GPTModel(GPT_CONFIG)
model.load_state_dict(checkpoint["model_state_dict"])

optimizer = torch.optim.AdamW(model.parameters(), lr=0.0005, weight_decay=0.1)
optimizer.load_state_dict(checkpoint["optimizer_state_dict"])
show("optimizer_lr_restored", optimizer.param_groups[0]["lr"])
show("optimizer_step_restored", optimizer.state[optimizer.param_groups[0]["params"][0]]["step"])
model.train()

samples.clear()
train_losses, val_losses, tokens_seen = train_model_simple(
    model, train_loader, val_loader, optimizer, device,
    num_epochs=1, eval_freq=5, eval_iter=3,
    start_context="It was not", tokenizer=tokenizer
)
show("resumed_train_losses", train_losses)
show("resumed_val_losses", val_losses)
show("resumed_sample", samples)


# --- 5.5 loading pretrained weights (a NumPy dict laid out like the GPT-2 checkpoint)
def assign(left, right):
    if left.shape != right.shape:
        raise ValueError(f"Shape mismatch. Left: {left.shape}, Right: {right.shape}")
    return torch.nn.Parameter(torch.tensor(right))


def load_weights_into_gpt(gpt, params):
    gpt.pos_emb.weight = assign(gpt.pos_emb.weight, params['wpe'])
    gpt.tok_emb.weight = assign(gpt.tok_emb.weight, params['wte'])

    for b in range(len(params["blocks"])):
        q_w, k_w, v_w = np.split(
            (params["blocks"][b]["attn"]["c_attn"])["w"], 3, axis=-1)
        gpt.trf_blocks[b].att.W_query.weight = assign(
            gpt.trf_blocks[b].att.W_query.weight, q_w.T)
        gpt.trf_blocks[b].att.W_key.weight = assign(
            gpt.trf_blocks[b].att.W_key.weight, k_w.T)
        gpt.trf_blocks[b].att.W_value.weight = assign(
            gpt.trf_blocks[b].att.W_value.weight, v_w.T)

        q_b, k_b, v_b = np.split(
            (params["blocks"][b]["attn"]["c_attn"])["b"], 3, axis=-1)
        gpt.trf_blocks[b].att.W_query.bias = assign(
            gpt.trf_blocks[b].att.W_query.bias, q_b)
        gpt.trf_blocks[b].att.W_key.bias = assign(
            gpt.trf_blocks[b].att.W_key.bias, k_b)
        gpt.trf_blocks[b].att.W_value.bias = assign(
            gpt.trf_blocks[b].att.W_value.bias, v_b)

        gpt.trf_blocks[b].att.out_proj.weight = assign(
            gpt.trf_blocks[b].att.out_proj.weight,
            params["blocks"][b]["attn"]["c_proj"]["w"].T)
        gpt.trf_blocks[b].att.out_proj.bias = assign(
            gpt.trf_blocks[b].att.out_proj.bias,
            params["blocks"][b]["attn"]["c_proj"]["b"])

        gpt.trf_blocks[b].ff.layers[0].weight = assign(
            gpt.trf_blocks[b].ff.layers[0].weight,
            params["blocks"][b]["mlp"]["c_fc"]["w"].T)
        gpt.trf_blocks[b].ff.layers[0].bias = assign(
            gpt.trf_blocks[b].ff.layers[0].bias,
            params["blocks"][b]["mlp"]["c_fc"]["b"])
        gpt.trf_blocks[b].ff.layers[2].weight = assign(
            gpt.trf_blocks[b].ff.layers[2].weight,
            params["blocks"][b]["mlp"]["c_proj"]["w"].T)
        gpt.trf_blocks[b].ff.layers[2].bias = assign(
            gpt.trf_blocks[b].ff.layers[2].bias,
            params["blocks"][b]["mlp"]["c_proj"]["b"])

        gpt.trf_blocks[b].norm1.scale = assign(
            gpt.trf_blocks[b].norm1.scale,
            params["blocks"][b]["ln_1"]["g"])
        gpt.trf_blocks[b].norm1.shift = assign(
            gpt.trf_blocks[b].norm1.shift,
            params["blocks"][b]["ln_1"]["b"])
        gpt.trf_blocks[b].norm2.scale = assign(
            gpt.trf_blocks[b].norm2.scale,
            params["blocks"][b]["ln_2"]["g"])
        gpt.trf_blocks[b].norm2.shift = assign(
            gpt.trf_blocks[b].norm2.shift,
            params["blocks"][b]["ln_2"]["b"])

    gpt.final_norm.scale = assign(gpt.final_norm.scale, params["g"])
    gpt.final_norm.shift = assign(gpt.final_norm.shift, params["b"])
    gpt.out_head.weight = assign(gpt.out_head.weight, params["wte"])


NEW_CONFIG = GPT_CONFIG.copy()
NEW_CONFIG.update({"context_length": 16, "qkv_bias": True})
rng = np.random.default_rng(7)
E, V, C = NEW_CONFIG["emb_dim"], NEW_CONFIG["vocab_size"], NEW_CONFIG["context_length"]


def w(*shape, scale=0.1):
    return (rng.normal(size=shape) * scale).astype(np.float32)


params = {"wte": w(V, E), "wpe": w(C, E), "g": 1 + w(E), "b": w(E), "blocks": [
    {"attn": {"c_attn": {"w": w(E, 3 * E), "b": w(3 * E)}, "c_proj": {"w": w(E, E), "b": w(E)}},
     "mlp": {"c_fc": {"w": w(E, 4 * E), "b": w(4 * E)}, "c_proj": {"w": w(4 * E, E), "b": w(E)}},
     "ln_1": {"g": 1 + w(E), "b": w(E)}, "ln_2": {"g": 1 + w(E), "b": w(E)}}
    for _ in range(NEW_CONFIG["n_layers"])]}

gpt = GPTModel(NEW_CONFIG)
gpt.eval()
load_weights_into_gpt(gpt, params)
gpt.to(device)
show("gpt2_tied", float(torch.equal(gpt.out_head.weight, gpt.tok_emb.weight)))
show("gpt2_n_params", sum(p.numel() for p in gpt.parameters()))
show("gpt2_param_count_unique", len(list(gpt.parameters())))
try:
    assign(gpt.pos_emb.weight, params["wte"])
    show("assign_mismatch_raised", 0)
except ValueError:
    show("assign_mismatch_raised", 1)

token_ids = generate(
    model=gpt,
    idx=text_to_token_ids("It was", tokenizer).to(device),
    max_new_tokens=10,
    context_size=NEW_CONFIG["context_length"],
    top_k=4,
)
show("gpt2_generate", token_ids)
with torch.no_grad():
    show("gpt2_loss", calc_loss_loader(val_loader, gpt, device))

tmp_dir.cleanup()
