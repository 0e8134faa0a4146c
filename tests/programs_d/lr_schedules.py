"""Learning-rate schedules as training scripts write them: the learning-rate range test of
fast.ai's ``lr_find`` / pytorch-lr-finder (an exponential ``LambdaLR`` sweep with smoothed
losses, stopped when the loss diverges, the model and optimizer restored from ``state_dict``
copies), Hugging Face's ``get_linear_schedule_with_warmup`` and
``get_cosine_schedule_with_warmup`` as ``LambdaLR``, ``OneCycleLR`` (superconvergence, with
momentum cycling on SGD and on Adam's betas), ``CyclicLR`` (triangular2), ``SequentialLR`` of a
``LinearLR`` warmup and ``CosineAnnealingWarmRestarts`` stepped with fractional epochs, and the
scheduler's own ``state_dict`` round trip.

    python lr_schedules.py [torch|numbagrad]
"""
import copy
import math

import numpy as np

from _common import BACKEND, numpy_init, show

if BACKEND == "torch":
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from torch.optim import SGD, Adam, AdamW
    from torch.optim.lr_scheduler import (CosineAnnealingWarmRestarts, CyclicLR, LambdaLR, LinearLR,
                                          OneCycleLR, SequentialLR)
else:
    import numbagrad as torch
    import numbagrad.nn as nn
    import numbagrad.nn.functional as F
    from numbagrad.optim import SGD, Adam, AdamW
    from numbagrad.optim.lr_scheduler import (CosineAnnealingWarmRestarts, CyclicLR, LambdaLR, LinearLR,
                                              OneCycleLR, SequentialLR)

rng = np.random.default_rng(0)
X = torch.from_numpy(rng.normal(size=(64, 6)).astype(np.float32))
true_w = torch.from_numpy(rng.normal(size=(6, 3)).astype(np.float32))
y = (X @ true_w).argmax(1)
batches = [(X[i:i + 16], y[i:i + 16]) for i in range(0, 64, 16)]


def make_model(seed=0):
    model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))
    numpy_init(torch, model, seed=seed)
    return model


# ----- the learning-rate range test
class LRFinder:
    def __init__(self, model, optimizer, criterion):
        self.model = model
        self.optimizer = optimizer
        self.criterion = criterion
        self.history = {"lr": [], "loss": []}
        # Save the original state of the model and optimizer so they can be restored if
        # needed
        self.state_cacher = {"model": copy.deepcopy(model.state_dict()),
                             "optimizer": copy.deepcopy(optimizer.state_dict())}

    def reset(self):
        self.model.load_state_dict(self.state_cacher["model"])
        self.optimizer.load_state_dict(self.state_cacher["optimizer"])

    def range_test(self, start_lr=1e-5, end_lr=10, num_iter=40, smooth_f=0.05, diverge_th=5):
        for param_group in self.optimizer.param_groups:
            param_group["lr"] = start_lr
            param_group["initial_lr"] = start_lr
        gamma = (end_lr / start_lr) ** (1 / (num_iter - 1))
        lr_schedule = LambdaLR(self.optimizer, lambda it: gamma ** it)
        best_loss = None
        for iteration in range(num_iter):
            inputs, labels = batches[iteration % len(batches)]
            self.model.train()
            self.optimizer.zero_grad()
            loss = self.criterion(self.model(inputs), labels)
            loss.backward()
            self.optimizer.step()
            self.history["lr"].append(lr_schedule.get_last_lr()[0])
            lr_schedule.step()
            loss = loss.item()
            if iteration == 0:
                best_loss = loss
            else:
                loss = smooth_f * loss + (1 - smooth_f) * self.history["loss"][-1]
                if loss < best_loss:
                    best_loss = loss
            self.history["loss"].append(loss)
            if loss > diverge_th * best_loss:
                print("Stopping early, the loss has diverged")
                break
        print("Learning rate search finished.")

    def suggestion(self, skip_start=2, skip_end=2):
        lrs = self.history["lr"][skip_start:-skip_end]
        losses = np.array(self.history["loss"][skip_start:-skip_end])
        min_grad_idx = int(np.gradient(losses).argmin())
        return lrs[min_grad_idx]


model = make_model()
optimizer = SGD(model.parameters(), lr=0.1, momentum=0.9)
criterion = nn.CrossEntropyLoss()
lr_finder = LRFinder(model, optimizer, criterion)
lr_finder.range_test(start_lr=1e-4, end_lr=100, num_iter=30)
show("finder_lrs", lr_finder.history["lr"])
show("finder_losses", lr_finder.history["loss"])
show("finder_suggestion", lr_finder.suggestion())
lr_finder.reset()
show("finder_reset", [model[0].bias[:3], optimizer.param_groups[0]["lr"], len(optimizer.state)])


# ----- Hugging Face's schedules, written as LambdaLR
def get_linear_schedule_with_warmup(optimizer, num_warmup_steps, num_training_steps, last_epoch=-1):
    def lr_lambda(current_step: int):
        if current_step < num_warmup_steps:
            return float(current_step) / float(max(1, num_warmup_steps))
        return max(
            0.0, float(num_training_steps - current_step) / float(max(1, num_training_steps - num_warmup_steps))
        )

    return LambdaLR(optimizer, lr_lambda, last_epoch)


def get_cosine_schedule_with_warmup(optimizer, num_warmup_steps, num_training_steps, num_cycles=0.5, last_epoch=-1):
    def lr_lambda(current_step):
        if current_step < num_warmup_steps:
            return float(current_step) / float(max(1, num_warmup_steps))
        progress = float(current_step - num_warmup_steps) / float(max(1, num_training_steps - num_warmup_steps))
        return max(0.0, 0.5 * (1.0 + math.cos(math.pi * float(num_cycles) * 2.0 * progress)))

    return LambdaLR(optimizer, lr_lambda, last_epoch)


def train(model, optimizer, scheduler, steps, clip=None):
    losses, lrs = [], []
    for step in range(steps):
        inputs, labels = batches[step % len(batches)]
        loss = F.cross_entropy(model(inputs), labels)
        loss.backward()
        if clip is not None:
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        optimizer.step()
        lrs.append(scheduler.get_last_lr()[0])
        scheduler.step()
        optimizer.zero_grad()
        losses.append(loss.item())
    return losses, lrs


model = make_model(1)
no_decay = ["bias", "LayerNorm.weight"]
optimizer_grouped_parameters = [
    {"params": [p for n, p in model.named_parameters() if not any(nd in n for nd in no_decay)], "weight_decay": 0.01},
    {"params": [p for n, p in model.named_parameters() if any(nd in n for nd in no_decay)], "weight_decay": 0.0},
]
optimizer = AdamW(optimizer_grouped_parameters, lr=5e-2, eps=1e-8)
scheduler = get_linear_schedule_with_warmup(optimizer, num_warmup_steps=3, num_training_steps=12)
losses, lrs = train(model, optimizer, scheduler, 12, clip=1.0)
show("hf_linear_lrs", lrs)
show("hf_linear_losses", losses)
show("hf_group_lrs", [g["lr"] for g in optimizer.param_groups])

model = make_model(2)
optimizer = AdamW(model.parameters(), lr=5e-2)
scheduler = get_cosine_schedule_with_warmup(optimizer, 2, 10)
losses, lrs = train(model, optimizer, scheduler, 10)
show("hf_cosine_lrs", lrs)
show("hf_cosine_losses", losses)
state = scheduler.state_dict()
print(sorted(state))
show("lambda_state", [state["last_epoch"], state["_step_count"], state["base_lrs"], state["lr_lambdas"] == [None]])

# ----- OneCycleLR: SGD with momentum cycling, then Adam with beta1 cycling
model = make_model(3)
optimizer = SGD(model.parameters(), lr=0.1, momentum=0.9)
scheduler = OneCycleLR(optimizer, max_lr=1.0, steps_per_epoch=len(batches), epochs=3)
moms = []
losses, lrs = [], []
for epoch in range(3):
    for inputs, labels in batches:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(inputs), labels)
        loss.backward()
        optimizer.step()
        lrs.append(optimizer.param_groups[0]["lr"])
        moms.append(optimizer.param_groups[0]["momentum"])
        scheduler.step()
        losses.append(loss.item())
show("onecycle_lrs", lrs)
show("onecycle_momentum", moms)
show("onecycle_losses", losses)

model = make_model(4)
optimizer = Adam(model.parameters(), lr=1e-3)
scheduler = OneCycleLR(optimizer, max_lr=0.05, total_steps=8, pct_start=0.25, anneal_strategy="linear",
                       div_factor=10.0, final_div_factor=100.0, three_phase=True)
losses, lrs = train(model, optimizer, scheduler, 8)
show("onecycle_adam_lrs", lrs)
show("onecycle_adam_betas", optimizer.param_groups[0]["betas"])
show("onecycle_adam_losses", losses)

# ----- CyclicLR
model = make_model(5)
optimizer = SGD(model.parameters(), lr=0.01, momentum=0.9)
scheduler = CyclicLR(optimizer, base_lr=0.01, max_lr=0.5, step_size_up=2, mode="triangular2")
losses, lrs = train(model, optimizer, scheduler, 12)
show("cyclic_lrs", lrs)
show("cyclic_momentum", optimizer.param_groups[0]["momentum"])
show("cyclic_losses", losses)

# ----- a warmup, then cosine annealing with warm restarts stepped by fractional epochs
model = make_model(6)
optimizer = SGD(model.parameters(), lr=0.3)
warmup = LinearLR(optimizer, start_factor=0.1, total_iters=2)
restarts = CosineAnnealingWarmRestarts(optimizer, T_0=3, T_mult=2, eta_min=0.01)
scheduler = SequentialLR(optimizer, schedulers=[warmup, restarts], milestones=[2])
losses, lrs = train(model, optimizer, scheduler, 12)
show("sequential_lrs", lrs)
show("sequential_losses", losses)

optimizer = SGD(make_model(7).parameters(), lr=0.3)
scheduler = CosineAnnealingWarmRestarts(optimizer, T_0=2, T_mult=1)
iters = 4
frac_lrs = []
for epoch in range(3):
    for i in range(iters):
        optimizer.step()
        scheduler.step(epoch + i / iters)
        frac_lrs.append(scheduler.get_last_lr()[0])
show("warm_restart_fractional", frac_lrs)

# the scheduler's state round trip: a new scheduler picks up where the old one was
optimizer = SGD(make_model(8).parameters(), lr=0.2, momentum=0.9)
scheduler = OneCycleLR(optimizer, max_lr=1.0, total_steps=10)
for _ in range(4):
    optimizer.step()
    scheduler.step()
saved = scheduler.state_dict()
optimizer2 = SGD(make_model(8).parameters(), lr=0.2, momentum=0.9)
optimizer2.load_state_dict(optimizer.state_dict())
scheduler2 = OneCycleLR(optimizer2, max_lr=1.0, total_steps=10)
scheduler2.load_state_dict(saved)
next_lrs = []
for _ in range(3):
    optimizer2.step()
    scheduler2.step()
    next_lrs.append(scheduler2.get_last_lr()[0])
show("resumed_lrs", next_lrs)
show("resumed_last_epoch", scheduler2.last_epoch)
