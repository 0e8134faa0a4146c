"""L-BFGS (``torch.optim.LBFGS``): quasi-Newton steps over all parameters as one flat vector,
the inverse Hessian from the last steps by the two-loop recursion (Nocedal & Wright Alg. 7.4),
the step's length fixed or found by a strong-Wolfe line search (Alg. 3.5/3.6)."""

from __future__ import annotations

from functools import partial

from ..autograd.grad_mode import enable_grad, no_grad
from ..ops import cat
from ..tensor import Tensor
from .optimizer import Optimizer

# The Wolfe constants: sufficient decrease (c1) and curvature (c2), N&W's usual values for a
# quasi-Newton method, which PyTorch uses too.
_C1 = 1e-4
_C2 = 0.9
# The zoom stops on a bracket narrower than this (scaled by the direction's largest entry).
# PyTorch's line search uses this fixed value, not the optimizer's tolerance_change.
_MIN_BRACKET = 1e-9
# A pair (s, y) whose curvature y.s is not above this is left out of the history: it would
# make the inverse Hessian approximation indefinite (or divide by about zero).
_MIN_CURVATURE = 1e-10


# ---------------------------------------------------------------- the parameters as one vector


class _FlatParams:
    """The optimizer's parameters seen as one vector: their gradients joined, and a step along
    a flat direction written back into each."""

    def __init__(self, params: list) -> None:
        self.params = params

    def gradient(self) -> Tensor:
        # (a new tensor: the closure may zero the parameters' own .grad in place)
        return cat([p.new_zeros(p.numel()) if p.grad is None else p.grad.reshape(-1)
                    for p in self.params], 0)

    def move(self, length, direction: Tensor) -> None:
        start = 0
        for p in self.params:
            n = p.numel()
            p.add_(direction[start:start + n].view_as(p), alpha=length)
            start += n

    def snapshot(self) -> list:
        return [p.clone() for p in self.params]

    def restore(self, snapshot: list) -> None:
        for p, saved in zip(self.params, snapshot):
            p.copy_(saved)


# ---------------------------------------------------------------- curvature history


class _CurvatureHistory:
    """The last pairs ``s = x_new - x_old`` and ``y = g_new - g_old`` with ``rho = 1 / y.s``,
    and ``gamma``, the scale of the initial inverse Hessian ``H0 = gamma * I``.

    The lists are the optimizer's state (``old_stps``, ``old_dirs``, ``ro``; ``gamma`` is
    ``H_diag``), changed in place, so a saved state goes on with the same history."""

    def __init__(self, steps, grad_changes, rhos, gamma) -> None:
        self.steps, self.grad_changes, self.rhos, self.gamma = steps, grad_changes, rhos, gamma

    @classmethod
    def empty(cls) -> _CurvatureHistory:
        return cls([], [], [], 1)

    @classmethod
    def from_state(cls, state: dict) -> _CurvatureHistory:
        return cls(state.get("old_stps"), state.get("old_dirs"), state.get("ro"),
                   state.get("H_diag"))

    def save(self, state: dict) -> None:
        state["old_dirs"], state["old_stps"] = self.grad_changes, self.steps
        state["ro"], state["H_diag"] = self.rhos, self.gamma

    def record(self, s: Tensor, y: Tensor, capacity: int) -> None:
        """Keep the pair (s, y) if its curvature is positive, dropping the oldest pair when
        ``capacity`` are kept; ``gamma`` becomes ``y.s / y.y`` (N&W eq. 7.20)."""
        curvature = y.dot(s)
        if not curvature > _MIN_CURVATURE:
            return
        # (PyTorch drops one pair only when exactly full: a history_size lowered between steps
        # leaves the history longer, as there)
        if len(self.steps) == capacity:
            for kept in (self.steps, self.grad_changes, self.rhos):
                kept.pop(0)
        self.steps.append(s)
        self.grad_changes.append(y)
        self.rhos.append(1.0 / curvature)
        self.gamma = curvature / y.dot(y)

    def descent_direction(self, grad: Tensor, alphas: list) -> Tensor:
        """``-H grad`` by the two-loop recursion, run on ``-grad`` from the start (the
        coefficients it stores in ``alphas``, the state's ``al``, are PyTorch's)."""
        pairs = list(zip(self.steps, self.grad_changes, self.rhos))
        q = grad.neg()
        for i in range(len(pairs) - 1, -1, -1):  # newest pair first
            s, y, rho = pairs[i]
            alphas[i] = s.dot(q) * rho
            q.add_(y, alpha=-alphas[i])
        r = q * self.gamma
        for i, (s, y, rho) in enumerate(pairs):  # oldest pair first
            beta = y.dot(r) * rho
            r.add_(s, alpha=alphas[i] - beta)
        return r


# ---------------------------------------------------------------- strong-Wolfe line search


class _Probe:
    """A trial point on the search line: its step length, the loss and flat gradient there,
    and the slope (the directional derivative, gradient . direction)."""

    __slots__ = ("length", "loss", "grad", "slope")

    def __init__(self, length, loss, grad, slope) -> None:
        self.length, self.loss, self.grad, self.slope = length, loss, grad, slope


def _clamp(x, low, high):
    # (builtin min/max keep the object that wins, a Tensor or a number, as PyTorch's code)
    return min(max(x, low), high)


def _cubic_minimizer(a: _Probe, b: _Probe, bounds=None):
    """The minimiser of the cubic that matches loss and slope at ``a`` and ``b`` (N&W eq.
    3.59), clamped to ``bounds`` (default: the interval between them); the middle of the
    bounds when the cubic has no local minimum."""
    near, far = (a, b) if a.length <= b.length else (b, a)
    low, high = bounds if bounds is not None else (near.length, far.length)
    d1 = near.slope + far.slope - 3 * (near.loss - far.loss) / (near.length - far.length)
    disc = d1 * d1 - near.slope * far.slope
    if not disc >= 0:
        return (low + high) / 2.0
    d2 = disc.sqrt()
    # (N&W's formula taken from the farther point, where its d2 has a plus sign)
    ratio = (far.slope + d2 - d1) / (far.slope - near.slope + 2 * d2)
    return _clamp(far.length - (far.length - near.length) * ratio, low, high)


class _StrongWolfeSearch:
    """A step length along ``direction`` meeting the strong Wolfe conditions, from
    ``origin`` (length 0: the current loss, gradient and slope, the slope negative).

    ``evaluate(length)`` returns the loss and flat gradient at that length and leaves the
    parameters as they were. ``budget`` bounds the probes after the first; the search returns
    the best point it found when it runs out."""

    def __init__(self, evaluate, direction: Tensor, origin: _Probe, budget: int) -> None:
        self.evaluate = evaluate
        self.direction = direction
        self.origin = origin
        self.budget = budget
        self.scale = direction.abs().max()  # a bracket's width in the parameters' units
        self.extra_probes = 0

    def run(self, first_length):
        """(loss, flat gradient, step length, number of evaluations) of the chosen point."""
        ends, done = self._bracket(self._probe(first_length))
        low = self._lower(ends)
        if not done:
            low = self._zoom(ends, low)
        best = ends[low]
        return best.loss, best.grad, best.length, self.extra_probes + 1

    def _probe(self, length) -> _Probe:
        loss, grad = self.evaluate(length)
        return _Probe(length, loss, grad, grad.dot(self.direction))

    def _next_probe(self, length) -> _Probe:
        self.extra_probes += 1
        return self._probe(length)

    # (the tests below, and the others written "not ...", are PyTorch's comparisons negated,
    # so that a NaN takes the branch it takes there)

    def _decreases_enough(self, p: _Probe) -> bool:  # Armijo's condition
        return not p.loss > self.origin.loss + _C1 * p.length * self.origin.slope

    def _flat_enough(self, p: _Probe) -> bool:  # the strong curvature condition
        return abs(p.slope) <= -_C2 * self.origin.slope

    @staticmethod
    def _lower(ends: list) -> int:
        # (on a tie the first end, as PyTorch)
        return 0 if ends[0].loss <= ends[-1].loss else 1

    def _bracket(self, trial: _Probe):
        """Phase 1: extrapolate until an interval must contain an acceptable point, or a
        trial is one. Returns ([end, end] or [the point], whether that point is found)."""
        previous = self.origin
        while self.extra_probes < self.budget:
            # (the "no lower than the previous trial" test starts at the third trial, as in
            # PyTorch's torch7-derived search)
            if not self._decreases_enough(trial) or (
                    self.extra_probes > 1 and trial.loss >= previous.loss):
                return [previous, trial], False
            if self._flat_enough(trial):
                return [trial], True
            if trial.slope >= 0:  # past a minimum along the line
                return [previous, trial], False
            # still descending: go further, at least 1% past the trial and at most 10 times it
            length = _cubic_minimizer(
                previous, trial,
                bounds=(trial.length + 0.01 * (trial.length - previous.length),
                        trial.length * 10))
            previous, trial = trial, self._next_probe(length)
        # out of evaluations: choose between the origin and the last trial (also when the
        # budget is negative, max_eval below 1, where PyTorch's search fails on an unbound name)
        return [self.origin, trial], False

    def _zoom(self, ends: list, low: int) -> int:
        """Phase 2: shrink the bracket ``ends`` (``ends[low]`` the lower loss) around a point
        meeting both conditions. Returns the position of the point to take."""
        stalled = False
        while self.extra_probes < self.budget:
            if abs(ends[1].length - ends[0].length) * self.scale < _MIN_BRACKET:
                break
            length, stalled = self._safeguard(_cubic_minimizer(ends[0], ends[1]), ends,
                                              stalled)
            trial = self._next_probe(length)
            if not self._decreases_enough(trial) or trial.loss >= ends[low].loss:
                ends[1 - low] = trial
                low = self._lower(ends)
                continue
            found = self._flat_enough(trial)
            if not found and trial.slope * (ends[1 - low].length - ends[low].length) >= 0:
                # the loss rises from the trial towards the high end: a minimum lies between
                # the trial and the old low end, which becomes the high end
                ends[1 - low] = ends[low]
            ends[low] = trial
            if found:
                break
        return low

    @staticmethod
    def _safeguard(length, ends: list, stalled: bool):
        """Keep an interpolated length off the bracket's ends: one within a tenth of the
        bracket of an end, twice running or on or outside it, moves to a tenth of the bracket
        from that end (so the bracket keeps shrinking). Returns (length, stalled)."""
        lengths = [ends[0].length, ends[1].length]
        left, right = min(lengths), max(lengths)
        margin = 0.1 * (right - left)
        if not min(right - length, length - left) < margin:
            return length, False
        if stalled or length >= right or length <= left:
            if abs(length - right) < abs(length - left):
                return right - margin, False
            return left + margin, False
        return length, True


# ---------------------------------------------------------------- the optimizer


class LBFGS(Optimizer):
    """L-BFGS over the parameters of one group, flattened into one vector. ``step(closure)``
    runs up to ``max_iter`` iterations (about ``max_eval`` evaluations of ``closure``), each a
    direction from the last ``history_size`` steps, then a step of ``lr`` or one found by a
    strong-Wolfe line search (``line_search_fn='strong_wolfe'``). Its state (``func_evals``,
    ``n_iter``, ``d``, ``t``, ``old_dirs``, ``old_stps``, ``ro``, ``H_diag``,
    ``prev_flat_grad``, ``prev_loss``, ``al``) sits under the first parameter, as PyTorch's:
    there ``load_state_dict`` casts it to the parameters' dtype and device."""

    def __init__(self, params, lr=1, max_iter: int = 20, max_eval: int | None = None,
                 tolerance_grad: float = 1e-7, tolerance_change: float = 1e-9,
                 history_size: int = 100, line_search_fn: str | None = None) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = dict(lr=lr, max_iter=max_iter, max_eval=max_eval,
                        tolerance_grad=tolerance_grad, tolerance_change=tolerance_change,
                        history_size=history_size, line_search_fn=line_search_fn)
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]
        self._flat = _FlatParams(self._params)

    def step(self, closure):  # (unlike other optimizers', the closure is required)
        """Run one L-BFGS optimisation (up to ``max_iter`` iterations); ``closure`` clears
        the gradients, re-evaluates the model, calls ``backward`` and returns the loss.
        Returns the loss of the first evaluation."""
        with no_grad():
            return self._optimize(enable_grad()(closure))

    def _evaluate(self, closure):
        """The loss (a Python number) and the flat gradient at the current parameters."""
        loss = float(closure())  # (under no_grad: no warning for its requires_grad)
        return loss, self._flat.gradient()

    def _evaluate_at(self, closure, origin: list, direction: Tensor, length):
        """The loss and flat gradient ``length`` along ``direction`` from the parameters
        ``origin``, the parameters left at ``origin``."""
        self._flat.move(length, direction)
        result = self._evaluate(closure)
        self._flat.restore(origin)
        return result

    def _optimize(self, closure):
        group = self.param_groups[0]
        lr = group["lr"]
        if isinstance(lr, Tensor) and lr.dim() != 0:
            lr = lr.squeeze()  # (a 1-element tensor lr is used as a 0-dim tensor)
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]

        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        first_loss = closure()
        loss, grad = float(first_loss), self._flat.gradient()
        evals = 1
        state["func_evals"] += 1
        if grad.abs().max() <= tolerance_grad:  # already at a stationary point
            return first_loss

        history = _CurvatureHistory.from_state(state)
        direction, length = state.get("d"), state.get("t")
        prev_grad, prev_loss = state.get("prev_flat_grad"), state.get("prev_loss")
        stationary = False
        for iteration in range(1, max_iter + 1):
            state["n_iter"] += 1
            first_ever = state["n_iter"] == 1
            if first_ever:
                history = _CurvatureHistory.empty()
                direction = grad.neg()
            else:
                # the pair from the step just taken, then the quasi-Newton direction
                history.record(direction.mul(length), grad.sub(prev_grad), group["history_size"])
                alphas = state.setdefault("al", [None] * group["history_size"])
                direction = history.descent_direction(grad, alphas)
            if prev_grad is None:
                prev_grad = grad.clone()
            else:
                prev_grad.copy_(grad)
            prev_loss = loss

            # the first step ever (along -grad, with no curvature to scale it) moves at most lr
            # in the 1-norm
            length = min(1.0, 1.0 / grad.abs().sum()) * lr if first_ever else lr
            slope = grad.dot(direction)
            if slope > -tolerance_change:  # not a descent direction (any more)
                break

            used = 0
            if group["line_search_fn"] is not None:
                if group["line_search_fn"] != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                evaluate = partial(self._evaluate_at, closure, self._flat.snapshot(), direction)
                search = _StrongWolfeSearch(evaluate, direction, _Probe(0, loss, grad, slope),
                                            budget=max_eval - evals)
                loss, grad, length, used = search.run(length)
                self._flat.move(length, direction)
                stationary = grad.abs().max() <= tolerance_grad
            else:
                self._flat.move(length, direction)
                # (no evaluation after the last iteration: in a stochastic setting the next
                # step's first one replaces it)
                if iteration != max_iter:
                    loss, grad = self._evaluate(closure)
                    stationary = grad.abs().max() <= tolerance_grad
                    used = 1
            evals += used
            state["func_evals"] += used

            if iteration == max_iter or evals >= max_eval or stationary:
                break
            # no progress: the step moved no parameter, or the loss, by more than the tolerance
            if direction.mul(length).abs().max() <= tolerance_change:
                break
            if abs(loss - prev_loss) < tolerance_change:
                break

        state["d"], state["t"] = direction, length
        history.save(state)
        state["prev_flat_grad"], state["prev_loss"] = prev_grad, prev_loss
        return first_loss
