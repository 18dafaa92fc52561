"""One call of a model server, as the driver makes it: fresh inputs in shared memory, outputs
poisoned, then snapshotted and judged."""
from __future__ import annotations

import mmap
import os
import time

from ..sizes import compare, rewrite_constants
from .channel import _Protocol
from .shared import ALIGN, _dtype_name, _problem_namespace


class _Calls:
    """The calls half of ``driver._Driver``: inputs, shared memory, one judged call."""

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
