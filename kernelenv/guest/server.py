"""The model server (``--child``): loads the reference's ``Model`` or the subject's model and serves
its calls on inputs in shared memory."""
from __future__ import annotations

import ctypes
import fcntl
import hashlib
import importlib.util
import json
import math
import mmap
import os
import resource
import secrets
import subprocess
import sys
import time
import types

from .shared import MMAP_THRESHOLD, _dtype_name, _op_tracer, _prctl_nondumpable, _send

# Plain C++ (no torch headers: ~0.2-1 s where torch's load_inline takes ~100 s cold).
CPP_COMMAND = ("/usr/bin/g++", "-O3", "-march=native", "-fopenmp", "-shared", "-fPIC", "-std=c++17")


def load_cpp(source: str, name: str = "kernel", flags=()):
    """Compile plain C++ (no torch headers) into a shared object and load it with ctypes.

    ``g++ -O3 -march=native -fopenmp -shared -fPIC -std=c++17``; cached by content for the run.
    Call the functions on ``tensor.data_ptr()`` (see ``ptr``). Raises RuntimeError with the
    compiler's message on a compile error.
    """
    flags = tuple(flags)
    key = hashlib.sha256((source + "\0" + " ".join(flags)).encode()).hexdigest()[:16]
    d = "/tmp/perfalign_cpp"
    os.makedirs(d, exist_ok=True)
    so = f"{d}/{name}_{key}.so"
    if not os.path.exists(so):
        cpp = f"{d}/{name}_{key}.cpp"
        with open(cpp, "w") as f:
            f.write(source)
        t0 = time.monotonic()
        p = subprocess.run([*CPP_COMMAND, *flags, "-o", so + ".tmp", cpp], capture_output=True, text=True)
        _COMPILES.append(round(time.monotonic() - t0, 4))
        if p.returncode != 0:
            raise RuntimeError("C++ compile error:\n" + p.stderr[-4000:])
        os.rename(so + ".tmp", so)
    return ctypes.CDLL(so)


def ptr(tensor):
    """A ctypes pointer to a contiguous tensor's data."""
    if not tensor.is_contiguous():
        raise ValueError("ptr() needs a contiguous tensor")
    return ctypes.c_void_p(tensor.data_ptr())


_COMPILES: list = []


def _helper_module():
    mod = types.ModuleType("perfalign_kernels")
    mod.load_cpp, mod.ptr, mod.__doc__ = load_cpp, ptr, "Helpers for candidates: load_cpp(source), ptr(tensor)."
    return mod


def _hidden_fd(fd: int) -> int:
    """A close-on-exec duplicate of ``fd`` at a random number in the upper half of the fd limit."""
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    soft = 1024 if soft == resource.RLIM_INFINITY else min(int(soft), 1 << 16)
    low = max(64, soft // 2)
    return fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, low + secrets.randbelow(max(1, soft - low - 8)))


def _child() -> None:
    if "--trusted" in sys.argv:  # the reference's server: nobody may read or write its memory or fds
        _prctl_nondumpable()

    # The protocol moves to close-on-exec copies at random high fds; fds 0/1 become /dev/null, so
    # the model's prints, reads and writes to the inherited fds (or to the low fds) never reach
    # it. A model can still scan its own fd table: the driver treats every byte of the channel as
    # the candidate's (``channel._Server.recv``) and every failure after the start as its fault.
    proto_in = os.fdopen(_hidden_fd(0), "rb")
    proto_out = os.fdopen(_hidden_fd(1), "wb")
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)
    import torch

    msg = json.loads(proto_in.readline())
    _steady_heap()
    torch.set_num_threads(int(msg["threads"]))
    device = torch.device(msg["device"])
    shm_fd = int(msg["shm_fd"])
    try:
        model = _build_model(msg, device)
    except BaseException as e:  # noqa: BLE001 - any failure of the model's code is its load error
        _send(proto_out, {"ok": False, "error": f"{type(e).__name__}: {e}"[:4000], "compiles": _COMPILES})
        return
    _send(proto_out, {"ok": True, "compiles": _COMPILES})
    mm, mm_size = None, 0
    dtypes = {}
    while True:
        line = proto_in.readline()
        if not line:
            return
        msg = json.loads(line)
        if msg["size"] > mm_size:
            mm, mm_size = mmap.mmap(shm_fd, msg["size"]), msg["size"]
        args, spans = [], []
        for spec in msg["inputs"]:
            if spec["kind"] == "value":
                args.append(spec["value"])
                continue
            dt = dtypes.setdefault(spec["dtype"], getattr(torch, spec["dtype"]))
            n = math.prod(spec["shape"])
            t = torch.frombuffer(mm, dtype=dt, count=n, offset=spec["offset"]).view(spec["shape"]) if n else \
                torch.empty(spec["shape"], dtype=dt)
            spans.append((t.data_ptr(), t.data_ptr() + t.numel() * t.element_size()))
            args.append(t.to(device) if device.type != "cpu" else t)
        tracer = _op_tracer(timed=False) if msg.get("trace") else None
        try:
            with tracer if tracer else torch.no_grad():
                result = model(*args)
            outs = list(result) if isinstance(result, (tuple, list)) else [result]
            reply = {"ok": True, "outputs": [], "aliases_input": False}
            for spec, out in zip(msg["outputs"], outs):
                if not isinstance(out, torch.Tensor):
                    reply["outputs"].append({"shape": None, "dtype": type(out).__name__})
                    continue
                info = {"shape": list(out.shape), "dtype": _dtype_name(out)}
                if out.device.type == "cpu" and out.numel():
                    lo = out.data_ptr()
                    hi = lo + out.numel() * out.element_size()
                    reply["aliases_input"] |= any(lo < b and a < hi for a, b in spans)
                if info["shape"] == spec["shape"] and info["dtype"] == spec["dtype"] and out.numel():
                    dst = torch.frombuffer(mm, dtype=out.dtype, count=out.numel(), offset=spec["offset"])
                    dst.copy_(out.reshape(-1))  # a device output is copied back (and synchronized) here
                reply["outputs"].append(info)
            reply["n_outputs"] = len(outs)
            if tracer:
                reply["ops"] = sorted(tracer.ops)
        except BaseException as e:  # noqa: BLE001
            reply = {"ok": False, "error": f"{type(e).__name__}: {e}"[:4000]}
        _send(proto_out, reply)


def _steady_heap() -> None:
    """Put this server's allocator in one state that its history cannot change, the same in every
    server, before any model code runs. glibc's default raises its mmap threshold when a mapped
    block is freed and trims the heap, and its memalign requests (torch's) fit freed blocks only
    by chance: whether a call's output came from warm heap or from fresh pages faulted in (about
    half of a memory-bound op's CPU) depended on the sizes the process freed before, so equal
    ops scored up to 2x apart, and a warm reserve did not hold. Here every block from 128 KiB up
    is mapped afresh and faulted in on every call, in every server alike."""
    libc = ctypes.CDLL(None)
    if hasattr(libc, "mallopt"):
        libc.mallopt(-3, MMAP_THRESHOLD)  # M_MMAP_THRESHOLD, fixed: no dynamic threshold


def _exec_module(name: str, source: str, path: str):
    with open(path, "w") as f:  # a real file: inspect.getsource (Triton's JIT) needs one
        f.write(source)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def _build_model(msg: dict, device):
    import torch

    sys.modules["perfalign_kernels"] = _helper_module()
    if msg["role"] == "candidate":
        mod = _exec_module("candidate", msg["source"], "/tmp/candidate.py")
        cls = getattr(mod, "ModelNew", None)
        if cls is None:
            raise AttributeError("the candidate defines no ModelNew")
    else:
        mod = _exec_module("problem", msg["source"], "/tmp/problem.py")
        cls = mod.Model
    torch.manual_seed(int(msg["weight_seed"]))
    model = cls(*msg["init_inputs"])
    if hasattr(model, "to"):
        model = model.to(device)
    if msg["role"] == "compiled":
        model = torch.compile(model)
    return model
