"""Sebastian Raschka, "Build a Large Language Model (From Scratch)", chapter 4 "Implementing a
GPT model from scratch to generate text", on a scaled-down config: the DummyGPTModel skeleton;
layer normalisation by hand (``var(dim=-1, keepdim=True)`` with and without ``unbiased=False``)
and as a LayerNorm module with ``scale``/``shift`` parameters; GELU by its tanh approximation
(``torch.sqrt(torch.tensor(2.0 / torch.pi))``, ``torch.pow(x, 3)``) beside ReLU and
``nn.GELU(approximate='tanh')``; FeedForward; the shortcut-connection experiment printing each
weight's mean absolute gradient; TransformerBlock; GPTModel (token + ``pos_emb(torch.arange)``,
``nn.Sequential(*blocks)``, an untied bias-free out_head), its parameter count and size in MB;
and ``generate_text_simple`` (``idx[:, -context_size:]``, ``logits[:, -1, :]``, argmax with
``keepdim=True``, ``torch.cat`` on dim 1) in eval mode.

    python llm_gpt_model.py [torch|numbagrad]
"""
import numpy as np

from _common import BACKEND, numpy_init, show

if BACKEND == "torch":
    import torch
    import torch.nn as nn
else:
    import numbagrad as torch
    import numbagrad.nn as nn

GPT_CONFIG_124M = {
    "vocab_size": 50257,     # Vocabulary size
    "context_length": 1024,  # Context length
    "emb_dim": 768,          # Embedding dimension
    "n_heads": 12,           # Number of attention heads
    "n_layers": 12,          # Number of layers
    "drop_rate": 0.1,        # Dropout rate
    "qkv_bias": False        # Query-Key-Value bias
}
# scaled down to run in a moment
GPT_CONFIG_TINY = dict(GPT_CONFIG_124M, vocab_size=40, context_length=24, emb_dim=32,
                       n_heads=4, n_layers=2)


class SimpleTokenizer:
    """A character tokenizer standing in for tiktoken's GPT-2 encoding."""
    def __init__(self, text):
        chars = sorted(set(text))
        self.str_to_int = {c: i for i, c in enumerate(chars)}
        self.int_to_str = {i: c for c, i in self.str_to_int.items()}

    def encode(self, text):
        return [self.str_to_int[c] for c in text]

    def decode(self, ids):
        return "".join(self.int_to_str.get(i, "?") for i in ids)


tokenizer = SimpleTokenizer("every effort moves you forward. every day holds a ")
batch = []
txt1 = "every effort moves you"
txt2 = "every day holds a lot "
batch.append(torch.tensor(tokenizer.encode(txt1)))
batch.append(torch.tensor(tokenizer.encode(txt2)))
batch = torch.stack(batch, dim=0)
show('batch', batch)


# --- 4.1 coding an LLM architecture
class DummyGPTModel(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.tok_emb = nn.Embedding(cfg["vocab_size"], cfg["emb_dim"])
        self.pos_emb = nn.Embedding(cfg["context_length"], cfg["emb_dim"])
        self.drop_emb = nn.Dropout(cfg["drop_rate"])

        # Use a placeholder for TransformerBlock
        self.trf_blocks = nn.Sequential(
            *[DummyTransformerBlock(cfg) for _ in range(cfg["n_layers"])])

        # Use a placeholder for LayerNorm
        self.final_norm = DummyLayerNorm(cfg["emb_dim"])
        self.out_head = nn.Linear(
            cfg["emb_dim"], cfg["vocab_size"], bias=False
        )

    def forward(self, in_idx):
        batch_size, seq_len = in_idx.shape
        tok_embeds = self.tok_emb(in_idx)
        pos_embeds = self.pos_emb(torch.arange(seq_len, device=in_idx.device))
        x = tok_embeds + pos_embeds
        x = self.drop_emb(x)
        x = self.trf_blocks(x)
        x = self.final_norm(x)
        logits = self.out_head(x)
        return logits


class DummyTransformerBlock(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        # A simple placeholder

    def forward(self, x):
        # This block does nothing and just returns its input.
        return x


class DummyLayerNorm(nn.Module):
    def __init__(self, normalized_shape, eps=1e-5):
        super().__init__()
        # The parameters here are just to mimic the LayerNorm interface.

    def forward(self, x):
        # This layer does nothing and just returns its input.
        return x


torch.manual_seed(123)
model = DummyGPTModel(GPT_CONFIG_TINY)
numpy_init(torch, model, seed=0)
model.eval()
logits = model(batch)
show('dummy_logits.shape', list(logits.shape))
show('dummy_logits', logits[:, -1, :6])

# --- 4.2 normalizing activations with layer normalization
rng = np.random.default_rng(123)
batch_example = torch.from_numpy(rng.normal(size=(2, 5)).astype(np.float32))  # torch.randn(2, 5)
layer = nn.Sequential(nn.Linear(5, 6), nn.ReLU())
numpy_init(torch, layer, seed=1)
out = layer(batch_example)
show('ln_out', out)

mean = out.mean(dim=-1, keepdim=True)
var = out.var(dim=-1, keepdim=True)
show('ln_mean', mean)
show('ln_var', var)

out_norm = (out - mean) / torch.sqrt(var)
show('ln_out_norm', out_norm)
mean = out_norm.mean(dim=-1, keepdim=True)
var = out_norm.var(dim=-1, keepdim=True)
show('ln_norm_mean_small', float((mean.abs() < 1e-5).all()))
show('ln_norm_var', var)


class LayerNorm(nn.Module):
    def __init__(self, emb_dim):
        super().__init__()
        self.eps = 1e-5
        self.scale = nn.Parameter(torch.ones(emb_dim))
        self.shift = nn.Parameter(torch.zeros(emb_dim))

    def forward(self, x):
        mean = x.mean(dim=-1, keepdim=True)
        var = x.var(dim=-1, keepdim=True, unbiased=False)
        norm_x = (x - mean) / torch.sqrt(var + self.eps)
        return self.scale * norm_x + self.shift


ln = LayerNorm(emb_dim=5)
out_ln = ln(batch_example)
mean = out_ln.mean(dim=-1, keepdim=True)
var = out_ln.var(dim=-1, unbiased=False, keepdim=True)
show('LayerNorm_out', out_ln)
show('LayerNorm_var', var)
show('LayerNorm_vs_nn', float(torch.allclose(out_ln, nn.LayerNorm(5)(batch_example), atol=1e-6)))
show('LayerNorm_vs_F', float(torch.allclose(
    out_ln, torch.nn.functional.layer_norm(batch_example, (5,), eps=1e-5), atol=1e-6)))


# --- 4.3 implementing a feed forward network with GELU activations
class GELU(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return 0.5 * x * (1 + torch.tanh(
            torch.sqrt(torch.tensor(2.0 / torch.pi)) *
            (x + 0.044715 * torch.pow(x, 3))
        ))


gelu, relu = GELU(), nn.ReLU()

# Some sample data
x = torch.linspace(-3, 3, 100)
y_gelu, y_relu = gelu(x), relu(x)
show('gelu', y_gelu[::9])
show('relu', y_relu[::9])
show('gelu_vs_nn_tanh', (y_gelu - nn.GELU(approximate='tanh')(x)).abs().max() < 1e-6)
show('gelu_vs_exact', (y_gelu - torch.nn.functional.gelu(x)).abs().max())
xg = x.clone().requires_grad_(True)
gelu(xg).sum().backward()
show('gelu_grad', xg.grad[::9])


class FeedForward(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.layers = nn.Sequential(
            nn.Linear(cfg["emb_dim"], 4 * cfg["emb_dim"]),
            GELU(),
            nn.Linear(4 * cfg["emb_dim"], cfg["emb_dim"]),
        )

    def forward(self, x):
        return self.layers(x)


ffn = FeedForward(GPT_CONFIG_TINY)
numpy_init(torch, ffn, seed=2)
# input shape: [batch_size, num_token, emb_size]
x = torch.from_numpy(rng.random((2, 3, GPT_CONFIG_TINY["emb_dim"])).astype(np.float32))  # torch.rand(2, 3, 768)
out = ffn(x)
show('ffn.shape', list(out.shape))
show('ffn', out[0, :, :5])


# --- 4.4 adding shortcut connections
class ExampleDeepNeuralNetwork(nn.Module):
    def __init__(self, layer_sizes, use_shortcut):
        super().__init__()
        self.use_shortcut = use_shortcut
        self.layers = nn.ModuleList([
            nn.Sequential(nn.Linear(layer_sizes[0], layer_sizes[1]), GELU()),
            nn.Sequential(nn.Linear(layer_sizes[1], layer_sizes[2]), GELU()),
            nn.Sequential(nn.Linear(layer_sizes[2], layer_sizes[3]), GELU()),
            nn.Sequential(nn.Linear(layer_sizes[3], layer_sizes[4]), GELU()),
            nn.Sequential(nn.Linear(layer_sizes[4], layer_sizes[5]), GELU())
        ])

    def forward(self, x):
        for layer in self.layers:
            # Compute the output of the current layer
            layer_output = layer(x)
            # Check if shortcut can be applied
            if self.use_shortcut and x.shape == layer_output.shape:
                x = x + layer_output
            else:
                x = layer_output
        return x


def print_gradients(model, x, tag):
    # Forward pass
    output = model(x)
    target = torch.tensor([[0.]])

    # Calculate loss based on how close the target
    # and output are
    loss = nn.MSELoss()
    loss = loss(output, target)

    # Backward pass to calculate the gradients
    loss.backward()

    for name, param in model.named_parameters():
        if 'weight' in name:
            # Print the mean absolute gradient of the weights
            show(f"{tag}:{name}:grad_mean", param.grad.abs().mean().item())


layer_sizes = [3, 3, 3, 3, 3, 1]
sample_input = torch.tensor([[1., 0., -1.]])

torch.manual_seed(123)
model_without_shortcut = ExampleDeepNeuralNetwork(
    layer_sizes, use_shortcut=False
)
numpy_init(torch, model_without_shortcut, seed=3)
print_gradients(model_without_shortcut, sample_input, 'no_shortcut')

torch.manual_seed(123)
model_with_shortcut = ExampleDeepNeuralNetwork(
    layer_sizes, use_shortcut=True
)
numpy_init(torch, model_with_shortcut, seed=3)
print_gradients(model_with_shortcut, sample_input, 'shortcut')


# --- 4.5 connecting attention and linear layers in a transformer block
class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0, "d_out must be divisible by num_heads"

        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads  # Reduce the projection dim to match desired output dim

        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)  # Linear layer to combine head outputs
        self.dropout = nn.Dropout(dropout)
        self.register_buffer('mask', torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def forward(self, x):
        b, num_tokens, d_in = x.shape

        keys = self.W_key(x)  # Shape: (b, num_tokens, d_out)
        queries = self.W_query(x)
        values = self.W_value(x)

        keys = keys.view(b, num_tokens, self.num_heads, self.head_dim)
        values = values.view(b, num_tokens, self.num_heads, self.head_dim)
        queries = queries.view(b, num_tokens, self.num_heads, self.head_dim)

        keys = keys.transpose(1, 2)
        queries = queries.transpose(1, 2)
        values = values.transpose(1, 2)

        attn_scores = queries @ keys.transpose(2, 3)  # Dot product for each head
        mask_bool = self.mask.bool()[:num_tokens, :num_tokens]
        attn_scores.masked_fill_(mask_bool, -torch.inf)

        attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)

        context_vec = (attn_weights @ values).transpose(1, 2)
        context_vec = context_vec.reshape(b, num_tokens, self.d_out)
        context_vec = self.out_proj(context_vec)  # optional projection

        return context_vec


class TransformerBlock(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.att = MultiHeadAttention(
            d_in=cfg["emb_dim"],
            d_out=cfg["emb_dim"],
            context_length=cfg["context_length"],
            num_heads=cfg["n_heads"],
            dropout=cfg["drop_rate"],
            qkv_bias=cfg["qkv_bias"])
        self.ff = FeedForward(cfg)
        self.norm1 = LayerNorm(cfg["emb_dim"])
        self.norm2 = LayerNorm(cfg["emb_dim"])
        self.drop_shortcut = nn.Dropout(cfg["drop_rate"])

    def forward(self, x):
        # Shortcut connection for attention block
        shortcut = x
        x = self.norm1(x)
        x = self.att(x)  # Shape [batch_size, num_tokens, emb_size]
        x = self.drop_shortcut(x)
        x = x + shortcut  # Add the original input back

        # Shortcut connection for feed-forward block
        shortcut = x
        x = self.norm2(x)
        x = self.ff(x)
        x = self.drop_shortcut(x)
        x = x + shortcut  # Add the original input back

        return x


torch.manual_seed(123)
x = torch.from_numpy(rng.random((2, 4, GPT_CONFIG_TINY["emb_dim"])).astype(np.float32))
block = TransformerBlock(GPT_CONFIG_TINY)
numpy_init(torch, block, seed=4)
block.eval()
output = block(x)
show("block_in.shape", list(x.shape))
show("block_out.shape", list(output.shape))
show("block_out", output[:, -1, :6])
block.train()
torch.manual_seed(0)
show('~block_train_finite', [block(x).abs().mean()])


# --- 4.6 coding the GPT model
class GPTModel(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.tok_emb = nn.Embedding(cfg["vocab_size"], cfg["emb_dim"])
        self.pos_emb = nn.Embedding(cfg["context_length"], cfg["emb_dim"])
        self.drop_emb = nn.Dropout(cfg["drop_rate"])

        self.trf_blocks = nn.Sequential(
            *[TransformerBlock(cfg) for _ in range(cfg["n_layers"])])

        self.final_norm = LayerNorm(cfg["emb_dim"])
        self.out_head = nn.Linear(
            cfg["emb_dim"], cfg["vocab_size"], bias=False
        )

    def forward(self, in_idx):
        batch_size, seq_len = in_idx.shape
        tok_embeds = self.tok_emb(in_idx)
        pos_embeds = self.pos_emb(torch.arange(seq_len, device=in_idx.device))
        x = tok_embeds + pos_embeds  # Shape [batch_size, num_tokens, emb_size]
        x = self.drop_emb(x)
        x = self.trf_blocks(x)
        x = self.final_norm(x)
        logits = self.out_head(x)
        return logits


torch.manual_seed(123)
model = GPTModel(GPT_CONFIG_TINY)
numpy_init(torch, model, seed=5)
model.eval()

out = model(batch)
show("gpt_in", batch)
show("gpt_out.shape", list(out.shape))
show("gpt_out", out[:, -1, :8])

total_params = sum(p.numel() for p in model.parameters())
show("total_params", total_params)
show("token_emb.shape", list(model.tok_emb.weight.shape))
show("out_head.shape", list(model.out_head.weight.shape))
total_params_gpt2 = total_params - sum(p.numel() for p in model.out_head.parameters())
show("total_params_tied", total_params_gpt2)
# Calculate the total size in bytes (assuming float32, 4 bytes per parameter)
total_size_bytes = total_params * 4
# Convert to megabytes
total_size_mb = total_size_bytes / (1024 * 1024)
show("total_size_mb", total_size_mb)
show("block_params", [sum(p.numel() for p in m.parameters()) for m in model.trf_blocks])
show("param_names", len([n for n, _ in model.named_parameters()]))

# a backward pass through the whole model
out.mean().backward()
show("grad_tok_emb_rows", model.tok_emb.weight.grad.abs().sum(dim=1)[:10])
show("grad_final_norm_scale", model.final_norm.scale.grad[:8])
show("grad_block0_qkv", model.trf_blocks[0].att.W_query.weight.grad.abs().sum())


# --- 4.7 generating text
def generate_text_simple(model, idx, max_new_tokens, context_size):
    # idx is (batch, n_tokens) array of indices in the current context
    for _ in range(max_new_tokens):

        # Crop current context if it exceeds the supported context size
        # E.g., if LLM supports only 5 tokens, and the context size is 10
        # then only the last 5 tokens are used as context
        idx_cond = idx[:, -context_size:]

        # Get the predictions
        with torch.no_grad():
            logits = model(idx_cond)

        # Focus only on the last time step
        # (batch, n_tokens, vocab_size) becomes (batch, vocab_size)
        logits = logits[:, -1, :]

        # Apply softmax to get probabilities
        probas = torch.softmax(logits, dim=-1)  # (batch, vocab_size)

        # Get the idx of the vocab entry with the highest probability value
        idx_next = torch.argmax(probas, dim=-1, keepdim=True)  # (batch, 1)

        # Append sampled index to the running sequence
        idx = torch.cat((idx, idx_next), dim=1)  # (batch, n_tokens+1)

    return idx


start_context = "every effort"
encoded = tokenizer.encode(start_context)
show("encoded", encoded)
encoded_tensor = torch.tensor(encoded).unsqueeze(0)
show("encoded_tensor.shape", list(encoded_tensor.shape))

model.eval()  # disable dropout

out = generate_text_simple(
    model=model,
    idx=encoded_tensor,
    max_new_tokens=16,
    context_size=GPT_CONFIG_TINY["context_length"]
)
show("generated", out)
show("generated_len", len(out[0]))
decoded_text = tokenizer.decode(out.squeeze(0).tolist())
show("decoded_len", len(decoded_text))
show("requires_grad_after_no_grad", float(model(out[:, -4:]).requires_grad))
