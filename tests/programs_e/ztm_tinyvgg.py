"""Zero to Mastery "Learn PyTorch for Deep Learning", notebooks 03 "Computer Vision" and 04 "Custom
Datasets", on generated images: a Conv2d applied to one unbatched image and to a batch, its
state dict, MaxPool2d; the flattened baseline (FashionMNISTModelV0), a ReLU variant and TinyVGG
(FashionMNISTModelV2: two conv blocks, ``hidden_units*7*7`` classifier); ``train_step`` /
``test_step`` accumulating ``train_loss += loss`` as a tensor and ``accuracy_fn`` on
``y_pred.argmax(dim=1)``, printed with format specs, ``eval_model`` returning a results dict
with ``model.__class__.__name__``, ``make_predictions`` stacking ``torch.softmax(...squeeze(),
dim=0)``, a confusion matrix filled by indexing, the state dict saved and reloaded and the
results compared with ``torch.isclose(..., atol=1e-08, rtol=0.0001)``; then notebook 04's
``find_classes`` over ``os.scandir`` and an ImageFolderCustom Dataset reading files from class
folders, with a ``transforms``-style flip/scale written by hand, a ``train()`` that fills a
results dict per epoch, and a single-image prediction through ``unsqueeze(dim=0)``.

    python ztm_tinyvgg.py [torch|numbagrad]
"""
import os
import pathlib
import tempfile
from typing import Dict, List, Tuple

import numpy as np

from _common import BACKEND, numpy_init, show

if BACKEND == "torch":
    import torch
    from torch import nn
    from torch.utils.data import DataLoader, Dataset, TensorDataset
else:
    import numbagrad as torch
    from numbagrad import nn
    from numbagrad.utils.data import DataLoader, Dataset, TensorDataset

device = "cuda" if torch.cuda.is_available() else "cpu"
device = "cpu"  # (the comparison runs on the CPU)
rng = np.random.default_rng(42)

# --- 7.1 stepping through nn.Conv2d()
images = torch.from_numpy(rng.normal(size=(32, 3, 64, 64)).astype(np.float32))  # torch.randn(size=(32, 3, 64, 64))
test_image = images[0]  # get a single image for testing
show("Image_batch_shape", list(images.shape))
show("Single_image_shape", list(test_image.shape))

torch.manual_seed(42)
# Create a convolutional layer with same dimensions as TinyVGG
# (try changing any of the parameters and see what happens)
conv_layer = nn.Conv2d(in_channels=3,
                       out_channels=10,
                       kernel_size=3,
                       stride=1,
                       padding=0)  # also try using "valid" or "same" here
numpy_init(torch, conv_layer, seed=0)

# Pass the data through the convolutional layer
out = conv_layer(test_image)  # Note: If running PyTorch <1.11.0, this will error because of shape issues (nn.Conv.2d() expects a 4d tensor as input)
show("conv_unbatched_shape", list(out.shape))
show("conv_unbatched", out[:2, 0, :5])
show("conv_batched_same", float(torch.allclose(conv_layer(test_image.unsqueeze(dim=0))[0], out, atol=1e-6)))

torch.manual_seed(42)
# Create a new conv_layer with different values (try setting these to whatever you like)
conv_layer_2 = nn.Conv2d(in_channels=3,  # same number of color channels as our input image
                         out_channels=10,
                         kernel_size=(5, 5),  # kernel is usually a square so a tuple also works
                         stride=2,
                         padding=0)
numpy_init(torch, conv_layer_2, seed=1)
# Pass single image through new conv_layer_2 (this calls nn.Conv2d()'s forward() method on the input)
show("conv_layer_2_shape", list(conv_layer_2(test_image.unsqueeze(dim=0)).shape))
show("conv_layer_2_state_dict", [list(v.shape) for v in conv_layer_2.state_dict().values()])
show("same_padding_shape", list(nn.Conv2d(3, 4, 3, padding="same")(images[:2]).shape))
show("valid_padding_shape", list(nn.Conv2d(3, 4, 3, padding="valid")(images[:2]).shape))

# Print out original image shape without and with unsqueezed dimension
show("test_image_unsqueezed", list(test_image.unsqueeze(dim=0).shape))
# Create a sample nn.MaxPoo2d() layer
max_pool_layer = nn.MaxPool2d(kernel_size=2)
# Pass data through just the conv_layer
test_image_through_conv = conv_layer(test_image.unsqueeze(dim=0))
show("through_conv", list(test_image_through_conv.shape))
# Pass data through the max pool layer
test_image_through_conv_and_max_pool = max_pool_layer(test_image_through_conv)
show("through_conv_and_pool", list(test_image_through_conv_and_max_pool.shape))

random_tensor = torch.from_numpy(rng.normal(size=(1, 1, 2, 2)).astype(np.float32))
show("Random_tensor", random_tensor)
max_pool_tensor = max_pool_layer(random_tensor)
show("Max_pool_tensor", max_pool_tensor)
show("Max_pool_tensor_shape", list(max_pool_tensor.shape))

# --- the data: "FashionMNIST" of 10 texture classes, 28x28
class_names = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag",
               "Ankle boot"]
templates = (rng.random((10, 7, 7)) > 0.5).astype(np.float32)


def make_images(n):
    labels = rng.integers(0, 10, size=n)
    imgs = np.kron(templates[labels], np.ones((4, 4), np.float32))[:, None]  # 28x28 blocks
    imgs = np.clip(imgs + 0.4 * rng.normal(size=imgs.shape), 0, 1).astype(np.float32)
    return torch.from_numpy(imgs), torch.from_numpy(labels)


train_data = TensorDataset(*make_images(256))
test_data = TensorDataset(*make_images(96))
image, label = train_data[0]
show("image_shape", list(image.shape))
show("label", label)

# Setup the batch size hyperparameter
BATCH_SIZE = 32

# Turn datasets into iterables (batches)
train_dataloader = DataLoader(train_data,  # dataset to turn into iterable
                              batch_size=BATCH_SIZE,  # how many samples per batch?
                              shuffle=False  # (the course shuffles; the libraries' generators differ)
                              )

test_dataloader = DataLoader(test_data,
                             batch_size=BATCH_SIZE,
                             shuffle=False  # don't necessarily have to shuffle the testing data
                             )
show("dataloader_lengths", [len(train_dataloader), len(test_dataloader)])
train_features_batch, train_labels_batch = next(iter(train_dataloader))
show("train_features_batch", list(train_features_batch.shape) + list(train_labels_batch.shape))

# Create a flatten layer
flatten_model = nn.Flatten()  # all nn modules function as a model (can do a forward pass)
x = train_features_batch[0]
output = flatten_model(x)  # perform forward pass
show("flatten_shapes", list(x.shape) + list(output.shape))


class FashionMNISTModelV0(nn.Module):
    def __init__(self, input_shape: int, hidden_units: int, output_shape: int):
        super().__init__()
        self.layer_stack = nn.Sequential(
            nn.Flatten(),  # neural networks like their inputs in vector form
            nn.Linear(in_features=input_shape, out_features=hidden_units),  # in_features = number of features in a data sample (784 pixels)
            nn.Linear(in_features=hidden_units, out_features=output_shape)
        )

    def forward(self, x):
        return self.layer_stack(x)


def accuracy_fn(y_true, y_pred):
    """Calculates accuracy between truth labels and predictions."""
    correct = torch.eq(y_true, y_pred).sum().item()
    acc = (correct / len(y_pred)) * 100
    return acc


def train_step(model: torch.nn.Module,
               data_loader: torch.utils.data.DataLoader,
               loss_fn: torch.nn.Module,
               optimizer: torch.optim.Optimizer,
               accuracy_fn,
               device: torch.device = device):
    train_loss, train_acc = 0, 0
    model.to(device)
    for batch, (X, y) in enumerate(data_loader):
        # Send data to GPU
        X, y = X.to(device), y.to(device)

        # 1. Forward pass
        y_pred = model(X)

        # 2. Calculate loss
        loss = loss_fn(y_pred, y)
        train_loss += loss
        train_acc += accuracy_fn(y_true=y,
                                 y_pred=y_pred.argmax(dim=1))  # Go from logits -> pred labels

        # 3. Optimizer zero grad
        optimizer.zero_grad()

        # 4. Loss backward
        loss.backward()

        # 5. Optimizer step
        optimizer.step()

    # Calculate loss and accuracy per epoch and print out what's happening
    train_loss /= len(data_loader)
    train_acc /= len(data_loader)
    print(f"Train loss: {train_loss:.5f} | Train accuracy: {train_acc:.2f}%")
    return train_loss, train_acc


def test_step(data_loader: torch.utils.data.DataLoader,
              model: torch.nn.Module,
              loss_fn: torch.nn.Module,
              accuracy_fn,
              device: torch.device = device):
    test_loss, test_acc = 0, 0
    model.to(device)
    model.eval()  # put model in eval mode
    # Turn on inference context manager
    with torch.inference_mode():
        for X, y in data_loader:
            # Send data to GPU
            X, y = X.to(device), y.to(device)

            # 1. Forward pass
            test_pred = model(X)

            # 2. Calculate loss and accuracy
            test_loss += loss_fn(test_pred, y)
            test_acc += accuracy_fn(y_true=y,
                                    y_pred=test_pred.argmax(dim=1)  # Go from logits -> pred labels
                                    )

        # Adjust metrics and print out
        test_loss /= len(data_loader)
        test_acc /= len(data_loader)
        print(f"Test loss: {test_loss:.5f} | Test accuracy: {test_acc:.2f}%\n")
    return test_loss, test_acc


def eval_model(model: torch.nn.Module,
               data_loader: torch.utils.data.DataLoader,
               loss_fn: torch.nn.Module,
               accuracy_fn,
               device: torch.device = device):
    """Evaluates a given model on a given dataset.

    Args:
        model (torch.nn.Module): A PyTorch model capable of making predictions on data_loader.
        data_loader (torch.utils.data.DataLoader): The target dataset to predict on.
        loss_fn (torch.nn.Module): The loss function of model.
        accuracy_fn: An accuracy function to compare the models predictions to the truth labels.
        device (str, optional): Target device to compute on. Defaults to device.

    Returns:
        (dict): Results of model making predictions on data_loader.
    """
    loss, acc = 0, 0
    model.eval()
    with torch.inference_mode():
        for X, y in data_loader:
            # Send data to the target device
            X, y = X.to(device), y.to(device)
            y_pred = model(X)
            loss += loss_fn(y_pred, y)
            acc += accuracy_fn(y_true=y, y_pred=y_pred.argmax(dim=1))

        # Scale loss and acc
        loss /= len(data_loader)
        acc /= len(data_loader)
    return {"model_name": model.__class__.__name__,  # only works when model was created with a class
            "model_loss": loss.item(),
            "model_acc": acc}


def fit(model, epochs, lr, tag):
    loss_fn = nn.CrossEntropyLoss()  # this is also called "criterion"/"cost function" in some places
    optimizer = torch.optim.SGD(params=model.parameters(), lr=lr)
    history, requires_grad = [], []
    for epoch in range(epochs):
        print(f"Epoch: {epoch}\n---------")
        train_loss, train_acc = train_step(data_loader=train_dataloader,
                                           model=model,
                                           loss_fn=loss_fn,
                                           optimizer=optimizer,
                                           accuracy_fn=accuracy_fn)
        test_loss, test_acc = test_step(data_loader=test_dataloader,
                                        model=model,
                                        loss_fn=loss_fn,
                                        accuracy_fn=accuracy_fn)
        history.append([train_loss.item(), train_acc, test_loss.item(), test_acc])
        requires_grad.append(train_loss.requires_grad)
    show(f"{tag}:history", history)
    show(f"{tag}:train_loss_requires_grad", requires_grad)
    results = eval_model(model=model, data_loader=test_dataloader, loss_fn=loss_fn, accuracy_fn=accuracy_fn)
    show(f"{tag}:results", [results["model_loss"], results["model_acc"]])
    show(f"{tag}:results_name_len", len(results["model_name"]))
    return results


# Need to setup model with input parameters
torch.manual_seed(42)
model_0 = FashionMNISTModelV0(input_shape=784,  # one for every pixel (28x28)
                              hidden_units=10,  # how many units in the hiden layer
                              output_shape=len(class_names)  # one for every class
                              )
numpy_init(torch, model_0, seed=2)
model_0.to("cpu")  # keep model on CPU to begin with
model_0_results = fit(model_0, epochs=3, lr=0.1, tag="model_0")


# Create a model with non-linear and linear layers
class FashionMNISTModelV1(nn.Module):
    def __init__(self, input_shape: int, hidden_units: int, output_shape: int):
        super().__init__()
        self.layer_stack = nn.Sequential(
            nn.Flatten(),  # flatten inputs into single vector
            nn.Linear(in_features=input_shape, out_features=hidden_units),
            nn.ReLU(),
            nn.Linear(in_features=hidden_units, out_features=output_shape),
            nn.ReLU()
        )

    def forward(self, x: torch.Tensor):
        return self.layer_stack(x)


torch.manual_seed(42)
model_1 = FashionMNISTModelV1(input_shape=784,  # number of input features
                              hidden_units=10,
                              output_shape=len(class_names)  # number of output classes desired
                              ).to(device)  # send model to GPU if it's available
numpy_init(torch, model_1, seed=3)
show("model_1_device", float(next(model_1.parameters()).device.type == "cpu"))
model_1_results = fit(model_1, epochs=2, lr=0.1, tag="model_1")


# Create a convolutional neural network
class FashionMNISTModelV2(nn.Module):
    """
    Model architecture copying TinyVGG from:
    https://poloclub.github.io/cnn-explainer/
    """
    def __init__(self, input_shape: int, hidden_units: int, output_shape: int):
        super().__init__()
        self.block_1 = nn.Sequential(
            nn.Conv2d(in_channels=input_shape,
                      out_channels=hidden_units,
                      kernel_size=3,  # how big is the square that's going over the image?
                      stride=1,  # default
                      padding=1),  # options = "valid" (no padding) or "same" (output has same shape as input) or int for specific number
            nn.ReLU(),
            nn.Conv2d(in_channels=hidden_units,
                      out_channels=hidden_units,
                      kernel_size=3,
                      stride=1,
                      padding=1),
            nn.ReLU(),
            nn.MaxPool2d(kernel_size=2,
                         stride=2)  # default stride value is same as kernel_size
        )
        self.block_2 = nn.Sequential(
            nn.Conv2d(hidden_units, hidden_units, 3, padding=1),
            nn.ReLU(),
            nn.Conv2d(hidden_units, hidden_units, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2)
        )
        self.classifier = nn.Sequential(
            nn.Flatten(),
            # Where did this in_features shape come from?
            # It's because each layer of our network compresses and changes the shape of our inputs data.
            nn.Linear(in_features=hidden_units * 7 * 7,
                      out_features=output_shape)
        )

    def forward(self, x: torch.Tensor):
        x = self.block_1(x)
        # print(x.shape)
        x = self.block_2(x)
        # print(x.shape)
        x = self.classifier(x)
        # print(x.shape)
        return x


torch.manual_seed(42)
model_2 = FashionMNISTModelV2(input_shape=1,
                              hidden_units=10,
                              output_shape=len(class_names)).to(device)
numpy_init(torch, model_2, seed=4)
# a dummy pass, as the course does to find the classifier's in_features
show("model_2_dummy_shape", list(model_2(torch.zeros(1, 1, 28, 28)).shape))
model_2_results = fit(model_2, epochs=3, lr=0.1, tag="model_2")


def make_predictions(model: torch.nn.Module, data: list, device: torch.device = device):
    pred_probs = []
    model.eval()
    with torch.inference_mode():
        for sample in data:
            # Prepare sample
            sample = torch.unsqueeze(sample, dim=0).to(device)  # Add an extra dimension and send sample to device

            # Forward pass (model outputs raw logit)
            pred_logit = model(sample)

            # Get prediction probability (logit -> prediction probability)
            pred_prob = torch.softmax(pred_logit.squeeze(), dim=0)  # note: perform softmax on the "logits" dimension, not "batch" dimension (in this case we have a batch size of 1, so can perform on dim=0)

            # Get pred_prob off GPU for further calculations
            pred_probs.append(pred_prob.cpu())

    # Stack the pred_probs to turn list into a tensor
    return torch.stack(pred_probs)


test_samples = [test_data[i][0] for i in range(9)]
test_labels = [int(test_data[i][1]) for i in range(9)]
pred_probs = make_predictions(model=model_2, data=test_samples)
show("pred_probs", pred_probs[:2])
pred_classes = pred_probs.argmax(dim=1)
show("pred_classes", pred_classes)
show("test_labels", test_labels)

# confusion matrix (torchmetrics' ConfusionMatrix, by hand)
y_preds = []
model_2.eval()
with torch.inference_mode():
    for X, y in test_dataloader:
        # Send data and targets to target device
        X, y = X.to(device), y.to(device)
        # Do the forward pass
        y_logit = model_2(X)
        # Turn predictions from logits -> prediction probabilities -> predictions labels
        y_pred = torch.softmax(y_logit, dim=1).argmax(dim=1)  # note: perform softmax on the "logits" dimension, not "batch" dimension (in this case we have a batch size of 32, so can perform on dim=1)
        # Put predictions on CPU for evaluation
        y_preds.append(y_pred.cpu())
# Concatenate list of predictions into a tensor
y_pred_tensor = torch.cat(y_preds)
confmat_tensor = torch.zeros(len(class_names), len(class_names), dtype=torch.long)
targets = torch.stack([test_data[i][1] for i in range(len(test_data))])
for t, p in zip(targets, y_pred_tensor):
    confmat_tensor[t, p] += 1
show("confmat_diag", confmat_tensor.diag())
show("confmat_by_bincount", float(torch.equal(
    confmat_tensor.view(-1), torch.bincount(targets * 10 + y_pred_tensor, minlength=100))))

# save and load
tmp_dir = tempfile.TemporaryDirectory()  # (removed when the program ends)
MODEL_PATH = pathlib.Path(tmp_dir.name) / "models"
MODEL_PATH.mkdir(parents=True,  # create parent directories if needed
                 exist_ok=True  # if models directory already exists, don't error
                 )
MODEL_NAME = "03_pytorch_computer_vision_model_2.pth"
MODEL_SAVE_PATH = MODEL_PATH / MODEL_NAME
torch.save(obj=model_2.state_dict(),  # only saving the state_dict() only saves the learned parameters
           f=MODEL_SAVE_PATH)
loaded_model_2 = FashionMNISTModelV2(input_shape=1,
                                     hidden_units=10,  # try changing this to 128 and seeing what happens
                                     output_shape=10)
loaded_model_2.load_state_dict(torch.load(f=MODEL_SAVE_PATH))
loaded_model_2 = loaded_model_2.to(device)
torch.manual_seed(42)
loaded_model_2_results = eval_model(
    model=loaded_model_2,
    data_loader=test_dataloader,
    loss_fn=nn.CrossEntropyLoss(),
    accuracy_fn=accuracy_fn
)
show("loaded_results_close", torch.isclose(torch.tensor(model_2_results["model_loss"]),
                                            torch.tensor(loaded_model_2_results["model_loss"]),
                                            atol=1e-08,  # absolute tolerance
                                            rtol=0.0001))  # relative tolerance


# --- 04. custom datasets: image files in class folders
data_path = pathlib.Path(tmp_dir.name) / "data"
image_path = data_path / "pizza_steak_sushi"
train_dir = image_path / "train"
for split, n_per_class in (("train", 6), ("test", 3)):
    for c, cls in enumerate(["pizza", "steak", "sushi"]):
        folder = image_path / split / cls
        folder.mkdir(parents=True, exist_ok=True)
        for i in range(n_per_class):
            img = np.clip(rng.normal(0.3 * c + 0.2, 0.2, size=(16, 16, 3)), 0, 1) * 255
            np.save(folder / f"{cls}_{i:02d}.npy", img.astype(np.uint8))


# Make function to find classes in target directory
def find_classes(directory: str) -> Tuple[List[str], Dict[str, int]]:
    """Finds the class folder names in a target directory.

    Assumes target directory is in standard image classification format.
    """
    # 1. Get the class names by scanning the target directory
    classes = sorted(entry.name for entry in os.scandir(directory) if entry.is_dir())

    # 2. Raise an error if class names not found
    if not classes:
        raise FileNotFoundError(f"Couldn't find any classes in {directory}.")

    # 3. Crearte a dictionary of index labels (computers prefer numerical rather than string labels)
    class_to_idx = {cls_name: i for i, cls_name in enumerate(classes)}
    return classes, class_to_idx


show("find_classes", list(find_classes(train_dir)[1].values()))


def to_tensor(img: np.ndarray) -> torch.Tensor:
    """transforms.ToTensor(): HWC uint8 -> CHW float in [0, 1]."""
    return torch.from_numpy(img).permute(2, 0, 1).float() / 255.


def horizontal_flip(x: torch.Tensor) -> torch.Tensor:
    """A deterministic stand-in for transforms.RandomHorizontalFlip(p=0.5)."""
    return x.flip(-1)


# 1. Subclass torch.utils.data.Dataset
class ImageFolderCustom(Dataset):

    # 2. Initialize with a targ_dir and transform (optional) parameter
    def __init__(self, targ_dir: str, transform=None) -> None:

        # 3. Create class attributes
        # Get all image paths
        self.paths = sorted(pathlib.Path(targ_dir).glob("*/*.npy"))  # note: you'd have to update this if you've got .png's or .jpeg's
        # Setup transforms
        self.transform = transform
        # Create classes and class_to_idx attributes
        self.classes, self.class_to_idx = find_classes(targ_dir)

    # 4. Make function to load images
    def load_image(self, index: int) -> np.ndarray:
        "Opens an image via a path and returns it."
        image_path = self.paths[index]
        return np.load(image_path)

    # 5. Overwrite the __len__() method (optional but recommended for subclasses of torch.utils.data.Dataset)
    def __len__(self) -> int:
        "Returns the total number of samples."
        return len(self.paths)

    # 6. Overwrite the __getitem__() method (required for subclasses of torch.utils.data.Dataset)
    def __getitem__(self, index: int) -> Tuple[torch.Tensor, int]:
        "Returns one sample of data, data and label (X, y)."
        img = self.load_image(index)
        class_name = self.paths[index].parent.name  # expects path in data_folder/class_name/image.jpeg
        class_idx = self.class_to_idx[class_name]

        # Transform if necessary
        if self.transform:
            return self.transform(img), class_idx  # return data, label (X, y)
        else:
            return img, class_idx  # return data, label (X, y)


train_transforms = lambda img: horizontal_flip(to_tensor(img))  # noqa: E731
test_transforms = to_tensor
train_data_custom = ImageFolderCustom(targ_dir=train_dir, transform=train_transforms)
test_data_custom = ImageFolderCustom(targ_dir=image_path / "test", transform=test_transforms)
show("custom_lengths", [len(train_data_custom), len(test_data_custom)])
show("custom_classes", list(train_data_custom.class_to_idx.values()))
img, lab = train_data_custom[0]
show("custom_sample", [list(img.shape), lab, img.dtype == torch.float32])
show("custom_pixels", img[:, 0, :4])
train_dataloader_custom = DataLoader(dataset=train_data_custom,  # use custom created train Dataset
                                     batch_size=6,  # how many samples per batch?
                                     num_workers=0,  # how many subprocesses to use for data loading? (higher = more)
                                     shuffle=False)  # (shuffle the data? - not here)
test_dataloader_custom = DataLoader(dataset=test_data_custom, batch_size=3, num_workers=0, shuffle=False)
img_custom, label_custom = next(iter(train_dataloader_custom))
show("custom_batch", [list(img_custom.shape), label_custom])


class TinyVGG(nn.Module):
    """
    Model architecture copying TinyVGG from:
    https://poloclub.github.io/cnn-explainer/
    """
    def __init__(self, input_shape: int, hidden_units: int, output_shape: int) -> None:
        super().__init__()
        self.conv_block_1 = nn.Sequential(
            nn.Conv2d(in_channels=input_shape, out_channels=hidden_units, kernel_size=3, stride=1, padding=1),
            nn.ReLU(),
            nn.Conv2d(in_channels=hidden_units, out_channels=hidden_units, kernel_size=3, stride=1, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(kernel_size=2, stride=2)  # default stride value is same as kernel_size
        )
        self.conv_block_2 = nn.Sequential(
            nn.Conv2d(hidden_units, hidden_units, kernel_size=3, padding=1),
            nn.ReLU(),
            nn.Conv2d(hidden_units, hidden_units, kernel_size=3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2)
        )
        self.classifier = nn.Sequential(
            nn.Flatten(),
            # Where did this in_features shape come from?
            # It's because each layer of our network compresses and changes the shape of our inputs data.
            nn.Linear(in_features=hidden_units * 4 * 4,
                      out_features=output_shape)
        )

    def forward(self, x: torch.Tensor):
        return self.classifier(self.conv_block_2(self.conv_block_1(x)))  # <- leverage the benefits of operator fusion


torch.manual_seed(42)
model_0 = TinyVGG(input_shape=3,  # number of color channels (3 for RGB)
                  hidden_units=8,
                  output_shape=len(train_data_custom.classes)).to(device)
numpy_init(torch, model_0, seed=5)

# 1. Get a batch of images and labels from the DataLoader
img_batch, label_batch = next(iter(train_dataloader_custom))
# 2. Get a single image from the batch and unsqueeze the image so its shape fits the model
img_single, label_single = img_batch[0].unsqueeze(dim=0), label_batch[0]
# 3. Perform a forward pass on a single image
model_0.eval()
with torch.inference_mode():
    pred = model_0(img_single.to(device))
show("single_logits", pred)
show("single_probs", torch.softmax(pred, dim=1))
show("single_label", [torch.argmax(torch.softmax(pred, dim=1), dim=1), label_single])


def train(model: torch.nn.Module,
          train_dataloader: torch.utils.data.DataLoader,
          test_dataloader: torch.utils.data.DataLoader,
          optimizer: torch.optim.Optimizer,
          loss_fn: torch.nn.Module = nn.CrossEntropyLoss(),
          epochs: int = 5):
    # 2. Create empty results dictionary
    results = {"train_loss": [],
               "train_acc": [],
               "test_loss": [],
               "test_acc": []
               }

    # 3. Loop through training and testing steps for a number of epochs
    for epoch in range(epochs):
        model.train()
        train_loss, train_acc = 0, 0
        for batch, (X, y) in enumerate(train_dataloader):
            X, y = X.to(device), y.to(device)
            y_pred = model(X)
            loss = loss_fn(y_pred, y)
            train_loss += loss.item()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            # Calculate and accumulate accuracy metric across all batches
            y_pred_class = torch.argmax(torch.softmax(y_pred, dim=1), dim=1)
            train_acc += (y_pred_class == y).sum().item() / len(y_pred)
        train_loss = train_loss / len(train_dataloader)
        train_acc = train_acc / len(train_dataloader)

        model.eval()
        test_loss, test_acc = 0, 0
        with torch.inference_mode():
            for batch, (X, y) in enumerate(test_dataloader):
                X, y = X.to(device), y.to(device)
                test_pred_logits = model(X)
                loss = loss_fn(test_pred_logits, y)
                test_loss += loss.item()
                test_pred_labels = test_pred_logits.argmax(dim=1)
                test_acc += ((test_pred_labels == y).sum().item() / len(test_pred_labels))
        test_loss = test_loss / len(test_dataloader)
        test_acc = test_acc / len(test_dataloader)

        # 4. Print out what's happening
        print(
            f"Epoch: {epoch+1} | "
            f"train_loss: {train_loss:.4f} | "
            f"train_acc: {train_acc:.4f} | "
            f"test_loss: {test_loss:.4f} | "
            f"test_acc: {test_acc:.4f}"
        )

        # 5. Update results dictionary
        results["train_loss"].append(train_loss)
        results["train_acc"].append(train_acc)
        results["test_loss"].append(test_loss)
        results["test_acc"].append(test_acc)

    # 6. Return the filled results at the end of the epochs
    return results


# Setup loss function and optimizer
loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(params=model_0.parameters(), lr=0.001)
model_0_results = train(model=model_0,
                        train_dataloader=train_dataloader_custom,
                        test_dataloader=test_dataloader_custom,
                        optimizer=optimizer,
                        loss_fn=loss_fn,
                        epochs=4)
for key, values in model_0_results.items():
    show(f"custom:{key}", values)

tmp_dir.cleanup()
