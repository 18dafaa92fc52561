"""Mean squared error in one pass (eager PyTorch makes a difference tensor, then its square)."""
import ctypes

import torch
import torch.nn as nn
from perfalign_kernels import load_cpp, ptr

SOURCE = r"""
#include <cstdint>
extern "C" double sq_diff_sum(const float* a, const float* b, int64_t n) {
    double total = 0.0;
    const int64_t block = 4096;
    #pragma omp parallel for reduction(+:total)
    for (int64_t s = 0; s < n; s += block) {
        int64_t e = s + block < n ? s + block : n;
        float acc = 0.f;
        #pragma omp simd reduction(+:acc)
        for (int64_t i = s; i < e; ++i) { float d = a[i] - b[i]; acc += d * d; }
        total += acc;
    }
    return total;
}
"""
_lib = load_cpp(SOURCE, "mse")
_lib.sq_diff_sum.restype = ctypes.c_double
_lib.sq_diff_sum.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions, targets):
        a, b = predictions.contiguous(), targets.contiguous()
        if a.shape != b.shape:
            raise ValueError("predictions and targets must have the same shape")
        return torch.tensor(_lib.sq_diff_sum(ptr(a), ptr(b), a.numel()) / a.numel(), dtype=torch.float32)
