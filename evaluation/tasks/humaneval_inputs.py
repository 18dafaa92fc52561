"""Performance inputs for the HumanEval problems whose input contract argument-wise growth breaks.

``humaneval.perf_calls`` grows each argument of the official calls on its own: lists and strings
lengthened with elements drawn from the recorded ones. That keeps most problems' inputs valid, but not
those whose arguments carry a format (``"7/10"``, ``"o o| .|"``) or a relation between arguments
(``len(operator) == len(operand) - 1``, a grid holding a permutation): there the canonical solution
raised on every drawn scale and the problem could not score (``benchmarks/humaneval_usable.py``).

For those problems, as ENAMEL does for every problem (hand-written generators), one function per
problem draws a call at scale ``k`` from the contract its prompt states, within the range where the
canonical solution is right (HumanEval/144's float division is exact only below 2^53, so its numbers
stay small). The draw is made per session with the secret seed like every other, so a candidate cannot
predict it; problems not listed here keep the argument-wise growth, their draws unchanged.
"""
from __future__ import annotations

import random
from typing import Callable

Draw = Callable[[int, random.Random], tuple]


def find_zero(k: int, rng: random.Random) -> tuple:
    """HumanEval/32: an even number of coefficients in [-10, 10] (0 read as 1, as the official test
    does), 2 to 8 per unit of scale, drawn again until the polynomial changes sign on [-1, 1], so that
    the canonical's bisection never leaves it (beyond, ``math.pow`` overflows at high degree)."""
    while True:
        xs = [rng.randint(-10, 10) or 1 for _ in range(2 * rng.randint(1, 4) * k)]
        if sum(xs) * sum(c if i % 2 == 0 else -c for i, c in enumerate(xs)) <= 0:
            return (xs,)


def simplify(k: int, rng: random.Random) -> tuple:
    """HumanEval/144: two fractions "a/b" of positive integers up to 10^4 (the function is O(1); the
    canonical's float test is exact while a*c < 2^53). Half the draws make x*n whole, the answer the
    uniform draw would almost never give."""
    b, d = rng.randint(1, 10_000), rng.randint(1, 10_000)
    if rng.random() < 0.5:
        a, c = rng.randint(1, 10_000), rng.randint(1, 10_000)
    else:
        a, c = b * rng.randint(1, 10_000 // b), d * rng.randint(1, 10_000 // d)
    return f"{a}/{b}", f"{c}/{d}"


def do_algebra(k: int, rng: random.Random) -> tuple:
    """HumanEval/160: 2 or 3 operators per unit of scale and one operand more, non-negative operands
    below 10; no ``**`` follows another (a tower outgrows any limit), an exponent is below 4 and a
    divisor above 0. The canonical compiles one flat expression, nested as deep as its ``+`` and
    ``-`` are many (~40 % of the operators: ~1,230 at the largest scale's 3,072); Python's compiler
    runs out of recursion near 3,000."""
    ops = []
    for _ in range(rng.randint(2, 3) * k):
        ops.append(rng.choice(("+", "-", "*", "//") if ops and ops[-1] == "**" else ("+", "-", "*", "//", "**")))
    operands = [rng.randint(0, 9)]
    for op in ops:
        operands.append(rng.randint(0, 3) if op == "**" else rng.randint(1, 9) if op == "//" else rng.randint(0, 9))
    return ops, operands


def parse_music(k: int, rng: random.Random) -> tuple:
    """HumanEval/17: 1 to 8 notes per unit of scale, space-separated."""
    return (" ".join(rng.choice(("o", "o|", ".|")) for _ in range(rng.randint(1, 8) * k)),)


_NUMERALS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")


def sort_numbers(k: int, rng: random.Random) -> tuple:
    """HumanEval/19: 1 to 7 numerals per unit of scale, space-separated."""
    return (" ".join(rng.choice(_NUMERALS) for _ in range(rng.randint(1, 7) * k)),)


def closest_integer(k: int, rng: random.Random) -> tuple:
    """HumanEval/99: a decimal string, signed or not, integral or with one fraction digit (".5" in a
    third of the draws) then up to 4 trailing zeros per unit of scale (the canonical strips them one
    slice at a time)."""
    sign = rng.choice(("", "-"))
    whole = rng.randint(0, 1000)
    if rng.random() < 0.25:
        return (f"{sign}{whole}",)
    digit = "5" if rng.random() < 1 / 3 else str(rng.randint(0, 9))
    return (f"{sign}{whole}.{digit}" + "0" * (rng.randint(0, 4) * k),)


def min_path(k: int, rng: random.Random) -> tuple:
    """HumanEval/129: an N x N grid holding 1 .. N^2 once each (N from 2 to 4, times about sqrt(k)),
    and a path length from 1 to 12 per unit of scale."""
    n = max(2, round(rng.randint(2, 4) * k ** 0.5))
    cells = list(range(1, n * n + 1))
    rng.shuffle(cells)
    return [cells[i * n:(i + 1) * n] for i in range(n)], rng.randint(1, 12) * k


def compare_one(k: int, rng: random.Random) -> tuple:
    """HumanEval/137: two reals, each an int, a float or a string with "." or "," (a quarter of the
    draws equal in value, the answer None); the function is O(1)."""
    def real():
        return rng.choice((rng.randint(-50, 50), round(rng.uniform(-50, 50), 1)))

    def written(x):
        form = rng.randrange(3)
        return x if form == 0 else str(x) if form == 1 else str(x).replace(".", ",")

    a = real()
    b = a if rng.random() < 0.25 else real()
    return written(a), written(b)


GENERATORS: dict[str, Draw] = {
    "HumanEval/17": parse_music,
    "HumanEval/19": sort_numbers,
    "HumanEval/32": find_zero,
    "HumanEval/99": closest_integer,
    "HumanEval/129": min_path,
    "HumanEval/137": compare_one,
    "HumanEval/144": simplify,
    "HumanEval/160": do_algebra,
}
