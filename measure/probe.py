"""A suite problem as the probe harness runs it: two translation units per program (the trusted
driver and the untrusted candidate), the modes it runs in and how its outputs are compared.

Suites (evaluation.tasks.pareval, evaluation.tasks.polybench) build ``ProbeProblem`` objects from a user's checkout;
harness.py runs and scores them. Everything here is plain data plus source text.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from .cxxsig import Signature, matching_brace


@dataclass(frozen=True)
class Tolerance:
    """Floats match when |candidate - reference| <= abs + rel * |reference| (per element)."""

    abs: float = 1e-4
    rel: float = 1e-8


@dataclass
class ProbeProblem:
    suite: str                     # "pareval" | "polybench"
    name: str                      # the suite's problem name
    model: str                     # "serial" | "omp" | "mpi"
    prompt: str                    # the suite's prompt (what a model completes)
    signature: Signature           # the function the candidate defines
    drivers: dict[str, str]        # mode -> driver TU source (trusted)
    candidate_prefix: dict[str, str]  # mode -> headers (and size macros) of the candidate's own TU
    reference: str                 # the suite's baseline as a candidate (defines the function)
    slow: str                      # the baseline doing its work twice: a known ~2x slower candidate
    tolerance: Tolerance = field(default_factory=Tolerance)
    compile_flags: tuple[str, ...] = ("-O3", "-std=c++17")
    toolchain: str = "default"     # sandbox toolchain ("mpi:N" launches N ranks)
    threads: int = 1               # thread budget (OpenMP) / CPUs of the cpuset
    clock: str = "cpu"             # "cpu" (serial) or "wall" (parallel models)
    memory_mb: int = 2048
    sizes: dict[str, str] = field(default_factory=dict)  # mode -> size description (for the record)
    types: str = ""                # the prompt's type definitions, shared by both TUs
    provided_headers: tuple[str, ...] = ()  # headers a candidate may #include: their text is in its TU already
    validate_calls: int = 0        # mode V: calls the driver makes itself (0: the suite's validate() decides)
    notes: list[str] = field(default_factory=list)

    @property
    def key(self) -> str:
        return f"{self.name}-{self.model}" if self.suite == "pareval" else self.name

    @property
    def env(self) -> dict[str, str]:
        return {"OMP_NUM_THREADS": str(self.threads)} if self.model == "omp" else {}

    def null(self) -> str:
        """A candidate that does nothing: its runs measure the driver's own cost (inputs,
        fingerprints, start-up), subtracted from every program's run."""
        sig = self.signature
        body = "    return {};" if sig.returns_value else ""
        return f"{sig.text()} {{\n{body}\n}}\n"

    def candidate_source(self, code: str, mode: str) -> str:
        """The candidate's own translation unit: headers, the prompt's types and helpers (those
        the code does not define again, as completions often do), the code as a whole function."""
        code = normalize_candidate(code, self.signature.name, self.signature.text())
        for h in self.provided_headers:
            code = re.sub(rf'^\s*#\s*include\s*[<"]{re.escape(h)}[>"][^\n]*$', "", code, flags=re.M)
        # a kernel copied with its `static` would not be visible to the driver
        code = re.sub(rf"\bstatic\s+((?:inline\s+)?void\s+{re.escape(self.signature.name)}\s*\()", r"\1", code)
        bare = strip_comments(code)
        kept = [text for kind, name, text in split_definitions(self.types)
                if not name or not re.search(rf"\b(?:struct|class)\s+{name}\s*\{{|\b{name}\s*\([^;{{]*\)\s*\{{", bare)]
        types = '#line 1 "prompt.hpp"\n' + "".join(kept) + "\n" if kept else ""
        return self.candidate_prefix[mode] + "\n" + types + '#line 1 "candidate.cpp"\n' + code + "\n"


def run_twice(sig: Signature, call_fn: str, head: str, counts: dict[str, str] | None = None) -> tuple[str, str]:
    """(reference, slow) candidates from a baseline ``call_fn`` defined in ``head``: the baseline
    behind the prompt's signature, and the same run twice on the same memory with its outputs
    restored in between (a copy on other memory would change the timing through the memory
    layout). Outputs are restored by value; a pointer output only when ``counts`` gives its
    element count (name -> C++ expression), else it is written before it is read."""
    counts = counts or {}
    call = f"{call_fn}({sig.args})"
    reference = f"{head}\n{sig.text()} {{\n    return {call};\n}}\n"
    saves, restores = [], []
    for p in sig.params:
        if not p.output:
            continue
        if p.name in counts:
            saves.append(f"    std::vector<std::remove_pointer_t<decltype({p.name})>> perfalign_saved_{p.name}("
                         f"{p.name}, {p.name} + ({counts[p.name]}));")
            restores.append(f"    std::copy(perfalign_saved_{p.name}.begin(), perfalign_saved_{p.name}.end(), "
                            f"{p.name});")
        elif "*" not in p.type:
            saves.append(f"    auto perfalign_saved_{p.name} = {p.name};")
            restores.append(f"    {p.name} = perfalign_saved_{p.name};")
    first = (f"    {{ volatile auto perfalign_sink = {call}; (void)perfalign_sink; }}" if sig.returns_value
             else f"    {call};")
    body = saves + [first, '    asm volatile("" : : : "memory");'] + restores
    slow = f"#include <vector>\n#include <algorithm>\n{head}\n{sig.text()} {{\n" + "\n".join(body) + \
        f"\n    return {call};\n}}\n"
    return reference, slow


def strip_comments(code: str) -> str:
    return re.sub(r"//[^\n]*|/\*.*?\*/", " ", code, flags=re.S)


_DEF = re.compile(r"^(?:struct|class)\s+(\w+)\s*\{|^[A-Za-z_][\w:<>,*& ]*?\b(\w+)\s*\([^;{]*\)\s*\{", re.M)


def split_definitions(text: str) -> list[tuple[str, str, str]]:
    """The top-level pieces of a prompt preamble: (kind, name, text) with kind "struct",
    "function" or "other" (includes, comments; name "")."""
    out, pos = [], 0
    for m in _DEF.finditer(text):
        if m.start() < pos:
            continue
        end = matching_brace(text, text.index("{", m.start()))
        if end is None:
            break
        if m.group(1):  # a struct definition ends with its ';'
            semi = text.find(";", end)
            end = semi + 1 if semi >= 0 else end
        out.append(("other", "", text[pos:m.start()]))
        out.append(("struct" if m.group(1) else "function", m.group(1) or m.group(2), text[m.start():end]))
        pos = end
    out.append(("other", "", text[pos:]))
    return [p for p in out if p[2]]


def internal_helpers(text: str) -> str:
    """The preamble for the driver TU: its helper functions ``static`` (the candidate's TU has
    its own copies; no symbol is shared between the two)."""
    return "".join(("static " + t) if kind == "function" else t for kind, _, t in split_definitions(text))


def hoist_includes(text: str) -> tuple[str, list[str]]:
    """(text without #include / #pragma once lines, the #include lines)."""
    includes, kept = [], []
    for line in text.splitlines():
        s = line.strip()
        if re.match(r"#\s*include\b", s):
            includes.append(s)
        elif s.startswith("#pragma once"):
            continue
        else:
            kept.append(line)
    return "\n".join(kept), includes


def normalize_candidate(code: str, function: str, signature: str) -> str:
    """Accept a whole function (the requested form) or, ParEval-completion style, only its body:
    a body gets the signature around it (the closing brace too, unless the body brings it)."""
    if re.search(rf"\b{re.escape(function)}\s*\(", code):
        return code
    closes_itself = code.count("}") == code.count("{") + 1
    return f"{signature} {{\n{code}\n" + ("" if closes_itself else "}\n")
