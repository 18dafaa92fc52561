"""The tanh GELU in one pass (eager PyTorch runs about eight element-wise kernels, each with its
own temporary)."""
import ctypes

import torch
import torch.nn as nn
from perfalign_kernels import load_cpp, ptr

SOURCE = r"""
#include <cstdint>
#include <cmath>
extern "C" void gelu_tanh(const float* x, float* y, int64_t n) {
    const float k = 0.7978845608028654f;  // sqrt(2 / pi)
    #pragma omp parallel for simd
    for (int64_t i = 0; i < n; ++i) {
        float v = x[i];
        float u = k * (v + 0.044715f * v * v * v);
        // tanh(u) = 1 - 2 / (exp(2u) + 1): vectorizes through libmvec's expf
        float t = 1.f - 2.f / (std::exp(2.f * u) + 1.f);
        y[i] = 0.5f * v * (1.f + t);
    }
}
"""
_lib = load_cpp(SOURCE, "gelu", flags=("-ffast-math",))
_lib.gelu_tanh.restype = None
_lib.gelu_tanh.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        _lib.gelu_tanh(ptr(x), ptr(y), x.numel())
        return y
