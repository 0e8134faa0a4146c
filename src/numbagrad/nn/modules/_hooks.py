"""Module backward hooks (PyTorch's ``torch.utils.hooks.BackwardHook``): identity nodes on a
module's tensor inputs and outputs catch the gradients that flow through them."""

from __future__ import annotations

import warnings

from ...autograd.function import Function
from ...autograd.grad_mode import is_grad_enabled
from ...tensor import Tensor

ERR_NO_INPUT_TENSORS = "Cannot set Module backward hook for a Module with no input Tensors."
WARN_NO_INPUT_GRAD = (
    "Full backward hook is firing when gradients are computed with respect to module outputs "
    "since no inputs require gradients. See "
    "https://docs.pytorch.org/docs/main/generated/torch.nn.Module.html"
    "#torch.nn.Module.register_full_backward_hook for more details."
)


class BackwardHookFunction(Function):
    """Identity on any number of tensors; its node is where the gradients are caught."""

    @staticmethod
    def forward(ctx, *args):
        ctx.mark_non_differentiable(*[arg for arg in args if not arg.requires_grad])
        return args

    @staticmethod
    def backward(ctx, *args):
        return args


def _pack_with_none(indices, values, size) -> tuple:
    res = [None] * size
    for idx, val in zip(indices, values):
        res[idx] = val
    return tuple(res)


class BackwardHook:
    """One module call's full backward hooks: ``setup_input_hook`` wraps the arguments,
    ``setup_output_hook`` the result; the output node runs the pre-hooks and keeps the
    output gradients, the input node then calls the hooks with both."""

    def __init__(self, module, user_hooks, user_pre_hooks) -> None:
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.module = module
        self.grad_outputs = None
        self.n_outputs = -1
        self.output_tensors_index = None
        self.n_inputs = -1
        self.input_tensors_index = None

    def _input_hook(self, grad_input, _):
        if self.grad_outputs is None:
            # the gradient reached the inputs without passing through the outputs
            # (a double backward)
            return None
        res = _pack_with_none(self.input_tensors_index, grad_input, self.n_inputs)
        for hook in self.user_hooks:
            out = hook(self.module, res, self.grad_outputs)
            if out is None:
                continue
            if len(out) != len(res):
                raise RuntimeError("Backward hook returned an invalid number of grad_input, "
                                   f"got {len(out)}, but expected {len(res)}")
            res = out
        self.grad_outputs = None
        return tuple(res[i] for i in self.input_tensors_index)

    def _output_hook(self, _, grad_output):
        self.grad_outputs = _pack_with_none(self.output_tensors_index, grad_output,
                                            self.n_outputs)
        expected_len = len(self.grad_outputs)
        for pre_hook in self.user_pre_hooks:
            out = pre_hook(self.module, self.grad_outputs)
            if out is None:
                continue
            if len(out) != expected_len:
                raise RuntimeError("Backward pre hook returned an invalid number of "
                                   f"grad_output, got {len(out)}, but expected {expected_len}")
            self.grad_outputs = out
        local_grad_outputs = self.grad_outputs
        if self.input_tensors_index is None:
            # no input requires grad: no input node will run, so the hooks run here
            warnings.warn(WARN_NO_INPUT_GRAD, stacklevel=5)
            grad_inputs = (None,) * self.n_inputs
            for hook in self.user_hooks:
                res = hook(self.module, grad_inputs, self.grad_outputs)
                if res is not None and not (
                        isinstance(res, tuple) and all(el is None for el in res)):
                    raise RuntimeError("Backward hook for Modules where no input requires "
                                       "gradient should always return None or None for all "
                                       "gradients.")
            self.grad_outputs = None
        return tuple(local_grad_outputs[i] for i in self.output_tensors_index)

    def _apply_on_tensors(self, hook, args):
        """``args`` with its tensors passed through a BackwardHookFunction whose node gets
        ``hook``, and the tensors' positions (None when nothing requires grad)."""
        tensors_idx = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        tensors = [args[i] for i in tensors_idx]
        if not (any(t.requires_grad for t in tensors) and is_grad_enabled()):
            return args, None
        new_tensors = BackwardHookFunction.apply(*tensors)
        if len(new_tensors) == 0:
            raise RuntimeError(ERR_NO_INPUT_TENSORS)
        grad_fn = next(t.grad_fn for t in new_tensors if t.grad_fn is not None)
        grad_fn.register_hook(hook)
        arg_list = list(args)
        for idx, val in zip(tensors_idx, new_tensors):
            arg_list[idx] = val
        out = tuple(arg_list) if type(args) is tuple else type(args)(*arg_list)
        return out, tensors_idx

    def setup_input_hook(self, args):
        res, input_idx = self._apply_on_tensors(self._input_hook, args)
        self.n_inputs = len(args)
        self.input_tensors_index = input_idx
        return res

    def setup_output_hook(self, result):
        is_tuple = isinstance(result, tuple)
        args = result if is_tuple else (result,)
        res, output_idx = self._apply_on_tensors(self._output_hook, args)
        self.n_outputs = len(args)
        self.output_tensors_index = output_idx
        return res if is_tuple else res[0]


def warn_non_full_backward_hook(inputs, result, grad_fn) -> None:
    """PyTorch's warnings where a (non-full) ``register_backward_hook`` hook, which sees only
    the last node's gradients, will miss some of the module's."""
    if not isinstance(result, Tensor):
        if not (isinstance(result, tuple) and all(isinstance(r, Tensor) for r in result)):
            warnings.warn(
                "Using non-full backward hooks on a Module that does not return a single Tensor "
                "or a tuple of Tensors is deprecated and will be removed in future versions. "
                "This hook will be missing some of the grad_output. Please use "
                "register_full_backward_hook to get the documented behavior.",
                FutureWarning, stacklevel=3)
            return
    else:
        result = (result,)
    if not isinstance(inputs, Tensor):
        if not (isinstance(inputs, tuple) and all(isinstance(i, Tensor) for i in inputs)):
            warnings.warn(
                "Using non-full backward hooks on a Module that does not take as input a single "
                "Tensor or a tuple of Tensors is deprecated and will be removed in future "
                "versions. This hook will be missing some of the grad_input. Please use "
                "register_full_backward_hook to get the documented behavior.",
                FutureWarning, stacklevel=3)
            return
    else:
        inputs = (inputs,)
    out_grad_fn = {r.grad_fn for r in result if r.grad_fn is not None}
    if len(out_grad_fn) == 0 or (len(out_grad_fn) == 1 and grad_fn not in out_grad_fn):
        warnings.warn(
            "Using a non-full backward hook when outputs are nested in python data structure is "
            "deprecated and will be removed in future versions. This hook will be missing some "
            "grad_output.", FutureWarning, stacklevel=3)
    elif len(out_grad_fn) > 1:
        warnings.warn(
            "Using a non-full backward hook when outputs are generated by different autograd "
            "Nodes is deprecated and will be removed in future versions. This hook will be "
            "missing some grad_output. Please use register_full_backward_hook to get the "
            "documented behavior.", FutureWarning, stacklevel=3)
    else:
        inputs_grad_fn = {i.grad_fn for i in inputs if i.grad_fn is not None}
        next_functions = {n[0] for n in grad_fn.next_functions}
        if inputs_grad_fn != next_functions:
            warnings.warn(
                "Using a non-full backward hook when the forward contains multiple autograd "
                "Nodes is deprecated and will be removed in future versions. This hook will be "
                "missing some grad_input. Please use register_full_backward_hook to get the "
                "documented behavior.", FutureWarning, stacklevel=3)
