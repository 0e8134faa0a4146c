"""PyTorch tutorial "Knowledge Distillation", scaled down: a deeper teacher CNN and a light
student trained with CrossEntropyLoss; distillation by soft targets with a temperature (the
tutorial's hand-written KL term and ``nn.KLDivLoss(reduction="batchmean")`` on
``log_softmax``), cosine loss on hidden representations (``F.avg_pool1d`` of the flattened
features, collected by forward hooks, ``nn.CosineEmbeddingLoss``), and an intermediate
regressor with MSELoss on feature maps; test accuracy of each student.

    python distillation.py [torch|numbagrad]
"""
import numpy as np

from _common import BACKEND, numpy_init, show

if BACKEND == "torch":
    import torch
    import torch.nn as nn
    import torch.optim as optim
    from torch.utils.data import DataLoader, TensorDataset
else:
    import numbagrad as torch
    import numbagrad.nn as nn
    import numbagrad.optim as optim
    from numbagrad.utils.data import DataLoader, TensorDataset

device = "cpu"
rng = np.random.default_rng(0)
train_x = torch.from_numpy(rng.normal(size=(24, 3, 8, 8)).astype(np.float32))
train_y = torch.from_numpy(rng.integers(0, 10, 24))
test_x = torch.from_numpy(rng.normal(size=(12, 3, 8, 8)).astype(np.float32))
test_y = torch.from_numpy(rng.integers(0, 10, 12))
train_loader = DataLoader(TensorDataset(train_x, train_y), batch_size=8, shuffle=False)
test_loader = DataLoader(TensorDataset(test_x, test_y), batch_size=8, shuffle=False)


# Deeper neural network class to be used as teacher:
class DeepNN(nn.Module):
    def __init__(self, num_classes=10):
        super(DeepNN, self).__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 16, kernel_size=3, padding=1),
            nn.ReLU(),
            nn.Conv2d(16, 8, kernel_size=3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(kernel_size=2, stride=2),
            nn.Conv2d(8, 8, kernel_size=3, padding=1),
            nn.ReLU(),
            nn.Conv2d(8, 8, kernel_size=3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(kernel_size=2, stride=2),
        )
        self.classifier = nn.Sequential(
            nn.Linear(32, 32),
            nn.ReLU(),
            nn.Dropout(0.0),
            nn.Linear(32, num_classes)
        )

    def forward(self, x):
        x = self.features(x)
        x = torch.flatten(x, 1)
        x = self.classifier(x)
        return x


# Lightweight neural network class to be used as student:
class LightNN(nn.Module):
    def __init__(self, num_classes=10):
        super(LightNN, self).__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 4, kernel_size=3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(kernel_size=2, stride=2),
            nn.Conv2d(4, 4, kernel_size=3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(kernel_size=2, stride=2),
        )
        self.classifier = nn.Sequential(
            nn.Linear(16, 16),
            nn.ReLU(),
            nn.Dropout(0.0),
            nn.Linear(16, num_classes)
        )

    def forward(self, x):
        x = self.features(x)
        x = torch.flatten(x, 1)
        x = self.classifier(x)
        return x


def train(model, train_loader, epochs, learning_rate, device):
    criterion = nn.CrossEntropyLoss()
    optimizer = optim.Adam(model.parameters(), lr=learning_rate)

    model.train()
    losses = []
    for epoch in range(epochs):
        running_loss = 0.0
        for inputs, labels in train_loader:
            inputs, labels = inputs.to(device), labels.to(device)

            optimizer.zero_grad()
            outputs = model(inputs)
            loss = criterion(outputs, labels)
            loss.backward()
            optimizer.step()

            running_loss += loss.item()
        losses.append(running_loss / len(train_loader))
        print(f"Epoch {epoch+1}/{epochs}, Loss: {running_loss / len(train_loader)}")
    return losses


def test(model, test_loader, device):
    model.to(device)
    model.eval()

    correct = 0
    total = 0

    with torch.no_grad():
        for inputs, labels in test_loader:
            inputs, labels = inputs.to(device), labels.to(device)

            outputs = model(inputs)
            _, predicted = torch.max(outputs.data, 1)

            total += labels.size(0)
            correct += (predicted == labels).sum().item()

    accuracy = 100 * correct / total
    print(f"Test Accuracy: {accuracy:.2f}%")
    return accuracy


nn_deep = DeepNN(num_classes=10).to(device)
numpy_init(torch, nn_deep, seed=1)
show("teacher_losses", train(nn_deep, train_loader, epochs=3, learning_rate=0.001, device=device))
test_accuracy_deep = test(nn_deep, test_loader, device)

nn_light = LightNN(num_classes=10).to(device)
numpy_init(torch, nn_light, seed=2)
new_nn_light = LightNN(num_classes=10).to(device)
numpy_init(torch, new_nn_light, seed=2)
# the tutorial checks that both students start from the same weights
print("Norm of 1st layer of nn_light:", torch.norm(nn_light.features[0].weight).item())
print("Norm of 1st layer of new_nn_light:", torch.norm(new_nn_light.features[0].weight).item())
show("first_layer_norm", torch.norm(new_nn_light.features[0].weight))

total_params_deep = "{:,}".format(sum(p.numel() for p in nn_deep.parameters()))
print(f"DeepNN parameters: {total_params_deep}")
total_params_light = "{:,}".format(sum(p.numel() for p in nn_light.parameters()))
print(f"LightNN parameters: {total_params_light}")
show("param_counts", [sum(p.numel() for p in nn_deep.parameters()), sum(p.numel() for p in nn_light.parameters())])

show("student_ce_losses", train(nn_light, train_loader, epochs=3, learning_rate=0.001, device=device))
test_accuracy_light_ce = test(nn_light, test_loader, device)
show("accuracies", [test_accuracy_deep, test_accuracy_light_ce])


def train_knowledge_distillation(teacher, student, train_loader, epochs, learning_rate, T, soft_target_loss_weight, ce_loss_weight, device):
    ce_loss = nn.CrossEntropyLoss()
    optimizer = optim.Adam(student.parameters(), lr=learning_rate)

    teacher.eval()  # Teacher set to evaluation mode
    student.train()  # Student to train mode

    losses = []
    for epoch in range(epochs):
        running_loss = 0.0
        for inputs, labels in train_loader:
            inputs, labels = inputs.to(device), labels.to(device)

            optimizer.zero_grad()

            # Forward pass with the teacher model - do not save gradients here as we do not change the teacher's weights
            with torch.no_grad():
                teacher_logits = teacher(inputs)

            # Forward pass with the student model
            student_logits = student(inputs)

            #Soften the student logits by applying softmax first and log() second
            soft_targets = nn.functional.softmax(teacher_logits / T, dim=-1)
            soft_prob = nn.functional.log_softmax(student_logits / T, dim=-1)

            # Calculate the soft targets loss. Scaled by T**2 as suggested by the authors of the paper "Distilling the knowledge in a neural network"
            soft_targets_loss = torch.sum(soft_targets * (soft_targets.log() - soft_prob)) / soft_prob.size()[0] * (T**2)

            # Calculate the true label loss
            label_loss = ce_loss(student_logits, labels)

            # Weighted sum of the two losses
            loss = soft_target_loss_weight * soft_targets_loss + ce_loss_weight * label_loss

            loss.backward()
            optimizer.step()

            running_loss += loss.item()

        losses.append(running_loss / len(train_loader))
        print(f"Epoch {epoch+1}/{epochs}, Loss: {running_loss / len(train_loader)}")
    return losses


show("kd_losses", train_knowledge_distillation(teacher=nn_deep, student=new_nn_light, train_loader=train_loader, epochs=3, learning_rate=0.001, T=2, soft_target_loss_weight=0.25, ce_loss_weight=0.75, device=device))
test_accuracy_light_ce_and_kd = test(new_nn_light, test_loader, device)
show("kd_accuracy", test_accuracy_light_ce_and_kd)

# The same soft-target term written with nn.KLDivLoss (log-probabilities in, probabilities as target)
T = 2
kl_div = nn.KLDivLoss(reduction="batchmean")
inputs, labels = next(iter(train_loader))
with torch.no_grad():
    teacher_logits = nn_deep(inputs)
student_logits = new_nn_light(inputs)
soft_prob = nn.functional.log_softmax(student_logits / T, dim=-1)
soft_targets = nn.functional.softmax(teacher_logits / T, dim=-1)
by_hand = torch.sum(soft_targets * (soft_targets.log() - soft_prob)) / soft_prob.size()[0] * (T**2)
by_module = kl_div(soft_prob, soft_targets) * (T**2)
show("kl_by_hand_and_module", [by_hand, by_module])
show("kl_log_target", nn.KLDivLoss(reduction="batchmean", log_target=True)(soft_prob, soft_targets.log()))
show("kl_sum_mean_none", [nn.functional.kl_div(soft_prob, soft_targets, reduction="sum"),
                          nn.functional.kl_div(soft_prob, soft_targets, reduction="mean"),
                          nn.functional.kl_div(soft_prob, soft_targets, reduction="none")[0, :4]])
student_grad = torch.autograd.grad(by_module, new_nn_light.classifier[3].bias)[0]
show("kl_grad_bias", student_grad)
print(by_module)
show("kl_grad_fn", [by_module.grad_fn.name() == "MulBackward0", kl_div(soft_prob, soft_targets).grad_fn.name() == "DivBackward0"])


# Cosine loss on the hidden representations: the flattened convolutional output, pooled to
# the student's width, is collected by forward hooks on the classifier's first layer.
class ModifiedDeepNNCosine(DeepNN):
    def forward(self, x):
        x = self.features(x)
        flattened_conv_output = torch.flatten(x, 1)
        x = self.classifier(flattened_conv_output)
        flattened_conv_output_after_pooling = torch.nn.functional.avg_pool1d(flattened_conv_output, 2)
        return x, flattened_conv_output_after_pooling


class ModifiedLightNNCosine(LightNN):
    def forward(self, x):
        x = self.features(x)
        flattened_conv_output = torch.flatten(x, 1)
        x = self.classifier(flattened_conv_output)
        return x, flattened_conv_output


modified_nn_deep = ModifiedDeepNNCosine(num_classes=10).to(device)
modified_nn_deep.load_state_dict(nn_deep.state_dict())
modified_nn_light = ModifiedLightNNCosine(num_classes=10).to(device)
numpy_init(torch, modified_nn_light, seed=2)

sample_input = test_x[:4]
logits, hidden_representation = modified_nn_light(sample_input)
print("Student logits shape:", logits.shape)
print("Student hidden representation shape:", hidden_representation.shape)
logits, hidden_representation = modified_nn_deep(sample_input)
print("Teacher hidden representation shape:", hidden_representation.shape)
show("hidden_shapes", [*logits.shape, *hidden_representation.shape])
# avg_pool1d on a 2-d tensor pools an unbatched (C, L) input: pairs of neighbouring features
show("avg_pool1d_2d", hidden_representation[0, :4])
show("avg_pool1d_by_view", bool(torch.allclose(hidden_representation,
                                                torch.flatten(modified_nn_deep.features(sample_input), 1).view(4, 16, 2).mean(-1))))

# the same representations through forward hooks on the plain models
activations = {}


def get_activation(name):
    def hook(model, input, output):
        activations[name] = input[0].detach() if name == "teacher" else input[0]
    return hook


h1 = nn_deep.classifier[0].register_forward_hook(get_activation("teacher"))
h2 = modified_nn_light.classifier[0].register_forward_hook(get_activation("student"))
nn_deep(sample_input)
modified_nn_light(sample_input)
show("hooked_matches", bool(torch.allclose(torch.nn.functional.avg_pool1d(activations["teacher"], 2), hidden_representation)))
h1.remove()
h2.remove()
nn_deep(test_x[4:6])
show("hook_removed", list(activations["teacher"].shape))


def train_cosine_loss(teacher, student, train_loader, epochs, learning_rate, hidden_rep_loss_weight, ce_loss_weight, device):
    ce_loss = nn.CrossEntropyLoss()
    cosine_loss = nn.CosineEmbeddingLoss()
    optimizer = optim.Adam(student.parameters(), lr=learning_rate)

    teacher.to(device)
    student.to(device)
    teacher.eval()  # Teacher set to evaluation mode
    student.train()  # Student to train mode

    losses = []
    for epoch in range(epochs):
        running_loss = 0.0
        for inputs, labels in train_loader:
            inputs, labels = inputs.to(device), labels.to(device)

            optimizer.zero_grad()

            # Forward pass with the teacher model and keep only the hidden representation
            with torch.no_grad():
                _, teacher_hidden_representation = teacher(inputs)

            # Forward pass with the student model
            student_logits, student_hidden_representation = student(inputs)

            # Calculate the cosine loss. Target is a vector of ones. From the loss formula above we can see that is the case where loss minimization leads to cosine similarity increase.
            hidden_rep_loss = cosine_loss(student_hidden_representation, teacher_hidden_representation, target=torch.ones(inputs.size(0)).to(device))

            # Calculate the true label loss
            label_loss = ce_loss(student_logits, labels)

            # Weighted sum of the two losses
            loss = hidden_rep_loss_weight * hidden_rep_loss + ce_loss_weight * label_loss

            loss.backward()
            optimizer.step()

            running_loss += loss.item()

        losses.append(running_loss / len(train_loader))
        print(f"Epoch {epoch+1}/{epochs}, Loss: {running_loss / len(train_loader)}")
    return losses


show("cosine_losses", train_cosine_loss(teacher=modified_nn_deep, student=modified_nn_light, train_loader=train_loader, epochs=3, learning_rate=0.001, hidden_rep_loss_weight=0.25, ce_loss_weight=0.75, device=device))

# CosineEmbeddingLoss with -1 targets and a margin, against its formula
a = torch.from_numpy(rng.normal(size=(5, 6)).astype(np.float32)).requires_grad_()
b = torch.from_numpy(rng.normal(size=(5, 6)).astype(np.float32))
y = torch.tensor([1, -1, 1, -1, -1])
loss = nn.CosineEmbeddingLoss(margin=0.2)(a, b, y)
cos = nn.functional.cosine_similarity(a, b)
formula = torch.where(y == 1, 1 - cos, (cos - 0.2).clamp(min=0)).mean()
loss.backward()
show("cosine_embedding", [loss, formula])
show("cosine_embedding_grad", a.grad[:3])
show("cosine_embedding_none", nn.CosineEmbeddingLoss(reduction="none")(a, b, y))


# Intermediate regressor: a convolution maps the student's feature map to the teacher's shape
class ModifiedDeepNNRegressor(DeepNN):
    def forward(self, x):
        x = self.features(x)
        conv_feature_map = x
        x = torch.flatten(x, 1)
        x = self.classifier(x)
        return x, conv_feature_map


class ModifiedLightNNRegressor(LightNN):
    def __init__(self, num_classes=10):
        super(ModifiedLightNNRegressor, self).__init__(num_classes)
        # Include an extra regressor (in our case linear)
        self.regressor = nn.Sequential(
            nn.Conv2d(4, 8, kernel_size=3, padding=1)
        )

    def forward(self, x):
        x = self.features(x)
        regressor_output = self.regressor(x)
        x = torch.flatten(x, 1)
        x = self.classifier(x)
        return x, regressor_output


def train_mse_loss(teacher, student, train_loader, epochs, learning_rate, feature_map_weight, ce_loss_weight, device):
    ce_loss = nn.CrossEntropyLoss()
    mse_loss = nn.MSELoss()
    optimizer = optim.Adam(student.parameters(), lr=learning_rate)

    teacher.to(device)
    student.to(device)
    teacher.eval()  # Teacher set to evaluation mode
    student.train()  # Student to train mode

    losses = []
    for epoch in range(epochs):
        running_loss = 0.0
        for inputs, labels in train_loader:
            inputs, labels = inputs.to(device), labels.to(device)

            optimizer.zero_grad()

            # Again ignore teacher logits
            with torch.no_grad():
                _, teacher_feature_map = teacher(inputs)

            # Forward pass with the student model
            student_logits, regressor_feature_map = student(inputs)

            # Calculate the loss
            hidden_rep_loss = mse_loss(regressor_feature_map, teacher_feature_map)

            # Calculate the true label loss
            label_loss = ce_loss(student_logits, labels)

            # Weighted sum of the two losses
            loss = feature_map_weight * hidden_rep_loss + ce_loss_weight * label_loss

            loss.backward()
            optimizer.step()

            running_loss += loss.item()

        losses.append(running_loss / len(train_loader))
        print(f"Epoch {epoch+1}/{epochs}, Loss: {running_loss / len(train_loader)}")
    return losses


def test_multiple_outputs(model, test_loader, device):
    model.to(device)
    model.eval()

    correct = 0
    total = 0

    with torch.no_grad():
        for inputs, labels in test_loader:
            inputs, labels = inputs.to(device), labels.to(device)

            outputs, _ = model(inputs) # Disregard the second tensor of the tuple
            _, predicted = torch.max(outputs.data, 1)

            total += labels.size(0)
            correct += (predicted == labels).sum().item()

    accuracy = 100 * correct / total
    print(f"Test Accuracy: {accuracy:.2f}%")
    return accuracy


show("cosine_test_accuracy", test_multiple_outputs(modified_nn_light, test_loader, device))
modified_nn_deep_reg = ModifiedDeepNNRegressor(num_classes=10).to(device)
modified_nn_deep_reg.load_state_dict(nn_deep.state_dict())
modified_nn_light_reg = ModifiedLightNNRegressor(num_classes=10).to(device)
numpy_init(torch, modified_nn_light_reg, seed=3)
show("mse_losses", train_mse_loss(teacher=modified_nn_deep_reg, student=modified_nn_light_reg, train_loader=train_loader, epochs=3, learning_rate=0.001, feature_map_weight=0.25, ce_loss_weight=0.75, device=device))
show("mse_test_accuracy", test_multiple_outputs(modified_nn_light_reg, test_loader, device))
show("regressor_weight", modified_nn_light_reg.regressor[0].weight[0, 0, 0])
