"""Weight averaging (``torch.optim.swa_utils``): ``AveragedModel`` for stochastic weight
averaging (SWA) and exponential moving averages (EMA), ``update_bn`` to recompute BatchNorm
statistics for the averaged weights, and the ``SWALR`` schedule; PyTorch's arithmetic."""

from __future__ import annotations

import itertools
import math
from copy import deepcopy

from .. import dtypes as D
from ..autograd.grad_mode import no_grad
from ..factory import tensor
from ..nn.modules.batchnorm import _BatchNorm
from ..nn.modules.module import Module
from ..tensor import Tensor
from .lr_scheduler import LRScheduler, _format_param, _warn_get_lr_called_within_step

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn",
           "get_swa_multi_avg_fn", "get_ema_avg_fn", "get_swa_avg_fn"]


def get_ema_multi_avg_fn(decay=0.999):
    """The in-place EMA update of lists of averaged and current tensors:
    ``ema = lerp(ema, current, 1 - decay)``."""
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in "
                         "[0,1] range.")

    @no_grad()
    def ema_update(ema_param_list, current_param_list, _) -> None:
        if ema_param_list[0].is_floating_point():
            for p_ema, p_model in zip(ema_param_list, current_param_list):
                p_ema.lerp_(p_model, 1 - decay)
        else:
            for p_ema, p_model in zip(ema_param_list, current_param_list):
                p_ema.copy_(p_ema * decay + p_model * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn():
    """The in-place running mean of lists of averaged and current tensors, ``num_averaged``
    models in so far."""

    @no_grad()
    def swa_update(averaged_param_list, current_param_list, num_averaged) -> None:
        if averaged_param_list[0].is_floating_point():
            # (a count held in a tensor gives a weight rounded to float32, as PyTorch's)
            weight = float(1 / (num_averaged + 1))
            for p_avg, p_model in zip(averaged_param_list, current_param_list):
                p_avg.lerp_(p_model, weight)
        else:
            for p_avg, p_model in zip(averaged_param_list, current_param_list):
                diff = p_model - p_avg
                if isinstance(num_averaged, Tensor):
                    p_avg.addcdiv_(diff, num_averaged + 1)
                else:
                    p_avg.add_(diff, alpha=1.0 / (num_averaged + 1))

    return swa_update


def get_ema_avg_fn(decay=0.999):
    """The EMA of one averaged and one current tensor: ``decay * ema + (1 - decay) * current``."""
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in "
                         "[0,1] range.")

    @no_grad()
    def ema_update(ema_param, current_param, num_averaged):
        return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn():
    """The running mean of one averaged and one current tensor, ``num_averaged`` models in."""

    @no_grad()
    def swa_update(averaged_param, current_param, num_averaged):
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


def _group_by_device_and_dtype(averaged, current) -> dict:
    """{(device, dtype): (averaged tensors, current tensors)}, in order of first appearance."""
    groups: dict = {}
    for a, c in zip(averaged, current):
        pair = groups.setdefault((a.device, a.dtype), ([], []))
        pair[0].append(a)
        pair[1].append(c)
    return groups


class AveragedModel(Module):
    """A deep copy of ``model`` whose parameters (and buffers, with ``use_buffers``) are the
    running average of the models passed to ``update_parameters``: their mean (SWA) unless an
    ``avg_fn`` (one tensor at a time) or a ``multi_avg_fn`` (lists, in place) says otherwise.
    ``n_averaged`` counts the models in; the first is copied."""

    def __init__(self, model: Module, device=None, avg_fn=None, multi_avg_fn=None,
                 use_buffers=False) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", tensor(0, dtype=D.int64, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def update_parameters(self, model: Module) -> None:
        """Average ``model``'s parameters (and buffers, with ``use_buffers``) in; without
        ``use_buffers`` its buffers are copied as they are."""
        self_param = (itertools.chain(self.module.parameters(), self.module.buffers())
                      if self.use_buffers else self.parameters())
        model_param = (itertools.chain(model.parameters(), model.buffers())
                       if self.use_buffers else model.parameters())
        self_detached, model_detached = [], []
        copy_param = bool(self.n_averaged == 0)
        for p_averaged, p_model in zip(self_param, model_param):
            p_model_ = p_model.detach().to(p_averaged.device)
            self_detached.append(p_averaged.detach())
            model_detached.append(p_model_)
            if copy_param:
                p_averaged.detach().copy_(p_model_)
        if self.n_averaged > 0:
            if self.multi_avg_fn is not None or self.avg_fn is None:
                groups = _group_by_device_and_dtype(self_detached, model_detached)
                for (device, _), (self_params, model_params) in groups.items():
                    n_averaged = self.n_averaged.to(device)
                    if self.multi_avg_fn:
                        self.multi_avg_fn(self_params, model_params, n_averaged)
                    else:
                        avg_fn = get_swa_avg_fn()
                        for p_averaged, p_model in zip(self_params, model_params):
                            p_averaged.copy_(avg_fn(p_averaged, p_model, n_averaged))
            else:
                for p_averaged, p_model in zip(self_detached, model_detached):
                    n_averaged = self.n_averaged.to(p_averaged.device)
                    p_averaged.detach().copy_(self.avg_fn(p_averaged.detach(), p_model,
                                                          n_averaged))
        if not self.use_buffers:
            # the buffers (BatchNorm's statistics) are the latest model's
            for b_swa, b_model in zip(self.module.buffers(), model.buffers()):
                b_swa.detach().copy_(b_model.detach().to(b_swa.device))
        self.n_averaged += 1


def update_bn(loader, model: Module, device=None) -> None:
    """Recompute the running statistics of ``model``'s BatchNorm layers in one pass over
    ``loader`` (batches: tensors, or sequences whose first item is the input), as cumulative
    averages (``momentum=None``); the layers' momenta and the model's mode are restored."""
    with no_grad():
        momenta = {}
        for module in model.modules():
            if isinstance(module, _BatchNorm):
                module.reset_running_stats()
                momenta[module] = module.momentum
        if not momenta:
            return
        was_training = model.training
        model.train()
        for module in momenta:
            module.momentum = None
        for input in loader:
            if isinstance(input, (list, tuple)):
                input = input[0]
            if device is not None:
                input = input.to(device)
            model(input)
        for bn_module in momenta:
            bn_module.momentum = momenta[bn_module]
        model.train(was_training)


class SWALR(LRScheduler):
    """Anneals each group's learning rate to its ``swa_lr`` over ``anneal_epochs`` steps
    (``'cos'`` or ``'linear'``), then holds it there."""

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos",
                 last_epoch=-1) -> None:
        swa_lrs = _format_param("swa_lr", optimizer, swa_lr)
        for swa_lr, group in zip(swa_lrs, optimizer.param_groups):
            group["swa_lr"] = swa_lr
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError("anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self) -> list:
        # (the learning rate before annealing is recovered from the current one, so that
        # other schedulers may have changed it in between)
        _warn_get_lr_called_within_step(self)
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        prev_lrs = [self._get_initial_lr(group["lr"], group["swa_lr"], prev_alpha)
                    for group in self.optimizer.param_groups]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [group["swa_lr"] * alpha + lr * (1 - alpha)
                for group, lr in zip(self.optimizer.param_groups, prev_lrs)]

    def _set_anneal_func(self, anneal_strategy) -> None:
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal

    def state_dict(self) -> dict:
        return {key: value for key, value in self.__dict__.items()
                if key not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict: dict) -> None:
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
