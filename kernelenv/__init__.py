"""perfalign.kernelenv: the kernel environment (KernelBench problems, sandboxed candidates, no
reward hacking, speedups over eager PyTorch and torch.compile). Plain Python; imports point down
(sandbox only)."""
from .metrics import KernelRewardTiers, Metrics, geomean, kernel_reward, summarize
from .problems import KernelProblem, ProblemError, find_candidate, load_problem, load_problems, reference_candidate
from .score import KernelEnvError, KernelScore, ScoreConfig, Scorer

__all__ = ["Metrics", "KernelRewardTiers", "geomean", "kernel_reward", "summarize", "KernelProblem", "ProblemError",
           "find_candidate", "load_problem", "load_problems", "reference_candidate", "KernelEnvError", "KernelScore",
           "ScoreConfig", "Scorer"]
