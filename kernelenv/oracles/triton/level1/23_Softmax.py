"""Row softmax as a Triton kernel for rows too wide for one block (393216 columns): one program per
row, an online pass for the max and the sum (rescaled as the max grows), then a pass that writes.
On a GPU it runs compiled; on CPU it is scored with TRITON_INTERPRET=1 (correctness only)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _softmax_rows(x_ptr, y_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64) * cols
    m = tl.full((BLOCK,), float("-inf"), tl.float32)
    s = tl.zeros((BLOCK,), tl.float32)
    for start in range(0, cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row + offs, mask=offs < cols, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, x)
        alpha = tl.where(m_new == float("-inf"), 1.0, tl.exp(m - m_new))  # lanes with no value yet
        s = s * alpha + tl.where(x == float("-inf"), 0.0, tl.exp(x - m_new))
        m = m_new
    mx = tl.max(m, 0)
    total = tl.sum(s * tl.exp(m - mx), 0)
    for start in range(0, cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row + offs, mask=offs < cols, other=0.0).to(tl.float32)
        tl.store(y_ptr + row + offs, tl.exp(x - mx) / total, mask=offs < cols)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        rows, cols = x.shape
        _softmax_rows[(rows,)](x, y, cols, BLOCK=2048)
        return y
