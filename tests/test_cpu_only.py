"""A CPU-only program never imports numba-cuda: the tensors' device picks the backend."""

from __future__ import annotations

import subprocess
import sys
import textwrap

PROGRAM = textwrap.dedent("""
    import sys

    class BlockCuda:
        # as if numba-cuda were not installed: any import of it fails
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in ("numba_cuda", "cuda") or name.startswith("numba.cuda"):
                raise ImportError("numba-cuda is not installed: " + name)

    sys.meta_path.insert(0, BlockCuda())
    import numbagrad as torch

    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    out = torch.zeros(3)
    out[1] = x[1] * 2
    out.sum().backward()
    assert x.grad.tolist() == [0.0, 2.0, 0.0], x.grad

    # a Hessian-vector product (0-d gradients flow through the second backward)
    y = (x ** 3).sum()
    v = torch.tensor([1.0, 0.0, 1.0])
    g, = torch.autograd.grad(y, x, create_graph=True)
    hv, = torch.autograd.grad((g * v).sum(), x)
    assert hv.tolist() == [6.0, 0.0, 18.0], hv

    # a small training loop: indexing, a loss, an optimizer step
    w = torch.zeros(2, 1, requires_grad=True)
    opt = torch.optim.SGD([w], lr=0.1)
    data = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    target = data.sum(1, keepdim=True)
    for _ in range(3):
        idx = torch.tensor([0, 2])
        loss = ((data[idx] @ w - target[idx]) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert w[0, 0].item() > 0
    loaded = [m for m in sys.modules if m.startswith(("numba.cuda", "numba_cuda"))]
    assert not loaded, loaded
    print("ok")
""")


def test_a_cpu_program_runs_with_numba_cuda_blocked():
    done = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "ok"
