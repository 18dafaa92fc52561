"""How a ``kernelbench`` prompt's samples are scored: the problem file, scored by the kernel
environment (``kernels.Scorer``) rather than by a driver job. A module of its own so that
execution.py can tell these prompts apart without importing the task module."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field


def source_sha(code: str) -> str:
    """The identity of a candidate program: equal up to surrounding whitespace, equal sha."""
    return hashlib.sha256(code.strip().encode()).hexdigest()[:16]


@dataclass(frozen=True)
class KernelSpec:
    path: str                                      # the KernelBench problem file (loaded, never copied)
    name: str                                      # e.g. "level1/19_ReLU"
    # sha of the task's own oracle programs that run the reference's operators by construction
    # (the reference as ModelNew, the reference twice): scored with reference ops allowed, as
    # kernels.evaluate.config_for does for `perfalign kernel eval --candidates reference`
    reference_programs: frozenset[str] = field(default_factory=frozenset)
    parallel = False                               # one thread (ScoreConfig.threads), CPU time

    def is_reference_program(self, code: str) -> bool:
        return source_sha(code) in self.reference_programs
