"""The idiom task: controlled problems whose fast program is an idiom choice derivable from the
prompt, not a closed form the model must recall.

A *family* (set vs list membership, Counter vs repeated ``.count``, prefix sums vs slice sums,
``deque.popleft`` vs ``list.pop(0)``, ``dict.fromkeys`` vs ``not in`` on a list, a loop vs naive recursion,
``append`` + ``reverse`` vs ``insert(0, x)``, sort once vs repeated ``min``) has one fast and one slow
correct program, both literal translations of the statement, and one wrong program (a plausible
bug). The fast program is the longer one in some families and the shorter in others, so speed
is not length. Every instance carries a number from its prompt (a difference, a threshold, a
window size, a modulus, ...) that the program must copy: the reference with another number fails
the tests. Inputs are generated deterministically per instance (seeded by its id); expected
outputs come from the trusted fast reference, run here in-process. The big test's size gives the
fast program a >= 5x lead in the sandbox (``benchmarks/idiom_bench.py`` prints the figures).

Instances are (family, phrasing, story) combinations. The held-out ones are in unseen words: each
family's last phrasing (``HELDOUT_PHRASING``, other sentences and vocabulary than the three training
phrasings, the same task and number) with every story. The task's machinery (measuring, stage
inputs, classifying samples) is ``perfdata.controlled``'s, selected there with ``family_set="idioms"``.
"""
from __future__ import annotations

import contextlib
import functools
import io
import random
from collections.abc import Callable
from dataclasses import dataclass

from perfalign.common.prompts import instruction_prompt

LANG = "python3"
KINDS = ("fast", "slow")
_LIST = "n = int(input())\na = list(map(int, input().split()))\n"
_LIST_PHRASE = "Read an integer n and then a line of n integers."
# The judge's convention, closing every statement: instruct models otherwise prompt for input and
# print the answer inside a sentence (the base model's pilot samples). No digits: k must be the only number.
IO_CONVENTION = ("The program reads standard input exactly as described, calling input() without any prompt "
                 "message, and prints only the answer, with no other text.")


@dataclass(frozen=True)
class Family:
    name: str
    phrasings: tuple[str, str, str, str]  # "{k}": the instance's number; the last one held out
    head: str                         # reads the input
    fast: str
    slow: str
    wrong: str
    ks: tuple[int, ...]               # the numbers instances copy from their prompt
    make_input: Callable[[random.Random, int, bool], str]  # (rng, k, big test?) -> stdin


def _ints(rng: random.Random, n: int, lo: int, hi: int) -> str:
    return f"{n}\n{' '.join(str(rng.randint(lo, hi)) for _ in range(n))}\n"


def _pairs_input(rng, k, big):
    return _ints(rng, 8000 if big else 30, 0, 4 * (8000 if big else 12))  # small: duplicates and matches


def _frequent_input(rng, k, big):
    n = 20000 if big else 40
    return _ints(rng, n, 1, max(2, n // (k + 1)))  # about k+1 copies of each value: counts straddle k


def _window_input(rng, k, big):
    return _ints(rng, 40000 if big else k + 15, -1000, 1000)


def _queue_input(rng, k, big):
    return _ints(rng, 40000 if big else 12, 1, 3 * k)  # each value taken 1-3 times: ~2n takes whatever k


def _dedup_input(rng, k, big):
    return _ints(rng, 30000 if big else 40, 0, 10**6)


def _calls(k: int, n: int) -> int:
    """Calls of the naive recursion for n (the slow program's cost)."""
    c = [1] * (n + 1)
    for m in range(1, n + 1):
        c[m] = 1 + sum(c[m - j] for j in range(1, min(m, k) + 1))
    return c[n]


def _stairs_input(rng, k, big):
    if not big:
        return f"{rng.randint(k + 2, k + 8)}\n"
    n = 1
    while _calls(k, n) < 1_200_000:  # the size giving the slow program ~0.3 s here, whatever k
        n += 1
    return f"{n}\n"


def _reverse_input(rng, k, big):
    return _ints(rng, 80000 if big else 30, 1, 99)


def _smallest_input(rng, k, big):
    return _ints(rng, 20000 if big else k + 20, 1, 10**6 if big else 50)  # small: duplicates


FAMILIES: tuple[Family, ...] = (
    Family("pairs", (
        f"{_LIST_PHRASE} Print how many of the n integers x have x + {{k}} also among the integers.",
        "Read n, then a line of n integers. Count the integers x of the list for which x + {k} is in the "
        "list too, and print the count.",
        "Read an integer n and a line of n integers; print the number of list entries x such that the value "
        "x + {k} also appears in the list.",
        "Input: a count on the first line, then that many whole numbers on the second. Call a number lucky "
        "when adding {k} to it gives a number that is present in the input as well. Output the tally of "
        "lucky numbers in the input, counting a repeated number each time it occurs."),
        _LIST, "s = set(a)\nprint(sum(1 for x in a if x + {k} in s))",
        "print(sum(1 for x in a if x + {k} in a))",
        "s = set(a)\nprint(sum(1 for x in s if x + {k} in s))", (3, 5, 7, 11, 13, 17), _pairs_input),
    Family("frequent", (
        f"{_LIST_PHRASE} Print how many different values occur at least {{k}} times in the list.",
        "Read n, then n integers on one line. Count the distinct values that appear {k} or more times and "
        "print that count.",
        "Read an integer n and a line of n integers; print the number of distinct values whose number of "
        "occurrences is at least {k}.",
        "Input: a count on the first line, then that many whole numbers on the second. Call a value common "
        "when it shows up no fewer than {k} times. Output the tally of different common values."),
        _LIST, "from collections import Counter\nc = Counter(a)\nprint(sum(1 for v in c.values() if v >= {k}))",
        "print(sum(1 for v in set(a) if a.count(v) >= {k}))",
        "from collections import Counter\nprint(sum(1 for v in Counter(a).values() if v > {k}))",
        (2, 3, 4, 5, 6, 7), _frequent_input),
    Family("window", (
        f"{_LIST_PHRASE} Print the largest sum of {{k}} consecutive integers of the list.",
        "Read n, then n integers on one line. Among all windows of {k} consecutive numbers, print the "
        "largest window sum.",
        "Read an integer n and a line of n integers; print the maximum total of any {k} adjacent entries.",
        "Input: a count on the first line, then that many numbers, possibly negative, on the second. Slide a "
        "block that covers {k} neighbouring positions along the sequence, one position at a time, and output "
        "the greatest total the block ever covers."),
        _LIST, "from itertools import accumulate\np = [0, *accumulate(a)]\n"
               "print(max(p[i + {k}] - p[i] for i in range(n - {k} + 1)))",
        "print(max(sum(a[i:i + {k}]) for i in range(n - {k} + 1)))",
        "print(max(sum(a[i:i + {k}]) for i in range(0, n - {k} + 1, {k})))",
        (1000, 1250, 1500, 2000, 2500, 3000), _window_input),
    Family("queue", (
        f"{_LIST_PHRASE} The integers form a queue, the first one at the front. Until the queue is empty, take "
        "the integer x at its front, and if x is greater than {k}, put x - {k} at its back. Print how many "
        "times an integer was taken.",
        "Read n, then n integers on one line: a queue, front first. While the queue is not empty, remove its "
        "front value x; if x exceeds {k}, append x - {k} to the back of the queue. Print the number of removals.",
        "Read an integer n and a line of n integers, the values of a queue from front to back. Repeatedly pop "
        "the front value and, when it is larger than {k}, push that value minus {k} onto the back; once the "
        "queue is empty, print how many pops were made.",
        "Input: a count on the first line, then that many whole numbers on the second, standing in a line in "
        "the given order. Serve the line from its head, one number at a time: serving x counts as one "
        "service, and whenever x is above {k}, the number x minus {k} rejoins the line at its tail. When "
        "nobody is left, output the total number of services."),
        _LIST, "from collections import deque\nq = deque(a)\nt = 0\nwhile q:\n    x = q.popleft()\n    t += 1\n"
               "    if x > {k}:\n        q.append(x - {k})\nprint(t)",
        "q = a[:]\nt = 0\nwhile q:\n    x = q.pop(0)\n    t += 1\n    if x > {k}:\n        q.append(x - {k})\nprint(t)",
        "q = a[:]\nt = 0\nwhile q:\n    x = q.pop(0)\n    t += 1\n    if x >= {k}:\n"
        "        q.append(x - {k})\nprint(t)",
        (20, 30, 40, 50, 60, 70), _queue_input),
    Family("dedup", (
        f"{_LIST_PHRASE} Print the distinct remainders of the integers modulo {{k}}, in the order they first "
        "appear, separated by spaces.",
        "Read n, then n integers on one line. Take each integer modulo {k} and print every remainder once, "
        "in order of first appearance, on one line.",
        "Read an integer n and a line of n integers; print, space-separated, the values x % {k} without "
        "repeats, keeping the order in which they first occur.",
        "Input: a count on the first line, then that many whole numbers on the second. Replace every number "
        "by what remains after dividing it by {k}. Output every remainder that occurs, each of them once, "
        "ordered by where it first shows up, with spaces between them."),
        _LIST, "print(*dict.fromkeys(x % {k} for x in a))",
        "seen = []\nfor x in a:\n    if x % {k} not in seen:\n        seen.append(x % {k})\nprint(*seen)",
        "print(*sorted(set(x % {k} for x in a)))", (5000, 6000, 7000, 8000, 9000, 10000), _dedup_input),
    Family("stairs", (
        "Read an integer n. Count the ways to write n as an ordered sum of parts, each part between 1 and "
        "{k}, and print the count.",
        "Read an integer n. Someone climbs a staircase of n steps taking 1 to {k} steps at a time; print in "
        "how many different ways the top can be reached.",
        "Read an integer n and print how many sequences of integers from 1 to {k} have sum exactly n.",
        "Input: one whole number n. Output how many distinct lists of whole numbers, each no smaller than one "
        "and no larger than {k}, add up to n, where the same numbers in another order make another list."),
        "n = int(input())\n", "w = [1] + [0] * n\nfor m in range(1, n + 1):\n    w[m] = sum(w[max(0, m - {k}):m])\n"
                              "print(w[n])",
        "def ways(m):\n    if m == 0:\n        return 1\n"
        "    return sum(ways(m - j) for j in range(1, min(m, {k}) + 1))\n\n\nprint(ways(n))",
        "def ways(m):\n    if m == 0:\n        return 1\n    return sum(ways(m - j) for j in range(1, min(m, {k})))\n"
        "\n\nprint(ways(n))", (2, 3, 4, 5, 6, 7), _stairs_input),
    Family("prepend", (
        f"{_LIST_PHRASE} Print the integers greater than {{k}}, in reverse order, separated by spaces.",
        "Read n, then n integers on one line. Going from the last integer to the first, print those that "
        "exceed {k}, on one line.",
        "Read an integer n and a line of n integers; print, space-separated and last one first, every "
        "integer larger than {k}.",
        "Input: a count on the first line, then that many whole numbers on the second. Keep only the numbers "
        "above {k} and output them backwards, the one nearest the end of the input coming first, with spaces "
        "between them."),
        _LIST, "out = []\nfor x in a:\n    if x > {k}:\n        out.append(x)\nout.reverse()\nprint(*out)",
        "out = []\nfor x in a:\n    if x > {k}:\n        out.insert(0, x)\nprint(*out)",
        "out = []\nfor x in a:\n    if x > {k}:\n        out.append(x)\nprint(*out)",
        (10, 15, 20, 25, 30, 40), _reverse_input),
    Family("smallest", (
        f"{_LIST_PHRASE} Print the {{k}} smallest integers of the list in increasing order, separated by spaces.",
        "Read n, then n integers on one line (n is at least {k}). Print the {k} smallest of them, smallest "
        "first, on one line.",
        "Read an integer n and a line of n integers; print, in ascending order, the first {k} values of the "
        "list once sorted.",
        "Input: a count on the first line, never below {k}, then that many whole numbers on the second. "
        "Output the {k} lowest numbers from least to greatest, with spaces between them, keeping repeated "
        "numbers."),
        _LIST, "print(*sorted(a)[:{k}])",
        "b = a[:]\nout = []\nfor _ in range({k}):\n    m = min(b)\n    b.remove(m)\n    out.append(m)\nprint(*out)",
        "print(*sorted(set(a))[:{k}])", (1500, 1800, 2000, 2500, 3000, 3500), _smallest_input),
)
STORIES: tuple[str, ...] = (
    "",
    "You are writing a small utility for a shop's records.",
    "A student is practising for a programming contest.",
    "This is one step of a data-cleaning script.",
    "A teacher wants a program to check an exercise.",
    "The program is part of a game's statistics page.",
)


@dataclass(frozen=True)
class IdiomInstance:
    family: Family
    phrasing: int
    story: int
    k: int
    kinds = KINDS  # the correct programs, fastest first (perfdata.controlled reads this)

    @property
    def problem_id(self) -> str:
        return f"idm_{self.family.name}_p{self.phrasing}_s{self.story}"

    @property
    def statement(self) -> str:
        phr = self.family.phrasings[self.phrasing].replace("{k}", str(self.k))
        return " ".join(x for x in (STORIES[self.story], phr, IO_CONVENTION) if x)

    @property
    def prompt(self) -> str:
        return instruction_prompt(self.statement, LANG)

    @property
    def other_k(self) -> int:
        """Another of the family's numbers: the reference with it fails the small test."""
        ks = self.family.ks
        return ks[(ks.index(self.k) + 1) % len(ks)]

    def program(self, kind: str, k: int | None = None) -> str:
        """A reference program (``k``: with another number, to check that copying matters)."""
        return self.family.head + getattr(self.family, kind).replace("{k}", str(self.k if k is None else k))

    def tests(self) -> tuple[list[str], list[str]]:
        """A small and a big input; expected outputs from the trusted fast reference."""
        return _tests(self)

    @property
    def big_n(self) -> int:
        """Size of the big test: its input's length in characters."""
        return len(self.tests()[0][1])


def run_reference(source: str, stdin: str) -> str:
    """Our own reference's output, run in-process (never a sample: those run in the sandbox)."""
    lines = iter(stdin.splitlines())
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(source, {"input": lambda: next(lines), "__name__": "__main__"})
    return buf.getvalue()


def _output(source: str, stdin: str) -> str | None:
    try:
        return run_reference(source, stdin)
    except Exception:  # e.g. a window longer than the input: fails the test as well
        return None


HELDOUT_PHRASING = 3  # the index of every family's held-out phrasing


@functools.cache
def _tests(inst: IdiomInstance) -> tuple[list[str], list[str]]:
    rng = random.Random(inst.problem_id)  # deterministic per instance
    small, out = _small_test(inst, rng)
    big = inst.family.make_input(rng, inst.k, True)
    return [small, big], [out, run_reference(inst.program("fast"), big)]


def _small_test(inst: IdiomInstance, rng: random.Random) -> tuple[str, str]:
    """A small input that the wrong program and the reference with another number both fail (so
    a sample that did not copy the number, or has the family's bug, fails it first)."""
    for _ in range(200):
        stdin = inst.family.make_input(rng, inst.k, False)
        out = run_reference(inst.program("fast"), stdin)
        if out not in (_output(inst.program("wrong"), stdin), _output(inst.program("fast", inst.other_k), stdin)):
            return stdin, out
    raise RuntimeError(f"{inst.problem_id}: no small input tells the wrong program apart")


def instances() -> tuple[list[IdiomInstance], list[IdiomInstance]]:
    """(training instances, held-out instances): 144 (three phrasings x six stories per family) and
    48 (the held-out phrasing x six stories)."""
    train, held = [], []
    for c, fam in enumerate(FAMILIES):
        for p in range(len(fam.phrasings)):
            for st in range(len(STORIES)):
                inst = IdiomInstance(fam, p, st, fam.ks[(c + p + 2 * st) % len(fam.ks)])
                (held if p == HELDOUT_PHRASING else train).append(inst)
    return train, held


def quick_instances(n_train: int = 8, n_heldout: int = 2) -> tuple[list[IdiomInstance], list[IdiomInstance]]:
    """One training instance per family (up to ``n_train``) and ``n_heldout`` held-out ones
    spread over the families: for tests and smoke runs."""
    train, held = instances()
    first = {}
    for i in train:
        first.setdefault(i.family.name, i)
    picked = list(first.values())[:n_train]
    return picked, held[::max(1, len(held) // max(1, n_heldout))][:n_heldout]
