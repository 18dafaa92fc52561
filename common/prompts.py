"""The Listing 1 prompt format of the paper, shared by SFT, the reward model, RLPF and DPA.

    ### Instruction:
    <problem statement>

    ### Response:
    ```python
    <code>
    ```

Two SFT kinds (§V-A): *instruction* (problem -> a fast solution) and *optimization*
(problem + a slow solution -> a fast solution). We add one line naming the language to the
instruction: a contest problem has solutions in several languages, and the code the policy
writes must be runnable on the problem's tests in the language the reward was measured in.
"""
from __future__ import annotations

import re

from .languages import Language

_PROMPT_LANGUAGES = (Language.CPP, Language.PYTHON3, Language.JAVA, Language.PYTHON2)
# Views of the one language table (sandbox.types.Language).
LANGUAGE_NAMES = {lang.value: lang.display_name for lang in _PROMPT_LANGUAGES}
FENCES = {lang.value: lang.fence for lang in _PROMPT_LANGUAGES}
RESPONSE_MARKER = "### Response:\n"
_BLOCK = re.compile(r"```([A-Za-z0-9+_-]*)[ \t]*\n(.*?)(?:\n```|\Z)", re.S)


def _check_language(language: str) -> str:
    if language not in LANGUAGE_NAMES:
        raise ValueError(f"unknown language {language!r}; expected one of {sorted(LANGUAGE_NAMES)}")
    return language


def instruction_prompt(problem: str, language: str) -> str:
    """Listing 1 instruction prompt: the problem statement as the instruction."""
    name = LANGUAGE_NAMES[_check_language(language)]
    return f"### Instruction:\n{problem.strip()}\n\nWrite a solution in {name}.\n\n{RESPONSE_MARKER}"


def optimization_prompt(problem: str, language: str, slow_code: str) -> str:
    """Optimization variant: the problem and a slow solution; the response is a faster version."""
    _check_language(language)
    return (f"### Instruction:\n{problem.strip()}\n\nOptimize the following {LANGUAGE_NAMES[language]} "
            f"solution so that it runs faster:\n```{FENCES[language]}\n{slow_code.strip()}\n```\n\n{RESPONSE_MARKER}")


def format_response(code: str, language: str) -> str:
    """A response in Listing 1 style: one fenced code block."""
    return f"```{FENCES[_check_language(language)]}\n{code.strip()}\n```"


def extract_code(response: str) -> tuple[str | None, str | None]:
    """(code, language) of the first fenced block of a generated response, (None, None) if none.

    A block cut off by the generation length is returned as is (it usually fails its tests).
    The language is None when the fence names none we know.
    """
    m = _BLOCK.search(response)
    if not m:
        return None, None
    code = m.group(2).strip("\n")
    if not code.strip():
        return None, None
    lang = Language.lookup(m.group(1).lower())
    return code, (lang.value if lang in _PROMPT_LANGUAGES else None)
