"""Request-rate limiting and retry with exponential backoff, shared by all LLM backends."""
from __future__ import annotations

import random
import threading
import time
from typing import Callable, TypeVar

import tenacity

T = TypeVar("T")


class TransientError(Exception):
    """A failure worth retrying (429, 5xx, timeout, dropped connection)."""

    def __init__(self, message: str, retry_after_s: float | None = None):
        super().__init__(message)
        self.retry_after_s = retry_after_s


class FatalRequestError(Exception):
    """A failure no retry fixes for this request (400, unknown model...)."""


class AuthError(FatalRequestError):
    """Bad or missing credentials: every further request would fail the same way."""


class RateLimiter:
    """Spaces request starts at least 60/rpm seconds apart, across threads."""

    def __init__(self, requests_per_minute: float | None, *, clock=time.monotonic, sleep=time.sleep):
        self.interval = 60.0 / requests_per_minute if requests_per_minute else 0.0
        self._next = 0.0
        self._lock = threading.Lock()
        self._clock, self._sleep = clock, sleep

    def acquire(self) -> None:
        if not self.interval:
            return
        with self._lock:  # reserve a slot, then wait outside the lock
            now = self._clock()
            slot = max(now, self._next)
            self._next = slot + self.interval
        if slot > now:
            self._sleep(slot - now)


def call_with_retries(
    fn: Callable[[], T],
    *,
    limiter: RateLimiter,
    max_retries: int,
    backoff_base_s: float,
    backoff_max_s: float,
    on_retry: Callable[[int, TransientError, float], None] | None = None,
    sleep=time.sleep,
) -> T:
    """Calls ``fn`` (after the rate limiter) until it succeeds, retrying TransientError with
    full-jitter exponential backoff, or the server's Retry-After when it gives one (tenacity).

    Why ours and not the SDKs' own retries: one policy for both backends (google-genai and the
    OpenAI SDK disagree on Retry-After handling), shared with the rate limiter and the
    paid-request accounting.
    """

    def wait(state: tenacity.RetryCallState) -> float:
        delay = min(backoff_max_s, backoff_base_s * (2 ** (state.attempt_number - 1)))
        delay = random.uniform(delay / 2, delay)
        exc = state.outcome.exception()
        if getattr(exc, "retry_after_s", None) is not None:
            delay = min(backoff_max_s, max(delay, exc.retry_after_s))
        return delay

    def before_sleep(state: tenacity.RetryCallState) -> None:
        if on_retry:
            on_retry(state.attempt_number, state.outcome.exception(), state.next_action.sleep)

    retrying = tenacity.Retrying(retry=tenacity.retry_if_exception_type(TransientError),
                                 stop=tenacity.stop_after_attempt(max_retries + 1), wait=wait,
                                 before=lambda _: limiter.acquire(),  # every attempt waits for its slot
                                 before_sleep=before_sleep, sleep=sleep, reraise=True)
    return retrying(fn)
