"""The sandbox every stage runs programs in: one settings object, the ``[sandbox]`` table, that
the pipeline hands each stage library (which opens its sandbox with ``Sandbox.from_settings``,
never naming a backend)."""
from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class SandboxSettings:
    """The sandbox every stage runs programs in."""

    backend: str = "auto"   # auto, bwrap, docker or local-unsafe (NOT isolated)
    workers: int = 0        # parallel sandbox workers; 0: one per core
    retries: int = 2        # re-runs of a job that met an infrastructure fault (SANDBOX_ERROR), not the program's

    def __post_init__(self) -> None:
        from .backends.registry import BACKENDS

        if self.backend != "auto" and self.backend not in BACKENDS:
            raise ValueError(f"unknown sandbox backend {self.backend!r}; choose from auto, {', '.join(BACKENDS)}")
        if self.workers < 0:
            raise ValueError("workers must be >= 0 (0: one per core)")
        if self.retries < 0:
            raise ValueError("retries must be >= 0")

    def worker_count(self) -> int:
        return self.workers or os.cpu_count() or 1
