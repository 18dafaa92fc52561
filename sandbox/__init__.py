"""perfalign.sandbox: isolated, measured execution of C++ / Python 3 / Java submissions."""
from .backends import BackendUnavailable, available_backends, detect_backend
from .checker import outputs_match
from .core import Job, Sandbox, SandboxError
from .settings import SandboxSettings
from .types import CompileInfo, Language, Limits, RunResult, TestCase, TestResult, Verdict, overall_verdict

__all__ = [
    "BackendUnavailable", "available_backends", "detect_backend", "outputs_match",
    "Job", "Sandbox", "SandboxError", "SandboxSettings",
    "CompileInfo", "Language", "Limits", "RunResult", "TestCase", "TestResult", "Verdict", "overall_verdict",
]
