"""Differences from PyTorch that the differential fuzzer (``tests/fuzz.py``) found in the
activations, losses, tensor API and small integer dtypes, each kept as the minimal program that
showed it. ``fuzz.run_program`` runs a program in both libraries and compares every statement's
outcome (values, dtype, shape, requires_grad, grad_fn name, or the exception's type) and the
tensors a ``# compare:`` comment names."""

from __future__ import annotations

import pytest

pytest.importorskip("torch", reason="the programs are compared with PyTorch (not installed)")

import fuzz  # noqa: E402  (tests/ is on sys.path: conftest.py)

PROGRAMS = {
    # the float-only activations refuse integer and bool tensors as PyTorch has no kernel
    "gelu_silu_softplus_refuse_integers": """
        a = torch.nn.functional.gelu(torch.tensor([1, 2]))
        b = torch.nn.functional.silu(torch.tensor([True]))
        c = torch.nn.functional.softplus(torch.tensor([1, 2], dtype=torch.int16), 2.0)
        d = torch.nn.functional.silu(torch.tensor([1, 2]), inplace=True)
        """,
    "softplus_params": """
        x = torch.tensor([1.0, 30.0, -2.0], requires_grad=True)
        y = torch.nn.functional.softplus(x, 2.0, threshold=10)
        y.sum().backward()  # compare: x.grad
        """,
    # hardtanh of uint8 with a negative bound: PyTorch's error
    "hardtanh_uint8_negative_limits": """
        a = torch.nn.functional.hardtanh(torch.tensor([1, 2], dtype=torch.uint8))
        b = torch.tensor([1, 2], dtype=torch.uint8)
        torch.nn.functional.hardtanh_(b, -1.0, 1.0)
        c = torch.nn.functional.hardtanh(torch.tensor([1, 2], dtype=torch.uint8), 0.0, 1.0)
        """,
    # pairwise_distance is ATen's norm(x, p, dim): NormBackward1, not LinalgVectorNormBackward0
    "pairwise_distance_node": """
        x = torch.tensor([[1.0, -2.0, 0.5], [0.0, 1.0, 2.0]], requires_grad=True)
        y = torch.tensor([[0.5, 1.0, -1.0], [2.0, -0.25, 1.0]], requires_grad=True)
        d = torch.nn.functional.pairwise_distance(x, y, p=1.0, keepdim=True)
        e = torch.nn.functional.pairwise_distance(x, y)
        f = torch.nn.functional.triplet_margin_loss(x, y, y * 2)
        (d.sum() + e.sum() + f).backward()  # compare: x.grad, y.grad
        """,
    # binary_cross_entropy_with_logits: the loss in the target's dtype (PyTorch writes it into
    # 1 - target in place), and weights that require grad refused
    "bce_with_logits_target_dtype": """
        x = torch.tensor([[1.0, -2.0], [0.0, 3.0]], dtype=torch.float64, requires_grad=True)
        t = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
        l1 = torch.nn.functional.binary_cross_entropy_with_logits(x, t, reduction='none')
        l2 = torch.nn.functional.binary_cross_entropy_with_logits(x.float(), t.double(), pos_weight=torch.ones(2, dtype=torch.float64))
        l3 = torch.nn.functional.binary_cross_entropy_with_logits(x, t, weight=torch.tensor([0.151], dtype=torch.float64))
        (l1.sum() + l2 + l3).backward()  # compare: x.grad
        """,
    "bce_weights_requiring_grad": """
        x = torch.tensor([1.0, -2.0], requires_grad=True)
        t = torch.tensor([1.0, 0.0])
        w = torch.ones(2, requires_grad=True)
        a = torch.nn.functional.binary_cross_entropy_with_logits(x, t, pos_weight=w)
        b = torch.nn.functional.binary_cross_entropy_with_logits(x, t, weight=w)
        c = torch.nn.functional.binary_cross_entropy(x.sigmoid(), t, weight=w)
        with torch.no_grad(): d = torch.nn.functional.binary_cross_entropy_with_logits(x, t, weight=w)
        """,
    # elu's backward sends NaN to the positive side (PyTorch's x <= 0 test): scale, not NaN
    "elu_backward_nan": """
        x = torch.tensor([np.nan, -1.0, 2.0], requires_grad=True)
        y = torch.nn.functional.selu(x) + torch.nn.functional.celu(x, 2.0) + torch.nn.functional.elu(x * 1, inplace=True)
        y.sum().backward()  # compare: x.grad
        """,
    # in-place activations with a negative slope: PyTorch's in-place node, whose backward raises
    "inplace_negative_slope": """
        x = torch.tensor([-1.0, 2.0, 0.5], requires_grad=True)
        a = x * 1
        F.elu(a, -1.0, inplace=True)
        b = x * 1
        torch.celu_(b, -0.5)
        c = x * 1
        F.rrelu_(c, -0.5, -0.25)
        d = x * 1
        F.leaky_relu(d, 0.5, inplace=True)
        (d.sum() + x.sum()).backward()  # compare: x.grad
        c.sum().backward()
        """,
    "hardsigmoid_no_second_derivative": """
        x = torch.tensor([0.5, 1.0, -4.0], requires_grad=True)
        g, = torch.autograd.grad(F.hardsigmoid(x).sum(), x, create_graph=True)
        gg = torch.autograd.grad(g.sum(), x)
        """,
    # an integer output saved for backward (cummax's indices) does not require grad
    "cummax_create_graph": """
        x = torch.tensor([-2.0, -2.75, 1.0], requires_grad=True)
        v = torch.cummax(x, dim=0)
        (v[0] * torch.tensor([1.0, -1.0, 2.0])).sum().backward(create_graph=True)  # compare: x.grad
        y = torch.tensor([[3.0, 1.0], [2.0, 4.0]], requires_grad=True)
        g, = torch.autograd.grad(torch.cummin(y, 1)[0], y, torch.ones(2, 2, requires_grad=True), create_graph=True)
        """,
    "cummax_saves_input": """
        x = torch.tensor([1.5, -3.0, 0.5], requires_grad=True)
        v = x * 1
        m = v.cummin(-1)
        with torch.no_grad(): v.mul_(0.5)
        m[0].sum().backward()
        """,
    "prelu_weight_under_create_graph": """
        c = torch.tensor([[-2.5], [-0.25]])
        w = torch.tensor([-0.25], requires_grad=True)
        y = F.prelu(c, w)
        (y * torch.tensor([[-0.5], [2.0]])).sum().backward(create_graph=True)  # compare: w.grad
        x = torch.zeros(5, 3, 0, requires_grad=True)
        s = x.nansum().sub(-0.25).pow(-2)
        w2 = torch.tensor([-3.0], requires_grad=True)
        (torch.prelu(s, w2) * 1.5).sum().backward(create_graph=True)
        gg = torch.autograd.grad((w2.grad * torch.tensor([-3.0])).sum(), [w2], allow_unused=True)
        """,
    "take_empty_index_backward": """
        x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        t = x.t().take(torch.tensor([], dtype=torch.int64))
        (t * torch.zeros(0)).sum().backward()  # compare: x.grad
        """,
    # an Ellipsis standing for no dims does not separate advanced indices (PyTorch, not NumPy)
    "advanced_index_empty_ellipsis": """
        x = torch.arange(12.0).reshape(1, 3, 4).requires_grad_()
        a = x[-1:-1:1, [1], ..., [-2]]
        b = x[0:1, [1, 2], ..., [0, 3]]
        c = x[[0], ..., [1, 2], [0, 3]]
        d = x[0, [1], ..., [2]]
        b.sum().backward()  # compare: x.grad
        y = torch.zeros(1, 3, 4)
        y[0:1, [1, 2], ..., [0, 3]] = torch.ones(1, 2)
        """,
    "transpose_0d_create_graph": """
        x = torch.tensor(-1.5, requires_grad=True)
        v = x * 1
        t = v.transpose(0, 0)
        g, = torch.autograd.grad((t * t).sum(), v, create_graph=True)
        """,
    # x[basic] = v under create_graph: v's gradient ends in PyTorch's node (CloneBackward0 where
    # v is the region's shape up to leading ones, ViewBackward0 where it broadcasts)
    "setitem_value_gradient_node": """
        w = torch.ones(2, 4, requires_grad=True)
        y = torch.zeros(2, 4)
        a = torch.zeros(1, 1, 4, requires_grad=True)
        y[None, 1:] = a
        ga, = torch.autograd.grad((y * w).sum(), a, create_graph=True)
        z = torch.zeros(1, 4)
        b = torch.zeros(1, 0, 4, requires_grad=True)
        z[None, 1:] = b
        gb, = torch.autograd.grad((z * w[:1]).sum(), b, create_graph=True)
        u = torch.zeros(3, 4)
        c = torch.zeros(2, 1, requires_grad=True)
        u[1:] = c
        gc, = torch.autograd.grad((u * torch.ones(3, 4, requires_grad=True)).sum(), c, create_graph=True)
        """,
    # a hook on an output of a multi-output node that got no gradient is called with None
    "hook_on_unused_output": """
        x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        v = torch.aminmax(x)
        h = v[1].register_hook(lambda g: None)
        v[0].backward()  # compare: x.grad
        y = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        w = torch.aminmax(y)
        k = w[1].register_hook(lambda g: g + 1)
        w[0].backward()
        """,
    # hooks of a node no gradient reached are not called (seed 939's sign, a leaf's)
    "hook_on_unreached_node": """
        x = torch.tensor([1.5, -2.0], requires_grad=True)
        y = torch.tensor([0.5], requires_grad=True)
        s = torch.sign(x)
        s.register_hook(lambda g: g + 1)
        y.register_hook(lambda g: g * 0.5)
        l = (x.exp() * y).sum()
        l.backward(create_graph=True)
        gg = torch.autograd.grad((x.grad * 2).sum(), [x], allow_unused=True)
        """,
    # cummin of an empty tensor: the input itself is the gradient (PyTorch's formula)
    "cummin_empty_create_graph": """
        c = torch.zeros(0, 2, 3, requires_grad=True)
        v = torch.cummin(c, -3)
        v[0].gt_(torch.zeros(0, 1, 3))
        (v[0].sigmoid() * torch.zeros(0, 2, 3)).sum().backward(create_graph=True)  # compare: c.grad
        """,
    "index_copy_source_grad_node": """
        c = torch.tensor([[-0.5], [1.25], [-0.25]], dtype=torch.float64, requires_grad=True)
        s = torch.tensor(np.zeros((3, 0)), requires_grad=True)
        y = torch.index_copy(c, -1, torch.zeros(0, dtype=torch.int64), s)
        g, = torch.autograd.grad((y.exp().exp() * 0.75).sum(), s, create_graph=True)
        x = torch.tensor([-2.5])
        s2 = torch.tensor([2.64], requires_grad=True)
        y2 = x.index_copy(-1, torch.tensor([0]), s2)
        g2, = torch.autograd.grad(y2.rsqrt().sum(), s2, create_graph=True)
        """,
    # a float written into an integer tensor must fit its range (PyTorch's checked conversion)
    "float_into_integer_range": """
        a = torch.tensor([4, 3], dtype=torch.uint8)
        a.fill_(-2.5)
        a.fill_(255.5)
        a.fill_(2.7)
        a[0] = 255.5
        a[1] = -0.5
        a[0] = 1.9
        b = torch.tensor([1, 2], dtype=torch.int8)
        b.fill_(-2.5)
        b[0] = 300.0
        b[1] = -0.5
        c = torch.tensor([1, 2])
        c[1] = np.nan
        c.fill_(np.inf)
        d = torch.full((2,), 255.5, dtype=torch.uint8)
        """,
    "clamp_nan_bound": """
        x = torch.tensor([1.0, np.nan, -2.0], requires_grad=True)
        a = x.clamp(min=np.nan)
        b = x.clamp(np.nan, 1.0)
        c = x.clamp_max(np.nan)
        d = torch.tensor([1, 2], dtype=torch.int16).clamp(max=np.nan)
        (a * 2).sum().backward()  # compare: x.grad
        """,
    "inf_norm_over_empty_dim": """
        a = torch.dist(torch.zeros(3, 4, 1, 0), torch.zeros(1, 0), float('inf'))
        b = torch.linalg.vector_norm(torch.zeros(0, 3), float('-inf'), 0)
        c = torch.linalg.vector_norm(torch.zeros(0, 3), float('inf'), 1)
        """,
    "index_fill_0d": """
        x = torch.tensor(-2.75, dtype=torch.float64, requires_grad=True)
        y = torch.index_copy(x, 0, torch.tensor([0]), torch.tensor(2.6, dtype=torch.float64))
        (y * -2.5).sum().backward(create_graph=True)  # compare: x.grad
        z = torch.tensor(np.nan).index_fill(0, torch.tensor([0]), 1.0)
        """,
    # threshold_ writes an expanded view (PyTorch's kernel skips the overlap check)
    "threshold_expanded_view": """
        x = torch.tensor([0.62, -1.771], dtype=torch.float64)
        torch.threshold_(x.expand(2, 2), -1.0, 1.5)  # compare: x
        y = torch.tensor([0.5, -2.0])
        F.threshold(y.expand(3, 2), 0.0, 7.0, inplace=True)  # compare: y
        """,
    # index_put keeps a non-contiguous input's layout (PyTorch clones it); logcumsumexp's
    # result is contiguous: what view() accepts after them
    "index_put_logcumsumexp_layout": """
        x = torch.arange(12).reshape(3, 4).T
        y = torch.index_put(x, (torch.tensor([0, 1]),), torch.tensor([7]))
        a = y.view(12)
        b = y.T.reshape(12)
        l = x.double().logcumsumexp(1)
        c = l.view(12)
        """,
    "index_put_value_grad_node": """
        x = torch.tensor([[1.0, 2.0, 2.0]])
        c = torch.tensor([[-0.25, -1.0, 2.0]], requires_grad=True)
        y = torch.index_put(x, (torch.tensor([0]),), c)
        g, = torch.autograd.grad((y * y).sum(), c, create_graph=True)
        d = torch.tensor([0.5, 1.5], requires_grad=True)
        z = torch.index_put(torch.zeros(2, 2), (torch.tensor([1]),), d)
        h, = torch.autograd.grad((z * z).sum(), d, create_graph=True)
        """,
    # logcumsumexp of an empty tensor hands the (empty) gradient on as it is
    "logcumsumexp_empty_create_graph": """
        x = torch.zeros(0, 3, 3, requires_grad=True)
        y = torch.cat((x, x), dim=2).unsqueeze(-1).logcumsumexp(3)
        (y * torch.zeros(0, 3, 6, 1)).sum().backward(create_graph=True)  # compare: x.grad
        z = torch.zeros(2, 0, requires_grad=True)
        g, = torch.autograd.grad(z.logcumsumexp(1), z, torch.zeros(2, 0, requires_grad=True), create_graph=True)
        """,
    # prod of a 0-d tensor passes its gradient on as it is (no view under create_graph)
    "prod_0d_dim_create_graph": """
        c = torch.tensor(0.376, requires_grad=True)
        y = F.softmax(c.prod(0), dim=-1)
        g, = torch.autograd.grad((y * 0.25 * -1.381).sum(), c, create_graph=True)
        z = (c * c).prod()
        h, = torch.autograd.grad(z, c, create_graph=True)
        """,
    # Huber's and smooth L1's second derivative is 0 where |input - target| is the width
    # (PyTorch's double backward tests it strictly; seed 61245)
    "piecewise_losses_second_order_at_the_width": """
        c = torch.tensor([[-0.5, -1.0], [-1.25, -0.25], [-1.75, -1.0], [-1.5, -2.5]], requires_grad=True)
        t = torch.tensor([-0.5], requires_grad=True)
        w = torch.tensor([[-2.33, -0.121], [2.141, -1.602], [1.022, 1.232], [-0.328, -0.27]])
        gg = torch.autograd.grad((torch.autograd.grad(F.huber_loss(c, t, reduction='sum'), c, create_graph=True)[0] * w).sum(), [c, t])
        hh = torch.autograd.grad((torch.autograd.grad(F.smooth_l1_loss(c, t, beta=0.5), c, create_graph=True)[0] * w).sum(), [c, t])
        """,
    # ... and a NaN difference gives a NaN gradient (seed 62451)
    "piecewise_losses_nan_difference": """
        c = torch.tensor([-float('inf'), 0.5, float('nan')], requires_grad=True)
        v = c * 2
        loss = (F.huber_loss(c, v) + F.smooth_l1_loss(c, v, reduction='sum')).sum()
        loss.backward()  # compare: c.grad
        """,
    # a view made before its base's requires_grad_() requires grad, so retain_grad() is
    # allowed (it is a leaf: nothing to retain; seed 64926)
    "retain_grad_of_a_view_made_before_requires_grad": """
        x = torch.tensor([2.5, 1.0, 2.0, 3.0, 4.0])
        y = x[1::3]
        x.requires_grad_(True)
        y.retain_grad()
        z = y * 2
        """,
    # take keeps its input for backward, as PyTorch's TakeBackward0 (seed 65263)
    "take_saves_its_input": """
        x = torch.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], requires_grad=True)
        v = torch.sin(x)
        y = v.take(torch.tensor([-1, 2, 3]))
        v.div_(v)
        (y * torch.tensor([2.5, 0.75, 2.0])).sum().backward()
        """,
    # binary_cross_entropy's result is laid out as its input (a transposed input: no view)
    # (seed 66234)
    "binary_cross_entropy_layout_of_its_input": """
        x = torch.tensor([[0.5, -1.0, 2.0, 0.25], [1.5, 0.25, -0.75, 1.0]], requires_grad=True)
        p = torch.sigmoid(x.t() * 1)
        t = torch.tensor([[0.25, 0.75], [0.5, 0.5], [0.75, 0.25], [0.25, 0.25]])
        y = F.binary_cross_entropy(p, t, reduction='none')
        z = y.view(8)
        """,
    # scatter and scatter_add into a 0-d tensor, and the gradient of min/max over dim 0 of a
    # 0-d tensor under create_graph, which PyTorch scatters into zeros (seed 70374)
    "zero_dim_scatter_and_min_dim_create_graph": """
        a = torch.zeros(()).scatter(0, torch.tensor(0), torch.tensor(5.0))
        b = torch.zeros(()).scatter_add(0, torch.tensor(0), torch.tensor(5.0))
        c = torch.tensor(-2.0, requires_grad=True)
        x = torch.tensor([1.0, -0.5], requires_grad=True)
        v = F.hardswish(c.min(dim=0)[0])
        loss = (v * 1.75).sum() + (x * x).sum() * c
        g, = torch.autograd.grad(loss, c, create_graph=True)
        """,
    # a Python bool in an index is a 0-d mask, as in PyTorch (x[True] adds a dim of 1,
    # x[False] an empty one), a 0-d tensor's too
    "python_bool_index": """
        x = torch.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], requires_grad=True)
        a = x[True]
        b = x[False]
        c = x[True, 1]
        d = x[..., True]
        e = (x * 2)[1, True]
        (a.sum() + c.sum() * 2 + (d * 3).sum() + e.sum()).backward()  # compare: x.grad
        """,
    # a 0-d tensor written into a row: PyTorch fills it in, so under create_graph the value's
    # gradient ends in FillBackward's sum (SumBackward0), not a view (seed 89849)
    "setitem_zero_dim_value_create_graph": """
        v = torch.eye(3)
        c = torch.tensor(0.5, requires_grad=True)
        v[-3,] = c
        l = F.cross_entropy(v, torch.tensor([2, 1, 0]), reduction='none')
        g, = torch.autograd.grad((l * torch.tensor([-2.75, -2.75, -2.5])).sum(), c, create_graph=True)
        """,
    # elu / selu / celu's double backward multiplies by its x < 0 mask, as PyTorch's: a NaN
    # product (0 * inf at a NaN input) stays NaN where the mask is 0 (seed 62787)
    "elu_double_backward_nan_times_mask": """
        x = torch.tensor([np.nan, -1.0, 0.0, 2.0], requires_grad=True)
        d = torch.tensor([np.nan, -1.0, 0.5], dtype=torch.float64, requires_grad=True)
        y = torch.selu(x) * torch.tensor([-np.inf, 1.0, 2.0, -np.inf]) + F.celu(x, 2.0) + F.elu(x * 1, inplace=True)
        z = F.selu(d) * torch.tensor([-np.inf, 1.0, 1.0], dtype=torch.float64)
        g, h = torch.autograd.grad(y.sum() + z.sum(), [x, d], create_graph=True)
        gg = torch.autograd.grad((g * torch.tensor([0.0, 1.5, 1.0, 0.5])).sum() + (h * 0).sum(), [x, d])  # compare: gg
        """,
    # prelu's gradients are PyTorch's _prelu_kernel_backward (PreluKernelBackwardBackward0),
    # whose double backward counts x == 0 as positive where prelu's first derivative counts it
    # as negative (seed 65853)
    "prelu_double_backward_at_zero": """
        x = torch.tensor([[0.0, -1.0, 2.0], [0.5, 0.0, -0.25]], requires_grad=True)
        w = torch.tensor([0.25, -0.5, 1.5], requires_grad=True)
        d = torch.tensor([0.0, -2.0, 0.5], dtype=torch.float64, requires_grad=True)
        e = torch.tensor([0.75], dtype=torch.float64, requires_grad=True)
        y = F.prelu(x.unsqueeze(-1), w) * torch.tensor([[[1.5], [-2.0], [0.5]]])
        z = torch.prelu(d, e) * torch.tensor([3.0, 1.0, -1.0], dtype=torch.float64)
        gx, gw, gd, ge = torch.autograd.grad(y.sum() + z.sum(), [x, w, d, e], create_graph=True)
        gg = torch.autograd.grad((gx * torch.tensor([2.0, -1.0, 3.0])).sum() + (gw * gw).sum() + (gd * 1.5).sum() + ge.sum() * 2, [x, w, d, e])  # compare: gg
        """,
    # bmm of an empty product returns zeros in batch2's dtype before it compares the dtypes,
    # and an integer one cannot be recorded; matmul drops a batch of one only of an operand
    # that requires grad (else one bmm, which skips the dtype check when empty: seeds 69540,
    # 30771)
    "bmm_matmul_empty_two_dtypes": """
        a = torch.bmm(torch.zeros(0, 2, 2, dtype=torch.float64), torch.zeros(0, 2, 4, dtype=torch.int64))
        b = torch.bmm(torch.zeros(2, 3, 0), torch.zeros(2, 0, 4, dtype=torch.float64))
        c = torch.bmm(torch.zeros(0, 2, 2, dtype=torch.float64, requires_grad=True), torch.zeros(0, 2, 4, dtype=torch.int64))
        d = torch.bmm(torch.zeros(2, 3, 2), torch.zeros(2, 2, 1, dtype=torch.float64))
        x = torch.tensor([[[1.5, -2.0, 0.5]], [[0.25, 1.0, -1.0]]], requires_grad=True)
        w = torch.tensor([[[1.0, 2.0], [-0.5, 0.0], [3.0, 1.5]]], requires_grad=True)
        e = torch.matmul(torch.zeros(4, 0, 3), torch.tensor([[[1, 2], [2, 4], [-2, 0]]]))
        f = torch.matmul(torch.zeros(4, 0, 3, requires_grad=True), torch.zeros(1, 3, 2, dtype=torch.int64))
        g = torch.matmul(torch.zeros(4, 0, 3, dtype=torch.float64), w)
        h = torch.matmul(x, w.detach())
        n1 = h.grad_fn.next_functions[0][0].name() == 'BmmBackward0'
        k = torch.matmul(x.detach(), w)
        n2 = k.grad_fn.next_functions[0][0].name() == 'MmBackward0'
        (h.sum() + (k * k).sum()).backward()  # compare: x.grad, w.grad
        """,
    # gather and the scatters take a 0-d index, input or source as 1-d, as PyTorch (its
    # ensure_nonempty_dim), check nothing of an empty index, and a source larger than its index
    # gets no gradient: PyTorch's engine refuses the index-shaped one
    "zero_dim_index_gather_scatter": """
        x = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
        d = torch.tensor([0.5, 1.5], dtype=torch.float64, requires_grad=True)
        s = torch.tensor(5.0, requires_grad=True)
        z = torch.tensor(-0.75, requires_grad=True)
        a = torch.gather(x * 1, 0, torch.tensor(2))
        b = (d * 2).gather(-1, torch.tensor(0, dtype=torch.int32))
        c = torch.scatter(x * 1, 0, torch.tensor(1), s * 2)
        e = torch.scatter_add(x * 1, 0, torch.tensor(-1 + 1), s * 3)
        f = (x * 1).scatter(0, torch.tensor(2), 4.0)
        h = torch.scatter_add(z * 1, 0, torch.tensor([0, 0]), x[:2] * 1)
        k = torch.gather(z * 1, 0, torch.tensor([0, 0, 0]))
        m = torch.scatter(x * 1, 0, torch.tensor([1]), s * 1)
        n = torch.scatter_reduce(x * 1, 0, torch.tensor(0), s * 1, 'amax')
        o = torch.gather(x, 0, torch.zeros(0, 2, dtype=torch.int64))
        p = torch.scatter(x, 0, torch.tensor(1), torch.ones(2, 2))
        q = torch.scatter_add(x, 0, torch.tensor(3), s)
        r = torch.scatter(x * 1, 0, torch.tensor(1), torch.tensor([7.0, 8.0]))
        t = torch.autograd.grad(r.sum(), x)
        u = torch.scatter_add(x * 1, 0, torch.tensor([1]), torch.tensor([7.0, 8.0], requires_grad=True))
        u.sum().backward()
        loss = (a * 3 + b.float() + (c * c).sum() + (e * torch.tensor([1.0, 2.0, 3.0])).sum() + f.sum() + h * h + k.sum() + m.sum() + n.sum()).sum()
        g = torch.autograd.grad(loss, [x, d, s, z], create_graph=True)
        gg = torch.autograd.grad((g[2] * g[2]).sum() + (g[0] * g[0]).sum() + (g[3] * g[3]).sum(), [x, s, z])  # compare: gg
        """,
    # the index ops save what PyTorch's nodes save, each checked against in-place changes at
    # backward: the index always, index_copy's and index_add's source when it requires grad,
    # gather's input, scatter_reduce's input, source and result (seed 74161)
    "index_ops_save_index_and_source": """
        x = torch.tensor([[1.0, 2.0], [3.0, -1.0], [0.5, 4.0]], requires_grad=True)
        s = torch.zeros(0, 2, requires_grad=True)
        v = torch.index_copy(x, 0, torch.zeros(0, dtype=torch.int64), s)
        with torch.no_grad(): s.mul_(0.5)
        v.sum().backward()
        w = torch.tensor([[1.0, 2.0], [0.5, -3.0]], requires_grad=True)
        a = torch.index_add(x * 1, 0, torch.tensor([2, 0]), w, alpha=2.0)
        b = torch.index_copy(x.detach(), 0, torch.tensor([2, 0]), w)
        with torch.no_grad(): w.add_(1.0)
        a.sum().backward()
        b.sum().backward()
        i = torch.tensor([[2, 0], [1, 1]])
        c = torch.gather(x, 0, i)
        d = torch.index_select(x, 0, torch.tensor([1]))
        i.add_(0)
        c.sum().backward()
        d.sum().backward()
        y = x * 1
        e = torch.gather(y, 1, torch.tensor([[1], [0], [0]]))
        y.add_(1.0)
        e.sum().backward()
        f = torch.scatter_reduce(x * 1, 0, torch.tensor([[1, 0]]), w * 1, 'sum')
        g = x * 2
        h = torch.scatter_reduce(g, 0, torch.tensor([[1, 0]]), w * 1, 'sum')
        g.mul_(2.0)
        (f.sum() * 2).backward()
        h.sum().backward()
        """,
    # multi_margin_loss's gradient is PyTorch's kernel's: each sample's for an incoming 1, then
    # times the incoming gradient, so an infinite one gives +-inf where a class gains or loses
    # and NaN (0 * inf) only where nothing changes (seed 81671)
    "multi_margin_loss_infinite_incoming_gradient": """
        x = torch.tensor([[np.nan, -0.735, 1.159], [2.98, 2.295, 0.849], [0.5, -0.75, 1.25]], requires_grad=True)
        d = torch.tensor([[0.5, -0.75, 1.25], [2.0, 1.5, 0.25]], dtype=torch.float64, requires_grad=True)
        t = torch.tensor([0, 1, 0])
        a = F.multi_margin_loss(x, t, p=1, margin=0.5)
        b = F.multi_margin_loss(x, t, p=2, margin=1.0, reduction='sum', weight=torch.tensor([0.5, 2.0, 1.5]))
        c = F.multi_margin_loss(x, t, reduction='none')
        e = F.multi_margin_loss(d, torch.tensor([2, 0]), p=2, reduction='none')
        ga = torch.autograd.grad(a * np.inf, x, retain_graph=True)
        gb = torch.autograd.grad(b * -np.inf, x)
        gc = torch.autograd.grad((c * torch.tensor([np.inf, 1.0, -np.inf])).sum(), x)
        (e * torch.tensor([-np.inf, 2.0], dtype=torch.float64)).sum().backward()  # compare: d.grad
        """,
    # a 0-d mask in an index is PyTorch's unsqueeze, then an index of the new dim: under
    # create_graph the input's gradient ends in SqueezeBackward1 where that unsqueeze is the
    # first part of the index that does something (seed 75804)
    "zero_dim_mask_create_graph_node": """
        c = torch.tensor(2.5, requires_grad=True)
        x = torch.tensor([[0.5, -1.0], [2.0, 1.5]], dtype=torch.float64, requires_grad=True)
        a = c[c > 0]
        b = c[torch.tensor(False)]
        d = (c * 1).reshape(1)[True]
        e = x[torch.tensor(True), 1:]
        f = x[1:, True]
        g, = torch.autograd.grad((a * a).sum() + b.sum() + (d * 3).sum(), c, create_graph=True)
        h, = torch.autograd.grad((e * e).sum(), x, create_graph=True)
        k, = torch.autograd.grad((f * f).sum(), x, create_graph=True)
        gg = torch.autograd.grad(g + (h * k).sum(), [c, x])  # compare: gg
        """,
    # hardtanh of an integer tensor truncates its limits to integers, as PyTorch's legacy
    # toLong (-0.5 is 0: no refusal of an unsigned input; seed 105432)
    "hardtanh_integer_limits_truncated": """
        u = torch.tensor([[1], [1], [3]], dtype=torch.uint8)
        a = F.hardtanh(u[:1:2], -0.5, 1.0)
        b = F.hardtanh(u, -0.9, 1.5)
        c = F.hardtanh(u.to(torch.int16), -1.5, 2.5)
        d = F.hardtanh(u, -1.0, 1.0)
        e = torch.tensor([1, 5], dtype=torch.uint8)
        F.hardtanh_(e, -0.5, 0.5)
        """,
    # the gradient of a 0-d tensor's cummax/cummin, sort, topk, kthvalue, median and mode
    # under create_graph is PyTorch's scatter into zeros (ScatterAddBackward0/ScatterBackward0),
    # index_select of a 0-d tensor takes one index, flip of one copies it, roll names the dim
    # it lacks (seed 106160)
    "zero_dim_selections_create_graph": """
        c = torch.tensor(2.5, requires_grad=True)
        w = torch.tensor(3.0, requires_grad=True)
        v = torch.cummin(c, 0)[0] + torch.sort(c)[0] + torch.topk(c, 1)[0] + torch.kthvalue(c, 1)[0] + torch.median(c, 0)[0] + torch.mode(c)[0]
        g, = torch.autograd.grad(v * w, c, create_graph=True)
        h, = torch.autograd.grad(torch.cummax(c, 0)[0] * w, c, create_graph=True)
        k, = torch.autograd.grad(torch.sort(c, 0, descending=True)[0] * w, c, create_graph=True)
        m, = torch.autograd.grad(torch.index_select(c, 0, torch.tensor([0])).sum() * w, c, create_graph=True)
        r = torch.index_select(c, 0, torch.tensor([0, 0]))
        n = torch.flip(c * 1, [0])
        p = torch.roll(c, 1, -1)
        q = torch.roll(c, 2)
        gg = torch.autograd.grad(g + h + k + m, [c, w])  # compare: gg
        """,
    # index_add checks its source as PyTorch's index_func_meta_impl: one slice per index,
    # the other dims as the input's, a 0-d input or source compared whole
    "index_add_source_checks": """
        x = torch.tensor([[1.0, 2.0], [3.0, -1.0], [0.5, 4.0]], requires_grad=True)
        c = torch.tensor(2.0, requires_grad=True)
        a = torch.index_add(c, 0, torch.tensor([0]), torch.tensor([1.0]))
        b = torch.index_add(c, 0, torch.tensor([0, 0]), torch.tensor(1.0))
        d = torch.index_add(c * 1, 0, torch.tensor(0), c * 2)
        e = torch.index_add(x, 0, torch.tensor([0]), torch.ones(1, 3))
        f = torch.index_add(x, 1, torch.tensor([0]), torch.ones(3))
        h = torch.index_add(x, 0, torch.tensor([[0]]), torch.ones(1, 2))
        k = torch.index_add(torch.zeros(3), 0, torch.tensor([0]), torch.tensor(1.0))
        (d * 3).backward()  # compare: c.grad
        """,
    # index_copy's gradient of a 0-d source is PyTorch's index_select by the squeezed index
    # (IndexSelectBackward0), summed to the source's shape where that selects a 1-d slice
    # (SumBackward0; seed 110361)
    "index_copy_zero_dim_source_create_graph": """
        x = torch.tensor(0.645, requires_grad=True)
        c = torch.tensor(-0.5, requires_grad=True)
        y = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
        d = torch.tensor(1.5, dtype=torch.float32, requires_grad=True)
        v = x.index_copy(0, torch.tensor([0]), c)
        w = torch.index_copy(y, 0, torch.tensor(1), d)
        g, = torch.autograd.grad((torch.tanh(v) * 0.325).sum(), c, create_graph=True)
        h, = torch.autograd.grad((w * torch.tensor([1.0, 2.5, 3.0])).sum(), d, create_graph=True)
        """,
    # logsigmoid and rrelu make contiguous results whatever their input's layout, as
    # PyTorch's kernels (a view of the result then works: seed 116020)
    "logsigmoid_rrelu_contiguous_result": """
        x = torch.tensor(np.arange(40.0, dtype=np.float32).reshape(5, 4, 2) / 10 - 2, requires_grad=True)
        v = torch.permute(x, (0, 2, 1))
        a = F.logsigmoid(v).view(2, 20)
        b = F.rrelu(v).view(40)
        c = F.rrelu(v.detach(), training=True).view(4, 10).shape
        (a.sum() + b.sum()).backward()  # compare: x.grad
        """,
    # amax / amin / aminmax of a 0-d tensor over a named dim: under create_graph PyTorch's
    # gradient is 1-d (restore_reduced_dims), which its engine sums back (SumBackward0)
    "amax_zero_dim_named_dim_create_graph": """
        c = torch.tensor(2.0, requires_grad=True)
        w = torch.tensor(3.0, requires_grad=True)
        a, = torch.autograd.grad(torch.amax(c, 0) * w, c, create_graph=True)
        b, = torch.autograd.grad(torch.amin(c, -1) * w, c, create_graph=True)
        d, = torch.autograd.grad(sum(torch.aminmax(c, dim=0)) * w, c, create_graph=True)
        e, = torch.autograd.grad(torch.amax(c, 0, True) * w, c, create_graph=True)
        f, = torch.autograd.grad(torch.amax(c) * w, c, create_graph=True)
        gg = torch.autograd.grad(a + b + d + e + f, w)  # compare: gg
        """,
    # a view's node read while its base needs no grad: PyTorch notes no version then, so after
    # a write through a view the base's requires_grad_() still re-derives the view's node
    # (AsStridedBackward0; a multi-output view's refusal). numbagrad had noted it: the view
    # kept no node, its gradient was lost (seed 158405)
    "view_node_read_before_base_requires_grad": """
        v = torch.zeros(2, 3)
        s = v[0]
        t = v.split(1)[0]
        w = v.view(6)
        with torch.no_grad(): s.mul_(0.5)
        a = s.grad_fn is None
        b = t.grad_fn is None
        c = w.grad_fn is None
        v.requires_grad_(True)
        d = s * 2
        e = t * 2
        f = w * 3
        (d.sum() + f.sum()).backward()  # compare: v.grad
        """,
    # autograd.grad for one input does not run the nodes that lead elsewhere, nor the hooks
    # of their outputs (a hook that doubles an output no gradient reached raised: seed 208339)
    "grad_inputs_skip_the_hooks_of_nodes_not_run": """
        x = torch.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
        v = x.aminmax(dim=1, keepdim=True)
        h = v[1].register_hook(lambda g: g * 2)
        c = torch.tensor([1.0], requires_grad=True)
        loss = (v[0] + c).sum()
        g, = torch.autograd.grad(loss, c, create_graph=True)  # compare: g
        """,
    # a 0-d tensor written into an integer tensor is cast as a copy casts it, wrapped (as a
    # Python int it raised NumPy's OverflowError: seed 210139)
    "setitem_a_0d_tensor_wraps_into_uint8": """
        x = torch.tensor(np.array([0, 1], dtype=np.uint8))
        x[...,] = torch.tensor(np.array(-4, dtype=np.int64))
        y = torch.tensor(np.array([0, 1], dtype=np.uint8))
        y.fill_(torch.tensor(300))  # compare: x, y
        """,
    # the backward of a 0-d tensor's transpose on its array (seeds 220901, 221510: the array
    # path swapped axes a 0-d array does not have)
    "transpose_of_a_0d_tensor_backward": """
        c = torch.tensor(np.array(-3.0, dtype=np.float32), requires_grad=True)
        v = (c * 2).transpose(0, 0)
        w = c.transpose(-1, -1).t().permute(())
        loss = (v * -0.331 + w).sum()
        loss.backward()  # compare: c.grad
        """,
    # a number that does not fit the dtype raises before the index is read (seed 242943:
    # a negative step raised its ValueError first)
    # a one-value operand of a higher rank broadcasts a permuted dense operand's result (seed
    # 247414: the memory-order loop kept the operand's shape)
    "permuted_operand_minus_a_one_value_tensor_of_higher_rank": """
        x = torch.tensor([[-2.305, -1.223], [2.264, 1.14]], requires_grad=True)
        v = x.mT.relu()
        w = v.sub(torch.tensor([[[0.5]]]))
        w.sum().backward()  # compare: w, x.grad
        """,
    # binary_cross_entropy's second derivative in x: a rule of five arrays (seed 249708: the
    # general path's loop table stopped at four)
    "binary_cross_entropy_second_derivative_of_a_0d_input": """
        c = torch.tensor(1.827, requires_grad=True)
        t = torch.tensor(np.array(1.0, dtype=np.float32))
        loss = F.binary_cross_entropy(torch.sigmoid(c * 0.5), t)
        loss.backward(create_graph=True)
        gg = torch.autograd.grad((c.grad * 0.995).sum(), [c])
        """,
    # PyTorch's integer pow: a zero base to a negative power is 0 (seed 247816: INT_MIN, C's
    # inf made an integer), tensor or number base; a float zero base still gives inf
    "integer_zero_to_a_negative_power_is_zero": """
        e = torch.tensor([-1, 3, 4, 0])
        a = 0 ** e
        b = torch.tensor([0, 0, 2, -1]) ** torch.tensor([-1, -2, -1, -3])
        c = 0.0 ** e.float()
        """,
    # smooth_l1 and huber's second derivatives multiply by the mask of the quadratic region,
    # as PyTorch's double backward does: an infinite gradient outside it gives NaN, not 0
    # (seed 251883: -inf)
    "smooth_l1_and_huber_second_derivative_with_an_infinite_gradient": """
        x = torch.tensor([2.5, 2.0, 0.1], requires_grad=True)
        t = torch.tensor([0.4, 1.9, 0.3], requires_grad=True)
        w = torch.tensor([np.inf, 2.0, -np.inf])
        gx, gt = torch.autograd.grad(F.smooth_l1_loss(x, t, beta=0.5), (x, t), create_graph=True)
        a = torch.autograd.grad((gx * w).sum() + (gt * w).sum(), (x, t))
        hx, ht = torch.autograd.grad(F.huber_loss(x, t), (x, t), create_graph=True)
        b = torch.autograd.grad((hx * w).sum() + (ht * 0.5).sum(), (x, t))
        """,
    # one value through one bool mask among slices is PyTorch's masked_fill_(mask,
    # value.item()): cast with its checked conversion, whatever the value's dtype (seed 254567:
    # -1.464 into uint8 was wrapped; x[:, m] = tensor(2.7) was refused)
    "setitem_one_value_through_a_mask_is_masked_fill": """
        x = torch.tensor([[1, 0, 4], [2, 3, 5]], dtype=torch.uint8)
        x[:, torch.tensor([False, True, True])] = torch.tensor(2.7)
        x[..., torch.tensor([True, False, False])] = torch.tensor([7.0])
        x[torch.tensor([False, True])] = torch.tensor(-1.464)
        y = torch.zeros(2, 3)
        v = torch.tensor(2.5, dtype=torch.float64, requires_grad=True)
        y[None, torch.tensor([[True, False, True], [False, False, True]])] = v
        y.sum().backward()  # compare: y, v.grad
        z = torch.zeros(2)
        z[torch.tensor([True, False])] = torch.tensor(1e300, dtype=torch.float64)
        """,
    # an ellipsis stands for the dims the masks leave (x[..., m] was "too many indices"), and
    # a mask of the wrong shape raises PyTorch's IndexError
    "ellipsis_with_a_mask": """
        x = torch.arange(24.0).reshape(2, 3, 4)
        a = x[..., torch.tensor([True, False, True, True])]
        b = x[torch.tensor([[True, False, True], [False, True, True]]), ...]
        c = x[0, ..., torch.tensor([False, True, True, False])]
        d = x[:, torch.tensor([True, False])]
        e = x[..., torch.tensor([[True, False, True], [False, True, True]])]
        """,
    "fill_values_past_float32_range": """
        a = torch.full((2,), 1e300)
        b = torch.zeros(2).fill_(-1e39)
        c = torch.zeros(2).masked_fill(torch.tensor([True, False]), 1e300)
        x = torch.zeros(3)
        x[1] = 1e300
        d = torch.full((2,), float('inf'))
        """,
    # an op's number past float32's range is inf, on every path (only a fill checks it)
    "op_numbers_past_float32_range": """
        x = torch.tensor([[0.5, -0.5], [2.0, 0.25]], requires_grad=True)
        a = x.t() ** 1e300
        b = torch.fmod(x.t(), 1e300)
        c = x.t() % 1e300
        d = x.t() * 1e300
        e = torch.nan_to_num(x.t(), 1e300)
        g, = torch.autograd.grad((x ** 1e300).sum(), x)
        """,
    # a Scalar parameter (clamp's bounds, alpha, value, an activation's slope, where's value)
    # past float32's range raises with a float32 tensor, on every path; softshrink's lambd and
    # pow's exponent do not (noted in the ninth session, built in the tenth)
    "op_parameters_past_float32_range": """
        x = torch.tensor([[0.5, -1.0], [2.0, 0.25]], requires_grad=True)
        big = torch.ones(300, 200)
        a = torch.clamp(x, max=1e300)
        b = x.t().clamp(min=-1e300)
        c = torch.nn.functional.leaky_relu(x, 1e300)
        d = torch.add(x, x, alpha=1e300)
        e = torch.addcmul(x, x, x, value=-1e300)
        f = torch.lerp(x, x, 1e300)
        g = torch.where(x > 0, x, 1e300)
        h = torch.nn.functional.hardtanh(x, -1e300, 1.0)
        i = torch.nn.functional.threshold(x, 1e300, 0.0)
        j = torch.nn.functional.elu(x, 1e300)
        k = torch.nn.functional.softplus(x, 1, 1e300)
        l = torch.nn.functional.rrelu(x, 1e300, 1e301, training=False)
        m = torch.zeros(3).scatter_(0, torch.tensor([0]), 1e300)
        n = torch.addmm(x, x, x, beta=1e300)
        o = x.detach().clone().add_(x.detach(), alpha=1e300)
        p = big.clamp(max=1e300)
        q = torch.nn.functional.leaky_relu(big, 1e300)
        r = torch.nn.functional.softshrink(x, 1e300)
        s = x ** 1e300
        t = torch.clamp(x.double(), max=1e300)
        u = torch.clamp(x, max=float('inf'))
        """,
    # a Python int beyond int64 and uint64 is refused by PyTorch's argument parser
    "ints_past_the_scalar_range": """
        x = torch.tensor([0.5, -1.0, 2.0])
        a = x * 2**70
        b = x + 2**64
        c = x * (2**64 - 1)
        d = x * (-2**63 - 1)
        e = torch.full((2,), 2**70)
        f = torch.clamp(x, max=2**70)
        g = torch.tensor([1, 2]) + 2**63
        h = torch.ones(100000) * 2**70
        i = torch.where(x > 0, x, 2**70)
        """,
    # the factories' and draws' numbers: linspace's ends and pad's value are checked Scalars,
    # uniform_'s bounds must fit the dtype, randint's and random_'s must fit int64, and a draw
    # or a power past the dtype's range is inf (NumPy's overflow warning was printed)
    "factories_and_draws_check_their_numbers": """
        a = torch.linspace(0, 1e300, 3)
        b = torch.linspace(0, 1e300, 3, dtype=torch.float64)
        c = torch.logspace(0, 50, 3)
        d = torch.nn.functional.pad(torch.tensor([1.0, 2.0]), (1, 1), value=1e300)
        e = torch.nn.functional.pad(torch.tensor([1, 2], dtype=torch.uint8), (1, 1), value=-1)
        f = torch.nn.functional.pad(torch.tensor([1, 2]), (1, 1), value=2.7)
        g = torch.empty(2).uniform_(-1e300, 1)
        h = torch.empty(2).uniform_(-3e38, 3e38)
        i = torch.randint(0, 2**63, (2,))
        j = torch.randint(5, 2, (2,))
        k = torch.empty(2).random_(2**70)
        l = torch.empty(3).normal_(0.0, 1e300).abs()
        """,
    # clamp with tensor bounds (PyTorch's clamp.Tensor: ClampBackward0) raised "Boolean value
    # of Tensor with more than one value is ambiguous"
    "clamp_with_tensor_bounds": """
        x = torch.tensor([[float('nan'), 1.0, 5.0], [-5.0, 1.0, 3.0]], requires_grad=True)
        lo = torch.tensor([0.0, 2.0, 2.0], requires_grad=True)
        hi = torch.tensor([[2.0], [1.0]], requires_grad=True)
        a = torch.clamp(x, lo, hi)
        b = x.clamp(min=lo)
        c = torch.clamp(x, max=hi)
        g = torch.autograd.grad((a * a).sum() + b.sum() + c.sum(), (x, lo, hi))
        d = torch.clamp(torch.tensor([1, 5, 9]), torch.tensor([2, 2, 2]), torch.tensor([6, 6, 6]))
        e = torch.clamp(torch.tensor([1, 5, 9], dtype=torch.uint8), torch.tensor([2], dtype=torch.int8))
        y = torch.tensor([1.0, 5.0, 9.0])
        y.clamp_(torch.tensor([2.0, 2.0, 2.0], dtype=torch.float64))
        z = torch.tensor([1.0, 5.0, 9.0]).clamp_(torch.tensor([[2.0], [3.0]]))
        """,
    # polygamma of a huge order looped over n! to the order (a hang), and its poles had no sign
    "polygamma_of_a_huge_order_and_its_poles": """
        x = torch.tensor([0.5, 2.0, -1.0, 0.0, -3.0])
        a = torch.polygamma(200, x)
        b = torch.polygamma(2, x)
        c = torch.polygamma(3, x.double())
        """,
    # float32 scans ran in float32 (logcumsumexp drifted by 1.6e-4 over 1e5 elements, seeds
    # 278385, 279626); PyTorch's CPU scans accumulate in double
    "float32_scans_accumulate_in_double": """
        x = torch.tensor(np.random.default_rng(348).uniform(-4, 4, (120000,)).astype(np.float32))
        a = x.logcumsumexp(0)
        b = torch.cumsum(x, 0)
        c = torch.cumprod(x[:3000] / 80 + 1, 0)
        """,
    # huber_loss's backward refuses a target of another dtype (PyTorch's kernel: seed
    # 281755); soft_margin_loss's result has the input's dtype
    "huber_backward_refuses_mixed_dtypes": """
        x = torch.tensor([0.5, 2.0], dtype=torch.float64, requires_grad=True)
        t = torch.tensor([1.5, 1.0])
        y = torch.nn.functional.huber_loss(x, t)
        g = torch.autograd.grad(y, x)
        z = torch.nn.functional.smooth_l1_loss(x, t)
        h = torch.autograd.grad(z, x)
        w = torch.nn.functional.soft_margin_loss(x.float(), t.double())
        """,
    # binary cross-entropy saves its weight (and pos_weight) as PyTorch's node does: changed
    # in place before backward, it is the version error (seed 299424)
    "bce_saves_its_weights": """
        x = torch.tensor([0.3, -0.2, 1.5], requires_grad=True)
        w = torch.tensor([1.0, 2.0, 0.5])
        pw = torch.tensor([0.5, 3.0, 1.0])
        a = F.binary_cross_entropy_with_logits(x, torch.tensor([1.0, 0.0, 1.0]), weight=w, pos_weight=pw)
        pw[0] = 2.0
        a.backward()
        p = torch.tensor([0.3, 0.6, 0.9], requires_grad=True)
        b = F.binary_cross_entropy(p, torch.tensor([1.0, 0.0, 1.0]), weight=w)
        b.backward()
        c = F.binary_cross_entropy(p, torch.tensor([1.0, 0.0, 1.0]), weight=w)
        w[1] = 0.0
        c.backward()
        """,
    "setitem_converts_the_value_before_the_index": """
        x = torch.tensor(np.array([2, 2], dtype=np.uint8))
        x[2::-1] = -0.25
        """,
    # ---- found by the generator's families of the API real programs use (tests/fuzz.py:
    # arith, move, scatter, sortred, nnf, factory, print, wrong)
    # logical_and/or/xor, gcd, lcm, ldexp, logaddexp(2), nextafter and heaviside with a
    # Python number operand (and atan2_ with one, even on a leaf that requires grad)
    "tensor_only_ops_refuse_numbers": """
        x = torch.tensor([1.5, 0.0, -2.0], requires_grad=True)
        a = torch.logical_and(x, True)
        b = x.logical_xor(0)
        c = torch.gcd(torch.tensor([4, 6]), 2)
        d = torch.ldexp(x, 2)
        e = x.logaddexp(1.0)
        f = torch.nextafter(x, 1.0)
        g = torch.heaviside(x, 1.0)
        h = x.atan2_(1)
        i = torch.tensor([1.0, 2.0]).clone().logical_or_(False)
        """,
    # a function whose PyTorch signature takes a Tensor first given a Python number there
    # (torch.exp(2.0), torch.sum(3), torch.relu(2), torch.clamp(2.0, 0, 1))
    "number_input_refused": """
        a = torch.exp(2.0)
        b = torch.sum(3)
        c = torch.relu(2)
        d = torch.clamp(2.0, 0, 1)
        e = torch.maximum(2, torch.ones(2))
        f = torch.add(2, torch.ones(2))
        g = torch.pow(2, torch.ones(2))
        """,
    # index_fill with a 0-d tensor value and a negative or repeated index, then backward
    "index_fill_value_grad": """
        x = torch.ones(3, 2, requires_grad=True)
        y = (x * 1).index_fill(0, torch.tensor([-1, 0]), torch.tensor(1.5))
        y.sum().backward()  # compare: x.grad
        v = torch.tensor(1.5, requires_grad=True)
        z = x.index_fill(0, torch.tensor([2, 0, 0]), v)
        (z * torch.arange(6.0).reshape(3, 2)).sum().backward()  # compare: x.grad, v.grad
        """,
    # batch_norm in eval mode (running statistics), its gradient under create_graph
    "batch_norm_eval_create_graph": """
        x = torch.tensor([[1.955, 0.5], [0.25, -1.0]], requires_grad=True)
        w = torch.tensor([1.5, 2.0], requires_grad=True)
        y = F.batch_norm(x, torch.zeros(2), torch.ones(2), w, training=False)
        gx, gw = torch.autograd.grad((y * torch.tensor([[1.0, 2.0], [3.0, -1.0]])).sum(), [x, w], create_graph=True)  # compare: gx.requires_grad, gw.requires_grad
        gg = torch.autograd.grad((gw * gw).sum(), [x, w], allow_unused=True)
        z = F.batch_norm(x, torch.zeros(2), torch.ones(2), training=False)
        g2, = torch.autograd.grad(z.sum(), x, create_graph=True)  # compare: g2.requires_grad
        gg2 = torch.autograd.grad((g2 * g2).sum(), [x], allow_unused=True)
        """,
    # copysign's gradient for its second operand under create_graph
    "copysign_other_grad_constant": """
        x = torch.tensor([1.0, -2.0], requires_grad=True)
        y = torch.tensor([-1.0, 3.0], requires_grad=True)
        g, = torch.autograd.grad(x.copysign(y).sum(), y, create_graph=True)
        """,
    # std_mean / var_mean where only one output gets a gradient
    "moments_undefined_output_grad": """
        x = torch.tensor([[1.0, -2.0, 3.5], [0.5, 2.0, -1.0]], requires_grad=True)
        s, m = torch.std_mean(x, 1)
        g, = torch.autograd.grad(m.sum(), x, create_graph=True)
        v = x * 1
        s2, m2 = torch.var_mean(v)
        with torch.no_grad(): v.mul_(0.5)
        m2.backward()
        """,
    # max / avg / adaptive pooling save their input (PyTorch's nodes take self)
    "pooling_saves_input": """
        x = torch.arange(16.0).reshape(1, 1, 4, 4).requires_grad_()
        y = x * 1
        a = F.max_pool2d(y, 2)
        b = F.avg_pool2d(y, 2)
        w = torch.tensor(2.0, requires_grad=True)
        g, = torch.autograd.grad((F.avg_pool2d(x, 2) * w).sum(), x, create_graph=True)
        gg = torch.autograd.grad((g * x.detach()).sum(), [x, w], allow_unused=True)
        y.add_(1)
        (a.sum() + b.sum()).backward()
        """,
    # take_along_dim with a dim and negative (or too large) indices
    "take_along_dim_wraps_indices": """
        x = torch.arange(12.0).reshape(4, 3).requires_grad_()
        y = torch.take_along_dim(x, torch.tensor([[1, -5, 3], [4, 0, -1]]), 0)
        y.sum().backward()  # compare: x.grad
        """,
    # masked_select of 0-d operands (one element selected or none), and an in-place change
    # of its input before backward (PyTorch's node saves it
    "masked_select_0d_and_saved": """
        x = torch.tensor(2.0, requires_grad=True)
        a = x.masked_select(torch.tensor(True))
        b = torch.masked_select(x, torch.tensor(False))
        (a.sum() * 3 + b.sum()).backward()  # compare: x.grad
        v = torch.tensor([-2.25, 1.75, 2.75], requires_grad=True) * 1
        s = v.masked_select(v > 0)
        v.exp_()
        s.sum().backward()
        """,
    # movedim of a 0-d tensor (dims 0 and -1 name its one position)
    "movedim_0d": """
        x = torch.tensor(2.0, requires_grad=True) * 1
        a = x.movedim(0, 0)
        b = torch.movedim(x, (-1,), (0,))
        """,
    # F.cosine_similarity of operands of different shapes
    "cosine_similarity_broadcast": """
        a = torch.tensor([[0.25], [1.5], [-2.0]], requires_grad=True)
        b = torch.tensor([[2.937, -0.373], [-0.277, 2.729], [1.151, 1.228]], requires_grad=True)
        y = F.cosine_similarity(a, b)
        x = torch.tensor([-1.75, 2.75, 2.75], requires_grad=True)
        z = F.cosine_similarity(x[None] * 2, x, dim=1)
        (y.sum() + z.sum()).backward()  # compare: a.grad, b.grad, x.grad
        """,
    # F.group_norm of a batch of 0 samples
    "group_norm_empty_batch": """
        x = torch.zeros(0, 3, 2, requires_grad=True)
        y = F.group_norm(x, 3)
        y.sum().backward()  # compare: x.grad
        """,
    # index_put_(accumulate=True) whose region has no elements (a dim of size 0 after the
    # index)
    "index_put_accumulate_empty_region": """
        x = torch.zeros(2, 0, 3)
        x.index_put_((torch.tensor([4, 4, -1]),), torch.zeros(0, 3), accumulate=True)
        """,
    # max/min with a tuple of dims
    "reduction_dim_refusals": """
        x = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
        a = x.max(dim=(0, 1))
        b = torch.min(x, (0,))
        c = x.bool().all(dim=(0, 0))
        d = x.any(dim=(1, -1), keepdim=True)
        """,
    # torch.flip(x, 0) (the function with an int for dims)
    "flip_function_int_dims": """
        x = torch.ones(2, 3)
        a = torch.flip(x, 0)
        b = x.flip(0, 1)
        c = torch.flip(x, dims=(0,))
        d = x.flip(dims=0)
        """,
    # eye with a negative size, linspace/logspace with a float steps, arange of bool, a
    # ragged nested list
    "factory_argument_errors": """
        a = torch.eye(-1)
        b = torch.eye(2, -1)
        c = torch.linspace(0, 1, 2.5)
        d = torch.arange(3, dtype=torch.bool)
        e = torch.tensor([1, [2]])
        f = torch.tensor([[1], 2])
        g = torch.tensor([[1, 2], [3]])
        h = torch.tensor([[], [1]])
        """,
    # isin with a bool tensor or a bool number
    "isin_bool": """
        a = torch.isin(torch.tensor([True]), 2)
        b = torch.isin(torch.tensor([1, 2]), torch.tensor([True]))
        c = torch.isin(torch.tensor([1, 2]), True)
        """,
    # div(..., rounding_mode=None) is PyTorch's div.Tensor_mode overload (DivBackward2),
    # and sort with stable= given its sort.stable one (SortBackward1)
    "overload_node_names": """
        x = torch.tensor([[1.0, 3.0, 2.0], [4.0, 5.0, 6.0]], requires_grad=True)
        y = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        a = x.div(y, rounding_mode=None)
        b = torch.div(x, 2, rounding_mode=None)
        c = x.sort(dim=1, stable=True).values
        d = torch.sort(x, stable=False, dim=0).values
        e = x.sort(1).values
        f = x.argsort(stable=None)
        (a.sum() + b.sum() + c.sum() + d.sum()).backward()  # compare: x.grad, y.grad
        """,
    # unflatten of a non-contiguous tensor is a view (ViewBackward0), of an empty one
    # infers -1 from its dim, of a 0-d one is RuntimeError
    "unflatten_is_a_view": """
        x = torch.arange(12.0).reshape(3, 4).T.requires_grad_()
        a = x.unflatten(0, (2, 2))
        b = torch.zeros(0, 6).unflatten(1, (2, -1))
        c = torch.tensor(2.25).unflatten(-1, (1, 1))
        a.sum().backward()  # compare: x.grad
        """,
    # a Python number modulo a tensor (5.0 % x, torch.remainder(7, x))
    "remainder_number_first": """
        x = torch.tensor([1.5, 2.0, -3.0], requires_grad=True)
        y = 5.0 % x
        z = torch.remainder(7, x)
        w = 5 % torch.tensor([2, -3, 4])
        y.sum().backward()
        """,
    # F.rms_norm of a permuted (transposed) input
    "rms_norm_permuted_input": """
        b = torch.ones(3, 4, requires_grad=True)
        a = F.rms_norm(b.t(), [3])
        c = F.rms_norm(b[:, ::2], [2])
        (a.sum() + c.sum()).backward()  # compare: b.grad
        """,
    # F.batch_norm with momentum=None
    "batch_norm_arguments_and_empty_input": """
        x = torch.ones(4, 2, requires_grad=True)
        a = F.batch_norm(x, None, None, training=True, momentum=None)
        rm = torch.zeros(2) + 0.5
        rv = torch.ones(2) * 2
        e = torch.zeros(0, 2, 3, requires_grad=True)
        b = F.batch_norm(e, rm, rv, torch.ones(2) * 3, torch.ones(2), training=True)
        c = F.instance_norm(torch.zeros(0, 2), rm, rv, use_input_stats=False)
        b.sum().backward()  # compare: e.grad, rm, rv
        """,
    # adaptive pooling of an input with a dim of size 0 outside the pooled dims (PyTorch's
    # 1-d and 2-d average pools check only the pooled dims
    "adaptive_pool_empty_dims": """
        a = F.adaptive_avg_pool2d(torch.zeros(2, 0, 3, 3), 2)
        b = F.adaptive_max_pool1d(torch.zeros(0, 4), 5)
        c = F.adaptive_avg_pool1d(torch.zeros(0, 4), 5)
        d = F.adaptive_avg_pool3d(torch.zeros(2, 0, 3, 3, 3), 2)
        """,
    # repeat_interleave of a 0-d tensor with a dim and a tensor of repeats
    "repeat_interleave_arguments": """
        a = torch.tensor(-0.25).repeat_interleave(torch.tensor([1]), 0)
        b = torch.tensor([1.0, 2.0]).repeat_interleave([2, 1], 0)
        c = torch.tensor(-0.25).repeat_interleave(torch.tensor([2]))
        """,
    # median, nanmedian, kthvalue and topk of a bool tensor
    "order_statistics_refuse_bool": """
        x = torch.tensor([[True, False, True]])
        a = x.median()
        b = x.median(1)
        c = x.nanmedian(1)
        d = x.kthvalue(1, 1)
        e = x.topk(1)
        f = torch.zeros(1, 4, 0).kthvalue(1, 2)
        """,
    # sum / prod / cumsum / cumprod / nansum asked for an integral dtype of an input that
    # requires grad
    "integral_dtype_recorded_reduction": """
        x = torch.tensor([1.5, 2.0], requires_grad=True)
        a = x.sum(dtype=torch.int64)
        b = x.cumsum(0, dtype=torch.int64)
        c = x.prod(dtype=torch.int32)
        d = x.cumprod(0, dtype=torch.int16)
        e = x.nansum(dtype=torch.int64)
        f = x.detach().cumsum(0, dtype=torch.int64)
        with torch.no_grad(): g = x.sum(dtype=torch.int64)
        """,
    # F.dropout1d of an unbatched (C, L) input
    "dropout1d_unbatched_view": """
        x = torch.tensor([[0.142, 1.483], [0.428, 2.947]], requires_grad=True)
        v = x * 2
        a = F.dropout1d(v, 0.5, training=False)
        b = F.dropout1d(v, 0.0, training=True)
        """,
    # repeat / tile by ones
    "repeat_of_ones_copies": """
        v3 = torch.tensor(2.5, dtype=torch.float64)
        v4 = torch.tile(v3, [1])
        v7 = torch.ones(2, 3)
        v8 = v7.repeat(1, 1)
        v4.clamp_(-0.5, 0.0)
        v8.mul_(2)  # compare: v3, v7
        """,
    # the second derivative of a convolution's input gradient by the input
    "conv_second_order_undefined": """
        x = torch.tensor([[[[-1.453, -0.864, 2.207]]]], requires_grad=True)
        w = torch.tensor([[[[1.985]]], [[[2.821]]]], requires_grad=True)
        y = F.conv2d(x, w)
        g, = torch.autograd.grad((y * torch.ones(2, 1, 3)).sum(), x, create_graph=True)
        gg = torch.autograd.grad((g * torch.tensor([-2.5, 3.0, -1.0])).sum(), [x], allow_unused=True)
        """,
    # nll_loss / cross_entropy save their target and class weights (PyTorch's node does)
    "nll_loss_saves_target_and_weight": """
        x = torch.tensor([[1.0, 2.0, 0.5], [0.1, -1.0, 2.0]], requires_grad=True)
        w = torch.tensor([1.0, 2.0, 3.0])
        t = torch.tensor([2, 0])
        l = F.cross_entropy(x, t, weight=w)
        w[0] = 5.0
        l.backward()
        m = F.nll_loss(F.log_softmax(x, 1), t)
        t[0] = 1
        m.backward()
        """,
    # batch_norm / instance_norm with an infinite weight
    "batch_norm_nonfinite_weight": """
        x = torch.tensor(np.random.default_rng(261).uniform(-2, 2, (5, 2, 5, 4)).astype(np.float32))
        w = torch.tensor([np.inf, -2.5])
        b = torch.tensor([-1.25, 1.0], requires_grad=True)
        y = F.instance_norm(x, torch.zeros(2), torch.ones(2), w, b, use_input_stats=True)
        z = F.batch_norm(x, None, None, w, b, training=True)
        """,
    # F.group_norm's output was marked a view of its input (its ctx's own 'view', a shape,
    # read as the composite's 'outputs are views' flag)
    "group_norm_output_not_a_view": """
        x = torch.tensor(np.random.default_rng(0).uniform(-2, 2, (5, 4, 3)).astype(np.float32), requires_grad=True)
        y = F.group_norm(x, 1, torch.tensor([0.25, 3.0, -1.75, -1.0]))
        y[None, -2:7] = 1.5
        z = F.group_norm(x * 1, 2)
        with torch.no_grad(): z.mul_(0.5)
        (y.sum() + z.sum()).backward()  # compare: x.grad
        """,
    # batch_norm, layer_norm and group_norm with a weight, bias or running statistic of
    # another dtype than the input's
    "norm_params_dtype_refused": """
        x = torch.ones(3, 5, 4)
        w = torch.ones(5, dtype=torch.float64)
        a = F.group_norm(x, 5, w)
        b = F.layer_norm(x, (4,), torch.ones(4, dtype=torch.float64))
        c = F.batch_norm(x, None, None, w, training=True)
        d = F.batch_norm(x.double(), torch.zeros(5), torch.ones(5), training=False)
        """,
    # the gradients of batch_norm / layer_norm / instance_norm under create_graph are
    # outputs of one PyTorch node that takes the input and the weight
    "norm_grads_one_node": """
        x = torch.tensor(np.random.default_rng(0).uniform(-2, 2, (2, 3, 4)))
        w = torch.tensor([1.0, 2.0, 0.5], dtype=torch.float64, requires_grad=True)
        b = torch.tensor([0.5, -1.0, 0.0], dtype=torch.float64, requires_grad=True)
        y = F.batch_norm(x, None, None, w, b, training=True)
        gw, gb = torch.autograd.grad((y * y.detach()).sum(), [w, b], create_graph=True)  # compare: gw.requires_grad, gb.requires_grad
        z = F.group_norm(x, 3, w, b)
        hw, hb = torch.autograd.grad((z * z.detach()).sum(), [w, b], create_graph=True)  # compare: hw.requires_grad, hb.requires_grad
        """,
    # layer_norm over every dim of its input with a weight, its gradient under
    # create_graph
    "layer_norm_over_every_dim_recorded": """
        x = torch.tensor([[0.25], [-1.25], [-0.5], [3.0], [3.0]], requires_grad=True)
        w = torch.tensor([[1.795], [-2.856], [1.371], [-0.862], [2.266]], requires_grad=True)
        y = F.layer_norm(x, (5, 1), w)
        gx, gw = torch.autograd.grad((y * torch.tensor([[0.0], [-2.0], [-1.75], [2.25], [2.5]])).sum(), [x, w], create_graph=True)  # compare: gw.shape, gw.requires_grad
        gg = torch.autograd.grad((gw * gw).sum(), [x, w], allow_unused=True)
        """,
    # batch_norm saves its running statistics (PyTorch's node does)
    "batch_norm_saves_running_stats": """
        x = torch.tensor([[0.0, 1.75, 2.75], [0.5, 1.25, 0.5]], requires_grad=True)
        rm = torch.zeros(3)
        rv = torch.ones(3)
        y = F.batch_norm(x, rm, rv, training=False)
        rm.copy_(torch.tensor(1.016))
        y.sum().backward()
        """,
    # the layout of the results of index_fill and flip (a clone of the input's
    "copies_laid_out_as_pytorch": """
        x = torch.arange(12.0).reshape(3, 4).t()
        a = x.flip(0).view(-1)
        b = x.index_fill(1, torch.tensor([0]), 2.0).view(-1)
        c = x.sort(1).values.view(-1)
        d = x.roll(1, 0).view(-1)
        e = x.cumprod(1).view(-1)
        f = torch.arange(12).reshape(3, 4).index_select(1, torch.tensor([2, 0])).view(-1)
        g = torch.tensor([-1.5])
        h = g.roll(-3)
        h.sqrt_()  # compare: g, h
        """,
    # median / nanmedian of an empty integer tensor
    "median_of_nothing_integer": """
        a = torch.median(torch.tensor([], dtype=torch.int64))
        b = torch.tensor([], dtype=torch.int32).nanmedian()
        c = torch.tensor([]).median()
        """,
    # copysign's gradient for its first operand is PyTorch's grad * (result / x masked to
    # 0 where x is 0)
    "copysign_gradient_formula": """
        x = torch.tensor([3.0, -1.5, 0.0], requires_grad=True)
        y = x.copysign(torch.tensor([1.0, -2.0, 5.0]))
        v = y.var()
        g, = torch.autograd.grad(v, x, create_graph=True)
        gg = torch.autograd.grad((g * torch.tensor([0.5, 1.0, 2.0])).sum(), x, allow_unused=True)
        """,
    # narrow over a whole dim of a view is PyTorch's slice (SliceBackward0
    "narrow_and_squeeze_details": """
        x = torch.tensor([[1.848, 0.818, 1.321]], requires_grad=True)
        v = x[0].narrow(0, 0, 3)
        w = torch.narrow(x * 1, -1, -2, 2)
        s = torch.tensor(2.0).squeeze((-1, 0))
        (v.sum() + w.sum()).backward()  # compare: x.grad
        """,
    # cross_entropy of a 0-d input
    "cross_entropy_0d_and_empty": """
        a = F.cross_entropy(torch.tensor(1.5), torch.ones(()))
        x = torch.zeros(0, 3, requires_grad=True)
        b = F.cross_entropy(x, torch.ones((0, 3)))
        c = F.cross_entropy(torch.zeros(0, requires_grad=True), torch.ones((0,)))
        """,
    # repeat_interleave with a float (or bool, int16) tensor of repeats
    "repeat_interleave_float_repeats": """
        a = torch.ones(3).repeat_interleave(torch.tensor([1.0, 2.0, 1.0]))
        b = torch.ones(3).repeat_interleave(torch.tensor([], dtype=torch.float32), dim=-1)
        c = torch.ones(1).repeat_interleave(torch.tensor([2], dtype=torch.int32))
        """,
    # F.batch_norm's checks in PyTorch's order
    "batch_norm_check_order": """
        a = F.batch_norm(torch.ones(1, 3), None, None, training=True, momentum=None)
        b = F.batch_norm(torch.zeros(0, 3), None, None, training=False)
        c = F.batch_norm(torch.zeros(0, 3), torch.zeros(2), None, training=False)
        d = F.batch_norm(torch.ones(2, 3), None, None, training=False)
        """,
    # index_select out of range or along an empty dim
    "index_select_refusals": """
        a = torch.zeros(3, 2).index_select(1, torch.tensor([2]))
        b = torch.zeros(2, 3, 2).index_select(1, torch.tensor([3]))
        c = torch.zeros(2, 3, 2).index_select(2, torch.tensor([2]))
        d = torch.zeros(0, 3).index_select(0, torch.tensor([0]))
        e = torch.zeros(0).index_select(0, torch.tensor([0]))
        f = torch.zeros(3, 4).t().take_along_dim(torch.tensor([0, 1]))
        """,
    # masked_fill / index_fill of an integral tensor with a 0-d value that requires grad
    "fill_of_integers_with_grad_value": """
        a = torch.tensor([1, 2]).masked_fill(torch.tensor([True, False]), torch.tensor(1.5, requires_grad=True))
        b = torch.tensor([1, 2]).index_fill(0, torch.tensor([0]), torch.tensor(1.5, requires_grad=True))
        c = torch.tensor([1, 2]).masked_fill(torch.tensor([True, False]), torch.tensor(1.5))
        """,
    # addcmul of bool tensors
    "addcmul_bool": """
        a = torch.addcmul(torch.tensor([True]), torch.tensor([True]), torch.tensor([False]))
        b = torch.addcmul(torch.tensor([1]), torch.tensor([True]), torch.tensor([False]))
        c = torch.tensor([True]).addcmul_(torch.tensor([True]), torch.tensor([False]))
        """,
    # F.batch_norm of a 0-d input in training
    "batch_norm_low_dims": """
        a = F.batch_norm(torch.tensor(2.0), None, None, training=True)
        b = F.batch_norm(torch.ones(1), None, None, training=True, momentum=None)
        c = F.batch_norm(torch.ones(3), None, None, training=True)
        d = F.batch_norm(torch.ones(3), torch.zeros(3), torch.ones(3), training=False)
        """,
    # mode of a slice (16 elements or fewer) holding NaN
    "mode_with_nan": """
        x = torch.tensor([[np.nan, 0.5, 1.0], [2.0, np.nan, 2.0], [0.9, np.nan, np.nan]], requires_grad=True)
        m = x.mode(1)
        v = torch.tensor([2.0, np.nan, 2.0, np.nan]).mode(0)
        m.values.sum().backward()  # compare: m, v, x.grad
        """,
    # median / nanmedian of an empty bool tensor
    "median_of_empty_bool": """
        a = torch.median(torch.zeros(0, dtype=torch.bool))
        b = torch.zeros(0, dtype=torch.bool).nanmedian()
        """,
    # the gradient of std_mean / var_mean's mean output under create_graph
    "mean_output_gradient_node": """
        x = torch.tensor([0.39, 0.195, 2.866, 2.91], dtype=torch.float64, requires_grad=True)
        s, m = torch.std_mean(x, -1, correction=2, keepdim=True)
        g, = torch.autograd.grad((m * -1.25).sum(), x, create_graph=True)
        """,
    # group_norm with an infinite weight
    "group_norm_nonfinite_weight": """
        x = torch.tensor([[[[2.658, -0.724], [2.567, 1.728]], [[-1.893, -0.909], [0.817, 1.076]]]], dtype=torch.float64)
        w = torch.tensor([-np.inf, 0.0], dtype=torch.float64)
        y = F.group_norm(x, 1, w)
        """,
    # F.interpolate of an input with 0 channels (not area)
    "interpolate_zero_channels": """
        a = F.interpolate(torch.zeros(4, 0, 2, 3), size=(3, 4))
        b = F.interpolate(torch.zeros(2, 0, 3), size=4, mode='linear')
        c = F.interpolate(torch.zeros(0, 2, 2, 3), size=(3, 4), mode='bicubic')
        d = F.interpolate(torch.zeros(4, 0, 2, 3), size=(3, 4), mode='area')
        """,
    # cumprod of a tensor of one element (or none), its gradient under create_graph
    "cumprod_one_element_backward": """
        x = torch.tensor([[2.0]], requires_grad=True)
        y = x.t().clone().cumprod_(1)
        g, = torch.autograd.grad((y * 2.25).sum() + x.cumprod(0).sum(), x, create_graph=True)
        """,
    # torch.diag of a 2-d tensor (its diagonal), diagonal_copy and narrow_copy
    "diag_and_copy_ops_copy": """
        c = torch.tensor([[-0.704, 2.967, -2.043, 0.23]], requires_grad=True)
        d = torch.diag(c)
        d.scatter_add_(-1, torch.tensor([0, 0, 0]), torch.tensor([-1.446, 2.105, -0.119]))
        x = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
        e = torch.diagonal_copy(x)
        e.add_(1)
        f = x.narrow_copy(1, 0, 1)
        f.mul_(2)
        """,
    # torch.xlogy of two Python numbers
    "xlogy_of_two_numbers": """
        a = torch.xlogy(0, 2)
        b = torch.xlogy(2.0, torch.tensor([1.5]))
        """,
    # lerp whose end is of another dtype than the input
    "lerp_end_dtype": """
        x = torch.zeros(0, dtype=torch.bool)
        e = torch.float_power(x, torch.tensor(1.765, requires_grad=True))
        a = x.lerp(e, torch.tensor(False))
        b = torch.tensor([1.0]).lerp(torch.tensor([2.0], dtype=torch.float64), 0.5)
        """,
    # in-place masked_fill_ of an integral tensor with a 0-d value that requires grad
    "masked_fill_integer_with_grad_value": """
        v = torch.tensor([False, True, False]) * 1
        v.masked_fill_(torch.tensor(False), torch.tensor(0.5, requires_grad=True))
        w = torch.tensor([1, 2, 3])
        w.masked_fill_(torch.tensor([True, False, True]), torch.tensor(2.5, requires_grad=True))
        """,
    # F.pad(mode='circular') whose negative padding empties a dim
    "circular_pad_negative_empty": """
        x = torch.ones(5, 1, 3, requires_grad=True)
        a = F.pad(x, (0, 2, -1, -1), mode='circular')
        b = F.pad(torch.ones(1, 2, 3), (-2, -1), mode='circular')
        """,
    # F.nll_loss of an empty 3-d / 4-d input with an empty target
    "nll_loss_empty_higher_dims": """
        x = torch.zeros(0, 2, 4, requires_grad=True)
        a = F.nll_loss(F.log_softmax(x, 1), torch.zeros((0, 4), dtype=torch.int64), reduction='sum')
        b = F.nll_loss(x, torch.zeros((0, 4), dtype=torch.int64))
        c = F.nll_loss(torch.zeros(0, 3, 1, 2), torch.zeros((0, 1, 2), dtype=torch.int64), reduction='none')
        """,
    # the second-order gradient of x.fmod(x) at an infinity
    "fmod_second_order_infinite": """
        x = torch.tensor([-np.inf, 2.0], requires_grad=True)
        v = x.clone().fmod_(x)
        g, = torch.autograd.grad((v * torch.tensor([-2.75, 1.0])).sum(), x, create_graph=True)
        gg = torch.autograd.grad((g * 1.5).sum(), [x], allow_unused=True)
        """,
    # x.sgn() saves its input and result (as PyTorch's SgnBackward0), so writing the
    # result afterwards fails the backward
    "sgn_saves_result": """
        x = torch.tensor([[0.591, -0.948], [2.266, 0.0]], requires_grad=True)
        v = x.sgn()
        v[...,] = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
        v.sum().backward()
        """,
    # adaptive_avg_pool of an input with an empty pooled dim to an output size of 1
    "adaptive_avg_pool_empty_to_one": """
        a = F.adaptive_avg_pool1d(torch.zeros(5, 0) + True, 1)
        b = F.adaptive_avg_pool2d(torch.zeros(2, 3, 0, 2), 1)
        c = F.adaptive_avg_pool2d(torch.zeros(3, 0, 2), (1, 1))
        """,
    # kthvalue of a 0-d bool tensor
    "kthvalue_0d_bool": """
        x = torch.tensor(-1.518, requires_grad=True)
        v = torch.isfinite(x) != torch.tensor(2.375)
        a = v.kthvalue(1, 0, keepdim=True)
        b = torch.tensor(True).kthvalue(1)
        """,
    # x[...] = v whose region is empty, with an out-of-range index tensor and a value that
    # does not fit
    "setitem_empty_region_index_out_of_range": """
        x = torch.zeros(2, 2, 3, 2)
        v = torch.tensor([[-0.662, -2.801]], requires_grad=True) * 2
        x[2:2:3, ..., -1:2:1, torch.tensor([2, 0, 1]), None] = v
        y = torch.zeros(2, 3)
        y[2:2, torch.tensor([5])] = torch.ones(2)
        """,
    # F.max_pool1d of an input that needs no gradient
    "max_pool1d_fresh_output": """
        v = F.max_pool1d(torch.tensor([[[np.nan, np.nan]], [[-0.996, -0.888]]]), 2)
        w = torch.tensor([[-1.0]], requires_grad=True) * 2
        v[torch.tensor(-1), None, :, -1] = w
        u = F.max_pool1d(torch.tensor([[[1.0, 2.0, 3.0]]], requires_grad=True), 2)
        u.mul_(2)
        """,
    # flip / flipud / fliplr whose flipped dims have size 1 (or none)
    "flip_of_size_one_dims_copies": """
        c = torch.tensor([-5])
        f = torch.flipud(c)
        g = torch.flip(torch.tensor([[1.0]]), (0, 1))
        h = torch.flip(c, ())
        c[torch.tensor([True])] = torch.tensor(-3)
        """,
    # torch.diff(x, n=0)
    "diff_of_order_zero": """
        x = torch.tensor([[1.0, 2.0], [4.0, 0.5]], requires_grad=True)
        a = torch.diff(x, n=0)
        b = torch.diff(x.t(), n=0, dim=0)
        c = torch.diff(x, n=0, prepend=x)
        y = torch.tensor([1.0, 2.0])
        d = torch.diff(y, n=0)
        y.add_(1)
        """,
    # cross_entropy with label_smoothing over an input of 0 classes
    "cross_entropy_no_classes": """
        x = torch.zeros(1, 0, 2, 0, requires_grad=True)
        a = F.cross_entropy(x, torch.zeros((1, 2, 0), dtype=torch.int64), label_smoothing=0.1)
        b = F.cross_entropy(x, torch.zeros((1, 2, 0), dtype=torch.int64), label_smoothing=0.1, reduction='sum')
        c = F.cross_entropy(torch.zeros(2, 0), torch.zeros((2, 0)), label_smoothing=0.1)
        d = F.nll_loss(torch.zeros(1, 0, 2), torch.zeros((1, 2), dtype=torch.int64), ignore_index=0)
        e = F.cross_entropy(torch.zeros(1, 0, 2), torch.zeros((1, 2), dtype=torch.int64))
        """,
    # std_mean saves its std output (StdMeanBackward0's result0), which its backward
    # unpacks even for the mean's gradient alone
    "std_mean_saves_std": """
        x = torch.tensor([[1.0, 2.0, 4.0], [0.5, -1.0, 3.0]], requires_grad=True)
        v = torch.std_mean(x, 0, unbiased=False)
        v[0].t_()
        v[1].sum().backward()
        """,
    # index_put_ / x[idx] = v of another dtype with a non-empty index into a dim of size 0
    "index_put_empty_dim_before_dtype": """
        a = torch.zeros(0, 2, 5, dtype=torch.int64).index_put_((torch.tensor([-2, -1, 3]),), torch.ones(3, 2, 5, dtype=torch.bool), accumulate=True)
        b = torch.zeros(2, 0, 5).index_put_((torch.tensor([1]), torch.tensor([0])), torch.ones((), dtype=torch.float64), accumulate=True)
        x = torch.zeros(0, 2, 5, dtype=torch.int64)
        x[torch.tensor([-2, -1, 3])] = torch.ones(3, 2, 5, dtype=torch.bool)
        """,
    # masked_scatter saves its mask (MaskedScatterBackward0), so a mask changed in place
    # before backward is the version error
    "masked_scatter_saves_mask": """
        x = torch.tensor([[2.25, -1.5, -2.75], [-0.5, 1.0, -1.75]], requires_grad=True)
        m = torch.tensor([[True, False, True], [False, False, True]])
        v = x.masked_scatter(m, torch.tensor([1.0, 2.0, 3.0, 4.0]))
        m.logical_not_()
        v.sum().backward()
        """,
    # the recorded backward of cumsum / nansum with a wider dtype=
    "cumsum_backward_casts_first": """
        x = torch.tensor([2.0, -0.25], requires_grad=True)
        v = torch.cumsum(x, dim=-1, dtype=torch.float64).sin()
        g, = torch.autograd.grad((v * torch.tensor([1.0, 2.0], dtype=torch.float64)).sum(), x, create_graph=True)
        y = torch.tensor([[2.0, -0.25]], requires_grad=True)
        w = torch.cumsum(y, dim=0).sin()
        h, = torch.autograd.grad((w * 2).sum(), y, create_graph=True)
        z = torch.tensor([[2.0, -0.25], [1.0, 3.0]], requires_grad=True)
        u = torch.nansum(z, 0, dtype=torch.float64).sin()
        k, = torch.autograd.grad((u * 2).sum(), z, create_graph=True)
        """,
    # lerp with an infinite (or other |weight| >= 0.5 negative) weight
    "lerp_infinite_weight": """
        a = torch.tensor([1.75, -2.0]).lerp(torch.tensor([-np.inf, 1.0]), torch.tensor([-np.inf, -2.14]))
        b = torch.lerp(torch.tensor([1.0, np.inf, -3.0]), torch.tensor([np.inf, -np.inf, 2.0]), float('-inf'))
        c = torch.lerp(torch.tensor([1.0, 2.0]), torch.tensor([np.inf, 5.0]), -1.0)
        """,
    # F.group_norm checks the batch of the groups it makes (nn.functional's
    # _verify_batch_size
    "group_norm_check_order": """
        a = F.group_norm(torch.tensor([[1.0, 0.75], [-2.25, -0.75]]), 3)
        b = F.group_norm(torch.ones(1, 2, 1), 2)
        c = F.group_norm(torch.ones(2, 4), -3)
        """,
    # an integer division / remainder by zero whose result has no elements
    "integer_division_by_zero_empty": """
        a = torch.div(torch.zeros((1, 0, 1), dtype=torch.int64), torch.tensor(0), rounding_mode='trunc')
        b = torch.zeros((0,), dtype=torch.int64) % 0
        c = 5 // torch.zeros(0, dtype=torch.int64)
        d = torch.tensor([1, 2]) // torch.zeros(3, dtype=torch.int64)
        """,
    # layer_norm's recorded backward (create_graph) when only the bias requires grad
    "layer_norm_bias_double_backward": """
        x = torch.tensor([[1.0, 2.0, 4.0], [0.5, -1.0, 3.0]])
        w = torch.tensor([1.5, 0.5, 2.0])
        b = torch.tensor([0.1, 0.2, 0.3], requires_grad=True)
        y = F.layer_norm(x, (3,), w, b)
        (y * torch.tensor([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]])).sum().backward(create_graph=True)
        """,
    # ldexp of a floating tensor by a bool exponent
    "ldexp_bool_exponent": """
        a = torch.ldexp(torch.tensor([1.5]), torch.tensor([True, False]))
        b = torch.tensor([1.5]).ldexp_(torch.tensor([True]))
        c = torch.ldexp(torch.tensor([1, 0]), torch.tensor([True, False]))
        """,
    # the backward of adaptive_avg_pool / adaptive_max_pool with an empty output dim past
    # the first
    "adaptive_avg_pool_empty_backward": """
        x = torch.zeros(2, 0, 3, 3, requires_grad=True)
        F.adaptive_avg_pool2d(x, 2).sum().backward()
        y = torch.tensor([[[1.488], [-1.373], [-2.538], [0.301]]], requires_grad=True)
        F.interpolate(y, scale_factor=0.5, mode='area').sum().backward()
        z = torch.zeros(2, 2, 3, requires_grad=True)
        F.adaptive_max_pool1d(z, 0).sum().backward()
        """,
    # cumsum_ / cumprod_ of a 0-d or empty bool tensor, and scans into bool
    "scan_inplace_0d_bool": """
        y = torch.tensor(False).clone()
        y.cumsum_(0)
        z = torch.zeros(2, 0, dtype=torch.bool).cumprod_(0)
        a = torch.tensor([True, False]).cumsum(0, dtype=torch.bool)
        b = torch.tensor([True, True]).cumprod(0, dtype=torch.uint8)
        c = torch.zeros(0, dtype=torch.bool).cumprod(0, dtype=torch.bool)
        """,
    # the recorded gradient (create_graph) of masked_select
    "masked_select_backward_node": """
        c = torch.tensor([-1.25, -1.0, -0.25, -0.5], requires_grad=True)
        v = c.masked_select(torch.tensor([True, False, True, False]))
        w = F.hardswish(F.binary_cross_entropy_with_logits(v, torch.tensor([1.0, 0.0])))
        g, = torch.autograd.grad((w * 1.772).sum(), c, create_graph=True)
        x = torch.tensor(2.5, requires_grad=True)
        h, = torch.autograd.grad((x.masked_select(torch.tensor(True)) ** 2).sum(), x, create_graph=True)
        y = torch.tensor([2.5, 1.0], requires_grad=True)
        m = torch.tensor([True, False])
        u = (y * 2).masked_select(m)
        m.logical_not_()
        u.sum().backward()
        """,
    # scatter_reduce(..., 'mean') of a bool tensor
    "bool_reduce_into": """
        a = torch.tensor([True, False, True]).scatter_reduce(0, torch.tensor([0, 2, 0]), torch.tensor([False, True, True]), 'mean')
        b = torch.tensor([True]).scatter_reduce(0, torch.tensor([], dtype=torch.int64), torch.tensor([], dtype=torch.bool), 'mean', include_self=False)
        c = torch.tensor([True, False, True]).index_reduce(0, torch.tensor([0, 2, 0]), torch.tensor([False, True, True]), 'amax')
        d = torch.tensor([True, False, True]).scatter_reduce(0, torch.tensor([0, 2, 0]), torch.tensor([False, True, True]), 'amax')
        """,
    # F.pad (constant) whose negative padding crops more than a dim holds, on either side
    "constant_pad_crops_by_narrow": """
        a = F.pad(torch.zeros(2, 4, 4, 0), (2, -1))
        b = F.pad(torch.zeros(2, 3), (-4, 2))
        c = F.pad(torch.zeros(2, 3), (-1, -1, 1, -3))
        d = F.pad(torch.zeros(2, 3), (2, -4))
        """,
    # batch_norm / layer_norm / group_norm save their weight (and layer_norm its bias), so
    # a frozen weight changed in place before backward is the version error
    "norm_layers_save_weight": """
        x = torch.tensor([[0.065], [-0.826], [-1.122], [-1.217], [0.418]], requires_grad=True)
        w = torch.tensor([1.039])
        y = F.batch_norm(x * 1, torch.zeros(1), torch.ones(1), w, torch.tensor([1.0], requires_grad=True), training=True, momentum=0.1)
        w.relu_()
        y.sum().backward()
        """,
    # the recorded gradient (create_graph) of exp2, of ldexp by its exponent and of the
    # compositions that multiply or divide by a Python number as PyTorch's C++ does
    # (special.ndtr, mean)
    "scalar_factor_gradient_node": """
        x = torch.tensor([0.3, 0.6, 0.45], requires_grad=True)
        a, = torch.autograd.grad((torch.exp2(x) * torch.tensor([1.0, 2.0, -1.5])).sum(), x, create_graph=True)
        b, = torch.autograd.grad(torch.special.ndtr(x).sum(), x, create_graph=True)
        e = torch.tensor([1.0, 2.0, -1.0], requires_grad=True)
        c = torch.autograd.grad(torch.ldexp(x, e).sum(), [x, e], create_graph=True)
        """,
    # conv1d/2d/3d with padding='same' over an even kernel span
    "conv_same_asymmetric_padding": """
        x = torch.tensor([[[-2.0, -2.0]], [[1.25, -1.25]], [[-1.75, -0.5]]], requires_grad=True)
        w = torch.tensor([[[-0.5, 0.25]], [[1.5, 0.75]]], requires_grad=True)
        y = F.conv1d(x, w, padding='same')
        g = torch.autograd.grad((y * torch.tensor([[[1.5, -2.75], [2.0, 0.75]], [[-1.75, -0.5], [-1.5, -2.25]], [[-1.25, -1.5], [1.0, -2.5]]])).sum(), [x, w], create_graph=True)
        z = torch.arange(24.0).reshape(2, 3, 4).requires_grad_()
        u = F.conv2d(z, torch.ones(1, 2, 2, 2, requires_grad=True), padding='same')
        h, = torch.autograd.grad(u.sum(), z, create_graph=True)
        """,
    # floor_ / ceil_ / trunc_ / fix_ / round_ of a bool tensor and
    # div(rounding_mode='floor') of bools
    "bool_rounding_refused": """
        a = torch.tensor([True, False]).floor_()
        b = torch.tensor(True).clone().ceil_()
        c = torch.zeros(0, dtype=torch.bool).trunc_()
        d = torch.tensor([True, False]).div(torch.tensor([True, True]), rounding_mode='floor')
        e = torch.zeros(0, dtype=torch.bool).div(torch.zeros(0, dtype=torch.bool), rounding_mode='floor')
        f = torch.tensor([True, False]).div(torch.tensor([True, True]), rounding_mode='trunc')
        """,
    # kthvalue of a bool tensor along an empty dim
    "kthvalue_empty_dim_before_bool": """
        x = torch.tensor([0.75, -1.25, -1.25], requires_grad=True)
        v = torch.ne(x[3:], 0.5)
        a = v.kthvalue(1, -1, keepdim=True)
        """,
    # div(x, y, rounding_mode='floor' or 'trunc')
    "div_rounding_saves_operands": """
        x = torch.tensor([1.5, 2.5])
        y = torch.tensor([0.5, 2.0], requires_grad=True)
        v = torch.div(x, y, rounding_mode='floor')
        x.mul_(2)
        v.sum().backward()
        """,
    # the recorded gradient (create_graph) of masked_scatter's source
    "masked_scatter_backward_node": """
        x = torch.tensor([[1.32, 2.007]], requires_grad=True)
        v = torch.mv(x, torch.tensor([1.75, 1.75], requires_grad=True))
        s = torch.tensor([-1.113], requires_grad=True)
        w = torch.broadcast_to(v.masked_scatter(torch.tensor(False), s), (2,))
        g, = torch.autograd.grad((F.softshrink(w) * torch.tensor([0.5, 1.0])).sum(), s, create_graph=True)
        """,
    # the gradient of cumprod along a dim of size 1
    "cumprod_dim_of_one_backward": """
        x = torch.tensor([[np.inf], [np.inf], [0.776], [-np.inf]], requires_grad=True)
        v = torch.cumprod(F.selu(x), dim=-1, dtype=torch.float32)
        (v * torch.tensor([[1.25], [-2.75], [2.25], [-3.0]])).sum().backward()
        """,
    # the recorded backward (create_graph) of the median of an empty tensor
    "median_of_nothing_create_graph": """
        x = torch.zeros(0, requires_grad=True)
        v = torch.median(F.silu(x * 2) / torch.zeros(0, dtype=torch.float64, requires_grad=True))
        (v * 2.304).sum().backward(create_graph=True)
        """,
    # the gradient of atan2 where both operands are 0 (or their squares underflow)
    "atan2_gradient_at_origin": """
        x = torch.tensor([0.0, 1e-30, -0.0, 3.0], requires_grad=True)
        y = torch.tensor([0.0, 1e-30, 0.0, 4.0], requires_grad=True)
        torch.atan2(x, y).backward(torch.tensor([2.0, 2.0, 2.0, np.inf]))
        z = torch.tensor([0.0, 2.0, -np.inf], requires_grad=True)
        torch.atan2(z, z).sum().backward()
        """,
    # rot90 by an odd number of turns
    "rot90_layout": """
        x = torch.tensor([[0.5, -0.75, -1.25], [1.0, 0.5, 0.25], [3.0, -1.75, 2.75], [0.0, 0.5, -2.0], [1.5, 0.5, -2.25]], requires_grad=True)
        r = torch.rot90(x, 3)
        v = F.rms_norm(r.pow(-2), (5,), torch.tensor([-1.25, 1.0, -1.75, 2.0, 2.5]))
        w = r.view(-1)
        u = torch.rot90(x.t(), 1).view(-1)
        """,
    # the recorded gradients (create_graph) of lerp with a number weight and of
    # masked_fill
    "scalar_lerp_and_masked_fill_gradient_nodes": """
        x = torch.tensor([[-1.0, 0.5, 3.0], [-0.25, 0.25, 0.0]], requires_grad=True)
        e = torch.tensor([-0.823, 1.198, 2.568], requires_grad=True)
        g = torch.autograd.grad((torch.lerp(x, e, 2.0) ** 2).sum(), [x, e], create_graph=True)
        y = torch.tensor([-3.0, 2.5, -2.0, 1.25], dtype=torch.float64, requires_grad=True)
        h, = torch.autograd.grad(y.masked_fill(torch.tensor(False), 0).atan().sum(), y, create_graph=True)
        z = torch.tensor([[-3.0, 2.5], [-2.0, 1.25]], requires_grad=True)
        m = torch.tensor([True, False])
        v = z.masked_fill(m, 0.5)
        m.logical_not_()
        v.sum().backward()
        """,
    # lerp with a weight tensor (not 0-d) of another dtype than the input
    "lerp_weight_dtype": """
        a = torch.lerp(torch.tensor([1, 2]), torch.tensor([3, 4]), torch.tensor([0.5, 0.5]))
        b = torch.lerp(torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0]), torch.tensor([0.5, 0.5], dtype=torch.float64))
        c = torch.lerp(torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0]), torch.tensor(0.5, dtype=torch.float64))
        """,
    # ldexp saves its exponent and result whichever input needs a gradient
    # (LdexpBackward0), so an in-place change of either before backward is the version
    # error
    "ldexp_saves_other_and_result": """
        x = torch.tensor([-1.276, -1.205], requires_grad=True)
        v = x.ldexp(torch.tensor([1.0, 1.0]))
        F.elu_(v[...], alpha=1.0)
        (v * torch.tensor([-1.25, -1.25])).sum().backward()
        """,
    # the gradient of nan_to_num
    "nan_to_num_gradient_formula": """
        x = torch.tensor([[1.0, np.nan, np.inf], [-np.inf, 2.0, 0.5]], requires_grad=True)
        v = torch.expm1(torch.nan_to_num(x, neginf=-3.0))
        g, = torch.autograd.grad((v * torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])).sum(), x, create_graph=True)
        y = torch.tensor([[1.0, np.nan, np.inf], [-np.inf, 2.0, 0.5]], requires_grad=True)
        torch.nan_to_num(y).backward(torch.tensor([[np.inf, np.inf, np.nan], [np.inf, 1.0, 2.0]]))
        """,
    # addcdiv saves tensor2 whichever input needs a gradient (AddcdivBackward0), so an in-
    # place change of it before backward is the version error even when only the input
    # requires grad
    "addcdiv_saves_tensor2": """
        x = torch.tensor([2.942, 1.416], requires_grad=True)
        c = torch.tensor(3.0)
        v = (x * 1).addcdiv(torch.tensor(2.0), c, value=2)
        c[...] = -2.5
        v.sum().backward()
        """,
    # an in-place op with a value that requires grad on an element of x.diagonal().data (a
    # tensor laid out with gaps that is no autograd view)
    "inplace_on_data_of_strided_view": """
        x = torch.tensor([[1.79, 1.728, 0.89], [1.746, 1.322, 0.205], [0.564, 0.178, 0.537], [2.636, 1.988, 0.69]])
        v = x.diagonal(offset=2, dim1=1, dim2=0).data
        c = torch.tensor(-2.5, requires_grad=True)
        v[1].sub_(c)
        g, = torch.autograd.grad((v * torch.tensor([1.0, 2.0])).sum(), c)
        """,
    # a convolution of an input with a batch and channels but no elements (an empty
    # spatial dim, made valid by padding), or replicate padding of an input whose non-
    # batch dims hold a 0
    "empty_planes_refused": """
        a = F.conv2d(torch.zeros(1, 1, 0, requires_grad=True) * 2, torch.ones(2, 1, 2, 2), torch.ones(2), padding=1)
        b = F.conv1d(torch.zeros(2, 1, 0), torch.ones(2, 1, 1), padding=1)
        c = F.conv_transpose1d(torch.zeros(2, 1, 0), torch.ones(1, 2, 1))
        d = F.pad(torch.zeros(1, 0), (0, 0), mode='replicate')
        e = F.pad(torch.zeros(2, 0, 3), (1, 1), mode='replicate')
        f = F.pad(torch.zeros(0, 2, 3), (1, 1), mode='replicate')
        """,
    # the recorded gradient (create_graph) of index_add's source
    "index_add_source_gradient_node": """
        x = torch.zeros(3, 2, requires_grad=True)
        s = torch.ones(2, 2, requires_grad=True)
        v = (x * 1).index_add(0, torch.tensor([1, 0]), s, alpha=2)
        g = torch.autograd.grad((v * v).sum(), [x, s], create_graph=True)
        w = (x * 1).index_add(0, torch.tensor([1, 0]), s)
        h = torch.autograd.grad((w * w).sum(), [s], create_graph=True)
        """,
    # group_norm's weight gradient under create_graph, the input not requiring grad: a sum
    # of grad * xhat viewed as the weight (ViewBackward0), whose second derivative by the
    # weight and the bias is PyTorch's
    "group_norm_weight_grad_node": """
        x = torch.tensor(np.random.default_rng(0).uniform(-2, 2, (2, 4, 3)).astype(np.float32))
        w = torch.tensor([-0.022, -0.647, -2.182, -2.28], requires_grad=True)
        b = torch.tensor([0.5, -1.0, 0.25, 2.0], requires_grad=True)
        y = F.group_norm(x, 2, w, b)
        gw, = torch.autograd.grad((y * y.detach()).sum(), w, create_graph=True)
        gg = torch.autograd.grad((gw * gw).sum(), [w, b], allow_unused=True)  # compare: gw, gg
        z = F.group_norm(x[:, :, 0], 2, w)
        hw, = torch.autograd.grad((z * torch.ones(2, 4)).sum(), w, create_graph=True)  # compare: hw
        """,
    # sort / argsort: with stable=, dim and descending are keywords only (PyTorch's overloads)
    "sort_stable_positional_dim": """
        x = torch.tensor([[3.0, 1.0, 2.0], [0.5, 0.5, -1.0]])
        a = x.sort(1, stable=True)
        b = torch.sort(x, 1, False, stable=False)
        c = x.argsort(1, False, False)
        d = torch.argsort(x, 0, True, stable=True)
        e = x.sort(stable=True, dim=0, descending=True)
        f = torch.argsort(x, 0, descending=True)
        g = x.sort(1, True)
        """,
    # the backward of atan2 with a bool first operand (its formula for the second negates the
    # first) and of logaddexp / logaddexp2 with a bool operand (theirs subtract them): PyTorch's
    # neg / sub refusal of bool, once that gradient is needed; not for the other input's
    "bool_operand_backward": """
        b = torch.tensor([True, False])
        y = torch.tensor([-0.5, 2.0], requires_grad=True)
        torch.atan2(b, y).sum().backward()
        torch.atan2(y, b).sum().backward()  # compare: y.grad
        g = torch.autograd.grad(torch.logaddexp(y, b).sum(), y)
        h = torch.autograd.grad(torch.logaddexp2(b, y * 2).sum(), y)
        k = torch.autograd.grad(torch.logaddexp(torch.tensor([1, 2]), y).sum(), y)
        """,
    # a convolution of an input with no batch or no channels (PyTorch's Empty backend): no
    # channels out of none in, the input's dtype (not compared with the weight's, no float
    # kernel needed), zero gradients and undefined second derivatives; a weight of fewer
    # output channels than groups refused
    "conv_zero_in_channels": """
        x = torch.zeros(3, 0, 5, requires_grad=True)
        w = torch.zeros(4, 0, 2, requires_grad=True)
        b = torch.tensor([1.0, 2.0, 0.5, -1.0], requires_grad=True)
        y = F.conv1d(x, w, b, padding=1, dilation=2)
        g = torch.autograd.grad(y.sum(), [x, w, b], retain_graph=True)
        h = torch.autograd.grad((y * 2).sum(), [x, w, b], create_graph=True)
        hh = torch.autograd.grad(h[2].sum() + h[1].sum(), [x, w, b], allow_unused=True)
        z = F.conv2d(torch.zeros(0, 5, 4, dtype=torch.float64), torch.ones(2, 0, 3, 3), padding='same')
        e = F.conv1d(torch.zeros(0, 2, 5, dtype=torch.int64), torch.zeros(3, 2, 1, dtype=torch.int64))
        u = torch.zeros(0, 2, 5, requires_grad=True)
        v = torch.ones(3, 2, 2, requires_grad=True)
        y2 = F.conv1d(u, v, torch.ones(3), stride=2)
        k = torch.autograd.grad(y2, [u, v], torch.zeros(y2.shape, requires_grad=True), create_graph=True)
        kk = torch.autograd.grad(k[0].sum() + k[1].sum(), [u, v], allow_unused=True)
        c = F.conv_transpose1d(torch.zeros(2, 0, 5), torch.zeros(0, 2, 3))
        d = F.conv1d(torch.zeros(2, 6, 5), torch.zeros(2, 2, 1), groups=3)
        """,
    # put keeps its source for the source's gradient (only when that requires grad): an
    # in-place change of it before backward is the version error
    "put_saves_source": """
        x = torch.zeros(3, requires_grad=True)
        s = torch.tensor([0.031, -1.124], requires_grad=True)
        v = (x * 1).put(torch.tensor([1, 0]), s)
        with torch.no_grad(): s.mul_(0.5)
        v.sum().backward()
        y = torch.zeros(3, requires_grad=True)
        c = torch.tensor([2.0, -1.0])
        w = (y * 1).put(torch.tensor([2, 0]), c, accumulate=True)
        c.mul_(3)
        w.sum().backward()  # compare: y.grad
        """,
    # reflect padding refuses an empty non-batch dim as replicate does; an empty batch pads
    "reflect_pad_empty_planes": """
        a = F.pad(torch.zeros(0, 3), (0, 1), mode='reflect')
        b = F.pad(torch.zeros(2, 0, 3, 3), (1, 1, 1, 1), mode='reflect')
        c = F.pad(torch.zeros(2, 2, 3, 0), (0, 0, 1, 1), mode='reflect')
        d = F.pad(torch.zeros(0, 2, 3), (1, 1), mode='reflect')
        e = F.pad(torch.zeros(0, 2, 3, 3, 3), (1, 1, 1, 1, 1, 1), mode='reflect')
        """,
    # the median of nothing in an integer dtype: NaN cast through a 32-bit int (the lowest
    # value for int32 / int64, 0 for the narrower types), True for bool
    "median_of_nothing_narrow_integer": """
        a = torch.median(torch.tensor([], dtype=torch.int8))
        b = torch.tensor([], dtype=torch.int16).nanmedian()
        c = torch.tensor([[5, 5, 3]], dtype=torch.uint8)[-1:-1:3].median()
        d = torch.median(torch.tensor([], dtype=torch.int32))
        e = torch.tensor([], dtype=torch.bool).median()
        """,
    # addcdiv's recorded gradients end in a product, as PyTorch's formulas
    "addcdiv_grad_nodes": """
        x = torch.tensor([[0.0, 2.0], [-1.5, -3.0]], requires_grad=True)
        y = torch.tensor([[1.25, 0.75], [2.75, 0.75]], requires_grad=True)
        z = torch.tensor([[2.158, 0.525], [2.665, 1.597]], requires_grad=True)
        v = x.clone().addcdiv_(y, z, value=2)
        g, h = torch.autograd.grad((v.expm1() * torch.tensor([[-1.4, 0.2], [3.0, -1.0]])).sum(), [y, z], create_graph=True)
        w = torch.addcdiv(x, y, z, value=-0.5)
        gy, gz = torch.autograd.grad((w * w).sum(), [y, z], create_graph=True)
        """,
    # copysign saves its result whichever input requires grad (self only for self's gradient)
    "copysign_saves_result": """
        x = torch.tensor([1.34, -1.73], dtype=torch.float64)
        c = torch.tensor(-0.5, requires_grad=True)
        v = x.copysign(c)
        v[0].exp_()
        v.sum().backward()
        y = torch.tensor([1.5, -2.0])
        d = torch.tensor([0.5, -0.25], requires_grad=True)
        w = y.copysign(d)
        y.mul_(2)
        w.sum().backward()  # compare: d.grad
        """,
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_agrees_with_pytorch(name):
    mismatch = fuzz.run_program(fuzz.parse_repro(PROGRAMS[name]))
    assert mismatch is None, f"{name}: {mismatch.key}: {mismatch.detail}"


SORT_REFUSED = [
    "x.sort(1, stable=True)", "x.argsort(1, stable=True)", "torch.sort(x, 1, stable=True)",
    "torch.argsort(x, 1, True, stable=True)", "x.sort(1, True, stable=None)",
    "x.argsort(1, False, False)", "torch.sort(x, 1, False, stable=False)",
    "x.sort(1, descending=True, stable=True)", "x.sort(dim=1, foo=2)", "x.sort(1, dim=1)",
]


@pytest.mark.parametrize("call", SORT_REFUSED)
def test_sort_overload_refusal_message(call):
    """sort / argsort calls no overload of PyTorch's takes: its parser's TypeError, word for
    word."""
    import numbagrad
    import torch

    messages = []
    for lib in (torch, numbagrad):
        with pytest.raises(TypeError) as info:
            eval(call, {"torch": lib, "x": lib.tensor([[3.0, 1.0, 2.0]])})
        messages.append(str(info.value))
    assert messages[1] == messages[0]
