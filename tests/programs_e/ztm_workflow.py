"""Zero to Mastery "Learn PyTorch for Deep Learning", notebooks 01 "PyTorch Workflow" and 02 "Neural
Network Classification", on generated data: the straight line ``weight * X + bias`` from
``torch.arange(...).unsqueeze(dim=1)``; LinearRegressionModel with ``nn.Parameter(torch.randn(1,
dtype=torch.float), requires_grad=True)`` (its seed-42 values loaded through ``load_state_dict``),
predictions under ``torch.inference_mode()``, the train/test loop with L1Loss and SGD and
``loss.detach().numpy()`` records, the state dict saved to a ``pathlib`` path with
``torch.save(obj=..., f=...)``, loaded into a new model and compared by ``==``;
LinearRegressionModelV2 on ``nn.Linear`` with device-agnostic code (``"cuda" if
torch.cuda.is_available() else "cpu"``, ``next(model.parameters()).device``); then circles
classification (``torch.from_numpy(X).type(torch.float)``, BCEWithLogitsLoss,
``torch.round(torch.sigmoid(logits))``, ``accuracy_fn`` by ``torch.eq(...).sum().item()``), the
linear-only model that cannot learn them, CircleModelV2 with ReLU, ReLU and sigmoid written with
``torch.maximum(torch.tensor(0), x)``, and the multi-class blob model (``type(torch.LongTensor)``,
``torch.softmax(logits, dim=1).argmax(dim=1)``).

    python ztm_workflow.py [torch|numbagrad]
"""
import tempfile
from pathlib import Path

import numpy as np

from _common import BACKEND, numpy_init, show

if BACKEND == "torch":
    import torch
    from torch import nn
else:
    import numbagrad as torch
    from numbagrad import nn

# --- 01. data (preparing and loading)
# Create *known* parameters
weight = 0.7
bias = 0.3

# Create data
start = 0
end = 1
step = 0.02
X = torch.arange(start, end, step).unsqueeze(dim=1)
y = weight * X + bias
show("X[:10]", X[:10])
show("y[:10]", y[:10])
show("len_X_y", [len(X), len(y)])

# Create train/test split
train_split = int(0.8 * len(X))  # 80% of data used for training set, 20% for testing
X_train, y_train = X[:train_split], y[:train_split]
X_test, y_test = X[train_split:], y[train_split:]
show("split_lengths", [len(X_train), len(y_train), len(X_test), len(y_test)])


# --- 2. build model
# Create a Linear Regression model class
class LinearRegressionModel(nn.Module):  # <- almost everything in PyTorch is a nn.Module (think of this as neural network lego blocks)
    def __init__(self):
        super().__init__()
        self.weights = nn.Parameter(torch.randn(1,  # <- start with random weights (this will get adjusted as the model learns)
                                                dtype=torch.float),  # <- PyTorch loves float32 by default
                                    requires_grad=True)  # <- can we update this value with gradient descent?)

        self.bias = nn.Parameter(torch.randn(1,  # <- start with random bias (this will get adjusted as the model learns)
                                             dtype=torch.float),  # <- PyTorch loves float32 by default
                                 requires_grad=True)  # <- can we update this value with gradient descent?))

    # Forward defines the computation in the model
    def forward(self, x: torch.Tensor) -> torch.Tensor:  # <- "x" is the input data (e.g. training/testing features)
        return self.weights * x + self.bias  # <- this is the linear regression formula (y = m*x + b)


# Set manual seed since nn.Parameter are randomly initialized
torch.manual_seed(42)

# Create an instance of the model (this is a subclass of nn.Module that contains nn.Parameter(s))
model_0 = LinearRegressionModel()
# (the notebook's values after torch.manual_seed(42), the same in both libraries)
model_0.load_state_dict({"weights": torch.tensor([0.3367]), "bias": torch.tensor([0.1288])})

# Check the nn.Parameter(s) within the nn.Module subclass we created
show("parameters", list(model_0.parameters()))
show("state_dict_keys", [k == n for k, n in zip(model_0.state_dict(), ["weights", "bias"])])

# Make predictions with model
with torch.inference_mode():
    y_preds = model_0(X_test)
show("y_preds", y_preds)
show("y_preds_requires_grad", float(y_preds.requires_grad))
show("y_preds_is_inference", float(y_preds.is_inference()))
show("test_error", y_test - y_preds)

# --- 3. train model
# Create the loss function
loss_fn = nn.L1Loss()  # MAE loss is same as L1Loss

# Create the optimizer
optimizer = torch.optim.SGD(params=model_0.parameters(),  # parameters of target model to optimize
                            lr=0.01)  # learning rate (how much the optimizer should change parameters at each step, higher=more (less stable), lower=less (might take a long time))

torch.manual_seed(42)

# Set the number of epochs (how many times the model will pass over the training data)
epochs = 100

# Create empty loss lists to track values
train_loss_values = []
test_loss_values = []
epoch_count = []

for epoch in range(epochs):
    # Training

    # Put model in training mode (this is the default state of a model)
    model_0.train()

    # 1. Forward pass on train data using the forward() method inside
    y_pred = model_0(X_train)
    # print(y_pred)

    # 2. Calculate the loss (how different are our models predictions to the ground truth)
    loss = loss_fn(y_pred, y_train)

    # 3. Zero grad of the optimizer
    optimizer.zero_grad()

    # 4. Loss backwards
    loss.backward()

    # 5. Progress the optimizer
    optimizer.step()

    # Testing

    # Put the model in evaluation mode
    model_0.eval()

    with torch.inference_mode():
        # 1. Forward pass on test data
        test_pred = model_0(X_test)

        # 2. Caculate loss on test data
        test_loss = loss_fn(test_pred, y_test.type(torch.float))  # predictions come in torch.float datatype, so comparisons need to be done with tensors of the same type

        # Print out what's happening
        if epoch % 10 == 0:
            epoch_count.append(epoch)
            train_loss_values.append(loss.detach().numpy())
            test_loss_values.append(test_loss.detach().numpy())
            print(f"Epoch: {epoch} | MAE Train Loss: {loss} | MAE Test Loss: {test_loss} ")

show("train_loss_values", train_loss_values)
show("test_loss_values", test_loss_values)
show("epoch_count", epoch_count)
show("learned_state_dict", list(model_0.state_dict().values()))

# 1. Set the model in evaluation mode
model_0.eval()

# 2. Setup the inference mode context manager
with torch.inference_mode():
    # 3. Make sure the calculations are done with the model and data on the same device
    # in our case, we haven't setup device-agnostic code yet so our data and model are
    # on the CPU by default.
    # model_0.to(device)
    # X_test = X_test.to(device)
    y_preds = model_0(X_test)
show("y_preds_trained", y_preds)

# --- 5. saving and loading a PyTorch model
# 1. Create models directory
tmp_dir = tempfile.TemporaryDirectory()  # (removed when the program ends)
MODEL_PATH = Path(tmp_dir.name) / "models"
MODEL_PATH.mkdir(parents=True, exist_ok=True)

# 2. Create model save path
MODEL_NAME = "01_pytorch_workflow_model_0.pth"
MODEL_SAVE_PATH = MODEL_PATH / MODEL_NAME

# 3. Save the model state dict
print(f"Saving model to: {MODEL_SAVE_PATH}")
torch.save(obj=model_0.state_dict(),  # only saving the state_dict() only saves the models learned parameters
           f=MODEL_SAVE_PATH)

# Instantiate a new instance of our model (this will be instantiated with random weights)
loaded_model_0 = LinearRegressionModel()

# Load the state_dict of our saved model (this will update the new instance of our model with trained weights)
loaded_model_0.load_state_dict(torch.load(f=MODEL_SAVE_PATH))

# 1. Put the loaded model into evaluation mode
loaded_model_0.eval()

# 2. Use the inference mode context manager to make predictions
with torch.inference_mode():
    loaded_model_preds = loaded_model_0(X_test)  # perform a forward pass on the test data with the loaded model

# Compare previous model predictions with loaded model predictions (these should be the same)
show("loaded_equal", y_preds == loaded_model_preds)

# --- 6. putting it all together
# Setup device agnostic code
device = "cuda" if torch.cuda.is_available() else "cpu"
device = "cpu"  # (the comparison runs on the CPU)
print(f"Using device: {device}")


# Subclass nn.Module to make our model
class LinearRegressionModelV2(nn.Module):
    def __init__(self):
        super().__init__()
        # Use nn.Linear() for creating the model parameters
        self.linear_layer = nn.Linear(in_features=1,
                                      out_features=1)

    # Define the forward computation (input data x flows through nn.Linear())
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear_layer(x)


# Set the manual seed when creating the model (this isn't always need but is used for demonstrative purposes, try commenting it out and seeing what happens)
torch.manual_seed(42)
model_1 = LinearRegressionModelV2()
model_1.load_state_dict({"linear_layer.weight": torch.tensor([[0.7645]]),
                         "linear_layer.bias": torch.tensor([0.8300])})
show("model_1_state_dict", list(model_1.state_dict().values()))
show("model_1_device_is_cpu", float(next(model_1.parameters()).device.type == "cpu"))

# Set model to GPU if it's available, otherwise it'll default to CPU
model_1.to(device)  # the device variable was set above to be "cuda" if available or "cpu" if not
show("model_1_device_still_cpu", float(str(next(model_1.parameters()).device) == "cpu"))

# Create loss function
loss_fn = nn.L1Loss()

# Create optimizer
optimizer = torch.optim.SGD(params=model_1.parameters(),  # optimize newly created model's parameters
                            lr=0.01)

torch.manual_seed(42)

# Set the number of epochs
epochs = 300

# Put data on the available device
# Without this, error will happen (not all model/data on device)
X_train = X_train.to(device)
X_test = X_test.to(device)
y_train = y_train.to(device)
y_test = y_test.to(device)

v2_losses = []
for epoch in range(epochs):
    ### Training
    model_1.train()  # train mode is on by default after construction

    # 1. Forward pass
    y_pred = model_1(X_train)

    # 2. Calculate loss
    loss = loss_fn(y_pred, y_train)

    # 3. Zero grad optimizer
    optimizer.zero_grad()

    # 4. Loss backward
    loss.backward()

    # 5. Step the optimizer
    optimizer.step()

    ### Testing
    model_1.eval()  # put the model in evaluation mode for testing (inference)
    # 1. Forward pass
    with torch.inference_mode():
        test_pred = model_1(X_test)

        # 2. Calculate the loss
        test_loss = loss_fn(test_pred, y_test)

    if epoch % 50 == 0:
        v2_losses.append([loss.item(), test_loss.item()])
        print(f"Epoch: {epoch} | Train loss: {loss} | Test loss: {test_loss}")
show("v2_losses", v2_losses)
show("v2_state_dict", list(model_1.state_dict().values()))
show("v2_weight_close_to_true", float(abs(model_1.state_dict()["linear_layer.weight"].item() - weight) < 0.05))

# --- 02. neural network classification: circles
n_samples = 400
rng = np.random.default_rng(42)
# make_circles(n_samples, noise=0.03, random_state=42)
angles = rng.uniform(0, 2 * np.pi, n_samples)
y_np = np.arange(n_samples) % 2
radii = np.where(y_np == 1, 0.8, 1.0)
X_np = np.stack([radii * np.cos(angles), radii * np.sin(angles)], axis=1) + rng.normal(0, 0.03, (n_samples, 2))

# Turn data into tensors
# Otherwise this causes issues with computations later on
X = torch.from_numpy(X_np).type(torch.float)
y = torch.from_numpy(y_np).type(torch.float)
show("circles_first5", [X[:5], y[:5]])
show("circles_dtypes", [X.dtype == torch.float32, y.dtype == torch.float32])

# Split data into train and test sets (train_test_split(X, y, test_size=0.2, random_state=42))
perm = torch.from_numpy(rng.permutation(n_samples))
X, y = X[perm], y[perm]
X_train, X_test, y_train, y_test = X[:320], X[320:], y[:320], y[320:]
show("circles_split", [len(X_train), len(X_test), len(y_train), len(y_test)])


# 1. Construct a model class that subclasses nn.Module
class CircleModelV0(nn.Module):
    def __init__(self):
        super().__init__()
        # 2. Create 2 nn.Linear layers capable of handling X and y input and output shapes
        self.layer_1 = nn.Linear(in_features=2, out_features=5)  # takes in 2 features (X), produces 5 features
        self.layer_2 = nn.Linear(in_features=5, out_features=1)  # takes in 5 features, produces 1 feature (y)

    # 3. Define a forward method containing the forward pass computation
    def forward(self, x):
        # Return the output of layer_2, a single feature, the same shape as y
        return self.layer_2(self.layer_1(x))  # computation goes through layer_1 first then the output of layer_1 goes through layer_2


# 4. Create an instance of the model and send it to target device
model_0 = CircleModelV0().to(device)
numpy_init(torch, model_0, seed=0)

# Replicate CircleModelV0 with nn.Sequential
model_0_seq = nn.Sequential(
    nn.Linear(in_features=2, out_features=5),
    nn.Linear(in_features=5, out_features=1)
).to(device)
model_0_seq.load_state_dict({k.replace("layer_1", "0").replace("layer_2", "1"): v
                             for k, v in model_0.state_dict().items()})

# Make predictions with the model
with torch.inference_mode():
    untrained_preds = model_0(X_test.to(device))
show("untrained_preds_shape", list(untrained_preds.shape))
show("untrained_preds", untrained_preds[:10])
show("sequential_same", float(torch.equal(untrained_preds, model_0_seq(X_test).detach())))

# Create a loss function
# loss_fn = nn.BCELoss() # BCELoss = no sigmoid built-in
loss_fn = nn.BCEWithLogitsLoss()  # BCEWithLogitsLoss = sigmoid built-in

# Create an optimizer
optimizer = torch.optim.SGD(params=model_0.parameters(),
                            lr=0.1)


# Calculate accuracy (a classification metric)
def accuracy_fn(y_true, y_pred):
    correct = torch.eq(y_true, y_pred).sum().item()  # torch.eq() calculates where two tensors are equal
    acc = (correct / len(y_pred)) * 100
    return acc


# View the frist 5 outputs of the forward pass on the test data
y_logits = model_0(X_test.to(device))[:5]
show("y_logits", y_logits)
# Use sigmoid on model logits
y_pred_probs = torch.sigmoid(y_logits)
show("y_pred_probs", y_pred_probs)
# Find the predicted labels (round the prediction probabilities)
y_preds = torch.round(y_pred_probs)

# In full (logits -> prediction probabilities -> prediction labels)
y_pred_labels = torch.round(torch.sigmoid(model_0(X_test.to(device))[:5]))

# Check for equality
show("round_equal", torch.eq(y_preds.squeeze(), y_pred_labels.squeeze()))

# Get rid of extra dimension
show("y_preds_squeezed", y_preds.squeeze())


def train_binary(model, epochs, tag, lr=0.1):
    optimizer = torch.optim.SGD(params=model.parameters(), lr=lr)
    torch.manual_seed(42)
    history = []
    for epoch in range(epochs):
        ### Training
        model.train()

        # 1. Forward pass (model outputs raw logits)
        y_logits = model(X_train).squeeze()  # squeeze to remove extra `1` dimensions, this won't work unless model and data are on same device
        y_pred = torch.round(torch.sigmoid(y_logits))  # turn logits -> pred probs -> pred labls

        # 2. Calculate loss/accuracy
        # loss = loss_fn(torch.sigmoid(y_logits), # Using nn.BCELoss you need torch.sigmoid()
        #                y_train)
        loss = loss_fn(y_logits,  # Using nn.BCEWithLogitsLoss works with raw logits
                       y_train)
        acc = accuracy_fn(y_true=y_train,
                          y_pred=y_pred)

        # 3. Optimizer zero grad
        optimizer.zero_grad()

        # 4. Loss backwards
        loss.backward()

        # 5. Optimizer step
        optimizer.step()

        ### Testing
        model.eval()
        with torch.inference_mode():
            # 1. Forward pass
            test_logits = model(X_test).squeeze()
            test_pred = torch.round(torch.sigmoid(test_logits))
            # 2. Caculate loss/accuracy
            test_loss = loss_fn(test_logits,
                                y_test)
            test_acc = accuracy_fn(y_true=y_test,
                                   y_pred=test_pred)

        # Print out what's happening every 10 epochs
        if epoch % (epochs // 5) == 0:
            history.append([loss.item(), acc, test_loss.item(), test_acc])
            print(f"Epoch: {epoch} | Loss: {loss:.5f}, Accuracy: {acc:.2f}% | Test loss: {test_loss:.5f}, Test acc: {test_acc:.2f}%")
    show(f"{tag}:history", history)
    return model


train_binary(model_0, 100, "model_0")


class CircleModelV1(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer_1 = nn.Linear(in_features=2, out_features=10)
        self.layer_2 = nn.Linear(in_features=10, out_features=10)  # extra layer
        self.layer_3 = nn.Linear(in_features=10, out_features=1)

    def forward(self, x):  # note: always make sure forward is spelt correctly!
        # Creating a model like this is the same as below, though below
        # generally benefits from speedups where possible.
        # z = self.layer_1(x)
        # z = self.layer_2(z)
        # z = self.layer_3(z)
        # return z
        return self.layer_3(self.layer_2(self.layer_1(x)))


model_1 = CircleModelV1().to(device)
numpy_init(torch, model_1, seed=1)
train_binary(model_1, 200, "model_1")

# the linear model can fit a straight line though
weight, bias, start, end, step = 0.7, 0.3, 0, 1, 0.01
X_regression = torch.arange(start, end, step).unsqueeze(dim=1)
y_regression = weight * X_regression + bias  # linear regression formula
train_split = int(0.8 * len(X_regression))  # 80% of data used for training set
X_train_regression, y_train_regression = X_regression[:train_split], y_regression[:train_split]
X_test_regression, y_test_regression = X_regression[train_split:], y_regression[train_split:]
model_2 = nn.Sequential(
    nn.Linear(in_features=1, out_features=10),
    nn.Linear(in_features=10, out_features=10),
    nn.Linear(in_features=10, out_features=1)
).to(device)
numpy_init(torch, model_2, seed=2)
loss_fn_reg = nn.L1Loss()
optimizer = torch.optim.SGD(model_2.parameters(), lr=0.1)
reg_history = []
for epoch in range(300):
    y_pred = model_2(X_train_regression)
    loss = loss_fn_reg(y_pred, y_train_regression)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    model_2.eval()
    with torch.inference_mode():
        test_pred = model_2(X_test_regression)
        test_loss = loss_fn_reg(test_pred, y_test_regression)
    if epoch % 60 == 0:
        reg_history.append([loss.item(), test_loss.item()])
show("model_2:history", reg_history)


# --- 6. the missing piece: non-linearity
class CircleModelV2(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer_1 = nn.Linear(in_features=2, out_features=10)
        self.layer_2 = nn.Linear(in_features=10, out_features=10)
        self.layer_3 = nn.Linear(in_features=10, out_features=1)
        self.relu = nn.ReLU()  # <- add in ReLU activation function
        # Can also put sigmoid in the model
        # This would mean you don't need to use it on the predictions
        # self.sigmoid = nn.Sigmoid()

    def forward(self, x):
        # Intersperse the ReLU activation function between layers
        return self.layer_3(self.relu(self.layer_2(self.relu(self.layer_1(x)))))


model_3 = CircleModelV2().to(device)
numpy_init(torch, model_3, seed=3)
train_binary(model_3, 500, "model_3", lr=0.5)
model_3.eval()
with torch.inference_mode():
    y_preds = torch.round(torch.sigmoid(model_3(X_test))).squeeze()
show("model_3_preds", y_preds[:10])
show("model_3_labels", y_test[:10])

# replicating non-linear activation functions
A = torch.arange(-10, 10, 1, dtype=torch.float32)
show("A", A)


def relu(x):
    return torch.maximum(torch.tensor(0), x)  # inputs must be tensors


def sigmoid(x):
    return 1 / (1 + torch.exp(-x))


show("relu_A", relu(A))
show("relu_A_dtype_float", float(relu(A).dtype == torch.float32))
show("sigmoid_A", sigmoid(A))
show("sigmoid_matches", float(torch.allclose(sigmoid(A), torch.sigmoid(A))))

# --- 8. multi-class classification: blobs
NUM_CLASSES = 4
NUM_FEATURES = 2
RANDOM_SEED = 42
centers = rng.uniform(-10, 10, size=(NUM_CLASSES, NUM_FEATURES))
y_blob_np = rng.integers(0, NUM_CLASSES, size=400)
X_blob_np = centers[y_blob_np] + rng.normal(0, 1.5, size=(400, NUM_FEATURES))

# 2. Turn data into tensors
X_blob = torch.from_numpy(X_blob_np).type(torch.float)
y_blob = torch.from_numpy(y_blob_np).type(torch.LongTensor)
show("blob_first5", [X_blob[:5], y_blob[:5]])
show("blob_label_dtype_long", float(y_blob.dtype == torch.int64))
X_blob_train, X_blob_test = X_blob[:320], X_blob[320:]
y_blob_train, y_blob_test = y_blob[:320], y_blob[320:]


# Build model
class BlobModel(nn.Module):
    def __init__(self, input_features, output_features, hidden_units=8):
        """Initializes all required hyperparameters for a multi-class classification model.

        Args:
            input_features (int): Number of input features to the model.
            out_features (int): Number of output features of the model
              (how many classes there are).
            hidden_units (int): Number of hidden units between layers, default 8.
        """
        super().__init__()
        self.linear_layer_stack = nn.Sequential(
            nn.Linear(in_features=input_features, out_features=hidden_units),
            # nn.ReLU(), # <- does our dataset require non-linear layers? (try uncommenting and see if the results change)
            nn.Linear(in_features=hidden_units, out_features=hidden_units),
            # nn.ReLU(), # <- does our dataset require non-linear layers? (try uncommenting and see if the results change)
            nn.Linear(in_features=hidden_units, out_features=output_features),  # how many classes are there?
        )

    def forward(self, x):
        return self.linear_layer_stack(x)


# Create an instance of BlobModel and send it to the target device
model_4 = BlobModel(input_features=NUM_FEATURES,
                    output_features=NUM_CLASSES,
                    hidden_units=8).to(device)
numpy_init(torch, model_4, seed=4)

# Create loss and optimizer
loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model_4.parameters(),
                            lr=0.1)  # exercise: try changing the learning rate here and seeing what happens to the model's performance

# Perform a single forward pass on the data (we'll need to put it to the target device for it to work)
show("blob_untrained_logits", model_4(X_blob_train.to(device))[:5])
# Make prediction logits with model
y_logits = model_4(X_blob_test.to(device))

# Perform softmax calculation on logits across dimension 1 to get prediction probabilities
y_pred_probs = torch.softmax(y_logits, dim=1)
show("blob_pred_probs", y_pred_probs[:5])
show("blob_probs_sum", torch.sum(y_pred_probs[0]))
show("blob_argmax", torch.argmax(y_pred_probs[0]))

# Fit the model
torch.manual_seed(42)

# Set number of epochs
epochs = 100

# Put data to target device
X_blob_train, y_blob_train = X_blob_train.to(device), y_blob_train.to(device)
X_blob_test, y_blob_test = X_blob_test.to(device), y_blob_test.to(device)

blob_history = []
for epoch in range(epochs):
    ### Training
    model_4.train()

    # 1. Forward pass
    y_logits = model_4(X_blob_train)  # model outputs raw logits
    y_pred = torch.softmax(y_logits, dim=1).argmax(dim=1)  # go from logits -> prediction probabilities -> prediction labels
    # print(y_logits)
    # 2. Calculate loss and accuracy
    loss = loss_fn(y_logits, y_blob_train)
    acc = accuracy_fn(y_true=y_blob_train,
                      y_pred=y_pred)

    # 3. Optimizer zero grad
    optimizer.zero_grad()

    # 4. Loss backwards
    loss.backward()

    # 5. Optimizer step
    optimizer.step()

    ### Testing
    model_4.eval()
    with torch.inference_mode():
        # 1. Forward pass
        test_logits = model_4(X_blob_test)
        test_pred = torch.softmax(test_logits, dim=1).argmax(dim=1)
        # 2. Calculate test loss and accuracy
        test_loss = loss_fn(test_logits, y_blob_test)
        test_acc = accuracy_fn(y_true=y_blob_test,
                               y_pred=test_pred)

    # Print out what's happening
    if epoch % 10 == 0:
        blob_history.append([loss.item(), acc, test_loss.item(), test_acc])
        print(f"Epoch: {epoch} | Loss: {loss:.5f}, Acc: {acc:.2f}% | Test Loss: {test_loss:.5f}, Test Acc: {test_acc:.2f}%")
show("blob_history", blob_history)

# Make predictions
model_4.eval()
with torch.inference_mode():
    y_logits = model_4(X_blob_test)
# Turn predicted logits in prediction probabilities
y_pred_probs = torch.softmax(y_logits, dim=1)
# Turn prediction probabilities into prediction labels
y_preds = y_pred_probs.argmax(dim=1)
# Compare first 10 model preds and test labels
show("blob_preds_vs_labels", [y_preds[:10], y_blob_test[:10]])
show("blob_test_accuracy", accuracy_fn(y_true=y_blob_test, y_pred=y_preds))

tmp_dir.cleanup()
