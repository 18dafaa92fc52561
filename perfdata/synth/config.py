"""Configuration of a synthetic-pair generation run, its validation and its identity hash."""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from perfalign.perfdata.perf import BuildSettings

BACKENDS = ("gemini", "openai", "sample")
LANGUAGES = ("cpp", "python3")
DEFAULT_GEMINI_MODEL = "gemini-2.5-flash"
DEFAULT_OPENAI_MODEL = "gpt-4o-mini"
SAMPLE_MODEL = "hand-written-sample"
# Environment variables that hold each backend's key, in lookup order.
KEY_ENV = {"gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"), "openai": ("OPENAI_API_KEY",)}
# Bump when the prompt or the response schema changes: it is part of the config hash,
# so old rows are not mistaken for samples produced by the new prompt.
PROMPT_VERSION = "v1"


@dataclass
class SynthConfig:
    """Everything that decides which samples a run produces and how they are checked.

    ``seeds``: None for the bundled corpus (data/stack_seeds), ``"hf:DATASET[:DATA_DIR]"`` for a
    Hugging Face dataset read by streaming (e.g. ``hf:bigcode/the-stack-smol:data/python``),
    or a path to a local directory of source files.
    """

    n: int = 100                          # pairs to generate (the paper: 10k)
    backend: str = "gemini"                 # gemini, openai or sample (bundled pairs, no LLM); paper §IV-B: Gemini
    model: str | None = None               # None: the backend's default model
    seeds: str | None = None                # None: bundled corpus; hf:DATASET[:DIR]; or a source folder (§IV-B)
    api_key: str | None = None             # None: read from the backend's env variables
    base_url: str | None = None            # endpoint for backend openai, e.g. http://localhost:8000/v1 (vLLM)
    api_version: str | None = None         # Gemini only: "v1" or "v1beta"; None: the SDK's default
    concurrency: int = 4                  # requests in flight
    requests_per_minute: float | None = 60.0  # request-rate limit; None: unlimited
    max_retries: int = 6                    # retries of a transient LLM error (429, 5xx, timeout) before giving up
    backoff_base_s: float = 2.0             # first retry's wait (s), doubling per retry (jittered: half to all of it)
    backoff_max_s: float = 60.0             # longest wait (s) between retries, the server's Retry-After included
    request_timeout_s: float = 300.0        # HTTP timeout (s) of one LLM request
    temperature: float = 1.0                # LLM sampling temperature (part of the cache key)
    max_output_tokens: int = 8192           # cap on the tokens of one LLM reply
    languages: tuple[str, ...] = LANGUAGES  # sample i is written in languages[i % len]
    seed: int = 0                           # random seed (seed selection, language alternation)
    seed_pool_size: int = 2000              # files read from a streamed HF dataset
    min_speedup: float = 1.2                # keep a pair only if fast is at least this much faster (CPU time)
    repeats: int = BuildSettings.repeats    # runs per input when verifying (as CodeContests-Perf)
    time_limit_s: float = 2.0               # CPU-time limit (s) per input of each solution when verifying
    generator_time_limit_s: float = 10.0    # CPU-time limit (s) per input of the pair's input generator
    max_inputs: int = 8                     # test inputs per pair: the reply's literal ones, then generated ones
    max_input_bytes: int = 2_000_000        # a generated input longer than this (bytes) is dropped
    cache_dir: Path | None = None           # LLM answers; None: common.paths.cache_root()/llm (outlives --out)
    price_in_per_mtok: float | None = None  # USD per 1M prompt tokens; None: built-in table
    price_out_per_mtok: float | None = None  # USD per 1M output (incl. thinking) tokens
    sample_dir: Path | None = None          # None: bundled data/synth_sample

    def __post_init__(self) -> None:
        # Accept the natural types too: a Path for seeds, a list for languages.
        if isinstance(self.seeds, Path):
            self.seeds = str(self.seeds)
        self.languages = tuple(self.languages)

    def validate(self) -> None:
        """Raises ValueError naming the first bad field."""
        def bad(msg: str) -> None:
            raise ValueError(f"SynthConfig: {msg}")

        if not isinstance(self.n, int) or self.n < 0:
            bad(f"n must be a non-negative integer, got {self.n!r}")
        if self.backend not in BACKENDS:
            bad(f"backend must be one of {', '.join(BACKENDS)}, got {self.backend!r}")
        if self.concurrency < 1:
            bad(f"concurrency must be >= 1, got {self.concurrency}")
        if self.requests_per_minute is not None and self.requests_per_minute <= 0:
            bad(f"requests_per_minute must be > 0 or None, got {self.requests_per_minute}")
        if self.max_retries < 0:
            bad(f"max_retries must be >= 0, got {self.max_retries}")
        if self.min_speedup <= 0:
            bad(f"min_speedup must be > 0, got {self.min_speedup}")
        if self.repeats < 1:
            bad(f"repeats must be >= 1, got {self.repeats}")
        if self.time_limit_s <= 0 or self.request_timeout_s <= 0:
            bad("time_limit_s and request_timeout_s must be > 0")
        if not self.languages or any(lang not in LANGUAGES for lang in self.languages):
            bad(f"languages must be a non-empty subset of {LANGUAGES}, got {self.languages!r}")
        if self.max_inputs < 1:
            bad(f"max_inputs must be >= 1, got {self.max_inputs}")
        if self.seeds is not None and not self.seeds.startswith("hf:") and not Path(self.seeds).is_dir():
            bad(f"seeds: {self.seeds!r} is neither 'hf:DATASET' nor an existing directory")
        if self.seeds is not None and self.seeds.startswith("hf:") and not self.seeds[3:].strip(":"):
            bad("seeds: 'hf:' needs a dataset name, e.g. hf:bigcode/the-stack-smol")

    def resolved_model(self) -> str:
        if self.backend == "sample":
            return SAMPLE_MODEL
        return self.model or (DEFAULT_GEMINI_MODEL if self.backend == "gemini" else DEFAULT_OPENAI_MODEL)

    def generation_params(self) -> dict:
        """Parameters sent with every request (besides the prompt); part of the cache key."""
        return {
            "temperature": self.temperature,
            "max_output_tokens": self.max_output_tokens,
            "prompt_version": PROMPT_VERSION,
        }

    def config_hash(self) -> str:
        """Identity of the samples a config produces: sample i under this hash is one sample.

        Covers what decides the generated pair (backend, model, seeds, seed, languages,
        generation parameters); not n, so a rerun with a larger n extends the same set, and not
        throughput or verification knobs (concurrency, repeats, min_speedup), which are
        recorded per row instead.
        """
        ident = {
            "backend": self.backend,
            "model": self.resolved_model(),
            "seeds": self.seeds or "bundled",
            "seed": self.seed,
            "seed_pool_size": self.seed_pool_size if (self.seeds or "").startswith("hf:") else None,
            "languages": list(self.languages),
            "generation": self.generation_params(),
        }
        blob = json.dumps(ident, sort_keys=True, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]


def find_api_key(config: SynthConfig) -> str | None:
    """The configured key, else the first set env variable of the backend."""
    return config.api_key or next((os.environ[n] for n in KEY_ENV.get(config.backend, ()) if os.environ.get(n)), None)


def resolve_backend(config: SynthConfig) -> tuple[SynthConfig, str | None]:
    """Falls back to the bundled sample when the chosen backend has no key.

    Returns the effective config and a note explaining the fallback (None if none).
    An OpenAI-compatible endpoint given by ``base_url`` (e.g. a local vLLM) needs no key.
    """
    if config.backend == "sample":
        return config, "backend 'sample': using the bundled hand-written sample pairs (no LLM calls)"
    if find_api_key(config):
        return config, None
    if config.backend == "openai" and config.base_url:
        return dataclasses.replace(config, api_key="EMPTY"), None
    names = " / ".join(KEY_ENV[config.backend])
    note = (f"no API key for backend {config.backend!r} ({names} not set): using the bundled "
            f"hand-written sample pairs from data/synth_sample instead of an LLM")
    return dataclasses.replace(config, backend="sample"), note
