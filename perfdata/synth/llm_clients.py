"""The two LLM backends: Gemini via `google-genai` and any OpenAI-compatible endpoint (OpenAI,
a local vLLM server...) via `openai`. Both return an LLMReply and translate SDK errors into
TransientError / FatalRequestError / AuthError; retrying is left to throttle.call_with_retries
(SDK-internal retries are off so backoff and rate limiting happen in one place)."""
from __future__ import annotations

import contextlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

from perfalign.common.extras import require

from .prompt import gemini_schema, json_schema
from .throttle import AuthError, FatalRequestError, TransientError


@dataclass
class LLMReply:
    text: str | None
    prompt_tokens: int = 0
    output_tokens: int = 0      # includes thinking tokens: they are billed as output
    request_id: str | None = None
    finish_reason: str | None = None
    model_version: str | None = None
    raw: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "LLMReply":
        return cls(**{k: d.get(k) for k in cls.__dataclass_fields__ if k in d})


def _transport_errors() -> tuple[type[BaseException], ...]:
    errs: list[type[BaseException]] = [TimeoutError, ConnectionError]
    for mod in ("httpx", "httpx2"):
        with contextlib.suppress(ImportError, AttributeError):
            errs.append(__import__(mod).TransportError)  # timeouts, refused/reset connections
    return tuple(errs)


_TRANSPORT_ERRORS = _transport_errors()
_RETRYABLE_STATUS = {408, 409, 429}


def _retry_after(headers: Any) -> float | None:
    try:
        v = headers.get("retry-after") if headers is not None else None
        return float(v) if v is not None else None
    except (TypeError, ValueError):
        return None


def _gemini_retry_delay(details: Any) -> float | None:
    """google.rpc.RetryInfo ("retryDelay": "13s") in a Gemini 429 body."""
    with contextlib.suppress(AttributeError):
        for d in (details or {}).get("error", {}).get("details", []) or []:
            m = re.fullmatch(r"([\d.]+)s", str(d.get("retryDelay", "")))
            if m:
                return float(m.group(1))
    return None


def _classify_status(code: int, message: str, retry_after: float | None) -> Exception:
    if code in _RETRYABLE_STATUS or code >= 500:
        return TransientError(f"HTTP {code}: {message}", retry_after)
    if code in (401, 403):
        return AuthError(f"HTTP {code} (check the API key): {message}")
    return FatalRequestError(f"HTTP {code}: {message}")


class GeminiBackend:
    name = "gemini"

    def __init__(self, *, api_key: str, model: str, base_url: str | None, timeout_s: float,
                 api_version: str | None = None):
        genai = require("google.genai", "llm")
        self._types, self._errors = genai.types, genai.errors
        self.model = model
        opts = genai.types.HttpOptions(base_url=base_url, api_version=api_version, timeout=int(timeout_s * 1000))
        self._client = genai.Client(api_key=api_key, http_options=opts)

    def complete(self, prompt: str, params: dict[str, Any]) -> LLMReply:
        t = self._types
        cfg = t.GenerateContentConfig(
            temperature=params["temperature"],
            max_output_tokens=params["max_output_tokens"],
            seed=params.get("seed"),
            response_mime_type="application/json",
            response_schema=t.Schema.model_validate(gemini_schema()),
            automatic_function_calling=t.AutomaticFunctionCallingConfig(disable=True),  # no tools here
        )
        try:
            resp = self._client.models.generate_content(model=self.model, contents=prompt, config=cfg)
        except self._errors.APIError as e:
            headers = getattr(getattr(e, "response", None), "headers", None)
            delay = _retry_after(headers) or _gemini_retry_delay(e.details)
            raise _classify_status(int(e.code or 0), str(e.message or e), delay) from e
        except _TRANSPORT_ERRORS as e:
            raise TransientError(f"{type(e).__name__}: {e}") from e
        usage = resp.usage_metadata
        finish = None
        if resp.candidates:
            fr = resp.candidates[0].finish_reason
            finish = getattr(fr, "value", fr)
        try:
            text = resp.text
        except ValueError:  # e.g. a blocked candidate: no text parts
            text = None
        return LLMReply(
            text=text,
            prompt_tokens=(usage.prompt_token_count or 0) if usage else 0,
            output_tokens=((usage.candidates_token_count or 0) + (usage.thoughts_token_count or 0)) if usage else 0,
            request_id=resp.response_id,
            finish_reason=str(finish) if finish is not None else None,
            model_version=resp.model_version,
            raw=resp.model_dump(mode="json", exclude_none=True),
        )


class OpenAIBackend:
    name = "openai"

    def __init__(self, *, api_key: str, model: str, base_url: str | None, timeout_s: float,
                 api_version: str | None = None):
        self._openai = require("openai", "llm")
        self.model = model
        self._client = self._openai.OpenAI(api_key=api_key, base_url=base_url, timeout=timeout_s, max_retries=0)

    def complete(self, prompt: str, params: dict[str, Any]) -> LLMReply:
        try:
            resp = self._client.chat.completions.create(
                model=self.model,
                messages=[{"role": "user", "content": prompt}],
                temperature=params["temperature"],
                max_tokens=params["max_output_tokens"],
                seed=params.get("seed"),
                response_format={"type": "json_schema", "json_schema": {
                    "name": "fast_slow_pair", "strict": True, "schema": json_schema()}},
            )
        except self._openai.APIStatusError as e:
            raise _classify_status(e.status_code, str(e.message), _retry_after(e.response.headers)) from e
        except (self._openai.APIConnectionError, *_TRANSPORT_ERRORS) as e:  # includes APITimeoutError
            raise TransientError(f"{type(e).__name__}: {e}") from e
        choice = resp.choices[0] if resp.choices else None
        usage = resp.usage
        return LLMReply(
            text=choice.message.content if choice else None,
            prompt_tokens=(usage.prompt_tokens or 0) if usage else 0,
            output_tokens=(usage.completion_tokens or 0) if usage else 0,
            request_id=resp.id,
            finish_reason=choice.finish_reason if choice else None,
            model_version=resp.model,
            raw=json.loads(resp.model_dump_json(exclude_none=True)),
        )


LLM_BACKENDS = {"gemini": GeminiBackend, "openai": OpenAIBackend}
