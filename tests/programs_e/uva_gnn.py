"""UvA Deep Learning course, tutorial 7 "Graph Neural Networks", with dense adjacency matrices in
place of PyTorch Geometric: the GCNLayer (``adj_matrix.sum(dim=-1, keepdims=True)``,
``torch.bmm``, division by the neighbour count) on the tutorial's 4-node graph with weights set
through ``.weight.data = torch.Tensor(...)``; the GATLayer (``nn.Parameter(torch.Tensor(h, 2c))``
initialised by ``nn.init.xavier_uniform_(..., gain=1.414)``, ``adj_matrix.nonzero(as_tuple=False)``,
``torch.index_select(input=..., index=..., dim=0)``, ``torch.einsum('bhc,hc->bh')``,
``attn_logits.new_zeros(shape).fill_(-9e15)`` filled through a boolean mask from
``adj_matrix[..., None].repeat(1, 1, 1, h) == 1``, ``torch.einsum('bijh,bjhc->bihc')``, concatenated
or averaged heads) with its attention probabilities; then node classification on a generated
two-community graph with boolean train/val/test masks, an MLP baseline against GCN and GAT models
(SGD with momentum and weight decay), and a graph-level classifier pooling node features by a
masked mean.

    python uva_gnn.py [torch|numbagrad]
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


class GCNLayer(nn.Module):

    def __init__(self, c_in, c_out):
        super().__init__()
        self.projection = nn.Linear(c_in, c_out)

    def forward(self, node_feats, adj_matrix):
        """
        Inputs:
            node_feats - Tensor with node features of shape [batch_size, num_nodes, c_in]
            adj_matrix - Batch of adjacency matrices of the graph. If there is an edge from i to j, adj_matrix[b,i,j]=1 else 0.
                         Supports directed edges by non-symmetric matrices. Assumes to already have added the identity connections.
                         Shape: [batch_size, num_nodes, num_nodes]
        """
        # Num neighbours = number of incoming edges
        num_neighbours = adj_matrix.sum(dim=-1, keepdims=True)
        node_feats = self.projection(node_feats)
        node_feats = torch.bmm(adj_matrix, node_feats)
        node_feats = node_feats / num_neighbours
        return node_feats


node_feats = torch.arange(8, dtype=torch.float32).view(1, 4, 2)
adj_matrix = torch.Tensor([[[1, 1, 0, 0],
                            [1, 1, 1, 1],
                            [0, 1, 1, 1],
                            [0, 1, 1, 1]]])

show("Node_features", node_feats)
show("Adjacency_matrix", adj_matrix)

layer = GCNLayer(c_in=2, c_out=2)
layer.projection.weight.data = torch.Tensor([[1., 0.], [0., 1.]])
layer.projection.bias.data = torch.Tensor([0., 0.])

with torch.no_grad():
    out_feats = layer(node_feats, adj_matrix)

show("Output_features", out_feats)
show("weight_is_param", float(isinstance(layer.projection.weight, nn.Parameter)))
show("weight_requires_grad", float(layer.projection.weight.requires_grad))


class GATLayer(nn.Module):

    def __init__(self, c_in, c_out, num_heads=1, concat_heads=True, alpha=0.2):
        """
        Inputs:
            c_in - Dimensionality of input features
            c_out - Dimensionality of output features
            num_heads - Number of heads, i.e. attention mechanisms to apply in parallel. The
                        output features are equally split up over the heads if concat_heads=True.
            concat_heads - If True, the output of the different heads is concatenated instead of averaged.
            alpha - Negative slope of the LeakyReLU activation.
        """
        super().__init__()
        self.num_heads = num_heads
        self.concat_heads = concat_heads
        if self.concat_heads:
            assert c_out % num_heads == 0, "Number of output features must be a multiple of the count of heads."
            c_out = c_out // num_heads

        # Sub-modules and parameters needed in the layer
        self.projection = nn.Linear(c_in, c_out * num_heads)
        self.a = nn.Parameter(torch.Tensor(num_heads, 2 * c_out))  # One per head
        self.leakyrelu = nn.LeakyReLU(alpha)

        # Initialization from the original implementation
        nn.init.xavier_uniform_(self.projection.weight.data, gain=1.414)
        nn.init.xavier_uniform_(self.a.data, gain=1.414)

    def forward(self, node_feats, adj_matrix, print_attn_probs=False):
        """
        Inputs:
            node_feats - Input features of the node. Shape: [batch_size, c_in]
            adj_matrix - Adjacency matrix including self-connections. Shape: [batch_size, num_nodes, num_nodes]
            print_attn_probs - If True, the attention weights are printed during the forward pass (for debugging purposes)
        """
        batch_size, num_nodes = node_feats.size(0), node_feats.size(1)

        # Apply linear layer and sort nodes by head
        node_feats = self.projection(node_feats)
        node_feats = node_feats.view(batch_size, num_nodes, self.num_heads, -1)

        # We need to calculate the attention logits for every edge in the adjacency matrix
        # Doing this on all possible combinations of nodes is very expensive
        # => Create a tensor of [W*h_i||W*h_j] with i and j being the indices of all edges
        edges = adj_matrix.nonzero(as_tuple=False)  # Returns indices where the adjacency matrix is not 0 => edges
        node_feats_flat = node_feats.view(batch_size * num_nodes, self.num_heads, -1)
        edge_indices_row = edges[:, 0] * num_nodes + edges[:, 1]
        edge_indices_col = edges[:, 0] * num_nodes + edges[:, 2]
        a_input = torch.cat([
            torch.index_select(input=node_feats_flat, index=edge_indices_row, dim=0),
            torch.index_select(input=node_feats_flat, index=edge_indices_col, dim=0)
        ], dim=-1)  # Index select returns a tensor with node_feats_flat being indexed at the desired positions along dim=0

        # Calculate attention MLP output (independent for each head)
        attn_logits = torch.einsum('bhc,hc->bh', a_input, self.a)
        attn_logits = self.leakyrelu(attn_logits)

        # Map list of attention values back into a matrix
        attn_matrix = attn_logits.new_zeros(adj_matrix.shape + (self.num_heads,)).fill_(-9e15)
        attn_matrix[adj_matrix[..., None].repeat(1, 1, 1, self.num_heads) == 1] = attn_logits.reshape(-1)

        # Weighted average of attention
        attn_probs = F.softmax(attn_matrix, dim=2)
        if print_attn_probs:
            print("Attention probs\n", attn_probs.permute(0, 3, 1, 2))
            self.last_attn_probs = attn_probs.permute(0, 3, 1, 2)
        node_feats = torch.einsum('bijh,bjhc->bihc', attn_probs, node_feats)

        # If heads should be concatenated, we can do this by reshaping. Otherwise, take mean
        if self.concat_heads:
            node_feats = node_feats.reshape(batch_size, num_nodes, -1)
        else:
            node_feats = node_feats.mean(dim=2)

        return node_feats


layer = GATLayer(2, 2, num_heads=2)
show("gat_a_shape", list(layer.a.shape))
show("gat_a_bound_ok", float(layer.a.abs().max() <= 1.414 * (6 / (2 + 2)) ** 0.5))
layer.projection.weight.data = torch.Tensor([[1., 0.], [0., 1.]])
layer.projection.bias.data = torch.Tensor([0., 0.])
layer.a.data = torch.Tensor([[-0.2, 0.3], [0.1, -0.1]])

with torch.no_grad():
    out_feats = layer(node_feats, adj_matrix, print_attn_probs=True)

show("GAT_attention_probs", layer.last_attn_probs)
show("GAT_output_features", out_feats)

# the same two graphs stacked in a batch, heads averaged, and the backward pass
layer_mean = GATLayer(2, 2, num_heads=2, concat_heads=False)
numpy_init(torch, layer_mean, seed=1)
with torch.no_grad():
    layer_mean.a.copy_(torch.Tensor([[-0.2, 0.3, 0.5, 0.1], [0.1, -0.1, 0.2, -0.4]]))
batch_feats = torch.cat([node_feats, node_feats.flip(1)], dim=0).requires_grad_()
batch_adj = torch.cat([adj_matrix, torch.ones(1, 4, 4)], dim=0)
out = layer_mean(batch_feats, batch_adj)
show("GAT_mean_heads", out)
out.pow(2).sum().backward()
show("GAT_grad_a", layer_mean.a.grad)
show("GAT_grad_input", batch_feats.grad)
show("GAT_grad_projection", layer_mean.projection.weight.grad)


# --- node-level tasks on a generated graph of two communities
rng = np.random.default_rng(0)
num_nodes, num_feats, num_classes = 60, 8, 2
y_np = np.repeat([0, 1], num_nodes // 2)
p_in, p_out = 0.25, 0.03
probs = np.where(y_np[:, None] == y_np[None, :], p_in, p_out)
upper = np.triu(rng.random((num_nodes, num_nodes)) < probs, 1)
adj_np = (upper | upper.T | np.eye(num_nodes, dtype=bool)).astype(np.float32)
# features only weakly informative: the graph has to help
x_np = rng.normal(size=(num_nodes, num_feats)).astype(np.float32)
x_np[:, 0] += 0.4 * (2 * y_np - 1)
split = rng.permutation(num_nodes)

x = torch.from_numpy(x_np).unsqueeze(0)
adj = torch.from_numpy(adj_np).unsqueeze(0)
y = torch.from_numpy(y_np)
train_mask = torch.zeros(num_nodes, dtype=torch.bool)
val_mask = torch.zeros(num_nodes, dtype=torch.bool)
test_mask = torch.zeros(num_nodes, dtype=torch.bool)
train_mask[torch.from_numpy(split[:20])] = True
val_mask[torch.from_numpy(split[20:35])] = True
test_mask[torch.from_numpy(split[35:])] = True
show("mask_sums", [train_mask.sum(), val_mask.sum(), test_mask.sum()])
show("degrees", adj.sum(dim=-1, keepdims=True).view(-1)[:12])

gnn_layer_by_name = {
    "GCN": GCNLayer,
    "GAT": GATLayer,
}


class GNNModel(nn.Module):

    def __init__(self, c_in, c_hidden, c_out, num_layers=2, layer_name="GCN", dp_rate=0.0, **kwargs):
        super().__init__()
        gnn_layer = gnn_layer_by_name[layer_name]

        layers = []
        in_channels, out_channels = c_in, c_hidden
        for l_idx in range(num_layers - 1):
            layers += [
                gnn_layer(c_in=in_channels, c_out=out_channels, **kwargs),
                nn.ReLU(inplace=True),
                nn.Dropout(dp_rate)
            ]
            in_channels = c_hidden
        layers += [gnn_layer(c_in=in_channels, c_out=c_out, **kwargs)]
        self.layers = nn.ModuleList(layers)

    def forward(self, x, adj_matrix):
        for l in self.layers:
            # For graph layers, we need to add the "adjacency" input.
            # For other layers, we only give "x" as input
            if isinstance(l, (GCNLayer, GATLayer)):
                x = l(x, adj_matrix)
            else:
                x = l(x)
        return x


class MLPModel(nn.Module):

    def __init__(self, c_in, c_hidden, c_out, num_layers=2, dp_rate=0.0):
        super().__init__()
        layers = []
        in_channels, out_channels = c_in, c_hidden
        for l_idx in range(num_layers - 1):
            layers += [
                nn.Linear(in_channels, out_channels),
                nn.ReLU(inplace=True),
                nn.Dropout(dp_rate)
            ]
            in_channels = c_hidden
        layers += [nn.Linear(in_channels, c_out)]
        self.layers = nn.Sequential(*layers)

    def forward(self, x, *args, **kwargs):
        return self.layers(x)


def forward_step(model, mode="train"):
    x_out = model(x, adj).squeeze(0)
    if mode == "train":
        mask = train_mask
    elif mode == "val":
        mask = val_mask
    elif mode == "test":
        mask = test_mask
    else:
        assert False, f"Unknown forward mode: {mode}"

    loss = F.cross_entropy(x_out[mask], y[mask])
    acc = (x_out[mask].argmax(dim=-1) == y[mask]).sum().float() / mask.sum()
    return loss, acc


def train_node_classifier(model_name, seed, **model_kwargs):
    if model_name == "MLP":
        model = MLPModel(c_in=num_feats, c_out=num_classes, **model_kwargs)
    else:
        model = GNNModel(c_in=num_feats, c_out=num_classes, layer_name=model_name, **model_kwargs)
    numpy_init(torch, model, seed=seed)
    optimizer = optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=2e-3)
    losses, val_accs = [], []
    for epoch in range(40):
        model.train()
        optimizer.zero_grad()
        loss, acc = forward_step(model, "train")
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        if epoch % 10 == 9:
            model.eval()
            with torch.no_grad():
                val_accs.append(forward_step(model, "val")[1].item())
    model.eval()
    with torch.no_grad():
        _, train_acc = forward_step(model, "train")
        _, test_acc = forward_step(model, "test")
    show(f"{model_name}:losses", losses[::5])
    show(f"{model_name}:val_accs", val_accs)
    show(f"{model_name}:accs", [train_acc, test_acc])
    return model


train_node_classifier("MLP", seed=1, c_hidden=16, num_layers=2, dp_rate=0.0)
gcn = train_node_classifier("GCN", seed=2, c_hidden=16, num_layers=2, dp_rate=0.0)
gat = train_node_classifier("GAT", seed=3, c_hidden=16, num_layers=2, dp_rate=0.0, num_heads=2)
show("gat_params", [list(p.shape) for p in gat.parameters()])


# --- graph-level classification: a batch of padded graphs, node features mean-pooled
n_graphs, max_nodes = 16, 7
sizes = rng.integers(4, max_nodes + 1, size=n_graphs)
graph_y = rng.integers(0, 2, size=n_graphs)
feats = np.zeros((n_graphs, max_nodes, 3), np.float32)
adjs = np.zeros((n_graphs, max_nodes, max_nodes), np.float32)
node_mask_np = np.zeros((n_graphs, max_nodes), np.float32)
for g, (n, label) in enumerate(zip(sizes, graph_y)):
    node_mask_np[g, :n] = 1
    feats[g, :n] = rng.normal(size=(n, 3)) + (0.8 if label else -0.8) * np.array([1, 0, 0])
    if label:  # rings
        for i in range(n):
            adjs[g, i, (i + 1) % n] = adjs[g, (i + 1) % n, i] = 1
    else:  # stars
        adjs[g, 0, 1:n] = adjs[g, 1:n, 0] = 1
    adjs[g, np.arange(n), np.arange(n)] = 1
for g in range(n_graphs):  # padding nodes keep a self-loop, so no division by zero
    pad = node_mask_np[g] == 0
    adjs[g, pad, pad] = 1
gx, gadj = torch.from_numpy(feats), torch.from_numpy(adjs)
gmask = torch.from_numpy(node_mask_np)
gy = torch.from_numpy(graph_y).float()


class GraphGNNModel(nn.Module):

    def __init__(self, c_in, c_hidden, c_out, dp_rate_linear=0.5, **kwargs):
        super().__init__()
        self.GNN = GNNModel(c_in=c_in, c_hidden=c_hidden, c_out=c_hidden, **kwargs)
        self.head = nn.Sequential(
            nn.Dropout(dp_rate_linear),
            nn.Linear(c_hidden, c_out)
        )

    def forward(self, x, adj_matrix, node_mask):
        x = self.GNN(x, adj_matrix)
        # global mean pool over the real nodes of each graph
        x = (x * node_mask.unsqueeze(-1)).sum(dim=1) / node_mask.sum(dim=1, keepdim=True)
        x = self.head(x)
        return x


graph_model = GraphGNNModel(c_in=3, c_hidden=16, c_out=1, dp_rate_linear=0.0, num_layers=3, layer_name="GCN")
numpy_init(torch, graph_model, seed=4)
loss_module = nn.BCEWithLogitsLoss()
optimizer = optim.AdamW(graph_model.parameters(), lr=1e-2, weight_decay=0.0)
graph_losses = []
for epoch in range(30):
    graph_model.train()
    optimizer.zero_grad()
    logits = graph_model(gx, gadj, gmask).squeeze(dim=-1)
    loss = loss_module(logits, gy)
    loss.backward()
    optimizer.step()
    graph_losses.append(loss.item())
graph_model.eval()
with torch.no_grad():
    preds = (graph_model(gx, gadj, gmask).squeeze(dim=-1) > 0).float()
show("graph_losses", graph_losses[::3])
show("graph_acc", (preds == gy).sum().float() / preds.shape[0])
