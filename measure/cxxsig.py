"""C++ function signatures of the suites' prompts: what the observer, the reference wrapper, the
slow oracle and the null program are generated from.

A parameter is an *output* when it is a non-const reference or pointer (ParEval: ``std::vector<double>
&C``; PolyBench: every array is passed by pointer). Outputs, and the return value, are what a
call's fingerprint covers.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

_SIG = re.compile(r"^\s*(?P<ret>[\w:<>,\s*&]+?)\s*\b(?P<name>[A-Za-z_]\w*)\s*\((?P<params>.*)\)\s*\{?\s*$", re.S)


@dataclass(frozen=True)
class Param:
    decl: str      # as written, e.g. "std::vector<double> const& x"
    name: str
    const: bool    # const-qualified at the top level (an input)
    ref: bool      # reference or pointer

    @property
    def output(self) -> bool:
        return self.ref and not self.const

    @property
    def type(self) -> str:
        """The declared type without the parameter name."""
        return re.sub(rf"\b{re.escape(self.name)}\s*$", "", self.decl).strip()


@dataclass(frozen=True)
class Signature:
    ret: str
    name: str
    params: tuple[Param, ...]

    @property
    def returns_value(self) -> bool:
        return self.ret.strip() != "void"

    def text(self) -> str:
        return f"{self.ret} {self.name}({', '.join(p.decl for p in self.params)})"

    @property
    def args(self) -> str:
        return ", ".join(p.name for p in self.params)


def split_top_level(text: str, sep: str = ",") -> list[str]:
    """Split on ``sep`` outside <>, () and [] (template arguments hold commas)."""
    out, depth, cur = [], 0, []
    for ch in text:
        if ch in "<([":
            depth += 1
        elif ch in ">)]":
            depth -= 1
        if ch == sep and depth == 0:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur))
    return [p.strip() for p in out]


def parse_param(decl: str) -> Param:
    decl = " ".join(decl.split())
    m = re.search(r"([A-Za-z_]\w*)\s*(\[.*\])?\s*$", decl)
    if not m:
        raise ValueError(f"cannot read the parameter {decl!r}")
    name = m.group(1)
    head = decl[:m.start(1)]
    # top-level const: "T const&", "const T&", "T const*" (not the pointee of "T* const")
    const = bool(re.search(r"\bconst\b", head))
    ref = "&" in head or "*" in head or bool(m.group(2))
    return Param(decl, name, const, ref)


def parse_signature(text: str) -> Signature:
    """``ret name(params)`` (a trailing ``{`` allowed): the last line of a ParEval prompt."""
    m = _SIG.match(text.strip())
    if not m:
        raise ValueError(f"cannot read a function signature from {text.strip()[:200]!r}")
    params = tuple(parse_param(p) for p in split_top_level(m.group("params")) if p and p != "void")
    ret = " ".join(m.group("ret").split())
    return Signature(ret, m.group("name"), params)


def find_function(source: str, name: str) -> tuple[int, int] | None:
    """(start, end) of the definition of ``name`` in ``source`` (from its return type to the
    closing brace, braces matched), or None."""
    m = re.search(rf"(^|\n)((?:static\s+)?(?:inline\s+)?[\w:<>*& ]+?\b{re.escape(name)}\s*\([^;{{]*\)\s*\{{)", source)
    if not m:
        return None
    end = matching_brace(source, m.end(2) - 1)
    return (m.start(2), end) if end is not None else None


def matching_brace(text: str, i: int) -> int | None:
    """The index just past the brace closing the one at ``text[i]``."""
    depth = 0
    for j in range(i, len(text)):
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                return j + 1
    return None
