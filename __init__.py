"""perfalign: performance-aligned code LLMs (RLPF/DPA) — sandboxed measurement, CodeContests-Perf,
alignment, evaluation, online GRPO and a KernelBench kernel environment.

The repository root *is* this package (pyproject: ``package-dir = {"perfalign" = "."}``), so the
folders the design names (``sandbox/``, ``perfdata/``, ...) import as ``perfalign.sandbox``, ...
Nothing is imported here: each layer is loaded when it is used.
"""
__version__ = "0.1.0"
