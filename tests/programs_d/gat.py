"""A graph attention network as PyTorch's examples/gat/main.py writes it: a
GraphAttentionLayer with nn.Parameter weights W and a (xavier_normal_, drawn here by NumPy),
torch.mm(h, self.W), F.dropout(training=self.training), the heads split by view/permute,
source and target scores by torch.matmul with slices of ``a`` and a broadcast add with ``.mT``,
LeakyReLU(0.2), non-edges masked by torch.where(adj_mat > 0, e, -9e15 * ones_like(e)),
F.softmax(dim=-1), heads concatenated (permute/contiguous/view) or averaged (mean(dim=0));
a 2-layer GAT with F.elu and log_softmax, NLLLoss over boolean train/val masks, Adam with
weight_decay; the adjacency filled by index assignment. A random 12-node graph with self
loops; dropout 0 (the calls kept). Also the pyGAT variant: heads as a ModuleList joined by
torch.cat, non-edges masked by masked_fill(float('-inf')).

    python gat.py [torch|numbagrad]
"""
import numpy as np

from _common import BACKEND, show

if BACKEND == "torch":
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
else:
    import numbagrad as torch
    import numbagrad.nn as nn
    import numbagrad.nn.functional as F

init_rng = np.random.default_rng(3)


def xavier_normal_(tensor, gain=1.0):
    """nn.init.xavier_normal_, drawn by NumPy (PyTorch's fans)."""
    shape = tuple(tensor.shape)
    receptive = int(np.prod(shape[2:])) if len(shape) > 2 else 1
    fan_in, fan_out = shape[1] * receptive, shape[0] * receptive
    std = gain * np.sqrt(2.0 / float(fan_in + fan_out))
    with torch.no_grad():
        return tensor.copy_(torch.from_numpy(init_rng.normal(0, std, shape).astype(np.float32)))


class GraphAttentionLayer(nn.Module):
    def __init__(self, in_features: int, out_features: int, n_heads: int, concat: bool = False,
                 dropout: float = 0.4, leaky_relu_slope: float = 0.2):
        super(GraphAttentionLayer, self).__init__()

        self.n_heads = n_heads # Number of attention heads
        self.concat = concat # wether to concatenate the final attention heads
        self.dropout = dropout # Dropout rate

        if concat: # concatenating the attention heads
            self.out_features = out_features # Number of output features per node
            assert out_features % n_heads == 0 # Ensure that out_features is a multiple of n_heads
            self.n_hidden = out_features // n_heads
        else: # averaging output over the attention heads (Used in the main paper)
            self.n_hidden = out_features

        #  A shared linear transformation, parametrized by a weight matrix W is applied to every node
        #  Initialize the weight matrix W
        self.W = nn.Parameter(torch.empty(size=(in_features, self.n_hidden * n_heads)))

        # Initialize the attention weights a
        self.a = nn.Parameter(torch.empty(size=(n_heads, 2 * self.n_hidden, 1)))

        self.leakyrelu = nn.LeakyReLU(leaky_relu_slope) # LeakyReLU activation function
        self.softmax = nn.Softmax(dim=1) # softmax activation function to the attention coefficients

        self.reset_parameters() # Reset the parameters

    def reset_parameters(self):
        """
        Reinitialize learnable parameters.
        """
        xavier_normal_(self.W)
        xavier_normal_(self.a)

    def _get_attention_scores(self, h_transformed: torch.Tensor):

        source_scores = torch.matmul(h_transformed, self.a[:, :self.n_hidden, :])
        target_scores = torch.matmul(h_transformed, self.a[:, self.n_hidden:, :])

        # broadcast add
        # (n_heads, n_nodes, 1) + (n_heads, 1, n_nodes) = (n_heads, n_nodes, n_nodes)
        e = source_scores + target_scores.mT
        return self.leakyrelu(e)

    def forward(self,  h: torch.Tensor, adj_mat: torch.Tensor):
        n_nodes = h.shape[0]

        # Apply linear transformation to node feature -> W h
        # output shape (n_nodes, n_hidden * n_heads)
        h_transformed = torch.mm(h, self.W)
        h_transformed = F.dropout(h_transformed, self.dropout, training=self.training)

        # splitting the heads by reshaping the tensor and putting heads dim first
        # output shape (n_heads, n_nodes, n_hidden)
        h_transformed = h_transformed.view(n_nodes, self.n_heads, self.n_hidden).permute(1, 0, 2)

        # getting the attention scores
        # output shape (n_heads, n_nodes, n_nodes)
        e = self._get_attention_scores(h_transformed)

        # Set the attention score for non-existent edges to -9e15 (MASKING NON-EXISTENT EDGES)
        connectivity_mask = -9e15 * torch.ones_like(e)
        e = torch.where(adj_mat > 0, e, connectivity_mask) # masked attention scores

        # attention coefficients are computed as a softmax over the rows
        # for each column j in the attention score matrix e
        attention = F.softmax(e, dim=-1)
        attention = F.dropout(attention, self.dropout, training=self.training)

        # final node embeddings are computed as a weighted average of the features of its neighbors
        h_prime = torch.matmul(attention, h_transformed)

        # concatenating/averaging the attention heads
        # output shape (n_nodes, out_features)
        if self.concat:
            h_prime = h_prime.permute(1, 0, 2).contiguous().view(n_nodes, self.out_features)
        else:
            h_prime = h_prime.mean(dim=0)

        return h_prime


class GAT(nn.Module):
    def __init__(self, in_features, n_hidden, n_heads, num_classes, concat=False, dropout=0.4,
                 leaky_relu_slope=0.2):
        super(GAT, self).__init__()

        # Define the Graph Attention layers
        self.gat1 = GraphAttentionLayer(
            in_features=in_features, out_features=n_hidden, n_heads=n_heads,
            concat=concat, dropout=dropout, leaky_relu_slope=leaky_relu_slope
            )

        self.gat2 = GraphAttentionLayer(
            in_features=n_hidden, out_features=num_classes, n_heads=1,
            concat=False, dropout=dropout, leaky_relu_slope=leaky_relu_slope
            )

    def forward(self, input_tensor: torch.Tensor , adj_mat: torch.Tensor):
        # Apply the first Graph Attention layer
        x = self.gat1(input_tensor, adj_mat)
        x = F.elu(x) # Apply ELU activation function to the output of the first layer

        # Apply the second Graph Attention layer
        x = self.gat2(x, adj_mat)

        return F.log_softmax(x, dim=1) # Apply log softmax activation function


# pyGAT (Diego999/pyGAT): one module per head, joined by torch.cat
class SpGraphHead(nn.Module):
    def __init__(self, in_features, out_features, alpha=0.2, concat=True):
        super().__init__()
        self.concat = concat
        self.W = nn.Parameter(torch.empty(size=(in_features, out_features)))
        self.a = nn.Parameter(torch.empty(size=(2*out_features, 1)))
        xavier_normal_(self.W, gain=1.414)
        xavier_normal_(self.a, gain=1.414)
        self.out_features = out_features
        self.leakyrelu = nn.LeakyReLU(alpha)

    def forward(self, h, adj):
        Wh = h.mm(self.W)
        Wh1 = torch.matmul(Wh, self.a[:self.out_features, :])
        Wh2 = torch.matmul(Wh, self.a[self.out_features:, :])
        e = self.leakyrelu(Wh1 + Wh2.T)
        attention = e.masked_fill(adj == 0, float('-inf'))
        attention = F.softmax(attention, dim=1)
        attention = F.dropout(attention, 0.0, training=self.training)
        h_prime = torch.matmul(attention, Wh)
        return F.elu(h_prime) if self.concat else h_prime


class PyGAT(nn.Module):
    def __init__(self, nfeat, nhid, nclass, nheads):
        super().__init__()
        self.attentions = nn.ModuleList([SpGraphHead(nfeat, nhid) for _ in range(nheads)])
        self.out_att = SpGraphHead(nhid * nheads, nclass, concat=False)

    def forward(self, x, adj):
        x = F.dropout(x, 0.0, training=self.training)
        x = torch.cat([att(x, adj) for att in self.attentions], dim=1)
        x = F.elu(self.out_att(x, adj))
        return F.log_softmax(x, dim=1)


def train_iter(epoch, model, optimizer, criterion, input, target, mask_train, mask_val):
    model.train()
    optimizer.zero_grad()
    # Forward pass
    output = model(*input)
    loss = criterion(output[mask_train], target[mask_train]) # Compute the loss using the training mask
    loss.backward()
    optimizer.step()

    # Evaluate the model performance on training and validation sets
    loss_train, acc_train = test(model, criterion, input, target, mask_train)
    loss_val, acc_val = test(model, criterion, input, target, mask_val)
    print(f'Epoch: {epoch:04d} loss_train: {loss_train:.4f} acc_train: {acc_train:.4f}'
          f' loss_val: {loss_val:.4f} acc_val: {acc_val:.4f}')
    return loss.item(), loss_train, acc_train, loss_val, acc_val


def test(model, criterion, input, target, mask):
    model.eval()
    with torch.no_grad():
        output = model(*input)
        output, target = output[mask], target[mask]

        loss = criterion(output, target)
        acc = (output.argmax(dim=1) == target).float().sum() / len(target)
    return loss.item(), acc.item()


# a random 12-node graph: 3 classes, features near the class centre, symmetric edges, self loops
rng = np.random.default_rng(0)
n_nodes, n_feat, n_classes = 12, 6, 3
labels = torch.from_numpy(rng.integers(0, n_classes, n_nodes))
centres = rng.normal(size=(n_classes, n_feat))
features = torch.from_numpy((centres[labels.numpy()] + rng.normal(size=(n_nodes, n_feat)))
                            .astype(np.float32))
pairs = np.array([(i, j) for i in range(n_nodes) for j in range(i + 1, n_nodes)
                  if rng.random() < 0.25])
edges = torch.from_numpy(pairs)
adj_mat = torch.eye(n_nodes)
adj_mat[edges[:, 0], edges[:, 1]] = 1
adj_mat[edges[:, 1], edges[:, 0]] = 1
perm = torch.from_numpy(rng.permutation(n_nodes))
mask_train = torch.zeros(n_nodes, dtype=torch.bool)
mask_train[perm[:8]] = True
mask_val = ~mask_train

gat_net = GAT(in_features=n_feat, n_hidden=8, n_heads=2, num_classes=n_classes, concat=True,
              dropout=0.0, leaky_relu_slope=0.2)
optimizer = torch.optim.Adam(params=gat_net.parameters(), lr=0.05, weight_decay=5e-4)
criterion = nn.NLLLoss()

history = []
for epoch in range(1, 6):
    history.append(train_iter(epoch, gat_net, optimizer, criterion, (features, adj_mat), labels,
                              mask_train, mask_val))
show('adj_sum', [adj_mat.sum(), (adj_mat == adj_mat.T).all()])
show('history', history)
show('W1', gat_net.gat1.W[:2])
show('a1_grad', gat_net.gat1.a.grad)
show('W2_grad', gat_net.gat2.W.grad[:2])
show('adam_exp_avg_sq', optimizer.state[gat_net.gat2.a]['exp_avg_sq'])
gat_net.eval()
with torch.no_grad():
    out = gat_net(features, adj_mat)
show('log_probs', out[:4])
show('preds', out.argmax(dim=1))

# pyGAT: torch.cat of heads, masked_fill(-inf)
py_net = PyGAT(n_feat, 4, n_classes, nheads=3)
py_opt = torch.optim.Adam(py_net.parameters(), lr=0.05, weight_decay=5e-4)
py_losses = []
for epoch in range(5):
    py_net.train()
    py_opt.zero_grad()
    output = py_net(features, adj_mat)
    loss_train = F.nll_loss(output[mask_train], labels[mask_train])
    loss_train.backward()
    py_opt.step()
    py_losses.append(loss_train.item())
show('pygat_losses', py_losses)
show('pygat_head_grad', py_net.attentions[1].a.grad)
with torch.no_grad():
    att = py_net.attentions[0]
    Wh = features.mm(att.W)
    scores = att.leakyrelu(torch.matmul(Wh, att.a[:4]) + torch.matmul(Wh, att.a[4:]).T)
    a_inf = F.softmax(scores.masked_fill(adj_mat == 0, float('-inf')), dim=1)
    a_where = F.softmax(torch.where(adj_mat > 0, scores, -9e15), dim=1)
show('mask_agree', [(a_inf - a_where).abs().max(), (a_inf[adj_mat == 0] == 0).all()])
show('attention_row0', a_inf[0])
