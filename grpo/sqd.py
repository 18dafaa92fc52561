"""Staged Quality-Diversity (SQD, arXiv 2602.12049): per problem, stages that change which
optimization techniques are permitted (stated in the prompt, checked in code: a forbidden one is
a format violation), and a quality-diversity archive per problem whose elites seed later prompts.

The abstract gives the idea, not the schedule: the default stages here are this package's design
(no technique, then each single technique family, then pairs, then everything), each for a
configurable number of GRPO steps; plain GRPO is one stage permitting everything.
Niche = the set of techniques a program uses (static.detect_techniques); quality = its GFLOPS.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .static import TECHNIQUES


@dataclass(frozen=True)
class Stage:
    name: str
    permitted: frozenset[str]
    steps: int

    def describe(self) -> str:
        return ", ".join(sorted(self.permitted)) if self.permitted else "none (plain loops only)"


def parse_schedule(text: str, steps_per_stage: int) -> list[Stage]:
    """``"none;blocking;simd+unroll;all"`` -> stages (``all`` = every technique, ``none`` = no
    technique); an optional ``:N`` after a stage sets its steps."""
    stages = []
    for k, part in enumerate(p.strip() for p in text.split(";") if p.strip()):
        name, _, n = part.partition(":")
        if name == "all":
            permitted = frozenset(TECHNIQUES)
        elif name == "none":
            permitted = frozenset()
        else:
            permitted = frozenset(t.strip() for t in name.split("+"))
            unknown = permitted - set(TECHNIQUES)
            if unknown:
                raise ValueError(f"unknown technique(s) {sorted(unknown)} in stage {part!r}; known: {TECHNIQUES}")
        stages.append(Stage(f"s{k}:{name}", permitted, int(n) if n else steps_per_stage))
    if not stages:
        raise ValueError("empty stage schedule")
    return stages


DEFAULT_SQD_SCHEDULE = "none;blocking;simd;openmp+unroll;blocking+simd;all"
PLAIN_SCHEDULE = "all"


@dataclass
class Elite:
    gflops: float
    completion: str
    step: int
    stage: str


@dataclass
class QDArchive:
    """Per problem: niche (sorted technique names joined by '+', 'scalar' for none) -> elite."""

    problem: str
    elites: dict[str, Elite] = field(default_factory=dict)

    def offer(self, niche: str, gflops: float | None, completion: str, step: int, stage: str) -> bool:
        """Keep the program if its niche is empty or it beats the elite; True when it was kept."""
        if gflops is None:
            return False
        cur = self.elites.get(niche)
        if cur is None or gflops > cur.gflops:
            self.elites[niche] = Elite(gflops, completion, step, stage)
            return True
        return False

    @property
    def niches_filled(self) -> int:
        return len(self.elites)

    def best(self, permitted: frozenset[str] | None = None, k: int = 2) -> list[tuple[str, Elite]]:
        """The top ``k`` elites whose niche the given stage permits (prompt seeds)."""
        items = [(n, e) for n, e in self.elites.items()
                 if permitted is None or n == "scalar" or set(n.split("+")) <= permitted]
        return sorted(items, key=lambda x: -x[1].gflops)[:k]

    def rows(self) -> list[dict]:
        return [{"problem": self.problem, "niche": n, "gflops": e.gflops, "completion": e.completion,
                 "step": e.step, "stage": e.stage} for n, e in sorted(self.elites.items())]


def all_niches() -> list[str]:
    """Every niche of :data:`TECHNIQUES` (2^4 = 16), for the niche map."""
    import itertools

    return ["+".join(combo) or "scalar" for r in range(len(TECHNIQUES) + 1)
            for combo in itertools.combinations(sorted(TECHNIQUES), r)]
