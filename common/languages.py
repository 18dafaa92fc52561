"""The one language table of perfalign: CodeContests ids, aliases, display names, code fences."""
from __future__ import annotations

import enum


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
            raise ValueError(f"unknown language {value!r}; expected one of cpp, python3, java "
                             f"(or a CodeContests id 0-4)") from None

    @classmethod
    def lookup(cls, value: "str | int | Language | None") -> "Language | None":
        """Like :meth:`parse`, but None for an unknown name (e.g. a code fence's tag)."""
        try:
            return cls.parse(value) if value not in (None, "") else None
        except ValueError:
            return None

    @property
    def display_name(self) -> str:
        """How prompts and reports name the language ("C++", "Python 3"...)."""
        return _DISPLAY[self]

    @property
    def fence(self) -> str:
        """The Markdown code-fence tag of the language."""
        return _FENCES.get(self, self.value)


# The one language table of perfalign: ids, aliases, display names, code fences.
_DISPLAY = {Language.CPP: "C++", Language.PYTHON3: "Python 3", Language.JAVA: "Java", Language.PYTHON2: "Python 2",
            Language.UNKNOWN: "unknown"}
_FENCES = {Language.CPP: "cpp", Language.PYTHON3: "python", Language.PYTHON2: "python", Language.JAVA: "java"}
_CC_IDS = {0: Language.UNKNOWN, 1: Language.PYTHON2, 2: Language.CPP, 3: Language.PYTHON3, 4: Language.JAVA}
_ALIASES = {
    "cpp": Language.CPP, "c++": Language.CPP, "cxx": Language.CPP, "cpp17": Language.CPP,
    "python3": Language.PYTHON3, "python": Language.PYTHON3, "py": Language.PYTHON3, "py3": Language.PYTHON3,
    "java": Language.JAVA, "java17": Language.JAVA,
    "python2": Language.PYTHON2, "py2": Language.PYTHON2,
    "unknown": Language.UNKNOWN,
}
