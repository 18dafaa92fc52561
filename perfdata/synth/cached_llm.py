"""An LLM backend behind the response cache, the rate limiter and retries, with token
accounting for the requests actually paid for."""
from __future__ import annotations

import logging
import threading
import time
from dataclasses import asdict, dataclass
from typing import Any

from .cache import ResponseCache, cache_key
from .llm_clients import LLMReply
from .throttle import RateLimiter, call_with_retries

log = logging.getLogger("perfalign.perfdata.synth")


@dataclass
class Usage:
    requests: int = 0        # answered requests paid for in this run
    cache_hits: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    output_tokens: int = 0


class CachedLLM:
    def __init__(self, backend, cache: ResponseCache, limiter: RateLimiter, *, max_retries: int,
                 backoff_base_s: float, backoff_max_s: float):
        self.backend = backend
        self.cache = cache
        self.limiter = limiter
        self.retry = dict(max_retries=max_retries, backoff_base_s=backoff_base_s, backoff_max_s=backoff_max_s)
        self.usage = Usage()
        self._lock = threading.Lock()

    def complete(self, prompt: str, params: dict[str, Any]) -> tuple[LLMReply, str, bool]:
        """(reply, cache key, whether it came from the cache). Raises TransientError after the
        last retry, FatalRequestError/AuthError at once; failures are never cached."""
        key = cache_key(self.backend.name, self.backend.model, prompt, params)
        hit = self.cache.get(key)
        if hit is not None and "reply" in hit:
            with self._lock:
                self.usage.cache_hits += 1
            return LLMReply.from_dict(hit["reply"]), key, True

        def on_retry(attempt: int, err: Exception, delay: float) -> None:
            with self._lock:
                self.usage.retries += 1
            log.warning("request %s failed (%s); retry %d in %.1fs", key[:12], err, attempt, delay)

        reply = call_with_retries(lambda: self.backend.complete(prompt, params), limiter=self.limiter,
                                  on_retry=on_retry, **self.retry)
        # Cache before anything else can fail: this request is paid for.
        self.cache.put(key, {
            "key": key, "backend": self.backend.name, "model": self.backend.model,
            "prompt": prompt, "params": params, "created_at": time.time(), "reply": asdict(reply),
        })
        with self._lock:
            self.usage.requests += 1
            self.usage.prompt_tokens += reply.prompt_tokens
            self.usage.output_tokens += reply.output_tokens
        return reply, key, False
