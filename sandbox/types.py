"""Public data types of the sandbox: languages, limits, verdicts and results.

Everything that runs code in perfalign (CodeContests-Perf, synthetic-pair verification,
RL rewards, evaluation) speaks these types; they serialize to the JSON of the CLI contract.
"""
from __future__ import annotations

import dataclasses
import enum
import statistics
from dataclasses import dataclass, field
from typing import Any


class Verdict(str, enum.Enum):
    OK = "OK"
    WRONG_ANSWER = "WRONG_ANSWER"
    TIME_LIMIT_EXCEEDED = "TIME_LIMIT_EXCEEDED"
    MEMORY_LIMIT_EXCEEDED = "MEMORY_LIMIT_EXCEEDED"
    OUTPUT_LIMIT_EXCEEDED = "OUTPUT_LIMIT_EXCEEDED"
    RUNTIME_ERROR = "RUNTIME_ERROR"
    COMPILE_ERROR = "COMPILE_ERROR"
    UNSUPPORTED_LANGUAGE = "UNSUPPORTED_LANGUAGE"
    # An infrastructure fault (not the program's): callers may retry it.
    SANDBOX_ERROR = "SANDBOX_ERROR"

    def __str__(self) -> str:  # so f-strings print "OK", not "Verdict.OK"
        return self.value

    @property
    def retryable(self) -> bool:
        return self is Verdict.SANDBOX_ERROR


class Language(str, enum.Enum):
    CPP = "cpp"
    PYTHON3 = "python3"
    JAVA = "java"
    PYTHON2 = "python2"
    UNKNOWN = "unknown"

    def __str__(self) -> str:
        return self.value

    @classmethod
    def from_codecontests(cls, lang_id: int) -> "Language":
        """CodeContests ids: 0 unknown, 1 Python 2, 2 C++, 3 Python 3, 4 Java."""
        return _CC_IDS.get(int(lang_id), cls.UNKNOWN)

    @classmethod
    def parse(cls, value: "str | int | Language") -> "Language":
        """Accepts a Language, a CodeContests id, or a name/alias such as 'c++' or 'py3'."""
        if isinstance(value, Language):
            return value
        if isinstance(value, int) or (isinstance(value, str) and value.strip().isdigit()):
            return cls.from_codecontests(int(value))
        key = str(value).strip().lower()
        try:
            return _ALIASES[key]
        except KeyError:
            raise ValueError(
                f"unknown language {value!r}; expected one of cpp, python3, java "
                f"(or a CodeContests id 0-4)"
            ) from None

    @property
    def codecontests_id(self) -> int:
        return {v: k for k, v in _CC_IDS.items()}.get(self, 0)


_CC_IDS = {0: Language.UNKNOWN, 1: Language.PYTHON2, 2: Language.CPP, 3: Language.PYTHON3, 4: Language.JAVA}
_ALIASES = {
    "cpp": Language.CPP, "c++": Language.CPP, "cxx": Language.CPP, "cpp17": Language.CPP,
    "python3": Language.PYTHON3, "python": Language.PYTHON3, "py": Language.PYTHON3, "py3": Language.PYTHON3,
    "java": Language.JAVA, "java17": Language.JAVA,
    "python2": Language.PYTHON2, "py2": Language.PYTHON2,
    "unknown": Language.UNKNOWN,
}


@dataclass(frozen=True)
class Limits:
    """Per-test resource limits. Wall time decides TIME_LIMIT_EXCEEDED."""

    time_s: float = 2.0
    memory_mb: int = 256
    output_mb: int = 64
    processes: int = 64
    # Limits for the compile step (compilers are large: own, looser limits).
    compile_time_s: float = 60.0
    compile_memory_mb: int = 2048


@dataclass(frozen=True)
class TestCase:
    __test__ = False  # not a pytest test class
    input: str = ""
    # None: no output check (the test only measures / checks it runs).
    expected: str | None = None


@dataclass
class CompileInfo:
    ok: bool
    seconds: float = 0.0
    message: str = ""
    cached: bool = False


@dataclass
class TestResult:
    verdict: Verdict
    cpu_time_s: float | None = None   # median of cpu_times_s (user+sys of the program itself)
    wall_time_s: float | None = None  # median of wall_times_s
    max_rss_kb: int | None = None     # max over repeats
    cpu_times_s: list[float] = field(default_factory=list)
    wall_times_s: list[float] = field(default_factory=list)
    exit_code: int | None = None
    signal: int | None = None
    message: str = ""
    output: str | None = None  # the program's stdout (first repeat), when asked for

    @classmethod
    def from_repeats(cls, verdict: Verdict, cpu: list[float], wall: list[float], rss: list[int], **kw: Any) -> "TestResult":
        return cls(
            verdict=verdict,
            cpu_time_s=statistics.median(cpu) if cpu else None,
            wall_time_s=statistics.median(wall) if wall else None,
            max_rss_kb=max(rss) if rss else None,
            cpu_times_s=list(cpu),
            wall_times_s=list(wall),
            **kw,
        )


@dataclass
class RunResult:
    verdict: Verdict
    backend: str
    language: Language
    isolated: bool
    compile: CompileInfo
    tests: list[TestResult] = field(default_factory=list)
    # CPU time of a fixed reference program on this host/backend (normalization across machines).
    calibration: dict[str, Any] = field(default_factory=dict)
    message: str = ""

    @property
    def ok(self) -> bool:
        return self.verdict is Verdict.OK

    @property
    def mean_cpu_time_s(self) -> float | None:
        """Mean over tests of the per-test median CPU time (the paper's runtime label)."""
        vals = [t.cpu_time_s for t in self.tests if t.cpu_time_s is not None]
        return sum(vals) / len(vals) if vals else None

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["verdict"] = self.verdict.value
        d["language"] = self.language.value
        for t in d["tests"]:
            t["verdict"] = t["verdict"].value if isinstance(t["verdict"], Verdict) else t["verdict"]
        if not self.isolated:
            d["warning"] = "not isolated: ran with the local-unsafe backend"
        return d


def overall_verdict(tests: list[TestResult]) -> Verdict:
    """The first non-OK test's verdict, OK if all passed."""
    for t in tests:
        if t.verdict is not Verdict.OK:
            return t.verdict
    return Verdict.OK
