"""LeakyReLU (slope 0.01, the problem's default) as a Triton kernel (one pass, 4096 elements per program). On a GPU it runs compiled; on CPU
it is scored with TRITON_INTERPRET=1 (correctness only)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, tl.where(x >= 0, x, x * 0.01), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, negative_slope: float = 0.01):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        _kernel[(triton.cdiv(n, 4096),)](x, y, n, BLOCK=4096)
        return y
