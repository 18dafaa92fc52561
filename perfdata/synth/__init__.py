"""Synthetic fast/slow code pairs (paper §IV-B): seed snippets -> LLM (Gemini or an
OpenAI-compatible endpoint, or a bundled hand-written sample without a key) -> verification by
execution in the sandbox -> Parquet tables `synthetic` and `synthetic_rejects`."""
from .config import SynthConfig
from .pipeline import SynthProgress, SynthSummary, generate_synthetic
from .throttle import AuthError

__all__ = ["SynthConfig", "SynthSummary", "SynthProgress", "generate_synthetic", "AuthError"]
