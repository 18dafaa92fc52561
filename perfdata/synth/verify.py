"""Verification by execution (beyond the paper): both solutions run in the sandbox on the
pair's inputs; a pair is kept only if both run, the fast one prints what the slow one prints
(token-wise, the sandbox checker), and it is at least ``min_speedup`` times faster in CPU time
(sum over inputs of the median CPU time per input).

The speedup goes through ``common.plausibility`` (the one policy): capped, NaN/inf rejected,
and one above the policy's threshold is measured a second time; if still that high its record
keeps the ``implausible`` flag."""
from __future__ import annotations

from dataclasses import dataclass, field

from perfalign.common.plausibility import SpeedupPolicy, speedup_ratio
from perfalign.sandbox import Job, Language, Limits, TestCase
from perfalign.sandbox.checker import outputs_match

from .response import PairDraft

# Reject reasons (the `reason` column of synthetic_rejects).
MALFORMED = "malformed_response"
GENERATOR_ERROR = "generator_error"
COMPILE_ERROR = "compile_error"
RUNTIME_ERROR = "runtime_error"
TIMEOUT = "timeout"
EMPTY_OUTPUT = "empty_output"
DISAGREEMENT = "disagreement"
NOT_FASTER = "not_faster"
INVALID_SPEEDUP = "invalid_speedup"


class SandboxFault(RuntimeError):
    """The sandbox itself failed (SANDBOX_ERROR): not the pair's fault, retried on a rerun."""


@dataclass
class Verification:
    kept: bool
    reason: str | None = None
    detail: str = ""
    inputs: list[str] = field(default_factory=list)
    fast_cpu_s: list[float] = field(default_factory=list)  # per input, median over repeats
    slow_cpu_s: list[float] = field(default_factory=list)
    speedup: float | None = None
    speedup_raw: float | None = None  # before the plausibility cap
    speedup_flags: list[str] = field(default_factory=list)  # e.g. implausible, capped, remeasured
    sandbox_backend: str | None = None
    isolated: bool | None = None

    @property
    def fast_total_s(self) -> float | None:
        return sum(self.fast_cpu_s) if self.fast_cpu_s else None

    @property
    def slow_total_s(self) -> float | None:
        return sum(self.slow_cpu_s) if self.slow_cpu_s else None


def _reason_for(verdict) -> str:
    if str(verdict) == "SANDBOX_ERROR":
        raise SandboxFault("sandbox error")
    # anything else (a runtime error, memory/output limit, unsupported language) is a runtime error
    return {"COMPILE_ERROR": COMPILE_ERROR, "TIME_LIMIT_EXCEEDED": TIMEOUT}.get(str(verdict), RUNTIME_ERROR)


def _failure_detail(role: str, result) -> str:
    if str(result.verdict) == "COMPILE_ERROR":
        return f"{role}: compile error: {result.compile.message[-2000:]}"
    for i, t in enumerate(result.tests):
        if str(t.verdict) != "OK":
            return f"{role}: {t.verdict} on input {i}: {(t.message or '')[-1000:]}".rstrip(": ")
    return f"{role}: {result.verdict}: {result.message}"


def _generate_inputs(draft: PairDraft, sb, *, time_limit_s: float, max_inputs: int,
                     max_bytes: int) -> list[str] | Verification:
    """Literal inputs plus the generator's outputs for k = 0, 1, ...; the reject when there are none."""
    inputs = list(draft.test_inputs)
    want = min(draft.generator_count, max_inputs - len(inputs))
    if not draft.input_generator.strip() or want <= 0:
        return inputs
    job = Job(source=draft.input_generator, language=Language.PYTHON3,
              tests=[TestCase(input=f"{k}\n") for k in range(want)],
              limits=Limits(time_s=time_limit_s), repeats=1, keep_output=True)
    [(_, res)] = list(sb.run_many([job], workers=1))  # SANDBOX_ERROR: after the sandbox's retries
    if str(res.verdict) == "SANDBOX_ERROR":
        raise SandboxFault(f"sandbox error running the input generator: {res.message}")
    for t in res.tests:
        out = t.output or ""
        if str(t.verdict) == "OK" and out.strip() and len(out.encode()) <= max_bytes:
            inputs.append(out)
    if not inputs:
        return Verification(False, GENERATOR_ERROR, _failure_detail("input_generator", res)
                            if str(res.verdict) != "OK" else "input generator produced no usable input")
    return inputs


def _run_pair(draft: PairDraft, sb, tests, limits, repeats: int, workers: int | None):
    lang = Language.parse(draft.language)
    jobs = [Job(source=src, language=lang, tests=tests, limits=limits, repeats=repeats, keep_output=True)
            for src in (draft.slow, draft.fast)]
    results = dict(sb.run_many(jobs, workers=workers))
    return results[0], results[1]


def _judge_pair(v: Verification, slow, fast) -> bool:
    """Both ran and agree (else ``v`` gets the reason); fills the CPU times."""
    for role, res in (("slow", slow), ("fast", fast)):
        if str(res.verdict) != "OK":
            v.reason, v.detail = _reason_for(res.verdict), _failure_detail(role, res)
            return False
    v.slow_cpu_s = [t.cpu_time_s or 0.0 for t in slow.tests]
    v.fast_cpu_s = [t.cpu_time_s or 0.0 for t in fast.tests]
    if all(not (t.output or "").strip() for t in slow.tests):
        v.reason, v.detail = EMPTY_OUTPUT, "the slow solution printed nothing on every input"
        return False
    for i, (s, f) in enumerate(zip(slow.tests, fast.tests)):
        if not outputs_match(s.output or "", f.output or ""):
            v.reason = DISAGREEMENT
            v.detail = (f"outputs differ on input {i}: slow printed {(s.output or '')[:200]!r}, "
                        f"fast printed {(f.output or '')[:200]!r}")
            return False
    return True


def verify_pair(draft: PairDraft, sb, *, repeats: int, time_limit_s: float, min_speedup: float,
                generator_time_limit_s: float = 10.0, max_inputs: int = 8,
                max_input_bytes: int = 2_000_000, workers: int | None = None,
                policy: SpeedupPolicy = SpeedupPolicy()) -> Verification:
    """Runs the pair (on ``workers`` slots; None: the sandbox's); returns the verdict. Raises
    SandboxFault on infrastructure failure."""
    inputs = _generate_inputs(draft, sb, time_limit_s=generator_time_limit_s, max_inputs=max_inputs,
                              max_bytes=max_input_bytes)
    if isinstance(inputs, Verification):  # the pair fails before its solutions run
        return inputs
    tests = [TestCase(input=x) for x in inputs]
    limits = Limits(time_s=time_limit_s)
    slow, fast = _run_pair(draft, sb, tests, limits, repeats, workers)
    v = Verification(False, inputs=inputs, sandbox_backend=getattr(slow, "backend", None),
                     isolated=getattr(slow, "isolated", None))
    if not _judge_pair(v, slow, fast):
        return v
    checked = speedup_ratio(v.slow_total_s, v.fast_total_s, policy)
    if checked.needs_remeasure:  # too good to take at face value: one more measurement decides
        again = Verification(False, inputs=inputs, sandbox_backend=v.sandbox_backend, isolated=v.isolated)
        if not _judge_pair(again, *_run_pair(draft, sb, tests, limits, repeats, workers)):
            again.detail = f"on a second measurement (the first gave {checked.raw:.1f}x): {again.detail}"
            return again
        v = again
        checked = speedup_ratio(v.slow_total_s, v.fast_total_s, policy)
        checked.flags.append("remeasured")
    v.speedup, v.speedup_raw, v.speedup_flags = checked.value, checked.raw, list(checked.flags)
    if v.speedup is None:
        v.reason, v.detail = INVALID_SPEEDUP, f"no usable speedup ({', '.join(checked.flags)})"
        return v
    if v.speedup < min_speedup:
        v.reason = NOT_FASTER
        v.detail = (f"speedup {v.speedup:.2f}x < {min_speedup}x (slow {v.slow_total_s:.4f}s, "
                    f"fast {v.fast_total_s:.4f}s CPU)")
        return v
    v.kept = True
    return v
