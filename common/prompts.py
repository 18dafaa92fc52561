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
from dataclasses import dataclass

from .languages import Language

_PROMPT_LANGUAGES = (Language.CPP, Language.PYTHON3, Language.JAVA, Language.PYTHON2)
# Views of the one language table (sandbox.types.Language).
LANGUAGE_NAMES = {lang.value: lang.display_name for lang in _PROMPT_LANGUAGES}
FENCES = {lang.value: lang.fence for lang in _PROMPT_LANGUAGES}
INSTRUCTION_MARKER = "### Instruction:\n"
RESPONSE_MARKER = "### Response:\n"
_BLOCK = re.compile(r"```([A-Za-z0-9+_-]*)[ \t]*\n(.*?)(?:\n```|\Z)", re.S)


def _check_language(language: str) -> str:
    if language not in LANGUAGE_NAMES:
        raise ValueError(f"unknown language {language!r}; expected one of {sorted(LANGUAGE_NAMES)}")
    return language


@dataclass(frozen=True)
class Listing1:
    """A Listing 1 prompt's two parts: the problem ``statement`` (the part that may be shortened to
    fit a context) and the ``request`` after it (the language line; the slow code to optimize)."""

    statement: str
    request: str

    def text(self) -> str:
        return f"{INSTRUCTION_MARKER}{self.statement}\n\n{self.request}\n\n{RESPONSE_MARKER}"

    def user_message(self) -> str:
        """The instruction without Listing 1's markers: the user's turn of a chat template."""
        return f"{self.statement}\n\n{self.request}" if self.statement else self.request


def instruction_prompt(problem: str, language: str) -> str:
    """Listing 1 instruction prompt: the problem statement as the instruction."""
    name = LANGUAGE_NAMES[_check_language(language)]
    return Listing1(problem.strip(), f"Write a solution in {name}.").text()


def optimization_prompt(problem: str, language: str, slow_code: str) -> str:
    """Optimization variant: the problem and a slow solution; the response is a faster version."""
    _check_language(language)
    return Listing1(problem.strip(), f"Optimize the following {LANGUAGE_NAMES[language]} solution so that it runs "
                                     f"faster:\n```{FENCES[language]}\n{slow_code.strip()}\n```").text()


# The request of either prompt kind: the last line of an instruction prompt, or the first
# "Optimize ..." line (the slow code after it may contain anything).
_REQUEST = re.compile(r"\n\n(Write a solution in [^\n]*\.|Optimize the following [^\n]* solution so that it "
                      r"runs faster:\n```.*)\n\n" + re.escape(RESPONSE_MARKER) + r"\Z", re.S)


def parse_listing1(prompt: str) -> Listing1 | None:
    """The parts of a prompt built by ``instruction_prompt`` / ``optimization_prompt``; None for
    any other text."""
    if not prompt.startswith(INSTRUCTION_MARKER):
        return None
    m = _REQUEST.search(prompt, len(INSTRUCTION_MARKER))
    if not m:
        return None
    return Listing1(prompt[len(INSTRUCTION_MARKER):m.start()], m.group(1))


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
