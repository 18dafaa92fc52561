"""Parsing a model's JSON answer into a pair draft; anything unusable is a MalformedResponse
(which becomes a reject record, never a crash)."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

_LANG_ALIASES = {
    "cpp": "cpp", "c++": "cpp", "cxx": "cpp", "c++17": "cpp", "cpp17": "cpp",
    "python3": "python3", "python": "python3", "py": "python3", "py3": "python3",
}
_FENCE = re.compile(r"^\s*```[\w+#-]*[ \t]*\n(.*?)\n?```\s*$", re.S)


class MalformedResponse(ValueError):
    """The model's text is not a usable pair (bad JSON, missing fields, wrong language...)."""


@dataclass
class PairDraft:
    problem: str
    language: str           # "cpp" or "python3"
    fast: str
    slow: str
    test_inputs: list[str] = field(default_factory=list)
    input_generator: str = ""
    generator_count: int = 5  # inputs asked of the generator (k = 0..count-1)


def strip_fence(text: str) -> str:
    """Removes one surrounding markdown code fence, which models add despite instructions."""
    m = _FENCE.match(text)
    return m.group(1) if m else text


def parse_pair(text: str | None, expected_language: str, *, max_inputs: int = 8) -> PairDraft:
    if text is None or not text.strip():
        raise MalformedResponse("empty response text")
    try:
        obj = json.loads(strip_fence(text))
    except json.JSONDecodeError as e:
        raise MalformedResponse(f"response is not valid JSON: {e}") from None
    if not isinstance(obj, dict):
        raise MalformedResponse(f"response JSON is a {type(obj).__name__}, not an object")

    def text_field(name: str, required: bool = True) -> str:
        v = obj.get(name)
        if v is None and not required:
            return ""
        if not isinstance(v, str) or (required and not v.strip()):
            raise MalformedResponse(f"field {name!r} missing or not a non-empty string")
        return v

    problem = text_field("problem").strip()
    fast = strip_fence(text_field("fast_solution"))
    slow = strip_fence(text_field("slow_solution"))
    generator = strip_fence(text_field("input_generator", required=False))
    declared = str(obj.get("language") or expected_language).strip().lower()
    language = _LANG_ALIASES.get(declared)
    if language != expected_language:
        raise MalformedResponse(f"language {declared!r} does not match the requested {expected_language!r}")
    inputs = obj.get("test_inputs") or []
    if not isinstance(inputs, list) or not all(isinstance(x, str) for x in inputs):
        raise MalformedResponse("field 'test_inputs' is not a list of strings")
    inputs = [x if x.endswith("\n") else x + "\n" for x in inputs if x.strip()][:max_inputs]
    if not inputs and not generator.strip():
        raise MalformedResponse("no test inputs and no input generator")
    if fast.strip() == slow.strip():
        raise MalformedResponse("fast and slow solutions are identical")
    count = obj.get("input_count", 5)  # not in the schema: the bundled sample sets it
    if not isinstance(count, int) or isinstance(count, bool) or count < 1:
        raise MalformedResponse(f"field 'input_count' must be a positive integer, got {count!r}")
    return PairDraft(problem, language, fast, slow, inputs, generator, generator_count=count)
