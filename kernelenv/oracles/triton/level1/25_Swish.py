"""Swish as a Triton kernel. On a GPU it runs compiled; here it is scored with TRITON_INTERPRET=1
(Triton's interpreter on CPU tensors: correctness only, its timing means nothing)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def swish_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, x * tl.sigmoid(x), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        swish_kernel[(triton.cdiv(n, 4096),)](x, y, n, BLOCK=4096)
        return y
