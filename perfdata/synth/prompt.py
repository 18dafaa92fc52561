"""The generation prompt (paper §IV-B: a problem inspired by a seed snippet, a fast and a slow
solution) and the structured-output schema both backends ask for."""
from __future__ import annotations

from .seeds import Seed

LANGUAGE_NAMES = {"cpp": "C++", "python3": "Python"}

PROMPT_TEMPLATE = """\
You are exceptionally skilled at crafting programming problems and at writing fast code.

Gain inspiration from the following random code snippet to create a high-quality, \
self-contained programming problem. The problem need not be about the snippet itself; use it \
only as inspiration for a realistic computational task (as found in production or scientific \
code, not only in programming contests).

Code snippet for inspiration:
```
{seed}
```

Then write two complete, correct programs that solve the problem. Both read the input from \
standard input and write the answer to standard output, and both must print exactly the same \
output for every valid input.
Language: {language}
- fast_solution: an efficient solution (good algorithm, good data structures, efficient I/O).
- slow_solution: a correct but clearly slower solution, the way a less experienced programmer \
would write it (for example a worse algorithm or needless repeated work). Do not slow it down \
artificially (no sleeps, no busy loops that do nothing useful).
{language_rules}
Also give 3 to 5 test inputs (test_inputs) in the exact input format of the problem. They must \
be large enough that the slow solution takes clearly longer than the fast one, yet the slow \
solution must finish in under 0.5 seconds on each. If such inputs would be too long to write \
out, leave test_inputs empty and instead give input_generator: a Python 3 program that reads \
an integer k (0 <= k < 5) from standard input and prints the k-th test input, deterministically.

Answer with a single JSON object with the fields problem (the full problem statement, \
including the input and output format), language ("{language_id}"), fast_solution, \
slow_solution, test_inputs (a list of strings) and input_generator (a string, may be empty). \
Put only source code in the solution fields, without markdown fences.
"""

LANGUAGE_RULES = {
    "cpp": "- C++17 compiled with g++ -O2; a single file with main(); standard library only.\n",
    "python3": "- Python 3; a single file; standard library only.\n",
}


def language_for_index(languages: tuple[str, ...], index: int) -> str:
    """Languages alternate deterministically by sample index (5k C++ / 5k Python in the paper)."""
    return languages[index % len(languages)]


def build_prompt(seed: Seed, language: str) -> str:
    return PROMPT_TEMPLATE.format(
        seed=seed.text,
        language=LANGUAGE_NAMES[language],
        language_id=language,
        language_rules=LANGUAGE_RULES[language],
    )


_FIELDS = {
    "problem": "Full problem statement with input and output format.",
    "language": "Programming language of both solutions.",
    "fast_solution": "Complete source code of the fast solution.",
    "slow_solution": "Complete source code of the slow but correct solution.",
    "test_inputs": "3 to 5 complete test inputs (stdin contents).",
    "input_generator": "Optional Python 3 program: reads k, prints the k-th test input.",
}
_ORDER = list(_FIELDS)


def gemini_schema() -> dict:
    """OpenAPI-subset schema for Gemini's ``response_schema``."""
    props = {k: {"type": "STRING", "description": d} for k, d in _FIELDS.items()}
    props["language"]["enum"] = list(LANGUAGE_NAMES)
    props["test_inputs"] = {"type": "ARRAY", "items": {"type": "STRING"},
                            "description": _FIELDS["test_inputs"]}
    return {"type": "OBJECT", "properties": props, "required": _ORDER, "propertyOrdering": _ORDER}


def json_schema() -> dict:
    """JSON Schema for OpenAI-style ``response_format`` (strict mode: all fields required,
    no additional properties)."""
    props = {k: {"type": "string", "description": d} for k, d in _FIELDS.items()}
    props["language"]["enum"] = list(LANGUAGE_NAMES)
    props["test_inputs"] = {"type": "array", "items": {"type": "string"},
                            "description": _FIELDS["test_inputs"]}
    return {"type": "object", "properties": props, "required": _ORDER, "additionalProperties": False}
