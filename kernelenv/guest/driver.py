"""The driver: serves the reference and the subject, judges them, times them in rounds."""
from __future__ import annotations

import json
import os
import random
import statistics

from perfalign.measure import timing_stats as ts

from ..sizes import derive_seed, vary_sizes
from .calls import _Calls
from .channel import _ChildGone, _Cpu, _Protocol, _ReferenceFailed, _self_cpu, _Server
from .shared import TRIVIAL_OPS, _op_tracer, _problem_namespace


class _Driver(_Calls):
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
        self.gate = ts.NoiseGate(**job.get("gate", {}))
        self.flush = torch.empty(int(job.get("flush_bytes", 16 << 20)) // 4, dtype=torch.float32)
        self.report = {"nonce": job["nonce"], "role": job["role"], "cpu_source": self.cpu.source,
                       "correctness": [], "times_cpu_s": [], "times_wall_s": [], "reference_cpu_s": [],
                       "reference_alone_cpu_s": [], "order": "", "flags": []}

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
        n = len(series[0])
        if n < int(self.job["min_trials"]):
            return False
        if n >= (most or int(self.job["trials"])) or spent >= float(self.job["time_budget_s"]):
            return True
        futile = ts.futile_above(self.gate, n, int(self.job["trials"]))
        est = ts.rounds_estimate(pairs, self.gate) if pairs else ts.Estimate(None, ts.rel_se_of_cost(series[0]))
        return not ts.more_rounds(est, self.gate, futile)

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
