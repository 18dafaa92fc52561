"""Swish, x * sigmoid(x), in one pass instead of two."""
import ctypes

import torch
import torch.nn as nn
from perfalign_kernels import load_cpp, ptr

SOURCE = r"""
#include <cstdint>
#include <cmath>
extern "C" void swish(const float* x, float* y, int64_t n) {
    #pragma omp parallel for simd
    for (int64_t i = 0; i < n; ++i) {
        float v = x[i];
        y[i] = v / (1.f + std::exp(-v));
    }
}
"""
_lib = load_cpp(SOURCE, "swish", flags=("-ffast-math",))
_lib.swish.restype = None
_lib.swish.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        _lib.swish(ptr(x), ptr(y), x.numel())
        return y
