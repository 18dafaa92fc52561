"""The kernel harness that runs INSIDE the sandbox (``python3`` with the ``torch`` toolchain).

This one file is the sandboxed program (``Job.source``); the size rules and the output comparison
it shares with the host (``kernelenv/sizes.py``) come as source in its job.

Two processes per sandboxed execution:

- the **driver** (this file, no argument) reads its job from stdin: the problem's source, the
  secret seed, a nonce, and (for a candidate) the candidate's source. It never runs candidate
  code. It makes itself non-dumpable (the candidate cannot ptrace it, read its memory or
  environment, or take its file descriptors), draws every trial's inputs from the secret seed,
  computes the reference in its own memory, and measures each call of the model server from
  outside: CPU time = the sandbox cgroup's counter over the call window minus the driver's own
  CPU (every process and thread the candidate creates is charged), wall time from its own clock.
  It alone writes to stdout: one JSON report carrying the nonce.
- two **model servers** (``--child``), each with its own shared memory (a memfd): the
  reference's (the problem's ``Model``, eager; ``--trusted``: non-dumpable, so no other process
  can read or write its memory or take its fds) and the subject's (the candidate's ``ModelNew``,
  or ``torch.compile(Model)`` for the compile baseline). Each gets only init values, a weight
  seed and, per call, input tensors in shared memory, and copies its outputs there.

Timing is the one measurement protocol (``measure/timing_stats.py``, whose source the host sends
in the job and the driver ``exec``s): the reference server is first timed alone (before any
candidate code exists: the machine's own noise), then the subject and the reference in
interleaved rounds, both on the same fresh inputs, in a fresh random order each round, until
the speedup's estimate (``rounds_estimate``: the medians', else the paired one) is precise to
the target (or the round / time cap). A round's
CPU: the reference server's process clock, and for the subject everything else the sandbox's
cgroup counted over the round minus the driver's own CPU (its children, its threads, and any
work it does between its calls, while the reference runs, are charged to it).

Per call the driver flushes the per-core caches, writes fresh inputs, asks for the call,
snapshots the output: inputs never exist before the window
opens and the output is judged as it was when the window closed. Outputs go to a region the
driver poisons before each call; inputs are compared with the driver's private copy afterwards.
"""
from __future__ import annotations

import ctypes
import fcntl
import hashlib
import importlib.util
import json
import math
import mmap
import os
import random
import resource
import secrets
import select
import statistics
import subprocess
import sys
import time
import types

# ----------------------------------------------------------------------------- size rules
# kernelenv/sizes.py (the host uses them too); its source comes in the job and main() binds it here.
SIZES_API = ("compare", "derive_seed", "free_constants", "rewrite_constants", "scale_value", "size_constants",
             "vary_sizes")
compare = derive_seed = free_constants = rewrite_constants = scale_value = size_constants = vary_sizes = None


def _dtype_name(t) -> str:
    return str(t.dtype).replace("torch.", "")


def _bind_sizes(source: str) -> None:
    """Bind ``kernelenv/sizes.py``'s functions, sent by the host as source (trusted: its own file)."""
    ns = {"__name__": "perfalign_kernel_sizes"}
    exec(compile(source, "sizes.py", "exec"), ns)
    globals().update({name: ns[name] for name in SIZES_API})


# ----------------------------------------------------------------------------- shared protocol

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


# ----------------------------------------------------------------------------- model server (child)

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
    # the candidate's (kernelenv/guest.py _Server.recv) and every failure after the start as its fault.
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


# ----------------------------------------------------------------------------- driver

class _Cpu:
    """CPU seconds of everything in the sandbox (its cgroup counter), or of one process."""

    PATHS = ("/run/cpu", "/sys/fs/cgroup/cpu.stat", "/sys/fs/cgroup/cpuacct/cpuacct.usage")

    def __init__(self):
        self.path, self.keyed = None, False
        for p in self.PATHS:
            try:
                text = open(p).read()
            except OSError:
                continue
            self.path, self.keyed = p, text.startswith("usage_usec") or "\nusage_usec" in text
            break
        self.source = "cgroup" if self.path else "process"

    def read(self) -> float | None:
        """The cgroup's CPU seconds; None without one (then the subject's own process clock
        counts, which misses its subprocesses)."""
        if self.path is None:
            return None
        # The counter holds a running task's time only up to its last accounting (a scheduler
        # tick: ms); yielding accounts the driver's own, so counter minus getrusage is exact
        os.sched_yield()
        with open(self.path) as f:
            text = f.read()
        if not self.keyed:
            return int(text.split()[0]) * 1e-9
        for line in text.splitlines():
            if line.startswith("usage_usec"):
                return int(line.split()[1]) * 1e-6
        return 0.0


def _self_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


class _ChildGone(Exception):
    pass


class _Protocol(Exception):
    """The model server broke the protocol (garbage, oversized or malformed messages)."""


class _ReferenceFailed(Exception):
    """The problem's own code (inputs, reference model) raised while the model server ran."""


class _Server:
    """The driver's end of the model server: spawn, talk with deadlines, kill."""

    def __init__(self, env: dict, trusted: bool = False):
        self.shm_fd, self.size, self.mm = os.memfd_create("kernel-io"), 0, None  # this server's alone
        self.err = os.fdopen(os.memfd_create("child-stderr"), "w+b")
        self.proc = subprocess.Popen([sys.executable, "-B", os.path.abspath(__file__), "--child",
                                      *(["--trusted"] if trusted else [])],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.err,
                                     pass_fds=(self.shm_fd,), close_fds=True, env=env, cwd="/tmp")
        self.buf = b""
        clk = ctypes.c_int()
        err = ctypes.CDLL(None, use_errno=True).clock_getcpuclockid(self.proc.pid, ctypes.byref(clk))
        self.clock = None if err else clk.value

    def cpu(self) -> float:
        """CPU seconds of the server process, every thread (not its children)."""
        if self.clock is not None:
            try:
                return time.clock_gettime(self.clock)
            except OSError:
                pass
        try:  # fallback: the scheduler's run time of each thread
            base = f"/proc/{self.proc.pid}/task"
            return sum(int(open(f"{base}/{t}/schedstat").read().split()[0]) for t in os.listdir(base)) * 1e-9
        except (OSError, ValueError) as e:
            raise _ChildGone(f"its CPU clock cannot be read ({e})") from None

    def send(self, obj) -> None:
        try:
            _send(self.proc.stdin, obj)
        except (BrokenPipeError, OSError):
            raise _ChildGone(self.stderr_tail()) from None

    def recv(self, timeout: float) -> dict:
        deadline = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                self.kill()
                raise TimeoutError(f"no answer within {timeout:.3g} s")
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    raise _ChildGone(self.stderr_tail())
                self.buf += chunk
                if len(self.buf) > 1 << 20:
                    raise _Protocol("oversized message")
        line, _, self.buf = self.buf.partition(b"\n")
        try:
            msg = json.loads(line)
        except Exception as e:  # noqa: BLE001 - every byte here is the candidate's: ValueError, deep nesting...
            raise _Protocol(f"not JSON ({type(e).__name__})") from None
        if not isinstance(msg, dict):
            raise _Protocol("not a JSON object")
        return msg

    def stderr_tail(self) -> str:
        try:
            self.err.seek(0, os.SEEK_END)
            size = self.err.tell()
            self.err.seek(max(0, size - 3000))
            return self.err.read().decode("utf-8", "replace")
        except (OSError, ValueError):
            return ""

    def kill(self) -> None:
        try:
            self.proc.kill()
        except OSError:
            pass


def _load_stats(source: str) -> dict:
    """The measurement layer's statistics (``measure/timing_stats.py``), sent by the host as
    source: the driver runs the one implementation without perfalign on its path."""
    mod = types.ModuleType("perfalign_timing_stats")
    sys.modules[mod.__name__] = mod  # dataclasses look their module up
    exec(compile(source, "timing_stats.py", "exec"), mod.__dict__)  # trusted: the host's own file
    return mod.__dict__


def _prctl_nondumpable() -> None:
    ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE = 0


def _problem_namespace(source: str) -> dict:
    ns = {"__name__": "problem"}
    exec(compile(source, "problem.py", "exec"), ns)  # the problem is trusted (not the candidate)
    return ns


class _Driver:
    def __init__(self, job: dict):
        import torch

        self.job, self.torch = job, torch
        torch.set_num_threads(int(job["threads"]))
        torch.set_grad_enabled(False)
        self.device = torch.device(job["device"])
        self.seed = int(job["seed"])
        self.source = job["problem"]
        self.problem = _problem_namespace(self.source)
        self.init_inputs = list(self.problem["get_init_inputs"]())
        json.dumps(self.init_inputs)  # plain values only: they cross to the model server as JSON
        self.weight_seed = derive_seed(self.seed, "weights")
        torch.manual_seed(self.weight_seed)
        self.reference = self.problem["Model"](*self.init_inputs)
        if hasattr(self.reference, "to"):
            self.reference = self.reference.to(self.device)
        self.cpu = _Cpu()
        self.stats = _load_stats(job["stats"])
        self.gate = self.stats["NoiseGate"](**job.get("gate", {}))
        self.flush = torch.empty(int(job.get("flush_bytes", 16 << 20)) // 4, dtype=torch.float32)
        self.report = {"nonce": job["nonce"], "role": job["role"], "cpu_source": self.cpu.source,
                       "correctness": [], "times_cpu_s": [], "times_wall_s": [], "reference_cpu_s": [],
                       "reference_alone_cpu_s": [], "order": "", "flags": []}

    # -- inputs, shared memory, calls
    def inputs(self, seed: int, varied: dict | None):
        ns = _problem_namespace(rewrite_constants(self.source, varied)) if varied else self.problem
        self.torch.manual_seed(seed)
        return list(ns["get_inputs"]())

    def _ensure(self, server, size: int) -> None:
        if size > server.size:
            size = max(size, server.size * 2)
            os.ftruncate(server.shm_fd, size)
            server.mm, server.size = mmap.mmap(server.shm_fd, size), size

    def _view(self, server, dtype, numel: int, offset: int):
        return self.torch.frombuffer(server.mm, dtype=dtype, count=numel, offset=offset)

    def _layout(self, inputs, refs):
        offset, specs, outs = 0, [], []
        for x in inputs:
            if isinstance(x, self.torch.Tensor):
                specs.append({"kind": "tensor", "dtype": _dtype_name(x), "shape": list(x.shape), "offset": offset})
                offset += -(-x.numel() * x.element_size() // ALIGN) * ALIGN
            else:
                specs.append({"kind": "value", "value": x})
        for r in refs:
            outs.append({"shape": list(r.shape), "dtype": _dtype_name(r), "offset": offset})
            offset += -(-r.numel() * r.element_size() // ALIGN) * ALIGN
        return specs, outs, max(offset, ALIGN)

    def _flush_caches(self) -> None:
        """Evict the per-core caches (L1/L2) on every CPU the run may use: touch a buffer on each."""
        try:
            cpus = sorted(os.sched_getaffinity(0))
            for c in cpus:
                os.sched_setaffinity(0, {c})
                self.flush.add_(1.0)
            os.sched_setaffinity(0, set(cpus))
        except OSError:
            self.flush.add_(1.0)

    def call(self, server, inputs, refs, timeout: float, trace: bool = False):
        """One call, judged on its outputs as snapshotted: (status, why, max_abs_err, wall_s, reply).
        Its CPU is counted by the round around it (``_rounds``)."""
        torch = self.torch
        cpu_inputs = [x.cpu().contiguous() if isinstance(x, torch.Tensor) else x for x in inputs]
        specs, outs, size = self._layout(cpu_inputs, refs)
        self._ensure(server, size)
        self._flush_caches()
        t0 = time.perf_counter()
        # -- the inputs exist in shared memory only from here on
        for spec, x in zip(specs, cpu_inputs):
            if spec["kind"] == "tensor" and x.numel():
                self._view(server, x.dtype, x.numel(), spec["offset"]).copy_(x.reshape(-1))
        for o, r in zip(outs, refs):  # poison: a stale or unwritten output never passes
            if r.numel():
                v = self._view(server, r.dtype, r.numel(), o["offset"])
                if r.dtype.is_floating_point:
                    v.fill_(float("nan"))
                else:  # wrong everywhere
                    v.copy_((~r if r.dtype == torch.bool else r + 1).reshape(-1))
        server.send({"size": server.size, "inputs": specs, "outputs": outs, "trace": trace})
        reply = server.recv(timeout)
        snaps = [self._view(server, r.dtype, r.numel(), o["offset"]).clone().view(r.shape) if r.numel()
                 else r.new_empty(r.shape)
                 for o, r in zip(outs, refs)]
        # -- the output is judged as it was at the snapshot
        t1 = time.perf_counter()
        intact = all(spec["kind"] != "tensor" or not x.numel()
                     or torch.equal(self._view(server, x.dtype, x.numel(), spec["offset"]), x.reshape(-1))
                     for spec, x in zip(specs, cpu_inputs))
        try:
            verdict = self.judge(reply, snaps, refs, intact)
        except Exception as e:  # noqa: BLE001 - the reply is the candidate's: any failure to read it is its own
            raise _Protocol(f"malformed reply ({type(e).__name__})") from None
        return (*verdict, t1 - t0, reply)

    def reference_out(self, inputs):
        torch = self.torch
        args = [x.to(self.device) if isinstance(x, torch.Tensor) else x for x in inputs]
        t0 = time.perf_counter()
        r = self.reference(*args)
        if self.device.type == "cuda":
            torch.cuda.synchronize()
        dt = time.perf_counter() - t0
        refs = list(r) if isinstance(r, (tuple, list)) else [r]
        return [x.detach().cpu().contiguous() for x in refs], dt

    def judge(self, reply, snaps, refs, intact) -> tuple:
        # What decides is what the driver itself snapshotted; the reply only explains failures.
        if not reply.get("ok"):
            return "runtime_error", str(reply.get("error", "the model raised"))[:4000], None
        if not intact:
            return "incorrect", "the inputs were modified", None
        if reply.get("aliases_input"):
            return "incorrect", "an output aliases an input", None
        infos = reply.get("outputs")
        if reply.get("n_outputs") != len(refs) or not isinstance(infos, list) or len(infos) != len(refs):
            return "incorrect", f"{reply.get('n_outputs')} outputs, expected {len(refs)}", None
        worst = 0.0
        for info, snap, ref in zip(infos, snaps, refs):
            ok, why, err = compare(snap, ref)
            if not ok:
                if isinstance(info, dict) and info.get("shape") != list(ref.shape):
                    why = f"output shape {info.get('shape')} != expected {list(ref.shape)}"
                elif isinstance(info, dict) and info.get("dtype") != _dtype_name(ref):
                    why = f"output dtype {info.get('dtype')} != expected {_dtype_name(ref)}"
                return "incorrect", why, err
            worst = max(worst, err or 0.0)
        return "ok", "", worst

    # -- the run
    def run(self) -> dict:
        """Serve the models and judge them, in two phases.

        A, trusted (no candidate code exists yet): the reference's server loads, warms up and is
        timed alone. Any failure here is the problem's: baseline_error.
        B: the subject's server (a candidate's ``ModelNew``, or ``torch.compile(Model)``) loads
        and passes the correctness trials, a traced call and warm-ups; the subject and the
        reference are then timed in interleaved rounds; revalidation. Every failure from here on
        is the subject's, the reference server's included (a candidate's penalty, a compile
        baseline's failure): the reference passed the same inputs in A, and only what the
        subject did to the shared sandbox (signals, memory, processes) can make it fail now."""
        job, rep = self.job, self.report
        env = dict(os.environ)
        # the trusted work that needs no model server comes first: a failure here is the problem's
        self.nominal = self.inputs(derive_seed(self.seed, "trace"), None)
        self.nominal_refs, self.nominal_ref_s = self.reference_out(self.nominal)
        if job["role"] == "candidate":
            rep["reference_ops"] = self._reference_ops(self.nominal)
        self.timeout = float(job.get("call_timeout_s", 10.0)) + 100 * self.nominal_ref_s  # slow is not wrong
        servers = []
        try:
            ref = _Server(env, trusted=True)
            servers.append(ref)
            self._reference_alone(ref)
        except Exception as e:  # noqa: BLE001 - nothing but the problem's own code has run
            rep.update(status="baseline_error", message="the reference failed on its own: "
                       + f"{type(e).__name__}: {e}"[:3000])
            for server in servers:
                server.kill()
            return rep
        if job["role"] == "eager":  # the reference alone
            ref.kill()
            rep.setdefault("status", "ok")
            return rep
        if job.get("interpret"):
            env["TRITON_INTERPRET"] = "1"
        try:
            server = _Server(env)
            servers.append(server)
            self._serve(server, ref)
        except TimeoutError as e:
            rep.update(status="timeout", message=str(e))
        except _ChildGone as e:
            rep.update(status="runtime_error", message="a model server died: " + str(e)[-2000:])
        except _Protocol as e:
            rep.update(status="runtime_error", message=f"protocol violation by the model server: {e}")
        except _ReferenceFailed as e:
            rep.update(status="runtime_error", message="the reference failed beside the candidate: " + str(e)[:3000])
        except Exception as e:  # noqa: BLE001 - anything else once the model runs is the model's doing
            rep.update(status="runtime_error", message=f"the harness failed serving the model: {type(e).__name__}: "
                       + str(e)[:2000])
        finally:
            for server in servers:
                server.kill()
        rep.setdefault("status", "ok")
        return rep

    def _trusted(self, fn, *args):
        """Call the problem's own code (inputs, reference) while the model server runs."""
        try:
            return fn(*args)
        except Exception as e:  # noqa: BLE001 - caught where it happens: the reference's failure
            raise _ReferenceFailed(f"{type(e).__name__}: {e}") from None

    def _load(self, server, role: str, source: str) -> dict:
        job = self.job
        server.send({"role": role, "source": source, "init_inputs": self.init_inputs,
                     "weight_seed": self.weight_seed, "threads": job["threads"], "device": job["device"],
                     "shm_fd": server.shm_fd})
        return server.recv(float(job.get("load_timeout_s", 300)))

    def _checked(self, server, x, refs, timeout: float, what: str) -> float:
        """A call to the reference's server that must be right; its wall time."""
        status, why, _, wall, _ = self.call(server, x, refs, timeout)
        if status != "ok":
            raise _ReferenceFailed(f"{what}: {status}: {why}")
        return wall

    def _timing_inputs(self, i: int) -> list:
        """Round ``i``'s calls: (inputs, reference outputs) for each of ``calls_per_round``."""
        batch = []
        for j in range(self.calls_per_round):
            x = self._trusted(self.inputs, derive_seed(self.seed, "timing", i, j), None)
            batch.append((x, self._trusted(self.reference_out, x)[0]))
        return batch

    def _enough(self, series: list, pairs: list, spent: float, most: int = 0) -> bool:
        """The protocol's stopping rule after a round: the minimum done, and the estimate a score
        would report (``rounds_estimate``: the medians', else the paired one) precise to the
        target (or futile), or a cap reached. Without pairs (the reference alone) its median."""
        st, n = self.stats, len(series[0])
        if n < int(self.job["min_trials"]):
            return False
        if n >= (most or int(self.job["trials"])) or spent >= float(self.job["time_budget_s"]):
            return True
        futile = st["futile_above"](self.gate, n, int(self.job["trials"]))
        est = st["rounds_estimate"](pairs, self.gate) if pairs else \
            st["Estimate"](None, st["rel_se_of_cost"](series[0]))
        return not st["more_rounds"](est, self.gate, futile)

    def _reference_alone(self, ref) -> None:
        """Phase A: the reference's server loads and runs alone (the machine's own noise)."""
        job, rep = self.job, self.report
        hello = self._load(ref, "eager", self.source)
        if not hello.get("ok"):
            raise _ReferenceFailed(f"load: {hello.get('error')}")
        warm = []
        for i in range(int(job["warmups"])):
            x = self.inputs(derive_seed(self.seed, "warmup", i), None)
            r0 = ref.cpu()
            self._checked(ref, x, self.reference_out(x)[0], self.timeout, f"warm-up call {i}")
            warm.append(ref.cpu() - r0)
        # more work per round for short calls: each model's share of a round holds about
        # round_target_s of the reference's work (a round's CPU has a fixed noise of its own)
        per_call = statistics.median(warm[1:] or warm) if warm else 0.0
        target = float(job.get("round_target_s", 0.01))
        self.calls_per_round = max(1, min(int(job.get("max_calls_per_round", 8)),
                                          int(target / max(per_call, 1e-6)) + 1)) if per_call < target else 1
        rep["calls_per_round"] = self.calls_per_round
        alone, spent = rep["reference_alone_cpu_s"], 0.0
        most = max(int(job["min_trials"]), int(job["trials"]) // 3)  # a noise estimate, not a score
        for i in range(most):
            batch = self._timing_inputs(i)
            r0 = ref.cpu()
            for x, refs in batch:
                spent += self._checked(ref, x, refs, self.timeout, f"timed call {i}")
            alone.append(ref.cpu() - r0)
            if self._enough([alone], [], 2 * spent, most):  # the time budget is shared by two models in B
                break

    def _serve(self, server, ref) -> None:
        job, rep = self.job, self.report
        src = job["candidate"] if job["role"] == "candidate" else self.source
        hello = self._load(server, job["role"], src)
        compiles = hello.get("compiles")  # the candidate's words: plain numbers only, into the report
        rep["compile_s"] = [float(t) for t in compiles[:100] if isinstance(t, (int, float))] \
            if isinstance(compiles, list) else []
        if not hello.get("ok"):
            rep.update(status="load_error", message=str(hello.get("error"))[:4000])
            return
        nominal, refs, timeout = self.nominal, self.nominal_refs, self.timeout
        # Every subject goes through the same calls in the same order (allocator and cache state
        # depend on the history): correctness trials, one traced call, warm-ups, timing, revalidation.
        # the first call may compile (Inductor; Triton's JIT): a longer deadline for it
        long = timeout + float(job.get("first_call_timeout_s", 600 if job["role"] == "compiled" else 60))
        if not self._correctness(server, "correctness", int(job["correctness_trials"]), timeout, first_timeout=long):
            return
        # The op trace runs under a TorchDispatchMode, which makes Dynamo fall back to eager for good:
        # the baseline job (compiled) makes this call untraced.
        status, why, _, _, reply = self.call(server, nominal, refs, long, trace=bool(job.get("trace", True)))
        if status != "ok":
            rep.update(status=status, message="traced call: " + why)
            return
        rep["candidate_ops"] = [op for op in reply.get("ops", []) if isinstance(op, str)][:200]
        # as many calls before the rounds as the reference's server had (its warm-ups and the
        # rounds alone): otherwise the subject's first rounds run colder (allocator, page faults)
        alone_calls = len(rep["reference_alone_cpu_s"]) * self.calls_per_round
        extra = min(16, max(0, alone_calls - int(job["correctness_trials"]) - 1))
        for i in range(int(job["warmups"]) + extra):
            x = self._trusted(self.inputs, derive_seed(self.seed, "warmup", i), None)
            refs, _ = self._trusted(self.reference_out, x)
            status, why, _, _, _ = self.call(server, x, refs, long)
            if status != "ok":
                rep.update(status=status, message=f"warm-up call {i}: {why}")
                return
        if not self._rounds(server, ref, timeout):
            return
        self._correctness(server, "revalidation", int(job["revalidation_trials"]), timeout)

    def _rounds(self, server, ref, timeout: float) -> bool:
        """Phase B's timing: per round, fresh inputs, both models in a fresh random order (no
        model keeps a position or a predecessor). A round's CPU: the reference server's process
        clock; for the subject, what the cgroup counted over the whole round minus the driver's
        own CPU and the reference's: whatever the subject does, in its calls or between them,
        in threads or in other processes, is its own (without a cgroup: its process clock)."""
        rep = self.report
        order = random.Random(derive_seed(self.seed, "order"))
        subject, reference, pairs, spent = rep["times_cpu_s"], rep["reference_cpu_s"], [], 0.0
        for i in range(int(self.job["trials"])):
            batch = self._timing_inputs(i)
            turn = [("reference", ref), ("subject", server)]
            order.shuffle(turn)
            c0, s0, r0, k0 = self.cpu.read(), _self_cpu(), ref.cpu(), server.cpu()
            for who, srv in turn:
                for x, refs in batch:
                    status, why, _, wall, _ = self.call(srv, x, refs, timeout)
                    if status != "ok" and who == "reference":
                        raise _ReferenceFailed(f"timed round {i}: its server: {status}: {why}")
                    if status != "ok":  # every timed output is checked: a skipped or cached call fails here
                        rep.update(status=status, message=f"timed call {i}: {why}")
                        return False
                    spent += wall
                    if who == "subject":
                        rep["times_wall_s"].append(wall)
            c1, s1, r1, k1 = self.cpu.read(), _self_cpu(), ref.cpu(), server.cpu()
            reference.append(r1 - r0)
            subject.append((c1 - c0) - (s1 - s0) - (r1 - r0) if c0 is not None else k1 - k0)
            rep["order"] += turn[0][0][0]
            pairs.append((reference[-1], subject[-1]))
            if self._enough([reference, subject], pairs, spent / 2):  # the budget is per model
                break
        return True

    def _correctness(self, server, phase: str, n: int, timeout: float, first_timeout: float = 0.0) -> bool:
        rep = self.report
        for i in range(n):
            rng = random.Random(derive_seed(self.seed, phase, "shape", i))
            varied = vary_sizes(self.source, rng) if self.job.get("randomize_shapes", True) else {}
            x, note = None, ""
            if varied:
                try:
                    x = self.inputs(derive_seed(self.seed, phase, i), varied)
                    refs, _ = self.reference_out(x)
                except Exception as e:  # noqa: BLE001 - the reference itself rejects these sizes
                    x, varied = None, {}
                    note = f"nominal sizes (the reference fails on varied ones: {type(e).__name__})"
            if x is None:
                x = self._trusted(self.inputs, derive_seed(self.seed, phase, i), None)
                refs, _ = self._trusted(self.reference_out, x)
            status, why, err, _, _ = self.call(server, x, refs, max(timeout, first_timeout) if i == 0 else timeout)
            rep["correctness"].append({"phase": phase, "trial": i, "ok": status == "ok", "reason": why,
                                       "max_abs_err": err, "varied_sizes": varied, "note": note})
            if status != "ok":
                rep.update(status=status, message=f"{phase} trial {i}: {why}")
                return False
        return True

    def _reference_ops(self, inputs) -> dict:
        """The reference's aten ops and their share of its time (what "calling the reference
        operator" means for this problem)."""
        torch = self.torch
        args = [x.to(self.device) if isinstance(x, torch.Tensor) else x for x in inputs]
        tracer = _op_tracer(timed=True)
        with tracer:
            self.reference(*args)
        total = sum(v for k, v in tracer.ops.items() if k not in TRIVIAL_OPS) or 1.0
        return {k: round(v / total, 4) for k, v in sorted(tracer.ops.items(), key=lambda kv: -kv[1])
                if k not in TRIVIAL_OPS}


def _numel(value) -> int:
    """Elements of every tensor in a (nested) model output."""
    import torch

    if isinstance(value, torch.Tensor):
        return value.numel()
    if isinstance(value, (tuple, list)):
        return sum(_numel(v) for v in value)
    return 0


def _calibrate(job: dict) -> dict:
    """Auto scale: the largest 2**-k whose eager call takes <= target (trusted code only)."""
    import torch

    torch.set_num_threads(int(job["threads"]))
    torch.set_grad_enabled(False)
    source, target = job["problem"], float(job["target_s"])
    sizes = size_constants(source)
    max_elems = int(job.get("max_elements", 1 << 25))
    tried = []

    def attempt(k: int):
        scale = 2.0 ** -k
        ns = _problem_namespace(rewrite_constants(source, {n: scale_value(v, scale) for n, v in sizes.items()}))
        with torch.device("meta"):  # count elements without allocating anything
            torch.manual_seed(0)
            model = ns["Model"](*ns["get_init_inputs"]())
            inputs = list(ns["get_inputs"]())
            elems = sum(x.numel() for x in inputs if isinstance(x, torch.Tensor))
            elems += sum(p.numel() for p in model.parameters()) if hasattr(model, "parameters") else 0
            # the output too: a 32768 x 64 @ 64 x 32768 product has small inputs and a 4 GB result
            try:
                elems += _numel(model(*inputs))
            except Exception:  # noqa: BLE001 - an op without a meta kernel: inputs and parameters only
                pass
        if elems > max_elems:
            return {"k": k, "scale": scale, "elements": elems, "seconds": None, "why": "too large"}
        torch.manual_seed(0)
        model = ns["Model"](*ns["get_init_inputs"]())
        torch.manual_seed(1)
        x = list(ns["get_inputs"]())
        times = []
        for _ in range(4):
            t0 = time.process_time()
            model(*x)
            times.append(time.process_time() - t0)
            if times[-1] > 20 * target:
                break
        times = sorted(times[1:] or times)
        return {"k": k, "scale": scale, "elements": elems, "seconds": times[len(times) // 2]}

    best = None
    for k in range(0, 40):
        try:
            r = attempt(k)
        except Exception as e:  # noqa: BLE001 - too small for the problem (conv input < kernel...)
            tried.append({"k": k, "scale": 2.0 ** -k, "error": f"{type(e).__name__}: {e}"[:300]})
            break
        tried.append(r)
        if r["seconds"] is not None:
            best = r  # if still too slow: remembered in case the next step fails
            if r["seconds"] <= target:
                break
    return {"nonce": job["nonce"], "tried": tried, "choice": best}


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        _child()
        return
    job = json.loads(sys.stdin.read())
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)  # the job (seed, nonce) is read: nothing else may read it
    _prctl_nondumpable()  # before any candidate code exists anywhere in this sandbox
    _bind_sizes(job["sizes"])
    out = sys.stdout
    if job.get("mode") == "calibrate":
        result = _calibrate(job)
    else:
        try:
            result = _Driver(job).run()
        except Exception as e:  # noqa: BLE001 - the problem itself failed (not the candidate)
            result = {"nonce": job["nonce"], "role": job.get("role"), "status": "baseline_error",
                      "message": f"{type(e).__name__}: {e}"[:4000]}
    out.write("\nPERFALIGN-REPORT " + json.dumps(result) + "\n")
    out.flush()


if __name__ == "__main__":
    main()
