"""What the driver and the model servers share: the line protocol, the op tracer, the problem's
namespace, non-dumpable processes."""
from __future__ import annotations

import ctypes
import json
import time


def _dtype_name(t) -> str:
    return str(t.dtype).replace("torch.", "")


def _send(stream, obj) -> None:
    stream.write(json.dumps(obj).encode() + b"\n")
    stream.flush()


ALIGN = 64
MMAP_THRESHOLD = 128 << 10  # glibc's default, held fixed in the model servers (_steady_heap)
# Ops that move or allocate memory: never "the reference's computation".
TRIVIAL_OPS = {"aten::empty", "aten::empty_like", "aten::empty_strided", "aten::zeros", "aten::zeros_like",
               "aten::ones", "aten::ones_like", "aten::full", "aten::full_like", "aten::copy_", "aten::clone",
               "aten::view", "aten::_unsafe_view", "aten::reshape", "aten::t", "aten::transpose",
               "aten::permute", "aten::expand", "aten::contiguous", "aten::detach", "aten::alias",
               "aten::as_strided", "aten::slice", "aten::select", "aten::unsqueeze", "aten::squeeze",
               "aten::lift_fresh", "aten::_to_copy", "aten::to", "aten::resize_", "aten::set_", "aten::fill_",
               "aten::zero_", "aten::new_empty", "aten::new_empty_strided", "aten::new_zeros", "aten::split",
               "aten::unbind", "aten::flatten", "aten::item", "aten::_local_scalar_dense", "aten::is_nonzero",
               "aten::size", "aten::stride", "aten::numel", "aten::sym_size", "aten::sym_stride"}


def _op_tracer(timed: bool):
    """A TorchDispatchMode recording every aten op (and, for the driver, its time)."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    class Tracer(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.ops = {}

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            name = "aten::" + func.__name__.split(".")[0]
            t0 = time.perf_counter() if timed else 0.0
            out = func(*args, **(kwargs or {}))
            self.ops[name] = self.ops.get(name, 0.0) + ((time.perf_counter() - t0) if timed else 1.0)
            return out
    torch.set_grad_enabled(False)
    return Tracer()


def _prctl_nondumpable() -> None:
    ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE = 0


def _problem_namespace(source: str) -> dict:
    ns = {"__name__": "problem"}
    exec(compile(source, "problem.py", "exec"), ns)  # the problem is trusted (not the candidate)
    return ns
